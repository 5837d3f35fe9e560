//! The machine contract of `cargo vox`: one-line JSON envelopes (SPEC §8).
//!
//! Every command that reports diagnostics prints exactly one
//! [`Envelope`] per result on stdout under `--json`. The types here are the
//! single definition of that format, versioned by [`ENVELOPE_VERSION`];
//! fields are only ever added, never renamed or removed, within a version.

use serde::{Deserialize, Serialize};

/// Version of the envelope format. Bumped only for incompatible changes.
pub const ENVELOPE_VERSION: u32 = 1;

/// One result of one command.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Envelope {
    /// Always [`ENVELOPE_VERSION`].
    pub envelope_version: u32,
    /// `check`, `build`, `test`, `run`, `schema`, `fmt` or `fix`.
    pub command: String,
    /// What the command worked on: the manifest, or the first path given.
    pub file_path: String,
    /// True when there are no errors (warnings allowed) and any child succeeded.
    pub ok: bool,
    pub error_count: usize,
    pub warning_count: usize,
    /// Vox and rustc diagnostics, sorted by file and position.
    pub diagnostics: Vec<DiagnosticPayload>,
    /// Exit status of the child process (tests, the program), when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// A failure that is not a diagnostic (a missing path, cargo not found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `test` only: tests that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<usize>,
    /// `test` only: tests that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<usize>,
    /// `test` only: tests that were ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<usize>,
    /// `test` only: each failed test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<TestFailure>>,
    /// `fmt` and `fix` only: the files rewritten (with `--check` or
    /// `--dry-run`: the files that would be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<Vec<String>>,
    /// `fix` only: every fix applied (or, with `--dry-run`, that would be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_fixes: Option<Vec<AppliedFix>>,
    /// `fix --dry-run` only: the unified diff of every change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// One fix `cargo vox fix` applied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedFix {
    pub file_path: String,
    /// 1-based line of the diagnostic in the file as it was when the fix applied.
    pub line: usize,
    /// The code of the diagnostic the fix resolves.
    pub error_code: String,
    /// The fix's message, e.g. "replace `elif` with `else if`".
    pub message: String,
    /// The edits, spans in the file as it was when the fix applied.
    pub edits: Vec<EditPayload>,
}

/// One failed test in a `test` envelope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    /// The Rust test path, e.g. `vox_tests::extracts_something`.
    pub name: String,
    /// For Vox `@test` functions: the Vox function name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vox_name: Option<String>,
    /// The panic message (assertion text and values).
    pub message: String,
    /// The start of the test's captured output.
    pub output_excerpt: String,
    /// The package the test belongs to, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The test target (test binary) it ran in: the library's crate name,
    /// an integration test's or a binary's name. Absent for doctests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl Envelope {
    pub fn new(
        command: &str,
        file_path: impl Into<String>,
        diagnostics: Vec<DiagnosticPayload>,
    ) -> Envelope {
        let error_count = diagnostics.iter().filter(|d| d.severity == "error").count();
        let warning_count = diagnostics.len() - error_count;
        Envelope {
            envelope_version: ENVELOPE_VERSION,
            command: command.to_string(),
            file_path: file_path.into(),
            ok: error_count == 0,
            error_count,
            warning_count,
            diagnostics,
            exit_code: None,
            message: None,
            passed: None,
            failed: None,
            ignored: None,
            failures: None,
            changed_files: None,
            applied_fixes: None,
            diff: None,
        }
    }

    /// An envelope for a failure that produced no diagnostics.
    pub fn failure(
        command: &str,
        file_path: impl Into<String>,
        message: impl Into<String>,
    ) -> Envelope {
        Envelope {
            ok: false,
            message: Some(message.into()),
            ..Envelope::new(command, file_path, Vec::new())
        }
    }

    /// The compact one-line JSON form.
    pub fn to_line(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"envelope_version":{ENVELOPE_VERSION},"command":"{}","ok":false,"message":"envelope serialization failed: {e}"}}"#, self.command)
        })
    }
}

/// One diagnostic, from Vox (`"source":"vox"`) or rustc (`"source":"rustc"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiagnosticPayload {
    pub source: String,
    /// Stable code: `vox/type/mismatch`, or rustc's `E0308`.
    pub error_code: Option<String>,
    /// `error` or `warning`.
    pub severity: String,
    pub message: String,
    pub file_path: String,
    pub span: SpanPayload,
    pub expected_type: Option<String>,
    pub found_type: Option<String>,
    /// "did you mean", "convert with …": advice for the reader.
    pub correction_hints: Vec<String>,
    /// Fixes: apply every edit of one fix (only `machine-applicable` ones blindly).
    pub suggested_fixes: Vec<FixPayload>,
    /// Other places that explain the diagnostic ("first defined here").
    pub related_spans: Vec<RelatedSpan>,
    /// The package the diagnostic belongs to (`build`, `test` and `run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

/// 1-based lines and columns (columns count characters); byte offsets when known.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SpanPayload {
    pub start_line: usize,
    pub start_col: usize,
    pub end_line: usize,
    pub end_col: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_byte: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_byte: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FixPayload {
    pub message: String,
    /// `machine-applicable` (`cargo vox fix` applies it), `maybe-incorrect`
    /// or `has-placeholders` (shown, never applied).
    pub applicability: String,
    pub edits: Vec<EditPayload>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct EditPayload {
    pub file_path: String,
    pub span: SpanPayload,
    pub replacement: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RelatedSpan {
    pub file_path: String,
    pub span: SpanPayload,
    pub message: String,
}

/// Converts the frontend's diagnostics to payloads.
pub fn vox_payloads(checked: &vox_codegen::Checked) -> Vec<DiagnosticPayload> {
    checked
        .diagnostics
        .iter()
        .filter_map(|d| {
            let text = vox_codegen::diagnostic::payload(d, &checked.sources).to_compact();
            // vox-codegen writes exactly this shape; a test pins the two together.
            serde_json::from_str(&text).ok()
        })
        .collect()
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
        assert!(checked.diagnostics.len() >= 2);
        let payloads = vox_payloads(&checked);
        assert_eq!(
            payloads.len(),
            checked.diagnostics.len(),
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
}
