//! The script lane: `cargo vox run FILE.vox` and `cargo vox test FILE.vox`.
//!
//! One `.vox` file with `fn main()` is compiled to a small cached crate
//! (one per script path, under the script cache) that depends on this
//! cargo-vox's vox-runtime, built with cargo, and run. A stamp records what
//! was built: an unchanged script runs its existing binary without invoking
//! cargo at all.
//!
//! The cache decides what program runs, so it is guarded:
//! - each script crate has its own package (and binary) name, so scripts
//!   sharing a target directory never overwrite each other's program;
//! - the stamp records the program and its hash, and only a program inside
//!   the target directory the script was built in, with that hash, is run;
//! - the cache directory is created private (mode 0700) and refused when
//!   another user owns it or may write to it, or could swap it out (a
//!   directory above it that they own, or that everyone may write and is
//!   not sticky like `/tmp`), or when its path goes through a symlink that
//!   someone other than the user or root owns;
//!   with neither `HOME` nor `XDG_CACHE_HOME` set it is
//!   `$TMPDIR/vox-scripts-<uid>`;
//! - files are written through a fresh temporary file, never through
//!   something planted in the cache (`vox_build::write_if_changed`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{commands::run_program, run_cargo};
use crate::check::check_error_free;
use crate::context::Context;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::exit;
use crate::sources::display_path;

/// Where scripts are cached: `$VOX_SCRIPT_CACHE`, else the user cache dir,
/// else a per-user directory in the temp dir.
fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("VOX_SCRIPT_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("vox").join("scripts");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home)
            .join(".cache")
            .join("vox")
            .join("scripts");
    }
    std::env::temp_dir().join(temp_cache_name())
}

#[cfg(unix)]
fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and always succeeds.
    unsafe { libc::geteuid() }
}

#[cfg(unix)]
fn temp_cache_name() -> String {
    format!("vox-scripts-{}", current_uid())
}

#[cfg(not(unix))]
fn temp_cache_name() -> String {
    "vox-scripts".to_string()
}

/// How to point the cache somewhere safe, for refusals.
const CACHE_HINT: &str = "set VOX_SCRIPT_CACHE to a directory of your own";

/// Creates `dir` (and missing parents) private to this user, and refuses it
/// when another user could plant a program in it for us to run: it is not
/// owned by us or is writable by group or others, or a directory above it
/// could be changed by another user (owned by someone but us or root, or
/// writable by everyone without the sticky bit `/tmp` has) — they could
/// rename it away and put theirs in its place. (A group-writable directory
/// above it is accepted: with a umask of 002 and a group of one's own, the
/// usual Debian setup, home and project directories are.) Returns its
/// canonical path, which is what is used from then on.
#[cfg(unix)]
pub(crate) fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    let shown = dir.display();
    let unreadable = |e: std::io::Error| format!("cannot read the script cache {shown}: {e}");
    let me = current_uid();
    // Before creating anything (a symlink to a missing directory would be
    // created at its target) and again after, what is then resolved.
    only_own_symlinks(dir, me)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create the script cache {shown}: {e}"))?;
    only_own_symlinks(dir, me)?;
    let real = dir.canonicalize().map_err(unreadable)?;
    let risk = "another user could make `cargo vox run` run their program";
    let meta = std::fs::metadata(&real).map_err(unreadable)?;
    if !meta.is_dir() {
        return Err(format!(
            "the script cache {shown} is not a directory; {CACHE_HINT}"
        ));
    }
    if meta.uid() != me {
        return Err(format!(
            "the script cache {shown} is owned by uid {}, not by you (uid {me}): \
             {risk}; remove it, or {CACHE_HINT}",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "the script cache {shown} is writable by other users (mode {:o}): \
             {risk}; run `chmod go-w {shown}`, or {CACHE_HINT}",
            meta.mode() & 0o7777
        ));
    }
    for above in real.ancestors().skip(1) {
        let meta = std::fs::metadata(above).map_err(unreadable)?;
        let why = if meta.uid() != me && meta.uid() != 0 {
            format!("owned by uid {}", meta.uid())
        } else if meta.mode() & 0o002 != 0 && meta.mode() & 0o1000 == 0 {
            format!("mode {:o}", meta.mode() & 0o7777)
        } else {
            continue;
        };
        return Err(format!(
            "the script cache {shown} is inside {}, which another user can change ({why}): \
             {risk}; {CACHE_HINT} in directories only you (or root) can change",
            above.display()
        ));
    }
    Ok(real)
}

/// Resolves `dir` one component at a time, as the kernel would, and
/// refuses it when a symlink on the way belongs to someone other than us or
/// root: its owner can point it anywhere, at a directory of ours or of
/// root's that then passes every other check (`$TMPDIR/vox-scripts-<uid>`
/// is a name any local user can plant). The first missing component ends
/// the walk: the rest is created as plain directories.
#[cfg(unix)]
fn only_own_symlinks(dir: &Path, me: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    use std::path::Component;
    let shown = dir.display();
    let absolute = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot resolve the script cache {shown}: {e}"))?
            .join(dir)
    };
    // Components still to resolve, the next one last.
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    let push = |pending: &mut Vec<std::ffi::OsString>, path: &Path| {
        for c in path.components().rev() {
            match c {
                Component::Normal(n) => pending.push(n.to_os_string()),
                Component::ParentDir => pending.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    push(&mut pending, &absolute);
    let mut done = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            done = next;
            continue;
        }
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "the script cache {shown} goes through the symlink {}, which uid {} owns \
                 (not you, uid {me}, nor root): they can point it at any directory; \
                 remove it, or {CACHE_HINT}",
                next.display(),
                meta.uid()
            ));
        }
        links += 1;
        let target = std::fs::read_link(&next)
            .ok()
            .filter(|_| links <= 40)
            .ok_or_else(|| format!("cannot resolve the script cache {shown}: too many symlinks, or one that cannot be read"))?;
        if target.is_absolute() {
            done = PathBuf::from("/");
        }
        push(&mut pending, &target);
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    let shown = dir.display();
    std::fs::create_dir_all(dir)
        .and_then(|()| dir.canonicalize())
        .map_err(|e| format!("cannot create the script cache {shown}: {e}"))
}

/// `exe`, resolved, when it is the script package's binary (named after
/// `package`) and a file inside `target_dir`: the only programs the script
/// lane runs.
fn script_program(exe: &Path, target_dir: &Path, package: &str) -> Option<PathBuf> {
    let dir = target_dir.canonicalize().ok()?;
    let exe = exe.canonicalize().ok()?;
    let name = format!("{package}{}", std::env::consts::EXE_SUFFIX);
    (exe.starts_with(&dir) && exe.file_name()? == name.as_str() && exe.is_file()).then_some(exe)
}

/// The hash a stamp records for a program: FNV-1a ([`fnv_step`]) over its
/// little-endian 64-bit words (the last 0–7 bytes one by one), then its
/// length. Words, not bytes, keep a warm run fast: programs are tens of MB.
fn program_hash(exe: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(exe)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut h = FNV_OFFSET;
    let mut len: u64 = 0;
    loop {
        // Fill the buffer, so every chunk but the last is whole words.
        let mut n = 0;
        while n < buf.len() {
            match file.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let mut words = buf[..n].chunks_exact(8);
        for w in &mut words {
            if let Ok(w) = <[u8; 8]>::try_from(w) {
                h = fnv_step(h, u64::from_le_bytes(w));
            }
        }
        for b in words.remainder() {
            h = fnv_step(h, u64::from(*b));
        }
        len += n as u64;
        if n < buf.len() {
            break;
        }
    }
    Ok(format!("{:016x}", fnv_step(h, len)))
}

/// The stamp file's text: the build stamp, the program and its hash, one
/// per line.
fn stamp_text(stamp: &str, exe: &Path, hash: &str) -> String {
    format!("{stamp}\n{}\n{hash}\n", exe.display())
}

/// The program a saved stamp vouches for: the stamp matches `stamp`, the
/// program is the script's binary inside `target_dir` and still has the
/// recorded hash.
fn stamped_program(
    stamp_path: &Path,
    stamp: &str,
    target_dir: &Path,
    package: &str,
) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(stamp_path).ok()?.is_file() {
        return None;
    }
    let saved = std::fs::read_to_string(stamp_path).ok()?;
    let mut lines = saved.lines();
    if lines.next()? != stamp {
        return None;
    }
    let exe = script_program(Path::new(lines.next()?), target_dir, package)?;
    let hash = lines.next()?;
    (program_hash(&exe).ok()? == hash).then_some(exe)
}

/// FNV-1a: a stable hash for cache names and stamps (std's hasher is not
/// stable across Rust versions).
pub(crate) fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h = FNV_OFFSET;
    for p in parts {
        for b in *p {
            h = fnv_step(h, u64::from(*b));
        }
        h = fnv_step(h, 0xff);
    }
    h
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// One FNV-1a step: mix in `v` (a byte, or for [`program_hash`] a word).
fn fnv_step(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x0100_0000_01b3)
}

/// The vox-runtime dependency line: this checkout's when it is present
/// (development), else the released version matching this cargo-vox.
fn runtime_dependency() -> String {
    let local = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("vox-runtime");
    match local.canonicalize() {
        Ok(p) if p.join("Cargo.toml").is_file() => {
            format!(
                "vox-runtime = {{ path = {} }}",
                toml_string(&p.to_string_lossy())
            )
        }
        _ => format!("vox-runtime = \"={}\"", env!("CARGO_PKG_VERSION")),
    }
}

/// `s` as a TOML basic string: quotes, backslashes and every control
/// character (TOML allows none unescaped but tab, and tab is escaped too)
/// are escaped, so any path makes a valid manifest that means that path.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The script crate's manifest. The script's path is put in as a TOML
/// string in `[package.metadata.vox]` (a TOML comment has no escapes and
/// may not hold control characters), so a path with any character in it
/// still makes a valid manifest.
fn script_manifest(script: &Path, package: &str, runtime_dependency: &str) -> String {
    format!(
        "# Generated by cargo vox for the script named below.\n[package]\nname = \"{package}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[package.metadata.vox]\nscript = {}\n\n[workspace]\n\n[dependencies]\n{runtime_dependency}\n",
        toml_string(&script.to_string_lossy()),
    )
}

/// A script's cassettes: `vox/cassettes` beside it (docs/runtime.md,
/// "Tests").
fn script_cassettes(script: &Path) -> String {
    script
        .parent()
        .unwrap_or(Path::new("."))
        .join("vox")
        .join("cassettes")
        .to_string_lossy()
        .into_owned()
}

/// A script compiled to its crate in the cache, not yet written.
struct ScriptCrate {
    label: String,
    code: String,
    manifest: String,
    crate_dir: PathBuf,
    target_dir: PathBuf,
    package: String,
    stamp: String,
}

/// Checks `file` and generates its crate. `test` allows a script without
/// `fn main()` (its `@test`s are what runs).
fn prepare(file: &Path, ctx: &Context, test: bool) -> Result<ScriptCrate> {
    let label = display_path(file);
    if !file.is_file() {
        return Err(Error::usage(&label, format!("no such file: {label}")));
    }
    let checked = check_error_free(ctx, &label, &[file.to_path_buf()], "script")?;
    let has_main = checked.has_main();
    if !has_main && !test {
        return Err(Error::failure(
            &label,
            format!("{label} has no `fn main()`: a script starts there"),
        ));
    }
    let canonical = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let mut code = checked.emit(&vox_codegen::emit::EmitOptions {
        script: true,
        standalone: true,
        source_names: vec![label.clone()],
        cassettes: Some(script_cassettes(&canonical)),
    });
    if !has_main {
        // Only tests: the crate is still a binary.
        code.push_str("\nfn main() {}\n");
    }

    ScriptCrate::new(
        label,
        code,
        &canonical,
        fnv(&[canonical.to_string_lossy().as_bytes()]),
    )
}

impl ScriptCrate {
    /// The crate of `code` in the script cache, in the directory named by
    /// `key`; `script` is the file the manifest records it was made from.
    fn new(label: String, code: String, script: &Path, key: u64) -> Result<ScriptCrate> {
        let dirs = private_dir(&cache_root()).and_then(|root| {
            let crate_dir = private_dir(&root.join(format!("{key:016x}")))?;
            let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
                Some(dir) => PathBuf::from(dir),
                None => private_dir(&root.join("target"))?,
            };
            Ok((crate_dir, target_dir))
        });
        let (crate_dir, target_dir) = dirs.map_err(|message| Error::failure(&label, message))?;
        // A package (so binary) name of its own: scripts sharing a target
        // directory must not overwrite each other's program.
        let package = format!(
            "vox-script-{:016x}",
            fnv(&[crate_dir.to_string_lossy().as_bytes()])
        );
        let manifest = script_manifest(script, &package, &runtime_dependency());
        let stamp = format!(
            "{:016x}",
            fnv(&[
                code.as_bytes(),
                manifest.as_bytes(),
                target_dir.to_string_lossy().as_bytes()
            ])
        );
        Ok(ScriptCrate {
            label,
            code,
            manifest,
            crate_dir,
            target_dir,
            package,
            stamp,
        })
    }

    /// The crate's program: the stamped one when nothing changed, else
    /// built with cargo. `Ok(Err(code))`: the build failed, and rustc's
    /// messages (or the envelope under `--json`) were reported.
    fn build(&self, ctx: &Context) -> Result<std::result::Result<PathBuf, i32>> {
        let label = &self.label;
        let crate_dir = &self.crate_dir;
        let target_dir = &self.target_dir;
        let package = self.package.as_str();
        let stamp_path = crate_dir.join("vox-stamp");

        // Warm path: same generated code and manifest, the same binary still there.
        if let Some(exe) = stamped_program(&stamp_path, &self.stamp, target_dir, package) {
            return Ok(Ok(exe));
        }

        self.write()
            .map_err(|e| Error::failure(label, format!("cannot write the script crate: {e:#}")))?;
        let mut cargo_args: Vec<OsString> = vec![
            "build".into(),
            "--message-format=json".into(),
            "--manifest-path".into(),
        ];
        cargo_args.push(crate_dir.join("Cargo.toml").into());
        cargo_args.push("--target-dir".into());
        cargo_args.push(target_dir.clone().into());
        let run = run_cargo(&cargo_args, crate_dir.as_path(), true);
        if !ctx.json() {
            // rustc's own rendering of what failed to compile (the generated
            // crate's problems are this tool's bugs: the reader needs them whole).
            for r in &run.outcome.rendered {
                eprint!("{r}");
            }
        }
        let mut env = Envelope::new(ctx.command, label.clone(), run.outcome.diagnostics.clone());
        if !run.status.success() || env.error_count > 0 {
            env.ok = false;
            if env.error_count == 0 {
                env.message = Some(
                    super::failure_summary(&run.stderr_tail)
                        .unwrap_or_else(|| run.status.describe("cargo")),
                );
            }
            ctx.reporter().finish(&env, "script");
            return Ok(Err(exit::FAILURE));
        }
        let Some(exe) = run
            .outcome
            .executables
            .iter()
            .find(|e| !e.test)
            .map(|e| e.path.clone())
        else {
            return Err(Error::failure(
                label,
                "cargo built the script but reported no executable",
            ));
        };
        let Some(exe) = script_program(&exe, target_dir, package) else {
            return Err(Error::failure(
                label,
                format!(
                    "cargo reported the script's program at {}, not {package} in its target directory {}: not running it",
                    exe.display(),
                    target_dir.display()
                ),
            ));
        };
        // Without a stamp the next run rebuilds (a no-op for cargo): not an error.
        if let Ok(hash) = program_hash(&exe) {
            let _ = vox_build::write_if_changed(
                &stamp_path,
                stamp_text(&self.stamp, &exe, &hash).as_bytes(),
            );
        }
        Ok(Ok(exe))
    }

    /// Writes the crate's manifest and code (only what changed), and a
    /// lockfile resolved offline when it has none.
    fn write(&self) -> anyhow::Result<()> {
        let write = |path: &Path, content: &str| -> anyhow::Result<()> {
            vox_build::write_if_changed(path, content.as_bytes()).map_err(anyhow::Error::from)
        };
        write(&self.crate_dir.join("Cargo.toml"), &self.manifest)?;
        write(&self.crate_dir.join("src").join("main.rs"), &self.code)?;
        seed_lockfile(&self.crate_dir);
        Ok(())
    }
}

/// A new script crate has no `Cargo.lock`, and cargo would update the
/// registry index to make one, failing without a network. Resolving with
/// `--offline` first takes the versions already in cargo's cache; when
/// that fails (a crate never downloaded), the build resolves as usual.
fn seed_lockfile(crate_dir: &Path) {
    if crate_dir.join("Cargo.lock").exists() {
        return;
    }
    let _ = std::process::Command::new(crate::cargo::cargo_program())
        .arg("generate-lockfile")
        .arg("--offline")
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// `cargo vox test FILE.vox`: the script's `@test`s, run through the
/// test lane on its cached crate (counts and envelopes as for a package).
pub fn test(file: &Path, args: &super::commands::TestArgs, ctx: &Context) -> Result<i32> {
    let script = prepare(file, ctx, true)?;
    script.write().map_err(|e| {
        Error::failure(
            &script.label,
            format!("cannot write the script crate: {e:#}"),
        )
    })?;
    let mut cargo_args: Vec<OsString> = vec!["--target-dir".into(), script.target_dir.into()];
    cargo_args.extend(args.cargo_args.iter().cloned());
    super::commands::test(
        &super::commands::TestArgs {
            file: None,
            record: args.record,
            cargo_args,
        },
        &ctx.for_manifest(script.crate_dir.join("Cargo.toml"), None),
    )
}

pub fn run(file: &Path, args: &[OsString], ctx: &Context) -> Result<i32> {
    let script = prepare(file, ctx, false)?;
    match script.build(ctx)? {
        Ok(exe) => run_program(&exe, args),
        Err(code) => Ok(code),
    }
}

/// The program that runs `check = f` of the `@ai` function `function` of
/// the module in `files` for `cargo vox batch` (vox-codegen's
/// `Checked::check_program`). `Ok(Err(code))`: it did not build, and what
/// rustc said is reported.
pub(crate) fn check_program(
    label: &str,
    files: &[PathBuf],
    checked: &vox_codegen::Checked,
    function: &str,
    ctx: &Context,
) -> Result<std::result::Result<PathBuf, i32>> {
    module_program(label, files, "check", function, ctx, |opts| {
        checked.check_program(function, opts)
    })
}

/// The program `cargo vox call` runs for one call of the `@ai` function
/// `function` of the module in `files` (vox-codegen's
/// `Checked::call_program`).
pub(crate) fn call_program(
    label: &str,
    files: &[PathBuf],
    checked: &vox_codegen::Checked,
    function: &str,
    ctx: &Context,
) -> Result<std::result::Result<PathBuf, i32>> {
    module_program(label, files, "call", function, ctx, |opts| {
        checked.call_program(function, opts)
    })
}

/// The program `cargo vox eval` runs for the `@ai` function `function` of
/// the module in `files` (vox-codegen's `Checked::eval_program`).
pub(crate) fn eval_program(
    label: &str,
    files: &[PathBuf],
    checked: &vox_codegen::Checked,
    function: &str,
    ctx: &Context,
) -> Result<std::result::Result<PathBuf, i32>> {
    module_program(label, files, "eval", function, ctx, |opts| {
        checked.eval_program(function, opts)
    })
}

/// A program made from the module in `files` for `function` (`kind`:
/// what it does), built in the script cache like a script: one crate per
/// module, function and kind; a warm run reuses the stamped program.
fn module_program(
    label: &str,
    files: &[PathBuf],
    kind: &str,
    function: &str,
    ctx: &Context,
    code: impl FnOnce(&vox_codegen::emit::EmitOptions) -> Option<String>,
) -> Result<std::result::Result<PathBuf, i32>> {
    let canonical: Vec<PathBuf> = files
        .iter()
        .map(|f| f.canonicalize().unwrap_or_else(|_| f.clone()))
        .collect();
    let Some(first) = canonical.first() else {
        return Err(Error::usage(label, "no .vox files"));
    };
    let Some(code) = code(&vox_codegen::emit::EmitOptions {
        script: false,
        standalone: true,
        source_names: files.iter().map(|f| display_path(f)).collect(),
        cassettes: Some(script_cassettes(first)),
    }) else {
        return Err(Error::usage(
            label,
            format!("`{function}` is not an @ai function that can be run this way"),
        ));
    };
    let mut key: Vec<&[u8]> = vec![kind.as_bytes(), function.as_bytes()];
    let names: Vec<String> = canonical
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    key.extend(names.iter().map(|n| n.as_bytes()));
    let program = ScriptCrate::new(label.to_owned(), code, first, fnv(&key))?;
    program.build(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKAGE: &str = "vox-script-0123456789abcdef";

    /// A target dir holding the script's program, and a stamp vouching for it.
    fn cache_with_program() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("target");
        std::fs::create_dir_all(target.join("debug")).unwrap();
        let exe = target
            .join("debug")
            .join(format!("{PACKAGE}{}", std::env::consts::EXE_SUFFIX));
        std::fs::write(&exe, "the script's program").unwrap();
        let stamp_path = root.path().join("vox-stamp");
        let hash = program_hash(&exe).unwrap();
        std::fs::write(&stamp_path, stamp_text("s1", &exe, &hash)).unwrap();
        (root, target, exe, stamp_path)
    }

    #[test]
    fn a_stamp_vouches_only_for_the_program_it_hashed() {
        let (_root, target, exe, stamp) = cache_with_program();
        let found = stamped_program(&stamp, "s1", &target, PACKAGE);
        assert_eq!(found, Some(exe.canonicalize().unwrap()));
        // Another build stamp, another package name: not this program.
        assert_eq!(stamped_program(&stamp, "s2", &target, PACKAGE), None);
        assert_eq!(
            stamped_program(&stamp, "s1", &target, "vox-script-other"),
            None
        );
        // Another script's build overwrote the program: rebuilt, not run.
        std::fs::write(&exe, "another script's program").unwrap();
        assert_eq!(stamped_program(&stamp, "s1", &target, PACKAGE), None);
    }

    #[test]
    fn program_hash_covers_every_byte_and_the_length() {
        let dir = tempfile::tempdir().unwrap();
        let hash = |bytes: &[u8]| {
            let p = dir.path().join("p");
            std::fs::write(&p, bytes).unwrap();
            program_hash(&p).unwrap()
        };
        // Longer than one read buffer, not a whole number of words.
        let big: Vec<u8> = (0..200_003u32).map(|i| (i % 251) as u8).collect();
        let base = hash(&big);
        assert_eq!(base, hash(&big));
        for at in [0, 7, 65_536, 131_077, 200_002] {
            let mut changed = big.clone();
            changed[at] ^= 1;
            assert_ne!(hash(&changed), base, "byte {at}");
        }
        assert_ne!(hash(&big[..200_002]), base);
        assert_ne!(hash(b""), hash(b"\0"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_target_dir_is_not_the_program() {
        let (root, target, exe, stamp) = cache_with_program();
        // Same name and content, but the file lives outside the target dir.
        let outside = root.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let elsewhere = outside.join(exe.file_name().unwrap());
        std::fs::rename(&exe, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &exe).unwrap();
        assert_eq!(stamped_program(&stamp, "s1", &target, PACKAGE), None);
        let hash = program_hash(&elsewhere).unwrap();
        std::fs::write(&stamp, stamp_text("s1", &elsewhere, &hash)).unwrap();
        assert_eq!(stamped_program(&stamp, "s1", &target, PACKAGE), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_stamp_is_ignored() {
        let (root, target, _exe, stamp) = cache_with_program();
        let real = root.path().join("real-stamp");
        std::fs::rename(&stamp, &real).unwrap();
        std::os::unix::fs::symlink(&real, &stamp).unwrap();
        assert_eq!(stamped_program(&stamp, "s1", &target, PACKAGE), None);
    }

    /// Every character a path can hold, alone and in generated mixtures:
    /// the manifest parses and names exactly the script and the runtime.
    #[test]
    fn any_path_makes_a_valid_manifest() {
        let mut paths: Vec<String> = (1u32..0x100)
            .chain([0x2028, 0x2029, 0x202E, 0xFEFF, 0x1F600])
            .filter_map(char::from_u32)
            .map(|c| format!("/home/u/dir{c}x/s.vox"))
            .collect();
        // A small deterministic generator over the awkward characters.
        let alphabet: Vec<char> = "\u{1}\r\n\t\"\\'#[]=/ a\u{7f}\u{85}\u{202e}é{}$"
            .chars()
            .collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..500 {
            let mut p = String::from("/");
            for _ in 0..(seed % 24) {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                p.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            paths.push(p);
        }
        for path in paths {
            let dep = format!("vox-runtime = {{ path = {} }}", toml_string(&path));
            let text = script_manifest(Path::new(&path), PACKAGE, &dep);
            let parsed: toml::Table = toml::from_str(&text)
                .unwrap_or_else(|e| panic!("{path:?} broke the manifest: {e}\n{text}"));
            assert_eq!(
                parsed["package"]["metadata"]["vox"]["script"].as_str(),
                Some(path.as_str()),
                "{text}"
            );
            assert_eq!(
                parsed["dependencies"]["vox-runtime"]["path"].as_str(),
                Some(path.as_str())
            );
            assert_eq!(parsed["package"]["name"].as_str(), Some(PACKAGE));
        }
    }

    #[cfg(unix)]
    #[test]
    fn own_symlinks_are_followed_and_resolved_like_the_kernel() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir_all(real.join("inner")).unwrap();
        std::os::unix::fs::symlink("real", root.path().join("rel")).unwrap();
        std::os::unix::fs::symlink(root.path().join("rel"), root.path().join("abs")).unwrap();
        std::os::unix::fs::symlink("loop", root.path().join("loop")).unwrap();
        let me = current_uid();
        for ok in [
            "rel/inner",
            "abs/inner/../inner",
            "abs/missing/deeper",
            "real",
        ] {
            assert_eq!(only_own_symlinks(&root.path().join(ok), me), Ok(()), "{ok}");
        }
        let err = only_own_symlinks(&root.path().join("loop/x"), me).unwrap_err();
        assert!(err.contains("too many symlinks"), "{err}");
        // A link someone else owns: as root, hand it to nobody; otherwise
        // look through the eyes of another user (not root, who may follow
        // root's links and is trusted anyway).
        let viewer = if me == 0 {
            std::os::unix::fs::lchown(root.path().join("abs"), Some(65534), None).unwrap();
            me
        } else {
            me + 1
        };
        let err = only_own_symlinks(&root.path().join("abs/inner"), viewer).unwrap_err();
        assert!(
            err.contains(&format!("symlink {}", root.path().join("abs").display())),
            "{err}"
        );
        assert!(err.contains("VOX_SCRIPT_CACHE"), "{err}");
        assert_eq!(only_own_symlinks(&real.join("inner"), viewer), Ok(()));
    }

    #[cfg(unix)]
    #[test]
    fn private_dir_creates_0700_and_refuses_group_or_world_writable() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a").join("b");
        assert_eq!(
            private_dir(&dir).unwrap(),
            dir.canonicalize().unwrap(),
            "created"
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        for open in [0o770, 0o707, 0o1777] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(open)).unwrap();
            let err = private_dir(&dir).unwrap_err();
            assert!(err.contains("writable by other users"), "{open:o}: {err}");
            assert!(err.contains("chmod go-w"), "{err}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(private_dir(&dir).is_ok());
        // Inside a directory others may change (rename the cache away and
        // put theirs in its place): refused; a sticky one (like /tmp) is fine.
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = private_dir(&open.join("cache")).unwrap_err();
        assert!(err.contains(&format!("inside {}", open.display())), "{err}");
        assert!(err.contains("mode 777"), "{err}");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(private_dir(&open.join("cache")).is_ok());
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o775)).unwrap();
        assert!(private_dir(&open.join("cache")).is_ok());
        // A file where the cache should be.
        let file = root.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(private_dir(&file).is_err());
    }
}
