//! Where a package's Vox sources live.
//!
//! One answer for everyone: `cargo vox check` (which reads the setting
//! through cargo_metadata) and the build script (which reads `Cargo.toml`
//! directly, since it must stay cheap) both end up calling
//! [`SourceLayout::new`] with the same `sources` list, and both collect files
//! with [`SourceLayout::vox_files`].

use std::path::{Path, PathBuf};

/// Source directories used when `[package.metadata.vox] sources` is absent.
pub const DEFAULT_SOURCE_DIRS: &[&str] = &["vox"];

/// Cap on directory depth when searching for `.vox` files (symlink loops).
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

    /// Every `.vox` file under the source directories, sorted, each once.
    /// A missing directory contributes nothing.
    pub fn vox_files(&self) -> Result<Vec<PathBuf>, LayoutError> {
        let mut files = Vec::new();
        for dir in self.dir_paths() {
            if dir.is_dir() {
                collect_vox_files(&dir, 0, &mut files)?;
            } else if dir.is_file() && is_vox_file(&dir) {
                files.push(dir);
            }
        }
        files.sort();
        files.dedup();
        Ok(files)
    }
}

pub fn is_vox_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "vox")
}

/// Appends the `.vox` files under `dir` (recursively) to `out`.
pub fn collect_vox_files(
    dir: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), LayoutError> {
    if depth > MAX_DIR_DEPTH {
        return Ok(());
    }
    let io = |source| LayoutError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_vox_files(&path, depth + 1, out)?;
        } else if is_vox_file(&path) {
            out.push(path);
        }
    }
    Ok(())
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
