//! `cargo vox test` runs every test binary through itself (its runner):
//! here, what test crates and users' cargo configurations do to that.
//!
//! - A test that leaves a process behind holding its stdout and stderr (a
//!   daemon) must not keep `cargo vox test` waiting: the run ends when the
//!   test binary does, as a plain `cargo test` does.
//! - A runner the user configured (`target.<triple>.runner` or
//!   `target.'cfg(…)'.runner`, string or array, in a config file or in
//!   `CARGO_TARGET_<TRIPLE>_RUNNER`) still runs, with `cargo vox` recording
//!   around it.
//!
//! Each test crate here is tiny and has no dependencies.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vox_e2e::{envelopes, lane_with, work_dir, Run, BUILD};
use vox_metadata::Envelope;

/// A package `name` in `work_dir(tag)` whose `src/lib.rs` is `lib_rs`.
fn tiny_crate(tag: &str, name: &str, lib_rs: &str) -> PathBuf {
    let root = work_dir(tag).join(name);
    std::fs::create_dir_all(root.join("src")).expect("create src");
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n"
        ),
    )
    .expect("write Cargo.toml");
    std::fs::write(root.join("src/lib.rs"), lib_rs).expect("write lib.rs");
    root
}

/// The `test` envelope of a `--json` run.
fn test_envelope(r: &Run) -> Envelope {
    let all = envelopes(r);
    let found: Vec<&Envelope> = all.iter().filter(|e| e.command == "test").collect();
    assert_eq!(found.len(), 1, "one test envelope\n{}", r.dump());
    found[0].clone()
}

fn counts(t: &Envelope) -> (usize, usize, usize) {
    (
        t.passed.unwrap_or(usize::MAX),
        t.failed.unwrap_or(usize::MAX),
        t.ignored.unwrap_or(usize::MAX),
    )
}

/// Ends the process whose pid is in `file`, if it is still there.
fn kill_pid_in(file: &Path) {
    if let Ok(pid) = std::fs::read_to_string(file) {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", pid.trim()])
            .status();
    }
}

/// A test leaks a process that holds the test binary's stdout and stderr
/// and would live for 10 minutes. `cargo vox test` ends when the binary
/// does; before, it waited for the leaked process (for ever, for a daemon).
#[test]
fn a_leaked_daemon_does_not_hold_the_run() {
    let pid_file = work_dir("lane-daemon-pid").join("daemon.pid");
    let lib_rs = format!(
        r#"
#[test]
fn starts_a_daemon() {{
    println!("before the daemon");
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("sleep 600 & echo $! > '{}'")
        .status()
        .unwrap();
    assert!(status.success());
}}

#[test]
fn another() {{}}
"#,
        pid_file.display()
    );
    let root = tiny_crate("lane-daemon", "leaks-daemon", &lib_rs);
    // Build first, so the timing below is the test run's alone.
    lane_with(&root, &["--json", "build", "--", "--tests"], &[], BUILD).assert_code(0);

    let started = Instant::now();
    // The deadline (well under the daemon's 10 minutes) fails the test
    // instead of hanging CI when the run waits for the daemon.
    let r = lane_with(&root, &["--json", "test"], &[], Duration::from_secs(300));
    let took = started.elapsed();
    kill_pid_in(&pid_file);
    r.assert_code(0);
    let t = test_envelope(&r);
    assert_eq!(counts(&t), (2, 0, 0), "{t:?}\n{}", r.dump());
    assert!(t.ok, "{t:?}");
    assert!(
        took < Duration::from_secs(120),
        "cargo vox test took {took:?}: it waited for the leaked process\n{}",
        r.dump()
    );

    // The same for people, with the output not captured.
    let started = Instant::now();
    let r = lane_with(
        &root,
        &["test", "--", "--", "--nocapture"],
        &[],
        Duration::from_secs(300),
    );
    let took = started.elapsed();
    kill_pid_in(&pid_file);
    r.assert_code(0);
    assert!(r.stdout.contains("before the daemon"), "{}", r.dump());
    assert!(
        r.stderr.contains("test: 2 passed, 0 failed, 0 ignored"),
        "{}",
        r.dump()
    );
    assert!(took < Duration::from_secs(120), "{took:?}\n{}", r.dump());
}
