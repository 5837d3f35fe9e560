//! The invalid-program corpus: every file (or directory module) under
//! `fixtures/invalid/` is one mistake, and its header says which diagnostics
//! the frontend must report, in order:
//!
//! ```text
//! // expect: vox/type/mismatch@4 vox/effect/missing-uses@9
//! ```
//!
//! (`code@line`; warnings included; `// expect:` with nothing after it means
//! "no diagnostics in this file"; several `// expect:` lines concatenate.)
//! A directory is checked as one module, and each of its files carries its
//! own header. Every [`Code`] must be expected somewhere, so adding a code
//! forces a corpus case; every valid fixture must check clean.

use crate::support;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use support::fixtures;
use vox_codegen::diagnostic::{render, RenderOptions};
use vox_codegen::{check, Checked, Code, SourceFile, SourceMap};

/// One corpus case: a single file, or a directory checked as one module.
struct Case {
    name: String,
    files: Vec<PathBuf>,
}

fn vox_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "vox"))
        .collect();
    files.sort();
    files
}

fn cases(dir: &Path) -> Vec<Case> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut cases = Vec::new();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let files = vox_files_in(&path);
            assert!(
                !files.is_empty(),
                "{name}: directory module without .vox files"
            );
            cases.push(Case { name, files });
        } else if path.extension().is_some_and(|x| x == "vox") {
            cases.push(Case {
                name,
                files: vec![path],
            });
        }
    }
    cases
}

/// Display name of a file inside its case (`dir/file.vox` or `file.vox`).
fn display_name(case: &Case, file: &Path) -> String {
    if case.files.len() == 1 && case.files[0] == file && case.name.ends_with(".vox") {
        case.name.clone()
    } else {
        format!(
            "{}/{}",
            case.name,
            file.file_name().unwrap().to_string_lossy()
        )
    }
}

fn load(case: &Case) -> SourceMap {
    let mut sources = SourceMap::new();
    for f in &case.files {
        let bytes = std::fs::read(f).unwrap();
        sources.add(SourceFile::from_bytes(display_name(case, f), &bytes));
    }
    sources
}

/// `(line, code)` pairs from a file's `// expect:` header lines.
fn expected(text: &str, name: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut found_header = false;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("// expect:") else {
            break;
        };
        found_header = true;
        for item in rest.split_whitespace() {
            let (code, at) = item
                .split_once('@')
                .unwrap_or_else(|| panic!("{name}: malformed expectation `{item}`"));
            assert!(
                Code::ALL.iter().any(|c| c.as_str() == code),
                "{name}: `{code}` is not a diagnostic code"
            );
            let line = at
                .parse()
                .unwrap_or_else(|_| panic!("{name}: bad line in `{item}`"));
            out.push((line, code.to_string()));
        }
    }
    assert!(found_header, "{name}: missing `// expect:` header");
    out.sort();
    out
}

fn actual(checked: &Checked, file_index: usize) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = checked
        .diagnostics()
        .iter()
        .filter(|d| d.span.file.0 as usize == file_index)
        .map(|d| {
            let file = checked.sources().get(d.span.file);
            let line = file.line_col(d.span.start as usize).line;
            (line, d.code.as_str().to_string())
        })
        .collect();
    out.sort();
    out
}

fn header(items: &[(usize, String)]) -> String {
    let mut s = String::from("// expect:");
    for (line, code) in items {
        let _ = write!(s, " {code}@{line}");
    }
    s
}

fn rendered(checked: &Checked) -> String {
    checked
        .diagnostics()
        .iter()
        .map(|d| render(d, checked.sources(), RenderOptions { color: false }))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks one case; `Err` carries a readable account of every difference.
fn run_case(case: &Case) -> Result<(), String> {
    let sources = load(case);
    let texts: Vec<(String, String)> = sources
        .files()
        .map(|(_, f)| (f.name.clone(), f.text.clone()))
        .collect();
    let checked = match std::panic::catch_unwind(move || check(sources)) {
        Ok(c) => c,
        Err(_) => return Err(format!("{}: the frontend panicked", case.name)),
    };
    let mut report = String::new();
    for d in checked.diagnostics() {
        if d.severity != d.code.severity() {
            let _ = writeln!(
                report,
                "{}: reported as {} but declared {} in the codes table",
                d.code.as_str(),
                d.severity.as_str(),
                d.code.severity().as_str()
            );
        }
    }
    for (i, (name, text)) in texts.iter().enumerate() {
        let want = expected(text, name);
        let got = actual(&checked, i);
        if want != got {
            let _ = writeln!(
                report,
                "{name}:\n  expected {}\n  actual   {}",
                header(&want),
                header(&got)
            );
        }
    }
    if report.is_empty() {
        Ok(())
    } else {
        Err(format!("{report}--- rendered ---\n{}", rendered(&checked)))
    }
}

#[test]
fn invalid_corpus_matches_headers() {
    let cases = cases(&fixtures().join("invalid"));
    assert!(cases.len() >= 60, "corpus too small: {}", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases differ from their headers:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_code_is_exercised_by_the_corpus() {
    let mut expected_codes = BTreeSet::new();
    for case in cases(&fixtures().join("invalid")) {
        for f in &case.files {
            let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
            for (_, code) in expected(&text, &case.name) {
                expected_codes.insert(code);
            }
        }
    }
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !expected_codes.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "no corpus case under fixtures/invalid/ expects: {missing:?}"
    );
}

#[test]
fn valid_fixtures_check_clean() {
    let cases = cases(&fixtures().join("valid"));
    assert!(!cases.is_empty());
    for case in &cases {
        let checked = check(load(case));
        assert!(
            checked.diagnostics().is_empty(),
            "{} is not clean:\n{}",
            case.name,
            rendered(&checked)
        );
    }
}

#[test]
fn headers_are_read_as_written() {
    let e = expected(
        "// expect: vox/type/mismatch@4 vox/name/unknown@2\n// expect: vox/type/mismatch@3\nfn f() {}\n// expect: vox/type/arity@9\n",
        "t.vox",
    );
    assert_eq!(
        e,
        vec![
            (2, "vox/name/unknown".to_string()),
            (3, "vox/type/mismatch".to_string()),
            (4, "vox/type/mismatch".to_string()),
        ]
    );
    assert!(expected("// expect:\n", "t.vox").is_empty());
}
