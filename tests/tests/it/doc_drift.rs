//! Facts the docs state that the code decides (same spirit as
//! `doc_citations`): the subcommands `cargo vox --help` names, the envelope
//! `command` values README lists, and the contract version docs/runtime.md
//! shows. Each is read from the code, and the test fails when a doc
//! disagrees.

use std::time::Duration;

use vox_e2e::workspace_root;

/// `cargo vox --help`: its first line, and the names under `Commands:`.
fn help() -> (String, Vec<String>) {
    let run = vox_e2e::run(
        std::process::Command::new(vox_e2e::cargo_vox_bin()).arg("--help"),
        Duration::from_secs(60),
    );
    run.assert_success();
    let about = run.stdout.lines().next().unwrap_or_default().to_string();
    let commands = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    (about, commands)
}

fn subcommands() -> Vec<String> {
    help().1
}

#[test]
fn the_help_summary_names_every_subcommand() {
    let (about, commands) = help();
    assert!(
        commands.len() >= 10,
        "commands read from --help: {commands:?}"
    );
    let listed: Vec<&str> = about
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(listed, commands, "cargo vox --help's summary: {about:?}");
}

#[test]
fn readme_lists_every_envelope_command() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `command` |"))
        .expect("README's envelope table has a `command` row");
    // `doctor` prints its own report and `lsp` speaks LSP: no envelopes.
    for name in subcommands() {
        if name == "doctor" || name == "lsp" {
            continue;
        }
        assert!(
            row.contains(&format!("`{name}`")),
            "README's `command` row lacks `{name}`: {row}"
        );
    }
}

#[test]
fn docs_show_the_current_contract_version() {
    let text =
        std::fs::read_to_string(workspace_root().join("docs/runtime.md")).expect("docs/runtime.md");
    let want = format!("assert_contract({})", vox_runtime::CONTRACT_VERSION);
    let mut found = 0;
    for (at, _) in text.match_indices("assert_contract(") {
        found += 1;
        assert!(
            text[at..].starts_with(&want),
            "docs/runtime.md shows {}, the contract is {want}",
            &text[at..at + 20]
        );
    }
    assert!(found > 0, "docs/runtime.md no longer shows assert_contract");
}
