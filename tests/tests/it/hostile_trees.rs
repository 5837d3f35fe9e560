//! `cargo vox check` on checkouts nobody vetted: FIFOs, device files, huge
//! sparse files and symlink loops named or placed like Vox sources. Each
//! must end quickly, in bounded memory, with a valid result (see the
//! README's `cargo vox check` section and docs/language.md, "Source files").
//!
//! Every run has a deadline ([`LIMIT`]) and, where the shell allows, a cap
//! on the child's address space, so a regression fails the test instead of
//! hanging CI or exhausting the machine's memory.
#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use vox_e2e::{
    cargo_vox_bin, for_fixture_builds, json_lines, only_envelope, run, unique, work_dir, Run,
};
use vox_metadata::Envelope;

/// Far more than a check of a few small files takes, even on a loaded machine.
const LIMIT: Duration = Duration::from_secs(20);

/// Address-space cap for the child (`ulimit -v`, KiB): 3 GiB.
const MEMORY_KIB: u64 = 3 * 1024 * 1024;

const VALID: &str = "type Point {\n    x: int\n    y: int\n}\n\nfn norm(p: Point) to int {\n    return p.x + p.y\n}\n";

/// A package with `vox/m.vox` ([`VALID`]) and nothing else; the caller adds
/// the hostile entries. Returns the package root.
fn package(tag: &str) -> PathBuf {
    let root = work_dir(&unique(tag));
    std::fs::create_dir_all(root.join("vox")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(root.join("vox/m.vox"), VALID).unwrap();
    root
}

/// Runs `cargo-vox ARGS` in `dir` under [`LIMIT`] and [`MEMORY_KIB`]; it
/// must not panic, and under `--json` stdout must be exactly one envelope.
fn vox(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB} 2>/dev/null; exec \"$0\" \"$@\""
        ))
        .arg(cargo_vox_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1");
    for_fixture_builds(&mut cmd);
    let r = run(&mut cmd, LIMIT);
    assert!(
        !r.stderr.contains("panicked"),
        "cargo-vox panicked\n{}",
        r.dump()
    );
    if args.contains(&"--json") {
        assert_eq!(
            json_lines(&r).len(),
            1,
            "exactly one envelope\n{}",
            r.dump()
        );
    }
    r
}

fn envelope(r: &Run) -> Envelope {
    only_envelope(r, "check")
}

/// `check --json ARGS` fails (exit 1) without diagnostics, with a message
/// naming `file` and containing `why`.
fn assert_refused(root: &Path, args: &[&str], file: &str, why: &str) {
    let mut all = vec!["--json", "check"];
    all.extend_from_slice(args);
    let r = vox(root, &all);
    r.assert_code(1);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert!(env.diagnostics.is_empty(), "{env:?}");
    let message = env.message.as_deref().expect("a message");
    assert!(
        message.contains(file) && message.contains(why),
        "message should name {file} and say {why:?}: {env:?}"
    );
}

/// `check --json ARGS` succeeds having read `files` files, none twice.
fn assert_clean(root: &Path, args: &[&str], files: usize) {
    let mut all = vec!["--json", "check"];
    all.extend_from_slice(args);
    let r = vox(root, &all);
    r.assert_code(0);
    let env = envelope(&r);
    assert!(env.ok, "{env:?}");
    assert!(env.diagnostics.is_empty(), "{env:?}");
    let mut human = vec!["check"];
    human.extend_from_slice(args);
    let r = vox(root, &human);
    r.assert_code(0);
    let summary = format!(
        "checked {files} Vox file{}",
        if files == 1 { "" } else { "s" }
    );
    assert!(
        r.stderr.contains(&summary),
        "want {summary:?}\n{}",
        r.dump()
    );
}

#[test]
fn fifo_named_like_a_source_is_refused_not_waited_on() {
    let root = package("hostile-fifo");
    let made = Command::new("mkfifo")
        .arg(root.join("vox/x.vox"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo failed");
    // Package mode, a directory, and the FIFO named on the command line.
    for args in [&[][..], &["vox"], &["vox/x.vox"]] {
        assert_refused(&root, args, "x.vox", "not a regular file");
    }
    let human = vox(&root, &["check"]);
    human.assert_code(1);
    assert_eq!(human.stdout, "", "{}", human.dump());
    assert!(
        human.stderr.contains("x.vox") && human.stderr.contains("a FIFO"),
        "{}",
        human.dump()
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn symlink_to_dev_zero_is_refused_not_read() {
    let root = package("hostile-zero");
    symlink("/dev/zero", root.join("vox/x.vox")).unwrap();
    for args in [&[][..], &["vox"], &["vox/x.vox"]] {
        assert_refused(&root, args, "x.vox", "not a regular file");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn huge_sparse_file_is_refused_without_reading_it() {
    let root = package("hostile-sparse");
    let big = std::fs::File::create(root.join("vox/big.vox")).unwrap();
    big.set_len(2 << 30).unwrap(); // 2 GiB, sparse: no disk used
    drop(big);
    for args in [&[][..], &["vox"], &["vox/big.vox"]] {
        assert_refused(&root, args, "big.vox", "8 MiB");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn two_symlinks_to_the_directory_itself_are_walked_once() {
    let root = package("hostile-dots");
    symlink(".", root.join("vox/a")).unwrap();
    symlink(".", root.join("vox/b")).unwrap();
    assert_clean(&root, &[], 1);
    assert_clean(&root, &["vox"], 1);
    assert_clean(&root, &["vox", "vox/a/b", "vox/b/m.vox"], 1);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn self_symlink_gives_no_duplicate_definitions() {
    let root = package("hostile-self");
    symlink(".", root.join("vox/self")).unwrap();
    // And a directory reached from above: `vox/sub/up -> ..`.
    std::fs::create_dir(root.join("vox/sub")).unwrap();
    symlink("..", root.join("vox/sub/up")).unwrap();
    assert_clean(&root, &[], 1);
    assert_clean(&root, &["vox"], 1);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn file_reached_by_two_paths_is_one_file() {
    let root = package("hostile-twice");
    symlink("m.vox", root.join("vox/n.vox")).unwrap();
    std::fs::create_dir(root.join("elsewhere")).unwrap();
    symlink("../vox/m.vox", root.join("elsewhere/m.vox")).unwrap();
    std::fs::hard_link(root.join("vox/m.vox"), root.join("vox/hard.vox")).unwrap();
    assert_clean(&root, &[], 1);
    assert_clean(&root, &["vox"], 1);
    assert_clean(&root, &["vox", "elsewhere", "vox/n.vox"], 1);
    // A source directory listed twice under two names.
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [package.metadata.vox]\nsources = [\"vox\", \"elsewhere\", \"again\"]\n\n[workspace]\n",
    )
    .unwrap();
    symlink("vox", root.join("again")).unwrap();
    assert_clean(&root, &[], 1);
    std::fs::remove_dir_all(&root).unwrap();
}
