//! Diagnostics: the same messages, codes, hints and related spans as
//! `cargo vox check`, published per file after each (debounced) re-check.

use lsp_server::Message;
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    PublishDiagnosticsParams,
};
use vox_codegen::{Diagnostic, FileId, Severity};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::position::Encoding;
use super::store::{Analysis, Module};

/// One LSP diagnostic for a compiler diagnostic.
pub fn to_lsp(a: &Analysis, d: &Diagnostic, enc: Encoding) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    if let Some(label) = &d.label {
        message.push_str(&format!("\n{label}"));
    }
    if let (Some(e), Some(f)) = (&d.expected, &d.found) {
        message.push_str(&format!("\nexpected `{e}`, found `{f}`"));
    }
    for h in &d.hints {
        message.push_str(&format!("\nhint: {h}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .filter_map(|r| {
            let uri = a.uri(r.span.file)?;
            Some(DiagnosticRelatedInformation {
                location: Location {
                    uri,
                    range: a.range(r.span, enc),
                },
                message: r.message.clone(),
            })
        })
        .collect();
    lsp_types::Diagnostic {
        range: a.range(d.span, enc),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            _ => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_string())),
        source: Some("vox".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

/// The diagnostics of one file of the analysis.
pub fn of_file(a: &Analysis, file: FileId, enc: Encoding) -> Vec<lsp_types::Diagnostic> {
    a.checked
        .diagnostics()
        .iter()
        .filter(|d| d.span.file == file)
        .map(|d| to_lsp(a, d, enc))
        .collect()
}

/// `publishDiagnostics` for every file of the module, including files that
/// had diagnostics last time and have none now.
pub fn publish(m: &mut Module, too_large: &HashMap<PathBuf, u64>, enc: Encoding) -> Vec<Message> {
    let Some(a) = &m.analysis else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut now = Vec::new();
    for (i, path) in a.paths.iter().enumerate() {
        let diags = match too_large.get(path) {
            Some(&len) => vec![too_large_diagnostic(path, len)],
            None => of_file(a, FileId(i as u32), enc),
        };
        if diags.is_empty() && !m.published.contains(path) {
            continue;
        }
        if !diags.is_empty() {
            now.push(path.clone());
        }
        let Some(uri) = a.uri(FileId(i as u32)) else {
            continue;
        };
        out.push(super::notification(
            PublishDiagnostics::METHOD,
            PublishDiagnosticsParams {
                uri,
                diagnostics: diags,
                version: None,
            },
        ));
    }
    // Files that left the module (deleted on disk): cleared too.
    for path in &m.published {
        if a.file_of(path).is_some() {
            continue;
        }
        if let Some(uri) = super::position::path_to_uri(path) {
            out.push(super::notification(
                PublishDiagnostics::METHOD,
                PublishDiagnosticsParams {
                    uri,
                    diagnostics: Vec::new(),
                    version: None,
                },
            ));
        }
    }
    m.published = now;
    out
}

/// Why an open buffer is not checked (README, "Limits of the server").
pub fn too_large_message(path: &Path, len: u64) -> String {
    format!(
        "{} is not checked: its buffer is {len} bytes, over the 8 MiB limit for a Vox source \
         file (as for files on disk); split it into smaller files",
        crate::sources::display_path(path)
    )
}

fn too_large_diagnostic(path: &Path, len: u64) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range: lsp_types::Range::default(),
        severity: Some(DiagnosticSeverity::WARNING),
        code: Some(NumberOrString::String("vox/lsp/too-large".into())),
        source: Some("vox".into()),
        message: too_large_message(path, len),
        ..Default::default()
    }
}
