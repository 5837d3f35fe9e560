//! The emitted Rust, pinned: snapshots of the README example module and of
//! the kitchen-sink crate's module, and the determinism promise (README, vox-build)
//! (the same sources give byte-identical Rust).
//!
//! Modules are assembled the way vox-build assembles them: every `.vox`
//! file of the source directories, sorted by path, named relative to the
//! package root.

use crate::support;

use std::path::Path;

use support::{fixtures, vox_files};
use vox_codegen::emit::EmitOptions;
use vox_codegen::{check, SourceFile, SourceMap};

/// (package-relative name, text) of every source, in vox-build's order.
fn package_sources(root: &Path, dirs: &[&str]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for d in dirs {
        vox_files(&root.join(d), &mut files);
    }
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|f| {
            let name = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (name, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// Checks and emits, as vox-build does; panics on diagnostics of any kind.
fn emit_sources(sources: &[(String, String)]) -> String {
    let mut map = SourceMap::new();
    for (name, text) in sources {
        map.add(SourceFile::new(name.clone(), text.clone()));
    }
    let checked = check(map);
    assert!(
        checked.diagnostics().is_empty(),
        "{:#?}",
        checked.diagnostics()
    );
    let opts = EmitOptions {
        script: false,
        standalone: false,
        source_names: sources.iter().map(|(n, _)| n.clone()).collect(),
        cassettes: None,
    };
    checked.emit(&opts)
}

fn invoice() -> Vec<(String, String)> {
    package_sources(&fixtures().join("valid"), &["invoice.vox"])
}

fn kitchen_sink() -> Vec<(String, String)> {
    package_sources(&fixtures().join("kitchen-sink"), &["vox", "more-vox"])
}

/// The generated header names the compiler version; snapshots should not
/// change on every release.
fn without_version(code: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    code.replacen(
        &format!("by vox-build {version} from"),
        "by vox-build [version] from",
        1,
    )
}

#[test]
fn invoice_module() {
    insta::assert_snapshot!(without_version(&emit_sources(&invoice())));
}

#[test]
fn numbers_module() {
    let sources = package_sources(&fixtures().join("valid"), &["numbers.vox"]);
    insta::assert_snapshot!(without_version(&emit_sources(&sources)));
}

#[test]
fn kitchen_sink_module() {
    let sources = kitchen_sink();
    let names: Vec<&str> = sources.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "more-vox/recursion.vox",
            "vox/categories.vox",
            "vox/checks.vox",
            "vox/keywords.vox",
            "vox/shapes.vox"
        ]
    );
    insta::assert_snapshot!(without_version(&emit_sources(&sources)));
}

#[test]
fn emission_is_deterministic() {
    for sources in [invoice(), kitchen_sink()] {
        // A fresh check each time: nothing may depend on hash seeds,
        // addresses or the state of an earlier run.
        let first = emit_sources(&sources);
        for _ in 0..5 {
            assert_eq!(emit_sources(&sources), first);
        }
        // Emitting twice from one checked module gives the same text too.
        let mut map = SourceMap::new();
        for (name, text) in &sources {
            map.add(SourceFile::new(name.clone(), text.clone()));
        }
        let checked = check(map);
        let opts = EmitOptions {
            script: false,
            standalone: false,
            source_names: sources.iter().map(|(n, _)| n.clone()).collect(),
            cassettes: None,
        };
        let a = checked.emit(&opts);
        let b = checked.emit(&opts);
        assert_eq!(a, b);
        assert_eq!(a, first);
    }
}

#[test]
fn emission_is_deterministic_across_threads() {
    // Each thread gets its own `RandomState` seeds for any HashMap the
    // compiler uses internally.
    let sources = kitchen_sink();
    let expected = emit_sources(&sources);
    let outputs: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| emit_sources(&sources))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in outputs {
        assert_eq!(out, expected);
    }
}

#[test]
fn many_structured_outputs_are_emitted_in_a_stable_order() {
    // Many @ai functions and shared types make any hash-ordered iteration in
    // schema collection or `$defs` show up as a difference between runs.
    let mut src = String::new();
    for i in 0..40 {
        src.push_str(&format!(
            "type Part{i} {{ id: int\n label: str }}\n\
             type Whole{i} {{ a: Part{i}\n b: Part{i}\n rest: list[Part{}] }}\n\
             @ai(structured_output = Whole{i})\n@uses(net)\n\
             fn make{i}(text: str) to Whole{i} {{\n    \
             Whole{i} {{ a: Part{i} {{ id: 1, label: text }}, b: Part{i} {{ id: 2, label: text }}, rest: [] }}\n}}\n",
            (i + 1) % 40
        ));
    }
    let sources = vec![("vox/many.vox".to_string(), src)];
    let first = emit_sources(&sources);
    for _ in 0..5 {
        assert_eq!(emit_sources(&sources), first);
    }
    let statics: Vec<&str> = first
        .lines()
        .filter(|l| l.starts_with("pub static VOX_SCHEMA_"))
        .collect();
    assert_eq!(statics.len(), 40);
}

/// `fn main` with `@uses(net)` is an entry point like any `fn main`: a plain
/// function that runs the network calls on `block_on`, named `main` in a
/// script and `vox_main` in a library — never an `async fn`, which a
/// script's `main` cannot be (docs/language.md, "Entry points and recursion").
#[test]
fn net_main_is_a_plain_entry_point() {
    let text = "@ai(structured_output = str)\n@uses(net)\nfn greet(n: str) to str {\n    return n\n}\n\n@uses(net)\nfn main() {\n    print(greet(\"x\"))\n}\n";
    let mut map = SourceMap::new();
    map.add(SourceFile::new("main.vox".to_string(), text.to_string()));
    let checked = check(map);
    assert!(
        checked.diagnostics().is_empty(),
        "{:#?}",
        checked.diagnostics()
    );
    for (script, head) in [
        (true, "\nfn main() -> ::std::process::ExitCode {\n"),
        (
            false,
            "\npub fn vox_main() -> ::std::result::Result<(), ::vox_runtime::Error> {\n",
        ),
    ] {
        let opts = EmitOptions {
            script,
            standalone: false,
            source_names: vec!["main.vox".into()],
            cassettes: None,
        };
        let rust = checked.emit(&opts);
        assert!(rust.contains(head), "script={script}:\n{rust}");
        assert!(!rust.contains("async fn main"), "script={script}:\n{rust}");
        assert!(
            rust.contains("::vox_runtime::block_on(async move {"),
            "{rust}"
        );
    }
}
