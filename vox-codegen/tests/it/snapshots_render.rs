//! Snapshots of what people and machines read: the rustc-style rendering
//! and the JSON payload (README, `cargo vox check`) of every diagnostic of
//! every corpus case in `fixtures/invalid/`, one snapshot per case under
//! `tests/snapshots/invalid/`, so a change in wording, span or fix is
//! reviewed, not missed.
//!
//! Review changes with `cargo insta review` (or rerun with
//! `INSTA_UPDATE=always` and read the diff). With `CI` set, a mismatch fails.

use std::path::{Path, PathBuf};

use vox_codegen::diagnostic::{payload, render, RenderOptions};
use vox_codegen::{check, SourceFile, SourceMap};

fn invalid(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/invalid")
        .join(name)
}

/// Loads a corpus case (a file, or a directory checked as one module) with
/// stable display names, checks it and renders both forms.
fn snapshot_text(name: &str) -> String {
    let path = invalid(name);
    let mut files: Vec<(String, PathBuf)> = if path.is_dir() {
        let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "vox"))
            .map(|p| {
                let file = p.file_name().unwrap().to_string_lossy().into_owned();
                (format!("{name}/{file}"), p)
            })
            .collect();
        v.sort();
        v
    } else {
        vec![(name.to_string(), path)]
    };
    let mut sources = SourceMap::new();
    for (display, p) in files.drain(..) {
        sources.add(SourceFile::from_bytes(display, &std::fs::read(p).unwrap()));
    }
    let checked = check(sources);
    let mut out = String::from("=== rendered ===\n");
    for d in checked.diagnostics() {
        out.push_str(&render(
            d,
            checked.sources(),
            RenderOptions { color: false },
        ));
        out.push('\n');
    }
    out.push_str("=== json ===\n");
    for d in checked.diagnostics() {
        out.push_str(&payload(d, checked.sources()).to_pretty());
        out.push('\n');
    }
    out
}

/// Every corpus case: each `.vox` file, and each directory (one module).
fn cases() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/invalid");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "vox"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_invalid_case_is_snapshotted() {
    let cases = cases();
    assert!(cases.len() > 100, "the corpus went missing: {cases:?}");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/invalid");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for case in &cases {
            let name = case.strip_suffix(".vox").unwrap_or(case);
            insta::assert_snapshot!(name, snapshot_text(case));
        }
    });
}
