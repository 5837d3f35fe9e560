//! The outline of a file: types with their fields or variants, and
//! functions, in the order written.

use crate::ast::{Field, Item, TypeDeclKind};
use crate::source::{FileId, Span};
use crate::Checked;

/// What an outline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineKind {
    Record,
    Sum,
    Variant,
    Field,
    Function,
    /// `const NAME = …`.
    Constant,
}

/// One entry of the outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineItem {
    /// As written (empty when the parser recovered a declaration without one).
    pub name: String,
    /// A field's type, a function's `to R`.
    pub detail: Option<String>,
    pub kind: OutlineKind,
    /// The whole declaration.
    pub span: Span,
    /// Its name.
    pub name_span: Span,
    pub children: Vec<OutlineItem>,
}

fn fields(fs: &[Field]) -> Vec<OutlineItem> {
    fs.iter()
        .map(|f| OutlineItem {
            name: f.name.name.clone(),
            detail: Some(f.ty.to_string()),
            kind: OutlineKind::Field,
            span: f.span,
            name_span: f.name.span,
            children: Vec::new(),
        })
        .collect()
}

/// The types and functions declared in `file`.
pub fn outline(checked: &Checked, file: FileId) -> Vec<OutlineItem> {
    let mut out = Vec::new();
    for item in &checked.module.items {
        match item {
            Item::Type(t) if t.name.span.file == file => {
                let (kind, children) = match &t.kind {
                    TypeDeclKind::Record(fs) => (OutlineKind::Record, fields(fs)),
                    // A string enum, whose cases each call supplies.
                    TypeDeclKind::Dynamic(_) => (OutlineKind::Sum, Vec::new()),
                    TypeDeclKind::Sum(vs) => (
                        OutlineKind::Sum,
                        vs.iter()
                            .map(|v| OutlineItem {
                                name: v.name.name.clone(),
                                detail: None,
                                kind: OutlineKind::Variant,
                                span: v.span,
                                name_span: v.name.span,
                                children: fields(&v.fields),
                            })
                            .collect(),
                    ),
                };
                out.push(OutlineItem {
                    name: t.name.name.clone(),
                    detail: None,
                    kind,
                    span: t.span,
                    name_span: t.name.span,
                    children,
                });
            }
            Item::Fn(f) if f.name.span.file == file => out.push(OutlineItem {
                name: f.name.name.clone(),
                detail: f.ret.as_ref().map(|r| format!("to {r}")),
                kind: OutlineKind::Function,
                span: f.span,
                name_span: f.name.span,
                children: Vec::new(),
            }),
            Item::Const(c) if c.name.span.file == file => out.push(OutlineItem {
                name: c.name.name.clone(),
                detail: c.ty.as_ref().map(|t| format!(": {t}")),
                kind: OutlineKind::Constant,
                span: c.span,
                name_span: c.name.span,
                children: Vec::new(),
            }),
            _ => {}
        }
    }
    out
}
