//! Calls: matching arguments to parameters, calls of user functions
//! (entry points cannot be called), and the builtins.

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{suggest, Builtin, Callee, Checker, Kind, Want};

/// Whether `text` is a `Decimal` as Vox writes one: an optional `-`, digits,
/// and optionally `.` and more digits (docs/language.md, "Decimal"; the same
/// rule as `vox_runtime::__private::decimal::is_decimal`).
fn is_decimal_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(int) && frac.is_none_or(all_digits)
}

/// Whether `text` is a date as Vox writes one: `YYYY-MM-DD`, a real day,
/// years 0001 to 9999 (the same rule as
/// `vox_runtime::__private::date::is_date`).
pub(crate) fn is_iso_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &b[r];
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => 0,
    };
    y >= 1 && d >= 1 && d <= days
}

/// What a media constructor's string literal is (docs/language.md,
/// "Images, documents and audio").
enum MediaSource {
    Empty,
    /// `https://` and a host: the only URLs the runtime sends.
    Https,
    /// Another URL: a scheme of two or more letters and `://` (`http://…`,
    /// `gs://…`), a `data:` URL, or `https://` without a host.
    OtherUrl,
    /// Anything else is a file path (a Windows drive, `C:\\scan.png`, too).
    Path,
}

fn media_source(text: &str) -> MediaSource {
    let t = text.trim();
    if t.is_empty() {
        return MediaSource::Empty;
    }
    if t.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")) {
        return MediaSource::OtherUrl;
    }
    let Some((scheme, rest)) = t.split_once("://") else {
        return MediaSource::Path;
    };
    let is_scheme = scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return MediaSource::Path;
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if scheme.eq_ignore_ascii_case("https") && !host.is_empty() {
        MediaSource::Https
    } else {
        MediaSource::OtherUrl
    }
}

impl Checker<'_> {
    /// `image_file("…")`, `document_url("…")`, … of a string literal: the
    /// text must be able to be that source (docs/language.md, "Images,
    /// documents and audio"). Other strings are checked when the call is made.
    fn check_media_source(&mut self, call: &Expr, media: Media, url: bool, text: &str, at: Span) {
        let ExprKind::Call { callee, .. } = &call.kind else {
            return;
        };
        let word = media.word();
        let (file_fn, url_fn) = (format!("{word}_file"), format!("{word}_url"));
        let d = |message: String| Diagnostic::error(Code::InvalidMediaSource, at, message);
        let d = match (media_source(text), url) {
            (MediaSource::Path, false) | (MediaSource::Https, true) => return,
            (MediaSource::Empty, _) => d(format!(
                "`{}` needs {}, found an empty string",
                callee.name,
                if url { "a URL" } else { "a file path" }
            ))
            .hint(format!(
                "write the file's path, `{file_fn}(\"…\")`, or its `https` address, `{url_fn}(\"https://…\")`"
            )),
            (MediaSource::Https, false) => d(format!("`{file_fn}` reads a file, but this is a URL"))
                .label("an `https` URL")
                .hint(format!("use `{url_fn}` for an address the provider fetches"))
                .fix(format!("use `{url_fn}`"), callee.span, url_fn.clone()),
            (MediaSource::OtherUrl, false) => d(format!("`{file_fn}` reads a file, but this is a URL"))
                .label("a URL")
                .hint(format!("only `https` URLs are sent, with `{url_fn}(\"https://…\")`; save anything else to a file and give its path")),
            (MediaSource::OtherUrl, true) => d(format!("`{url_fn}` takes an `https` URL with a host"))
                .label("not an `https` URL")
                .hint(format!("providers fetch only `https` addresses: serve it over `https`, or save it to a file and use `{file_fn}`")),
            (MediaSource::Path, true) => d(format!("`{url_fn}` takes an `https` URL, but this is a file path"))
                .label("a file path")
                .hint(format!("use `{file_fn}` for a file (read when the call is made)"))
                .fix(format!("use `{file_fn}`"), callee.span, file_fn.clone()),
        };
        self.err(d);
    }

    /// Matches arguments (positional, or all named) to parameters and checks each.
    pub(super) fn check_args(
        &mut self,
        call_span: Span,
        what: &str,
        kind: &str,
        params: &[(String, Ty)],
        args: &[Arg],
    ) {
        let named = args.iter().any(|a| a.name.is_some());
        if !named {
            if args.len() != params.len() {
                let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
                self.err(
                    Diagnostic::error(
                        Code::Arity,
                        call_span,
                        format!(
                            "{kind} `{what}` takes {} argument{}, found {}",
                            params.len(),
                            if params.len() == 1 { "" } else { "s" },
                            args.len()
                        ),
                    )
                    .hint(format!("expected ({})", names.join(", "))),
                );
            }
            for (i, a) in args.iter().enumerate() {
                match params.get(i) {
                    Some((_, t)) => {
                        self.check_expr(&a.value, Want::Type(t));
                    }
                    None => {
                        self.check_expr(&a.value, Want::Any);
                    }
                }
            }
            return;
        }
        let mut given: Vec<&str> = Vec::new();
        for a in args {
            let Some(n) = &a.name else {
                self.err(
                    Diagnostic::error(
                        Code::UnexpectedToken,
                        a.value.span,
                        "positional argument after named arguments",
                    )
                    .hint("name every argument, or none"),
                );
                self.check_expr(&a.value, Want::Any);
                continue;
            };
            match params.iter().find(|(p, _)| *p == n.name) {
                Some((_, t)) => {
                    if given.contains(&n.name.as_str()) {
                        self.err(Diagnostic::error(
                            Code::Duplicate,
                            n.span,
                            format!("argument `{}` is given twice", n.name),
                        ));
                    }
                    given.push(&n.name);
                    self.check_expr(&a.value, Want::Type(t));
                }
                None => {
                    let mut d = Diagnostic::error(
                        Code::UnknownArgument,
                        n.span,
                        format!("{kind} `{what}` has no parameter `{}`", n.name),
                    );
                    if let Some(s) = did_you_mean(&n.name, params.iter().map(|(p, _)| p.as_str())) {
                        d = suggest(d, s, n.span);
                        // The misspelt argument stands for `s`: not also "missing".
                        given.push(s);
                    }
                    self.err(d);
                    self.check_expr(&a.value, Want::Any);
                }
            }
        }
        let missing: Vec<&str> = params
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| !given.contains(p))
            .collect();
        if !missing.is_empty() {
            self.err(Diagnostic::error(
                Code::MissingField,
                call_span,
                format!(
                    "missing argument{}: {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", ")
                ),
            ));
        }
    }

    pub(super) fn infer_call(&mut self, e: &Expr, callee: &Ident, args: &[Arg], want: Want) -> Ty {
        if let Some(b) = Builtin::lookup(&callee.name) {
            // An f-string's `str` (an empty name span) is always the builtin.
            if self.lookup(&callee.name).is_none() || callee.span.start == callee.span.end {
                self.info.callees.insert(e.id, Callee::Builtin(b));
                if self.in_const
                    && matches!(b, Builtin::Print | Builtin::Assert | Builtin::AssertEq)
                {
                    self.not_constant(callee.span, &format!("call `{}`", callee.name));
                }
                return self.infer_builtin(e, b, args, want);
            }
        }
        if let Some(&fi) = self.fn_index.get(&callee.name) {
            self.info.callees.insert(e.id, Callee::Fn(fi));
            if self.info.fns[fi].rust {
                self.err(
                    Diagnostic::error(
                        Code::RustTool,
                        callee.span,
                        format!(
                            "`{}` is a `@rust` tool: the model calls it, Vox code cannot",
                            callee.name
                        ),
                    )
                    .hint("list it in an `@ai(tools = [...])`, or write the function in Vox"),
                );
            }
            if self.in_const {
                self.not_constant(callee.span, &format!("call the function `{}`", callee.name));
            }
            self.check_callable(fi, callee);
            if !self.lambdas.is_empty() {
                self.lambda_calls.push((fi, callee.span));
            }
            if let Some(cur) = self.current {
                if let Some(calls) = self.info.calls.get_mut(cur) {
                    calls.push((fi, callee.span));
                }
            }
            let params = self.info.fns[fi].params.clone();
            self.check_args(e.span, &callee.name, "function", &params, args);
            return self.info.fns[fi].ret.clone();
        }
        for a in args {
            self.check_expr(&a.value, Want::Any);
        }
        if let Some(l) = self.lookup(&callee.name) {
            l.used = true;
            self.err(Diagnostic::error(
                Code::NotCallable,
                callee.span,
                format!("`{}` is a variable, not a function", callee.name),
            ));
            return Ty::Error;
        }
        let mut d = Diagnostic::error(
            Code::UnknownName,
            callee.span,
            format!("cannot find function `{}`", callee.name),
        )
        .label("not found");
        let cands: Vec<&str> = self
            .fn_index
            .keys()
            .map(String::as_str)
            .chain(Builtin::ALL.iter().map(|(n, _)| *n))
            .collect();
        if let Some(s) = did_you_mean(&callee.name, cands) {
            d = suggest(d, s, callee.span);
        }
        self.err(d);
        Ty::Error
    }

    /// `@test` functions and `fn main` are entry points, not functions to
    /// call (docs/language.md, "Entry points").
    fn check_callable(&mut self, fi: usize, callee: &Ident) {
        let f = &self.info.fns[fi];
        let def_span = self
            .module
            .fn_decl(f.item)
            .map_or(callee.span, |d| d.name.span);
        if f.test {
            self.err(
                Diagnostic::error(
                    Code::TestCalled,
                    callee.span,
                    format!("`{}` is an `@test` function and cannot be called", callee.name),
                )
                .label("called here")
                .related(def_span, "declared `@test` here")
                .hint("tests exist only in the test build, where the harness runs them; move the shared code into a function without `@test` and call that"),
            );
        } else if f.name == "main" {
            self.err(
                Diagnostic::error(
                    Code::MainCalled,
                    callee.span,
                    "`fn main` is the program's entry point and cannot be called",
                )
                .label("called here")
                .related(def_span, "`fn main` declared here")
                .hint(
                    "move the body of `main` into another function and call that from both places",
                ),
            );
        }
    }

    /// `int(s)` or `float(s)` of a `str`: not a conversion Vox has. The
    /// text is read with `parse_int(s)` or `parse_float(s)`, an `Option`, so
    /// the fix is offered, not applied: the code around it must handle `None`.
    fn str_to_number(&mut self, call: &Expr, b: Builtin, t: &Ty) {
        let ExprKind::Call { callee, args } = &call.kind else {
            return;
        };
        let Some(a0) = args.first().map(|a| &a.value) else {
            return;
        };
        let (name, parse, ty) = if b == Builtin::Int {
            ("int", "parse_int", "int")
        } else {
            ("float", "parse_float", "float")
        };
        let accepts = b.accepts().unwrap_or(&[]);
        let d = Diagnostic::error(
            Code::Mismatch,
            a0.span,
            format!("`{name}` needs {}", Kind::prose(accepts)),
        )
        .types(Kind::alternatives(accepts), self.show(t))
        .hint(format!(
            "`{name}` converts numbers; to read one from text, `{parse}(s)` gives an `Option[{ty}]`, `None` when the text is not a number: `match {parse}(s) {{ Some(n) => …, None => … }}`"
        ))
        .fix_with(
            crate::diagnostic::Applicability::MaybeIncorrect,
            format!("read the text with `{parse}` (an `Option[{ty}]`)"),
            vec![crate::diagnostic::Edit {
                span: callee.span,
                replacement: parse.to_string(),
            }],
        );
        self.err(d);
    }

    fn infer_builtin(&mut self, e: &Expr, b: Builtin, args: &[Arg], want: Want) -> Ty {
        let name = Builtin::ALL
            .iter()
            .find(|(_, x)| *x == b)
            .map_or("?", |(n, _)| *n);
        let want_n = match b {
            Builtin::Get if args.len() == 3 => 3,
            Builtin::Div if args.len() == 4 => 4,
            Builtin::Div => 3,
            Builtin::Round if args.len() == 3 => 3,
            Builtin::AssertEq
            | Builtin::Get
            | Builtin::Contains
            | Builtin::Join
            | Builtin::Split
            | Builtin::StartsWith
            | Builtin::EndsWith
            | Builtin::Fixed
            | Builtin::Round
            | Builtin::Remove => 2,
            b if b.takes_function() => 2,
            Builtin::Args | Builtin::Today => 0,
            Builtin::AddDays | Builtin::DaysBetween => 2,
            Builtin::Insert => 3,
            Builtin::Range if args.len() == 2 => 2,
            _ => 1,
        };
        if let Some(a) = args.iter().find_map(|a| a.name.as_ref()) {
            self.err(Diagnostic::error(
                Code::UnknownArgument,
                a.span,
                format!("builtin `{name}` takes positional arguments"),
            ));
        }
        if let Some(effect) = b.effect() {
            if self.in_const {
                self.not_constant(e.span, &format!("call `{name}`, which {}", effect.doing()));
            }
            if let Some(uses) = self.current.and_then(|c| self.info.effect_uses.get_mut(c)) {
                uses.push((effect, e.span));
            }
        }
        if args.len() != want_n {
            self.err(Diagnostic::error(
                Code::Arity,
                e.span,
                format!(
                    "`{name}` takes {want_n} argument{}, found {}",
                    if want_n == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
            for a in args {
                self.check_expr(&a.value, Want::Any);
            }
            return match b {
                Builtin::Len | Builtin::Int => Ty::Int,
                Builtin::Str => Ty::Str,
                Builtin::Float => Ty::Float,
                Builtin::Decimal | Builtin::Div | Builtin::Round => Ty::Decimal,
                Builtin::ParseInt | Builtin::ParseFloat | Builtin::ParseDecimal => {
                    b.parsed().map_or(Ty::Error, |t| Ty::Option(Box::new(t)))
                }
                Builtin::Keys | Builtin::Args => Ty::List(Box::new(Ty::Str)),
                Builtin::Env => Ty::Option(Box::new(Ty::Str)),
                Builtin::Date | Builtin::AddDays | Builtin::Today => Ty::Date,
                Builtin::ParseDate => Ty::Option(Box::new(Ty::Date)),
                Builtin::DaysBetween | Builtin::Year | Builtin::Month | Builtin::Day => Ty::Int,
                Builtin::ReadText => Ty::Result(Box::new(Ty::Str)),
                Builtin::Range | Builtin::Split => Ty::List(Box::new(match b {
                    Builtin::Range => Ty::Int,
                    _ => Ty::Str,
                })),
                Builtin::Contains
                | Builtin::StartsWith
                | Builtin::EndsWith
                | Builtin::Any
                | Builtin::All => Ty::Bool,
                Builtin::Count => Ty::Int,
                Builtin::Join
                | Builtin::Trim
                | Builtin::Lower
                | Builtin::Upper
                | Builtin::Fixed => Ty::Str,
                Builtin::Print | Builtin::Assert | Builtin::AssertEq => Ty::Unit,
                Builtin::ImageFile
                | Builtin::ImageUrl
                | Builtin::DocumentFile
                | Builtin::DocumentUrl
                | Builtin::AudioFile
                | Builtin::AudioUrl => b.media().map_or(Ty::Error, |(m, _)| Ty::Media(m)),
                // Their type depends on the argument's: nothing to go on.
                _ => Ty::Error,
            };
        }
        if b == Builtin::Args {
            return Ty::List(Box::new(Ty::Str));
        }
        if b == Builtin::Today {
            return Ty::Date;
        }
        let a0 = &args[0].value;
        // `want` is prose for the message, `want_ty` a type-like alternative list.
        let bad = |c: &mut Self, t: &Ty, want: &str, want_ty: &str| {
            c.err(
                Diagnostic::error(Code::Mismatch, a0.span, format!("`{name}` needs {want}"))
                    .types(want_ty.to_string(), c.show(t)),
            );
        };
        // What the first argument may be (the table docs/language.md states).
        let accepts = b.accepts().unwrap_or(&[]);
        let takes = |t: &Ty| t.is_error() || Kind::any_holds(accepts, t);
        let bad_kind = |c: &mut Self, t: &Ty| {
            bad(c, t, &Kind::prose(accepts), &Kind::alternatives(accepts));
        };
        match b {
            Builtin::Len => {
                let t = self.check_expr(a0, Want::Any);
                if matches!(t, Ty::Unknown) {
                    self.open_uses.push((a0.id, a0.span, "measured with `len`"));
                } else if !takes(&t) {
                    bad_kind(self, &t);
                }
                Ty::Int
            }
            Builtin::Str => {
                self.check_expr(a0, Want::Any);
                Ty::Str
            }
            Builtin::Int | Builtin::Float => {
                let t = self.check_expr(a0, Want::Any);
                if matches!(t, Ty::Str) {
                    self.str_to_number(e, b, &t);
                } else if !takes(&t) {
                    bad_kind(self, &t);
                }
                if b == Builtin::Int {
                    Ty::Int
                } else {
                    Ty::Float
                }
            }
            Builtin::ParseInt | Builtin::ParseFloat | Builtin::ParseDecimal => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                b.parsed().map_or(Ty::Error, |t| Ty::Option(Box::new(t)))
            }
            Builtin::Decimal => {
                let t = self.check_expr(a0, Want::Any);
                match (&t, &a0.kind) {
                    (Ty::Str, ExprKind::Str(text)) if !is_decimal_text(text) => {
                        self.err(
                            Diagnostic::error(
                                Code::InvalidDecimal,
                                a0.span,
                                format!("{text:?} is not a decimal number"),
                            )
                            .hint("a `Decimal` is written like \"12.50\" or \"-3\": an optional `-`, digits, and optionally `.` and more digits"),
                        );
                    }
                    (t, _) if takes(t) => {}
                    (Ty::Float, _) => {
                        let mut d = Diagnostic::error(
                            Code::Mismatch,
                            a0.span,
                            format!("`decimal` needs {}", Kind::prose(accepts)),
                        )
                        .types(Kind::alternatives(accepts), "float")
                        .hint("a `float` is binary and holds most decimals only approximately: write the number as text, `decimal(\"0.1\")`, or convert its shortest text, `decimal(str(x))`");
                        let written = self.source_text(a0.span).to_string();
                        if matches!(a0.kind, ExprKind::Float(_)) && is_decimal_text(&written) {
                            d = d.fix(
                                "write the number as text",
                                a0.span,
                                format!("\"{written}\""),
                            );
                        }
                        self.err(d);
                    }
                    _ => bad_kind(self, &t),
                }
                Ty::Decimal
            }
            Builtin::Print => {
                self.check_expr(a0, Want::Any);
                Ty::Unit
            }
            Builtin::Assert => {
                self.check_expr(a0, Want::Type(&Ty::Bool));
                Ty::Unit
            }
            Builtin::AssertEq => {
                let t = self.check_expr(a0, Want::Any);
                self.check_expr(&args[1].value, Want::Type(&t));
                Ty::Unit
            }
            Builtin::Range => {
                for a in args {
                    self.check_expr(&a.value, Want::Type(&Ty::Int));
                }
                Ty::List(Box::new(Ty::Int))
            }
            Builtin::ImageFile
            | Builtin::ImageUrl
            | Builtin::DocumentFile
            | Builtin::DocumentUrl
            | Builtin::AudioFile
            | Builtin::AudioUrl => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                let Some((media, url)) = b.media() else {
                    return Ty::Error;
                };
                if let ExprKind::Str(text) = &a0.kind {
                    self.check_media_source(e, media, url, text, a0.span);
                }
                Ty::Media(media)
            }
            Builtin::Trim | Builtin::Lower | Builtin::Upper => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                Ty::Str
            }
            Builtin::Env => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                Ty::Option(Box::new(Ty::Str))
            }
            Builtin::ReadText => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                Ty::Result(Box::new(Ty::Str))
            }
            Builtin::Args => Ty::List(Box::new(Ty::Str)),
            Builtin::Today => Ty::Date,
            Builtin::Date => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                match &a0.kind {
                    ExprKind::Str(text) if is_iso_date(text) => {}
                    ExprKind::Str(text) => {
                        self.err(
                            Diagnostic::error(
                                Code::InvalidDate,
                                a0.span,
                                format!("{text:?} is not a date"),
                            )
                            .hint("a `Date` is written `date(\"2026-12-31\")`: year, month and day of a real day, ISO 8601, years 0001 to 9999"),
                        );
                    }
                    _ => {
                        let ExprKind::Call { callee, .. } = &e.kind else {
                            return Ty::Date;
                        };
                        self.err(
                            Diagnostic::error(
                                Code::InvalidDate,
                                a0.span,
                                "`date` takes a date written in the program",
                            )
                            .hint("to read a date from text, `parse_date(s)` gives an `Option[Date]`, `None` when the text is not a date")
                            .fix_with(
                                crate::diagnostic::Applicability::MaybeIncorrect,
                                "read it with `parse_date` (an `Option[Date]`)",
                                vec![crate::diagnostic::Edit {
                                    span: callee.span,
                                    replacement: "parse_date".into(),
                                }],
                            ),
                        );
                    }
                }
                Ty::Date
            }
            Builtin::ParseDate => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                Ty::Option(Box::new(Ty::Date))
            }
            Builtin::AddDays => {
                self.check_expr(a0, Want::Type(&Ty::Date));
                self.check_expr(&args[1].value, Want::Type(&Ty::Int));
                Ty::Date
            }
            Builtin::DaysBetween => {
                self.check_expr(a0, Want::Type(&Ty::Date));
                self.check_expr(&args[1].value, Want::Type(&Ty::Date));
                Ty::Int
            }
            Builtin::Year | Builtin::Month | Builtin::Day => {
                self.check_expr(a0, Want::Type(&Ty::Date));
                Ty::Int
            }
            Builtin::StartsWith | Builtin::EndsWith => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                self.check_expr(&args[1].value, Want::Type(&Ty::Str));
                Ty::Bool
            }
            Builtin::Join => {
                self.check_expr(a0, Want::Type(&Ty::List(Box::new(Ty::Str))));
                self.check_expr(&args[1].value, Want::Type(&Ty::Str));
                Ty::Str
            }
            Builtin::Split => {
                self.check_expr(a0, Want::Type(&Ty::Str));
                self.check_expr(&args[1].value, Want::Type(&Ty::Str));
                Ty::List(Box::new(Ty::Str))
            }
            Builtin::Fixed => {
                let t = self.check_expr(a0, Want::Any);
                if !takes(&t) {
                    bad_kind(self, &t);
                }
                self.check_expr(&args[1].value, Want::Type(&Ty::Int));
                Ty::Str
            }
            Builtin::Div | Builtin::Round => {
                self.check_expr(a0, Want::Type(&Ty::Decimal));
                let rest = if b == Builtin::Div {
                    self.check_expr(&args[1].value, Want::Type(&Ty::Decimal));
                    &args[2..]
                } else {
                    &args[1..]
                };
                let places = &rest[0].value;
                self.check_expr(places, Want::Type(&Ty::Int));
                let literal = match &places.kind {
                    ExprKind::Int(n) => Some(*n),
                    ExprKind::Unary {
                        op: UnaryOp::Neg,
                        expr,
                    } => match expr.kind {
                        ExprKind::Int(n) => Some(-n),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(n) = literal.filter(|n| !(0..=38).contains(n)) {
                    self.err(
                        Diagnostic::error(
                            Code::InvalidRounding,
                            places.span,
                            format!("{n} decimal places: `{name}` gives 0 to 38"),
                        )
                        .hint("the places are how many digits follow the point: `2` for cents"),
                    );
                }
                if let Some(mode) = rest.get(1).map(|a| &a.value) {
                    self.check_expr(mode, Want::Type(&Ty::Str));
                    let modes = crate::facts::ROUNDING_MODES;
                    match &mode.kind {
                        ExprKind::Str(text) if modes.contains(&text.as_str()) => {}
                        ExprKind::Str(text) => {
                            let mut d = Diagnostic::error(
                                Code::InvalidRounding,
                                mode.span,
                                format!("{text:?} is not a rounding mode"),
                            )
                            .hint(format!(
                                "the modes are {}; without one, `{name}` rounds half away from zero (\"half_up\")",
                                modes.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ")
                            ));
                            // A suggestion, never applied unread: another mode
                            // rounds amounts differently.
                            if let Some(s) = crate::diagnostic::did_you_mean(text, modes) {
                                d = d.fix_with(
                                    crate::diagnostic::Applicability::MaybeIncorrect,
                                    format!("replace with \"{s}\""),
                                    vec![crate::diagnostic::Edit {
                                        span: mode.span,
                                        replacement: format!("\"{s}\""),
                                    }],
                                );
                            }
                            self.err(d);
                        }
                        _ => self.err(
                            Diagnostic::error(
                                Code::InvalidRounding,
                                mode.span,
                                "the rounding mode is a string literal",
                            )
                            .hint(format!(
                                "write one of {}",
                                modes
                                    .iter()
                                    .map(|m| format!("\"{m}\""))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        ),
                    }
                }
                Ty::Decimal
            }
            Builtin::Contains => {
                let t = self.check_expr(a0, Want::Any);
                match t {
                    // A map: whether it has the key.
                    Ty::Str | Ty::Map(_) => {
                        self.check_expr(&args[1].value, Want::Type(&Ty::Str));
                    }
                    Ty::List(elem) if elem.is_concrete() => {
                        self.check_expr(&args[1].value, Want::Type(&elem));
                    }
                    Ty::Error => {
                        self.check_expr(&args[1].value, Want::Any);
                    }
                    Ty::List(_) | Ty::Unknown => {
                        self.open_type(a0.span, "searched with `contains`");
                        self.check_expr(&args[1].value, Want::Any);
                    }
                    other => {
                        bad_kind(self, &other);
                        self.check_expr(&args[1].value, Want::Any);
                    }
                }
                Ty::Bool
            }
            Builtin::Insert | Builtin::Remove | Builtin::Keys | Builtin::Values => {
                self.infer_map_builtin(b, name, args, want)
            }
            Builtin::Get => self.infer_get(args, want),
            Builtin::Map
            | Builtin::Filter
            | Builtin::Find
            | Builtin::Any
            | Builtin::All
            | Builtin::Count
            | Builtin::SortBy
            | Builtin::GroupBy => self.infer_higher_order(b, name, args, want),
            Builtin::First
            | Builtin::Last
            | Builtin::Sort
            | Builtin::Reverse
            | Builtin::Sum
            | Builtin::Min
            | Builtin::Max => {
                // The element type decides the result: take it from what is
                // wanted when the list has none of its own (`[]`).
                let wanted_elem = match (b, want.ty()) {
                    (Builtin::Sort | Builtin::Reverse, Some(Ty::List(e))) => Some((**e).clone()),
                    (
                        Builtin::First | Builtin::Last | Builtin::Min | Builtin::Max,
                        Some(Ty::Option(e)),
                    ) => Some((**e).clone()),
                    (Builtin::Sum, Some(t)) => Some(t.clone()),
                    _ => None,
                };
                let t = match &wanted_elem {
                    Some(e) if e.is_concrete() => {
                        self.check_expr(a0, Want::Type(&Ty::List(Box::new(e.clone()))))
                    }
                    _ => self.check_expr(a0, Want::Any),
                };
                let elem = match t {
                    Ty::List(e) if e.is_concrete() => Some(*e),
                    Ty::List(_) | Ty::Unknown => match wanted_elem {
                        Some(e) if e.is_concrete() => Some(e),
                        _ => {
                            self.open_type(a0.span, &format!("passed to `{name}`"));
                            None
                        }
                    },
                    Ty::Error => None,
                    other => {
                        bad_kind(self, &other);
                        None
                    }
                };
                let Some(elem) = elem else {
                    return Ty::Error;
                };
                let elements = b.elements().unwrap_or(&[]);
                match b {
                    Builtin::Sort | Builtin::Min | Builtin::Max | Builtin::Sum
                        if !Kind::any_holds(elements, &elem) =>
                    {
                        bad(
                            self,
                            &Ty::List(Box::new(elem)),
                            &format!("a list of {}", Kind::element_prose(elements)),
                            &format!("list[{}]", Kind::alternatives(elements)),
                        );
                        Ty::Error
                    }
                    Builtin::Sum => elem,
                    Builtin::Sort | Builtin::Reverse => Ty::List(Box::new(elem)),
                    _ => Ty::Option(Box::new(elem)),
                }
            }
        }
    }

    /// "`name` needs a `list`" (the kinds the builtin's first argument may
    /// be, [`Builtin::accepts`]) for a first argument of type `found` at `at`.
    pub(super) fn kind_mismatch(&self, b: Builtin, name: &str, at: Span, found: &Ty) -> Diagnostic {
        let accepts = b.accepts().unwrap_or(&[]);
        Diagnostic::error(
            Code::Mismatch,
            at,
            format!("`{name}` needs {}", Kind::prose(accepts)),
        )
        .types(Kind::alternatives(accepts), self.show(found))
    }

    /// `get(xs, i)`, `get(m, key)` (an `Option`), and with a default,
    /// `get(xs, i, d)`, `get(m, key, d)` (the element, or `d`).
    fn infer_get(&mut self, args: &[Arg], want: Want) -> Ty {
        let defaulted = args.len() == 3;
        let wanted_elem = match (defaulted, want.ty()) {
            (false, Some(Ty::Option(e))) => Some((**e).clone()),
            (true, Some(t)) => Some(t.clone()),
            _ => None,
        }
        .filter(Ty::is_concrete);
        let a0 = &args[0].value;
        let t = self.check_expr(a0, Want::Any);
        let (elem, key) = match &t {
            Ty::List(e) => (Some((**e).clone()), Ty::Int),
            Ty::Map(e) => (Some((**e).clone()), Ty::Str),
            Ty::Error => (None, Ty::Error),
            Ty::Unknown => (None, Ty::Error),
            other => {
                let accepts = Builtin::Get.accepts().unwrap_or(&[]);
                self.err(
                    Diagnostic::error(
                        Code::Mismatch,
                        a0.span,
                        format!("`get` needs {}", Kind::prose(accepts)),
                    )
                    .types(Kind::alternatives(accepts), self.show(other)),
                );
                (None, Ty::Error)
            }
        };
        self.check_expr(&args[1].value, Want::Type(&key));
        // The element type: the container's, else what the default or the
        // use wants (`get([], 0)` where an `Option[int]` is expected).
        let mut elem = match elem {
            Some(e) if e.is_concrete() => Some(e),
            Some(e) => match &wanted_elem {
                Some(w) => {
                    let joined = e.join(w);
                    let filled = match &t {
                        Ty::Map(_) => Ty::Map(Box::new(joined.clone())),
                        _ => Ty::List(Box::new(joined.clone())),
                    };
                    self.record(a0, filled);
                    Some(joined)
                }
                None => Some(e),
            },
            None => None,
        };
        if defaulted {
            let d = &args[2].value;
            match &elem {
                Some(e) if e.is_concrete() => {
                    self.check_expr(d, Want::Type(e));
                }
                Some(e) => {
                    let dt = self.check_expr(d, Want::Any);
                    let joined = e.join(&dt);
                    if joined.is_concrete() {
                        let filled = match &t {
                            Ty::Map(_) => Ty::Map(Box::new(joined.clone())),
                            _ => Ty::List(Box::new(joined.clone())),
                        };
                        self.record(a0, filled);
                    }
                    elem = Some(joined);
                }
                None => {
                    self.check_expr(d, Want::Any);
                }
            }
        }
        match elem {
            Some(e) if e.is_concrete() => {
                if defaulted {
                    e
                } else {
                    Ty::Option(Box::new(e))
                }
            }
            Some(_) => {
                self.open_type(a0.span, "passed to `get`");
                Ty::Error
            }
            None => {
                if matches!(t, Ty::Unknown) {
                    self.open_type(a0.span, "passed to `get`");
                }
                Ty::Error
            }
        }
    }

    /// `insert(m, key, value)` and `remove(m, key)` (a new map), `keys(m)`
    /// (sorted) and `values(m)` (in the order of their keys).
    fn infer_map_builtin(&mut self, b: Builtin, name: &str, args: &[Arg], want: Want) -> Ty {
        let a0 = &args[0].value;
        let wanted = match (b, want.ty()) {
            (Builtin::Insert | Builtin::Remove, Some(Ty::Map(e)))
            | (Builtin::Values, Some(Ty::List(e)))
                if e.is_concrete() =>
            {
                Some((**e).clone())
            }
            _ => None,
        };
        let t = match (&wanted, b) {
            (Some(e), Builtin::Insert | Builtin::Remove) => {
                self.check_expr(a0, Want::Type(&Ty::Map(Box::new(e.clone()))))
            }
            _ => self.check_expr(a0, Want::Any),
        };
        let value = match &t {
            Ty::Map(v) => Some((**v).clone()),
            Ty::Error => None,
            Ty::Unknown => {
                self.open_type(a0.span, &format!("passed to `{name}`"));
                None
            }
            other => {
                let mut d = self.kind_mismatch(b, name, a0.span, other);
                if matches!(other, Ty::List(_)) && b == Builtin::Insert {
                    d = d.hint("a list grows with `+`: `xs = xs + [x]`");
                }
                self.err(d);
                None
            }
        };
        if let Some(k) = args.get(1) {
            self.check_expr(&k.value, Want::Type(&Ty::Str));
        }
        let mut value = value.map(|v| match &wanted {
            Some(w) => v.join(w),
            None => v,
        });
        if b == Builtin::Insert {
            let v = &args[2].value;
            match &value {
                Some(e) if e.is_concrete() => {
                    self.check_expr(v, Want::Type(e));
                }
                Some(e) => {
                    let vt = self.check_expr(v, Want::Any);
                    let joined = e.join(&vt);
                    value = Some(joined);
                }
                None => {
                    self.check_expr(v, Want::Any);
                }
            }
        }
        let Some(value) = value else {
            return match b {
                Builtin::Keys => Ty::List(Box::new(Ty::Str)),
                _ => Ty::Error,
            };
        };
        // What the arguments decided flows back into the map (`[:]`).
        if !matches!(&t, Ty::Map(v) if **v == value) {
            self.record(a0, Ty::Map(Box::new(value.clone())));
        }
        match b {
            Builtin::Keys => Ty::List(Box::new(Ty::Str)),
            Builtin::Values if !value.is_concrete() => {
                self.open_type(a0.span, "passed to `values`");
                Ty::Error
            }
            Builtin::Values => Ty::List(Box::new(value)),
            _ => Ty::Map(Box::new(value)),
        }
    }
}
