//! Expressions: places, value-semantics clones, boxed fields, literals,
//! operators, `if`, and constructors.

use crate::ast::*;
use crate::check::Ctor;
use crate::types::Ty;

use super::items::unbox_fn;
use super::names::{float_lit, rust_ident, rust_str, rust_type_ident};
use super::walk::has_empty_list;
use super::{fill_holes, head, is_copy, Ctx, Emitter, Tail};

impl<'a> Emitter<'a> {
    pub(super) fn ty(&self, e: &Expr) -> &'a Ty {
        self.info.expr_type(e.id)
    }

    /// A place expression (no clone): `x`, `x.a.b`.
    pub(super) fn place(&mut self, e: &Expr, ctx: Ctx, depth: usize) -> String {
        match &e.kind {
            ExprKind::Var(n) => rust_ident(n),
            ExprKind::Field { base, name } => format!(
                "{}.{}",
                self.place(base, ctx, depth),
                rust_ident(&name.name)
            ),
            _ => format!("({})", self.expr(e, ctx, depth, Tail::Value)),
        }
    }

    fn is_place(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) => true,
            ExprKind::Field { base, .. } => Self::is_place(base),
            _ => false,
        }
    }

    /// Whether a field access reads a boxed (recursive `Option`) field.
    pub(super) fn is_boxed_field(&self, e: &Expr) -> bool {
        self.boxed_depth(e).is_some()
    }

    /// For a field access reading a boxed field, how many layers wrap the box.
    fn boxed_depth(&self, e: &Expr) -> Option<usize> {
        let ExprKind::Field { base, name } = &e.kind else {
            return None;
        };
        match self.ty(base) {
            Ty::Named(id) => self
                .boxed
                .get(&(*id, usize::MAX, name.name.clone()))
                .copied(),
            _ => None,
        }
    }

    /// Something that can be borrowed with `&`: a place, or a parenthesized value.
    pub(super) fn borrowable(&mut self, e: &Expr, ctx: Ctx, depth: usize) -> String {
        if Self::is_place(e) && !self.path_has_boxed(e) && self.ty(e).is_concrete() {
            self.place(e, ctx, depth)
        } else {
            format!("({})", self.typed(e, None, ctx, depth))
        }
    }

    /// A value whose Rust type must be known where it is used (a generic
    /// builtin's argument, an operand of `==` or list `+`, a dropped value).
    /// When the checker's type has holes (`[]`, `None`: nothing said what
    /// they hold), the value is bound to its type with the holes filled from
    /// `want` (the other operand), else with `Unit` (docs/language.md,
    /// "Empty lists and None").
    pub(super) fn typed(&mut self, e: &Expr, want: Option<&Ty>, ctx: Ctx, depth: usize) -> String {
        let t = self.ty(e);
        let v = self.expr(e, ctx, depth, Tail::Value);
        // `vec![]` alone is ambiguous to rustc in `==` and `extend` even
        // when Vox knows its type.
        if t.is_concrete() && !has_empty_list(e) {
            return v;
        }
        let full = fill_holes(&want.map_or_else(|| t.clone(), |w| t.join(w)));
        format!("{{ let VOX_T: {} = {v}; VOX_T }}", self.rust_type(&full))
    }

    /// The map `insert`/`remove` (the call `call`) works on. When Vox knows
    /// the map's value type it is written down; when it does not (`[:]`
    /// decided only later, say by the other side of an `is`), nothing is
    /// written here, so rustc takes the type from the enclosing annotation:
    /// filling the hole with `()` at this depth contradicted it (sweep seed
    /// 40115: `remove(remove([:], k), k2) isnt ["k": Leaf]`).
    pub(super) fn map_operand(&mut self, m: &Expr, call: &Expr, ctx: Ctx, depth: usize) -> String {
        let t = self.ty(call).clone();
        if t.is_concrete() {
            self.typed(m, Some(&t), ctx, depth)
        } else {
            self.expr(m, ctx, depth, Tail::Value)
        }
    }

    fn path_has_boxed(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Field { base, .. } => self.is_boxed_field(e) || self.path_has_boxed(base),
            _ => false,
        }
    }

    pub(super) fn expr(&mut self, e: &Expr, ctx: Ctx, depth: usize, tail: Tail) -> String {
        match &e.kind {
            ExprKind::Int(n) if *n < 0 => format!("({n}_i64)"),
            ExprKind::Int(n) => format!("{n}_i64"),
            ExprKind::Float(x) => float_lit(*x),
            ExprKind::Str(s) => match self.ty(e) {
                // A run-time category's value (the checker allows a literal).
                Ty::Named(id) => {
                    let name = self
                        .info
                        .types
                        .get(*id)
                        .map_or_else(String::new, |d| rust_type_ident(&d.name));
                    format!("{name}::new({})", rust_str(s))
                }
                _ => format!("::std::string::String::from({})", rust_str(s)),
            },
            ExprKind::Bool(b) => b.to_string(),
            // Modules with errors are never emitted.
            ExprKind::Error | ExprKind::Poison(_) => "::std::unreachable!()".into(),
            ExprKind::Try(inner) => {
                self.try_call = true;
                let v = self.expr(inner, ctx, depth, Tail::Value);
                self.try_call = false;
                v
            }
            ExprKind::Var(n) => {
                let id = rust_ident(n);
                if is_copy(self.ty(e)) {
                    id
                } else {
                    format!("{id}.clone()")
                }
            }
            ExprKind::Field { base, name } => {
                let field = rust_ident(&name.name);
                let boxed = self.boxed_depth(e);
                let (text, owned) = if Self::is_place(base) && !self.path_has_boxed(base) {
                    (format!("{}.{field}", self.place(base, ctx, depth)), false)
                } else {
                    (
                        format!("({}).{field}", self.expr(base, ctx, depth, Tail::Value)),
                        true,
                    )
                };
                match (boxed, owned, is_copy(self.ty(e))) {
                    (Some(n), false, _) => format!("{text}.clone().map({})", unbox_fn(n)),
                    (Some(n), true, _) => format!("{text}.map({})", unbox_fn(n)),
                    (None, false, false) => format!("{text}.clone()"),
                    _ => text,
                }
            }
            ExprKind::Ctor { .. } if self.info.const_refs.contains_key(&e.id) => {
                self.const_value(self.info.const_refs[&e.id])
            }
            ExprKind::Ctor { name, args } => self.ctor(e, name, args.as_deref(), ctx, depth),
            ExprKind::Record { name, fields } => {
                let Ty::Named(id) = self.ty(e).clone() else {
                    return "::std::unreachable!()".into();
                };
                let mut parts = Vec::new();
                for f in fields {
                    let mut v = self.expr(&f.value, ctx, depth, Tail::Value);
                    if self
                        .boxed
                        .contains_key(&(id, usize::MAX, f.name.name.clone()))
                    {
                        let fty = self
                            .info
                            .types
                            .get(id)
                            .and_then(|d| d.fields())
                            .and_then(|fs| fs.iter().find(|x| x.name == f.name.name))
                            .map_or(&Ty::Error, |x| &x.ty);
                        v = format!("({v}).map({})", self.box_fn(fty));
                    }
                    parts.push(format!("{}: {v}", rust_ident(&f.name.name)));
                }
                format!("{} {{ {} }}", rust_type_ident(&name.name), parts.join(", "))
            }
            ExprKind::List(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|i| self.expr(i, ctx, depth, Tail::Value))
                    .collect();
                format!("::std::vec![{}]", parts.join(", "))
            }
            // Entries are inserted in the order written (keys and values
            // evaluated left to right); a later equal key replaces an earlier one.
            ExprKind::Map(entries) => {
                // With holes (`[:]` alone) the type is left to the use
                // (`typed`), as for `[]`.
                let t = self.ty(e);
                let annotation = if t.is_concrete() {
                    format!(": {}", self.rust_type(t))
                } else {
                    String::new()
                };
                if entries.is_empty() {
                    return "::std::collections::BTreeMap::new()".into();
                }
                let mut out =
                    format!("{{ let mut VOX_M{annotation} = ::std::collections::BTreeMap::new(); ");
                for m in entries {
                    let k = self.expr(&m.key, ctx, depth, Tail::Value);
                    let v = self.expr(&m.value, ctx, depth, Tail::Value);
                    out.push_str(&format!("VOX_M.insert({k}, {v}); "));
                }
                out.push_str("VOX_M }");
                out
            }
            ExprKind::Call { callee, args } => self.call(e, callee, args, ctx, depth),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                expr,
            } if matches!(self.ty(expr), Ty::Decimal) => {
                let v = format!("&{}", self.borrowable(expr, ctx, depth));
                self.checked(e, "decimal::neg", &[v])
            }
            ExprKind::Unary { op, expr } => {
                let v = self.expr(expr, ctx, depth, Tail::Value);
                match op {
                    UnaryOp::Neg if matches!(self.ty(expr), Ty::Int) => {
                        self.checked(e, "arith::neg", &[v])
                    }
                    UnaryOp::Neg => format!("(-{v})"),
                    UnaryOp::Not => format!("(!{v})"),
                }
            }
            ExprKind::Binary { lhs, rhs, .. }
                if matches!(self.ty(lhs), Ty::Never) || matches!(self.ty(rhs), Ty::Never) =>
            {
                // The operator is never applied: evaluate up to the operand
                // that returns, and let its `!` take the context's type.
                let l = self.expr(lhs, ctx, depth, Tail::Value);
                if matches!(self.ty(lhs), Ty::Never) {
                    l
                } else {
                    let r = self.expr(rhs, ctx, depth, Tail::Value);
                    format!("{{ let _ = {l}; {r} }}")
                }
            }
            ExprKind::Binary { op, lhs, rhs } if matches!(self.ty(lhs), Ty::Decimal) => {
                self.decimal_binary(e, *op, lhs, rhs, ctx, depth)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (lt, rt) = (self.ty(lhs), self.ty(rhs));
                let l = self.typed(lhs, Some(rt), ctx, depth);
                let r = self.typed(rhs, Some(lt), ctx, depth);
                if *op == BinaryOp::Add && matches!(self.ty(lhs), Ty::Str) {
                    return format!("::std::format!(\"{{}}{{}}\", {l}, {r})");
                }
                if *op == BinaryOp::Add && matches!(self.ty(lhs), Ty::List(_)) {
                    return format!("{{ let mut VOX_L = {l}; VOX_L.extend({r}); VOX_L }}");
                }
                if matches!(self.ty(lhs), Ty::Int) {
                    let checked = match op {
                        BinaryOp::Add => Some("arith::add"),
                        BinaryOp::Sub => Some("arith::sub"),
                        BinaryOp::Mul => Some("arith::mul"),
                        BinaryOp::Div => Some("arith::div"),
                        BinaryOp::Rem => Some("arith::rem"),
                        _ => None,
                    };
                    if let Some(f) = checked {
                        return self.checked(e, f, &[l, r]);
                    }
                }
                let sym = match op {
                    BinaryOp::Add => "+",
                    BinaryOp::Sub => "-",
                    BinaryOp::Mul => "*",
                    BinaryOp::Div => "/",
                    BinaryOp::Rem => "%",
                    BinaryOp::Eq => "==",
                    BinaryOp::NotEq => "!=",
                    BinaryOp::Lt => "<",
                    BinaryOp::Le => "<=",
                    BinaryOp::Gt => ">",
                    BinaryOp::Ge => ">=",
                    BinaryOp::And => "&&",
                    BinaryOp::Or => "||",
                };
                format!("({l} {sym} {r})")
            }
            ExprKind::If { cond, then, els } => {
                let c = head(self.expr(cond, ctx, depth, Tail::Value));
                let t = self.block(then, ctx, depth, tail);
                match els {
                    Some(b) => {
                        let eb = self.block(b, ctx, depth, tail);
                        format!("if {c} {t} else {eb}")
                    }
                    None => format!("if {c} {t}"),
                }
            }
            ExprKind::Match {
                scrutinee, arms, ..
            } => self.match_expr(scrutinee, arms, ctx, depth, tail),
            ExprKind::Block(b) => self.block(b, ctx, depth, tail),
            // Only a builtin's function argument, emitted there (`higher_order`).
            ExprKind::Lambda(_) => "::std::unreachable!()".into(),
        }
    }

    fn ctor(
        &mut self,
        e: &Expr,
        name: &Ident,
        args: Option<&[Arg]>,
        ctx: Ctx,
        depth: usize,
    ) -> String {
        let first = |s: &mut Self| -> String {
            args.and_then(|a| a.first())
                .map(|a| s.expr(&a.value, ctx, depth, Tail::Value))
                .unwrap_or_else(|| "::std::unreachable!()".into())
        };
        match self.info.ctors.get(&e.id) {
            Some(Ctor::None) => "::std::option::Option::None".into(),
            Some(Ctor::Some) => format!("::std::option::Option::Some({})", first(self)),
            // The error type is always `str`; say so, since nothing else may.
            Some(Ctor::Ok) => format!(
                "::std::result::Result::<_, ::std::string::String>::Ok({})",
                first(self)
            ),
            Some(Ctor::Err) => format!("::std::result::Result::Err({})", first(self)),
            Some(Ctor::Variant(tid, vi)) => {
                let (tid, vi) = (*tid, *vi);
                let Some(def) = self.info.types.get(tid) else {
                    return "::std::unreachable!()".into();
                };
                let tname = rust_type_ident(&def.name);
                let vname = rust_type_ident(&name.name);
                let fields = def
                    .variants()
                    .and_then(|v| v.get(vi))
                    .map(|v| v.fields.clone())
                    .unwrap_or_default();
                if fields.is_empty() {
                    return format!("{tname}::{vname}");
                }
                let args = args.unwrap_or(&[]);
                // Fields in the order the arguments are written: a Rust
                // struct expression evaluates its fields in written order.
                let mut written: Vec<(usize, &crate::types::FieldDef)> = fields
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| {
                        let at = args
                            .iter()
                            .position(|a| a.name.as_ref().is_some_and(|n| n.name == f.name))
                            .or_else(|| {
                                (args.iter().all(|a| a.name.is_none()) && i < args.len())
                                    .then_some(i)
                            })?;
                        Some((at, f))
                    })
                    .collect();
                written.sort_by_key(|(at, _)| *at);
                let mut parts = Vec::new();
                for (at, f) in written {
                    let arg = &args[at];
                    let mut v = self.expr(&arg.value, ctx, depth, Tail::Value);
                    if self.boxed.contains_key(&(tid, vi, f.name.clone())) {
                        v = format!("({v}).map({})", self.box_fn(&f.ty));
                    }
                    parts.push(format!("{}: {v}", rust_ident(&f.name)));
                }
                format!("{tname}::{vname} {{ {} }}", parts.join(", "))
            }
            None => "::std::unreachable!()".into(),
        }
    }
}
