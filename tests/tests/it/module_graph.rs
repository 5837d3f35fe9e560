//! cargo-vox's module structure (README, "Layout"): `context.rs` is what
//! every command is given, so it must not depend on the command line's
//! grammar (`cli.rs`), which names every command's `Args` — that made
//! `context`, `cli` and the command modules one import cycle. This test
//! reads cargo-vox's sources, builds the graph of `crate::…` (and
//! `super::…`) references between modules, and fails when `context` is on
//! a cycle or reaches `cli` or a command module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use vox_e2e::workspace_root;

/// The module path of a source file under `src/` (`lane/commands/build.rs`
/// → `lane::commands::build`, `doctor/mod.rs` → `doctor`, `lib.rs` → ``).
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((module_of(rel), text));
        }
    }
}

/// The module paths a path after `crate::` can name: the longest prefix
/// that is a module.
fn resolve(path: &[&str], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
}

/// The `::`-joined identifiers starting at `text`.
fn path_at(text: &str) -> Vec<&str> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].split("::").filter(|s| !s.is_empty()).collect()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = workspace_root().join("cargo-vox/src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &files {
        // A file's own `#[cfg(test)] mod tests` is not part of the structure.
        // Comments (intra-doc links) are not imports.
        let text = text.split("#[cfg(test)]").next().unwrap_or(text);
        let text: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.as_str();
        let to = edges.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let path = path_at(&text[at + "crate::".len()..]);
            if let Some(target) = resolve(&path, &modules) {
                if &target != module {
                    to.insert(target);
                }
            }
        }
        for (at, _) in text.match_indices("super::") {
            let mut parent: Vec<&str> = module.split("::").collect();
            parent.pop();
            let mut path = parent;
            path.extend(path_at(&text[at + "super::".len()..]));
            if let Some(target) = resolve(&path, &modules) {
                if &target != module {
                    to.insert(target);
                }
            }
        }
    }
    edges
}

fn reachable(from: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn the_graph_sees_the_command_modules() {
    // The reader must find what it checks, or the test below proves nothing.
    let edges = graph();
    let from_cli = edges.get("cli").cloned().unwrap_or_default();
    for command in ["check", "fmt", "fix", "schema", "batch", "doctor", "lsp"] {
        assert!(
            from_cli.contains(command),
            "cli → {command} not seen: {from_cli:?}"
        );
    }
    assert!(
        edges.get("context").is_some_and(|e| e.contains("error")),
        "context → error not seen"
    );
}

#[test]
fn context_is_on_no_import_cycle_and_never_reaches_the_cli() {
    let edges = graph();
    let from_context = reachable("context", &edges);
    let commands = [
        "cli", "check", "fmt", "fix", "schema", "batch", "doctor", "lsp", "lane",
    ];
    let reached: Vec<&str> = commands
        .iter()
        .copied()
        .filter(|c| {
            from_context
                .iter()
                .any(|m| m == c || m.starts_with(&format!("{c}::")))
        })
        .collect();
    assert!(
        reached.is_empty(),
        "context.rs reaches the command line or commands through its imports: {reached:?} (all reached: {from_context:?})"
    );
    assert!(
        !from_context.contains("context"),
        "context.rs is on an import cycle: {from_context:?}"
    );
}
