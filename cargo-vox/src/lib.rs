//! `cargo vox`: the Vox lane for people and coding agents.
//!
//! The binary (`main.rs`) is a thin shell over this library: `check` and
//! `schema` over vox-codegen, `build`/`test`/`run` over cargo ([`lane`]),
//! and the doctor's probes ([`doctor`]). Machine output lives in
//! [`envelope`]; exit codes in [`exit`].

pub mod batch;
pub mod check;
pub mod cli;
pub mod diff;
pub mod doctor;
pub mod envelope;
pub mod exit;
pub mod fix;
pub mod fmt;
pub mod lane;
pub mod lsp;
pub mod output;
pub mod process;
pub mod schema;
pub mod source_write;
pub mod workspace;

/// Runs a parsed command line; returns the process exit status.
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    match cli.command {
        cli::Command::Check(args) => check::run(&args, &cli.global),
        cli::Command::Fmt(args) => fmt::run(&args, &cli.global),
        cli::Command::Fix(args) => fix::run(&args, &cli.global),
        cli::Command::Build(args) => lane::commands::build(&args, &cli.global),
        cli::Command::Test(args) => lane::commands::test(&args, &cli.global),
        cli::Command::Run(args) => lane::commands::run(&args, &cli.global),
        cli::Command::Schema(args) => schema::run(&args, &cli.global),
        cli::Command::Batch(args) => batch::run(&args, &cli.global),
        cli::Command::Doctor(args) => doctor::run(&args, &cli.global),
        cli::Command::Lsp(args) => lsp::run(&args, &cli.global),
    }
}
