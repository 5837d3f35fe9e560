//! Hover: a symbol's declaration and doc comment (for an `@ai` function
//! also the JSON Schema the model's reply is held to), else the type of
//! the innermost expression under the cursor.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use vox_codegen::{ide, FileId};

use super::position::Encoding;
use super::store::Analysis;

pub fn hover(a: &Analysis, file: FileId, pos: Position, enc: Encoding) -> Option<Hover> {
    let at = a.offset(file, pos, enc);
    let (md, span) = if let Some(occ) = a.index.at(file, at) {
        (ide::describe(&a.checked, occ.symbol)?, occ.span)
    } else {
        let (span, id) = a.index.expr_at(file, at)?;
        let ty = a.checked.info.expr_type(id);
        if ty.is_error() {
            return None;
        }
        let shown = ty.display(&a.checked.info.types);
        (format!("```vox\n{shown}\n```"), span)
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: md,
        }),
        range: Some(a.range(span, enc)),
    })
}
