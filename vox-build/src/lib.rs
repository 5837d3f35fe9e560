//! Compile a package's `.vox` files to Rust from its `build.rs`.
//!
//! ```no_run
//! // build.rs
//! # #[allow(clippy::needless_doctest_main)]
//! fn main() {
//!     vox_build::compile().unwrap(); // sources: `vox/` by default
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! vox_runtime::include_vox!(); // the generated types and functions
//! ```
//!
//! Source directories come from `[package.metadata.vox] sources = [...]` in
//! `Cargo.toml` (the same setting `cargo vox check` reads), or from a
//! [`Builder`]:
//!
//! ```no_run
//! vox_build::Builder::new()
//!     .source_dir("prompts")
//!     .out_name("prompts") // then: vox_runtime::include_vox!("prompts");
//!     .compile()
//!     .unwrap();
//! ```
//!
//! What happens on each run:
//! - `cargo:rerun-if-changed` is printed for `Cargo.toml`, every existing
//!   source directory and every `.vox` file, so editing, adding or deleting a
//!   `.vox` file reruns the script and nothing else does (a source directory
//!   that does not exist yet is not watched: cargo would rerun the script on
//!   every build; touch `Cargo.toml` after creating it);
//! - only regular files of at most 8 MiB are read, each once however many
//!   paths (symlinks, hard links) reach it; a FIFO, device or oversized
//!   `.vox` file is an error naming it (docs/language.md, "Source files");
//! - diagnostics are rendered like rustc's on stderr, warnings also reach
//!   `cargo build` through `cargo:warning`, and errors end the build script
//!   with a one-line summary (exit status 1, never a panic);
//! - the generated Rust is written to `OUT_DIR/<out_name>.rs` (atomically
//!   and only when its content changed), and a machine-readable report of
//!   the diagnostics to `OUT_DIR/vox-report.json`, or
//!   `OUT_DIR/vox-report-<out_name>.json` for another output name (see
//!   [`report_file_name`]), atomically on every run. Nothing is written
//!   outside `OUT_DIR`.

pub mod layout;
pub mod manifest;

use std::io::Write as _;
use std::path::{Path, PathBuf};

pub use layout::{LayoutError, SourceLayout};
use vox_codegen::json::Json;

/// Name of the diagnostics report written to `OUT_DIR` for the default
/// output name ([`DEFAULT_OUT_NAME`]); see [`report_file_name`] for others.
///
/// A JSON object: `report_version` ([`REPORT_VERSION`]), `package`,
/// `manifest_dir`, `out_name`, `run` (the same for every report one run of
/// the build script writes), `ok`, `error_count`, `warning_count`, `files`
/// (package-relative paths) and `diagnostics` (the diagnostic payloads of
/// `cargo vox check --json`, `file_path` relative to the package root). The
/// `vox-metadata` crate defines the format as Rust types (`Report`); a test
/// keeps the two in step.
pub const REPORT_FILE: &str = vox_metadata::DEFAULT_REPORT_FILE;

/// Version of the report format: bumped only for incompatible changes.
pub use vox_metadata::REPORT_VERSION;

/// The report file of the output `out_name`: [`REPORT_FILE`] for
/// [`DEFAULT_OUT_NAME`], `vox-report-<out_name>.json` for any other, so
/// `Builder`s with different output names in one build script keep one
/// report each. (vox-metadata names them; `cargo vox` finds them with the
/// same functions.)
pub use vox_metadata::report_file_name;

/// Default name of the generated file: `OUT_DIR/vox_generated.rs`.
pub const DEFAULT_OUT_NAME: &str = vox_metadata::DEFAULT_OUT_NAME;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("environment variable `{0}` is not set: vox-build must run inside a build script (or set it with Builder::{1})")]
    MissingEnv(&'static str, &'static str),
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{0}` is not a valid output name: use letters, digits, `_` and `-`")]
    InvalidOutName(String),
    /// The Vox sources have errors (already rendered on stderr).
    #[error("could not compile Vox sources due to {errors} error{}", if *.errors == 1 { "" } else { "s" })]
    Diagnostics { errors: usize, warnings: usize },
}

/// What a successful compile produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub generated: PathBuf,
    pub report: PathBuf,
    pub files: Vec<PathBuf>,
    pub warnings: usize,
}

/// Compiles the package's Vox sources with the default settings.
///
/// On Vox errors this prints the diagnostics and a summary and exits the
/// build script with status 1 (so users never see a panic); other failures
/// (no `OUT_DIR`, unreadable files) are returned.
pub fn compile() -> Result<Output, Error> {
    Builder::new().compile()
}

/// Configures a compile; see the crate docs.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    source_dirs: Vec<String>,
    out_name: Option<String>,
    manifest_dir: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    quiet: bool,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Adds a source directory (relative to the package root). Setting any
    /// replaces the default and `[package.metadata.vox] sources`.
    pub fn source_dir(mut self, dir: impl Into<String>) -> Builder {
        self.source_dirs.push(dir.into());
        self
    }

    /// Name of the generated file in `OUT_DIR` (without `.rs`); include it
    /// with `vox_runtime::include_vox!("name")`.
    pub fn out_name(mut self, name: impl Into<String>) -> Builder {
        self.out_name = Some(name.into());
        self
    }

    /// Package root (default: `CARGO_MANIFEST_DIR`).
    pub fn manifest_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.manifest_dir = Some(dir.into());
        self
    }

    /// Output directory (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.out_dir = Some(dir.into());
        self
    }

    /// Do not print `cargo:` instructions or diagnostics (for benchmarks and tests).
    pub fn quiet(mut self) -> Builder {
        self.quiet = true;
        self
    }

    /// Compiles; on Vox errors prints a summary and exits with status 1.
    pub fn compile(&self) -> Result<Output, Error> {
        match self.try_compile() {
            Err(Error::Diagnostics { errors, warnings }) => {
                let summary = vox_codegen::diagnostic::summary(errors, warnings);
                eprintln!("error: {summary}");
                std::process::exit(1);
            }
            other => other,
        }
    }

    /// Compiles, returning [`Error::Diagnostics`] on Vox errors instead of exiting.
    pub fn try_compile(&self) -> Result<Output, Error> {
        let manifest_dir = match &self.manifest_dir {
            Some(d) => d.clone(),
            None => env_path("CARGO_MANIFEST_DIR", "manifest_dir")?,
        };
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => env_path("OUT_DIR", "out_dir")?,
        };
        let out_name = self
            .out_name
            .clone()
            .unwrap_or_else(|| DEFAULT_OUT_NAME.to_string());
        if out_name.is_empty()
            || !out_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(Error::InvalidOutName(out_name));
        }
        let manifest_path = manifest_dir.join("Cargo.toml");
        let setting = if self.source_dirs.is_empty() {
            match std::fs::read_to_string(&manifest_path) {
                Ok(text) => manifest::sources_setting(&text)?,
                Err(source)
                    if self.manifest_dir.is_some()
                        && source.kind() == std::io::ErrorKind::NotFound =>
                {
                    None
                }
                Err(source) => {
                    return Err(Error::Read {
                        path: manifest_path,
                        source,
                    })
                }
            }
        } else {
            Some(self.source_dirs.clone())
        };
        let configured = setting.is_some();
        let layout = SourceLayout::new(&manifest_dir, setting)?;
        let files = layout.vox_files()?;
        if !self.quiet {
            let mut out = std::io::stdout().lock();
            watch(&mut out, &manifest_path);
            // A missing path would make cargo rerun the script on every
            // build, so only existing directories are watched; a directory
            // created later is picked up once `Cargo.toml` or a watched file changes.
            for dir in layout.dir_paths() {
                if dir.exists() {
                    watch(&mut out, &dir);
                } else if !self.source_dirs.is_empty() || configured {
                    let _ = writeln!(
                        out,
                        "cargo:warning=vox-build: source directory {} does not exist",
                        one_line(&dir.display().to_string())
                    );
                }
            }
            for f in &files {
                watch(&mut out, f);
            }
            if files.is_empty() {
                let _ = writeln!(
                    out,
                    "cargo:warning=vox-build: no .vox files found in {}",
                    one_line(&layout.dirs.join(", "))
                );
            }
        }

        let mut sources = vox_codegen::SourceMap::new();
        let mut names = Vec::new();
        for f in &files {
            let bytes = layout::read_source(f)?;
            let name = f
                .strip_prefix(&manifest_dir)
                .unwrap_or(f)
                .to_string_lossy()
                .replace('\\', "/");
            names.push(name.clone());
            sources.add(vox_codegen::SourceFile::from_bytes(name, &bytes));
        }
        let checked = vox_codegen::check_for_build(sources);
        let (errors, warnings) = (checked.error_count(), checked.warning_count());

        if !self.quiet {
            self.print_diagnostics(&checked);
        }
        let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
        let report = report_json(&package, &manifest_dir, &out_name, &names, &checked);
        let report_path = out_dir.join(report_file_name(&out_name));
        // New every run (its `run` id), so not compared with the old one first.
        write_atomic(&report_path, report.to_compact().as_bytes())?;
        if errors > 0 {
            return Err(Error::Diagnostics { errors, warnings });
        }
        let opts = vox_codegen::emit::EmitOptions {
            script: false,
            standalone: false,
            source_names: names,
            cassettes: None,
        };
        let code = checked.emit(&opts);
        let generated = out_dir.join(format!("{out_name}.rs"));
        write_if_changed(&generated, code.as_bytes())?;
        Ok(Output {
            generated,
            report: report_path,
            files,
            warnings,
        })
    }

    fn print_diagnostics(&self, checked: &vox_codegen::Checked) {
        let opts = vox_codegen::diagnostic::RenderOptions { color: false };
        let mut err = std::io::stderr().lock();
        let mut out = std::io::stdout().lock();
        for d in checked.diagnostics() {
            let _ = writeln!(
                err,
                "{}",
                vox_codegen::diagnostic::render(d, checked.sources(), opts)
            );
            if !d.is_error() {
                let file = checked.sources().get(d.span.file);
                let at = file.line_col(d.span.start as usize);
                let _ = writeln!(
                    out,
                    "cargo:warning={}:{}:{}: {}[{}]: {}",
                    file.name,
                    at.line,
                    at.col,
                    d.severity.as_str(),
                    d.code.as_str(),
                    d.message.replace(['\n', '\r'], " ")
                );
            }
        }
    }
}

fn env_path(var: &'static str, setter: &'static str) -> Result<PathBuf, Error> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .ok_or(Error::MissingEnv(var, setter))
}

fn report_json(
    package: &str,
    manifest_dir: &Path,
    out_name: &str,
    names: &[String],
    checked: &vox_codegen::Checked,
) -> Json {
    Json::obj([
        ("report_version", Json::Int(i64::from(REPORT_VERSION))),
        ("package", Json::str(package)),
        ("manifest_dir", Json::str(manifest_dir.to_string_lossy())),
        ("out_name", Json::str(out_name)),
        ("run", Json::str(run_id())),
        ("ok", Json::Bool(!checked.has_errors())),
        ("error_count", Json::Int(checked.error_count() as i64)),
        ("warning_count", Json::Int(checked.warning_count() as i64)),
        (
            "files",
            Json::Arr(names.iter().map(|n| Json::str(n.clone())).collect()),
        ),
        (
            "diagnostics",
            Json::Arr(
                checked
                    .diagnostics()
                    .iter()
                    .map(|d| vox_codegen::diagnostic::payload(d, checked.sources()))
                    .collect(),
            ),
        ),
    ])
}

/// The same for every report this process writes, different for every
/// run of the build script: lets a reader of `OUT_DIR` tell the reports of
/// the last run from ones an earlier run left (an output name no longer
/// used). Being new each run, it also makes every run rewrite its reports.
fn run_id() -> &'static str {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RUN.get_or_init(unpredictable_hex)
}

/// 16 hex digits no one can guess and no two calls share: std's randomly
/// keyed hasher over the process id, a counter and the time.
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

/// Writes atomically (temporary file + rename), and only when the content
/// differs, so unchanged output keeps its mtime and does not trigger rebuilds.
///
/// The temporary file next to `path` has an unpredictable name and is
/// created exclusively: a file or symlink planted there is never written
/// through.
pub fn write_if_changed(path: &Path, content: &[u8]) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|old| old == content) {
        return Ok(());
    }
    write_atomic(path, content)
}

/// [`write_if_changed`] without the comparison, for content that differs
/// every time (a report, with its run id).
fn write_atomic(path: &Path, content: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write_via_temp(path, content, || Some(dir.join(temp_name(&file_name))))
}

/// How many temporary names [`write_via_temp`] tries before giving up.
const TEMP_ATTEMPTS: usize = 64;

/// An unpredictable temporary name for `file_name`: `.{file_name}.{hex}.tmp`
/// ([`unpredictable_hex`]), so another user cannot plant something there
/// in advance.
fn temp_name(file_name: &str) -> String {
    format!(".{file_name}.{}.tmp", unpredictable_hex())
}

/// Writes `content` to a new temporary file, then renames it over `path`.
///
/// The temporary file is created exclusively (`create_new`: O_CREAT|O_EXCL,
/// which refuses any existing path, a symlink included, and so never writes
/// through one); a name that is taken is skipped for the next one from
/// `names`. The rename replaces `path` itself, never what a symlink there
/// points to.
fn write_via_temp(
    path: &Path,
    content: &[u8],
    mut names: impl FnMut() -> Option<PathBuf>,
) -> Result<(), Error> {
    let write_err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    for _ in 0..TEMP_ATTEMPTS {
        let Some(tmp) = names() else { break };
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(write_err(e)),
        };
        let written = file.write_all(content);
        drop(file);
        return written
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                write_err(e)
            });
    }
    Err(write_err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temporary file name next to it",
    )))
}

/// Prints `cargo:rerun-if-changed=PATH`. Cargo reads a build script's
/// instructions line by line, without escapes: a path with a line break
/// would end the instruction and start another (a file named
/// `x\ncargo:rustc-cfg=y.vox` would set a cfg). Such a path is not watched;
/// a warning names it, escaped.
fn watch(out: &mut impl std::io::Write, path: &Path) {
    let text = path.display().to_string();
    if text.contains(['\n', '\r']) {
        let _ = writeln!(
            out,
            "cargo:warning=vox-build: cannot ask cargo to watch {} for changes: its name has a line break",
            one_line(&text)
        );
    } else {
        let _ = writeln!(out, "cargo:rerun-if-changed={text}");
    }
}

/// `text` on one line: escaped (`\n`, `\u{1}`) when it holds control characters.
fn one_line(text: &str) -> String {
    if text.contains(char::is_control) {
        text.escape_debug().to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_line_break_is_one_warning_line() {
        let mut out = Vec::new();
        watch(&mut out, Path::new("/p/vox/a.vox"));
        watch(
            &mut out,
            Path::new("/p/vox/x\ncargo:rustc-cfg=injected\ny.vox"),
        );
        watch(&mut out, Path::new("/p/vox/cr\r.vox"));
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "cargo:rerun-if-changed=/p/vox/a.vox");
        assert!(lines[1].starts_with("cargo:warning=vox-build: cannot ask cargo to watch /p/vox/x\\ncargo:rustc-cfg=injected\\ny.vox"), "{text}");
        assert!(lines[2].contains("cr\\r.vox"), "{text}");
        assert_eq!(one_line("C:\\src\\vox"), "C:\\src\\vox");
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vox-build-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn compiles_into_out_dir_and_reports() {
        let root = temp_dir("ok");
        std::fs::create_dir_all(root.join("vox")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        std::fs::write(
            root.join("vox/a.vox"),
            "type A { x: int }\nfn f(a: A) to int { return a.x }\n",
        )
        .unwrap();
        let out = root.join("out");
        let res = Builder::new()
            .manifest_dir(&root)
            .out_dir(&out)
            .quiet()
            .try_compile()
            .unwrap();
        let code = std::fs::read_to_string(&res.generated).unwrap();
        assert!(code.contains("pub struct A"));
        let report = std::fs::read_to_string(&res.report).unwrap();
        assert!(report.contains("\"ok\":true"), "{report}");
        // A second run with identical input does not touch the file.
        let before = std::fs::metadata(&res.generated)
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        Builder::new()
            .manifest_dir(&root)
            .out_dir(&out)
            .quiet()
            .try_compile()
            .unwrap();
        assert_eq!(
            std::fs::metadata(&res.generated)
                .unwrap()
                .modified()
                .unwrap(),
            before
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn errors_are_reported_not_panicked() {
        let root = temp_dir("err");
        std::fs::create_dir_all(root.join("vox")).unwrap();
        std::fs::write(root.join("vox/a.vox"), "fn f() to int { return \"x\" }\n").unwrap();
        let out = root.join("out");
        let err = Builder::new()
            .manifest_dir(&root)
            .out_dir(&out)
            .quiet()
            .try_compile()
            .unwrap_err();
        assert!(matches!(err, Error::Diagnostics { errors: 1, .. }), "{err}");
        let report = std::fs::read_to_string(out.join(REPORT_FILE)).unwrap();
        assert!(report.contains("vox/type/mismatch"), "{report}");
        assert!(report.contains("\"file_path\":\"vox/a.vox\""), "{report}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Regression: two `Builder`s with different output names in one build
    /// script wrote the same `vox-report.json`, the second overwriting the
    /// first's diagnostics. Each output now has its own report, and both
    /// carry the same `run`.
    #[test]
    fn each_output_name_has_its_own_report() {
        let root = temp_dir("two-builders");
        std::fs::create_dir_all(root.join("vox")).unwrap();
        std::fs::create_dir_all(root.join("prompts")).unwrap();
        std::fs::write(root.join("vox/a.vox"), "fn f() to int { return \"x\" }\n").unwrap();
        std::fs::write(
            root.join("prompts/p.vox"),
            "fn g() to int {\n    let unused = 1\n    return 2\n}\n",
        )
        .unwrap();
        let out = root.join("out");
        let first = Builder::new()
            .manifest_dir(&root)
            .out_dir(&out)
            .quiet()
            .try_compile();
        assert!(matches!(first, Err(Error::Diagnostics { errors: 1, .. })));
        let second = Builder::new()
            .manifest_dir(&root)
            .out_dir(&out)
            .source_dir("prompts")
            .out_name("prompts")
            .quiet()
            .try_compile()
            .unwrap();
        assert_eq!(second.report, out.join("vox-report-prompts.json"));
        assert_eq!(second.generated, out.join("prompts.rs"));

        let default = std::fs::read_to_string(out.join(REPORT_FILE)).unwrap();
        assert!(default.contains("vox/type/mismatch"), "{default}");
        assert!(
            default.contains("\"out_name\":\"vox_generated\""),
            "{default}"
        );
        let prompts = std::fs::read_to_string(&second.report).unwrap();
        assert!(prompts.contains("vox/lint/unused-variable"), "{prompts}");
        assert!(!prompts.contains("vox/type/mismatch"), "{prompts}");
        assert!(prompts.contains("\"out_name\":\"prompts\""), "{prompts}");
        let run = |text: &str| {
            let at = text.find("\"run\":\"").unwrap() + 7;
            text[at..at + 16].to_string()
        };
        assert_eq!(run(&default), run(&prompts), "one run, one id");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A symlink planted where a build script's temporary file used to go
    /// (`.NAME.PID.tmp`, predictable) is neither followed nor moved into
    /// place: the report stays inside OUT_DIR and the target is untouched.
    #[cfg(unix)]
    #[test]
    fn planted_symlink_at_the_old_temp_name_is_not_followed() {
        let root = temp_dir("symlink-old-name");
        let outside = root.join("outside.txt");
        std::fs::write(&outside, "victim").unwrap();
        let out = root.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let planted = out.join(format!(".{REPORT_FILE}.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&outside, &planted).unwrap();

        let report = out.join(REPORT_FILE);
        write_if_changed(&report, b"{\"ok\":true}").unwrap();

        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "victim");
        let meta = std::fs::symlink_metadata(&report).unwrap();
        assert!(meta.file_type().is_file(), "{report:?} is not a plain file");
        assert_eq!(std::fs::read_to_string(&report).unwrap(), "{\"ok\":true}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Even when the temporary name is guessed, an existing path there (here
    /// a symlink) is never opened: the next name is tried.
    #[cfg(unix)]
    #[test]
    fn existing_temp_path_is_skipped_not_followed() {
        let root = temp_dir("symlink-guessed");
        let outside = root.join("outside.txt");
        std::fs::write(&outside, "victim").unwrap();
        let out = root.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let guessed = out.join(".gen.rs.guessed.tmp");
        std::os::unix::fs::symlink(&outside, &guessed).unwrap();

        let target = out.join("gen.rs");
        let mut names = [guessed.clone(), out.join(".gen.rs.next.tmp")].into_iter();
        write_via_temp(&target, b"fn main() {}", || names.next()).unwrap();

        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "victim");
        assert!(std::fs::symlink_metadata(&guessed)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "fn main() {}");
        assert!(!out.join(".gen.rs.next.tmp").exists());

        // Every name taken: an error, no write anywhere.
        let mut taken = std::iter::repeat(guessed.clone());
        let err = write_via_temp(&out.join("other.rs"), b"x", || taken.next()).unwrap_err();
        assert!(matches!(err, Error::Write { .. }), "{err}");
        assert!(!out.join("other.rs").exists());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "victim");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn temp_names_are_not_predictable() {
        let a = temp_name("x.rs");
        let b = temp_name("x.rs");
        assert_ne!(a, b);
        assert!(a.starts_with(".x.rs.") && a.ends_with(".tmp"), "{a}");
    }

    #[test]
    fn missing_env_is_a_typed_error() {
        let err = Builder::new()
            .manifest_dir("/nonexistent")
            .quiet()
            .try_compile();
        if std::env::var_os("OUT_DIR").is_none() {
            assert!(matches!(err, Err(Error::MissingEnv("OUT_DIR", _))));
        }
    }
}
