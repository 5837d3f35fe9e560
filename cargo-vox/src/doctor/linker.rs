//! Does the build ask for lld, and is there one? A config copied from
//! another machine (`-C link-arg=-fuse-ld=lld`, `linker = "rust-lld"`)
//! fails every link with an opaque "cannot find ld.lld" once cargo gets
//! there; this check says so up front.
//!
//! The effective settings follow cargo's precedence: rustflags come from
//! `CARGO_ENCODED_RUSTFLAGS`, else `RUSTFLAGS`, else `[target.<host>]` /
//! `[target.'cfg(..)']` rustflags (a `cfg(…)` table counts only where its
//! predicate holds for `rustc --print cfg`), else `[build] rustflags`; the linker from
//! `CARGO_TARGET_<HOST>_LINKER`, else `[target.<host>] linker`. Config files
//! are `.cargo/config.toml` and `.cargo/config` from the current directory
//! up, then in `$CARGO_HOME`. Finding the requests is pure; looking for the
//! binaries is the probe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use toml::{Table, Value};

use super::cfg::HostCfg;
use super::process::run_with_timeout;
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::ProbeContext;

/// What an lld request needs on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LldNeed {
    /// A program looked up on PATH (`ld.lld`, `lld`, …); `rust-lld` is also
    /// looked up in the rustc sysroot, where it ships.
    Program(String),
    /// An explicit path to a linker.
    File(PathBuf),
}

impl LldNeed {
    fn describe(&self) -> String {
        match self {
            LldNeed::Program(name) => format!("`{name}`"),
            LldNeed::File(path) => format!("`{}`", path.display()),
        }
    }
}

/// One setting that asks for lld, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LldRequest {
    pub need: LldNeed,
    pub source: String,
}

/// One parsed cargo config file.
#[derive(Debug, Clone)]
pub struct ConfigLayer {
    pub path: PathBuf,
    pub table: Table,
}

impl ConfigLayer {
    /// Relative linker paths in a config file are relative to the directory
    /// that holds its `.cargo` directory.
    pub fn base_dir(&self) -> Option<&Path> {
        self.path.parent().and_then(Path::parent)
    }
}

/// The lld binaries a list of rustc flags asks for.
pub fn lld_needs_in_flags(flags: &[String]) -> Vec<LldNeed> {
    let mut needs = Vec::new();
    let mut i = 0;
    while i < flags.len() {
        let flag = flags[i].as_str();
        let (option, step) = match flag {
            "-C" | "-Z" | "--codegen" => (flags.get(i + 1).map(String::as_str), 2),
            _ => (
                flag.strip_prefix("--codegen=")
                    .or_else(|| flag.strip_prefix("-C"))
                    .or_else(|| flag.strip_prefix("-Z")),
                1,
            ),
        };
        if let Some(option) = option {
            needs.extend(lld_needs_in_codegen_option(option));
        }
        i += step;
    }
    needs
}

/// `link-arg=…`, `link-args=…`, `linker=…` or `linker-features=…` (after `-C`/`-Z`).
fn lld_needs_in_codegen_option(option: &str) -> Vec<LldNeed> {
    let (key, value) = option.split_once('=').unwrap_or((option, ""));
    match key.trim() {
        "link-arg" => link_arg_need(value).into_iter().collect(),
        "link-args" => value.split_whitespace().filter_map(link_arg_need).collect(),
        "linker" => lld_need_of_linker(value).into_iter().collect(),
        "linker-features" if value.split(',').any(|f| f.trim() == "+lld") => {
            vec![LldNeed::Program("rust-lld".to_string())]
        }
        _ => Vec::new(),
    }
}

/// `-fuse-ld=lld` (the C compiler driver then runs `ld.lld`) or an explicit lld path.
fn link_arg_need(arg: &str) -> Option<LldNeed> {
    let value = arg
        .strip_prefix("-fuse-ld=")
        .or_else(|| arg.strip_prefix("--ld-path="))?;
    if value == "lld" {
        return Some(LldNeed::Program("ld.lld".to_string()));
    }
    lld_need_of_linker(value)
}

/// A `linker` setting that names an lld (`rust-lld`, `ld.lld`, `lld`, `lld-link`, a path to one).
pub fn lld_need_of_linker(linker: &str) -> Option<LldNeed> {
    let linker = linker.trim();
    let file_name = Path::new(linker).file_name()?.to_str()?;
    let program = file_name.strip_suffix(".exe").unwrap_or(file_name);
    if !program.contains("lld") {
        return None;
    }
    if linker.contains('/') || linker.contains('\\') {
        Some(LldNeed::File(PathBuf::from(linker)))
    } else {
        Some(LldNeed::Program(program.to_string()))
    }
}

/// `rustflags` in a config file: an array of flags or one space-separated string.
fn flags_of(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// `CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_` for a triple.
fn target_env_prefix(triple: &str) -> String {
    let upper: String = triple
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("CARGO_TARGET_{upper}_")
}

/// The `[target.*]` tables that apply to the host: its triple's, and the
/// `cfg(…)` tables whose predicate holds for `cfg` (`rustc --print cfg`).
/// What is not known is assumed to apply: without a host triple every
/// triple's table, without the host's cfg (or with a predicate that cannot
/// be read) every `cfg(…)` table.
fn host_target_tables<'a>(
    layer: &'a ConfigLayer,
    host: Option<&str>,
    cfg: Option<&HostCfg>,
) -> Vec<(&'a str, &'a Table)> {
    let Some(targets) = layer.table.get("target").and_then(Value::as_table) else {
        return Vec::new();
    };
    targets
        .iter()
        .filter(|(key, _)| {
            if key.starts_with("cfg(") {
                cfg.and_then(|cfg| cfg.matches(key)).unwrap_or(true)
            } else {
                host.is_none_or(|h| h == key.as_str())
            }
        })
        .filter_map(|(key, value)| value.as_table().map(|t| (key.as_str(), t)))
        .collect()
}

/// Every lld request in the effective configuration.
pub fn lld_requests(
    layers: &[ConfigLayer],
    env: &BTreeMap<String, String>,
    host: Option<&str>,
    cfg: Option<&HostCfg>,
) -> Vec<LldRequest> {
    let mut requests = Vec::new();
    let mut push = |needs: Vec<LldNeed>, source: &str| {
        for need in needs {
            requests.push(LldRequest {
                need,
                source: source.to_string(),
            });
        }
    };

    // rustflags: the first source that is set wins, as in cargo.
    if let Some(encoded) = env.get("CARGO_ENCODED_RUSTFLAGS") {
        let flags: Vec<String> = encoded
            .split('\x1f')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        push(lld_needs_in_flags(&flags), "CARGO_ENCODED_RUSTFLAGS");
    } else if let Some(plain) = env.get("RUSTFLAGS") {
        let flags: Vec<String> = plain.split_whitespace().map(str::to_string).collect();
        push(lld_needs_in_flags(&flags), "RUSTFLAGS");
    } else {
        let mut target_flags_set = false;
        if let Some(host) = host {
            let key = format!("{}RUSTFLAGS", target_env_prefix(host));
            if let Some(value) = env.get(&key) {
                target_flags_set = true;
                let flags: Vec<String> = value.split_whitespace().map(str::to_string).collect();
                push(lld_needs_in_flags(&flags), &key);
            }
        }
        for layer in layers {
            for (key, table) in host_target_tables(layer, host, cfg) {
                if let Some(value) = table.get("rustflags") {
                    target_flags_set = true;
                    let source = format!("{} [target.{key}] rustflags", layer.path.display());
                    push(lld_needs_in_flags(&flags_of(value)), &source);
                }
            }
        }
        if !target_flags_set {
            if let Some(value) = env.get("CARGO_BUILD_RUSTFLAGS") {
                let flags: Vec<String> = value.split_whitespace().map(str::to_string).collect();
                push(lld_needs_in_flags(&flags), "CARGO_BUILD_RUSTFLAGS");
            }
            for layer in layers {
                let build_flags = layer
                    .table
                    .get("build")
                    .and_then(|build| build.get("rustflags"));
                if let Some(value) = build_flags {
                    let source = format!("{} [build] rustflags", layer.path.display());
                    push(lld_needs_in_flags(&flags_of(value)), &source);
                }
            }
        }
    }

    // linker: the environment wins over config; the closest config wins over farther ones.
    let env_linker = host.and_then(|h| {
        let key = format!("{}LINKER", target_env_prefix(h));
        env.get(&key).map(|value| (key, value.clone()))
    });
    if let Some((key, value)) = env_linker {
        push(lld_need_of_linker(&value).into_iter().collect(), &key);
    } else if let Some((layer, key, value)) = layers.iter().find_map(|layer| {
        host_target_tables(layer, host, cfg)
            .into_iter()
            .find_map(|(key, table)| {
                table
                    .get("linker")
                    .and_then(Value::as_str)
                    .map(|v| (layer, key, v))
            })
    }) {
        let need = lld_need_of_linker(value).map(|need| match need {
            LldNeed::File(path) if path.is_relative() && value.contains('/') => LldNeed::File(
                layer
                    .base_dir()
                    .map_or(path.clone(), |base| base.join(&path)),
            ),
            other => other,
        });
        let source = format!("{} [target.{key}] linker", layer.path.display());
        push(need.into_iter().collect(), &source);
    }
    requests
}

/// Judges each request against where (if anywhere) its binary was found.
pub fn classify_lld(found: &[(LldRequest, Option<PathBuf>)]) -> Vec<CheckResult> {
    if found.is_empty() {
        return vec![CheckResult::passed(CheckKind::Linker, "lld not requested")];
    }
    let missing: Vec<CheckResult> = found
        .iter()
        .filter(|(_, at)| at.is_none())
        .map(|(request, _)| {
            CheckResult::fired(
                DiagId::LinkerLldMissing,
                format!(
                    "{} asks for {}, which is not found",
                    request.source,
                    request.need.describe()
                ),
                lld_fix(request),
            )
        })
        .collect();
    if !missing.is_empty() {
        return missing;
    }
    let listing = found
        .iter()
        .filter_map(|(request, at)| {
            at.as_ref().map(|at| {
                format!(
                    "{} from {} at {}",
                    request.need.describe(),
                    request.source,
                    at.display()
                )
            })
        })
        .collect::<Vec<_>>()
        .join("; ");
    vec![CheckResult::passed(
        CheckKind::Linker,
        format!("lld requested and found: {listing}"),
    )]
}

fn lld_fix(request: &LldRequest) -> String {
    match &request.need {
        LldNeed::Program(name) if name == "rust-lld" => format!(
            "rust-lld ships in the toolchain's sysroot: reinstall the toolchain (`rustup toolchain install stable --force`), or remove the setting from {}",
            request.source
        ),
        LldNeed::Program(name) => format!(
            "install lld so `{name}` is on PATH (e.g. `apt-get install lld`, `brew install llvm`), or remove the setting from {}",
            request.source
        ),
        LldNeed::File(path) => format!(
            "install a linker at {} or correct the path in {}",
            path.display(),
            request.source
        ),
    }
}

/// The cargo config files that apply in `cwd`, closest first.
pub fn config_layers(cwd: &Path, cargo_home: Option<&Path>) -> Vec<ConfigLayer> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in cwd.ancestors() {
        paths.push(dir.join(".cargo").join("config.toml"));
        paths.push(dir.join(".cargo").join("config"));
    }
    if let Some(home) = cargo_home {
        paths.push(home.join("config.toml"));
        paths.push(home.join("config"));
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut layers = Vec::new();
    for path in paths {
        if !path.is_file() {
            continue;
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Ok(table) = toml::from_str::<Table>(&text) {
            layers.push(ConfigLayer { path, table });
        }
    }
    layers
}

pub fn cargo_home() -> Option<PathBuf> {
    match std::env::var_os("CARGO_HOME") {
        Some(home) if !home.is_empty() => Some(PathBuf::from(home)),
        _ => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")),
    }
}

/// Runs `rustc` with `args` and returns its stdout, if it answered in time.
fn rustc_says(ctx: &ProbeContext, args: &[&str]) -> Option<String> {
    let rustc = which::which("rustc").ok()?;
    let mut cmd = Command::new(rustc);
    cmd.args(args);
    match run_with_timeout(cmd, ctx.probe_timeout) {
        super::process::RunOutcome::Exited {
            code: Some(0),
            output,
        } => Some(output.stdout),
        _ => None,
    }
}

/// The host triple from `rustc -vV` (`host: x86_64-unknown-linux-gnu`).
pub fn host_from_verbose_version(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("host:"))
        .map(|host| host.trim().to_string())
        .filter(|host| !host.is_empty())
}

/// rust-lld (or its `gcc-ld/ld.lld` wrapper) inside the toolchain sysroot.
fn rust_lld_in_sysroot(ctx: &ProbeContext) -> Option<PathBuf> {
    let sysroot = PathBuf::from(rustc_says(ctx, &["--print", "sysroot"])?.trim());
    let rustlib = sysroot.join("lib").join("rustlib");
    let entries = std::fs::read_dir(&rustlib).ok()?;
    entries.flatten().find_map(|entry| {
        let bin = entry.path().join("bin");
        [bin.join("rust-lld"), bin.join("gcc-ld").join("ld.lld")]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

pub fn check_linker(ctx: &ProbeContext) -> Vec<CheckResult> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let layers = config_layers(&cwd, cargo_home().as_deref());
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let wants_host = env.keys().any(|k| k.starts_with("CARGO_TARGET_"))
        || layers.iter().any(|l| l.table.contains_key("target"));
    let host = if wants_host {
        rustc_says(ctx, &["-vV"]).and_then(|text| host_from_verbose_version(&text))
    } else {
        None
    };
    let has_cfg_tables = layers.iter().any(|l| {
        l.table
            .get("target")
            .and_then(Value::as_table)
            .is_some_and(|t| t.keys().any(|k| k.starts_with("cfg(")))
    });
    let cfg = if has_cfg_tables {
        rustc_says(ctx, &["--print", "cfg"]).map(|text| HostCfg::parse(&text))
    } else {
        None
    };
    let requests = lld_requests(&layers, &env, host.as_deref(), cfg.as_ref());
    let mut sysroot_lld: Option<Option<PathBuf>> = None;
    let found: Vec<(LldRequest, Option<PathBuf>)> = requests
        .into_iter()
        .map(|request| {
            let at = match &request.need {
                LldNeed::File(path) => path.is_file().then(|| path.clone()),
                LldNeed::Program(name) => which::which(name).ok().or_else(|| {
                    (name == "rust-lld")
                        .then(|| {
                            sysroot_lld
                                .get_or_insert_with(|| rust_lld_in_sysroot(ctx))
                                .clone()
                        })
                        .flatten()
                }),
            };
            (request, at)
        })
        .collect();
    classify_lld(&found)
}

/// Config layers and environments written inline, for the tests of the
/// checks that read cargo config.
#[cfg(test)]
pub mod test_config {
    use super::*;

    pub fn layer(path: &str, text: &str) -> ConfigLayer {
        ConfigLayer {
            path: PathBuf::from(path),
            table: toml::from_str(text).unwrap(),
        }
    }

    pub fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_config::{env, layer};
    use super::*;

    fn flags(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    fn program(name: &str) -> LldNeed {
        LldNeed::Program(name.to_string())
    }

    const HOST: Option<&str> = Some("x86_64-unknown-linux-gnu");

    #[test]
    fn finds_lld_in_flag_spellings() {
        assert_eq!(
            lld_needs_in_flags(&flags("-C link-arg=-fuse-ld=lld")),
            vec![program("ld.lld")]
        );
        assert_eq!(
            lld_needs_in_flags(&flags("-Clink-arg=-fuse-ld=lld")),
            vec![program("ld.lld")]
        );
        assert_eq!(
            lld_needs_in_flags(&flags(
                "--codegen=link-args=-Wl,-O1 -Clink-args=-fuse-ld=lld"
            )),
            vec![program("ld.lld")]
        );
        assert_eq!(
            lld_needs_in_flags(&flags("-C linker=rust-lld")),
            vec![program("rust-lld")]
        );
        assert_eq!(
            lld_needs_in_flags(&flags("-Zlinker-features=+lld")),
            vec![program("rust-lld")]
        );
        assert_eq!(
            lld_needs_in_flags(&flags("-C link-arg=--ld-path=/opt/llvm/bin/ld.lld")),
            vec![LldNeed::File(PathBuf::from("/opt/llvm/bin/ld.lld"))]
        );
        assert!(
            lld_needs_in_flags(&flags("-C link-arg=-fuse-ld=mold -C target-cpu=native")).is_empty()
        );
        assert!(lld_needs_in_flags(&flags("-Zlinker-features=-lld -C opt-level=3")).is_empty());
        assert!(lld_needs_in_flags(&flags("-C")).is_empty());
    }

    #[test]
    fn recognises_lld_linkers() {
        assert_eq!(lld_need_of_linker("rust-lld"), Some(program("rust-lld")));
        assert_eq!(lld_need_of_linker("ld.lld"), Some(program("ld.lld")));
        assert_eq!(lld_need_of_linker("lld"), Some(program("lld")));
        assert_eq!(
            lld_need_of_linker("lld-link.exe"),
            Some(program("lld-link"))
        );
        assert_eq!(
            lld_need_of_linker("/usr/lib/llvm-18/bin/ld.lld"),
            Some(LldNeed::File(PathBuf::from("/usr/lib/llvm-18/bin/ld.lld")))
        );
        assert_eq!(lld_need_of_linker("clang"), None);
        assert_eq!(lld_need_of_linker("cc"), None);
        assert_eq!(lld_need_of_linker(""), None);
    }

    #[test]
    fn build_rustflags_in_config_ask_for_lld() {
        let layers = [layer(
            "/w/.cargo/config.toml",
            "[build]\nrustflags = [\"-C\", \"link-arg=-fuse-ld=lld\"]\n",
        )];
        let requests = lld_requests(&layers, &env(&[]), HOST, None);
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].need, program("ld.lld"));
        assert!(requests[0].source.contains("[build] rustflags"));
    }

    #[test]
    fn environment_rustflags_override_config() {
        let layers = [layer(
            "/w/.cargo/config.toml",
            "[build]\nrustflags = \"-C link-arg=-fuse-ld=lld\"\n",
        )];
        assert!(lld_requests(
            &layers,
            &env(&[("RUSTFLAGS", "-C opt-level=1")]),
            HOST,
            None
        )
        .is_empty());
        let encoded = env(&[
            ("CARGO_ENCODED_RUSTFLAGS", "-C\x1flinker=rust-lld"),
            ("RUSTFLAGS", ""),
        ]);
        let requests = lld_requests(&[], &encoded, HOST, None);
        assert_eq!(requests[0].need, program("rust-lld"));
        assert_eq!(requests[0].source, "CARGO_ENCODED_RUSTFLAGS");
    }

    #[test]
    fn target_rustflags_shadow_build_rustflags() {
        let layers = [layer(
            "/w/.cargo/config.toml",
            "[build]\nrustflags = [\"-Clink-arg=-fuse-ld=lld\"]\n[target.x86_64-unknown-linux-gnu]\nrustflags = [\"-C\", \"target-cpu=native\"]\n",
        )];
        assert!(lld_requests(&layers, &env(&[]), HOST, None).is_empty());
    }

    #[test]
    fn target_linker_for_the_host_only() {
        let layers = [layer(
            "/w/.cargo/config.toml",
            "[target.aarch64-unknown-linux-gnu]\nlinker = \"ld.lld\"\n[target.x86_64-unknown-linux-gnu]\nlinker = \"rust-lld\"\n",
        )];
        let requests = lld_requests(&layers, &env(&[]), HOST, None);
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].need, program("rust-lld"));
        let relative = [layer(
            "/w/.cargo/config.toml",
            "[target.x86_64-unknown-linux-gnu]\nlinker = \"tools/ld.lld\"\n",
        )];
        assert_eq!(
            lld_requests(&relative, &env(&[]), HOST, None)[0].need,
            LldNeed::File(PathBuf::from("/w/tools/ld.lld"))
        );
        let overridden = env(&[("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER", "cc")]);
        assert!(lld_requests(&layers, &overridden, HOST, None).is_empty());
    }

    #[test]
    fn cfg_tables_apply_only_where_their_predicate_holds() {
        let layers = [layer(
            "/w/.cargo/config.toml",
            "[target.'cfg(windows)']\nrustflags = [\"-C\", \"link-arg=-fuse-ld=lld\"]\n\
             [target.'cfg(target_os = \"linux\")']\nlinker = \"rust-lld\"\n",
        )];
        let linux = HostCfg::parse("unix\ntarget_os=\"linux\"\ntarget_family=\"unix\"\n");
        let requests = lld_requests(&layers, &env(&[]), HOST, Some(&linux));
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0].need, program("rust-lld"));
        assert!(requests[0]
            .source
            .contains("[target.cfg(target_os = \"linux\")] linker"));
        let windows = HostCfg::parse("windows\ntarget_os=\"windows\"\n");
        let requests = lld_requests(&layers, &env(&[]), HOST, Some(&windows));
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0].need, program("ld.lld"));
        // Without the host's cfg, every cfg table is assumed to apply.
        assert_eq!(lld_requests(&layers, &env(&[]), HOST, None).len(), 2);
        // So is one whose predicate cannot be read.
        let odd = [layer(
            "/w/.cargo/config.toml",
            "[target.'cfg(target_os = linux)']\nlinker = \"rust-lld\"\n",
        )];
        assert_eq!(lld_requests(&odd, &env(&[]), HOST, Some(&linux)).len(), 1);
    }

    #[test]
    fn classify_fires_only_for_missing_binaries() {
        let request = LldRequest {
            need: program("ld.lld"),
            source: "RUSTFLAGS".into(),
        };
        assert!(classify_lld(&[])[0].pass);
        let missing = classify_lld(&[(request.clone(), None)]);
        assert_eq!(missing[0].fired_id(), Some(DiagId::LinkerLldMissing));
        assert!(missing[0].detail.contains("RUSTFLAGS asks for `ld.lld`"));
        let found = classify_lld(&[(request, Some(PathBuf::from("/usr/bin/ld.lld")))]);
        assert!(found[0].pass);
    }

    #[test]
    fn reads_the_host_triple() {
        let text = "rustc 1.95.0 (f 2026-03-21)\nbinary: rustc\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\n";
        assert_eq!(
            host_from_verbose_version(text).as_deref(),
            Some("x86_64-unknown-linux-gnu")
        );
        assert_eq!(host_from_verbose_version("garbage"), None);
    }
}
