//! Reading and writing Vox sources for the commands: how a path is shown,
//! reading a file (regular files up to the size cap only, docs/language.md,
//! "Source files"), and writing a set of rewritten files all-or-nothing
//! through [`crate::source_write`].

use std::path::Path;

use vox_codegen::{Code, Diagnostic, FileId, SourceFile, SourceMap, Span};

use crate::source_write::{self, Roots};

/// A path as users should see it: relative to the current directory when inside it.
pub fn display_path(p: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf());
    shown.to_string_lossy().into_owned()
}

/// Reads one source file into `sources`; `Err` is a message naming the
/// path and the cause (no further chain to print).
pub fn load(sources: &mut SourceMap, path: &Path) -> Result<FileId, String> {
    let bytes = vox_build::layout::read_source(path).map_err(|e| e.to_string())?;
    Ok(sources.add(SourceFile::from_bytes(display_path(path), &bytes)))
}

/// Reads the files into one source map (one module), or says which could not be read.
pub fn read_module(files: &[std::path::PathBuf]) -> Result<SourceMap, String> {
    let mut sources = SourceMap::new();
    for f in files {
        load(&mut sources, f)?;
    }
    Ok(sources)
}

/// The diagnostic for a file that is not UTF-8 (it cannot be rewritten).
pub fn invalid_utf8(sources: &SourceMap, id: FileId) -> Option<Diagnostic> {
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
pub struct Written {
    /// The indices of the writes done (a file reached by two paths counts under each).
    pub done: Vec<usize>,
    /// Why the others were not done, one message per file naming it.
    pub errors: Vec<String>,
}

/// Plans every write first — nothing is written unless all may be — then
/// writes each file; a file reached by two paths is written once. `writes`
/// holds each file's path, the text read and the new text.
pub fn write_all(writes: &[(&Path, &str, &str)], roots: &Roots) -> Written {
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
