//! The script cache of `cargo vox run FILE.vox` as a user, and another local
//! user, meet it: each script runs its own program, a cache directory that
//! someone else owns or may write is refused, a stamp never makes cargo-vox
//! run a program outside the cache's target directory, and a symlink planted
//! at the stamp is never written through.
//!
//! Script builds share the workspace's target directory (like every fixture
//! build here), so each test compiles only its small script crates.

use std::path::{Path, PathBuf};
use std::time::Duration;

use vox_e2e::{cargo_vox, run, target_dir, work_dir, Run, BUILD, QUICK};

/// `cargo-vox ARGS` in `dir` with the fixture provider and extra environment.
fn vox(dir: &Path, args: &[&str], env: &[(&str, &Path)], deadline: Duration) -> Run {
    let mut cmd = cargo_vox(dir);
    cmd.env("VOX_LLM_PROVIDER", "fixture").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run(&mut cmd, deadline);
    assert!(
        !r.stderr.contains("panicked at"),
        "cargo-vox panicked\n{}",
        r.dump()
    );
    r
}

/// `cargo vox run SCRIPT` with `cache` as the script cache.
fn run_script(dir: &Path, cache: &Path, script: &str) -> Run {
    vox(dir, &["run", script], &[("VOX_SCRIPT_CACHE", cache)], BUILD)
}

/// A script printing `line`, written to `dir/name`.
fn write_script(dir: &Path, name: &str, line: &str) {
    std::fs::write(
        dir.join(name),
        format!("fn main() {{\n    print(\"{line}\")\n}}\n"),
    )
    .expect("write script");
}

/// The stamp of the one script crate in `cache`.
fn only_stamp(cache: &Path) -> PathBuf {
    let stamps: Vec<PathBuf> = std::fs::read_dir(cache)
        .expect("read cache")
        .map(|e| e.expect("dir entry").path().join("vox-stamp"))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    assert_eq!(
        stamps.len(),
        1,
        "one stamp in {}: {stamps:?}",
        cache.display()
    );
    stamps.into_iter().next().expect("one stamp")
}

/// The hash cargo-vox's stamp records for a program
/// (cargo-vox/src/lane/script.rs: FNV-1a over little-endian 64-bit words,
/// the last 0–7 bytes one by one, then the length): what an attacker forging
/// a stamp computes.
fn program_hash(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w: [u8; 8] = w.try_into().expect("8 bytes");
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(PRIME);
    }
    for b in words.remainder() {
        h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
    }
    (h ^ bytes.len() as u64).wrapping_mul(PRIME)
}

#[test]
fn each_script_runs_its_own_program() {
    let dir = work_dir("script-cache-own-program");
    let cache = dir.join("cache");
    write_script(&dir, "a.vox", "script a");
    write_script(&dir, "b.vox", "script b");

    for (script, want) in [
        ("a.vox", "script a\n"),
        ("b.vox", "script b\n"),
        // Unchanged since its first run: served from the cache, and still a.
        ("a.vox", "script a\n"),
        ("b.vox", "script b\n"),
    ] {
        let r = run_script(&dir, &cache, script);
        r.assert_code(0);
        assert_eq!(r.stdout, want, "{script}\n{}", r.dump());
    }
}

/// Writes an executable shell script at `path` that prints `forged` and
/// creates `marker`.
#[cfg(unix)]
fn forged_program(path: &Path, marker: &Path) {
    let marker = marker.to_str().expect("UTF-8 path");
    vox_e2e::write_executable(path, &format!("#!/bin/sh\necho forged\ntouch '{marker}'\n"));
}

/// Rewrites `stamp` to name `program`, with the program's hash.
fn forge_stamp(stamp: &Path, program: &Path) {
    let saved = std::fs::read_to_string(stamp).expect("read stamp");
    let mut lines: Vec<String> = saved.lines().map(str::to_string).collect();
    assert!(lines.len() >= 2, "stamp: {saved:?}");
    lines[1] = program.to_str().expect("UTF-8 path").to_string();
    if lines.len() > 2 {
        let bytes = std::fs::read(program).expect("read program");
        lines[2] = format!("{:016x}", program_hash(&bytes));
    }
    std::fs::write(stamp, lines.join("\n") + "\n").expect("forge stamp");
}

#[cfg(unix)]
#[test]
fn a_stamp_naming_another_program_is_not_run() {
    let dir = work_dir("script-cache-forged-stamp");
    let cache = dir.join("cache");
    write_script(&dir, "c.vox", "script c");
    let r = run_script(&dir, &cache, "c.vox");
    r.assert_code(0);
    assert_eq!(r.stdout, "script c\n", "{}", r.dump());
    let stamp = only_stamp(&cache);
    let saved = std::fs::read_to_string(&stamp).expect("read stamp");
    let real = PathBuf::from(saved.lines().nth(1).expect("program line"));
    let real_name = real.file_name().expect("program file name");
    // This test hashes like cargo-vox: the forged stamps below are refused
    // for where their program is, not for a wrong hash.
    let real_hash = program_hash(&std::fs::read(&real).expect("read program"));
    assert_eq!(
        saved.lines().nth(2),
        Some(format!("{real_hash:016x}").as_str()),
        "stamp: {saved:?}"
    );

    // Outside the target directory the script was built in, under the
    // script's own program name (the work dir is inside that target dir, so
    // this goes to the temp dir).
    let outside = std::env::temp_dir().join(format!("vox-forged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    assert!(!outside.starts_with(target_dir()));
    // Inside the target directory, under another name.
    let other_name = dir.join("evil");
    assert!(other_name.starts_with(target_dir()));

    for (i, program) in [outside.join(real_name), other_name].iter().enumerate() {
        let marker = dir.join(format!("forged-program-{i}-ran"));
        forged_program(program, &marker);
        forge_stamp(&stamp, program);
        let r = run_script(&dir, &cache, "c.vox");
        assert!(!marker.exists(), "{} ran\n{}", program.display(), r.dump());
        r.assert_code(0);
        assert_eq!(r.stdout, "script c\n", "{}", r.dump());
    }
    let _ = std::fs::remove_dir_all(&outside);
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_stamp_is_replaced_not_followed() {
    let dir = work_dir("script-cache-stamp-symlink");
    let cache = dir.join("cache");
    write_script(&dir, "d.vox", "script d");
    let r = run_script(&dir, &cache, "d.vox");
    r.assert_code(0);

    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "victim").expect("write victim");
    let stamp = only_stamp(&cache);
    std::fs::remove_file(&stamp).expect("remove stamp");
    std::os::unix::fs::symlink(&victim, &stamp).expect("plant symlink");

    let r = run_script(&dir, &cache, "d.vox");
    r.assert_code(0);
    assert_eq!(r.stdout, "script d\n", "{}", r.dump());
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read victim"),
        "victim",
        "the stamp was written through the symlink"
    );
    let kind = std::fs::symlink_metadata(&stamp)
        .expect("stamp")
        .file_type();
    assert!(kind.is_file(), "the stamp is not a plain file: {kind:?}");
}

/// The refusal a `--json` run printed, with its message.
#[cfg(unix)]
fn refusal(r: &Run) -> String {
    r.assert_code(1);
    let env = vox_e2e::only_envelope(r, "run");
    assert!(!env.ok, "{env:?}");
    env.message.unwrap_or_default()
}

#[cfg(unix)]
#[test]
fn a_cache_others_may_write_or_own_is_refused() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = work_dir("script-cache-refused");
    write_script(&dir, "e.vox", "script e");
    // Were the cache accepted, the build would fail on this cargo instead.
    let nocargo = PathBuf::from("/nonexistent/cargo");
    let with_cache = |cache: &Path, args: &[&str]| {
        vox(
            &dir,
            args,
            &[("VOX_SCRIPT_CACHE", cache), ("CARGO", &nocargo)],
            QUICK,
        )
    };
    let mkdir = |path: &Path, mode: u32| {
        std::fs::create_dir(path).expect("create cache");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };

    let open = dir.join("open-cache");
    mkdir(&open, 0o777);
    let r = with_cache(&open, &["--json", "run", "e.vox"]);
    let message = refusal(&r);
    assert!(message.contains(open.to_str().unwrap()), "{message}");
    assert!(message.contains("writable by other users"), "{message}");
    assert!(message.contains("chmod go-w"), "{message}");
    assert!(!message.contains("nonexistent"), "{message}");
    // Human output says the same on stderr.
    let r = with_cache(&open, &["run", "e.vox"]);
    r.assert_code(1);
    assert!(r.stderr.contains("writable by other users"), "{}", r.dump());
    assert!(r.stdout.is_empty(), "{}", r.dump());

    // Private itself, but inside a directory anyone may change: another
    // user could rename it away and put theirs in its place.
    let inside_open = open.join("cache");
    mkdir(&inside_open, 0o700);
    let r = with_cache(&inside_open, &["--json", "run", "e.vox"]);
    let message = refusal(&r);
    assert!(
        message.contains(&format!("inside {}", open.display())),
        "{message}"
    );
    assert!(message.contains("mode 777"), "{message}");

    // Owned by someone else (only root can arrange that).
    let me = std::fs::metadata(&dir).expect("work dir").uid();
    if me != 0 {
        eprintln!("not root: skipping the cache owned by another user");
        return;
    }
    let theirs = dir.join("their-cache");
    mkdir(&theirs, 0o700);
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
    let r = with_cache(&theirs, &["--json", "run", "e.vox"]);
    let message = refusal(&r);
    assert!(message.contains(theirs.to_str().unwrap()), "{message}");
    assert!(message.contains("owned by uid 65534"), "{message}");
    assert!(message.contains("VOX_SCRIPT_CACHE"), "{message}");

    // Ours, inside a directory someone else owns.
    let mine = theirs.join("mine");
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    mkdir(&mine, 0o700);
    let r = with_cache(&mine, &["--json", "run", "e.vox"]);
    let message = refusal(&r);
    assert!(
        message.contains(&format!("inside {}", theirs.display())),
        "{message}"
    );
    assert!(message.contains("owned by uid 65534"), "{message}");
}

#[cfg(unix)]
#[test]
fn the_temp_dir_fallback_is_private_and_checked() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = work_dir("script-cache-temp-fallback");
    write_script(&dir, "f.vox", "script f");
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).expect("create tmp");
    let nocargo = PathBuf::from("/nonexistent/cargo");
    let fallback = |args: &[&str]| {
        let mut cmd = cargo_vox(&dir);
        cmd.env("VOX_LLM_PROVIDER", "fixture")
            .env("TMPDIR", &tmp)
            .env("CARGO", &nocargo)
            .env_remove("VOX_SCRIPT_CACHE")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("HOME")
            .args(args);
        run(&mut cmd, QUICK)
    };

    // No cache location configured: a private directory in TMPDIR. (The
    // build then fails on the missing cargo.)
    let r = fallback(&["--json", "run", "f.vox"]);
    r.assert_code(1);
    let made: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .expect("read tmp")
        .map(|e| e.expect("dir entry").path())
        .collect();
    assert_eq!(
        made.len(),
        1,
        "one cache dir in TMPDIR: {made:?}\n{}",
        r.dump()
    );
    let cache = &made[0];
    let meta = std::fs::symlink_metadata(cache).expect("cache dir");
    assert!(meta.is_dir(), "{}", cache.display());
    assert_eq!(meta.mode() & 0o777, 0o700, "{}", cache.display());
    assert_eq!(meta.uid(), std::fs::metadata(&dir).expect("dir").uid());

    // Another user's pick of the same place, opened to everyone: refused.
    std::fs::set_permissions(cache, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let message = refusal(&fallback(&["--json", "run", "f.vox"]));
    assert!(message.contains(cache.to_str().unwrap()), "{message}");
    assert!(message.contains("writable by other users"), "{message}");
}

/// A script whose path holds control characters (a `\x01`, a bare `\r`), a
/// bidi override rustc refuses in comments, a quote and a backslash: the
/// generated manifest and code stay valid and the script runs.
#[cfg(unix)]
#[test]
fn a_script_path_with_control_characters_runs() {
    let dir = work_dir("script-cache-control-chars");
    let cache = dir.join("cache");
    let odd = dir.join("ctl\u{1}\r\u{202e}\"q\\x");
    std::fs::create_dir(&odd).expect("create the odd directory");
    write_script(&odd, "g.vox", "script g");
    let script = odd.join("g.vox");
    let r = run_script(&dir, &cache, script.to_str().expect("UTF-8 path"));
    r.assert_code(0);
    assert_eq!(r.stdout, "script g\n", "{}", r.dump());
    // Warm: from the stamp, without cargo.
    let r = run_script(&dir, &cache, script.to_str().expect("UTF-8 path"));
    r.assert_code(0);
    assert_eq!(r.stdout, "script g\n", "{}", r.dump());
    assert!(!r.stderr.contains("Compiling"), "{}", r.dump());
}

/// With neither `HOME` nor `XDG_CACHE_HOME`, the cache is
/// `$TMPDIR/vox-scripts-<uid>`, a name any local user can take first. A
/// symlink planted there by another user, pointing at a directory of ours
/// (of root's, when root runs it), is refused, and nothing is written where
/// it points.
#[cfg(unix)]
#[test]
fn another_users_symlink_at_the_temp_cache_is_not_followed() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = work_dir("script-cache-temp-symlink");
    write_script(&dir, "h.vox", "script h");
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).expect("create tmp");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let me = std::fs::metadata(&dir).expect("work dir").uid();
    let victim = dir.join("victim");
    std::fs::create_dir(&victim).expect("create victim");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let planted = tmp.join(format!("vox-scripts-{me}"));
    std::os::unix::fs::symlink(&victim, &planted).expect("plant symlink");
    let nocargo = PathBuf::from("/nonexistent/cargo");
    let fallback = || {
        let mut cmd = cargo_vox(&dir);
        cmd.env("VOX_LLM_PROVIDER", "fixture")
            .env("TMPDIR", &tmp)
            .env("CARGO", &nocargo)
            .env_remove("VOX_SCRIPT_CACHE")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("HOME")
            .args(["--json", "run", "h.vox"]);
        run(&mut cmd, QUICK)
    };
    if me != 0 {
        // Only root can give a symlink to another user; our own is followed.
        let r = fallback();
        r.assert_code(1);
        let message = vox_e2e::only_envelope(&r, "run")
            .message
            .unwrap_or_default();
        assert!(message.contains("nonexistent"), "{message}");
        eprintln!("not root: skipping the symlink owned by another user");
        return;
    }
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534)).expect("lchown");
    let message = refusal(&fallback());
    assert!(message.contains("symlink"), "{message}");
    assert!(message.contains(planted.to_str().unwrap()), "{message}");
    assert!(message.contains("uid 65534"), "{message}");
    let written: Vec<_> = std::fs::read_dir(&victim).expect("victim").collect();
    assert!(
        written.is_empty(),
        "written through the symlink: {written:?}"
    );
}
