//! The machine contract of `cargo vox`: one-line JSON envelopes.
//!
//! The types live in the `vox-metadata` crate (its docs describe every
//! field, the versions and the exit codes), so that tools reading `cargo vox
//! --json` can depend on them; they are re-exported here.

pub use vox_metadata::{
    AppliedFix, DiagnosticPayload, EditPayload, Envelope, FixPayload, RelatedSpan, SpanPayload,
    TestFailure, ENVELOPE_VERSION,
};

/// Converts the frontend's diagnostics to payloads.
///
/// vox-codegen writes the payload JSON by hand (it has no dependencies);
/// `tests/tests/it/contract.rs` pins it to [`DiagnosticPayload`]. Should one
/// still not convert, it becomes a `cargo-vox/invalid-payload` error
/// naming the diagnostic instead of disappearing, so the counts stay right.
pub fn vox_payloads(checked: &vox_codegen::Checked) -> Vec<DiagnosticPayload> {
    payloads(checked.diagnostics(), checked.sources())
}

/// [`vox_payloads`] for diagnostics that are not (all) from one check.
pub fn payloads(
    diagnostics: &[vox_codegen::diagnostic::Diagnostic],
    sources: &vox_codegen::SourceMap,
) -> Vec<DiagnosticPayload> {
    diagnostics
        .iter()
        .map(|d| {
            let text = vox_codegen::diagnostic::payload(d, sources).to_compact();
            from_payload_json(&text, d, sources)
        })
        .collect()
}

fn from_payload_json(
    text: &str,
    d: &vox_codegen::diagnostic::Diagnostic,
    sources: &vox_codegen::SourceMap,
) -> DiagnosticPayload {
    serde_json::from_str(text).unwrap_or_else(|e| invalid_payload(d, sources, &e))
}

fn invalid_payload(
    d: &vox_codegen::diagnostic::Diagnostic,
    sources: &vox_codegen::SourceMap,
    error: &serde_json::Error,
) -> DiagnosticPayload {
    let file = sources.get(d.span.file);
    let at = file.line_col(d.span.start as usize);
    DiagnosticPayload {
        span: vox_metadata::SpanPayload {
            start_line: at.line,
            start_col: at.col,
            end_line: at.line,
            end_col: at.col,
            start_byte: Some(d.span.start as usize),
            end_byte: Some(d.span.start as usize),
        },
        ..DiagnosticPayload::tool_error(
            vox_metadata::codes::INVALID_PAYLOAD,
            file.name.clone(),
            format!(
                "the {} diagnostic `{}: {}` could not be converted to a payload: {error}",
                d.severity.as_str(),
                d.code.as_str(),
                d.message
            ),
        )
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vox_payload_round_trips_through_the_envelope_types() {
        let mut sources = vox_codegen::SourceMap::new();
        sources.add(vox_codegen::SourceFile::new(
            "a.vox",
            "type A { x: int, x: int }\nfn f() to int { return \"s\" }\n",
        ));
        let checked = vox_codegen::check(sources);
        assert!(checked.diagnostics().len() >= 2);
        let payloads = vox_payloads(&checked);
        assert_eq!(
            payloads.len(),
            checked.diagnostics().len(),
            "every diagnostic converts"
        );
        let env = Envelope::new("check", "a.vox", payloads);
        let line = env.to_line();
        assert!(!line.contains('\n'));
        let back: Envelope = serde_json::from_str(&line).unwrap();
        assert_eq!(back, env);
        assert!(!back.ok);
        let mismatch = back
            .diagnostics
            .iter()
            .find(|d| d.error_code.as_deref() == Some("vox/type/mismatch"))
            .unwrap();
        assert_eq!(mismatch.expected_type.as_deref(), Some("int"));
        assert_eq!(mismatch.found_type.as_deref(), Some("str"));
        assert_eq!(mismatch.span.start_line, 2);
    }

    /// A payload that does not convert is an error naming the diagnostic,
    /// not a diagnostic dropped from the counts.
    #[test]
    fn payload_that_does_not_convert_is_an_error_not_dropped() {
        let mut sources = vox_codegen::SourceMap::new();
        sources.add(vox_codegen::SourceFile::new(
            "a.vox",
            "fn f() to int {\n    let x = 1\n    return 2\n}\n",
        ));
        let checked = vox_codegen::check(sources);
        let warning = &checked.diagnostics()[0];
        assert_eq!(warning.code.as_str(), "vox/lint/unused-variable");
        let good = vox_codegen::diagnostic::payload(warning, checked.sources()).to_compact();
        let bad = good.replace("\"span\":{", "\"span\":{\"start_line\":\"one\",");
        let p = from_payload_json(&bad, warning, checked.sources());
        assert_eq!(p.severity, "error");
        assert_eq!(p.source, "cargo-vox");
        assert_eq!(
            p.error_code.as_deref(),
            Some(vox_metadata::codes::INVALID_PAYLOAD)
        );
        assert!(
            p.message.contains("vox/lint/unused-variable"),
            "{}",
            p.message
        );
        assert_eq!((p.file_path.as_str(), p.span.start_line), ("a.vox", 2));
        let env = Envelope::new("check", "a.vox", vec![p]);
        assert_eq!((env.error_count, env.ok), (1, false));
        assert_eq!(
            from_payload_json(&good, warning, checked.sources()).severity,
            "warning"
        );
    }
}
