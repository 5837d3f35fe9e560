//! Finding and reading the Vox reports that vox-build writes to `OUT_DIR`.
//!
//! After a successful or fresh build, cargo names every build script's
//! `OUT_DIR` in a `build-script-executed` message. When a build script
//! fails there is no such message, so the newest report under the target
//! directory whose `manifest_dir` is the package's is used instead.

use std::path::{Path, PathBuf};

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
        .map(|(_, d)| d.join(vox_build::REPORT_FILE))
        .find(|p| p.is_file());
    let path = match from_stream {
        Some(p) => Some(p),
        None if build_script_failed => newest_report(package, package_dir, target_dir),
        None => None,
    };
    path.and_then(|p| read_report(&p, package, package_dir))
        .unwrap_or_default()
}

fn read_report(path: &Path, package: &str, package_dir: &Path) -> Option<Vec<DiagnosticPayload>> {
    let text = std::fs::read_to_string(path).ok()?;
    let report: serde_json::Value = serde_json::from_str(&text).ok()?;
    let diags = report.get("diagnostics")?.as_array()?;
    Some(
        diags
            .iter()
            .filter_map(|d| serde_json::from_value::<DiagnosticPayload>(d.clone()).ok())
            .map(|mut d| {
                rebase(&mut d, package_dir);
                d.package = Some(package.to_string());
                d
            })
            .collect(),
    )
}

/// Report paths are package-relative; make them relative to the current directory.
fn rebase(d: &mut DiagnosticPayload, package_dir: &Path) {
    let fix = |p: &mut String| *p = crate::check::display_path(&package_dir.join(&*p));
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

/// The newest `vox-report.json` of `package` under any profile's build dir.
fn newest_report(package: &str, package_dir: &Path, target_dir: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    let Ok(top) = std::fs::read_dir(target_dir) else {
        return None;
    };
    for entry in top.flatten() {
        // target/<profile>/build and target/<triple>/<profile>/build
        let dir = entry.path();
        collect_build_dirs(&dir.join("build"), package, &mut candidates);
        if let Ok(sub) = std::fs::read_dir(&dir) {
            for s in sub.flatten() {
                collect_build_dirs(&s.path().join("build"), package, &mut candidates);
            }
        }
    }
    candidates
        .into_iter()
        .filter(|p| report_is_for(p, package_dir))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
}

fn collect_build_dirs(build: &Path, package: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(build) else {
        return;
    };
    let prefix = format!("{package}-");
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with(&prefix) {
            let report = e.path().join("out").join(vox_build::REPORT_FILE);
            if report.is_file() {
                out.push(report);
            }
        }
    }
}

fn report_is_for(report: &Path, package_dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(report) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    v.get("manifest_dir")
        .and_then(|m| m.as_str())
        .is_some_and(|m| Path::new(m) == package_dir)
}
