//! Shared machinery for the end-to-end tests in `tests/`: where the
//! workspace, its target directory and the `cargo-vox` binary are, how to run
//! a child process without letting a hang wedge CI, how to read what
//! `cargo-vox --json` printed, and how to copy a fixture crate somewhere it
//! may be edited.
//!
//! Every fixture build shares the workspace's target directory, so
//! vox-runtime's dependency tree is compiled once per CI run.

pub mod vox_gen;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use cargo_vox::process::{run_captured, CapturedOutput, Limits};
use vox_metadata::Envelope;

/// Deadline for a `cargo-vox check` run (frontend only).
pub const QUICK: Duration = Duration::from_secs(120);
/// Deadline for a cargo build or test of a fixture crate (may be cold).
pub const BUILD: Duration = Duration::from_secs(20 * 60);

/// The workspace root (the parent of this package).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `…/target/<profile>`: the directory holding the running test executable's `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test executable has a directory");
    let dir = if deps.file_name() == Some(OsStr::new("deps")) {
        deps.parent().expect("deps/ has a parent")
    } else {
        deps
    };
    dir.to_path_buf()
}

/// The workspace's target directory, shared with every fixture build.
pub fn target_dir() -> PathBuf {
    profile_dir()
        .parent()
        .expect("profile dir has a parent")
        .to_path_buf()
}

/// The `cargo` that runs these tests.
pub fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// A `cargo` command in `dir`, building into the shared target directory,
/// with plain (uncoloured, progress-free) output, without the variables
/// cargo set for this test process, and [`offline`].
pub fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(cargo_bin());
    cmd.current_dir(dir);
    for_fixture_builds(&mut cmd);
    cmd
}

/// Whether the environment variable `name` could point generated code at a
/// model server or hand it a key: every `VOX_LLM_*` setting, any
/// `*_API_KEY` (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, …),
/// any `*_BASE_URL`/`*_API_BASE`, and `OLLAMA_HOST`.
pub fn is_provider_variable(name: &str) -> bool {
    name.starts_with("VOX_LLM_")
        || name.ends_with("_API_KEY")
        || name.ends_with("_BASE_URL")
        || name.ends_with("_API_BASE")
        || name == "OLLAMA_HOST"
}

/// Makes `cmd` — a cargo or cargo-vox run, or a binary built from Vox —
/// unable to reach a paid model, whatever the developer's environment
/// holds: every [provider variable](is_provider_variable) it would inherit
/// is removed and `VOX_LLM_PROVIDER=fixture` is set, so `@ai` functions run
/// their fixture bodies. [`cargo`] and [`cargo_vox()`] apply it; a test that
/// runs a built binary itself calls it. A test may set variables again
/// afterwards, on purpose.
pub fn offline(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        if is_provider_variable(&key.to_string_lossy()) {
            cmd.env_remove(&key);
        }
    }
    cmd.env("VOX_LLM_PROVIDER", "fixture")
}

/// Sets up `cmd` (cargo, or cargo-vox running cargo) to build into the
/// shared target directory with plain output, without the variables cargo
/// set for this test process, and [`offline`].
pub fn for_fixture_builds(cmd: &mut Command) {
    offline(cmd);
    cmd.env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .env("CARGO_TERM_PROGRESS_WHEN", "never")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG");
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_BIN_")
            || matches!(
                key.as_ref(),
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
            )
        {
            cmd.env_remove(key.as_ref());
        }
    }
}

/// The `cargo-vox` binary next to the test executables, brought up to date
/// once per test process: when only this package's tests were built
/// (`cargo test -p vox-e2e`), cargo did not rebuild it, and a stale binary
/// would test old code. (A no-op build when it is fresh.)
pub fn cargo_vox_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = profile_dir().join(format!("cargo-vox{}", std::env::consts::EXE_SUFFIX));
        let mut cmd = cargo(&workspace_root());
        cmd.args(["build", "-p", "cargo-vox", "--bin", "cargo-vox"]);
        if profile_dir().file_name() == Some(OsStr::new("release")) {
            cmd.arg("--release");
        }
        run(&mut cmd, BUILD).assert_success();
        assert!(
            bin.is_file(),
            "`cargo build -p cargo-vox` did not produce {}",
            bin.display()
        );
        bin
    })
    .clone()
}

/// A `cargo-vox` command in `dir` with colour off, set up like [`cargo`]
/// (and so [`offline`]) for the cargo it runs.
pub fn cargo_vox(dir: &Path) -> Command {
    let mut cmd = Command::new(cargo_vox_bin());
    cmd.current_dir(dir).env("NO_COLOR", "1");
    for_fixture_builds(&mut cmd);
    cmd
}

/// Runs `cargo-vox ARGS` in `dir` within [`QUICK`]: it must not panic, and
/// under `--json` every stdout line must be JSON.
pub fn vox(dir: &Path, args: &[&str]) -> Run {
    let r = run(cargo_vox(dir).args(args), QUICK);
    assert!(
        !r.stderr.contains("panicked"),
        "cargo-vox panicked\n{}",
        r.dump()
    );
    if args.contains(&"--json") {
        json_lines(&r);
    }
    r
}

/// Runs `cargo-vox ARGS` (a build lane command) in `dir` with extra
/// environment, within `deadline`: cargo-vox must not panic (the tests it
/// runs may, so only a panic naming cargo-vox counts), and under `--json`
/// every stdout line must be JSON.
pub fn lane_with(dir: &Path, args: &[&str], env: &[(&str, &str)], deadline: Duration) -> Run {
    let mut cmd = cargo_vox(dir);
    cmd.args(args).envs(env.iter().copied());
    let r = run(&mut cmd, deadline);
    assert!(
        !r.stderr
            .lines()
            .any(|l| l.contains("panicked at") && l.contains("cargo-vox")),
        "cargo-vox panicked\n{}",
        r.dump()
    );
    if args.contains(&"--json") {
        json_lines(&r);
    }
    r
}

/// What a finished child process left behind.
#[derive(Debug)]
pub struct Run {
    pub what: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The exit code (`None` when killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Everything the process printed, for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "`{}` exited with {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what, self.status, self.stdout, self.stderr
        )
    }

    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code(),
            Some(code),
            "expected exit code {code}\n{}",
            self.dump()
        );
        self
    }

    pub fn assert_success(&self) -> &Run {
        assert!(self.status.success(), "expected success\n{}", self.dump());
        self
    }

    pub fn assert_failure(&self) -> &Run {
        assert!(
            !self.status.success(),
            "expected a failure\n{}",
            self.dump()
        );
        self
    }
}

/// Runs `cmd` to completion with a deadline, through cargo-vox's process
/// runner (the one the doctor uses): the child runs in its own process group,
/// and on expiry the whole group is killed and the test fails with whatever
/// it printed so far. Once the child exits, a grandchild still holding its
/// pipes cannot hang the test.
pub fn run(cmd: &mut Command, timeout: Duration) -> Run {
    let what = describe(cmd);
    let limits = Limits {
        timeout,
        // Test output is asserted on whole: keep far more than any test prints.
        output_cap: 256 * 1024 * 1024,
        // Generous, so a loaded machine's reader threads always finish.
        pipe_grace: Duration::from_secs(10),
    };
    let captured =
        run_captured(cmd, limits).unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    let CapturedOutput { stdout, stderr } = captured.output;
    match captured.status {
        Some(status) => Run {
            what,
            status,
            stdout,
            stderr,
        },
        None => panic!(
            "`{what}` did not finish within {timeout:?} and was killed with its process group\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
        ),
    }
}

fn describe(cmd: &Command) -> String {
    let mut parts = vec![Path::new(cmd.get_program())
        .file_name()
        .unwrap_or(cmd.get_program())
        .to_string_lossy()
        .into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// Parses every stdout line as JSON, failing the test on any that is not.
pub fn json_lines(run: &Run) -> Vec<serde_json::Value> {
    run.stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("stdout line is not JSON ({e}): {line:?}\n{}", run.dump())
            })
        })
        .collect()
}

/// The envelopes a `--json` run printed (only JSON lines may reach its
/// stdout), read with the published types (which check
/// `envelope_version`), each checked for its counts.
pub fn envelopes(r: &Run) -> Vec<Envelope> {
    json_lines(r);
    let lines: Vec<Envelope> = r
        .stdout
        .lines()
        .map(|l| {
            Envelope::from_line(l)
                .unwrap_or_else(|e| panic!("not an envelope ({e}): {l}\n{}", r.dump()))
        })
        .collect();
    for env in &lines {
        let errors = env.diagnostics.iter().filter(|d| d.is_error()).count();
        assert_eq!(env.error_count, errors, "error_count\n{}", r.dump());
        assert_eq!(
            env.warning_count,
            env.diagnostics.len() - errors,
            "warning_count\n{}",
            r.dump()
        );
    }
    lines
}

/// The single envelope a `--json` command printed, for `command`.
pub fn only_envelope(r: &Run, command: &str) -> Envelope {
    let mut lines = envelopes(r);
    assert_eq!(lines.len(), 1, "exactly one envelope\n{}", r.dump());
    let env = lines.remove(0);
    assert_eq!(env.command, command, "{env:?}");
    env
}

/// Reads `text` (JSON) into the `vox-metadata` type `T`, which must
/// serialize back to exactly the same JSON: no field unknown to the types
/// (it would be lost), none missing, none of another type. `what` names
/// the text in failure messages.
pub fn assert_exact_round_trip<T>(what: &str, text: &str) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let original: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{what}: does not fit vox-metadata's types ({e}): {text}"));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        back, original,
        "{what}: the typed round trip changed the JSON (a field the types do not know, or one they add)"
    );
    typed
}

/// A fresh, empty directory under `target/e2e-work/`, named `<tag>`.
///
/// Names are stable per test (not per run) so that repeated runs reuse
/// the same build-artifact hashes instead of piling up new ones.
pub fn work_dir(tag: &str) -> PathBuf {
    let dir = target_dir().join("e2e-work").join(tag);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot clear {}: {e}", dir.display()));
    }
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// A directory name unique within this process (for tests that must not share).
pub fn unique(tag: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{tag}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Copies `fixtures/<name>` to `target/e2e-work/<tag>/<last part of name>`,
/// skipping any `target/`, with its path dependencies on the workspace
/// crates made absolute. `name` may have several parts (`lane/app`); the
/// relative dependency paths climb one `../` per part plus one. A fixture
/// without its own `Cargo.lock` gets invoice-app's (same dependencies), so
/// building it needs no dependency resolution. Returns the copy's package root.
pub fn copy_fixture(name: &str, tag: &str) -> PathBuf {
    let src = workspace_root().join("fixtures").join(name);
    assert!(src.is_dir(), "no fixture {}", src.display());
    let leaf = Path::new(name).file_name().expect("fixture name");
    let dest = work_dir(tag).join(leaf);
    copy_tree(&src, &dest);
    let manifest = dest.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("fixture has a Cargo.toml");
    let up = "../".repeat(Path::new(name).components().count() + 1);
    let mut rewritten = text.clone();
    for krate in ["vox-runtime", "vox-build", "vox-codegen"] {
        let abs = workspace_root().join(krate);
        let abs = abs.to_string_lossy().replace('\\', "/");
        rewritten = rewritten.replace(&format!("\"{up}{krate}\""), &format!("\"{abs}\""));
    }
    assert_ne!(
        text, rewritten,
        "fixture {name} has no {up} path dependencies to rewrite"
    );
    std::fs::write(&manifest, rewritten).expect("write Cargo.toml");
    let lock = dest.join("Cargo.lock");
    if !lock.exists() {
        let shared = workspace_root()
            .join("fixtures")
            .join("invoice-app")
            .join("Cargo.lock");
        std::fs::copy(&shared, &lock).expect("copy invoice-app's Cargo.lock");
    }
    dest
}

fn copy_tree(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).expect("create dir");
    for entry in std::fs::read_dir(src).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let from = entry.path();
        let to = dest.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&from, &to);
            }
        } else {
            std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        }
    }
}

/// A package `name` without dependencies in a fresh `work_dir(tag)`, with
/// `files` (relative path, content) written into it; returns its root.
pub fn tiny_crate(tag: &str, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = work_dir(tag).join(name);
    std::fs::create_dir_all(&root).expect("create crate dir");
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n"
        ),
    )
    .expect("write Cargo.toml");
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dir");
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    root
}

/// The `.vox` files directly in `dir`, sorted.
pub fn vox_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "vox"))
        .collect();
    files.sort();
    files
}

/// Every file and directory under `root` (relative paths), skipping `target/`.
pub fn listing(root: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let entry = entry.expect("dir entry");
            let path = entry.path();
            if entry.file_name() == "target" && dir == root {
                continue;
            }
            out.insert(path.strip_prefix(root).expect("under root").to_path_buf());
            if entry.file_type().expect("file type").is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Writes `content` to `path` so that cargo sees a change: waits until the
/// clock has moved past the previous second (coarse-mtime filesystems)
/// before writing.
pub fn write_later(path: &Path, content: impl AsRef<[u8]>) {
    std::thread::sleep(Duration::from_millis(1100));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create parent dir");
    }
    std::fs::write(path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Removes `path` after the same pause as [`write_later`].
pub fn remove_later(path: &Path) {
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::remove_file(path).unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
}

/// Writes `text` to `path` (creating its directory) as an executable script.
#[cfg(unix)]
pub fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create parent dir");
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// Reads a file that must exist.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
