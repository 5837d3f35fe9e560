//! The Vox compiler.
//!
//! The pipeline is visible in the module list: [`lexer`] → [`parser`] (an
//! untyped [`ast`]) → [`check`] (names, types, effects, decorators) →
//! schema derivation and Rust emission. Every stage reports through
//! [`diagnostic::Diagnostic`]. This crate does no I/O: callers hand it
//! source text and get data back.

pub mod ast;
pub mod chars;
pub mod check;
pub mod diagnostic;
pub mod emit;
pub mod exhaustive;
pub mod fix;
pub mod fmt;
pub mod ide;
pub mod json;
pub mod lexer;
pub mod parser;
pub mod schema;
mod slips;
pub mod source;
pub mod types;

pub use diagnostic::{Code, Diagnostic, Severity};
pub use source::{FileId, SourceFile, SourceMap, Span};

/// The result of running the frontend over one module.
#[derive(Debug)]
pub struct Checked {
    pub sources: SourceMap,
    pub module: ast::Module,
    pub info: check::ModuleInfo,
    /// Sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
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
                "`{ty}` holds a map ({path}), which strict structured outputs cannot carry, so no `@ai` function can return it (docs/language.md, \"Maps\")"
            ));
        }
        Ok(schema::output_schema(&resolved, &self.info.types))
    }
}

/// Parses every file of `sources` into one module (no checking).
pub fn parse(sources: &SourceMap) -> (ast::Module, Vec<Diagnostic>) {
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
    let (module, mut diagnostics) = parse(&sources);
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
