//! Where a package's Vox sources live.
//!
//! One answer for everyone: `cargo vox check` (which reads the setting
//! through cargo_metadata) and the build script (which reads `Cargo.toml`
//! directly, since it must stay cheap) both end up calling
//! [`SourceLayout::new`] with the same `sources` list, and both collect files
//! with [`SourceLayout::vox_files`].

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::Metadata;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Source directories used when `[package.metadata.vox] sources` is absent.
pub const DEFAULT_SOURCE_DIRS: &[&str] = &["vox"];

/// Largest Vox source file that is read: 8 MiB (docs/language.md, "Source files").
pub const MAX_SOURCE_BYTES: u64 = 8 * 1024 * 1024;

/// Cap on directory depth when searching for `.vox` files (keeps the walk's
/// recursion bounded; loops are cut by [`VoxFiles`] remembering directories).
const MAX_DIR_DEPTH: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("`[package.metadata.vox] sources` must be a list of relative paths, found {0}")]
    InvalidSetting(String),
    #[error(
        "`[package.metadata.vox] sources` entry `{0}` must be a relative path inside the package"
    )]
    NotRelative(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A `.vox` path that is a FIFO, a device, a socket or a directory.
    #[error("cannot read {path}: not a regular file ({kind})")]
    NotRegular { path: PathBuf, kind: &'static str },
    /// A source file over [`MAX_SOURCE_BYTES`].
    #[error("cannot read {path}: {len} bytes, over the 8 MiB limit for a Vox source file")]
    TooLarge { path: PathBuf, len: u64 },
}

/// The Vox source directories of one package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLayout {
    /// Absolute (or caller-relative) package root.
    pub root: PathBuf,
    /// Directories relative to `root`, in setting order.
    pub dirs: Vec<String>,
}

impl SourceLayout {
    /// `setting` is the `sources` list from `[package.metadata.vox]`, if any.
    pub fn new(
        root: impl Into<PathBuf>,
        setting: Option<Vec<String>>,
    ) -> Result<SourceLayout, LayoutError> {
        let dirs = match setting {
            None => DEFAULT_SOURCE_DIRS.iter().map(|s| s.to_string()).collect(),
            Some(dirs) => {
                for d in &dirs {
                    let p = Path::new(d);
                    if d.is_empty()
                        || p.is_absolute()
                        || p.components()
                            .any(|c| matches!(c, std::path::Component::ParentDir))
                    {
                        return Err(LayoutError::NotRelative(d.clone()));
                    }
                }
                dirs
            }
        };
        Ok(SourceLayout {
            root: root.into(),
            dirs,
        })
    }

    /// The source directories as paths under the package root.
    pub fn dir_paths(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| self.root.join(d)).collect()
    }

    /// Every `.vox` file under the source directories, sorted, each once
    /// (see [`VoxFiles`]). A missing directory contributes nothing; an entry
    /// that is itself a `.vox` file is taken as it is.
    pub fn vox_files(&self) -> Result<Vec<PathBuf>, LayoutError> {
        let mut files = VoxFiles::new();
        for dir in self.dir_paths() {
            match std::fs::metadata(&dir) {
                Ok(meta) if meta.is_dir() => files.add_dir(&dir)?,
                Ok(_) if is_vox_file(&dir) => files.add_file(&dir),
                _ => {}
            }
        }
        Ok(files.into_sorted())
    }
}

pub fn is_vox_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "vox")
}

/// What a file or directory is, whatever path reached it: device and inode
/// on unix, the canonical path elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct FileId(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

#[cfg(unix)]
fn file_id(_path: &Path, meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt as _;
    Some(FileId((meta.dev(), meta.ino())))
}

#[cfg(not(unix))]
fn file_id(path: &Path, _meta: &Metadata) -> Option<FileId> {
    std::fs::canonicalize(path).ok().map(FileId)
}

/// The `.vox` files of one module, gathered from directories and single
/// paths. Each directory is walked once and each file listed once, however
/// many paths (symlinks, hard links, a directory given twice) lead to them:
/// a file keeps the first path found that is not itself a symlink, else the
/// first path found (directories are walked in sort order, paths taken in
/// the order given). Entries are only listed here, never opened;
/// [`read_source`] decides whether one can be read.
#[derive(Debug, Default)]
pub struct VoxFiles {
    dirs: HashSet<FileId>,
    /// Per file: the path kept and whether it is a symlink.
    files: BTreeMap<FileId, (bool, PathBuf)>,
    /// Paths whose target cannot be stat'ed (dangling symlink, loop,
    /// permissions): kept so that reading them reports why.
    unresolved: BTreeSet<PathBuf>,
}

impl VoxFiles {
    pub fn new() -> VoxFiles {
        VoxFiles::default()
    }

    /// Adds the `.vox` files under `dir`, recursively, following symlinks
    /// into directories not seen before.
    pub fn add_dir(&mut self, dir: &Path) -> Result<(), LayoutError> {
        let meta = std::fs::metadata(dir).map_err(|source| LayoutError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        self.collect(dir, &meta, 0)
    }

    /// Adds one file, whatever its name.
    pub fn add_file(&mut self, path: &Path) {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let meta = std::fs::metadata(path).ok();
        self.add_entry(path.to_path_buf(), link, meta.as_ref());
    }

    /// The files, sorted by path.
    pub fn into_sorted(self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.files.into_values().map(|(_, p)| p).collect();
        out.extend(self.unresolved);
        out.sort();
        out.dedup();
        out
    }

    /// `meta`: the entry's metadata (symlinks followed), `None` when it
    /// cannot be stat'ed.
    fn add_entry(&mut self, path: PathBuf, link: bool, meta: Option<&Metadata>) {
        let id = meta.and_then(|meta| file_id(&path, meta));
        let Some(id) = id else {
            self.unresolved.insert(path);
            return;
        };
        match self.files.get_mut(&id) {
            Some(kept) if kept.0 && !link => *kept = (link, path),
            Some(_) => {}
            None => {
                self.files.insert(id, (link, path));
            }
        }
    }

    fn collect(&mut self, dir: &Path, meta: &Metadata, depth: usize) -> Result<(), LayoutError> {
        if depth > MAX_DIR_DEPTH {
            return Ok(());
        }
        if let Some(id) = file_id(dir, meta) {
            if !self.dirs.insert(id) {
                return Ok(());
            }
        }
        // With the entry's own type (no stat on most platforms): whether it
        // is a symlink, and whether it could be a directory.
        let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = std::fs::read_dir(dir)
            .map_err(|source| LayoutError::Io {
                path: dir.to_path_buf(),
                source,
            })?
            .filter_map(|e| {
                let e = e.ok()?;
                Some((e.path(), e.file_type().ok()))
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, file_type) in entries {
            let link = file_type.is_some_and(|t| t.is_symlink());
            let maybe_dir = file_type.is_none_or(|t| t.is_dir() || t.is_symlink());
            let vox = is_vox_file(&path);
            if !vox && !maybe_dir {
                // Neither a directory nor a `.vox` file: not stat'ed at all.
                continue;
            }
            // `metadata` only stats (following symlinks): it never opens, so
            // a FIFO or device here cannot block. Each entry is stat'ed once.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => self.collect(&path, &meta, depth + 1)?,
                meta if vox => self.add_entry(path, link, meta.as_ref().ok()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Reads one Vox source file, for the build script and `cargo vox` alike.
///
/// Only a regular file of at most [`MAX_SOURCE_BYTES`] is read: a FIFO,
/// device, socket or directory is refused before it is opened (a FIFO would
/// block, `/dev/zero` never ends), the opened handle is checked again (the
/// path may have changed in between), it is opened non-blocking where the
/// platform allows, and never more than the cap plus one byte is read (a
/// file growing meanwhile).
pub fn read_source(path: &Path) -> Result<Vec<u8>, LayoutError> {
    let io = |source| LayoutError::Io {
        path: path.to_path_buf(),
        source,
    };
    let before = std::fs::metadata(path).map_err(io)?;
    require_readable(path, &before)?;
    let file = open_nonblocking(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    require_readable(path, &meta)?;
    // Bounded by MAX_SOURCE_BYTES (checked just above), so this fits in memory.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let len = bytes.len() as u64;
    if len > MAX_SOURCE_BYTES {
        return Err(LayoutError::TooLarge {
            path: path.to_path_buf(),
            len: len.max(meta.len()),
        });
    }
    Ok(bytes)
}

fn require_readable(path: &Path, meta: &Metadata) -> Result<(), LayoutError> {
    if !meta.is_file() {
        return Err(LayoutError::NotRegular {
            path: path.to_path_buf(),
            kind: file_kind(meta),
        });
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(LayoutError::TooLarge {
            path: path.to_path_buf(),
            len: meta.len(),
        });
    }
    Ok(())
}

fn file_kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// `O_NONBLOCK` where its value is known without libc (vox-build stays
/// std-only): the BSDs' and Apple's, and Linux's on the architectures that
/// use the generic value. Elsewhere it is 0 and the stat before opening is
/// the only guard.
#[cfg(unix)]
const O_NONBLOCK: i32 = if cfg!(any(
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
)) {
    0x4
} else if cfg!(all(
    any(target_os = "linux", target_os = "android"),
    any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "arm",
        target_arch = "aarch64",
        target_arch = "riscv32",
        target_arch = "riscv64",
        target_arch = "powerpc",
        target_arch = "powerpc64",
        target_arch = "s390x",
        target_arch = "loongarch64"
    )
)) {
    0o4000
} else {
    0
};

/// Opens `path` for reading without waiting for a writer should it have
/// become a FIFO since it was stat'ed. (On a regular file the flag changes nothing.)
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.custom_flags(O_NONBLOCK);
    }
    opts.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_configured_dirs() {
        let l = SourceLayout::new("/pkg", None).unwrap();
        assert_eq!(l.dirs, vec!["vox"]);
        let l = SourceLayout::new("/pkg", Some(vec!["a".into(), "b/c".into()])).unwrap();
        assert_eq!(
            l.dir_paths(),
            vec![PathBuf::from("/pkg/a"), PathBuf::from("/pkg/b/c")]
        );
        assert!(SourceLayout::new("/pkg", Some(vec!["../x".into()])).is_err());
        assert!(SourceLayout::new("/pkg", Some(vec!["/abs".into()])).is_err());
    }
}
