//! Queries over expressions (the empty-list and calls-anything ones, on
//! the AST's walker) and compact renderings of expressions for messages.

use crate::ast::*;

/// Whether `e` contains an empty list literal.
pub(super) fn has_empty_list(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if matches!(&x.kind, ExprKind::List(items) if items.is_empty())
            || matches!(&x.kind, ExprKind::Map(entries) if entries.is_empty())
        {
            found = true;
        }
    });
    found
}

/// Whether evaluating `e` calls a function or builtin (and so may have an
/// effect); expression statements that call nothing only compute a value.
pub(crate) fn calls_anything(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if let ExprKind::Call { .. } = x.kind {
            found = true;
        }
    });
    found
}

/// A compact rendering of an expression for messages (depth-limited).
pub(super) fn expr_sketch(e: &Expr, depth: usize) -> String {
    if depth > 3 {
        return "…".into();
    }
    match &e.kind {
        ExprKind::Int(n) => n.to_string(),
        ExprKind::Float(x) => format!("{x:?}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Var(n) => n.clone(),
        ExprKind::Field { base, name } => format!("{}.{}", expr_sketch(base, depth + 1), name.name),
        ExprKind::Call { callee, args }
        | ExprKind::Ctor {
            name: callee,
            args: Some(args),
        } => format!(
            "{}({})",
            callee.name,
            args.iter()
                .map(|a| expr_sketch(&a.value, depth + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Ctor { name, args: None } => name.name.clone(),
        ExprKind::Unary { op, expr } => {
            let inner = expr_sketch(expr, depth + 1);
            match op {
                // `-(-5)`, not `--5`: a negative literal is one token's worth.
                UnaryOp::Neg if inner.starts_with('-') => format!("-({inner})"),
                UnaryOp::Neg => format!("-{inner}"),
                UnaryOp::Not => format!("not {inner}"),
            }
        }
        ExprKind::Binary { op, lhs, rhs } => format!(
            "{} {} {}",
            expr_sketch(lhs, depth + 1),
            op.symbol(),
            expr_sketch(rhs, depth + 1)
        ),
        ExprKind::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| expr_sketch(i, depth + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Map(entries) if entries.is_empty() => "[:]".into(),
        ExprKind::Map(entries) => format!(
            "[{}]",
            entries
                .iter()
                .map(|m| format!(
                    "{}: {}",
                    expr_sketch(&m.key, depth + 1),
                    expr_sketch(&m.value, depth + 1)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Record { name, .. } => format!("{} {{ … }}", name.name),
        _ => "…".into(),
    }
}
