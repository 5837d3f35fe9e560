//! Function bodies and scopes: declaring and looking up bindings, the
//! unused-variable lint, and where each binding's value comes from, which
//! settles the element types of `[]` and `None` once a body is checked.

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{Builtin, Checker, Ctor, ModuleInfo, Want};

pub(super) struct Local {
    pub(super) ty: Ty,
    pub(super) mutable: bool,
    pub(super) span: Span,
    pub(super) used: bool,
    /// Report when never read.
    pub(super) lint_unused: bool,
    /// Where its value comes from, when that can leave holes in its type.
    pub(super) origin: Option<Origin>,
}

/// Where a binding's value comes from: the value of `expr`, unwrapped
/// through `wrap` (`for x in xs`: the elements of `xs`; `Some(v)` in a
/// pattern: the `Option`'s content).
#[derive(Clone, Debug)]
pub(super) struct Origin {
    pub(super) expr: ExprId,
    pub(super) wrap: Vec<Wrap>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Wrap {
    List,
    Option,
    Result,
}

impl Checker<'_> {
    pub(super) fn check_fn_body(&mut self, idx: usize) {
        let Some(decl) = self.module.fn_decl(self.info.fns[idx].item) else {
            return;
        };
        if decl.external {
            // Implemented in Rust: nothing to check.
            return;
        }
        self.current = Some(idx);
        let ret = self.info.fns[idx].ret.clone();
        let is_ai = self.info.fns[idx].ai.is_some();
        let params = self.info.fns[idx].params.clone();
        self.scopes.push(Vec::new());
        self.var_origins.clear();
        self.open_uses.clear();
        self.holes = false;
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
        // Without holes, settling would walk the body and change nothing.
        if self.holes {
            settle_fn(&mut self.info, &decl.body, &self.var_origins);
        }
        // What later uses did not decide stays a hole, emitted as `()`,
        // which cannot be iterated or measured.
        for (id, span, what) in std::mem::take(&mut self.open_uses) {
            if matches!(self.info.expr_type(id), Ty::Unknown) {
                self.open_type(span, what);
            }
        }
        self.current = None;
    }

    /// Records where the binding declared last gets its value.
    pub(super) fn set_origin(&mut self, origin: Origin) {
        if let Some((_, l)) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
            l.origin = Some(origin);
        }
    }

    pub(super) fn declare(
        &mut self,
        name: String,
        ty: Ty,
        mutable: bool,
        span: Span,
        lint_unused: bool,
    ) {
        self.info.bindings.push((span, ty.clone()));
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

    pub(super) fn pop_scope(&mut self) {
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
    pub(super) fn report_duplicate_bindings(&mut self) {
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

    pub(super) fn lookup(&mut self, name: &str) -> Option<&mut Local> {
        self.scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.iter_mut().rev())
            .find(|(n, _)| n == name)
            .map(|(_, l)| l)
    }

    pub(super) fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter().map(|(n, _)| n.clone()))
            .collect();
        names.extend(self.fn_index.keys().cloned());
        names.extend(Builtin::ALL.iter().map(|(n, _)| n.to_string()));
        names
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
            Stmt::Let { value, .. } | Stmt::LetPattern { value, .. } => {
                changed |= settle_expr(info, value)
            }
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
            Stmt::While { cond, body, .. } => {
                changed |= settle_expr(info, cond);
                changed |= settle_block(info, body);
            }
            Stmt::Break(_) | Stmt::Continue(_) => {}
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

/// [`settle_fn`] for a constant's value, whose type is `ty`.
pub(super) fn settle_const(
    info: &mut ModuleInfo,
    value: &Expr,
    ty: &Ty,
    var_origins: &[(ExprId, Origin)],
) {
    fill_holes_from(info, value, ty);
    for _ in 0..16 {
        let mut changed = false;
        for (var, origin) in var_origins {
            let ot = info.expr_type(origin.expr).clone();
            if origin.wrap.is_empty() {
                changed |= fill_holes_at(info, *var, &ot);
            }
        }
        changed |= settle_expr(info, value);
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
        ExprKind::Map(entries) => {
            if let Ty::Map(v) = &t {
                for m in entries {
                    changed |= fill_holes_from(info, &m.value, v);
                }
            }
            for m in entries {
                changed |= settle_expr(info, &m.key);
                changed |= settle_expr(info, &m.value);
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
        ExprKind::Match {
            scrutinee, arms, ..
        } => {
            for a in arms {
                changed |= fill_holes_from(info, &a.body, &t);
            }
            changed |= settle_expr(info, scrutinee);
            for a in arms {
                if let Some(g) = &a.guard {
                    changed |= settle_expr(info, g);
                }
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
        ExprKind::Field { base, .. } | ExprKind::Try(base) => changed |= settle_expr(info, base),
        ExprKind::Unary { expr, .. } => changed |= settle_expr(info, expr),
        ExprKind::Lambda(l) => changed |= settle_expr(info, &l.body),
        ExprKind::Poison(parts) => {
            for p in parts {
                changed |= settle_expr(info, p);
            }
        }
        _ => {}
    }
    changed
}
