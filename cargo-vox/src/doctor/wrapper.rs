//! Does the rustc wrapper cargo is told to use exist? `RUSTC_WRAPPER=sccache`
//! in a shell profile, or `[build] rustc-wrapper` in a config copied from
//! another machine, makes every build fail with "could not execute process
//! `sccache …` (never executed)" once sccache is gone.
//!
//! The effective settings follow cargo's precedence, for the rustc wrapper
//! and the workspace wrapper alike: `RUSTC_WRAPPER`, else
//! `CARGO_BUILD_RUSTC_WRAPPER`, else `[build] rustc-wrapper` of the closest
//! config file that sets it; an empty value means no wrapper. A value with a
//! path separator is a path (relative to the current directory for the
//! environment, to the directory holding `.cargo` for a config file); any
//! other value is a program looked up on PATH. Finding the settings and
//! judging what was found are pure; looking for the files is the probe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::Value;

use super::linker::{cargo_home, config_layers, ConfigLayer};
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::ProbeContext;

/// The two wrappers cargo runs rustc through.
const WRAPPERS: [Wrapper; 2] = [
    Wrapper {
        env: "RUSTC_WRAPPER",
        build_env: "CARGO_BUILD_RUSTC_WRAPPER",
        key: "rustc-wrapper",
    },
    Wrapper {
        env: "RUSTC_WORKSPACE_WRAPPER",
        build_env: "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
        key: "rustc-workspace-wrapper",
    },
];

#[derive(Debug, Clone, Copy)]
struct Wrapper {
    env: &'static str,
    build_env: &'static str,
    key: &'static str,
}

/// One wrapper cargo will run, as set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperSetting {
    /// The value as written.
    pub value: String,
    /// Where it is set, for people: `RUSTC_WRAPPER` or
    /// `[build] rustc-wrapper in /path/.cargo/config.toml`.
    pub source: String,
    /// The directory a relative path is relative to.
    pub base: PathBuf,
}

impl WrapperSetting {
    /// What to look for: a path (with a separator in the value) or a
    /// program name on PATH.
    pub fn target(&self) -> WrapperTarget {
        if self.value.contains('/') || self.value.contains('\\') {
            WrapperTarget::Path(self.base.join(&self.value))
        } else {
            WrapperTarget::Program(self.value.clone())
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrapperTarget {
    Path(PathBuf),
    Program(String),
}

/// What the probe found for one setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// An executable file.
    Executable(PathBuf),
    /// A file without execute permission.
    NotExecutable(PathBuf),
    Missing,
}

/// The wrappers in effect, from the environment and the config layers
/// (closest first), in cargo's precedence.
pub fn wrapper_settings(
    layers: &[ConfigLayer],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Vec<WrapperSetting> {
    WRAPPERS
        .iter()
        .filter_map(|wrapper| {
            let from_env = [wrapper.env, wrapper.build_env]
                .into_iter()
                .find_map(|var| env.get(var).map(|value| (value.clone(), var.to_string())));
            let (value, source, base) = match from_env {
                Some((value, var)) => (value, var, cwd.to_path_buf()),
                None => layers.iter().find_map(|layer| {
                    let value = layer
                        .table
                        .get("build")
                        .and_then(|build| build.get(wrapper.key))
                        .and_then(Value::as_str)?;
                    Some((
                        value.to_string(),
                        format!("[build] {} in {}", wrapper.key, layer.path.display()),
                        layer.base_dir().unwrap_or(cwd).to_path_buf(),
                    ))
                })?,
            };
            // An empty value turns the wrapper off (and overrides config).
            let value = value.trim().to_string();
            (!value.is_empty()).then_some(WrapperSetting {
                value,
                source,
                base,
            })
        })
        .collect()
}

/// Judges what was found for each setting: one result for the check.
pub fn classify_wrappers(found: &[(WrapperSetting, Found)]) -> CheckResult {
    let broken: Vec<String> = found
        .iter()
        .filter_map(|(setting, found)| {
            let what = match (found, setting.target()) {
                (Found::Executable(_), _) => return None,
                (Found::NotExecutable(path), _) => {
                    format!("{} is not executable", path.display())
                }
                (Found::Missing, WrapperTarget::Path(path)) => {
                    format!("{} does not exist", path.display())
                }
                (Found::Missing, WrapperTarget::Program(name)) => {
                    format!("no `{name}` on PATH")
                }
            };
            Some(format!("{} = `{}`: {what}", setting.source, setting.value))
        })
        .collect();
    if broken.is_empty() {
        let detail = if found.is_empty() {
            "no rustc wrapper configured".to_string()
        } else {
            found
                .iter()
                .map(|(setting, found)| match found {
                    Found::Executable(path) => {
                        format!(
                            "{} = `{}` at {}",
                            setting.source,
                            setting.value,
                            path.display()
                        )
                    }
                    _ => format!("{} = `{}`", setting.source, setting.value),
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        return CheckResult::passed(CheckKind::Wrapper, detail);
    }
    let fix = found
        .iter()
        .filter(|(_, found)| !matches!(found, Found::Executable(_)))
        .map(|(setting, _)| wrapper_fix(setting))
        .collect::<Vec<_>>()
        .join("; ");
    CheckResult::fired(
        DiagId::WrapperMissing,
        format!(
            "{}; cargo runs every rustc through it, so every build fails with `could not execute process`",
            broken.join("; ")
        ),
        fix,
    )
}

fn wrapper_fix(setting: &WrapperSetting) -> String {
    let install = match setting.target() {
        WrapperTarget::Program(name) => format!("install `{name}`"),
        WrapperTarget::Path(path) => format!("restore {} (executable)", path.display()),
    };
    if setting.source.starts_with('[') {
        format!("{install}, or remove that line from the config file")
    } else {
        format!(
            "{install}, or build without it: `export {}=` (an empty value turns it off)",
            setting.source
        )
    }
}

/// Looks for a setting's wrapper.
fn find(setting: &WrapperSetting) -> Found {
    let path = match setting.target() {
        WrapperTarget::Program(name) => match which::which(&name) {
            Ok(path) => path,
            Err(_) => return Found::Missing,
        },
        WrapperTarget::Path(path) => path,
    };
    if !path.is_file() {
        return Found::Missing;
    }
    if is_executable(&path) {
        Found::Executable(path)
    } else {
        Found::NotExecutable(path)
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    true
}

pub fn check_wrapper(_ctx: &ProbeContext) -> Vec<CheckResult> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let layers = config_layers(&cwd, cargo_home().as_deref());
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let found: Vec<(WrapperSetting, Found)> = wrapper_settings(&layers, &env, &cwd)
        .into_iter()
        .map(|setting| {
            let found = find(&setting);
            (setting, found)
        })
        .collect();
    vec![classify_wrappers(&found)]
}

#[cfg(test)]
mod tests {
    use super::super::linker::test_config::{env, layer};
    use super::*;

    fn values(settings: &[WrapperSetting]) -> Vec<(&str, &str)> {
        settings
            .iter()
            .map(|s| (s.value.as_str(), s.source.as_str()))
            .collect()
    }

    const CWD: &str = "/work/app";

    #[test]
    fn the_environment_beats_config_and_empty_turns_it_off() {
        let layers = [layer(
            "/work/.cargo/config.toml",
            "[build]\nrustc-wrapper = \"sccache\"\nrustc-workspace-wrapper = \"tools/clippy-wrap\"\n",
        )];
        let cwd = Path::new(CWD);
        let from_config = wrapper_settings(&layers, &env(&[]), cwd);
        assert_eq!(
            values(&from_config),
            [
                (
                    "sccache",
                    "[build] rustc-wrapper in /work/.cargo/config.toml"
                ),
                (
                    "tools/clippy-wrap",
                    "[build] rustc-workspace-wrapper in /work/.cargo/config.toml"
                )
            ]
        );
        // Relative config paths are relative to the directory holding `.cargo`.
        assert_eq!(
            from_config[1].target(),
            WrapperTarget::Path(PathBuf::from("/work/tools/clippy-wrap"))
        );
        let overridden = wrapper_settings(
            &layers,
            &env(&[
                ("RUSTC_WRAPPER", "./bin/wrap"),
                ("RUSTC_WORKSPACE_WRAPPER", ""),
            ]),
            cwd,
        );
        assert_eq!(values(&overridden), [("./bin/wrap", "RUSTC_WRAPPER")]);
        assert_eq!(
            overridden[0].target(),
            WrapperTarget::Path(PathBuf::from("/work/app/./bin/wrap"))
        );
        let build_env =
            wrapper_settings(&[], &env(&[("CARGO_BUILD_RUSTC_WRAPPER", "sccache")]), cwd);
        assert_eq!(
            values(&build_env),
            [("sccache", "CARGO_BUILD_RUSTC_WRAPPER")]
        );
        assert_eq!(
            build_env[0].target(),
            WrapperTarget::Program("sccache".into())
        );
        // RUSTC_WRAPPER wins over CARGO_BUILD_RUSTC_WRAPPER.
        let both = wrapper_settings(
            &[],
            &env(&[("CARGO_BUILD_RUSTC_WRAPPER", "a"), ("RUSTC_WRAPPER", "b")]),
            cwd,
        );
        assert_eq!(values(&both), [("b", "RUSTC_WRAPPER")]);
    }

    #[test]
    fn the_closest_config_that_sets_it_wins() {
        let layers = [
            layer("/work/app/.cargo/config.toml", "[build]\njobs = 2\n"),
            layer(
                "/work/.cargo/config.toml",
                "[build]\nrustc-wrapper = \"near\"\n",
            ),
            layer(
                "/home/u/.cargo/config.toml",
                "[build]\nrustc-wrapper = \"far\"\n",
            ),
        ];
        let settings = wrapper_settings(&layers, &env(&[]), Path::new(CWD));
        assert_eq!(
            values(&settings),
            [("near", "[build] rustc-wrapper in /work/.cargo/config.toml")]
        );
        assert!(wrapper_settings(&[], &env(&[]), Path::new(CWD)).is_empty());
    }

    #[test]
    fn judges_what_was_found() {
        let setting = |value: &str, source: &str| WrapperSetting {
            value: value.into(),
            source: source.into(),
            base: PathBuf::from(CWD),
        };
        let none = classify_wrappers(&[]);
        assert!(none.pass && none.detail.contains("no rustc wrapper"));

        let fine = classify_wrappers(&[(
            setting("sccache", "RUSTC_WRAPPER"),
            Found::Executable(PathBuf::from("/usr/bin/sccache")),
        )]);
        assert!(fine.pass, "{}", fine.detail);
        assert!(fine.detail.contains("/usr/bin/sccache"));

        let missing = classify_wrappers(&[(setting("sccache", "RUSTC_WRAPPER"), Found::Missing)]);
        assert_eq!(missing.fired_id(), Some(DiagId::WrapperMissing));
        assert!(missing
            .detail
            .contains("RUSTC_WRAPPER = `sccache`: no `sccache` on PATH"));
        assert!(missing.detail.contains("`export RUSTC_WRAPPER=`"));

        let not_exec = classify_wrappers(&[(
            setting(
                "tools/wrap",
                "[build] rustc-wrapper in /w/.cargo/config.toml",
            ),
            Found::NotExecutable(PathBuf::from("/w/tools/wrap")),
        )]);
        assert_eq!(not_exec.fired_id(), Some(DiagId::WrapperMissing));
        assert!(not_exec.detail.contains("/w/tools/wrap is not executable"));
        assert!(not_exec
            .detail
            .contains("remove that line from the config file"));
    }
}
