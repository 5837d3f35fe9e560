//! Decorators: `@uses`, `@test` and `@ai(…)` with its arguments (model
//! references, limits, fallbacks, `check = …`).

use crate::ast::*;
use crate::diagnostic::{did_you_mean, levenshtein, Code, Diagnostic};
use crate::schema;
use crate::source::Span;
use crate::types::*;

use super::{AiCheck, AiConfig, Checker};

pub const KNOWN_DECORATORS: [&str; 4] = ["ai", "uses", "test", "rust"];
pub const AI_ARGS: [&str; 9] = [
    "structured_output",
    "max_iterations",
    "model",
    "temperature",
    "max_tokens",
    "fallback",
    "check",
    "tools",
    "max_steps",
];
/// The most `max_steps` may be.
const MAX_STEPS_LIMIT: i64 = 100;
const MAX_ITERATIONS_LIMIT: i64 = 100;
/// The most `max_tokens` may be (no model answers with more).
const MAX_TOKENS_LIMIT: i64 = 1_000_000;
/// The providers a `provider:` model prefix may name: every row of the
/// table vox-runtime shares, the network ones ([`schema::PROVIDERS`]) and
/// `fixture` (docs/runtime.md, "Providers").
fn known_providers() -> impl Iterator<Item = &'static str> {
    vox_metadata::providers::PROVIDERS.iter().map(|p| p.name)
}

/// The provider `prefix` (the text before a model's first `:`) looks like a
/// misspelling of: the same name in another case, or one edit away (two
/// for names of 8 letters or more). Prefixes with digits or dots are model
/// names of their own (`llama3.2:3b`), never misspelt providers.
fn misspelt_provider(prefix: &str) -> Option<&'static str> {
    if prefix.len() < 3 || !prefix.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-') {
        return None;
    }
    let lower = prefix.to_ascii_lowercase();
    known_providers().find(|p| {
        let allowed = if p.len() >= 8 { 2 } else { 1 };
        lower == *p || levenshtein(&lower, p) <= allowed
    })
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

impl Checker<'_> {
    /// Validates a function's decorators; returns (@ai config, is @test, declares net).
    pub(super) fn check_decorators(
        &mut self,
        f: &FnDecl,
        ret: &Ty,
    ) -> (Option<AiConfig>, bool, bool) {
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
                // A tool the crate implements in Rust: the body-less
                // declaration is checked where the function is collected.
                "rust" => {
                    if let Some(a) = d.args.first() {
                        self.err(Diagnostic::error(
                            Code::MisplacedDecorator,
                            a.span,
                            "`@rust` takes no arguments",
                        ));
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
                        } else if matches!(a.name.name.as_str(), "fs" | "env" | "clock") {
                        } else {
                            let mut w = Diagnostic::warning(
                                Code::UnknownEffect,
                                a.name.span,
                                format!("unknown effect `{}`", a.name.name),
                            )
                            .hint("the known effects are `net`, `fs`, `env` and `clock`");
                            if let Some(s) =
                                did_you_mean(&a.name.name, ["net", "fs", "env", "clock"])
                            {
                                w = w.fix(format!("replace with `{s}`"), a.name.span, s);
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
                    .hint("the decorators are `@ai(…)`, `@uses(…)`, `@test` and `@rust`");
                    // What other tools spell with a decorator: a tool, an
                    // example, a function implemented elsewhere.
                    match name {
                        "tool" | "function_tool" | "tools" | "tool_call" => {
                            e = e.hint(
                                "a tool is a plain function listed in `@ai(tools = [...])`; \
                                 `@rust` declares one the crate implements in Rust",
                            );
                        }
                        "example" | "examples" | "few_shot" | "shot" => {
                            e = e.hint(
                                "write each example after the function: \
                                 `example f(args) => answer`",
                            );
                        }
                        "extern" | "external" | "native" | "ffi" | "rust_fn" => {
                            e = e.fix_with(
                                crate::diagnostic::Applicability::MaybeIncorrect,
                                "replace with `@rust` (a tool the crate implements)",
                                vec![crate::diagnostic::Edit {
                                    span: d.name.span,
                                    replacement: "rust".into(),
                                }],
                            );
                        }
                        _ => {
                            if let Some(s) = did_you_mean(name, KNOWN_DECORATORS) {
                                e = e.fix(format!("replace with `@{s}`"), d.name.span, s);
                            }
                        }
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
            tools: Vec::new(),
            max_steps: None,
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
                     `max_tokens`, `fallback`, `check`, `tools` and `max_steps`",
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
                ("tools", DecoratorValueKind::List(items)) => {
                    for item in items {
                        match &item.kind {
                            DecoratorValueKind::Type(t) if t.args.is_empty() => {
                                if let Some(prev) =
                                    cfg.tools.iter().find(|x| x.name == t.name.name)
                                {
                                    self.err(
                                        Diagnostic::error(
                                            Code::AiDuplicateArgument,
                                            item.span,
                                            format!("the tool `{}` is listed twice", t.name.name),
                                        )
                                        .related(prev.span, "first listed here"),
                                    );
                                    continue;
                                }
                                cfg.tools.push(AiCheck {
                                    name: t.name.name.clone(),
                                    span: item.span,
                                });
                            }
                            DecoratorValueKind::Invalid => {}
                            _ => self.err(Diagnostic::error(
                                Code::AiInvalidValue,
                                item.span,
                                "each tool is the name of a function, e.g. `tools = [lookup_order]`",
                            )),
                        }
                    }
                }
                ("tools", _) => wrong_kind(
                    self,
                    "a list of function names, e.g. `tools = [lookup_order, search_docs]`",
                ),
                ("max_steps", DecoratorValueKind::Int(n)) => {
                    if (1..=MAX_STEPS_LIMIT).contains(n) {
                        cfg.max_steps = Some(*n as u32);
                    } else {
                        self.err(
                            Diagnostic::error(
                                Code::AiInvalidValue,
                                value.span,
                                format!("`max_steps` must be between 1 and {MAX_STEPS_LIMIT}, found {n}"),
                            )
                            .hint("it counts model requests: tool turns and corrections together"),
                        );
                    }
                }
                ("max_steps", _) => wrong_kind(self, "an integer of at least 1"),
                _ => {}
            }
        }
        cfg
    }

    /// Checks the `provider:` prefix of a model reference in `@ai(arg = …)`:
    /// a misspelt provider is an error with the fix; in a fallback the
    /// prefix is required (not `fixture`) and so is the model after it.
    fn check_model_ref(&mut self, arg: &str, text: &str, span: Span, required: bool) -> bool {
        let providers = schema::PROVIDERS.join(", ");
        let trimmed = text.trim();
        let split = trimmed.split_once(':');
        match split {
            Some((prefix, model)) if known_providers().any(|p| p == prefix) => {
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
                        .hint(format!(
                            "a fallback is `provider:model`; providers: {providers}"
                        )),
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
}
