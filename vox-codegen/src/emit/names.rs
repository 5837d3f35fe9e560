//! Names and literals in Rust: injective identifier escaping
//! (docs/language.md, "Names in the generated Rust"), string and float
//! literals.

use std::fmt::Write as _;

pub(super) fn float_lit(x: f64) -> String {
    let s = format!("{x:?}");
    let s = if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    };
    format!("{s}_f64")
}

/// A Rust string literal for any text.
pub fn rust_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Controls, and invisible characters rustc would refuse or a
            // reader of the generated code could not see (a flow control
            // in a literal is a hard error in rustc).
            c if c.is_control() || crate::chars::notable(c).is_some_and(|i| i.invisible) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Words that cannot be raw identifiers.
const NOT_RAW: [&str; 4] = ["self", "Self", "crate", "super"];

/// Rust keywords (strict and reserved, all editions).
const RUST_KEYWORDS: [&str; 52] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Whether `name` gets a trailing `_` in Rust: the four keywords that cannot
/// be raw identifiers, the same words already followed by underscores
/// (`self_`, `self__`, …, so `self` → `self_` and `self_` → `self__` stay
/// apart), and names starting with `__` (serde's derives use such names for
/// their own bindings, and `__x` → `__x_` → … stays injective the same way).
/// See docs/language.md, "Names in the generated Rust".
fn needs_underscore(name: &str) -> bool {
    name.starts_with("__") || NOT_RAW.contains(&name.trim_end_matches('_'))
}

/// A Vox value name (local, parameter, field, function) as a Rust
/// identifier. The mapping is injective: keywords become raw identifiers;
/// the keywords that cannot be raw (`self`, `super`, …, with any trailing
/// `_`s) and names starting with `__` get one more trailing `_`; every other
/// name is unchanged.
pub fn rust_ident(name: &str) -> String {
    if needs_underscore(name) {
        format!("{name}_")
    } else if RUST_KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// A Vox type or variant name as a Rust identifier: `Self` (the only keyword
/// it can be) and `Self_`, `Self__`, … get one more trailing `_`.
pub fn rust_type_ident(name: &str) -> String {
    if name.trim_end_matches('_') == "Self" {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// serde already strips `r#`; only the renamed identifiers need an attribute.
pub(super) fn needs_rename(vox: &str, rust: &str) -> bool {
    rust != vox && !rust.starts_with("r#")
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn identifiers_are_escaped() {
        assert_eq!(rust_ident("type"), "r#type");
        assert_eq!(rust_ident("self"), "self_");
        assert_eq!(rust_ident("crate"), "crate_");
        assert_eq!(rust_ident("move"), "r#move");
        assert_eq!(rust_ident("vendor"), "vendor");
        assert_eq!(rust_type_ident("Self"), "Self_");
    }

    #[test]
    fn identifier_escaping_is_injective() {
        let names = [
            "self", "self_", "self__", "crate", "crate_", "super", "super_", "type", "type_",
            "__value", "__value_", "_", "_x", "__", "___", "x_", "selfish", "move",
        ];
        let mut seen = HashSet::new();
        for n in names {
            assert!(seen.insert(rust_ident(n)), "{n} collides");
        }
        let types = ["Self", "Self_", "Self__", "Selfie", "T"];
        let mut seen = HashSet::new();
        for n in types {
            assert!(seen.insert(rust_type_ident(n)), "{n} collides");
        }
        assert_eq!(rust_ident("self_"), "self__");
        assert_eq!(rust_ident("__serializer"), "__serializer_");
        assert_eq!(rust_type_ident("Self_"), "Self__");
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(rust_str("a\"b\\c\n{}\u{1}é"), "\"a\\\"b\\\\c\\n{}\\u{1}é\"");
        assert_eq!(
            rust_str("\u{202E}\u{200B}\u{A0}\u{FEFF}x"),
            "\"\\u{202e}\\u{200b}\\u{a0}\\u{feff}x\""
        );
        assert_eq!(float_lit(7.0), "7.0_f64");
        assert_eq!(float_lit(1e300), "1e300_f64");
    }
}
