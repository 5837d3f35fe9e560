//! Command-line grammar of `cargo vox` (clap derive).

use std::ffi::OsString;

use clap::{Parser, Subcommand};

// The global flags live with the context they build, so that `context.rs`
// (which every command imports) need not import this grammar, which names
// every command's `Args`.
pub use crate::context::GlobalArgs;

#[derive(Debug, Parser)]
#[command(
    name = "cargo-vox",
    bin_name = "cargo vox",
    version,
    about = "Typed LLM functions for Cargo: check, fmt, fix, build, test, run, schema, call, batch, eval, doctor, lsp"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check Vox sources (frontend only, no cargo build).
    Check(crate::check::CheckArgs),
    /// Rewrite Vox sources in the canonical layout; `--check` lists files that would change.
    ///
    /// Keeps every comment, doc comment and line break (docs/language.md,
    /// "Formatting"). Files with syntax errors are left as they are and
    /// their errors reported. Exit status: 0 done; 1 syntax errors, or with
    /// `--check` a file that would change; 2 usage.
    Fmt(crate::fmt::FmtArgs),
    /// Apply every machine-applicable fix, re-check, repeat; `--dry-run` prints the diff.
    ///
    /// Like `cargo fix`: fixes marked `maybe-incorrect` or `has-placeholders`
    /// are shown by `check`, never applied. Prints each fix applied (file,
    /// line, message) and the diagnostics that remain. Exit status: 0 no
    /// errors remain; 1 errors remain; 2 usage.
    Fix(crate::fix::FixArgs),
    /// Build with cargo; one envelope with rustc and Vox diagnostics.
    Build(crate::lane::commands::BuildArgs),
    /// Build, then run the tests; a build envelope and a test envelope.
    Test(crate::lane::commands::TestArgs),
    /// Run the package's binary, or one `.vox` script with `fn main()`.
    Run(crate::lane::commands::RunArgs),
    /// Print the strict JSON Schema the model is given for a type (`response_format`, or with
    /// `--provider` the request fields that carry it to that provider).
    Schema(crate::schema::SchemaArgs),
    /// Call an @ai function once with JSON arguments and print the value (`--stream`: as it
    /// arrives; `--dry-run`: the request, not sent).
    Call(crate::call::CallArgs),
    /// Run an @ai function over a JSONL file of arguments on the provider's batch engine
    /// (resumable; README, "Bulk runs").
    Batch(crate::batch::BatchArgs),
    /// Run an @ai function over a JSONL file of cases, once or `--repeat` times per model, and
    /// score the values against the expected ones (docs/eval.md).
    Eval(crate::eval::EvalArgs),
    /// Check this machine for broken or slow toolchains.
    Doctor(crate::doctor::DoctorArgs),
    /// Run the Language Server Protocol server on stdio (for editors; see README, "Editors").
    Lsp(crate::lsp::LspArgs),
}

impl Command {
    /// The subcommand's name, as envelopes give it in `command`.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Check(_) => "check",
            Command::Fmt(_) => "fmt",
            Command::Fix(_) => "fix",
            Command::Build(_) => "build",
            Command::Test(_) => "test",
            Command::Run(_) => "run",
            Command::Schema(_) => "schema",
            Command::Call(_) => "call",
            Command::Batch(_) => "batch",
            Command::Eval(_) => "eval",
            Command::Doctor(_) => "doctor",
            Command::Lsp(_) => "lsp",
        }
    }
}

/// Cargo runs `cargo-vox vox …` for `cargo vox …`: drop that extra word so the
/// binary also works when run directly.
pub fn args_without_cargo_subcommand(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "vox") {
        args.remove(1);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_the_cargo_subcommand_word() {
        let a = args_without_cargo_subcommand(["cargo-vox", "vox", "check"].map(OsString::from));
        assert_eq!(a, ["cargo-vox", "check"].map(OsString::from));
        let b = args_without_cargo_subcommand(["cargo-vox", "check"].map(OsString::from));
        assert_eq!(b, ["cargo-vox", "check"].map(OsString::from));
    }
}
