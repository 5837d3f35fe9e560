//! Completion: what vox-codegen's `ide::completions` proposes at the
//! cursor, as protocol items.

use lsp_types::{CompletionItem, CompletionItemKind, CompletionList, CompletionResponse, Position};
use vox_codegen::ide::{self, CompletionKind};
use vox_codegen::FileId;

use super::position::Encoding;
use super::store::Analysis;

fn kind(k: CompletionKind) -> CompletionItemKind {
    match k {
        CompletionKind::Provider => CompletionItemKind::MODULE,
        CompletionKind::AiArgument => CompletionItemKind::PROPERTY,
        CompletionKind::Keyword | CompletionKind::Decorator => CompletionItemKind::KEYWORD,
        CompletionKind::Variant => CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Local => CompletionItemKind::VARIABLE,
        CompletionKind::Record => CompletionItemKind::STRUCT,
        CompletionKind::Sum => CompletionItemKind::ENUM,
        CompletionKind::Function | CompletionKind::Builtin => CompletionItemKind::FUNCTION,
        CompletionKind::Field => CompletionItemKind::FIELD,
    }
}

pub fn complete(a: &Analysis, file: FileId, pos: Position, enc: Encoding) -> CompletionResponse {
    let at = a.offset(file, pos, enc);
    let found = ide::completions(&a.checked, file, at);
    let items = found
        .items
        .into_iter()
        .map(|c| CompletionItem {
            label: c.label,
            kind: Some(kind(c.kind)),
            detail: c.detail,
            documentation: c.documentation.map(lsp_types::Documentation::String),
            sort_text: c.sort_text,
            ..Default::default()
        })
        .collect();
    CompletionResponse::List(CompletionList {
        is_incomplete: found.incomplete,
        items,
    })
}
