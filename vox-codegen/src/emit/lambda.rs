//! Functions as arguments: `map`, `filter`, `find`, `any`, `all`, `count`,
//! `sort_by` and `group_by` over an owned list, with the function argument
//! (a lambda or a function's name) as a Rust closure called with each
//! element by value (docs/language.md, "Functions as arguments").
//!
//! A lambda's body is emitted as pure code whatever encloses it: the checker
//! lets nothing inside one use the network, so it has no `.await` or `?`,
//! and its `return` leaves the closure, as Vox says it leaves the lambda.

use crate::ast::*;
use crate::check::{Builtin, Callee};
use crate::types::Ty;

use super::names::rust_ident;
use super::{ind, Ctx, Emitter, Tail};

impl Emitter<'_> {
    pub(super) fn higher_order(
        &mut self,
        call: &Expr,
        b: Builtin,
        args: &[Arg],
        ctx: Ctx,
        depth: usize,
    ) -> String {
        let (Some(a0), Some(a1)) = (args.first(), args.get(1)) else {
            return "::std::unreachable!()".into();
        };
        let (a0, a1) = (&a0.value, &a1.value);
        let elem = match self.ty(a0) {
            Ty::List(e) => (**e).clone(),
            _ => Ty::Error,
        };
        let t = self.rust_type(&elem);
        let list = format!("{}.into_iter()", self.typed(a0, None, ctx, depth));
        let f = self.fn_value(a1, &elem, depth);
        let vec = |x: &str| format!("::std::vec::Vec<{x}>");
        // The element passed by value to a predicate that `Iterator` hands a `&T`.
        let by_ref = "|VOX_E| VOX_F(::std::clone::Clone::clone(VOX_E))";
        let body = match b {
            Builtin::Map => {
                let u = self.rust_type(self.ty(a1));
                format!("{list}.map(VOX_F).collect::<{}>()", vec(&u))
            }
            Builtin::Filter => format!("{list}.filter({by_ref}).collect::<{}>()", vec(&t)),
            Builtin::Find => format!("{list}.find({by_ref})"),
            Builtin::Any => format!("{list}.any(VOX_F)"),
            Builtin::All => format!("{list}.all(VOX_F)"),
            Builtin::Count => format!("({list}.filter({by_ref}).count() as i64)"),
            Builtin::SortBy => {
                let key = self.ty(a1).clone();
                let k = self.rust_type(&key);
                let cmp = self.comparator(call, &key);
                // Each key computed once; `sort_by` is stable, so equal
                // keys keep the list's order.
                format!(
                    "let VOX_CMP = {cmp}; let mut VOX_K: {} = {list}.map(|VOX_E| (VOX_F(::std::clone::Clone::clone(&VOX_E)), VOX_E)).collect(); VOX_K.sort_by(|VOX_A, VOX_B| VOX_CMP(&VOX_A.0, &VOX_B.0)); VOX_K.into_iter().map(|VOX_P| VOX_P.1).collect::<{}>()",
                    vec(&format!("({k}, {t})")),
                    vec(&t)
                )
            }
            Builtin::GroupBy => format!(
                "let mut VOX_M: ::std::collections::BTreeMap<::std::string::String, {}> = ::std::collections::BTreeMap::new(); for VOX_E in {list} {{ VOX_M.entry(VOX_F(::std::clone::Clone::clone(&VOX_E))).or_default().push(VOX_E); }} VOX_M",
                vec(&t)
            ),
            _ => return "::std::unreachable!()".into(),
        };
        format!("{{ let mut VOX_F = {f}; {body} }}")
    }

    /// The function argument `f`, called with an element of type `elem`, as
    /// a Rust closure (or a path to a function).
    fn fn_value(&mut self, f: &Expr, elem: &Ty, depth: usize) -> String {
        match &f.kind {
            ExprKind::Lambda(l) => {
                let ret = self.ty(f).clone();
                let params: Vec<String> = l
                    .params
                    .iter()
                    .map(|p| format!("{}: {}", rust_ident(&p.name.name), self.rust_type(elem)))
                    .collect();
                let annotation = if ret.is_concrete() && !matches!(ret, Ty::Never) {
                    format!(" -> {}", self.rust_type(&ret))
                } else {
                    String::new()
                };
                let body = match &l.body.kind {
                    ExprKind::Block(b) => self.block(b, Ctx::Pure, depth, Tail::Value),
                    _ => format!(
                        "{{\n{}{}\n{}}}",
                        ind(depth + 1),
                        self.expr(&l.body, Ctx::Pure, depth + 1, Tail::Value),
                        ind(depth)
                    ),
                };
                format!("|{}|{annotation} {body}", params.join(", "))
            }
            ExprKind::Var(name) => match self.info.callees.get(&f.id) {
                Some(Callee::Fn(_)) => {
                    let module = if self.in_test { "super" } else { "self" };
                    format!("{module}::{}", rust_ident(name))
                }
                _ => "::std::unreachable!()".into(),
            },
            _ => "::std::unreachable!()".into(),
        }
    }
}
