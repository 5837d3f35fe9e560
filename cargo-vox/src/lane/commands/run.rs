//! `cargo vox run` of the package's binary (a script is `lane::script`'s).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::{build_envelope, cargo_beside_metadata, common_args, print_rendered};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::exit;
use crate::lane::usage::UsageEvents;
use crate::lane::ChildStatus;

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

pub fn run(args: &RunArgs, ctx: &Context) -> Result<i32> {
    if let Some(file) = &args.file {
        return crate::lane::script::run(file, &args.args, ctx);
    }
    let mut cargo_args = common_args("build", ctx, ctx.json());
    if let Some(b) = &args.bin {
        cargo_args.push("--bin".into());
        cargo_args.push(b.into());
    } else {
        cargo_args.push("--bins".into());
    }
    let (ws, run) = cargo_beside_metadata(ctx, &cargo_args)?;
    print_rendered(ctx, &run);
    let env = build_envelope(ctx.command, &ws, &run);
    if !env.ok {
        ctx.reporter().finish(&env, "run");
        return Ok(exit::FAILURE);
    }
    let bins: Vec<_> = run
        .outcome
        .executables
        .iter()
        .filter(|e| !e.test && e.kinds.iter().any(|k| k == "bin"))
        .filter(|e| args.bin.as_ref().is_none_or(|b| *b == e.target))
        .filter(|e| ctx.package.as_ref().is_none_or(|p| *p == e.package))
        .collect();
    let exe = match bins.as_slice() {
        [one] => one.path.clone(),
        [] => {
            let why = if run.outcome.executables.is_empty() {
                "cargo built the package but reported no executable"
            } else {
                "no binary to run: the package has no `[[bin]]` target (pass a FILE.vox to run a script)"
            };
            return Err(Error::failure(&ws.manifest_label, why));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|e| e.target.as_str()).collect();
            return Err(Error::usage(
                &ws.manifest_label,
                format!(
                    "several binaries ({}); choose one with `--bin NAME`",
                    names.join(", ")
                ),
            ));
        }
    };
    run_program(&exe, &args.args)
}

/// Runs the built program with the terminal; its status becomes ours.
/// What its model requests used is said on stderr once it is done.
pub fn run_program(exe: &std::path::Path, args: &[OsString]) -> Result<i32> {
    crate::lane::ignore_interrupts_while_children_run();
    let usage = UsageEvents::new(&std::env::temp_dir().join("vox-usage"));
    let (var, file) = usage.env();
    match std::process::Command::new(exe)
        .args(args)
        .env(var, file)
        .status()
    {
        Ok(status) => {
            crate::lane::usage::report(usage);
            let st = ChildStatus::from_status(status);
            Ok(st.code().unwrap_or(exit::FAILURE))
        }
        Err(e) => Err(Error::failure(
            exe.display().to_string(),
            format!("cannot start {}: {e}", exe.display()),
        )),
    }
}
