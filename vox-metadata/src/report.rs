//! The report vox-build writes to `OUT_DIR` for each output it compiles.

use serde::{Deserialize, Serialize};

use crate::diagnostic::DiagnosticPayload;
use crate::error::{parse_versioned, ParseError};

/// Version of the report format ([`Report::report_version`]). Bumped only
/// for incompatible changes; fields are only added within a version.
pub const REPORT_VERSION: u32 = 1;

/// vox-build's default output name: `OUT_DIR/vox_generated.rs`.
pub const DEFAULT_OUT_NAME: &str = "vox_generated";

/// The report file of the default output name: `OUT_DIR/vox-report.json`.
pub const DEFAULT_REPORT_FILE: &str = "vox-report.json";

/// The file name, in `OUT_DIR`, of the report for the output `out_name`
/// (the generated file is `OUT_DIR/<out_name>.rs`): `vox-report.json` for
/// the default output name, `vox-report-<out_name>.json` for any other.
/// So two `vox_build::Builder`s with different output names in one build
/// script keep one report each.
///
/// ```
/// assert_eq!(vox_metadata::report_file_name("vox_generated"), "vox-report.json");
/// assert_eq!(vox_metadata::report_file_name("prompts"), "vox-report-prompts.json");
/// ```
pub fn report_file_name(out_name: &str) -> String {
    if out_name == DEFAULT_OUT_NAME {
        DEFAULT_REPORT_FILE.to_string()
    } else {
        format!("vox-report-{out_name}.json")
    }
}

/// True for a name [`report_file_name`] can return (for a valid output
/// name: letters, digits, `_` and `-`).
pub fn is_report_file_name(name: &str) -> bool {
    if name == DEFAULT_REPORT_FILE {
        return true;
    }
    name.strip_prefix("vox-report-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|out_name| {
            !out_name.is_empty()
                && out_name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

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
