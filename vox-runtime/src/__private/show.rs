//! How `str` and `print` write a Vox value (docs/language.md, "Printing").
//!
//! The form is the one Vox source would write the value in: `[1, 2]`,
//! `Some("a")`, `None`, `Ok(3)`, `Error("no reply")`,
//! `Invoice { vendor: "ACME", lines: [] }`, `Tech("disk")`, `Low`. Text
//! inside a value is quoted and escaped; text on its own (`str(s)`,
//! `print(s)`) is written as it is, and so is a `Decimal` everywhere.
//!
//! The generated code knows each value's Vox type, which a Rust type alone
//! does not tell (`str` and `Decimal` are both a `String`), so it passes a
//! writer for the type: a function of this module, or a closure that calls
//! one with the writer of the element type. Records and sum types implement
//! [`Show`], generated from their declaration.

use std::fmt::Write as _;
use std::io::Write as _;

/// A Vox record or sum type written as Vox source writes its value. The
/// generated code implements it for every type a module declares.
pub trait Show {
    /// Appends the value's form to `out`.
    fn show(&self, out: &mut String);
}

/// Recursive types keep their innermost value boxed; it shows as the value.
impl<T: Show + ?Sized> Show for Box<T> {
    fn show(&self, out: &mut String) {
        (**self).show(out);
    }
}

/// `str(v)`: `v` written by `write` (text on its own is not quoted: the
/// generated code gives `str(s)` of a `str` as `s` itself).
pub fn to_text<T: ?Sized>(value: &T, write: impl Fn(&mut String, &T)) -> String {
    let mut out = String::new();
    write(&mut out, value);
    out
}

/// `print(v)`: [`to_text`] and a newline on stdout. A closed stdout is
/// ignored rather than a panic.
pub fn print<T: ?Sized>(value: &T, write: impl Fn(&mut String, &T)) {
    let mut text = to_text(value, write);
    text.push('\n');
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `print(v)` in code compiled for `cargo test`: through `println!`, which
/// libtest captures and shows only for failing tests.
pub fn print_captured<T: ?Sized>(value: &T, write: impl Fn(&mut String, &T)) {
    println!("{}", to_text(value, write));
}

/// An `int`: `12`, `-3`.
pub fn int(out: &mut String, v: &i64) {
    let _ = write!(out, "{v}");
}

/// A `float`: the shortest text that reads back as the same number (`2`,
/// `0.1`, `NaN`, `inf`, `-inf`).
pub fn float(out: &mut String, v: &f64) {
    let _ = write!(out, "{v}");
}

/// A `bool`: `true`, `false`.
pub fn boolean(out: &mut String, v: &bool) {
    let _ = write!(out, "{v}");
}

/// A `Decimal` (`12.50`), or a `str` on its own: the text as it is.
pub fn verbatim(out: &mut String, v: &str) {
    out.push_str(v);
}

/// The unit value, `()`.
pub fn unit(out: &mut String, _: &()) {
    out.push_str("()");
}

/// A `str` inside a value: a Vox string literal, `"say \"hi\"\n"`. `"`,
/// `\`, newline, tab, carriage return and NUL get their escapes, other
/// control characters `\u{…}`.
pub fn text(out: &mut String, v: &str) {
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A `list[T]`: `[a, b]`, `[]`.
pub fn list<T>(out: &mut String, v: &[T], write: impl Fn(&mut String, &T)) {
    out.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(out, x);
    }
    out.push(']');
}

/// An `Option[T]`: `Some(x)`, `None`.
pub fn option<T>(out: &mut String, v: &Option<T>, write: impl Fn(&mut String, &T)) {
    match v {
        Some(x) => {
            out.push_str("Some(");
            write(out, x);
            out.push(')');
        }
        None => out.push_str("None"),
    }
}

/// A `Result[T]`: `Ok(x)`, `Error("message")`.
pub fn result<T>(out: &mut String, v: &Result<T, String>, write: impl Fn(&mut String, &T)) {
    match v {
        Ok(x) => {
            out.push_str("Ok(");
            write(out, x);
            out.push(')');
        }
        Err(e) => {
            out.push_str("Error(");
            text(out, e);
            out.push(')');
        }
    }
}

/// A `map[str, T]`: `["a": 1, "b": 2]` in key order, `[:]` when empty (the
/// literals that build them).
pub fn map<T>(
    out: &mut String,
    v: &std::collections::BTreeMap<String, T>,
    write: impl Fn(&mut String, &T),
) {
    if v.is_empty() {
        out.push_str("[:]");
        return;
    }
    out.push('[');
    for (i, (k, x)) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        text(out, k);
        out.push_str(": ");
        write(out, x);
    }
    out.push(']');
}

/// Writes `v` with `write` (so that the writer's parameter types come from
/// `v`).
pub fn with<T: ?Sized>(out: &mut String, v: &T, write: impl Fn(&mut String, &T)) {
    write(out, v);
}

/// A record or sum type value, by its [`Show`].
pub fn value<T: Show + ?Sized>(out: &mut String, v: &T) {
    v.show(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_nest_and_quote_text_inside_them() {
        let v: Vec<Option<String>> = vec![Some("a \"b\"\n\u{1}".into()), None];
        let s = to_text(&v, |o, x| {
            list(o, x, |o, x| option(o, x, |o, x| text(o, x)))
        });
        assert_eq!(s, r#"[Some("a \"b\"\n\u{1}"), None]"#);
        let r: Result<Vec<String>, String> = Err("no \\ reply".into());
        let s = to_text(&r, |o, x| {
            result(o, x, |o, x| list(o, x, |o, x| verbatim(o, x)))
        });
        assert_eq!(s, r#"Error("no \\ reply")"#);
        let r: Result<Vec<String>, String> = Ok(vec!["12.50".into(), "-3".into()]);
        let s = to_text(&r, |o, x| {
            result(o, x, |o, x| list(o, x, |o, x| verbatim(o, x)))
        });
        assert_eq!(s, "Ok([12.50, -3])");
        let fl = [2.0, 0.1, f64::NAN, f64::NEG_INFINITY];
        assert_eq!(
            to_text(&fl[..], |o, x| list(o, x, float)),
            "[2, 0.1, NaN, -inf]"
        );
        assert_eq!(to_text(&(), unit), "()");
        assert_eq!(to_text(&Vec::<i64>::new(), |o, x| list(o, x, int)), "[]");
        let mut m = std::collections::BTreeMap::new();
        assert_eq!(to_text(&m, |o, x| map(o, x, int)), "[:]");
        m.insert("tea".to_string(), 2);
        m.insert("cake \"x\"".to_string(), 3);
        assert_eq!(
            to_text(&m, |o, x| map(o, x, int)),
            r#"["cake \"x\"": 3, "tea": 2]"#
        );
    }

    struct Node(i64, Option<Box<Node>>);
    impl Show for Node {
        fn show(&self, out: &mut String) {
            out.push_str("Node { n: ");
            int(out, &self.0);
            out.push_str(", next: ");
            option(out, &self.1, value);
            out.push_str(" }");
        }
    }

    #[test]
    fn boxed_values_show_as_the_value() {
        let n = Node(1, Some(Box::new(Node(2, None))));
        assert_eq!(
            to_text(&n, value),
            "Node { n: 1, next: Some(Node { n: 2, next: None }) }"
        );
    }
}
