//! The untyped syntax tree, as the parser produces it.
//!
//! Plain data: every node has a span, doc comments are kept (they become
//! prompts and schema descriptions), and every expression has an
//! [`ExprId`] so later stages can attach facts (types, resolutions) in side
//! tables instead of mutating the tree.
//!
//! The tree records everything the parser read (each statement's span,
//! `pub`, a `bool` decorator value) whether or not a later stage reads it
//! yet, so a field no stage uses is not dead code to delete.
#![allow(dead_code)]

use crate::source::Span;

/// All items of every `.vox` file of one package (one package = one module).
#[derive(Debug, Clone, Default)]
pub struct Module {
    pub items: Vec<Item>,
    /// Number of expression ids handed out (ids are `0..expr_count`).
    pub expr_count: u32,
}

impl Module {
    /// The function declared by item `item` (a [`FnInfo`]'s `item`), if
    /// that item is a function.
    ///
    /// [`FnInfo`]: crate::check::FnInfo
    pub fn fn_decl(&self, item: usize) -> Option<&FnDecl> {
        match self.items.get(item) {
            Some(Item::Fn(f)) => Some(f),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Item {
    Type(TypeDecl),
    Fn(FnDecl),
    Const(ConstDecl),
    Example(ExampleDecl),
}

/// `example f(args) => value`: a worked example of the `@ai` function `f`
/// (docs/language.md, "Worked examples").
#[derive(Debug, Clone)]
pub struct ExampleDecl {
    /// The call, checked like any call of `f`.
    pub call: Expr,
    /// The answer, checked against `f`'s return type.
    pub output: Expr,
    pub span: Span,
}

/// `const NAME = expr` or `const NAME: T = expr` at module level
/// (docs/language.md, "Constants").
#[derive(Debug, Clone)]
pub struct ConstDecl {
    pub docs: Vec<String>,
    pub is_pub: bool,
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub docs: Vec<String>,
    pub decorators: Vec<Decorator>,
    pub is_pub: bool,
    pub name: Ident,
    pub kind: TypeDeclKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum TypeDeclKind {
    Record(Vec<Field>),
    Sum(Vec<Variant>),
    /// `type Category = dynamic`: text whose allowed values each call
    /// supplies (docs/language.md, "Categories known at run time"); the
    /// span is the `dynamic` word's.
    Dynamic(Span),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub docs: Vec<String>,
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub docs: Vec<String>,
    pub name: Ident,
    pub fields: Vec<Field>,
    pub span: Span,
}

/// A written type: `int`, `Invoice`, `list[LineItem]`, `Option[str]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeExpr {
    pub name: Ident,
    pub args: Vec<TypeExpr>,
    pub span: Span,
}

impl std::fmt::Display for TypeExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name.name)?;
        if !self.args.is_empty() {
            f.write_str("[")?;
            for (i, a) in self.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{a}")?;
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Decorator {
    pub name: Ident,
    pub args: Vec<DecoratorArg>,
    pub span: Span,
}

/// `name = value`, `name: value`, or a bare `name` (as in `@uses(net)`).
#[derive(Debug, Clone)]
pub struct DecoratorArg {
    pub name: Ident,
    pub value: Option<DecoratorValue>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct DecoratorValue {
    pub kind: DecoratorValueKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum DecoratorValueKind {
    Type(TypeExpr),
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    /// `[v, …]`, e.g. `fallback = ["openai:gpt-4o-mini"]`.
    List(Vec<DecoratorValue>),
    /// A value that was already reported as invalid.
    Invalid,
}

#[derive(Debug, Clone)]
pub struct FnDecl {
    pub docs: Vec<String>,
    pub decorators: Vec<Decorator>,
    pub is_pub: bool,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    /// From the first doc comment or decorator to the closing brace.
    pub span: Span,
    /// The `pub` or `fn` keyword: where a missing decorator line is inserted.
    pub head: Span,
    /// The body had syntax errors; lints that assume a complete body are skipped.
    pub recovered: bool,
    /// A `@rust` declaration: no body, the crate implements it.
    pub external: bool,
}

impl FnDecl {
    pub fn decorator(&self, name: &str) -> Option<&Decorator> {
        self.decorators.iter().find(|d| d.name.name == name)
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        value: Expr,
        span: Span,
    },
    /// `let Invoice { vendor, total, .. } = value`: a record pattern that
    /// matches every value, binding its names (docs/language.md, "Record
    /// patterns").
    LetPattern {
        pattern: Pattern,
        value: Expr,
        span: Span,
    },
    Assign {
        target: Expr,
        value: Expr,
        span: Span,
    },
    Return {
        value: Option<Expr>,
        span: Span,
    },
    For {
        var: Ident,
        iter: Expr,
        body: Block,
        span: Span,
    },
    /// `while cond { … }`
    While {
        cond: Expr,
        body: Block,
        span: Span,
    },
    /// `break`: leaves the innermost `for` or `while`.
    Break(Span),
    /// `continue`: starts the innermost loop's next round.
    Continue(Span),
    Expr(Expr),
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let { span, .. }
            | Stmt::LetPattern { span, .. }
            | Stmt::Assign { span, .. }
            | Stmt::Return { span, .. }
            | Stmt::For { span, .. }
            | Stmt::While { span, .. }
            | Stmt::Break(span)
            | Stmt::Continue(span) => *span,
            Stmt::Expr(e) => e.span,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

#[derive(Debug, Clone)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A lowercase name: a local variable (or, misused, a function).
    Var(String),
    /// `Paid`, `None`, `Some(x)`, `Open(days_overdue: 3)`, `Ok(v)`, `Error(e)`:
    /// `args` is `None` when written without parentheses.
    Ctor {
        name: Ident,
        args: Option<Vec<Arg>>,
    },
    /// `Invoice { vendor: "ACME", … }`
    Record {
        name: Ident,
        fields: Vec<FieldInit>,
    },
    List(Vec<Expr>),
    /// `["a": 1, "b": 2]`, `[:]`: a `map[str, T]` (docs/language.md, "Maps").
    Map(Vec<MapEntry>),
    /// `name(args)`: calls are always of a named function or builtin.
    Call {
        callee: Ident,
        args: Vec<Arg>,
    },
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Block>,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Arm>,
        /// A syntax error inside the arms (reported): an arm may be missing,
        /// so the match is not judged for exhaustiveness.
        recovered: bool,
    },
    /// `try f(x)`: the outcome of a network call as a `Result` instead of
    /// a failure of the caller.
    Try(Box<Expr>),
    /// A `{ … }` block as a match arm body (or a block lambda's body).
    Block(Block),
    /// `fn(x) => x.total > 10`, `fn(x: Invoice) { … }`: a function value,
    /// passed to a builtin such as `filter` (docs/language.md, "Functions
    /// as arguments").
    Lambda(Box<Lambda>),
    /// Stands in for an expression that failed to parse (already reported).
    Error,
    /// An invalid expression (already reported) whose parts are still
    /// checked, so their names resolve and count as used.
    Poison(Vec<Expr>),
}

/// A lambda: its parameters and its body (an expression, or an
/// [`ExprKind::Block`] for the block form `fn(x) { … }`).
#[derive(Debug, Clone)]
pub struct Lambda {
    pub params: Vec<LambdaParam>,
    pub body: Expr,
    /// Written `fn(…) { … }` rather than `fn(…) => …`.
    pub block: bool,
    /// `fn(…)`: where messages about the lambda as a whole point.
    pub head: Span,
}

/// `x` or `x: Invoice` in a lambda's parameter list.
#[derive(Debug, Clone)]
pub struct LambdaParam {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

/// `key: value` in a map literal.
#[derive(Debug, Clone)]
pub struct MapEntry {
    pub key: Expr,
    pub value: Expr,
}

#[derive(Debug, Clone)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Expr,
}

#[derive(Debug, Clone)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "is",
            BinaryOp::NotEq => "isnt",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Arm {
    pub pattern: Pattern,
    /// `if cond` after the pattern: the arm is taken only when it holds (and
    /// so does not count toward exhaustiveness).
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum PatternKind {
    Wildcard,
    Binding(String),
    Int(i64),
    Str(String),
    Bool(bool),
    /// `Paid`, `Open(d)`, `Some(x)`, `None`, `Ok(v)`, `Error(e)`.
    Ctor {
        name: Ident,
        args: Option<Vec<Pattern>>,
    },
    /// `A | B | C`: matches what any alternative matches. Alternatives bind
    /// no names (docs/language.md, "Or-patterns and guards").
    Or(Vec<Pattern>),
    /// `Invoice { vendor: "ACME", total, .. }`: a record's fields; `total`
    /// alone binds the field to its name (docs/language.md, "Record
    /// patterns").
    Record {
        name: Ident,
        fields: Vec<FieldPattern>,
        /// The `..` that stands for the fields not written, if any.
        rest: Option<Span>,
    },
    /// A pattern already reported as invalid; it matches nothing.
    Invalid,
}

/// `field: pattern` in a record pattern (`field` alone is parsed as
/// `field: field`, a binding).
#[derive(Debug, Clone)]
pub struct FieldPattern {
    pub name: Ident,
    pub pattern: Pattern,
}

/// Visits every expression of a block (including those of nested blocks),
/// outer before inner.
pub(crate) fn walk_block<'m>(b: &'m Block, f: &mut dyn FnMut(&'m Expr)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { value, .. } | Stmt::LetPattern { value, .. } => walk_expr(value, f),
            Stmt::Assign { target, value, .. } => {
                walk_expr(target, f);
                walk_expr(value, f);
            }
            Stmt::Return { value, .. } => {
                if let Some(v) = value {
                    walk_expr(v, f);
                }
            }
            Stmt::For { iter, body, .. } => {
                walk_expr(iter, f);
                walk_block(body, f);
            }
            Stmt::While { cond, body, .. } => {
                walk_expr(cond, f);
                walk_block(body, f);
            }
            Stmt::Break(_) | Stmt::Continue(_) => {}
            Stmt::Expr(e) => walk_expr(e, f),
        }
    }
}

/// Visits `e` and every expression inside it, outer before inner.
pub(crate) fn walk_expr<'m>(e: &'m Expr, f: &mut dyn FnMut(&'m Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Poison(parts) => parts.iter().for_each(|p| walk_expr(p, f)),
        ExprKind::Ctor {
            args: Some(args), ..
        }
        | ExprKind::Call { args, .. } => args.iter().for_each(|a| walk_expr(&a.value, f)),
        ExprKind::Record { fields, .. } => fields.iter().for_each(|i| walk_expr(&i.value, f)),
        ExprKind::List(items) => items.iter().for_each(|i| walk_expr(i, f)),
        ExprKind::Map(entries) => entries.iter().for_each(|m| {
            walk_expr(&m.key, f);
            walk_expr(&m.value, f);
        }),
        ExprKind::Field { base, .. } | ExprKind::Try(base) => walk_expr(base, f),
        ExprKind::Unary { expr, .. } => walk_expr(expr, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        ExprKind::If { cond, then, els } => {
            walk_expr(cond, f);
            walk_block(then, f);
            if let Some(b) = els {
                walk_block(b, f);
            }
        }
        ExprKind::Match {
            scrutinee, arms, ..
        } => {
            walk_expr(scrutinee, f);
            for a in arms {
                if let Some(g) = &a.guard {
                    walk_expr(g, f);
                }
                walk_expr(&a.body, f);
            }
        }
        ExprKind::Block(b) => walk_block(b, f),
        ExprKind::Lambda(l) => walk_expr(&l.body, f),
        _ => {}
    }
}
