//! The build lane end to end (see the README): `cargo vox build`, `test` and `run`
//! drive the real cargo on a copy of `fixtures/lane/app`, the script lane
//! compiles and caches single `.vox` files, and fake cargos (via `$CARGO`)
//! that are missing, crash, get killed or print junk still end every command
//! with exactly one envelope.
//!
//! Builds are the expensive part, so each test compiles at most one crate
//! and walks its scenarios in order on one copy.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use vox_e2e::{
    cargo_bin, cargo_vox, copy_fixture, envelopes, json_lines, lane_with, only_envelope, read,
    remove_later, work_dir, write_later, Run, BUILD, QUICK,
};
use vox_metadata::{DiagnosticPayload, Envelope};

fn lane(dir: &Path, args: &[&str]) -> Run {
    lane_with(dir, args, &[], BUILD)
}

/// The one diagnostic with this source and code.
fn diagnostic<'a>(env: &'a Envelope, source: &str, code: &str) -> &'a DiagnosticPayload {
    let found: Vec<&DiagnosticPayload> = env
        .diagnostics
        .iter()
        .filter(|d| d.source == source && d.error_code.as_deref() == Some(code))
        .collect();
    assert_eq!(found.len(), 1, "one {source} {code} diagnostic in {env:?}");
    found[0]
}

fn assert_at(d: &DiagnosticPayload, file_suffix: &str, line: usize) {
    let file = &d.file_path;
    assert!(
        file.replace('\\', "/").ends_with(file_suffix),
        "file_path {file:?} should end with {file_suffix:?}: {d:?}"
    );
    assert_eq!(d.span.start_line, line, "start line of {d:?}");
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not found"))
        + 1
}

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The line lane-app prints for these program arguments.
fn program_line(args: &[&str]) -> Value {
    serde_json::json!({"greeting": "hello, lane", "args": args})
}

const VOX_TYPE_ERROR: &str = "// A type error on line 3.
fn broken() to int {
    let n: int = \"three\"
    n
}
";

#[test]
fn build_test_and_run_on_one_crate() {
    let root = copy_fixture("lane/app", "lane-app");
    let greeting_vox = read(&root.join("vox/greeting.vox"));
    let unused_line = line_of(&greeting_vox, "let unused");

    // 1. A clean build: one envelope, ok, carrying the Vox warning.
    let r = lane(&root, &["--json", "build"]);
    r.assert_code(0);
    let env = only_envelope(&r, "build");
    assert!(env.ok, "{}", r.dump());
    assert_eq!(env.error_count, 0, "{env:?}");
    assert!(env.exit_code.is_none(), "no child ran: {env:?}");
    let warning = diagnostic(&env, "vox", "vox/lint/unused-variable");
    assert_eq!(warning.severity, "warning");
    assert_at(warning, "vox/greeting.vox", unused_line);

    // 2. Fresh: nothing reruns, the warning still comes from the report in
    // OUT_DIR. `--json` after the subcommand, from another directory.
    let elsewhere = root.parent().expect("copy has a parent").to_path_buf();
    let manifest = root.join("Cargo.toml");
    let r = lane(
        &elsewhere,
        &[
            "build",
            "--json",
            "--manifest-path",
            path_arg(&manifest),
            "-p",
            "lane-app",
        ],
    );
    r.assert_code(0);
    assert!(
        !r.stderr.contains("Compiling lane-app"),
        "a second build is fresh\n{}",
        r.dump()
    );
    let fresh = only_envelope(&r, "build");
    assert!(fresh.ok, "{}", r.dump());
    let again = diagnostic(&fresh, "vox", "vox/lint/unused-variable");
    assert_at(again, "app/vox/greeting.vox", unused_line);
    assert_eq!(again.span, warning.span);
    assert_eq!(again.message, warning.message);
    assert_eq!(fresh.warning_count, env.warning_count);

    // 3. run: stdout is the program's alone, arguments after `--` reach it,
    // its status is ours.
    let r = lane(&root, &["run", "--", "one", "two words"]);
    r.assert_code(0);
    let printed: Vec<Value> = json_lines(&r);
    assert_eq!(
        printed,
        [program_line(&["one", "two words"])],
        "{}",
        r.dump()
    );
    let r = lane(&root, &["--json", "run", "--", "--json"]);
    r.assert_code(0);
    assert_eq!(
        json_lines(&r),
        [program_line(&["--json"])],
        "no envelope\n{}",
        r.dump()
    );
    let r = lane(&root, &["--json", "run", "--", "exit7"]);
    r.assert_code(7);
    assert_eq!(r.stdout, "", "{}", r.dump());
    let r = lane(&root, &["--json", "run", "--", "panic"]);
    r.assert_code(101);
    assert_eq!(r.stdout, "", "{}", r.dump());
    assert!(
        r.stderr.contains("lane-app was asked to panic"),
        "{}",
        r.dump()
    );
    // Killed by SIGABRT: 128 + 6, like a shell.
    #[cfg(unix)]
    lane(&root, &["--json", "run", "--", "abort"]).assert_code(134);

    // Without `--json`, stdout is left alone and the summary goes to stderr.
    let r = lane(&root, &["build"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "", "{}", r.dump());
    assert!(r.stderr.contains("ok: build"), "{}", r.dump());

    // 4. test: the build envelope, then the test envelope.
    let r = lane(&root, &["--json", "test"]);
    r.assert_code(1);
    let lines = envelopes(&r);
    assert_eq!(lines.len(), 2, "build and test envelopes\n{}", r.dump());
    assert_eq!(lines[0].command, "build", "{}", r.dump());
    assert!(lines[0].ok, "{}", r.dump());
    let t = &lines[1];
    assert_eq!(t.command, "test", "{t:?}");
    assert!(!t.ok, "{t:?}");
    assert_eq!(
        (t.passed, t.failed, t.ignored),
        (Some(2), Some(2), Some(1)),
        "counts: {t:?}"
    );
    assert!(
        t.exit_code.is_some_and(|c| c != 0),
        "non-zero exit_code: {t:?}"
    );
    let failures = t.failures.as_ref().expect("failures is a list");
    assert_eq!(failures.len(), 2, "{t:?}");
    let vox_failure = failures
        .iter()
        .find(|f| f.vox_name.as_deref() == Some("doubling_is_off_by_one"))
        .unwrap_or_else(|| panic!("the Vox @test failure by its Vox name: {t:?}"));
    let message = vox_failure.message.as_str();
    assert!(
        message.contains("assert_eq(double(3), 7)")
            && message.contains("left: 6")
            && message.contains("right: 7"),
        "the Vox failure's message has the assertion and its values: {vox_failure:?}"
    );
    let rust_failure = failures
        .iter()
        .find(|f| f.name == "rust_side::arithmetic_is_broken")
        .unwrap_or_else(|| panic!("the Rust #[test] failure by name: {t:?}"));
    assert!(rust_failure.vox_name.is_none());
    let message = rust_failure.message.as_str();
    assert!(
        message.contains("two and two make five")
            && message.contains("left: 4")
            && message.contains("right: 5"),
        "the Rust failure's message has the assertion and its values: {rust_failure:?}"
    );

    // Arguments after `--` reach cargo; after a second `--`, the test binary.
    let r = lane(
        &root,
        &[
            "--json",
            "test",
            "--",
            "--bins",
            "--",
            "--skip",
            "arithmetic",
        ],
    );
    r.assert_code(1);
    let lines = envelopes(&r);
    assert_eq!(lines.len(), 2, "build and test envelopes\n{}", r.dump());
    let t = &lines[1];
    assert_eq!(
        (t.passed, t.failed, t.ignored),
        (Some(2), Some(1), Some(1)),
        "counts with the Rust failure skipped: {t:?}"
    );
    let r = lane(&root, &["--json", "build", "--", "--bin", "lane-app"]);
    r.assert_code(0);
    assert!(only_envelope(&r, "build").ok, "{}", r.dump());
    let r = lane(&root, &["--json", "build", "--", "--bin", "no-such-bin"]);
    r.assert_code(1);
    let env = only_envelope(&r, "build");
    assert!(!env.ok, "{env:?}");
    assert!(
        env.message
            .as_deref()
            .is_some_and(|m| m.contains("no-such-bin")),
        "cargo's own error becomes the message: {env:?}"
    );

    // 5. A Vox type error: build, run and test all report it.
    let broken = root.join("vox/broken.vox");
    write_later(&broken, VOX_TYPE_ERROR);
    let r = lane(&root, &["--json", "build"]);
    r.assert_code(1);
    let env = only_envelope(&r, "build");
    assert!(!env.ok, "{env:?}");
    let d = diagnostic(&env, "vox", "vox/type/mismatch");
    assert_eq!(d.severity, "error");
    assert_at(d, "vox/broken.vox", 3);
    let r = lane(&root, &["--json", "run"]);
    r.assert_code(1);
    let env = only_envelope(&r, "run");
    assert!(!env.ok, "{env:?}");
    assert_at(
        diagnostic(&env, "vox", "vox/type/mismatch"),
        "vox/broken.vox",
        3,
    );
    let r = lane(&root, &["--json", "test"]);
    r.assert_code(1);
    let lines = envelopes(&r);
    assert_eq!(lines.len(), 2, "build and test envelopes\n{}", r.dump());
    assert_eq!(lines[0].command, "build");
    assert!(!lines[0].ok);
    assert_at(
        diagnostic(&lines[0], "vox", "vox/type/mismatch"),
        "vox/broken.vox",
        3,
    );
    assert_eq!(lines[1].command, "test");
    assert!(!lines[1].ok);
    assert!(lines[1].message.is_some(), "{:?}", lines[1]);
    remove_later(&broken);

    // 6. A Rust type error in src/main.rs.
    let main_rs = root.join("src/main.rs");
    let original = read(&main_rs);
    let good = "let args: Vec<String> = std::env::args().skip(1).collect();";
    let bad = "let args: Vec<String> = 42;";
    assert!(original.contains(good));
    let broken_main = original.replace(good, bad);
    let bad_line = line_of(&broken_main, bad);
    write_later(&main_rs, &broken_main);
    let r = lane(&root, &["--json", "build"]);
    r.assert_code(1);
    let env = only_envelope(&r, "build");
    assert!(!env.ok, "{env:?}");
    let d = diagnostic(&env, "rustc", "E0308");
    assert_eq!(d.severity, "error");
    assert_at(d, "src/main.rs", bad_line);
    let r = lane(&root, &["--json", "run", "--", "ignored"]);
    r.assert_code(1);
    let env = only_envelope(&r, "run");
    assert!(!env.ok, "{env:?}");
    assert_at(diagnostic(&env, "rustc", "E0308"), "src/main.rs", bad_line);

    // 7. Fixed again: back to a clean build.
    write_later(&main_rs, &original);
    let r = lane(&root, &["build", "--json"]);
    r.assert_code(0);
    assert!(only_envelope(&r, "build").ok, "{}", r.dump());
}

const SCRIPT: &str = "/// Greets someone; the fixture provider returns the body.
@ai
@uses(net)
fn greet(name: str) to str {
    \"hello, \" + name
}

fn main() {
    print(greet(\"script\"))
}
";

const SCRIPT_TYPE_ERROR: &str = "fn main() {
    let n: int = 1
    let s: str = n
    print(s)
}
";

const SCRIPT_WITHOUT_MAIN: &str = "fn helper() to int {
    1
}
";

#[test]
fn script_lane_runs_caches_and_reports() {
    let dir = work_dir("lane-script");
    let cache = dir.join("cache");
    let cache = path_arg(&cache).to_string();
    let env = [
        ("VOX_LLM_PROVIDER", "fixture"),
        ("VOX_SCRIPT_CACHE", cache.as_str()),
    ];
    std::fs::write(dir.join("hello.vox"), SCRIPT).expect("write script");

    // Cold: compiled with cargo into the shared target dir, then run.
    let r = lane_with(&dir, &["run", "hello.vox"], &env, BUILD);
    r.assert_code(0);
    assert_eq!(r.stdout, "hello, script\n", "{}", r.dump());

    // Warm: an unchanged script never invokes cargo, so a missing cargo is fine.
    let warm_env = [env[0], env[1], ("CARGO", "/nonexistent/cargo")];
    let started = Instant::now();
    let r = lane_with(&dir, &["run", "hello.vox"], &warm_env, QUICK);
    let warm = started.elapsed();
    r.assert_code(0);
    assert_eq!(r.stdout, "hello, script\n", "{}", r.dump());
    eprintln!("warm script run: {warm:?}");
    assert!(
        warm < Duration::from_secs(5),
        "a warm script run takes {warm:?}"
    );

    // A changed script needs cargo: a missing one is reported.
    std::fs::write(dir.join("cold.vox"), SCRIPT.replace("script", "cold")).expect("write script");
    let r = lane_with(&dir, &["--json", "run", "cold.vox"], &warm_env, QUICK);
    r.assert_code(1);
    let env_line = only_envelope(&r, "run");
    assert!(!env_line.ok, "{env_line:?}");
    let message = env_line.message.as_deref().unwrap_or("");
    assert!(message.contains("/nonexistent/cargo"), "{env_line:?}");

    // A type error: the Vox diagnostic, no cargo run.
    std::fs::write(dir.join("bad.vox"), SCRIPT_TYPE_ERROR).expect("write script");
    let r = lane_with(&dir, &["--json", "run", "bad.vox"], &warm_env, QUICK);
    r.assert_code(1);
    let env_line = only_envelope(&r, "run");
    assert!(!env_line.ok, "{env_line:?}");
    assert_at(
        diagnostic(&env_line, "vox", "vox/type/mismatch"),
        "bad.vox",
        3,
    );

    // No `fn main()`.
    std::fs::write(dir.join("lib.vox"), SCRIPT_WITHOUT_MAIN).expect("write script");
    let r = lane_with(&dir, &["--json", "run", "lib.vox"], &warm_env, QUICK);
    r.assert_code(1);
    let env_line = only_envelope(&r, "run");
    assert!(!env_line.ok, "{env_line:?}");
    let message = env_line.message.as_deref().unwrap_or("");
    assert!(message.contains("fn main()"), "{env_line:?}");

    // A missing file is a usage error.
    let r = lane_with(&dir, &["--json", "run", "missing.vox"], &warm_env, QUICK);
    r.assert_code(2);
    let env_line = only_envelope(&r, "run");
    assert!(!env_line.ok, "{env_line:?}");
    assert!(env_line.message.is_some(), "{env_line:?}");
}

/// A fake cargo: `cargo metadata` goes to the real one (cargo-vox reads the
/// workspace through it), every other command runs `body`.
#[cfg(unix)]
fn fake_cargo(dir: &Path, name: &str, body: &str) -> PathBuf {
    let real = cargo_bin();
    let real = real
        .to_str()
        .expect("UTF-8 cargo path")
        .replace('\'', r"'\''");
    let path = dir.join(name);
    let script =
        format!("#!/bin/sh\nif [ \"$1\" = metadata ]; then exec '{real}' \"$@\"; fi\n{body}\n");
    vox_e2e::write_executable(&path, &script);
    path
}

#[cfg(unix)]
#[test]
fn cargo_failures_still_end_with_one_envelope() {
    // Never built: every cargo here is fake (metadata aside).
    let root = copy_fixture("lane/app", "lane-robust");
    let bin = work_dir("lane-fake-cargo");

    // cargo missing altogether: one envelope per command, naming cargo.
    for command in ["build", "test", "run"] {
        let r = lane_with(
            &root,
            &["--json", command],
            &[("CARGO", "/nonexistent/cargo")],
            QUICK,
        );
        r.assert_code(1);
        let env = only_envelope(&r, command);
        assert!(!env.ok, "{env:?}");
        let message = env.message.as_deref().unwrap_or("");
        assert!(message.contains("cargo"), "{command}: {env:?}");
    }

    // An unknown package is a usage error.
    let r = lane_with(&root, &["--json", "-p", "nope", "build"], &[], QUICK);
    r.assert_code(2);
    assert!(!only_envelope(&r, "build").ok, "{}", r.dump());
    // So is a manifest path that names nothing (found before cargo starts).
    for command in ["build", "test", "run"] {
        let r = lane_with(
            &root,
            &["--json", "--manifest-path", "nowhere/Cargo.toml", command],
            &[],
            QUICK,
        );
        r.assert_code(2);
        let env = only_envelope(&r, command);
        assert!(
            env.message
                .as_deref()
                .is_some_and(|m| m.contains("does not exist")),
            "{env:?}"
        );
    }

    // Junk on stdout from a cargo that succeeds: still one envelope, ok.
    let junk = fake_cargo(
        &bin,
        "junk-cargo",
        r#"printf 'not json at all\n\377\376 bytes\n{"reason":"compiler-mess'; exit 0"#,
    );
    let r = lane_with(
        &root,
        &["--json", "build"],
        &[("CARGO", path_arg(&junk))],
        QUICK,
    );
    r.assert_code(0);
    assert!(only_envelope(&r, "build").ok, "{}", r.dump());

    // Killed by a signal.
    let killed = fake_cargo(&bin, "killed-cargo", "kill -9 $$");
    for command in ["build", "run"] {
        let r = lane_with(
            &root,
            &["--json", command],
            &[("CARGO", path_arg(&killed))],
            QUICK,
        );
        r.assert_code(1);
        let env = only_envelope(&r, command);
        assert!(!env.ok, "{env:?}");
        let message = env.message.as_deref().unwrap_or("");
        assert!(message.contains("killed by signal 9"), "{command}: {env:?}");
    }

    // Fails without a diagnostic.
    let failing = fake_cargo(&bin, "failing-cargo", "exit 101");
    let r = lane_with(
        &root,
        &["--json", "build"],
        &[("CARGO", path_arg(&failing))],
        QUICK,
    );
    r.assert_code(1);
    let env = only_envelope(&r, "build");
    assert!(!env.ok, "{env:?}");
    assert!(
        env.message.as_deref().is_some_and(|m| m.contains("101")),
        "{env:?}"
    );
    let r = lane_with(
        &root,
        &["--json", "test"],
        &[("CARGO", path_arg(&failing))],
        QUICK,
    );
    r.assert_code(1);
    let lines = envelopes(&r);
    assert_eq!(lines.len(), 2, "build and test envelopes\n{}", r.dump());
    assert_eq!(lines[0].command, "build");
    assert!(!lines[0].ok);
    assert!(lines[0].message.is_some(), "{:?}", lines[0]);
    assert_eq!(lines[1].command, "test");
    assert!(!lines[1].ok);
}

/// Ctrl-C goes to the whole foreground process group: cargo must receive
/// it, and `cargo vox` must survive it long enough to print its envelope.
#[cfg(unix)]
#[test]
fn interrupt_reaches_cargo_and_the_envelope_still_prints() {
    let root = copy_fixture("lane/app", "lane-interrupt");
    let bin = work_dir("lane-interrupt-cargo");
    // `exec`: a shell waiting for a child catches SIGINT, and an interrupt
    // arriving between the fork and the exec of `sleep` was lost, leaving
    // the fake cargo running for a minute (the test failed now and then).
    let slow = fake_cargo(
        &bin,
        "slow-cargo",
        "echo vox-test-started >&2\nexec sleep 60",
    );
    interrupt_build(&root, &slow);
}

#[cfg(unix)]
#[test]
fn an_interrupted_build_does_not_ask_cargo_metadata_again() {
    // `cargo metadata` that never answers and that the interrupt does not
    // stop (as when it started just after the Ctrl-C, or waits on a lock
    // that another cargo holds): the envelope must neither wait for it nor
    // ask cargo again.
    let root = copy_fixture("lane/app", "lane-interrupt-metadata");
    let bin = work_dir("lane-interrupt-metadata-cargo");
    let path = bin.join("stuck-cargo");
    vox_e2e::write_executable(
        &path,
        "#!/bin/sh\nif [ \"$1\" = metadata ]; then trap '' INT; else echo vox-test-started >&2; fi\nexec sleep 60\n",
    );
    interrupt_build(&root, &path);
}

/// Runs `cargo vox --json build` with `cargo` as CARGO, sends SIGINT to its
/// process group once the fake cargo has started, and checks that one
/// envelope reports the interruption promptly.
#[cfg(unix)]
fn interrupt_build(root: &Path, cargo: &Path) {
    use std::io::{BufRead as _, BufReader, Read as _};
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;

    let slow = cargo;
    let mut cmd = cargo_vox(root);
    cmd.args(["--json", "build"])
        .env("CARGO", slow)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start cargo-vox");
    let pgid = child.id();
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("vox-test-started") {
                let _ = tx.send(());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the fake cargo never started");
    // Like a terminal's Ctrl-C: SIGINT to every process of the group.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -s INT -- -{pgid}")])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill failed");
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code();
        }
        if Instant::now() > deadline {
            // What was still running, for the failure message.
            let ps = std::process::Command::new("sh")
                .args([
                    "-c",
                    &format!(
                        "ps -eo pid,ppid,pgid,stat,etime,args | awk 'NR == 1 || $3 == {pgid}'"
                    ),
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let _ = child.kill();
            let _ = std::process::Command::new("sh")
                .args(["-c", &format!("kill -s KILL -- -{pgid}")])
                .status();
            let stderr = reader.join().unwrap_or_default();
            panic!("cargo-vox did not finish after the interrupt\n--- processes ---\n{ps}\n--- stderr ---\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let stderr = reader.join().expect("stderr reader");
    assert!(
        started.elapsed() < Duration::from_secs(55),
        "the fake cargo was not interrupted"
    );
    assert_eq!(code, Some(1), "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one envelope: {stdout}");
    let env = Envelope::from_line(lines[0]).expect("a version-1 envelope");
    assert_eq!(env.command, "build");
    assert!(!env.ok);
    let message = env.message.as_deref().unwrap_or_default();
    assert!(message.contains("signal 2"), "{message}");
}

/// A script reading its arguments, an environment variable and a file
/// (docs/language.md, "Script input"): `cargo vox run FILE.vox -- a b`
/// passes `a b` to `args()`; `read_text` of a missing file is an `Error`
/// naming it.
const SCRIPT_INPUT: &str = "@uses(fs)
fn line_count(path: str) to int {
    match read_text(path) {
        Ok(text) => len(split(trim(text), \"\\n\")),
        Error(e) => {
            print(e)
            -1
        }
    }
}

@uses(env)
fn greeting() to str {
    match env(\"VOX_SCRIPT_GREETING\") {
        Some(g) => g,
        None => \"hello\",
    }
}

fn main() {
    let files = args()
    print(f\"{greeting()}: {len(files)} arguments\")
    for path in files {
        print(f\"{path}: {line_count(path)}\")
    }
}
";

#[test]
fn a_script_reads_its_arguments_environment_and_files() {
    let dir = work_dir("lane-script-input");
    let cache = dir.join("cache");
    let cache = path_arg(&cache).to_string();
    std::fs::write(dir.join("count.vox"), SCRIPT_INPUT).expect("write script");
    std::fs::write(dir.join("notes.txt"), "one\ntwo\nthree\n").expect("write notes");
    let env = [
        ("VOX_LLM_PROVIDER", "fixture"),
        ("VOX_SCRIPT_CACHE", cache.as_str()),
        ("VOX_SCRIPT_GREETING", "hi"),
    ];
    let r = lane_with(
        &dir,
        &["run", "count.vox", "--", "notes.txt", "missing.txt"],
        &env,
        BUILD,
    );
    r.assert_code(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "hi: 2 arguments", "{}", r.dump());
    assert_eq!(lines[1], "notes.txt: 3", "{}", r.dump());
    assert!(
        lines[2].starts_with("cannot read missing.txt: "),
        "{}",
        r.dump()
    );
    assert_eq!(lines[3], "missing.txt: -1", "{}", r.dump());
    assert_eq!(lines.len(), 4, "{}", r.dump());
    // Without the variable, and with no arguments.
    let env = [env[0], env[1]];
    let r = lane_with(&dir, &["run", "count.vox"], &env, BUILD);
    r.assert_code(0);
    assert_eq!(r.stdout, "hello: 0 arguments\n", "{}", r.dump());
}
