//! Code comments and docs cite the repository's own documents by heading —
//! `(docs/runtime.md, "Repairs")` — so a reader can follow them. This test
//! reads every citation in the workspace's sources and documents and fails
//! when the cited heading does not exist (a renamed section, a heading that
//! was never written), and when anything cites a design document that is not
//! in the repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vox_e2e::workspace_root;

/// The headings of a Markdown file: `#` lines, and the bold lead of a
/// paragraph or list item (`**Gemini's schema.** …`), which the docs use as
/// run-in headings. Backticks and a closing period are dropped.
fn headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('#') {
            out.push(normalise(rest.trim_start_matches('#')));
        }
        let item = line.strip_prefix("- ").unwrap_or(line);
        if let Some(rest) = item.strip_prefix("**") {
            if let Some(end) = rest.find("**") {
                out.push(normalise(&rest[..end]));
            }
        }
    }
    out
}

fn normalise(heading: &str) -> String {
    let words: Vec<&str> = heading.split_whitespace().collect();
    words
        .join(" ")
        .replace('`', "")
        .trim_end_matches(['.', ':'])
        .to_string()
}

/// Every `(docs/x.md, "Heading")` or `README, "Heading"` citation in `text`,
/// with a heading that may continue on the next comment line.
fn citations(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for doc in [
        "docs/language.md",
        "docs/runtime.md",
        "docs/diagnostics.md",
        "README",
    ] {
        let mut from = 0;
        while let Some(at) = text[from..].find(doc) {
            let start = from + at + doc.len();
            from = start;
            let rest = &text[start..];
            // `, "` or ` "`: a citation; anything else (a path in code) is not.
            let Some(open) = rest.strip_prefix(", \"").or(rest.strip_prefix(" \"")) else {
                continue;
            };
            let Some(close) = open.find('"') else {
                continue;
            };
            let raw = &open[..close];
            if raw.contains(['(', ')', ';', '{']) {
                continue; // code, not a citation
            }
            // A heading wrapped over comment lines: drop the `//` markers.
            let joined: Vec<&str> = raw
                .lines()
                .map(|l| l.trim().trim_start_matches("//!").trim_start_matches("///"))
                .map(|l| l.trim_start_matches("//").trim())
                .collect();
            let file = if doc == "README" { "README.md" } else { doc };
            out.push((file.to_string(), normalise(&joined.join(" "))));
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            sources(&path, out);
        } else if name.ends_with(".rs") || name.ends_with(".md") {
            out.push(path);
        }
    }
}

#[test]
fn every_cited_heading_exists() {
    let root = workspace_root();
    let mut docs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for doc in [
        "docs/language.md",
        "docs/runtime.md",
        "docs/diagnostics.md",
        "README.md",
    ] {
        let text = std::fs::read_to_string(root.join(doc)).expect("the docs exist");
        docs.insert(doc.to_string(), headings(&text));
    }
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut broken = Vec::new();
    // Spelled in pieces so that this file does not itself cite the document.
    let design = concat!("SP", "EC");
    let design_citations = [
        format!("{design} §"),
        format!("{design}.md"),
        "the spec ".to_string(),
    ];
    let mut seen = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        if shown == "tests/tests/it/doc_citations.rs" {
            continue; // this file's own examples
        }
        for (doc, heading) in citations(&text) {
            seen += 1;
            let known = &docs[&doc];
            if !known
                .iter()
                .any(|h| h == &heading || h.starts_with(&heading))
            {
                broken.push(format!("{shown}: {doc}, \"{heading}\""));
            }
        }
        // The design document is not part of the repository.
        for bad in &design_citations {
            if text.contains(bad.as_str()) {
                broken.push(format!(
                    "{shown}: cites `{bad}`, which is not in the repository"
                ));
            }
        }
    }
    assert!(seen > 20, "the citation reader found only {seen} citations");
    assert!(
        broken.is_empty(),
        "citations of missing headings:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_reader_sees_wrapped_and_run_in_headings() {
    let text = "// … (docs/runtime.md, \"Gemini's\n    // schema\"): keywords\n";
    assert_eq!(
        citations(text),
        [("docs/runtime.md".to_string(), "Gemini's schema".to_string())]
    );
    let doc = "## Empty lists and `None`\n\n**Gemini's schema.** text\n- **Builtins**: len\n";
    assert_eq!(
        headings(doc),
        ["Empty lists and None", "Gemini's schema", "Builtins"]
    );
    assert!(citations("path(\"docs/runtime.md\")").is_empty());
}

/// What a user of the published crates reads — an error, a diagnostic, a
/// hint — cites the docs' public place, not a repository path they do not
/// have: no string literal in the crates' sources (outside tests and
/// comments) says `(docs/…md`.
#[test]
fn messages_cite_the_docs_public_place() {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in [
        "vox-runtime",
        "vox-codegen",
        "vox-build",
        "vox-metadata",
        "cargo-vox",
    ] {
        sources(&root.join(krate).join("src"), &mut files);
    }
    let mut found = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests at the end of a file are not what users read.
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut in_string = false;
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !in_string && code.starts_with("//") {
                continue;
            }
            // A crude scan of string literals: enough for the sources'
            // style (no raw strings hold such citations).
            let mut literal = String::new();
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\\' if in_string => {
                        chars.next();
                    }
                    '"' => {
                        in_string = !in_string;
                        if !in_string {
                            literal.push('\n');
                        }
                    }
                    '/' if !in_string && chars.peek() == Some(&'/') => break,
                    c if in_string => literal.push(c),
                    _ => {}
                }
            }
            if literal.contains("(docs/") {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "messages cite repository paths:\n{}",
        found.join("\n")
    );
}
