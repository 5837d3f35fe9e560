//! Is there a working Rust toolchain on PATH, and is it the one it claims
//! to be? Agents often run in sandboxes where `rustc` is a forwarding shim,
//! rustup is missing, or a distro `cargo` sits ahead of rustup's proxies;
//! each of those breaks builds in confusing ways, so each is named here.
//!
//! The classifiers are pure functions over recorded command outcomes; the
//! probes only locate binaries and run them under a timeout.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::process::{first_line, run_with_timeout, RunOutcome};
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::ProbeContext;

/// Whether a `--version` banner belongs to the tool that printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Banner {
    /// `<tool> <digit>…`, e.g. `rustc 1.95.0 (f2d3ce0bd 2026-03-21)`.
    Genuine(String),
    /// Anything else: another tool's banner, a wrapper's message, nothing.
    Foreign(String),
}

/// Classifies the first line of a `--version` output for `tool`.
pub fn classify_banner(tool: &str, stdout: &str) -> Banner {
    let line = first_line(stdout).unwrap_or_default();
    let genuine = line
        .strip_prefix(tool)
        .and_then(|rest| rest.strip_prefix(' '))
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit());
    if genuine {
        Banner::Genuine(line)
    } else {
        Banner::Foreign(line)
    }
}

/// Classifies `rustc --version` run from `path`.
pub fn classify_rustc(path: &Path, outcome: &RunOutcome, timeout: Duration) -> CheckResult {
    let shown = path.display();
    match outcome {
        RunOutcome::CouldNotStart { reason } => CheckResult::fired(
            DiagId::RustcAbsent,
            format!("rustc at {shown} could not start: {reason}"),
            "install a toolchain (`rustup default stable`, or your distribution's rustc) and make sure it is on PATH",
        ),
        RunOutcome::TimedOut { .. } => CheckResult::fired(
            DiagId::RustcAbsent,
            format!("`rustc --version` at {shown} did not answer within {}s", timeout.as_secs_f64()),
            "run `rustc --version` by hand to see what blocks it (a proxy waiting on a download or a lock)",
        ),
        RunOutcome::Exited { code, output } if *code != Some(0) => {
            let headline = output.headline();
            let fix = if headline.contains("rustup") {
                "choose a toolchain: `rustup default stable`"
            } else {
                "reinstall the toolchain this rustc belongs to, or put a working one first on PATH"
            };
            CheckResult::fired(
                DiagId::RustcAbsent,
                format!("`rustc --version` at {shown} failed ({}): {headline}", exit_text(*code)),
                fix,
            )
        }
        RunOutcome::Exited { output, .. } => match classify_banner("rustc", &output.stdout) {
            Banner::Genuine(banner) => CheckResult::passed(CheckKind::Rustc, format!("{banner} at {shown}")),
            Banner::Foreign(banner) => CheckResult::fired(
                DiagId::RustcShadowed,
                format!("rustc at {shown} printed `{banner}` for --version, not a rustc banner (a shim or forwarder)"),
                format!("remove or rename the shim at {shown}, or put the real toolchain's bin directory first on PATH"),
            ),
        },
    }
}

/// Classifies `rustup --version` run from `path`.
pub fn classify_rustup(path: &Path, outcome: &RunOutcome, timeout: Duration) -> CheckResult {
    let shown = path.display();
    match outcome {
        RunOutcome::CouldNotStart { reason } => CheckResult::fired(
            DiagId::RustupAbsent,
            format!("rustup at {shown} could not start: {reason}"),
            "reinstall rustup (see rustup.rs)",
        ),
        RunOutcome::TimedOut { .. } => CheckResult::fired(
            DiagId::RustupAbsent,
            format!("`rustup --version` at {shown} did not answer within {}s", timeout.as_secs_f64()),
            "run `rustup --version` by hand to see what blocks it",
        ),
        RunOutcome::Exited { code, output } if *code != Some(0) => CheckResult::fired(
            DiagId::RustupAbsent,
            format!("`rustup --version` at {shown} failed ({}): {}", exit_text(*code), output.headline()),
            "reinstall rustup (see rustup.rs)",
        ),
        RunOutcome::Exited { output, .. } => match classify_banner("rustup", &output.stdout) {
            Banner::Genuine(banner) => CheckResult::passed(CheckKind::Rustup, format!("{banner} at {shown}")),
            Banner::Foreign(banner) => CheckResult::fired(
                DiagId::RustupShadowed,
                format!("rustup at {shown} printed `{banner}` for --version, not a rustup banner"),
                format!("remove or rename {shown}, or put rustup's bin directory (usually ~/.cargo/bin) first on PATH"),
            ),
        },
    }
}

/// A tool found on PATH ahead of rustup's proxy for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowing {
    pub tool: &'static str,
    pub first_on_path: PathBuf,
    pub proxy: PathBuf,
}

/// Turns the shadowings found on PATH into the check's results.
pub fn classify_shadowing(
    banner_result: CheckResult,
    shadowings: &[Shadowing],
) -> Vec<CheckResult> {
    if shadowings.is_empty() || !banner_result.pass {
        return vec![banner_result];
    }
    shadowings
        .iter()
        .map(|s| {
            CheckResult::fired(
                DiagId::RustupShadowed,
                format!(
                    "{} on PATH is {}, which shadows rustup's proxy {}",
                    s.tool,
                    s.first_on_path.display(),
                    s.proxy.display()
                ),
                format!(
                    "put {} before {} on PATH, or remove the other {}",
                    parent_text(&s.proxy),
                    parent_text(&s.first_on_path),
                    s.tool
                ),
            )
        })
        .collect()
}

fn parent_text(path: &Path) -> String {
    path.parent()
        .map_or_else(|| path.display().to_string(), |p| p.display().to_string())
}

/// Classifies the compile probe: building a trivial crate with `cargo`.
pub fn classify_compile(outcome: &RunOutcome, timeout: Duration) -> CheckResult {
    match outcome {
        RunOutcome::Exited { code: Some(0), .. } => {
            CheckResult::passed(CheckKind::Compile, "cargo built a trivial crate")
        }
        RunOutcome::CouldNotStart { reason } => CheckResult::fired(
            DiagId::CompileFailed,
            format!("cargo could not start: {reason}"),
            "install a toolchain with cargo (`rustup default stable`) and put it on PATH",
        ),
        RunOutcome::TimedOut { output } => {
            let seen = first_line(&output.stderr)
                .map(|line| format!(" (last said: {line})"))
                .unwrap_or_default();
            CheckResult::fired(
                DiagId::CompileTimeout,
                format!(
                    "building a trivial crate did not finish within {}s{seen}",
                    timeout.as_secs_f64()
                ),
                "look for another cargo holding a lock (`Blocking waiting for file lock`), a hanging RUSTC_WRAPPER or linker, or raise VOX_DOCTOR_COMPILE_TIMEOUT_SECS on a slow machine",
            )
        }
        RunOutcome::Exited { code, output } => CheckResult::fired(
            DiagId::CompileFailed,
            format!(
                "building a trivial crate failed ({}): {}",
                exit_text(*code),
                last_error_line(&output.stderr)
            ),
            "run `cargo build` in a new `cargo new` crate to see the full error; check RUSTC, RUSTC_WRAPPER, RUSTFLAGS and the linker",
        ),
    }
}

/// The most telling line of cargo's stderr: its first `error` line, else the last line.
fn last_error_line(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|line| line.starts_with("error"))
        .or(lines.last())
        .map(|line| line.chars().take(300).collect())
        .unwrap_or_else(|| "no output".to_string())
}

fn exit_text(code: Option<i32>) -> String {
    match code {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_string(),
    }
}

pub fn check_rustc(ctx: &ProbeContext) -> Vec<CheckResult> {
    let Ok(path) = which::which("rustc") else {
        return vec![CheckResult::fired(
            DiagId::RustcAbsent,
            "no rustc on PATH",
            "install a toolchain (`rustup default stable`, or your distribution's rustc) and put it on PATH",
        )];
    };
    let mut cmd = Command::new(&path);
    cmd.arg("--version");
    vec![classify_rustc(
        &path,
        &run_with_timeout(cmd, ctx.probe_timeout),
        ctx.probe_timeout,
    )]
}

pub fn check_rustup(ctx: &ProbeContext) -> Vec<CheckResult> {
    let Ok(path) = which::which("rustup") else {
        return vec![CheckResult::fired(
            DiagId::RustupAbsent,
            "no rustup on PATH",
            "install rustup (see rustup.rs) to manage toolchains, or ignore if your toolchain comes from elsewhere",
        )];
    };
    let mut cmd = Command::new(&path);
    cmd.arg("--version");
    let banner = classify_rustup(
        &path,
        &run_with_timeout(cmd, ctx.probe_timeout),
        ctx.probe_timeout,
    );
    classify_shadowing(banner, &find_shadowed_proxies(&path))
}

/// rustc and cargo found on PATH ahead of the proxies next to `rustup`.
fn find_shadowed_proxies(rustup: &Path) -> Vec<Shadowing> {
    let Some(proxy_dir) = rustup.parent() else {
        return Vec::new();
    };
    let proxy_dir = proxy_dir
        .canonicalize()
        .unwrap_or_else(|_| proxy_dir.to_path_buf());
    let mut found = Vec::new();
    for tool in ["rustc", "cargo"] {
        let proxy = proxy_dir.join(tool);
        if !proxy.is_file() {
            continue;
        }
        let Ok(first) = which::which(tool) else {
            continue;
        };
        let first_dir = first
            .parent()
            .and_then(|dir| dir.canonicalize().ok())
            .unwrap_or_default();
        if first_dir != proxy_dir {
            found.push(Shadowing {
                tool,
                first_on_path: first,
                proxy,
            });
        }
    }
    found
}

pub fn check_compile(ctx: &ProbeContext) -> Vec<CheckResult> {
    if ctx.skip_compile {
        return vec![CheckResult::passed(
            CheckKind::Compile,
            "skipped (--no-compile)",
        )];
    }
    let Ok(cargo) = which::which("cargo") else {
        return vec![CheckResult::fired(
            DiagId::CompileFailed,
            "no cargo on PATH",
            "install a toolchain with cargo (`rustup default stable`) and put it on PATH",
        )];
    };
    let base = std::env::temp_dir();
    let result = match create_probe_crate(&base, || Some(probe_dir_name())) {
        Ok(dir) => {
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--quiet", "--offline"])
                .current_dir(&dir)
                .env("CARGO_TARGET_DIR", dir.join("target"));
            let result = classify_compile(
                &run_with_timeout(cmd, ctx.compile_timeout),
                ctx.compile_timeout,
            );
            let _ = std::fs::remove_dir_all(&dir);
            result
        }
        Err(err) => CheckResult::fired(
            DiagId::CompileFailed,
            format!("could not write a probe crate in {}: {err}", base.display()),
            "make the temporary directory writable (TMPDIR)",
        ),
    };
    vec![result]
}

/// A fresh name for the probe crate's directory: process id, time, a
/// counter and std's randomly keyed hasher.
fn probe_dir_name() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(nanos);
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!(
        "vox-doctor-probe-{}-{:016x}",
        std::process::id(),
        h.finish()
    )
}

/// Creates the probe crate in a new directory of `base`, named by `names`.
///
/// The directory is created exclusively (a name that exists, whoever made
/// it, is skipped for the next) and private to this user, so nothing in it
/// was planted by someone else; its files are created exclusively too.
fn create_probe_crate(
    base: &Path,
    mut names: impl FnMut() -> Option<String>,
) -> std::io::Result<PathBuf> {
    for _ in 0..64 {
        let Some(name) = names() else { break };
        let dir = base.join(name);
        match private_dir_builder().create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
        return match write_probe_crate(&dir) {
            Ok(()) => Ok(dir),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        };
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free directory name",
    ))
}

/// Creates one directory (not its parents), failing if anything exists
/// there; on Unix it is private to this user (mode 0700).
fn private_dir_builder() -> std::fs::DirBuilder {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700);
        builder
    }
    #[cfg(not(unix))]
    std::fs::DirBuilder::new()
}

/// Writes a new file: never an existing path, never through a symlink.
fn write_new(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(content.as_bytes())
}

fn write_probe_crate(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir(dir.join("src"))?;
    write_new(
        &dir.join("Cargo.toml"),
        "[package]\nname = \"vox-doctor-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n",
    )?;
    write_new(
        &dir.join("src/main.rs"),
        "fn main() {\n    println!(\"ok\");\n}\n",
    )
}

#[cfg(test)]
mod tests {
    use super::super::process::CapturedOutput;
    use super::*;

    /// A directory planted in the temp dir under the probe crate's name, with
    /// a symlink where Cargo.toml goes, is neither used nor written through.
    #[cfg(unix)]
    #[test]
    fn probe_crate_never_uses_a_planted_directory() {
        use std::os::unix::fs::PermissionsExt as _;
        let base = tempfile::tempdir().unwrap();
        let victim = base.path().join("victim");
        std::fs::write(&victim, "victim").unwrap();
        let planted = base.path().join("planted");
        std::fs::create_dir_all(planted.join("src")).unwrap();
        std::os::unix::fs::symlink(&victim, planted.join("Cargo.toml")).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();

        let mut names = ["planted", "fresh"].map(String::from).into_iter();
        let dir = create_probe_crate(base.path(), || names.next()).unwrap();

        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim");
        assert_eq!(dir, base.path().join("fresh"));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("vox-doctor-probe"), "{manifest}");
        assert!(dir.join("src/main.rs").is_file());

        // No free name: an error, nothing written.
        let mut taken = std::iter::repeat("planted".to_string());
        assert!(create_probe_crate(base.path(), || taken.next()).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim");
    }

    fn exited(code: i32, stdout: &str, stderr: &str) -> RunOutcome {
        RunOutcome::Exited {
            code: Some(code),
            output: CapturedOutput {
                stdout: stdout.into(),
                stderr: stderr.into(),
            },
        }
    }

    const T: Duration = Duration::from_secs(5);

    fn fired(r: &CheckResult) -> Option<&'static str> {
        r.fired_id().map(DiagId::as_str)
    }

    #[test]
    fn banners() {
        assert!(matches!(
            classify_banner("rustc", "rustc 1.95.0 (f2d3ce0bd 2026-03-21)\n"),
            Banner::Genuine(_)
        ));
        assert!(matches!(
            classify_banner("rustc", "cargo 1.95.0 (f2d3ce0bd 2026-03-21)\n"),
            Banner::Foreign(_)
        ));
        assert!(matches!(classify_banner("rustc", ""), Banner::Foreign(_)));
        assert!(matches!(
            classify_banner("rustc", "rustc-wrapper 1.0"),
            Banner::Foreign(_)
        ));
        assert!(matches!(
            classify_banner("rustup", "rustup 1.28.2 (e4f3ad6f8 2025-04-28)\n"),
            Banner::Genuine(_)
        ));
        assert!(matches!(
            classify_banner("sccache", "sccache 0.10.0\n"),
            Banner::Genuine(_)
        ));
    }

    #[test]
    fn rustc_outcomes() {
        let p = Path::new("/x/rustc");
        assert_eq!(
            fired(&classify_rustc(
                p,
                &exited(0, "rustc 1.95.0 (f 2026-03-21)", ""),
                T
            )),
            None
        );
        assert_eq!(
            fired(&classify_rustc(
                p,
                &exited(0, "cargo 1.95.0 (f 2026-03-21)", ""),
                T
            )),
            Some("toolchain.rustc_shadowed")
        );
        let no_default = "error: rustup could not choose a version of rustc to run, because one wasn't specified explicitly, and no default is configured.";
        let r = classify_rustc(p, &exited(1, "", no_default), T);
        assert_eq!(fired(&r), Some("toolchain.rustc_absent"));
        assert!(r.detail.contains("rustup default stable"));
        let hang = RunOutcome::TimedOut {
            output: CapturedOutput::default(),
        };
        assert_eq!(
            fired(&classify_rustc(p, &hang, T)),
            Some("toolchain.rustc_absent")
        );
        let gone = RunOutcome::CouldNotStart {
            reason: "Permission denied".into(),
        };
        assert_eq!(
            fired(&classify_rustc(p, &gone, T)),
            Some("toolchain.rustc_absent")
        );
    }

    #[test]
    fn rustup_outcomes() {
        let p = Path::new("/x/rustup");
        let stderr =
            "info: This is the version for the rustup toolchain manager, not the rustc compiler.\n";
        let good = classify_rustup(
            p,
            &exited(0, "rustup 1.28.2 (e4f3ad6f8 2025-04-28)\n", stderr),
            T,
        );
        assert_eq!(fired(&good), None);
        assert_eq!(
            fired(&classify_rustup(
                p,
                &exited(0, "rustc 1.95.0 (f 2026-03-21)", ""),
                T
            )),
            Some("toolchain.rustup_shadowed")
        );
        assert_eq!(
            fired(&classify_rustup(p, &exited(127, "", "not found"), T)),
            Some("toolchain.rustup_absent")
        );
        let shadow = Shadowing {
            tool: "cargo",
            first_on_path: PathBuf::from("/usr/bin/cargo"),
            proxy: PathBuf::from("/home/u/.cargo/bin/cargo"),
        };
        let results = classify_shadowing(good.clone(), &[shadow]);
        assert_eq!(results.len(), 1);
        assert_eq!(fired(&results[0]), Some("toolchain.rustup_shadowed"));
        assert!(results[0].detail.contains("/usr/bin/cargo"));
        assert_eq!(classify_shadowing(good.clone(), &[]), vec![good]);
    }

    #[test]
    fn compile_outcomes() {
        assert_eq!(fired(&classify_compile(&exited(0, "", ""), T)), None);
        let failed = classify_compile(
            &exited(101, "", "   Compiling x v0.0.0\nerror: linker `cc` not found\n  |\n  = note: No such file or directory\n"),
            T,
        );
        assert_eq!(fired(&failed), Some("toolchain.compile_failed"));
        assert!(failed.detail.contains("linker `cc` not found"));
        let slow = RunOutcome::TimedOut {
            output: CapturedOutput {
                stdout: String::new(),
                stderr: "    Blocking waiting for file lock on package cache\n".into(),
            },
        };
        let timeout = classify_compile(&slow, T);
        assert_eq!(fired(&timeout), Some("toolchain.compile_timeout"));
        assert!(timeout.detail.contains("Blocking waiting for file lock"));
    }
}
