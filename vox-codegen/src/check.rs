//! Checking: names, types, effects and decorators of one module.
//!
//! Input is the parsed [`ast::Module`]; output is [`ModuleInfo`] (resolved
//! types, function signatures, the type of every expression, what every call
//! and constructor refers to) plus diagnostics. Checking never stops at the
//! first error: a wrong expression gets type [`Ty::Error`], which fits
//! anywhere and silences follow-on reports.

use std::collections::HashMap;

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::{SourceMap, Span};
use crate::types::*;

/// Builtin functions (SPEC §3).
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
}

impl Builtin {
    pub const ALL: [(&'static str, Builtin); 8] = [
        ("len", Builtin::Len),
        ("str", Builtin::Str),
        ("int", Builtin::Int),
        ("float", Builtin::Float),
        ("decimal", Builtin::Decimal),
        ("print", Builtin::Print),
        ("assert", Builtin::Assert),
        ("assert_eq", Builtin::AssertEq),
    ];

    fn lookup(name: &str) -> Option<Builtin> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
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
    pub ai: Option<AiConfig>,
    pub test: bool,
    /// Index into `module.items`.
    pub item: usize,
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
    /// The strict schema of every `@ai` return type, derived once while
    /// checking its limits and reused by emission.
    pub output_schemas: Vec<(Ty, crate::schema::OutputSchema)>,
    /// `file:line:col` of every expression that can fail at run time
    /// (arithmetic, unary `-`, conversions), for the error message the
    /// emitted code gives (docs/language.md, "Numbers").
    pub sites: HashMap<ExprId, String>,
}

impl ModuleInfo {
    pub fn expr_type(&self, id: ExprId) -> &Ty {
        self.expr_types.get(id.0 as usize).unwrap_or(&Ty::Error)
    }

    pub fn fn_named(&self, name: &str) -> Option<&FnInfo> {
        self.fns.iter().find(|f| f.name == name)
    }
}

const BUILTIN_TYPES: [&str; 10] = [
    "int", "float", "bool", "str", "Unit", "list", "List", "Option", "Result", "Decimal",
];
const RESERVED_CTORS: [&str; 4] = ["Some", "None", "Ok", "Error"];
const KNOWN_DECORATORS: [&str; 3] = ["ai", "uses", "test"];
const AI_ARGS: [&str; 7] = [
    "structured_output",
    "max_iterations",
    "model",
    "temperature",
    "max_tokens",
    "fallback",
    "check",
];
const MAX_ITERATIONS_LIMIT: i64 = 100;
/// The most `max_tokens` may be (no model answers with more).
const MAX_TOKENS_LIMIT: i64 = 1_000_000;
/// The providers a `provider:` model prefix may name (vox-runtime's
/// `Provider` names; docs/runtime.md, "Providers").
const PROVIDERS: [&str; 7] = [
    "openai",
    "openrouter",
    "anthropic",
    "gemini",
    "ollama",
    "compatible",
    "fixture",
];

/// The provider `prefix` (the text before a model's first `:`) looks like a
/// misspelling of: the same name in another case, or one edit away (two
/// for names of 8 letters or more). Prefixes with digits or dots are model
/// names of their own (`llama3.2:3b`), never misspelt providers.
fn misspelt_provider(prefix: &str) -> Option<&'static str> {
    if prefix.len() < 3 || !prefix.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-') {
        return None;
    }
    let lower = prefix.to_ascii_lowercase();
    PROVIDERS.into_iter().find(|p| {
        let allowed = if p.len() >= 8 { 2 } else { 1 };
        lower == *p || edit_distance(&lower, p) <= allowed
    })
}

/// Optimal string alignment distance (Levenshtein plus transpositions).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// `text` as a Vox string literal.
fn vox_string_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `text` is a `Decimal` as Vox writes one: an optional `-`, digits,
/// and optionally `.` and more digits (docs/language.md, "Decimal"; the same
/// rule as `vox_runtime::decimal::is_decimal`).
fn is_decimal_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(int) && frac.is_none_or(all_digits)
}

/// Resolves a written type against a checked module's types (no diagnostics:
/// the error says what is wrong).
pub fn resolve_type(t: &TypeExpr, types: &TypeTable) -> Result<Ty, String> {
    let arg = |i: usize| -> Result<Ty, String> {
        match (t.args.len(), t.args.get(i)) {
            (1, Some(a)) => resolve_type(a, types),
            (n, _) => Err(format!(
                "`{}` takes 1 type argument, found {n}",
                t.name.name
            )),
        }
    };
    let plain = |ty: Ty| -> Result<Ty, String> {
        if t.args.is_empty() {
            Ok(ty)
        } else {
            Err(format!("`{}` takes no type arguments", t.name.name))
        }
    };
    match t.name.name.as_str() {
        "int" => plain(Ty::Int),
        "float" => plain(Ty::Float),
        "bool" => plain(Ty::Bool),
        "str" => plain(Ty::Str),
        "Unit" => plain(Ty::Unit),
        "Decimal" => plain(Ty::Decimal),
        "list" | "List" => Ok(Ty::List(Box::new(arg(0)?))),
        "Option" => Ok(Ty::Option(Box::new(arg(0)?))),
        "Result" => Ok(Ty::Result(Box::new(arg(0)?))),
        name => match types.find(name) {
            Some(id) => plain(Ty::Named(id)),
            None => {
                let names: Vec<&str> = types.defs.iter().map(|d| d.name.as_str()).collect();
                Err(match did_you_mean(name, names) {
                    Some(s) => format!("unknown type `{name}`; did you mean `{s}`?"),
                    None => format!("unknown type `{name}`"),
                })
            }
        },
    }
}

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
        calls: Vec::new(),
        lints: true,
        pat_origin: None,
        var_origins: Vec::new(),
    };
    c.collect_types();
    c.collect_fns();
    c.check_recursion();
    for i in 0..c.info.fns.len() {
        c.check_fn_body(i);
    }
    c.check_effects();
    c.check_ai_checks();
    c.check_schema_limits();
    c.info
}

struct Local {
    ty: Ty,
    mutable: bool,
    span: Span,
    used: bool,
    /// Report when never read.
    lint_unused: bool,
    /// Where its value comes from, when that can leave holes in its type.
    origin: Option<Origin>,
}

struct Checker<'a> {
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
    /// Per function: (callee fn index, call span) of calls to user functions.
    calls: Vec<Vec<(usize, Span)>>,
    /// Lints that assume a complete body (off when the body had syntax errors).
    lints: bool,
    /// Where the value matched by the pattern being checked comes from.
    pat_origin: Option<Origin>,
    /// In the body being checked: each variable use and where its binding's
    /// value comes from (to settle `[]`/`None` types, see [`settle_fn`]).
    var_origins: Vec<(ExprId, Origin)>,
}

/// Where a binding's value comes from: the value of `expr`, unwrapped
/// through `wrap` (`for x in xs`: the elements of `xs`; `Some(v)` in a
/// pattern: the `Option`'s content).
#[derive(Clone, Debug)]
struct Origin {
    expr: ExprId,
    wrap: Vec<Wrap>,
}

#[derive(Clone, Copy, Debug)]
enum Wrap {
    List,
    Option,
    Result,
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

    // ---- declarations -------------------------------------------------

    fn collect_types(&mut self) {
        let module = self.module;
        // Names first, so fields can refer to types declared later.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            if let Some(dup) = self.duplicate_type_name(&t.name) {
                self.err(dup);
                continue;
            }
            let id = TypeId(self.info.types.defs.len() as u32);
            self.type_index
                .insert(t.name.name.clone(), (id, t.name.span));
            self.info.type_items.insert(idx, id);
            self.info.types.defs.push(TypeDef {
                name: t.name.name.clone(),
                docs: t.docs.clone(),
                is_pub: t.is_pub,
                kind: TypeDefKind::Record(Vec::new()),
                span: t.name.span,
            });
            for d in &t.decorators {
                self.err(
                    Diagnostic::error(
                        Code::MisplacedDecorator,
                        d.span,
                        format!("`@{}` cannot be applied to a type", d.name.name),
                    )
                    .hint("decorators apply to functions"),
                );
            }
        }
        // Variants.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            let (Some(&id), TypeDeclKind::Sum(vs)) = (self.info.type_items.get(&idx), &t.kind)
            else {
                continue;
            };
            for (vi, v) in vs.iter().enumerate() {
                let prev = self
                    .variant_index
                    .get(&v.name.name)
                    .map(|p| p.2)
                    .or_else(|| self.type_index.get(&v.name.name).map(|p| p.1));
                if RESERVED_CTORS.contains(&v.name.name.as_str())
                    || BUILTIN_TYPES.contains(&v.name.name.as_str())
                {
                    self.err(Diagnostic::error(
                        Code::Duplicate,
                        v.name.span,
                        format!(
                            "`{}` is a builtin name and cannot be a variant",
                            v.name.name
                        ),
                    ));
                } else if let Some(prev) = prev {
                    self.err(
                        Diagnostic::error(
                            Code::Duplicate,
                            v.name.span,
                            format!("the name `{}` is defined more than once", v.name.name),
                        )
                        .label("redefined here")
                        .related(prev, "first defined here")
                        .hint(
                            "variant names are visible across the whole module and must be unique",
                        ),
                    );
                } else {
                    self.variant_index
                        .insert(v.name.name.clone(), (id, vi, v.name.span));
                }
            }
        }
        // Fields.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            let kind = match &t.kind {
                TypeDeclKind::Record(fields) => TypeDefKind::Record(self.resolve_fields(fields)),
                TypeDeclKind::Sum(vs) => TypeDefKind::Sum({
                    self.reserved_kind_fields(vs);
                    vs.iter()
                        .map(|v| VariantDef {
                            name: v.name.name.clone(),
                            docs: v.docs.clone(),
                            fields: self.resolve_fields(&v.fields),
                            span: v.name.span,
                        })
                        .collect()
                }),
            };
            if let Some(&id) = self.info.type_items.get(&idx) {
                self.info.types.defs[id.0 as usize].kind = kind;
            }
        }
    }

    /// Variants are tagged by a `kind` property in JSON (serde's internal
    /// tag), so no variant field may be called `kind`.
    fn reserved_kind_fields(&mut self, variants: &[Variant]) {
        for v in variants {
            for f in v.fields.iter().filter(|f| f.name.name == "kind") {
                self.err(
                    Diagnostic::error(
                        Code::DuplicateField,
                        f.name.span,
                        format!("variant `{}` cannot have a field named `kind`", v.name.name),
                    )
                    .label("`kind` carries the variant's name in JSON")
                    .hint("rename the field, e.g. `category`")
                    .fix("rename to `kind_`", f.name.span, "kind_"),
                );
            }
        }
    }

    fn duplicate_type_name(&self, name: &Ident) -> Option<Diagnostic> {
        if BUILTIN_TYPES.contains(&name.name.as_str())
            || RESERVED_CTORS.contains(&name.name.as_str())
        {
            return Some(Diagnostic::error(
                Code::Duplicate,
                name.span,
                format!("`{}` is a builtin type name", name.name),
            ));
        }
        let (_, prev) = self.type_index.get(&name.name)?;
        Some(
            Diagnostic::error(
                Code::Duplicate,
                name.span,
                format!("the type `{}` is defined more than once", name.name),
            )
            .label("redefined here")
            .related(*prev, "first defined here"),
        )
    }

    fn resolve_fields(&mut self, fields: &[Field]) -> Vec<FieldDef> {
        let mut out: Vec<FieldDef> = Vec::with_capacity(fields.len());
        for f in fields {
            let ty = self.resolve_type(&f.ty);
            if let Some(prev) = out.iter().find(|p| p.name == f.name.name) {
                let prev = prev.span;
                self.err(
                    Diagnostic::error(
                        Code::DuplicateField,
                        f.name.span,
                        format!("field `{}` is declared twice", f.name.name),
                    )
                    .related(prev, "first declared here"),
                );
                continue;
            }
            out.push(FieldDef {
                name: f.name.name.clone(),
                docs: f.docs.clone(),
                ty,
                span: f.name.span,
            });
        }
        out
    }

    fn resolve_type(&mut self, t: &TypeExpr) -> Ty {
        let name = t.name.name.as_str();
        let arity = |c: &mut Self, n: usize| -> bool {
            if t.args.len() == n {
                return true;
            }
            let msg = if n == 0 {
                format!("`{name}` takes no type arguments")
            } else {
                format!(
                    "`{name}` takes {n} type argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    t.args.len()
                )
            };
            let mut d = Diagnostic::error(Code::GenericArity, t.span, msg);
            if name == "Result" {
                d = d.hint("`Result[T]` always has `str` as its error type");
            }
            c.err(d);
            false
        };
        let inner = |c: &mut Self| -> Ty {
            match t.args.first() {
                Some(a) => c.resolve_type(a),
                None => Ty::Error,
            }
        };
        match name {
            "int" | "float" | "bool" | "str" | "Unit" | "Decimal" => {
                if !arity(self, 0) {
                    return Ty::Error;
                }
                match name {
                    "int" => Ty::Int,
                    "float" => Ty::Float,
                    "bool" => Ty::Bool,
                    "str" => Ty::Str,
                    "Unit" => Ty::Unit,
                    _ => Ty::Decimal,
                }
            }
            "list" | "List" | "Option" | "Result" => {
                let ok = arity(self, 1);
                let inner = inner(self);
                if !ok {
                    return Ty::Error;
                }
                match name {
                    "Option" => Ty::Option(Box::new(inner)),
                    "Result" => Ty::Result(Box::new(inner)),
                    _ => Ty::List(Box::new(inner)),
                }
            }
            _ => {
                if let Some(&(id, _)) = self.type_index.get(name) {
                    if !arity(self, 0) {
                        return Ty::Error;
                    }
                    return Ty::Named(id);
                }
                for a in &t.args {
                    self.resolve_type(a);
                }
                let mut d = Diagnostic::error(
                    Code::UnknownType,
                    t.name.span,
                    format!("unknown type `{name}`"),
                )
                .label("not a declared type");
                let suggestion = rust_type_alias(name).map(str::to_string).or_else(|| {
                    let names: Vec<&str> = BUILTIN_TYPES
                        .iter()
                        .copied()
                        .chain(self.type_index.keys().map(String::as_str))
                        .collect();
                    did_you_mean(name, names).map(str::to_string)
                });
                if let Some(s) = suggestion {
                    d = d.hint(format!("did you mean `{s}`?")).fix(
                        format!("replace with `{s}`"),
                        t.name.span,
                        s,
                    );
                } else if self.variant_index.contains_key(name) {
                    d = d.hint(format!(
                        "`{name}` is a variant, not a type; use the sum type it belongs to"
                    ));
                }
                self.err(d);
                Ty::Error
            }
        }
    }

    fn collect_fns(&mut self) {
        let module = self.module;
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Fn(f) = item else { continue };
            let dup = if Builtin::lookup(&f.name.name).is_some() {
                Some(Diagnostic::error(
                    Code::Duplicate,
                    f.name.span,
                    format!(
                        "`{}` is a builtin function and cannot be redefined",
                        f.name.name
                    ),
                ))
            } else {
                self.fn_index.get(&f.name.name).map(|&prev| {
                    let prev_span = fn_decl(module, self.info.fns[prev].item)
                        .map_or(f.name.span, |p| p.name.span);
                    Diagnostic::error(
                        Code::Duplicate,
                        f.name.span,
                        format!("the function `{}` is defined more than once", f.name.name),
                    )
                    .label("redefined here")
                    .related(prev_span, "first defined here")
                })
            };
            let mut params: Vec<(String, Ty)> = Vec::new();
            for p in &f.params {
                let ty = self.resolve_type(&p.ty);
                if let Some(prev) = f
                    .params
                    .iter()
                    .take_while(|q| !std::ptr::eq(*q, p))
                    .find(|q| q.name.name == p.name.name)
                {
                    self.err(
                        Diagnostic::error(
                            Code::Duplicate,
                            p.name.span,
                            format!("parameter `{}` is declared twice", p.name.name),
                        )
                        .related(prev.name.span, "first declared here"),
                    );
                }
                params.push((p.name.name.clone(), ty));
            }
            let ret = f.ret.as_ref().map_or(Ty::Unit, |t| self.resolve_type(t));
            let (ai, test, declared_net) = self.check_decorators(f, &ret);
            if f.name.name == "main" && (!f.params.is_empty() || !matches!(ret, Ty::Unit)) {
                self.err(
                    Diagnostic::error(
                        Code::MainSignature,
                        f.name.span,
                        "`fn main` takes no parameters and returns nothing",
                    )
                    .hint("write `fn main() { … }`; read inputs inside it"),
                );
            }
            let info = FnInfo {
                name: f.name.name.clone(),
                params,
                ret,
                net: declared_net,
                ai,
                test,
                item: idx,
            };
            if let Some(d) = dup {
                self.err(d);
                // Checked but not callable by name.
                self.info.fns.push(info);
            } else {
                self.fn_index
                    .insert(f.name.name.clone(), self.info.fns.len());
                self.info.fns.push(info);
            }
            self.calls.push(Vec::new());
        }
        // In a library crate `fn main` is emitted as `pub fn vox_main`
        // (README, "The language"), so a user `vox_main` would collide.
        if let (Some(_), Some(&vm)) = (self.fn_index.get("main"), self.fn_index.get("vox_main")) {
            if let Some(d) = fn_decl(module, self.info.fns[vm].item) {
                self.err(
                    Diagnostic::error(
                        Code::ReservedName,
                        d.name.span,
                        "`vox_main` is reserved in a module with `fn main`",
                    )
                    .label("reserved name")
                    .hint("in a library crate `fn main` becomes the Rust function `vox_main`; rename this function"),
                );
            }
        }
    }

    /// Validates a function's decorators; returns (@ai config, is @test, declares net).
    fn check_decorators(&mut self, f: &FnDecl, ret: &Ty) -> (Option<AiConfig>, bool, bool) {
        let mut ai = None;
        let mut test = false;
        let mut net = false;
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for d in &f.decorators {
            let name = d.name.name.as_str();
            if let Some((_, prev)) = seen.iter().find(|(n, _)| *n == name) {
                self.err(
                    Diagnostic::error(
                        Code::MisplacedDecorator,
                        d.span,
                        format!("`@{name}` is repeated"),
                    )
                    .related(*prev, "first here"),
                );
                continue;
            }
            seen.push((name, d.span));
            match name {
                "ai" => ai = Some(self.check_ai(f, d, ret)),
                "test" => {
                    test = true;
                    if let Some(a) = d.args.first() {
                        self.err(Diagnostic::error(
                            Code::MisplacedDecorator,
                            a.span,
                            "`@test` takes no arguments",
                        ));
                    }
                    let is_ai = f.decorator("ai").is_some();
                    if !is_ai && (!f.params.is_empty() || !matches!(ret, Ty::Unit | Ty::Error)) {
                        self.err(
                            Diagnostic::error(
                                Code::TestSignature,
                                f.name.span,
                                "`@test` functions take no parameters and return nothing",
                            )
                            .hint(
                                "check results with `assert(…)` or `assert_eq(…)` inside the test",
                            ),
                        );
                    }
                }
                "uses" => {
                    if d.args.is_empty() {
                        self.err(
                            Diagnostic::error(
                                Code::MalformedEffects,
                                d.span,
                                "`@uses` needs at least one effect",
                            )
                            .hint("write `@uses(net)`"),
                        );
                    }
                    for a in &d.args {
                        if a.value.is_some() {
                            self.err(
                                Diagnostic::error(
                                    Code::MalformedEffects,
                                    a.span,
                                    "effects are bare names",
                                )
                                .hint("write `@uses(net)`"),
                            );
                        } else if a.name.name == "net" {
                            net = true;
                        } else {
                            let mut w = Diagnostic::warning(
                                Code::UnknownEffect,
                                a.name.span,
                                format!("unknown effect `{}`", a.name.name),
                            )
                            .hint("the known effect is `net`");
                            if did_you_mean(&a.name.name, ["net"]).is_some() {
                                w = w.fix("replace with `net`", a.name.span, "net");
                            }
                            self.err(w);
                        }
                    }
                }
                _ => {
                    let mut e = Diagnostic::error(
                        Code::UnknownDecorator,
                        d.name.span,
                        format!("unknown decorator `@{name}`"),
                    )
                    .hint("the decorators are `@ai(…)`, `@uses(…)` and `@test`");
                    if let Some(s) = did_you_mean(name, KNOWN_DECORATORS) {
                        e = e.fix(format!("replace with `@{s}`"), d.name.span, s);
                    }
                    self.err(e);
                }
            }
        }
        if ai.is_some() && test {
            if let Some(d) = f.decorator("test") {
                self.err(
                    Diagnostic::error(
                        Code::MisplacedDecorator,
                        d.span,
                        "an `@ai` function cannot also be an `@test`",
                    )
                    .hint("write a separate `@test` function that calls the `@ai` function"),
                );
            }
        }
        (ai, test, net)
    }

    fn check_ai(&mut self, f: &FnDecl, d: &Decorator, ret: &Ty) -> AiConfig {
        let mut cfg = AiConfig {
            max_iterations: 1,
            model: None,
            temperature: None,
            max_tokens: None,
            fallback: None,
            check: None,
        };
        if f.ret.is_none() || matches!(ret, Ty::Unit) {
            self.err(
                Diagnostic::error(Code::AiMissingReturnType, f.name.span, format!("`@ai` function `{}` has no return type", f.name.name))
                    .hint("declare what the model should produce, e.g. `fn summarize(text: str) to Summary`"),
            );
        }
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for a in &d.args {
            let name = a.name.name.as_str();
            if !AI_ARGS.contains(&name) {
                let mut e = Diagnostic::error(
                    Code::AiUnknownArgument,
                    a.name.span,
                    format!("unknown `@ai` argument `{name}`"),
                )
                .hint(
                    "`@ai` takes `structured_output`, `max_iterations`, `model`, `temperature`, \
                     `max_tokens`, `fallback` and `check`",
                );
                if let Some(s) = did_you_mean(name, AI_ARGS) {
                    e = e.fix(format!("replace with `{s}`"), a.name.span, s);
                }
                self.err(e);
                continue;
            }
            if let Some((_, prev)) = seen.iter().find(|(n, _)| *n == name) {
                self.err(
                    Diagnostic::error(
                        Code::AiDuplicateArgument,
                        a.span,
                        format!("`{name}` is given twice"),
                    )
                    .related(*prev, "first given here"),
                );
                continue;
            }
            seen.push((name, a.span));
            if a.value
                .as_ref()
                .is_some_and(|v| matches!(v.kind, DecoratorValueKind::Invalid))
            {
                continue;
            }
            let Some(value) = &a.value else {
                self.err(
                    Diagnostic::error(
                        Code::AiInvalidValue,
                        a.span,
                        format!("`{name}` needs a value"),
                    )
                    .hint(format!("write `{name} = …`")),
                );
                continue;
            };
            let wrong_kind = |c: &mut Self, want: &str| {
                c.err(Diagnostic::error(
                    Code::AiInvalidValue,
                    value.span,
                    format!("`{name}` must be {want}"),
                ));
            };
            match (name, &value.kind) {
                ("structured_output", DecoratorValueKind::Type(t)) => {
                    let so = self.resolve_type(t);
                    if !so.is_error() && !ret.is_error() && so != *ret {
                        let ret_text = f
                            .ret
                            .as_ref()
                            .map(|r| self.source_text(r.span).to_string())
                            .unwrap_or_default();
                        let mut e = Diagnostic::error(
                            Code::StructuredOutputMismatch,
                            value.span,
                            "`structured_output` must be the function's return type",
                        )
                        .types(self.show(ret), self.show(&so))
                        .label(format!("the function returns `{}`", self.show(ret)));
                        if !ret_text.is_empty() && f.ret.is_some() {
                            e = e.fix(format!("replace with `{ret_text}`"), value.span, ret_text);
                        }
                        self.err(e);
                    }
                }
                ("structured_output", _) => {
                    wrong_kind(self, "a type, e.g. `structured_output = Invoice`")
                }
                ("max_iterations", DecoratorValueKind::Int(n)) => {
                    if (1..=MAX_ITERATIONS_LIMIT).contains(n) {
                        cfg.max_iterations = *n as u32;
                    } else {
                        self.err(
                            Diagnostic::error(Code::AiInvalidValue, value.span, format!("`max_iterations` must be between 1 and {MAX_ITERATIONS_LIMIT}, found {n}"))
                                .hint("it counts attempts: 1 means no re-prompting"),
                        );
                    }
                }
                ("max_iterations", _) => wrong_kind(self, "an integer of at least 1"),
                ("model", DecoratorValueKind::Str(s)) => {
                    if s.trim().is_empty() {
                        wrong_kind(self, "a non-empty string");
                    } else if self.check_model_ref("model", s, value.span, false) {
                        cfg.model = Some(s.clone());
                    }
                }
                ("max_tokens", DecoratorValueKind::Int(n)) => {
                    if (1..=MAX_TOKENS_LIMIT).contains(n) {
                        cfg.max_tokens = Some(*n as u32);
                    } else {
                        self.err(Diagnostic::error(
                            Code::AiInvalidValue,
                            value.span,
                            format!(
                                "`max_tokens` must be between 1 and {MAX_TOKENS_LIMIT}, found {n}"
                            ),
                        ));
                    }
                }
                ("max_tokens", _) => wrong_kind(self, "an integer of at least 1"),
                ("fallback", DecoratorValueKind::List(items)) => {
                    let mut models = Vec::new();
                    for item in items {
                        match &item.kind {
                            DecoratorValueKind::Str(s) => {
                                if self.check_model_ref("fallback", s, item.span, true) {
                                    models.push(s.trim().to_owned());
                                }
                            }
                            DecoratorValueKind::Invalid => {}
                            _ => self.err(Diagnostic::error(
                                Code::AiInvalidValue,
                                item.span,
                                "each fallback must be a string `\"provider:model\"`",
                            )),
                        }
                    }
                    cfg.fallback = Some(models);
                }
                ("fallback", _) => wrong_kind(
                    self,
                    "a list of `\"provider:model\"` strings, e.g. `fallback = [\"openai:gpt-4o-mini\"]`",
                ),
                ("model", _) => wrong_kind(self, "a string, e.g. `model = \"gpt-4o-mini\"`"),
                ("check", DecoratorValueKind::Type(t)) if t.args.is_empty() => {
                    cfg.check = Some(AiCheck {
                        name: t.name.name.clone(),
                        span: value.span,
                    });
                }
                ("check", _) => wrong_kind(
                    self,
                    "the name of a function, e.g. `check = invoice_ok`",
                ),
                ("temperature", DecoratorValueKind::Float(x)) => {
                    self.temperature(&mut cfg, *x, value.span)
                }
                ("temperature", DecoratorValueKind::Int(n)) => {
                    self.temperature(&mut cfg, *n as f64, value.span)
                }
                ("temperature", _) => wrong_kind(self, "a number between 0 and 2"),
                _ => {}
            }
        }
        cfg
    }

    /// Checks the `provider:` prefix of a model reference in `@ai(arg = …)`:
    /// a misspelt provider is an error with the fix; in a fallback the
    /// prefix is required (not `fixture`) and so is the model after it.
    fn check_model_ref(&mut self, arg: &str, text: &str, span: Span, required: bool) -> bool {
        let providers = "openai, openrouter, anthropic, gemini, ollama, compatible";
        let trimmed = text.trim();
        let split = trimmed.split_once(':');
        match split {
            Some((prefix, model)) if PROVIDERS.contains(&prefix) => {
                if required && prefix == "fixture" {
                    self.err(
                        Diagnostic::error(
                            Code::AiInvalidValue,
                            span,
                            "`fixture` cannot be a fallback",
                        )
                        .hint("a fallback is a network provider tried when another fails"),
                    );
                    return false;
                }
                if required && model.trim().is_empty() {
                    self.err(Diagnostic::error(
                        Code::AiInvalidValue,
                        span,
                        format!("the fallback `{trimmed}` names no model"),
                    ));
                    return false;
                }
                true
            }
            Some((prefix, model)) => match misspelt_provider(prefix) {
                Some(provider) => {
                    let fixed = format!("{provider}:{model}");
                    self.err(
                        Diagnostic::error(
                            Code::AiInvalidValue,
                            span,
                            format!("unknown provider `{prefix}` in `{arg}`"),
                        )
                        .hint(format!(
                            "providers: {providers}; a model whose own name has a colon goes \
                             after its provider, e.g. `ollama:llama3.2:3b`"
                        ))
                        .fix(
                            format!("did you mean `{provider}`?"),
                            span,
                            vox_string_literal(&fixed),
                        ),
                    );
                    false
                }
                None if required => {
                    self.err(
                        Diagnostic::error(
                            Code::AiInvalidValue,
                            span,
                            format!("unknown provider `{prefix}` in `{arg}`"),
                        )
                        .hint(format!("a fallback is `provider:model`; providers: {providers}")),
                    );
                    false
                }
                None => true,
            },
            None if required => {
                self.err(
                    Diagnostic::error(
                        Code::AiInvalidValue,
                        span,
                        format!("the fallback `{trimmed}` has no provider"),
                    )
                    .hint(format!(
                        "write `provider:model`, e.g. `openai:{trimmed}`; providers: {providers}"
                    )),
                );
                false
            }
            None => true,
        }
    }

    fn temperature(&mut self, cfg: &mut AiConfig, x: f64, span: Span) {
        if (0.0..=2.0).contains(&x) {
            cfg.temperature = Some(x);
        } else {
            self.err(Diagnostic::error(
                Code::AiInvalidValue,
                span,
                format!("`temperature` must be between 0 and 2, found {x}"),
            ));
        }
    }

    /// Types that contain themselves other than through `list`/`Option`
    /// have no finite representation.
    fn check_recursion(&mut self) {
        let n = self.info.types.defs.len();
        let direct: Vec<Vec<TypeId>> = self
            .info
            .types
            .defs
            .iter()
            .map(|d| {
                let mut out = Vec::new();
                let fields: Vec<&FieldDef> = match &d.kind {
                    TypeDefKind::Record(f) => f.iter().collect(),
                    TypeDefKind::Sum(vs) => vs.iter().flat_map(|v| v.fields.iter()).collect(),
                };
                for f in fields {
                    direct_named(&f.ty, &mut out);
                }
                out
            })
            .collect();
        // Iterative DFS with colours; report each type on a cycle once.
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut reported = vec![false; n];
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            state[root] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&TypeId(child)) = direct[node].get(*next) {
                    *next += 1;
                    let child = child as usize;
                    match state[child] {
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        1 => {
                            // Every type on the stack from `child` up is on the cycle.
                            let start = stack.iter().position(|(t, _)| *t == child).unwrap_or(0);
                            let cycle: Vec<usize> =
                                stack[start..].iter().map(|(t, _)| *t).collect();
                            if !cycle.iter().any(|t| reported[*t]) {
                                let names: Vec<String> = cycle
                                    .iter()
                                    .map(|t| self.info.types.defs[*t].name.clone())
                                    .collect();
                                let first = &self.info.types.defs[cycle[0]];
                                let d = Diagnostic::error(
                                    Code::InfiniteType,
                                    first.span,
                                    format!("type `{}` contains itself", first.name),
                                )
                                .label(format!("recursive through {}", names.join(" → ")))
                                .hint("recursion is allowed through `list[…]` or `Option[…]`, e.g. `next: Option[Node]`");
                                self.err(d);
                                for t in cycle {
                                    reported[t] = true;
                                }
                            }
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
    }

    /// Every structured output must fit OpenAI's strict-mode limits; a
    /// schema that does not is an error here rather than a silent cut or a
    /// 400 from the provider at run time.
    fn check_schema_limits(&mut self) {
        let mut seen: Vec<Ty> = Vec::new();
        for i in 0..self.info.fns.len() {
            let f = &self.info.fns[i];
            if f.ai.is_none()
                || !f.ret.is_concrete()
                || matches!(f.ret, Ty::Unit)
                || seen.contains(&f.ret)
            {
                continue;
            }
            seen.push(f.ret.clone());
            let schema = crate::schema::output_schema(&f.ret, &self.info.types);
            let problems = crate::schema::stats(&schema.schema).violations();
            self.info.output_schemas.push((f.ret.clone(), schema));
            if problems.is_empty() {
                continue;
            }
            let Some(decl) = fn_decl(self.module, f.item) else {
                continue;
            };
            let span = decl.ret.as_ref().map_or(decl.name.span, |r| r.span);
            let mut d = Diagnostic::error(
                Code::SchemaLimit,
                span,
                format!(
                    "the JSON Schema of `{}` is too large for strict structured outputs",
                    self.show(&f.ret)
                ),
            )
            .label(problems.join("; "));
            d = d.hint("flatten nested records, or split the call into several `@ai` functions with smaller return types");
            self.err(d);
        }
    }

    /// `@ai(check = f)`: `f` exists, takes exactly the function's return
    /// type, returns `list[str]`, and does not use the network (checks run
    /// on every reply and under the fixture provider; docs/language.md,
    /// "Checks").
    fn check_ai_checks(&mut self) {
        let list_str = Ty::List(Box::new(Ty::Str));
        for i in 0..self.info.fns.len() {
            let f = &self.info.fns[i];
            let Some(check) = f.ai.as_ref().and_then(|ai| ai.check.clone()) else {
                continue;
            };
            let ret = f.ret.clone();
            let ai_name = f.name.clone();
            let Some(&ci) = self.fn_index.get(&check.name) else {
                let names: Vec<&str> = self
                    .info
                    .fns
                    .iter()
                    .filter(|g| g.ai.is_none() && !g.test)
                    .map(|g| g.name.as_str())
                    .collect();
                let mut e = Diagnostic::error(
                    Code::AiInvalidCheck,
                    check.span,
                    format!("`check` names `{}`, which is not a function", check.name),
                )
                .hint(format!(
                    "declare `fn {}(value: {}) to list[str]` returning the problems it finds (empty when the value is fine)",
                    check.name,
                    self.show(&ret)
                ));
                if let Some(s) = did_you_mean(&check.name, names) {
                    e = e.fix(format!("replace with `{s}`"), check.span, s);
                }
                self.err(e);
                continue;
            };
            let callee = &self.info.fns[ci];
            let decl_span = fn_decl(self.module, callee.item).map(|d| d.name.span);
            let wanted = format!("fn {}(value: {}) to list[str]", check.name, self.show(&ret));
            let mut problem = None;
            if callee.test || callee.ai.is_some() || ci == i {
                problem = Some((
                    format!(
                        "`check` must name a plain function, not the `@{}` function `{}`",
                        if callee.test { "test" } else { "ai" },
                        callee.name
                    ),
                    None,
                ));
            } else if callee.params.len() != 1 || callee.params[0].1 != ret {
                let found = callee
                    .params
                    .iter()
                    .map(|(_, t)| self.show(t))
                    .collect::<Vec<_>>()
                    .join(", ");
                problem = Some((
                    format!(
                        "the check `{}` must take one parameter, the `{}` the model produced; it takes ({found})",
                        check.name,
                        self.show(&ret)
                    ),
                    Some((format!("({})", self.show(&ret)), format!("({found})"))),
                ));
            } else if callee.ret != list_str {
                problem = Some((
                    format!(
                        "the check `{}` must return `list[str]`, the problems it finds; it returns `{}`",
                        check.name,
                        self.show(&callee.ret)
                    ),
                    Some(("list[str]".to_string(), self.show(&callee.ret))),
                ));
            } else if callee.net {
                problem = Some((
                    format!(
                        "the check `{}` uses the network; a check must be a pure function",
                        check.name
                    ),
                    None,
                ));
            }
            if let Some((message, types)) = problem {
                let mut e = Diagnostic::error(Code::AiInvalidCheck, check.span, message)
                    .label(format!("checks the values of `{ai_name}`"))
                    .hint(format!("a check is `{wanted}`, returning the problems it finds (empty when the value is fine)"));
                if let Some((expected, found)) = types {
                    e = e.types(expected, found);
                }
                if let Some(span) = decl_span {
                    e = e.related(span, "defined here");
                }
                self.err(e);
            }
        }
    }

    // ---- effects ------------------------------------------------------

    fn check_effects(&mut self) {
        let n = self.info.fns.len();
        let exempt = |f: &FnInfo| f.test || f.name == "main";
        let mut net: Vec<bool> = self
            .info
            .fns
            .iter()
            .map(|f| f.net || f.ai.is_some())
            .collect();
        // Fixpoint: a caller of a net function is net (tests and main excepted).
        loop {
            let mut changed = false;
            for i in 0..n {
                if net[i] || exempt(&self.info.fns[i]) {
                    continue;
                }
                if self.calls[i].iter().any(|(callee, _)| net[*callee]) {
                    net[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for i in 0..n {
            let f = &self.info.fns[i];
            if !net[i] || f.net || exempt(f) {
                continue;
            }
            let Some(decl) = fn_decl(self.module, f.item) else {
                continue;
            };
            let indent = line_indent(self.sources, decl.head);
            let fix_span = decl.head.shrink_to_start();
            let d = if f.ai.is_some() {
                Diagnostic::error(
                    Code::MissingUses,
                    decl.name.span,
                    format!("`@ai` function `{}` must declare `@uses(net)`", f.name),
                )
                .hint("`@ai` functions call a model over the network")
            } else {
                let (callee, span) = self.calls[i]
                    .iter()
                    .find(|(c, _)| net[*c])
                    .copied()
                    .unwrap_or((i, decl.name.span));
                Diagnostic::error(
                    Code::MissingUses,
                    decl.name.span,
                    format!("`{}` calls `{}`, which uses the network, but does not declare `@uses(net)`", f.name, self.info.fns[callee].name),
                )
                .related(span, "network call here")
                .hint("functions that (transitively) call `@ai` functions become `async` and return `Result` in Rust")
            };
            self.err(d.fix(
                "add `@uses(net)`",
                fix_span,
                format!("@uses(net)\n{indent}"),
            ));
        }
        for (i, f) in self.info.fns.iter_mut().enumerate() {
            f.net = net[i] || f.net;
        }
    }

    // ---- bodies -------------------------------------------------------

    fn check_fn_body(&mut self, idx: usize) {
        let Some(decl) = fn_decl(self.module, self.info.fns[idx].item) else {
            return;
        };
        self.current = Some(idx);
        let ret = self.info.fns[idx].ret.clone();
        let is_ai = self.info.fns[idx].ai.is_some();
        let params = self.info.fns[idx].params.clone();
        self.scopes.push(Vec::new());
        self.var_origins.clear();
        self.lints = !decl.recovered;
        let mut seen: Vec<String> = Vec::new();
        for ((name, ty), p) in params.into_iter().zip(&decl.params) {
            // A duplicate was reported when collecting the signature.
            if seen.contains(&name) {
                continue;
            }
            seen.push(name.clone());
            self.declare(name, ty, false, p.name.span, !is_ai);
        }
        let (ty, has_tail) = self.check_block(
            &decl.body,
            if matches!(ret, Ty::Unit) {
                Want::Nothing
            } else {
                Want::Type(&ret)
            },
        );
        if self.lints
            && !matches!(ret, Ty::Unit | Ty::Error)
            && !matches!(ty, Ty::Never)
            && !has_tail
        {
            let close = decl.body.span.shrink_to_end();
            let close = Span {
                start: close.start.saturating_sub(1),
                ..close
            };
            self.err(
                Diagnostic::error(
                    Code::MissingReturn,
                    close,
                    format!(
                        "`{}` can reach its end without returning a value",
                        decl.name.name
                    ),
                )
                .types(self.show(&ret), "Unit")
                .label(format!(
                    "expected a value of type `{}` here",
                    self.show(&ret)
                ))
                .hint("end the body with `return …` or with an expression"),
            );
        }
        self.pop_scope();
        settle_fn(&mut self.info, &decl.body, &self.var_origins);
        self.current = None;
    }

    /// Records where the binding declared last gets its value.
    fn set_origin(&mut self, origin: Origin) {
        if let Some((_, l)) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
            l.origin = Some(origin);
        }
    }

    fn declare(&mut self, name: String, ty: Ty, mutable: bool, span: Span, lint_unused: bool) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((
                name,
                Local {
                    ty,
                    mutable,
                    span,
                    used: false,
                    lint_unused,
                    origin: None,
                },
            ));
        }
    }

    fn pop_scope(&mut self) {
        let Some(scope) = self.scopes.pop() else {
            return;
        };
        for (name, local) in scope {
            if self.lints && local.lint_unused && !local.used && !name.starts_with('_') {
                self.diags.push(
                    Diagnostic::warning(
                        Code::UnusedVariable,
                        local.span,
                        format!("unused variable `{name}`"),
                    )
                    .fix(
                        "prefix it with `_` to mark it intentionally unused",
                        local.span,
                        format!("_{name}"),
                    ),
                );
            }
        }
    }

    /// A pattern binds each name once (`Both(x, x)` is an error).
    fn report_duplicate_bindings(&mut self) {
        let Some(scope) = self.scopes.last_mut() else {
            return;
        };
        let mut dups = Vec::new();
        let mut i = 0;
        while i < scope.len() {
            if let Some((_, first)) = scope[..i].iter().find(|(n, _)| *n == scope[i].0) {
                dups.push((scope[i].0.clone(), scope[i].1.span, first.span));
                // Keep the first binding; uses resolve to it.
                scope.remove(i);
            } else {
                i += 1;
            }
        }
        for (name, span, first) in dups {
            self.err(
                Diagnostic::error(
                    Code::Duplicate,
                    span,
                    format!("`{name}` is bound more than once in this pattern"),
                )
                .related(first, "first bound here")
                .hint("use a different name, or `_` for a part you do not need"),
            );
        }
    }

    fn lookup(&mut self, name: &str) -> Option<&mut Local> {
        self.scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.iter_mut().rev())
            .find(|(n, _)| n == name)
            .map(|(_, l)| l)
    }

    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter().map(|(n, _)| n.clone()))
            .collect();
        names.extend(self.fn_index.keys().cloned());
        names.extend(Builtin::ALL.iter().map(|(n, _)| n.to_string()));
        names
    }

    /// Checks a block; returns its type and whether it ended in a value expression.
    fn check_block(&mut self, b: &Block, want: Want) -> (Ty, bool) {
        self.scopes.push(Vec::new());
        let mut diverges = false;
        let mut tail: Option<Ty> = None;
        let last = b.stmts.len().saturating_sub(1);
        for (i, s) in b.stmts.iter().enumerate() {
            if i == last && !matches!(want, Want::Nothing) {
                if let Stmt::Expr(e) = s {
                    let t = self.check_expr(e, want);
                    if matches!(t, Ty::Never) {
                        diverges = true;
                    } else {
                        tail = Some(t);
                    }
                    continue;
                }
            }
            if self.check_stmt(s) {
                diverges = true;
            }
        }
        self.pop_scope();
        if diverges {
            (Ty::Never, false)
        } else {
            match tail {
                Some(t) => (t, true),
                None => (Ty::Unit, false),
            }
        }
    }

    /// Checks a statement; returns true when it never completes (`return`).
    fn check_stmt(&mut self, s: &Stmt) -> bool {
        match s {
            Stmt::Let {
                mutable,
                name,
                ty,
                value,
                ..
            } => {
                let vt = match ty {
                    Some(t) => {
                        let declared = self.resolve_type(t);
                        self.check_expr(value, Want::Type(&declared));
                        declared
                    }
                    None => self.check_expr(value, Want::Any),
                };
                let diverges = matches!(vt, Ty::Never);
                let vt = if diverges { Ty::Error } else { vt };
                self.declare(name.name.clone(), vt, *mutable, name.span, true);
                if ty.is_none() {
                    self.set_origin(Origin {
                        expr: value.id,
                        wrap: Vec::new(),
                    });
                }
                // `let x = if c { return 1 } else { return 2 }` never binds.
                diverges
            }
            Stmt::Assign { target, value, .. } => {
                let tt = self.check_place(target);
                let vt = self.check_expr(value, Want::Type(&tt));
                if self.lints && same_place(target, value) {
                    let span = target.span.to(value.span);
                    self.diags.push(
                        Diagnostic::warning(
                            Code::SelfAssignment,
                            span,
                            "this assigns a value to itself",
                        )
                        .label("does nothing")
                        .hint("remove the assignment, or assign the value you meant"),
                    );
                }
                // `let mut xs = []` learns its element type from later assignments.
                if let ExprKind::Var(name) = &target.kind {
                    if !tt.is_concrete() {
                        let refined = tt.join(&vt);
                        if let Some(l) = self.lookup(name) {
                            l.ty = refined;
                        }
                    }
                }
                false
            }
            Stmt::Return { value, span } => {
                let ret = self
                    .current
                    .map_or(Ty::Unit, |i| self.info.fns[i].ret.clone());
                match value {
                    Some(v) => {
                        if matches!(ret, Ty::Unit) {
                            let t = self.check_expr(v, Want::Any);
                            if !matches!(t, Ty::Unit | Ty::Error | Ty::Never) {
                                self.err(
                                    Diagnostic::error(
                                        Code::Mismatch,
                                        v.span,
                                        "this function returns nothing",
                                    )
                                    .types("Unit", self.show(&t))
                                    .hint("declare a return type with `to …`, or remove the value"),
                                );
                            }
                        } else {
                            self.check_expr(v, Want::Type(&ret));
                        }
                    }
                    None => {
                        if !matches!(ret, Ty::Unit | Ty::Error) {
                            self.err(
                                Diagnostic::error(
                                    Code::Mismatch,
                                    *span,
                                    format!(
                                        "`return` without a value in a function returning `{}`",
                                        self.show(&ret)
                                    ),
                                )
                                .types(self.show(&ret), "Unit"),
                            );
                        }
                    }
                }
                true
            }
            Stmt::For {
                var, iter, body, ..
            } => {
                let it = self.check_expr(iter, Want::Any);
                let elem = match it {
                    Ty::List(t) => *t,
                    Ty::Error | Ty::Unknown => Ty::Error,
                    other => {
                        self.err(
                            Diagnostic::error(
                                Code::NotIterable,
                                iter.span,
                                format!("`for` needs a list, found `{}`", self.show(&other)),
                            )
                            .types("list[_]", self.show(&other)),
                        );
                        Ty::Error
                    }
                };
                self.scopes.push(Vec::new());
                self.declare(var.name.clone(), elem, false, var.span, true);
                self.set_origin(Origin {
                    expr: iter.id,
                    wrap: vec![Wrap::List],
                });
                self.check_block(body, Want::Nothing);
                self.pop_scope();
                false
            }
            Stmt::Expr(e) => {
                let t = self.check_expr(e, Want::Nothing);
                let value = |t: &Ty| !matches!(t, Ty::Unit | Ty::Never | Ty::Error | Ty::Unknown);
                // A `match` statement's arms are expressions, not statements:
                // look at what they produce.
                let dropped = value(&t)
                    || match &e.kind {
                        ExprKind::Match { arms, .. } => arms.iter().any(|a| {
                            !matches!(a.body.kind, ExprKind::Block(_))
                                && value(self.info.expr_type(a.body.id))
                        }),
                        _ => false,
                    };
                if self.lints && dropped && !crate::emit::calls_anything(e) {
                    self.diags.push(
                        Diagnostic::warning(
                            Code::UnusedValue,
                            e.span,
                            "this expression's value is never used",
                        )
                        .label("computed, then dropped")
                        .hint("remove the statement, use the value, or bind it with `let _name = …` if it is kept on purpose"),
                    );
                }
                matches!(t, Ty::Never)
            }
        }
    }

    /// Type of an assignment target, reporting targets that cannot be assigned.
    fn check_place(&mut self, target: &Expr) -> Ty {
        let mut root = target;
        while let ExprKind::Field { base, .. } = &root.kind {
            root = base;
        }
        match &root.kind {
            ExprKind::Var(name) => {
                let name = name.clone();
                let info = self.lookup(&name).map(|l| (l.mutable, l.span));
                if let Some((false, decl_span)) = info {
                    let mut d = Diagnostic::error(
                        Code::ImmutableAssign,
                        root.span,
                        format!("cannot assign twice to immutable variable `{name}`"),
                    )
                    .related(decl_span, "declared here");
                    if self.source_text(Span {
                        start: decl_span.start.saturating_sub(4),
                        end: decl_span.start,
                        ..decl_span
                    }) == "let "
                    {
                        d = d.fix(
                            "make the variable mutable",
                            decl_span.shrink_to_start(),
                            "mut ",
                        );
                    } else {
                        d = d.hint("parameters and loop variables cannot be assigned; copy into a `let mut` first");
                    }
                    self.err(d);
                }
                let t = self.check_expr(target, Want::Any);
                // Assigning is not reading.
                if let Some(l) = self.lookup(&name) {
                    let _ = l;
                }
                t
            }
            _ => {
                self.check_expr(target, Want::Any);
                self.err(
                    Diagnostic::error(
                        Code::InvalidAssignTarget,
                        target.span,
                        "cannot assign to this expression",
                    )
                    .hint("assign to a variable or a field of one: `x = …`, `inv.vendor = …`"),
                );
                Ty::Error
            }
        }
    }

    fn record(&mut self, e: &Expr, t: Ty) -> Ty {
        if let Some(slot) = self.info.expr_types.get_mut(e.id.0 as usize) {
            *slot = t.clone();
        }
        t
    }

    /// Remembers where an expression that can fail at run time is written.
    fn note_site(&mut self, e: &Expr) {
        let can_fail = match &e.kind {
            ExprKind::Binary { op, lhs, .. } => {
                matches!(
                    op,
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem
                ) || matches!(self.info.expr_type(lhs.id), Ty::Decimal)
            }
            ExprKind::Unary { op, .. } => *op == UnaryOp::Neg,
            ExprKind::Call { .. } => matches!(
                self.info.callees.get(&e.id),
                Some(Callee::Builtin(
                    Builtin::Int | Builtin::Float | Builtin::Decimal
                ))
            ),
            _ => false,
        };
        if can_fail {
            let file = self.sources.get(e.span.file);
            let at = file.line_col(e.span.start as usize);
            let site = format!("{}:{}:{}", file.name, at.line, at.col);
            self.info.sites.insert(e.id, site);
        }
    }

    /// Checks `e` against what is wanted and records its type.
    fn check_expr(&mut self, e: &Expr, want: Want) -> Ty {
        let t = self.infer(e, want);
        self.note_site(e);
        if let Want::Type(expected) = want {
            // If/match/blocks check their branches against `want` themselves.
            let handled = matches!(
                e.kind,
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_)
            );
            if !handled && !expected.accepts(&t) {
                self.mismatch(e, expected, &t);
                return self.record(e, expected.clone());
            }
            if let (Ty::Unknown, false) = (&t, handled) {
                return self.record(e, expected.clone());
            }
            if !t.is_concrete() && expected.is_concrete() {
                return self.record(e, t.join(expected));
            }
        }
        self.record(e, t)
    }

    fn mismatch(&mut self, e: &Expr, expected: &Ty, found: &Ty) {
        let (es, fs) = (self.show(expected), self.show(found));
        let mut d = Diagnostic::error(Code::Mismatch, e.span, "mismatched types")
            .types(es.clone(), fs.clone());
        let text = self.source_text(e.span).to_string();
        match (expected, found) {
            (Ty::Float, Ty::Int) => {
                d = d.hint("convert with `float(…)`").fix(
                    "convert to `float`",
                    e.span,
                    format!("float({text})"),
                );
            }
            (Ty::Int, Ty::Float) => {
                d = d.hint("convert with `int(…)` (truncates toward zero)");
            }
            (Ty::Str, _) if !matches!(found, Ty::Unit) => {
                d = d.hint("convert to text with `str(…)`").fix(
                    "convert with `str`",
                    e.span,
                    format!("str({text})"),
                );
            }
            (Ty::Option(inner), f) if inner.accepts(f) => {
                d = d.hint("wrap the value in `Some(…)`").fix(
                    "wrap in `Some`",
                    e.span,
                    format!("Some({text})"),
                );
            }
            (Ty::Decimal, Ty::Str) | (Ty::Str, Ty::Decimal) => {
                d = d.hint("`Decimal` is carried as text but is its own type");
            }
            _ => {}
        }
        self.err(d);
    }

    fn infer(&mut self, e: &Expr, want: Want) -> Ty {
        match &e.kind {
            ExprKind::Int(_) => Ty::Int,
            ExprKind::Float(_) => Ty::Float,
            ExprKind::Str(_) => Ty::Str,
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Error => Ty::Error,
            ExprKind::Poison(parts) => {
                for p in parts {
                    self.check_expr(p, Want::Any);
                }
                Ty::Error
            }
            ExprKind::Var(name) => self.infer_var(e, name),
            ExprKind::Ctor { name, args } => self.infer_ctor(e, name, args.as_deref(), want),
            ExprKind::Record { name, fields } => self.infer_record(e, name, fields),
            ExprKind::List(items) => {
                let mut elem = match want.ty() {
                    Some(Ty::List(t)) => (**t).clone(),
                    _ => Ty::Unknown,
                };
                for item in items {
                    if elem.is_concrete() {
                        let t = self.check_expr(item, Want::Type(&elem));
                        elem = elem.join(&t);
                    } else {
                        let t = self.check_expr(item, Want::Any);
                        if !elem.accepts(&t) {
                            self.mismatch(item, &elem, &t);
                        }
                        elem = elem.join(&t);
                    }
                }
                Ty::List(Box::new(elem))
            }
            ExprKind::Call { callee, args } => self.infer_call(e, callee, args, want),
            ExprKind::Field { base, name } => {
                let bt = self.check_expr(base, Want::Any);
                self.field_type(&bt, name)
            }
            ExprKind::Unary { op, expr } => {
                let t = self.check_expr(expr, Want::Any);
                match (op, &t) {
                    (_, Ty::Error) => Ty::Error,
                    (UnaryOp::Neg, Ty::Int | Ty::Float | Ty::Decimal) => t,
                    (UnaryOp::Not, Ty::Bool) => Ty::Bool,
                    (UnaryOp::Neg, _) => {
                        self.err(Diagnostic::error(
                            Code::InvalidOperand,
                            e.span,
                            format!("cannot negate a value of type `{}`", self.show(&t)),
                        ));
                        Ty::Error
                    }
                    (UnaryOp::Not, _) => {
                        self.err(
                            Diagnostic::error(Code::Mismatch, expr.span, "`not` needs a `bool`")
                                .types("bool", self.show(&t)),
                        );
                        Ty::Bool
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.infer_binary(e, *op, lhs, rhs),
            ExprKind::If { cond, then, els } => self.infer_if(e, cond, then, els.as_ref(), want),
            ExprKind::Match { scrutinee, arms } => self.infer_match(e, scrutinee, arms, want),
            ExprKind::Block(b) => {
                let (t, has_tail) = self.check_block(b, want);
                if let Want::Type(expected) = want {
                    if !has_tail
                        && !matches!(t, Ty::Never)
                        && !matches!(expected, Ty::Unit)
                        && !expected.is_error()
                    {
                        self.err(
                            Diagnostic::error(Code::Mismatch, b.span, "this block has no value")
                                .types(self.show(expected), "Unit")
                                .hint("end the block with an expression"),
                        );
                    }
                }
                t
            }
        }
    }

    fn infer_var(&mut self, e: &Expr, name: &str) -> Ty {
        if let Some(l) = self.lookup(name) {
            l.used = true;
            let (ty, origin) = (l.ty.clone(), l.origin.clone());
            if let Some(o) = origin {
                self.var_origins.push((e.id, o));
            }
            return ty;
        }
        if self.fn_index.contains_key(name) || Builtin::lookup(name).is_some() {
            self.err(
                Diagnostic::error(
                    Code::NotCallable,
                    e.span,
                    format!("`{name}` is a function; functions are called, not used as values"),
                )
                .hint(format!("call it: `{name}(…)`")),
            );
            return Ty::Error;
        }
        let mut d = Diagnostic::error(
            Code::UnknownName,
            e.span,
            format!("cannot find `{name}` in this scope"),
        )
        .label("not found");
        let names = self.visible_names();
        if let Some(s) = did_you_mean(name, names.iter().map(String::as_str)) {
            d = d.hint(format!("did you mean `{s}`?")).fix(
                format!("replace with `{s}`"),
                e.span,
                s.to_string(),
            );
            // The misspelt use is a use of the suggestion: no "unused" noise.
            if let Some(l) = self.lookup(s) {
                l.used = true;
            }
        }
        self.err(d);
        Ty::Error
    }

    fn infer_ctor(&mut self, e: &Expr, name: &Ident, args: Option<&[Arg]>, want: Want) -> Ty {
        let want_inner = match want.ty() {
            Some(Ty::Option(t) | Ty::Result(t)) => Some((**t).clone()),
            _ => None,
        };
        match name.name.as_str() {
            "None" => {
                self.info.ctors.insert(e.id, Ctor::None);
                if args.is_some() {
                    self.err(Diagnostic::error(
                        Code::Arity,
                        e.span,
                        "`None` takes no arguments",
                    ));
                }
                return Ty::Option(Box::new(want_inner.unwrap_or(Ty::Unknown)));
            }
            "Some" | "Ok" | "Error" => {
                let ctor = match name.name.as_str() {
                    "Some" => Ctor::Some,
                    "Ok" => Ctor::Ok,
                    _ => Ctor::Err,
                };
                self.info.ctors.insert(e.id, ctor);
                let arg = match args {
                    Some([a]) => Some(a),
                    _ => {
                        let found = args.map_or(0, <[Arg]>::len);
                        self.err(
                            Diagnostic::error(
                                Code::Arity,
                                e.span,
                                format!("`{}` takes 1 argument, found {found}", name.name),
                            )
                            .hint(format!("write `{}(value)`", name.name)),
                        );
                        for a in args.unwrap_or(&[]) {
                            self.check_expr(&a.value, Want::Any);
                        }
                        None
                    }
                };
                if ctor == Ctor::Err {
                    if let Some(a) = arg {
                        self.check_expr(&a.value, Want::Type(&Ty::Str));
                    }
                    return Ty::Result(Box::new(want_inner.unwrap_or(Ty::Unknown)));
                }
                let inner = match (arg, &want_inner) {
                    (Some(a), Some(w)) => {
                        self.check_expr(&a.value, Want::Type(w));
                        w.clone()
                    }
                    (Some(a), None) => self.check_expr(&a.value, Want::Any),
                    (None, _) => Ty::Error,
                };
                return if ctor == Ctor::Some {
                    Ty::Option(Box::new(inner))
                } else {
                    Ty::Result(Box::new(inner))
                };
            }
            _ => {}
        }
        let Some(&(tid, vi, _)) = self.variant_index.get(&name.name) else {
            for a in args.unwrap_or(&[]) {
                self.check_expr(&a.value, Want::Any);
            }
            if let Some(&(tid, _)) = self.type_index.get(&name.name) {
                let is_record = self
                    .info
                    .types
                    .get(tid)
                    .is_some_and(|d| d.fields().is_some());
                let d = Diagnostic::error(
                    Code::NotCallable,
                    name.span,
                    format!("`{}` is a type, not a value", name.name),
                );
                self.err(if is_record {
                    d.hint(format!(
                        "build a record with `{} {{ field: value, … }}`",
                        name.name
                    ))
                } else {
                    d.hint("use one of its variants")
                });
                return Ty::Error;
            }
            // `let Count = 1` was reported as a naming error; still resolve it.
            if args.is_none() {
                if let Some(l) = self.lookup(&name.name) {
                    l.used = true;
                    return l.ty.clone();
                }
            }
            let mut d = Diagnostic::error(
                Code::UnknownName,
                name.span,
                format!("cannot find variant `{}`", name.name),
            )
            .label("not found");
            let cands: Vec<&str> = self
                .variant_index
                .keys()
                .map(String::as_str)
                .chain(RESERVED_CTORS)
                .collect();
            if let Some(s) = did_you_mean(&name.name, cands) {
                d = d.hint(format!("did you mean `{s}`?")).fix(
                    format!("replace with `{s}`"),
                    name.span,
                    s.to_string(),
                );
            }
            self.err(d);
            return Ty::Error;
        };
        self.info.ctors.insert(e.id, Ctor::Variant(tid, vi));
        let fields: Vec<FieldDef> = self
            .info
            .types
            .get(tid)
            .and_then(|d| d.variants())
            .and_then(|vs| vs.get(vi))
            .map(|v| v.fields.clone())
            .unwrap_or_default();
        match args {
            None if !fields.is_empty() => {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                self.err(
                    Diagnostic::error(
                        Code::MissingField,
                        e.span,
                        format!(
                            "variant `{}` needs its fields: {}",
                            name.name,
                            names.join(", ")
                        ),
                    )
                    .hint(format!(
                        "write `{}({})`",
                        name.name,
                        names
                            .iter()
                            .map(|n| format!("{n}: …"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                );
            }
            None => {}
            Some(args) => {
                if fields.is_empty() {
                    self.err(
                        Diagnostic::error(
                            Code::Arity,
                            e.span,
                            format!("variant `{}` has no fields", name.name),
                        )
                        .fix(
                            "remove the parentheses",
                            e.span,
                            name.name.clone(),
                        ),
                    );
                    for a in args {
                        self.check_expr(&a.value, Want::Any);
                    }
                } else {
                    let params: Vec<(String, Ty)> = fields
                        .iter()
                        .map(|f| (f.name.clone(), f.ty.clone()))
                        .collect();
                    self.check_args(e.span, &name.name, "variant", &params, args);
                }
            }
        }
        Ty::Named(tid)
    }

    /// Matches arguments (positional, or all named) to parameters and checks each.
    fn check_args(
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
                        d = d.hint(format!("did you mean `{s}`?")).fix(
                            format!("replace with `{s}`"),
                            n.span,
                            s.to_string(),
                        );
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

    fn infer_record(&mut self, e: &Expr, name: &Ident, inits: &[FieldInit]) -> Ty {
        let Some(&(tid, _)) = self.type_index.get(&name.name) else {
            for f in inits {
                self.check_expr(&f.value, Want::Any);
            }
            let mut d = Diagnostic::error(
                Code::UnknownType,
                name.span,
                format!("unknown type `{}`", name.name),
            );
            if self.variant_index.contains_key(&name.name) {
                d = d.hint(format!(
                    "`{}` is a variant; build it with `{}(field: value, …)`",
                    name.name, name.name
                ));
            } else if let Some(s) =
                did_you_mean(&name.name, self.type_index.keys().map(String::as_str))
            {
                d = d.hint(format!("did you mean `{s}`?")).fix(
                    format!("replace with `{s}`"),
                    name.span,
                    s.to_string(),
                );
            }
            self.err(d);
            return Ty::Error;
        };
        let Some(fields) = self
            .info
            .types
            .get(tid)
            .and_then(|d| d.fields())
            .map(<[FieldDef]>::to_vec)
        else {
            for f in inits {
                self.check_expr(&f.value, Want::Any);
            }
            self.err(
                Diagnostic::error(
                    Code::NotARecord,
                    name.span,
                    format!("`{}` is a sum type, not a record", name.name),
                )
                .hint("build one of its variants instead"),
            );
            return Ty::Error;
        };
        let mut seen: Vec<&str> = Vec::new();
        for init in inits {
            if let Some(prev) = seen.iter().position(|s| *s == init.name.name) {
                let _ = prev;
                self.err(Diagnostic::error(
                    Code::Duplicate,
                    init.name.span,
                    format!("field `{}` is given twice", init.name.name),
                ));
            }
            match fields.iter().find(|f| f.name == init.name.name) {
                Some(f) => {
                    seen.push(&init.name.name);
                    self.check_expr(&init.value, Want::Type(&f.ty));
                }
                None => {
                    self.check_expr(&init.value, Want::Any);
                    let mut d = Diagnostic::error(
                        Code::UnknownField,
                        init.name.span,
                        format!("`{}` has no field `{}`", name.name, init.name.name),
                    );
                    if let Some(s) =
                        did_you_mean(&init.name.name, fields.iter().map(|f| f.name.as_str()))
                    {
                        d = d.hint(format!("did you mean `{s}`?")).fix(
                            format!("replace with `{s}`"),
                            init.name.span,
                            s.to_string(),
                        );
                    } else {
                        let all: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                        d = d.hint(format!("its fields are: {}", all.join(", ")));
                    }
                    self.err(d);
                }
            }
        }
        let missing: Vec<&str> = fields
            .iter()
            .map(|f| f.name.as_str())
            .filter(|f| !seen.contains(f))
            .collect();
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            self.err(
                Diagnostic::error(Code::MissingField, name.span, format!("missing field{} {list} in `{}`", if missing.len() == 1 { "" } else { "s" }, name.name))
                    .hint("every field must be given; use `Option[…]` fields with `None` for optional data"),
            );
        }
        let _ = e;
        Ty::Named(tid)
    }

    fn infer_call(&mut self, e: &Expr, callee: &Ident, args: &[Arg], want: Want) -> Ty {
        if let Some(b) = Builtin::lookup(&callee.name) {
            if self.lookup(&callee.name).is_none() {
                self.info.callees.insert(e.id, Callee::Builtin(b));
                return self.infer_builtin(e, b, args, want);
            }
        }
        if let Some(&fi) = self.fn_index.get(&callee.name) {
            self.info.callees.insert(e.id, Callee::Fn(fi));
            self.check_callable(fi, callee);
            if let Some(cur) = self.current {
                if let Some(calls) = self.calls.get_mut(cur) {
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
            d = d.hint(format!("did you mean `{s}`?")).fix(
                format!("replace with `{s}`"),
                callee.span,
                s.to_string(),
            );
        }
        self.err(d);
        Ty::Error
    }

    /// `@test` functions and `fn main` are entry points, not functions to
    /// call (docs/language.md, "Entry points").
    fn check_callable(&mut self, fi: usize, callee: &Ident) {
        let f = &self.info.fns[fi];
        let def_span = fn_decl(self.module, f.item).map_or(callee.span, |d| d.name.span);
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

    fn infer_builtin(&mut self, e: &Expr, b: Builtin, args: &[Arg], _want: Want) -> Ty {
        let name = Builtin::ALL
            .iter()
            .find(|(_, x)| *x == b)
            .map_or("?", |(n, _)| *n);
        let want_n = if b == Builtin::AssertEq { 2 } else { 1 };
        if let Some(a) = args.iter().find_map(|a| a.name.as_ref()) {
            self.err(Diagnostic::error(
                Code::UnknownArgument,
                a.span,
                format!("builtin `{name}` takes positional arguments"),
            ));
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
                Builtin::Decimal => Ty::Decimal,
                _ => Ty::Unit,
            };
        }
        let a0 = &args[0].value;
        // `want` is prose for the message, `want_ty` a type-like alternative list.
        let bad = |c: &mut Self, t: &Ty, want: &str, want_ty: &str| {
            c.err(
                Diagnostic::error(Code::Mismatch, a0.span, format!("`{name}` needs {want}"))
                    .types(want_ty.to_string(), c.show(t)),
            );
        };
        match b {
            Builtin::Len => {
                let t = self.check_expr(a0, Want::Any);
                if !matches!(t, Ty::Str | Ty::List(_) | Ty::Error | Ty::Unknown) {
                    bad(self, &t, "a `str` or a `list`", "str | list[_]");
                }
                Ty::Int
            }
            Builtin::Str => {
                self.check_expr(a0, Want::Any);
                Ty::Str
            }
            Builtin::Int => {
                let t = self.check_expr(a0, Want::Any);
                if !matches!(t, Ty::Int | Ty::Float | Ty::Bool | Ty::Decimal | Ty::Error) {
                    bad(
                        self,
                        &t,
                        "an `int`, `float`, `bool` or `Decimal`",
                        "int | float | bool | Decimal",
                    );
                }
                Ty::Int
            }
            Builtin::Float => {
                let t = self.check_expr(a0, Want::Any);
                if !matches!(t, Ty::Int | Ty::Float | Ty::Decimal | Ty::Error) {
                    bad(
                        self,
                        &t,
                        "an `int`, `float` or `Decimal`",
                        "int | float | Decimal",
                    );
                }
                Ty::Float
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
                    (Ty::Str | Ty::Int | Ty::Decimal | Ty::Error, _) => {}
                    (Ty::Float, _) => {
                        let mut d = Diagnostic::error(
                            Code::Mismatch,
                            a0.span,
                            "`decimal` needs a `str`, `int` or `Decimal`",
                        )
                        .types("str | int | Decimal", "float")
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
                    _ => bad(
                        self,
                        &t,
                        "a `str`, `int` or `Decimal`",
                        "str | int | Decimal",
                    ),
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
        }
    }

    fn field_type(&mut self, base: &Ty, name: &Ident) -> Ty {
        match base {
            Ty::Error | Ty::Unknown => Ty::Error,
            Ty::Named(id) => {
                let Some(def) = self.info.types.get(*id) else {
                    return Ty::Error;
                };
                match &def.kind {
                    TypeDefKind::Record(fields) => {
                        if let Some(f) = fields.iter().find(|f| f.name == name.name) {
                            return f.ty.clone();
                        }
                        let tname = def.name.clone();
                        let cands: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
                        let mut d = Diagnostic::error(
                            Code::UnknownField,
                            name.span,
                            format!("no field `{}` on type `{tname}`", name.name),
                        )
                        .label("unknown field");
                        if let Some(s) = did_you_mean(&name.name, cands.iter().map(String::as_str))
                        {
                            d = d.hint(format!("did you mean `{s}`?")).fix(
                                format!("replace with `{s}`"),
                                name.span,
                                s.to_string(),
                            );
                        } else {
                            d = d
                                .hint(format!("the fields of `{tname}` are: {}", cands.join(", ")));
                        }
                        self.err(d);
                        Ty::Error
                    }
                    TypeDefKind::Sum(_) => {
                        let tname = def.name.clone();
                        self.err(
                            Diagnostic::error(
                                Code::NotARecord,
                                name.span,
                                format!("`{tname}` is a sum type; it has no fields"),
                            )
                            .hint("use `match` to get at a variant's fields"),
                        );
                        Ty::Error
                    }
                }
            }
            other => {
                let mut d = Diagnostic::error(
                    Code::NotARecord,
                    name.span,
                    format!("`{}` has no fields", self.show(other)),
                );
                if matches!(name.name.as_str(), "len" | "length" | "size" | "count") {
                    d = d.hint("use the builtin `len(…)`");
                } else if matches!(other, Ty::Option(_)) {
                    d = d.hint("use `match` to get at the value inside an `Option`");
                }
                self.err(d);
                Ty::Error
            }
        }
    }

    fn infer_binary(&mut self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Ty {
        use BinaryOp::*;
        if matches!(op, And | Or) {
            self.check_expr(lhs, Want::Type(&Ty::Bool));
            self.check_expr(rhs, Want::Type(&Ty::Bool));
            return Ty::Bool;
        }
        let lt = self.check_expr(lhs, Want::Any);
        let rt = if lt.is_concrete() && !matches!(lt, Ty::Never) && matches!(op, Eq | NotEq) {
            self.check_expr(rhs, Want::Type(&lt))
        } else {
            self.check_expr(rhs, Want::Any)
        };
        if lt.is_error() || rt.is_error() {
            return if matches!(op, Add | Sub | Mul | Div | Rem) {
                Ty::Error
            } else {
                Ty::Bool
            };
        }
        let sym = op.symbol();
        match op {
            Eq | NotEq => {
                // A mismatch was already reported against the left side's type.
                Ty::Bool
            }
            Lt | Le | Gt | Ge => {
                let ok = matches!(
                    (&lt, &rt),
                    (Ty::Int, Ty::Int)
                        | (Ty::Float, Ty::Float)
                        | (Ty::Str, Ty::Str)
                        | (Ty::Decimal, Ty::Decimal)
                );
                if !ok {
                    self.operand_error(e, sym, &lt, &rt);
                }
                Ty::Bool
            }
            Add | Sub | Mul | Div | Rem => match (&lt, &rt) {
                (Ty::Int, Ty::Int) => Ty::Int,
                (Ty::List(a), Ty::List(b)) if op == Add && (a.accepts(b) || b.accepts(a)) => {
                    lt.join(&rt)
                }
                (Ty::Float, Ty::Float) => Ty::Float,
                (Ty::Str, Ty::Str) if op == Add => Ty::Str,
                (Ty::Decimal, Ty::Decimal) if matches!(op, Add | Sub | Mul) => Ty::Decimal,
                _ => {
                    self.operand_error(e, sym, &lt, &rt);
                    Ty::Error
                }
            },
            And | Or => Ty::Bool,
        }
    }

    fn operand_error(&mut self, e: &Expr, sym: &str, lt: &Ty, rt: &Ty) {
        let mut d = Diagnostic::error(
            Code::InvalidOperand,
            e.span,
            format!(
                "cannot apply `{sym}` to `{}` and `{}`",
                self.show(lt),
                self.show(rt)
            ),
        );
        d = match (lt, rt) {
            (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => d.hint(
                "convert one side: `float(n)` or `int(x)`; Vox never converts numbers implicitly",
            ),
            (Ty::Str, _) | (_, Ty::Str) if sym == "+" => {
                d.hint("convert the other side with `str(…)` to join text")
            }
            (Ty::Decimal, Ty::Decimal) => d.hint(
                "`Decimal` has `+`, `-` and `*` but no `/` or `%` (a quotient needs a rounding rule): multiply instead, `d * decimal(\"0.5\")`, or compute in `float(d)`",
            ),
            (Ty::Decimal, Ty::Int) | (Ty::Int, Ty::Decimal) => {
                d.hint("convert the `int` with `decimal(n)`; Vox never converts numbers implicitly")
            }
            (Ty::Decimal, Ty::Float) | (Ty::Float, Ty::Decimal) => d.hint(
                "convert one side: `float(d)` (approximate) or `decimal(\"…\")`; Vox never converts numbers implicitly",
            ),
            _ => d,
        };
        self.err(d);
    }

    fn infer_if(
        &mut self,
        e: &Expr,
        cond: &Expr,
        then: &Block,
        els: Option<&Block>,
        want: Want,
    ) -> Ty {
        self.check_expr(cond, Want::Type(&Ty::Bool));
        match want {
            Want::Nothing => {
                let (t1, _) = self.check_block(then, Want::Nothing);
                let t2 = els.map(|b| self.check_block(b, Want::Nothing).0);
                match t2 {
                    Some(Ty::Never) if matches!(t1, Ty::Never) => Ty::Never,
                    _ => Ty::Unit,
                }
            }
            Want::Type(Ty::Unit) => {
                self.check_block(then, Want::Nothing);
                if let Some(b) = els {
                    self.check_block(b, Want::Nothing);
                }
                Ty::Unit
            }
            Want::Any | Want::Type(_) => {
                let (t1, tail1) = self.check_block(then, want);
                self.require_block_value(then, &t1, tail1, want);
                let Some(els) = els else {
                    if !matches!(t1, Ty::Error) {
                        self.err(
                            Diagnostic::error(
                                Code::MissingElse,
                                Span {
                                    end: e.span.start.saturating_add(2).min(e.span.end),
                                    ..e.span
                                },
                                "`if` without `else` has no value here",
                            )
                            .hint("add an `else { … }` branch"),
                        );
                    }
                    return want.ty().cloned().unwrap_or(t1);
                };
                let joined_want_ty;
                let else_want = match want {
                    Want::Type(t) => Want::Type(t),
                    _ if t1.is_concrete() && !matches!(t1, Ty::Never) => {
                        joined_want_ty = t1.clone();
                        Want::Type(&joined_want_ty)
                    }
                    _ => Want::Any,
                };
                let (t2, tail2) = self.check_block(els, else_want);
                self.require_block_value(els, &t2, tail2, else_want);
                match (&t1, &t2) {
                    (Ty::Never, Ty::Never) => Ty::Never,
                    _ => want.ty().cloned().unwrap_or_else(|| t1.join(&t2)),
                }
            }
        }
    }

    /// In value position a branch must end in an expression (or diverge).
    fn require_block_value(&mut self, b: &Block, t: &Ty, has_tail: bool, want: Want) {
        if has_tail || matches!(t, Ty::Never) {
            return;
        }
        let expected = want.ty().map_or("a value".to_string(), |t| self.show(t));
        if want.ty().is_some_and(|t| t.is_error()) {
            return;
        }
        self.err(
            Diagnostic::error(Code::Mismatch, b.span, "this branch has no value")
                .types(expected, "Unit")
                .hint("end the branch with an expression"),
        );
    }

    fn infer_match(&mut self, e: &Expr, scrutinee: &Expr, arms: &[Arm], want: Want) -> Ty {
        let st = self.check_expr(scrutinee, Want::Any);
        let mut result: Option<Ty> = want.ty().cloned();
        let mut all_diverge = !arms.is_empty();
        let mut budget = crate::exhaustive::BUDGET;
        let mut rows: Vec<Vec<crate::exhaustive::Pat>> = Vec::new();
        let check_coverage = !matches!(st, Ty::Error | Ty::Unknown | Ty::Never);
        for arm in arms {
            self.scopes.push(Vec::new());
            self.pat_origin = Some(Origin {
                expr: scrutinee.id,
                wrap: Vec::new(),
            });
            self.check_pattern(&arm.pattern, &st);
            self.pat_origin = None;
            self.report_duplicate_bindings();
            if check_coverage {
                let pat = crate::exhaustive::lower(&arm.pattern, &st, &self.info.types);
                let useful = crate::exhaustive::Checker::new(&self.info.types, &mut budget).useful(
                    &rows,
                    std::slice::from_ref(&pat),
                    std::slice::from_ref(&st),
                );
                if useful == Some(false) && !pat.has_opaque() {
                    self.err(
                        Diagnostic::warning(
                            Code::Unreachable,
                            arm.pattern.span,
                            "unreachable match arm",
                        )
                        .hint("earlier arms already match every value this pattern matches"),
                    );
                }
                rows.push(vec![pat]);
            }
            let arm_want = match (&want, &result) {
                (Want::Nothing, _) => Want::Nothing,
                (_, Some(t)) if t.is_concrete() => Want::Type(t),
                _ => Want::Any,
            };
            let owned_want = match arm_want {
                Want::Type(t) => Some(t.clone()),
                _ => None,
            };
            let arm_want = match (&owned_want, arm_want) {
                (Some(t), _) => Want::Type(t),
                (None, w) => w,
            };
            let t = self.check_expr(&arm.body, arm_want);
            if let ExprKind::Block(b) = &arm.body.kind {
                let has_tail = matches!(b.stmts.last(), Some(Stmt::Expr(_)));
                if !matches!(arm_want, Want::Nothing)
                    && !matches!(want, Want::Type(Ty::Unit))
                    && want.ty().is_none()
                {
                    self.require_block_value(b, &t, has_tail, arm_want);
                }
            }
            if !matches!(t, Ty::Never) {
                all_diverge = false;
                if !matches!(want, Want::Nothing) {
                    result = Some(match result {
                        Some(r) => r.join(&t),
                        None => t,
                    });
                }
            }
            self.pop_scope();
        }
        let uncovered = check_coverage
            && crate::exhaustive::Checker::new(&self.info.types, &mut budget).useful(
                &rows,
                &[crate::exhaustive::Pat::Wild],
                std::slice::from_ref(&st),
            ) == Some(true);
        if uncovered {
            let missing =
                crate::exhaustive::Checker::new(&self.info.types, &mut budget).missing(&rows, &st);
            let mut d =
                Diagnostic::error(Code::NonExhaustive, scrutinee.span, "non-exhaustive match")
                    .label(format!("patterns not covered: {}", missing.join(", ")));
            d = d.hint(format!(
                "add arms for {}, or a `_ => …` arm",
                missing.join(", ")
            ));
            self.err(d);
        }
        let _ = e;
        if all_diverge {
            return Ty::Never;
        }
        match want {
            Want::Nothing => Ty::Unit,
            _ => result.unwrap_or(Ty::Unit),
        }
    }

    /// Checks a pattern against the matched type, declaring its bindings.
    /// Returns whether the pattern matches every value (a binding or `_`).
    fn check_pattern(&mut self, p: &Pattern, t: &Ty) -> bool {
        let literal = |c: &mut Self, want: Ty| {
            if !want.accepts(t) && !t.accepts(&want) {
                c.err(
                    Diagnostic::error(
                        Code::InvalidPattern,
                        p.span,
                        "this pattern cannot match the value's type",
                    )
                    .types(c.show(t), c.show(&want)),
                );
            }
            false
        };
        match &p.kind {
            PatternKind::Wildcard => true,
            PatternKind::Invalid => false,
            PatternKind::Binding(name) => {
                self.declare(name.clone(), t.clone(), false, p.span, true);
                if let Some(o) = self.pat_origin.clone() {
                    self.set_origin(o);
                }
                true
            }
            PatternKind::Int(_) => literal(self, Ty::Int),
            PatternKind::Str(_) => literal(self, Ty::Str),
            PatternKind::Bool(_) => {
                literal(self, Ty::Bool);
                false
            }
            PatternKind::Ctor { name, args } => {
                // Sub-patterns of `Some`/`Ok` match the content; others
                // (variant fields, `Error`'s text) have concrete types.
                let saved = self.pat_origin.take();
                self.pat_origin = saved.clone().and_then(|mut o| {
                    o.wrap.push(match name.name.as_str() {
                        "Some" => Wrap::Option,
                        "Ok" => Wrap::Result,
                        _ => return None,
                    });
                    Some(o)
                });
                let irrefutable = self.check_ctor_pattern(p, name, args.as_deref(), t);
                self.pat_origin = saved;
                irrefutable
            }
        }
    }

    fn check_ctor_pattern(
        &mut self,
        p: &Pattern,
        name: &Ident,
        args: Option<&[Pattern]>,
        t: &Ty,
    ) -> bool {
        let sub = |c: &mut Self, args: Option<&[Pattern]>, tys: &[Ty]| -> bool {
            let args = args.unwrap_or(&[]);
            if !args.is_empty() && args.len() != tys.len() {
                c.err(Diagnostic::error(
                    Code::InvalidPattern,
                    p.span,
                    format!(
                        "`{}` has {} field{}, but the pattern has {}",
                        name.name,
                        tys.len(),
                        if tys.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                ));
            }
            let mut irrefutable = true;
            for (i, a) in args.iter().enumerate() {
                let ty = tys.get(i).cloned().unwrap_or(Ty::Error);
                if !c.check_pattern(a, &ty) {
                    irrefutable = false;
                }
            }
            irrefutable
        };
        let wrong = |c: &mut Self, what: &str| {
            c.err(
                Diagnostic::error(
                    Code::InvalidPattern,
                    p.span,
                    format!(
                        "`{}` cannot match a value of type `{}`",
                        name.name,
                        c.show(t)
                    ),
                )
                .hint(what.to_string()),
            );
            false
        };
        match (name.name.as_str(), t) {
            ("None", Ty::Option(_)) => false,
            ("Some", Ty::Option(inner)) => {
                sub(self, args, std::slice::from_ref(inner));
                false
            }
            ("Ok", Ty::Result(inner)) => {
                sub(self, args, std::slice::from_ref(inner));
                false
            }
            ("Error", Ty::Result(_)) => {
                sub(self, args, &[Ty::Str]);
                false
            }
            (_, Ty::Error | Ty::Unknown) => {
                // Bind sub-patterns so their names resolve; nothing to check.
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                false
            }
            ("None" | "Some" | "Ok" | "Error", _) => {
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                wrong(
                    self,
                    "`Some`/`None` match an `Option`; `Ok`/`Error` match a `Result`",
                )
            }
            (vname, Ty::Named(tid)) => {
                let variants = self
                    .info
                    .types
                    .get(*tid)
                    .and_then(|d| d.variants())
                    .map(<[VariantDef]>::to_vec);
                let Some(variants) = variants else {
                    for a in args.unwrap_or(&[]) {
                        self.check_pattern(a, &Ty::Error);
                    }
                    return wrong(self, "only sum types, `Option` and `Result` have variants to match; bind the whole value with a name");
                };
                let Some(v) = variants.iter().find(|v| v.name == vname) else {
                    for a in args.unwrap_or(&[]) {
                        self.check_pattern(a, &Ty::Error);
                    }
                    let tname = self.show(t);
                    let mut d = Diagnostic::error(
                        Code::InvalidPattern,
                        name.span,
                        format!("`{tname}` has no variant `{vname}`"),
                    );
                    if let Some(s) = did_you_mean(vname, variants.iter().map(|v| v.name.as_str())) {
                        d = d.hint(format!("did you mean `{s}`?")).fix(
                            format!("replace with `{s}`"),
                            name.span,
                            s.to_string(),
                        );
                    } else {
                        let all: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                        d = d.hint(format!("its variants are: {}", all.join(", ")));
                    }
                    self.err(d);
                    return false;
                };
                if v.fields.is_empty() && args.is_some_and(|a| !a.is_empty()) {
                    self.err(Diagnostic::error(
                        Code::InvalidPattern,
                        p.span,
                        format!("variant `{vname}` has no fields"),
                    ));
                }
                let tys: Vec<Ty> = v.fields.iter().map(|f| f.ty.clone()).collect();
                sub(self, args, &tys);
                false
            }
            _ => {
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                wrong(
                    self,
                    "constructor patterns match sum types, `Option` and `Result`",
                )
            }
        }
    }
}

fn direct_named(t: &Ty, out: &mut Vec<TypeId>) {
    match t {
        Ty::Named(id) => out.push(*id),
        Ty::Result(inner) => direct_named(inner, out),
        _ => {}
    }
}

/// After a body is checked, gives each `[]`/`None` the element type its
/// surroundings decided (docs/language.md, "Empty lists and None"): the
/// type of a `match`, `if`, block, list, `Some`/`Ok` or list `+` flows into
/// the parts that produce its value, and the two sides of `==` share
/// theirs. Only holes (`Unknown`) are filled; emission relies on it.
fn settle_block(info: &mut ModuleInfo, b: &Block) -> bool {
    let mut changed = false;
    for s in &b.stmts {
        match s {
            Stmt::Let { value, .. } => changed |= settle_expr(info, value),
            Stmt::Assign { target, value, .. } => {
                let tt = info.expr_type(target.id).clone();
                let vt = info.expr_type(value.id).clone();
                changed |= fill_holes_from(info, target, &vt);
                changed |= fill_holes_from(info, value, &tt);
                changed |= settle_expr(info, target);
                changed |= settle_expr(info, value);
            }
            Stmt::Return { value, .. } => {
                if let Some(v) = value {
                    changed |= settle_expr(info, v);
                }
            }
            Stmt::For { iter, body, .. } => {
                changed |= settle_expr(info, iter);
                changed |= settle_block(info, body);
            }
            Stmt::Expr(e) => changed |= settle_expr(info, e),
        }
    }
    changed
}

/// Settles a checked body: [`settle_block`], plus what the uses of each
/// `let`, `for` and pattern binding say about the value it was bound to
/// (`let xs = []` then `f(xs)` with `f(xs: list[int])`: the `[]` holds
/// `int`s), and back, until nothing changes.
fn settle_fn(info: &mut ModuleInfo, body: &Block, var_origins: &[(ExprId, Origin)]) {
    // Each round fills at least one hole or stops; types are small.
    for _ in 0..16 {
        let mut changed = false;
        for (var, origin) in var_origins {
            let vt = info.expr_type(*var).clone();
            let mut wrapped = vt;
            for w in origin.wrap.iter().rev() {
                wrapped = match w {
                    Wrap::List => Ty::List(Box::new(wrapped)),
                    Wrap::Option => Ty::Option(Box::new(wrapped)),
                    Wrap::Result => Ty::Result(Box::new(wrapped)),
                };
            }
            changed |= fill_holes_at(info, origin.expr, &wrapped);
            let mut ot = info.expr_type(origin.expr).clone();
            for w in &origin.wrap {
                ot = match (w, ot) {
                    (Wrap::List, Ty::List(i))
                    | (Wrap::Option, Ty::Option(i))
                    | (Wrap::Result, Ty::Result(i)) => *i,
                    _ => Ty::Unknown,
                };
            }
            changed |= fill_holes_at(info, *var, &ot);
        }
        changed |= settle_block(info, body);
        if !changed {
            break;
        }
    }
}

/// Fills the holes of `e`'s recorded type from `t`.
fn fill_holes_from(info: &mut ModuleInfo, e: &Expr, t: &Ty) -> bool {
    fill_holes_at(info, e.id, t)
}

/// Fills the holes of the recorded type of expression `id` from `t`;
/// returns whether it changed.
fn fill_holes_at(info: &mut ModuleInfo, id: ExprId, t: &Ty) -> bool {
    let Some(slot) = info.expr_types.get_mut(id.0 as usize) else {
        return false;
    };
    if slot.is_concrete() || matches!(slot, Ty::Never | Ty::Error) {
        return false;
    }
    if matches!(t, Ty::Never | Ty::Error | Ty::Unknown) {
        return false;
    }
    let joined = slot.join(t);
    if joined == *slot {
        return false;
    }
    *slot = joined;
    true
}

/// Whether two expressions name the same place (`x` and `x`, `a.b` and `a.b`).
fn same_place(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Var(x), ExprKind::Var(y)) => x == y,
        (ExprKind::Field { base: ba, name: na }, ExprKind::Field { base: bb, name: nb }) => {
            na.name == nb.name && same_place(ba, bb)
        }
        _ => false,
    }
}

fn block_tail(b: &Block) -> Option<&Expr> {
    match b.stmts.last() {
        Some(Stmt::Expr(e)) => Some(e),
        _ => None,
    }
}

fn settle_expr(info: &mut ModuleInfo, e: &Expr) -> bool {
    let t = info.expr_type(e.id).clone();
    let mut changed = false;
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            match op {
                BinaryOp::Add if matches!(t, Ty::List(_)) => {
                    changed |= fill_holes_from(info, lhs, &t);
                    changed |= fill_holes_from(info, rhs, &t);
                }
                BinaryOp::Eq | BinaryOp::NotEq => {
                    let lt = info.expr_type(lhs.id).clone();
                    let rt = info.expr_type(rhs.id).clone();
                    changed |= fill_holes_from(info, lhs, &rt);
                    changed |= fill_holes_from(info, rhs, &lt);
                }
                _ => {}
            }
            changed |= settle_expr(info, lhs);
            changed |= settle_expr(info, rhs);
        }
        ExprKind::List(items) => {
            if let Ty::List(el) = &t {
                for i in items {
                    changed |= fill_holes_from(info, i, el);
                }
            }
            for i in items {
                changed |= settle_expr(info, i);
            }
        }
        ExprKind::Ctor { args, .. } => {
            let args = args.as_deref().unwrap_or(&[]);
            if let (Some(Ctor::Some | Ctor::Ok), Ty::Option(inner) | Ty::Result(inner), Some(a)) =
                (info.ctors.get(&e.id), &t, args.first())
            {
                let inner = (**inner).clone();
                changed |= fill_holes_from(info, &a.value, &inner);
            }
            for a in args {
                changed |= settle_expr(info, &a.value);
            }
        }
        ExprKind::If { cond, then, els } => {
            for b in std::iter::once(then).chain(els.iter()) {
                if let Some(x) = block_tail(b) {
                    changed |= fill_holes_from(info, x, &t);
                }
            }
            changed |= settle_expr(info, cond);
            changed |= settle_block(info, then);
            if let Some(b) = els {
                changed |= settle_block(info, b);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            for a in arms {
                changed |= fill_holes_from(info, &a.body, &t);
            }
            changed |= settle_expr(info, scrutinee);
            for a in arms {
                changed |= settle_expr(info, &a.body);
            }
        }
        ExprKind::Block(b) => {
            if let Some(x) = block_tail(b) {
                changed |= fill_holes_from(info, x, &t);
            }
            changed |= settle_block(info, b);
        }
        ExprKind::Call { args, .. } => {
            for a in args {
                changed |= settle_expr(info, &a.value);
            }
        }
        ExprKind::Record { fields, .. } => {
            for f in fields {
                changed |= settle_expr(info, &f.value);
            }
        }
        ExprKind::Field { base, .. } => changed |= settle_expr(info, base),
        ExprKind::Unary { expr, .. } => changed |= settle_expr(info, expr),
        ExprKind::Poison(parts) => {
            for p in parts {
                changed |= settle_expr(info, p);
            }
        }
        _ => {}
    }
    changed
}

fn fn_decl(module: &Module, item: usize) -> Option<&FnDecl> {
    match module.items.get(item) {
        Some(Item::Fn(f)) => Some(f),
        _ => None,
    }
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

/// Rust spellings people reach for, mapped to the Vox type.
fn rust_type_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "String" | "string" | "Str" | "text" => "str",
        "i64" | "i32" | "u32" | "u64" | "usize" | "Int" | "integer" => "int",
        "f64" | "f32" | "Float" | "number" => "float",
        "Bool" | "boolean" => "bool",
        "Vec" | "Array" | "array" => "list",
        "unit" | "()" => "Unit",
        _ => return None,
    })
}
