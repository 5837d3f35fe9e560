//! One diagnostic, as it appears in envelopes and reports.

use serde::{Deserialize, Serialize};

/// Values of [`DiagnosticPayload::source`].
pub mod source {
    /// The Vox frontend (vox-codegen), through `cargo vox check` or a
    /// vox-build report.
    pub const VOX: &str = "vox";
    /// rustc, read from cargo's `--message-format=json` stream.
    pub const RUSTC: &str = "rustc";
    /// `cargo vox` itself: something it could not read (see [`codes`](crate::codes)).
    pub const CARGO_VOX: &str = "cargo-vox";
}

/// Values of [`DiagnosticPayload::severity`].
pub mod severity {
    /// Counted in `error_count`; makes `ok` false.
    pub const ERROR: &str = "error";
    /// Counted in `warning_count`.
    pub const WARNING: &str = "warning";
}

/// Values of [`FixPayload::applicability`] (as rustc's).
pub mod applicability {
    /// Applying the fix gives the program that was meant: `cargo vox fix`
    /// applies it.
    pub const MACHINE_APPLICABLE: &str = "machine-applicable";
    /// Probably right, but a person should look: shown, never applied.
    pub const MAYBE_INCORRECT: &str = "maybe-incorrect";
    /// Contains placeholders a person must fill in: shown, never applied.
    pub const HAS_PLACEHOLDERS: &str = "has-placeholders";
}

/// The `error_code`s of diagnostics with [`source::CARGO_VOX`].
///
/// The Vox frontend's codes (`vox/…`) are listed in the repository's
/// `docs/diagnostics.md`; rustc's are its own (`E0308`, lint names).
pub mod codes {
    /// A vox-build report that could not be read: not JSON, not a report,
    /// or a `report_version` this `cargo vox` does not understand (the
    /// package's vox-build is newer or older than `cargo vox`). The
    /// diagnostic names the report file; the package's Vox diagnostics are
    /// unknown, so the build is not `ok`.
    pub const INVALID_REPORT: &str = "cargo-vox/invalid-report";
    /// A diagnostic from the Vox frontend that could not be converted to a
    /// payload (a mismatch between vox-codegen and `cargo vox`); the
    /// message says what was wrong and which diagnostic it was.
    pub const INVALID_PAYLOAD: &str = "cargo-vox/invalid-payload";
    /// A warning in a `test` envelope: a test binary's libtest summary
    /// disagreed with its `test NAME ... RESULT` lines, or it printed none
    /// for its own run, so its counts are those lines' (test output can
    /// imitate libtest; the message names the binary and what was seen).
    pub const TEST_COUNTS: &str = "cargo-vox/test-counts";
}

/// One diagnostic: from the Vox frontend (`"source":"vox"`), rustc
/// (`"source":"rustc"`) or `cargo vox` itself (`"source":"cargo-vox"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiagnosticPayload {
    /// Who reported it: one of [`source`]'s values.
    pub source: String,
    /// Stable code: `vox/type/mismatch` (see `docs/diagnostics.md`),
    /// rustc's `E0308` or lint name, or one of [`codes`]; `null` when rustc
    /// gives none.
    pub error_code: Option<String>,
    /// `error` or `warning` ([`severity`]).
    pub severity: String,
    /// The main message, one line, without the code.
    pub message: String,
    /// The file of the primary span: relative to the current directory when
    /// it is inside it (in reports: relative to the package root); empty
    /// when rustc names no file.
    pub file_path: String,
    /// Where in `file_path`.
    pub span: SpanPayload,
    /// For type mismatches: the type expected there, e.g. `int`.
    pub expected_type: Option<String>,
    /// For type mismatches: the type found, e.g. `str`.
    pub found_type: Option<String>,
    /// "did you mean", "convert with …": advice for the reader, as text.
    pub correction_hints: Vec<String>,
    /// Fixes. Each is applied whole (all its edits) or not at all; apply
    /// only `machine-applicable` ones without asking.
    pub suggested_fixes: Vec<FixPayload>,
    /// Other places that explain the diagnostic ("first defined here").
    pub related_spans: Vec<RelatedSpan>,
    /// The package the diagnostic belongs to: under `build`, `test` and
    /// `run` only (absent from `check` and from reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

impl DiagnosticPayload {
    /// True for `"severity":"error"`.
    pub fn is_error(&self) -> bool {
        self.severity == severity::ERROR
    }

    /// An error reported by `cargo vox` itself about `file_path` (which it
    /// could not read), with one of [`codes`]; the span is the file's start.
    pub fn tool_error(
        code: &str,
        file_path: impl Into<String>,
        message: impl Into<String>,
    ) -> DiagnosticPayload {
        DiagnosticPayload {
            source: source::CARGO_VOX.to_string(),
            error_code: Some(code.to_string()),
            severity: severity::ERROR.to_string(),
            message: message.into(),
            file_path: file_path.into(),
            span: SpanPayload {
                start_line: 1,
                start_col: 1,
                end_line: 1,
                end_col: 1,
                start_byte: None,
                end_byte: None,
            },
            expected_type: None,
            found_type: None,
            correction_hints: Vec::new(),
            suggested_fixes: Vec::new(),
            related_spans: Vec::new(),
            package: None,
        }
    }
}

/// A range in a file. Lines and columns are 1-based and columns count
/// characters (Unicode scalar values); the end is exclusive. A rustc
/// diagnostic without any span has all four set to 0.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SpanPayload {
    /// Line of the first character.
    pub start_line: usize,
    /// Column of the first character.
    pub start_col: usize,
    /// Line of the end.
    pub end_line: usize,
    /// Column just past the last character.
    pub end_col: usize,
    /// Byte offset of the start in the file (Vox and rustc diagnostics;
    /// absent when unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_byte: Option<usize>,
    /// Byte offset just past the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_byte: Option<usize>,
}

/// A fix: applying all its edits resolves the diagnostic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FixPayload {
    /// What the fix does, e.g. "replace `elif` with `else if`".
    pub message: String,
    /// How sure the fix is: one of [`applicability`]'s values.
    /// `machine-applicable` fixes are what `cargo vox fix` applies;
    /// `maybe-incorrect` and `has-placeholders` ones are shown, never applied.
    pub applicability: String,
    /// The text replacements, in no particular order; they do not overlap.
    pub edits: Vec<EditPayload>,
}

/// One text replacement of a [`FixPayload`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct EditPayload {
    /// The file to edit (same convention as [`DiagnosticPayload::file_path`]).
    pub file_path: String,
    /// The text to replace (empty to insert).
    pub span: SpanPayload,
    /// The new text (empty to delete).
    pub replacement: String,
}

/// Another place that helps explain a diagnostic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RelatedSpan {
    /// Same convention as [`DiagnosticPayload::file_path`].
    pub file_path: String,
    /// Where.
    pub span: SpanPayload,
    /// What is there, e.g. "first defined here".
    pub message: String,
}
