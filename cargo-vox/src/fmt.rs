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
use vox_codegen::{Diagnostic, SourceMap};

use crate::context::Context;
use crate::envelope::{payloads, Envelope};
use crate::error::{Error, Result};
use crate::output::emit_line;
use crate::sources::{invalid_utf8, load, write_all};
use crate::{exit, inputs};

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Write nothing: list the files that would change, and exit with status 1 if any would (for CI).
    #[arg(long)]
    pub check: bool,
    /// `.vox` files or directories to format (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn run(args: &FmtArgs, ctx: &Context) -> Result<i32> {
    let out = ctx.reporter();
    let inputs = inputs::resolve(ctx, &args.paths, &inputs::label_for_paths(&args.paths))?;
    let (label, files, roots) = (inputs.label.clone(), inputs.files(), inputs.roots());
    let mut sources = SourceMap::new();
    let mut diagnostics = Vec::new();
    // (path, file, new text) of each file whose text changes.
    let mut pending: Vec<(&Path, vox_codegen::FileId, String)> = Vec::new();
    for path in &files {
        let id = load(&mut sources, path).map_err(|msg| Error::failure(&label, msg))?;
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
    out.render(&diagnostics, &sources);
    let mut env = Envelope::new(ctx.command, label, payloads(&diagnostics, &sources));
    if (args.check && !changed.is_empty()) || !not_written.is_empty() {
        env.ok = false;
    }
    if !not_written.is_empty() {
        env.message = Some(not_written.join("\n"));
    }
    let errors = env.error_count;
    env.changed_files = Some(changed.clone());
    if ctx.json() {
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
