//! rustc's JSON diagnostics → the envelope's diagnostic payload.

use std::path::Path;

use cargo_metadata::diagnostic::{Applicability, Diagnostic, DiagnosticLevel, DiagnosticSpan};

use crate::envelope::{DiagnosticPayload, EditPayload, FixPayload, RelatedSpan, SpanPayload};

/// Converts one top-level rustc diagnostic; `None` for notes and the
/// "aborting due to …" / "N warnings emitted" summaries.
pub fn payload(d: &Diagnostic, workspace_root: &Path) -> Option<DiagnosticPayload> {
    let severity = match d.level {
        DiagnosticLevel::Error | DiagnosticLevel::Ice => "error",
        DiagnosticLevel::Warning => "warning",
        _ => return None,
    };
    if d.spans.is_empty() && is_summary(&d.message) {
        return None;
    }
    let primary = d
        .spans
        .iter()
        .find(|s| s.is_primary)
        .or_else(|| d.spans.first());
    let (primary_file, span) = match primary {
        Some(s) => (file_path(&s.file_name, workspace_root), span_payload(s)),
        None => (
            String::new(),
            SpanPayload {
                start_line: 0,
                start_col: 0,
                end_line: 0,
                end_col: 0,
                start_byte: None,
                end_byte: None,
            },
        ),
    };
    let (expected, found) = primary
        .and_then(|s| s.label.as_deref())
        .and_then(expected_found)
        .unzip();
    let mut hints = Vec::new();
    let mut fixes = Vec::new();
    for child in &d.children {
        let edits: Vec<EditPayload> = child
            .spans
            .iter()
            .filter(|s| s.suggestion_applicability == Some(Applicability::MachineApplicable))
            .filter_map(|s| {
                Some(EditPayload {
                    file_path: file_path(&s.file_name, workspace_root),
                    span: span_payload(s),
                    replacement: s.suggested_replacement.clone()?,
                })
            })
            .collect();
        if edits.is_empty() {
            if matches!(child.level, DiagnosticLevel::Help | DiagnosticLevel::Note) {
                hints.push(child.message.clone());
            }
        } else {
            fixes.push(FixPayload {
                message: child.message.clone(),
                applicability: "machine-applicable".into(),
                edits,
            });
        }
    }
    let related = d
        .spans
        .iter()
        .filter(|s| !s.is_primary)
        .map(|s| RelatedSpan {
            file_path: file_path(&s.file_name, workspace_root),
            span: span_payload(s),
            message: s.label.clone().unwrap_or_default(),
        })
        .collect();
    Some(DiagnosticPayload {
        source: "rustc".into(),
        error_code: d.code.as_ref().map(|c| c.code.clone()),
        severity: severity.into(),
        message: d.message.clone(),
        file_path: primary_file,
        span,
        expected_type: expected,
        found_type: found,
        correction_hints: hints,
        suggested_fixes: fixes,
        related_spans: related,
        package: None,
    })
}

fn is_summary(message: &str) -> bool {
    message.starts_with("aborting due to")
        || message.ends_with("warnings emitted")
        || message.ends_with("warning emitted")
        || message.starts_with("For more information about")
}

fn span_payload(s: &DiagnosticSpan) -> SpanPayload {
    SpanPayload {
        start_line: s.line_start,
        start_col: s.column_start,
        end_line: s.line_end,
        end_col: s.column_end,
        start_byte: Some(s.byte_start as usize),
        end_byte: Some(s.byte_end as usize),
    }
}

/// rustc names files relative to the workspace root; show them relative to
/// the current directory like everything else.
fn file_path(name: &str, workspace_root: &Path) -> String {
    let p = Path::new(name);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        workspace_root.join(p)
    };
    crate::sources::display_path(&abs)
}

/// `expected `i64`, found `String`` → (`i64`, `String`).
fn expected_found(label: &str) -> Option<(String, String)> {
    let rest = label.strip_prefix("expected `")?;
    let (expected, rest) = rest.split_once('`')?;
    let rest = rest.strip_prefix(", found `")?;
    let (found, _) = rest.split_once('`')?;
    Some((expected.to_string(), found.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_a_type_mismatch() {
        let json = r#"{"message":"mismatched types","code":{"code":"E0308","explanation":null},"level":"error","spans":[{"file_name":"src/main.rs","byte_start":30,"byte_end":33,"line_start":2,"line_end":2,"column_start":18,"column_end":21,"is_primary":true,"text":[],"label":"expected `i64`, found `&str`","suggested_replacement":null,"suggestion_applicability":null,"expansion":null},{"file_name":"src/main.rs","byte_start":20,"byte_end":23,"line_start":2,"line_end":2,"column_start":12,"column_end":15,"is_primary":false,"text":[],"label":"expected due to this","suggested_replacement":null,"suggestion_applicability":null,"expansion":null}],"children":[{"message":"try using a conversion method","code":null,"level":"help","spans":[{"file_name":"src/main.rs","byte_start":30,"byte_end":33,"line_start":2,"line_end":2,"column_start":18,"column_end":21,"is_primary":true,"text":[],"label":null,"suggested_replacement":"\"x\".parse()","suggestion_applicability":"MachineApplicable","expansion":null}],"children":[],"rendered":null}],"rendered":"error[E0308]: mismatched types\n"}"#;
        let d: Diagnostic = serde_json::from_str(json).unwrap();
        let p = payload(&d, Path::new("/nonexistent-root")).unwrap();
        assert_eq!(p.source, "rustc");
        assert_eq!(p.error_code.as_deref(), Some("E0308"));
        assert_eq!(p.severity, "error");
        assert_eq!(p.span.start_line, 2);
        assert!(p.file_path.ends_with("src/main.rs"));
        assert_eq!(p.expected_type.as_deref(), Some("i64"));
        assert_eq!(p.found_type.as_deref(), Some("&str"));
        assert_eq!(p.suggested_fixes.len(), 1);
        assert_eq!(p.related_spans[0].message, "expected due to this");
    }

    #[test]
    fn summaries_are_dropped() {
        let json = r#"{"message":"aborting due to 1 previous error","code":null,"level":"error","spans":[],"children":[],"rendered":"error: aborting\n"}"#;
        let d: Diagnostic = serde_json::from_str(json).unwrap();
        assert!(payload(&d, Path::new("/")).is_none());
    }
}
