//! Functions: signatures (`async` and fallible for the `net` effect), `@ai`
//! functions handing their schema to vox-runtime, `fn main`, `@test`
//! functions, and bodies.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::ast::*;
use crate::check::{FnInfo, ModuleInfo};
use crate::types::Ty;

use super::names::{float_lit, rust_ident, rust_str};
use super::{doc_attrs, ind, Ctx, Emitter, Tail, FN_ALLOWS};

impl Emitter<'_> {
    fn params(&self, f: &FnInfo) -> String {
        f.params
            .iter()
            .map(|(n, t)| format!("{}: {}", rust_ident(n), self.rust_type(t)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn function(&mut self, idx: usize) {
        let f = &self.info.fns[idx];
        let Some(d) = self.module.fn_decl(f.item) else {
            return;
        };
        if d.external {
            self.rust_tool(idx);
            return;
        }
        self.current_fn = f.name.clone();
        self.current = idx;
        self.in_test = false;
        let mut out = String::new();
        doc_attrs(&mut out, &d.docs, "");
        out.push_str(FN_ALLOWS);
        out.push('\n');
        let name = rust_ident(&f.name);
        let params = self.params(f);
        let ret = self.rust_type(&f.ret);
        // `fn main` is the program's entry point, with or without
        // `@uses(net)`: never an `async fn` (docs/language.md, "Entry points and recursion").
        if f.name == "main" {
            let needs_async = f.net || self.calls_net(idx);
            let fname = if self.opts.script {
                "main".to_string()
            } else {
                "vox_main".to_string()
            };
            let vis = if self.opts.script { "" } else { "pub " };
            if needs_async && self.opts.script {
                // A script's `main`: a failure it does not handle is one
                // readable line on stderr (the runtime's redacted message,
                // not a Debug dump) and exit status 1.
                out.push_str("fn main() -> ::std::process::ExitCode {\n");
                out.push_str("    let vox_outcome: ::std::result::Result<(), ::vox_runtime::Error> = ::vox_runtime::block_on(async move {\n");
                out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 2));
                out.push_str("    });\n");
                out.push_str("    match vox_outcome {\n        ::std::result::Result::Ok(()) => ::std::process::ExitCode::SUCCESS,\n        ::std::result::Result::Err(e) => {\n            ::std::eprintln!(\"error: {e}\");\n            ::std::process::ExitCode::FAILURE\n        }\n    }\n}\n\n");
            } else if needs_async {
                let _ = writeln!(
                    out,
                    "{vis}fn {fname}() -> ::std::result::Result<(), ::vox_runtime::Error> {{"
                );
                let _ = writeln!(out, "    ::vox_runtime::block_on(async move {{");
                out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 2));
                out.push_str("    })\n}\n\n");
            } else {
                let _ = writeln!(out, "{vis}fn {fname}() {{");
                out.push_str(&self.fn_body(d, &f.ret, Ctx::Pure, 1));
                out.push_str("}\n\n");
            }
            self.out.push_str(&out);
            return;
        }
        if !f.net {
            let arrow = if matches!(f.ret, Ty::Unit) {
                String::new()
            } else {
                format!(" -> {ret}")
            };
            let _ = writeln!(out, "pub fn {name}({params}){arrow} {{");
            out.push_str(&self.fn_body(d, &f.ret, Ctx::Pure, 1));
            out.push_str("}\n\n");
            self.out.push_str(&out);
            return;
        }
        if f.ai.is_some() {
            // `f` is `f_with` at the compiled settings (docs/runtime.md,
            // "Options").
            let _ = writeln!(out, "pub async fn {name}({params}) -> ::std::result::Result<{ret}, ::vox_runtime::Error> {{");
            let names: Vec<String> = f.params.iter().map(|(n, _)| rust_ident(n)).collect();
            let _ = writeln!(
                out,
                "    {}(&::vox_runtime::CallOptions::DEFAULT{}).await\n}}\n",
                rust_ident(&format!("{}_with", f.name)),
                names.iter().map(|n| format!(", {n}")).collect::<String>()
            );
            let _ = writeln!(
                out,
                "/// `{}` with per-call options: a model (a `provider:` prefix allowed),\n\
                 /// fallbacks, temperature, completion limit, attempts, request timeout,\n\
                 /// token budget; unset ones keep the compiled settings (vox-runtime:\n\
                 /// docs/runtime.md, \"Options\").",
                f.name
            );
            out.push_str(FN_ALLOWS);
            out.push('\n');
            let _ = writeln!(
                out,
                "pub async fn {}(VOX_OPTIONS: &::vox_runtime::CallOptions{}{params}) -> ::std::result::Result<{ret}, ::vox_runtime::Error> {{",
                rust_ident(&format!("{}_with", f.name)),
                if params.is_empty() { "" } else { ", " }
            );
        } else {
            let _ = writeln!(out, "pub async fn {name}({params}) -> ::std::result::Result<{ret}, ::vox_runtime::Error> {{");
        }
        if let Some(ai) = &f.ai {
            let schema_static = self
                .schemas
                .iter()
                .find(|(t, _, _)| *t == f.ret)
                .map(|(_, s, _)| s.clone())
                .unwrap_or_default();
            let instruction = d
                .docs
                .iter()
                .map(|l| l.trim_end())
                .collect::<Vec<_>>()
                .join("\n");
            let mut ai_static = String::new();
            let _ = writeln!(
                ai_static,
                "    static VOX_AI: ::vox_runtime::__private::AiFunction = ::vox_runtime::__private::AiFunction::new("
            );
            let _ = writeln!(ai_static, "        {},", rust_str(&f.name));
            let _ = writeln!(ai_static, "        {},", rust_str(instruction.trim()));
            let _ = writeln!(ai_static, "        &{schema_static},");
            ai_static.push_str("    )");
            if let Some(model) = &ai.model {
                let _ = write!(ai_static, "\n    .with_model({})", rust_str(model));
            }
            if let Some(temperature) = ai.temperature {
                let _ = write!(
                    ai_static,
                    "\n    .with_temperature({})",
                    float_lit(temperature)
                );
            }
            if let Some(tokens) = ai.max_tokens {
                let _ = write!(ai_static, "\n    .with_max_tokens({tokens})");
            }
            if let Some(fallback) = &ai.fallback {
                let list: Vec<String> = fallback.iter().map(|m| rust_str(m)).collect();
                let _ = write!(ai_static, "\n    .with_fallback(&[{}])", list.join(", "));
            }
            let _ = write!(
                ai_static,
                "\n    .with_max_iterations({})",
                ai.max_iterations.max(1)
            );
            self.conversation_settings(idx, ai, &mut ai_static);
            // Compiled under `cfg(test)`, the function's calls never reach
            // a provider by accident, and replay the package's cassettes
            // (docs/runtime.md, "Tests").
            let dir = match &self.opts.cassettes {
                Some(dir) => rust_str(dir),
                None => "::std::concat!(::std::env!(\"CARGO_MANIFEST_DIR\"), \"/vox/cassettes\")"
                    .to_owned(),
            };
            let _ = write!(
                ai_static,
                "\n    .in_test_build(if cfg!(test) {{\n        ::std::option::Option::Some({dir})\n    }} else {{\n        ::std::option::Option::None\n    }});\n",
            );
            out.push_str(&ai_static);
            out.push_str("    let VOX_ARGS = ::vox_runtime::__private::Args::new()");
            for (p, _) in &f.params {
                let _ = write!(out, "\n        .arg({}, &{})?", rust_str(p), rust_ident(p));
            }
            out.push_str(";\n");
            self.argument_categories(f, &mut out);
            match &ai.check {
                // `@ai(check = f)`: the runtime runs `f` on each parsed
                // value (docs/runtime.md, "Checks").
                Some(check) => {
                    out.push_str(
                        "    ::vox_runtime::__private::call_ai_checked_with(&VOX_AI, VOX_OPTIONS, VOX_ARGS, async move {\n",
                    );
                    out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 2));
                    let _ = writeln!(
                        out,
                        "    }}, |vox_value: &{ret}| self::{}(::std::clone::Clone::clone(vox_value)))",
                        rust_ident(&check.name)
                    );
                    out.push_str("    .await\n}\n\n");
                }
                None => {
                    out.push_str(
                        "    ::vox_runtime::__private::call_ai_with(&VOX_AI, VOX_OPTIONS, VOX_ARGS, async move {\n",
                    );
                    out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 2));
                    out.push_str("    })\n    .await\n}\n\n");
                }
            }
            self.batch_entry(
                f,
                &ai_static,
                ai.check.as_ref().map(|c| c.name.as_str()),
                &mut out,
            );
            self.stream_entry(
                f,
                d,
                &ai_static,
                ai.check.as_ref().map(|c| c.name.as_str()),
                &mut out,
            );
        } else {
            out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 1));
            out.push_str("}\n\n");
        }
        self.out.push_str(&out);
    }

    /// The history parameter, worked examples, tools and step limit of the
    /// `@ai` function `fns[idx]` (docs/runtime.md, "Conversations" and
    /// "Tools").
    fn conversation_settings(&self, idx: usize, ai: &crate::check::AiConfig, out: &mut String) {
        if let Some(name) = self.info.history_param(idx) {
            let _ = write!(out, "\n    .with_history({})", rust_str(name));
        }
        let examples: Vec<String> = self
            .info
            .examples
            .iter()
            .filter(|e| e.function == idx)
            .map(|e| {
                format!(
                    "::vox_runtime::__private::Example {{ arguments: {}, output: {} }}",
                    rust_str(&e.arguments),
                    rust_str(&e.output)
                )
            })
            .collect();
        if !examples.is_empty() {
            let _ = write!(out, "\n    .with_examples(&[{}])", examples.join(", "));
        }
        let tools: Vec<String> = ai
            .tools
            .iter()
            .filter_map(|t| {
                let ti = self.info.fns.iter().position(|g| g.name == t.name)?;
                let (_, schema) = self.info.tool_schemas.iter().find(|(f, _)| *f == ti)?;
                let docs = crate::tool_description(self.module, &self.info.fns[ti]);
                Some(format!(
                    "::vox_runtime::__private::Tool::new({}, {}, {}, self::{})",
                    rust_str(&t.name),
                    rust_str(&docs),
                    rust_str(schema),
                    tool_wrapper(&t.name)
                ))
            })
            .collect();
        if !tools.is_empty() {
            let _ = write!(out, "\n    .with_tools(&[{}])", tools.join(", "));
        }
        if let Some(steps) = ai.max_steps {
            let _ = write!(out, "\n    .with_max_steps({steps})");
        }
    }

    /// The wrapper the runtime calls a tool through: reads its arguments
    /// (a problem is the call's error result), runs it, writes its value.
    pub(super) fn tool_wrappers(&mut self) {
        let mut out = String::new();
        for (ti, _) in &self.info.tool_schemas {
            let f = &self.info.fns[*ti];
            let _ = writeln!(
                out,
                "/// `{}` as a tool of the model's (vox-runtime: docs/runtime.md, \"Tools\").\n#[doc(hidden)]\n{FN_ALLOWS}\nfn {}(vox_arguments: ::std::string::String) -> ::vox_runtime::__private::ToolFuture {{",
                f.name,
                tool_wrapper(&f.name)
            );
            out.push_str("    #[derive(::vox_runtime::serde::Deserialize)]\n    #[serde(crate = \"::vox_runtime::serde\", deny_unknown_fields)]\n    struct VoxArguments {\n");
            for (name, ty) in &f.params {
                let ident = rust_ident(name);
                if ident != *name {
                    let _ = writeln!(out, "        #[serde(rename = {})]", rust_str(name));
                }
                let _ = writeln!(out, "        {ident}: {},", self.rust_type(ty));
            }
            out.push_str("    }\n    ::std::boxed::Box::pin(async move {\n");
            let names: Vec<String> = f.params.iter().map(|(n, _)| rust_ident(n)).collect();
            let _ = writeln!(
                out,
                "        let VoxArguments {{ {} }} = ::vox_runtime::__private::tool_arguments(&vox_arguments)?;",
                names.join(", ")
            );
            let call = format!("self::{}({})", rust_ident(&f.name), names.join(", "));
            let failed = "::vox_runtime::__private::ToolError::Failed";
            let value = if f.rust && !self.opts.standalone {
                // The crate's `async fn` returns a `Result` whose error
                // displays. Bound to a name saying so first: a build
                // without it fails on that line.
                let marker = format!(
                    "vox_rust_tool_{}_must_be_defined_beside_include_vox",
                    f.name.trim_start_matches("r#")
                );
                let _ = writeln!(
                    out,
                    "        // `@rust fn {}`: the crate defines\n        //     async fn {}({}) -> Result<{}, E> (E: Display)\n        // beside `include_vox!()` (Vox: docs/language.md, \"Tools\").\n        let {marker} = self::{};",
                    f.name,
                    rust_ident(&f.name),
                    self.params(f),
                    self.rust_type(&f.ret),
                    rust_ident(&f.name),
                );
                format!(
                    "{marker}({}).await.map_err(|e| {failed}(::std::string::ToString::to_string(&e)))?",
                    names.join(", ")
                )
            } else if f.rust {
                format!("{call}.await.map_err({failed})?")
            } else if f.net || self.calls_net(*ti) {
                format!(
                    "{call}.await.map_err(|e| {failed}(::std::string::ToString::to_string(&e)))?"
                )
            } else {
                call
            };
            let _ = writeln!(out, "        let vox_value = {value};");
            if matches!(f.ret, Ty::Result(_)) {
                let _ = writeln!(out, "        let vox_value = vox_value.map_err({failed})?;");
            }
            out.push_str("        ::vox_runtime::__private::tool_value(&vox_value)\n    })\n}\n\n");
        }
        self.out.push_str(&out);
    }

    /// A `@rust` tool. With the crate nothing: the crate defines it beside
    /// `include_vox!()`, and the tool's wrapper names it (`tool_wrappers`).
    /// Without the crate (a script, `cargo vox call`) a stub, whose calls
    /// tell the model the tool cannot run here.
    fn rust_tool(&mut self, idx: usize) {
        let f = &self.info.fns[idx];
        if !self.opts.standalone {
            return;
        }
        let params = self.params(f);
        let _ = writeln!(
            self.out,
            "/// `@rust fn {vox}`: the crate implements it; this program runs the\n\
             /// module without the crate.\n\
             #[allow(unused_variables)]\n\
             pub async fn {name}({}) -> ::std::result::Result<{}, ::std::string::String> {{\n    \
             ::std::result::Result::Err({}.to_owned())\n}}\n",
            params,
            self.rust_type(&f.ret),
            rust_str(&format!(
                "`{}` is implemented in Rust by the crate, which this program runs without",
                f.name
            )),
            vox = f.name,
            name = rust_ident(&f.name),
        );
    }

    /// `<name>_batch`: the `@ai` function `f` over many inputs on its
    /// provider's batch engine (docs/runtime.md, "Bulk runs"). An input is
    /// the argument itself for one parameter, a tuple of the arguments in
    /// order for several; the run's values are read in input order from
    /// the job directory.
    fn batch_entry(&self, f: &FnInfo, ai_static: &str, check: Option<&str>, out: &mut String) {
        let ret = self.rust_type(&f.ret);
        let name = rust_ident(&format!("{}_batch", f.name));
        let types: Vec<String> = f.params.iter().map(|(_, t)| self.rust_type(t)).collect();
        let names: Vec<String> = f.params.iter().map(|(n, _)| rust_ident(n)).collect();
        let (item, pattern) = match types.len() {
            1 => (types[0].clone(), names[0].clone()),
            _ => (
                format!(
                    "({})",
                    types.iter().map(|t| format!("{t},")).collect::<String>()
                ),
                format!(
                    "({})",
                    names.iter().map(|n| format!("{n},")).collect::<String>()
                ),
            ),
        };
        let _ = writeln!(
            out,
            "/// `{}` over many inputs on its provider's batch engine, one item per\n\
             /// input ({}). The job directory `job_dir` records the run as it goes, so\n\
             /// the same call resumes a stopped one; `BatchRun::results` reads the\n\
             /// values in input order (vox-runtime: docs/runtime.md, \"Bulk runs\").",
            f.name,
            match types.len() {
                0 => "`()`: the function has no parameters".to_owned(),
                1 => format!("its `{}`", f.params[0].0),
                _ => format!(
                    "a tuple of {}",
                    f.params
                        .iter()
                        .map(|(n, _)| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        );
        out.push_str(FN_ALLOWS);
        out.push('\n');
        let _ = writeln!(
            out,
            "pub async fn {name}(\n    job_dir: impl ::std::convert::AsRef<::std::path::Path>,\n    \
             inputs: impl ::std::iter::IntoIterator<Item = {item}>,\n    \
             options: &::vox_runtime::BatchOptions,\n) -> ::std::result::Result<::vox_runtime::BatchRun<{ret}>, ::vox_runtime::Error> {{"
        );
        out.push_str(ai_static);
        let _ = write!(
            out,
            "    let VOX_INPUTS = ::std::iter::IntoIterator::into_iter(inputs).map(|{pattern}| {{\n        \
             ::std::result::Result::<::vox_runtime::__private::Args, ::vox_runtime::Error>::Ok(::vox_runtime::__private::Args::new()"
        );
        for (p, _) in &f.params {
            let _ = write!(
                out,
                "\n            .arg({}, &{})?",
                rust_str(p),
                rust_ident(p)
            );
        }
        out.push_str(")\n    });\n");
        match check {
            Some(check) => {
                let _ = writeln!(
                    out,
                    "    ::vox_runtime::__private::batch_ai_checked(&VOX_AI, job_dir.as_ref(), VOX_INPUTS, options, |vox_value: &{ret}| self::{}(::std::clone::Clone::clone(vox_value))).await\n}}\n",
                    rust_ident(check)
                );
            }
            None => out.push_str(
                "    ::vox_runtime::__private::batch_ai(&VOX_AI, job_dir.as_ref(), VOX_INPUTS, options).await\n}\n\n",
            ),
        }
    }

    /// `<name>_stream`: the `@ai` function `f` as a stream of partial
    /// values, retries and its outcome (docs/runtime.md, "Streaming"). Not
    /// `async`: the stream is returned at once and runs when polled; the
    /// fixture body is the same as `f`'s.
    fn stream_entry(
        &mut self,
        f: &FnInfo,
        d: &FnDecl,
        ai_static: &str,
        check: Option<&str>,
        out: &mut String,
    ) {
        let ret = self.rust_type(&f.ret);
        let partial = self.partial_rust_type(&f.ret);
        let name = rust_ident(&format!("{}_stream", f.name));
        let params: Vec<String> = f
            .params
            .iter()
            .map(|(n, t)| format!("{}: {}", rust_ident(n), self.rust_type(t)))
            .collect();
        let _ = writeln!(
            out,
            "/// `{}`, streamed: partial values (`{}`) while the reply arrives, a\n\
             /// retry when an attempt is rejected, then the same outcome `{}` gives\n\
             /// (vox-runtime: docs/runtime.md, \"Streaming\").",
            f.name,
            partial.rsplit("::").next().unwrap_or(&partial),
            f.name
        );
        out.push_str(FN_ALLOWS);
        out.push('\n');
        let names: Vec<String> = f.params.iter().map(|(n, _)| rust_ident(n)).collect();
        let with = rust_ident(&format!("{}_stream_with", f.name));
        let _ = writeln!(
            out,
            "pub fn {name}({}) -> ::vox_runtime::AiStream<{partial}, {ret}> {{\n    {with}(&::vox_runtime::CallOptions::DEFAULT{})\n}}\n",
            params.join(", "),
            names.iter().map(|n| format!(", {n}")).collect::<String>()
        );
        let _ = writeln!(
            out,
            "/// `{}_stream` with per-call options (vox-runtime: docs/runtime.md, \"Options\").",
            f.name
        );
        out.push_str(FN_ALLOWS);
        out.push('\n');
        let _ = writeln!(
            out,
            "pub fn {with}(VOX_OPTIONS: &::vox_runtime::CallOptions{}{}) -> ::vox_runtime::AiStream<{partial}, {ret}> {{",
            if params.is_empty() { "" } else { ", " },
            params.join(", ")
        );
        out.push_str(ai_static);
        out.push_str(
            "    let VOX_ARGS = match (|| ::std::result::Result::<_, ::vox_runtime::Error>::Ok(::vox_runtime::__private::Args::new()",
        );
        for (p, _) in &f.params {
            let _ = write!(out, "\n        .arg({}, &{})?", rust_str(p), rust_ident(p));
        }
        out.push_str(")) () {\n        ::std::result::Result::Ok(args) => args,\n        ::std::result::Result::Err(e) => return ::vox_runtime::AiStream::failed(e),\n    };\n");
        self.argument_categories(f, out);
        out.push_str("    let VOX_FIXTURE = async move {\n");
        out.push_str(&self.fn_body(d, &f.ret, Ctx::Fallible, 2));
        out.push_str("    };\n");
        match check {
            Some(check) => {
                let _ = writeln!(
                    out,
                    "    ::vox_runtime::__private::call_ai_stream_checked_with(&VOX_AI, VOX_OPTIONS, VOX_ARGS, VOX_FIXTURE, |vox_value: &{ret}| self::{}(::std::clone::Clone::clone(vox_value)))\n}}\n",
                    rust_ident(check)
                );
            }
            None => out.push_str(
                "    ::vox_runtime::__private::call_ai_stream_with(&VOX_AI, VOX_OPTIONS, VOX_ARGS, VOX_FIXTURE)\n}\n\n",
            ),
        }
    }

    /// Shadows `VOX_OPTIONS` with the run-time categories the arguments
    /// give: a parameter `queues: list[Queue]` of a `type Queue = dynamic`
    /// supplies `Queue`'s values, unless the options give them
    /// (docs/language.md, "Categories known at run time").
    fn argument_categories(&self, f: &crate::check::FnInfo, out: &mut String) {
        let mut given = Vec::new();
        for (i, (p, ty)) in f.params.iter().enumerate() {
            let Ty::List(el) = ty else { continue };
            let Ty::Named(id) = **el else { continue };
            let Some(def) = self.info.types.get(id).filter(|d| d.is_dynamic()) else {
                continue;
            };
            if given.contains(&id) {
                continue;
            }
            given.push(id);
            let _ = writeln!(
                out,
                "    let VOX_CATEGORIES_{i} = ::vox_runtime::__private::argument_categories(VOX_OPTIONS, {}, &{});\n    let VOX_OPTIONS: &::vox_runtime::CallOptions = &VOX_CATEGORIES_{i};",
                rust_str(&def.name),
                rust_ident(p)
            );
        }
    }

    pub(super) fn test_function(&mut self, idx: usize) -> String {
        let f = &self.info.fns[idx];
        let Some(d) = self.module.fn_decl(f.item) else {
            return String::new();
        };
        self.current_fn = f.name.clone();
        self.current = idx;
        self.in_test = true;
        let mut out = String::new();
        doc_attrs(&mut out, &d.docs, "");
        out.push_str("#[test]\n");
        out.push_str(FN_ALLOWS);
        out.push('\n');
        let name = rust_ident(&f.name);
        if self.calls_net(idx) {
            let _ = writeln!(
                out,
                "fn {name}() -> ::std::result::Result<(), ::vox_runtime::Error> {{"
            );
            out.push_str("    ::vox_runtime::block_on(async move {\n");
            out.push_str(&self.fn_body(d, &Ty::Unit, Ctx::Fallible, 2));
            out.push_str("    })\n}\n\n");
        } else {
            let _ = writeln!(out, "fn {name}() {{");
            out.push_str(&self.fn_body(d, &Ty::Unit, Ctx::Pure, 1));
            out.push_str("}\n\n");
        }
        out
    }

    /// Does the body of function `idx` call a net function?
    fn calls_net(&self, idx: usize) -> bool {
        self.info.calls.get(idx).is_some_and(|calls| {
            calls
                .iter()
                .any(|(c, _)| self.info.fns.get(*c).is_some_and(|f| f.net))
        })
    }

    /// Statements of a function body at `depth` indentation.
    fn fn_body(&mut self, d: &FnDecl, ret: &Ty, ctx: Ctx, depth: usize) -> String {
        let mut out = String::new();
        let unit = matches!(ret, Ty::Unit);
        let tail = if unit { Tail::Discard } else { Tail::Value };
        // A fallible body returns its value as `Ok(…)`.
        let ok_tail = ctx == Ctx::Fallible;
        out.push_str(&self.statements(&d.body, ctx, depth, tail, ok_tail));
        if unit && ctx == Ctx::Fallible {
            let _ = writeln!(out, "{}::std::result::Result::Ok(())", ind(depth));
        }
        out
    }
}

/// For each `net` function, every function it reaches through calls
/// (itself only if it is recursive), on the checker's call graph.
pub(super) fn recursive_net_fns(info: &ModuleInfo) -> HashMap<usize, HashSet<usize>> {
    let callees = |i: usize| info.calls.get(i).into_iter().flatten().map(|(c, _)| *c);
    let mut out = HashMap::new();
    for (i, f) in info.fns.iter().enumerate() {
        if !f.net {
            continue;
        }
        let mut seen = HashSet::new();
        let mut stack: Vec<usize> = callees(i).collect();
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                stack.extend(callees(n));
            }
        }
        out.insert(i, seen);
    }
    out
}

/// The name of the wrapper of tool `name`.
fn tool_wrapper(name: &str) -> String {
    format!("vox_tool_{}", name.trim_start_matches("r#"))
}
