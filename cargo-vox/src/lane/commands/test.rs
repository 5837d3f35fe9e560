//! `cargo vox test` of the package's tests (a script's `@test`s are
//! `lane::script`'s): the build, then the test binaries through the lane's
//! runner, then the doctests.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{build_envelope, cargo_beside_metadata, common_args, print_rendered};
use crate::context::Context;
use crate::envelope::{DiagnosticPayload, Envelope};
use crate::error::Result;
use crate::exit;
use crate::lane::libtest::{self, TestFailure, TestReport};
use crate::lane::testrun::{self, BinaryRun};
use crate::lane::usage::UsageEvents;
use crate::lane::{failure_summary, run_cargo_with, CargoRun, ChildStatus};
use crate::workspace::{Member, Workspace};

#[derive(Debug, Args)]
pub struct TestArgs {
    /// A Vox script whose `@test`s to run; default: the package's tests.
    #[arg(value_name = "FILE.vox")]
    pub file: Option<PathBuf>,
    /// Record every `@ai` call's reply into the package's cassettes
    /// (`vox/cassettes`), asking the configured provider (docs/runtime.md, "Tests").
    #[arg(long)]
    pub record: bool,
    /// Arguments for `cargo test` (after `--`; a further `--` passes test-binary arguments).
    #[arg(last = true, value_name = "CARGO ARGS")]
    pub cargo_args: Vec<OsString>,
}

pub fn test(args: &TestArgs, ctx: &Context) -> Result<i32> {
    if let Some(file) = &args.file {
        return crate::lane::script::test(file, args, ctx);
    }
    let out = ctx.reporter();
    // Cargo's own arguments stop at a second `--` (test-binary arguments follow).
    let cargo_only: Vec<OsString> = args
        .cargo_args
        .iter()
        .take_while(|a| *a != "--")
        .cloned()
        .collect();

    let mut build_args = common_args("test", ctx, ctx.json());
    build_args.push("--no-run".into());
    // Cargo refuses `--doc --no-run`; the doctests need the library built.
    build_args.extend(cargo_only.into_iter().map(|a| {
        if is_flag(&a, "--doc") {
            "--lib".into()
        } else {
            a
        }
    }));
    let (ws, build_run) = cargo_beside_metadata(ctx, &build_args)?;
    print_rendered(ctx, &build_run);
    let build_env = build_envelope("build", &ws, &build_run);
    out.finish(&build_env, "build");
    if !build_env.ok {
        let mut env = Envelope::failure(
            "test",
            ws.manifest_label.clone(),
            "tests did not run: the build failed",
        );
        env.passed = Some(0);
        env.failed = Some(0);
        env.ignored = Some(0);
        env.failures = Some(Vec::new());
        out.finish(&env, "test");
        return Ok(exit::FAILURE);
    }

    let events = cassette_events_file(&ws);
    let usage = UsageEvents::new(&ws.target_dir.join("vox").join("test-runs"));
    let mut env = test_env(args.record, &events);
    env.push(usage.env());
    let tests = run_tests(&args.cargo_args, ctx, &ws, &build_run, &env);
    let cassettes = CassetteCounts::read(&events);
    let _ = std::fs::remove_file(&events);
    crate::lane::usage::report(usage);
    let report = tests.report;
    let notes: Vec<DiagnosticPayload> = report
        .notes
        .iter()
        .map(|note| {
            let mut d = DiagnosticPayload::tool_error(
                vox_metadata::codes::TEST_COUNTS,
                ws.manifest_label.clone(),
                note.clone(),
            );
            d.severity = vox_metadata::severity::WARNING.to_string();
            d
        })
        .collect();
    let mut env = Envelope::new("test", ws.manifest_label.clone(), notes);
    env.exit_code = tests.status.code();
    env.passed = Some(report.passed);
    env.failed = Some(report.failed);
    env.ignored = Some(report.ignored);
    env.ok = tests.status.success() && report.failed == 0;
    if !env.ok && report.failures.is_empty() {
        env.message = Some(
            failure_summary(&tests.stderr_tail)
                .unwrap_or_else(|| tests.status.describe("cargo test")),
        );
    }
    env.failures = Some(report.failures);
    env.cassette_hits = Some(cassettes.hits);
    env.cassette_misses = Some(cassettes.misses);
    env.cassette_recorded = Some(cassettes.recorded);
    if !ctx.json() {
        for f in env.failures.iter().flatten() {
            let name = f
                .vox_name
                .as_ref()
                .map_or(f.name.clone(), |v| format!("{v} (Vox @test)"));
            eprintln!("FAILED {name}: {}", f.message.lines().next().unwrap_or(""));
        }
    }
    out.finish(
        &env,
        &format!(
            "test: {} passed, {} failed, {} ignored{}",
            report.passed,
            report.failed,
            report.ignored,
            cassettes.summary()
        ),
    );
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}

/// What the test runs of `cargo vox test` found.
struct TestRuns {
    report: TestReport,
    /// The first failing cargo's status, else success.
    status: ChildStatus,
    stderr_tail: String,
}

/// Cargo options that choose which targets `cargo test` runs.
const TARGET_FLAGS: [&str; 11] = [
    "--lib",
    "--bin",
    "--bins",
    "--example",
    "--examples",
    "--test",
    "--tests",
    "--bench",
    "--benches",
    "--all-targets",
    "--doc",
];

fn is_flag(arg: &OsString, flag: &str) -> bool {
    let Some(a) = arg.to_str() else { return false };
    a == flag
        || a.strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='))
}

/// The file the runtime appends cassette events to during one run
/// (`VOX_LLM_CASSETTE_EVENTS`, see docs/runtime.md, "Tests").
fn cassette_events_file(ws: &Workspace) -> PathBuf {
    let dir = ws.target_dir.join("vox").join("test-runs");
    let _ = std::fs::create_dir_all(&dir);
    dir.join(format!(
        "cassette-events-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ))
}

/// What every test process gets: every call is a test's, cassette events
/// are counted, and `--record` records.
fn test_env(record: bool, events: &Path) -> Vec<(&'static str, OsString)> {
    let mut env = vec![
        ("VOX_LLM_TEST", OsString::from("1")),
        ("VOX_LLM_CASSETTE_EVENTS", events.as_os_str().to_owned()),
    ];
    if record {
        env.push(("VOX_LLM_CASSETTE_MODE", "record".into()));
    }
    env
}

/// Cassette hits, misses and recordings of one test run.
#[derive(Debug, Default, PartialEq)]
struct CassetteCounts {
    hits: usize,
    misses: usize,
    recorded: usize,
}

impl CassetteCounts {
    /// Counts the lines (`hit f`, `miss f`, `record f`) of the events file.
    fn read(path: &Path) -> CassetteCounts {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut counts = CassetteCounts::default();
        for line in text.lines() {
            match line.split(' ').next() {
                Some("hit") => counts.hits += 1,
                Some("miss") => counts.misses += 1,
                Some("record") => counts.recorded += 1,
                _ => {}
            }
        }
        counts
    }

    /// `; cassettes: …` for the summary line, empty when no call used one.
    fn summary(&self) -> String {
        if *self == CassetteCounts::default() {
            return String::new();
        }
        format!(
            "; cassettes: {} replayed, {} missed, {} recorded",
            self.hits, self.misses, self.recorded
        )
    }
}

/// Runs the tests: the test binaries through the lane's runner, each read
/// on its own (see [`testrun`]), then the doctests, which cargo runs through
/// rustdoc (a runner would change how rustdoc runs them), read with their
/// output captured. Without target options that is `cargo test --tests`
/// then `cargo test --doc`, the same tests as a plain `cargo test`.
fn run_tests(
    all_args: &[OsString],
    ctx: &Context,
    ws: &Workspace,
    build: &CargoRun,
    extra_env: &[(&'static str, OsString)],
) -> TestRuns {
    let mut parts = all_args.splitn(2, |a| a == "--");
    let cargo_args: Vec<OsString> = parts.next().unwrap_or_default().to_vec();
    let test_args: Vec<OsString> = parts.next().unwrap_or_default().to_vec();
    let chooses_targets = cargo_args
        .iter()
        .any(|a| TARGET_FLAGS.iter().any(|f| is_flag(a, f)));
    let doc_only = cargo_args.iter().any(|a| is_flag(a, "--doc"));
    let mut runs = TestRuns {
        report: TestReport::default(),
        status: ChildStatus::Exited(0),
        stderr_tail: String::new(),
    };
    let note = |runs: &mut TestRuns, status: &ChildStatus, stderr_tail: &str| {
        if runs.status.success() && !status.success() {
            runs.status = status.clone();
        }
        runs.stderr_tail.push_str(stderr_tail);
    };
    if !doc_only {
        let mut cargo = cargo_args.clone();
        if !chooses_targets {
            cargo.push("--tests".into());
        }
        let (report, status, tail) = run_binaries(&cargo, &test_args, ctx, ws, build, extra_env);
        runs.report.absorb(report);
        note(&mut runs, &status, &tail);
    }
    // No member has doctests (a binary-only package): no doctest run.
    if doc_only || (!chooses_targets && ws.members.iter().any(|m| m.doctests)) {
        let mut args = common_args("test", ctx, true);
        args.push("--no-fail-fast".into());
        if !doc_only {
            args.push("--doc".into());
        }
        args.extend(cargo_args.iter().cloned());
        args.push("--".into());
        args.extend(doctest_args(&test_args));
        let run = run_cargo_with(&args, extra_env, ws.root.as_path(), ctx.json(), None);
        // A package without a library has no doctests (cargo says so as an error).
        let no_library =
            !run.status.success() && run.stderr_tail.contains("no library targets found");
        if !no_library {
            let mut report = libtest::parse_text(&run.text);
            for f in &mut report.failures {
                f.package = doctest_package(&f.name, &ws.members);
            }
            runs.report.absorb(report);
            note(&mut runs, &run.status, &run.stderr_tail);
        }
    }
    runs
}

/// Doctests' output is kept captured, so that what they print cannot pass
/// for libtest's lines: `--nocapture` becomes `--show-output`, which prints
/// each doctest's output after the run instead of while it runs.
fn doctest_args(test_args: &[OsString]) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    for a in test_args {
        if a == "--nocapture" || a == "--no-capture" {
            if !out.iter().any(|o| o == "--show-output") {
                out.push("--show-output".into());
            }
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// The member whose directory holds a doctest's file (`src/lib.rs - f (line 3)`), if only one does.
fn doctest_package(name: &str, members: &[Member]) -> Option<String> {
    let file = name.split(" - ").next()?;
    let mut holders = members.iter().filter(|m| {
        members.len() == 1
            || m.manifest_path
                .parent()
                .is_some_and(|dir| dir.join(file).is_file())
    });
    let first = holders.next()?;
    holders.next().is_none().then(|| first.name.clone())
}

/// `cargo test` of the test binaries, each run through the lane's runner.
fn run_binaries(
    cargo_args: &[OsString],
    test_args: &[OsString],
    ctx: &Context,
    ws: &Workspace,
    build: &CargoRun,
    extra_env: &[(&'static str, OsString)],
) -> (TestReport, ChildStatus, String) {
    let unique = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let records = ws.target_dir.join("vox").join("test-runs").join(&unique);
    let marker = format!("vox-test-output:{unique}");
    let runner = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.to_str().map(str::to_string))
        .filter(|_| std::fs::create_dir_all(&records).is_ok());
    let injected = runner
        .as_deref()
        .and_then(|exe| runner_config(exe, cargo_args));
    let args = |with_runner: bool| {
        let mut args = common_args("test", ctx, true);
        args.push("--no-fail-fast".into());
        args.extend(cargo_args.iter().cloned());
        if let (true, Some((config, _))) = (with_runner, &injected) {
            for c in config {
                args.push("--config".into());
                args.push(c.into());
            }
        }
        if !test_args.is_empty() {
            args.push("--".into());
            args.extend(test_args.iter().cloned());
        }
        args
    };
    let mut env: Vec<(&str, OsString)> = vec![
        (testrun::RECORDS_ENV, records.clone().into_os_string()),
        (testrun::MARKER_ENV, marker.clone().into()),
    ];
    if let Some((_, users)) = &injected {
        env.push((testrun::USER_RUNNERS_ENV, users.into()));
    }
    env.extend(extra_env.iter().cloned());
    let mut run = run_cargo_with(
        &args(injected.is_some()),
        &env,
        ws.root.as_path(),
        ctx.json(),
        Some(&marker),
    );
    // Cargo could not merge the runner with the user's configuration after
    // all (see `user_runner` for what is not followed): run without it and
    // read cargo's output as it comes.
    if injected.is_some()
        && !run.status.success()
        && (run
            .stderr_tail
            .contains("several matching instances of `target.'cfg(..)'.runner`")
            || (run.stderr_tail.contains("failed to merge")
                && run.stderr_tail.contains("--config cli option")))
    {
        eprintln!(
            "warning: cargo vox: cargo refused to combine its test runner with your configuration; \
             running the tests without it (counts come from cargo's output)"
        );
        run = run_cargo_with(&args(false), extra_env, ws.root.as_path(), ctx.json(), None);
    }
    let testrun::Records {
        runs: binaries,
        unreadable,
    } = testrun::read_records(&records);
    let _ = std::fs::remove_dir_all(&records);
    if binaries.is_empty() && unreadable.is_empty() {
        // No binary went through the runner (none ran, or a runner the
        // user configured for the target took precedence): read what
        // cargo printed, with the tests' output captured unless asked not to.
        let mut report = libtest::parse_text(&run.text);
        if let [only] = ws.members.as_slice() {
            for f in &mut report.failures {
                f.package = Some(only.name.clone());
            }
        }
        return (report, run.status, run.stderr_tail);
    }
    let harness_free = harness_free_targets(&ws.members);
    let mut report = TestReport::default();
    for b in &binaries {
        let exe = run
            .outcome
            .executables
            .iter()
            .chain(&build.outcome.executables)
            .find(|e| e.path == b.executable);
        let (package, target) = match exe {
            Some(e) => (Some(e.package.clone()), e.target.clone()),
            None => (None, file_stem(&b.executable)),
        };
        let harness = !package
            .as_ref()
            .is_some_and(|p| harness_free.contains(&(p.clone(), target.clone())));
        report.absorb(binary_report(b, package, target, harness));
    }
    // A record that cannot be read is a test binary whose result is unknown:
    // count it as failed rather than let the counts come out short.
    for path in &unreadable {
        report.failed += 1;
        report.failures.push(TestFailure {
            name: format!("(test record {})", file_stem(path)),
            vox_name: None,
            location: None,
            message: format!(
                "cargo vox could not read the result a test binary left in {}",
                path.display()
            ),
            output_excerpt: String::new(),
            package: None,
            target: None,
        });
    }
    (report, run.status, run.stderr_tail)
}

/// The `--config` values that make cargo run test binaries through
/// `exe`, and the user runners it then runs them through (JSON, for
/// [`testrun::USER_RUNNERS_ENV`]); `None` (after a warning) to pass no
/// runner. See `lane::user_runner`.
fn runner_config(exe: &str, cargo_args: &[OsString]) -> Option<(Vec<String>, String)> {
    use crate::lane::user_runner;
    let env: Vec<(String, OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
        .collect();
    let cwd = std::env::current_dir().ok()?;
    let plan = user_runner::plan(&user_runner::Context {
        cwd,
        cargo_args,
        env: &env,
        target_cfg: &user_runner::rustc_cfg,
        host: &user_runner::host_triple,
    });
    match runner_options(plan, exe) {
        Ok(config) => Some(config),
        Err(why) => {
            eprintln!(
                "warning: cargo vox: {why}; running the tests without its test runner (counts come from cargo's output)"
            );
            None
        }
    }
}

/// [`runner_config`] for a known plan: the `--config` values and the user
/// runners (JSON), or why no runner of `cargo vox`'s can be passed.
fn runner_options(
    plan: crate::lane::user_runner::Plan,
    exe: &str,
) -> Result<(Vec<String>, String), String> {
    use crate::lane::user_runner::{Plan, UserRunner};
    // TOML strings (JSON strings are valid ones).
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let array = |key: &str, index: usize| {
        format!(
            "{key}.runner=[{},{},{}]",
            quote(exe),
            quote(testrun::RUNNER_ARG),
            quote(&index.to_string())
        )
    };
    match plan {
        Plan::Everywhere => Ok((vec![array("target.'cfg(all())'", 0)], "[null]".into())),
        Plan::None(why) => Err(why),
        Plan::PerTarget(targets) => {
            let mut config = Vec::new();
            for (i, t) in targets.iter().enumerate() {
                let key = format!("target.{}", quote(&t.triple));
                if !t.string_form {
                    config.push(array(&key, i));
                } else if exe.contains(char::is_whitespace) {
                    // Cargo splits a string runner on whitespace.
                    return Err(format!(
                        "your configuration sets the runner for `{}` as a string, and cargo-vox's path ({exe}) has whitespace in it; write the runner as an array",
                        t.triple
                    ));
                } else {
                    config.push(format!(
                        "{key}.runner={}",
                        quote(&format!("{exe} {} {i}", testrun::RUNNER_ARG))
                    ));
                }
            }
            let users: Vec<Option<&UserRunner>> = targets.iter().map(|t| t.user.as_ref()).collect();
            let users = serde_json::to_string(&users).map_err(|e| e.to_string())?;
            Ok((config, users))
        }
    }
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One test binary's counts and failures. A binary that fails without a
/// libtest summary (a `harness = false` target, or a crash) counts as one
/// failed test named after its target; a `harness = false` target that
/// succeeds without one counts as one passed test.
fn binary_report(
    run: &BinaryRun,
    package: Option<String>,
    target: String,
    harness: bool,
) -> TestReport {
    let status = run.status();
    let mut report = match libtest::parse_binary(&run.stdout, &run.stderr) {
        Some(r) => r,
        None if status.success() && !harness => TestReport {
            passed: 1,
            ..TestReport::default()
        },
        None => TestReport::default(),
    };
    if !status.success() && report.failed == 0 {
        let what = if harness {
            format!("test binary `{target}`")
        } else {
            format!("`harness = false` target `{target}`")
        };
        let output = if run.stderr.trim().is_empty() {
            &run.stdout
        } else {
            &run.stderr
        };
        report.failed += 1;
        report.failures.push(TestFailure {
            name: target.clone(),
            message: status.describe(&what),
            output_excerpt: libtest::excerpt_tail(output),
            ..TestFailure::default()
        });
    }
    for f in &mut report.failures {
        f.package = package.clone();
        f.target = Some(target.clone());
    }
    for note in &mut report.notes {
        *note = format!(
            "test binary `{target}` ({}): {note}; its counts are taken from its `test NAME ... RESULT` lines",
            run.executable.display()
        );
    }
    report
}

/// `(package, target)` of every member target with `harness = false` in its manifest.
fn harness_free_targets(members: &[Member]) -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    for m in members {
        let Ok(text) = std::fs::read_to_string(&m.manifest_path) else {
            continue;
        };
        let Ok(manifest) = toml::from_str::<toml::Table>(&text) else {
            continue;
        };
        let no_harness =
            |t: &toml::Table| t.get("harness").and_then(toml::Value::as_bool) == Some(false);
        if let Some(lib) = manifest.get("lib").and_then(toml::Value::as_table) {
            if no_harness(lib) {
                let name = lib
                    .get("name")
                    .and_then(toml::Value::as_str)
                    .map_or_else(|| m.name.replace('-', "_"), str::to_string);
                out.insert((m.name.clone(), name));
            }
        }
        for kind in ["bin", "test", "bench", "example"] {
            let Some(list) = manifest.get(kind).and_then(toml::Value::as_array) else {
                continue;
            };
            for t in list.iter().filter_map(toml::Value::as_table) {
                if let (true, Some(name)) =
                    (no_harness(t), t.get("name").and_then(toml::Value::as_str))
                {
                    out.insert((m.name.clone(), name.to_string()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(code: Option<i32>, signal: Option<i32>, stdout: &str, stderr: &str) -> BinaryRun {
        BinaryRun {
            executable: "/t/debug/deps/x-1".into(),
            code,
            signal,
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..BinaryRun::default()
        }
    }

    const SUMMARY_OK: &str = "\nrunning 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n";

    fn counts(r: &TestReport) -> (usize, usize, usize) {
        (r.passed, r.failed, r.ignored)
    }

    #[test]
    fn a_binary_without_a_summary() {
        // A `harness = false` target: one test, named after the target.
        let r = binary_report(
            &binary(Some(0), None, "all good\n", ""),
            Some("p".into()),
            "raw".into(),
            false,
        );
        assert_eq!(counts(&r), (1, 0, 0));
        let r = binary_report(
            &binary(Some(3), None, "test ghost ... ok\n", "it broke\n"),
            Some("p".into()),
            "raw".into(),
            false,
        );
        assert_eq!(counts(&r), (0, 1, 0));
        let f = &r.failures[0];
        assert_eq!(
            (f.name.as_str(), f.package.as_deref(), f.target.as_deref()),
            ("raw", Some("p"), Some("raw"))
        );
        assert_eq!(
            f.message,
            "`harness = false` target `raw` exited with status 3"
        );
        assert_eq!(f.output_excerpt, "it broke");
        // A libtest binary that died (an abort), or printed only a list.
        let r = binary_report(
            &binary(None, Some(6), "\nrunning 1 test\n", ""),
            None,
            "aborts".into(),
            true,
        );
        assert_eq!(counts(&r), (0, 1, 0));
        assert_eq!(
            r.failures[0].message,
            "test binary `aborts` was killed by signal 6"
        );
        assert_eq!(r.failures[0].output_excerpt, "running 1 test");
        let r = binary_report(
            &binary(Some(0), None, "a: test\n\n1 test, 0 benchmarks\n", ""),
            None,
            "x".into(),
            true,
        );
        assert_eq!(counts(&r), (0, 0, 0));
        assert!(r.failures.is_empty());
    }

    #[test]
    fn a_summary_then_a_failing_exit_is_one_more_failure() {
        let r = binary_report(
            &binary(Some(0), None, SUMMARY_OK, ""),
            None,
            "x".into(),
            true,
        );
        assert_eq!(counts(&r), (1, 0, 0));
        let r = binary_report(
            &binary(Some(1), None, SUMMARY_OK, ""),
            Some("p".into()),
            "x".into(),
            true,
        );
        assert_eq!(counts(&r), (1, 1, 0));
        assert_eq!(
            r.failures[0].message,
            "test binary `x` exited with status 1"
        );
        // A custom harness (`harness = false`) printing libtest's summary is read like libtest.
        let r = binary_report(
            &binary(Some(0), None, SUMMARY_OK, ""),
            None,
            "mimic".into(),
            false,
        );
        assert_eq!(counts(&r), (1, 0, 0));
    }

    #[test]
    fn runner_options_match_the_users_form() {
        use crate::lane::user_runner::{Plan, TargetRunner, UserRunner};
        let (config, users) = runner_options(Plan::Everywhere, "/bin/cargo-vox").unwrap();
        assert_eq!(
            config,
            [r#"target.'cfg(all())'.runner=["/bin/cargo-vox","__vox-test-runner","0"]"#]
        );
        assert_eq!(users, "[null]");
        let user = UserRunner {
            program: "/p/w.sh".into(),
            args: vec!["--tag".into()],
            origin: "/p/.cargo/config.toml".into(),
        };
        let targets = vec![
            TargetRunner {
                triple: "x86_64-unknown-linux-gnu".into(),
                string_form: true,
                user: Some(user.clone()),
            },
            TargetRunner {
                triple: "my.target".into(),
                string_form: false,
                user: None,
            },
        ];
        let (config, users) =
            runner_options(Plan::PerTarget(targets.clone()), "/bin/cargo-vox").unwrap();
        assert_eq!(
            config,
            [
                r#"target."x86_64-unknown-linux-gnu".runner="/bin/cargo-vox __vox-test-runner 0""#,
                r#"target."my.target".runner=["/bin/cargo-vox","__vox-test-runner","1"]"#,
            ]
        );
        // Each value is what cargo parses: a dotted key and a TOML value.
        for c in &config {
            let table: toml::Table = c.parse().unwrap_or_else(|e| panic!("{c}: {e}"));
            assert!(table["target"].as_table().is_some(), "{c}");
        }
        let back: Vec<Option<UserRunner>> = serde_json::from_str(&users).unwrap();
        assert_eq!(back, [Some(user), None]);
        // A string runner cannot name a program whose path has a space.
        let err = runner_options(Plan::PerTarget(targets), "/my tools/cargo-vox").unwrap_err();
        assert!(err.contains("as an array"), "{err}");
        assert_eq!(
            runner_options(Plan::None("why".into()), "/bin/x").unwrap_err(),
            "why"
        );
    }

    #[test]
    fn flags_and_doctest_arguments() {
        assert!(is_flag(&"--test".into(), "--test"));
        assert!(is_flag(&"--test=raw".into(), "--test"));
        assert!(!is_flag(&"--tests".into(), "--test"));
        assert!(!is_flag(&"--testx=1".into(), "--test"));
        let args: Vec<OsString> = ["--nocapture", "--no-capture", "--test-threads=1"]
            .map(OsString::from)
            .to_vec();
        assert_eq!(
            doctest_args(&args),
            ["--show-output", "--test-threads=1"].map(OsString::from)
        );
    }

    #[test]
    fn harness_free_targets_and_doctest_packages_from_manifests() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(a.join("src")).unwrap();
        std::fs::create_dir_all(b.join("lib")).unwrap();
        std::fs::write(a.join("src/lib.rs"), "").unwrap();
        std::fs::write(b.join("lib/x.rs"), "").unwrap();
        std::fs::write(
            a.join("Cargo.toml"),
            "[package]\nname = \"my-a\"\n[lib]\nharness = false\n[[test]]\nname = \"raw\"\nharness = false\n[[test]]\nname = \"normal\"\n[[bench]]\nname = \"speed\"\nharness = false\n",
        )
        .unwrap();
        std::fs::write(b.join("Cargo.toml"), "not toml [").unwrap();
        let member = |name: &str, dir: &Path| Member {
            id: name.into(),
            name: name.into(),
            manifest_path: dir.join("Cargo.toml"),
            doctests: true,
            vox: false,
        };
        let members = [member("my-a", &a), member("b", &b)];
        let free = harness_free_targets(&members);
        let mut free: Vec<_> = free.into_iter().collect();
        free.sort();
        let pair = |p: &str, t: &str| (p.to_string(), t.to_string());
        assert_eq!(
            free,
            [
                pair("my-a", "my_a"),
                pair("my-a", "raw"),
                pair("my-a", "speed")
            ]
        );

        assert_eq!(
            doctest_package("src/lib.rs - f (line 3)", &members).as_deref(),
            Some("my-a")
        );
        assert_eq!(
            doctest_package("lib/x.rs - g (line 1)", &members).as_deref(),
            Some("b")
        );
        assert_eq!(doctest_package("nowhere.rs - g (line 1)", &members), None);
        assert_eq!(
            doctest_package("nowhere.rs - g (line 1)", &members[..1]).as_deref(),
            Some("my-a")
        );
    }
}
