//! Which Vox sources a command works on: the paths given on the command
//! line as one module, or each selected package's sources (`-p`, the
//! current directory, `--manifest-path`), and where `fmt` and `fix` may
//! write.

use std::path::PathBuf;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::source_write::Roots;
use crate::sources::display_path;
use crate::workspace;

/// One module to work on: all of its files.
pub struct ModuleInput {
    /// The package name; `None` for paths given on the command line.
    pub package: Option<String>,
    pub files: Vec<PathBuf>,
    /// Where `fmt` and `fix` may write: the package directory, or the paths given.
    pub roots: Roots,
}

/// The modules a command works on, and the label its envelope names them by.
pub struct Inputs {
    pub label: String,
    pub modules: Vec<ModuleInput>,
}

impl Inputs {
    /// Every file once, in module order.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = Vec::new();
        for m in &self.modules {
            for f in &m.files {
                if !files.contains(f) {
                    files.push(f.clone());
                }
            }
        }
        files
    }

    /// Where any of the modules may be written.
    pub fn roots(&self) -> Roots {
        Roots::union(self.modules.iter().map(|m| &m.roots))
    }
}

/// What a command that failed before reading its inputs names: the first
/// path given, else `Cargo.toml`.
pub fn label_for_paths(paths: &[PathBuf]) -> String {
    paths
        .first()
        .map_or_else(|| "Cargo.toml".to_string(), |p| display_path(p))
}

/// The modules to work on: `paths` as one module, or each selected
/// package's sources. A failure is named `failure_label` (see
/// [`label_for_paths`]; `schema` names its type).
pub fn resolve(ctx: &Context, paths: &[PathBuf], failure_label: &str) -> Result<Inputs> {
    resolve_unlabelled(ctx, paths).map_err(|e| e.labelled(failure_label))
}

fn resolve_unlabelled(ctx: &Context, paths: &[PathBuf]) -> Result<Inputs> {
    // A collection error as one message: it already names the path and the cause.
    let layout_error = |e: vox_build::LayoutError| Error::failure("", e.to_string());
    if !paths.is_empty() {
        // Each directory walked once and each file listed once, however
        // many of the paths lead to it; a path that exists but is not a
        // regular file is listed, and reading it reports why it is refused.
        let mut files = vox_build::layout::VoxFiles::new();
        for p in paths {
            match std::fs::metadata(p) {
                Ok(meta) if meta.is_dir() => files.add_dir(p).map_err(layout_error)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::usage(
                        "",
                        format!("no such file or directory: {}", p.display()),
                    ))
                }
                _ => files.add_file(p),
            }
        }
        return Ok(Inputs {
            label: label_for_paths(paths),
            modules: vec![ModuleInput {
                package: None,
                files: files.into_sorted(),
                roots: Roots::given(paths),
            }],
        });
    }
    let selection = workspace::selected_packages(ctx)?;
    let mut modules = Vec::new();
    for pkg in selection.packages {
        let files = pkg.layout.vox_files().map_err(layout_error)?;
        modules.push(ModuleInput {
            package: Some(pkg.name.clone()),
            files,
            roots: Roots::package(&pkg.layout.root),
        });
    }
    Ok(Inputs {
        label: display_path(&selection.manifest),
        modules,
    })
}
