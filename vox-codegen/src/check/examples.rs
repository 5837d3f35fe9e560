//! Worked examples (`example f(args) => answer`) and the tools of `@ai`
//! functions (`@ai(tools = [...])`), checked once every function is known
//! (docs/language.md, "Worked examples" and "Tools").

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::json::Json;
use crate::source::Span;
use crate::types::*;

use super::{Checker, Ctor, Want};

/// A worked example, ready to send: the arguments as a JSON object (the
/// conversation-so-far argument left out) and the answer as the model
/// would give it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExampleInfo {
    /// The `@ai` function's index in [`super::ModuleInfo::fns`].
    pub function: usize,
    pub arguments: String,
    pub output: String,
}

impl Checker<'_> {
    pub(super) fn check_examples(&mut self) {
        let module = self.module;
        for item in &module.items {
            let Item::Example(ex) = item else { continue };
            let ExprKind::Call { callee, args } = &ex.call.kind else {
                self.err(
                    Diagnostic::error(
                        Code::InvalidExample,
                        ex.call.span,
                        "an example is a call of an `@ai` function and its answer",
                    )
                    .hint("write `example classify(\"I love it\") => Positive`"),
                );
                continue;
            };
            let Some(&fi) = self.fn_index.get(&callee.name) else {
                let names: Vec<&str> = self
                    .info
                    .fns
                    .iter()
                    .filter(|f| f.ai.is_some())
                    .map(|f| f.name.as_str())
                    .collect();
                let mut d = Diagnostic::error(
                    Code::InvalidExample,
                    callee.span,
                    format!("no `@ai` function `{}` to give an example of", callee.name),
                );
                if let Some(s) = did_you_mean(&callee.name, names) {
                    d = d.fix(format!("replace with `{s}`"), callee.span, s);
                }
                self.err(d);
                continue;
            };
            if self.info.fns[fi].ai.is_none() {
                self.err(
                    Diagnostic::error(
                        Code::InvalidExample,
                        callee.span,
                        format!(
                            "`{}` is not an `@ai` function: examples show a model what to answer",
                            callee.name
                        ),
                    )
                    .hint("test a Vox function with an `@test` instead"),
                );
                continue;
            }
            let params = self.info.fns[fi].params.clone();
            let ret = self.info.fns[fi].ret.clone();
            let before = self.diags.len();
            self.detached(|c| {
                c.check_args(ex.call.span, &callee.name, "function", &params, args);
                c.check_expr(&ex.output, Want::Type(&ret));
            });
            if self.diags.len() > before {
                continue;
            }
            // The arguments by parameter, as the call binds them.
            let mut values: Vec<Option<&Expr>> = vec![None; params.len()];
            for (i, a) in args.iter().enumerate() {
                let at = match &a.name {
                    Some(n) => params.iter().position(|(p, _)| *p == n.name),
                    None => Some(i),
                };
                if let Some(slot) = at.and_then(|at| values.get_mut(at)) {
                    *slot = Some(&a.value);
                }
            }
            let history = self.info.history_param(fi).map(str::to_owned);
            let mut fields = Vec::new();
            let mut ok = true;
            for (i, (name, ty)) in params.iter().enumerate() {
                if history.as_deref() == Some(name.as_str()) {
                    continue;
                }
                match values[i].map(|v| self.written_value(v, ty)) {
                    Some(Ok(json)) => fields.push((name.clone(), json)),
                    Some(Err(span)) => {
                        self.not_written_out(span);
                        ok = false;
                    }
                    // An `Option` left out.
                    None => fields.push((name.clone(), Json::Null)),
                }
            }
            let output = match self.written_value(&ex.output, &ret) {
                Ok(json) => json,
                Err(span) => {
                    self.not_written_out(span);
                    continue;
                }
            };
            if !ok {
                continue;
            }
            // A return type that is not a record is sent under `value`, as
            // the model answers it.
            let is_record = matches!(&ret, Ty::Named(id)
                if self.info.types.get(*id).is_some_and(|d| d.fields().is_some()));
            let output = if is_record {
                output
            } else {
                Json::obj([("value", output)])
            };
            self.info.examples.push(ExampleInfo {
                function: fi,
                arguments: Json::Obj(fields).to_compact(),
                output: output.to_compact(),
            });
        }
    }

    fn not_written_out(&mut self, span: Span) {
        self.err(
            Diagnostic::error(
                Code::InvalidExample,
                span,
                "an example's values are written out",
            )
            .label("computed, not written")
            .hint(
                "use literals, lists, maps, records, variants, `Some`/`None` and `date(\"…\")`; \
                 the example is sent as it is written",
            ),
        );
    }

    /// `f` checked outside any function, like a constant's value.
    fn detached(&mut self, f: impl FnOnce(&mut Self)) {
        let saved = (
            std::mem::take(&mut self.scopes),
            self.current.take(),
            std::mem::replace(&mut self.in_const, true),
        );
        self.scopes.push(Vec::new());
        f(self);
        self.scopes = saved.0;
        self.current = saved.1;
        self.in_const = saved.2;
    }

    /// `e`, a value written out, as the JSON its Rust value serializes to
    /// (`ty` is its checked type); the span of what is not written out.
    fn written_value(&self, e: &Expr, ty: &Ty) -> Result<Json, Span> {
        let checked = self.info.expr_type(e.id).clone();
        let ty = if matches!(checked, Ty::Unknown | Ty::Error) {
            ty.clone()
        } else {
            checked
        };
        match (&e.kind, &ty) {
            (ExprKind::Int(n), Ty::Float) => Ok(Json::Num(*n as f64)),
            (ExprKind::Int(n), _) => Ok(Json::Int(*n)),
            (ExprKind::Float(x), _) => Ok(Json::Num(*x)),
            (ExprKind::Str(s), _) => Ok(Json::str(s.clone())),
            (ExprKind::Bool(b), _) => Ok(Json::Bool(*b)),
            (
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    expr,
                },
                _,
            ) => match &expr.kind {
                ExprKind::Int(n) => Ok(Json::Int(n.checked_neg().ok_or(e.span)?)),
                ExprKind::Float(x) => Ok(Json::Num(-x)),
                _ => Err(e.span),
            },
            (ExprKind::List(items), Ty::List(inner)) => items
                .iter()
                .map(|i| self.written_value(i, inner))
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Arr),
            (ExprKind::Map(entries), Ty::Map(inner)) => {
                let mut out = Vec::new();
                for entry in entries {
                    let ExprKind::Str(key) = &entry.key.kind else {
                        return Err(entry.key.span);
                    };
                    out.push((key.clone(), self.written_value(&entry.value, inner)?));
                }
                Ok(Json::Obj(out))
            }
            (ExprKind::Call { callee, args }, Ty::Date | Ty::Decimal)
                if matches!(callee.name.as_str(), "date" | "decimal") =>
            {
                match args.as_slice() {
                    [Arg { value, name: None }] => match &value.kind {
                        ExprKind::Str(s) => Ok(Json::str(s.clone())),
                        _ => Err(value.span),
                    },
                    _ => Err(e.span),
                }
            }
            (ExprKind::Record { fields, .. }, Ty::Named(id)) => {
                let def = self.info.types.get(*id).ok_or(e.span)?;
                let declared = def.fields().ok_or(e.span)?;
                let mut out = Vec::new();
                for f in declared {
                    match fields.iter().find(|i| i.name.name == f.name) {
                        Some(init) => {
                            out.push((f.name.clone(), self.written_value(&init.value, &f.ty)?));
                        }
                        None => out.push((f.name.clone(), Json::Null)),
                    }
                }
                Ok(Json::Obj(out))
            }
            (ExprKind::Ctor { name, args }, _) => match self.info.ctors.get(&e.id) {
                Some(Ctor::None) => Ok(Json::Null),
                Some(Ctor::Some) => {
                    let inner = match &ty {
                        Ty::Option(t) => (**t).clone(),
                        _ => Ty::Unknown,
                    };
                    match args.as_deref() {
                        Some([a]) => self.written_value(&a.value, &inner),
                        _ => Err(e.span),
                    }
                }
                Some(Ctor::Variant(tid, vi)) => {
                    let def = self.info.types.get(*tid).ok_or(e.span)?;
                    let variant = def.variants().and_then(|v| v.get(*vi)).ok_or(e.span)?;
                    if def.is_plain_enum() {
                        return Ok(Json::str(variant.name.clone()));
                    }
                    // Objects tagged by `kind` (serde's internal tag).
                    let mut out = vec![("kind".to_owned(), Json::str(variant.name.clone()))];
                    let given = args.as_deref().unwrap_or(&[]);
                    for (i, f) in variant.fields.iter().enumerate() {
                        let value = given
                            .iter()
                            .find(|a| a.name.as_ref().is_some_and(|n| n.name == f.name))
                            .or_else(|| given.get(i).filter(|a| a.name.is_none()))
                            .ok_or(name.span)?;
                        out.push((f.name.clone(), self.written_value(&value.value, &f.ty)?));
                    }
                    Ok(Json::Obj(out))
                }
                _ => Err(e.span),
            },
            _ => Err(e.span),
        }
    }

    /// `@ai(tools = [...])`: each names a plain Vox function or a `@rust`
    /// one, whose parameters and value travel as JSON; each tool's
    /// arguments get a strict schema.
    pub(super) fn check_ai_tools(&mut self) {
        for i in 0..self.info.fns.len() {
            let Some(tools) = self.info.fns[i].ai.as_ref().map(|a| a.tools.clone()) else {
                continue;
            };
            for tool in tools {
                let Some(&ti) = self.fn_index.get(&tool.name) else {
                    let names: Vec<&str> = self
                        .info
                        .fns
                        .iter()
                        .filter(|g| g.ai.is_none() && !g.test && g.name != "main")
                        .map(|g| g.name.as_str())
                        .collect();
                    let mut e = Diagnostic::error(
                        Code::AiInvalidTool,
                        tool.span,
                        format!("the tool `{}` is not a function", tool.name),
                    )
                    .hint(format!(
                        "declare `fn {}(…) to …` in Vox, or `@rust fn {}(…) to …` for one the crate implements",
                        tool.name, tool.name
                    ));
                    if let Some(s) = did_you_mean(&tool.name, names) {
                        e = e.fix(format!("replace with `{s}`"), tool.span, s);
                    }
                    self.err(e);
                    continue;
                };
                let t = &self.info.fns[ti];
                let problem = if t.ai.is_some() {
                    Some(format!(
                        "`{}` is an `@ai` function; a tool is a plain or `@rust` function",
                        t.name
                    ))
                } else if t.test || t.name == "main" {
                    Some(format!("`{}` cannot be a tool", t.name))
                } else if let Some((p, ty)) = t
                    .params
                    .iter()
                    .find(|(_, ty)| self.holds_media(ty) || self.holds_message(ty))
                {
                    Some(format!(
                        "the tool's parameter `{p}: {}` cannot come from the model's JSON",
                        self.show(ty)
                    ))
                } else if self.holds_media(&t.ret) {
                    Some(format!(
                        "the tool `{}` returns media, which cannot go back as JSON",
                        t.name
                    ))
                } else {
                    None
                };
                if let Some(problem) = problem {
                    self.err(
                        Diagnostic::error(Code::AiInvalidTool, tool.span, problem)
                            .hint("tools take and give values that travel as JSON"),
                    );
                    continue;
                }
                if !self.info.tool_schemas.iter().any(|(f, _)| *f == ti) {
                    let schema = crate::schema::parameters_schema(
                        &self.info.fns[ti].name,
                        &self.info.fns[ti].params,
                        &self.info.types,
                    );
                    self.info.tool_schemas.push((ti, schema.to_compact()));
                }
            }
        }
    }

    fn holds_media(&self, ty: &Ty) -> bool {
        let mut found = false;
        self.walk_ty(ty, &mut |t| found |= matches!(t, Ty::Media(_)));
        found
    }

    fn holds_message(&self, ty: &Ty) -> bool {
        let message = self.info.chat_message;
        let mut found = false;
        self.walk_ty(ty, &mut |t| {
            found |= message.is_some_and(|m| *t == Ty::Named(m))
        });
        found
    }

    /// Every type `ty` holds, named types' fields included (once each).
    fn walk_ty(&self, ty: &Ty, f: &mut dyn FnMut(&Ty)) {
        let mut seen: Vec<TypeId> = Vec::new();
        let mut todo = vec![ty.clone()];
        while let Some(t) = todo.pop() {
            f(&t);
            match &t {
                Ty::List(i) | Ty::Option(i) | Ty::Result(i) | Ty::Map(i) => {
                    todo.push((**i).clone())
                }
                Ty::Named(id) if !seen.contains(id) => {
                    seen.push(*id);
                    if let Some(def) = self.info.types.get(*id) {
                        match &def.kind {
                            TypeDefKind::Record(fields) => {
                                todo.extend(fields.iter().map(|f| f.ty.clone()))
                            }
                            TypeDefKind::Sum(vs) => todo.extend(
                                vs.iter()
                                    .flat_map(|v| v.fields.iter().map(|f| f.ty.clone())),
                            ),
                            TypeDefKind::Dynamic => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
