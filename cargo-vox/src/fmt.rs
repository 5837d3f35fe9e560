//! `cargo vox fmt`: rewrites Vox sources in the canonical layout
//! (docs/language.md, "Formatting"), or with `--check` lists the files that
//! are not in it.
//!
//! Files are chosen as by `cargo vox check`. A file with syntax errors (or
//! invalid UTF-8) is left untouched and its errors are reported. Files are
//! written only when their text changes, and only as
//! [`crate::source_write`] allows: inside the package (or the paths given),
//! not read-only, atomically, keeping permissions, owner and group, and not
//! over an edit saved meanwhile. Nothing is written unless every file that
//! would change may be.

use std::path::{Path, PathBuf};

use clap::Args;
use vox_codegen::{Code, Diagnostic, SourceFile, SourceMap, Span};

use crate::check::{display_path, inputs_or_report, label_for_paths, CheckArgs};
use crate::cli::GlobalArgs;
use crate::envelope::{payloads, Envelope};
use crate::exit;
use crate::output::{emit_line, Reporter};
use crate::source_write::{self, Roots};

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Write nothing: list the files that would change, and exit with status 1 if any would (for CI).
    #[arg(long)]
    pub check: bool,
    /// `.vox` files or directories to format (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

/// The files a command works on (as `check` selects them) and where it
/// may write, or the exit status once the failure is reported.
pub(crate) fn selected_files(
    command: &str,
    paths: &[PathBuf],
    global: &GlobalArgs,
    out: &Reporter,
) -> Result<(String, Vec<PathBuf>, Roots), i32> {
    let args = CheckArgs {
        paths: paths.to_vec(),
    };
    let (label, modules) = inputs_or_report(command, &args, &label_for_paths(paths), global, out)?;
    let roots = Roots::union(modules.iter().map(|m| &m.roots));
    let mut files = Vec::new();
    for m in modules {
        for f in m.files {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    Ok((label, files, roots))
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

/// What [`write_all`] did.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The indices of the writes done (a file reached by two paths counts under each).
    pub done: Vec<usize>,
    /// Why the others were not done, one message per file naming it.
    pub errors: Vec<String>,
}

/// Plans every write first — nothing is written unless all may be — then
/// writes each file; a file reached by two paths is written once. `writes`
/// holds each file's path, the text read and the new text.
pub(crate) fn write_all(writes: &[(&Path, &str, &str)], roots: &Roots) -> Written {
    let mut planned: Vec<(Vec<usize>, source_write::Planned)> = Vec::new();
    let mut out = Written::default();
    for (i, (path, _, _)) in writes.iter().enumerate() {
        match source_write::plan(path, &display_path(path), roots) {
            Ok(p) => match planned
                .iter_mut()
                .find(|(_, q)| q.real_path() == p.real_path())
            {
                Some((same, _)) => same.push(i),
                None => planned.push((vec![i], p)),
            },
            Err(e) => out.errors.push(e.to_string()),
        }
    }
    if !out.errors.is_empty() {
        return out;
    }
    let mut hook = source_write::before_compare_hook();
    for (indices, p) in &planned {
        let (_, old, new) = writes[indices[0]];
        match p.write(old.as_bytes(), new.as_bytes(), &mut hook) {
            Ok(()) => out.done.extend(indices),
            Err(e) => out.errors.push(e.to_string()),
        }
    }
    out.done.sort_unstable();
    out
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
    let (label, files, roots) = match selected_files("fmt", &args.paths, global, &out) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let mut sources = SourceMap::new();
    let mut diagnostics = Vec::new();
    // (path, file, new text) of each file whose text changes.
    let mut pending: Vec<(&Path, vox_codegen::FileId, String)> = Vec::new();
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
            Ok(text) if text != file.text => pending.push((path, id, text)),
            Ok(_) => {}
        }
    }
    let mut changed: Vec<String> = pending
        .iter()
        .map(|(_, id, _)| sources.get(*id).name.clone())
        .collect();
    let mut not_written = Vec::new();
    if !args.check {
        let writes: Vec<(&Path, &str, &str)> = pending
            .iter()
            .map(|(path, id, new)| (*path, sources.get(*id).text.as_str(), new.as_str()))
            .collect();
        let written = write_all(&writes, &roots);
        changed = written.done.iter().map(|&i| changed[i].clone()).collect();
        not_written = written.errors;
    }
    vox_codegen::diagnostic::sort(&mut diagnostics);
    render_all(global.json, &diagnostics, &sources);
    let mut env = Envelope::new("fmt", label, payloads(&diagnostics, &sources));
    if (args.check && !changed.is_empty()) || !not_written.is_empty() {
        env.ok = false;
    }
    if !not_written.is_empty() {
        env.message = Some(not_written.join("\n"));
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
        for e in &not_written {
            eprintln!("error: {e}");
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
        if !not_written.is_empty() {
            summary.push_str(&format!(
                "; {} not written",
                plural(not_written.len(), "file")
            ));
        }
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
