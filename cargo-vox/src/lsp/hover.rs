//! Hover: a symbol's declaration and doc comment (for an `@ai` function
//! also the JSON Schema the model's reply is held to), else the type of
//! the innermost expression under the cursor (vox-codegen's `ide::hover`).

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use vox_codegen::{ide, FileId};

use super::position::Encoding;
use super::store::Analysis;

pub fn hover(a: &Analysis, file: FileId, pos: Position, enc: Encoding) -> Option<Hover> {
    let at = a.offset(file, pos, enc);
    let (md, span) = ide::hover(&a.checked, &a.index, file, at)?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: md,
        }),
        range: Some(a.range(span, enc)),
    })
}
