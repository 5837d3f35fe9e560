//! Document symbols (the outline): types with their fields or variants,
//! and functions (vox-codegen's `ide::outline`).

use lsp_types::{DocumentSymbol, DocumentSymbolResponse, SymbolKind};
use vox_codegen::ide::{self, OutlineItem, OutlineKind};
use vox_codegen::FileId;

use super::position::{Encoding, LineIndex};
use super::store::Analysis;

#[allow(deprecated)] // `deprecated` is a required field of the struct.
fn symbol(lines: &LineIndex, item: OutlineItem) -> DocumentSymbol {
    let kind = match item.kind {
        OutlineKind::Record => SymbolKind::STRUCT,
        OutlineKind::Sum => SymbolKind::ENUM,
        OutlineKind::Variant => SymbolKind::ENUM_MEMBER,
        OutlineKind::Field => SymbolKind::FIELD,
        OutlineKind::Function => SymbolKind::FUNCTION,
        OutlineKind::Constant => SymbolKind::CONSTANT,
    };
    let children: Vec<DocumentSymbol> = item
        .children
        .into_iter()
        .map(|c| symbol(lines, c))
        .collect();
    DocumentSymbol {
        name: if item.name.is_empty() {
            "?".into()
        } else {
            item.name
        },
        detail: item.detail,
        kind,
        tags: None,
        deprecated: None,
        range: lines.range(item.span.to(item.name_span)),
        selection_range: lines.range(item.name_span),
        children: (!children.is_empty()).then_some(children),
    }
}

pub fn document_symbols(a: &Analysis, file: FileId, enc: Encoding) -> DocumentSymbolResponse {
    let lines = a.lines(file, enc);
    DocumentSymbolResponse::Nested(
        ide::outline(&a.checked, file)
            .into_iter()
            .map(|item| symbol(&lines, item))
            .collect(),
    )
}
