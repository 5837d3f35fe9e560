//! Diagnostics: the one type every stage reports through, its stable codes,
//! the rustc-style renderer people read, and the JSON payload machines read
//! (documented in the README's `cargo vox check` section).
//!
//! Every variant of [`Code`] is a stable public name (`vox/<area>/<what>`)
//! with its severity declared beside it; `docs/diagnostics.md` is generated
//! from the table, and a test keeps the two in step.

use std::fmt::Write as _;

use crate::json::Json;
use crate::source::{SourceMap, Span};

macro_rules! codes {
    ($( $variant:ident = $code:literal $([$severity:ident])? : $desc:literal, )*) => {
        /// Stable diagnostic codes. Never renumber or rename one: agents key on them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code { $( $variant, )* }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The stable string form, e.g. `vox/type/mismatch`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $code, )* }
            }

            /// One line saying when the code is reported.
            pub fn description(self) -> &'static str {
                match self { $( Code::$variant => $desc, )* }
            }

            /// The severity every diagnostic with this code is reported at:
            /// declared once, in the table below, as rustc gives each lint a
            /// default level in one place.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => code_severity!($($severity)?), )* }
            }
        }
    };
}

/// `[warning]` after a code marks it a warning; unmarked codes are errors.
macro_rules! code_severity {
    () => {
        Severity::Error
    };
    (warning) => {
        Severity::Warning
    };
}

codes! {
    InvalidUtf8 = "vox/syntax/invalid-utf8": "the file is not valid UTF-8",
    UnexpectedChar = "vox/syntax/unexpected-char": "a character that cannot start any token",
    BidiControl = "vox/syntax/bidi-control": "a character that changes the display order of text (U+202A–U+202E, U+2066–U+2069) written as itself in a string or comment",
    UnterminatedString = "vox/syntax/unterminated-string": "a string literal without its closing quote on the same line",
    MultilineString = "vox/syntax/multiline-string": "a `\"\"\"` string whose text starts on the opening line, with a line indented less than its closing `\"\"\"`, or written as an f-string",
    InvalidEscape = "vox/syntax/invalid-escape": "an unknown escape sequence in a string literal",
    InvalidNumber = "vox/syntax/invalid-number": "a malformed or out-of-range number literal",
    UnexpectedToken = "vox/syntax/unexpected-token": "the parser found a token where the grammar allows none",
    UnclosedDelimiter = "vox/syntax/unclosed-delimiter": "a `(`, `[` or `{` that is never closed",
    TooDeep = "vox/syntax/too-deep": "expressions, types or blocks nested deeper than the compiler accepts",
    Naming = "vox/syntax/naming": "a type or variant name not starting with an uppercase letter, or a value name that does",
    DanglingDoc = "vox/syntax/dangling-doc" [warning]: "a `///` doc comment that documents nothing",
    UnknownName = "vox/name/unknown": "a variable or function name that is not declared",
    UnknownType = "vox/name/unknown-type": "a type name that is not declared",
    Duplicate = "vox/name/duplicate": "two declarations (types, variants, functions, parameters, bindings) with one name",
    DuplicateField = "vox/name/duplicate-field": "a record type or variant declaring the same field twice",
    ImmutableAssign = "vox/name/immutable-assign": "an assignment to a variable declared without `mut`",
    ReservedName = "vox/name/reserved": "a function named `vox_main` in a module with `fn main` (the Rust name of `fn main` in a library crate), or `f_batch` beside an `@ai` function `f` (the Rust name of its bulk run)",
    Mismatch = "vox/type/mismatch": "an expression whose type differs from the one expected there",
    GenericArity = "vox/type/generic-arity": "a type given the wrong number of type arguments",
    UnknownField = "vox/type/unknown-field": "a field that the record or variant does not have",
    MissingField = "vox/type/missing-field": "a record literal or variant constructor missing some fields",
    NotARecord = "vox/type/not-a-record": "a record literal or field access on something that is not a record",
    Arity = "vox/type/arity": "a call with the wrong number of arguments",
    UnknownArgument = "vox/type/unknown-argument": "a named argument that the function or variant does not take",
    InvalidOperand = "vox/type/invalid-operand": "an operator applied to types it does not support",
    InvalidDecimal = "vox/type/invalid-decimal": "`decimal(\"…\")` of a string literal that is not a decimal number",
    InvalidDate = "vox/type/invalid-date": "`date(…)` of a string that is not an ISO 8601 date (`YYYY-MM-DD`, a real day, years 0001 to 9999), or of a value that is not a string literal",
    InvalidRounding = "vox/type/invalid-rounding": "a rounding mode of `div` or `round` that is not one of theirs, or decimal places outside 0 to 38",
    InvalidMediaSource = "vox/type/invalid-media-source": "a media constructor given a string literal that cannot be its source: empty, a URL given to `image_file`/`document_file`, or a file path given to `image_url`/`document_url`",
    NotIterable = "vox/type/not-iterable": "a `for` loop over something that is not a list",
    MissingReturn = "vox/type/missing-return": "a function with a return type whose body can end without a value",
    TryNeedsNetCall = "vox/type/try-needs-net-call": "`try` applied to something other than a call of a function that uses the network",
    OutsideLoop = "vox/flow/outside-loop": "a `break` or `continue` outside a `for` or `while` body",
    MissingElse = "vox/type/missing-else": "an `if` used as a value without an `else` branch",
    InfiniteType = "vox/type/infinite-recursion": "a type that contains itself other than through `list` or `Option`",
    InvalidAssignTarget = "vox/type/invalid-assign-target": "the left side of `=` is not a variable or a field of one",
    Lambda = "vox/type/lambda": "a function value (a lambda `fn(x) => …` or a function's name) where none can go: anywhere but an argument of `map`, `filter`, `find`, `any`, `all`, `count`, `sort_by` or `group_by`, with other than one parameter, a parameter annotated with another type than the element's, or naming a function that cannot be passed",
    CapturedAssign = "vox/lambda/captured-assign": "an assignment inside a lambda to a variable declared outside it (a lambda captures values, not variables)",
    NetInLambda = "vox/effect/net-in-lambda": "a lambda, or a function passed to a builtin, that calls a function using the network",
    ConstValue = "vox/const/not-constant": "a `const` whose value calls a function, `print` or an assertion, or is computed from itself (directly or through other constants)",
    NotCallable = "vox/type/not-callable": "a call of something that is not a function, builtin or variant",
    MapKey = "vox/type/map-key": "a `map` whose key type is not `str`",
    DuplicateKey = "vox/map/duplicate-key": "a map literal that gives the same key twice",
    AiMapOutput = "vox/ai/map-in-output": "an `@ai` function whose return type holds a `map` (strict structured outputs cannot carry one)",
    OpenType = "vox/type/needs-annotation": "a value whose type nothing decides (an element of an untyped `[]` or `[:]`, the content of an untyped `None`) is matched against a pattern, iterated, measured or has a field read",
    NonExhaustive = "vox/match/non-exhaustive": "a `match` that does not cover every possible value",
    Unreachable = "vox/match/unreachable" [warning]: "a `match` arm that can never be reached",
    InvalidPattern = "vox/match/invalid-pattern": "a pattern that cannot match the matched value's type",
    OrPatternBinding = "vox/match/or-pattern-binding": "an alternative of an or-pattern (`A | B`) that binds a name",
    StructuredOutputMismatch = "vox/ai/structured-output-mismatch": "`structured_output` names a type other than the function's return type",
    AiUnknownArgument = "vox/ai/unknown-argument": "an `@ai(...)` argument the compiler does not know",
    AiDuplicateArgument = "vox/ai/duplicate-argument": "an `@ai(...)` argument given twice",
    AiInvalidValue = "vox/ai/invalid-value": "an `@ai(...)` argument with a value of the wrong kind or out of range",
    AiMissingReturnType = "vox/ai/missing-return-type": "an `@ai` function without a return type for the model to produce",
    AiInvalidCheck = "vox/ai/invalid-check": "an `@ai(check = f)` naming no function, a function that does not take the return type and return `list[str]`, or one that uses the network",
    AiInvalidTool = "vox/ai/invalid-tool": "an `@ai(tools = [...])` entry naming no function, an `@ai` or `@test` function, one whose parameters or value cannot travel as JSON (media), or a function taking a `list[Message]`",
    RustTool = "vox/tool/rust": "a `@rust` function with a body, without a return type, called from Vox, or given other decorators (it is a tool the crate implements in Rust)",
    InvalidExample = "vox/example/invalid": "an `example` that does not call an `@ai` function of the module, or whose values are not written out (literals, lists, maps, records, variants, `Some`/`None`, `date(…)`)",
    MediaInOutput = "vox/ai/media-in-output": "an `@ai` function whose return type holds an `Image`, `Document` or `Audio`, directly or inside a list, option, result, record or variant (a model cannot return media)",
    SchemaLimit = "vox/ai/schema-limit": "an `@ai` return type whose JSON Schema exceeds a strict-mode limit (nesting depth, property count, enum values, text size)",
    MissingUses = "vox/effect/missing-uses": "a function that uses the network (an `@ai` function or a caller of one) without `@uses(net)`, or reads files or its arguments or environment (`read_text`, `args`, `env`, or a caller of a function that does) without `@uses(fs)` or `@uses(env)`",
    UnknownEffect = "vox/effect/unknown" [warning]: "an `@uses(...)` effect the compiler does not know",
    MalformedEffects = "vox/effect/malformed": "an `@uses` without effects, or an effect given a value (`@uses(net = true)`)",
    UnknownDecorator = "vox/decorator/unknown": "a decorator other than `@ai`, `@uses`, `@test` and `@rust`",
    MisplacedDecorator = "vox/decorator/misplaced": "a decorator where it does not apply, or repeated",
    TestSignature = "vox/test/signature": "an `@test` function with parameters or a return type",
    MainSignature = "vox/main/signature": "`fn main` with parameters or a return type",
    MainCalled = "vox/main/called": "a call of `fn main`, the program's entry point",
    TestCalled = "vox/test/called": "a call of an `@test` function (tests exist only in the test build and are run by the harness)",
    UnusedVariable = "vox/lint/unused-variable" [warning]: "a `let` binding or parameter that is never read",
    UnusedValue = "vox/lint/unused-value" [warning]: "an expression statement that computes a value, calls nothing and drops the value",
    BracesInString = "vox/lint/braces-in-string" [warning]: "a plain string containing `{name}` where `name` is a variable in scope (an f-string was probably meant)",
    SelfAssignment = "vox/lint/self-assignment" [warning]: "an assignment of a variable or field to itself",
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A text replacement that is part of a [`Fix`].
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// How sure a [`Fix`] is, as in rustc (docs/diagnostics.md, "Fixes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Applicability {
    /// Applying it gives the program that was meant: `cargo vox fix` applies it.
    #[default]
    MachineApplicable,
    /// Probably right, but a person should look: shown, never applied.
    MaybeIncorrect,
    /// Contains placeholders (`<…>`) a person must fill in: shown, never applied.
    HasPlaceholders,
}

impl Applicability {
    /// The stable string form, e.g. `machine-applicable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "machine-applicable",
            Applicability::MaybeIncorrect => "maybe-incorrect",
            Applicability::HasPlaceholders => "has-placeholders",
        }
    }
}

/// A fix: applying all its edits resolves the diagnostic.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    pub message: String,
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
}

/// Another place that helps explain a diagnostic ("first defined here").
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// Short text shown under the caret.
    pub label: Option<String>,
    pub expected: Option<String>,
    pub found: Option<String>,
    pub hints: Vec<String>,
    pub fixes: Vec<Fix>,
    pub related: Vec<Related>,
}

impl Diagnostic {
    /// A diagnostic at its code's severity ([`Code::severity`]).
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            span,
            label: None,
            expected: None,
            found: None,
            hints: Vec::new(),
            fixes: Vec::new(),
            related: Vec::new(),
        }
    }

    /// [`Diagnostic::new`] for a code declared as an error; the name says
    /// at the call site what the reader should expect.
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        debug_assert_eq!(
            code.severity(),
            Severity::Error,
            "{code:?} is declared a warning"
        );
        Diagnostic::new(code, span, message)
    }

    /// [`Diagnostic::new`] for a code declared as a warning.
    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        debug_assert_eq!(
            code.severity(),
            Severity::Warning,
            "{code:?} is declared an error"
        );
        Diagnostic::new(code, span, message)
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    pub fn types(mut self, expected: impl Into<String>, found: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self.found = Some(found.into());
        self
    }

    pub fn fix(
        mut self,
        message: impl Into<String>,
        span: Span,
        replacement: impl Into<String>,
    ) -> Self {
        self.fixes.push(Fix {
            message: message.into(),
            edits: vec![Edit {
                span,
                replacement: replacement.into(),
            }],
            applicability: Applicability::MachineApplicable,
        });
        self
    }

    /// Adds a fix of several edits with the given applicability.
    pub fn fix_with(
        mut self,
        applicability: Applicability,
        message: impl Into<String>,
        edits: Vec<Edit>,
    ) -> Self {
        self.fixes.push(Fix {
            message: message.into(),
            edits,
            applicability,
        });
        self
    }

    pub fn related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by file and position so output is stable.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| (d.span.file, d.span.start, d.span.end, d.code.as_str()));
}

/// How to render for a terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    pub color: bool,
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// Renders one diagnostic the way rustc renders its own:
///
/// ```text
/// error[vox/type/mismatch]: mismatched types
///  --> vox/invoice.vox:3:18
///   |
/// 3 |     let x: int = "a"
///   |                  ^^^ expected `int`, found `str`
///   |
///   = help: ...
/// ```
pub fn render(d: &Diagnostic, sources: &SourceMap, opts: RenderOptions) -> String {
    let style = Style { on: opts.color };
    let (sev_color, sev) = match d.severity {
        Severity::Error => ("1;31", "error"),
        Severity::Warning => ("1;33", "warning"),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}{}",
        style.paint(sev_color, &format!("{sev}[{}]", d.code.as_str())),
        style.paint("1", &format!(": {}", d.message))
    );
    let file = sources.get(d.span.file);
    let start = file.line_col(d.span.start as usize);
    let end = file.line_col(d.span.end as usize);
    let gutter = start.line.max(end.line).to_string().len();
    let pad = " ".repeat(gutter);
    let bar = style.paint("1;34", "|");
    let _ = writeln!(
        out,
        "{pad}{} {}:{}:{}",
        style.paint("1;34", "-->"),
        file.name,
        start.line,
        start.col
    );
    let _ = writeln!(out, "{pad} {bar}");
    let label = d.label.clone().or_else(|| match (&d.expected, &d.found) {
        (Some(e), Some(f)) => Some(format!("expected `{e}`, found `{f}`")),
        _ => None,
    });
    write_snippet(
        &mut out,
        file,
        (start.line, start.col, d.span.start as usize),
        end,
        &label,
        gutter,
        &style,
        sev_color,
    );
    for r in &d.related {
        let rf = sources.get(r.span.file);
        let rs = rf.line_col(r.span.start as usize);
        let re = rf.line_col(r.span.end as usize);
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(
            out,
            "{pad}{} {}:{}:{}",
            style.paint("1;34", ":::"),
            rf.name,
            rs.line,
            rs.col
        );
        let _ = writeln!(out, "{pad} {bar}");
        write_snippet(
            &mut out,
            rf,
            (rs.line, rs.col, r.span.start as usize),
            re,
            &Some(r.message.clone()),
            gutter,
            &style,
            "1;34",
        );
    }
    if !d.hints.is_empty() || !d.fixes.is_empty() {
        let _ = writeln!(out, "{pad} {bar}");
    }
    for h in &d.hints {
        let _ = writeln!(out, "{pad} {} help: {h}", style.paint("1;34", "="));
    }
    for f in &d.fixes {
        let what = match f.applicability {
            Applicability::MachineApplicable => "fix",
            Applicability::MaybeIncorrect => "suggestion (maybe incorrect)",
            Applicability::HasPlaceholders => "suggestion (fill in the placeholders)",
        };
        let _ = writeln!(
            out,
            "{pad} {} {what}: {}",
            style.paint("1;34", "="),
            f.message
        );
    }
    out
}

/// Longest source line we print in a snippet; longer lines are elided around
/// the caret so a 1 MB line cannot flood a terminal.
const MAX_SNIPPET_CHARS: usize = 160;

#[allow(clippy::too_many_arguments)]
fn write_snippet(
    out: &mut String,
    file: &crate::source::SourceFile,
    (line, col, at): (usize, usize, usize),
    end: crate::source::LineCol,
    label: &Option<String>,
    gutter: usize,
    style: &Style,
    caret_color: &str,
) {
    let full = file.line_text(line);
    // The caret run in characters, from the columns (computed from marks,
    // not by scanning the line).
    let caret_chars = if end.line == line {
        end.col.saturating_sub(col).max(1)
    } else {
        usize::MAX
    };
    // On a long line, only a window of bytes around the caret is looked at,
    // so a snippet costs the same on an 87 KB line as on a short one (8,000
    // diagnostics on one such line rendered in seconds, not minutes).
    let window = 4 * MAX_SNIPPET_CHARS;
    let (text, col) = if full.len() > 2 * window {
        let line_start = file.line_start(line);
        let caret = at.saturating_sub(line_start).min(full.len());
        let mut from = caret.saturating_sub(window);
        while !full.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (caret + window).min(full.len());
        while !full.is_char_boundary(to) {
            to += 1;
        }
        let mut caret = caret;
        while !full.is_char_boundary(caret) {
            caret -= 1;
        }
        // The window is wider than a snippet, so the elision below cuts it
        // again around the caret and marks both sides with `…`.
        (&full[from..to], full[from..caret].chars().count() + 1)
    } else {
        (full, col)
    };
    let end = crate::source::LineCol {
        line: end.line,
        col: col.saturating_add(caret_chars),
    };
    // One column per character, and nothing that moves the text around:
    // tabs as spaces, other spaces as spaces, and invisible characters
    // (zero-width, bidirectional controls, byte order marks) as `�`.
    let chars: Vec<char> = text
        .chars()
        .map(|c| match crate::chars::notable(c) {
            _ if c == '\t' => ' ',
            Some(info) if info.invisible && info.instead == Some(" ") => ' ',
            Some(info) if info.invisible => '\u{FFFD}',
            _ => c,
        })
        .collect();
    // Caret run: to the end span if on the same line, else to end of line.
    let caret_end = if end.line == line {
        end.col
    } else {
        chars.len() + 1
    };
    let mut caret_len = caret_end.saturating_sub(col).max(1);
    let (shown, offset) = if chars.len() > MAX_SNIPPET_CHARS {
        let from = col.saturating_sub(MAX_SNIPPET_CHARS / 2).min(chars.len());
        let to = (from + MAX_SNIPPET_CHARS).min(chars.len());
        caret_len = caret_len.min(to.saturating_sub(col - 1).max(1));
        // `…` marks a side that is cut, and shifts the text right by one.
        let lead = if from > 0 { "…" } else { "" };
        let tail = if to < chars.len() { "…" } else { "" };
        (
            format!("{lead}{}{tail}", chars[from..to].iter().collect::<String>()),
            from.saturating_sub(usize::from(from > 0)),
        )
    } else {
        (chars.iter().collect::<String>(), 0)
    };
    let bar = style.paint("1;34", "|");
    let _ = writeln!(
        out,
        "{} {bar} {}",
        style.paint("1;34", &format!("{line:>gutter$}")),
        sanitize(&shown)
    );
    let spaces = " ".repeat(col.saturating_sub(1).saturating_sub(offset));
    let carets = "^".repeat(caret_len);
    let lbl = label
        .as_deref()
        .map(|l| format!(" {l}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} {bar} {spaces}{}",
        " ".repeat(gutter),
        style.paint(caret_color, &format!("{carets}{lbl}"))
    );
}

/// Control characters in source lines would garble a terminal.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

/// Renders a one-line summary: `error: 2 errors and 1 warning emitted`.
pub fn summary(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no problems found".to_string(),
        (0, w) => format!("{} emitted", plural(w, "warning")),
        (e, 0) => format!("could not compile due to {}", plural(e, "error")),
        (e, w) => format!(
            "could not compile due to {}; {} emitted",
            plural(e, "error"),
            plural(w, "warning")
        ),
    }
}

fn span_json(sources: &SourceMap, span: Span) -> Json {
    let f = sources.get(span.file);
    let s = f.line_col(span.start as usize);
    let e = f.line_col(span.end as usize);
    Json::obj([
        ("start_line", Json::Int(s.line as i64)),
        ("start_col", Json::Int(s.col as i64)),
        ("end_line", Json::Int(e.line as i64)),
        ("end_col", Json::Int(e.col as i64)),
        ("start_byte", Json::Int(i64::from(span.start))),
        ("end_byte", Json::Int(i64::from(span.end))),
    ])
}

/// The JSON diagnostic payload (README, `cargo vox check`) of one diagnostic (`"source":"vox"`).
///
/// Lines and columns are 1-based; columns count characters. `start_byte` and
/// `end_byte` are byte offsets into the file, for tools that apply fixes.
pub fn payload(d: &Diagnostic, sources: &SourceMap) -> Json {
    let opt = |s: &Option<String>| s.as_ref().map_or(Json::Null, |s| Json::str(s.clone()));
    let file = |span: Span| Json::str(sources.get(span.file).name.clone());
    Json::obj([
        ("source", Json::str("vox")),
        ("error_code", Json::str(d.code.as_str())),
        ("severity", Json::str(d.severity.as_str())),
        ("message", Json::str(d.message.clone())),
        ("file_path", file(d.span)),
        ("span", span_json(sources, d.span)),
        ("expected_type", opt(&d.expected)),
        ("found_type", opt(&d.found)),
        (
            "correction_hints",
            Json::Arr(d.hints.iter().map(|h| Json::str(h.clone())).collect()),
        ),
        (
            "suggested_fixes",
            Json::Arr(
                d.fixes
                    .iter()
                    .map(|f| {
                        Json::obj([
                            ("message", Json::str(f.message.clone())),
                            ("applicability", Json::str(f.applicability.as_str())),
                            (
                                "edits",
                                Json::Arr(
                                    f.edits
                                        .iter()
                                        .map(|e| {
                                            Json::obj([
                                                ("file_path", file(e.span)),
                                                ("span", span_json(sources, e.span)),
                                                ("replacement", Json::str(e.replacement.clone())),
                                            ])
                                        })
                                        .collect(),
                                ),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "related_spans",
            Json::Arr(
                d.related
                    .iter()
                    .map(|r| {
                        Json::obj([
                            ("file_path", file(r.span)),
                            ("span", span_json(sources, r.span)),
                            ("message", Json::str(r.message.clone())),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

/// Applies every edit of every fix in `diagnostics` to the file `file`'s text.
/// Overlapping edits keep the first; used by tests and tools that auto-fix.
pub fn apply_fixes(text: &str, edits: &[&Edit]) -> String {
    let mut edits: Vec<&Edit> = edits.to_vec();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0usize;
    for e in edits {
        let r = e.span.range();
        if r.start < pos
            || r.end > text.len()
            || !text.is_char_boundary(r.start)
            || !text.is_char_boundary(r.end)
        {
            continue;
        }
        out.push_str(&text[pos..r.start]);
        out.push_str(&e.replacement);
        pos = r.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Edit distance for "did you mean" suggestions: insertions, deletions,
/// substitutions and swaps of adjacent characters each cost one (optimal
/// string alignment). Bounded work per pair: names are cut at 64 chars.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The closest candidate to `name`, if one is close enough to be a typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = name.chars().count();
    // Very short names are too easy to "match": only offer a case fix.
    let limit = if len < 3 { 0 } else { (len / 3).max(1) };
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(name) {
                0
            } else {
                levenshtein(name, c)
            };
            (d, c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by(|(d1, c1), (d2, c2)| d1.cmp(d2).then(c1.cmp(c2)))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {}", c.as_str());
            let parts: Vec<&str> = c.as_str().split('/').collect();
            assert_eq!(parts.len(), 3, "{}", c.as_str());
            assert_eq!(parts[0], "vox");
            assert!(!c.description().is_empty());
        }
    }

    #[test]
    fn did_you_mean_finds_close_names() {
        assert_eq!(did_you_mean("vendr", ["vendor", "lines"]), Some("vendor"));
        assert_eq!(did_you_mean("xyz", ["vendor", "lines"]), None);
        assert_eq!(did_you_mean("Vendor", ["vendor"]), Some("vendor"));
        assert_eq!(did_you_mean("prcie", ["price"]), Some("price"));
        assert_eq!(did_you_mean("Opne", ["Open", "Paid"]), Some("Open"));
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }

    /// On a long line the snippet is cut around the caret, and the caret
    /// stands under the character the span starts at — wherever it is on
    /// the line and whatever characters come before it.
    #[test]
    fn snippets_of_long_lines_put_the_caret_under_the_span() {
        use crate::source::{SourceFile, SourceMap, Span};
        let mut line = String::new();
        for i in 0..30_000 {
            line.push(['a', 'ç', '€', '𝄞', 'b'][i % 5]);
        }
        let text = format!("first line\n{line}\nlast\n");
        let mut map = SourceMap::new();
        let id = map.add(SourceFile::new("long.vox", text.clone()));
        let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for &at in [11, 12, 100, 5_000, 40_000, 60_000, text.len() - 12]
            .iter()
            .map(|&b| starts.iter().find(|&&s| s >= b).unwrap())
        {
            let marked: char = text[at..].chars().next().unwrap();
            let d = Diagnostic::error(Code::ALL[0], Span::new(id, at, at + marked.len_utf8()), "x");
            let out = render(&d, &map, RenderOptions { color: false });
            let lines: Vec<&str> = out.lines().collect();
            let snippet = lines
                .iter()
                .position(|l| l.contains(" | ") && !l.trim_start().starts_with('|'))
                .unwrap();
            let (shown, carets) = (lines[snippet], lines[snippet + 1]);
            let caret = carets.chars().position(|c| c == '^').unwrap();
            assert_eq!(shown.chars().nth(caret), Some(marked), "at {at}:\n{out}");
            assert!(shown.chars().count() < 200, "{shown}");
        }
    }

    #[test]
    fn summary_wording() {
        assert_eq!(summary(1, 0), "could not compile due to 1 error");
        assert_eq!(
            summary(2, 1),
            "could not compile due to 2 errors; 1 warning emitted"
        );
        assert_eq!(summary(0, 3), "3 warnings emitted");
    }
}
