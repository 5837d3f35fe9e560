//! A seeded generator of well-typed Vox modules, with a reference
//! evaluator, for the differential test (`tests/tests/it/differential.rs`).
//!
//! [`generate`] builds a module from a seed: records and sum types
//! (recursive through `list`, `Option`, `Option[Option[T]]`,
//! `Option[Result[T]]`, …), functions made of every statement, expression
//! and pattern form, fold functions that recurse over the recursive types,
//! `@ai`/`@uses(net)` functions, and `@test` functions. Names mix ordinary
//! words with Rust keywords, `_`-suffixed forms, std prelude items, serde
//! internals and the emitter's own helper names.
//!
//! Every `@test` asserts a value the generator computed itself by running
//! the function in [`Interp`], so a program that compiles but computes the
//! wrong value fails its test. The generator keeps programs terminating and
//! free of overflow and division by zero: divisors are non-zero literals,
//! and a test whose evaluation leaves small bounds is dropped.
//!
//! The generated module is meant to check clean (no errors, no warnings):
//! unused bindings get a leading `_`, `let mut` is only used for variables
//! that are assigned, and `match` arms are exhaustive and all reachable.
//!
//! The module is split by concern: the program's shape and the knobs
//! (this file), `generate.rs` (choosing a program from a seed),
//! `render.rs` (writing it as Vox source) and `eval.rs` (the reference
//! evaluator, [`Interp`]).

mod eval;
mod generate;
mod render;

pub use eval::{Interp, Stop, Val};
pub use generate::generate;
pub use render::vox_str;

use std::cell::Cell;
use std::rc::Rc;

/// splitmix64: tiny, seedable, good enough to pick programs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x005e_ed0f_d1ff)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.next_u64() % 100 < pct
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

/// The program forms the generator may use. All are on by default; the
/// known-bug kinds can be switched off one by one to tell them apart.
#[derive(Debug, Clone)]
pub struct Features {
    /// Names that are Rust keywords, `_`-suffixed keywords, prelude items,
    /// serde internals and emitter helper names.
    pub tricky_names: bool,
    /// Empty `[]` / `None` where only the context gives the element type.
    pub empty_literals: bool,
    /// Recursive fields through `Option[Option[T]]` and `Option[Result[T]]`.
    pub deep_recursion: bool,
    /// `@ai` and `@uses(net)` functions (including recursive ones).
    pub net: bool,
    /// `fn main` (a library's `vox_main`).
    pub main_fn: bool,
    /// Value-producing expression statements (`f(x)`, a match whose arms
    /// have values): `vox/lint/unused-value` warns about them now, so they
    /// are off by default.
    pub value_statements: bool,
    /// `let mut x = a` followed by `x = b` before any read (a dead store).
    pub dead_stores: bool,
    /// Type and variant names that are not UpperCamelCase.
    pub non_camel_names: bool,
    /// Locals and parameters named like a function that is called in their scope.
    pub local_shadows_fn: bool,
    /// Calls of `@test` functions and of `fn main` (rejected since
    /// `vox/test/called` and `vox/main/called`: off by default).
    pub call_tests: bool,
    /// Parenthesized `match`/`if` heads (`match (A(x: 1))`).
    pub paren_heads: bool,
    /// `Decimal` values (`decimal("12.50")`, exact `+ - *`, comparisons, conversions).
    pub decimal: bool,
    /// Or-patterns (`A | B =>`, nested `Some(1 | 2)`) and guarded arms (`x if c =>`).
    pub patterns: bool,
    /// `while` loops, `break`/`continue` in loop bodies, `for i in range(…)`.
    pub loops: bool,
    /// The list and text builtins (`first`, `sort`, `sum`, `join`, `fixed`, …).
    pub builtins: bool,
    /// `map[str, T]` values: literals, `[:]`, `insert`, `remove`, `keys`,
    /// `values`, `get` (with and without a default), `contains`, `len`.
    pub maps: bool,
    /// `map`, `filter`, `find`, `any`, `all`, `count`, `sort_by` and
    /// `group_by` with lambdas (expression and block bodies, returns,
    /// captures, nesting) and functions passed by name.
    pub lambdas: bool,
    /// Module-level `const`s (of base types, computed from literals,
    /// builtins and lambdas, some with a `return` in a block).
    pub constants: bool,
    /// Strings with newlines written as multi-line `"""` strings.
    pub multiline: bool,
    /// Record patterns (`R { f: 3, g, .. }`) as refutable match arms.
    pub record_patterns: bool,
    /// Date arithmetic: `date(…)`, `add_days`, `days_between`, `year`,
    /// `month`, `day`, comparisons.
    pub dates: bool,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            tricky_names: true,
            empty_literals: true,
            deep_recursion: true,
            net: true,
            main_fn: true,
            value_statements: false,
            dead_stores: true,
            non_camel_names: true,
            local_shadows_fn: true,
            call_tests: false,
            paren_heads: true,
            decimal: true,
            patterns: true,
            loops: true,
            builtins: true,
            maps: true,
            lambdas: true,
            constants: true,
            multiline: true,
            record_patterns: true,
            dates: true,
        }
    }
}

// ---- the generated program ---------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Int,
    Float,
    Dec,
    Bool,
    Str,
    List(Box<Ty>),
    Opt(Box<Ty>),
    Res(Box<Ty>),
    /// `map[str, T]`.
    Map(Box<Ty>),
    Named(usize),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone)]
pub enum TypeKind {
    Record(Vec<Field>),
    Sum(Vec<Variant>),
}

#[derive(Debug, Clone)]
pub struct TypeDef {
    pub name: String,
    pub kind: TypeKind,
    /// Refers to itself (through list/Option wrappers).
    pub recursive: bool,
}

/// A variable: a `let`, parameter, `for` or pattern binding.
#[derive(Debug)]
pub struct Binding {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    used: Cell<bool>,
    /// Assigned since the last read (a store nothing reads yet).
    unread: Cell<bool>,
}

type B = Rc<Binding>;

impl Binding {
    fn rendered(&self) -> String {
        if self.used.get() || self.name.starts_with('_') {
            self.name.clone()
        } else {
            format!("_{}", self.name)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Is,
    Isnt,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl Op {
    fn sym(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Is => "is",
            Op::Isnt => "isnt",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::And => "and",
            Op::Or => "or",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    Int(i64),
    /// `-9223372036854775808` (i64::MIN, whose magnitude is no i64).
    IntMin,
    /// `decimal("text")`.
    DecStr(String),
    /// `decimal(e)` of an `int`.
    DecOf(Box<Expr>),
    Float(f64),
    Str(String),
    Bool(bool),
    Var(B),
    /// Field `f` of record type `t`.
    Field(Box<Expr>, usize, usize),
    /// Function index, arguments in parameter order, and whether they are
    /// written with names (then in `order`).
    Call(usize, Vec<Expr>, Option<Vec<usize>>),
    Len(Box<Expr>),
    /// `range(a)` or `range(a, b)`.
    Range(Box<Expr>, Option<Box<Expr>>),
    /// A list or text builtin (`first(xs)`, `join(xs, sep)`, …) and its arguments.
    Builtin(Bi, Vec<Expr>),
    /// `f"…{e}…"`: literal text (`Ok`) and interpolated values (`Err`).
    FStr(Vec<Result<String, Expr>>),
    /// `try f(x)` of a call of a network function: its outcome as a `Result`.
    Try(Box<Expr>),
    ToStr(Box<Expr>),
    ToInt(Box<Expr>),
    ToFloat(Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Block>, Box<Block>),
    Match(Box<Expr>, Vec<Arm>),
    List(Vec<Expr>),
    /// `["k": v, …]`, `[:]` when empty.
    Map(Vec<(Expr, Expr)>),
    Some(Box<Expr>),
    None,
    Ok(Box<Expr>),
    Err(Box<Expr>),
    /// Record type, fields as (field index, value) in written order.
    Record(usize, Vec<(usize, Expr)>),
    /// Sum type, variant, values in field order, written with names (in `order`) or positionally.
    Variant(usize, usize, Vec<Expr>, Option<Vec<usize>>),
    /// `(e)`: explicit parentheses (for heads).
    Paren(Box<Expr>),
    /// `map(xs, f)` and the other builtins taking a list and a function.
    HigherOrder(Ho, Box<Expr>, Box<FnArg>),
    /// A use of module constant `i`.
    Const(usize),
    /// `days_between(a, b)`.
    DaysBetween(Box<DateE>, Box<DateE>),
    /// `year(d)` (0), `month(d)` (1), `day(d)` (2).
    DatePart(u8, Box<DateE>),
    /// `a < b`, `a is b`, … of two dates.
    DateCmp(Op, Box<DateE>, Box<DateE>),
}

/// A `Date`-valued expression (dates appear only inside an `int` or
/// `bool` expression).
#[derive(Debug, Clone)]
pub enum DateE {
    /// `date("2026-12-31")`.
    Lit(String),
    /// `add_days(d, n)`.
    Add(Box<DateE>, Box<Expr>),
}

/// `const NAME = value` (or `const NAME: T = value`).
#[derive(Debug, Clone)]
pub struct Const {
    pub name: String,
    pub ty: Ty,
    pub value: Expr,
    pub annotated: bool,
}

/// The builtins taking a list and a function of its element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ho {
    Map,
    Filter,
    Find,
    Any,
    All,
    Count,
    SortBy,
    GroupBy,
}

impl Ho {
    fn name(self) -> &'static str {
        match self {
            Ho::Map => "map",
            Ho::Filter => "filter",
            Ho::Find => "find",
            Ho::Any => "any",
            Ho::All => "all",
            Ho::Count => "count",
            Ho::SortBy => "sort_by",
            Ho::GroupBy => "group_by",
        }
    }
}

/// The function argument of a [`Ho`] builtin.
#[derive(Debug, Clone)]
pub enum FnArg {
    /// `fn(x) => e`, `fn(x: T) => e`, or `fn(x) { … }`.
    Lambda {
        param: B,
        annotated: bool,
        body: Body,
    },
    /// A plain function of one parameter, passed by name.
    Named(usize),
}

/// The list and text builtins the generator uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bi {
    First,
    Last,
    Get,
    Contains,
    Sort,
    Reverse,
    Sum,
    /// `sum` of a `list[float]` (an empty one is `0.0`, not `0`).
    SumFloat,
    /// `sum` of a `list[Decimal]` (an empty one is `0`).
    SumDec,
    /// `div(a, b, places)` or `div(a, b, places, mode)` of `Decimal`s.
    DivDec,
    /// `round(d, places)` or `round(d, places, mode)` of a `Decimal`.
    RoundDec,
    Min,
    Max,
    Join,
    Split,
    Trim,
    Lower,
    Upper,
    StartsWith,
    EndsWith,
    Fixed,
    /// `insert(m, k, v)`.
    Insert,
    /// `remove(m, k)`.
    Remove,
    Keys,
    Values,
    /// `get(m, k, default)` or `get(xs, i, default)`.
    GetOr,
    /// `parse_int(s)`, an `Option[int]`.
    ParseInt,
    /// `parse_float(s)`, an `Option[float]`.
    ParseFloat,
}

impl Bi {
    fn name(self) -> &'static str {
        match self {
            Bi::First => "first",
            Bi::Last => "last",
            Bi::Get => "get",
            Bi::Contains => "contains",
            Bi::Sort => "sort",
            Bi::Reverse => "reverse",
            Bi::Sum | Bi::SumFloat | Bi::SumDec => "sum",
            Bi::Min => "min",
            Bi::Max => "max",
            Bi::Join => "join",
            Bi::Split => "split",
            Bi::Trim => "trim",
            Bi::Lower => "lower",
            Bi::Upper => "upper",
            Bi::StartsWith => "starts_with",
            Bi::EndsWith => "ends_with",
            Bi::Fixed => "fixed",
            Bi::DivDec => "div",
            Bi::RoundDec => "round",
            Bi::Insert => "insert",
            Bi::Remove => "remove",
            Bi::Keys => "keys",
            Bi::Values => "values",
            Bi::GetOr => "get",
            Bi::ParseInt => "parse_int",
            Bi::ParseFloat => "parse_float",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Pat {
    Wild,
    Bind(B),
    Int(i64),
    Bool(bool),
    Str(String),
    None,
    Some(Box<Pat>),
    Ok(Box<Pat>),
    Err(Box<Pat>),
    /// Sum type, variant, field patterns (empty: `V` without arguments).
    Variant(usize, usize, Vec<Pat>),
    /// `A | B`: alternatives without bindings.
    Or(Vec<Pat>),
    /// Record type, (field, pattern) in written order, and whether `..` ends it.
    Record(usize, Vec<(usize, Pat)>, bool),
}

#[derive(Debug, Clone)]
pub struct Arm {
    pub pat: Pat,
    /// `if cond` after the pattern.
    pub guard: Option<Expr>,
    pub body: Body,
}

#[derive(Debug, Clone)]
pub enum Body {
    Expr(Expr),
    Block(Block),
}

#[derive(Debug, Clone, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Expr>,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Let(B, bool, Expr),
    /// Variable, field path (type, field) pairs, value.
    Assign(B, Vec<(usize, usize)>, Expr),
    Return(Option<Expr>),
    If(Expr, Block, Option<Block>),
    Match(Expr, Vec<Arm>),
    For(B, Expr, Block),
    While(Expr, Block),
    Break,
    Continue,
    Expr(Expr),
    Print(Expr),
    Assert(Expr),
    AssertEq(Expr, Expr),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FnKind {
    Plain,
    Net,
    Ai,
    Main,
    Test,
}

#[derive(Debug, Clone)]
pub struct Func {
    pub name: String,
    pub params: Vec<B>,
    pub ret: Option<Ty>,
    pub body: Block,
    pub kind: FnKind,
}

impl Func {
    fn net(&self) -> bool {
        matches!(self.kind, FnKind::Net | FnKind::Ai)
    }
}

#[derive(Debug, Clone)]
pub struct Module {
    pub seed: u64,
    pub types: Vec<TypeDef>,
    pub consts: Vec<Const>,
    /// Render strings with newlines as multi-line strings.
    pub multiline: bool,
    pub fns: Vec<Func>,
    /// Functions left out when rendering (for shrinking a failing module).
    pub hidden: Vec<usize>,
}
