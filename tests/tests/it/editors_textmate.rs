//! The VS Code extension's TextMate grammar (`editors/vscode/`) over every
//! fixture `.vox` file: no token gets an `invalid` scope, except in files
//! whose text the Vox lexer itself rejects (there the grammar marks the
//! same stray characters). The grammar is run by `vscode-tmgrammar-snap`
//! (the `vscode-tmgrammar-test` package, the tokenizer VS Code uses),
//! installed from npm into the target directory on first use. Without
//! npm the test is skipped with a message saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use vox_e2e::{run, target_dir, workspace_root};

/// The version the test pins (a new one may tokenize differently).
const TMGRAMMAR_TEST: &str = "vscode-tmgrammar-test@0.1.3";

fn npm_available() -> bool {
    Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `vscode-tmgrammar-snap`, installed under `target/editor-tools/` once.
fn tmgrammar_snap() -> Option<PathBuf> {
    if !npm_available() {
        eprintln!("SKIPPED: npm is not installed, so vscode-tmgrammar-test cannot be installed; the TextMate grammar was not tested");
        return None;
    }
    let dir = target_dir().join("editor-tools").join("tmgrammar");
    let bin = dir.join("node_modules/.bin/vscode-tmgrammar-snap");
    if !bin.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .arg(TMGRAMMAR_TEST),
            Duration::from_secs(600),
        )
        .assert_success();
    }
    Some(bin)
}

fn fixture_vox_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fixture_vox_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "vox") {
            out.push(p);
        }
    }
}

/// Lines of `text` (1-based) that got an `invalid.*` scope, per the snapshot.
fn invalid_lines(snap: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut line_no, mut line) = (0, String::new());
    for l in snap.lines() {
        if let Some(src) = l.strip_prefix('>') {
            line_no += 1;
            line = src.to_string();
        } else if l.starts_with('#') && l.contains(" invalid.") {
            out.push((line_no, format!("{line}\n{l}")));
        }
    }
    out
}

/// Runs the grammar over `files` (copied into a scratch directory) and
/// returns each file's invalid lines.
fn tokenize(snap_bin: &Path, files: &[(String, Vec<u8>)]) -> Vec<(String, Vec<(usize, String)>)> {
    let scratch = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(scratch.path().join(name), bytes).unwrap();
    }
    let package = workspace_root().join("editors/vscode/package.json");
    run(
        Command::new(snap_bin)
            .arg("--config")
            .arg(&package)
            .arg("-u")
            .arg(format!("{}/*.vox", scratch.path().display())),
        Duration::from_secs(600),
    )
    .assert_success();
    files
        .iter()
        .map(|(name, _)| {
            let snap = std::fs::read_to_string(scratch.path().join(format!("{name}.snap")))
                .unwrap_or_else(|e| panic!("no snapshot for {name}: {e}"));
            (name.clone(), invalid_lines(&snap))
        })
        .collect()
}

#[test]
fn every_fixture_tokenizes_without_invalid_scopes() {
    let Some(snap) = tmgrammar_snap() else {
        return;
    };
    let root = workspace_root();
    let mut paths = Vec::new();
    fixture_vox_files(&root.join("fixtures"), &mut paths);
    assert!(paths.len() > 50, "fixtures not found");
    let mut files: Vec<(String, Vec<u8>)> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap().display().to_string();
            (rel.replace(['/', '\\'], "__"), std::fs::read(p).unwrap())
        })
        .collect();
    // A control: a stray character must be caught, or this test could not fail.
    files.push((
        "control.vox".into(),
        b"fn f() to int {\n    return 1 $ 2\n}\n".to_vec(),
    ));
    let results = tokenize(&snap, &files);
    let mut failures = Vec::new();
    let mut control_caught = false;
    for ((name, invalid), (_, bytes)) in results.iter().zip(&files) {
        if name == "control.vox" {
            control_caught = !invalid.is_empty();
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let lexer_rejects = !vox_codegen::ide::lexer_diagnostics(&text).is_empty();
        if !invalid.is_empty() && !lexer_rejects {
            for (line, shown) in invalid {
                failures.push(format!("{name}:{line}:\n{shown}"));
            }
        }
    }
    assert!(control_caught, "the grammar did not mark `$` invalid");
    assert!(
        failures.is_empty(),
        "{} invalid token(s) in fixtures the lexer accepts:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The extension's manifest, language configuration and client script are
/// well formed and agree with each other: what VS Code reads when it loads
/// the folder.
#[test]
fn the_extension_manifest_wires_the_language_grammar_and_server() {
    let dir = workspace_root().join("editors/vscode");
    let read_json = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let pkg = read_json("package.json");
    let lang = &pkg["contributes"]["languages"][0];
    assert_eq!(lang["id"], "vox");
    assert_eq!(lang["extensions"][0], ".vox");
    let grammar = &pkg["contributes"]["grammars"][0];
    assert_eq!(grammar["language"], "vox");
    let tm = read_json(grammar["path"].as_str().unwrap());
    assert_eq!(tm["scopeName"], grammar["scopeName"]);
    let conf = read_json(lang["configuration"].as_str().unwrap());
    assert_eq!(conf["comments"]["lineComment"], "//");
    assert!(conf["autoClosingPairs"]
        .as_array()
        .is_some_and(|p| p.len() >= 4));
    let props = &pkg["contributes"]["configuration"]["properties"];
    assert_eq!(props["vox.server.command"]["default"], "cargo");
    assert_eq!(
        props["vox.server.args"]["default"],
        serde_json::json!(["vox", "lsp"])
    );
    assert!(pkg["dependencies"]["vscode-languageclient"].is_string());
    let main = pkg["main"].as_str().unwrap();
    let script = std::fs::read_to_string(dir.join(main)).unwrap();
    for needle in [
        "vscode-languageclient/node",
        "server.command",
        "server.args",
        "language: \"vox\"",
    ] {
        assert!(script.contains(needle), "{main} lacks {needle}");
    }
    // The script is valid JavaScript (where node is installed).
    if Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        run(
            Command::new("node").arg("--check").arg(dir.join(main)),
            Duration::from_secs(60),
        )
        .assert_success();
    } else {
        eprintln!("SKIPPED: node is not installed; extension.js was not syntax-checked");
    }
}
