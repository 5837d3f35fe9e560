//! The packages `cargo vox` works on, found through cargo_metadata.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use cargo_metadata::MetadataCommand;
use vox_build::SourceLayout;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::sources::display_path;

pub mod cache;

/// What a workspace error names (commands that name their inputs
/// otherwise relabel it, see [`Error::labelled`]).
const LABEL: &str = "Cargo.toml";

pub struct VoxPackage {
    pub name: String,
    pub manifest_path: PathBuf,
    pub layout: SourceLayout,
}

/// The packages a command works on, and the manifest that names them.
pub struct Selection {
    /// The one selected package's manifest, or the workspace root's.
    pub manifest: PathBuf,
    pub packages: Vec<VoxPackage>,
}

/// The package(s) selected by `-p`, the current directory, or the whole workspace.
pub fn selected_packages(ctx: &Context) -> Result<Selection> {
    let meta = metadata(ctx)?;
    let members: Vec<&cargo_metadata::Package> = meta.workspace_packages();
    let chosen: Vec<&cargo_metadata::Package> = if let Some(name) = &ctx.package {
        match members.iter().find(|p| p.name.as_str() == name.as_str()) {
            Some(p) => vec![*p],
            None => {
                let names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
                return Err(Error::usage(
                    LABEL,
                    format!(
                        "package `{name}` is not a member of this workspace (members: {})",
                        names.join(", ")
                    ),
                ));
            }
        }
    } else if let Some(root) = meta.root_package() {
        vec![root]
    } else {
        members
    };
    let manifest = match chosen.as_slice() {
        [one] => one.manifest_path.clone().into_std_path_buf(),
        _ => meta.workspace_root.join("Cargo.toml").into_std_path_buf(),
    };
    let packages = chosen
        .into_iter()
        .map(|p| {
            let root = p
                .manifest_path
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
                .unwrap_or_default();
            let setting = sources_setting(&p.metadata)
                .map_err(|m| Error::usage(LABEL, format!("package `{}`: {m}", p.name)))?;
            let layout = SourceLayout::new(root, setting)
                .map_err(|e| Error::usage(LABEL, format!("package `{}`: {e}", p.name)))?;
            Ok(VoxPackage {
                name: p.name.to_string(),
                manifest_path: p.manifest_path.as_std_path().to_path_buf(),
                layout,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Selection { manifest, packages })
}

/// The usage error of a `--manifest-path` that names no file, found
/// without running cargo.
pub fn check_manifest_path(ctx: &Context) -> Result<()> {
    match &ctx.manifest_path {
        Some(m) if !m.is_file() => Err(Error::usage(
            LABEL,
            format!("manifest path `{}` does not exist", m.display()),
        )),
        _ => Ok(()),
    }
}

fn metadata(ctx: &Context) -> Result<cargo_metadata::Metadata> {
    check_manifest_path(ctx)?;
    let mut cmd = MetadataCommand::new();
    cmd.no_deps();
    if let Some(m) = &ctx.manifest_path {
        cmd.manifest_path(m);
    }
    // cargo_metadata's error already names its cause; add which cargo it ran.
    cmd.exec().map_err(|e| {
        let cargo = crate::cargo::cargo_program();
        Error::failure(
            LABEL,
            format!(
                "cannot read the workspace (`{} metadata`): {e}",
                cargo.to_string_lossy()
            ),
        )
    })
}

/// What the build lane needs to know about the workspace.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Workspace {
    pub root: PathBuf,
    pub target_dir: PathBuf,
    /// The manifest the command works on, as shown to users.
    pub manifest_label: String,
    /// Every workspace member.
    pub members: Vec<Member>,
}

/// A workspace member, as the build lane needs it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// Cargo's package id (as in its JSON messages).
    pub id: String,
    pub name: String,
    pub manifest_path: PathBuf,
    /// It has a target whose doctests `cargo test` runs.
    pub doctests: bool,
    /// It compiles Vox in its build script (a build dependency on vox-build).
    pub vox: bool,
}

impl Member {
    /// The package root.
    pub fn dir(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new(""))
    }
}

impl Workspace {
    /// What is known without `cargo metadata`: the manifest as given, no
    /// members, and the same root [`PendingWorkspace`] falls back to. For
    /// reporting a command that was interrupted before the workspace could
    /// be read.
    pub fn unread(ctx: &Context) -> Workspace {
        let manifest = ctx
            .manifest_path
            .as_deref()
            .unwrap_or(Path::new("Cargo.toml"));
        let root = fallback_root();
        Workspace {
            target_dir: root.join("target"),
            root,
            manifest_label: display_path(manifest),
            members: Vec::new(),
        }
    }
}

pub fn workspace(ctx: &Context) -> Result<Workspace> {
    let meta = metadata(ctx)?;
    let manifest = match (&ctx.package, meta.root_package()) {
        (Some(name), _) => meta
            .workspace_packages()
            .into_iter()
            .find(|p| p.name.as_str() == name.as_str())
            .map(|p| p.manifest_path.clone().into_std_path_buf())
            .ok_or_else(|| {
                Error::usage(
                    LABEL,
                    format!("package `{name}` is not a member of this workspace"),
                )
            })?,
        (None, Some(root)) => root.manifest_path.clone().into_std_path_buf(),
        (None, None) => meta.workspace_root.join("Cargo.toml").into_std_path_buf(),
    };
    Ok(Workspace {
        root: meta.workspace_root.clone().into_std_path_buf(),
        target_dir: meta.target_directory.clone().into_std_path_buf(),
        manifest_label: display_path(&manifest),
        members: meta
            .workspace_packages()
            .into_iter()
            .map(|p| Member {
                id: p.id.repr.clone(),
                name: p.name.to_string(),
                manifest_path: p.manifest_path.clone().into_std_path_buf(),
                doctests: p.targets.iter().any(|t| t.doctest),
                vox: p.dependencies.iter().any(|d| {
                    d.name == "vox-build" && d.kind == cargo_metadata::DependencyKind::Build
                }),
            })
            .collect(),
    })
}

/// [`workspace`], read on a thread of its own: the build lane starts cargo
/// at once and needs the workspace only to read what the build produced,
/// so `cargo metadata` runs while cargo builds instead of before.
pub struct PendingWorkspace {
    /// The reading thread's answer, until it is taken into `result`.
    answer: Mutex<Option<Receiver<Result<Workspace>>>>,
    result: OnceLock<Result<Workspace>>,
    /// Where rustc's file names are rooted if the workspace cannot be read
    /// (the command then reports that error, not the build's diagnostics).
    fallback_root: PathBuf,
}

impl PendingWorkspace {
    pub fn start(ctx: &Context) -> PendingWorkspace {
        let ctx = ctx.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // The receiver may be gone (an interrupted command stops waiting).
            let _ = tx.send(workspace(&ctx));
        });
        PendingWorkspace {
            answer: Mutex::new(Some(rx)),
            result: OnceLock::new(),
            fallback_root: fallback_root(),
        }
    }

    /// The workspace, waiting for `cargo metadata` the first time.
    pub fn get(&self) -> &Result<Workspace> {
        self.result.get_or_init(|| {
            let rx = self
                .answer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match rx.map(|rx| rx.recv()) {
                Some(Ok(result)) => result,
                Some(Err(_)) | None => Err(unexpected()),
            }
        })
    }

    /// The workspace, once read.
    pub fn into_result(self) -> Result<Workspace> {
        self.get();
        self.result
            .into_inner()
            .unwrap_or_else(|| Err(unexpected()))
    }

    /// The workspace if `cargo metadata` answers within `wait`; `None` if it
    /// is still running (it may have started after a Ctrl-C that stopped the
    /// build, or be waiting on cargo's locks).
    pub fn within(self, wait: Duration) -> Option<Result<Workspace>> {
        if self.result.get().is_none() {
            let rx = self
                .answer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()?;
            let answer = match rx.recv_timeout(wait) {
                Ok(result) => result,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => Err(unexpected()),
            };
            let _ = self.result.set(answer);
        }
        self.result.into_inner()
    }

    /// The workspace root (for rustc's relative file names).
    pub fn root(&self) -> &Path {
        match self.get() {
            Ok(ws) => &ws.root,
            Err(_) => &self.fallback_root,
        }
    }
}

/// Where rustc's file names are rooted when the workspace cannot be read.
fn fallback_root() -> PathBuf {
    std::env::current_dir().unwrap_or_default()
}

fn unexpected() -> Error {
    Error::failure(LABEL, "reading the workspace failed unexpectedly")
}

/// `[package.metadata.vox] sources = [...]` from cargo's JSON view of the manifest.
pub fn sources_setting(
    metadata: &serde_json::Value,
) -> std::result::Result<Option<Vec<String>>, String> {
    let Some(sources) = metadata.get("vox").and_then(|v| v.get("sources")) else {
        return Ok(None);
    };
    let Some(list) = sources.as_array() else {
        return Err(format!(
            "`[package.metadata.vox] sources` must be a list of paths, found {sources}"
        ));
    };
    list.iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("`sources` entries must be strings, found {v}"))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_sources_setting() {
        let none = serde_json::json!(null);
        assert_eq!(sources_setting(&none), Ok(None));
        let v = serde_json::json!({"vox": {"sources": ["a", "b"]}});
        assert_eq!(sources_setting(&v), Ok(Some(vec!["a".into(), "b".into()])));
        let bad = serde_json::json!({"vox": {"sources": "a"}});
        assert!(sources_setting(&bad).is_err());
        let bad = serde_json::json!({"vox": {"sources": [1]}});
        assert!(sources_setting(&bad).is_err());
    }
}
