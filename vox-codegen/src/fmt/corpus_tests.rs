//! `vox_codegen::fmt` over every `.vox` file of the repository's fixtures:
//! formatting is idempotent, keeps every comment, and never changes what the
//! module means — the same diagnostics (codes, severities, messages) and the
//! same emitted Rust (with run-time error sites, which name columns, left
//! out). Files with syntax errors are refused with their diagnostics.

use std::path::{Path, PathBuf};

use crate::emit::{emit, EmitOptions};
use crate::fmt::format_source;
use crate::test_support::{fixtures, vox_files};
use crate::{check, FileId, SourceFile, SourceMap};

/// Every fixture module: each directory holding `.vox` files directly is one
/// module (as `cargo vox check DIR` would check it, minus subdirectories),
/// and under `invalid/` each top-level file is its own module.
fn modules() -> Vec<Vec<PathBuf>> {
    let mut all = Vec::new();
    vox_files(&fixtures(), &mut all);
    assert!(all.len() > 20, "fixtures not found");
    let mut by_dir: std::collections::BTreeMap<PathBuf, Vec<PathBuf>> = Default::default();
    for f in all {
        let dir = f.parent().unwrap().to_path_buf();
        if dir.ends_with("invalid") {
            by_dir.insert(f.clone(), vec![f]);
        } else {
            by_dir.entry(dir).or_default().push(f);
        }
    }
    by_dir.into_values().collect()
}

struct Meaning {
    diagnostics: Vec<(String, String, String)>,
    rust: Option<String>,
}

fn meaning(texts: &[(String, String)]) -> Meaning {
    let mut sources = SourceMap::new();
    for (name, text) in texts {
        sources.add(SourceFile::new(name.clone(), text.clone()));
    }
    let mut checked = check(sources);
    let diagnostics = checked
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.as_str().to_string(),
                d.severity.as_str().to_string(),
                d.message.clone(),
            )
        })
        .collect();
    let rust = (!checked.has_errors()).then(|| {
        checked.info.sites.clear();
        emit(&checked.module, &checked.info, &EmitOptions::default())
    });
    Meaning { diagnostics, rust }
}

fn comments(text: &str) -> Vec<String> {
    // Good enough for the fixtures: no `//` inside their string literals
    // is checked here, the formatter's own check covers those.
    text.lines()
        .filter_map(|l| l.find("//").map(|i| l[i..].trim_end().to_string()))
        .collect()
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn formatting_every_fixture_is_idempotent_and_keeps_its_meaning() {
    let mut formatted_files = 0;
    let mut refused = 0;
    for module in modules() {
        let texts: Vec<(String, String)> = module
            .iter()
            .map(|p| {
                let bytes = std::fs::read(p).unwrap();
                (name(p), String::from_utf8_lossy(&bytes).into_owned())
            })
            .collect();
        let mut after = Vec::new();
        let mut all_ok = true;
        for (i, (n, text)) in texts.iter().enumerate() {
            match format_source(FileId(i as u32), text) {
                Ok(once) => {
                    formatted_files += 1;
                    let twice = format_source(FileId(0), &once)
                        .unwrap_or_else(|d| panic!("{n}: formatted text has errors: {d:?}"));
                    assert_eq!(twice, once, "{n}: formatting twice changes it");
                    assert_eq!(comments(&once), comments(text), "{n}: comments changed");
                    // Indentation and trailing space are the formatter's: a
                    // copy with none (and CRLF line ends) formats the same.
                    // Except inside a multi-line string, whose lines are
                    // its text (the formatter leaves them as they are).
                    let flat: String = if text.contains("\"\"\"") {
                        text.clone()
                    } else {
                        text.lines()
                            .map(|l| format!("{}  \r\n", l.trim_start()))
                            .collect()
                    };
                    assert_eq!(
                        format_source(FileId(0), &flat).as_ref(),
                        Ok(&once),
                        "{n}: unindented copy formats differently"
                    );
                    after.push((n.clone(), once));
                }
                Err(d) => {
                    refused += 1;
                    assert!(d.iter().any(|d| d.is_error()), "{n}: refused without error");
                    all_ok = false;
                    after.push((n.clone(), text.clone()));
                }
            }
        }
        if !all_ok {
            continue;
        }
        let (a, b) = (meaning(&texts), meaning(&after));
        assert_eq!(
            a.diagnostics, b.diagnostics,
            "{module:?}: diagnostics changed"
        );
        assert_eq!(a.rust, b.rust, "{module:?}: emitted Rust changed");
    }
    assert!(formatted_files > 50, "{formatted_files} formatted");
    assert!(
        refused > 10,
        "{refused} refused: syntax fixtures must be refused"
    );
}

#[test]
fn the_example_in_docs_language_md_is_what_fmt_does() {
    let doc = std::fs::read_to_string(fixtures().join("../docs/language.md")).unwrap();
    let section = &doc[doc.find("## Formatting").expect("a Formatting section")..];
    let blocks: Vec<&str> = section
        .split("```vox\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(blocks.len() >= 2, "two examples: before and after");
    let formatted = format_source(FileId(0), blocks[0]).unwrap();
    assert_eq!(formatted, blocks[1]);
    assert_eq!(format_source(FileId(0), blocks[1]).unwrap(), blocks[1]);
}
