//! The `cargo-vox` binary: `cargo vox …` (see the library for the commands).

use cargo_vox::cli;
use clap::Parser;

fn main() {
    // Cargo runs test binaries through `cargo-vox __vox-test-runner …` under `cargo vox test`.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == cargo_vox::lane::testrun::RUNNER_ARG)
    {
        std::process::exit(cargo_vox::lane::testrun::runner_main(&args[2..]));
    }
    let cli = cli::Cli::parse_from(cli::args_without_cargo_subcommand(std::env::args_os()));
    std::process::exit(cargo_vox::run(cli));
}
