//! `cargo vox build`, `test` and `run` (without a script).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::{failure_summary, libtest, reports, run_cargo, CargoRun, ChildStatus};
use crate::cli::GlobalArgs;
use crate::envelope::Envelope;
use crate::workspace::{self, PendingWorkspace, Workspace, WorkspaceError};
use crate::{exit, output};

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Arguments for `cargo build` (after `--`).
    #[arg(last = true, value_name = "CARGO ARGS")]
    pub cargo_args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Arguments for `cargo test` (after `--`; a further `--` passes test-binary arguments).
    #[arg(last = true, value_name = "CARGO ARGS")]
    pub cargo_args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A Vox script with `fn main()` to compile and run; default: the package's binary.
    #[arg(value_name = "FILE.vox")]
    pub file: Option<PathBuf>,
    /// Which binary to run when the package has several.
    #[arg(long, value_name = "NAME")]
    pub bin: Option<String>,
    /// Arguments for the program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// Arguments every cargo invocation of the lane shares.
fn common_args(sub: &str, global: &GlobalArgs, json: bool) -> Vec<OsString> {
    let format = if json || !output::stderr_color() {
        "json"
    } else {
        "json-diagnostic-rendered-ansi"
    };
    let mut args: Vec<OsString> = vec![sub.into(), format!("--message-format={format}").into()];
    if let Some(m) = &global.manifest_path {
        args.push("--manifest-path".into());
        args.push(m.into());
    }
    if let Some(p) = &global.package {
        args.push("-p".into());
        args.push(p.into());
    }
    args
}

fn report_workspace_error(command: &str, global: &GlobalArgs, error: &WorkspaceError) -> i32 {
    let out = output::Reporter::new(global.json);
    match error {
        WorkspaceError::Usage(msg) => {
            out.failure(command, "Cargo.toml", msg);
            exit::USAGE
        }
        WorkspaceError::Other(e) => {
            out.failure(command, "Cargo.toml", &format!("{e:#}"));
            exit::FAILURE
        }
    }
}

/// Runs the first cargo of a command while `cargo metadata` reads the
/// workspace beside it; the workspace is needed only once cargo is done.
/// `Err(exit code)` once reported: a usage error, or an unreadable
/// workspace (then the build's own result is not reported).
fn cargo_beside_metadata(
    command: &str,
    global: &GlobalArgs,
    cargo_args: &[OsString],
) -> Result<(Workspace, CargoRun), i32> {
    // A manifest path that names nothing fails without starting cargo.
    if let Err(e) = workspace::check_manifest_path(global) {
        return Err(report_workspace_error(command, global, &e));
    }
    let pending = PendingWorkspace::start(global);
    let run = run_cargo(cargo_args, &pending, global.json);
    let workspace = match pending.into_result() {
        // `cargo metadata` ran beside the build, so whatever stopped the
        // build (a Ctrl-C reaches the whole process group) may have stopped
        // it too: ask once more, now that cargo is done.
        Err(WorkspaceError::Other(_)) => workspace::workspace(global),
        result => result,
    };
    match workspace {
        Ok(ws) => Ok((ws, run)),
        Err(e) => Err(report_workspace_error(command, global, &e)),
    }
}

/// The envelope of one cargo build: rustc diagnostics plus every Vox report.
fn build_envelope(command: &str, ws: &Workspace, run: &CargoRun) -> Envelope {
    let mut diagnostics = Vec::new();
    for (name, dir) in &ws.vox_packages {
        let failed_script = run
            .stderr_tail
            .contains(&format!("failed to run custom build command for `{name} "));
        diagnostics.extend(reports::vox_diagnostics(
            name,
            dir,
            &run.outcome.out_dirs,
            &ws.target_dir,
            failed_script,
        ));
    }
    diagnostics.extend(run.outcome.diagnostics.iter().cloned());
    let mut env = Envelope::new(command, ws.manifest_label.clone(), diagnostics);
    let cargo_ok = run.status.success() && run.outcome.finished != Some(false);
    if !cargo_ok {
        env.ok = false;
        if env.error_count == 0 {
            env.message = Some(match &run.status {
                ChildStatus::Exited(_) => failure_summary(&run.stderr_tail)
                    .unwrap_or_else(|| run.status.describe("cargo")),
                other => other.describe("cargo"),
            });
        }
    }
    env
}

fn print_rendered(global: &GlobalArgs, run: &CargoRun) {
    if global.json {
        return;
    }
    for r in &run.outcome.rendered {
        eprint!("{r}");
    }
}

pub fn build(args: &BuildArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let mut cargo_args = common_args("build", global, global.json);
    cargo_args.extend(args.cargo_args.iter().cloned());
    let (ws, run) = match cargo_beside_metadata("build", global, &cargo_args) {
        Ok(done) => done,
        Err(code) => return Ok(code),
    };
    print_rendered(global, &run);
    let env = build_envelope("build", &ws, &run);
    output::Reporter::new(global.json).finish(&env, "build");
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}

pub fn test(args: &TestArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let out = output::Reporter::new(global.json);
    // Cargo's own arguments stop at a second `--` (test-binary arguments follow).
    let cargo_only: Vec<OsString> = args
        .cargo_args
        .iter()
        .take_while(|a| *a != "--")
        .cloned()
        .collect();

    let mut build_args = common_args("test", global, global.json);
    build_args.push("--no-run".into());
    build_args.extend(cargo_only);
    let (ws, build_run) = match cargo_beside_metadata("test", global, &build_args) {
        Ok(done) => done,
        Err(code) => return Ok(code),
    };
    print_rendered(global, &build_run);
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

    let mut test_args = common_args("test", global, true);
    test_args.push("--no-fail-fast".into());
    test_args.extend(args.cargo_args.iter().cloned());
    let run = run_cargo(&test_args, ws.root.as_path(), global.json);
    let report = libtest::parse(&run.text);
    let mut env = Envelope::new("test", ws.manifest_label.clone(), Vec::new());
    env.exit_code = run.status.code();
    env.passed = Some(report.passed);
    env.failed = Some(report.failed);
    env.ignored = Some(report.ignored);
    env.ok = run.status.success() && report.failed == 0;
    if !env.ok && report.failures.is_empty() {
        env.message = Some(
            failure_summary(&run.stderr_tail).unwrap_or_else(|| run.status.describe("cargo test")),
        );
    }
    env.failures = Some(report.failures);
    if !global.json {
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
            "test: {} passed, {} failed, {} ignored",
            report.passed, report.failed, report.ignored
        ),
    );
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}

pub fn run(args: &RunArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    if let Some(file) = &args.file {
        return super::script::run(file, &args.args, global);
    }
    let mut cargo_args = common_args("build", global, global.json);
    if let Some(b) = &args.bin {
        cargo_args.push("--bin".into());
        cargo_args.push(b.into());
    } else {
        cargo_args.push("--bins".into());
    }
    let (ws, run) = match cargo_beside_metadata("run", global, &cargo_args) {
        Ok(done) => done,
        Err(code) => return Ok(code),
    };
    print_rendered(global, &run);
    let env = build_envelope("run", &ws, &run);
    let out = output::Reporter::new(global.json);
    if !env.ok {
        out.finish(&env, "run");
        return Ok(exit::FAILURE);
    }
    let bins: Vec<_> = run
        .outcome
        .executables
        .iter()
        .filter(|e| !e.test && e.kinds.iter().any(|k| k == "bin"))
        .filter(|e| args.bin.as_ref().is_none_or(|b| *b == e.target))
        .filter(|e| global.package.as_ref().is_none_or(|p| *p == e.package))
        .collect();
    let exe = match bins.as_slice() {
        [one] => one.path.clone(),
        [] => {
            let why = if run.outcome.executables.is_empty() {
                "cargo built the package but reported no executable"
            } else {
                "no binary to run: the package has no `[[bin]]` target (pass a FILE.vox to run a script)"
            };
            out.failure("run", &ws.manifest_label, why);
            return Ok(exit::FAILURE);
        }
        many => {
            let names: Vec<&str> = many.iter().map(|e| e.target.as_str()).collect();
            out.failure(
                "run",
                &ws.manifest_label,
                &format!(
                    "several binaries ({}); choose one with `--bin NAME`",
                    names.join(", ")
                ),
            );
            return Ok(exit::USAGE);
        }
    };
    Ok(run_program(&exe, &args.args, global))
}

/// Runs the built program with the terminal; its status becomes ours.
pub fn run_program(exe: &std::path::Path, args: &[OsString], global: &GlobalArgs) -> i32 {
    super::ignore_interrupts_while_children_run();
    match std::process::Command::new(exe).args(args).status() {
        Ok(status) => {
            let st = ChildStatus::from_status(status);
            st.code().unwrap_or(exit::FAILURE)
        }
        Err(e) => {
            output::Reporter::new(global.json).failure(
                "run",
                &exe.display().to_string(),
                &format!("cannot start {}: {e}", exe.display()),
            );
            exit::FAILURE
        }
    }
}
