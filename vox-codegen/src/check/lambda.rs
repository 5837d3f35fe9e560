//! Functions as arguments: lambdas (`fn(x) => x.total > 10`, `fn(x) { … }`)
//! and functions passed by name, given to `map`, `filter`, `find`, `any`,
//! `all`, `count`, `sort_by` and `group_by` (docs/language.md, "Functions
//! as arguments").
//!
//! A lambda's parameter takes the list's element type (an annotation must
//! agree); it sees the locals around it as they are when the builtin runs
//! and cannot assign them (it captures values, not variables); `return` in
//! a block lambda gives the lambda's value; `break` and `continue` see only
//! loops inside the lambda; nothing it calls may use the network (a
//! closure cannot await), which `check_effects` settles from
//! `lambda_calls` once every function's effects are known.

use crate::ast::*;
use crate::diagnostic::{Applicability, Code, Diagnostic, Edit};
use crate::types::*;

use super::{Builtin, Callee, Checker, Kind, LambdaFrame, Want};

impl Checker<'_> {
    /// A lambda anywhere but as the function argument of a builtin.
    pub(super) fn misplaced_lambda(&mut self, l: &Lambda) -> Ty {
        self.err(
            Diagnostic::error(
                Code::Lambda,
                l.head,
                "a lambda can only be passed to a builtin that takes a function",
            )
            .label("a function value")
            .hint("pass it as the second argument of `map`, `filter`, `find`, `any`, `all`, `count`, `sort_by` or `group_by`; to name a computation, declare a function with `fn`"),
        );
        // Its body is still checked, so its names resolve and count as used.
        let params: Vec<Ty> = l.params.iter().map(|_| Ty::Error).collect();
        self.check_lambda(l, &params, None, None);
        Ty::Error
    }

    /// `map(xs, f)` and the other builtins taking a list and a function of
    /// its element.
    pub(super) fn infer_higher_order(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[Arg],
        want: Want,
    ) -> Ty {
        let (a0, f) = (&args[0].value, &args[1].value);
        // A wanted result can type an empty list (`let xs: list[int] = filter([], …)`).
        let wanted_elem = match (b, want.ty()) {
            (Builtin::Filter | Builtin::SortBy, Some(Ty::List(e)))
            | (Builtin::Find, Some(Ty::Option(e))) => Some((**e).clone()),
            (Builtin::GroupBy, Some(Ty::Map(m))) => match &**m {
                Ty::List(e) => Some((**e).clone()),
                _ => None,
            },
            _ => None,
        }
        .filter(Ty::is_concrete);
        // An annotated parameter types the list too (`count([], fn(x: int) => …)`).
        let annotated = match &f.kind {
            ExprKind::Lambda(l) => l
                .params
                .first()
                .and_then(|p| p.ty.as_ref())
                .map(|t| self.resolve_type(t)),
            _ => None,
        };
        let t = match &wanted_elem {
            Some(el) => self.check_expr(a0, Want::Type(&Ty::List(Box::new(el.clone())))),
            None => self.check_expr(a0, Want::Any),
        };
        let elem = match t {
            Ty::List(el) if el.is_concrete() => Some(*el),
            Ty::List(_) | Ty::Unknown => match wanted_elem.or_else(|| {
                annotated
                    .clone()
                    .filter(|t| t.is_concrete() && !t.is_error())
            }) {
                Some(el) => {
                    // What the annotation decided flows back into the list (`[]`).
                    self.record(a0, Ty::List(Box::new(el.clone())));
                    Some(el)
                }
                None => {
                    self.open_type(a0.span, &format!("passed to `{name}`"));
                    None
                }
            },
            Ty::Error => None,
            other => {
                let mut d = self.kind_mismatch(b, name, a0.span, &other);
                if matches!(other, Ty::Map(_)) {
                    d = d.hint(format!(
                        "`{name}` goes over a list: pass `values(m)` or `keys(m)`"
                    ));
                }
                self.err(d);
                None
            }
        };
        let elem_or_error = elem.clone().unwrap_or(Ty::Error);
        // What the function must give back, where the builtin decides it.
        let fixed = match b {
            Builtin::Filter | Builtin::Find | Builtin::Any | Builtin::All | Builtin::Count => {
                Some(Ty::Bool)
            }
            Builtin::GroupBy => Some(Ty::Str),
            Builtin::Map => match want.ty() {
                Some(Ty::List(u)) if u.is_concrete() => Some((**u).clone()),
                _ => None,
            },
            _ => None,
        };
        let ret = self.check_fn_value(name, f, &elem_or_error, fixed.as_ref(), annotated);
        let Some(elem) = elem else {
            return match b {
                Builtin::Any | Builtin::All => Ty::Bool,
                Builtin::Count => Ty::Int,
                _ => Ty::Error,
            };
        };
        let list = Ty::List(Box::new(elem.clone()));
        match b {
            Builtin::Filter => list,
            Builtin::Find => Ty::Option(Box::new(elem)),
            Builtin::Any | Builtin::All => Ty::Bool,
            Builtin::Count => Ty::Int,
            Builtin::GroupBy => Ty::Map(Box::new(list)),
            Builtin::Map => match ret {
                Some(u) if u.is_concrete() => Ty::List(Box::new(u)),
                Some(Ty::Error) | None => Ty::Error,
                Some(_) => {
                    self.open_type(f.span, "made by the function given to `map`");
                    Ty::Error
                }
            },
            Builtin::SortBy => {
                let keys = b.elements().unwrap_or(&[]);
                match ret {
                    Some(k) if Kind::any_holds(keys, &k) => list,
                    Some(Ty::Error | Ty::Never) | None => list,
                    Some(k) => {
                        self.err(
                            Diagnostic::error(
                                Code::Mismatch,
                                fn_result_span(f),
                                format!(
                                    "`sort_by` needs a key of type {}",
                                    Kind::element_prose(keys)
                                ),
                            )
                            .types(Kind::alternatives(keys), self.show(&k))
                            .hint("sort by a field of that type (`fn(x) => x.total`), or by its text, `str(…)`"),
                        );
                        list
                    }
                }
            }
            _ => Ty::Error,
        }
    }

    /// The function argument `f` of builtin `name`, called with the list's
    /// element (`elem`): a lambda, or a user function's name. `fixed` is the
    /// result the builtin needs, if it decides one. Returns the function's
    /// result type (`None` when `f` is not a function).
    fn check_fn_value(
        &mut self,
        name: &str,
        f: &Expr,
        elem: &Ty,
        fixed: Option<&Ty>,
        annotated: Option<Ty>,
    ) -> Option<Ty> {
        match &f.kind {
            ExprKind::Lambda(l) => {
                if l.params.len() != 1 {
                    self.err(
                        Diagnostic::error(
                            Code::Lambda,
                            l.head,
                            format!(
                                "the function given to `{name}` takes one parameter, the element; this one takes {}",
                                l.params.len()
                            ),
                        )
                        .hint(format!("`{name}(xs, fn(x) => …)` calls it with each element `x`")),
                    );
                }
                let params: Vec<Ty> = (0..l.params.len())
                    .map(|i| if i == 0 { elem.clone() } else { Ty::Error })
                    .collect();
                let ret = self.check_lambda(l, &params, fixed, annotated);
                self.record(f, ret.clone());
                Some(ret)
            }
            ExprKind::Var(fname) if self.lookup(fname).is_none() => {
                if let Some(&fi) = self.fn_index.get(fname) {
                    return Some(self.named_fn_value(name, f, fname, fi, elem, fixed));
                }
                if Builtin::lookup(fname).is_some() {
                    // `map(names, upper)`: a builtin is called, not passed.
                    self.err(
                        Diagnostic::error(
                            Code::Lambda,
                            f.span,
                            format!("builtin `{fname}` cannot be passed as a value"),
                        )
                        .hint(format!("wrap it in a lambda: `fn(x) => {fname}(x)`"))
                        .fix_with(
                            Applicability::MachineApplicable,
                            "wrap it in a lambda",
                            vec![Edit {
                                span: f.span,
                                replacement: format!("fn(x) => {fname}(x)"),
                            }],
                        ),
                    );
                    return None;
                }
                self.check_expr(f, Want::Any);
                None
            }
            _ => {
                let t = self.check_expr(f, Want::Any);
                if !t.is_error() {
                    self.err(
                        Diagnostic::error(
                            Code::Lambda,
                            f.span,
                            format!("`{name}` takes a function as its second argument"),
                        )
                        .types("a function", self.show(&t))
                        .hint(format!(
                            "write a lambda of the element, `{name}(xs, fn(x) => …)`, or pass a function's name"
                        )),
                    );
                }
                None
            }
        }
    }

    /// A user function passed by name (`filter(xs, is_overdue)`).
    fn named_fn_value(
        &mut self,
        name: &str,
        f: &Expr,
        fname: &str,
        fi: usize,
        elem: &Ty,
        fixed: Option<&Ty>,
    ) -> Ty {
        let info = &self.info.fns[fi];
        let (params, ret) = (info.params.clone(), info.ret.clone());
        let entry = info.test || info.name == "main";
        self.info.callees.insert(f.id, Callee::Fn(fi));
        if let Some(cur) = self.current {
            if let Some(calls) = self.info.calls.get_mut(cur) {
                calls.push((fi, f.span));
            }
        }
        self.lambda_calls.push((fi, f.span));
        let problem = if entry {
            Some(format!(
                "`{fname}` is an entry point (`fn main` or `@test`), which cannot be called"
            ))
        } else if params.len() != 1 {
            Some(format!(
                "`{name}` calls its function with one argument, the element, but `{fname}` takes {}",
                params.len()
            ))
        } else if !params[0].1.accepts(elem) {
            Some(format!(
                "`{fname}` takes `{}`, but the list holds `{}`",
                self.show(&params[0].1),
                self.show(elem)
            ))
        } else if fixed.is_some_and(|want| !want.accepts(&ret)) {
            Some(format!(
                "`{name}` needs a function giving `{}`, but `{fname}` gives `{}`",
                fixed.map_or_else(String::new, |t| self.show(t)),
                self.show(&ret)
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            self.err(
                Diagnostic::error(Code::Lambda, f.span, message)
                    .hint(format!("adapt it in a lambda: `{name}(xs, fn(x) => …)`")),
            );
            return Ty::Error;
        }
        self.record(f, ret.clone());
        ret
    }

    /// Checks a lambda's body with its parameters bound to `params`;
    /// returns its result type.
    /// `annotated` is the first parameter's written type, when the caller
    /// has resolved it already.
    fn check_lambda(
        &mut self,
        l: &Lambda,
        params: &[Ty],
        fixed: Option<&Ty>,
        mut annotated: Option<Ty>,
    ) -> Ty {
        self.scopes.push(Vec::new());
        let scope_base = self.scopes.len() - 1;
        for (p, ty) in l.params.iter().zip(params) {
            let mut ty = ty.clone();
            if let Some(written) = &p.ty {
                let declared = match annotated.take() {
                    Some(t) => t,
                    None => self.resolve_type(written),
                };
                if !ty.is_error() && !declared.is_error() && declared != ty {
                    self.err(
                        Diagnostic::error(
                            Code::Lambda,
                            written.span,
                            format!(
                                "this parameter is declared `{}`, but the list holds `{}`",
                                self.show(&declared),
                                self.show(&ty)
                            ),
                        )
                        .types(self.show(&ty), self.show(&declared))
                        .hint("a lambda's parameter is the list's element: annotate it with that type, or leave the annotation out"),
                    );
                    // Reported once: its uses are not judged again.
                    ty = Ty::Error;
                } else if ty.is_error() {
                    ty = declared;
                }
            }
            self.declare(p.name.name.clone(), ty, false, p.name.span, true);
        }
        self.lambdas.push(LambdaFrame {
            ret: fixed.cloned(),
            scope_base,
        });
        // `break`/`continue` see only loops inside the lambda.
        let loops = std::mem::take(&mut self.loops);
        let want = match fixed {
            Some(t) => Want::Type(t),
            None => Want::Any,
        };
        let body = self.check_expr(&l.body, want);
        self.loops = loops;
        let frame = self.lambdas.pop();
        self.pop_scope();
        match (body, frame.and_then(|f| f.ret)) {
            // A body that always returns: its `return`s decide.
            (Ty::Never, Some(r)) => r,
            // A `return` decided the type and the body's value disagrees.
            (t, Some(r)) if fixed.is_none() && !r.accepts(&t) && !t.accepts(&r) => {
                let at = match &l.body.kind {
                    ExprKind::Block(b) => b.stmts.last().map_or(l.body.span, Stmt::span),
                    _ => l.body.span,
                };
                self.err(
                    Diagnostic::error(Code::Mismatch, at, "mismatched types")
                        .types(self.show(&r), self.show(&t))
                        .hint("the lambda's `return` gives another type than its last expression"),
                );
                Ty::Error
            }
            (t, _) => t,
        }
    }

    /// Inside a lambda: whether the binding `name` was declared outside it.
    pub(super) fn captured(&self, name: &str) -> bool {
        let Some(frame) = self.lambdas.last() else {
            return false;
        };
        for (depth, scope) in self.scopes.iter().enumerate().rev() {
            if scope.iter().any(|(n, _)| n == name) {
                return depth < frame.scope_base;
            }
        }
        false
    }

    /// `return` inside a lambda: the lambda's result. Returns whether it was
    /// one (else the enclosing function's `return` rules apply).
    pub(super) fn lambda_return(
        &mut self,
        value: Option<&Expr>,
        span: crate::source::Span,
    ) -> bool {
        let Some(ret) = self.lambdas.last().map(|f| f.ret.clone()) else {
            return false;
        };
        let t = match (value, &ret) {
            (Some(v), Some(r)) => {
                let r = r.clone();
                self.check_expr(v, Want::Type(&r))
            }
            (Some(v), None) => self.check_expr(v, Want::Any),
            (None, Some(r)) if !matches!(r, Ty::Unit | Ty::Error) => {
                self.err(
                    Diagnostic::error(
                        Code::Mismatch,
                        span,
                        format!(
                            "`return` without a value in a lambda giving `{}`",
                            self.show(r)
                        ),
                    )
                    .hint("return the lambda's value: `return …`"),
                );
                Ty::Error
            }
            (None, _) => Ty::Unit,
        };
        if let Some(frame) = self.lambdas.last_mut() {
            if frame.ret.is_none() && !matches!(t, Ty::Never | Ty::Error) {
                frame.ret = Some(t);
            }
        }
        true
    }
}

/// Where a function argument's result is written: a lambda's body, or the
/// name of a function passed.
fn fn_result_span(f: &Expr) -> crate::source::Span {
    match &f.kind {
        ExprKind::Lambda(l) => match &l.body.kind {
            ExprKind::Block(b) => b.stmts.last().map_or(l.body.span, Stmt::span),
            _ => l.body.span,
        },
        _ => f.span,
    }
}
