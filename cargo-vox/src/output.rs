//! Two reporters over the same results: rendered text on stderr for people,
//! one JSON envelope per result on stdout for machines (`--json`).

use std::io::{IsTerminal as _, Write as _};

use crate::envelope::Envelope;

pub struct Reporter {
    json: bool,
    color: bool,
}

impl Reporter {
    pub fn new(json: bool) -> Reporter {
        Reporter {
            json,
            color: stderr_color(),
        }
    }

    /// Renders the diagnostics of one checked module (human mode only).
    pub fn diagnostics(&self, checked: &vox_codegen::Checked) {
        if self.json {
            return;
        }
        let opts = vox_codegen::diagnostic::RenderOptions { color: self.color };
        let mut err = std::io::stderr().lock();
        for d in &checked.diagnostics {
            let _ = writeln!(
                err,
                "{}",
                vox_codegen::diagnostic::render(d, &checked.sources, opts)
            );
        }
    }

    /// Prints the envelope (JSON) or a one-line summary (human).
    pub fn finish(&self, env: &Envelope, what: &str) {
        if self.json {
            emit_line(&env.to_line());
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
            eprintln!("{severity}[{code}]: {}\n --> {}", d.message, d.file_path);
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
        let summary = match &env.message {
            Some(m) if !env.ok && env.error_count == 0 => m.clone(),
            _ => summary,
        };
        eprintln!("{label}: {what}: {summary}");
    }

    /// Reports a failure that is not a diagnostic.
    pub fn failure(&self, command: &str, file_path: &str, message: &str) {
        if self.json {
            emit_line(&Envelope::failure(command, file_path, message).to_line());
        } else {
            eprintln!("error: {message}");
        }
    }
}

/// Writes one line to stdout; a closed pipe is not worth a panic.
pub fn emit_line(line: &str) {
    let mut out = std::io::stdout().lock();
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
