//! The report vox-build writes to `OUT_DIR` for each output it compiles.

use serde::{Deserialize, Serialize};

use crate::diagnostic::DiagnosticPayload;
use crate::error::{parse_versioned, ParseError};
use crate::REPORT_VERSION;

/// The diagnostics of one vox-build compile: `OUT_DIR/<report_file_name>`.
///
/// Written on every run of the build script, also when the Vox sources
/// have errors (then the generated file is not updated and the build
/// script fails). `cargo vox build`, `test` and `run` read it to put the
/// Vox diagnostics into their envelopes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// Always [`REPORT_VERSION`].
    pub report_version: u32,
    /// The package (`CARGO_PKG_NAME` of the build script; empty outside one).
    pub package: String,
    /// The package root the paths below are relative to (absolute).
    pub manifest_dir: String,
    /// The output name: the generated file is `OUT_DIR/<out_name>.rs`.
    /// Absent from reports of vox-build versions before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_name: Option<String>,
    /// Identifies the build-script run that wrote the report: reports in one
    /// `OUT_DIR` with the same `run` were written by one run of the build
    /// script (several `Builder`s), and a report with another `run` than
    /// the newest is left over from an earlier run (an output name no
    /// longer used). Absent from reports of vox-build versions before it
    /// was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// True when there are no errors (warnings allowed).
    pub ok: bool,
    /// How many `diagnostics` are errors.
    pub error_count: usize,
    /// How many `diagnostics` are warnings.
    pub warning_count: usize,
    /// The `.vox` files compiled, relative to `manifest_dir`, `/`-separated.
    pub files: Vec<String>,
    /// The Vox diagnostics, `file_path`s relative to `manifest_dir`, no
    /// `package`.
    pub diagnostics: Vec<DiagnosticPayload>,
}

impl Report {
    /// Reads a report file's text. Refuses another `report_version`
    /// ([`ParseError::UnsupportedVersion`]); fields it does not know are
    /// ignored.
    pub fn from_json(text: &str) -> Result<Report, ParseError> {
        parse_versioned(text, "report_version", REPORT_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{is_report_file_name, report_file_name, DEFAULT_OUT_NAME, DEFAULT_REPORT_FILE};

    #[test]
    fn file_names_follow_the_output_name() {
        assert_eq!(report_file_name(DEFAULT_OUT_NAME), DEFAULT_REPORT_FILE);
        for name in ["prompts", "a-b_9"] {
            let file = report_file_name(name);
            assert!(is_report_file_name(&file), "{file}");
        }
        assert_ne!(report_file_name("a"), report_file_name("b"));
        for other in [
            "vox-report-.json",
            "vox-report-a.json.tmp",
            ".vox-report.json.0123.tmp",
            "vox_generated.rs",
            "vox-report-a b.json",
        ] {
            assert!(!is_report_file_name(other), "{other}");
        }
    }

    #[test]
    fn reports_are_versioned() {
        let text = r#"{"report_version":1,"package":"p","manifest_dir":"/p","ok":true,"error_count":0,"warning_count":0,"files":[],"diagnostics":[]}"#;
        let report = Report::from_json(text).unwrap();
        assert_eq!(report.out_name, None);
        assert!(matches!(
            Report::from_json(&text.replace(":1,", ":2,")),
            Err(ParseError::UnsupportedVersion {
                field: "report_version",
                found: Some(2),
                ..
            })
        ));
        assert!(matches!(
            Report::from_json(&text.replace("\"ok\":true", "\"ok\":\"yes\"")),
            Err(ParseError::Json(_))
        ));
    }
}
