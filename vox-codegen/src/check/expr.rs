//! Expressions: recording types, mismatches, variables, field access,
//! operators and `if`.

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{suggest, Builtin, Callee, Checker, Want};

impl Checker<'_> {
    pub(super) fn record(&mut self, e: &Expr, t: Ty) -> Ty {
        // A hole (`Unknown` inside) is what settling fills in.
        self.holes |= !t.is_concrete() && t != Ty::Error;
        if let Some(slot) = self.info.expr_types.get_mut(e.id.0 as usize) {
            *slot = t.clone();
        }
        t
    }

    /// Remembers where an expression that can fail at run time is written.
    fn note_site(&mut self, e: &Expr) {
        let can_fail = match &e.kind {
            ExprKind::Binary { op, lhs, .. } => {
                matches!(
                    op,
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem
                ) || matches!(self.info.expr_type(lhs.id), Ty::Decimal)
            }
            ExprKind::Unary { op, .. } => *op == UnaryOp::Neg,
            ExprKind::Call { .. } => matches!(
                self.info.callees.get(&e.id),
                Some(Callee::Builtin(
                    Builtin::Int
                        | Builtin::Float
                        | Builtin::Decimal
                        | Builtin::Sum
                        | Builtin::Sort
                        | Builtin::SortBy
                        | Builtin::AddDays
                        | Builtin::DaysBetween
                        | Builtin::Year
                        | Builtin::Month
                        | Builtin::Day
                        | Builtin::Min
                        | Builtin::Max
                        | Builtin::Fixed
                        | Builtin::Div
                        | Builtin::Round
                        | Builtin::Assert
                        | Builtin::AssertEq
                ))
            ),
            _ => false,
        };
        if can_fail {
            let file = self.sources.get(e.span.file);
            let at = file.line_col(e.span.start as usize);
            let site = format!("{}:{}:{}", file.name, at.line, at.col);
            self.info.sites.insert(e.id, site);
        }
    }

    /// Checks `e` against what is wanted and records its type.
    pub(super) fn check_expr(&mut self, e: &Expr, want: Want) -> Ty {
        let t = self.infer(e, want);
        self.note_site(e);
        if let Want::Type(expected) = want {
            // If/match/blocks check their branches against `want` themselves.
            let handled = matches!(
                e.kind,
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_)
            );
            // A string literal where a run-time category is expected is
            // that category's value (docs/language.md, "Categories known at
            // run time").
            if matches!(t, Ty::Str)
                && matches!(e.kind, ExprKind::Str(_))
                && self.is_category(expected)
            {
                return self.record(e, expected.clone());
            }
            if !handled && !expected.accepts(&t) {
                self.mismatch(e, expected, &t);
                return self.record(e, expected.clone());
            }
            if let (Ty::Unknown, false) = (&t, handled) {
                return self.record(e, expected.clone());
            }
            if !t.is_concrete() && expected.is_concrete() {
                return self.record(e, t.join(expected));
            }
        }
        self.record(e, t)
    }

    /// A run-time category type (`type Category = dynamic`).
    pub(super) fn is_category(&self, t: &Ty) -> bool {
        matches!(t, Ty::Named(id) if self.info.types.get(*id).is_some_and(|d| d.is_dynamic()))
    }

    /// The right side of `lhs is rhs` when the left side is text or a
    /// run-time category, which compare with each other: `label is
    /// "billing"`, `"billing" is label`, `label is other`.
    fn text_operand(&mut self, lt: &Ty, rhs: &Expr) -> Ty {
        let rt = self.check_expr(rhs, Want::Any);
        let text = |c: &Self, t: &Ty| matches!(t, Ty::Str) || c.is_category(t);
        let fits = lt.accepts(&rt) || (text(self, &rt) && (*lt == Ty::Str || rt == Ty::Str));
        if !fits {
            self.mismatch(rhs, lt, &rt);
            return self.record(rhs, lt.clone());
        }
        if !rt.is_concrete() {
            return self.record(rhs, rt.join(lt));
        }
        rt
    }

    fn mismatch(&mut self, e: &Expr, expected: &Ty, found: &Ty) {
        let (es, fs) = (self.show(expected), self.show(found));
        let mut d = Diagnostic::error(Code::Mismatch, e.span, "mismatched types")
            .types(es.clone(), fs.clone());
        let text = self.source_text(e.span).to_string();
        match (expected, found) {
            (Ty::Named(_), Ty::Str) if self.is_category(expected) => {
                d = d.hint(format!(
                    "a `{es}` comes from a model's reply (among the call's values) or is written as a string literal; compare text with it instead (`x is \"billing\"`)"
                ));
            }
            (Ty::Float, Ty::Int) => {
                d = d.hint("convert with `float(…)`").fix(
                    "convert to `float`",
                    e.span,
                    format!("float({text})"),
                );
            }
            (Ty::Int, Ty::Float) => {
                d = d.hint("convert with `int(…)` (truncates toward zero)");
            }
            (Ty::Str, _) if !matches!(found, Ty::Unit) => {
                d = d.hint("convert to text with `str(…)`").fix(
                    "convert with `str`",
                    e.span,
                    format!("str({text})"),
                );
            }
            (Ty::Option(inner), f) if inner.accepts(f) => {
                d = d.hint("wrap the value in `Some(…)`").fix(
                    "wrap in `Some`",
                    e.span,
                    format!("Some({text})"),
                );
            }
            (Ty::Decimal, Ty::Str) | (Ty::Str, Ty::Decimal) => {
                d = d.hint("`Decimal` is carried as text but is its own type");
            }
            (Ty::Decimal, Ty::Int | Ty::Float) => {
                d = d.hint("write a `Decimal` as `decimal(\"12.50\")`, or convert an `int` with `decimal(n)`; Vox never converts numbers implicitly");
                if let Some(fixed) = self.as_decimal(e, found) {
                    d = d.fix("make it a `Decimal`", e.span, fixed);
                }
            }
            _ => {}
        }
        self.err(d);
    }

    /// A plain string with `{name}` where `name` is a variable in scope
    /// prints the braces: most likely an f-string was meant.
    fn braces_in_plain_string(&mut self, e: &Expr, s: &str) {
        if !self.lints || !self.source_text(e.span).starts_with('"') {
            return;
        }
        let mut rest = s;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..name_len];
            let closes = after[name_len..].starts_with('}') || after[name_len..].starts_with('.');
            if closes
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                && self.lookup(name).is_some()
            {
                let at = Span::new(e.span.file, e.span.start as usize, e.span.start as usize);
                self.err(
                    Diagnostic::warning(
                        Code::BracesInString,
                        e.span,
                        format!("`{{{name}}}` in a plain string is printed as written"),
                    )
                    .label(format!("`{name}` is a variable here"))
                    .hint("an f-string puts the value in: `f\"…{name}…\"`; to keep the braces, write the string without a variable's name in them")
                    .fix_with(
                        crate::diagnostic::Applicability::MaybeIncorrect,
                        "make it an f-string",
                        vec![crate::diagnostic::Edit {
                            span: at,
                            replacement: "f".into(),
                        }],
                    ),
                );
                return;
            }
            rest = after;
        }
    }

    fn infer(&mut self, e: &Expr, want: Want) -> Ty {
        match &e.kind {
            ExprKind::Int(_) => Ty::Int,
            ExprKind::Float(_) => Ty::Float,
            ExprKind::Str(s) => {
                self.braces_in_plain_string(e, s);
                Ty::Str
            }
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Try(inner) => {
                let t = self.check_expr(inner, Want::Any);
                let net_call = matches!(inner.kind, ExprKind::Call { .. })
                    && matches!(
                        self.info.callees.get(&inner.id),
                        Some(Callee::Fn(i)) if self.info.fns.get(*i).is_some_and(|f| f.net)
                    );
                if !net_call {
                    if !matches!(t, Ty::Error) {
                        self.err(
                            Diagnostic::error(
                                Code::TryNeedsNetCall,
                                e.span,
                                "`try` takes a call of a function that uses the network",
                            )
                            .label("not a call of an `@ai` or `@uses(net)` function")
                            .hint("only a network call can fail at run time; other values need no `try`"),
                        );
                    }
                    return Ty::Error;
                }
                if matches!(t, Ty::Error) {
                    Ty::Error
                } else {
                    Ty::Result(Box::new(t))
                }
            }
            ExprKind::Error => Ty::Error,
            ExprKind::Poison(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    match &p.kind {
                        // `x.name(…)`: the parser reported the call; reading
                        // the field is the same mistake, so only `x` is
                        // checked (one error, not two).
                        ExprKind::Field { base, .. } if i == 0 => {
                            self.check_expr(base, Want::Any);
                        }
                        _ => {
                            self.check_expr(p, Want::Any);
                        }
                    }
                }
                Ty::Error
            }
            ExprKind::Var(name) => self.infer_var(e, name),
            ExprKind::Lambda(l) => self.misplaced_lambda(l),
            ExprKind::Ctor { name, args } => self.infer_ctor(e, name, args.as_deref(), want),
            ExprKind::Record { name, fields } => self.infer_record(e, name, fields),
            ExprKind::List(items) => {
                let mut elem = match want.ty() {
                    Some(Ty::List(t)) => (**t).clone(),
                    _ => Ty::Unknown,
                };
                for item in items {
                    if elem.is_concrete() {
                        let t = self.check_expr(item, Want::Type(&elem));
                        elem = elem.join(&t);
                    } else {
                        let t = self.check_expr(item, Want::Any);
                        if !elem.accepts(&t) {
                            self.mismatch(item, &elem, &t);
                        }
                        elem = elem.join(&t);
                    }
                }
                Ty::List(Box::new(elem))
            }
            ExprKind::Map(entries) => self.infer_map(entries, want),
            ExprKind::Call { callee, args } => self.infer_call(e, callee, args, want),
            ExprKind::Field { base, name } => {
                let bt = self.check_expr(base, Want::Any);
                self.field_type(&bt, name)
            }
            ExprKind::Unary { op, expr } => {
                let t = self.check_expr(expr, Want::Any);
                match (op, &t) {
                    (_, Ty::Error) => Ty::Error,
                    (UnaryOp::Neg, Ty::Int | Ty::Float | Ty::Decimal) => t,
                    (UnaryOp::Not, Ty::Bool) => Ty::Bool,
                    (UnaryOp::Neg, _) => {
                        self.err(Diagnostic::error(
                            Code::InvalidOperand,
                            e.span,
                            format!("cannot negate a value of type `{}`", self.show(&t)),
                        ));
                        Ty::Error
                    }
                    (UnaryOp::Not, _) => {
                        self.err(
                            Diagnostic::error(Code::Mismatch, expr.span, "`not` needs a `bool`")
                                .types("bool", self.show(&t)),
                        );
                        Ty::Bool
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.infer_binary(e, *op, lhs, rhs),
            ExprKind::If { cond, then, els } => self.infer_if(e, cond, then, els.as_ref(), want),
            ExprKind::Match {
                scrutinee,
                arms,
                recovered,
            } => self.infer_match(e, scrutinee, arms, *recovered, want),
            ExprKind::Block(b) => {
                let (t, has_tail) = self.check_block(b, want);
                if let Want::Type(expected) = want {
                    if !has_tail
                        && !matches!(t, Ty::Never)
                        && !matches!(expected, Ty::Unit)
                        && !expected.is_error()
                    {
                        self.err(
                            Diagnostic::error(Code::Mismatch, b.span, "this block has no value")
                                .types(self.show(expected), "Unit")
                                .hint("end the block with an expression"),
                        );
                    }
                }
                t
            }
        }
    }

    /// `["a": 1, "b": 2]`: keys are `str`, values share one type; a key
    /// written twice as the same string literal is an error (the second
    /// would silently replace the first).
    fn infer_map(&mut self, entries: &[MapEntry], want: Want) -> Ty {
        let mut value = match want.ty() {
            Some(Ty::Map(t)) => (**t).clone(),
            _ => Ty::Unknown,
        };
        let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
        for m in entries {
            self.check_expr(&m.key, Want::Type(&Ty::Str));
            if let ExprKind::Str(k) = &m.key.kind {
                if let Some(&first) = seen.get(k.as_str()) {
                    self.err(
                        Diagnostic::error(
                            Code::DuplicateKey,
                            m.key.span,
                            format!("the key {k:?} is given twice in this map"),
                        )
                        .related(first, "first given here")
                        .hint("a map holds one value per key: remove one of the entries"),
                    );
                }
                seen.entry(k).or_insert(m.key.span);
            }
            if value.is_concrete() {
                let t = self.check_expr(&m.value, Want::Type(&value));
                value = value.join(&t);
            } else {
                let t = self.check_expr(&m.value, Want::Any);
                if !value.accepts(&t) {
                    self.mismatch(&m.value, &value, &t);
                }
                value = value.join(&t);
            }
        }
        Ty::Map(Box::new(value))
    }

    fn infer_var(&mut self, e: &Expr, name: &str) -> Ty {
        if let Some(l) = self.lookup(name) {
            l.used = true;
            let (ty, origin, at) = (l.ty.clone(), l.origin.clone(), l.span);
            self.info.locals.insert(e.id, at);
            if let Some(o) = origin {
                self.var_origins.push((e.id, o));
            }
            return ty;
        }
        if self.fn_index.contains_key(name) || Builtin::lookup(name).is_some() {
            self.err(
                Diagnostic::error(
                    Code::NotCallable,
                    e.span,
                    format!("`{name}` is a function; functions are called, not used as values"),
                )
                .hint(format!("call it: `{name}(…)`")),
            );
            return Ty::Error;
        }
        let mut d = Diagnostic::error(
            Code::UnknownName,
            e.span,
            format!("cannot find `{name}` in this scope"),
        )
        .label("not found");
        let names = self.visible_names();
        if let Some(s) = did_you_mean(name, names.iter().map(String::as_str)) {
            d = suggest(d, s, e.span);
            // The misspelt use is a use of the suggestion: no "unused" noise.
            if let Some(l) = self.lookup(s) {
                l.used = true;
            }
        }
        self.err(d);
        Ty::Error
    }

    fn field_type(&mut self, base: &Ty, name: &Ident) -> Ty {
        match base {
            Ty::Error => Ty::Error,
            Ty::Unknown => {
                self.open_type(name.span, "asked for a field");
                Ty::Error
            }
            Ty::Named(id) => {
                let Some(def) = self.info.types.get(*id) else {
                    return Ty::Error;
                };
                match &def.kind {
                    TypeDefKind::Record(fields) => {
                        if let Some(f) = fields.iter().find(|f| f.name == name.name) {
                            return f.ty.clone();
                        }
                        let tname = def.name.clone();
                        let cands: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
                        let mut d = Diagnostic::error(
                            Code::UnknownField,
                            name.span,
                            format!("no field `{}` on type `{tname}`", name.name),
                        )
                        .label("unknown field");
                        if let Some(s) = did_you_mean(&name.name, cands.iter().map(String::as_str))
                        {
                            d = suggest(d, s, name.span);
                        } else {
                            d = d
                                .hint(format!("the fields of `{tname}` are: {}", cands.join(", ")));
                        }
                        self.err(d);
                        Ty::Error
                    }
                    TypeDefKind::Dynamic => {
                        let tname = def.name.clone();
                        self.err(
                            Diagnostic::error(
                                Code::NotARecord,
                                name.span,
                                format!("`{tname}` is a run-time category (text); it has no fields"),
                            )
                            .hint("compare it with text (`label is \"billing\"`) or write it with `str(…)`"),
                        );
                        Ty::Error
                    }
                    TypeDefKind::Sum(_) => {
                        let tname = def.name.clone();
                        self.err(
                            Diagnostic::error(
                                Code::NotARecord,
                                name.span,
                                format!("`{tname}` is a sum type; it has no fields"),
                            )
                            .hint("use `match` to get at a variant's fields"),
                        );
                        Ty::Error
                    }
                }
            }
            other => {
                let mut d = Diagnostic::error(
                    Code::NotARecord,
                    name.span,
                    format!("`{}` has no fields", self.show(other)),
                );
                if matches!(name.name.as_str(), "len" | "length" | "size" | "count") {
                    d = d.hint("use the builtin `len(…)`");
                } else if matches!(other, Ty::Option(_)) {
                    d = d.hint("use `match` to get at the value inside an `Option`");
                }
                self.err(d);
                Ty::Error
            }
        }
    }

    fn infer_binary(&mut self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Ty {
        use BinaryOp::*;
        if matches!(op, And | Or) {
            self.check_expr(lhs, Want::Type(&Ty::Bool));
            self.check_expr(rhs, Want::Type(&Ty::Bool));
            return Ty::Bool;
        }
        let lt = self.check_expr(lhs, Want::Any);
        let rt = if lt.is_concrete() && !matches!(lt, Ty::Never) && matches!(op, Eq | NotEq) {
            if matches!(lt, Ty::Str) || self.is_category(&lt) {
                self.text_operand(&lt, rhs)
            } else {
                self.check_expr(rhs, Want::Type(&lt))
            }
        } else {
            self.check_expr(rhs, Want::Any)
        };
        if lt.is_error() || rt.is_error() {
            return if matches!(op, Add | Sub | Mul | Div | Rem) {
                Ty::Error
            } else {
                Ty::Bool
            };
        }
        // A side that never produces a value (every branch returns) fits
        // whatever the other side needs: the operator is never applied.
        let (lt, rt) = match (&lt, &rt) {
            (Ty::Never, Ty::Never) => {
                return if matches!(op, Add | Sub | Mul | Div | Rem) {
                    Ty::Never
                } else {
                    Ty::Bool
                };
            }
            (Ty::Never, _) => (rt.clone(), rt),
            (_, Ty::Never) => (lt.clone(), lt),
            _ => (lt, rt),
        };
        let sym = op.symbol();
        match op {
            Eq | NotEq => {
                // A mismatch was already reported against the left side's type.
                Ty::Bool
            }
            Lt | Le | Gt | Ge => {
                let ok = matches!(
                    (&lt, &rt),
                    (Ty::Int, Ty::Int)
                        | (Ty::Float, Ty::Float)
                        | (Ty::Str, Ty::Str)
                        | (Ty::Decimal, Ty::Decimal)
                        | (Ty::Date, Ty::Date)
                );
                if !ok {
                    self.operand_error(e, sym, &lt, &rt);
                }
                Ty::Bool
            }
            Add | Sub | Mul | Div | Rem => match (&lt, &rt) {
                (Ty::Int, Ty::Int) => Ty::Int,
                (Ty::List(a), Ty::List(b)) if op == Add && (a.accepts(b) || b.accepts(a)) => {
                    lt.join(&rt)
                }
                (Ty::Float, Ty::Float) => Ty::Float,
                (Ty::Str, Ty::Str) if op == Add => Ty::Str,
                (Ty::Decimal, Ty::Decimal) if matches!(op, Add | Sub | Mul) => Ty::Decimal,
                _ => {
                    self.operand_error(e, sym, &lt, &rt);
                    Ty::Error
                }
            },
            And | Or => Ty::Bool,
        }
    }

    /// `e` (of type `t`) written as the same `Decimal`, when that is exact:
    /// `decimal(n)` of an `int`, `decimal("12.50")` of a float literal.
    fn as_decimal(&self, e: &Expr, t: &Ty) -> Option<String> {
        let text = self.source_text(e.span).to_string();
        match (t, &e.kind) {
            (Ty::Int, _) => Some(format!("decimal({text})")),
            (Ty::Float, ExprKind::Float(_)) => {
                let digits = text.replace('_', "");
                let plain = !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                    && digits.bytes().filter(|&b| b == b'.').count() == 1;
                plain.then(|| format!("decimal(\"{digits}\")"))
            }
            (
                Ty::Float,
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    expr,
                },
            ) if matches!(expr.kind, ExprKind::Float(_)) => self
                .as_decimal(expr, t)
                .map(|d| d.replacen("decimal(\"", "decimal(\"-", 1)),
            _ => None,
        }
    }

    fn operand_error(&mut self, e: &Expr, sym: &str, lt: &Ty, rt: &Ty) {
        let mut d = Diagnostic::error(
            Code::InvalidOperand,
            e.span,
            format!(
                "cannot apply `{sym}` to `{}` and `{}`",
                self.show(lt),
                self.show(rt)
            ),
        );
        d = match (lt, rt) {
            (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => d.hint(
                "convert one side: `float(n)` or `int(x)`; Vox never converts numbers implicitly",
            ),
            (Ty::Map(_), _) | (_, Ty::Map(_)) => d.hint(
                "maps have no operators but `is` and `isnt`: add an entry with `m = insert(m, key, value)`, compare sizes with `len(m)`",
            ),
            (Ty::Str, _) | (_, Ty::Str) if sym == "+" => {
                d.hint("convert the other side with `str(…)` to join text")
            }
            (Ty::Decimal, Ty::Decimal) => d.hint(
                "`Decimal` has `+`, `-` and `*` but no `/` or `%`: a quotient needs its decimal places and a rounding rule, `div(a, b, 2)` (half away from zero; `div(a, b, 2, \"half_even\")` …), and `round(d, 2)` rounds",
            ),
            (Ty::Decimal, Ty::Int) | (Ty::Int, Ty::Decimal) => {
                d.hint("convert the `int` with `decimal(n)`; Vox never converts numbers implicitly")
            }
            (Ty::Decimal, Ty::Float) | (Ty::Float, Ty::Decimal) => d.hint(
                "convert one side: `float(d)` (approximate) or `decimal(\"…\")`; Vox never converts numbers implicitly",
            ),
            _ => d,
        };
        // The `int` (exactly) or float literal (as written) beside a `Decimal`
        // becomes a `Decimal`: the meaning is the same number.
        if let ExprKind::Binary { lhs, rhs, .. } = &e.kind {
            let other = match (lt, rt) {
                (Ty::Decimal, Ty::Int | Ty::Float) => Some((rhs, rt)),
                (Ty::Int | Ty::Float, Ty::Decimal) => Some((lhs, lt)),
                _ => None,
            };
            if let Some((side, t)) = other {
                if let Some(fixed) = self.as_decimal(side, t) {
                    d = d.fix("make it a `Decimal`", side.span, fixed);
                }
            }
        }
        self.err(d);
    }

    fn infer_if(
        &mut self,
        e: &Expr,
        cond: &Expr,
        then: &Block,
        els: Option<&Block>,
        want: Want,
    ) -> Ty {
        self.check_expr(cond, Want::Type(&Ty::Bool));
        match want {
            Want::Nothing => {
                let (t1, _) = self.check_block(then, Want::Nothing);
                let t2 = els.map(|b| self.check_block(b, Want::Nothing).0);
                match t2 {
                    Some(Ty::Never) if matches!(t1, Ty::Never) => Ty::Never,
                    _ => Ty::Unit,
                }
            }
            Want::Type(Ty::Unit) => {
                self.check_block(then, Want::Nothing);
                if let Some(b) = els {
                    self.check_block(b, Want::Nothing);
                }
                Ty::Unit
            }
            Want::Any | Want::Type(_) => {
                let (t1, tail1) = self.check_block(then, want);
                self.require_block_value(then, &t1, tail1, want);
                let Some(els) = els else {
                    if matches!(t1, Ty::Never) {
                        // `if c { return x }` where a value is needed: the
                        // value after the `if` is what is missing.
                        self.err(
                            Diagnostic::error(
                                Code::MissingReturn,
                                Span {
                                    end: e.span.start.saturating_add(2).min(e.span.end),
                                    ..e.span
                                },
                                "nothing is returned when this `if`'s condition is false",
                            )
                            .label("the `if` returns, but the code after it gives no value")
                            .hint("add a `return …` after the `if` (or an `else { return … }`)"),
                        );
                    } else if !matches!(t1, Ty::Error) {
                        self.err(
                            Diagnostic::error(
                                Code::MissingElse,
                                Span {
                                    end: e.span.start.saturating_add(2).min(e.span.end),
                                    ..e.span
                                },
                                "`if` without `else` has no value here",
                            )
                            .hint("add an `else { … }` branch"),
                        );
                    }
                    return want.ty().cloned().unwrap_or(t1);
                };
                let joined_want_ty;
                let else_want = match want {
                    Want::Type(t) => Want::Type(t),
                    _ if t1.is_concrete() && !matches!(t1, Ty::Never) => {
                        joined_want_ty = t1.clone();
                        Want::Type(&joined_want_ty)
                    }
                    _ => Want::Any,
                };
                let (t2, tail2) = self.check_block(els, else_want);
                self.require_block_value(els, &t2, tail2, else_want);
                match (&t1, &t2) {
                    (Ty::Never, Ty::Never) => Ty::Never,
                    _ => want.ty().cloned().unwrap_or_else(|| t1.join(&t2)),
                }
            }
        }
    }

    /// In value position a branch must end in an expression (or diverge).
    pub(super) fn require_block_value(&mut self, b: &Block, t: &Ty, has_tail: bool, want: Want) {
        if has_tail || matches!(t, Ty::Never) {
            return;
        }
        let expected = want.ty().map_or("a value".to_string(), |t| self.show(t));
        if want.ty().is_some_and(|t| t.is_error()) {
            return;
        }
        self.err(
            Diagnostic::error(Code::Mismatch, b.span, "this branch has no value")
                .types(expected, "Unit")
                .hint("end the branch with an expression"),
        );
    }
}
