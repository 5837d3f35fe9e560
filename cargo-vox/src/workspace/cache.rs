//! The workspace as `cargo metadata` last read it, reused while nothing it
//! was read from has changed, so that a no-op `cargo vox build` (or `test`,
//! `run`) starts one cargo — the build — instead of two: `cargo metadata`
//! costs about as much CPU as a tenth of a no-op build (measured in
//! `benches/lane.rs`).
//!
//! An entry is kept per command line context (current directory,
//! `--manifest-path`, `-p`, cargo, the `CARGO_*` and `RUSTUP_TOOLCHAIN`
//! variables) with a stamp (modification time, size, inode) of everything
//! the answer depends on: cargo's configuration files from the current
//! directory up and in `CARGO_HOME`, `rust-toolchain` files, every
//! `Cargo.toml` from the starting directory up, and the workspace's own:
//! its root manifest, each member's manifest and `src` directory (a new
//! `lib.rs` brings doctests), and the directories the root manifest's
//! `members` globs list (a new member under a glob changes them). Any difference, a missing or
//! unreadable entry, or another version of this file's format, and the
//! workspace is read by `cargo metadata` as before. After the build, the
//! package ids cargo reported for the members' manifests must be the
//! cached ones, or the workspace is read again (see the build lane).
//!
//! Entries live in a private directory (`$VOX_WORKSPACE_CACHE`, else the
//! user cache directory's `vox/workspaces`); `VOX_WORKSPACE_CACHE=off`
//! turns the cache off. Nothing here is an error: a cache that cannot be
//! read or written is not used.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Workspace;
use crate::context::Context;

/// The format of an entry; another version is ignored.
const VERSION: u32 = 1;

/// Turns the cache off (`off`) or names its directory.
pub const CACHE_ENV: &str = "VOX_WORKSPACE_CACHE";

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: u32,
    /// The context the entry is for, in full (the file name is its hash).
    key: String,
    stamps: Vec<Stamp>,
    workspace: Workspace,
}

/// A file or directory as it was: `None` when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    path: PathBuf,
    state: Option<(u128, u64, u64)>,
}

impl Stamp {
    fn of(path: PathBuf) -> Stamp {
        let state = std::fs::metadata(&path).ok().map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            (modified, m.len(), inode(&m))
        });
        Stamp { path, state }
    }

    fn unchanged(&self) -> bool {
        Stamp::of(self.path.clone()) == *self
    }
}

#[cfg(unix)]
fn inode(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    m.ino()
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// Where entries live, or `None` when the cache is off.
fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_ENV).filter(|d| !d.is_empty()) {
        Some(v) if v == "off" => return None,
        Some(dir) => return Some(PathBuf::from(dir)),
        None => {}
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("vox").join("workspaces"))
}

/// Everything the context of a command line that `cargo metadata` reads
/// depends on, besides files.
fn key(ctx: &Context, cwd: &Path) -> String {
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| k.starts_with("CARGO_") || k == "RUSTUP_TOOLCHAIN" || k == "CARGO")
        .collect();
    env.sort();
    serde_json::json!({
        "cargo_vox": env!("CARGO_PKG_VERSION"),
        "cwd": cwd,
        "manifest_path": ctx.manifest_path,
        "package": ctx.package,
        "cargo": crate::cargo::cargo_program().to_string_lossy(),
        "env": env,
    })
    .to_string()
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!(
        "{:016x}.json",
        crate::lane::script::fnv(&[key.as_bytes()])
    ))
}

/// What is known before `cargo metadata` runs: configuration and
/// toolchain files from `cwd` up and in `CARGO_HOME`, and every
/// `Cargo.toml` from the starting directory up.
fn stamps_before(ctx: &Context, cwd: &Path) -> Vec<Stamp> {
    let mut paths = Vec::new();
    for dir in cwd.ancestors() {
        paths.push(dir.join(".cargo").join("config"));
        paths.push(dir.join(".cargo").join("config.toml"));
        paths.push(dir.join("rust-toolchain"));
        paths.push(dir.join("rust-toolchain.toml"));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home {
        paths.push(home.join("config"));
        paths.push(home.join("config.toml"));
    }
    let start = match &ctx.manifest_path {
        Some(m) => cwd.join(m).parent().map(Path::to_path_buf),
        None => Some(cwd.to_path_buf()),
    };
    if let Some(start) = start {
        for dir in start.ancestors() {
            paths.push(dir.join("Cargo.toml"));
        }
    }
    paths.into_iter().map(Stamp::of).collect()
}

/// What the answer itself says it depends on: the root, each member's
/// manifest and directories, and the directories of the `members` globs.
fn stamps_after(ws: &Workspace) -> Vec<Stamp> {
    // Not the directories themselves: the build writes `Cargo.lock` (and
    // maybe `target/`) there.
    let mut paths = vec![ws.root.join("Cargo.toml")];
    for m in &ws.members {
        paths.push(m.manifest_path.clone());
        paths.push(m.dir().join("src"));
    }
    paths.extend(glob_dirs(&ws.root));
    paths.sort();
    paths.dedup();
    paths.into_iter().map(Stamp::of).collect()
}

/// The directories a new member matched by the root manifest's `members`
/// or `exclude` globs would appear in: for each pattern, the directory
/// before its first glob character and the directories right inside it.
fn glob_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(manifest) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let Some(workspace) = manifest.get("workspace").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for list in ["members", "exclude", "default-members"] {
        let patterns = workspace.get(list).and_then(toml::Value::as_array);
        for pattern in patterns
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_str)
        {
            let Some(at) = pattern.find(['*', '?', '[']) else {
                continue;
            };
            let prefix = &pattern[..at];
            let prefix = prefix.rfind('/').map_or("", |i| &prefix[..i]);
            let dir = root.join(prefix);
            if let Ok(entries) = std::fs::read_dir(&dir) {
                dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
            }
            dirs.push(dir);
        }
    }
    dirs
}

/// The cached workspace for this context, if nothing it depends on changed.
///
/// Read only from a directory it would be written to (private to this
/// user, by the checks the script cache makes; a directory others could
/// write is neither read nor written), and only an entry with stamps: one
/// without could never go stale, so a planted one would stand for ever.
pub fn load(ctx: &Context) -> Option<Workspace> {
    let dir = crate::lane::script::private_dir(&cache_dir()?).ok()?;
    let cwd = std::env::current_dir().ok()?;
    let key = key(ctx, &cwd);
    let text = std::fs::read_to_string(entry_path(&dir, &key)).ok()?;
    let entry: Entry = serde_json::from_str(&text).ok()?;
    let fresh = entry.version == VERSION
        && entry.key == key
        && !entry.stamps.is_empty()
        && entry.stamps.iter().all(Stamp::unchanged);
    fresh.then_some(entry.workspace)
}

/// Stamps taken before `cargo metadata` runs, to be saved with its answer.
pub struct Pending {
    key: String,
    stamps: Vec<Stamp>,
}

/// Takes the stamps of what is known before `cargo metadata` runs.
pub fn before_reading(ctx: &Context) -> Option<Pending> {
    cache_dir()?;
    let cwd = std::env::current_dir().ok()?;
    Some(Pending {
        key: key(ctx, &cwd),
        stamps: stamps_before(ctx, &cwd),
    })
}

/// Saves the workspace `cargo metadata` read (after [`before_reading`]).
pub fn save(pending: Pending, ws: &Workspace) {
    let Some(dir) = cache_dir() else { return };
    let Ok(dir) = crate::lane::script::private_dir(&dir) else {
        return;
    };
    let mut stamps = pending.stamps;
    stamps.extend(stamps_after(ws));
    let entry = Entry {
        version: VERSION,
        key: pending.key,
        stamps,
        workspace: ws.clone(),
    };
    let Ok(text) = serde_json::to_string(&entry) else {
        return;
    };
    let _ = vox_build::write_if_changed(&entry_path(&dir, &entry.key), text.as_bytes());
}

/// Whether what cargo reported agrees with the cached members: every
/// artifact of a member's manifest has the member's package id.
pub fn agrees(ws: &Workspace, artifacts: &[(String, PathBuf)]) -> bool {
    artifacts.iter().all(|(id, manifest)| {
        ws.members
            .iter()
            .filter(|m| m.manifest_path == *manifest)
            .all(|m| m.id == *id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Member;

    fn member(dir: &Path, name: &str) -> Member {
        Member {
            id: format!("path+file://{}#{name}@0.1.0", dir.display()),
            name: name.into(),
            manifest_path: dir.join("Cargo.toml"),
            doctests: true,
            vox: false,
        }
    }

    fn workspace(root: &Path, members: Vec<Member>) -> Workspace {
        Workspace {
            root: root.to_path_buf(),
            target_dir: root.join("target"),
            manifest_label: "Cargo.toml".into(),
            members,
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn all_unchanged(stamps: &[Stamp]) -> bool {
        stamps.iter().all(Stamp::unchanged)
    }

    /// Each change that can change what `cargo metadata` answers breaks a stamp.
    #[test]
    fn stamps_see_what_changes_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        write(
            &root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n",
        );
        let a = root.join("crates/a");
        write(&a.join("Cargo.toml"), "[package]\nname = \"a\"\n");
        write(&a.join("src/main.rs"), "fn main() {}\n");
        let ws = workspace(&root, vec![member(&a, "a")]);
        let stamps = stamps_after(&ws);
        assert!(all_unchanged(&stamps));
        // A new member under the glob.
        std::fs::create_dir_all(root.join("crates/b")).unwrap();
        assert!(!all_unchanged(&stamps));
        let stamps = stamps_after(&ws);
        // A library appears (doctests).
        write(&a.join("src/lib.rs"), "");
        assert!(!all_unchanged(&stamps));
        let stamps = stamps_after(&ws);
        // The member's manifest is edited (a build dependency on vox-build).
        write(
            &a.join("Cargo.toml"),
            "[package]\nname = \"a\"\n[build-dependencies]\nvox-build = \"0\"\n",
        );
        assert!(!all_unchanged(&stamps));
        // A configuration file appears where cargo looks for one.
        let ctx = Context {
            command: "build",
            output: crate::context::OutputMode::Json,
            manifest_path: Some(a.join("Cargo.toml")),
            package: None,
            color: false,
        };
        let before = stamps_before(&ctx, &a);
        assert!(all_unchanged(&before));
        write(
            &root.join(".cargo/config.toml"),
            "[build]\ntarget-dir = \"t\"\n",
        );
        assert!(!all_unchanged(&before));
        // An ancestor becomes a workspace root.
        let before = stamps_before(&ctx, &a);
        write(&root.join("crates/Cargo.toml"), "[workspace]\n");
        assert!(!all_unchanged(&before));
    }

    #[test]
    fn entries_are_per_context_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = Context {
            command: "build",
            output: crate::context::OutputMode::Json,
            manifest_path: None,
            package: None,
            color: false,
        };
        let k = key(&ctx, dir.path());
        ctx.package = Some("p".into());
        assert_ne!(k, key(&ctx, dir.path()));
        ctx.package = None;
        ctx.manifest_path = Some("x/Cargo.toml".into());
        assert_ne!(k, key(&ctx, dir.path()));
        assert_ne!(
            k,
            key(
                &Context {
                    manifest_path: None,
                    ..ctx.clone()
                },
                &dir.path().join("sub")
            )
        );

        let ws = workspace(dir.path(), vec![member(dir.path(), "a")]);
        let entry = Entry {
            version: VERSION,
            key: k,
            stamps: vec![],
            workspace: ws.clone(),
        };
        let back: Entry = serde_json::from_str(&serde_json::to_string(&entry).unwrap()).unwrap();
        assert_eq!(back.workspace.root, ws.root);
        assert_eq!(back.workspace.members[0].id, ws.members[0].id);
    }

    #[test]
    fn cargo_must_report_the_cached_ids() {
        let dir = Path::new("/ws/a");
        let ws = workspace(Path::new("/ws"), vec![member(dir, "a")]);
        let id = ws.members[0].id.clone();
        let other = (
            "registry+https://x#serde@1.0.0".to_string(),
            PathBuf::from("/r/serde/Cargo.toml"),
        );
        assert!(agrees(&ws, &[(id, dir.join("Cargo.toml")), other.clone()]));
        assert!(!agrees(
            &ws,
            &[
                ("path+file:///ws/a#b@0.2.0".into(), dir.join("Cargo.toml")),
                other
            ]
        ));
    }
}
