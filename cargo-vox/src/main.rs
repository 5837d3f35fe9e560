//! `cargo vox`: the Vox lane for people and coding agents.
//!
//! A thin shell over `vox-codegen` (check, schema), cargo (build, test, run)
//! and the doctor's probes. Machine output lives in [`envelope`]; exit codes
//! in [`exit`].

mod check;
mod cli;
mod doctor;
mod envelope;
mod exit;
mod lane;
mod output;
mod schema;
mod workspace;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse_from(cli::args_without_cargo_subcommand(std::env::args_os()));
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            exit::FAILURE
        }
    };
    std::process::exit(code);
}

fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    match cli.command {
        cli::Command::Check(args) => check::run(&args, &cli.global),
        cli::Command::Build(args) => lane::commands::build(&args, &cli.global),
        cli::Command::Test(args) => lane::commands::test(&args, &cli.global),
        cli::Command::Run(args) => lane::commands::run(&args, &cli.global),
        cli::Command::Schema(args) => schema::run(&args, &cli.global),
        cli::Command::Doctor(args) => doctor::run(&args, &cli.global),
    }
}
