//! `cargo vox doctor` (README, `cargo vox doctor`): checks the machine for the failures that
//! make builds break or crawl, and says each one in a form an agent can act
//! on (`<cause> | FIX: <step> | [diag id=… sev=… heal=…]`).
//!
//! The pipeline: `registry` names every diagnosis and the check that
//! produces it; each check module pairs pure classifiers with a thin probe;
//! [`process`] runs every external command under a timeout; `report`
//! writes the results for people or as one JSON line.

mod cfg;
mod contract;
mod docker;
mod linker;
use crate::process;
mod registry;
mod report;
mod sccache;
mod system;
mod toolchain;
mod wrapper;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::context::Context as CommandContext;
use crate::exit;
use registry::{CheckKind, DiagId, Severity, REGISTRY};
use report::{CheckResult, DoctorReport};
use system::SystemInfo;

/// Timeout of every probe except the compile probe, in seconds.
pub const PROBE_TIMEOUT_ENV: &str = "VOX_DOCTOR_TIMEOUT_SECS";
/// Timeout of the compile probe, in seconds.
pub const COMPILE_TIMEOUT_ENV: &str = "VOX_DOCTOR_COMPILE_TIMEOUT_SECS";
const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Run only the check that can produce this diagnosis id; exit 1 iff it fired.
    #[arg(long, value_name = "ID", conflicts_with_all = ["list", "no_compile"])]
    pub diag: Option<String>,
    /// Print the registry of diagnosis ids with severity, heal flag and meaning.
    #[arg(long)]
    pub list: bool,
    /// Skip the compile probe (building a trivial crate) in a full run.
    #[arg(long)]
    pub no_compile: bool,
}

/// What every probe needs to know, decided once per run.
#[derive(Debug, Clone)]
pub struct ProbeContext {
    pub probe_timeout: Duration,
    pub compile_timeout: Duration,
    pub skip_compile: bool,
    pub wsl_kernel: bool,
    pub manifest_path: Option<PathBuf>,
}

/// A timeout from the environment (seconds, fractions allowed), else `default`.
fn timeout_from_env(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map_or(default, Duration::from_secs_f64)
}

pub fn run(args: &DoctorArgs, command: &CommandContext) -> crate::error::Result<i32> {
    if args.list {
        print_registry(command.json())?;
        return Ok(exit::SUCCESS);
    }
    let only = match &args.diag {
        None => None,
        Some(text) => match DiagId::parse(text) {
            Some(id) => Some(id),
            None => {
                // A usage error like any other: one `error:` line (the
                // registry under it), or one envelope under `--json`.
                let mut message = format!(
                    "unknown diagnosis id `{}`; the registry:",
                    report::shown(text)
                );
                for line in registry_lines() {
                    message.push('\n');
                    message.push_str(&line);
                }
                return Err(crate::error::Error::usage("--diag", message));
            }
        },
    };
    let ctx = ProbeContext {
        probe_timeout: timeout_from_env(PROBE_TIMEOUT_ENV, DEFAULT_PROBE_TIMEOUT),
        compile_timeout: timeout_from_env(COMPILE_TIMEOUT_ENV, DEFAULT_COMPILE_TIMEOUT),
        skip_compile: args.no_compile,
        wsl_kernel: system::is_wsl_kernel(&system::kernel_release()),
        manifest_path: command.manifest_path.clone(),
    };
    match only {
        Some(id) => Ok(run_one(id, &ctx, command.json())?),
        None => Ok(run_all(&ctx, command.json())?),
    }
}

/// `--diag ID`: the one check that can produce `id`; exit 1 iff `id` fired.
fn run_one(id: DiagId, ctx: &ProbeContext, json: bool) -> anyhow::Result<i32> {
    let results = run_check(id.info().check, ctx);
    if json {
        print_json(&SystemInfo::gather(), &results)?;
    } else {
        let mut out = std::io::stdout().lock();
        for result in &results {
            writeln!(out, "{}", report::human_line(result))?;
        }
    }
    let fired = results.iter().any(|r| r.fired_id() == Some(id));
    Ok(if fired { exit::FAILURE } else { exit::SUCCESS })
}

/// A full run: the header, then every check; exit 1 iff an error fired.
fn run_all(ctx: &ProbeContext, json: bool) -> anyhow::Result<i32> {
    // The checks wait on processes, not the CPU: run them side by side so a
    // full run takes as long as its slowest probe.
    let (system, per_check) = std::thread::scope(|scope| {
        let handles: Vec<_> = CheckKind::ALL
            .iter()
            .map(|&kind| (kind, scope.spawn(move || run_check(kind, ctx))))
            .collect();
        let system = SystemInfo::gather();
        let per_check: Vec<Vec<CheckResult>> = handles
            .into_iter()
            .map(|(kind, handle)| handle.join().unwrap_or_else(|_| vec![crashed(kind)]))
            .collect();
        (system, per_check)
    });
    let results: Vec<CheckResult> = per_check.into_iter().flatten().collect();
    if json {
        print_json(&system, &results)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(out, "cargo vox doctor")?;
        for line in system.header_lines() {
            writeln!(out, "  {line}")?;
        }
        for result in &results {
            writeln!(out, "{}", report::human_line(result))?;
        }
    }
    let any_error = results.iter().any(|r| {
        r.diag
            .as_ref()
            .is_some_and(|d| d.severity == Severity::Error)
    });
    Ok(if any_error {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

/// A check whose thread panicked still gets a line, as a passing note: the
/// doctor reports what it could not check rather than dying.
fn crashed(kind: CheckKind) -> CheckResult {
    CheckResult::passed(kind, "not checked: the check itself crashed (a doctor bug)")
}

fn run_check(kind: CheckKind, ctx: &ProbeContext) -> Vec<CheckResult> {
    match kind {
        CheckKind::Rustc => toolchain::check_rustc(ctx),
        CheckKind::Rustup => toolchain::check_rustup(ctx),
        CheckKind::Wrapper => wrapper::check_wrapper(ctx),
        CheckKind::Compile => toolchain::check_compile(ctx),
        CheckKind::Docker => docker::check_docker(ctx),
        CheckKind::Sccache => sccache::check_sccache(ctx),
        CheckKind::SchemaDrift => contract::check_schema_drift(ctx),
        CheckKind::Linker => linker::check_linker(ctx),
    }
}

fn print_json(system: &SystemInfo, checks: &[CheckResult]) -> anyhow::Result<()> {
    let line = serde_json::to_string(&DoctorReport { system, checks })?;
    writeln!(std::io::stdout().lock(), "{line}")?;
    Ok(())
}

/// One line per id: id, severity, heal, check, description.
fn registry_lines() -> Vec<String> {
    REGISTRY
        .iter()
        .map(|info| {
            format!(
                "{:<26} {:<5} heal={:<5} {}",
                info.id.as_str(),
                info.severity.as_str(),
                info.heal,
                info.description
            )
        })
        .collect()
}

fn print_registry(json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let entries: Vec<_> = REGISTRY
            .iter()
            .map(|info| {
                serde_json::json!({
                    "id": info.id,
                    "severity": info.severity,
                    "heal": info.heal,
                    "check": info.check.name(),
                    "description": info.description,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::json!({ "registry": entries }))?;
    } else {
        writeln!(out, "{:<26} {:<5} {:<10} meaning", "id", "sev", "heal")?;
        for line in registry_lines() {
            writeln!(out, "{line}")?;
        }
        writeln!(
            out,
            "\nOnly error-severity diagnoses make a full run exit 1. heal=true: the FIX is a mechanical step an agent may apply itself."
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_come_from_the_environment_or_default() {
        assert_eq!(
            timeout_from_env("VOX_DOCTOR_TEST_UNSET_VARIABLE", Duration::from_secs(7)),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn every_registered_id_names_a_check_that_runs() {
        // Dispatch is exhaustive over CheckKind, and each id's check is in ALL.
        for info in REGISTRY {
            assert!(CheckKind::ALL.contains(&info.check), "{:?}", info.id);
        }
    }
}
