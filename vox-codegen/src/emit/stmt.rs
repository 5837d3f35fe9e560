//! Statements and blocks.

use std::fmt::Write as _;

use crate::ast::*;
use crate::types::Ty;

use super::names::rust_ident;
use super::{fill_holes, head, ind, produces_value, Ctx, Emitter, Tail};

impl Emitter<'_> {
    pub(super) fn stmt(&mut self, s: &Stmt, ctx: Ctx, depth: usize) -> String {
        let pad = ind(depth);
        match s {
            Stmt::LetPattern { pattern, value, .. } => {
                // A `match` whose one arm gives the bound names as a tuple.
                let names = pattern_names(pattern);
                let v = super::head(self.typed(value, None, ctx, depth));
                let (pat, guards, rebinds) = self.pattern_parts(pattern, self.ty(value));
                let tuple = format!(
                    "({})",
                    names
                        .iter()
                        .map(|n| format!("{},", rust_ident(n)))
                        .collect::<String>()
                );
                let guard = if guards.is_empty() {
                    String::new()
                } else {
                    format!(" if {}", guards.join(" && "))
                };
                let rb: String = rebinds.iter().map(|r| format!("{r} ")).collect();
                format!(
                    "{pad}let {tuple} = match {v} {{ {pat}{guard} => {{ {rb}{tuple} }} _ => ::std::unreachable!(\"an irrefutable pattern\") }};\n"
                )
            }
            Stmt::Let {
                mutable,
                name,
                value,
                ..
            } => {
                let vt = self.info.expr_type(value.id).clone();
                let annot = if vt.is_concrete() && !matches!(vt, Ty::Never) {
                    format!(": {}", self.rust_type(&vt))
                } else if !matches!(vt, Ty::Never) {
                    // The checker settled what later uses say about the
                    // value (`settle_fn`); nothing decides what is left.
                    format!(": {}", self.rust_type(&fill_holes(&vt)))
                } else {
                    String::new()
                };
                let v = self.expr(value, ctx, depth, Tail::Value);
                format!(
                    "{pad}let {}{}{annot} = {v};\n",
                    if *mutable { "mut " } else { "" },
                    rust_ident(&name.name)
                )
            }
            Stmt::Assign { target, value, .. } => {
                if let Some(update) = self.in_place(target, value, ctx, depth) {
                    return format!("{pad}{update}\n");
                }
                let place = self.place(target, ctx, depth);
                let mut v = self.expr(value, ctx, depth, Tail::Value);
                if self.is_boxed_field(target) {
                    v = format!("({v}).map({})", self.box_fn(self.ty(target)));
                }
                format!("{pad}{place} = {v};\n")
            }
            Stmt::Return { value, .. } => {
                let v = match value {
                    Some(v) => self.expr(v, ctx, depth, Tail::Value),
                    None => String::new(),
                };
                match (ctx, value.is_some()) {
                    (Ctx::Pure, true) => format!("{pad}return {v};\n"),
                    (Ctx::Pure, false) => format!("{pad}return;\n"),
                    (Ctx::Fallible, true) => {
                        format!("{pad}return ::std::result::Result::Ok({v});\n")
                    }
                    (Ctx::Fallible, false) => {
                        format!("{pad}return ::std::result::Result::Ok(());\n")
                    }
                }
            }
            Stmt::For {
                var, iter, body, ..
            } => {
                // `for i in range(…)` counts without building the list.
                let it = match &iter.kind {
                    ExprKind::Call { args, .. }
                        if self.info.callees.get(&iter.id)
                            == Some(&crate::check::Callee::Builtin(
                                crate::check::Builtin::Range,
                            )) =>
                    {
                        self.range(args, ctx, depth)
                    }
                    _ => head(self.typed(iter, None, ctx, depth)),
                };
                let b = self.block_body(body, ctx, depth + 1, Tail::Discard);
                format!(
                    "{pad}for {} in {it} {{\n{b}{pad}}}\n",
                    rust_ident(&var.name)
                )
            }
            Stmt::While { cond, body, .. } => {
                let c = head(self.expr(cond, ctx, depth, Tail::Value));
                let b = self.block_body(body, ctx, depth + 1, Tail::Discard);
                format!("{pad}while {c} {{\n{b}{pad}}}\n")
            }
            Stmt::Break(_) => format!("{pad}break;\n"),
            Stmt::Continue(_) => format!("{pad}continue;\n"),
            // A dropped value is dropped explicitly, so rustc does not warn
            // (`x + 1;`, `x;`, a value-producing `match`).
            Stmt::Expr(e) if produces_value(self.ty(e)) => {
                format!("{pad}let _ = {};\n", self.typed(e, None, ctx, depth))
            }
            Stmt::Expr(e) => format!("{pad}{};\n", self.expr(e, ctx, depth, Tail::Discard)),
        }
    }

    /// `xs = xs + ys`, `m = insert(m, k, v)` and `m = remove(m, k)` on a
    /// local: the local is updated where it is instead of being copied
    /// into a new value, so a list or map built in a loop takes linear time,
    /// not quadratic (docs/language.md, "Lists"). What is added (or the key)
    /// is evaluated first, as it was before the copy was changed: reading
    /// the local in it reads the old value, and an early `return` leaves
    /// the local as it was. `None` for anything else, and where the types
    /// are not all known (the copy then writes them out).
    fn in_place(&mut self, target: &Expr, value: &Expr, ctx: Ctx, depth: usize) -> Option<String> {
        use crate::check::{Builtin, Callee};
        let ExprKind::Var(name) = &target.kind else {
            return None;
        };
        let same = |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if n == name);
        let whole = self.ty(value).clone();
        if !whole.is_concrete() || *self.ty(target) != whole {
            return None;
        }
        let x = rust_ident(name);
        match (&value.kind, &whole) {
            (
                ExprKind::Binary {
                    op: BinaryOp::Add,
                    lhs,
                    rhs,
                },
                Ty::List(_),
            ) if same(lhs) && matches!(self.ty(rhs), Ty::List(_)) => {
                let r = self.typed(rhs, Some(&whole), ctx, depth);
                Some(format!("{{ let VOX_R = {r}; {x}.extend(VOX_R); }}"))
            }
            (ExprKind::Call { args, .. }, Ty::Map(v))
                if args.first().is_some_and(|a| same(&a.value)) =>
            {
                match (self.info.callees.get(&value.id), args.as_slice()) {
                    (Some(Callee::Builtin(Builtin::Insert)), [_, k, item]) => {
                        let v = (**v).clone();
                        let k = self.expr(&k.value, ctx, depth, Tail::Value);
                        let item = self.typed(&item.value, Some(&v), ctx, depth);
                        Some(format!("{{ let VOX_K: ::std::string::String = {k}; let VOX_V = {item}; {x}.insert(VOX_K, VOX_V); }}"))
                    }
                    (Some(Callee::Builtin(Builtin::Remove)), [_, k]) => {
                        let k = self.expr(&k.value, ctx, depth, Tail::Value);
                        Some(format!("{{ let VOX_K: ::std::string::String = {k}; {x}.remove(VOX_K.as_str()); }}"))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The statements of a block (without braces) at `depth`.
    pub(super) fn block_body(&mut self, b: &Block, ctx: Ctx, depth: usize, tail: Tail) -> String {
        self.statements(b, ctx, depth, tail, false)
    }

    /// The statements of a block (without braces) at `depth`; with
    /// `ok_tail`, a value in tail position is wrapped in `Ok(…)` (a
    /// fallible function's body).
    pub(super) fn statements(
        &mut self,
        b: &Block,
        ctx: Ctx,
        depth: usize,
        tail: Tail,
        ok_tail: bool,
    ) -> String {
        let mut out = String::new();
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == b.stmts.len();
            match (s, last, tail) {
                (Stmt::Expr(e), true, Tail::Value) => {
                    let v = self.expr(e, ctx, depth, Tail::Value);
                    let v = if ok_tail {
                        format!("::std::result::Result::Ok({v})")
                    } else {
                        v
                    };
                    let _ = writeln!(out, "{}{v}", ind(depth));
                }
                (Stmt::Let { value, .. }, _, _) if matches!(self.ty(value), Ty::Never) => {
                    // The value always returns: nothing after it runs, and
                    // the binding has no type, so the rest is not emitted.
                    let v = self.expr(value, ctx, depth, Tail::Value);
                    let _ = writeln!(out, "{}let _ = {v};", ind(depth));
                    break;
                }
                _ => out.push_str(&self.stmt(s, ctx, depth)),
            }
        }
        out
    }

    pub(super) fn block(&mut self, b: &Block, ctx: Ctx, depth: usize, tail: Tail) -> String {
        let body = self.block_body(b, ctx, depth + 1, tail);
        format!("{{\n{body}{}}}", ind(depth))
    }
}

/// The names a pattern binds, in the order written.
fn pattern_names(p: &Pattern) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(p: &Pattern, out: &mut Vec<String>) {
        match &p.kind {
            PatternKind::Binding(n) => out.push(n.clone()),
            PatternKind::Ctor { args, .. } => args.iter().flatten().for_each(|a| walk(a, out)),
            PatternKind::Record { fields, .. } => fields.iter().for_each(|f| walk(&f.pattern, out)),
            PatternKind::Or(alts) => alts.iter().for_each(|a| walk(a, out)),
            _ => {}
        }
    }
    walk(p, &mut out);
    out
}
