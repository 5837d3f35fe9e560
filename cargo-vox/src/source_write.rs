//! How `cargo vox fmt` and `cargo vox fix` rewrite a user's source file
//! (README, "Security notes", "What `fmt` and `fix` write").
//!
//! Writing happens in two steps, so that a command writes nothing unless
//! every file it would change may be written:
//!
//! 1. [`plan`] decides whether a file may be rewritten at all: its real
//!    location (every symlink in its path followed) must lie inside one of
//!    the command's [`Roots`] — the package, or the directories named on
//!    the command line — and it must be a regular file the user can write
//!    and has not marked read-only.
//! 2. [`Planned::write`] writes the new text to a new temporary file next to
//!    the real file, created with the file's permissions from the start and
//!    given its owner and group where the system allows, then compares the
//!    file with what was read and replaces it only if nobody changed it in
//!    the meantime.

use std::fmt;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// How [`Roots::given`] names itself in messages.
const GIVEN: &str = "the directories of the paths given";

/// The directories a command may write in, canonical.
#[derive(Debug, Clone)]
pub struct Roots {
    dirs: Vec<PathBuf>,
    /// What the roots are, for messages: "the package", or [`GIVEN`].
    what: &'static str,
}

impl Roots {
    /// The package directory (the one holding its `Cargo.toml`).
    pub fn package(root: &Path) -> Roots {
        Roots {
            dirs: vec![canonical_or_self(root)],
            what: "the package",
        }
    }

    /// For paths given on the command line: each directory given, and for
    /// a file given, the directory it is named in (so `cargo vox fmt
    /// vox/*.vox` does not follow a symlink among them out of `vox/`).
    pub fn given(paths: &[PathBuf]) -> Roots {
        let dirs = paths
            .iter()
            .map(|p| {
                if std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
                    canonical_or_self(p)
                } else {
                    let parent = p
                        .parent()
                        .filter(|d| !d.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    canonical_or_self(parent)
                }
            })
            .collect();
        Roots { dirs, what: GIVEN }
    }

    /// Every directory of `all` (a workspace run: each selected package).
    pub fn union<'a>(all: impl IntoIterator<Item = &'a Roots>) -> Roots {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut what = GIVEN;
        let mut packages = 0;
        for r in all {
            if r.what != GIVEN {
                packages += 1;
                what = if packages == 1 {
                    "the package"
                } else {
                    "the selected packages"
                };
            }
            dirs.extend(r.dirs.iter().cloned());
        }
        Roots { dirs, what }
    }

    fn contain(&self, real: &Path) -> bool {
        self.dirs.iter().any(|d| real.starts_with(d))
    }
}

fn canonical_or_self(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Why a file was not rewritten. Each message names the file as the user
/// gave or found it and says what to do.
#[derive(Debug)]
pub enum WriteError {
    /// The file's real location is outside the command's roots.
    Outside {
        shown: String,
        real: PathBuf,
        roots: &'static str,
    },
    /// The file has no write permission bit set (say mode 0444).
    ReadOnly { shown: String, mode: Option<u32> },
    /// The user may not write the file (another user's, a read-only file system).
    NotWritable {
        shown: String,
        source: std::io::Error,
    },
    /// The file now holds something other than what was read.
    Changed { shown: String, what: &'static str },
    /// Reading, creating, writing or renaming failed.
    Io {
        shown: String,
        doing: &'static str,
        source: std::io::Error,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Outside { shown, real, roots } => write!(
                f,
                "{shown} leads outside {roots}, to {}: not rewritten (fmt and fix write only \
                 inside {roots}); format that file by its own path, or replace the symlink \
                 with a copy",
                real.display()
            ),
            WriteError::ReadOnly { shown, mode } => {
                write!(f, "{shown} is read-only")?;
                if let Some(mode) = mode {
                    write!(f, " (mode {mode:04o})")?;
                }
                write!(
                    f,
                    ": not rewritten; make it writable (`chmod u+w`) to let fmt and fix change it"
                )
            }
            WriteError::NotWritable { shown, source } => {
                write!(f, "cannot write {shown} ({source}): not rewritten")
            }
            WriteError::Changed { shown, what } => write!(
                f,
                "{shown} changed while it was being rewritten ({what}): left as it is now, \
                 nothing of the change was lost; run the command again"
            ),
            WriteError::Io {
                shown,
                doing,
                source,
            } => write!(f, "cannot rewrite {shown}: {doing}: {source}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// A file that may be rewritten: where it really is and what it was like
/// when planned.
#[derive(Debug)]
pub struct Planned {
    shown: String,
    real: PathBuf,
    meta: std::fs::Metadata,
}

/// Decides whether `path` (shown to the user as `shown`) may be rewritten
/// under `roots`.
pub fn plan(path: &Path, shown: &str, roots: &Roots) -> Result<Planned, WriteError> {
    let io = |doing, source| WriteError::Io {
        shown: shown.to_string(),
        doing,
        source,
    };
    let real = std::fs::canonicalize(path).map_err(|e| io("resolving its path", e))?;
    if !roots.contain(&real) {
        return Err(WriteError::Outside {
            shown: shown.to_string(),
            real,
            roots: roots.what,
        });
    }
    let meta = std::fs::metadata(&real).map_err(|e| io("reading its metadata", e))?;
    if !meta.is_file() {
        return Err(io(
            "checking it",
            std::io::Error::other("not a regular file"),
        ));
    }
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly {
            shown: shown.to_string(),
            mode: mode_of(&meta),
        });
    }
    if let Err(source) = may_write(&real) {
        return Err(WriteError::NotWritable {
            shown: shown.to_string(),
            source,
        });
    }
    Ok(Planned {
        shown: shown.to_string(),
        real,
        meta,
    })
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt as _;
    Some(meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

/// Whether this process may write `path`, by the same rules as opening it
/// for writing (without opening it, which file watchers would see as a write).
#[cfg(unix)]
fn may_write(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call;
    // faccessat only reads it.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn may_write(_path: &Path) -> std::io::Result<()> {
    // The read-only attribute is checked by the caller; the rename reports the rest.
    Ok(())
}

/// How many temporary names [`Planned::write`] tries before giving up.
const TEMP_ATTEMPTS: usize = 64;

impl Planned {
    /// Where the file really is (every symlink followed).
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Replaces the file's content with `new`, provided it still holds
    /// `original` (what was read and transformed) and still has the
    /// permissions, owner and group it had when planned. `before_compare`
    /// runs after the new text is written to the temporary file and before
    /// the comparison (tests use it to change the file at that moment).
    pub fn write(
        &self,
        original: &[u8],
        new: &[u8],
        before_compare: &mut dyn FnMut(),
    ) -> Result<(), WriteError> {
        let dir = self.real.parent().unwrap_or(Path::new("."));
        let file_name = self
            .real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (mut file, tmp) = self.create_temp(dir, &file_name)?;
        let result = (|| {
            file.write_all(new)
                .map_err(|e| self.io("writing a temporary file", e))?;
            self.copy_owner_and_mode(&file)?;
            file.sync_all()
                .map_err(|e| self.io("writing a temporary file", e))?;
            drop(file);
            before_compare();
            self.unchanged(original)?;
            std::fs::rename(&tmp, &self.real)
                .map_err(|e| self.io("renaming the new file into place", e))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    fn io(&self, doing: &'static str, source: std::io::Error) -> WriteError {
        WriteError::Io {
            shown: self.shown.clone(),
            doing,
            source,
        }
    }

    /// A new, exclusively created temporary file next to the real file
    /// (never an existing file or symlink), with the file's permissions
    /// from the start (the umask can only narrow them; they are set exactly
    /// later), so no one else can open it in between.
    fn create_temp(
        &self,
        dir: &Path,
        file_name: &str,
    ) -> Result<(std::fs::File, PathBuf), WriteError> {
        for _ in 0..TEMP_ATTEMPTS {
            let tmp = dir.join(format!(".{file_name}.{}.tmp", unpredictable_hex()));
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                options.mode(mode_of(&self.meta).unwrap_or(0o600) & 0o777);
            }
            match options.open(&tmp) {
                Ok(file) => return Ok((file, tmp)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(self.io("creating a temporary file next to it", e)),
            }
        }
        Err(self.io(
            "creating a temporary file next to it",
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "no free temporary file name",
            ),
        ))
    }

    /// Gives the temporary file the real file's owner and group where the
    /// system allows (root: always; others: a group they are in), then its
    /// exact permissions (after the owner, which clears set-id bits).
    #[cfg(unix)]
    fn copy_owner_and_mode(&self, file: &std::fs::File) -> Result<(), WriteError> {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let (uid, gid) = (self.meta.uid(), self.meta.gid());
        let now = file
            .metadata()
            .map_err(|e| self.io("reading the temporary file's metadata", e))?;
        if (now.uid(), now.gid()) != (uid, gid)
            && std::os::unix::fs::fchown(file, Some(uid), Some(gid)).is_err()
            && now.gid() != gid
        {
            // Not allowed to give the file away: keep at least the group.
            let _ = std::os::unix::fs::fchown(file, None, Some(gid));
        }
        let mode = self.meta.permissions().mode() & 0o7777;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| self.io("setting the temporary file's permissions", e))
    }

    #[cfg(not(unix))]
    fn copy_owner_and_mode(&self, file: &std::fs::File) -> Result<(), WriteError> {
        file.set_permissions(self.meta.permissions())
            .map_err(|e| self.io("setting the temporary file's permissions", e))
    }

    /// The file at the real path is still the one planned, with the
    /// content that was read.
    fn unchanged(&self, original: &[u8]) -> Result<(), WriteError> {
        let changed = |what| WriteError::Changed {
            shown: self.shown.clone(),
            what,
        };
        match std::fs::canonicalize(&self.real) {
            Ok(p) if p == self.real => {}
            _ => return Err(changed("its path now leads elsewhere")),
        }
        let now = std::fs::metadata(&self.real).map_err(|_| changed("it was removed"))?;
        if !now.is_file() {
            return Err(changed("it is no longer a regular file"));
        }
        if now.permissions() != self.meta.permissions() {
            return Err(changed("its permissions changed"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            if (now.uid(), now.gid()) != (self.meta.uid(), self.meta.gid()) {
                return Err(changed("its owner changed"));
            }
        }
        if now.len() != original.len() as u64 {
            return Err(changed("its content changed"));
        }
        let mut current = Vec::with_capacity(original.len());
        std::fs::File::open(&self.real)
            .and_then(|f| f.take(original.len() as u64 + 1).read_to_end(&mut current))
            .map_err(|e| self.io("reading it again before replacing it", e))?;
        if current != original {
            return Err(changed("its content changed"));
        }
        Ok(())
    }
}

/// 16 hex digits no one can guess: std's randomly keyed hasher over the
/// process id, a counter and the time (as vox-build names its temporary files).
fn unpredictable_hex() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:016x}", h.finish())
}

/// The hook `fmt` and `fix` pass to [`Planned::write`]. In debug builds
/// only (the ones the end-to-end tests run), `VOX_DEBUG_PAUSE_BEFORE_REPLACE=DIR`
/// makes each write create `DIR/paused` and wait (at most 30 s) until
/// `DIR/resume` exists, so a test can save the file at exactly that moment.
/// Release builds ignore the variable.
pub fn before_compare_hook() -> impl FnMut() {
    move || {
        #[cfg(debug_assertions)]
        if let Some(dir) = std::env::var_os("VOX_DEBUG_PAUSE_BEFORE_REPLACE") {
            let dir = PathBuf::from(dir);
            let _ = std::fs::write(dir.join("paused"), b"");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !dir.join("resume").exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let _ = std::fs::remove_file(dir.join("resume"));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt as _, PermissionsExt as _};

    const OLD: &str = "fn g()  {\n}\n";
    const NEW: &str = "fn g() {\n}\n";

    /// `pkg/` (the root, with `pkg/vox/a.vox`) and `other/` beside it.
    fn tree() -> (tempfile::TempDir, PathBuf, Roots) {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("pkg");
        std::fs::create_dir_all(pkg.join("vox")).unwrap();
        std::fs::create_dir_all(tmp.path().join("other/vox")).unwrap();
        std::fs::write(pkg.join("vox/a.vox"), OLD).unwrap();
        std::fs::write(tmp.path().join("other/vox/x.vox"), OLD).unwrap();
        let roots = Roots::package(&pkg);
        (tmp, pkg, roots)
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    fn write(p: &Planned) -> Result<(), WriteError> {
        p.write(OLD.as_bytes(), NEW.as_bytes(), &mut || {})
    }

    #[test]
    fn a_file_inside_the_root_is_rewritten() {
        let (_tmp, pkg, roots) = tree();
        let a = pkg.join("vox/a.vox");
        write(&plan(&a, "vox/a.vox", &roots).unwrap()).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), NEW);
        assert!(leftovers(&pkg.join("vox")).is_empty());
    }

    #[test]
    fn every_way_out_of_the_root_is_refused() {
        let (tmp, pkg, roots) = tree();
        let vox = pkg.join("vox");
        // A symlinked file, a symlinked directory on the path, `..` after a
        // symlinked directory (resolved physically, not lexically), an
        // absolute symlink, and a chain of links that leaves and comes back
        // through a link outside.
        symlink("../../other/vox/x.vox", vox.join("linked.vox")).unwrap();
        symlink("../../other/vox", vox.join("shared")).unwrap();
        std::fs::create_dir_all(tmp.path().join("other/deep/er")).unwrap();
        symlink(tmp.path().join("other/deep/er"), vox.join("deep")).unwrap();
        symlink(tmp.path().join("other/vox/x.vox"), vox.join("abs.vox")).unwrap();
        symlink("linked.vox", vox.join("chain.vox")).unwrap();
        let cases = [
            vox.join("linked.vox"),
            vox.join("shared/x.vox"),
            vox.join("deep/../../vox/x.vox"),
            vox.join("abs.vox"),
            vox.join("chain.vox"),
        ];
        for path in &cases {
            match plan(path, "shown.vox", &roots) {
                Err(WriteError::Outside { real, .. }) => {
                    assert_eq!(
                        real,
                        tmp.path().join("other/vox/x.vox").canonicalize().unwrap()
                    )
                }
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("other/vox/x.vox")).unwrap(),
            OLD
        );
        let message = plan(&cases[0], "vox/linked.vox", &roots)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("vox/linked.vox leads outside the package, to /")
                && message.contains("other/vox/x.vox: not rewritten"),
            "{message}"
        );
    }

    #[test]
    fn symlinks_that_stay_inside_are_written_through() {
        let (_tmp, pkg, roots) = tree();
        symlink("a.vox", pkg.join("vox/b.vox")).unwrap();
        let p = plan(&pkg.join("vox/b.vox"), "vox/b.vox", &roots).unwrap();
        write(&p).unwrap();
        assert!(std::fs::symlink_metadata(pkg.join("vox/b.vox"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(pkg.join("vox/a.vox")).unwrap(), NEW);
    }

    #[test]
    fn a_file_given_by_name_may_be_written_where_it_is_named() {
        let (tmp, pkg, _) = tree();
        let x = tmp.path().join("other/vox/x.vox");
        // Named through a `..` path: its directory is the root.
        let named = pkg.join("../other/vox/x.vox");
        let roots = Roots::given(std::slice::from_ref(&named));
        write(&plan(&named, "x.vox", &roots).unwrap()).unwrap();
        assert_eq!(std::fs::read_to_string(&x).unwrap(), NEW);
        // A symlink named in `vox/` leads out of `vox/`.
        symlink("../../other/vox/x.vox", pkg.join("vox/linked.vox")).unwrap();
        let link = pkg.join("vox/linked.vox");
        let roots = Roots::given(std::slice::from_ref(&link));
        assert!(matches!(
            plan(&link, "vox/linked.vox", &roots),
            Err(WriteError::Outside { .. })
        ));
    }

    #[test]
    fn a_read_only_file_is_refused() {
        let (_tmp, pkg, roots) = tree();
        let a = pkg.join("vox/a.vox");
        for m in [0o444, 0o400, 0o555] {
            std::fs::set_permissions(&a, std::fs::Permissions::from_mode(m)).unwrap();
            match plan(&a, "vox/a.vox", &roots) {
                Err(e @ WriteError::ReadOnly { .. }) => {
                    assert!(e.to_string().contains(&format!("(mode {m:04o})")), "{e}")
                }
                other => panic!("{m:o}: {other:?}"),
            }
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), OLD);
    }

    #[test]
    fn the_temporary_file_has_the_files_mode_from_its_creation() {
        let (_tmp, pkg, roots) = tree();
        let a = pkg.join("vox/a.vox");
        for m in [0o600, 0o640, 0o644, 0o660] {
            std::fs::set_permissions(&a, std::fs::Permissions::from_mode(m)).unwrap();
            let p = plan(&a, "vox/a.vox", &roots).unwrap();
            let (file, tmp) = p.create_temp(&pkg.join("vox"), "a.vox").unwrap();
            // Never wider than the file's (the umask may narrow it until the write sets it).
            let at_creation = file.metadata().unwrap().permissions().mode() & 0o777;
            drop(file);
            std::fs::remove_file(tmp).unwrap();
            assert_eq!(at_creation & !m, 0, "{m:o}: created {at_creation:o}");
            // Seen by a writer racing the rename: exactly the file's mode.
            let mut seen = Vec::new();
            p.write(OLD.as_bytes(), NEW.as_bytes(), &mut || {
                for n in leftovers(&pkg.join("vox")) {
                    seen.push(mode(&pkg.join("vox").join(n)));
                }
            })
            .unwrap();
            assert_eq!(seen, [m]);
            assert_eq!(mode(&a), m);
            std::fs::write(&a, OLD).unwrap();
        }
    }

    #[test]
    fn owner_and_group_are_kept_when_root_rewrites_a_users_file() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: giving a file to another owner needs root");
            return;
        }
        let (_tmp, pkg, roots) = tree();
        let a = pkg.join("vox/a.vox");
        std::os::unix::fs::chown(&a, Some(4242), Some(4343)).unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&plan(&a, "vox/a.vox", &roots).unwrap()).unwrap();
        let meta = std::fs::metadata(&a).unwrap();
        assert_eq!((meta.uid(), meta.gid(), mode(&a)), (4242, 4343, 0o640));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), NEW);
    }

    #[test]
    fn a_file_the_user_may_not_write_is_refused_when_not_root() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            eprintln!("skipped: root may write any file");
            return;
        }
        let (_tmp, pkg, roots) = tree();
        let a = pkg.join("vox/a.vox");
        // Writable by its group but not by its owner (us): not read-only,
        // yet the kernel would refuse to open it for writing.
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o464)).unwrap();
        assert!(matches!(
            plan(&a, "vox/a.vox", &roots),
            Err(WriteError::NotWritable { .. })
        ));
    }

    /// Each way an editor saves while the new text is being written: in
    /// place, by renaming a new file over it, by changing its mode; the
    /// edit survives, nothing is replaced and no temporary file is left.
    #[test]
    fn an_edit_saved_before_the_rename_is_kept() {
        type Edit = fn(&Path);
        let edits: [(&str, Edit); 5] = [
            ("in place", |a| {
                std::fs::write(a, "fn mine() {\n}\n").unwrap()
            }),
            ("same length", |a| {
                std::fs::write(a, "fn h()  {\n}\n").unwrap()
            }),
            ("renamed over", |a| {
                let t = a.with_extension("swp");
                std::fs::write(&t, "fn mine() {\n}\n").unwrap();
                std::fs::rename(t, a).unwrap();
            }),
            ("chmod", |a| {
                std::fs::set_permissions(a, std::fs::Permissions::from_mode(0o600)).unwrap()
            }),
            ("removed", |a| std::fs::remove_file(a).unwrap()),
        ];
        for (what, edit) in edits {
            let (_tmp, pkg, roots) = tree();
            let a = pkg.join("vox/a.vox");
            let p = plan(&a, "vox/a.vox", &roots).unwrap();
            let before = std::fs::read(&a).ok();
            let result = p.write(OLD.as_bytes(), NEW.as_bytes(), &mut || edit(&a));
            let e = result.expect_err(what);
            assert!(matches!(e, WriteError::Changed { .. }), "{what}: {e:?}");
            assert!(
                e.to_string()
                    .starts_with("vox/a.vox changed while it was being rewritten"),
                "{e}"
            );
            let after = std::fs::read(&a).ok();
            assert_ne!(after.as_deref(), Some(NEW.as_bytes()), "{what}");
            if what == "chmod" {
                assert_eq!(after, before);
            }
            assert!(leftovers(&pkg.join("vox")).is_empty(), "{what}");
        }
    }
}
