//! What every command of `cargo vox` is given: one [`Context`], built once
//! from the command line (`lib::run`) and passed down, instead of each
//! command reading the global flags, the environment and the terminal on
//! its own.

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;
use crate::output::Reporter;

/// Flags accepted before or after the subcommand (`cli::Cli` flattens
/// them); what [`Context::new`] is built from.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Print one-line JSON envelopes on stdout (JSONL); human notes go to stderr.
    #[arg(long, global = true)]
    pub json: bool,
    /// Path to the Cargo.toml of the package or workspace to work on.
    #[arg(long, global = true, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// Package to work on (as cargo's `-p`).
    #[arg(short = 'p', long, global = true, value_name = "SPEC")]
    pub package: Option<String>,
}

/// Where results go: rendered text on stderr for people, or one JSON
/// envelope per result on stdout (`--json`, JSONL only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    Human,
    Json,
}

/// The command being run and the choices that hold for all of it.
#[derive(Debug, Clone)]
pub struct Context {
    /// The subcommand (`check`, `build`, …): the `command` of its envelopes.
    pub command: &'static str,
    pub output: OutputMode,
    /// `--manifest-path`: the package or workspace to work on.
    pub manifest_path: Option<PathBuf>,
    /// `-p`: the package to work on.
    pub package: Option<String>,
    /// Whether stderr gets colour (see [`crate::output::stderr_color`]).
    pub color: bool,
}

impl Context {
    /// The context of `command` run with `global`; reads the terminal and
    /// the colour variables once.
    pub fn new(command: &'static str, global: &GlobalArgs) -> Context {
        Context {
            command,
            output: if global.json {
                OutputMode::Json
            } else {
                OutputMode::Human
            },
            manifest_path: global.manifest_path.clone(),
            package: global.package.clone(),
            color: crate::output::stderr_color(),
        }
    }

    /// Under `--json`.
    pub fn json(&self) -> bool {
        self.output == OutputMode::Json
    }

    /// The reporter for this context's output mode.
    pub fn reporter(&self) -> Reporter {
        Reporter::new(self.json(), self.color)
    }

    /// The same command on another package: a script's generated crate, the
    /// package an editor's file belongs to.
    pub fn for_manifest(&self, manifest: PathBuf, package: Option<String>) -> Context {
        Context {
            manifest_path: Some(manifest),
            package,
            ..self.clone()
        }
    }

    /// What an error names when the command did not get as far as naming
    /// anything itself: the manifest given, else `Cargo.toml`.
    pub fn default_label(&self) -> String {
        self.manifest_path
            .as_deref()
            .map_or_else(|| "Cargo.toml".to_string(), crate::sources::display_path)
    }

    /// Reports a command's error — the one place errors are reported — and
    /// returns the exit status: under `--json` exactly one envelope on
    /// stdout, otherwise `error: …` on stderr.
    pub fn report(&self, error: &Error) -> i32 {
        let mut stdout = std::io::stdout().lock();
        let mut stderr = std::io::stderr().lock();
        self.report_to(error, &mut stdout, &mut stderr)
    }

    /// [`Context::report`] into the given streams.
    pub fn report_to(
        &self,
        error: &Error,
        stdout: &mut dyn std::io::Write,
        stderr: &mut dyn std::io::Write,
    ) -> i32 {
        self.reporter()
            .error(self.command, &self.default_label(), error, stdout, stderr);
        error.exit_code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Envelope;

    fn context(output: OutputMode) -> Context {
        Context {
            command: "check",
            output,
            manifest_path: None,
            package: None,
            color: false,
        }
    }

    /// One of each kind of error a command can end with.
    fn errors() -> Vec<(Error, i32)> {
        let mut rejected = Envelope::new("check", "a.vox", Vec::new());
        rejected.ok = false;
        vec![
            (Error::usage("a.vox", "no such file or directory: a.vox"), 2),
            (Error::failure("a.vox", "cannot read a.vox"), 1),
            (
                Error::Failure {
                    label: "a.vox".into(),
                    messages: vec!["a.vox: read-only".into(), "b.vox: read-only".into()],
                },
                1,
            ),
            (
                Error::Rejected {
                    envelope: Box::new(rejected),
                    summary: "the module has errors; no schema".into(),
                    rendered: vec!["error[E0001]: …".into()],
                },
                1,
            ),
            (Error::Other(anyhow::anyhow!("stdout closed")), 1),
        ]
    }

    #[test]
    fn json_errors_are_one_envelope_on_stdout() {
        let ctx = context(OutputMode::Json);
        for (error, code) in errors() {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(ctx.report_to(&error, &mut out, &mut err), code, "{error:?}");
            let out = String::from_utf8(out).unwrap();
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 1, "{error:?}: {out}");
            let env = Envelope::from_line(lines[0]).expect("an envelope");
            assert!(!env.ok, "{error:?}");
            assert_eq!(env.command, "check");
            assert!(
                env.message.is_some() || matches!(error, Error::Rejected { .. }),
                "{error:?}: {out}"
            );
            let err = String::from_utf8(err).unwrap();
            if !matches!(error, Error::Rejected { .. }) {
                assert_eq!(err, "", "{error:?}");
            }
        }
    }

    #[test]
    fn human_errors_go_to_stderr_only() {
        let ctx = context(OutputMode::Human);
        for (error, code) in errors() {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(ctx.report_to(&error, &mut out, &mut err), code, "{error:?}");
            assert!(out.is_empty(), "{error:?}");
            let err = String::from_utf8(err).unwrap();
            let said = err.lines().filter(|l| l.starts_with("error")).count();
            let expected = match &error {
                Error::Failure { messages, .. } => messages.len(),
                // The rendered diagnostic and the summary line.
                Error::Rejected { .. } => 2,
                _ => 1,
            };
            assert_eq!(said, expected, "{error:?}: {err}");
        }
    }

    #[test]
    fn errors_name_what_the_command_was_given() {
        let mut ctx = context(OutputMode::Json);
        ctx.manifest_path = Some("sub/Cargo.toml".into());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        ctx.report_to(&Error::Other(anyhow::anyhow!("x")), &mut out, &mut err);
        let env = Envelope::from_line(String::from_utf8(out).unwrap().trim()).unwrap();
        assert_eq!(env.file_path, "sub/Cargo.toml");
        let relabelled = Error::usage("Cargo.toml", "m").labelled("Invoice");
        assert!(matches!(relabelled, Error::Usage { label, .. } if label == "Invoice"));
    }
}
