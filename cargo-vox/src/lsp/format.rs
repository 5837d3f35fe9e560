//! Formatting: `cargo vox fmt`'s formatter over the open buffer, as one
//! edit replacing the document. A buffer with syntax errors is left as it
//! is (as `cargo vox fmt` leaves such a file).

use lsp_types::{Position, Range, TextEdit};
use vox_codegen::FileId;

use super::position::{self, Encoding};
use super::store::Analysis;

pub fn format(a: &Analysis, file: FileId, enc: Encoding) -> Option<Vec<TextEdit>> {
    let text = &a.checked.sources().get(file).text;
    let formatted = vox_codegen::fmt::format_source(file, text).ok()?;
    if formatted == *text {
        return Some(Vec::new());
    }
    Some(vec![TextEdit {
        range: Range {
            start: Position::new(0, 0),
            end: position::position(text, text.len(), enc),
        },
        new_text: formatted,
    }])
}
