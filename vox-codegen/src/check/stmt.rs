//! Blocks, statements (`let`, assignment, `return`, `for`, expression
//! statements) and assignment targets.

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::scope::{Origin, Wrap};
use super::{Checker, Want};

impl Checker<'_> {
    /// Checks a block; returns its type and whether it ended in a value expression.
    pub(super) fn check_block(&mut self, b: &Block, want: Want) -> (Ty, bool) {
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
            Stmt::LetPattern { pattern, value, .. } => {
                let vt = self.check_expr(value, Want::Any);
                if matches!(vt, Ty::Never) {
                    return true;
                }
                self.pat_origin = Some(Origin {
                    expr: value.id,
                    wrap: Vec::new(),
                });
                let irrefutable = self.check_pattern(pattern, &vt);
                self.pat_origin = None;
                self.report_duplicate_bindings();
                if !irrefutable && !matches!(vt, Ty::Error) {
                    self.err(
                        Diagnostic::error(
                            Code::InvalidPattern,
                            pattern.span,
                            "a `let` pattern must match every value",
                        )
                        .label("some values do not match")
                        .hint("use `match` for a pattern that can fail: `match v { Invoice { vendor: \"ACME\", .. } => …, _ => … }`"),
                    );
                }
                false
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
                if self.lambda_return(value.as_ref(), *span) {
                    return true;
                }
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
                    Ty::Error => Ty::Error,
                    // Later uses of the loop variable may still decide it.
                    Ty::Unknown => {
                        self.open_uses.push((iter.id, iter.span, "iterated"));
                        Ty::Unknown
                    }
                    other => {
                        let mut d = Diagnostic::error(
                            Code::NotIterable,
                            iter.span,
                            format!("`for` needs a list, found `{}`", self.show(&other)),
                        )
                        .types("list[_]", self.show(&other));
                        if matches!(other, Ty::Map(_)) {
                            // Python's `for k in d` goes over the keys: so does the fix.
                            let text = self.source_text(iter.span).to_string();
                            d = d
                                .hint("loop over `keys(m)` (in key order) or `values(m)` (in the order of their keys)")
                                .fix("loop over the keys", iter.span, format!("keys({text})"));
                        }
                        self.err(d);
                        Ty::Error
                    }
                };
                self.scopes.push(Vec::new());
                self.declare(var.name.clone(), elem, false, var.span, true);
                self.set_origin(Origin {
                    expr: iter.id,
                    wrap: vec![Wrap::List],
                });
                self.loops += 1;
                self.check_block(body, Want::Nothing);
                self.loops -= 1;
                self.pop_scope();
                false
            }
            Stmt::While { cond, body, .. } => {
                self.check_expr(cond, Want::Type(&Ty::Bool));
                self.loops += 1;
                self.check_block(body, Want::Nothing);
                self.loops -= 1;
                // Like `for`, a loop may run no round: it does not diverge.
                false
            }
            Stmt::Break(span) | Stmt::Continue(span) => {
                if self.loops == 0 {
                    let word = if matches!(s, Stmt::Break(_)) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.err(
                        Diagnostic::error(
                            Code::OutsideLoop,
                            *span,
                            format!("`{word}` outside a loop"),
                        )
                        .hint("`break` and `continue` belong inside a `for` or `while` body; to leave a function early, use `return`"),
                    );
                }
                // The statements after it in the block never run.
                true
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
                if let (true, Some((_, decl_span))) = (self.captured(&name), info) {
                    self.err(
                        Diagnostic::error(
                            Code::CapturedAssign,
                            root.span,
                            format!("a lambda cannot assign `{name}`, which is declared outside it"),
                        )
                        .related(decl_span, "declared here")
                        .hint("a lambda sees the values around it, not the variables: compute the new value with the builtin's result (`count`, `map`, `sum(map(…))`), or use a `for` loop"),
                    );
                    let t = self.check_expr(target, Want::Any);
                    return t;
                }
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
