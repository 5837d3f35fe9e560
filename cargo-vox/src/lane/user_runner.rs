//! The test runner a user configured for cargo, found so `cargo vox test`
//! can run it inside its own (see `lane::testrun`).
//!
//! `cargo vox test` passes its runner to cargo on the command line
//! (`--config target.<triple>.runner=…`), which outranks every other source,
//! so the user's runner would be replaced — or, when the user's is a string
//! and ours an array, cargo refuses to merge the two and no test runs. So
//! the user's runner is looked up here, the way cargo looks it up, and
//! `cargo vox`'s runner runs it (`user-runner ARGS… BINARY ARGS…`) and
//! records around it.
//!
//! Why read cargo's configuration here rather than ask cargo:
//! `cargo config get` is unstable (nightly, `-Zunstable-options`), and no
//! stable cargo command prints the runner it would use. The lookup follows
//! cargo's documented rules (cargo book, "Configuration"):
//!
//! - sources, strongest first: `--config` options among the user's cargo
//!   arguments (the last one first; `KEY=VALUE` or a file), then
//!   `CARGO_TARGET_<TRIPLE>_RUNNER`, then `.cargo/config.toml` (or
//!   `.cargo/config`, which wins when both exist) in the current directory
//!   and each parent, then `$CARGO_HOME/config.toml`;
//! - `target.<triple>.runner` wins over `target.'cfg(…)'.runner`; two
//!   matching `cfg(…)` runners are cargo's error (then no runner of ours is
//!   passed and cargo reports it); `cfg(…)` is evaluated against
//!   `rustc --print cfg` for the target (with `CARGO_ENCODED_RUSTFLAGS` or
//!   `RUSTFLAGS`; `rustflags` from config files are not applied);
//! - the triple is each `--target` (a `.json` target file counts by its
//!   stem), else `CARGO_BUILD_TARGET`, else `build.target`, else the host's;
//! - a runner is a string (split on whitespace) or an array; its program,
//!   when it contains a `/`, is relative to the directory holding the
//!   `.cargo` directory of the file that set it (the current directory for
//!   the environment and `--config KEY=VALUE`), else looked up in `PATH`.
//!
//! Not followed: `include` in config files (unstable in cargo). Where this
//! lookup and cargo still disagree so that cargo refuses the merged
//! configuration, the tests run without `cargo vox`'s runner and a warning
//! says so (see `lane::commands::test`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// The runner `cargo vox` must pass for one target, and the user's it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRunner {
    /// The `target.<triple>` key.
    pub triple: String,
    /// Whether the user's configuration writes this key's runner as a
    /// string: cargo cannot merge a string with an array, so ours must be
    /// a string too.
    pub string_form: bool,
    /// The user's runner for this target: program (resolved) and arguments.
    pub user: Option<UserRunner>,
}

/// A configured runner: a program and its first arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRunner {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Where it was set, for messages.
    pub origin: String,
}

/// What `cargo vox test` passes to cargo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No runner is configured anywhere: `target.'cfg(all())'.runner`.
    Everywhere,
    /// One `target.<triple>.runner` per target.
    PerTarget(Vec<TargetRunner>),
    /// Pass no runner (why): cargo reports the configuration's own error.
    None(String),
}

/// Where a value was set: its origin for messages and the directory its
/// relative programs are resolved against.
#[derive(Debug, Clone)]
struct Layer {
    origin: String,
    root: PathBuf,
    table: Table,
}

/// `rustc --print cfg` lines for a target triple (`None`: the host).
pub type TargetCfg = dyn Fn(Option<&str>) -> Result<Vec<String>, String>;

/// What the lookup reads from the outside world.
pub struct Context<'a> {
    pub cwd: PathBuf,
    /// The user's cargo arguments (before any `--`).
    pub cargo_args: &'a [OsString],
    /// The environment cargo will see.
    pub env: &'a [(String, OsString)],
    pub target_cfg: &'a TargetCfg,
    /// The host triple.
    pub host: &'a dyn Fn() -> Result<String, String>,
}

impl Context<'_> {
    fn var(&self, name: &str) -> Option<OsString> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    }
}

/// The environment variable cargo reads a target's runner from.
pub fn env_key(triple: &str) -> String {
    format!(
        "CARGO_TARGET_{}_RUNNER",
        triple.to_uppercase().replace(['-', '.'], "_")
    )
}

pub fn plan(ctx: &Context<'_>) -> Plan {
    let layers = config_layers(ctx);
    let any_runner =
        ctx.env.iter().any(|(k, v)| {
            k.starts_with("CARGO_TARGET_") && k.ends_with("_RUNNER") && !v.is_empty()
        }) || layers.iter().any(|l| {
            l.table
                .get("target")
                .and_then(Value::as_table)
                .is_some_and(|t| {
                    t.values()
                        .any(|v| v.as_table().is_some_and(|t| t.contains_key("runner")))
                })
        });
    if !any_runner {
        return Plan::Everywhere;
    }
    let triples = match target_triples(ctx, &layers) {
        Ok(t) => t,
        Err(e) => return Plan::None(e),
    };
    let mut out = Vec::new();
    for (triple, explicit) in triples {
        match target_runner(ctx, &layers, &triple, explicit) {
            Ok(r) => out.push(r),
            Err(e) => return Plan::None(e),
        }
    }
    Plan::PerTarget(out)
}

/// Every configuration source, strongest first (the environment aside).
fn config_layers(ctx: &Context<'_>) -> Vec<Layer> {
    let mut layers = Vec::new();
    // `--config`: the last one given is the strongest.
    let mut cli = Vec::new();
    let mut args = ctx.cargo_args.iter();
    while let Some(a) = args.next() {
        let Some(a) = a.to_str() else { continue };
        let value = if a == "--config" {
            args.next().and_then(|v| v.to_str()).map(str::to_string)
        } else {
            a.strip_prefix("--config=").map(str::to_string)
        };
        if let Some(v) = value {
            cli.push(v);
        }
    }
    for value in cli.iter().rev() {
        let path = ctx.cwd.join(value);
        if path.is_file() {
            if let Some(table) = read_table(&path) {
                layers.push(Layer {
                    origin: format!("--config {value}"),
                    root: config_root(&path),
                    table,
                });
            }
        } else if let Ok(table) = value.parse::<Table>() {
            layers.push(Layer {
                origin: format!("--config {value}"),
                root: ctx.cwd.clone(),
                table,
            });
        }
    }
    let mut seen = Vec::new();
    let mut add_dir = |dir: &Path, layers: &mut Vec<Layer>| {
        let cargo_dir = dir.join(".cargo");
        if seen.contains(&cargo_dir) {
            return;
        }
        seen.push(cargo_dir.clone());
        // Cargo reads `config` when both exist.
        let file = ["config", "config.toml"]
            .iter()
            .map(|n| cargo_dir.join(n))
            .find(|p| p.is_file());
        if let Some(file) = file {
            if let Some(table) = read_table(&file) {
                layers.push(Layer {
                    origin: file.display().to_string(),
                    root: dir.to_path_buf(),
                    table,
                });
            }
        }
    };
    for dir in ctx.cwd.ancestors() {
        add_dir(dir, &mut layers);
    }
    // `$CARGO_HOME/config.toml`, unless it was one of the above.
    let cargo_home = ctx
        .var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| ctx.var("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home.filter(|h| !seen.contains(h)) {
        let file = ["config", "config.toml"]
            .iter()
            .map(|n| home.join(n))
            .find(|p| p.is_file());
        if let Some(file) = file {
            if let Some(table) = read_table(&file) {
                layers.push(Layer {
                    origin: file.display().to_string(),
                    root: config_root(&file),
                    table,
                });
            }
        }
    }
    layers
}

/// The directory a config file's relative paths start from: the parent of
/// its `.cargo` directory.
fn config_root(file: &Path) -> PathBuf {
    file.parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

fn read_table(path: &Path) -> Option<Table> {
    std::fs::read_to_string(path).ok()?.parse::<Table>().ok()
}

/// `(triple, given explicitly)` of every target the tests are built for.
fn target_triples(ctx: &Context<'_>, layers: &[Layer]) -> Result<Vec<(String, bool)>, String> {
    let mut given = Vec::new();
    let mut args = ctx.cargo_args.iter();
    while let Some(a) = args.next() {
        let Some(a) = a.to_str() else { continue };
        if a == "--target" {
            if let Some(v) = args.next().and_then(|v| v.to_str()) {
                given.push(v.to_string());
            }
        } else if let Some(v) = a.strip_prefix("--target=") {
            given.push(v.to_string());
        }
    }
    if given.is_empty() {
        if let Some(t) = ctx
            .var("CARGO_BUILD_TARGET")
            .and_then(|t| t.into_string().ok())
        {
            given.extend(t.split_whitespace().map(str::to_string));
        }
    }
    if given.is_empty() {
        let configured = layers.iter().find_map(|l| {
            l.table
                .get("build")
                .and_then(Value::as_table)
                .and_then(|b| b.get("target"))
        });
        match configured {
            Some(Value::String(s)) => given.push(s.clone()),
            Some(Value::Array(a)) => {
                given.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
            }
            _ => {}
        }
    }
    if given.is_empty() {
        return Ok(vec![((ctx.host)()?, false)]);
    }
    let mut out: Vec<(String, bool)> = Vec::new();
    for t in given {
        let short = if t.ends_with(".json") {
            Path::new(&t)
                .file_stem()
                .map_or(t.clone(), |s| s.to_string_lossy().into_owned())
        } else {
            t
        };
        if short == "host-tuple" {
            out.push(((ctx.host)()?, false));
        } else if !out.iter().any(|(s, _)| *s == short) {
            out.push((short, true));
        }
    }
    Ok(out)
}

fn target_runner(
    ctx: &Context<'_>,
    layers: &[Layer],
    triple: &str,
    explicit: bool,
) -> Result<TargetRunner, String> {
    let runner_of = |table: &Table, key: &str| -> Option<Value> {
        table
            .get("target")?
            .as_table()?
            .get(key)?
            .as_table()?
            .get("runner")
            .cloned()
    };
    // The form cargo must merge ours with: the first file or `--config`
    // that sets this key (cargo refuses files that disagree).
    let string_form = layers
        .iter()
        .find_map(|l| runner_of(&l.table, triple))
        .is_some_and(|v| v.is_str());
    let from_layer = |l: &Layer, v: Value| -> Result<UserRunner, String> {
        runner_value(&v, &l.root, &l.origin).ok_or_else(|| {
            format!(
                "the runner for `{triple}` in {} is not a command (a string or an array of strings)",
                l.origin
            )
        })
    };
    // `--config` first, then the environment, then files.
    let is_cli = |l: &&Layer| l.origin.starts_with("--config");
    if let Some((l, v)) = layers
        .iter()
        .filter(is_cli)
        .find_map(|l| runner_of(&l.table, triple).map(|v| (l, v)))
    {
        return Ok(TargetRunner {
            triple: triple.to_string(),
            string_form,
            user: Some(from_layer(l, v)?),
        });
    }
    let key = env_key(triple);
    if let Some(v) = ctx.var(&key) {
        let v = v.to_string_lossy().into_owned();
        let user = runner_value(&Value::String(v), &ctx.cwd, &key)
            .ok_or_else(|| format!("{key} is not a command"))?;
        return Ok(TargetRunner {
            triple: triple.to_string(),
            string_form,
            user: Some(user),
        });
    }
    if let Some((l, v)) = layers
        .iter()
        .filter(|l| !is_cli(l))
        .find_map(|l| runner_of(&l.table, triple).map(|v| (l, v)))
    {
        return Ok(TargetRunner {
            triple: triple.to_string(),
            string_form,
            user: Some(from_layer(l, v)?),
        });
    }
    // `target.'cfg(…)'.runner`: each key at its strongest definition.
    let mut cfg_runners: BTreeMap<String, (&Layer, Value)> = BTreeMap::new();
    for l in layers {
        let Some(targets) = l.table.get("target").and_then(Value::as_table) else {
            continue;
        };
        for (key, t) in targets {
            if !key.starts_with("cfg(") {
                continue;
            }
            if let Some(r) = t.as_table().and_then(|t| t.get("runner")) {
                cfg_runners
                    .entry(key.clone())
                    .or_insert_with(|| (l, r.clone()));
            }
        }
    }
    let mut user = None;
    if !cfg_runners.is_empty() {
        let cfg_lines = (ctx.target_cfg)(explicit.then_some(triple))?;
        let cfg: Vec<cargo_platform::Cfg> =
            cfg_lines.iter().filter_map(|l| l.parse().ok()).collect();
        let matching: Vec<(&String, &(&Layer, Value))> = cfg_runners
            .iter()
            .filter(|(k, _)| cargo_platform::CfgExpr::matches_key(k, &cfg))
            .collect();
        match matching.as_slice() {
            [] => {}
            [(_, (l, v))] => user = Some(from_layer(l, v.clone())?),
            [(a, _), (b, _), ..] => {
                return Err(format!(
                    "several `target.'cfg(..)'.runner` match `{triple}` (`{a}` and `{b}`)"
                ))
            }
        }
    }
    Ok(TargetRunner {
        triple: triple.to_string(),
        string_form,
        user,
    })
}

/// A runner value as cargo reads it: a string split on whitespace, or an
/// array of strings; the program resolved against `root` when it is a path.
fn runner_value(v: &Value, root: &Path, origin: &str) -> Option<UserRunner> {
    let words: Vec<String> = match v {
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Array(a) => a
            .iter()
            .map(|w| w.as_str().map(str::to_string))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let (program, args) = words.split_first()?;
    let is_path = program.contains('/') || (cfg!(windows) && program.contains('\\'));
    Some(UserRunner {
        program: if is_path {
            root.join(program)
        } else {
            PathBuf::from(program)
        },
        args: args.to_vec(),
        origin: origin.to_string(),
    })
}

/// `rustc --print cfg [--target T]` with the rustflags cargo would pass.
pub fn rustc_cfg(target: Option<&str>) -> Result<Vec<String>, String> {
    let rustc = std::env::var_os("RUSTC")
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "rustc".into());
    let mut cmd = std::process::Command::new(&rustc);
    cmd.args(["--print", "cfg"]);
    if let Some(t) = target {
        cmd.args(["--target", t]);
    }
    if let Some(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .ok()
        .filter(|f| !f.is_empty())
    {
        cmd.args(flags.split('\x1f'));
    } else if let Ok(flags) = std::env::var("RUSTFLAGS") {
        cmd.args(flags.split_whitespace());
    }
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{} --print cfg`: {e}", rustc.to_string_lossy()))?;
    if !out.status.success() {
        return Err(format!(
            "`{} --print cfg` failed: {}",
            rustc.to_string_lossy(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The host triple, from `rustc -vV`.
pub fn host_triple() -> Result<String, String> {
    let rustc = std::env::var_os("RUSTC")
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(&rustc)
        .arg("-vV")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{} -vV`: {e}", rustc.to_string_lossy()))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| format!("`{} -vV` named no host", rustc.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "x86_64-unknown-linux-gnu";

    struct World {
        dir: tempfile::TempDir,
        env: Vec<(String, String)>,
    }

    impl World {
        fn new() -> World {
            World {
                dir: tempfile::tempdir().unwrap(),
                env: Vec::new(),
            }
        }

        fn cwd(&self) -> PathBuf {
            self.dir.path().join("ws").join("pkg")
        }

        fn config(&self, dir: &str, name: &str, text: &str) {
            let d = self.dir.path().join(dir).join(".cargo");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(name), text).unwrap();
        }

        fn plan(&self, args: &[&str]) -> Plan {
            std::fs::create_dir_all(self.cwd()).unwrap();
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            let env: Vec<(String, OsString)> = self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), OsString::from(v)))
                .collect();
            let cfg = |t: Option<&str>| -> Result<Vec<String>, String> {
                Ok(match t {
                    None | Some(HOST) => vec!["unix".into(), "target_os=\"linux\"".into()],
                    Some(_) => vec!["windows".into()],
                })
            };
            let host = || Ok(HOST.to_string());
            plan(&Context {
                cwd: self.cwd(),
                cargo_args: &args,
                env: &env,
                target_cfg: &cfg,
                host: &host,
            })
        }

        fn path(&self, rel: &str) -> PathBuf {
            self.dir.path().join(rel)
        }
    }

    fn one(plan: Plan) -> TargetRunner {
        match plan {
            Plan::PerTarget(mut v) if v.len() == 1 => v.remove(0),
            other => panic!("one target: {other:?}"),
        }
    }

    fn user(r: &TargetRunner) -> (PathBuf, Vec<String>) {
        let u = r.user.clone().expect("a user runner");
        (u.program, u.args)
    }

    #[test]
    fn no_runner_anywhere_is_everywhere() {
        let w = World::new();
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(unix)']\nrustflags = []\n",
        );
        assert_eq!(w.plan(&[]), Plan::Everywhere);
    }

    #[test]
    fn cfg_runners_string_and_array_relative_to_their_file() {
        let w = World::new();
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(all())']\nrunner = \"./w.sh --flag\"\n",
        );
        let r = one(w.plan(&[]));
        assert_eq!(r.triple, HOST);
        assert!(!r.string_form, "the triple's key is not set: {r:?}");
        assert_eq!(user(&r), (w.path("ws/./w.sh"), vec!["--flag".to_string()]));
        // A bare name stays a name (looked up in PATH).
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(unix)']\nrunner = [\"w.sh\", \"a b\"]\n",
        );
        assert_eq!(
            user(&one(w.plan(&[]))),
            ("w.sh".into(), vec!["a b".to_string()])
        );
        // Not matching the target: no user runner.
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(windows)']\nrunner = \"w.sh\"\n",
        );
        assert_eq!(one(w.plan(&[])).user, None);
        // Two matching: cargo's error, not ours to paper over.
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(unix)']\nrunner = \"a\"\n[target.'cfg(all())']\nrunner = \"b\"\n",
        );
        assert!(matches!(w.plan(&[]), Plan::None(m) if m.contains("several")));
    }

    #[test]
    fn triple_keys_win_and_set_the_form() {
        let w = World::new();
        w.config(
            "ws",
            "config.toml",
            "[target.'cfg(unix)']\nrunner = \"cfg-runner\"\n",
        );
        w.config(
            "ws/pkg",
            "config.toml",
            &format!("[target.{HOST}]\nrunner = \"sub/t.sh x\"\n"),
        );
        let r = one(w.plan(&[]));
        assert!(r.string_form);
        assert_eq!(user(&r), (w.path("ws/pkg/sub/t.sh"), vec!["x".to_string()]));
        // The deeper file wins over its parent; `config` over `config.toml`.
        w.config(
            "ws/pkg",
            "config",
            &format!("[target.{HOST}]\nrunner = [\"deep\"]\n"),
        );
        let r = one(w.plan(&[]));
        assert!(!r.string_form);
        assert_eq!(user(&r).0, PathBuf::from("deep"));
    }

    #[test]
    fn environment_and_command_line() {
        let mut w = World::new();
        w.config(
            "ws",
            "config.toml",
            &format!("[target.{HOST}]\nrunner = \"file\"\n"),
        );
        w.env.push((env_key(HOST), "./env.sh e".into()));
        let r = one(w.plan(&[]));
        assert!(r.string_form, "the file's form still decides the merge");
        assert_eq!(user(&r), (w.cwd().join("./env.sh"), vec!["e".to_string()]));
        let r = one(w.plan(&[
            "--config",
            &format!("target.{HOST}.runner=\"first\""),
            &format!("--config=target.{HOST}.runner=\"./last\""),
        ]));
        assert_eq!(user(&r).0, w.cwd().join("./last"));
        // A runner set only in the environment merges with either form.
        w.config("ws", "config.toml", "");
        let r = one(w.plan(&[]));
        assert!(!r.string_form);
        assert_eq!(user(&r).0, w.cwd().join("./env.sh"));
    }

    #[test]
    fn targets_from_arguments_environment_and_config() {
        let mut w = World::new();
        w.config(
            "ws",
            "config.toml",
            "[build]\ntarget = \"wasm32-wasip1\"\n[target.'cfg(windows)']\nrunner = \"wine\"\n[target.wasm32-wasip1]\nrunner = \"wasmtime\"\n",
        );
        let r = one(w.plan(&[]));
        assert_eq!(
            (r.triple.as_str(), user(&r).0),
            ("wasm32-wasip1", "wasmtime".into())
        );
        let r = one(w.plan(&["--target", "x86_64-pc-windows-gnu"]));
        assert_eq!(
            (r.triple.as_str(), user(&r).0),
            ("x86_64-pc-windows-gnu", "wine".into())
        );
        let r = one(w.plan(&["--target=specs/my-target.json"]));
        assert_eq!(r.triple, "my-target");
        w.env.push(("CARGO_BUILD_TARGET".into(), HOST.into()));
        let r = one(w.plan(&[]));
        assert_eq!((r.triple.as_str(), r.user), (HOST, None));
        match w.plan(&["--target", "a-b-c", "--target", HOST]) {
            Plan::PerTarget(v) => assert_eq!(v.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cargo_home_is_the_weakest_and_junk_is_no_runner() {
        let mut w = World::new();
        let home = w.path("home/.cargo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("config.toml"),
            format!("[target.{HOST}]\nrunner = \"./home-runner\"\n"),
        )
        .unwrap();
        w.env
            .push(("CARGO_HOME".into(), home.to_string_lossy().into_owned()));
        let r = one(w.plan(&[]));
        assert_eq!(user(&r).0, w.path("home/./home-runner"));
        w.config("ws", "config.toml", "this is [not toml");
        assert_eq!(user(&one(w.plan(&[]))).0, w.path("home/./home-runner"));
        w.config(
            "ws",
            "config.toml",
            &format!("[target.{HOST}]\nrunner = 3\n"),
        );
        assert!(matches!(w.plan(&[]), Plan::None(m) if m.contains("not a command")));
    }
}
