//! `cargo vox build`, `test` and `run` (without a script): one file each,
//! and here what they share — the cargo arguments, the first cargo run
//! beside `cargo metadata`, and the build envelope.

mod build;
mod run;
mod test;

use std::collections::HashSet;
use std::ffi::OsString;

use super::{failure_summary, reports, run_cargo, CargoRun, ChildStatus};
use crate::context::Context;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::workspace::{self, PendingWorkspace, Workspace};

pub use build::{build, BuildArgs};
pub use run::{run, run_program, RunArgs};
pub use test::{test, TestArgs};

/// Arguments every cargo invocation of the lane shares.
fn common_args(sub: &str, ctx: &Context, json: bool) -> Vec<OsString> {
    let format = if json || !ctx.color {
        "json"
    } else {
        "json-diagnostic-rendered-ansi"
    };
    let mut args: Vec<OsString> = vec![sub.into(), format!("--message-format={format}").into()];
    if let Some(m) = &ctx.manifest_path {
        args.push("--manifest-path".into());
        args.push(m.into());
    }
    if let Some(p) = &ctx.package {
        args.push("-p".into());
        args.push(p.into());
    }
    args
}

/// After an interrupted build, how long `cargo metadata` may still take.
const INTERRUPTED_METADATA_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Runs the first cargo of a command while `cargo metadata` reads the
/// workspace beside it; the workspace is needed only once cargo is done.
/// When nothing it was read from changed since the last command, the
/// workspace is the one read then and no `cargo metadata` runs
/// ([`workspace::cache`]). `Err` is a usage error, or an unreadable
/// workspace (then the build's own result is not reported).
fn cargo_beside_metadata(ctx: &Context, cargo_args: &[OsString]) -> Result<(Workspace, CargoRun)> {
    // A manifest path that names nothing fails without starting cargo.
    workspace::check_manifest_path(ctx)?;
    if let Some(ws) = workspace::cache::load(ctx) {
        let run = run_cargo(cargo_args, ws.root.as_path(), ctx.json());
        let interrupted = matches!(run.status, ChildStatus::Signaled(_));
        if interrupted || workspace::cache::agrees(&ws, &run.outcome.artifact_packages) {
            return Ok((ws, run));
        }
        // Cargo names the members otherwise: read the workspace after all.
        let stamps = workspace::cache::before_reading(ctx);
        let ws = workspace::workspace(ctx)?;
        if let Some(stamps) = stamps {
            workspace::cache::save(stamps, &ws);
        }
        return Ok((ws, run));
    }
    let stamps = workspace::cache::before_reading(ctx);
    let pending = PendingWorkspace::start(ctx);
    let run = run_cargo(cargo_args, &pending, ctx.json());
    let workspace = if matches!(run.status, ChildStatus::Signaled(_)) {
        // Interrupted: report now. A Ctrl-C reaches the whole process group,
        // so `cargo metadata` died too — unless it started after the signal
        // or waits on cargo's locks; then it is not waited for, nor asked
        // again.
        match pending.within(INTERRUPTED_METADATA_WAIT) {
            Some(Ok(ws)) => ws,
            Some(Err(e @ Error::Usage { .. })) => return Err(e),
            Some(Err(_)) | None => return Ok((Workspace::unread(ctx), run)),
        }
    } else {
        match pending.into_result() {
            result @ (Ok(_) | Err(Error::Usage { .. })) => result?,
            // Something stopped `cargo metadata` while the build ran: ask
            // once more, now that cargo is done.
            Err(_) => workspace::workspace(ctx)?,
        }
    };
    if let Some(stamps) = stamps {
        workspace::cache::save(stamps, &workspace);
    }
    Ok((workspace, run))
}

/// The envelope of one cargo build: rustc diagnostics plus every Vox report.
fn build_envelope(command: &str, ws: &Workspace, run: &CargoRun) -> Envelope {
    let mut diagnostics = Vec::new();
    for m in ws.members.iter().filter(|m| m.vox) {
        let failed_script = run.stderr_tail.contains(&format!(
            "failed to run custom build command for `{} ",
            m.name
        ));
        diagnostics.extend(reports::vox_diagnostics(
            &m.name,
            m.dir(),
            &run.outcome.out_dirs,
            &ws.target_dir,
            failed_script,
        ));
    }
    // Warnings of packages outside the workspace (path dependencies that
    // are not members) are not this workspace's to fix; errors always count.
    let members: HashSet<&str> = ws.members.iter().map(|m| m.id.as_str()).collect();
    diagnostics.extend(
        run.outcome
            .diagnostics
            .iter()
            .zip(&run.outcome.diagnostic_packages)
            .filter(|(d, id)| d.severity == "error" || members.contains(id.as_str()))
            .map(|(d, _)| d.clone()),
    );
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

fn print_rendered(ctx: &Context, run: &CargoRun) {
    if ctx.json() {
        return;
    }
    for r in &run.outcome.rendered {
        eprint!("{r}");
    }
}
