//! `match` and patterns.

use std::fmt::Write as _;

use crate::ast::*;
use crate::types::Ty;

use super::items::unbox_fn;
use super::names::{rust_ident, rust_str, rust_type_ident};
use super::{head, ind, produces_value, Ctx, Emitter, Tail};

impl Emitter<'_> {
    pub(super) fn match_expr(
        &mut self,
        scrutinee: &Expr,
        arms: &[Arm],
        ctx: Ctx,
        depth: usize,
        tail: Tail,
    ) -> String {
        let st = self.ty(scrutinee).clone();
        let s = head(self.typed(scrutinee, None, ctx, depth));
        let mut out = format!("match {s} {{\n");
        let mut guarded = false;
        for arm in arms {
            let mut guards = Vec::new();
            let mut rebinds = Vec::new();
            let pat = self.pattern(&arm.pattern, &st, &mut guards, &mut rebinds);
            if let Some(g) = &arm.guard {
                let cond = self.expr(g, ctx, depth + 1, Tail::Value);
                if rebinds.is_empty() {
                    guards.push(format!("({cond})"));
                } else {
                    // The guard sees the arm's names as the body does: unbox
                    // copies of the boxed ones first (a guard only borrows).
                    let rb: String = rebinds
                        .iter()
                        .map(|r| format!("{} ", r.replacen(".map(", ".clone().map(", 1)))
                        .collect();
                    guards.push(format!("{{ {rb}{cond} }}"));
                }
            }
            let guard = if guards.is_empty() {
                String::new()
            } else {
                guarded = true;
                format!(" if {}", guards.join(" && "))
            };
            let body = match &arm.body.kind {
                ExprKind::Block(b) => {
                    let inner = self.block_body(b, ctx, depth + 2, tail);
                    let rb: String = rebinds
                        .iter()
                        .map(|r| format!("{}{r}\n", ind(depth + 2)))
                        .collect();
                    format!("{{\n{rb}{inner}{}}}", ind(depth + 1))
                }
                _ => {
                    let v = self.expr(&arm.body, ctx, depth + 1, tail);
                    let rb: String = rebinds.iter().map(|r| format!("{r} ")).collect();
                    match tail {
                        Tail::Value if rebinds.is_empty() => v,
                        Tail::Value => format!("{{ {rb}{v} }}"),
                        Tail::Discard if produces_value(self.ty(&arm.body)) => {
                            format!("{{ {rb}let _ = {v}; }}")
                        }
                        Tail::Discard => format!("{{ {rb}{v}; }}"),
                    }
                }
            };
            let _ = writeln!(out, "{}{pat}{guard} => {body},", ind(depth + 1));
        }
        if guarded {
            // rustc cannot see through guards; the Vox checker proved the
            // match exhaustive, so this arm is never taken.
            let _ = writeln!(
                out,
                "{}_ => ::std::unreachable!(\"match proven exhaustive by the Vox checker\"),",
                ind(depth + 1)
            );
        }
        let _ = write!(out, "{}}}", ind(depth));
        out
    }

    /// A pattern for a value of type `t` with its guards and rebinds.
    pub(super) fn pattern_parts(
        &mut self,
        p: &Pattern,
        t: &Ty,
    ) -> (String, Vec<String>, Vec<String>) {
        let mut guards = Vec::new();
        let mut rebinds = Vec::new();
        let pat = self.pattern(p, t, &mut guards, &mut rebinds);
        (pat, guards, rebinds)
    }

    pub(super) fn fresh(&mut self, prefix: &str) -> String {
        self.tmp += 1;
        format!("{prefix}{}", self.tmp)
    }

    /// Emits a pattern for a value of type `t`. String literals become a
    /// binding plus a guard; recursive (boxed) fields are unboxed by `rebinds`.
    fn pattern(
        &mut self,
        p: &Pattern,
        t: &Ty,
        guards: &mut Vec<String>,
        rebinds: &mut Vec<String>,
    ) -> String {
        match &p.kind {
            PatternKind::Wildcard | PatternKind::Invalid => "_".into(),
            PatternKind::Binding(n) => rust_ident(n),
            PatternKind::Int(n) => n.to_string(),
            PatternKind::Bool(b) => b.to_string(),
            PatternKind::Or(alts) => {
                // Alternatives bind no names (the checker insists), so any
                // guard an alternative needs (string literals, boxed fields)
                // can test a copy of the value on its own.
                let mut parts = Vec::new();
                let mut alt_guards = Vec::new();
                for a in alts {
                    let mut g = Vec::new();
                    let mut r = Vec::new();
                    let text = self.pattern(a, t, &mut g, &mut r);
                    alt_guards.push(g);
                    parts.push(text);
                }
                if alt_guards.iter().all(Vec::is_empty) {
                    return format!("({})", parts.join(" | "));
                }
                let v = self.fresh("VOX_O");
                let tests: Vec<String> = parts
                    .iter()
                    .zip(&alt_guards)
                    .map(|(p, g)| {
                        if g.is_empty() {
                            format!("::std::matches!(&{v}, {p})")
                        } else {
                            format!("::std::matches!(&{v}, {p} if {})", g.join(" && "))
                        }
                    })
                    .collect();
                guards.push(format!("({})", tests.join(" || ")));
                v
            }
            PatternKind::Record { fields: subs, .. } => {
                let Ty::Named(tid) = t else {
                    return "_".into();
                };
                let tid = *tid;
                let Some(def) = self.info.types.get(tid) else {
                    return "_".into();
                };
                let tname = rust_type_ident(&def.name);
                let fields = def.fields().unwrap_or(&[]).to_vec();
                let mut indexed: Vec<(usize, &Pattern)> = subs
                    .iter()
                    .filter_map(|s| {
                        fields
                            .iter()
                            .position(|f| f.name == s.name.name)
                            .map(|i| (i, &s.pattern))
                    })
                    .collect();
                indexed.sort_by_key(|(i, _)| *i);
                let parts =
                    self.field_patterns(tid, usize::MAX, &fields, &indexed, guards, rebinds);
                let rest = if parts.len() < fields.len() {
                    ", .."
                } else {
                    ""
                };
                if parts.is_empty() {
                    format!("{tname} {{ .. }}")
                } else {
                    format!("{tname} {{ {}{rest} }}", parts.join(", "))
                }
            }
            PatternKind::Str(s) => {
                let v = self.fresh("VOX_S");
                guards.push(format!("{v} == {}", rust_str(s)));
                v
            }
            PatternKind::Ctor { name, args } => {
                let args = args.as_deref().unwrap_or(&[]);
                let inner_ty = match t {
                    Ty::Option(i) | Ty::Result(i) => (**i).clone(),
                    _ => Ty::Error,
                };
                let one = |s: &mut Self,
                           ty: &Ty,
                           guards: &mut Vec<String>,
                           rebinds: &mut Vec<String>|
                 -> String {
                    args.first()
                        .map_or("_".into(), |a| s.pattern(a, ty, guards, rebinds))
                };
                match (name.name.as_str(), t) {
                    ("None", _) => "::std::option::Option::None".into(),
                    ("Some", _) => format!(
                        "::std::option::Option::Some({})",
                        one(self, &inner_ty, guards, rebinds)
                    ),
                    ("Ok", _) => format!(
                        "::std::result::Result::Ok({})",
                        one(self, &inner_ty, guards, rebinds)
                    ),
                    ("Error", _) => format!(
                        "::std::result::Result::Err({})",
                        one(self, &Ty::Str, guards, rebinds)
                    ),
                    (vname, Ty::Named(tid)) => {
                        let tid = *tid;
                        let Some(def) = self.info.types.get(tid) else {
                            return "_".into();
                        };
                        let tname = rust_type_ident(&def.name);
                        let Some((vi, v)) = def
                            .variants()
                            .and_then(|vs| vs.iter().enumerate().find(|(_, v)| v.name == vname))
                        else {
                            return "_".into();
                        };
                        let fields = v.fields.clone();
                        let vident = rust_type_ident(vname);
                        if fields.is_empty() {
                            return format!("{tname}::{vident}");
                        }
                        if args.is_empty() {
                            return format!("{tname}::{vident} {{ .. }}");
                        }
                        let subs: Vec<(usize, &Pattern)> = args.iter().enumerate().collect();
                        let mut parts =
                            self.field_patterns(tid, vi, &fields, &subs, guards, rebinds);
                        if parts.len() < fields.len() {
                            parts.push("..".into());
                        }
                        format!("{tname}::{vident} {{ {} }}", parts.join(", "))
                    }
                    _ => "_".into(),
                }
            }
        }
    }

    /// `field: pattern` for each `(field index, pattern)` of `subs`, of the
    /// variant `vi` of type `tid` (`usize::MAX` for a record), whose fields
    /// are `fields`; a boxed (recursive) field is tested in the guard and
    /// unboxed by `rebinds`.
    fn field_patterns(
        &mut self,
        tid: crate::types::TypeId,
        vi: usize,
        fields: &[crate::types::FieldDef],
        subs: &[(usize, &Pattern)],
        guards: &mut Vec<String>,
        rebinds: &mut Vec<String>,
    ) -> Vec<String> {
        let mut parts = Vec::new();
        for &(i, sub) in subs {
            let Some(f) = fields.get(i) else { continue };
            let fname = rust_ident(&f.name);
            if let Some(n) = self.boxed.get(&(tid, vi, f.name.clone())).copied() {
                let unbox = unbox_fn(n);
                match &sub.kind {
                    PatternKind::Wildcard => parts.push(format!("{fname}: _")),
                    PatternKind::Binding(b) => {
                        let b = rust_ident(b);
                        rebinds.push(format!("let {b} = {b}.map({unbox});"));
                        if b == fname {
                            parts.push(fname);
                        } else {
                            parts.push(format!("{fname}: {b}"));
                        }
                    }
                    _ => {
                        // Box patterns are unstable: bind the box, test the
                        // unboxed value against the pattern in the guard, and
                        // destructure it again at the start of the arm (the
                        // guard proves the `let … else` always matches).
                        let v = self.fresh("VOX_B");
                        let mut inner_guards = Vec::new();
                        let mut inner_rebinds = Vec::new();
                        let inner = self.pattern(sub, &f.ty, &mut inner_guards, &mut inner_rebinds);
                        let extra = if inner_guards.is_empty() {
                            String::new()
                        } else {
                            format!(" if {}", inner_guards.join(" && "))
                        };
                        guards.push(format!(
                            "::std::matches!({v}.clone().map({unbox}), {inner}{extra})"
                        ));
                        rebinds.push(format!(
                            "let {inner} = {v}.map({unbox}) else {{ ::std::unreachable!() }};"
                        ));
                        rebinds.extend(inner_rebinds);
                        parts.push(format!("{fname}: {v}"));
                    }
                }
                continue;
            }
            let sp = self.pattern(sub, &f.ty, guards, rebinds);
            if sp == fname {
                parts.push(fname);
            } else {
                parts.push(format!("{fname}: {sp}"));
            }
        }
        parts
    }
}
