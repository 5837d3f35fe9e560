//! The tree-sitter grammar (`editors/tree-sitter-vox/`): the committed
//! parser is what `tree-sitter generate` makes from `grammar.js`, its own
//! corpus and highlight queries pass `tree-sitter test`, and it parses
//! every fixture the Vox parser accepts without an ERROR or MISSING node.
//!
//! Needs the `tree-sitter` CLI (`cargo install tree-sitter-cli`, which
//! `.ci/run` does) and a C compiler; without the CLI the test is skipped
//! with a message saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use vox_e2e::{run, workspace_root};

/// `tree-sitter` from `VOX_TREE_SITTER`, PATH or cargo's bin directory.
fn tree_sitter() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("VOX_TREE_SITTER") {
        candidates.push(p.into());
    }
    candidates.push("tree-sitter".into());
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo").into_os_string()))
    {
        candidates.push(Path::new(&home).join("bin/tree-sitter"));
    }
    let found = candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        eprintln!("SKIPPED: the tree-sitter CLI is not installed (cargo install tree-sitter-cli); the tree-sitter grammar was not tested");
    }
    found
}

fn grammar_dir() -> PathBuf {
    workspace_root().join("editors/tree-sitter-vox")
}

/// A scratch copy of the grammar directory (the CLI writes into it).
fn scratch_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&grammar_dir(), tmp.path());
    tmp
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == "node_modules" {
            continue;
        }
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

const WAIT: Duration = Duration::from_secs(600);

#[test]
fn the_committed_parser_is_generated_from_the_grammar() {
    let Some(ts) = tree_sitter() else { return };
    let tmp = scratch_copy();
    run(
        Command::new(&ts).arg("generate").current_dir(tmp.path()),
        WAIT,
    )
    .assert_success();
    for f in ["src/parser.c", "src/grammar.json", "src/node-types.json"] {
        let committed = std::fs::read_to_string(grammar_dir().join(f))
            .unwrap_or_else(|e| panic!("{f} is not committed: {e}"));
        let fresh = std::fs::read_to_string(tmp.path().join(f)).unwrap();
        assert!(
            committed == fresh,
            "{f} is stale: run `tree-sitter generate` in editors/tree-sitter-vox and commit src/"
        );
    }
}

#[test]
fn the_grammar_passes_its_corpus_and_highlight_tests() {
    let Some(ts) = tree_sitter() else { return };
    let tmp = scratch_copy();
    run(Command::new(&ts).arg("test").current_dir(tmp.path()), WAIT).assert_success();
    // The highlight queries name only nodes and fields the grammar has.
    let sample = workspace_root().join("fixtures/valid/invoice.vox");
    let out = run(
        Command::new(&ts)
            .args(["query", "queries/highlights.scm"])
            .arg(&sample)
            .current_dir(tmp.path()),
        WAIT,
    );
    out.assert_success();
    for capture in [
        "keyword",
        "type.definition",
        "function",
        "string",
        "comment",
        "attribute",
    ] {
        assert!(
            out.stdout.contains(&format!(" - {capture}, ")),
            "no `{capture}` capture in invoice.vox: {}",
            out.dump()
        );
    }
}

/// Every `.vox` file under `fixtures/` that the Vox parser accepts.
fn parsable_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "vox") {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(&workspace_root().join("fixtures"), &mut all);
    all.into_iter()
        .filter(|p| {
            let mut sources = vox_codegen::SourceMap::new();
            sources.add(vox_codegen::SourceFile::from_bytes(
                "f.vox",
                &std::fs::read(p).unwrap(),
            ));
            vox_codegen::parse(&sources).diagnostics().is_empty()
        })
        .collect()
}

#[test]
fn every_fixture_the_vox_parser_accepts_parses_without_errors() {
    let Some(ts) = tree_sitter() else { return };
    let files = parsable_fixtures();
    assert!(files.len() > 40, "only {} parsable fixtures", files.len());
    let tmp = scratch_copy();
    let out = run(
        Command::new(&ts)
            .args(["parse", "--quiet", "--stat"])
            .args(&files)
            .current_dir(tmp.path()),
        WAIT,
    );
    let errors: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("ERROR") || l.contains("MISSING"))
        .collect();
    assert!(
        errors.is_empty() && out.status.success(),
        "tree-sitter found errors in fixtures the Vox parser accepts:\n{}\n{}",
        errors.join("\n"),
        out.dump()
    );
    // A control: a file with a syntax error is reported, or this test could not fail.
    let bad = tmp.path().join("bad.vox");
    std::fs::write(&bad, "fn f( to int {\n").unwrap();
    let out = run(
        Command::new(&ts)
            .args(["parse", "--quiet"])
            .arg(&bad)
            .current_dir(tmp.path()),
        WAIT,
    );
    assert!(
        out.stdout.contains("ERROR") || out.stdout.contains("MISSING") || !out.status.success(),
        "a broken file parsed cleanly: {}",
        out.dump()
    );
}
