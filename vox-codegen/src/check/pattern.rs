//! `match`: arms, exhaustiveness and unreachable arms (through
//! [`crate::exhaustive`]), and patterns with their bindings.

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::types::*;

use super::scope::{Origin, Wrap};
use super::{suggest, Checker, Want};

impl Checker<'_> {
    pub(super) fn infer_match(
        &mut self,
        e: &Expr,
        scrutinee: &Expr,
        arms: &[Arm],
        recovered: bool,
        want: Want,
    ) -> Ty {
        let st = self.check_expr(scrutinee, Want::Any);
        let mut result: Option<Ty> = want.ty().cloned();
        let mut all_diverge = !arms.is_empty();
        let mut budget = crate::exhaustive::BUDGET;
        let mut rows: Vec<Vec<crate::exhaustive::Pat>> = Vec::new();
        let check_coverage = !matches!(st, Ty::Error | Ty::Unknown | Ty::Never);
        for arm in arms {
            self.scopes.push(Vec::new());
            self.pat_origin = Some(Origin {
                expr: scrutinee.id,
                wrap: Vec::new(),
            });
            self.check_pattern(&arm.pattern, &st);
            self.pat_origin = None;
            self.report_duplicate_bindings();
            if let Some(g) = &arm.guard {
                self.check_expr(g, Want::Type(&Ty::Bool));
            }
            if check_coverage {
                let pat = crate::exhaustive::lower(&arm.pattern, &st, &self.info.types);
                let useful = crate::exhaustive::Checker::new(&self.info.types, &mut budget).useful(
                    &rows,
                    std::slice::from_ref(&pat),
                    std::slice::from_ref(&st),
                );
                if useful == Some(false) && !pat.has_opaque() {
                    self.err(
                        Diagnostic::warning(
                            Code::Unreachable,
                            arm.pattern.span,
                            "unreachable match arm",
                        )
                        .hint("earlier arms already match every value this pattern matches"),
                    );
                } else if let (
                    Some(true),
                    PatternKind::Or(alts),
                    crate::exhaustive::Pat::Or(lowered),
                ) = (useful, &arm.pattern.kind, &pat)
                {
                    // The arm is reachable; an alternative of it may not be.
                    let mut seen = rows.clone();
                    for (alt, low) in alts.iter().zip(lowered) {
                        let useful = crate::exhaustive::Checker::new(&self.info.types, &mut budget)
                            .useful(&seen, std::slice::from_ref(low), std::slice::from_ref(&st));
                        if useful == Some(false) && !low.has_opaque() {
                            self.err(
                                Diagnostic::warning(
                                    Code::Unreachable,
                                    alt.span,
                                    "unreachable alternative",
                                )
                                .hint("earlier arms or alternatives already match every value it matches"),
                            );
                        }
                        seen.push(vec![low.clone()]);
                    }
                }
                // A guarded arm may not be taken: it covers nothing.
                if arm.guard.is_none() {
                    rows.push(vec![pat]);
                }
            }
            let arm_want = match (&want, &result) {
                (Want::Nothing, _) => Want::Nothing,
                (_, Some(t)) if t.is_concrete() => Want::Type(t),
                _ => Want::Any,
            };
            let owned_want = match arm_want {
                Want::Type(t) => Some(t.clone()),
                _ => None,
            };
            let arm_want = match (&owned_want, arm_want) {
                (Some(t), _) => Want::Type(t),
                (None, w) => w,
            };
            let t = self.check_expr(&arm.body, arm_want);
            if let ExprKind::Block(b) = &arm.body.kind {
                let has_tail = matches!(b.stmts.last(), Some(Stmt::Expr(_)));
                if !matches!(arm_want, Want::Nothing)
                    && !matches!(want, Want::Type(Ty::Unit))
                    && want.ty().is_none()
                {
                    self.require_block_value(b, &t, has_tail, arm_want);
                }
            }
            if !matches!(t, Ty::Never) {
                all_diverge = false;
                if !matches!(want, Want::Nothing) {
                    result = Some(match result {
                        Some(r) => r.join(&t),
                        None => t,
                    });
                }
            }
            self.pop_scope();
        }
        // An arm that did not parse may be the one that covers the rest.
        let uncovered = check_coverage
            && !recovered
            && crate::exhaustive::Checker::new(&self.info.types, &mut budget).useful(
                &rows,
                &[crate::exhaustive::Pat::Wild],
                std::slice::from_ref(&st),
            ) == Some(true);
        if uncovered {
            let missing =
                crate::exhaustive::Checker::new(&self.info.types, &mut budget).missing(&rows, &st);
            let mut d =
                Diagnostic::error(Code::NonExhaustive, scrutinee.span, "non-exhaustive match")
                    .label(format!("patterns not covered: {}", missing.join(", ")));
            d = d.hint(format!(
                "add arms for {}, or a `_ => …` arm",
                missing.join(", ")
            ));
            self.err(d);
        }
        let _ = e;
        if all_diverge {
            return Ty::Never;
        }
        match want {
            Want::Nothing => Ty::Unit,
            _ => result.unwrap_or(Ty::Unit),
        }
    }

    /// Checks a pattern against the matched type, declaring its bindings.
    /// Returns whether the pattern matches every value (a binding or `_`).
    pub(super) fn check_pattern(&mut self, p: &Pattern, t: &Ty) -> bool {
        let literal = |c: &mut Self, want: Ty| {
            if matches!(t, Ty::Unknown) {
                c.open_type(p.span, "matched against a literal");
            } else if !want.accepts(t) && !t.accepts(&want) {
                c.err(
                    Diagnostic::error(
                        Code::InvalidPattern,
                        p.span,
                        "this pattern cannot match the value's type",
                    )
                    .types(c.show(t), c.show(&want)),
                );
            }
            false
        };
        match &p.kind {
            PatternKind::Wildcard => true,
            PatternKind::Invalid => false,
            PatternKind::Binding(name) => {
                self.declare(name.clone(), t.clone(), false, p.span, true);
                if let Some(o) = self.pat_origin.clone() {
                    self.set_origin(o);
                }
                true
            }
            PatternKind::Or(alts) => {
                for a in alts {
                    if let Some(span) = first_binding(a) {
                        self.err(
                            Diagnostic::error(
                                Code::OrPatternBinding,
                                span,
                                "an alternative of an or-pattern cannot bind a name",
                            )
                            .label("bound here")
                            .hint("write one arm per alternative to use the value, or match it with `_`"),
                        );
                    }
                    self.check_pattern(a, t);
                }
                false
            }
            PatternKind::Int(_) => literal(self, Ty::Int),
            // A run-time category matches text literals, as `str` does.
            PatternKind::Str(_) if self.is_category(t) => false,
            PatternKind::Str(_) => literal(self, Ty::Str),
            PatternKind::Bool(_) => {
                literal(self, Ty::Bool);
                false
            }
            PatternKind::Record { name, fields, rest } => {
                // Field values have the record's concrete field types.
                let saved = self.pat_origin.take();
                let irrefutable = self.check_record_pattern(p, name, fields, *rest, t);
                self.pat_origin = saved;
                irrefutable
            }
            PatternKind::Ctor { name, args } => {
                // Sub-patterns of `Some`/`Ok` match the content; others
                // (variant fields, `Error`'s text) have concrete types.
                let saved = self.pat_origin.take();
                self.pat_origin = saved.clone().and_then(|mut o| {
                    o.wrap.push(match name.name.as_str() {
                        "Some" => Wrap::Option,
                        "Ok" => Wrap::Result,
                        _ => return None,
                    });
                    Some(o)
                });
                let irrefutable = self.check_ctor_pattern(p, name, args.as_deref(), t);
                self.pat_origin = saved;
                irrefutable
            }
        }
    }

    /// `Invoice { vendor: "ACME", total, .. }` against a value of type `t`;
    /// whether it matches every such value.
    fn check_record_pattern(
        &mut self,
        p: &Pattern,
        name: &Ident,
        fields: &[FieldPattern],
        rest: Option<crate::source::Span>,
        t: &Ty,
    ) -> bool {
        let bind_all = |c: &mut Self| {
            for f in fields {
                c.check_pattern(&f.pattern, &Ty::Error);
            }
        };
        let def = match t {
            Ty::Named(tid) => self.info.types.get(*tid).cloned(),
            Ty::Error => {
                bind_all(self);
                return false;
            }
            Ty::Unknown => {
                self.open_type(p.span, "matched against a record pattern");
                bind_all(self);
                return false;
            }
            _ => None,
        };
        let Some(def) = def.filter(|d| d.name == name.name && d.fields().is_some()) else {
            let shown = self.show(t);
            let mut d = Diagnostic::error(
                Code::InvalidPattern,
                name.span,
                format!(
                    "a `{}` pattern cannot match a value of type `{shown}`",
                    name.name
                ),
            );
            d = if self.type_index.contains_key(&name.name) {
                d.hint(format!(
                    "the value is a `{shown}`; a record pattern names the record type it matches"
                ))
            } else if self.variant_index.contains_key(&name.name) {
                d.hint(format!(
                    "variants are matched with parentheses: `{}(…)`",
                    name.name
                ))
            } else {
                d.hint("a record pattern names a record type: `Invoice { total, .. }`")
            };
            self.err(d);
            bind_all(self);
            return false;
        };
        let declared = def.fields().unwrap_or(&[]).to_vec();
        let mut irrefutable = true;
        let mut seen: Vec<&str> = Vec::new();
        for f in fields {
            if seen.contains(&f.name.name.as_str()) {
                self.err(Diagnostic::error(
                    Code::Duplicate,
                    f.name.span,
                    format!("field `{}` is matched twice", f.name.name),
                ));
            }
            seen.push(&f.name.name);
            match declared.iter().find(|d| d.name == f.name.name) {
                Some(d) => {
                    if !self.check_pattern(&f.pattern, &d.ty) {
                        irrefutable = false;
                    }
                }
                None => {
                    let mut d = Diagnostic::error(
                        Code::UnknownField,
                        f.name.span,
                        format!("`{}` has no field `{}`", name.name, f.name.name),
                    );
                    if let Some(s) =
                        did_you_mean(&f.name.name, declared.iter().map(|d| d.name.as_str()))
                    {
                        d = suggest(d, s, f.name.span);
                    }
                    self.err(d);
                    self.check_pattern(&f.pattern, &Ty::Error);
                }
            }
        }
        let missing: Vec<&str> = declared
            .iter()
            .map(|d| d.name.as_str())
            .filter(|n| !seen.contains(n))
            .collect();
        if rest.is_none() && !missing.is_empty() {
            // `..` before the closing brace, after the last field written.
            let close = p.span.end.saturating_sub(1);
            let at = crate::source::Span {
                start: close,
                end: close,
                ..p.span
            };
            let sep = if fields.is_empty() { "" } else { ", " };
            self.err(
                Diagnostic::error(
                    Code::MissingField,
                    p.span,
                    format!(
                        "the pattern does not say `{}`'s field{} {}",
                        name.name,
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .hint("write `..` for the fields the pattern does not look at")
                .fix_with(
                    crate::diagnostic::Applicability::MachineApplicable,
                    "add `..`",
                    vec![crate::diagnostic::Edit {
                        span: at,
                        replacement: format!("{sep}.."),
                    }],
                ),
            );
        }
        irrefutable
    }

    fn check_ctor_pattern(
        &mut self,
        p: &Pattern,
        name: &Ident,
        args: Option<&[Pattern]>,
        t: &Ty,
    ) -> bool {
        let sub = |c: &mut Self, args: Option<&[Pattern]>, tys: &[Ty]| -> bool {
            let args = args.unwrap_or(&[]);
            if !args.is_empty() && args.len() != tys.len() {
                c.err(Diagnostic::error(
                    Code::InvalidPattern,
                    p.span,
                    format!(
                        "`{}` has {} field{}, but the pattern has {}",
                        name.name,
                        tys.len(),
                        if tys.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                ));
            }
            let mut irrefutable = true;
            for (i, a) in args.iter().enumerate() {
                let ty = tys.get(i).cloned().unwrap_or(Ty::Error);
                if !c.check_pattern(a, &ty) {
                    irrefutable = false;
                }
            }
            irrefutable
        };
        let wrong = |c: &mut Self, what: &str| {
            c.err(
                Diagnostic::error(
                    Code::InvalidPattern,
                    p.span,
                    format!(
                        "`{}` cannot match a value of type `{}`",
                        name.name,
                        c.show(t)
                    ),
                )
                .hint(what.to_string()),
            );
            false
        };
        match (name.name.as_str(), t) {
            ("None", Ty::Option(_)) => false,
            ("Some", Ty::Option(inner)) => {
                sub(self, args, std::slice::from_ref(inner));
                false
            }
            ("Ok", Ty::Result(inner)) => {
                sub(self, args, std::slice::from_ref(inner));
                false
            }
            ("Error", Ty::Result(_)) => {
                sub(self, args, &[Ty::Str]);
                false
            }
            (_, Ty::Error | Ty::Unknown) => {
                if matches!(t, Ty::Unknown) {
                    self.open_type(p.span, "matched against a constructor pattern");
                }
                // Bind sub-patterns so their names resolve; nothing to check.
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                false
            }
            ("None" | "Some" | "Ok" | "Error", _) => {
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                wrong(
                    self,
                    "`Some`/`None` match an `Option`; `Ok`/`Error` match a `Result`",
                )
            }
            (vname, Ty::Named(tid)) => {
                let variants = self
                    .info
                    .types
                    .get(*tid)
                    .and_then(|d| d.variants())
                    .map(<[VariantDef]>::to_vec);
                let Some(variants) = variants else {
                    for a in args.unwrap_or(&[]) {
                        self.check_pattern(a, &Ty::Error);
                    }
                    return wrong(self, "only sum types, `Option` and `Result` have variants to match; bind the whole value with a name");
                };
                let Some(v) = variants.iter().find(|v| v.name == vname) else {
                    for a in args.unwrap_or(&[]) {
                        self.check_pattern(a, &Ty::Error);
                    }
                    let tname = self.show(t);
                    let mut d = Diagnostic::error(
                        Code::InvalidPattern,
                        name.span,
                        format!("`{tname}` has no variant `{vname}`"),
                    );
                    if let Some(s) = did_you_mean(vname, variants.iter().map(|v| v.name.as_str())) {
                        d = suggest(d, s, name.span);
                    } else {
                        let all: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                        d = d.hint(format!("its variants are: {}", all.join(", ")));
                    }
                    self.err(d);
                    return false;
                };
                if v.fields.is_empty() && args.is_some_and(|a| !a.is_empty()) {
                    self.err(Diagnostic::error(
                        Code::InvalidPattern,
                        p.span,
                        format!("variant `{vname}` has no fields"),
                    ));
                }
                let tys: Vec<Ty> = v.fields.iter().map(|f| f.ty.clone()).collect();
                sub(self, args, &tys);
                false
            }
            _ => {
                for a in args.unwrap_or(&[]) {
                    self.check_pattern(a, &Ty::Error);
                }
                wrong(
                    self,
                    "constructor patterns match sum types, `Option` and `Result`",
                )
            }
        }
    }
}

/// The span of the first name `p` binds, if any.
fn first_binding(p: &Pattern) -> Option<crate::source::Span> {
    match &p.kind {
        PatternKind::Binding(_) => Some(p.span),
        PatternKind::Ctor { args, .. } => args.iter().flatten().find_map(first_binding),
        PatternKind::Record { fields, .. } => fields.iter().find_map(|f| first_binding(&f.pattern)),
        PatternKind::Or(alts) => alts.iter().find_map(first_binding),
        _ => None,
    }
}
