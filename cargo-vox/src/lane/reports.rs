//! Finding and reading the Vox reports that vox-build writes to `OUT_DIR`.
//!
//! vox-build writes one report per output name
//! ([`vox_metadata::report_file_name`]), so a build script with several
//! `Builder`s leaves several; the ones written by the build script's last
//! run (the same `run` as the newest) are read, older ones (an output name
//! no longer used) are not.
//!
//! After a successful or fresh build, cargo names every build script's
//! `OUT_DIR` in a `build-script-executed` message. When a build script
//! fails there is no such message, so the newest `OUT_DIR` under the target
//! directory with a report whose `manifest_dir` is the package's is used
//! instead.
//!
//! Nothing is dropped silently: a report that cannot be read (not JSON, not
//! a report, an unknown `report_version`) becomes a
//! `cargo-vox/invalid-report` error naming the file.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use vox_metadata::{codes, is_report_file_name, Report};

use crate::envelope::DiagnosticPayload;

/// The Vox diagnostics of `package`, with paths shown relative to the current directory.
pub fn vox_diagnostics(
    package: &str,
    package_dir: &Path,
    out_dirs: &[(String, PathBuf)],
    target_dir: &Path,
    build_script_failed: bool,
) -> Vec<DiagnosticPayload> {
    let from_stream = out_dirs
        .iter()
        .filter(|(p, _)| p == package)
        .map(|(_, d)| report_files(d))
        .find(|files| !files.is_empty());
    let files = match from_stream {
        Some(files) => files,
        None if build_script_failed => newest_out_dir(package, package_dir, target_dir)
            .map(|d| report_files(&d))
            .unwrap_or_default(),
        None => Vec::new(),
    };
    read_reports(&files, package, package_dir)
}

/// The report files in `out_dir`, by name.
fn report_files(out_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| is_report_file_name(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The diagnostics of the reports in one `OUT_DIR` written by its build
/// script's last run, plus an error for each report that cannot be read.
fn read_reports(files: &[PathBuf], package: &str, package_dir: &Path) -> Vec<DiagnosticPayload> {
    let mut out = Vec::new();
    let mut readable: Vec<(Option<SystemTime>, Report)> = Vec::new();
    for path in files {
        match read_report(path) {
            Ok(report) => {
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                readable.push((modified, report));
            }
            Err(error) => {
                let mut d = DiagnosticPayload::tool_error(
                    codes::INVALID_REPORT,
                    crate::sources::display_path(path),
                    format!(
                        "cannot read the Vox report of `{package}`, so its Vox diagnostics are unknown: {error}"
                    ),
                );
                d.package = Some(package.to_string());
                out.push(d);
            }
        }
    }
    // Reports of the newest run only; a report without a run (an older
    // vox-build, which wrote one report) stands alone.
    let newest = readable
        .iter()
        .enumerate()
        .max_by_key(|(_, (modified, _))| *modified)
        .map(|(i, (_, r))| (i, r.run.clone()));
    let current = readable
        .into_iter()
        .enumerate()
        .filter(|(i, (_, r))| match &newest {
            Some((_, Some(run))) => r.run.as_ref() == Some(run),
            Some((n, None)) => i == n,
            None => false,
        })
        .map(|(_, (_, r))| r);
    for report in current {
        out.extend(report.diagnostics.into_iter().map(|mut d| {
            rebase(&mut d, package_dir);
            d.package = Some(package.to_string());
            d
        }));
    }
    out
}

fn read_report(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    Report::from_json(&text).map_err(|e| e.to_string())
}

/// Report paths are package-relative; make them relative to the current directory.
fn rebase(d: &mut DiagnosticPayload, package_dir: &Path) {
    let fix = |p: &mut String| *p = crate::sources::display_path(&package_dir.join(&*p));
    fix(&mut d.file_path);
    for r in &mut d.related_spans {
        fix(&mut r.file_path);
    }
    for f in &mut d.suggested_fixes {
        for e in &mut f.edits {
            fix(&mut e.file_path);
        }
    }
}

/// The `OUT_DIR` of `package` under any profile's build dir with the
/// newest report.
fn newest_out_dir(package: &str, package_dir: &Path, target_dir: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    let Ok(top) = std::fs::read_dir(target_dir) else {
        return None;
    };
    for entry in top.flatten() {
        // target/<profile>/build and target/<triple>/<profile>/build
        let dir = entry.path();
        collect_reports(&dir.join("build"), package, &mut candidates);
        if let Ok(sub) = std::fs::read_dir(&dir) {
            for s in sub.flatten() {
                collect_reports(&s.path().join("build"), package, &mut candidates);
            }
        }
    }
    // Newest first (stat only); reports are read until one is the package's.
    let mut dated: Vec<(SystemTime, PathBuf)> = candidates
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    dated.sort_by_key(|(t, _)| *t);
    dated
        .into_iter()
        .rev()
        .find(|(_, p)| report_is_for(p, package_dir))
        .and_then(|(_, p)| p.parent().map(Path::to_path_buf))
}

/// The reports in `build/<package>-<hash>/out/`.
fn collect_reports(build: &Path, package: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(build) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let is_package = name
            .to_string_lossy()
            .strip_prefix(package)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|hash| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()));
        if is_package {
            out.extend(report_files(&e.path().join("out")));
        }
    }
}

/// Whether `report` belongs to the package at `package_dir` (several
/// workspaces can share a target directory). A report that cannot be read
/// is attributed to the package its directory is named after, so that it
/// is reported rather than ignored.
fn report_is_for(report: &Path, package_dir: &Path) -> bool {
    match read_report(report) {
        Ok(r) => Path::new(&r.manifest_dir) == package_dir,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cargo-vox-reports-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A report as vox-build writes it, with one diagnostic per severity given.
    fn report(manifest_dir: &Path, out_name: &str, run: &str, severities: &[&str]) -> String {
        let diagnostics: Vec<String> = severities
            .iter()
            .map(|s| {
                format!(
                    r#"{{"source":"vox","error_code":"vox/type/mismatch","severity":"{s}","message":"{out_name}","file_path":"vox/a.vox","span":{{"start_line":1,"start_col":1,"end_line":1,"end_col":2,"start_byte":0,"end_byte":1}},"expected_type":null,"found_type":null,"correction_hints":[],"suggested_fixes":[],"related_spans":[]}}"#
                )
            })
            .collect();
        let errors = severities.iter().filter(|s| **s == "error").count();
        format!(
            r#"{{"report_version":1,"package":"app","manifest_dir":{},"out_name":"{out_name}","run":"{run}","ok":{},"error_count":{errors},"warning_count":{},"files":["vox/a.vox"],"diagnostics":[{}]}}"#,
            serde_json::to_string(&manifest_dir.to_string_lossy()).unwrap(),
            errors == 0,
            severities.len() - errors,
            diagnostics.join(",")
        )
    }

    fn write_aged(path: &Path, text: &str, age_secs: u64) {
        std::fs::write(path, text).unwrap();
        let t = SystemTime::now() - std::time::Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    fn envelope_of(diagnostics: Vec<DiagnosticPayload>) -> crate::envelope::Envelope {
        crate::envelope::Envelope::new("build", "Cargo.toml", diagnostics)
    }

    /// Regression: a corrupt report, or one of a `report_version` this
    /// cargo-vox does not know, used to be skipped, so its errors vanished
    /// from `error_count` and the envelope could say `ok`.
    #[test]
    fn unreadable_reports_are_errors_not_dropped() {
        let root = temp_dir("unreadable");
        let out = root.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let out_dirs = [("app".to_string(), out.clone())];

        for (what, text) in [
            (
                "truncated",
                report(&root, "vox_generated", "r1", &["error"])[..40].to_string(),
            ),
            (
                "newer version",
                report(&root, "vox_generated", "r1", &["error"])
                    .replace("\"report_version\":1", "\"report_version\":2"),
            ),
            (
                "wrong shape",
                report(&root, "vox_generated", "r1", &["error"])
                    .replace("\"start_line\":1", "\"start_line\":\"one\""),
            ),
        ] {
            std::fs::write(out.join("vox-report.json"), &text).unwrap();
            let diags = vox_diagnostics("app", &root, &out_dirs, &root, false);
            let env = envelope_of(diags);
            assert!(!env.ok, "{what}: {env:?}");
            assert_eq!(env.error_count, 1, "{what}: {env:?}");
            let d = &env.diagnostics[0];
            assert_eq!(
                d.error_code.as_deref(),
                Some(codes::INVALID_REPORT),
                "{what}"
            );
            assert_eq!(d.source, "cargo-vox");
            assert_eq!(d.package.as_deref(), Some("app"));
            assert!(d.file_path.ends_with("vox-report.json"), "{what}: {d:?}");
            assert!(d.message.contains("`app`"), "{what}: {}", d.message);
            if what == "newer version" {
                assert!(d.message.contains("report_version"), "{}", d.message);
            }
        }

        // A readable report beside an unreadable one: both count.
        std::fs::write(
            out.join("vox-report-prompts.json"),
            report(&root, "prompts", "r1", &["error", "warning"]),
        )
        .unwrap();
        let env = envelope_of(vox_diagnostics("app", &root, &out_dirs, &root, false));
        assert_eq!((env.error_count, env.warning_count), (2, 1), "{env:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Regression: when the build script failed, the report is found by
    /// searching the build directories; an unreadable one there was skipped
    /// too.
    #[test]
    fn unreadable_report_in_a_build_dir_is_an_error() {
        let root = temp_dir("build-dir");
        let target = root.join("target");
        let out = target.join("debug/build/app-0123456789abcdef/out");
        std::fs::create_dir_all(&out).unwrap();
        // Another package whose name starts with ours is not ours.
        let other = target.join("debug/build/app-extra-0123456789abcdef/out");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("vox-report.json"), "garbage").unwrap();
        std::fs::write(
            out.join("vox-report.json"),
            report(&root, "vox_generated", "r1", &["error"])
                .replace("\"report_version\":1", "\"report_version\":7"),
        )
        .unwrap();

        let env = envelope_of(vox_diagnostics("app", &root, &[], &target, true));
        assert_eq!(env.error_count, 1, "{env:?}");
        assert_eq!(
            env.diagnostics[0].error_code.as_deref(),
            Some(codes::INVALID_REPORT)
        );
        assert!(
            env.diagnostics[0]
                .file_path
                .contains("app-0123456789abcdef"),
            "{env:?}"
        );

        // The readable report is found the same way.
        std::fs::write(
            out.join("vox-report.json"),
            report(&root, "vox_generated", "r1", &["error"]),
        )
        .unwrap();
        let env = envelope_of(vox_diagnostics("app", &root, &[], &target, true));
        assert_eq!(env.error_count, 1, "{env:?}");
        assert_eq!(env.diagnostics[0].source, "vox", "{env:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Two `Builder`s with different output names leave one report each;
    /// both are read. A report left by an earlier run (an output name no
    /// longer used) is not.
    #[test]
    fn reports_of_the_last_run_are_read_stale_ones_not() {
        let root = temp_dir("runs");
        let out = root.join("out");
        std::fs::create_dir_all(&out).unwrap();
        write_aged(
            &out.join("vox-report.json"),
            &report(&root, "vox_generated", "new", &["error"]),
            1,
        );
        write_aged(
            &out.join("vox-report-prompts.json"),
            &report(&root, "prompts", "new", &["warning"]),
            0,
        );
        write_aged(
            &out.join("vox-report-renamed.json"),
            &report(&root, "renamed", "old", &["error"]),
            60,
        );
        let out_dirs = [("app".to_string(), out.clone())];
        let env = envelope_of(vox_diagnostics("app", &root, &out_dirs, &root, false));
        assert_eq!((env.error_count, env.warning_count), (1, 1), "{env:?}");
        let messages: Vec<&str> = env.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["prompts", "vox_generated"]);
        assert!(env
            .diagnostics
            .iter()
            .all(|d| d.package.as_deref() == Some("app") && d.file_path.ends_with("vox/a.vox")));
        let _ = std::fs::remove_dir_all(&root);
    }
}
