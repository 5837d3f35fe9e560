//! The build lane reuses the workspace `cargo metadata` read last time
//! while nothing it was read from changed (cargo-vox's `workspace::cache`):
//! a no-op `cargo vox build` runs one cargo, the build; a new member is
//! seen at once; `VOX_WORKSPACE_CACHE=off` always asks cargo.

#![cfg(unix)]

use std::path::{Path, PathBuf};

use vox_e2e::{cargo_bin, lane_with, only_envelope, work_dir, BUILD};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn member(root: &Path, name: &str, lib: &str) {
    write(
        &root.join("crates").join(name).join("Cargo.toml"),
        &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
    );
    write(&root.join("crates").join(name).join("src/lib.rs"), lib);
}

/// A workspace of one member `a` in a work directory named `name`, and
/// beside it (outside the workspace: nothing but the test's edits changes
/// it) a directory for the cache with a cargo that notes each subcommand it
/// runs in a log: (workspace, aux directory, log, the logging cargo).
fn logged_workspace(name: &str) -> (PathBuf, PathBuf, PathBuf, String) {
    let root = work_dir(name);
    write(
        &root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
    );
    member(&root, "a", "pub fn a() -> i32 {\n    1\n}\n");
    let aux = work_dir(&format!("{name}-aux"));
    let log = aux.join("cargo.log");
    let wrapper = aux.join("logging-cargo");
    vox_e2e::write_executable(
        &wrapper,
        &format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            cargo_bin().display()
        ),
    );
    (root, aux, log, wrapper.display().to_string())
}

#[test]
fn a_fresh_workspace_is_not_read_again_and_a_new_member_is_seen() {
    let (root, aux, log, wrapper) = logged_workspace("workspace-cache");
    let cache = aux.join("cache");
    let cache_dir = cache.display().to_string();
    let build = |cache: &str| {
        let _ = std::fs::remove_file(&log);
        let r = lane_with(
            &root,
            &["--json", "build"],
            &[("CARGO", &wrapper), ("VOX_WORKSPACE_CACHE", cache)],
            BUILD,
        );
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        (only_envelope(&r, "build"), ran, r)
    };

    let (first, ran, r) = build(&cache_dir);
    assert!(first.ok, "{}", r.dump());
    assert!(ran.lines().any(|l| l == "metadata"), "{ran}");
    // Nothing changed: the build alone, and the same envelope.
    let (again, ran, r) = build(&cache_dir);
    assert_eq!(ran.lines().collect::<Vec<_>>(), ["build"], "{}", r.dump());
    assert_eq!(again, first);

    // A new member under the glob, with a warning: read again, and its
    // warning is the workspace's (a stale member list would drop it as a
    // path dependency's).
    member(&root, "b", "pub fn b() {\n    let unused = 1;\n}\n");
    let (with_b, ran, r) = build(&cache_dir);
    assert!(ran.lines().any(|l| l == "metadata"), "{}", r.dump());
    assert_eq!(with_b.warning_count, 1, "{}", r.dump());
    assert_eq!(
        with_b.diagnostics[0].package.as_deref(),
        Some("b"),
        "{}",
        r.dump()
    );
    let (_, ran, _) = build(&cache_dir);
    assert_eq!(ran.lines().collect::<Vec<_>>(), ["build"]);

    // Turned off: cargo is asked every time.
    let (off, ran, r) = build("off");
    assert!(ran.lines().any(|l| l == "metadata"), "{}", r.dump());
    assert_eq!(off, with_b);
}

/// The cache is read only from where it would be written: a cache
/// directory others may write (world-writable, no sticky bit) is not read,
/// and an entry without stamps — which nothing could ever make stale, so a
/// planted one would stand forever — is not taken. Either way cargo is
/// asked (`metadata` runs).
#[test]
fn a_cache_others_could_plant_in_is_not_read() {
    use std::os::unix::fs::PermissionsExt as _;
    let (root, aux, log, wrapper) = logged_workspace("workspace-cache-planted");
    let cache = aux.join("cache");
    let cache_dir = cache.display().to_string();
    let build = || {
        let _ = std::fs::remove_file(&log);
        let r = lane_with(
            &root,
            &["--json", "build"],
            &[("CARGO", &wrapper), ("VOX_WORKSPACE_CACHE", &cache_dir)],
            BUILD,
        );
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        (only_envelope(&r, "build"), ran, r)
    };
    let (first, _, r) = build();
    assert!(first.ok, "{}", r.dump());
    let (_, ran, _) = build();
    assert_eq!(
        ran.lines().collect::<Vec<_>>(),
        ["build"],
        "the cache works"
    );

    // Others may write the directory: not read.
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_, ran, r) = build();
    assert!(ran.lines().any(|l| l == "metadata"), "{ran}\n{}", r.dump());
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();

    // An entry whose stamps were taken out: not taken.
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
    value["stamps"] = serde_json::json!([]);
    std::fs::write(&entry, value.to_string()).unwrap();
    let (_, ran, r) = build();
    assert!(ran.lines().any(|l| l == "metadata"), "{ran}\n{}", r.dump());
}
