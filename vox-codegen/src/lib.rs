//! The Vox compiler.
//!
//! The pipeline: lexer → parser (an untyped AST) → checker (names, types,
//! effects, decorators) → schema derivation and Rust emission. Every stage
//! reports through [`Diagnostic`]. This crate does no I/O: callers hand it
//! source text and get data back.
//!
//! The entry points are few: [`check`] (or [`parse`] then
//! [`Parsed::check`]) gives a [`Checked`] module, which has its
//! [`diagnostics`](Checked::diagnostics), [`emits`](Checked::emit) Rust and
//! derives [`output schemas`](Checked::output_schema); [`fmt::format_source`]
//! formats a file; [`fix::fix_module`] applies the machine-applicable fixes;
//! [`ide`] answers an editor's questions. The lexer, parser, AST, type table
//! and checker are internal.

mod ast;
mod chars;
mod check;
pub mod diagnostic;
pub mod emit;
mod exhaustive;
pub mod fix;
pub mod fmt;
pub mod ide;
pub mod json;
mod lexer;
mod parser;
pub mod schema;
mod slips;
pub mod source;
/// Finding the fixtures' `.vox` files, shared with the integration tests.
#[cfg(test)]
#[path = "../tests/it/support/mod.rs"]
mod test_support;
mod types;

/// Facts the docs state that the tables here decide, for the doc-drift test
/// (tests/tests/it/doc_drift.rs). Not a stable API.
#[doc(hidden)]
pub mod facts {
    use crate::check::{Builtin, Kind};
    use crate::lexer::TokenKind;

    /// The rounding modes of the `div` and `round` builtins
    /// (docs/language.md, "Decimal"), as the runtime names them
    /// (`vox_runtime::__private::decimal::ROUNDING_MODES`; a test holds the
    /// two equal).
    pub const ROUNDING_MODES: [&str; 6] =
        ["half_up", "half_even", "down", "up", "floor", "ceiling"];

    /// Whether `text` is a `Date` literal's text, as the checker judges
    /// `date("…")` (the runtime's `__private::date::is_date` must agree; a
    /// test holds the two equal).
    pub fn is_iso_date(text: &str) -> bool {
        crate::check::is_iso_date(text)
    }

    /// Whether `word` is a Vox keyword (`while`, `break`, `match`, …).
    pub fn is_keyword(word: &str) -> bool {
        crate::lexer::is_keyword(word)
    }

    /// The names of the builtin functions (`len`, `range`, `insert`, …).
    pub fn builtins() -> Vec<&'static str> {
        Builtin::ALL.iter().map(|(n, _)| *n).collect()
    }

    /// The names of the builtin types (`int`, `map`, `Option`, …).
    pub fn builtin_types() -> &'static [&'static str] {
        &crate::types::BUILTIN_TYPE_NAMES
    }

    /// The literals and comments the lexer reads, as messages name them
    /// (`f-string`, `string literal`, …).
    pub fn literals() -> Vec<&'static str> {
        [
            TokenKind::Int,
            TokenKind::Float,
            TokenKind::Str,
            TokenKind::FStr,
            TokenKind::Doc,
        ]
        .iter()
        .map(|k| k.describe())
        .collect()
    }

    /// One row of the slips table.
    #[derive(Debug, Clone, Copy)]
    pub struct SlipRow {
        /// The foreign tokens, separated by spaces (`$a` any lowercase name,
        /// `$T` any uppercase one, `$s` a string literal, `$n` an integer).
        pub pattern: &'static str,
        /// The machine-applicable replacement, when there is one.
        pub fix: Option<&'static str>,
        /// The hint.
        pub hint: &'static str,
    }

    /// The slips table, in order (the first row that matches wins).
    pub fn slips() -> Vec<SlipRow> {
        crate::slips::SLIPS
            .iter()
            .map(|s| SlipRow {
                pattern: s.pattern,
                fix: s.vox.filter(|_| s.sure),
                hint: s.say,
            })
            .collect()
    }

    /// What a builtin's first argument may be (type names: `int`,
    /// `Decimal`, `list`, `map`, …), where the checker takes a fixed set.
    pub fn builtin_accepts(name: &str) -> Option<Vec<&'static str>> {
        names(Builtin::lookup(name)?.accepts()?)
    }

    /// What the elements of the list a builtin takes may be (`sum`, `sort`,
    /// `min`, `max`).
    pub fn builtin_elements(name: &str) -> Option<Vec<&'static str>> {
        names(Builtin::lookup(name)?.elements()?)
    }

    fn names(kinds: &[Kind]) -> Option<Vec<&'static str>> {
        Some(kinds.iter().map(|k| k.name()).collect())
    }
}

pub use diagnostic::{Code, Diagnostic, Severity};
pub use source::{FileId, SourceFile, SourceMap, Span};

/// The result of running the frontend over one module.
#[derive(Debug)]
pub struct Checked {
    pub(crate) sources: SourceMap,
    pub(crate) module: ast::Module,
    pub(crate) info: check::ModuleInfo,
    /// Sorted by file and position.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// The module's files.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// Every diagnostic of the module, sorted by file and position.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The module's files and diagnostics, taken apart.
    pub fn into_parts(self) -> (SourceMap, Vec<Diagnostic>) {
        (self.sources, self.diagnostics)
    }

    /// The Rust code of the module (docs/runtime.md, "Generated code").
    /// Only meaningful for a module without errors.
    pub fn emit(&self, opts: &emit::EmitOptions) -> String {
        emit::emit(&self.module, &self.info, opts)
    }

    /// The program `cargo vox call` runs for one call of the `@ai`
    /// function `function` (docs/runtime.md, "Streaming"): the module
    /// emitted as for a package, and a `main` that takes the arguments as
    /// JSON and prints the call's events. `None` when `function` is not an
    /// `@ai` function. Only meaningful for a module without errors.
    pub fn call_program(&self, function: &str, opts: &emit::EmitOptions) -> Option<String> {
        emit::call_program(&self.module, &self.info, opts, function)
    }

    /// The program `cargo vox eval` runs for the `@ai` function
    /// `function`: the module emitted as for a package, and a `main` that
    /// runs the jobs of its standard input (docs/eval.md). `None` when
    /// `function` is not an `@ai` function. Only meaningful for a module
    /// without errors.
    pub fn eval_program(&self, function: &str, opts: &emit::EmitOptions) -> Option<String> {
        emit::eval_program(&self.module, &self.info, &self.sources, opts, function)
    }

    /// The program `cargo vox batch` runs to apply `check = f` of the
    /// `@ai` function `function` to each value of a batch: the module
    /// emitted as for a package, and a `main` serving checks over standard
    /// input and output (docs/runtime.md, "Bulk runs"). `None` when
    /// `function` has no check. Only meaningful for a module without errors.
    pub fn check_program(&self, function: &str, opts: &emit::EmitOptions) -> Option<String> {
        emit::check_program(&self.module, &self.info, opts, function)
    }

    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }
}

impl Checked {
    /// The strict schema the model is given when a function returns the type
    /// written as `ty` (`Invoice`, `list[LineItem]`, …) in this module.
    pub fn output_schema(&self, ty: &str) -> Result<schema::OutputSchema, String> {
        let expr = parser::parse_type(ty).map_err(|ds| {
            ds.first().map_or_else(
                || format!("`{ty}` is not a type"),
                |d| format!("`{ty}` is not a type: {}", d.message),
            )
        })?;
        let resolved = check::resolve_type(&expr, &self.info.types)?;
        if let Some(path) = self.info.types.map_inside(&resolved) {
            return Err(format!(
                "`{ty}` holds a map ({path}), which strict structured outputs cannot carry, so no `@ai` function can return it (the Vox language guide, \"Maps\": https://github.com/vox-lang/vox-for-cargo/blob/main/docs/language.md#maps)"
            ));
        }
        if let Some(found) = resolved.media_inside(&self.info.types) {
            let a_media = found.media.a_name();
            return Err(if found.steps.is_empty() {
                format!(
                    "`{ty}` is sent to a model, never returned by one, so it has no output schema"
                )
            } else {
                let inward: Vec<&str> = found.steps.iter().rev().map(String::as_str).collect();
                format!(
                    "`{ty}` holds {a_media} ({}): a model cannot return media, so it has no output schema",
                    inward.join(", in ")
                )
            });
        }
        Ok(schema::output_schema(&resolved, &self.info.types))
    }
}

/// An `@ai` function of a checked module, with what generated code
/// declares for it (docs/runtime.md, "Generated code").
#[derive(Debug, Clone, PartialEq)]
pub struct AiFunctionDecl {
    pub name: String,
    /// The doc comment, trimmed: the instruction the model is given.
    pub instruction: String,
    /// The strict schema of the return type.
    pub output: schema::OutputSchema,
    pub model: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// At least 1.
    pub max_iterations: u32,
    /// `fallback = [...]`; `Some(vec![])` means none.
    pub fallback: Option<Vec<String>>,
    /// `check = f`: the Vox function that checks each value.
    pub check: Option<String>,
    /// The parameters, in order, and how each is sent (docs/language.md,
    /// "Images, documents and audio").
    pub params: Vec<AiParam>,
    /// The parameter holding the conversation so far (`list[Message]`).
    pub history: Option<String>,
    /// The worked examples: the arguments' JSON object (the history left
    /// out) and the answer's JSON, as sent.
    pub examples: Vec<(String, String)>,
    /// The tools the model may call.
    pub tools: Vec<AiToolDecl>,
    /// `max_steps = N`.
    pub max_steps: Option<u32>,
}

/// What the model is told a tool does: its function's doc comment on one
/// line.
pub(crate) fn tool_description(module: &ast::Module, f: &check::FnInfo) -> String {
    module
        .fn_decl(f.item)
        .map(|d| {
            d.docs
                .iter()
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

/// A tool of an `@ai` function as the model is told of it.
#[derive(Debug, Clone, PartialEq)]
pub struct AiToolDecl {
    pub name: String,
    /// The tool's doc comment.
    pub description: String,
    /// The strict schema of its arguments (a JSON object's text).
    pub parameters: String,
    /// Implemented in Rust by the crate (`@rust`).
    pub rust: bool,
}

/// A parameter of an `@ai` function and how its argument reaches the model.
#[derive(Debug, Clone, PartialEq)]
pub struct AiParam {
    pub name: String,
    /// The Vox type, as written: `Image`, `list[Page]`.
    pub ty: String,
    /// The media kinds sent as parts of the request (`image`, `document`,
    /// `audio`); empty when the value is only JSON in the arguments text.
    pub parts: Vec<&'static str>,
    /// How, in words: `an image part; …`, `JSON in the arguments text`.
    pub sent_as: String,
}

impl Checked {
    /// Whether the module has a script's entry point: `fn main()`, without
    /// parameters and not a `@test`.
    pub fn has_main(&self) -> bool {
        self.info
            .fn_named("main")
            .is_some_and(|f| f.params.is_empty() && !f.test)
    }

    /// Whether the module declares a function called `name`.
    pub fn has_function(&self, name: &str) -> bool {
        self.info.fns.iter().any(|f| f.name == name)
    }

    /// The module's `@ai` functions, in declaration order (those whose
    /// return type has no schema, which is an error, are left out).
    pub fn ai_functions(&self) -> Vec<AiFunctionDecl> {
        self.info
            .fns
            .iter()
            .filter_map(|f| {
                let ai = f.ai.as_ref()?;
                let output = self
                    .info
                    .output_schemas
                    .iter()
                    .find(|(ty, _)| *ty == f.ret)
                    .map(|(_, s)| s.clone())?;
                let instruction = match self.module.items.get(f.item) {
                    Some(ast::Item::Fn(d)) => d
                        .docs
                        .iter()
                        .map(|l| l.trim_end())
                        .collect::<Vec<_>>()
                        .join("\n")
                        .trim()
                        .to_owned(),
                    _ => String::new(),
                };
                let fi = self.info.fns.iter().position(|g| std::ptr::eq(g, f))?;
                let tools = ai
                    .tools
                    .iter()
                    .filter_map(|t| {
                        let ti = self.info.fns.iter().position(|g| g.name == t.name)?;
                        let (_, parameters) =
                            self.info.tool_schemas.iter().find(|(i, _)| *i == ti)?;
                        let description = tool_description(&self.module, &self.info.fns[ti]);
                        Some(AiToolDecl {
                            name: t.name.clone(),
                            description,
                            parameters: parameters.clone(),
                            rust: self.info.fns[ti].rust,
                        })
                    })
                    .collect();
                Some(AiFunctionDecl {
                    history: self.info.history_param(fi).map(str::to_owned),
                    examples: self
                        .info
                        .examples
                        .iter()
                        .filter(|e| e.function == fi)
                        .map(|e| (e.arguments.clone(), e.output.clone()))
                        .collect(),
                    tools,
                    max_steps: ai.max_steps,
                    name: f.name.clone(),
                    instruction,
                    output,
                    model: ai.model.clone(),
                    temperature: ai.temperature,
                    max_tokens: ai.max_tokens,
                    max_iterations: ai.max_iterations.max(1),
                    fallback: ai.fallback.clone(),
                    check: ai.check.as_ref().map(|c| c.name.clone()),
                    params: f
                        .params
                        .iter()
                        .map(|(name, ty)| {
                            let (parts, sent_as) =
                                if self.info.history_param(fi) == Some(name.as_str()) {
                                    (
                                        Vec::new(),
                                        "the conversation so far: one turn per message, \
                                         before the other arguments"
                                            .to_owned(),
                                    )
                                } else {
                                    schema::argument_sending(ty, &self.info.types)
                                };
                            AiParam {
                                name: name.clone(),
                                ty: ty.display(&self.info.types),
                                parts,
                                sent_as,
                            }
                        })
                        .collect(),
                })
            })
            .collect()
    }
}

/// A module parsed but not checked yet: [`parse`], then [`Parsed::check`]
/// (what [`check`] does in one step, for callers that time the phases).
#[derive(Debug)]
pub struct Parsed {
    module: ast::Module,
    diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// The lexer's and parser's diagnostics.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Checks the module parsed from `sources` (the same map [`parse`] was given).
    pub fn check(self, sources: SourceMap) -> Checked {
        let mut checked = self.check_unguarded(sources);
        fix::guard_warning_fixes(&checked.sources, &mut checked.diagnostics, true);
        checked
    }

    /// [`Parsed::check`] without trying the fixes of warnings (what the
    /// trial of each of those fixes runs).
    fn check_unguarded(self, sources: SourceMap) -> Checked {
        let Parsed {
            module,
            mut diagnostics,
        } = self;
        let info = check::check_module(&module, &sources, &mut diagnostics);
        fix::suggest(&sources, &module, &info, &mut diagnostics);
        diagnostic::sort(&mut diagnostics);
        Checked {
            sources,
            module,
            info,
            diagnostics,
        }
    }
}

/// Parses every file of `sources` into one module (no checking).
pub fn parse(sources: &SourceMap) -> Parsed {
    let (module, diagnostics) = parse_module(sources);
    Parsed {
        module,
        diagnostics,
    }
}

fn parse_module(sources: &SourceMap) -> (ast::Module, Vec<Diagnostic>) {
    let mut module = ast::Module::default();
    let mut diagnostics = Vec::new();
    for (id, file) in sources.files() {
        if let Some(at) = file.invalid_utf8_at {
            diagnostics.push(
                Diagnostic::error(
                    Code::InvalidUtf8,
                    Span::new(id, at, at + '\u{FFFD}'.len_utf8()),
                    "file is not valid UTF-8",
                )
                .hint("save the file as UTF-8; the invalid bytes were replaced with U+FFFD"),
            );
        }
        let lexed = lexer::lex(id, &file.text);
        diagnostics.extend(lexed.diagnostics.iter().cloned());
        let lexed = lexer::Lexed {
            diagnostics: Vec::new(),
            ..lexed
        };
        parser::parse_into(&mut module, lexed, &file.text, &mut diagnostics);
    }
    (module, diagnostics)
}

/// Runs the whole frontend (parse, then check) over one module.
pub fn check(sources: SourceMap) -> Checked {
    parse(&sources).check(sources)
}

/// [`check`] for a build script: the same diagnostics, but the fixes that
/// could hide a warning (docs/diagnostics.md, "Fixes") are not tried on
/// copies of the module, so a build with warnings checks its module once;
/// each is offered as a suggestion instead (`cargo vox fix` tries them).
pub fn check_for_build(sources: SourceMap) -> Checked {
    let mut checked = parse(&sources).check_unguarded(sources);
    fix::guard_warning_fixes(&checked.sources, &mut checked.diagnostics, false);
    checked
}
