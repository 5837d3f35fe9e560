//! `cargo vox doctor` (SPEC §9). Placeholder until the doctor lands.

use clap::Args;

use crate::cli::GlobalArgs;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Run only the check that can produce this diagnosis id.
    #[arg(long, value_name = "ID")]
    pub diag: Option<String>,
    /// Print the registry of diagnosis ids.
    #[arg(long)]
    pub list: bool,
}

pub fn run(_args: &DoctorArgs, _global: &GlobalArgs) -> anyhow::Result<i32> {
    anyhow::bail!("doctor is not available yet")
}
