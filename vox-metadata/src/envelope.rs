//! The envelope: one result of one `cargo vox --json` command.

use serde::{Deserialize, Serialize};

use crate::diagnostic::{DiagnosticPayload, EditPayload};
use crate::error::{parse_versioned, ParseError};

/// Version of the envelope format ([`Envelope::envelope_version`]). Bumped
/// only for incompatible changes; fields are only added within a version.
pub const ENVELOPE_VERSION: u32 = 1;

/// One result of one command, printed as one line of JSON on stdout under
/// `--json` ([`Envelope::to_line`]).
///
/// Which commands print what: `check`, `fmt`, `fix` and `build` print one
/// envelope; `test` prints a `build` envelope, then a `test` envelope;
/// `run` prints one only when it fails before the program starts (the
/// program owns stdout afterwards); `schema` prints its own object with
/// `envelope_version`, `command`, `ok` and the schema fields. Fields marked
/// "only" below are absent from other envelopes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Envelope {
    /// Always [`ENVELOPE_VERSION`].
    pub envelope_version: u32,
    /// The command: `check`, `build`, `test`, `run`, `fmt` or `fix`.
    pub command: String,
    /// What the command worked on: the manifest (`Cargo.toml`, relative to
    /// the current directory when inside it), or the first path given.
    pub file_path: String,
    /// True when there are no errors (warnings allowed), any child process
    /// succeeded, and nothing else failed. The exit status is
    /// [`exit::SUCCESS`](crate::exit::SUCCESS) exactly when it is true.
    pub ok: bool,
    /// How many `diagnostics` have severity `error`.
    pub error_count: usize,
    /// How many `diagnostics` have severity `warning`.
    pub warning_count: usize,
    /// Vox, rustc and `cargo vox` diagnostics. Under `build`, `test` and
    /// `run`: every workspace member's Vox diagnostics (from its vox-build
    /// reports), then rustc's; warnings of packages outside the workspace
    /// are left out, their errors kept.
    pub diagnostics: Vec<DiagnosticPayload>,
    /// Exit status of the child process (cargo, the tests, the program),
    /// whenever one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// A failure that is not a diagnostic (a missing path, cargo not found
    /// or killed, "tests did not run: the build failed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `test` only: how many tests passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<usize>,
    /// `test` only: how many tests failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<usize>,
    /// `test` only: how many tests were ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<usize>,
    /// `test` only: each failed test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<TestFailure>>,
    /// `test` only: `@ai` calls answered from a cassette (docs/runtime.md,
    /// "Cassettes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette_hits: Option<usize>,
    /// `test` only: `@ai` calls a cassette had no reply for (each an
    /// `Error::CassetteMiss` in the test that made it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette_misses: Option<usize>,
    /// `test` only: replies recorded into a cassette (`--record`, or mode
    /// `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette_recorded: Option<usize>,
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
    /// The file fixed.
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
    /// For a failed Vox `assert`/`assert_eq`: where it is written in the
    /// `.vox` source, `file:line:col`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
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
    /// An envelope for `command` with `diagnostics`; the counts and `ok`
    /// are computed from them.
    pub fn new(
        command: &str,
        file_path: impl Into<String>,
        diagnostics: Vec<DiagnosticPayload>,
    ) -> Envelope {
        let error_count = diagnostics.iter().filter(|d| d.is_error()).count();
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
            cassette_hits: None,
            cassette_misses: None,
            cassette_recorded: None,
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

    /// The compact one-line JSON form `cargo vox` prints.
    pub fn to_line(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail.
        serde_json::to_string(self).unwrap_or_else(|e| {
            let failed = Envelope::failure(
                &self.command,
                self.file_path.clone(),
                format!("envelope serialization failed: {e}"),
            );
            serde_json::to_string(&failed).unwrap_or_default()
        })
    }

    /// Reads one line `cargo vox --json` printed. Refuses another
    /// `envelope_version` ([`ParseError::UnsupportedVersion`]); fields it
    /// does not know are ignored.
    pub fn from_line(line: &str) -> Result<Envelope, ParseError> {
        parse_versioned(line, "envelope_version", ENVELOPE_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(severity: &str) -> DiagnosticPayload {
        DiagnosticPayload {
            severity: severity.to_string(),
            source: "vox".into(),
            error_code: Some("vox/type/mismatch".into()),
            ..DiagnosticPayload::tool_error("x", "a.vox", "m")
        }
    }

    #[test]
    fn counts_follow_the_diagnostics() {
        let env = Envelope::new("check", "a.vox", vec![diag("error"), diag("warning")]);
        assert_eq!((env.error_count, env.warning_count, env.ok), (1, 1, false));
        let env = Envelope::new("check", "a.vox", vec![diag("warning")]);
        assert!(env.ok);
    }

    #[test]
    fn line_round_trips_and_omits_absent_fields() {
        let mut env = Envelope::new("test", "Cargo.toml", vec![diag("error")]);
        env.passed = Some(2);
        env.failures = Some(vec![TestFailure {
            name: "t".into(),
            ..TestFailure::default()
        }]);
        let line = env.to_line();
        assert!(!line.contains('\n'));
        assert!(!line.contains("\"exit_code\""), "{line}");
        assert!(!line.contains("\"vox_name\""), "{line}");
        assert_eq!(Envelope::from_line(&line).unwrap(), env);
    }

    #[test]
    fn versions_are_checked_and_new_fields_ignored() {
        let line = r#"{"envelope_version":1,"command":"check","file_path":"x","ok":true,"error_count":0,"warning_count":0,"diagnostics":[],"added_later":{"a":1}}"#;
        assert!(Envelope::from_line(line).is_ok());
        let newer = line.replace("\"envelope_version\":1", "\"envelope_version\":2");
        let err = Envelope::from_line(&newer).unwrap_err();
        assert!(
            matches!(
                err,
                ParseError::UnsupportedVersion {
                    found: Some(2),
                    supported: 1,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("envelope_version"), "{err}");
        let missing = line.replace("\"envelope_version\":1,", "");
        assert!(matches!(
            Envelope::from_line(&missing),
            Err(ParseError::UnsupportedVersion { found: None, .. })
        ));
        assert!(matches!(
            Envelope::from_line("not json"),
            Err(ParseError::Json(_))
        ));
        assert!(matches!(
            Envelope::from_line("[1]"),
            Err(ParseError::Json(_))
        ));
    }
}
