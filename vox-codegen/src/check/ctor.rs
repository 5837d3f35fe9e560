//! Constructors (`Some`, `None`, `Ok`, `Error`, variants) and record
//! literals.

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::types::*;

use super::{suggest, Checker, Ctor, Want, RESERVED_CTORS};

impl Checker<'_> {
    pub(super) fn infer_ctor(
        &mut self,
        e: &Expr,
        name: &Ident,
        args: Option<&[Arg]>,
        want: Want,
    ) -> Ty {
        if args.is_none() {
            if let Some(&ci) = self.const_index.get(&name.name) {
                return self.const_ref(e, ci, name.span);
            }
        }
        let want_inner = match want.ty() {
            Some(Ty::Option(t) | Ty::Result(t)) => Some((**t).clone()),
            _ => None,
        };
        match name.name.as_str() {
            "None" => {
                self.info.ctors.insert(e.id, Ctor::None);
                if args.is_some() {
                    self.err(Diagnostic::error(
                        Code::Arity,
                        e.span,
                        "`None` takes no arguments",
                    ));
                }
                return Ty::Option(Box::new(want_inner.unwrap_or(Ty::Unknown)));
            }
            "Some" | "Ok" | "Error" => {
                let ctor = match name.name.as_str() {
                    "Some" => Ctor::Some,
                    "Ok" => Ctor::Ok,
                    _ => Ctor::Err,
                };
                self.info.ctors.insert(e.id, ctor);
                let arg = match args {
                    Some([a]) => Some(a),
                    _ => {
                        let found = args.map_or(0, <[Arg]>::len);
                        self.err(
                            Diagnostic::error(
                                Code::Arity,
                                e.span,
                                format!("`{}` takes 1 argument, found {found}", name.name),
                            )
                            .hint(format!("write `{}(value)`", name.name)),
                        );
                        for a in args.unwrap_or(&[]) {
                            self.check_expr(&a.value, Want::Any);
                        }
                        None
                    }
                };
                if ctor == Ctor::Err {
                    if let Some(a) = arg {
                        self.check_expr(&a.value, Want::Type(&Ty::Str));
                    }
                    return Ty::Result(Box::new(want_inner.unwrap_or(Ty::Unknown)));
                }
                let inner = match (arg, &want_inner) {
                    (Some(a), Some(w)) => {
                        self.check_expr(&a.value, Want::Type(w));
                        w.clone()
                    }
                    (Some(a), None) => self.check_expr(&a.value, Want::Any),
                    (None, _) => Ty::Error,
                };
                return if ctor == Ctor::Some {
                    Ty::Option(Box::new(inner))
                } else {
                    Ty::Result(Box::new(inner))
                };
            }
            _ => {}
        }
        // Where a `Role` is expected, `User` and `Assistant` are its
        // variants, whatever else the module calls so (docs/language.md,
        // "Conversations").
        let role_variant = match (self.chat_role, want.ty()) {
            (Some(role), Some(Ty::Named(id))) if *id == role => ["User", "Assistant"]
                .iter()
                .position(|n| *n == name.name)
                .map(|vi| (role, vi, name.span)),
            _ => None,
        };
        let Some((tid, vi, _)) =
            role_variant.or_else(|| self.variant_index.get(&name.name).copied())
        else {
            for a in args.unwrap_or(&[]) {
                self.check_expr(&a.value, Want::Any);
            }
            if let Some(&(tid, _)) = self.type_index.get(&name.name) {
                let is_record = self
                    .info
                    .types
                    .get(tid)
                    .is_some_and(|d| d.fields().is_some());
                let d = Diagnostic::error(
                    Code::NotCallable,
                    name.span,
                    format!("`{}` is a type, not a value", name.name),
                );
                self.err(if is_record {
                    d.hint(format!(
                        "build a record with `{} {{ field: value, … }}`",
                        name.name
                    ))
                } else {
                    d.hint("use one of its variants")
                });
                return Ty::Error;
            }
            // `let Count = 1` was reported as a naming error; still resolve it.
            if args.is_none() {
                if let Some(l) = self.lookup(&name.name) {
                    l.used = true;
                    return l.ty.clone();
                }
            }
            let mut d = Diagnostic::error(
                Code::UnknownName,
                name.span,
                format!("cannot find variant `{}`", name.name),
            )
            .label("not found");
            let cands: Vec<&str> = self
                .variant_index
                .keys()
                .map(String::as_str)
                .chain(RESERVED_CTORS)
                .collect();
            if let Some(s) = did_you_mean(&name.name, cands) {
                d = suggest(d, s, name.span);
            }
            self.err(d);
            return Ty::Error;
        };
        self.info.ctors.insert(e.id, Ctor::Variant(tid, vi));
        let fields: Vec<FieldDef> = self
            .info
            .types
            .get(tid)
            .and_then(|d| d.variants())
            .and_then(|vs| vs.get(vi))
            .map(|v| v.fields.clone())
            .unwrap_or_default();
        match args {
            None if !fields.is_empty() => {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                self.err(
                    Diagnostic::error(
                        Code::MissingField,
                        e.span,
                        format!(
                            "variant `{}` needs its fields: {}",
                            name.name,
                            names.join(", ")
                        ),
                    )
                    .hint(format!(
                        "write `{}({})`",
                        name.name,
                        names
                            .iter()
                            .map(|n| format!("{n}: …"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                );
            }
            None => {}
            Some(args) => {
                if fields.is_empty() {
                    self.err(
                        Diagnostic::error(
                            Code::Arity,
                            e.span,
                            format!("variant `{}` has no fields", name.name),
                        )
                        .fix(
                            "remove the parentheses",
                            e.span,
                            name.name.clone(),
                        ),
                    );
                    for a in args {
                        self.check_expr(&a.value, Want::Any);
                    }
                } else {
                    let params: Vec<(String, Ty)> = fields
                        .iter()
                        .map(|f| (f.name.clone(), f.ty.clone()))
                        .collect();
                    self.check_args(e.span, &name.name, "variant", &params, args);
                }
            }
        }
        Ty::Named(tid)
    }

    pub(super) fn infer_record(&mut self, e: &Expr, name: &Ident, inits: &[FieldInit]) -> Ty {
        let Some(&(tid, _)) = self.type_index.get(&name.name) else {
            for f in inits {
                self.check_expr(&f.value, Want::Any);
            }
            let mut d = Diagnostic::error(
                Code::UnknownType,
                name.span,
                format!("unknown type `{}`", name.name),
            );
            if self.variant_index.contains_key(&name.name) {
                d = d.hint(format!(
                    "`{}` is a variant; build it with `{}(field: value, …)`",
                    name.name, name.name
                ));
                // `Tech { a: 1 }` → `Tech(a: 1)`: the fields are already
                // written as named arguments.
                let text = self.source_text(e.span);
                let head = name.span.end.saturating_sub(e.span.start) as usize;
                let open = text.get(head..).and_then(|t| t.find('{')).map(|i| head + i);
                let body = open.and_then(|o| text.get(o + 1..text.len().saturating_sub(1)));
                if let (Some(open), Some(body), false, true) =
                    (open, body, inits.is_empty(), text.ends_with('}'))
                {
                    let lead = body.len() - body.trim_start().len();
                    let trail = body.len() - body.trim_end().len();
                    let at = |i: usize| e.span.start as usize + i;
                    let open_end = open + 1 + lead;
                    let close_start = text.len() - 1 - trail;
                    d = d.fix_with(
                        crate::diagnostic::Applicability::MachineApplicable,
                        format!("build the variant: `{}(…)`", name.name),
                        vec![
                            crate::diagnostic::Edit {
                                span: crate::source::Span::new(e.span.file, at(head), at(open_end)),
                                replacement: "(".into(),
                            },
                            crate::diagnostic::Edit {
                                span: crate::source::Span::new(
                                    e.span.file,
                                    at(close_start),
                                    at(text.len()),
                                ),
                                replacement: ")".into(),
                            },
                        ],
                    );
                }
            } else if let Some(s) =
                did_you_mean(&name.name, self.type_index.keys().map(String::as_str))
            {
                d = suggest(d, s, name.span);
            }
            self.err(d);
            return Ty::Error;
        };
        let Some(fields) = self
            .info
            .types
            .get(tid)
            .and_then(|d| d.fields())
            .map(<[FieldDef]>::to_vec)
        else {
            for f in inits {
                self.check_expr(&f.value, Want::Any);
            }
            self.err(
                Diagnostic::error(
                    Code::NotARecord,
                    name.span,
                    format!("`{}` is a sum type, not a record", name.name),
                )
                .hint("build one of its variants instead"),
            );
            return Ty::Error;
        };
        let mut seen: Vec<&str> = Vec::new();
        for init in inits {
            if let Some(prev) = seen.iter().position(|s| *s == init.name.name) {
                let _ = prev;
                self.err(Diagnostic::error(
                    Code::Duplicate,
                    init.name.span,
                    format!("field `{}` is given twice", init.name.name),
                ));
            }
            match fields.iter().find(|f| f.name == init.name.name) {
                Some(f) => {
                    seen.push(&init.name.name);
                    self.check_expr(&init.value, Want::Type(&f.ty));
                }
                None => {
                    self.check_expr(&init.value, Want::Any);
                    let mut d = Diagnostic::error(
                        Code::UnknownField,
                        init.name.span,
                        format!("`{}` has no field `{}`", name.name, init.name.name),
                    );
                    if let Some(s) =
                        did_you_mean(&init.name.name, fields.iter().map(|f| f.name.as_str()))
                    {
                        d = suggest(d, s, init.name.span);
                    } else {
                        let all: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                        d = d.hint(format!("its fields are: {}", all.join(", ")));
                    }
                    self.err(d);
                }
            }
        }
        let missing: Vec<&str> = fields
            .iter()
            .map(|f| f.name.as_str())
            .filter(|f| !seen.contains(f))
            .collect();
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            self.err(
                Diagnostic::error(Code::MissingField, name.span, format!("missing field{} {list} in `{}`", if missing.len() == 1 { "" } else { "s" }, name.name))
                    .hint("every field must be given; use `Option[…]` fields with `None` for optional data"),
            );
        }
        let _ = e;
        Ty::Named(tid)
    }
}
