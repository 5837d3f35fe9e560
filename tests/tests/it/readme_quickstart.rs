//! README, "Add Vox to your crate": a fresh crate built from the section's
//! text alone — its `Cargo.toml` lines, `build.rs`, `.vox` file and
//! `src/main.rs`, each the code block after a `<!-- quickstart:PATH -->`
//! marker — builds and runs offline, so the section cannot drift from what
//! works.

use std::time::Duration;

use vox_e2e::workspace_root;

/// The (path, text) of each marked code block in `readme`.
fn quickstart_files(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = readme;
    while let Some(at) = rest.find("<!-- quickstart:") {
        let after = &rest[at + "<!-- quickstart:".len()..];
        let Some(end) = after.find(" -->") else { break };
        let path = after[..end].to_string();
        let block = &after[end..];
        let Some(open) = block.find("```") else { break };
        let body = &block[open..];
        let Some(nl) = body.find('\n') else { break };
        let body = &body[nl + 1..];
        let Some(close) = body.find("```") else { break };
        out.push((path, body[..close].to_string()));
        rest = &body[close..];
    }
    out
}

#[test]
fn the_quickstart_crate_builds_and_runs_from_the_readme_alone() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md is readable");
    let files = quickstart_files(&readme);
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        ["Cargo.toml", "build.rs", "vox/hello.vox", "src/main.rs"],
        "README's quickstart markers"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = root.to_string_lossy().replace('\\', "/");
    for (path, text) in &files {
        let text = if path == "Cargo.toml" {
            // The section gives the dependency lines; a crate needs a
            // [package], and an empty [workspace] keeps it standalone.
            format!(
                "[package]\nname = \"quickstart\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n\n{}",
                text.replace("path/to/vox-for-cargo", &ws)
            )
        } else {
            text.clone()
        };
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let run = vox_e2e::run(
        vox_e2e::cargo(dir.path()).args(["run", "--quiet"]),
        Duration::from_secs(600),
    );
    run.assert_success();
    assert_eq!(run.stdout.trim(), "Hello, Ada!", "{}", run.dump());
}
