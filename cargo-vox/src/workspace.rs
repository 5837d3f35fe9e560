//! The packages `cargo vox` works on, found through cargo_metadata.

use std::path::PathBuf;

use cargo_metadata::MetadataCommand;
use vox_build::SourceLayout;

use crate::cli::GlobalArgs;

pub struct VoxPackage {
    pub name: String,
    pub manifest_path: PathBuf,
    pub layout: SourceLayout,
}

pub enum WorkspaceError {
    Usage(String),
    Other(anyhow::Error),
}

/// The packages a command works on, and the manifest that names them.
pub struct Selection {
    /// The one selected package's manifest, or the workspace root's.
    pub manifest: PathBuf,
    pub packages: Vec<VoxPackage>,
}

/// The package(s) selected by `-p`, the current directory, or the whole workspace.
pub fn selected_packages(global: &GlobalArgs) -> Result<Selection, WorkspaceError> {
    let meta = metadata(global)?;
    let members: Vec<&cargo_metadata::Package> = meta.workspace_packages();
    let chosen: Vec<&cargo_metadata::Package> = if let Some(name) = &global.package {
        match members.iter().find(|p| p.name.as_str() == name.as_str()) {
            Some(p) => vec![*p],
            None => {
                let names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
                return Err(WorkspaceError::Usage(format!(
                    "package `{name}` is not a member of this workspace (members: {})",
                    names.join(", ")
                )));
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
                .map_err(|m| WorkspaceError::Usage(format!("package `{}`: {m}", p.name)))?;
            let layout = SourceLayout::new(root, setting)
                .map_err(|e| WorkspaceError::Usage(format!("package `{}`: {e}", p.name)))?;
            Ok(VoxPackage {
                name: p.name.to_string(),
                manifest_path: p.manifest_path.as_std_path().to_path_buf(),
                layout,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Selection { manifest, packages })
}

fn metadata(global: &GlobalArgs) -> Result<cargo_metadata::Metadata, WorkspaceError> {
    if let Some(m) = &global.manifest_path {
        if !m.is_file() {
            return Err(WorkspaceError::Usage(format!(
                "manifest path `{}` does not exist",
                m.display()
            )));
        }
    }
    let mut cmd = MetadataCommand::new();
    cmd.no_deps();
    if let Some(m) = &global.manifest_path {
        cmd.manifest_path(m);
    }
    // cargo_metadata's error already names its cause; add which cargo it ran.
    cmd.exec().map_err(|e| {
        let cargo = crate::lane::cargo_program();
        WorkspaceError::Other(anyhow::anyhow!(
            "cannot read the workspace (`{} metadata`): {e}",
            cargo.to_string_lossy()
        ))
    })
}

/// What the build lane needs to know about the workspace.
pub struct Workspace {
    pub root: PathBuf,
    pub target_dir: PathBuf,
    /// The manifest the command works on, as shown to users.
    pub manifest_label: String,
    /// Members that compile Vox in their build script: (name, package root).
    pub vox_packages: Vec<(String, PathBuf)>,
}

pub fn workspace(global: &GlobalArgs) -> Result<Workspace, WorkspaceError> {
    let meta = metadata(global)?;
    let manifest = match (&global.package, meta.root_package()) {
        (Some(name), _) => meta
            .workspace_packages()
            .into_iter()
            .find(|p| p.name.as_str() == name.as_str())
            .map(|p| p.manifest_path.clone().into_std_path_buf())
            .ok_or_else(|| {
                WorkspaceError::Usage(format!(
                    "package `{name}` is not a member of this workspace"
                ))
            })?,
        (None, Some(root)) => root.manifest_path.clone().into_std_path_buf(),
        (None, None) => meta.workspace_root.join("Cargo.toml").into_std_path_buf(),
    };
    let vox_packages = meta
        .workspace_packages()
        .into_iter()
        .filter(|p| {
            p.dependencies
                .iter()
                .any(|d| d.name == "vox-build" && d.kind == cargo_metadata::DependencyKind::Build)
        })
        .map(|p| {
            let dir = p
                .manifest_path
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
                .unwrap_or_default();
            (p.name.to_string(), dir)
        })
        .collect();
    Ok(Workspace {
        root: meta.workspace_root.clone().into_std_path_buf(),
        target_dir: meta.target_directory.clone().into_std_path_buf(),
        manifest_label: crate::check::display_path(&manifest),
        vox_packages,
    })
}

/// `[package.metadata.vox] sources = [...]` from cargo's JSON view of the manifest.
pub fn sources_setting(metadata: &serde_json::Value) -> Result<Option<Vec<String>>, String> {
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
        .collect::<Result<Vec<_>, _>>()
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
