//! vox-build is compiled into every user's build: its normal dependency
//! tree stays small and free of the heavy crates (README, vox-build).

use std::collections::BTreeSet;

use vox_e2e::{cargo, run, workspace_root, BUILD};

const HEAVY: &[&str] = &["tokio", "reqwest", "hyper", "clap", "sysinfo", "openssl"];

#[test]
fn vox_build_dependency_tree_is_light() {
    let args = [
        "tree",
        "-p",
        "vox-build",
        "-e",
        "normal",
        "--prefix",
        "none",
        "--format",
        "{p}",
    ];
    // Offline first (everything is already fetched when the tests run);
    // online only if the offline resolve is not possible.
    let mut tree = run(cargo(&workspace_root()).args(args).arg("--offline"), BUILD);
    if !tree.status.success() {
        tree = run(cargo(&workspace_root()).args(args), BUILD);
    }
    tree.assert_success();

    let crates: BTreeSet<String> = tree
        .stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    let names: BTreeSet<&str> = crates
        .iter()
        .map(|c| c.split(' ').next().unwrap())
        .collect();
    assert!(names.contains("vox-build"), "{}", tree.dump());
    assert!(names.contains("vox-codegen"), "{}", tree.dump());
    for heavy in HEAVY {
        let found: Vec<&&str> = names
            .iter()
            .filter(|n| {
                **n == *heavy
                    || n.starts_with(&format!("{heavy}-"))
                    || n.starts_with(&format!("{heavy}_"))
            })
            .collect();
        assert!(
            found.is_empty(),
            "vox-build must not depend on {heavy}: found {found:?}\n{}",
            tree.stdout
        );
    }
    eprintln!(
        "vox-build's normal dependency tree: {} crates: {:?}",
        crates.len(),
        crates
    );
    assert!(
        crates.len() < 10,
        "vox-build's dependency tree has {} crates (limit 9): {crates:?}",
        crates.len()
    );
}
