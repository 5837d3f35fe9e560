//! The names of the reports vox-build writes to `OUT_DIR` (without serde:
//! vox-build names its files with these).

/// Version of the report format (`Report::report_version`). Bumped only
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
