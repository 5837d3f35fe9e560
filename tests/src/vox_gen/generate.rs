//! Generation: choosing a well-typed module from a seed.

use super::*;

/// The rounding modes of `div` and `round` (docs/language.md, "Decimal").
const ROUNDING_MODES: [&str; 6] = ["half_up", "half_even", "down", "up", "floor", "ceiling"];

const PLAIN_VALUES: &[&str] = &[
    "a", "b", "n", "x", "y", "acc", "total", "item", "value", "tally", "data", "key", "node",
    "next", "inner", "label", "left", "right", "head", "rest", "score", "flag", "text", "kind",
];

const TRICKY_VALUES: &[&str] = &[
    // Rust keywords (strict, reserved, weak) that are not Vox keywords.
    "as",
    "const",
    "crate",
    "enum",
    "extern",
    "impl",
    "loop",
    "mod",
    "move",
    "ref",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "unsafe",
    "use",
    "where",
    "async",
    "await",
    "dyn",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "gen",
    "union",
    "macro_rules",
    "raw",
    "safe", // their escaped forms
    "self_",
    "super_",
    "crate_",
    "type_",
    "move_", // prelude and std
    "drop",
    "vec",
    "format",
    "println",
    "panic",
    "unreachable",
    "matches",
    "std",
    "core",
    "alloc",
    "main",
    "i64",
    "f64",
    "str_",
    "u8", // serde internals
    "__serializer",
    "__deserializer",
    "__field0",
    "__field1",
    "__value",
    "__map",
    "__key",
    "__ignore",
    "__seq",
    "__content",
    "__tag", // emitter helpers
    "vox_runtime",
    "serde",
    "vox_printed",
    "vox_tests",
    "vox_main",
    "result",
    "err",
    "e",
];

const PLAIN_TYPES: &[&str] = &[
    "Point", "Shape", "Node", "Tree", "Item", "Pair", "Wrap", "Leaf", "Branch", "Circle", "Square",
    "Empty", "Full", "Cons", "Nil", "Red", "Green", "Blue", "Link", "Entry", "Tag", "Alpha",
    "Beta", "Gamma", "Delta",
];

const TRICKY_TYPES: &[&str] = &[
    "Self",
    "Self_",
    "Vec",
    "String",
    "Box",
    "Default",
    "Clone",
    "Debug",
    "Serialize",
    "Deserialize",
    "PartialEq",
    "Sized",
    "Send",
    "Sync",
    "Copy",
    "Iterator",
    "From",
    "Into",
    "Fn",
    "Drop",
    "ToString",
    "Serializer",
    "Deserializer",
    "Formatter",
    "Value",
    "Visitor",
    "Field",
    "Kind",
    "Args",
    "AiFunction",
    "OutputSchema",
];

const NON_CAMEL_TYPES: &[&str] = &["VOX_SCHEMA_X", "Vox_tests", "Point_b", "Red_", "TYPE_a"];

/// Map keys: few, so lookups, replacements and removals hit; ordered
/// unlike their insertion (code points: `"B" < "a" < "é"`); `"k"` is the
/// key of the typed leaf `["k": v]`.
const MAP_KEYS: [&str; 7] = ["a", "B", "", "é", "a b", "\"q\"", "k"];

const STRINGS: &[&str] = &[
    "",
    "a",
    "hello",
    "Vox",
    "quote \" q",
    "back\\slash",
    "brace {} {0}",
    "new\nline",
    "tab\t",
    "cr\r nul\0",
    "é✓",
    "\u{1F600}",
    "self",
    "r#type",
];

const FLOATS: &[f64] = &[0.0, 0.5, 1.0, 1.25, 2.0, 3.75, 10.5, 100.0, 0.1];

const DECIMALS: &[&str] = &[
    "0", "1", "12.50", "-3", "0.001", "2.25", "1.0", "100", "-0.5", "0.10",
];

// ---- generation -----------------------------------------------------------

struct Gen {
    rng: Rng,
    f: Features,
    types: Vec<TypeDef>,
    consts: Vec<Const>,
    fns: Vec<Func>,
    /// Names used module-wide for types and variants.
    type_names: Vec<String>,
    /// Visible bindings, innermost last.
    scope: Vec<B>,
    /// The function being generated: its index, and whether it may call net functions.
    cur_net: bool,
    cur_ret: Option<Ty>,
    counter: usize,
    /// Loops around the statement being generated (for `break`/`continue`).
    loops: usize,
    /// Inside a lambda: where its scope starts (what is below is captured,
    /// and cannot be assigned).
    lambda_mark: usize,
}

/// Generates the module for `seed`.
pub fn generate(seed: u64, features: &Features) -> Module {
    let mut g = Gen {
        rng: Rng::new(seed),
        f: features.clone(),
        types: Vec::new(),
        consts: Vec::new(),
        fns: Vec::new(),
        type_names: Vec::new(),
        scope: Vec::new(),
        cur_net: false,
        cur_ret: None,
        counter: 0,
        loops: 0,
        lambda_mark: 0,
    };
    g.gen_types();
    g.gen_consts();
    g.gen_fns();
    g.gen_tests();
    Module {
        seed,
        multiline: g.f.multiline,
        types: g.types,
        consts: g.consts,
        fns: g.fns,
        hidden: Vec::new(),
    }
}

impl Gen {
    fn fresh_type_name(&mut self) -> String {
        for _ in 0..50 {
            let name = if self.f.non_camel_names && self.rng.chance(4) {
                self.rng.pick(NON_CAMEL_TYPES).to_string()
            } else if self.f.tricky_names && self.rng.chance(35) {
                self.rng.pick(TRICKY_TYPES).to_string()
            } else {
                self.rng.pick(PLAIN_TYPES).to_string()
            };
            if !self.type_names.contains(&name) {
                self.type_names.push(name.clone());
                return name;
            }
        }
        self.counter += 1;
        let name = format!("T{}", self.counter);
        self.type_names.push(name.clone());
        name
    }

    fn value_name(&mut self) -> String {
        if self.f.tricky_names && self.rng.chance(40) {
            self.rng.pick(TRICKY_VALUES).to_string()
        } else {
            self.rng.pick(PLAIN_VALUES).to_string()
        }
    }

    /// Names distinct among `taken`.
    fn distinct_names(&mut self, n: usize, taken: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        while out.len() < n {
            let mut name = self.value_name();
            if out.contains(&name) || taken.contains(&name) {
                self.counter += 1;
                name = format!(
                    "{}{}",
                    PLAIN_VALUES[self.counter % PLAIN_VALUES.len()],
                    self.counter
                );
            }
            out.push(name);
        }
        out
    }

    fn fn_names(&self) -> Vec<String> {
        self.fns.iter().map(|f| f.name.clone()).collect()
    }

    /// A local name that no visible binding has (for generated helpers whose
    /// bodies refer to outer bindings by construction).
    fn fresh_local(&mut self) -> String {
        for _ in 0..20 {
            let n = self.local_name();
            if !self.scope.iter().any(|b| b.name == n) {
                return n;
            }
        }
        self.counter += 1;
        format!("v{}", self.counter)
    }

    /// A local name: may shadow a function only when that is enabled.
    fn local_name(&mut self) -> String {
        let fns = self.fn_names();
        for _ in 0..20 {
            let n = self.value_name();
            if n == "main" || (!self.f.local_shadows_fn && fns.contains(&n)) {
                continue;
            }
            return n;
        }
        self.counter += 1;
        format!("v{}", self.counter)
    }

    // ---- types ----

    fn base_ty(&mut self, depth: usize) -> Ty {
        let n = self.types.len();
        let k = self.rng.below(if depth == 0 { 5 } else { 8 });
        match k {
            0 => Ty::Int,
            1 if self.f.decimal && self.rng.chance(35) => Ty::Dec,
            1 => Ty::Float,
            2 => Ty::Bool,
            3 => Ty::Str,
            4 if n > 0 => Ty::Named(self.rng.below(n)),
            4 => Ty::Int,
            5 if self.f.maps && self.rng.chance(30) => Ty::Map(Box::new(self.base_ty(depth - 1))),
            5 => Ty::List(Box::new(self.base_ty(depth - 1))),
            6 => Ty::Opt(Box::new(self.base_ty(depth - 1))),
            _ => Ty::Res(Box::new(self.base_ty(depth - 1))),
        }
    }

    fn self_ref(&mut self, me: usize) -> Ty {
        let me = Box::new(Ty::Named(me));
        let deep = self.f.deep_recursion;
        match self.rng.below(if deep { 6 } else { 4 }) {
            0 => Ty::Opt(me),
            1 => Ty::List(me),
            2 => Ty::List(Box::new(Ty::Opt(me))),
            3 => Ty::Opt(Box::new(Ty::List(me))),
            4 => Ty::Opt(Box::new(Ty::Opt(me))),
            _ => Ty::Opt(Box::new(Ty::Res(me))),
        }
    }

    fn gen_fields(&mut self, me: usize, recursive: bool, variant: bool) -> Vec<Field> {
        // Records may be empty (`type E {}`); variants without fields have none.
        let n = if !variant && !recursive && self.rng.chance(8) {
            0
        } else {
            1 + self.rng.below(3)
        };
        // A variant's fields sit beside serde's `kind` tag (vox/name/duplicate-field).
        let taken = if variant {
            vec!["kind".to_string()]
        } else {
            Vec::new()
        };
        let names = self.distinct_names(n + usize::from(recursive), &taken);
        let mut fields: Vec<Field> = names
            .iter()
            .take(n)
            .map(|name| Field {
                name: name.clone(),
                ty: Ty::Int,
            })
            .collect();
        for f in &mut fields {
            f.ty = self.base_ty(1);
        }
        if recursive {
            let ty = self.self_ref(me);
            let at = self.rng.below(fields.len() + 1);
            fields.insert(
                at,
                Field {
                    name: names[n].clone(),
                    ty,
                },
            );
        }
        fields
    }

    fn gen_types(&mut self) {
        let count = 2 + self.rng.below(4);
        // Types on a cycle through a later type: values stop at None/[] there.
        let mut cyclic: Vec<usize> = Vec::new();
        for i in 0..count {
            let name = self.fresh_type_name();
            let recursive = self.rng.chance(45);
            // Placeholder so that fields may refer to earlier types only.
            let kind = if self.rng.chance(50) {
                TypeKind::Record(self.gen_fields(i, recursive, false))
            } else {
                let nv = 1 + self.rng.below(3);
                let rec_at = self.rng.below(nv);
                let mut vs = Vec::new();
                for v in 0..nv {
                    let vname = self.fresh_type_name();
                    let fields = if v == rec_at && recursive {
                        self.gen_fields(i, true, true)
                    } else if self.rng.chance(40) {
                        Vec::new()
                    } else {
                        self.gen_fields(i, false, true)
                    };
                    vs.push(Variant {
                        name: vname,
                        fields,
                    });
                }
                TypeKind::Sum(vs)
            };
            let mut kind = kind;
            if i + 1 < count && self.rng.chance(25) {
                // Mutual recursion: a field of a later type, through a wrapper.
                let j = i + 1 + self.rng.below(count - i - 1);
                let ty = self.self_ref(j);
                let fields = match &mut kind {
                    TypeKind::Record(fs) => fs,
                    TypeKind::Sum(vs) => {
                        let at = self.rng.below(vs.len());
                        &mut vs[at].fields
                    }
                };
                let mut taken: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
                taken.push("kind".into());
                let name = self.distinct_names(1, &taken).remove(0);
                fields.push(Field { name, ty });
                cyclic.push(i);
                cyclic.push(j);
            }
            self.types.push(TypeDef {
                name,
                kind,
                recursive: recursive || cyclic.contains(&i),
            });
        }
    }

    fn record_fields(&self, t: usize) -> Option<&Vec<Field>> {
        match &self.types[t].kind {
            TypeKind::Record(fs) => Some(fs),
            TypeKind::Sum(_) => None,
        }
    }

    // ---- scope ----

    /// Before a `let` of `name` shadows a mutable variable whose last store
    /// nothing read yet, reads (prints) it: once shadowed, the name means
    /// the new binding, so the store would stay dead (and the end-of-block
    /// flush would print the new one under the old one's value).
    fn read_before_shadowing(&mut self, name: &str, out: &mut Vec<Stmt>) {
        if let Some(old) = self
            .visible()
            .into_iter()
            .find(|b| b.name == name && b.mutable && b.unread.get())
        {
            let v = self.use_var(&old);
            out.push(Stmt::Print(v));
        }
    }

    fn bind(&mut self, name: String, ty: Ty, mutable: bool) -> B {
        let b = Rc::new(Binding {
            name,
            ty,
            mutable,
            used: Cell::new(false),
            unread: Cell::new(false),
        });
        self.scope.push(b.clone());
        b
    }

    /// Visible bindings (the innermost of each name).
    fn visible(&self) -> Vec<B> {
        let mut out: Vec<B> = Vec::new();
        for b in self.scope.iter().rev() {
            if !out.iter().any(|o| o.name == b.name) {
                out.push(b.clone());
            }
        }
        out
    }

    /// Functions callable here returning `ty` (none shadowed by a local).
    fn callable(&self, ty: Option<&Ty>) -> Vec<usize> {
        let vis = self.visible();
        (0..self.fns.len())
            .filter(|&i| {
                let f = &self.fns[i];
                f.kind != FnKind::Test
                    && f.kind != FnKind::Main
                    && f.ret.as_ref() == ty
                    && (self.cur_net || !f.net())
                    && (self.f.local_shadows_fn || !vis.iter().any(|b| b.name == f.name))
            })
            .collect()
    }

    fn use_var(&self, b: &B) -> Expr {
        b.used.set(true);
        b.unread.set(false);
        Expr::Var(b.clone())
    }

    // ---- expressions ----

    /// A date: a literal, or days added to one (a small `int` expression).
    fn date_expr(&mut self, depth: usize) -> DateE {
        const DATES: &[&str] = &[
            "2026-12-31",
            "2024-02-29",
            "2000-03-01",
            "1999-12-31",
            "2100-02-28",
            "0001-01-01",
            "9999-12-31",
            "2026-01-09",
        ];
        let lit = DateE::Lit(self.rng.pick(DATES).to_string());
        if depth == 0 || self.rng.chance(50) {
            return lit;
        }
        let n = self.expr(&Ty::Int, depth - 1);
        DateE::Add(Box::new(lit), Box::new(n))
    }

    /// Module constants of base types, computed from literals, builtins and
    /// lambdas (no function exists yet to call); a block in one may
    /// `return` its value.
    fn gen_consts(&mut self) {
        if !self.f.constants {
            return;
        }
        for i in 0..self.rng.below(4) {
            let ty = self.base_ty(1);
            self.scope.clear();
            self.cur_net = false;
            self.cur_ret = Some(ty.clone());
            let value = self.expr(&ty, 2);
            let word = self.rng.pick(PLAIN_VALUES).to_uppercase();
            let name = format!("K{i}_{word}");
            let annotated = self.rng.chance(30) || !self_typed(&value);
            self.consts.push(Const {
                name,
                ty,
                value,
                annotated,
            });
        }
        self.cur_ret = None;
        self.scope.clear();
    }

    /// A call of `map`, `filter`, … giving `ty`, when one does.
    fn ho_expr(&mut self, ty: &Ty, depth: usize) -> Option<Expr> {
        let list = |t: &Ty| Ty::List(Box::new(t.clone()));
        let mut elems = vec![Ty::Int, Ty::Str, Ty::Bool, Ty::Float];
        if self.f.decimal {
            elems.push(Ty::Dec);
        }
        if !self.types.is_empty() && self.rng.chance(40) {
            elems.push(Ty::Named(self.rng.below(self.types.len())));
        }
        let any_elem = |g: &mut Self| g.rng.pick(&elems).clone();
        let (h, elem, ret) = match ty {
            Ty::List(u) => match self.rng.below(3) {
                0 => (Ho::Filter, (**u).clone(), Ty::Bool),
                1 => {
                    let mut keys = vec![Ty::Int, Ty::Str, Ty::Bool, Ty::Float];
                    if self.f.decimal {
                        keys.push(Ty::Dec);
                    }
                    let k = self.rng.pick(&keys).clone();
                    (Ho::SortBy, (**u).clone(), k)
                }
                _ => (Ho::Map, any_elem(self), (**u).clone()),
            },
            Ty::Opt(t) => (Ho::Find, (**t).clone(), Ty::Bool),
            Ty::Bool => (
                *self.rng.pick(&[Ho::Any, Ho::All]),
                any_elem(self),
                Ty::Bool,
            ),
            Ty::Int => (Ho::Count, any_elem(self), Ty::Bool),
            Ty::Map(inner) => match &**inner {
                Ty::List(t) => (Ho::GroupBy, (**t).clone(), Ty::Str),
                _ => return None,
            },
            _ => return None,
        };
        let xs = self.typed_expr(&list(&elem), depth);
        let f = self.fn_arg(&elem, &ret, h == Ho::Map, depth);
        Some(Expr::HigherOrder(h, Box::new(xs), Box::new(f)))
    }

    /// The function argument: a plain function of `elem` giving `ret`, or
    /// a lambda (its body generated as in a function of its own: no
    /// network, no loops around it, `return` giving its value).
    /// `typed_body`: the lambda's value must have a type of its own (it is
    /// `map`'s element type).
    fn fn_arg(&mut self, elem: &Ty, ret: &Ty, typed_body: bool, depth: usize) -> FnArg {
        let vis = self.visible();
        let named: Vec<usize> = (0..self.fns.len())
            .filter(|&i| {
                let f = &self.fns[i];
                f.kind == FnKind::Plain
                    && f.ret.as_ref() == Some(ret)
                    && f.params.len() == 1
                    && f.params[0].ty == *elem
                    && !vis.iter().any(|b| b.name == f.name)
            })
            .collect();
        if !named.is_empty() && self.rng.chance(25) {
            return FnArg::Named(*self.rng.pick(&named));
        }
        let loops = std::mem::take(&mut self.loops);
        let net = std::mem::replace(&mut self.cur_net, false);
        let cur_ret = self.cur_ret.replace(ret.clone());
        let mark = self.scope.len();
        let lambda_mark = std::mem::replace(&mut self.lambda_mark, mark);
        let name = self.local_name();
        let param = self.bind(name, elem.clone(), false);
        // `map`'s result type is its lambda's: that value must have a type
        // of its own (seed 1275: `len(map([0.5], fn(_inner) => None))`).
        let snapshot = self.snapshot();
        let body = if self.rng.chance(30) {
            Body::Block(self.value_block(ret, depth))
        } else {
            Body::Expr(self.expr(ret, depth))
        };
        let untyped = match &body {
            Body::Expr(e) => !self_typed(e),
            Body::Block(b) => !b.tail.as_ref().is_some_and(self_typed),
        };
        let body = if typed_body && untyped {
            self.restore(&snapshot);
            Body::Expr(self.typed_leaf(ret))
        } else {
            body
        };
        self.scope.truncate(mark);
        self.lambda_mark = lambda_mark;
        self.cur_ret = cur_ret;
        self.cur_net = net;
        self.loops = loops;
        FnArg::Lambda {
            param,
            annotated: self.rng.chance(25),
            body,
        }
    }

    /// `parse_int(s)` (`inner` an `int`) or `parse_float(s)`: of a text a
    /// number is read from (numbers, signs, spaces, and what the docs say
    /// is not one: `1_000`, `0x10`, `1e999`), or of any `str` expression.
    fn parse_expr(&mut self, inner: &Ty, depth: usize) -> Expr {
        const TEXTS: &[&str] = &[
            "42",
            " -7 ",
            "+3",
            "1_000",
            "12.5",
            "",
            "9223372036854775807",
            "9223372036854775808",
            "abc",
            "0x10",
            "-0",
            "2.",
            ".5",
            "1e3",
            "1e999",
            "\t8\n",
            "--1",
            "inf",
            "1.5e-2",
        ];
        let b = if *inner == Ty::Int {
            Bi::ParseInt
        } else {
            Bi::ParseFloat
        };
        let arg = if self.rng.chance(70) {
            Expr::Str(self.rng.pick(TEXTS).to_string())
        } else {
            self.expr(&Ty::Str, depth)
        };
        Expr::Builtin(b, vec![arg])
    }

    /// A list or text builtin call of type `ty`, when one gives that type.
    fn builtin_expr(&mut self, ty: &Ty, depth: usize) -> Option<Expr> {
        if self.f.lambdas && self.rng.chance(30) {
            if let Some(e) = self.ho_expr(ty, depth) {
                return Some(e);
            }
        }
        let ordered = |t: &Ty| matches!(t, Ty::Int | Ty::Str | Ty::Float | Ty::Bool | Ty::Dec);
        let list = |t: &Ty| Ty::List(Box::new(t.clone()));
        let (b, args) = match ty {
            Ty::Int if self.rng.chance(50) => {
                (Bi::Sum, vec![self.typed_expr(&list(&Ty::Int), depth)])
            }
            Ty::Dec if self.rng.chance(50) => {
                (Bi::SumDec, vec![self.typed_expr(&list(&Ty::Dec), depth)])
            }
            Ty::Dec if self.rng.chance(50) => {
                // `div` or `round`, with a mode or without (half_up).
                let b = *self.rng.pick(&[Bi::DivDec, Bi::RoundDec]);
                let mut args = vec![self.expr(&Ty::Dec, depth)];
                if b == Bi::DivDec {
                    args.push(self.expr(&Ty::Dec, depth));
                }
                args.push(Expr::Int(self.rng.below(4) as i64));
                if self.rng.chance(60) {
                    let mode = *self.rng.pick(&ROUNDING_MODES);
                    args.push(Expr::Str(mode.to_owned()));
                }
                (b, args)
            }
            Ty::Float if self.rng.chance(50) => (
                Bi::SumFloat,
                vec![self.typed_expr(&list(&Ty::Float), depth)],
            ),
            Ty::Bool => {
                let k = self.rng.below(3);
                if k == 0 {
                    let mut ets = vec![Ty::Int, Ty::Str, Ty::Bool];
                    if self.f.decimal {
                        ets.push(Ty::Dec);
                    }
                    let et = self.rng.pick(&ets).clone();
                    (
                        Bi::Contains,
                        vec![self.typed_expr(&list(&et), depth), self.expr(&et, depth)],
                    )
                } else {
                    let b = *self.rng.pick(&[Bi::Contains, Bi::StartsWith, Bi::EndsWith]);
                    (
                        b,
                        vec![self.expr(&Ty::Str, depth), self.expr(&Ty::Str, depth)],
                    )
                }
            }
            Ty::Res(inner) if self.cur_net => {
                let nets: Vec<usize> = self
                    .callable(Some(inner))
                    .into_iter()
                    .filter(|&i| self.fns[i].net())
                    .collect();
                if nets.is_empty() {
                    return None;
                }
                let fi = *self.rng.pick(&nets);
                return Some(Expr::Try(Box::new(self.call(fi, depth))));
            }
            Ty::Str if self.rng.chance(30) => {
                let mut parts = Vec::new();
                for _ in 0..1 + self.rng.below(3) {
                    if self.rng.chance(50) {
                        parts.push(Ok(self.rng.pick(STRINGS).to_string()));
                    }
                    let mut tys = vec![Ty::Int, Ty::Str, Ty::Bool, Ty::Float];
                    if self.f.decimal {
                        tys.push(Ty::Dec);
                    }
                    let t = self.rng.pick(&tys).clone();
                    parts.push(Err(self.expr(&t, 0)));
                }
                return Some(Expr::FStr(parts));
            }
            Ty::Str => match self.rng.below(3) {
                0 => (
                    Bi::Join,
                    vec![
                        self.typed_expr(&list(&Ty::Str), depth),
                        self.expr(&Ty::Str, depth),
                    ],
                ),
                1 => {
                    let mut ts = vec![Ty::Int, Ty::Float];
                    if self.f.decimal {
                        ts.push(Ty::Dec);
                    }
                    let t = self.rng.pick(&ts).clone();
                    let x = self.expr(&t, depth);
                    (Bi::Fixed, vec![x, Expr::Int(self.rng.below(4) as i64)])
                }
                _ => {
                    let b = *self.rng.pick(&[Bi::Trim, Bi::Lower, Bi::Upper]);
                    (b, vec![self.expr(&Ty::Str, depth)])
                }
            },
            Ty::List(et) if **et == Ty::Str && self.rng.chance(30) => (
                Bi::Split,
                vec![self.expr(&Ty::Str, depth), self.expr(&Ty::Str, depth)],
            ),
            Ty::List(et) if ordered(et) && self.rng.chance(50) => {
                (Bi::Sort, vec![self.typed_expr(ty, depth)])
            }
            Ty::List(_) => (Bi::Reverse, vec![self.typed_expr(ty, depth)]),
            Ty::Opt(et) if matches!(**et, Ty::Int | Ty::Float) && self.rng.chance(40) => {
                return Some(self.parse_expr(et, depth));
            }
            Ty::Opt(et) if ordered(et) => {
                let b = *self
                    .rng
                    .pick(&[Bi::First, Bi::Last, Bi::Get, Bi::Min, Bi::Max]);
                let xs = self.typed_expr(&list(et), depth);
                if b == Bi::Get {
                    (b, vec![xs, self.expr(&Ty::Int, depth)])
                } else {
                    (b, vec![xs])
                }
            }
            Ty::Opt(et) => {
                let b = *self.rng.pick(&[Bi::First, Bi::Last]);
                (b, vec![self.typed_expr(&list(et), depth)])
            }
            _ => return None,
        };
        Some(Expr::Builtin(b, args))
    }

    /// A map key: mostly a literal from a small set (so lookups hit), or
    /// any `str` expression.
    fn map_key(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(60) {
            Expr::Str(self.rng.pick(&MAP_KEYS).to_string())
        } else {
            self.expr(&Ty::Str, depth)
        }
    }

    /// A map builtin that gives a `ty` (`None` when none does).
    fn map_builtin(&mut self, ty: &Ty, depth: usize) -> Option<Expr> {
        let map = |t: &Ty| Ty::Map(Box::new(t.clone()));
        Some(match ty {
            Ty::Bool => {
                let t = self.base_ty(1);
                let m = self.expr(&map(&t), depth);
                Expr::Builtin(Bi::Contains, vec![m, self.map_key(depth)])
            }
            Ty::List(et) if **et == Ty::Str && self.rng.chance(50) => {
                let t = self.base_ty(1);
                Expr::Builtin(Bi::Keys, vec![self.expr(&map(&t), depth)])
            }
            Ty::List(et) if self.rng.chance(60) => {
                Expr::Builtin(Bi::Values, vec![self.typed_expr(&map(et), depth)])
            }
            Ty::Opt(et) if self.rng.chance(60) => {
                let m = self.typed_expr(&map(et), depth);
                Expr::Builtin(Bi::Get, vec![m, self.map_key(depth)])
            }
            _ if self.rng.chance(70) => {
                let m = self.typed_expr(&map(ty), depth);
                let k = self.map_key(depth);
                let d = self.expr(ty, depth);
                Expr::Builtin(Bi::GetOr, vec![m, k, d])
            }
            _ => {
                let xs = self.typed_expr(&Ty::List(Box::new(ty.clone())), depth);
                let i = self.expr(&Ty::Int, depth);
                let d = self.expr(ty, depth);
                Expr::Builtin(Bi::GetOr, vec![xs, i, d])
            }
        })
    }

    fn lit_int(&mut self) -> i64 {
        if self.rng.chance(80) {
            self.rng.below(10) as i64
        } else {
            self.rng.below(1000) as i64
        }
    }

    fn expr(&mut self, ty: &Ty, depth: usize) -> Expr {
        // Variables of the type.
        let vars: Vec<B> = self.visible().into_iter().filter(|b| b.ty == *ty).collect();
        if !vars.is_empty() && self.rng.chance(if depth == 0 { 70 } else { 30 }) {
            let b = self.rng.pick(&vars).clone();
            return self.use_var(&b);
        }
        if depth == 0 {
            return self.leaf(ty);
        }
        if self.f.builtins && self.rng.chance(8) {
            if let Some(e) = self.builtin_expr(ty, depth - 1) {
                return e;
            }
        }
        if self.f.lambdas && self.rng.chance(10) {
            if let Some(e) = self.ho_expr(ty, depth - 1) {
                return e;
            }
        }
        if self.rng.chance(6) {
            let cs: Vec<usize> = (0..self.consts.len())
                .filter(|&i| self.consts[i].ty == *ty)
                .collect();
            if !cs.is_empty() {
                return Expr::Const(*self.rng.pick(&cs));
            }
        }
        if let (true, Ty::Opt(t)) = (self.f.builtins && self.rng.chance(15), ty) {
            if matches!(**t, Ty::Int | Ty::Float) {
                return self.parse_expr(t, depth - 1);
            }
        }
        // `parse_int(s) is Some(42)`, `parse_float(s) isnt None`.
        if self.f.builtins && *ty == Ty::Bool && self.rng.chance(4) {
            let inner = if self.rng.chance(50) {
                Ty::Int
            } else {
                Ty::Float
            };
            let parse = self.parse_expr(&inner, depth - 1);
            let rhs = if self.rng.chance(40) {
                Expr::None
            } else {
                Expr::Some(Box::new(self.leaf(&inner)))
            };
            let op = if self.rng.chance(50) {
                Op::Is
            } else {
                Op::Isnt
            };
            return Expr::Bin(op, Box::new(parse), Box::new(rhs));
        }
        if self.f.dates && self.rng.chance(5) {
            match ty {
                Ty::Int => {
                    let a = self.date_expr(depth - 1);
                    return if self.rng.chance(50) {
                        let b = self.date_expr(depth - 1);
                        Expr::DaysBetween(Box::new(a), Box::new(b))
                    } else {
                        Expr::DatePart(self.rng.below(3) as u8, Box::new(a))
                    };
                }
                Ty::Bool => {
                    let op = *self
                        .rng
                        .pick(&[Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Is, Op::Isnt]);
                    let a = self.date_expr(depth - 1);
                    let b = self.date_expr(depth - 1);
                    return Expr::DateCmp(op, Box::new(a), Box::new(b));
                }
                _ => {}
            }
        }
        if self.f.maps && self.rng.chance(4) {
            if let Some(e) = self.map_builtin(ty, depth - 1) {
                return e;
            }
        }
        match self.rng.below(12) {
            0 => {
                // Field access on a record-typed variable.
                let mut cands = Vec::new();
                for b in self.visible() {
                    if let Ty::Named(t) = b.ty {
                        if let Some(fs) = self.record_fields(t) {
                            for (fi, f) in fs.iter().enumerate() {
                                if f.ty == *ty {
                                    cands.push((b.clone(), t, fi));
                                }
                            }
                        }
                    }
                }
                if let Some((b, t, fi)) = cands.get(self.rng.below(cands.len().max(1))).cloned() {
                    let base = self.use_var(&b);
                    return Expr::Field(Box::new(base), t, fi);
                }
                // Or of any record value (a call, a literal, an `if`…).
                let mut owners = Vec::new();
                for (t, td) in self.types.iter().enumerate() {
                    if let TypeKind::Record(fs) = &td.kind {
                        for (fi, f) in fs.iter().enumerate() {
                            if f.ty == *ty {
                                owners.push((t, fi));
                            }
                        }
                    }
                }
                if !owners.is_empty() {
                    let (t, fi) = *self.rng.pick(&owners);
                    let base = self.expr(&Ty::Named(t), depth - 1);
                    return Expr::Field(Box::new(base), t, fi);
                }
            }
            1 | 2 => {
                let fs = self.callable(Some(ty));
                if !fs.is_empty() {
                    let fi = *self.rng.pick(&fs);
                    return self.call(fi, depth - 1);
                }
            }
            3 => {
                let c = self.expr(&Ty::Bool, depth - 1);
                let c = self.head(c);
                let t = self.value_block(ty, depth - 1);
                let snapshot = self.snapshot();
                let mut e = self.value_block(ty, depth - 1);
                while t.tail.is_none() && e.tail.is_none() {
                    self.restore(&snapshot);
                    e = self.value_block(ty, depth - 1);
                }
                return Expr::If(Box::new(c), Box::new(t), Box::new(e));
            }
            4 => {
                let (s, st) = self.scrutinee(depth - 1);
                // Not every arm may return: the checker gives such a match the
                // type `never`, which it does not accept as an operand.
                let mut valued = false;
                let arms = self.arms(&st, depth - 1, |g, d, last| {
                    if (!last || valued) && g.rng.chance(6) {
                        Body::Block(g.diverging_block(d))
                    } else {
                        valued = true;
                        Body::Expr(g.expr(ty, d))
                    }
                });
                return Expr::Match(Box::new(s), arms);
            }
            _ => {}
        }
        self.construct(ty, depth)
    }

    fn head(&mut self, e: Expr) -> Expr {
        let needs = matches!(e, Expr::Record(..));
        if needs || (self.f.paren_heads && self.rng.chance(15)) {
            Expr::Paren(Box::new(e))
        } else {
            e
        }
    }

    fn call(&mut self, fi: usize, depth: usize) -> Expr {
        let params: Vec<Ty> = self.fns[fi].params.iter().map(|p| p.ty.clone()).collect();
        let args = params.iter().map(|t| self.expr(t, depth)).collect();
        let named = if self.rng.chance(30) && !params.is_empty() {
            let mut order: Vec<usize> = (0..params.len()).collect();
            self.rng.shuffle(&mut order);
            Some(order)
        } else {
            None
        };
        Expr::Call(fi, args, named)
    }

    /// A block with a value: maybe a `let` first.
    fn value_block(&mut self, ty: &Ty, depth: usize) -> Block {
        if self.rng.chance(6) {
            return self.diverging_block(depth);
        }
        let mark = self.scope.len();
        let mut stmts = Vec::new();
        if self.rng.chance(25) {
            let t = self.base_ty(1);
            let v = self.expr(&t, depth);
            let name = self.local_name();
            self.read_before_shadowing(&name, &mut stmts);
            let b = self.bind(name, t, false);
            let annot = self.rng.chance(30) || !self_typed(&v);
            stmts.push(Stmt::Let(b, annot, v));
        }
        let tail = self.expr(ty, depth);
        self.flush_unread(mark, &mut stmts);
        self.scope.truncate(mark);
        Block {
            stmts,
            tail: Some(tail),
        }
    }

    /// `{ return … }` where a value is expected (the branch never produces one).
    fn diverging_block(&mut self, depth: usize) -> Block {
        let v = self.cur_ret.clone().map(|r| self.expr(&r, depth));
        Block {
            stmts: vec![Stmt::Return(v)],
            tail: None,
        }
    }

    fn leaf(&mut self, ty: &Ty) -> Expr {
        match ty {
            Ty::Int => Expr::Int(self.lit_int()),
            Ty::Float => Expr::Float(*self.rng.pick(FLOATS)),
            Ty::Dec => Expr::DecStr(self.rng.pick(DECIMALS).to_string()),
            Ty::Bool => Expr::Bool(self.rng.chance(50)),
            Ty::Str => Expr::Str(self.rng.pick(STRINGS).to_string()),
            Ty::List(t) => {
                // A recursive element type must stop somewhere: `[]`.
                if self.f.empty_literals && self.rng.chance(50) || self.is_self_nest(t) {
                    Expr::List(Vec::new())
                } else {
                    Expr::List(vec![self.leaf(t)])
                }
            }
            Ty::Opt(t) => {
                if self.f.empty_literals && self.rng.chance(50) || self.is_self_nest(t) {
                    Expr::None
                } else {
                    Expr::Some(Box::new(self.leaf(t)))
                }
            }
            Ty::Res(t) => {
                if self.rng.chance(50) || self.is_self_nest(t) {
                    Expr::Err(Box::new(Expr::Str(self.rng.pick(STRINGS).to_string())))
                } else {
                    Expr::Ok(Box::new(self.leaf(t)))
                }
            }
            Ty::Map(t) => {
                if self.f.empty_literals && self.rng.chance(50) || self.is_self_nest(t) {
                    Expr::Map(Vec::new())
                } else {
                    let k = Expr::Str(self.rng.pick(STRINGS).to_string());
                    Expr::Map(vec![(k, self.leaf(t))])
                }
            }
            Ty::Named(t) => self.construct(&Ty::Named(*t), 0),
        }
    }

    /// Whether a value of `t` would need a recursive value to build (leaf stops there).
    fn is_self_nest(&self, t: &Ty) -> bool {
        match t {
            Ty::Named(i) => self.types[*i].recursive,
            Ty::Opt(i) | Ty::Res(i) | Ty::List(i) | Ty::Map(i) => self.is_self_nest(i),
            _ => false,
        }
    }

    /// `l op r`, both operands of type `ty` (left generated first).
    fn bin(&mut self, op: Op, ty: &Ty, depth: usize) -> Expr {
        let l = self.expr(ty, depth);
        let r = self.expr(ty, depth);
        Expr::Bin(op, Box::new(l), Box::new(r))
    }

    /// A constructor of `ty` (operators for scalars).
    fn construct(&mut self, ty: &Ty, depth: usize) -> Expr {
        let d = depth.saturating_sub(1);
        match ty {
            Ty::Int => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(9) {
                    0 => self.bin(Op::Add, ty, d),
                    1 => self.bin(Op::Sub, ty, d),
                    2 => Expr::Bin(
                        Op::Mul,
                        Box::new(self.expr(ty, d)),
                        Box::new(Expr::Int(self.rng.below(6) as i64)),
                    ),
                    3 => {
                        let op = if self.rng.chance(50) {
                            Op::Div
                        } else {
                            Op::Rem
                        };
                        Expr::Bin(
                            op,
                            Box::new(self.expr(ty, d)),
                            Box::new({
                                // A non-zero literal divisor, sometimes negative.
                                let k = Expr::Int(1 + self.rng.below(7) as i64);
                                if self.rng.chance(20) {
                                    Expr::Neg(Box::new(k))
                                } else {
                                    k
                                }
                            }),
                        )
                    }
                    4 => Expr::Neg(Box::new(self.expr(ty, d))),
                    5 => {
                        let t = if self.rng.chance(30) {
                            Ty::Str
                        } else if self.f.maps && self.rng.chance(25) {
                            Ty::Map(Box::new(self.base_ty(1)))
                        } else {
                            Ty::List(Box::new(self.base_ty(1)))
                        };
                        Expr::Len(Box::new(self.expr(&t, d)))
                    }
                    6 => {
                        let t = self
                            .rng
                            .pick(&[Ty::Float, Ty::Bool, Ty::Int, Ty::Dec])
                            .clone();
                        let t = if t == Ty::Dec && !self.f.decimal {
                            Ty::Int
                        } else {
                            t
                        };
                        Expr::ToInt(Box::new(self.expr(&t, d)))
                    }
                    _ => Expr::Int(self.lit_int()),
                }
            }
            Ty::Float => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(6) {
                    0 => self.bin(Op::Add, ty, d),
                    1 => self.bin(Op::Sub, ty, d),
                    2 => Expr::Bin(
                        *self.rng.pick(&[Op::Mul, Op::Mul, Op::Div, Op::Rem]),
                        Box::new(self.expr(ty, d)),
                        Box::new(Expr::Float(*self.rng.pick(&[0.5, 2.0, 3.0]))),
                    ),
                    3 => {
                        let t = if self.rng.chance(50) {
                            Ty::Int
                        } else if self.f.decimal && self.rng.chance(30) {
                            Ty::Dec
                        } else {
                            Ty::Float
                        };
                        Expr::ToFloat(Box::new(self.expr(&t, d)))
                    }
                    4 => Expr::Neg(Box::new(self.expr(ty, d))),
                    _ => self.leaf(ty),
                }
            }
            Ty::Dec => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(6) {
                    0 | 1 => {
                        let op = *self.rng.pick(&[Op::Add, Op::Sub]);
                        self.bin(op, ty, d)
                    }
                    2 => Expr::Bin(
                        Op::Mul,
                        Box::new(self.expr(ty, d)),
                        Box::new(Expr::DecStr(
                            self.rng.pick(&["0.5", "2", "-1.5", "0.01"]).to_string(),
                        )),
                    ),
                    3 => Expr::Neg(Box::new(self.expr(ty, d))),
                    4 => Expr::DecOf(Box::new(self.expr(&Ty::Int, d))),
                    _ => self.leaf(ty),
                }
            }
            Ty::Bool => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(6) {
                    0 => {
                        let t = if self.rng.chance(60) {
                            Ty::Int
                        } else if self.f.decimal && self.rng.chance(40) {
                            Ty::Dec
                        } else {
                            Ty::Float
                        };
                        let op = *self.rng.pick(&[Op::Lt, Op::Le, Op::Gt, Op::Ge]);
                        let l = self.expr(&t, d);
                        let r = if t == Ty::Int && self.rng.chance(10) {
                            // The extremes, compared only (never computed with).
                            if self.rng.chance(50) {
                                Expr::Int(i64::MAX)
                            } else {
                                Expr::IntMin
                            }
                        } else {
                            self.expr(&t, d)
                        };
                        Expr::Bin(op, Box::new(l), Box::new(r))
                    }
                    1 | 2 => {
                        let t = self.base_ty(1);
                        let op = *self.rng.pick(&[Op::Eq, Op::Ne, Op::Is, Op::Isnt]);
                        self.bin(op, &t, d)
                    }
                    3 => {
                        let op = if self.rng.chance(50) { Op::And } else { Op::Or };
                        self.bin(op, ty, d)
                    }
                    4 => Expr::Not(Box::new(self.expr(ty, d))),
                    _ => self.leaf(ty),
                }
            }
            Ty::Str => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(4) {
                    0 => self.bin(Op::Add, ty, d),
                    1 => {
                        // Scalars print plainly; everything else as JSON.
                        let t = if self.rng.chance(35) {
                            self.base_ty(1)
                        } else {
                            self.rng
                                .pick(&[Ty::Int, Ty::Float, Ty::Bool, Ty::Str, Ty::Dec])
                                .clone()
                        };
                        let t = if t == Ty::Dec && !self.f.decimal {
                            Ty::Int
                        } else {
                            t
                        };
                        Expr::ToStr(Box::new(self.expr(&t, d)))
                    }
                    _ => self.leaf(ty),
                }
            }
            Ty::List(t) => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                if self.rng.chance(25) {
                    return self.bin(Op::Add, ty, d);
                }
                let lo = usize::from(!self.f.empty_literals);
                let n = lo + self.rng.below(4 - lo);
                Expr::List((0..n).map(|_| self.expr(t, d)).collect())
            }
            Ty::Opt(t) => {
                if depth == 0 || (self.f.empty_literals && self.rng.chance(30)) {
                    return self.leaf(ty);
                }
                Expr::Some(Box::new(self.expr(t, d)))
            }
            Ty::Map(t) => {
                if depth == 0 {
                    return self.leaf(ty);
                }
                match self.rng.below(4) {
                    0 => {
                        // `insert(m, k, v)`: `[:]` takes its type from `v` or the use.
                        let m = self.expr(ty, d);
                        let k = self.map_key(d);
                        let v = self.expr(t, d);
                        Expr::Builtin(Bi::Insert, vec![m, k, v])
                    }
                    1 => {
                        let m = self.expr(ty, d);
                        let k = self.map_key(d);
                        Expr::Builtin(Bi::Remove, vec![m, k])
                    }
                    _ => {
                        let lo = usize::from(!self.f.empty_literals);
                        let n = lo + self.rng.below(4 - lo);
                        let mut entries: Vec<(Expr, Expr)> = Vec::new();
                        for _ in 0..n {
                            let reads = self.snapshot();
                            let k = self.map_key(d);
                            // The same string literal twice is `vox/map/duplicate-key`.
                            let dup = literal_text(&k).is_some_and(|t| {
                                entries.iter().any(|(o, _)| literal_text(o) == Some(t))
                            });
                            let v = self.expr(t, d);
                            if dup {
                                // The entry is dropped: so are its reads (seed 30186 left
                                // a parameter read only there, unused in the program).
                                self.restore(&reads);
                            } else {
                                entries.push((k, v));
                            }
                        }
                        Expr::Map(entries)
                    }
                }
            }
            Ty::Res(t) => {
                if depth == 0 || self.rng.chance(30) {
                    return Expr::Err(Box::new(self.expr(&Ty::Str, d)));
                }
                Expr::Ok(Box::new(self.expr(t, d)))
            }
            Ty::Named(t) => {
                let t = *t;
                match self.types[t].kind.clone() {
                    TypeKind::Record(fs) => {
                        let mut order: Vec<usize> = (0..fs.len()).collect();
                        self.rng.shuffle(&mut order);
                        let vals = order
                            .into_iter()
                            .map(|fi| (fi, self.field_value(&fs[fi].ty, depth)))
                            .collect();
                        Expr::Record(t, vals)
                    }
                    TypeKind::Sum(vs) => {
                        // At depth 0 prefer a variant without fields.
                        let vi = if depth == 0 {
                            vs.iter()
                                .position(|v| v.fields.is_empty())
                                .unwrap_or_else(|| self.rng.below(vs.len()))
                        } else {
                            self.rng.below(vs.len())
                        };
                        let fs = vs[vi].fields.clone();
                        let vals = fs.iter().map(|f| self.field_value(&f.ty, depth)).collect();
                        let named = if !fs.is_empty() && self.rng.chance(60) {
                            let mut order: Vec<usize> = (0..fs.len()).collect();
                            self.rng.shuffle(&mut order);
                            Some(order)
                        } else {
                            None
                        };
                        Expr::Variant(t, vi, vals, named)
                    }
                }
            }
        }
    }

    fn field_value(&mut self, ty: &Ty, depth: usize) -> Expr {
        if depth == 0 {
            self.leaf(ty)
        } else {
            self.expr(ty, depth - 1)
        }
    }

    // ---- match ----

    /// Something to match on, and its type.
    fn scrutinee(&mut self, depth: usize) -> (Expr, Ty) {
        let vars: Vec<B> = self.visible();
        if !vars.is_empty() && self.rng.chance(60) {
            let b = self.rng.pick(&vars).clone();
            let t = b.ty.clone();
            return (self.use_var(&b), t);
        }
        let t = match self.rng.below(6) {
            0 => Ty::Bool,
            1 => Ty::Int,
            2 => Ty::Str,
            _ => self.base_ty(1),
        };
        let e = self.typed_expr(&t, depth);
        (self.head(e), t)
    }

    /// A list expression whose element type nothing decides (it is not
    /// [`self_typed`]): `[]`, `[] + []`, an `if` whose branches are such
    /// lists, or a list of them. Its elements may be iterated over but not
    /// taken apart (`vox/type/needs-annotation`).
    fn open_empty(&mut self, depth: usize) -> Expr {
        match self.rng.below(if depth == 0 { 1 } else { 4 }) {
            0 => Expr::List(Vec::new()),
            1 => Expr::Bin(
                Op::Add,
                Box::new(self.open_empty(depth - 1)),
                Box::new(self.open_empty(depth - 1)),
            ),
            2 => {
                let c = self.expr(&Ty::Bool, depth - 1);
                let c = self.head(c);
                let t = self.open_empty(depth - 1);
                let f = self.open_empty(depth - 1);
                Expr::If(
                    Box::new(c),
                    Box::new(Block {
                        stmts: Vec::new(),
                        tail: Some(t),
                    }),
                    Box::new(Block {
                        stmts: Vec::new(),
                        tail: Some(f),
                    }),
                )
            }
            _ => Expr::List(vec![self.open_empty(depth - 1)]),
        }
    }

    /// An expression of `t` whose type the checker can tell without an
    /// expected type (for `match` and `for` heads: `match None {…}` and
    /// `for x in [] {…}` leave the element type open, and the checker
    /// rightly rejects what depends on it).
    fn typed_expr(&mut self, t: &Ty, depth: usize) -> Expr {
        let snapshot = self.snapshot();
        let e = self.expr(t, depth);
        if self_typed(&e) {
            return e;
        }
        self.restore(&snapshot);
        self.typed_leaf(t)
    }

    /// The read marks of the bindings in scope (to take back a discarded expression's reads).
    fn snapshot(&self) -> Vec<(B, bool, bool)> {
        self.scope
            .iter()
            .map(|b| (b.clone(), b.used.get(), b.unread.get()))
            .collect()
    }

    fn restore(&self, snapshot: &[(B, bool, bool)]) {
        for (b, used, unread) in snapshot {
            b.used.set(*used);
            b.unread.set(*unread);
        }
    }

    fn typed_leaf(&mut self, t: &Ty) -> Expr {
        match t {
            Ty::Opt(i) => Expr::Some(Box::new(self.typed_leaf(i))),
            Ty::Res(i) => Expr::Ok(Box::new(self.typed_leaf(i))),
            Ty::List(i) => Expr::List(vec![self.typed_leaf(i)]),
            Ty::Map(i) => Expr::Map(vec![(Expr::Str("k".into()), self.typed_leaf(i))]),
            Ty::Named(_) => self.construct(t, 0),
            _ => self.leaf(t),
        }
    }

    /// Exhaustive arms without unreachable ones for a value of `st`.
    fn arms(
        &mut self,
        st: &Ty,
        depth: usize,
        mut body: impl FnMut(&mut Gen, usize, bool) -> Body,
    ) -> Vec<Arm> {
        let mut pats = self.cover(st);
        if self.f.patterns && self.rng.chance(30) {
            pats = self.merge_alternatives(pats);
        }
        let count = pats.len();
        let mut arms = Vec::new();
        // A refutable record pattern first: a literal for one field, the
        // other fields bound or left to `..`; the arms after stay reachable.
        if let (true, Ty::Named(t)) = (self.f.record_patterns && self.rng.chance(70), st) {
            if let Some(fields) = self.record_fields(*t).cloned() {
                let lit = fields
                    .iter()
                    .position(|f| matches!(f.ty, Ty::Int | Ty::Str | Ty::Bool));
                if let Some(li) = lit {
                    let mark = self.scope.len();
                    let mut subs = Vec::new();
                    let mut rest = false;
                    let mut names: Vec<String> = Vec::new();
                    for (fi, f) in fields.iter().enumerate() {
                        if fi == li {
                            let p = match f.ty {
                                Ty::Int => Pat::Int(self.lit_int()),
                                Ty::Bool => Pat::Bool(self.rng.chance(50)),
                                _ => Pat::Str(self.rng.pick(STRINGS).to_string()),
                            };
                            subs.push((fi, p));
                        } else if self.rng.chance(40) {
                            let mut n = self.local_name();
                            while names.contains(&n) {
                                n = format!("{n}_");
                            }
                            names.push(n.clone());
                            let b = self.bind(n, f.ty.clone(), false);
                            subs.push((fi, Pat::Bind(b)));
                        } else {
                            rest = true;
                        }
                    }
                    if self.rng.chance(50) {
                        subs.reverse();
                    }
                    let b = body(self, depth, false);
                    self.scope.truncate(mark);
                    arms.push(Arm {
                        pat: Pat::Record(*t, subs, rest),
                        guard: None,
                        body: b,
                    });
                }
            }
        }
        for (i, p) in pats.into_iter().enumerate() {
            // A guarded copy of an arm just before it: reachable (the arm
            // was), and it covers nothing, so the arm stays reachable.
            if self.f.patterns && depth > 0 && self.rng.chance(12) {
                let mark = self.scope.len();
                let pat = self.realize(p.clone(), &mut Vec::new());
                let guard = self.expr(&Ty::Bool, depth - 1);
                let b = body(self, depth, false);
                self.scope.truncate(mark);
                arms.push(Arm {
                    pat,
                    guard: Some(guard),
                    body: b,
                });
            }
            let mark = self.scope.len();
            let pat = self.realize(p, &mut Vec::new());
            let b = body(self, depth, i + 1 == count);
            self.scope.truncate(mark);
            arms.push(Arm {
                pat,
                guard: None,
                body: b,
            });
        }
        arms
    }

    /// Joins runs of adjacent binding-free shapes into or-patterns (each
    /// alternative stays reachable: it was an arm of its own in that order).
    fn merge_alternatives(&mut self, pats: Vec<PatShape>) -> Vec<PatShape> {
        let mut out: Vec<PatShape> = Vec::new();
        for p in pats {
            let joinable = !shape_binds(&p) && self.rng.chance(60);
            match out.last_mut() {
                Some(PatShape::Or(alts)) if joinable => alts.push(p),
                Some(last) if joinable && !shape_binds(last) => {
                    let prev = std::mem::replace(last, PatShape::Wild);
                    *last = PatShape::Or(vec![prev, p]);
                }
                _ => out.push(p),
            }
        }
        out
    }

    /// Pattern shapes covering `st` exactly once each (bindings not yet made).
    fn cover(&mut self, st: &Ty) -> Vec<PatShape> {
        match st {
            Ty::Bool => {
                let mut v = vec![PatShape::Bool(true), PatShape::Bool(false)];
                self.rng.shuffle(&mut v);
                if self.rng.chance(30) {
                    v[1] = self.catch_all(st);
                }
                v
            }
            Ty::Int | Ty::Str => {
                let n = self.rng.below(3);
                let mut v = Vec::new();
                let mut seen = Vec::new();
                for _ in 0..n {
                    let p = if *st == Ty::Int {
                        let k = self.rng.below(6) as i64;
                        if seen.contains(&k.to_string()) {
                            continue;
                        }
                        seen.push(k.to_string());
                        PatShape::Int(k)
                    } else {
                        let s = self.rng.pick(STRINGS).to_string();
                        if seen.contains(&s) {
                            continue;
                        }
                        seen.push(s.clone());
                        PatShape::Str(s)
                    };
                    v.push(p);
                }
                v.push(self.catch_all(st));
                v
            }
            Ty::Opt(inner) => {
                if self.rng.chance(15) {
                    return vec![self.catch_all(st)];
                }
                let mut v: Vec<PatShape> = self
                    .refine(inner)
                    .into_iter()
                    .map(|p| PatShape::Some(Box::new(p)))
                    .collect();
                // Refinements keep their order (the catch-all last).
                let at = self.rng.below(v.len() + 1);
                v.insert(at, PatShape::None);
                v
            }
            Ty::Res(inner) => {
                let mut v: Vec<PatShape> = self
                    .refine(inner)
                    .into_iter()
                    .map(|p| PatShape::Ok(Box::new(p)))
                    .collect();
                let e = if self.rng.chance(50) {
                    PatShape::Wild
                } else {
                    PatShape::Bind(Ty::Str)
                };
                let at = self.rng.below(v.len() + 1);
                v.insert(at, PatShape::Err(Box::new(e)));
                v
            }
            Ty::Named(t) => match self.types[*t].kind.clone() {
                TypeKind::Record(_) => vec![self.catch_all(st)],
                TypeKind::Sum(vs) => {
                    let mut order: Vec<usize> = (0..vs.len()).collect();
                    self.rng.shuffle(&mut order);
                    let mut out = Vec::new();
                    for (k, &vi) in order.iter().enumerate() {
                        if k > 0 && self.rng.chance(25) {
                            out.push(self.catch_all(st));
                            break;
                        }
                        let fs = vs[vi].fields.clone();
                        if !fs.is_empty() && self.rng.chance(15) {
                            out.push(PatShape::Variant(*t, vi, Vec::new()));
                            continue;
                        }
                        // Refine at most one field; the others are bindings or `_`.
                        let split = if fs.is_empty() {
                            None
                        } else {
                            Some(self.rng.below(fs.len()))
                        };
                        let mut rows: Vec<Vec<PatShape>> = vec![Vec::new()];
                        for (fi, f) in fs.iter().enumerate() {
                            if Some(fi) == split {
                                let alts = self.refine(&f.ty);
                                let mut next = Vec::new();
                                for r in &rows {
                                    for a in &alts {
                                        let mut r = r.clone();
                                        r.push(a.clone());
                                        next.push(r);
                                    }
                                }
                                rows = next;
                            } else {
                                let p = self.catch_all(&f.ty);
                                for r in &mut rows {
                                    r.push(p.clone());
                                }
                            }
                        }
                        for r in rows {
                            out.push(PatShape::Variant(*t, vi, r));
                        }
                    }
                    out
                }
            },
            Ty::Float | Ty::Dec | Ty::List(_) | Ty::Map(_) => vec![self.catch_all(st)],
        }
    }

    /// Alternatives that together cover `t` (one level of refinement at most).
    fn refine(&mut self, t: &Ty) -> Vec<PatShape> {
        if self.rng.chance(55) {
            return vec![self.catch_all(t)];
        }
        match t {
            Ty::Bool => vec![PatShape::Bool(false), PatShape::Bool(true)],
            Ty::Opt(_) => vec![
                PatShape::Some(Box::new(self.catch_all_inner(t))),
                PatShape::None,
            ],
            Ty::Res(_) => vec![
                PatShape::Ok(Box::new(self.catch_all_inner(t))),
                PatShape::Err(Box::new(PatShape::Wild)),
            ],
            Ty::Int => vec![PatShape::Int(self.rng.below(4) as i64), self.catch_all(t)],
            _ => vec![self.catch_all(t)],
        }
    }

    fn catch_all_inner(&mut self, t: &Ty) -> PatShape {
        match t {
            Ty::Opt(i) | Ty::Res(i) => self.catch_all(i),
            _ => PatShape::Wild,
        }
    }

    fn catch_all(&mut self, t: &Ty) -> PatShape {
        if self.rng.chance(55) {
            PatShape::Bind(t.clone())
        } else {
            PatShape::Wild
        }
    }

    fn realize(&mut self, p: PatShape, names: &mut Vec<String>) -> Pat {
        match p {
            PatShape::Wild => Pat::Wild,
            PatShape::Bind(t) => {
                let mut n = self.local_name();
                if names.contains(&n) {
                    self.counter += 1;
                    n = format!("p{}", self.counter);
                }
                names.push(n.clone());
                Pat::Bind(self.bind(n, t, false))
            }
            PatShape::Int(k) => Pat::Int(k),
            PatShape::Bool(b) => Pat::Bool(b),
            PatShape::Str(s) => Pat::Str(s),
            PatShape::None => Pat::None,
            PatShape::Some(i) => Pat::Some(Box::new(self.realize(*i, names))),
            PatShape::Ok(i) => Pat::Ok(Box::new(self.realize(*i, names))),
            PatShape::Err(i) => Pat::Err(Box::new(self.realize(*i, names))),
            PatShape::Variant(t, v, ps) => {
                let out = ps.into_iter().map(|p| self.realize(p, names)).collect();
                Pat::Variant(t, v, out)
            }
            PatShape::Or(ps) => Pat::Or(ps.into_iter().map(|p| self.realize(p, names)).collect()),
        }
    }

    // ---- statements ----

    fn stmts(&mut self, n: usize, depth: usize, out: &mut Vec<Stmt>) {
        for _ in 0..n {
            self.stmt(depth, out);
        }
    }

    fn mut_vars(&self) -> Vec<B> {
        // Inside a lambda only its own: captured variables cannot be assigned.
        let own = &self.scope[self.lambda_mark.min(self.scope.len())..];
        self.visible()
            .into_iter()
            .filter(|b| b.mutable && own.iter().any(|o| Rc::ptr_eq(o, b)))
            .collect()
    }

    fn stmt(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let k = self.rng.below(14);
        match k {
            0..=2 => {
                let t = self.base_ty(1);
                let v = self.expr(&t, depth + 1);
                let name = self.local_name();
                let annot = self.rng.chance(30) || !self_typed(&v);
                self.read_before_shadowing(&name, out);
                let b = self.bind(name, t, false);
                out.push(Stmt::Let(b, annot, v));
            }
            3 | 4 => {
                // let mut + assignments that read it.
                let t = self.rng.pick(&[Ty::Int, Ty::Str, Ty::Float]).clone();
                let t = if self.rng.chance(25) {
                    self.base_ty(1)
                } else {
                    t
                };
                let v = self.expr(&t, depth);
                let name = self.local_name();
                let annot = self.rng.chance(30) || !self_typed(&v);
                self.read_before_shadowing(&name, out);
                let b = self.bind(name, t, true);
                out.push(Stmt::Let(b.clone(), annot, v));
                if self.f.dead_stores && self.rng.chance(10) {
                    // A dead store: overwritten before any read.
                    let mut v = self.expr(&b.ty.clone(), 0);
                    if same_place(&b, &[], &v) {
                        v = self.leaf(&b.ty.clone());
                    }
                    out.push(Stmt::Assign(b.clone(), Vec::new(), v));
                }
                self.assign(&b, depth, out);
            }
            5 => {
                let muts = self.mut_vars();
                if !muts.is_empty() {
                    let b = self.rng.pick(&muts).clone();
                    self.assign(&b, depth, out);
                }
            }
            6 if depth > 0 => {
                let c = self.expr(&Ty::Bool, depth);
                let c = self.head(c);
                let t = self.unit_block(depth - 1);
                let e = if self.rng.chance(50) {
                    Some(self.unit_block(depth - 1))
                } else {
                    None
                };
                out.push(Stmt::If(c, t, e));
            }
            7 if depth > 0 => {
                let (s, st) = self.scrutinee(depth);
                let value_arms = self.f.value_statements && self.rng.chance(15);
                let arms = self.arms(&st, depth - 1, |g, d, _| {
                    let units = g.callable(None);
                    if value_arms {
                        Body::Expr(g.expr(&Ty::Int, d))
                    } else if !units.is_empty() && g.rng.chance(25) {
                        // An arm that is a call of a function without a value.
                        let fi = *g.rng.pick(&units);
                        Body::Expr(g.call(fi, d))
                    } else {
                        Body::Block(g.unit_block(d))
                    }
                });
                out.push(Stmt::Match(s, arms));
            }
            8 if depth > 0 && self.f.empty_literals && self.rng.chance(20) => {
                // A head whose element type nothing decides, built by any
                // expression form (`[]`, `[] + []`, an `if` of empties, a
                // list of them, through a `let`): valid as long as nothing
                // takes an element apart, so the loop variable is out of
                // the body's scope (rendered `_x`).
                let et = self.base_ty(1);
                let it = self.open_empty(depth);
                let it = if self.rng.chance(30) {
                    // A fresh name: it must not hide a binding the rest uses.
                    self.counter += 1;
                    let name = format!("open{}", self.counter);
                    let v = self.bind(name, Ty::List(Box::new(et.clone())), false);
                    self.scope.pop();
                    out.push(Stmt::Let(v.clone(), false, it));
                    v.used.set(true);
                    Expr::Var(v)
                } else {
                    self.head(it)
                };
                let mark = self.scope.len();
                let name = self.local_name();
                let b = self.bind(name, et, false);
                self.scope.truncate(mark);
                let body = self.unit_block(depth - 1);
                out.push(Stmt::For(b, it, body));
            }
            8 if depth > 0 => {
                let counting = self.f.loops && self.rng.chance(25);
                let et = if counting { Ty::Int } else { self.base_ty(1) };
                let lt = Ty::List(Box::new(et.clone()));
                let it = if counting {
                    // Small bounds, sometimes computed (the evaluator drops
                    // a test whose range is long).
                    let a = if self.rng.chance(30) {
                        self.expr(&Ty::Int, 0)
                    } else {
                        Expr::Int(self.rng.below(4) as i64)
                    };
                    let b = self
                        .rng
                        .chance(50)
                        .then(|| Box::new(Expr::Int(self.rng.below(6) as i64)));
                    Expr::Range(Box::new(a), b)
                } else {
                    self.typed_expr(&lt, depth)
                };
                let it = self.head(it);
                let mark = self.scope.len();
                let name = self.local_name();
                let b = self.bind(name, et, false);
                self.loops += 1;
                let body = self.unit_block(depth - 1);
                self.loops -= 1;
                self.scope.truncate(mark);
                out.push(Stmt::For(b, it, body));
            }
            13 if depth > 0 && self.f.loops && self.rng.chance(50) => {
                // A counted `while`: the counter goes up first in each round,
                // so a `continue` later in the body cannot loop forever. Its
                // name is one no later `let` takes, so a read of it at the
                // end of the block (the unread-variable flush) is never
                // shadowed.
                self.counter += 1;
                let name = format!("while{}", self.counter);
                let w = self.bind(name, Ty::Int, true);
                out.push(Stmt::Let(w.clone(), false, Expr::Int(0)));
                let bound = 1 + self.rng.below(4) as i64;
                let cond = Expr::Bin(
                    Op::Lt,
                    Box::new(self.use_var(&w)),
                    Box::new(Expr::Int(bound)),
                );
                let step = Stmt::Assign(
                    w.clone(),
                    Vec::new(),
                    Expr::Bin(Op::Add, Box::new(self.use_var(&w)), Box::new(Expr::Int(1))),
                );
                self.loops += 1;
                let mut body = self.unit_block(depth - 1);
                self.loops -= 1;
                body.stmts.insert(0, step);
                out.push(Stmt::While(cond, body));
            }
            13 if self.loops > 0 && self.f.loops => {
                let c = self.expr(&Ty::Bool, depth);
                let c = self.head(c);
                let leave = if self.rng.chance(50) {
                    Stmt::Break
                } else {
                    Stmt::Continue
                };
                out.push(Stmt::If(
                    c,
                    Block {
                        stmts: vec![leave],
                        tail: None,
                    },
                    None,
                ));
            }
            9 => {
                // Early return (a bare `return` in functions without a value).
                let c = self.expr(&Ty::Bool, depth);
                let c = self.head(c);
                let v = self.cur_ret.clone().map(|r| self.expr(&r, depth));
                out.push(Stmt::If(
                    c,
                    Block {
                        stmts: vec![Stmt::Return(v)],
                        tail: None,
                    },
                    None,
                ));
            }
            10 if self.cur_net && self.rng.chance(30) => {
                // `print(try f(x))` of a network call: `Ok(…)` offline.
                let t = self.base_ty(1);
                let nets: Vec<usize> = self
                    .callable(Some(&t))
                    .into_iter()
                    .filter(|&i| self.fns[i].net())
                    .collect();
                let v = if nets.is_empty() {
                    self.expr(&t, depth)
                } else {
                    let fi = *self.rng.pick(&nets);
                    Expr::Try(Box::new(self.call(fi, depth)))
                };
                out.push(Stmt::Print(v));
            }
            10 => {
                let t = self.base_ty(1);
                let v = self.expr(&t, depth);
                out.push(Stmt::Print(v));
            }
            11 => {
                let fs = self.callable(None);
                if !fs.is_empty() {
                    let fi = *self.rng.pick(&fs);
                    let c = self.call(fi, depth);
                    out.push(Stmt::Expr(c));
                }
            }
            12 if self.f.value_statements && self.rng.chance(40) => {
                let t = self.base_ty(1);
                let fs = self.callable(Some(&t));
                let e = if !fs.is_empty() && self.rng.chance(60) {
                    let fi = *self.rng.pick(&fs);
                    self.call(fi, depth)
                } else {
                    self.expr(&t, depth)
                };
                out.push(Stmt::Expr(e));
            }
            _ => {}
        }
    }

    /// Assigns `b` (or one of its fields) a value that usually reads it.
    fn assign(&mut self, b: &B, depth: usize, out: &mut Vec<Stmt>) {
        let mut path = Vec::new();
        let mut ty = b.ty.clone();
        while let Ty::Named(t) = ty {
            let Some(fs) = self.record_fields(t).cloned() else {
                break;
            };
            if fs.is_empty() || !self.rng.chance(60) {
                break;
            }
            let fi = self.rng.below(fs.len());
            ty = fs[fi].ty.clone();
            path.push((t, fi));
        }
        let v = if self.rng.chance(50) && path.is_empty() {
            // x = x op e
            let var = self.use_var(b);
            match &ty {
                Ty::Int => Expr::Bin(
                    *self.rng.pick(&[Op::Add, Op::Sub]),
                    Box::new(var),
                    Box::new(self.expr(&ty, depth)),
                ),
                Ty::Float | Ty::Dec | Ty::Str | Ty::List(_) => {
                    Expr::Bin(Op::Add, Box::new(var), Box::new(self.expr(&ty, depth)))
                }
                // The grouping idiom: `m = insert(m, k, v)`.
                Ty::Map(vt) => {
                    let k = self.map_key(depth);
                    let v = self.expr(vt, depth);
                    Expr::Builtin(Bi::Insert, vec![var, k, v])
                }
                _ => {
                    let c = self.expr(&Ty::Bool, depth);
                    let other = self.expr(&ty, depth);
                    if_expr(
                        c,
                        Block {
                            stmts: Vec::new(),
                            tail: Some(other),
                        },
                        Block {
                            stmts: Vec::new(),
                            tail: Some(var),
                        },
                    )
                }
            }
        } else if path.is_empty() {
            // Read the old value, so that the initial store is not dead.
            let c = self.expr(&Ty::Bool, depth);
            let keep = self.use_var(b);
            let other = self.expr(&ty, depth);
            if_expr(
                c,
                Block {
                    stmts: Vec::new(),
                    tail: Some(keep),
                },
                Block {
                    stmts: Vec::new(),
                    tail: Some(other),
                },
            )
        } else {
            self.expr(&ty, depth)
        };
        // `x = x` is a warning (vox/lint/self-assignment).
        let v = if same_place(b, &path, &v) {
            self.leaf(&ty)
        } else {
            v
        };
        b.unread.set(true);
        out.push(Stmt::Assign(b.clone(), path, v));
    }

    /// Reads (prints) every mutable variable bound since `mark` whose last
    /// store nothing read yet, so that no store is dead.
    fn flush_unread(&mut self, mark: usize, out: &mut Vec<Stmt>) {
        let pending: Vec<B> = self.scope[mark.min(self.scope.len())..]
            .iter()
            .filter(|b| b.mutable && b.unread.get())
            .cloned()
            .collect();
        for b in pending {
            let v = self.use_var(&b);
            out.push(Stmt::Print(v));
        }
    }

    /// A block of statements without a value.
    fn unit_block(&mut self, depth: usize) -> Block {
        let mark = self.scope.len();
        let mut stmts = Vec::new();
        let n = 1 + self.rng.below(2);
        for _ in 0..n {
            self.stmt(depth, &mut stmts);
        }
        if stmts.is_empty() {
            let t = self.base_ty(0);
            let v = self.expr(&t, 0);
            stmts.push(Stmt::Print(v));
        }
        self.flush_unread(mark, &mut stmts);
        self.scope.truncate(mark);
        Block { stmts, tail: None }
    }

    // ---- functions ----

    fn fn_name(&mut self) -> String {
        let taken = self.fn_names();
        for _ in 0..30 {
            let n = self.value_name();
            if n != "main" && !taken.contains(&n) {
                return n;
            }
        }
        self.counter += 1;
        format!("f{}", self.counter)
    }

    fn gen_fns(&mut self) {
        // Fold functions for the recursive types first: others may call them.
        for t in 0..self.types.len() {
            if self.types[t].recursive {
                let kind = if self.f.net && self.rng.chance(15) {
                    FnKind::Net
                } else {
                    FnKind::Plain
                };
                self.fold_fn(t, kind);
            }
        }
        let n = 3 + self.rng.below(5);
        for _ in 0..n {
            let kind = if self.f.net && self.rng.chance(15) {
                if self.rng.chance(50) {
                    FnKind::Ai
                } else {
                    FnKind::Net
                }
            } else {
                FnKind::Plain
            };
            self.plain_fn(kind);
        }
        // `vox_main` is reserved beside `fn main` (vox/name/reserved).
        if self.f.main_fn && self.rng.chance(25) && !self.fn_names().iter().any(|n| n == "vox_main")
        {
            self.cur_net = true;
            self.cur_ret = None;
            let mut body = self.unit_block(2);
            // Print what some functions return: the script-lane test compares
            // the program's output with the evaluator's.
            let valued: Vec<usize> = (0..self.fns.len())
                .filter(|&i| self.fns[i].ret.is_some())
                .collect();
            for _ in 0..valued.len().min(4) {
                let fi = *self.rng.pick(&valued);
                let call = self.call(fi, 1);
                body.stmts.push(Stmt::Print(call));
            }
            if self.rng.chance(30) {
                // Deliberately overflow at the end: a run-time error after
                // everything above was printed.
                let k = Expr::Len(Box::new(Expr::ToStr(Box::new(Expr::Int(self.lit_int())))));
                body.stmts.push(Stmt::Print(Expr::Bin(
                    Op::Add,
                    Box::new(Expr::Int(i64::MAX)),
                    Box::new(k),
                )));
            }
            self.fns.push(Func {
                name: "main".into(),
                params: Vec::new(),
                ret: None,
                body,
                kind: FnKind::Main,
            });
        }
    }

    fn ai_ok(&self, t: &Ty) -> bool {
        match t {
            Ty::Named(i) => {
                let td = &self.types[*i];
                !td.recursive
                    && match &td.kind {
                        TypeKind::Record(fs) => fs.iter().all(|f| self.ai_ok(&f.ty)),
                        TypeKind::Sum(vs) => vs
                            .iter()
                            .all(|v| v.fields.iter().all(|f| self.ai_ok(&f.ty))),
                    }
            }
            Ty::List(i) | Ty::Opt(i) | Ty::Res(i) => self.ai_ok(i),
            // Strict structured outputs cannot carry a map (`vox/ai/map-in-output`).
            Ty::Map(_) => false,
            _ => true,
        }
    }

    fn plain_fn(&mut self, kind: FnKind) {
        let name = self.fn_name();
        self.plain_fn_named(name, kind);
    }

    fn plain_fn_named(&mut self, name: String, kind: FnKind) {
        let mut ret = if self.rng.chance(12) && kind != FnKind::Ai {
            None
        } else {
            Some(self.base_ty(1))
        };
        if kind == FnKind::Ai {
            while !ret.as_ref().is_some_and(|t| self.ai_ok(t)) {
                ret = Some(self.base_ty(1));
            }
        }
        let np = self.rng.below(4);
        self.scope.clear();
        let taken = if self.f.local_shadows_fn {
            Vec::new()
        } else {
            self.fn_names()
        };
        let names = self.distinct_names(np, &taken);
        let params: Vec<B> = names
            .into_iter()
            .map(|n| {
                let t = self.base_ty(1);
                self.bind(n, t, false)
            })
            .collect();
        self.cur_net = matches!(kind, FnKind::Net | FnKind::Ai);
        self.cur_ret = ret.clone();
        let mut stmts = Vec::new();
        let ns = 1 + self.rng.below(5);
        self.stmts(ns, 2, &mut stmts);
        let tail = ret.as_ref().map(|r| self.expr(r, 3));
        self.flush_unread(0, &mut stmts);
        let body = if let (Some(t), true) = (&tail, self.rng.chance(30)) {
            stmts.push(Stmt::Return(Some(t.clone())));
            Block { stmts, tail: None }
        } else {
            Block { stmts, tail }
        };
        self.scope.clear();
        self.fns.push(Func {
            name,
            params,
            ret,
            body,
            kind,
        });
    }

    /// `fn fold(x: T) to int`, recursing into every recursive field.
    fn fold_fn(&mut self, t: usize, kind: FnKind) {
        let name = self.fn_name();
        let fi = self.fns.len();
        // Push a stub so that the body can call itself.
        self.scope.clear();
        let mut pname = self.fresh_local();
        if pname == name && !self.f.local_shadows_fn {
            pname = format!("{name}_arg");
        }
        let p = self.bind(pname, Ty::Named(t), false);
        self.fns.push(Func {
            name,
            params: vec![p.clone()],
            ret: Some(Ty::Int),
            body: Block::default(),
            kind,
        });
        self.cur_net = kind == FnKind::Net;
        self.cur_ret = Some(Ty::Int);
        let body = match self.types[t].kind.clone() {
            TypeKind::Record(fs) => {
                let mut stmts = Vec::new();
                let acc_name = self.fresh_local();
                let acc = self.bind(acc_name, Ty::Int, true);
                stmts.push(Stmt::Let(acc.clone(), false, Expr::Int(1)));
                for (k, f) in fs.iter().enumerate() {
                    let field = Expr::Field(Box::new(self.use_var(&p)), t, k);
                    self.fold_field(fi, t, &f.ty, field, &acc, &mut stmts);
                }
                Block {
                    stmts,
                    tail: Some(self.use_var(&acc)),
                }
            }
            TypeKind::Sum(vs) => {
                let mut arms = Vec::new();
                for (vi, v) in vs.iter().enumerate() {
                    let mark = self.scope.len();
                    let mut names = Vec::new();
                    let pats: Vec<Pat> = v
                        .fields
                        .iter()
                        .map(|f| self.realize(PatShape::Bind(f.ty.clone()), &mut names))
                        .collect();
                    let binds = pat_binds(&Pat::Variant(t, vi, pats.clone()));
                    let pat = Pat::Variant(t, vi, pats);
                    let mut stmts = Vec::new();
                    let acc_name = self.fresh_local();
                    let acc = self.bind(acc_name, Ty::Int, true);
                    stmts.push(Stmt::Let(acc.clone(), false, Expr::Int(vi as i64 + 1)));
                    for b in &binds {
                        let e = self.use_var(b);
                        self.fold_field(fi, t, &b.ty.clone(), e, &acc, &mut stmts);
                    }
                    let tail = self.use_var(&acc);
                    self.scope.truncate(mark);
                    arms.push(Arm {
                        pat,
                        guard: None,
                        body: Body::Block(Block {
                            stmts,
                            tail: Some(tail),
                        }),
                    });
                }
                let scrut = self.use_var(&p);
                Block {
                    stmts: Vec::new(),
                    tail: Some(Expr::Match(Box::new(scrut), arms)),
                }
            }
        };
        self.scope.clear();
        self.fns[fi].body = body;
    }

    /// `acc = acc + <int from e>`, recursing through `fold` (function `fi`) for `Named(t)`.
    fn fold_field(&mut self, fi: usize, t: usize, ty: &Ty, e: Expr, acc: &B, out: &mut Vec<Stmt>) {
        let v = self.int_of(fi, t, ty, e, 2);
        let sum = Expr::Bin(Op::Add, Box::new(self.use_var(acc)), Box::new(v));
        out.push(Stmt::Assign(acc.clone(), Vec::new(), sum));
    }

    /// An `int` computed from `e: ty`, recursing into values of type `t`.
    fn int_of(&mut self, fi: usize, t: usize, ty: &Ty, e: Expr, depth: usize) -> Expr {
        match ty {
            Ty::Named(x) if *x == t => Expr::Call(fi, vec![e], None),
            Ty::Int => e,
            Ty::Bool => Expr::ToInt(Box::new(e)),
            Ty::Str => Expr::Len(Box::new(e)),
            Ty::List(inner) if depth > 0 => {
                // A for loop can't be an expression: sum through a match on the length instead.
                let mark = self.scope.len();
                let n = self.fresh_local();
                let s = self.bind(n, Ty::Int, true);
                let x = self.fresh_local();
                let xb = self.bind(x, (**inner).clone(), false);
                let xv = self.use_var(&xb);
                let body_v = self.int_of(fi, t, inner, xv, depth - 1);
                let add = Expr::Bin(Op::Add, Box::new(self.use_var(&s)), Box::new(body_v));
                let tail = self.use_var(&s);
                self.scope.truncate(mark);
                if_expr(
                    Expr::Bool(true),
                    Block {
                        stmts: vec![
                            Stmt::Let(s.clone(), false, Expr::Int(0)),
                            Stmt::For(
                                xb,
                                e,
                                Block {
                                    stmts: vec![Stmt::Assign(s.clone(), Vec::new(), add)],
                                    tail: None,
                                },
                            ),
                        ],
                        tail: Some(tail),
                    },
                    Block {
                        stmts: Vec::new(),
                        tail: Some(Expr::Int(0)),
                    },
                )
            }
            Ty::Opt(inner) | Ty::Res(inner) if depth > 0 => {
                let mark = self.scope.len();
                let n = self.fresh_local();
                let xb = self.bind(n, (**inner).clone(), false);
                let xv = self.use_var(&xb);
                let v = self.int_of(fi, t, inner, xv, depth - 1);
                self.scope.truncate(mark);
                let (some, none) = if matches!(ty, Ty::Opt(_)) {
                    (Pat::Some(Box::new(Pat::Bind(xb))), Pat::None)
                } else {
                    (
                        Pat::Ok(Box::new(Pat::Bind(xb))),
                        Pat::Err(Box::new(Pat::Wild)),
                    )
                };
                let mut arms = vec![
                    Arm {
                        pat: some,
                        guard: None,
                        body: Body::Expr(v),
                    },
                    Arm {
                        pat: none,
                        guard: None,
                        body: Body::Expr(Expr::Int(7)),
                    },
                ];
                self.rng.shuffle(&mut arms);
                Expr::Match(Box::new(e), arms)
            }
            Ty::Float => Expr::ToInt(Box::new(e)),
            Ty::Map(_) => Expr::Len(Box::new(e)),
            _ => Expr::ToInt(Box::new(Expr::Bin(
                Op::Is,
                Box::new(e.clone()),
                Box::new(e),
            ))),
        }
    }

    // ---- tests ----

    fn gen_tests(&mut self) {
        let mut taken = self.fn_names();
        // Beside `fn main`, `vox_main` is reserved (vox/name/reserved).
        taken.push("vox_main".into());
        let targets: Vec<usize> = (0..self.fns.len())
            .filter(|&i| self.fns[i].kind != FnKind::Main)
            .collect();
        let mut tests = Vec::new();
        for fi in targets {
            for attempt in 0..4 {
                let args: Vec<Val> = self.fns[fi]
                    .params
                    .iter()
                    .map(|p| p.ty.clone())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(|t| self.value(t, 3))
                    .collect();
                let module = Module {
                    seed: 0,
                    multiline: false,
                    types: self.types.clone(),
                    consts: self.consts.clone(),
                    fns: self.fns.clone(),
                    hidden: Vec::new(),
                };
                let mut it = Interp::new(&module);
                let Ok(v) = it.call(fi, args.clone()) else {
                    continue;
                };
                let name = {
                    let mut n = format!("{}_{attempt}", self.fns[fi].name.trim_start_matches("r#"));
                    if self.f.tricky_names && self.rng.chance(20) {
                        let alt = self.value_name();
                        if !taken.contains(&alt) && alt != "main" {
                            n = alt;
                        }
                    }
                    if taken.contains(&n) {
                        self.counter += 1;
                        n = format!("t{}", self.counter);
                    }
                    taken.push(n.clone());
                    n
                };
                let arg_exprs: Vec<Expr> = args.iter().map(|a| self.val_expr(a)).collect();
                let call = Expr::Call(fi, arg_exprs, None);
                let mut stmts = Vec::new();
                if let Some(rt) = self.fns[fi].ret.clone() {
                    let got = Rc::new(Binding {
                        name: "got".into(),
                        ty: rt.clone(),
                        mutable: false,
                        used: Cell::new(true),
                        unread: Cell::new(false),
                    });
                    let want = Rc::new(Binding {
                        name: "expected".into(),
                        ty: rt.clone(),
                        mutable: false,
                        used: Cell::new(true),
                        unread: Cell::new(false),
                    });
                    stmts.push(Stmt::Let(got.clone(), false, call));
                    stmts.push(Stmt::Let(want.clone(), true, self.val_expr(&v)));
                    if self.rng.chance(80) {
                        stmts.push(Stmt::AssertEq(Expr::Var(got), Expr::Var(want)));
                    } else {
                        stmts.push(Stmt::Assert(Expr::Bin(
                            Op::Is,
                            Box::new(Expr::Var(got)),
                            Box::new(Expr::Var(want)),
                        )));
                    }
                } else {
                    stmts.push(Stmt::Expr(call));
                }
                tests.push(Func {
                    name,
                    params: Vec::new(),
                    ret: None,
                    body: Block { stmts, tail: None },
                    kind: FnKind::Test,
                });
                break;
            }
        }
        // Entry points called (the checker rejects these now).
        if let Some(mi) = self.fns.iter().position(|f| f.kind == FnKind::Main) {
            if self.f.call_tests && self.rng.chance(50) {
                tests.push(Func {
                    name: format!("calls_main_{}", self.fns.len()),
                    params: Vec::new(),
                    ret: None,
                    body: Block {
                        stmts: vec![Stmt::Expr(Expr::Call(mi, Vec::new(), None))],
                        tail: None,
                    },
                    kind: FnKind::Test,
                });
            }
        }
        self.fns.extend(tests);
        if self.f.call_tests && self.rng.chance(20) {
            if let Some(ti) = self.fns.iter().position(|f| f.kind == FnKind::Test) {
                self.fns.push(Func {
                    name: format!("calls_test_{}", self.fns.len()),
                    params: Vec::new(),
                    ret: None,
                    body: Block {
                        stmts: vec![Stmt::Expr(Expr::Call(ti, Vec::new(), None))],
                        tail: None,
                    },
                    kind: FnKind::Test,
                });
            }
        }
    }

    /// A random value of `t` (for test arguments).
    fn value(&mut self, t: &Ty, depth: usize) -> Val {
        match t {
            Ty::Int => Val::Int(self.lit_int() - 3),
            Ty::Float => Val::Float(*self.rng.pick(FLOATS)),
            Ty::Dec => Val::dec_text(DECIMALS[self.rng.below(DECIMALS.len())]),
            Ty::Bool => Val::Bool(self.rng.chance(50)),
            Ty::Str => Val::Str(self.rng.pick(STRINGS).to_string()),
            Ty::List(i) => {
                let n = if depth == 0 { 0 } else { self.rng.below(4) };
                Val::List((0..n).map(|_| self.value(i, depth - 1)).collect())
            }
            Ty::Map(i) => {
                let n = if depth == 0 { 0 } else { self.rng.below(4) };
                let mut m = std::collections::BTreeMap::new();
                for _ in 0..n {
                    let k = self.rng.pick(STRINGS).to_string();
                    let v = self.value(i, depth - 1);
                    m.insert(k, v);
                }
                Val::Map(m)
            }
            Ty::Opt(i) => {
                if depth == 0 || self.rng.chance(35) {
                    Val::Opt(None)
                } else {
                    Val::Opt(Some(Box::new(self.value(i, depth - 1))))
                }
            }
            Ty::Res(i) => {
                if depth == 0 || self.rng.chance(35) {
                    Val::Res(Err(self.rng.pick(STRINGS).to_string()))
                } else {
                    Val::Res(Ok(Box::new(self.value(i, depth - 1))))
                }
            }
            Ty::Named(x) => {
                let x = *x;
                let d = depth.saturating_sub(1);
                match self.types[x].kind.clone() {
                    TypeKind::Record(fs) => {
                        Val::Rec(x, fs.iter().map(|f| self.value(&f.ty, d)).collect())
                    }
                    TypeKind::Sum(vs) => {
                        let vi = self.rng.below(vs.len());
                        Val::Var(
                            x,
                            vi,
                            vs[vi].fields.iter().map(|f| self.value(&f.ty, d)).collect(),
                        )
                    }
                }
            }
        }
    }

    /// A Vox expression that evaluates to `v`.
    fn val_expr(&mut self, v: &Val) -> Expr {
        match v {
            Val::Int(n) if *n < 0 => Expr::Neg(Box::new(Expr::Int(-n))),
            Val::Int(n) => Expr::Int(*n),
            Val::Float(x) if x.is_sign_negative() => Expr::Neg(Box::new(Expr::Float(-x))),
            Val::Float(x) => Expr::Float(*x),
            Val::Dec(_, _, text) => Expr::DecStr(text.clone()),
            Val::Bool(b) => Expr::Bool(*b),
            Val::Str(s) => Expr::Str(s.clone()),
            Val::Unit => Expr::Int(0),
            Val::List(xs) => Expr::List(xs.iter().map(|x| self.val_expr(x)).collect()),
            Val::Map(m) => Expr::Map(
                m.iter()
                    .map(|(k, v)| (Expr::Str(k.clone()), self.val_expr(v)))
                    .collect(),
            ),
            Val::Opt(None) => Expr::None,
            Val::Opt(Some(x)) => Expr::Some(Box::new(self.val_expr(x))),
            Val::Res(Ok(x)) => Expr::Ok(Box::new(self.val_expr(x))),
            Val::Res(Err(s)) => Expr::Err(Box::new(Expr::Str(s.clone()))),
            Val::Rec(t, fs) => Expr::Record(
                *t,
                fs.iter()
                    .enumerate()
                    .map(|(i, f)| (i, self.val_expr(f)))
                    .collect(),
            ),
            Val::Var(t, vi, fs) => {
                let vals = fs.iter().map(|f| self.val_expr(f)).collect();
                let named = if fs.is_empty() {
                    None
                } else {
                    Some((0..fs.len()).collect())
                };
                Expr::Variant(*t, *vi, vals, named)
            }
        }
    }
}

#[derive(Debug, Clone)]
enum PatShape {
    Wild,
    Bind(Ty),
    Int(i64),
    Bool(bool),
    Str(String),
    None,
    Some(Box<PatShape>),
    Ok(Box<PatShape>),
    Err(Box<PatShape>),
    Variant(usize, usize, Vec<PatShape>),
    Or(Vec<PatShape>),
}

fn shape_binds(p: &PatShape) -> bool {
    match p {
        PatShape::Bind(_) => true,
        PatShape::Some(i) | PatShape::Ok(i) | PatShape::Err(i) => shape_binds(i),
        PatShape::Variant(_, _, ps) | PatShape::Or(ps) => ps.iter().any(shape_binds),
        _ => false,
    }
}

fn pat_binds(p: &Pat) -> Vec<B> {
    let mut out = Vec::new();
    fn walk(p: &Pat, out: &mut Vec<B>) {
        match p {
            Pat::Bind(b) => out.push(b.clone()),
            Pat::Some(i) | Pat::Ok(i) | Pat::Err(i) => walk(i, out),
            Pat::Variant(_, _, ps) | Pat::Or(ps) => ps.iter().for_each(|p| walk(p, out)),
            _ => {}
        }
    }
    walk(p, &mut out);
    out
}

/// The text of a string literal key (through parentheses), which a map
/// literal may not repeat.
fn literal_text(e: &Expr) -> Option<&str> {
    match e {
        Expr::Str(s) => Some(s),
        Expr::Paren(x) => literal_text(x),
        _ => None,
    }
}

fn if_expr(c: Expr, t: Block, e: Block) -> Expr {
    Expr::If(Box::new(c), Box::new(t), Box::new(e))
}

/// Whether `e` reads exactly the place `b.path…` (a self-assignment).
fn same_place(b: &B, path: &[(usize, usize)], e: &Expr) -> bool {
    match (e, path.split_last()) {
        (Expr::Var(v), None) => Rc::ptr_eq(v, b),
        (Expr::Field(base, t, fi), Some((&(pt, pfi), rest))) => {
            *t == pt && *fi == pfi && same_place(b, rest, base)
        }
        (Expr::Paren(x), _) => same_place(b, path, x),
        _ => false,
    }
}

/// Whether the checker can tell the type of `e` without an expected type
/// (conservative: any `None`, `[]` or `Error(…)` that no sibling pins down is open).
fn self_typed(e: &Expr) -> bool {
    let block = |b: &Block| b.tail.as_ref().is_some_and(self_typed);
    match e {
        Expr::None | Expr::Err(_) => false,
        Expr::List(xs) => !xs.is_empty() && xs.iter().all(self_typed),
        Expr::Map(es) => !es.is_empty() && es.iter().all(|(_, v)| self_typed(v)),
        Expr::Builtin(Bi::Insert, xs) => self_typed(&xs[0]) && self_typed(&xs[2]),
        Expr::Builtin(Bi::Remove, xs) => self_typed(&xs[0]),
        Expr::Some(x) | Expr::Ok(x) | Expr::Paren(x) => self_typed(x),
        Expr::Bin(Op::Add, l, r) => self_typed(l) && self_typed(r),
        Expr::If(_, t, f) => block(t) && block(f),
        // The element type comes from the list, `map`'s from the body.
        Expr::HigherOrder(Ho::Map, _, f) => match &**f {
            FnArg::Lambda {
                body: Body::Expr(e),
                ..
            } => self_typed(e),
            FnArg::Lambda {
                body: Body::Block(b),
                ..
            } => block(b),
            FnArg::Named(_) => true,
        },
        Expr::Match(_, arms) => arms.iter().all(|a| match &a.body {
            Body::Expr(e) => self_typed(e),
            Body::Block(b) => block(b),
        }),
        _ => true,
    }
}
