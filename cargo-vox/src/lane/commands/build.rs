//! `cargo vox build`.

use std::ffi::OsString;

use clap::Args;

use super::{build_envelope, cargo_beside_metadata, common_args, print_rendered};
use crate::context::Context;
use crate::error::Result;
use crate::exit;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Arguments for `cargo build` (after `--`).
    #[arg(last = true, value_name = "CARGO ARGS")]
    pub cargo_args: Vec<OsString>,
}

pub fn build(args: &BuildArgs, ctx: &Context) -> Result<i32> {
    let mut cargo_args = common_args("build", ctx, ctx.json());
    cargo_args.extend(args.cargo_args.iter().cloned());
    let (ws, run) = cargo_beside_metadata(ctx, &cargo_args)?;
    print_rendered(ctx, &run);
    let env = build_envelope(ctx.command, &ws, &run);
    ctx.reporter().finish(&env, "build");
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}
