//! Calls of user functions (awaited and `?`-propagated under `net`),
//! builtins, `Decimal` operators, and arithmetic checked at run time with
//! its source location.

use std::fmt::Write as _;

use crate::ast::*;
use crate::check::{Builtin, Callee};
use crate::types::Ty;

use super::names::{rust_ident, rust_str};
use super::show::{top_writer, SHOW};
use super::walk::expr_sketch;
use super::{Ctx, Emitter, Tail};

impl Emitter<'_> {
    pub(super) fn call(
        &mut self,
        e: &Expr,
        callee: &Ident,
        args: &[Arg],
        ctx: Ctx,
        depth: usize,
    ) -> String {
        let tried = std::mem::take(&mut self.try_call);
        match self.info.callees.get(&e.id).copied() {
            Some(Callee::Builtin(b)) => self.builtin(e, b, args, ctx, depth),
            Some(Callee::Fn(i)) => {
                let f = &self.info.fns[i];
                let params: Vec<String> = f.params.iter().map(|(n, _)| n.clone()).collect();
                let named = args.iter().any(|a| a.name.is_some());
                // (position among the arguments as written) per parameter.
                let mut chosen = Vec::new();
                for (pi, p) in params.iter().enumerate() {
                    let arg = if named {
                        args.iter()
                            .position(|a| a.name.as_ref().is_some_and(|n| n.name == *p))
                    } else {
                        (pi < args.len()).then_some(pi)
                    };
                    chosen.extend(arg);
                }
                // Arguments are evaluated in the order written; named ones
                // written out of order are bound first, in that order.
                let in_order = chosen.windows(2).all(|w| w[0] < w[1]);
                let mut lets = String::new();
                let mut parts = vec![String::new(); chosen.len()];
                let mut order: Vec<usize> = (0..chosen.len()).collect();
                order.sort_by_key(|&k| chosen[k]);
                for k in order {
                    let v = self.expr(&args[chosen[k]].value, ctx, depth, Tail::Value);
                    if in_order {
                        parts[k] = v;
                    } else {
                        let t = self.fresh("VOX_A");
                        let _ = write!(lets, "let {t} = {v}; ");
                        parts[k] = t;
                    }
                }
                let net = f.net;
                // By path, so a local or parameter with the function's name
                // cannot shadow it (`let bump = 1; bump(bump)`).
                let module = if self.in_test { "super" } else { "self" };
                let call = format!(
                    "{module}::{}({})",
                    rust_ident(&callee.name),
                    parts.join(", ")
                );
                // A call that can come back to this function: an `async fn`
                // must not contain its own future, so box it.
                let recursive = self
                    .recursive_net
                    .get(&i)
                    .is_some_and(|reach| reach.contains(&self.current));
                // Under `try`, the runtime's error (its message redacted, as
                // every runtime error is) becomes the `Error` text.
                let outcome = if tried {
                    ".map_err(|e| ::std::string::ToString::to_string(&e))"
                } else {
                    "?"
                };
                let call = match (net, recursive) {
                    (true, true) => format!("::std::boxed::Box::pin({call}).await{outcome}"),
                    (true, false) => format!("{call}.await{outcome}"),
                    _ => call,
                };
                if lets.is_empty() {
                    call
                } else {
                    format!("{{ {lets}{call} }}")
                }
            }
            None => "::std::unreachable!()".into(),
        }
    }

    /// Argument `i` as an owned value.
    fn arg(&mut self, args: &[Arg], i: usize, ctx: Ctx, depth: usize) -> String {
        match args.get(i) {
            Some(a) => self.expr(&a.value, ctx, depth, Tail::Value),
            None => "::std::unreachable!()".into(),
        }
    }

    /// `range(…)`'s arguments as a Rust range of `i64` (empty when `b <= a`).
    pub(super) fn range(&mut self, args: &[Arg], ctx: Ctx, depth: usize) -> String {
        let mut v: Vec<String> = args
            .iter()
            .map(|a| self.expr(&a.value, ctx, depth, Tail::Value))
            .collect();
        if v.len() == 1 {
            v.insert(0, "0_i64".into());
        }
        match v.as_slice() {
            [a, b] => format!("(({a})..({b}))"),
            _ => "::std::unreachable!()".into(),
        }
    }

    fn builtin(&mut self, call: &Expr, b: Builtin, args: &[Arg], ctx: Ctx, depth: usize) -> String {
        if b == Builtin::Args {
            return "::vox_runtime::__private::script::args()".into();
        }
        if b == Builtin::Today {
            return "::vox_runtime::__private::date::today()".into();
        }
        let Some(a0) = args.first().map(|a| &a.value) else {
            return "::std::unreachable!()".into();
        };
        match b {
            Builtin::Len => {
                let v = self.borrowable(a0, ctx, depth);
                if matches!(self.ty(a0), Ty::Str) {
                    format!("({v}.chars().count() as i64)")
                } else {
                    format!("({v}.len() as i64)")
                }
            }
            Builtin::Str => format!(
                "{SHOW}::to_text(&{}, {})",
                self.borrowable(a0, ctx, depth),
                top_writer(self.ty(a0))
            ),
            // Compiled for `cargo test`, printing goes through `println!`
            // so libtest captures it with the test's output instead of
            // mixing it into the test report.
            Builtin::Print => {
                let w = top_writer(self.ty(a0));
                format!(
                    "{{ let vox_printed = &{}; if ::std::cfg!(test) {{ {SHOW}::print_captured(vox_printed, {w}) }} else {{ {SHOW}::print(vox_printed, {w}) }} }}",
                    self.borrowable(a0, ctx, depth)
                )
            }
            Builtin::Int | Builtin::Float | Builtin::Decimal
                if matches!(self.ty(a0), Ty::Decimal) =>
            {
                let v = format!("&{}", self.borrowable(a0, ctx, depth));
                match b {
                    Builtin::Int => self.checked(call, "decimal::to_int", &[v]),
                    Builtin::Float => self.checked(call, "decimal::to_float", &[v]),
                    _ => self.expr(a0, ctx, depth, Tail::Value),
                }
            }
            Builtin::Int => {
                let v = self.expr(a0, ctx, depth, Tail::Value);
                match self.ty(a0) {
                    Ty::Int => v,
                    Ty::Float => self.checked(call, "arith::int_of_float", &[v]),
                    _ => format!("({v} as i64)"),
                }
            }
            Builtin::Float => {
                let v = self.expr(a0, ctx, depth, Tail::Value);
                if matches!(self.ty(a0), Ty::Float) {
                    v
                } else {
                    format!("({v} as f64)")
                }
            }
            Builtin::Decimal => match (&a0.kind, self.ty(a0)) {
                // Checked when the module was: a literal is a decimal number.
                (ExprKind::Str(text), _) => {
                    format!("::std::string::String::from({})", rust_str(text))
                }
                (_, Ty::Int) => format!(
                    "::vox_runtime::__private::decimal::from_int({})",
                    self.expr(a0, ctx, depth, Tail::Value)
                ),
                _ => {
                    let v = format!("&{}", self.borrowable(a0, ctx, depth));
                    self.checked(call, "decimal::parse", &[v])
                }
            },
            Builtin::ParseInt | Builtin::ParseFloat | Builtin::ParseDecimal => {
                let f = match b {
                    Builtin::ParseInt => "parse_int",
                    Builtin::ParseFloat => "parse_float",
                    _ => "parse_decimal",
                };
                format!(
                    "::vox_runtime::__private::builtins::{f}(&{})",
                    self.borrowable(a0, ctx, depth)
                )
            }
            // Lazy: nothing is read or fetched until a call sends the value
            // (docs/language.md, "Images, documents and audio").
            Builtin::ImageFile
            | Builtin::ImageUrl
            | Builtin::DocumentFile
            | Builtin::DocumentUrl
            | Builtin::AudioFile
            | Builtin::AudioUrl => {
                let v = self.expr(a0, ctx, depth, Tail::Value);
                match b.media() {
                    Some((m, url)) => format!(
                        "{}::{}({v})",
                        m.rust_type(),
                        if url { "from_url" } else { "from_path" }
                    ),
                    None => "::std::unreachable!()".into(),
                }
            }
            Builtin::Assert => {
                let v = self.expr(a0, ctx, depth, Tail::Value);
                let text = format!(
                    "assertion failed: {} at {}",
                    self.source_of(a0),
                    self.site(call)
                );
                format!("::std::assert!({v}, \"{{}}\", {})", rust_str(&text))
            }
            Builtin::First | Builtin::Last => {
                let v = self.borrowable(a0, ctx, depth);
                let m = if b == Builtin::First { "first" } else { "last" };
                format!("{v}.{m}().cloned()")
            }
            Builtin::Get => {
                let l = self.borrowable(a0, ctx, depth);
                let i = self.arg(args, 1, ctx, depth);
                let default = match args.get(2) {
                    Some(d) => {
                        let elem = self.ty(call).clone();
                        Some(self.typed(&d.value, Some(&elem), ctx, depth))
                    }
                    None => None,
                };
                let found = if matches!(self.ty(a0), Ty::Map(_)) {
                    format!("let VOX_L = &{l}; let VOX_I: ::std::string::String = {i}; VOX_L.get(VOX_I.as_str()).cloned()")
                } else {
                    format!("let VOX_L = &{l}; let VOX_I: i64 = {i}; if VOX_I < 0 {{ ::std::option::Option::None }} else {{ VOX_L.get(VOX_I as usize).cloned() }}")
                };
                match default {
                    // The default is evaluated (after the key) whether or not it is used.
                    Some(d) => format!(
                        "{{ let VOX_G = {{ {found} }}; let VOX_D = {d}; VOX_G.unwrap_or(VOX_D) }}"
                    ),
                    None => format!("{{ {found} }}"),
                }
            }
            Builtin::Insert => {
                let m = self.map_operand(a0, call, ctx, depth);
                let k = self.arg(args, 1, ctx, depth);
                let value = match (self.ty(call), args.get(2)) {
                    (Ty::Map(v), Some(a)) => {
                        let v = (**v).clone();
                        self.typed(&a.value, Some(&v), ctx, depth)
                    }
                    _ => self.arg(args, 2, ctx, depth),
                };
                format!("{{ let mut VOX_M = {m}; let VOX_K: ::std::string::String = {k}; let VOX_V = {value}; VOX_M.insert(VOX_K, VOX_V); VOX_M }}")
            }
            Builtin::Remove => {
                let m = self.map_operand(a0, call, ctx, depth);
                let k = self.arg(args, 1, ctx, depth);
                format!("{{ let mut VOX_M = {m}; let VOX_K: ::std::string::String = {k}; VOX_M.remove(VOX_K.as_str()); VOX_M }}")
            }
            Builtin::Keys => {
                let m = self.borrowable(a0, ctx, depth);
                format!("{m}.keys().cloned().collect::<::std::vec::Vec<::std::string::String>>()")
            }
            Builtin::Values => {
                let m = self.borrowable(a0, ctx, depth);
                format!("{m}.values().cloned().collect::<::std::vec::Vec<_>>()")
            }
            Builtin::Contains => {
                let l = self.borrowable(a0, ctx, depth);
                let elem = match self.ty(a0) {
                    Ty::List(e) => Some((**e).clone()),
                    _ => None,
                };
                let x = match (&elem, args.get(1)) {
                    (Some(e), Some(a)) => self.typed(&a.value, Some(e), ctx, depth),
                    _ => self.arg(args, 1, ctx, depth),
                };
                if matches!(self.ty(a0), Ty::Map(_)) {
                    format!("{{ let VOX_L = &{l}; let VOX_X: ::std::string::String = {x}; VOX_L.contains_key(VOX_X.as_str()) }}")
                } else if matches!(elem, Some(Ty::Decimal)) {
                    // `is` on `Decimal`s compares values ("1.0" is "1.00").
                    let at = self.info.sites.get(&call.id).map_or("?", String::as_str);
                    format!(
                        "{{ let VOX_L = &{l}; let VOX_X = {x}; VOX_L.iter().any(|VOX_E| ::vox_runtime::__private::decimal::cmp(VOX_E, &VOX_X, {}, {}) == ::std::cmp::Ordering::Equal) }}",
                        rust_str(&self.current_fn),
                        rust_str(at)
                    )
                } else if elem.is_some() {
                    format!("{{ let VOX_L = &{l}; let VOX_X = {x}; VOX_L.contains(&VOX_X) }}")
                } else {
                    format!(
                        "{{ let VOX_L = &{l}; let VOX_X = {x}; VOX_L.contains(VOX_X.as_str()) }}"
                    )
                }
            }
            Builtin::StartsWith | Builtin::EndsWith => {
                let l = self.borrowable(a0, ctx, depth);
                let x = self.arg(args, 1, ctx, depth);
                let m = if b == Builtin::StartsWith {
                    "starts_with"
                } else {
                    "ends_with"
                };
                format!("{{ let VOX_L = &{l}; let VOX_X = {x}; VOX_L.{m}(VOX_X.as_str()) }}")
            }
            Builtin::Join => {
                let l = self.borrowable(a0, ctx, depth);
                let x = self.arg(args, 1, ctx, depth);
                format!("{{ let VOX_L = &{l}; let VOX_X = {x}; VOX_L.join(VOX_X.as_str()) }}")
            }
            Builtin::Split => {
                let l = self.borrowable(a0, ctx, depth);
                let x = self.arg(args, 1, ctx, depth);
                format!("{{ let VOX_L = &{l}; let VOX_X = {x}; if VOX_X.is_empty() {{ VOX_L.chars().map(::std::string::String::from).collect::<::std::vec::Vec<_>>() }} else {{ VOX_L.split(VOX_X.as_str()).map(::std::string::String::from).collect::<::std::vec::Vec<_>>() }} }}")
            }
            Builtin::Trim | Builtin::Lower | Builtin::Upper => {
                let v = self.borrowable(a0, ctx, depth);
                let m = match b {
                    Builtin::Trim => "trim().to_owned",
                    Builtin::Lower => "to_lowercase",
                    _ => "to_uppercase",
                };
                format!("{v}.{m}()")
            }
            Builtin::Fixed => {
                let digits = self.arg(args, 1, ctx, depth);
                match self.ty(a0) {
                    Ty::Decimal => {
                        let v = self.borrowable(a0, ctx, depth);
                        let at = self.info.sites.get(&call.id).map_or("?", String::as_str);
                        format!(
                            "{{ let VOX_L = &{v}; let VOX_N: i64 = {digits}; ::vox_runtime::__private::decimal::fixed(VOX_L, VOX_N, {}, {}) }}",
                            rust_str(&self.current_fn),
                            rust_str(at)
                        )
                    }
                    t => {
                        let v = self.expr(a0, ctx, depth, Tail::Value);
                        let v = if matches!(t, Ty::Float) {
                            v
                        } else {
                            format!("({v} as f64)")
                        };
                        format!("{{ let VOX_X: f64 = {v}; let VOX_N: i64 = {digits}; ::vox_runtime::__private::builtins::fixed(VOX_X, VOX_N) }}")
                    }
                }
            }
            Builtin::Div | Builtin::Round => {
                let at = self.info.sites.get(&call.id).map_or("?", String::as_str);
                let d = self.borrowable(a0, ctx, depth);
                let (divisor, rest) = if b == Builtin::Div {
                    (Some(self.borrowable(&args[1].value, ctx, depth)), 2)
                } else {
                    (None, 1)
                };
                let places = self.arg(args, rest, ctx, depth);
                // The mode is a literal the checker knows (half_up without one).
                let mode = match args.get(rest + 1).map(|a| &a.value.kind) {
                    Some(ExprKind::Str(m)) => m.clone(),
                    _ => "half_up".to_owned(),
                };
                let names = format!("{}, {}", rust_str(&self.current_fn), rust_str(at));
                match divisor {
                    Some(v) => format!(
                        "{{ let VOX_L = &{d}; let VOX_R = &{v}; let VOX_N: i64 = {places}; ::vox_runtime::__private::decimal::div(VOX_L, VOX_R, VOX_N, {}, {names}) }}",
                        rust_str(&mode)
                    ),
                    None => format!(
                        "{{ let VOX_L = &{d}; let VOX_N: i64 = {places}; ::vox_runtime::__private::decimal::round(VOX_L, VOX_N, {}, {names}) }}",
                        rust_str(&mode)
                    ),
                }
            }
            Builtin::Reverse => {
                let v = self.expr(a0, ctx, depth, Tail::Value);
                format!("{{ let mut VOX_V = {v}; VOX_V.reverse(); VOX_V }}")
            }
            Builtin::Sort | Builtin::Min | Builtin::Max | Builtin::Sum => {
                let elem = match self.ty(call) {
                    Ty::List(e) | Ty::Option(e) => (**e).clone(),
                    t => t.clone(),
                };
                let cmp = self.comparator(call, &elem);
                let (f, at) = (rust_str(&self.current_fn), rust_str(self.site(call)));
                match b {
                    Builtin::Sort => {
                        let v = self.expr(a0, ctx, depth, Tail::Value);
                        format!("{{ let mut VOX_V = {v}; VOX_V.sort_by({cmp}); VOX_V }}")
                    }
                    Builtin::Min | Builtin::Max => {
                        let v = self.borrowable(a0, ctx, depth);
                        let m = if b == Builtin::Min {
                            "min_by"
                        } else {
                            "max_by"
                        };
                        format!("{v}.iter().{m}(|VOX_A, VOX_B| ({cmp})(*VOX_A, *VOX_B)).cloned()")
                    }
                    _ => {
                        let v = self.borrowable(a0, ctx, depth);
                        match elem {
                            Ty::Float => format!("{v}.iter().fold(0.0_f64, |VOX_A, VOX_B| VOX_A + *VOX_B)"),
                            Ty::Decimal => format!("{v}.iter().fold(::std::string::String::from(\"0\"), |VOX_A, VOX_B| ::vox_runtime::__private::decimal::add(&VOX_A, VOX_B, {f}, {at}))"),
                            _ => format!("{v}.iter().fold(0_i64, |VOX_A, VOX_B| ::vox_runtime::__private::arith::add(VOX_A, *VOX_B, {f}, {at}))"),
                        }
                    }
                }
            }
            Builtin::Map
            | Builtin::Filter
            | Builtin::Find
            | Builtin::Any
            | Builtin::All
            | Builtin::Count
            | Builtin::SortBy
            | Builtin::GroupBy => self.higher_order(call, b, args, ctx, depth),
            Builtin::Env | Builtin::ReadText => {
                let f = if b == Builtin::Env {
                    "env"
                } else {
                    "read_text"
                };
                let v = self.borrowable(a0, ctx, depth);
                format!("::vox_runtime::__private::script::{f}(&{v})")
            }
            Builtin::Args => "::vox_runtime::__private::script::args()".into(),
            Builtin::Today => "::vox_runtime::__private::date::today()".into(),
            Builtin::Date => match &a0.kind {
                ExprKind::Str(text) => format!("::std::string::String::from({})", rust_str(text)),
                // The checker takes only a literal.
                _ => "::std::unreachable!()".into(),
            },
            Builtin::ParseDate => {
                let v = self.borrowable(a0, ctx, depth);
                format!("::vox_runtime::__private::date::parse_date(&{v})")
            }
            Builtin::AddDays | Builtin::DaysBetween => {
                let Some(a1) = args.get(1).map(|a| &a.value) else {
                    return "::std::unreachable!()".into();
                };
                let d = self.borrowable(a0, ctx, depth);
                let (f, at) = (rust_str(&self.current_fn), rust_str(self.site(call)));
                if b == Builtin::AddDays {
                    let n = self.expr(a1, ctx, depth, Tail::Value);
                    format!("::vox_runtime::__private::date::add_days(&{d}, {n}, {f}, {at})")
                } else {
                    let other = self.borrowable(a1, ctx, depth);
                    format!(
                        "::vox_runtime::__private::date::days_between(&{d}, &{other}, {f}, {at})"
                    )
                }
            }
            Builtin::Year | Builtin::Month | Builtin::Day => {
                let d = self.borrowable(a0, ctx, depth);
                let k = match b {
                    Builtin::Year => 0,
                    Builtin::Month => 1,
                    _ => 2,
                };
                let (f, at) = (rust_str(&self.current_fn), rust_str(self.site(call)));
                format!("::vox_runtime::__private::date::part(&{d}, {k}, {f}, {at})")
            }
            Builtin::Range => format!(
                "{}.collect::<::std::vec::Vec<i64>>()",
                self.range(args, ctx, depth)
            ),
            Builtin::AssertEq => {
                let Some(a1) = args.get(1).map(|a| &a.value) else {
                    return "::std::unreachable!()".into();
                };
                let (lt, rt) = (self.ty(a0), self.ty(a1));
                let l = self.typed(a0, Some(rt), ctx, depth);
                let r = self.typed(a1, Some(lt), ctx, depth);
                let text = format!(
                    "assert_eq({}, {}) failed at {}",
                    self.source_of(a0),
                    self.source_of(a1),
                    self.site(call)
                );
                format!("::std::assert_eq!({l}, {r}, \"{{}}\", {})", rust_str(&text))
            }
        }
    }

    /// A Rust closure comparing two `&elem`s as `sort` orders them (floats
    /// by `total_cmp`, `Decimal`s by value, failing at `call`'s site on a
    /// malformed one).
    pub(super) fn comparator(&self, call: &Expr, elem: &Ty) -> String {
        let (f, at) = (rust_str(&self.current_fn), rust_str(self.site(call)));
        match elem {
            Ty::Float => "|VOX_A: &f64, VOX_B: &f64| VOX_A.total_cmp(VOX_B)".to_string(),
            Ty::Decimal => format!("|VOX_A: &::std::string::String, VOX_B: &::std::string::String| ::vox_runtime::__private::decimal::cmp(VOX_A, VOX_B, {f}, {at})"),
            _ => "::std::cmp::Ord::cmp".to_string(),
        }
    }

    /// `Decimal` operators (docs/language.md, "Decimal"): exact `+ - *` and
    /// comparison by value, through `vox_runtime::__private::decimal`.
    pub(super) fn decimal_binary(
        &mut self,
        e: &Expr,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        ctx: Ctx,
        depth: usize,
    ) -> String {
        let l = format!("&{}", self.borrowable(lhs, ctx, depth));
        let r = format!("&{}", self.borrowable(rhs, ctx, depth));
        let test = match op {
            BinaryOp::Add => return self.checked(e, "decimal::add", &[l, r]),
            BinaryOp::Sub => return self.checked(e, "decimal::sub", &[l, r]),
            BinaryOp::Mul => return self.checked(e, "decimal::mul", &[l, r]),
            BinaryOp::Eq => "is_eq",
            BinaryOp::NotEq => "is_ne",
            BinaryOp::Lt => "is_lt",
            BinaryOp::Le => "is_le",
            BinaryOp::Gt => "is_gt",
            BinaryOp::Ge => "is_ge",
            // The checker allows no other operator on `Decimal`.
            _ => return "::std::unreachable!()".into(),
        };
        format!("{}.{test}()", self.checked(e, "decimal::cmp", &[l, r]))
    }

    /// A call of the `vox_runtime` function `f` (`arith::add`, …) that
    /// computes `e` and fails at run time, naming the function and the source
    /// position, when there is no result (docs/language.md, "Numbers").
    pub(super) fn checked(&self, e: &Expr, f: &str, operands: &[String]) -> String {
        let at = self.info.sites.get(&e.id).map_or("?", String::as_str);
        format!(
            "::vox_runtime::__private::{f}({}, {}, {})",
            operands.join(", "),
            rust_str(&self.current_fn),
            rust_str(at)
        )
    }

    /// Where the expression `e` is written, `file:line:col` (noted by the
    /// checker for what can fail at run time).
    pub(super) fn site(&self, e: &Expr) -> &str {
        self.info.sites.get(&e.id).map_or("?", String::as_str)
    }

    /// A short rendering of an expression for assertion messages.
    pub(super) fn source_of(&self, e: &Expr) -> String {
        let text = match &e.kind {
            ExprKind::Var(n) => n.clone(),
            _ => String::new(),
        };
        if !text.is_empty() {
            return text;
        }
        // Spans index the module's files; the emitter has no text, so
        // describe the shape instead.
        expr_sketch(e, 0)
    }
}
