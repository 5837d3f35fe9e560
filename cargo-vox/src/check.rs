//! `cargo vox check`: the Vox frontend over a package or given paths, no cargo build.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::cli::GlobalArgs;
use crate::envelope::{vox_payloads, Envelope};
use crate::{exit, output, workspace};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// `.vox` files or directories to check as one module (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

/// One module to check: all of its files.
pub struct ModuleInput {
    /// The package name; `None` for paths given on the command line.
    pub package: Option<String>,
    pub files: Vec<PathBuf>,
    /// Where `fmt` and `fix` may write: the package directory, or the paths given.
    pub roots: crate::source_write::Roots,
}

pub fn run(args: &CheckArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let out = output::Reporter::new(global.json);
    let failure_label = label_for_paths(&args.paths);
    let (label, modules) = match inputs_or_report("check", args, &failure_label, global, &out) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let mut payloads = Vec::new();
    let mut files_checked = 0;
    for module in &modules {
        let checked = match check_files(&module.files) {
            Ok(c) => c,
            Err(err) => {
                out.failure("check", &label, &format!("{err:#}"));
                return Ok(exit::FAILURE);
            }
        };
        files_checked += module.files.len();
        out.diagnostics(&checked);
        payloads.extend(vox_payloads(&checked));
    }
    let env = Envelope::new("check", label, payloads);
    let packages: Vec<&str> = modules
        .iter()
        .filter_map(|m| m.package.as_deref())
        .collect();
    let scope = if packages.is_empty() {
        String::new()
    } else {
        format!(" in {}", packages.join(", "))
    };
    out.finish(
        &env,
        &format!(
            "checked {files_checked} Vox file{}{scope}",
            if files_checked == 1 { "" } else { "s" }
        ),
    );
    Ok(if env.ok { exit::SUCCESS } else { exit::FAILURE })
}

/// Reads and checks the files as one module.
pub fn check_files(files: &[PathBuf]) -> anyhow::Result<vox_codegen::Checked> {
    let mut sources = vox_codegen::SourceMap::new();
    for f in files {
        // Regular files up to the size cap only (docs/language.md, "Source files").
        // The error names the path and the cause; no further chain to print.
        let bytes = vox_build::layout::read_source(f).map_err(|e| anyhow::anyhow!("{e}"))?;
        sources.add(vox_codegen::SourceFile::from_bytes(display_path(f), &bytes));
    }
    Ok(vox_codegen::check(sources))
}

/// Checks `files` as one module for a command that needs it free of
/// errors: the module, or, once the failure is reported (an unreadable
/// file, or the module's diagnostics in an envelope ending in `summary`),
/// the exit code.
pub fn check_error_free(
    out: &output::Reporter,
    command: &str,
    label: &str,
    files: &[PathBuf],
    summary: &str,
) -> Result<vox_codegen::Checked, i32> {
    let checked = match check_files(files) {
        Ok(c) => c,
        Err(err) => {
            out.failure(command, label, &format!("{err:#}"));
            return Err(exit::FAILURE);
        }
    };
    if checked.has_errors() {
        out.diagnostics(&checked);
        let env = Envelope::new(command, label.to_string(), vox_payloads(&checked));
        out.finish(&env, summary);
        return Err(exit::FAILURE);
    }
    Ok(checked)
}

pub enum InputError {
    /// The command line named something that does not exist.
    Usage(String),
    Other(anyhow::Error),
}

/// A collection error as one message: it already names the path and the cause.
fn layout_error(e: vox_build::LayoutError) -> InputError {
    InputError::Other(anyhow::anyhow!("{e}"))
}

/// What a command that failed before reading its inputs names: the first
/// path given, else `Cargo.toml`.
pub(crate) fn label_for_paths(paths: &[PathBuf]) -> String {
    paths
        .first()
        .map_or_else(|| "Cargo.toml".to_string(), |p| display_path(p))
}

/// [`resolve_inputs`] for `command`; a failure is reported under
/// `failure_label` and becomes the exit status (`Err`).
pub(crate) fn inputs_or_report(
    command: &str,
    args: &CheckArgs,
    failure_label: &str,
    global: &GlobalArgs,
    out: &output::Reporter,
) -> Result<(String, Vec<ModuleInput>), i32> {
    resolve_inputs(args, global).map_err(|e| match e {
        InputError::Usage(msg) => {
            out.failure(command, failure_label, &msg);
            exit::USAGE
        }
        InputError::Other(err) => {
            out.failure(command, failure_label, &format!("{err:#}"));
            exit::FAILURE
        }
    })
}

/// The modules to check: the given paths as one module, or each selected package's sources.
pub fn resolve_inputs(
    args: &CheckArgs,
    global: &GlobalArgs,
) -> Result<(String, Vec<ModuleInput>), InputError> {
    if !args.paths.is_empty() {
        // Each directory walked once and each file listed once, however
        // many of the paths lead to it; a path that exists but is not a
        // regular file is listed, and reading it reports why it is refused.
        let mut files = vox_build::layout::VoxFiles::new();
        for p in &args.paths {
            match std::fs::metadata(p) {
                Ok(meta) if meta.is_dir() => files.add_dir(p).map_err(layout_error)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(InputError::Usage(format!(
                        "no such file or directory: {}",
                        p.display()
                    )))
                }
                _ => files.add_file(p),
            }
        }
        let files = files.into_sorted();
        let label = label_for_paths(&args.paths);
        return Ok((
            label.clone(),
            vec![ModuleInput {
                package: None,
                files,
                roots: crate::source_write::Roots::given(&args.paths),
            }],
        ));
    }
    let selection = workspace::selected_packages(global).map_err(|e| match e {
        workspace::WorkspaceError::Usage(m) => InputError::Usage(m),
        workspace::WorkspaceError::Other(e) => InputError::Other(e),
    })?;
    let label = display_path(&selection.manifest);
    let mut modules = Vec::new();
    for pkg in selection.packages {
        let files = pkg.layout.vox_files().map_err(layout_error)?;
        modules.push(ModuleInput {
            package: Some(pkg.name.clone()),
            files,
            roots: crate::source_write::Roots::package(&pkg.layout.root),
        });
    }
    Ok((label, modules))
}

/// A path as users should see it: relative to the current directory when inside it.
pub fn display_path(p: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf());
    shown.to_string_lossy().into_owned()
}
