//! Two reporters over the same results: rendered text on stderr for people,
//! one JSON envelope per result on stdout for machines (`--json`).

use std::io::{IsTerminal as _, Write};

use crate::envelope::Envelope;
use crate::error::Error;

#[derive(Debug, Clone, Copy)]
pub struct Reporter {
    json: bool,
    color: bool,
}

impl Reporter {
    /// A reporter for JSON or human output; `color` for stderr (see
    /// [`crate::context::Context`], which makes the one a command uses).
    pub fn new(json: bool, color: bool) -> Reporter {
        Reporter { json, color }
    }

    /// Renders the diagnostics of one checked module (human mode only).
    pub fn diagnostics(&self, checked: &vox_codegen::Checked) {
        self.render(checked.diagnostics(), checked.sources());
    }

    /// Renders diagnostics on stderr (human mode only).
    pub fn render(
        &self,
        diagnostics: &[vox_codegen::diagnostic::Diagnostic],
        sources: &vox_codegen::SourceMap,
    ) {
        let mut err = std::io::stderr().lock();
        for r in self.rendered(diagnostics, sources) {
            let _ = writeln!(err, "{r}");
        }
    }

    /// The diagnostics as people read them; none under `--json`.
    pub fn rendered(
        &self,
        diagnostics: &[vox_codegen::diagnostic::Diagnostic],
        sources: &vox_codegen::SourceMap,
    ) -> Vec<String> {
        if self.json {
            return Vec::new();
        }
        let opts = vox_codegen::diagnostic::RenderOptions { color: self.color };
        diagnostics
            .iter()
            .map(|d| vox_codegen::diagnostic::render(d, sources, opts))
            .collect()
    }

    /// Prints the envelope (JSON) or a one-line summary (human).
    pub fn finish(&self, env: &Envelope, what: &str) {
        let mut stdout = std::io::stdout().lock();
        let mut stderr = std::io::stderr().lock();
        self.finish_to(env, what, &mut stdout, &mut stderr);
    }

    fn finish_to(
        &self,
        env: &Envelope,
        what: &str,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) {
        if self.json {
            line_to(stdout, &env.to_line());
            return;
        }
        // Vox and rustc diagnostics were rendered by whoever produced them
        // (the frontend, the build script, rustc); `cargo vox`'s own (a
        // report it could not read) only exist here.
        for d in env
            .diagnostics
            .iter()
            .filter(|d| d.source == vox_metadata::source::CARGO_VOX)
        {
            let code = d.error_code.as_deref().unwrap_or("cargo-vox");
            let severity = if self.color && d.is_error() {
                format!("\x1b[1;31m{}\x1b[0m", d.severity)
            } else {
                d.severity.clone()
            };
            let _ = writeln!(
                stderr,
                "{severity}[{code}]: {}\n --> {}",
                d.message, d.file_path
            );
        }
        let summary = vox_codegen::diagnostic::summary(env.error_count, env.warning_count);
        let (label, color) = if env.ok {
            ("ok", "1;32")
        } else {
            ("error", "1;31")
        };
        let label = if self.color {
            format!("\x1b[{color}m{label}\x1b[0m")
        } else {
            label.to_string()
        };
        // A failure without diagnostics (cargo could not read the manifest,
        // a tool crashed) says why, not "no problems found".
        // Nor does a test run whose tests failed: that is what went wrong.
        let failed_tests = env.failed.unwrap_or(0);
        let summary = match &env.message {
            Some(m) if !env.ok && env.error_count == 0 => m.clone(),
            _ if !env.ok && env.error_count == 0 && failed_tests > 0 => {
                let tests = if failed_tests == 1 { "test" } else { "tests" };
                match env.warning_count {
                    0 => format!("{failed_tests} {tests} failed"),
                    _ => format!("{failed_tests} {tests} failed; {summary}"),
                }
            }
            _ => summary,
        };
        let _ = writeln!(stderr, "{label}: {what}: {summary}");
    }

    /// Reports a command's error (see [`crate::context::Context::report`]):
    /// under `--json` exactly one envelope on `stdout`, otherwise text on
    /// `stderr`. `default_label` names what an [`Error::Other`] is about.
    pub(crate) fn error(
        &self,
        command: &str,
        default_label: &str,
        error: &Error,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) {
        let failure = |label: &str, message: String| Envelope::failure(command, label, message);
        match error {
            Error::Rejected {
                envelope,
                summary,
                rendered,
            } => {
                for r in rendered {
                    let _ = writeln!(stderr, "{r}");
                }
                self.finish_to(envelope, summary, stdout, stderr);
            }
            Error::Usage { label, message } if self.json => {
                line_to(stdout, &failure(label, message.clone()).to_line());
            }
            Error::Failure { label, messages } if self.json => {
                line_to(stdout, &failure(label, messages.join("\n")).to_line());
            }
            Error::Other(e) if self.json => {
                line_to(stdout, &failure(default_label, format!("{e:#}")).to_line());
            }
            Error::Usage { message, .. } => {
                let _ = writeln!(stderr, "error: {message}");
            }
            Error::Failure { messages, .. } => {
                for m in messages {
                    let _ = writeln!(stderr, "error: {m}");
                }
            }
            Error::Other(e) => {
                let _ = writeln!(stderr, "error: {e:#}");
            }
        }
    }
}

/// Writes one line to stdout; a closed pipe is not worth a panic.
pub fn emit_line(line: &str) {
    line_to(&mut std::io::stdout().lock(), line);
}

fn line_to(out: &mut dyn Write, line: &str) {
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Colour on stderr: `CARGO_TERM_COLOR=always|never` wins, then `NO_COLOR`, then is-a-terminal.
pub fn stderr_color() -> bool {
    match std::env::var("CARGO_TERM_COLOR").as_deref() {
        Ok("always") => return true,
        Ok("never") => return false,
        _ => {}
    }
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test run that failed says so in its summary line, never "no
    /// problems found" after counting a failure.
    #[test]
    fn a_failed_test_run_says_its_tests_failed() {
        let mut env = Envelope::new("test", "Cargo.toml", Vec::new());
        env.ok = false;
        env.failed = Some(1);
        env.passed = Some(2);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        Reporter::new(false, false).finish_to(&env, "2 passed, 1 failed", &mut out, &mut err);
        let err = String::from_utf8(err).unwrap();
        assert_eq!(err, "error: 2 passed, 1 failed: 1 test failed\n");
        assert!(!err.contains("no problems found"));
        env.ok = true;
        env.failed = Some(0);
        let mut err = Vec::new();
        Reporter::new(false, false).finish_to(&env, "3 passed", &mut out, &mut err);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "ok: 3 passed: no problems found\n"
        );
    }
}
