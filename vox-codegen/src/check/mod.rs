//! Checking: names, types, effects and decorators of one module.
//!
//! Input is the parsed [`ast::Module`]; output is [`ModuleInfo`] (resolved
//! types, function signatures, the type of every expression, what every call
//! and constructor refers to) plus diagnostics. Checking never stops at the
//! first error: a wrong expression gets type [`Ty::Error`], which fits
//! anywhere and silences follow-on reports.
//!
//! There is one `Checker`; its passes are spread over this folder, one
//! `impl Checker` block per concern:
//!
//! - `items`: type and function declarations, written types;
//! - `decorators`: `@ai`, `@uses`, `@test`;
//! - `effects`: the module-wide passes (recursive types, schema limits,
//!   `@ai(check = …)`, the `net` effect);
//! - `scope`: function bodies, scopes and bindings, settling `[]`/`None`;
//! - `stmt`, `expr`, `call`, `ctor`, `pattern`: blocks and statements,
//!   expressions, calls and builtins, constructors and record literals,
//!   `match` and patterns.
//!
//! This file holds the output types, the entry point, the `Checker` state
//! and the small helpers its files share.

mod call;
mod consts;
mod ctor;
mod decorators;
mod effects;
mod examples;
mod expr;
mod items;
mod lambda;
mod pattern;
mod scope;
mod stmt;

use std::collections::HashMap;

use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceMap, Span};
use crate::types::*;

pub(crate) use call::is_iso_date;
pub use consts::ConstInfo;
pub use decorators::{AI_ARGS, KNOWN_DECORATORS};
pub use examples::ExampleInfo;
pub use items::resolve_type;
use scope::{Local, Origin};

/// Builtin functions (docs/language.md, "Builtins").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Len,
    Str,
    Int,
    Float,
    Decimal,
    Print,
    Assert,
    AssertEq,
    /// `range(n)`, `range(a, b)`: the ints from `a` (default 0) up to, not including, `b`.
    Range,
    // Reading numbers from text (docs/language.md, "Reading numbers from
    // text"): each an `Option`, `None` for text that is not such a number.
    ParseInt,
    ParseFloat,
    ParseDecimal,
    // Lists (docs/language.md, "Lists").
    First,
    Last,
    Get,
    Contains,
    Sort,
    Reverse,
    Sum,
    Min,
    Max,
    // Text (docs/language.md, "Text").
    Join,
    Split,
    Trim,
    Lower,
    Upper,
    StartsWith,
    EndsWith,
    Fixed,
    /// `div(a, b, places)` / `div(a, b, places, mode)` of `Decimal`s.
    Div,
    /// `round(d, places)` / `round(d, places, mode)` of a `Decimal`.
    Round,
    // Functions as arguments (docs/language.md, "Functions as arguments"):
    // a list and a function of its element.
    Map,
    Filter,
    Find,
    Any,
    All,
    Count,
    SortBy,
    GroupBy,
    // Script input (docs/language.md, "Script input").
    /// `args()`: the command-line arguments (`@uses(env)`).
    Args,
    /// `env(name)`: an environment variable, an `Option` (`@uses(env)`).
    Env,
    /// `read_text(path)`: a file's text, a `Result` (`@uses(fs)`).
    ReadText,
    // Dates (docs/language.md, "Dates").
    /// `date("2026-12-31")`: a date literal, checked when compiling.
    Date,
    ParseDate,
    AddDays,
    DaysBetween,
    Year,
    Month,
    Day,
    /// `today()`: the current date, UTC (`@uses(clock)`).
    Today,
    // Maps (docs/language.md, "Maps"); `len`, `get` and `contains` take maps too.
    Insert,
    Remove,
    Keys,
    Values,
    // Media (docs/language.md, "Images, documents and audio").
    ImageFile,
    ImageUrl,
    DocumentFile,
    DocumentUrl,
    AudioFile,
    AudioUrl,
}

impl Builtin {
    pub const ALL: [(&'static str, Builtin); 60] = [
        ("len", Builtin::Len),
        ("str", Builtin::Str),
        ("int", Builtin::Int),
        ("float", Builtin::Float),
        ("decimal", Builtin::Decimal),
        ("print", Builtin::Print),
        ("assert", Builtin::Assert),
        ("assert_eq", Builtin::AssertEq),
        ("range", Builtin::Range),
        ("parse_int", Builtin::ParseInt),
        ("parse_float", Builtin::ParseFloat),
        ("parse_decimal", Builtin::ParseDecimal),
        ("first", Builtin::First),
        ("last", Builtin::Last),
        ("get", Builtin::Get),
        ("contains", Builtin::Contains),
        ("sort", Builtin::Sort),
        ("reverse", Builtin::Reverse),
        ("sum", Builtin::Sum),
        ("min", Builtin::Min),
        ("max", Builtin::Max),
        ("join", Builtin::Join),
        ("split", Builtin::Split),
        ("trim", Builtin::Trim),
        ("lower", Builtin::Lower),
        ("upper", Builtin::Upper),
        ("starts_with", Builtin::StartsWith),
        ("ends_with", Builtin::EndsWith),
        ("fixed", Builtin::Fixed),
        ("div", Builtin::Div),
        ("round", Builtin::Round),
        ("map", Builtin::Map),
        ("filter", Builtin::Filter),
        ("find", Builtin::Find),
        ("any", Builtin::Any),
        ("all", Builtin::All),
        ("count", Builtin::Count),
        ("sort_by", Builtin::SortBy),
        ("group_by", Builtin::GroupBy),
        ("args", Builtin::Args),
        ("env", Builtin::Env),
        ("read_text", Builtin::ReadText),
        ("date", Builtin::Date),
        ("parse_date", Builtin::ParseDate),
        ("add_days", Builtin::AddDays),
        ("days_between", Builtin::DaysBetween),
        ("year", Builtin::Year),
        ("month", Builtin::Month),
        ("day", Builtin::Day),
        ("today", Builtin::Today),
        ("insert", Builtin::Insert),
        ("remove", Builtin::Remove),
        ("keys", Builtin::Keys),
        ("values", Builtin::Values),
        ("image_file", Builtin::ImageFile),
        ("image_url", Builtin::ImageUrl),
        ("document_file", Builtin::DocumentFile),
        ("document_url", Builtin::DocumentUrl),
        ("audio_file", Builtin::AudioFile),
        ("audio_url", Builtin::AudioUrl),
    ];

    /// A media constructor's media type and whether it takes a URL (else a
    /// file path): `image_url` → `(Image, true)`.
    pub fn media(self) -> Option<(Media, bool)> {
        Some(match self {
            Builtin::ImageFile => (Media::Image, false),
            Builtin::ImageUrl => (Media::Image, true),
            Builtin::DocumentFile => (Media::Document, false),
            Builtin::DocumentUrl => (Media::Document, true),
            Builtin::AudioFile => (Media::Audio, false),
            Builtin::AudioUrl => (Media::Audio, true),
            _ => return None,
        })
    }

    /// What `parse_int`, `parse_float` and `parse_decimal` read a `str` into.
    pub fn parsed(self) -> Option<Ty> {
        Some(match self {
            Builtin::ParseInt => Ty::Int,
            Builtin::ParseFloat => Ty::Float,
            Builtin::ParseDecimal => Ty::Decimal,
            _ => return None,
        })
    }

    /// Whether the builtin's second argument is a function of the list's
    /// element (`map`, `filter`, …).
    pub fn takes_function(self) -> bool {
        matches!(
            self,
            Builtin::Map
                | Builtin::Filter
                | Builtin::Find
                | Builtin::Any
                | Builtin::All
                | Builtin::Count
                | Builtin::SortBy
                | Builtin::GroupBy
        )
    }

    /// The effect a builtin has, which its caller declares with `@uses`.
    pub fn effect(self) -> Option<Effect> {
        match self {
            Builtin::Args | Builtin::Env => Some(Effect::Env),
            Builtin::ReadText => Some(Effect::Fs),
            Builtin::Today => Some(Effect::Clock),
            _ => None,
        }
    }

    pub(crate) fn lookup(name: &str) -> Option<Builtin> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }

    /// The kinds of type the first argument may have, where the checker
    /// takes a fixed set (`int(x)`: an `int`, `float`, `bool` or `Decimal`);
    /// `None` where any type goes or the type is checked against one other
    /// type. docs/language.md and README state these sets; the doc-drift test
    /// (tests/tests/it/doc_drift.rs) reads them from here.
    pub fn accepts(self) -> Option<&'static [Kind]> {
        use Kind::*;
        Some(match self {
            Builtin::Len | Builtin::Contains => &[Str, List, Map],
            Builtin::Int => &[Int, Float, Bool, Decimal],
            Builtin::Float | Builtin::Fixed => &[Int, Float, Decimal],
            Builtin::Decimal => &[Str, Int, Decimal],
            Builtin::Get => &[List, Map],
            Builtin::First
            | Builtin::Last
            | Builtin::Sort
            | Builtin::Reverse
            | Builtin::Sum
            | Builtin::Min
            | Builtin::Max
            | Builtin::Map
            | Builtin::Filter
            | Builtin::Find
            | Builtin::Any
            | Builtin::All
            | Builtin::Count
            | Builtin::SortBy
            | Builtin::GroupBy => &[List],
            Builtin::Insert | Builtin::Remove | Builtin::Keys | Builtin::Values => &[Map],
            _ => return None,
        })
    }

    /// The kinds of element the list argument of `sum`, `sort`, `min` and
    /// `max` may hold.
    pub fn elements(self) -> Option<&'static [Kind]> {
        use Kind::*;
        Some(match self {
            Builtin::Sum => &[Int, Float, Decimal],
            Builtin::Sort | Builtin::Min | Builtin::Max | Builtin::SortBy => {
                &[Int, Float, Str, Bool, Decimal, Date]
            }
            _ => return None,
        })
    }
}

/// A type as the builtin table ([`Builtin::accepts`]) names it: a plain
/// type, or any list or map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Decimal,
    Str,
    Date,
    List,
    Map,
}

impl Kind {
    /// The name Vox writes (`list` and `map` without their arguments).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Decimal => "Decimal",
            Kind::Str => "str",
            Kind::Date => "Date",
            Kind::List => "list",
            Kind::Map => "map",
        }
    }

    /// Whether `t` is of this kind.
    pub fn holds(self, t: &Ty) -> bool {
        matches!(
            (self, t),
            (Kind::Int, Ty::Int)
                | (Kind::Float, Ty::Float)
                | (Kind::Bool, Ty::Bool)
                | (Kind::Decimal, Ty::Decimal)
                | (Kind::Str, Ty::Str)
                | (Kind::Date, Ty::Date)
                | (Kind::List, Ty::List(_))
                | (Kind::Map, Ty::Map(_))
        )
    }

    /// `t` is one of `kinds`.
    pub fn any_holds(kinds: &[Kind], t: &Ty) -> bool {
        kinds.iter().any(|k| k.holds(t))
    }

    /// `kinds` as a message says them: "an `int`, `float` or `Decimal`",
    /// "a `str`, a `list` or a `map`" (each with its article when a
    /// container is among them).
    pub fn prose(kinds: &[Kind]) -> String {
        let article = |k: Kind| if k == Kind::Int { "an" } else { "a" };
        let each = kinds.iter().any(|k| matches!(k, Kind::List | Kind::Map));
        let words: Vec<String> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                if each || i == 0 {
                    format!("{} `{}`", article(*k), k.name())
                } else {
                    format!("`{}`", k.name())
                }
            })
            .collect();
        or_list(&words)
    }

    /// `kinds` as the bare list after "a list of": "`int`, `float` or `Decimal`".
    pub fn element_prose(kinds: &[Kind]) -> String {
        let words: Vec<String> = kinds.iter().map(|k| format!("`{}`", k.name())).collect();
        or_list(&words)
    }

    /// `kinds` as a type alternative: "int | float | Decimal", "list[_] | map[str, _]".
    pub fn alternatives(kinds: &[Kind]) -> String {
        kinds
            .iter()
            .map(|k| match k {
                Kind::List => "list[_]",
                Kind::Map => "map[str, _]",
                k => k.name(),
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// "a, b or c".
fn or_list(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// An effect other than `net` that `@uses(…)` declares (docs/language.md,
/// "Script input"): a function using one, directly or through the functions
/// it calls, declares it; `fn main` and `@test` functions need not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reading files: `read_text`.
    Fs,
    /// The process's environment: `args`, `env`.
    Env,
    /// The current date: `today()`. Unlike the others, `@test` functions
    /// may not use it, so tests stay deterministic.
    Clock,
}

impl Effect {
    pub const ALL: [Effect; 3] = [Effect::Fs, Effect::Env, Effect::Clock];

    /// As `@uses(…)` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Fs => "fs",
            Effect::Env => "env",
            Effect::Clock => "clock",
        }
    }

    /// What a function with it does, for messages.
    pub fn doing(self) -> &'static str {
        match self {
            Effect::Fs => "reads files",
            Effect::Env => "reads its arguments or environment",
            Effect::Clock => "reads the clock (`today()`)",
        }
    }
}

/// What a call expression calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    Fn(usize),
    Builtin(Builtin),
}

/// What a constructor expression or pattern builds or matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctor {
    Some,
    None,
    Ok,
    Err,
    Variant(TypeId, usize),
}

/// `@ai(...)` settings of a function, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct AiConfig {
    pub max_iterations: u32,
    pub model: Option<String>,
    pub temperature: Option<f64>,
    /// `max_tokens = N`: the completion limit of the function's requests.
    pub max_tokens: Option<u32>,
    /// `fallback = ["provider:model", …]`; `Some(vec![])` means none.
    pub fallback: Option<Vec<String>>,
    /// `check = f`: a pure function taking the return type and returning
    /// `list[str]`, the problems it finds in the value (docs/language.md,
    /// "Checks"). Validated once every function is known.
    pub check: Option<AiCheck>,
    /// `tools = [f, …]`: the functions the model may call (docs/language.md,
    /// "Tools"); validated once every function is known.
    pub tools: Vec<AiCheck>,
    /// `max_steps = N`: the model requests a call makes at most.
    pub max_steps: Option<u32>,
}

/// The function named by `@ai(check = f)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AiCheck {
    pub name: String,
    /// The name in the decorator.
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct FnInfo {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    /// Declares `@uses(net)` (or needs it): becomes `async` and fallible.
    pub net: bool,
    /// The other effects `@uses(…)` declares.
    pub uses: Vec<Effect>,
    pub ai: Option<AiConfig>,
    pub test: bool,
    /// A `@rust` tool: declared here, implemented by the crate.
    pub rust: bool,
    /// Index into `module.items`.
    pub item: usize,
}

impl ModuleInfo {
    /// The parameter of `fns[fi]` holding the conversation so far: the
    /// first of type `list[Message]`, the builtin `Message`.
    pub fn history_param(&self, fi: usize) -> Option<&str> {
        let message = Ty::List(Box::new(Ty::Named(self.chat_message?)));
        self.fns
            .get(fi)?
            .params
            .iter()
            .find(|(_, t)| *t == message)
            .map(|(n, _)| n.as_str())
    }
}

/// Everything later stages need to know about a checked module.
#[derive(Debug, Clone, Default)]
pub struct ModuleInfo {
    pub types: TypeTable,
    pub fns: Vec<FnInfo>,
    /// Type of every expression, indexed by [`ExprId`].
    pub expr_types: Vec<Ty>,
    pub callees: HashMap<ExprId, Callee>,
    pub ctors: HashMap<ExprId, Ctor>,
    /// `TypeDecl` item index → its [`TypeId`] (duplicates have none).
    pub type_items: HashMap<usize, TypeId>,
    /// The builtin `Message`, when the module uses it (docs/language.md,
    /// "Conversations").
    pub chat_message: Option<TypeId>,
    /// The worked examples, in the order written.
    pub examples: Vec<ExampleInfo>,
    /// Each function listed as a tool, and the strict schema of its
    /// arguments (an object of its parameters).
    pub tool_schemas: Vec<(usize, String)>,
    /// The strict schema of every `@ai` return type, derived once while
    /// checking its limits and reused by emission.
    pub output_schemas: Vec<(Ty, crate::schema::OutputSchema)>,
    /// `file:line:col` of every expression that can fail at run time
    /// (arithmetic, unary `-`, conversions), for the error message the
    /// emitted code gives (docs/language.md, "Numbers").
    pub sites: HashMap<ExprId, String>,
    /// Per function (indexed like `fns`): (callee fn index, call span) of
    /// the calls to user functions in its body.
    pub calls: Vec<Vec<(usize, Span)>>,
    /// Every use of a local (a `Var` expression) → the span of the binding
    /// it resolves to (parameter, `let`, `for` or pattern binding). For
    /// editor queries (`crate::ide`).
    pub locals: HashMap<ExprId, Span>,
    /// Every binding a body declares: its name's span and its type, in
    /// declaration order. For editor queries (`crate::ide`).
    pub bindings: Vec<(Span, Ty)>,
    /// The module's constants (`const NAME = …`), in declaration order.
    pub consts: Vec<ConstInfo>,
    /// Every use of a constant (a bare `NAME` expression) → its index in `consts`.
    pub const_refs: HashMap<ExprId, usize>,
    /// Per function (indexed like `fns`): the effectful builtins its body
    /// calls (`read_text`, `args`, …) and where.
    pub effect_uses: Vec<Vec<(Effect, Span)>>,
}

impl ModuleInfo {
    pub fn expr_type(&self, id: ExprId) -> &Ty {
        self.expr_types.get(id.0 as usize).unwrap_or(&Ty::Error)
    }

    pub fn fn_named(&self, name: &str) -> Option<&FnInfo> {
        self.fns.iter().find(|f| f.name == name)
    }
}

const RESERVED_CTORS: [&str; 4] = ["Some", "None", "Ok", "Error"];

/// Checks `module`, appending diagnostics.
pub fn check_module(
    module: &Module,
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> ModuleInfo {
    let mut c = Checker {
        module,
        sources,
        diags,
        info: ModuleInfo {
            expr_types: vec![Ty::Error; module.expr_count as usize],
            ..ModuleInfo::default()
        },
        type_index: HashMap::new(),
        variant_index: HashMap::new(),
        fn_index: HashMap::new(),
        scopes: Vec::new(),
        current: None,
        lints: true,
        pat_origin: None,
        var_origins: Vec::new(),
        holes: false,
        open_uses: Vec::new(),
        loops: 0,
        lambdas: Vec::new(),
        lambda_calls: Vec::new(),
        const_index: HashMap::new(),
        const_state: Vec::new(),
        in_const: false,
        chat_role: None,
    };
    c.collect_types();
    c.collect_consts();
    c.collect_fns();
    c.check_recursion();
    c.check_media_outputs();
    c.check_consts();
    for i in 0..c.info.fns.len() {
        c.check_fn_body(i);
    }
    c.check_effects();
    c.check_ai_checks();
    c.check_ai_tools();
    c.check_examples();
    c.check_schema_limits();
    c.info
}

struct Checker<'a> {
    /// The builtin `Role`, when the module uses `Message` or `Role`.
    chat_role: Option<TypeId>,
    module: &'a Module,
    sources: &'a SourceMap,
    diags: &'a mut Vec<Diagnostic>,
    info: ModuleInfo,
    type_index: HashMap<String, (TypeId, Span)>,
    variant_index: HashMap<String, (TypeId, usize, Span)>,
    fn_index: HashMap<String, usize>,
    scopes: Vec<Vec<(String, Local)>>,
    /// Index of the function being checked.
    current: Option<usize>,
    /// Lints that assume a complete body (off when the body had syntax errors).
    lints: bool,
    /// Where the value matched by the pattern being checked comes from.
    pat_origin: Option<Origin>,
    /// In the body being checked: each variable use and where its binding's
    /// value comes from (to settle `[]`/`None` types, see `scope::settle_fn`).
    var_origins: Vec<(ExprId, Origin)>,
    /// In the body being checked: some expression's type has a hole
    /// (`[]`, `None`), so the body needs settling (`scope::settle_fn`).
    holes: bool,
    /// Values iterated or measured while their type was still a hole:
    /// after settling, each must have a type (`vox/type/needs-annotation`).
    open_uses: Vec<(ExprId, Span, &'static str)>,
    /// How many `for`/`while` loops enclose the statement being checked
    /// (inside a lambda: of the lambda's body).
    loops: usize,
    /// The lambdas enclosing the expression being checked, innermost last.
    lambdas: Vec<LambdaFrame>,
    /// Calls of user functions made inside a lambda, and functions passed
    /// by name: (callee, span). None may use the network, which is known
    /// only once every body is checked (`check_effects`).
    lambda_calls: Vec<(usize, Span)>,
    /// Constant name → index in `info.consts`.
    const_index: HashMap<String, usize>,
    const_state: Vec<consts::ConstState>,
    /// Checking a constant's value.
    in_const: bool,
}

/// A lambda being checked.
struct LambdaFrame {
    /// Its result type: what the builtin needs (`bool` for `filter`), else
    /// the first `return`'s value's, once one is seen.
    ret: Option<Ty>,
    /// `self.scopes` index of its parameters' scope: bindings in scopes
    /// below it are captured.
    scope_base: usize,
}

/// How an expression's value is used.
#[derive(Clone, Copy)]
enum Want<'t> {
    /// Statement position: the value is discarded.
    Nothing,
    /// A value of some type is needed.
    Any,
    /// A value of this type is needed.
    Type(&'t Ty),
}

impl Want<'_> {
    fn ty(&self) -> Option<&Ty> {
        match self {
            Want::Type(t) => Some(t),
            _ => None,
        }
    }
}

impl<'a> Checker<'a> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// A value whose type is still a hole (an element of an untyped `[]`,
    /// the content of an untyped `None`) is taken apart at `span`: matched,
    /// iterated, measured or read a field of. Whatever expression form built
    /// the empty value (`[]`, `[] + []`, an `if` or `match` of empties, a
    /// binding of one), nothing later may decide the type once the value is
    /// inspected, so it is an error here (docs/language.md, "Empty lists and
    /// `None`").
    fn open_type(&mut self, span: Span, what: &str) {
        self.err(
            Diagnostic::error(
                crate::diagnostic::Code::OpenType,
                span,
                format!("the type of this value is not known where it is {what}"),
            )
            .label("it comes from an empty list, an empty map or `None` that nothing gives a type")
            .hint("declare the type where the empty value is bound, e.g. `let xs: list[int] = []` or `let m: map[str, int] = [:]`, or pass it where a typed value is expected first"),
        );
    }

    fn show(&self, t: &Ty) -> String {
        t.display(&self.info.types)
    }

    fn source_text(&self, span: Span) -> &str {
        self.sources
            .get(span.file)
            .text
            .get(span.range())
            .unwrap_or("")
    }
}

/// `d` with the suggestion for a misspelt name: the hint "did you mean
/// `s`?" and the fix that writes `s` at `span`.
fn suggest(d: Diagnostic, s: &str, span: Span) -> Diagnostic {
    d.hint(format!("did you mean `{s}`?"))
        .fix(format!("replace with `{s}`"), span, s)
}

/// The whitespace before `span` on its line.
fn line_indent(sources: &SourceMap, span: Span) -> String {
    let file = sources.get(span.file);
    let lc = file.line_col(span.start as usize);
    let start = file.line_start(lc.line);
    file.text
        .get(start..span.start as usize)
        .map(|s| s.chars().take_while(|c| c.is_whitespace()).collect())
        .unwrap_or_default()
}
