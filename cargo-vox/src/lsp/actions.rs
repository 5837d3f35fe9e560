//! Code actions: the compiler's fixes for the diagnostics in the requested
//! range, as quick fixes. Machine-applicable fixes (those `cargo vox fix`
//! applies) are marked preferred, so an editor's "fix" key applies them.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit,
};
use vox_codegen::diagnostic::Applicability;
use vox_codegen::FileId;

use super::position::Encoding;
use super::store::Analysis;

// `WorkspaceEdit::changes` is keyed by `Uri`, whose cached parts clippy
// mistakes for mutable state; the key is never mutated.
#[allow(clippy::mutable_key_type)]
pub fn code_actions(
    a: &Analysis,
    file: FileId,
    range: Range,
    enc: Encoding,
) -> Vec<CodeActionOrCommand> {
    let start = a.offset(file, range.start, enc);
    let end = a.offset(file, range.end, enc);
    let mut out = Vec::new();
    for d in a.checked.diagnostics() {
        if d.span.file != file || d.span.end < start || d.span.start > end {
            continue;
        }
        let lsp_diag = super::diagnostics::to_lsp(a, d, enc);
        for fix in &d.fixes {
            let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
            for e in &fix.edits {
                let Some(uri) = a.uri(e.span.file) else {
                    continue;
                };
                changes.entry(uri).or_default().push(TextEdit {
                    range: a.range(e.span, enc),
                    new_text: e.replacement.clone(),
                });
            }
            let preferred = fix.applicability == Applicability::MachineApplicable;
            let title = if preferred {
                fix.message.clone()
            } else {
                format!("{} ({})", fix.message, fix.applicability.as_str())
            };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_diag.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(changes),
                    ..Default::default()
                }),
                is_preferred: Some(preferred),
                ..Default::default()
            }));
        }
    }
    // Machine-applicable first.
    out.sort_by_key(|a| match a {
        CodeActionOrCommand::CodeAction(c) => c.is_preferred != Some(true),
        CodeActionOrCommand::Command(_) => true,
    });
    out
}
