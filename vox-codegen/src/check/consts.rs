//! Constants: `const NAME = value` at module level (docs/language.md,
//! "Constants").
//!
//! A constant's value is checked like a function body of its own (no
//! locals around it; a `return` in one of its blocks gives its value), on
//! first use, so constants may refer to each other in any order; a cycle is
//! an error. It may use literals, operators, builtins (but not `print` and
//! the assertions) and other constants; calling a function is an error.

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{Checker, LambdaFrame, Want};

/// A checked constant.
#[derive(Debug, Clone)]
pub struct ConstInfo {
    pub name: String,
    pub ty: Ty,
    /// Index into `module.items`.
    pub item: usize,
}

/// Where checking a constant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConstState {
    Todo,
    Checking,
    Done,
}

impl Checker<'_> {
    /// Indexes the module's constants (names clash with types and variants,
    /// which are written in capitals too).
    pub(super) fn collect_consts(&mut self) {
        let module = self.module;
        for (item, it) in module.items.iter().enumerate() {
            let Item::Const(c) = it else { continue };
            let prev = self
                .const_index
                .get(&c.name.name)
                .and_then(|&i| {
                    self.info
                        .consts
                        .get(i)
                        .and_then(|ci| match module.items.get(ci.item) {
                            Some(Item::Const(p)) => Some(p.name.span),
                            _ => None,
                        })
                })
                .or_else(|| self.type_index.get(&c.name.name).map(|p| p.1))
                .or_else(|| self.variant_index.get(&c.name.name).map(|p| p.2));
            if let Some(prev) = prev {
                self.err(
                    Diagnostic::error(
                        Code::Duplicate,
                        c.name.span,
                        format!("the name `{}` is defined more than once", c.name.name),
                    )
                    .label("redefined here")
                    .related(prev, "first defined here")
                    .hint("constants, types and variants share one set of names across the module"),
                );
                continue;
            }
            self.const_index
                .insert(c.name.name.clone(), self.info.consts.len());
            self.info.consts.push(ConstInfo {
                name: c.name.name.clone(),
                ty: Ty::Error,
                item,
            });
            self.const_state.push(ConstState::Todo);
        }
    }

    /// Checks every constant, each after the constants it uses (found by
    /// an explicit depth-first walk, so a chain of 10,000 constants needs
    /// no deeper stack than one): then no check waits on another, and a
    /// constant still unchecked when it is used is on a cycle.
    pub(super) fn check_consts(&mut self) {
        let n = self.info.consts.len();
        let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, d) in deps.iter_mut().enumerate() {
            if let Some(Item::Const(c)) = self.module.items.get(self.info.consts[i].item) {
                walk_expr(&c.value, &mut |e| {
                    if let ExprKind::Ctor { name, args: None } = &e.kind {
                        if let Some(&j) = self.const_index.get(&name.name) {
                            d.push(j);
                        }
                    }
                });
            }
        }
        // Post-order of an iterative depth-first walk.
        let mut seen = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut stack = vec![(root, 0usize)];
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(&dep) = deps[node].get(*next) {
                    *next += 1;
                    if !seen[dep] {
                        seen[dep] = true;
                        stack.push((dep, 0));
                    }
                } else {
                    order.push(node);
                    stack.pop();
                }
            }
        }
        for i in order {
            self.const_type(i, None);
        }
    }

    /// `NAME` where a value goes: the constant's type, checking it first
    /// if need be.
    pub(super) fn const_ref(&mut self, e: &Expr, ci: usize, at: Span) -> Ty {
        self.info.const_refs.insert(e.id, ci);
        self.const_type(ci, Some(at))
    }

    /// The type of constant `ci`; `from` is the use being checked, if any.
    fn const_type(&mut self, ci: usize, from: Option<Span>) -> Ty {
        match self.const_state.get(ci).copied() {
            Some(ConstState::Done) => return self.info.consts[ci].ty.clone(),
            Some(ConstState::Checking) => {
                let name = self.info.consts[ci].name.clone();
                let own = match self.module.items.get(self.info.consts[ci].item) {
                    Some(Item::Const(c)) => c.name.span,
                    _ => Span::new(crate::source::FileId(0), 0, 0),
                };
                self.err(
                    Diagnostic::error(
                        Code::ConstValue,
                        from.unwrap_or(own),
                        format!("constant `{name}` is computed from itself"),
                    )
                    .hint(
                        "a constant's value may use other constants, but not come back to this one",
                    ),
                );
                return Ty::Error;
            }
            // Used while another constant is checked, and not checked
            // before it: the two are on a cycle (see `check_consts`).
            Some(ConstState::Todo) if self.in_const => {
                let name = self.info.consts[ci].name.clone();
                let at = from.unwrap_or_else(|| Span::new(crate::source::FileId(0), 0, 0));
                self.err(
                    Diagnostic::error(
                        Code::ConstValue,
                        at,
                        format!("constant `{name}` is computed from itself"),
                    )
                    .hint(
                        "a constant's value may use other constants, but not come back to this one",
                    ),
                );
                return Ty::Error;
            }
            Some(ConstState::Todo) => {}
            None => return Ty::Error,
        }
        let Some(Item::Const(c)) = self.module.items.get(self.info.consts[ci].item) else {
            return Ty::Error;
        };
        self.const_state[ci] = ConstState::Checking;
        let declared = c.ty.as_ref().map(|t| self.resolve_type(t));
        // Checked on its own, whatever body asked for it.
        let saved = (
            std::mem::take(&mut self.scopes),
            std::mem::take(&mut self.lambdas),
            std::mem::take(&mut self.loops),
            self.current.take(),
            std::mem::take(&mut self.var_origins),
            std::mem::take(&mut self.open_uses),
            std::mem::replace(&mut self.holes, false),
            std::mem::replace(&mut self.in_const, true),
            std::mem::replace(&mut self.lints, true),
        );
        self.scopes.push(Vec::new());
        self.lambdas.push(LambdaFrame {
            ret: declared.clone(),
            scope_base: 0,
        });
        let t = match &declared {
            Some(d) => self.check_expr(&c.value, Want::Type(d)),
            None => self.check_expr(&c.value, Want::Any),
        };
        let returned = self.lambdas.pop().and_then(|f| f.ret);
        self.pop_scope();
        let mut ty = match (declared, t) {
            (Some(d), _) => d,
            (None, Ty::Never) => returned.unwrap_or(Ty::Error),
            (None, t) => t,
        };
        if self.holes || !ty.is_concrete() {
            let origins = std::mem::take(&mut self.var_origins);
            super::scope::settle_const(&mut self.info, &c.value, &ty, &origins);
            ty = ty.join(self.info.expr_type(c.value.id));
        }
        for (id, span, what) in std::mem::take(&mut self.open_uses) {
            if matches!(self.info.expr_type(id), Ty::Unknown) {
                self.open_type(span, what);
            }
        }
        if !ty.is_concrete() && !has_error(&ty) {
            self.err(
                Diagnostic::error(
                    Code::OpenType,
                    c.name.span,
                    format!("the type of constant `{}` is not known", c.name.name),
                )
                .label("its value is an empty list, an empty map or `None`")
                .hint(format!(
                    "write the type: `const {}: list[int] = []`",
                    c.name.name
                )),
            );
            ty = Ty::Error;
        }
        (
            self.scopes,
            self.lambdas,
            self.loops,
            self.current,
            self.var_origins,
            self.open_uses,
            self.holes,
            self.in_const,
            self.lints,
        ) = saved;
        self.info.consts[ci].ty = ty.clone();
        self.const_state[ci] = ConstState::Done;
        ty
    }

    /// Inside a constant's value: what it may not do (`what` is said in
    /// the message, at `span`).
    pub(super) fn not_constant(&mut self, span: Span, what: &str) {
        self.err(
            Diagnostic::error(
                Code::ConstValue,
                span,
                format!("a constant's value cannot {what}"),
            )
            .hint("a constant is computed from literals, operators, builtins and other constants; for anything else, write a function"),
        );
    }
}

/// Whether `t` has a part already reported as wrong.
fn has_error(t: &Ty) -> bool {
    match t {
        Ty::Error => true,
        Ty::List(t) | Ty::Option(t) | Ty::Result(t) | Ty::Map(t) => has_error(t),
        _ => false,
    }
}
