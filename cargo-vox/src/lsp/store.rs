//! What the server knows: open buffers (which override the files on disk),
//! the Vox modules they belong to, and each module's latest analysis.
//!
//! A module is read from disk once, when a file of it is first opened;
//! after that, edits only touch the buffers, and a re-check builds the
//! module from the cached disk text with the open buffers laid over it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lsp_types::{Position, Range};
use vox_codegen::ide::Index;
use vox_codegen::{Checked, FileId, SourceFile, SourceMap, Span};

use super::position::{Encoding, LineIndex, Lines};

use crate::context::Context;

/// The result of checking one module: the checked module, its index, and
/// the path of each of its files (indexed by [`FileId`]).
pub struct Analysis {
    pub checked: Checked,
    pub index: Index,
    pub paths: Vec<PathBuf>,
    /// Line table of each file (indexed by [`FileId`]).
    pub lines: Vec<Lines>,
}

impl Analysis {
    /// Converts positions in `file`.
    pub fn lines(&self, file: FileId, enc: Encoding) -> LineIndex<'_> {
        static EMPTY: Lines = Lines::EMPTY;
        let lines = self.lines.get(file.0 as usize).unwrap_or(&EMPTY);
        LineIndex::with(&self.checked.sources().get(file).text, lines, enc)
    }

    /// The range of `span` in its file.
    pub fn range(&self, span: Span, enc: Encoding) -> Range {
        self.lines(span.file, enc).range(span)
    }

    /// The byte offset of `pos` in `file`.
    pub fn offset(&self, file: FileId, pos: Position, enc: Encoding) -> u32 {
        self.lines(file, enc).offset(pos) as u32
    }

    pub fn file_of(&self, path: &Path) -> Option<FileId> {
        self.paths
            .iter()
            .position(|p| p == path)
            .map(|i| FileId(i as u32))
    }

    pub fn path(&self, file: FileId) -> Option<&Path> {
        self.paths.get(file.0 as usize).map(PathBuf::as_path)
    }
}

/// One Vox module: its files, their text on disk as first read, and its
/// latest analysis.
pub struct Module {
    pub files: Vec<PathBuf>,
    /// Disk text of each file not open in the editor, read once.
    disk: HashMap<PathBuf, Vec<u8>>,
    pub analysis: Option<Analysis>,
    /// Set by an edit; the module is re-checked once the edits pause.
    pub dirty_since: Option<Instant>,
    /// Files diagnostics were last published for (to clear them).
    pub published: Vec<PathBuf>,
}

impl Module {
    fn new(files: Vec<PathBuf>) -> Module {
        Module {
            files,
            disk: HashMap::new(),
            analysis: None,
            dirty_since: None,
            published: Vec::new(),
        }
    }

    /// Re-checks the module from the open buffers and the cached disk text.
    pub fn recheck(&mut self, open: &HashMap<PathBuf, String>) {
        let mut sources = SourceMap::new();
        let mut paths = Vec::with_capacity(self.files.len());
        for path in &self.files {
            let name = crate::sources::display_path(path);
            let file = match open.get(path) {
                Some(text) => SourceFile::new(name, text.as_str()),
                None => {
                    let bytes = self.disk.entry(path.clone()).or_insert_with(|| {
                        // An unreadable file is checked as empty; `cargo vox
                        // check` reports why it cannot be read.
                        vox_build::layout::read_source(path).unwrap_or_default()
                    });
                    SourceFile::from_bytes(name, bytes)
                }
            };
            sources.add(file);
            paths.push(path.clone());
        }
        let checked = vox_codegen::check(sources);
        let index = Index::build(&checked);
        let lines = checked
            .sources()
            .files()
            .map(|(_, f)| Lines::new(&f.text))
            .collect();
        let old = self.analysis.replace(Analysis {
            checked,
            index,
            paths,
            lines,
        });
        // Freeing a large module's tree takes a while; not on the path of
        // the answer the editor waits for.
        if let Some(old) = old {
            let _ = std::thread::Builder::new()
                .name("vox-lsp-drop".into())
                .spawn(move || drop(old));
        }
        self.dirty_since = None;
    }

    /// Forgets the disk text of `path` (it changed on disk or was closed).
    pub fn forget_disk(&mut self, path: &Path) {
        self.disk.remove(path);
    }
}

/// The open buffers and the modules.
#[derive(Default)]
pub struct Store {
    pub open: HashMap<PathBuf, String>,
    pub modules: Vec<Module>,
}

impl Store {
    /// The module `path` belongs to, discovering (and reading) it on first use.
    pub fn module_for(&mut self, path: &Path, ctx: &Context) -> usize {
        if let Some(i) = self
            .modules
            .iter()
            .position(|m| m.files.iter().any(|f| f == path))
        {
            return i;
        }
        let files = discover(path, ctx);
        // A module already loaded that this discovery overlaps (a new file
        // of a known package): extend it rather than check files twice.
        if let Some(i) = self
            .modules
            .iter()
            .position(|m| m.files.iter().any(|f| files.contains(f)))
        {
            let m = &mut self.modules[i];
            for f in files {
                if !m.files.contains(&f) {
                    m.files.push(f);
                }
            }
            m.files.sort();
            return i;
        }
        self.modules.push(Module::new(files));
        self.modules.len() - 1
    }

    /// A file changed on disk (the editor's file watcher says so): its
    /// module forgets the cached text, drops a deleted file that is not
    /// open, takes in a new `.vox` file beside its files, and is re-checked
    /// once edits pause.
    pub fn disk_changed(&mut self, path: &Path, deleted: bool) {
        let is_open = self.open.contains_key(path);
        if let Some(i) = self.find(path) {
            let m = &mut self.modules[i];
            m.forget_disk(path);
            if deleted && !is_open {
                m.files.retain(|f| f != path);
            }
            m.dirty_since.get_or_insert_with(Instant::now);
            return;
        }
        if deleted || !vox_build::layout::is_vox_file(path) {
            return;
        }
        let dir = path.parent();
        if let Some(m) = self
            .modules
            .iter_mut()
            .find(|m| m.files.iter().any(|f| f.parent() == dir))
        {
            m.files.push(path.to_path_buf());
            m.files.sort();
            m.dirty_since.get_or_insert_with(Instant::now);
        }
    }

    /// The module holding `path`, if it is known.
    pub fn find(&self, path: &Path) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.files.iter().any(|f| f == path))
    }
}

/// The files of the module `path` belongs to: the Vox sources of the Cargo
/// package whose source directories hold it (as `cargo vox check` would
/// check them), else the `.vox` files of its directory, else just itself.
/// The file itself is always included, even if not yet saved.
fn discover(path: &Path, ctx: &Context) -> Vec<PathBuf> {
    let mut files = package_files(path, ctx)
        .or_else(|| {
            let dir = path.parent()?;
            let mut found = vox_build::layout::VoxFiles::new();
            found.add_dir(dir).ok()?;
            Some(found.into_sorted())
        })
        .unwrap_or_default();
    if !files.iter().any(|f| f == path) {
        files.push(path.to_path_buf());
        files.sort();
    }
    files
}

fn package_files(path: &Path, ctx: &Context) -> Option<Vec<PathBuf>> {
    let manifest = path
        .ancestors()
        .skip(1)
        .map(|d| d.join("Cargo.toml"))
        .find(|m| m.is_file())?;
    let ctx = ctx.for_manifest(
        ctx.manifest_path.clone().unwrap_or(manifest),
        ctx.package.clone(),
    );
    let selection = crate::workspace::selected_packages(&ctx).ok()?;
    selection.packages.into_iter().find_map(|pkg| {
        let inside = pkg.layout.dir_paths().iter().any(|d| path.starts_with(d));
        if !inside {
            return None;
        }
        pkg.layout.vox_files().ok()
    })
}
