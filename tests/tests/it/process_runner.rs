//! The test support runs every child through cargo-vox's process runner (the
//! one the doctor uses), so no test can hang CI: a grandchild that keeps the
//! pipes open after its parent exits, or a whole process tree that never
//! ends, costs a bounded wait.

#![cfg(unix)]

use std::process::Command;
use std::time::{Duration, Instant};

use vox_e2e::run;

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    cmd
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hang_the_run() {
    // The shell exits at once; `sleep` inherits stdout and stderr and would
    // hold them open for 60 s. A runner that reads to end of file waits it out.
    let started = Instant::now();
    let r = run(
        &mut sh("sleep 60 & echo started; exit 0"),
        Duration::from_secs(120),
    );
    r.assert_success();
    assert_eq!(r.stdout, "started\n", "{}", r.dump());
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the run waited {:?} for a grandchild's pipes",
        started.elapsed()
    );
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let dir = std::env::temp_dir().join(format!("vox-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("grandchild-still-ran");
    let _ = std::fs::remove_file(&marker);
    // The grandchild would write the marker after 3 s; the run times out
    // after 1 s and must take the grandchild down with the shell.
    let script = format!("(sleep 3; touch '{}') & sleep 60", marker.display());
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(|| run(&mut sh(&script), Duration::from_secs(1)));
    let message = match outcome {
        Ok(r) => panic!("expected a timeout, got\n{}", r.dump()),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default(),
    };
    assert!(message.contains("did not finish within"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !marker.exists(),
        "the grandchild outlived the timeout: only the shell was killed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
