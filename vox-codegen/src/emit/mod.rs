//! Rust emission: a checked module → one Rust source file, the
//! `vox_generated.rs` that vox-build writes (README, "vox-build").
//!
//! The output is plain Rust that the user's crate `include!`s: `pub struct`
//! and `pub enum` types with serde derives (through vox-runtime's re-export,
//! so users need no serde dependency), plain `pub fn`s for pure functions,
//! `pub async fn … -> Result<T, vox_runtime::Error>` for functions with the
//! `net` effect, `@ai` functions that hand their strict schema and their
//! compiled body (the offline fixture) to `vox_runtime::__private::call_ai`, and `@test`
//! functions in a `#[cfg(test)]` module.
//!
//! Emission is deterministic and never trusts a name or literal to be safe
//! Rust: identifiers are escaped ([`rust_ident`]), text goes through
//! [`rust_str`], and std items are always named by absolute path so user
//! types called `String` or `Vec` cannot capture them.
//!
//! Values follow Vox's value semantics: reading a variable or field clones
//! it (unless the type is `Copy`), so the emitted code never fights the
//! borrow checker.
//!
//! There is one `Emitter`, spread over this folder: `items` (type
//! definitions, Rust types, schema statics), `functions`, `stmt` (statements
//! and blocks), `expr`, `call` (calls, builtins, checked arithmetic),
//! `pattern` (`match`), `show` (how `str` and `print` write values), `names` (identifier and literal escaping) and
//! `walk` (expression walks). This file holds the entry point, the
//! `Emitter` state and small text helpers.

mod call;
mod expr;
mod functions;
mod items;
mod lambda;
mod names;
mod pattern;
mod show;
mod stmt;
mod walk;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::ast::*;
use crate::check::ModuleInfo;
use crate::schema;
use crate::types::{Ty, TypeId};

use functions::recursive_net_fns;
use items::boxed_fields;

pub use names::{rust_ident, rust_str, rust_type_ident};
pub(crate) use walk::calls_anything;

/// Version of the contract between generated code and vox-runtime; the
/// generated code asserts it at compile time (see `vox_runtime::__private::assert_contract`).
pub const CONTRACT_VERSION: u32 = 9;

#[derive(Debug, Clone, Default)]
pub struct EmitOptions {
    /// Emit `fn main` as the program's `main` (the script lane). Otherwise
    /// it becomes `pub fn vox_main`.
    pub script: bool,
    /// The module is built without its crate (a script, or a program
    /// `cargo vox` builds from it): a `@rust` tool is a stub whose calls
    /// fail with a message saying so.
    pub standalone: bool,
    /// Source file names for the header comment.
    pub source_names: Vec<String>,
    /// The cassette directory `@ai` functions replay in a test build
    /// (docs/runtime.md, "Tests"); `None`: the package's `vox/cassettes`.
    pub cassettes: Option<String>,
}

/// Emits Rust for a module that checked without errors.
pub(crate) fn emit(module: &Module, info: &ModuleInfo, opts: &EmitOptions) -> String {
    let mut e = Emitter::new(module, info, opts);
    e.run();
    e.out
}

impl<'a> Emitter<'a> {
    fn new(module: &'a Module, info: &'a ModuleInfo, opts: &'a EmitOptions) -> Emitter<'a> {
        Emitter {
            module,
            info,
            opts,
            out: String::new(),
            boxed: boxed_fields(info),
            schemas: Vec::new(),
            tmp: 0,
            current_fn: String::new(),
            current: usize::MAX,
            in_test: false,
            try_call: false,
            recursive_net: recursive_net_fns(info),
        }
    }
}

const FN_ALLOWS: &str = "#[allow(while_true, unused_variables, unused_mut, unused_assignments, unused_parens, unused_braces, unreachable_code, unreachable_patterns, unconditional_recursion, non_snake_case, dead_code, unused_comparisons, clippy::all)]";

/// Vox names types, variants and fields as the user wrote them (not
/// necessarily Rust's UpperCamelCase/snake_case), and a binary crate may
/// leave some of them unused (docs/language.md, "Names in the generated Rust").
const TYPE_ALLOWS: &str =
    "#[allow(non_camel_case_types, non_snake_case, dead_code, clippy::all)]\n";

struct Emitter<'a> {
    module: &'a Module,
    info: &'a ModuleInfo,
    opts: &'a EmitOptions,
    out: String,
    /// (type, variant index or usize::MAX for records, field name) stored
    /// boxed, with how many `Option`/`Result` layers wrap the box.
    boxed: HashMap<(TypeId, usize, String), usize>,
    /// Structured outputs: (type, static name, schema).
    schemas: Vec<(Ty, String, schema::OutputSchema)>,
    tmp: usize,
    /// The Vox name of the function being emitted, for run-time error messages.
    current_fn: String,
    /// Index of the function being emitted.
    current: usize,
    /// Whether it is emitted inside `mod vox_tests` (user functions are `super::f`).
    in_test: bool,
    /// The next user-function call is the operand of `try`: its outcome
    /// becomes a `Result` value instead of propagating with `?`.
    try_call: bool,
    /// For each `net` function, the `net` functions it can reach through calls
    /// (calls that can come back to the caller are boxed: async recursion).
    recursive_net: HashMap<usize, HashSet<usize>>,
}

/// How the value of a block's last expression is used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Dropped: every statement ends with `;`.
    Discard,
    /// The block's value.
    Value,
}

/// Whether code runs inside a `Result<_, vox_runtime::Error>` async context.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Pure,
    Fallible,
}

/// `text` fit for a `//` comment: line breaks, other control characters
/// and the invisible format characters rustc refuses in comments (bidi
/// overrides, deny-by-default `text_direction_codepoint_in_comment`) are
/// written as `\u{…}`, so a file name cannot end the comment or fail the
/// build.
fn comment_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let invisible = matches!(
            c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}'
        );
        if c.is_control() || invisible {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

impl<'a> Emitter<'a> {
    fn run(&mut self) {
        let _ = writeln!(
            self.out,
            "// @generated by vox-build {} from Vox sources. Do not edit.",
            env!("CARGO_PKG_VERSION")
        );
        for name in &self.opts.source_names {
            let _ = writeln!(self.out, "//   {}", comment_safe(name));
        }
        let _ = writeln!(
            self.out,
            "\nconst _: () = ::vox_runtime::__private::assert_contract({CONTRACT_VERSION});\n"
        );
        for id in self.info.types.ids() {
            self.type_def(id);
            self.show_impl(id);
        }
        for id in self.partial_ids() {
            self.partial_type_def(id);
        }
        self.collect_schemas();
        for (_, static_name, s) in &self.schemas {
            let _ = writeln!(
                self.out,
                "#[doc(hidden)]\n#[allow(non_upper_case_globals)]\npub static {static_name}: ::vox_runtime::__private::OutputSchema = ::vox_runtime::__private::OutputSchema::new({}, {}, {});\n",
                rust_str(&s.name),
                rust_str(&s.schema.to_compact()),
                s.wrapped
            );
        }
        for ci in 0..self.info.consts.len() {
            self.constant(ci);
        }
        self.tool_wrappers();
        let mut tests = Vec::new();
        for (i, f) in self.info.fns.iter().enumerate() {
            if f.test {
                tests.push(i);
                continue;
            }
            self.function(i);
        }
        if !tests.is_empty() {
            self.out.push_str("#[cfg(test)]\n#[allow(clippy::items_after_test_module)]\nmod vox_tests {\n    #[allow(unused_imports)]\n    use super::*;\n\n");
            for i in tests {
                let text = self.test_function(i);
                for line in text.lines() {
                    if line.is_empty() {
                        self.out.push('\n');
                    } else {
                        let _ = writeln!(self.out, "    {line}");
                    }
                }
            }
            self.out.push_str("}\n");
        }
    }
}

/// An expression in the head of `if`, `match` or `for`, where Rust does not
/// allow a struct literal (a variant constructor) outside parentheses.
fn head(e: String) -> String {
    if e.contains('{') {
        format!("({e})")
    } else {
        e
    }
}

fn ind(depth: usize) -> String {
    "    ".repeat(depth)
}

/// The type with its holes (`Unknown`, from `[]` or `None` alone) filled
/// with `Unit`.
fn fill_holes(t: &Ty) -> Ty {
    match t {
        Ty::Unknown | Ty::Error => Ty::Unit,
        Ty::List(i) => Ty::List(Box::new(fill_holes(i))),
        Ty::Map(i) => Ty::Map(Box::new(fill_holes(i))),
        Ty::Option(i) => Ty::Option(Box::new(fill_holes(i))),
        Ty::Result(i) => Ty::Result(Box::new(fill_holes(i))),
        t => t.clone(),
    }
}

/// Whether an expression of this type leaves a value that must be dropped.
fn produces_value(t: &Ty) -> bool {
    !matches!(t, Ty::Unit | Ty::Never | Ty::Error | Ty::Unknown)
}

fn is_copy(t: &Ty) -> bool {
    matches!(t, Ty::Int | Ty::Float | Ty::Bool | Ty::Unit | Ty::Never)
}

fn doc_attrs(out: &mut String, docs: &[String], pad: &str) {
    for d in docs {
        let _ = writeln!(
            out,
            "{pad}#[doc = {}]",
            rust_str(&format!(" {}", d.trim_end()))
        );
    }
}

#[cfg(test)]
mod comment_tests {
    use super::comment_safe;

    #[test]
    fn file_names_stay_inside_their_comment() {
        for c in (0u32..0x20)
            .chain([
                0x7f, 0x85, 0x61c, 0x200e, 0x2028, 0x2029, 0x202e, 0x2066, 0xfeff,
            ])
            .filter_map(char::from_u32)
        {
            let safe = comment_safe(&format!("a{c}b.vox"));
            assert_eq!(safe, format!("a\\u{{{:x}}}b.vox", u32::from(c)));
        }
        assert_eq!(comment_safe("src/é \"q\" \\x.vox"), "src/é \"q\" \\x.vox");
    }
}

#[cfg(test)]
mod literal_tests;

/// The Rust program `cargo vox call` runs to call the `@ai` function
/// `function` once: the module (as a package emits it) in `mod
/// vox_module`, and a `main` that reads the arguments as a JSON object and
/// runs `<function>_stream` through vox-runtime's `__private::call_main`,
/// which prints the events. `None` when `function` is not an `@ai`
/// function.
pub(crate) fn call_program(
    module: &Module,
    info: &ModuleInfo,
    opts: &EmitOptions,
    function: &str,
) -> Option<String> {
    stream_program(
        module,
        info,
        opts,
        function,
        "call_main",
        &format!("one call of `{function}`"),
        "vox_call_main",
        "",
    )
}

/// A program whose `main` hands vox-runtime's `__private::{runner}` a
/// closure starting the `@ai` function `function`'s `_stream_with` from
/// JSON arguments and per-call options (then `more`, the runner's further
/// arguments). `None` when `function` is not an `@ai` function.
#[allow(clippy::too_many_arguments)]
fn stream_program(
    module: &Module,
    info: &ModuleInfo,
    opts: &EmitOptions,
    function: &str,
    runner: &str,
    what: &str,
    entry: &str,
    more: &str,
) -> Option<String> {
    let f = info.fns.iter().find(|f| f.name == function)?;
    f.ai.as_ref()?;
    let args: String = f
        .params
        .iter()
        .map(|(name, _)| {
            format!(
                "\n            ::vox_runtime::__private::call_arg(vox_args, {})?,",
                names::rust_str(name)
            )
        })
        .collect();
    let body = format!(
        "::vox_runtime::__private::{runner}(|vox_args: &::vox_runtime::serde_json::Value, vox_options: &::vox_runtime::CallOptions| {{\n        \
         ::std::result::Result::Ok(self::{}(vox_options,{args}\n        ))\n    }}{more})",
        names::rust_ident(&format!("{function}_stream_with"))
    );
    Some(program(module, info, opts, what, entry, &body))
}

/// The Rust program `cargo vox eval` runs for the `@ai` function
/// `function`: the module (as a package emits it) in `mod vox_module`, and
/// a `main` that runs the jobs of its standard input through the
/// function's `_stream_with` (vox-runtime's `__private::eval_main`).
/// `None` when `function` is not an `@ai` function.
pub(crate) fn eval_program(
    module: &Module,
    info: &ModuleInfo,
    sources: &crate::source::SourceMap,
    opts: &EmitOptions,
    function: &str,
) -> Option<String> {
    let f = info.fns.iter().find(|f| f.name == function)?;
    let cases = vox_cases(module, info, sources, opts, function);
    // The checks a case may name: functions taking the value (and the
    // expected value) of the return type and returning `list[str]`.
    let problems = Ty::List(Box::new(Ty::Str));
    let mut names = String::new();
    let mut arms = String::new();
    for c in &info.fns {
        if c.test
            || c.ret != problems
            || c.params.is_empty()
            || c.params.len() > 2
            || c.params.iter().any(|(_, t)| *t != f.ret)
        {
            continue;
        }
        let name = names::rust_str(&c.name);
        let _ = write!(names, "({name}, {}), ", c.params.len());
        let values = if c.params.len() == 1 {
            "::vox_runtime::__private::eval_value(vox_value)?"
        } else {
            "::vox_runtime::__private::eval_value(vox_value)?, ::vox_runtime::__private::eval_value(vox_expected)?"
        };
        let call = format!("self::{}({values})", names::rust_ident(&c.name));
        let call = if c.net {
            format!("{call}.await")
        } else {
            format!("::std::result::Result::Ok({call})")
        };
        let _ = write!(arms, "\n                {name} => {call},");
    }
    let more = format!(
        ",\n        ::std::vec![{cases}],\n        &[{names}],\n        \
         |vox_check: &str, vox_value: ::vox_runtime::serde_json::Value, vox_expected: ::vox_runtime::serde_json::Value| -> ::vox_runtime::__private::CheckFuture {{\n            \
         let vox_check = vox_check.to_owned();\n            \
         ::std::boxed::Box::pin(async move {{\n                \
         match vox_check.as_str() {{{arms}\n                \
         other => ::std::result::Result::Err(::vox_runtime::__private::no_check(other)),\n            \
         }}\n            }})\n        }}"
    );
    stream_program(
        module,
        info,
        opts,
        function,
        "eval_main",
        &format!("the evaluation of `{function}`"),
        "vox_eval_main",
        &more,
    )
}

/// The cases of `function` written in Vox (docs/eval.md, "Cases written
/// in Vox"): each `assert_eq(function(args…), expected)` statement of an
/// `@test`'s body whose arguments and expected value use no local and call
/// no network function (literals, constructors, calls of pure functions),
/// as the Rust expressions of `__private::EvalCase`s, labelled with the
/// statement's file and line.
fn vox_cases(
    module: &Module,
    info: &ModuleInfo,
    sources: &crate::source::SourceMap,
    opts: &EmitOptions,
    function: &str,
) -> String {
    let Some(f) = info.fns.iter().find(|f| f.name == function) else {
        return String::new();
    };
    let mut emitter = Emitter::new(module, info, opts);
    let mut out = String::new();
    for (ti, t) in info.fns.iter().enumerate().filter(|(_, t)| t.test) {
        let Some(d) = module.fn_decl(t.item) else {
            continue;
        };
        for stmt in &d.body.stmts {
            let Stmt::Expr(e) = stmt else { continue };
            let ExprKind::Call { callee, args } = &e.kind else {
                continue;
            };
            if callee.name != "assert_eq" || args.len() != 2 {
                continue;
            }
            let ExprKind::Call {
                callee: called,
                args: call_args,
            } = &args[0].value.kind
            else {
                continue;
            };
            if called.name != function || call_args.len() != f.params.len() {
                continue;
            }
            let mut constant = true;
            for a in call_args.iter().map(|a| &a.value).chain([&args[1].value]) {
                walk_expr(a, &mut |x| match &x.kind {
                    ExprKind::Var(_) | ExprKind::Try(_) | ExprKind::Error | ExprKind::Poison(_) => {
                        constant = false
                    }
                    ExprKind::Call { callee, .. }
                        if info
                            .fns
                            .iter()
                            .any(|g| g.name == callee.name && (g.net || g.test)) =>
                    {
                        constant = false
                    }
                    _ => {}
                });
            }
            if !constant {
                continue;
            }
            emitter.current = ti;
            emitter.current_fn = t.name.clone();
            emitter.in_test = false;
            let mut fields = String::new();
            for (i, a) in call_args.iter().enumerate() {
                let name = match &a.name {
                    Some(n) => n.name.clone(),
                    None => f.params[i].0.clone(),
                };
                let value = emitter.expr(&a.value, Ctx::Pure, 3, Tail::Value);
                let _ = write!(
                    fields,
                    "({}, ::vox_runtime::__private::eval_json(&({value}))), ",
                    names::rust_str(&name)
                );
            }
            let expected = emitter.expr(&args[1].value, Ctx::Pure, 3, Tail::Value);
            let file = sources.get(e.span.file);
            let line = file.line_col(e.span.start as usize).line;
            let label = format!("{}:{line}", file.name);
            // What the `@test` prints when the assertion fails.
            let message = format!(
                "assert_eq({}, {}) failed at {}",
                emitter.source_of(&args[0].value),
                emitter.source_of(&args[1].value),
                emitter.site(e)
            );
            let _ = write!(
                out,
                "\n            ::vox_runtime::__private::EvalCase::new({}, {}, &[{fields}], ::vox_runtime::__private::eval_json(&({expected}))),",
                names::rust_str(&label),
                names::rust_str(&message)
            );
        }
    }
    out
}

/// The Rust program `cargo vox batch` runs beside a batch of the `@ai`
/// function `function`, whose `check = f` is Vox code the tool cannot run
/// itself: the module (as a package emits it) in `mod vox_module`, and a
/// `main` that reads one JSON value of the function's return type per
/// line of standard input and writes the check's problems for it as one
/// line of standard output (vox-runtime's `__private::serve_checks`).
/// `None` when `function` is not an `@ai` function with a check.
pub(crate) fn check_program(
    module: &Module,
    info: &ModuleInfo,
    opts: &EmitOptions,
    function: &str,
) -> Option<String> {
    let f = info.fns.iter().find(|f| f.name == function)?;
    let check = f.ai.as_ref()?.check.as_ref()?;
    let ret = Emitter::new(module, info, opts).rust_type(&f.ret);
    let body = format!(
        "::vox_runtime::__private::serve_checks(|vox_value: {ret}| self::{}(vox_value))",
        names::rust_ident(&check.name)
    );
    Some(program(
        module,
        info,
        opts,
        &format!("the check of `{function}` for a batch run"),
        "vox_serve_checks",
        &body,
    ))
}

/// A program made of the module (emitted as a package emits it) in
/// `mod vox_module`, with `entry` running `body` there and `main` calling
/// it; `what` names it in the header comment.
fn program(
    module: &Module,
    info: &ModuleInfo,
    opts: &EmitOptions,
    what: &str,
    entry: &str,
    body: &str,
) -> String {
    let opts = EmitOptions {
        script: false,
        ..opts.clone()
    };
    let code = emit(module, info, &opts);
    format!(
        "// Generated by cargo vox: {what}.\n\
         #[allow(unused_imports, dead_code, unused_macros, clippy::all)]\n\
         mod vox_module {{\n{code}\n\
         {FN_ALLOWS}\n\
         pub fn {entry}() {{\n    {body}\n}}\n}}\n\n\
         fn main() {{\n    vox_module::{entry}()\n}}\n"
    )
}
