//! `cargo vox check`: the Vox frontend over a package or given paths, no cargo build.

use std::path::PathBuf;

use clap::Args;

use crate::context::Context;
use crate::envelope::{vox_payloads, Envelope};
use crate::error::{Error, Result};
use crate::{exit, inputs, sources};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// `.vox` files or directories to check as one module (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

pub fn run(args: &CheckArgs, ctx: &Context) -> Result<i32> {
    let out = ctx.reporter();
    let inputs = inputs::resolve(ctx, &args.paths, &inputs::label_for_paths(&args.paths))?;
    let label = inputs.label.clone();
    let mut payloads = Vec::new();
    let mut files_checked = 0;
    for module in &inputs.modules {
        let checked = check_files(&module.files).map_err(|e| Error::failure(&label, e))?;
        files_checked += module.files.len();
        out.diagnostics(&checked);
        payloads.extend(vox_payloads(&checked));
    }
    let env = Envelope::new(ctx.command, label, payloads);
    let packages: Vec<&str> = inputs
        .modules
        .iter()
        .filter_map(|m| m.package.as_deref())
        .collect();
    let scope = if packages.is_empty() {
        String::new()
    } else {
        format!(" in {}", packages.join(", "))
    };
    out.finish(
        &env,
        &format!(
            "checked {files_checked} Vox file{}{scope}",
            if files_checked == 1 { "" } else { "s" }
        ),
    );
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}

/// Reads and checks the files as one module; `Err` names the file that
/// could not be read.
pub fn check_files(files: &[PathBuf]) -> Result<vox_codegen::Checked, String> {
    Ok(vox_codegen::check(sources::read_module(files)?))
}

/// Checks `files` as one module for a command that needs it free of
/// errors (`schema`, `batch`, a script): the module, or the error that
/// carries its diagnostics, with `summary` as the line people see.
pub fn check_error_free(
    ctx: &Context,
    label: &str,
    files: &[PathBuf],
    summary: &str,
) -> Result<vox_codegen::Checked> {
    let checked = check_files(files).map_err(|e| Error::failure(label, e))?;
    if checked.has_errors() {
        return Err(Error::Rejected {
            envelope: Box::new(Envelope::new(
                ctx.command,
                label.to_string(),
                vox_payloads(&checked),
            )),
            summary: summary.to_string(),
            rendered: ctx
                .reporter()
                .rendered(checked.diagnostics(), checked.sources()),
        });
    }
    Ok(checked)
}
