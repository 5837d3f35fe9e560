//! Module-wide passes that run once every signature (or body) is known:
//! types that contain themselves, the size of structured-output schemas,
//! `@ai(check = f)`, and the `net` effect (`@uses(net)`).

use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{line_indent, Checker, FnInfo};

impl Checker<'_> {
    /// Types that contain themselves other than through `list`/`Option`
    /// have no finite representation.
    pub(super) fn check_recursion(&mut self) {
        let n = self.info.types.defs.len();
        let direct: Vec<Vec<TypeId>> = self
            .info
            .types
            .defs
            .iter()
            .map(|d| {
                let mut out = Vec::new();
                for f in d.every_field() {
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

    /// A model answers with text, so no media type may be in what an `@ai`
    /// function returns, at any depth (docs/language.md, "Images, documents and
    /// audio"). Plain functions may return media.
    pub(super) fn check_media_outputs(&mut self) {
        for i in 0..self.info.fns.len() {
            let f = &self.info.fns[i];
            if f.ai.is_none() {
                continue;
            }
            let Some(found) = f.ret.media_inside(&self.info.types) else {
                continue;
            };
            let Some(decl) = self.module.fn_decl(f.item) else {
                continue;
            };
            let span = decl.ret.as_ref().map_or(decl.name.span, |r| r.span);
            let media = found.media.name();
            let a_media = found.media.a_name();
            let shown = self.show(&f.ret);
            let mut d = Diagnostic::error(
                Code::MediaInOutput,
                span,
                if found.steps.is_empty() {
                    format!("an `@ai` function cannot return {a_media}")
                } else {
                    format!("an `@ai` function cannot return `{shown}`: it holds {a_media}")
                },
            )
            .label(if found.steps.is_empty() {
                format!("`{media}` is sent to a model, never returned by one")
            } else {
                {
                let inward: Vec<&str> = found.steps.iter().rev().map(String::as_str).collect();
                format!("the `{media}` is {}", inward.join(", in "))
            }
            })
            .hint(format!(
                "a model answers with text: return what it can say about the {}, such as a description or its URL as `str`, and keep the `{media}` on the caller's side",
                found.media.word()
            ));
            if let Some((id, variant, field)) = &found.field {
                let at = self.info.types.get(*id).and_then(|def| {
                    def.fields_by_variant()
                        .find(|(vi, fd)| vi == variant && fd.name == *field)
                        .map(|(_, fd)| fd.span)
                });
                if let Some(at) = at {
                    d = d.related(at, format!("`{field}` holds the `{media}`"));
                }
            }
            self.err(d);
        }
    }

    /// Every structured output must fit OpenAI's strict-mode limits; a
    /// schema that does not is an error here rather than a silent cut or a
    /// 400 from the provider at run time.
    pub(super) fn check_schema_limits(&mut self) {
        for i in 0..self.info.fns.len() {
            let f = &self.info.fns[i];
            if f.ai.is_none()
                || !f.ret.is_concrete()
                || f.ret.media_inside(&self.info.types).is_some()
                || matches!(f.ret, Ty::Unit)
                || self.info.output_schemas.iter().any(|(t, _)| *t == f.ret)
            {
                continue;
            }
            if let Some(path) = self.info.types.map_inside(&f.ret) {
                let Some(decl) = self.module.fn_decl(f.item) else {
                    continue;
                };
                let span = decl.ret.as_ref().map_or(decl.name.span, |r| r.span);
                let d = Diagnostic::error(
                    Code::AiMapOutput,
                    span,
                    if matches!(f.ret, Ty::Map(_)) {
                        format!("an `@ai` function cannot return a map, `{}`", self.show(&f.ret))
                    } else {
                        format!(
                            "an `@ai` function cannot return `{}`, which holds a map: {path}",
                            self.show(&f.ret)
                        )
                    },
                )
                .label("holds a `map`")
                .hint("strict structured outputs allow no free-form object keys; return a list of records instead (`entries: list[Entry]` with `type Entry { key: str, value: … }`) and build the map with `insert` in a `for` loop");
                self.err(d);
                continue;
            }
            let schema = crate::schema::output_schema(&f.ret, &self.info.types);
            let problems = crate::schema::stats(&schema.schema).violations();
            self.info.output_schemas.push((f.ret.clone(), schema));
            if problems.is_empty() {
                continue;
            }
            let Some(decl) = self.module.fn_decl(f.item) else {
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
    pub(super) fn check_ai_checks(&mut self) {
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
            let decl_span = self.module.fn_decl(callee.item).map(|d| d.name.span);
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

    pub(super) fn check_effects(&mut self) {
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
                if self.info.calls[i].iter().any(|(callee, _)| net[*callee]) {
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
            let Some(decl) = self.module.fn_decl(f.item) else {
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
                let (callee, span) = self.info.calls[i]
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
        self.check_other_effects();
        // A lambda runs inside the builtin, which cannot wait for the
        // network (docs/language.md, "Functions as arguments").
        for (callee, span) in std::mem::take(&mut self.lambda_calls) {
            if !net.get(callee).copied().unwrap_or(false) {
                continue;
            }
            let name = self.info.fns[callee].name.clone();
            self.err(
                Diagnostic::error(
                    Code::NetInLambda,
                    span,
                    format!("`{name}` uses the network and cannot run inside `map`, `filter` or another builtin's function"),
                )
                .label("a network call")
                .hint("call it in a `for` loop: `for x in xs { let y = f(x) … }`, which waits for each reply"),
            );
        }
    }
}

impl Checker<'_> {
    /// `@uses(fs)` and `@uses(env)`: a function that calls `read_text`,
    /// `args` or `env`, or a function that has the effect, declares it
    /// (docs/language.md, "Script input"); `fn main` and `@test` functions
    /// need not.
    fn check_other_effects(&mut self) {
        let n = self.info.fns.len();
        for effect in crate::check::Effect::ALL {
            // Tests may not read the clock: they give the same result every day.
            let clock = effect == crate::check::Effect::Clock;
            let exempt = |f: &FnInfo| (f.test && !clock) || f.name == "main";
            let direct: Vec<Option<Span>> = (0..n)
                .map(|i| {
                    self.info
                        .effect_uses
                        .get(i)
                        .and_then(|u| u.iter().find(|(e, _)| *e == effect).map(|(_, s)| *s))
                })
                .collect();
            let mut has: Vec<bool> = (0..n)
                .map(|i| self.info.fns[i].uses.contains(&effect) || direct[i].is_some())
                .collect();
            loop {
                let mut changed = false;
                for i in 0..n {
                    if has[i] || exempt(&self.info.fns[i]) {
                        continue;
                    }
                    if self.info.calls[i].iter().any(|(c, _)| has[*c]) {
                        has[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for i in 0..n {
                let f = &self.info.fns[i];
                if clock && has[i] && f.test {
                    let Some(decl) = self.module.fn_decl(f.item) else {
                        continue;
                    };
                    let at = direct[i].or_else(|| {
                        self.info.calls[i]
                            .iter()
                            .find(|(c, _)| has[*c])
                            .map(|(_, s)| *s)
                    });
                    let mut d = Diagnostic::error(
                        Code::MissingUses,
                        decl.name.span,
                        format!("`@test` function `{}` reads the clock", f.name),
                    )
                    .hint("a test gives the same result every day: pass the date in (`date(\"2026-12-31\")`) instead of calling `today()`");
                    if let Some(at) = at {
                        d = d.related(at, "here");
                    }
                    self.err(d);
                    continue;
                }
                if !has[i] || f.uses.contains(&effect) || exempt(f) {
                    continue;
                }
                let Some(decl) = self.module.fn_decl(f.item) else {
                    continue;
                };
                let (what, at) = match direct[i] {
                    Some(span) => (format!("`{}` {}", f.name, effect.doing()), span),
                    None => {
                        let (callee, span) = self.info.calls[i]
                            .iter()
                            .find(|(c, _)| has[*c])
                            .copied()
                            .unwrap_or((i, decl.name.span));
                        (
                            format!(
                                "`{}` calls `{}`, which {}",
                                f.name,
                                self.info.fns[callee].name,
                                effect.doing()
                            ),
                            span,
                        )
                    }
                };
                let e = effect.name();
                let mut d = Diagnostic::error(
                    Code::MissingUses,
                    decl.name.span,
                    format!("{what}, but does not declare `@uses({e})`"),
                )
                .related(at, "here")
                .hint(format!(
                    "`@uses({e})` says what a function may do; `fn main` and `@test` functions need not declare it"
                ));
                // Added to the function's `@uses(…)`, or as a line of its own.
                d = match decl.decorator("uses") {
                    Some(u) if !u.args.is_empty() && u.span.end > u.span.start => {
                        let close = Span {
                            start: u.span.end - 1,
                            end: u.span.end - 1,
                            ..u.span
                        };
                        d.fix(format!("add `{e}` to `@uses`"), close, format!(", {e}"))
                    }
                    _ => {
                        let indent = line_indent(self.sources, decl.head);
                        d.fix(
                            format!("add `@uses({e})`"),
                            decl.head.shrink_to_start(),
                            format!("@uses({e})\n{indent}"),
                        )
                    }
                };
                self.err(d);
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
