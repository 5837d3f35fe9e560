//! `cargo vox fmt`: rewrites Vox sources in the canonical layout
//! (docs/language.md, "Formatting"), or with `--check` lists the files that
//! are not in it.
//!
//! Files are chosen as by `cargo vox check`. A file with syntax errors (or
//! invalid UTF-8) is left untouched and its errors are reported. Files are
//! written atomically (a new temporary file renamed over the old one) and
//! only when their text changes; a symlink is written through to its
//! target, and the file keeps its permissions.

use std::path::{Path, PathBuf};

use clap::Args;
use vox_codegen::{Code, Diagnostic, SourceFile, SourceMap, Span};

use crate::check::{display_path, inputs_or_report, label_for_paths, CheckArgs};
use crate::cli::GlobalArgs;
use crate::envelope::{payloads, Envelope};
use crate::exit;
use crate::output::{emit_line, Reporter};

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Write nothing: list the files that would change, and exit with status 1 if any would (for CI).
    #[arg(long)]
    pub check: bool,
    /// `.vox` files or directories to format (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

/// The files a command works on (as `check` selects them), or the exit
/// status once the failure is reported.
pub(crate) fn selected_files(
    command: &str,
    paths: &[PathBuf],
    global: &GlobalArgs,
    out: &Reporter,
) -> Result<(String, Vec<PathBuf>), i32> {
    let args = CheckArgs {
        paths: paths.to_vec(),
    };
    let (label, modules) = inputs_or_report(command, &args, &label_for_paths(paths), global, out)?;
    let mut files = Vec::new();
    for m in modules {
        for f in m.files {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    Ok((label, files))
}

/// Reads one source file into `sources`; `Err` is a message naming the file.
pub(crate) fn load(sources: &mut SourceMap, path: &Path) -> Result<vox_codegen::FileId, String> {
    let bytes = vox_build::layout::read_source(path).map_err(|e| e.to_string())?;
    Ok(sources.add(SourceFile::from_bytes(display_path(path), &bytes)))
}

/// The diagnostic for a file that is not UTF-8 (it cannot be rewritten).
pub(crate) fn invalid_utf8(sources: &SourceMap, id: vox_codegen::FileId) -> Option<Diagnostic> {
    let at = sources.get(id).invalid_utf8_at?;
    Some(
        Diagnostic::error(
            Code::InvalidUtf8,
            Span::new(id, at, at + '\u{FFFD}'.len_utf8()),
            "file is not valid UTF-8; it was left unchanged",
        )
        .hint("save the file as UTF-8"),
    )
}

/// Writes `text` to `path` atomically when it differs, through a symlink
/// to its target, keeping the file's permissions.
pub(crate) fn write_source(path: &Path, text: &str) -> anyhow::Result<()> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
    vox_build::write_if_changed(&target, text.as_bytes()).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(p) = perms {
        let _ = std::fs::set_permissions(&target, p);
    }
    Ok(())
}

/// Renders diagnostics on stderr (human mode only).
pub(crate) fn render_all(out_json: bool, diagnostics: &[Diagnostic], sources: &SourceMap) {
    if out_json {
        return;
    }
    let opts = vox_codegen::diagnostic::RenderOptions {
        color: crate::output::stderr_color(),
    };
    for d in diagnostics {
        eprintln!("{}", vox_codegen::diagnostic::render(d, sources, opts));
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn run(args: &FmtArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let out = Reporter::new(global.json);
    let (label, files) = match selected_files("fmt", &args.paths, global, &out) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let mut sources = SourceMap::new();
    let mut diagnostics = Vec::new();
    let mut changed = Vec::new();
    for path in &files {
        let id = match load(&mut sources, path) {
            Ok(id) => id,
            Err(msg) => {
                out.failure("fmt", &label, &msg);
                return Ok(exit::FAILURE);
            }
        };
        if let Some(d) = invalid_utf8(&sources, id) {
            diagnostics.push(d);
            continue;
        }
        let file = sources.get(id);
        match vox_codegen::fmt::format_source(id, &file.text) {
            Err(ds) => diagnostics.extend(ds.into_iter().filter(Diagnostic::is_error)),
            Ok(text) if text != file.text => {
                if !args.check {
                    if let Err(err) = write_source(path, &text) {
                        out.failure("fmt", &label, &format!("{err:#}"));
                        return Ok(exit::FAILURE);
                    }
                }
                changed.push(file.name.clone());
            }
            Ok(_) => {}
        }
    }
    vox_codegen::diagnostic::sort(&mut diagnostics);
    render_all(global.json, &diagnostics, &sources);
    let mut env = Envelope::new("fmt", label, payloads(&diagnostics, &sources));
    if args.check && !changed.is_empty() {
        env.ok = false;
    }
    let errors = env.error_count;
    env.changed_files = Some(changed.clone());
    if global.json {
        emit_line(&env.to_line());
    } else {
        if args.check {
            // One path per line on stdout, for scripts (`gofmt -l` style).
            for c in &changed {
                println!("{c}");
            }
        } else {
            for c in &changed {
                eprintln!("formatted {c}");
            }
        }
        let verb = if args.check {
            "would reformat"
        } else {
            "reformatted"
        };
        let mut summary = format!(
            "{}: {verb} {} of {}",
            if env.ok { "ok" } else { "error" },
            changed.len(),
            plural(files.len(), "Vox file"),
        );
        if errors > 0 {
            summary.push_str(&format!(
                "; {} left unchanged: syntax errors",
                plural(
                    diagnostics
                        .iter()
                        .map(|d| d.span.file)
                        .collect::<std::collections::BTreeSet<_>>()
                        .len(),
                    "file"
                )
            ));
        }
        eprintln!("{summary}");
    }
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}
