//! The `cargo-vox` binary: `cargo vox …` (see the library for the commands).

use cargo_vox::{cli, exit};
use clap::Parser;

fn main() {
    let cli = cli::Cli::parse_from(cli::args_without_cargo_subcommand(std::env::args_os()));
    let code = match cargo_vox::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            exit::FAILURE
        }
    };
    std::process::exit(code);
}
