//! `cargo vox build`.

use std::ffi::OsString;

use clap::Args;

use super::{build_envelope, cargo_beside_metadata, common_args, print_rendered};
use crate::cli::GlobalArgs;
use crate::{exit, output};

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Arguments for `cargo build` (after `--`).
    #[arg(last = true, value_name = "CARGO ARGS")]
    pub cargo_args: Vec<OsString>,
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
