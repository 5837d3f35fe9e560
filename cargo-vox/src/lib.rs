//! `cargo vox`: the Vox lane for people and coding agents.
//!
//! The binary (`main.rs`) is a thin shell over this library: `check` and
//! `schema` over vox-codegen, `build`/`test`/`run` over cargo ([`lane`]),
//! and the doctor's probes ([`doctor`]). [`run`] builds one [`Context`]
//! (output mode, manifest path, package, colour) and passes it to the
//! command; a command's [`Error`] is reported in one place,
//! [`Context::report`]. Which sources a command works on is [`inputs`]';
//! reading and writing them [`sources`]'; how cargo is found [`cargo`]'s.
//! Machine output lives in [`envelope`]; exit codes in [`exit`].

pub mod batch;
pub mod call;
pub mod cargo;
pub mod check;
pub mod cli;
pub mod context;
pub mod diff;
pub mod doctor;
pub mod envelope;
pub mod error;
pub mod eval;
pub mod eval_report;
pub mod exit;
pub mod fix;
pub mod fmt;
pub mod inputs;
pub mod lane;
pub mod lsp;
pub mod output;
pub mod process;
pub mod schema;
pub mod source_write;
pub mod sources;
pub mod workspace;

pub use context::Context;
pub use error::Error;

/// Runs a parsed command line: the command's exit status, its error (if
/// any) reported.
pub fn run(cli: cli::Cli) -> i32 {
    let ctx = Context::new(cli.command.name(), &cli.global);
    match run_command(&cli.command, &ctx) {
        Ok(code) => code,
        Err(error) => ctx.report(&error),
    }
}

fn run_command(command: &cli::Command, ctx: &Context) -> error::Result<i32> {
    match command {
        cli::Command::Check(args) => check::run(args, ctx),
        cli::Command::Fmt(args) => fmt::run(args, ctx),
        cli::Command::Fix(args) => fix::run(args, ctx),
        cli::Command::Build(args) => lane::commands::build(args, ctx),
        cli::Command::Test(args) => lane::commands::test(args, ctx),
        cli::Command::Run(args) => lane::commands::run(args, ctx),
        cli::Command::Schema(args) => schema::run(args, ctx),
        cli::Command::Call(args) => call::run(args, ctx),
        cli::Command::Batch(args) => batch::run(args, ctx),
        cli::Command::Eval(args) => eval::run(args, ctx),
        cli::Command::Doctor(args) => doctor::run(args, ctx),
        cli::Command::Lsp(args) => lsp::run(args, ctx),
    }
}
