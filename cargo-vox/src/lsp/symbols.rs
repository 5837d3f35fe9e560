//! Document symbols (the outline): types with their fields or variants,
//! and functions.

use lsp_types::{DocumentSymbol, DocumentSymbolResponse, SymbolKind};
use vox_codegen::ast::{Field, Item, TypeDeclKind};
use vox_codegen::{FileId, Span};

use super::position::{Encoding, LineIndex};
use super::store::Analysis;

#[allow(deprecated)] // `deprecated` is a required field of the struct.
fn symbol(
    lines: &LineIndex,
    name: &str,
    detail: Option<String>,
    kind: SymbolKind,
    span: Span,
    name_span: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name: if name.is_empty() {
            "?".into()
        } else {
            name.into()
        },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: lines.range(span.to(name_span)),
        selection_range: lines.range(name_span),
        children: (!children.is_empty()).then_some(children),
    }
}

fn fields(lines: &LineIndex, fs: &[Field]) -> Vec<DocumentSymbol> {
    fs.iter()
        .map(|f| {
            symbol(
                lines,
                &f.name.name,
                Some(f.ty.to_string()),
                SymbolKind::FIELD,
                f.span,
                f.name.span,
                Vec::new(),
            )
        })
        .collect()
}

pub fn document_symbols(a: &Analysis, file: FileId, enc: Encoding) -> DocumentSymbolResponse {
    let lines = a.lines(file, enc);
    let mut out = Vec::new();
    for item in &a.checked.module.items {
        match item {
            Item::Type(t) if t.name.span.file == file => {
                let (kind, children) = match &t.kind {
                    TypeDeclKind::Record(fs) => (SymbolKind::STRUCT, fields(&lines, fs)),
                    TypeDeclKind::Sum(vs) => (
                        SymbolKind::ENUM,
                        vs.iter()
                            .map(|v| {
                                symbol(
                                    &lines,
                                    &v.name.name,
                                    None,
                                    SymbolKind::ENUM_MEMBER,
                                    v.span,
                                    v.name.span,
                                    fields(&lines, &v.fields),
                                )
                            })
                            .collect(),
                    ),
                };
                out.push(symbol(
                    &lines,
                    &t.name.name,
                    None,
                    kind,
                    t.span,
                    t.name.span,
                    children,
                ));
            }
            Item::Fn(f) if f.name.span.file == file => {
                let detail = f.ret.as_ref().map(|r| format!("to {r}"));
                out.push(symbol(
                    &lines,
                    &f.name.name,
                    detail,
                    SymbolKind::FUNCTION,
                    f.span,
                    f.name.span,
                    Vec::new(),
                ));
            }
            _ => {}
        }
    }
    DocumentSymbolResponse::Nested(out)
}
