//! `cargo vox fix`: applies every machine-applicable fix, checks again, and
//! repeats until no fix applies (bounded), like `cargo fix`
//! (docs/diagnostics.md, "Fixes").
//!
//! Files are chosen as by `cargo vox check`; each package's sources are one
//! module. Files are written only when they change, and only as
//! [`crate::source_write`] allows (see [`crate::sources::write_all`]): nothing
//! of a module is written unless every file of it that would change may
//! be. A file that is not valid UTF-8 is never edited. `--dry-run` writes
//! nothing and prints the unified diff instead.

use std::path::PathBuf;

use clap::Args;
use vox_codegen::fix::{fix_module, FixFile};

use crate::context::Context;
use crate::envelope::{vox_payloads, AppliedFix, EditPayload, Envelope, SpanPayload};
use crate::error::{Error, Result};
use crate::output::emit_line;
use crate::{diff, exit, inputs, sources};

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Write nothing: print a unified diff of what would change.
    #[arg(long)]
    pub dry_run: bool,
    /// `.vox` files or directories to fix as one module (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

pub fn run(args: &FixArgs, ctx: &Context) -> Result<i32> {
    let out = ctx.reporter();
    let inputs = inputs::resolve(ctx, &args.paths, &inputs::label_for_paths(&args.paths))?;
    let label = inputs.label.clone();
    let mut payloads = Vec::new();
    let mut applied = Vec::new();
    let mut changed = Vec::new();
    let mut diff_text = String::new();
    let mut file_count = 0;
    let mut unsettled = false;
    let roots = inputs.roots();
    for module in &inputs.modules {
        // Read every file first: nothing is written unless all could be read.
        let texts =
            sources::read_module(&module.files).map_err(|msg| Error::failure(&label, msg))?;
        file_count += module.files.len();
        let files: Vec<FixFile> = texts
            .files()
            .map(|(_, f)| FixFile {
                name: f.name.clone(),
                text: f.text.clone(),
                editable: f.invalid_utf8_at.is_none(),
            })
            .collect();
        let outcome = fix_module(&files);
        let mut writes = Vec::new();
        let mut names = Vec::new();
        for (i, (file, new)) in files.iter().zip(&outcome.texts).enumerate() {
            if *new == file.text {
                continue;
            }
            if args.dry_run {
                changed.push(file.name.clone());
                diff_text.push_str(&diff::unified(&file.name, &file.text, new));
            } else {
                writes.push((module.files[i].as_path(), file.text.as_str(), new.as_str()));
                names.push(file.name.clone());
            }
        }
        let written = sources::write_all(&writes, &roots);
        changed.extend(written.done.iter().map(|&i| names[i].clone()));
        if !written.errors.is_empty() {
            return Err(Error::Failure {
                label,
                messages: written.errors,
            });
        }
        for a in &outcome.applied {
            let name = |i: usize| files.get(i).map_or_else(String::new, |f| f.name.clone());
            if !ctx.json() {
                eprintln!(
                    "{} {}:{}: {}",
                    if args.dry_run { "would fix" } else { "fixed" },
                    name(a.file),
                    a.line,
                    a.message
                );
            }
            applied.push(AppliedFix {
                file_path: name(a.file),
                line: a.line,
                error_code: a.code.as_str().to_string(),
                message: a.message.clone(),
                edits: a
                    .edits
                    .iter()
                    .map(|e| EditPayload {
                        file_path: name(e.file),
                        span: SpanPayload {
                            start_line: e.start.line,
                            start_col: e.start.col,
                            end_line: e.end.line,
                            end_col: e.end.col,
                            start_byte: Some(e.start_byte),
                            end_byte: Some(e.end_byte),
                        },
                        replacement: e.replacement.clone(),
                    })
                    .collect(),
            });
        }
        unsettled |= !outcome.settled;
        if !outcome.settled && !ctx.json() {
            eprintln!(
                "warning: fixes still applied after {} rounds; run `cargo vox fix` again",
                vox_codegen::fix::MAX_PASSES
            );
        }
        out.diagnostics(&outcome.checked);
        payloads.extend(vox_payloads(&outcome.checked));
    }
    let mut env = Envelope::new(ctx.command, label, payloads);
    env.changed_files = Some(changed.clone());
    if unsettled {
        env.message = Some(format!(
            "fixes still applied after {} rounds; run `cargo vox fix` again",
            vox_codegen::fix::MAX_PASSES
        ));
    }
    let fix_count = applied.len();
    env.applied_fixes = Some(applied);
    if args.dry_run {
        if ctx.json() {
            env.diff = Some(diff_text);
        } else {
            print!("{diff_text}");
        }
    }
    let plural = |n: usize, w: &str| match (n, w) {
        (1, _) => format!("1 {w}"),
        (_, "fix") => format!("{n} fixes"),
        _ => format!("{n} {w}s"),
    };
    if ctx.json() {
        emit_line(&env.to_line());
    } else {
        let verb = if args.dry_run {
            "would apply"
        } else {
            "applied"
        };
        let remaining = vox_codegen::diagnostic::summary(env.error_count, env.warning_count);
        eprintln!(
            "{}: {verb} {} in {} of {}; {remaining}",
            if env.ok { "ok" } else { "error" },
            plural(fix_count, "fix"),
            plural(changed.len(), "file"),
            plural(file_count, "Vox file"),
        );
    }
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}
