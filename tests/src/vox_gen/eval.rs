//! The reference evaluator: what a generated function computes and prints.

use super::*;

/// A Vox value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    /// A `Decimal`: unscaled value, scale, and its text (containers compare the text).
    Dec(i128, u32, String),
    Bool(bool),
    Str(String),
    Unit,
    List(Vec<Val>),
    /// A `map[str, T]`: its keys in code-point order, as Vox keeps them.
    Map(std::collections::BTreeMap<String, Val>),
    Opt(Option<Box<Val>>),
    Res(Result<Box<Val>, String>),
    Rec(usize, Vec<Val>),
    Var(usize, usize, Vec<Val>),
}

impl Val {
    /// A decimal from valid decimal text, kept as written.
    pub(super) fn dec_text(text: &str) -> Val {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = format!("{int}{frac}");
        let m: i128 = digits.parse().expect("generator bug: decimal text");
        Val::Dec(m, frac.len() as u32, text.to_string())
    }

    /// A computed decimal, written with exactly `scale` places.
    fn dec(m: i128, scale: u32) -> Ev<Val> {
        if m.unsigned_abs() >= 10u128.pow(30) || scale > 20 {
            return Err(Stop::OutOfBounds("decimal size"));
        }
        let digits = m.unsigned_abs().to_string();
        let text = if scale == 0 {
            digits
        } else {
            let s = scale as usize;
            let padded = format!("{digits:0>width$}", width = s + 1);
            let (i, f) = padded.split_at(padded.len() - s);
            format!("{i}.{f}")
        };
        let text = if m < 0 { format!("-{text}") } else { text };
        Ok(Val::Dec(m, scale, text))
    }
}

/// Two decimals at one scale.
fn align(a: i128, sa: u32, b: i128, sb: u32) -> Ev<(i128, i128, u32)> {
    let s = sa.max(sb);
    let up = |m: i128, from: u32| {
        10i128
            .checked_pow(s - from)
            .and_then(|k| m.checked_mul(k))
            .ok_or(Stop::OutOfBounds("decimal size"))
    };
    Ok((up(a, sa)?, up(b, sb)?, s))
}

/// How `sort`, `min`, `max` and `sort_by` order two values.
fn order(a: &Val, b: &Val) -> std::cmp::Ordering {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        (Val::Float(x), Val::Float(y)) => x.total_cmp(y),
        (Val::Str(x), Val::Str(y)) => x.cmp(y),
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        // By value: `1.0` and `1.00` are equal (and keep their order in `sort`).
        (Val::Dec(x, sx, _), Val::Dec(y, sy, _)) => {
            let s = (*sx).max(*sy);
            let up = |m: i128, from: u32| {
                let k = 10i128.pow(s - from);
                (m.checked_mul(k), m.signum())
            };
            match (up(*x, *sx), up(*y, *sy)) {
                ((Some(x), _), (Some(y), _)) => x.cmp(&y),
                // Too large to align: the signs, then the larger scale loses.
                ((_, a), (_, b)) => a.cmp(&b),
            }
        }
        _ => panic!("generator bug: ordering {a:?} and {b:?}"),
    }
}

/// Why evaluation stopped without a value.
#[derive(Debug)]
pub enum Stop {
    Return(Val),
    /// `break` / `continue`: caught by the innermost loop.
    Break,
    Continue,
    /// Left the bounds the generator promises (fuel, huge numbers).
    OutOfBounds(&'static str),
    /// An `int` operation overflowed: a run-time error in Vox.
    Overflow,
}

/// Integers the generated tests may produce (far from overflow).
const INT_BOUND: i64 = 1 << 40;

/// Evaluates generated functions.
pub struct Interp<'m> {
    m: &'m Module,
    env: Vec<(*const Binding, Val)>,
    fuel: u64,
    calls: usize,
    /// What `print` wrote, one line each.
    pub printed: String,
}

type Ev<T> = Result<T, Stop>;

impl<'m> Interp<'m> {
    pub fn new(m: &'m Module) -> Interp<'m> {
        Interp {
            m,
            env: Vec::new(),
            fuel: 200_000,
            calls: 0,
            printed: String::new(),
        }
    }

    /// `str(v)`: text as it is, everything else as inside a value ([`Interp::show`]).
    pub fn text(&self, v: Val) -> String {
        match v {
            Val::Str(s) => s,
            v => self.show(&v),
        }
    }

    /// Calls function `fi`; `Err` when the call leaves the generator's bounds.
    pub fn call(&mut self, fi: usize, args: Vec<Val>) -> Result<Val, &'static str> {
        match self.call_inner(fi, args) {
            Ok(v) => Ok(v),
            Err(Stop::Return(v)) => Ok(v),
            Err(Stop::OutOfBounds(why)) => Err(why),
            Err(Stop::Overflow) => Err("overflow"),
            Err(Stop::Break | Stop::Continue) => {
                panic!("generator bug: loop control outside a loop")
            }
        }
    }

    fn call_inner(&mut self, fi: usize, args: Vec<Val>) -> Ev<Val> {
        let f = &self.m.fns[fi];
        self.calls += 1;
        if self.calls > 200 {
            return Err(Stop::OutOfBounds("call depth"));
        }
        let saved = std::mem::take(&mut self.env);
        for (p, a) in f.params.iter().zip(args) {
            self.env.push((Rc::as_ptr(p), a));
        }
        let r = self.block(&f.body);
        self.env = saved;
        self.calls -= 1;
        match r {
            Ok(v) => Ok(v),
            Err(Stop::Return(v)) => Ok(v),
            Err(e) => Err(e),
        }
    }

    fn tick(&mut self) -> Ev<()> {
        if self.fuel == 0 {
            return Err(Stop::OutOfBounds("fuel"));
        }
        self.fuel -= 1;
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Ev<Val> {
        let mark = self.env.len();
        let r = (|| {
            for s in &b.stmts {
                self.stmt(s)?;
            }
            match &b.tail {
                Some(t) => self.expr(t),
                None => Ok(Val::Unit),
            }
        })();
        self.env.truncate(mark);
        r
    }

    fn lookup(&mut self, b: &B) -> &mut Val {
        let p = Rc::as_ptr(b);
        let slot = self
            .env
            .iter_mut()
            .rev()
            .find(|(q, _)| *q == p)
            .unwrap_or_else(|| panic!("generator bug: `{}` is not bound", b.name));
        &mut slot.1
    }

    fn stmt(&mut self, s: &Stmt) -> Ev<()> {
        self.tick()?;
        match s {
            Stmt::Let(b, _, v) => {
                let v = self.expr(v)?;
                self.env.push((Rc::as_ptr(b), v));
            }
            Stmt::Assign(b, path, v) => {
                let v = self.expr(v)?;
                let mut slot = self.lookup(b);
                for (_, fi) in path {
                    let Val::Rec(_, fs) = slot else {
                        panic!("generator bug: field assignment on a non-record");
                    };
                    slot = &mut fs[*fi];
                }
                *slot = v;
            }
            Stmt::Return(v) => {
                let v = match v {
                    Some(v) => self.expr(v)?,
                    None => Val::Unit,
                };
                return Err(Stop::Return(v));
            }
            Stmt::If(c, t, e) => {
                if self.truth(c)? {
                    self.block(t)?;
                } else if let Some(e) = e {
                    self.block(e)?;
                }
            }
            Stmt::Match(s, arms) => {
                self.matching(s, arms)?;
            }
            Stmt::For(b, it, body) => {
                let Val::List(xs) = self.expr(it)? else {
                    panic!("generator bug: for over a non-list");
                };
                for x in xs {
                    self.env.push((Rc::as_ptr(b), x));
                    let r = self.block(body);
                    self.env.pop();
                    match r {
                        Err(Stop::Break) => break,
                        Err(Stop::Continue) | Ok(_) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::While(c, body) => {
                while self.truth(c)? {
                    self.tick()?;
                    match self.block(body) {
                        Err(Stop::Break) => break,
                        Err(Stop::Continue) | Ok(_) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Break => return Err(Stop::Break),
            Stmt::Continue => return Err(Stop::Continue),
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::Print(e) => {
                let v = self.expr(e)?;
                let line = self.text(v);
                self.printed.push_str(&line);
                self.printed.push('\n');
            }
            Stmt::Assert(e) => {
                if !self.truth(e)? {
                    return Err(Stop::OutOfBounds("assert"));
                }
            }
            Stmt::AssertEq(a, b) => {
                if self.expr(a)? != self.expr(b)? {
                    return Err(Stop::OutOfBounds("assert_eq"));
                }
            }
        }
        Ok(())
    }

    fn truth(&mut self, e: &Expr) -> Ev<bool> {
        match self.expr(e)? {
            Val::Bool(b) => Ok(b),
            v => panic!("generator bug: condition is {v:?}"),
        }
    }

    /// The list and text builtins, as docs/language.md ("Lists", "Text") says.
    fn builtin(&mut self, b: Bi, vals: Vec<Val>) -> Ev<Val> {
        if let (Bi::ParseInt | Bi::ParseFloat, [Val::Str(s)]) = (b, vals.as_slice()) {
            return Ok(Val::Opt(parse_number(b, s).map(Box::new)));
        }
        if matches!(b, Bi::DivDec | Bi::RoundDec) {
            return decimal_rounding(b, vals);
        }
        let opt = |v: Option<&Val>| Val::Opt(v.cloned().map(Box::new));
        let mut it = vals.into_iter();
        let (a, b2, b3) = (it.next(), it.next(), it.next());
        // Maps, and `get` with a default (docs/language.md, "Maps").
        Ok(match (b, a, b2, b3) {
            (Bi::Insert, Some(Val::Map(mut m)), Some(Val::Str(k)), Some(v)) => {
                m.insert(k, v);
                Val::Map(m)
            }
            (Bi::Remove, Some(Val::Map(mut m)), Some(Val::Str(k)), _) => {
                m.remove(&k);
                Val::Map(m)
            }
            (Bi::Keys, Some(Val::Map(m)), _, _) => Val::List(m.into_keys().map(Val::Str).collect()),
            (Bi::Values, Some(Val::Map(m)), _, _) => Val::List(m.into_values().collect()),
            (Bi::Get, Some(Val::Map(m)), Some(Val::Str(k)), _) => opt(m.get(&k)),
            (Bi::Contains, Some(Val::Map(m)), Some(Val::Str(k)), _) => {
                Val::Bool(m.contains_key(&k))
            }
            (Bi::GetOr, Some(Val::Map(m)), Some(Val::Str(k)), Some(d)) => {
                m.get(&k).cloned().unwrap_or(d)
            }
            (Bi::GetOr, Some(Val::List(xs)), Some(Val::Int(i)), Some(d)) => {
                let found = usize::try_from(i).ok().and_then(|i| xs.get(i));
                found.cloned().unwrap_or(d)
            }
            (Bi::Insert | Bi::Remove | Bi::Keys | Bi::Values | Bi::GetOr, a, b2, b3) => {
                panic!("generator bug: {b:?} of {a:?}, {b2:?}, {b3:?}")
            }
            (_, a2, b22, _) => return self.builtin2(b, a2, b22),
        })
    }

    fn builtin2(&mut self, b: Bi, a: Option<Val>, b2: Option<Val>) -> Ev<Val> {
        let opt = |v: Option<&Val>| Val::Opt(v.cloned().map(Box::new));
        Ok(match (b, a, b2) {
            (Bi::First, Some(Val::List(xs)), _) => opt(xs.first()),
            (Bi::Last, Some(Val::List(xs)), _) => opt(xs.last()),
            (Bi::Get, Some(Val::List(xs)), Some(Val::Int(i))) => {
                opt(usize::try_from(i).ok().and_then(|i| xs.get(i)))
            }
            (Bi::Contains, Some(Val::List(xs)), Some(x @ Val::Dec(..))) => {
                Val::Bool(xs.iter().any(|e| order(e, &x).is_eq()))
            }
            (Bi::Contains, Some(Val::List(xs)), Some(x)) => Val::Bool(xs.contains(&x)),
            (Bi::Contains, Some(Val::Str(s)), Some(Val::Str(p))) => Val::Bool(s.contains(&p)),
            (Bi::StartsWith, Some(Val::Str(s)), Some(Val::Str(p))) => Val::Bool(s.starts_with(&p)),
            (Bi::EndsWith, Some(Val::Str(s)), Some(Val::Str(p))) => Val::Bool(s.ends_with(&p)),
            (Bi::Sort, Some(Val::List(mut xs)), _) => {
                xs.sort_by(order);
                Val::List(xs)
            }
            (Bi::Reverse, Some(Val::List(mut xs)), _) => {
                xs.reverse();
                Val::List(xs)
            }
            (Bi::Min, Some(Val::List(xs)), _) => opt(xs.iter().min_by(|a, b| order(a, b))),
            (Bi::Max, Some(Val::List(xs)), _) => opt(xs.iter().max_by(|a, b| order(a, b))),
            (Bi::SumDec, Some(Val::List(xs)), _) => {
                let mut t = Val::dec_text("0");
                for x in xs {
                    let (Val::Dec(a, sa, _), Val::Dec(b, sb, _)) = (&t, &x) else {
                        panic!("generator bug: sum of {x:?}");
                    };
                    let (a, b, s) = align(*a, *sa, *b, *sb)?;
                    t = Val::dec(a + b, s)?;
                }
                t
            }
            (Bi::Sum | Bi::SumFloat, Some(Val::List(xs)), _) => {
                if b == Bi::SumFloat {
                    let mut t = 0.0_f64;
                    for x in &xs {
                        if let Val::Float(f) = x {
                            t += f;
                        }
                    }
                    Self::float(t)?
                } else {
                    let mut t = 0_i64;
                    for x in &xs {
                        if let Val::Int(n) = x {
                            t = match t.checked_add(*n) {
                                Some(v) => v,
                                None => return Err(Stop::Overflow),
                            };
                        }
                    }
                    Self::checked(Some(t))?
                }
            }
            (Bi::Join, Some(Val::List(xs)), Some(Val::Str(sep))) => {
                let parts: Vec<String> = xs
                    .into_iter()
                    .map(|x| match x {
                        Val::Str(s) => s,
                        v => panic!("generator bug: join of {v:?}"),
                    })
                    .collect();
                Val::Str(parts.join(&sep))
            }
            (Bi::Split, Some(Val::Str(s)), Some(Val::Str(sep))) => Val::List(if sep.is_empty() {
                s.chars().map(|c| Val::Str(c.to_string())).collect()
            } else {
                s.split(sep.as_str())
                    .map(|p| Val::Str(p.to_string()))
                    .collect()
            }),
            (Bi::Trim, Some(Val::Str(s)), _) => Val::Str(s.trim().to_string()),
            (Bi::Lower, Some(Val::Str(s)), _) => Val::Str(s.to_lowercase()),
            (Bi::Upper, Some(Val::Str(s)), _) => Val::Str(s.to_uppercase()),
            (Bi::Fixed, Some(Val::Dec(m, s, _)), Some(Val::Int(n))) => {
                // Exactly, half away from zero; a zero result has no sign.
                let places = n.clamp(0, 40) as u32;
                let r = if places >= s {
                    10i128
                        .checked_pow(places - s)
                        .and_then(|k| m.checked_mul(k))
                        .ok_or(Stop::OutOfBounds("decimal size"))?
                } else {
                    let k = 10i128.pow(s - places);
                    let (q, rem) = (m / k, (m % k).abs());
                    if rem * 2 >= k {
                        q + m.signum()
                    } else {
                        q
                    }
                };
                let Val::Dec(_, _, text) = Val::dec(r, places)? else {
                    unreachable!("Val::dec gives a decimal")
                };
                Val::Str(text)
            }
            (Bi::Fixed, Some(x), Some(Val::Int(n))) => {
                let x = match x {
                    Val::Float(f) => f,
                    Val::Int(i) => i as f64,
                    v => panic!("generator bug: fixed of {v:?}"),
                };
                let places = n.clamp(0, 40) as usize;
                let text = format!("{x:.places$}");
                Val::Str(match text.strip_prefix('-') {
                    Some(rest) if rest.bytes().all(|c| c == b'0' || c == b'.') => rest.to_string(),
                    _ => text,
                })
            }
            (b, a, c) => panic!("generator bug: {}({a:?}, {c:?})", b.name()),
        })
    }

    /// A date as its day count from 0001-01-01 (day 1); leaving the years
    /// 0001 to 9999 is out of the generator's bounds (a run-time error in Vox).
    fn day_number(&mut self, d: &DateE) -> Ev<i64> {
        match d {
            DateE::Lit(t) => {
                let n = |r: std::ops::Range<usize>| {
                    t[r].parse::<i64>().expect("generator bug: date text")
                };
                Ok(days_before(n(0..4), n(5..7)) + n(8..10))
            }
            DateE::Add(d, n) => {
                let base = self.day_number(d)?;
                let Val::Int(k) = self.expr(n)? else {
                    panic!("generator bug: add_days of a non-int");
                };
                let z = base.checked_add(k).ok_or(Stop::OutOfBounds("date range"))?;
                if !(1..=days_before(10_000, 1)).contains(&z) {
                    return Err(Stop::OutOfBounds("date range"));
                }
                Ok(z)
            }
        }
    }

    /// The function argument called with one element: a lambda's `return`
    /// gives its value.
    fn apply(&mut self, f: &FnArg, x: Val) -> Ev<Val> {
        self.tick()?;
        match f {
            FnArg::Named(fi) => self.call_inner(*fi, vec![x]),
            FnArg::Lambda { param, body, .. } => {
                let mark = self.env.len();
                self.env.push((Rc::as_ptr(param), x));
                let r = match body {
                    Body::Expr(e) => self.expr(e),
                    Body::Block(b) => self.block(b),
                };
                self.env.truncate(mark);
                match r {
                    Err(Stop::Return(v)) => Ok(v),
                    r => r,
                }
            }
        }
    }

    fn holds(&mut self, f: &FnArg, x: Val) -> Ev<bool> {
        match self.apply(f, x)? {
            Val::Bool(b) => Ok(b),
            v => panic!("generator bug: a predicate gave {v:?}"),
        }
    }

    /// `map`, `filter`, … over `items`, calling `f` on the elements in
    /// order; `find`, `any` and `all` stop at the first that decides.
    fn higher_order(&mut self, h: Ho, items: Vec<Val>, f: &FnArg) -> Ev<Val> {
        Ok(match h {
            Ho::Map => {
                let mut out = Vec::new();
                for x in items {
                    out.push(self.apply(f, x)?);
                }
                Val::List(out)
            }
            Ho::Filter => {
                let mut out = Vec::new();
                for x in items {
                    if self.holds(f, x.clone())? {
                        out.push(x);
                    }
                }
                Val::List(out)
            }
            Ho::Find => {
                for x in items {
                    if self.holds(f, x.clone())? {
                        return Ok(Val::Opt(Some(Box::new(x))));
                    }
                }
                Val::Opt(None)
            }
            Ho::Any | Ho::All => {
                let want = h == Ho::Any;
                for x in items {
                    if self.holds(f, x)? == want {
                        return Ok(Val::Bool(want));
                    }
                }
                Val::Bool(!want)
            }
            Ho::Count => {
                let mut n = 0;
                for x in items {
                    if self.holds(f, x)? {
                        n += 1;
                    }
                }
                Val::Int(n)
            }
            Ho::SortBy => {
                let mut keyed = Vec::new();
                for x in items {
                    keyed.push((self.apply(f, x.clone())?, x));
                }
                // Stable, as Vox's `sort_by` is.
                keyed.sort_by(|a, b| order(&a.0, &b.0));
                Val::List(keyed.into_iter().map(|(_, x)| x).collect())
            }
            Ho::GroupBy => {
                let mut groups: std::collections::BTreeMap<String, Val> = Default::default();
                for x in items {
                    let Val::Str(k) = self.apply(f, x.clone())? else {
                        panic!("generator bug: a group_by key that is not text");
                    };
                    match groups.entry(k).or_insert_with(|| Val::List(Vec::new())) {
                        Val::List(g) => g.push(x),
                        _ => unreachable!("groups are lists"),
                    }
                }
                Val::Map(groups)
            }
        })
    }

    fn checked(n: Option<i64>) -> Ev<Val> {
        match n {
            Some(n) if n.abs() < INT_BOUND => Ok(Val::Int(n)),
            Some(_) => Err(Stop::OutOfBounds("int bound")),
            None => Err(Stop::Overflow),
        }
    }

    fn float(x: f64) -> Ev<Val> {
        if x.is_finite() && x.abs() < 1e12 {
            Ok(Val::Float(x))
        } else {
            Err(Stop::OutOfBounds("float bound"))
        }
    }

    fn matching(&mut self, s: &Expr, arms: &[Arm]) -> Ev<Val> {
        let v = self.expr(s)?;
        for a in arms {
            let mark = self.env.len();
            let taken = self.pat(&a.pat, &v)
                && match &a.guard {
                    None => true,
                    Some(g) => match self.expr(g) {
                        Ok(Val::Bool(b)) => b,
                        Ok(other) => panic!("generator bug: guard of type {other:?}"),
                        Err(stop) => {
                            self.env.truncate(mark);
                            return Err(stop);
                        }
                    },
                };
            if taken {
                let r = match &a.body {
                    Body::Expr(e) => self.expr(e),
                    Body::Block(b) => self.block(b),
                };
                self.env.truncate(mark);
                return r;
            }
            self.env.truncate(mark);
        }
        panic!("generator bug: no arm matched {v:?}")
    }

    fn pat(&mut self, p: &Pat, v: &Val) -> bool {
        match (p, v) {
            (Pat::Wild, _) => true,
            (Pat::Bind(b), v) => {
                self.env.push((Rc::as_ptr(b), v.clone()));
                true
            }
            (Pat::Int(k), Val::Int(n)) => k == n,
            (Pat::Bool(k), Val::Bool(b)) => k == b,
            (Pat::Str(k), Val::Str(s)) => k == s,
            (Pat::None, Val::Opt(o)) => o.is_none(),
            (Pat::Some(i), Val::Opt(Some(x))) => self.pat(i, x),
            (Pat::Ok(i), Val::Res(Ok(x))) => self.pat(i, x),
            (Pat::Err(i), Val::Res(Err(s))) => self.pat(i, &Val::Str(s.clone())),
            (Pat::Variant(_, vi, ps), Val::Var(_, vj, fs)) => {
                vi == vj && ps.iter().zip(fs).all(|(p, f)| self.pat(p, f))
            }
            (Pat::Or(ps), v) => ps.iter().any(|p| self.pat(p, v)),
            (Pat::Record(_, subs, _), Val::Rec(_, fs)) => subs
                .iter()
                .all(|(fi, p)| fs.get(*fi).is_some_and(|f| self.pat(p, f))),
            _ => false,
        }
    }

    fn expr(&mut self, e: &Expr) -> Ev<Val> {
        self.tick()?;
        Ok(match e {
            Expr::Int(n) => Val::Int(*n),
            Expr::IntMin => Val::Int(i64::MIN),
            Expr::DecStr(t) => Val::dec_text(t),
            Expr::DecOf(x) => match self.expr(x)? {
                Val::Int(n) => Val::dec(i128::from(n), 0)?,
                v => panic!("generator bug: decimal of {v:?}"),
            },
            Expr::Float(x) => Val::Float(*x),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Var(b) => self.lookup(b).clone(),
            Expr::Field(base, _, fi) => match self.expr(base)? {
                Val::Rec(_, mut fs) => fs.swap_remove(*fi),
                v => panic!("generator bug: field of {v:?}"),
            },
            // Arguments are evaluated in the order they are written: by
            // name, that is the shuffled order (docs/language.md, "Statements").
            Expr::Call(fi, args, named) => {
                let mut vals: Vec<Option<Val>> = vec![None; args.len()];
                let written: Vec<usize> = match named {
                    Some(order) => order.clone(),
                    None => (0..args.len()).collect(),
                };
                for i in written {
                    vals[i] = Some(self.expr(&args[i])?);
                }
                let vals = vals
                    .into_iter()
                    .map(|v| {
                        v.expect("generator invariant: a named call names every parameter once")
                    })
                    .collect();
                self.call_inner(*fi, vals)?
            }
            // Offline every network call succeeds (the fixture provider runs
            // the body), so the outcome is `Ok`.
            Expr::Try(call) => Val::Res(Ok(Box::new(self.expr(call)?))),
            Expr::FStr(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        Ok(text) => out.push_str(text),
                        Err(e) => {
                            let v = self.expr(e)?;
                            out.push_str(&self.text(v));
                        }
                    }
                }
                Val::Str(out)
            }
            Expr::Const(i) => {
                // Computed as on its own (no locals); a `return` gives it.
                let saved = std::mem::take(&mut self.env);
                let r = self.expr(&self.m.consts[*i].value);
                self.env = saved;
                match r {
                    Err(Stop::Return(v)) => v,
                    r => r?,
                }
            }
            Expr::DaysBetween(a, b) => {
                let (a, b) = (self.day_number(a)?, self.day_number(b)?);
                Val::Int(b - a)
            }
            Expr::DatePart(k, d) => {
                let (y, m, dd) = civil(self.day_number(d)?);
                Val::Int([y, m, dd][usize::from(*k).min(2)])
            }
            Expr::DateCmp(op, a, b) => {
                let (a, b) = (self.day_number(a)?, self.day_number(b)?);
                Val::Bool(match op {
                    Op::Lt => a < b,
                    Op::Le => a <= b,
                    Op::Gt => a > b,
                    Op::Ge => a >= b,
                    Op::Is | Op::Eq => a == b,
                    _ => a != b,
                })
            }
            Expr::HigherOrder(h, xs, f) => {
                let Val::List(items) = self.expr(xs)? else {
                    panic!("generator bug: {h:?} of a non-list");
                };
                self.higher_order(*h, items, f)?
            }
            Expr::Builtin(b, args) => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.expr(a)?);
                }
                self.builtin(*b, vals)?
            }
            Expr::Range(a, b) => {
                let Val::Int(x) = self.expr(a)? else {
                    panic!("generator bug: range of a non-int");
                };
                let (lo, hi) = match b {
                    None => (0, x),
                    Some(b) => match self.expr(b)? {
                        Val::Int(y) => (x, y),
                        v => panic!("generator bug: range to {v:?}"),
                    },
                };
                if hi.saturating_sub(lo) > 64 {
                    return Err(Stop::OutOfBounds("range length"));
                }
                Val::List((lo..hi).map(Val::Int).collect())
            }
            Expr::Len(a) => match self.expr(a)? {
                Val::Str(s) => Val::Int(s.chars().count() as i64),
                Val::List(xs) => Val::Int(xs.len() as i64),
                Val::Map(m) => Val::Int(m.len() as i64),
                v => panic!("generator bug: len of {v:?}"),
            },
            Expr::ToStr(a) => {
                let v = self.expr(a)?;
                Val::Str(self.text(v))
            }
            Expr::ToInt(a) => match self.expr(a)? {
                Val::Int(n) => Val::Int(n),
                Val::Float(x) => Val::Int(x as i64),
                Val::Dec(m, s, _) => Self::checked(i64::try_from(m / 10i128.pow(s)).ok())?,
                Val::Bool(b) => Val::Int(i64::from(b)),
                v => panic!("generator bug: int of {v:?}"),
            },
            Expr::ToFloat(a) => match self.expr(a)? {
                Val::Int(n) => Self::float(n as f64)?,
                Val::Float(x) => Val::Float(x),
                Val::Dec(_, _, t) => Self::float(t.parse().expect("decimal text is a float"))?,
                v => panic!("generator bug: float of {v:?}"),
            },
            Expr::Neg(a) => match self.expr(a)? {
                Val::Int(n) => Self::checked(n.checked_neg())?,
                Val::Float(x) => Val::Float(-x),
                Val::Dec(m, s, _) => Val::dec(-m, s)?,
                v => panic!("generator bug: neg of {v:?}"),
            },
            Expr::Not(a) => Val::Bool(!self.truth(a)?),
            Expr::Bin(op, l, r) => self.binary(*op, l, r)?,
            Expr::If(c, t, e) => {
                if self.truth(c)? {
                    self.block(t)?
                } else {
                    self.block(e)?
                }
            }
            Expr::Match(s, arms) => self.matching(s, arms)?,
            Expr::List(xs) => {
                let mut out = Vec::new();
                for x in xs {
                    out.push(self.expr(x)?);
                }
                Val::List(out)
            }
            Expr::Map(es) => {
                // Keys and values in the order written; a later equal key wins.
                let mut m = std::collections::BTreeMap::new();
                for (k, v) in es {
                    let Val::Str(k) = self.expr(k)? else {
                        panic!("generator bug: a map key that is not a str");
                    };
                    let v = self.expr(v)?;
                    m.insert(k, v);
                }
                Val::Map(m)
            }
            Expr::Some(x) => Val::Opt(Some(Box::new(self.expr(x)?))),
            Expr::None => Val::Opt(None),
            Expr::Ok(x) => Val::Res(Ok(Box::new(self.expr(x)?))),
            Expr::Err(x) => match self.expr(x)? {
                Val::Str(s) => Val::Res(Err(s)),
                v => panic!("generator bug: Error of {v:?}"),
            },
            Expr::Record(t, fields) => {
                let TypeKind::Record(fs) = &self.m.types[*t].kind else {
                    panic!("generator bug: record literal of a sum type");
                };
                let mut vals = vec![Val::Unit; fs.len()];
                for (fi, v) in fields {
                    vals[*fi] = self.expr(v)?;
                }
                Val::Rec(*t, vals)
            }
            // Arguments are evaluated in the order written, as a call's are
            // (seed 1956 of the sweep: a `return` in the second of three
            // named arguments left before the third, written first in field
            // order, was evaluated).
            Expr::Variant(t, vi, vals, named) => {
                let mut out: Vec<Option<Val>> = vec![None; vals.len()];
                let written: Vec<usize> = match named {
                    Some(order) => order.clone(),
                    None => (0..vals.len()).collect(),
                };
                for i in written {
                    out[i] = Some(self.expr(&vals[i])?);
                }
                let out = out
                    .into_iter()
                    .map(|v| {
                        v.expect("generator invariant: a named constructor names every field once")
                    })
                    .collect();
                Val::Var(*t, *vi, out)
            }
            Expr::Paren(x) => self.expr(x)?,
        })
    }

    /// A value inside another value, as Vox source writes it
    /// (docs/language.md, "Printing"): text quoted and escaped, `Decimal`s
    /// and numbers plainly, `[a, b]`, `Some(x)`/`None`, `Ok(x)`/`Error("e")`,
    /// records as `Name { field: value, … }`, cases as `Case(value, …)` or
    /// `Case`.
    pub fn show(&self, v: &Val) -> String {
        let all = |vals: &[Val]| vals.iter().map(|v| self.show(v)).collect::<Vec<_>>();
        match v {
            Val::Int(n) => n.to_string(),
            Val::Float(x) => x.to_string(),
            Val::Dec(_, _, t) => t.clone(),
            Val::Bool(b) => b.to_string(),
            Val::Str(s) => quoted(s),
            Val::Unit => "()".into(),
            Val::List(xs) => format!("[{}]", all(xs).join(", ")),
            // A map as its literal, keys in order (docs/language.md, "Maps").
            Val::Map(m) if m.is_empty() => "[:]".into(),
            Val::Map(m) => format!(
                "[{}]",
                m.iter()
                    .map(|(k, v)| format!("{}: {}", quoted(k), self.show(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Val::Opt(None) => "None".into(),
            Val::Opt(Some(x)) => format!("Some({})", self.show(x)),
            Val::Res(Ok(x)) => format!("Ok({})", self.show(x)),
            Val::Res(Err(e)) => format!("Error({})", quoted(e)),
            Val::Rec(t, vals) => match &self.m.types[*t].kind {
                TypeKind::Record(fs) => {
                    let name = &self.m.types[*t].name;
                    if fs.is_empty() {
                        return format!("{name} {{}}");
                    }
                    let parts: Vec<String> = fs
                        .iter()
                        .zip(all(vals))
                        .map(|(f, v)| format!("{}: {v}", f.name))
                        .collect();
                    format!("{name} {{ {} }}", parts.join(", "))
                }
                TypeKind::Sum(_) => panic!("generator bug: record value of a sum type"),
            },
            Val::Var(t, vi, vals) => match &self.m.types[*t].kind {
                TypeKind::Sum(vs) if vals.is_empty() => vs[*vi].name.clone(),
                TypeKind::Sum(vs) => format!("{}({})", vs[*vi].name, all(vals).join(", ")),
                TypeKind::Record(_) => panic!("generator bug: variant value of a record"),
            },
        }
    }

    fn binary(&mut self, op: Op, l: &Expr, r: &Expr) -> Ev<Val> {
        match op {
            Op::And => {
                return Ok(Val::Bool(self.truth(l)? && self.truth(r)?));
            }
            Op::Or => {
                return Ok(Val::Bool(self.truth(l)? || self.truth(r)?));
            }
            _ => {}
        }
        let a = self.expr(l)?;
        let b = self.expr(r)?;
        if let (Val::Dec(x, sx, _), Val::Dec(y, sy, _)) = (&a, &b) {
            // Decimals compare by value; arithmetic is exact.
            let (x, y, s) = align(*x, *sx, *y, *sy)?;
            return Ok(match op {
                Op::Eq | Op::Is => Val::Bool(x == y),
                Op::Ne | Op::Isnt => Val::Bool(x != y),
                Op::Lt => Val::Bool(x < y),
                Op::Le => Val::Bool(x <= y),
                Op::Gt => Val::Bool(x > y),
                Op::Ge => Val::Bool(x >= y),
                Op::Add => Val::dec(x + y, s)?,
                Op::Sub => Val::dec(x - y, s)?,
                Op::Mul => {
                    let (Val::Dec(x, sx, _), Val::Dec(y, sy, _)) = (&a, &b) else {
                        unreachable!()
                    };
                    let m = x.checked_mul(*y).ok_or(Stop::OutOfBounds("decimal size"))?;
                    Val::dec(m, sx + sy)?
                }
                _ => panic!("generator bug: decimal {}", op.sym()),
            });
        }
        Ok(match (op, a, b) {
            (Op::Eq | Op::Is, a, b) => Val::Bool(a == b),
            (Op::Ne | Op::Isnt, a, b) => Val::Bool(a != b),
            (Op::Add, Val::Int(x), Val::Int(y)) => Self::checked(x.checked_add(y))?,
            (Op::Sub, Val::Int(x), Val::Int(y)) => Self::checked(x.checked_sub(y))?,
            (Op::Mul, Val::Int(x), Val::Int(y)) => Self::checked(x.checked_mul(y))?,
            (Op::Div, Val::Int(x), Val::Int(y)) => Self::checked(x.checked_div(y))?,
            (Op::Rem, Val::Int(x), Val::Int(y)) => Self::checked(x.checked_rem(y))?,
            (Op::Add, Val::Float(x), Val::Float(y)) => Self::float(x + y)?,
            (Op::Sub, Val::Float(x), Val::Float(y)) => Self::float(x - y)?,
            (Op::Mul, Val::Float(x), Val::Float(y)) => Self::float(x * y)?,
            (Op::Div, Val::Float(x), Val::Float(y)) => Self::float(x / y)?,
            (Op::Rem, Val::Float(x), Val::Float(y)) => Self::float(x % y)?,
            (Op::Add, Val::Str(x), Val::Str(y)) => {
                if x.len() + y.len() > 10_000 {
                    return Err(Stop::OutOfBounds("string size"));
                }
                Val::Str(x + &y)
            }
            (Op::Add, Val::List(mut x), Val::List(y)) => {
                if x.len() + y.len() > 1_000 {
                    return Err(Stop::OutOfBounds("list size"));
                }
                x.extend(y);
                Val::List(x)
            }
            (Op::Lt, Val::Int(x), Val::Int(y)) => Val::Bool(x < y),
            (Op::Le, Val::Int(x), Val::Int(y)) => Val::Bool(x <= y),
            (Op::Gt, Val::Int(x), Val::Int(y)) => Val::Bool(x > y),
            (Op::Ge, Val::Int(x), Val::Int(y)) => Val::Bool(x >= y),
            (Op::Lt, Val::Float(x), Val::Float(y)) => Val::Bool(x < y),
            (Op::Le, Val::Float(x), Val::Float(y)) => Val::Bool(x <= y),
            (Op::Gt, Val::Float(x), Val::Float(y)) => Val::Bool(x > y),
            (Op::Ge, Val::Float(x), Val::Float(y)) => Val::Bool(x >= y),
            (op, a, b) => panic!("generator bug: {a:?} {} {b:?}", op.sym()),
        })
    }
}

/// A `str` inside a value: a Vox string literal (`"`, `\\`, newline, tab,
/// carriage return and NUL escaped, other control characters as `\u{…}`).
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `div(a, b, places, mode)` and `round(d, places, mode)` (docs/language.md,
/// "Decimal"), computed from the floor of the exact quotient (the runtime
/// rounds from the truncated one).
fn decimal_rounding(b: Bi, vals: Vec<Val>) -> Ev<Val> {
    let mut it = vals.into_iter();
    let Some(Val::Dec(am, asc, _)) = it.next() else {
        panic!("generator bug: {} of a non-decimal", b.name());
    };
    let (num, den) = if b == Bi::DivDec {
        let Some(Val::Dec(bm, bsc, _)) = it.next() else {
            panic!("generator bug: div by a non-decimal");
        };
        if bm == 0 {
            return Err(Stop::Overflow);
        }
        (am, Some((bm, bsc)))
    } else {
        (am, None)
    };
    let Some(Val::Int(places)) = it.next() else {
        panic!("generator bug: {} without places", b.name());
    };
    let mode = match it.next() {
        Some(Val::Str(m)) => m,
        _ => "half_up".to_owned(),
    };
    let places = places as u32;
    let big = || Stop::OutOfBounds("decimal size");
    // The exact value times 10^places is n / d.
    let (n, d) = match den {
        Some((bm, bsc)) => (
            10i128
                .checked_pow(bsc + places)
                .and_then(|k| num.checked_mul(k))
                .ok_or_else(big)?,
            10i128
                .checked_pow(asc)
                .and_then(|k| bm.checked_mul(k))
                .ok_or_else(big)?,
        ),
        None if places >= asc => (
            10i128
                .checked_pow(places - asc)
                .and_then(|k| num.checked_mul(k))
                .ok_or_else(big)?,
            1,
        ),
        None => (num, 10i128.checked_pow(asc - places).ok_or_else(big)?),
    };
    let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
    let (floor, r) = (n.div_euclid(d), n.rem_euclid(d));
    let m = if r == 0 {
        floor
    } else {
        let ceil = floor + 1;
        let half = (2 * r).cmp(&d);
        let positive = n > 0;
        match (mode.as_str(), half) {
            ("floor", _) => floor,
            ("ceiling", _) => ceil,
            ("down", _) => {
                if positive {
                    floor
                } else {
                    ceil
                }
            }
            ("up", _) => {
                if positive {
                    ceil
                } else {
                    floor
                }
            }
            (_, std::cmp::Ordering::Less) => floor,
            (_, std::cmp::Ordering::Greater) => ceil,
            ("half_even", _) => {
                if floor % 2 == 0 {
                    floor
                } else {
                    ceil
                }
            }
            _ => {
                if positive {
                    ceil
                } else {
                    floor
                }
            }
        }
    };
    Val::dec(m, places)
}

fn leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days of the years before `y` and the months before `m` of year `y`.
fn days_before(y: i64, m: i64) -> i64 {
    let p = y - 1;
    let mut days = 365 * p + p / 4 - p / 100 + p / 400;
    for month in 1..m {
        days += match month {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
    }
    days
}

/// The (year, month, day) of day count `z` (day 1 is 0001-01-01).
fn civil(z: i64) -> (i64, i64, i64) {
    // The year: the last whose first day is not after `z`.
    let mut y = (z * 400 / 146_097).max(1);
    while days_before(y + 1, 1) < z {
        y += 1;
    }
    while y > 1 && days_before(y, 1) >= z {
        y -= 1;
    }
    let mut m = 12;
    while m > 1 && days_before(y, m) >= z {
        m -= 1;
    }
    (y, m, z - days_before(y, m))
}

/// `parse_int` / `parse_float` as docs/language.md ("Reading numbers from
/// text") states them: ASCII spaces around, an optional sign, then digits
/// (an `int` in range), or digits with an optional `.` and fraction (at
/// least one digit) and an optional exponent, finite.
fn parse_number(b: Bi, s: &str) -> Option<Val> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
    if b == Bi::ParseInt {
        if !digits(unsigned) {
            return None;
        }
        let negative = t.starts_with('-');
        // Accumulated with the sign, so i64::MIN fits and one past MAX does not.
        let mut n: i64 = 0;
        for c in unsigned.bytes() {
            let d = i64::from(c - b'0');
            n = n.checked_mul(10)?;
            n = if negative {
                n.checked_sub(d)?
            } else {
                n.checked_add(d)?
            };
        }
        return Some(Val::Int(n));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !all(int) || !all(frac) {
        return None;
    }
    if let Some(e) = exponent {
        if !digits(e.strip_prefix(['+', '-']).unwrap_or(e)) {
            return None;
        }
    }
    let x: f64 = t.parse().ok()?;
    x.is_finite().then_some(Val::Float(x))
}
