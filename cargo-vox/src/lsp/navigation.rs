//! Go to definition, find references and rename, over the module's
//! symbol index (types, fields, variants, functions and locals).

use std::collections::HashMap;

use lsp_types::{
    GotoDefinitionResponse, Location, Position, PrepareRenameResponse, TextEdit, Uri, WorkspaceEdit,
};
use vox_codegen::ide::{Occurrence, Symbol};
use vox_codegen::{FileId, Span};

use super::position::Encoding;
use super::store::Analysis;
use crate::source_write::WriteError;

fn occurrence(a: &Analysis, file: FileId, pos: Position, enc: Encoding) -> Option<Occurrence> {
    let at = a.offset(file, pos, enc);
    a.index.at(file, at).copied()
}

fn location(a: &Analysis, span: Span, enc: Encoding) -> Option<Location> {
    let uri = a.uri(span.file)?;
    Some(Location {
        uri,
        range: a.range(span, enc),
    })
}

pub fn definition(
    a: &Analysis,
    file: FileId,
    pos: Position,
    enc: Encoding,
) -> Option<GotoDefinitionResponse> {
    let occ = occurrence(a, file, pos, enc)?;
    let span = a.index.definition(occ.symbol)?;
    Some(GotoDefinitionResponse::Scalar(location(a, span, enc)?))
}

pub fn references(
    a: &Analysis,
    file: FileId,
    pos: Position,
    include_declaration: bool,
    enc: Encoding,
) -> Option<Vec<Location>> {
    let occ = occurrence(a, file, pos, enc)?;
    Some(
        a.index
            .references(occ.symbol)
            .filter(|o| include_declaration || !o.def)
            .filter_map(|o| location(a, o.span, enc))
            .collect(),
    )
}

pub fn prepare_rename(
    a: &Analysis,
    file: FileId,
    pos: Position,
    enc: Encoding,
) -> Option<PrepareRenameResponse> {
    let occ = occurrence(a, file, pos, enc)?;
    Some(PrepareRenameResponse::Range(a.range(occ.span, enc)))
}

/// Whether `name` can name `symbol`: types and variants start with an
/// uppercase letter, everything else with a lowercase letter or `_`.
fn valid_name(symbol: Symbol, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first = chars.next().ok_or("the new name is empty")?;
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{name}` is not a Vox name (letters, digits and `_`)"
        ));
    }
    let upper = matches!(symbol, Symbol::Type(_) | Symbol::Variant { .. });
    let ok = if upper {
        first.is_ascii_uppercase()
    } else {
        first.is_ascii_lowercase() || first == '_'
    };
    if !ok {
        return Err(if upper {
            format!("`{name}`: type and variant names start with an uppercase letter")
        } else {
            format!(
                "`{name}`: function, field and variable names start with a lowercase letter or `_`"
            )
        });
    }
    if !vox_codegen::ide::is_name(name) {
        return Err(format!("`{name}` is a keyword"));
    }
    Ok(())
}

// `WorkspaceEdit::changes` is keyed by `Uri`, whose cached parts clippy
// mistakes for mutable state; the key is never mutated.
#[allow(clippy::mutable_key_type)]
pub fn rename(
    a: &Analysis,
    file: FileId,
    pos: Position,
    new_name: &str,
    enc: Encoding,
) -> Result<Option<WorkspaceEdit>, String> {
    let Some(occ) = occurrence(a, file, pos, enc) else {
        return Ok(None);
    };
    valid_name(occ.symbol, new_name)?;
    if let Some(why) = vox_codegen::ide::rename_clash(&a.checked, occ.symbol, new_name) {
        return Err(format!("cannot rename to `{new_name}`: {why}"));
    }
    let refs: Vec<&Occurrence> = a.index.references(occ.symbol).collect();
    // The editor writes a rename's edits wherever the files really are:
    // not through a symlink out of the package, where `cargo vox fmt` and
    // `fix` do not write either (README, "Security notes", "What `fmt` and
    // `fix` write").
    let mut files: Vec<FileId> = refs.iter().map(|o| o.span.file).collect();
    files.sort_by_key(|f| f.0);
    files.dedup();
    for f in files {
        let Some(path) = a.path(f) else { continue };
        let shown = crate::sources::display_path(path);
        if let Err(WriteError::Outside { real, roots, .. }) =
            crate::source_write::plan(path, &shown, &a.roots)
        {
            return Err(format!(
                "not renamed: {shown} leads outside {roots}, to {}, and a rename edits \
                 every file that uses the name; cargo vox fmt and fix write only inside \
                 {roots}, and so does rename: replace the symlink with a copy to rename \
                 across it",
                real.display()
            ));
        }
    }
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for o in refs {
        let Some(loc) = location(a, o.span, enc) else {
            continue;
        };
        changes.entry(loc.uri).or_default().push(TextEdit {
            range: loc.range,
            new_text: new_name.to_string(),
        });
    }
    Ok(Some(WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    }))
}
