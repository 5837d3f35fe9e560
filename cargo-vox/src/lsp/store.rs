//! What the server knows: open buffers (which override the files on disk),
//! the Vox modules they belong to, and each module's latest analysis.
//!
//! A module is read from disk once, when a file of it is first opened;
//! after that, edits only touch the buffers, and a re-check builds the
//! module from the cached disk text with the open buffers laid over it.
//!
//! Every lookup by path is a hash-map look-up (README, "Limits of the
//! server"): the editor's file watcher may report thousands of files.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use lsp_types::{Position, Range, Uri};
use vox_codegen::ide::Index;
use vox_codegen::{Checked, FileId, SourceFile, SourceMap, Span};

use super::position::{Encoding, LineIndex, Lines};

use crate::context::Context;
use crate::source_write::Roots;

/// The most `.vox` files checked together for a file outside any package
/// (README, "Limits of the server"): its directory's own, in name order.
pub const MAX_DIR_FILES: usize = 256;

/// The largest open buffer checked, as for files on disk: 8 MiB.
pub const MAX_BUFFER_BYTES: u64 = vox_build::layout::MAX_SOURCE_BYTES;

/// The result of checking one module: the checked module, its index, and
/// the path of each of its files (indexed by [`FileId`]).
pub struct Analysis {
    pub checked: Checked,
    pub index: Index,
    pub paths: Vec<PathBuf>,
    /// Line table of each file (indexed by [`FileId`]).
    pub lines: Vec<Lines>,
    /// The URI each file is named by: the one the editor opened it by,
    /// else its path's (indexed by [`FileId`]).
    pub uris: Vec<Option<Uri>>,
    ids: HashMap<PathBuf, FileId>,
    /// Where the editor may be asked to write (as `cargo vox fmt` may).
    pub roots: Roots,
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
        self.ids.get(path).copied()
    }

    /// The URI to give the editor for `file`.
    pub fn uri(&self, file: FileId) -> Option<Uri> {
        self.uris.get(file.0 as usize).cloned().flatten()
    }

    pub fn path(&self, file: FileId) -> Option<&Path> {
        self.paths.get(file.0 as usize).map(PathBuf::as_path)
    }
}

/// The editor's buffers, keyed by the module file they stand for.
#[derive(Default)]
pub struct Buffers {
    pub text: HashMap<PathBuf, String>,
    /// Open buffers over [`MAX_BUFFER_BYTES`]: their length. Checked as
    /// empty, with one diagnostic saying why.
    pub too_large: HashMap<PathBuf, u64>,
    /// The URI each open file was opened by (a symlink's, say).
    pub opened_as: HashMap<PathBuf, Uri>,
}

impl Buffers {
    pub fn is_open(&self, path: &Path) -> bool {
        self.text.contains_key(path) || self.too_large.contains_key(path)
    }

    /// Sets the buffer of `path` to `text`, or records it as too large.
    /// `Some(len)` when it is over the limit.
    pub fn set(&mut self, path: &Path, text: String) -> Option<u64> {
        let len = text.len() as u64;
        if len > MAX_BUFFER_BYTES {
            self.text.remove(path);
            self.too_large.insert(path.to_path_buf(), len);
            return Some(len);
        }
        self.too_large.remove(path);
        self.text.insert(path.to_path_buf(), text);
        None
    }

    pub fn close(&mut self, path: &Path) {
        self.text.remove(path);
        self.too_large.remove(path);
        self.opened_as.remove(path);
    }
}

/// One Vox module: its files, their text on disk as first read, and its
/// latest analysis.
pub struct Module {
    pub files: BTreeSet<PathBuf>,
    /// Disk text of each file not open in the editor, read once.
    disk: HashMap<PathBuf, Vec<u8>>,
    pub analysis: Option<Analysis>,
    /// Set by each edit; the module is re-checked once the edits pause
    /// for [`super::DEBOUNCE`] after the last one.
    pub dirty_since: Option<Instant>,
    /// Files diagnostics were last published for (to clear them).
    pub published: Vec<PathBuf>,
    roots: Roots,
    /// For a directory's module: the most files it takes.
    limit: Option<usize>,
}

impl Module {
    fn new(roots: Roots, limit: Option<usize>) -> Module {
        Module {
            files: BTreeSet::new(),
            disk: HashMap::new(),
            analysis: None,
            dirty_since: None,
            published: Vec::new(),
            roots,
            limit,
        }
    }

    /// Re-checks the module from the open buffers and the cached disk text.
    pub fn recheck(&mut self, open: &Buffers) {
        let mut sources = SourceMap::new();
        let mut paths = Vec::with_capacity(self.files.len());
        for path in &self.files {
            let name = crate::sources::display_path(path);
            let file = if let Some(text) = open.text.get(path) {
                SourceFile::new(name, text.as_str())
            } else if open.too_large.contains_key(path) {
                SourceFile::new(name, "")
            } else {
                let bytes = self.disk.entry(path.clone()).or_insert_with(|| {
                    // An unreadable file is checked as empty; `cargo vox
                    // check` reports why it cannot be read.
                    vox_build::layout::read_source(path).unwrap_or_default()
                });
                SourceFile::from_bytes(name, bytes)
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
        let uris = paths
            .iter()
            .map(|p| {
                open.opened_as
                    .get(p)
                    .cloned()
                    .or_else(|| super::position::path_to_uri(p))
            })
            .collect();
        let ids = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), FileId(i as u32)))
            .collect();
        let old = self.analysis.replace(Analysis {
            checked,
            index,
            paths,
            lines,
            uris,
            ids,
            roots: self.roots.clone(),
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

    /// Marks the module for a re-check once edits pause.
    pub fn touch(&mut self) {
        self.dirty_since = Some(Instant::now());
    }
}

/// The open buffers and the modules.
#[derive(Default)]
pub struct Store {
    pub open: Buffers,
    pub modules: Vec<Module>,
    /// Each module file by its path as listed and by its real path: its
    /// module and its path as listed.
    known: HashMap<PathBuf, (usize, PathBuf)>,
    /// Each listed file's real path (to forget both names at once).
    real: HashMap<PathBuf, PathBuf>,
    /// The directories holding module files (real paths): which module a
    /// new `.vox` file there joins.
    dirs: HashMap<PathBuf, usize>,
}

/// A module found for a file: its index, the file as the module lists it,
/// and a note for the editor when not all of the files were taken.
pub struct Found {
    pub module: usize,
    pub path: PathBuf,
    pub note: Option<String>,
}

impl Store {
    /// The module `path` belongs to, discovering (and reading) it on first use.
    pub fn module_for(&mut self, path: &Path, ctx: &Context) -> Found {
        if let Some((module, listed)) = self.known.get(path) {
            return Found {
                module: *module,
                path: listed.clone(),
                note: None,
            };
        }
        let found = discover(path, ctx);
        // A module already loaded that this discovery overlaps (a new file
        // of a known package): extend it rather than check files twice.
        let module = match found.files.iter().find_map(|f| self.known.get(f)) {
            Some((i, _)) => *i,
            None => {
                self.modules.push(Module::new(found.roots, found.limit));
                self.modules.len() - 1
            }
        };
        let mut listed = None;
        for f in found.files {
            let real = std::fs::canonicalize(&f).unwrap_or_else(|_| f.clone());
            if real == path {
                listed = Some(f.clone());
            }
            self.add_file(module, f, real);
        }
        let listed = match listed {
            Some(l) => l,
            None => {
                // Not yet saved, or not where discovery looks: itself.
                self.add_file(module, path.to_path_buf(), path.to_path_buf());
                path.to_path_buf()
            }
        };
        Found {
            module,
            path: listed,
            note: found.note,
        }
    }

    fn add_file(&mut self, module: usize, listed: PathBuf, real: PathBuf) {
        if self.known.contains_key(&listed) {
            return;
        }
        if let Some(dir) = listed.parent() {
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            self.dirs.entry(dir).or_insert(module);
        }
        self.known.insert(listed.clone(), (module, listed.clone()));
        self.known
            .entry(real.clone())
            .or_insert_with(|| (module, listed.clone()));
        self.real.insert(listed.clone(), real);
        self.modules[module].files.insert(listed);
    }

    fn remove_file(&mut self, module: usize, listed: &Path) {
        self.modules[module].files.remove(listed);
        self.modules[module].forget_disk(listed);
        self.known.remove(listed);
        if let Some(real) = self.real.remove(listed) {
            if self.known.get(&real).is_some_and(|(_, l)| l == listed) {
                self.known.remove(&real);
            }
        }
    }

    /// A file changed on disk (the editor's file watcher says so): its
    /// module forgets the cached text, drops it if it is gone and not
    /// open, takes in a new `.vox` file beside its files, and is re-checked
    /// once edits pause. A file that does not exist is not kept.
    pub fn disk_changed(&mut self, path: &Path, deleted: bool) {
        let exists = !deleted && std::fs::metadata(path).is_ok_and(|m| m.is_file());
        if let Some((i, listed)) = self.known.get(path).cloned() {
            self.modules[i].forget_disk(&listed);
            if !exists && !self.open.is_open(&listed) {
                self.remove_file(i, &listed);
            }
            self.modules[i].touch();
            return;
        }
        if !exists || !vox_build::layout::is_vox_file(path) {
            return;
        }
        let Some(&i) = path.parent().and_then(|d| self.dirs.get(d)) else {
            return;
        };
        let m = &self.modules[i];
        if m.limit.is_some_and(|l| m.files.len() >= l) {
            return;
        }
        self.add_file(i, path.to_path_buf(), path.to_path_buf());
        self.modules[i].touch();
    }

    /// The module holding `path` (by either of its names) and the file as
    /// the module lists it.
    pub fn find(&self, path: &Path) -> Option<(usize, PathBuf)> {
        self.known.get(path).cloned()
    }
}

/// What discovery found for a file.
struct Discovered {
    files: Vec<PathBuf>,
    roots: Roots,
    limit: Option<usize>,
    note: Option<String>,
}

/// The files of the module `path` belongs to: the Vox sources of the Cargo
/// package whose source directories hold it (as `cargo vox check` would
/// check them), else the `.vox` files directly in its directory (not in
/// subdirectories, at most [`MAX_DIR_FILES`] of them). The file itself is
/// always included, even if not yet saved.
fn discover(path: &Path, ctx: &Context) -> Discovered {
    if let Some((root, files)) = package_files(path, ctx) {
        return Discovered {
            files,
            roots: Roots::package(&root),
            limit: None,
            note: None,
        };
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let (files, left_out) = dir_files(dir, MAX_DIR_FILES);
    let note = (left_out > 0).then(|| {
        format!(
            "cargo vox lsp: {} is in no Cargo package, so it is checked with the `.vox` files \
             of its directory (not its subdirectories); that directory has {}, and only the \
             first {MAX_DIR_FILES} by name are checked with it",
            crate::sources::display_path(path),
            MAX_DIR_FILES + left_out,
        )
    });
    Discovered {
        files,
        roots: Roots::given(&[dir.to_path_buf()]),
        limit: Some(MAX_DIR_FILES + 1),
        note,
    }
}

/// The `.vox` files directly in `dir` (symlinks to files followed, to
/// directories not), at most `max` in name order, each file once; and how
/// many more there were.
fn dir_files(dir: &Path, max: usize) -> (Vec<PathBuf>, usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), 0);
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| vox_build::layout::is_vox_file(p))
        .collect();
    names.sort();
    let mut found = vox_build::layout::VoxFiles::new();
    let mut taken = 0;
    let mut left_out = 0;
    for p in names {
        // `metadata` only stats: a FIFO named `x.vox` is not opened here.
        if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
            continue;
        }
        if taken == max {
            left_out += 1;
            continue;
        }
        found.add_file(&p);
        taken += 1;
    }
    (found.into_sorted(), left_out)
}

/// The package root and Vox files of the package whose source directories
/// hold `path`.
fn package_files(path: &Path, ctx: &Context) -> Option<(PathBuf, Vec<PathBuf>)> {
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
        let root = pkg.manifest_path.parent()?.to_path_buf();
        Some((root, pkg.layout.vox_files().ok()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        let global = crate::context::GlobalArgs {
            json: false,
            manifest_path: None,
            package: None,
        };
        Context::new("lsp", &global)
    }

    /// 20,000 watcher events for files that do not exist, and a file that
    /// is created and then deleted: none of them stays in the module.
    #[test]
    fn watched_files_that_are_gone_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let a = root.join("a.vox");
        std::fs::write(&a, "fn f() {\n}\n").unwrap();
        let mut store = Store::default();
        let found = store.module_for(&a, &ctx());
        for n in 0..20_000 {
            store.disk_changed(&root.join(format!("gone{n}.vox")), n % 2 == 0);
        }
        assert_eq!(store.modules[found.module].files.len(), 1);
        let b = root.join("b.vox");
        std::fs::write(&b, "fn g() {\n}\n").unwrap();
        store.disk_changed(&b, false);
        assert_eq!(store.modules[found.module].files.len(), 2);
        assert!(store.find(&b).is_some());
        std::fs::remove_file(&b).unwrap();
        store.disk_changed(&b, true);
        assert_eq!(store.modules[found.module].files.len(), 1);
        assert!(store.find(&b).is_none());
        assert_eq!(store.known.len(), 1, "{:?}", store.known.keys());
    }
}
