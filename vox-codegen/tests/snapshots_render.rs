//! Snapshots of what people and machines read: the rustc-style rendering
//! and the SPEC §8 JSON payload of every diagnostic of a few representative
//! corpus cases (`fixtures/invalid/`).
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
    for d in &checked.diagnostics {
        out.push_str(&render(d, &checked.sources, RenderOptions { color: false }));
        out.push('\n');
    }
    out.push_str("=== json ===\n");
    for d in &checked.diagnostics {
        out.push_str(&payload(d, &checked.sources).to_pretty());
        out.push('\n');
    }
    out
}

macro_rules! snapshot_cases {
    ($($test:ident => $case:literal,)*) => {$(
        #[test]
        fn $test() {
            insta::assert_snapshot!(stringify!($test), snapshot_text($case));
        }
    )*};
}

snapshot_cases! {
    mismatch_let => "type_mismatch_let.vox",
    unknown_type_did_you_mean => "name_unknown_type.vox",
    unknown_field_did_you_mean => "type_unknown_field_access.vox",
    missing_field_literal => "type_missing_field_literal.vox",
    non_exhaustive_sum => "match_non_exhaustive_sum.vox",
    structured_output_mismatch => "ai_structured_output_mismatch.vox",
    ai_wrong_value_kinds => "ai_wrong_value_kinds.vox",
    missing_uses_callers => "effect_missing_uses_callers.vox",
    duplicate_across_files => "name_duplicate_across_files",
    syntax_recovery => "syntax_recovery_many_errors.vox",
    unterminated_string => "syntax_unterminated_string.vox",
    invalid_utf8 => "syntax_invalid_utf8.vox",
    too_deep_long_line => "syntax_too_deep_expr.vox",
    unused_variable_warnings => "lint_unused_variable.vox",
    missing_return => "type_missing_return.vox",
}
