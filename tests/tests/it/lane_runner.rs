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

fn tiny_crate(tag: &str, name: &str, lib_rs: &str) -> PathBuf {
    vox_e2e::tiny_crate(tag, name, &[("src/lib.rs", lib_rs)])
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

/// What a user configured: (what, config file, extra environment, extra
/// cargo arguments, the tag the runner logs).
type Case<'a> = (
    &'a str,
    String,
    Vec<(&'a str, &'a str)>,
    Vec<&'a str>,
    &'a str,
);

/// The host triple, from `rustc -vV`.
fn host() -> String {
    let out =
        std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
            .arg("-vV")
            .output()
            .expect("run rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("a host line")
        .trim()
        .to_string()
}

const USER_RUNNER_TESTS: &str = r#"
#[test]
fn passes() {}

#[test]
fn fails() {
    panic!("this one fails");
}
"#;

/// Each way a user can configure a test runner for cargo. The runner (a
/// shell script) logs its tag, its arguments and its parent process, then
/// runs the binary. `cargo vox test` must run it — as cargo would — and
/// still read each binary on its own through its own runner: the user's
/// runner's parent is `cargo-vox`, and failures name their target (which
/// only the records of `cargo vox`'s runner know).
#[test]
fn a_users_own_test_runner_runs_inside_cargo_vox_s() {
    let root = tiny_crate("lane-user-runner", "user-runner", USER_RUNNER_TESTS);
    let log = root.join("runner.log");
    let script = format!(
        "#!/bin/sh\ntag=none\nif [ \"$1\" = --tag ]; then tag=$2; shift 2; fi\nparent=$(ps -o comm= -p $PPID)\necho \"tag=$tag parent=$parent binary=$(basename \"$1\")\" >> '{}'\nexec \"$@\"\n",
        log.display()
    );
    vox_e2e::write_executable(&root.join("tools/w.sh"), &script);
    let bin = root.join("bin");
    vox_e2e::write_executable(&bin.join("w.sh"), &script);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let host = host();
    let config = root.join(".cargo/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).expect("create .cargo");
    lane_with(&root, &["--json", "build", "--", "--tests"], &[], BUILD).assert_code(0);

    let env_key = format!(
        "CARGO_TARGET_{}_RUNNER",
        host.to_uppercase().replace(['-', '.'], "_")
    );
    let cli = format!("target.{host}.runner=[\"./tools/w.sh\",\"--tag\",\"cli\"]");
    let cases: Vec<Case> = vec![
        (
            "cfg(all()) string, a name found in PATH",
            "[target.'cfg(all())']\nrunner = \"w.sh\"\n".into(),
            vec![],
            vec![],
            "none",
        ),
        (
            "cfg(all()) array, a relative path with arguments",
            "[target.'cfg(all())']\nrunner = [\"./tools/w.sh\", \"--tag\", \"cfg-array\"]\n".into(),
            vec![],
            vec![],
            "cfg-array",
        ),
        (
            "cfg(unix) string with arguments",
            "[target.'cfg(unix)']\nrunner = \"tools/w.sh --tag cfg-unix\"\n".into(),
            vec![],
            vec![],
            "cfg-unix",
        ),
        (
            "the host triple, string",
            format!("[target.{host}]\nrunner = \"./tools/w.sh --tag triple-string\"\n"),
            vec![],
            vec![],
            "triple-string",
        ),
        (
            "the host triple, array, beside a cfg runner it wins over",
            format!("[target.'cfg(unix)']\nrunner = \"false\"\n[target.{host}]\nrunner = [\"./tools/w.sh\", \"--tag\", \"triple-array\"]\n"),
            vec![],
            vec![],
            "triple-array",
        ),
        (
            "CARGO_TARGET_<TRIPLE>_RUNNER over a string in the file",
            format!("[target.{host}]\nrunner = \"false\"\n"),
            vec![(env_key.as_str(), "./tools/w.sh --tag env")],
            vec![],
            "env",
        ),
        (
            "--config among the user's cargo arguments",
            String::new(),
            vec![],
            vec!["--config", cli.as_str()],
            "cli",
        ),
    ];
    // Every configuration is tried; the failures are reported together.
    let mut failed = Vec::new();
    for (what, file, env, extra, tag) in cases {
        std::fs::write(&config, &file).expect("write config");
        let _ = std::fs::remove_file(&log);
        let mut env = env;
        env.push(("PATH", path.as_str()));
        let mut args = vec!["--json", "test"];
        if !extra.is_empty() {
            args.push("--");
            args.extend(extra);
        }
        let r = lane_with(&root, &args, &env, BUILD);
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        if let Err(why) = check_user_runner_case(&r, &logged, tag) {
            failed.push(format!(
                "{what}: {why}
{}",
                r.dump()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// What one configuration must give: the counts and the failure read from
/// the binary's own record, and one run of the user's runner under `cargo-vox`.
fn check_user_runner_case(r: &Run, logged: &str, tag: &str) -> Result<(), String> {
    if r.code() != Some(1) {
        return Err(format!("exit code {:?}, not 1", r.code()));
    }
    let t = test_envelope(r);
    if counts(&t) != (1, 1, 0) {
        return Err(format!("counts {:?}, not (1, 1, 0)", counts(&t)));
    }
    let failure = &t.failures.as_ref().expect("failures")[0];
    if failure.name != "fails" || !failure.message.contains("this one fails") {
        return Err(format!("failure {failure:?}"));
    }
    if failure.target.as_deref() != Some("user_runner") {
        return Err("the binary was not read on its own (no target)".into());
    }
    let lines: Vec<&str> = logged.lines().collect();
    let want = format!("tag={tag} parent=cargo-vox binary=user_runner-");
    match lines.as_slice() {
        [one] if one.starts_with(&want) => Ok(()),
        [] => Err("the user's runner did not run".into()),
        _ => Err(format!(
            "runner log {logged:?}, want one line starting {want:?}"
        )),
    }
}
