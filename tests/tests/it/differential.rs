//! Differential test of the Vox compiler: seeded, well-typed Vox modules
//! (see `vox_e2e::vox_gen`) must check clean, and then their generated Rust
//! must compile under `#![deny(warnings)]` and pass the generated `@test`s,
//! which assert values computed by the generator's own evaluator.
//!
//! Modules are built in batches: each batch is one scratch crate under
//! `target/vox-differential/` holding every module as its own `pub mod`,
//! built by real cargo into the shared target directory (vox-runtime builds
//! once). Failures are attributed to modules by the file rustc names or by
//! the failing test's module path; a module that breaks compilation is set
//! aside and the rest of the batch is built again, so one bad module does
//! not hide the others.
//!
//! - CI: `cargo test -p vox-e2e --test it differential::` runs [`CI_SEEDS`].
//! - Sweep: `cargo test -p vox-e2e --test it differential:: -- --ignored`
//!   runs `VOX_DIFF_SEEDS` seeds (default 200) from `VOX_DIFF_FIRST`
//!   (default 1000), in batches of `VOX_DIFF_BATCH` (default 25), and
//!   prints every failing seed with its first errors.
//! - One seed: `VOX_DIFF_SEED=N` with the sweep prints the module's Vox
//!   source and runs only it.
//! - `VOX_DIFF_WITHOUT=empty_literals,…` / `VOX_DIFF_WITH=…` switch
//!   generator features (see `vox_gen::Features`) for the sweep.
//! - `VOX_DIFF_CLIPPY=1`: also run clippy (the crates deny `clippy::all`).
//! - `shrink` (ignored): `VOX_DIFF_SHRINK=<seed>` drops functions and
//!   statements of a failing module while it fails the same way.
//! - `one_file` (ignored) builds a hand-written module (`VOX_DIFF_FILE`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use vox_codegen::diagnostic::{render, RenderOptions};
use vox_codegen::emit::EmitOptions;
use vox_codegen::{SourceFile, SourceMap};
use vox_e2e::vox_gen::{generate, Features};
use vox_e2e::{cargo, offline, run, target_dir, workspace_root, BUILD};

/// The seeds every CI run checks, and how many modules share one crate.
const CI_SEEDS: std::ops::Range<u64> = 0..60;
const CI_BATCH: usize = 15;
/// Seeds that once failed, checked by every CI run besides [`CI_SEEDS`]:
/// 30186, a dropped duplicate map entry left its reads marked, so a
/// parameter read only there was declared used and checked as unused;
/// 40115, `insert`/`remove` wrote `()` for the value type of a `[:]` that
/// a later comparison decided, and rustc refused the program check passed.
const REGRESSION_SEEDS: [u64; 2] = [30186, 40115];
/// How many of the CI modules with `fn main` also go through the script lane
/// (each is a binary of its own: linking dominates).
const CI_SCRIPTS: usize = 4;

/// What went wrong with one module.
#[derive(Debug, Default)]
struct Failure {
    /// Rendered Vox diagnostics: the checker rejected (or warned about) a well-typed module.
    check: Vec<String>,
    /// rustc's errors (including warnings denied by `#![deny(warnings)]`) in this module.
    rustc: Vec<String>,
    /// Failing `@test`s, with their output.
    tests: Vec<String>,
}

impl Failure {
    fn is_empty(&self) -> bool {
        self.check.is_empty() && self.rustc.is_empty() && self.tests.is_empty()
    }
}

struct Emitted {
    seed: u64,
    vox: String,
    rust: String,
}

/// Checks `vox` as the module `m_<seed>.vox` and emits its Rust (for the
/// script lane when `script`); Err(rendered diagnostics) when the check is
/// not clean.
fn emit_checked(seed: u64, vox: &str, script: bool) -> Result<String, Vec<String>> {
    let name = format!("m_{seed}.vox");
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new(name.clone(), vox.to_string()));
    let checked = vox_codegen::check(sources);
    if !checked.diagnostics().is_empty() {
        return Err(checked
            .diagnostics()
            .iter()
            .map(|d| render(d, checked.sources(), RenderOptions { color: false }))
            .collect());
    }
    Ok(checked.emit(&EmitOptions {
        script,
        standalone: script,
        source_names: vec![name],
        cassettes: None,
    }))
}

/// Checks and emits the module for `seed`; Err(diagnostics) when the check is not clean.
fn check_and_emit(seed: u64, features: &Features) -> Result<Emitted, (String, Vec<String>)> {
    let vox = generate(seed, features).render();
    match emit_checked(seed, &vox, false) {
        Ok(rust) => Ok(Emitted { seed, vox, rust }),
        Err(diags) => Err((vox, diags)),
    }
}

/// `[package]` and `[dependencies]` of the scratch crate `tag`, `extra`
/// between them.
fn scratch_manifest(tag: &str, extra: &str) -> String {
    let runtime = workspace_root().join("vox-runtime");
    let runtime = runtime.to_string_lossy().replace('\\', "/");
    format!(
        "[package]\nname = \"vox-differential-{tag}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n{extra}\n[workspace]\n\n[dependencies]\nvox-runtime = {{ path = \"{runtime}\" }}\n"
    )
}

/// The scratch crate `target/vox-differential/<tag>/` with `manifest`, the
/// soundness fixture's Cargo.lock and an empty `src/`; returns its root.
fn scratch_crate(tag: &str, manifest: &str) -> PathBuf {
    let dir = target_dir().join("vox-differential").join(tag);
    let src = dir.join("src");
    if src.exists() {
        std::fs::remove_dir_all(&src).expect("clear the scratch crate's src/");
    }
    std::fs::create_dir_all(&src).expect("create the scratch crate");
    write_if_changed(&dir.join("Cargo.toml"), manifest);
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(
            workspace_root().join("fixtures/soundness/Cargo.lock"),
            &lock,
        )
        .expect("copy the soundness fixture's Cargo.lock");
    }
    dir
}

/// Writes a scratch crate with `modules` and returns its root.
fn write_crate(tag: &str, modules: &[&Emitted]) -> PathBuf {
    let dir = scratch_crate(tag, &scratch_manifest(tag, "\n[lib]\ndoctest = false\n"));
    let src = dir.join("src");
    let mut lib = String::from(
        "//! Generated by the differential test: one module per seed.\n#![deny(warnings)]\n#![deny(clippy::all)]\n\n",
    );
    for m in modules {
        let _ = writeln!(lib, "pub mod m_{};", m.seed);
        std::fs::write(src.join(format!("m_{}.rs", m.seed)), &m.rust).expect("write module");
        std::fs::write(src.join(format!("m_{}.vox", m.seed)), &m.vox).expect("write source");
    }
    std::fs::write(src.join("lib.rs"), lib).expect("write lib.rs");
    dir
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write");
    }
}

/// The seed of a module path `src/m_<seed>.rs` or test name `m_<seed>::…`.
fn seed_in(text: &str) -> Option<u64> {
    let at = text.find("m_")?;
    let digits: String = text[at + 2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Builds and tests `modules` in one crate; failures per seed. Modules that
/// break compilation are removed and the rest built again.
fn build_batch(tag: &str, modules: Vec<Emitted>, out: &mut BTreeMap<u64, Failure>) {
    let mut live: Vec<&Emitted> = modules.iter().collect();
    while !live.is_empty() {
        let dir = write_crate(tag, &live);
        let mut cmd = cargo(&dir);
        if std::env::var_os("VOX_DIFF_CLIPPY").is_some() {
            // Clippy first (the crate denies clippy::all); the tests run only
            // once it is clean.
            let lint = run(
                cargo(&dir).args([
                    "clippy",
                    "--offline",
                    "--lib",
                    "--tests",
                    "--message-format=short",
                ]),
                BUILD,
            );
            if !lint.status.success() {
                cmd = cargo(&dir);
                cmd.arg("clippy");
            }
        }
        if cmd.get_args().next().is_none() {
            cmd.args([
                "test",
                "--offline",
                "--lib",
                "--message-format=short",
                "--",
                "--test-threads=2",
            ]);
        } else {
            cmd.args(["--offline", "--lib", "--tests", "--message-format=short"]);
        }
        let r = run(offline(&mut cmd), BUILD);
        if r.status.success() {
            return;
        }
        // Not a finding: the runtime itself is broken (or mid-edit).
        assert!(
            !r.stderr.contains("could not compile `vox-runtime`"),
            "vox-runtime does not compile; nothing was tested\n{}",
            r.dump()
        );
        // Compile errors: `src/m_<seed>.rs:L:C: error…` lines (warnings are
        // denied, so every finding is an error).
        let mut broken: Vec<u64> = Vec::new();
        let mut unattributed = Vec::new();
        for line in r.stderr.lines() {
            let Some(rest) = line.strip_prefix("src/") else {
                if line.starts_with("error") && !line.starts_with("error: could not compile") {
                    unattributed.push(line.to_string());
                }
                continue;
            };
            if !(rest.contains(": error") || rest.contains(": warning")) {
                continue;
            }
            let Some(seed) = seed_in(rest) else { continue };
            out.entry(seed).or_default().rustc.push(line.to_string());
            if !broken.contains(&seed) {
                broken.push(seed);
            }
        }
        if !broken.is_empty() {
            live.iter()
                .filter(|m| broken.contains(&m.seed))
                .for_each(|m| keep_failed(m));
            live.retain(|m| !broken.contains(&m.seed));
            continue;
        }
        // Test failures: `test m_<seed>::vox_tests::name ... FAILED`.
        let mut any = false;
        for line in r.stdout.lines() {
            if let Some(name) = line
                .strip_prefix("test ")
                .and_then(|l| l.strip_suffix(" ... FAILED"))
            {
                if let Some(seed) = seed_in(name) {
                    live.iter()
                        .filter(|m| m.seed == seed)
                        .for_each(|m| keep_failed(m));
                    let detail = failure_detail(&r.stdout, name);
                    out.entry(seed).or_default().tests.push(detail);
                    any = true;
                }
            }
        }
        if any {
            return;
        }
        // Neither attributed: build each module alone to find the culprit.
        if live.len() == 1 {
            let seed = live[0].seed;
            let f = out.entry(seed).or_default();
            f.rustc.extend(unattributed);
            if f.rustc.is_empty() {
                f.rustc.push(r.dump());
            }
            return;
        }
        let singles: Vec<Emitted> = live
            .iter()
            .map(|m| Emitted {
                seed: m.seed,
                vox: m.vox.clone(),
                rust: m.rust.clone(),
            })
            .collect();
        for m in singles {
            build_batch(&format!("{tag}-single"), vec![m], out);
        }
        return;
    }
}

/// Keeps a failing module's Vox source and Rust under `target/vox-differential/failed/`.
fn keep_failed(m: &Emitted) {
    let dir = target_dir().join("vox-differential").join("failed");
    std::fs::create_dir_all(&dir).expect("create failed/");
    std::fs::write(dir.join(format!("m_{}.vox", m.seed)), &m.vox).expect("write");
    std::fs::write(dir.join(format!("m_{}.rs", m.seed)), &m.rust).expect("write");
}

/// The `---- name stdout ----` section of a failing test.
fn failure_detail(stdout: &str, name: &str) -> String {
    let head = format!("---- {name} stdout ----");
    let body: String = stdout
        .split(&head)
        .nth(1)
        .map(|rest| {
            rest.lines()
                .skip(1)
                .take_while(|l| !l.starts_with("---- ") && !l.starts_with("failures:"))
                .take(12)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    format!("{name}: {body}")
}

/// Runs `f` on a thread with a main-thread-sized stack (the generator, the
/// evaluator and the frontend recurse over the program; the frontend runs on
/// a main thread in `cargo vox` and build scripts).
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("spawn the differential thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// A module with `fn main`, emitted for the script lane, and what its main prints.
struct Script {
    seed: u64,
    vox: String,
    rust: String,
    expected: String,
    /// Whether main must stop with a run-time error after printing `expected`.
    fails: bool,
}

/// The script-lane form of `seed`'s module, if it has a `fn main` the
/// evaluator could run (modules that do not check clean are the other test's).
fn script_emit(seed: u64, features: &Features) -> Option<Script> {
    let module = generate(seed, features);
    let (expected, fails) = module.main_output()?;
    let vox = module.render();
    let rust = emit_checked(seed, &vox, true).ok()?;
    Some(Script {
        seed,
        vox,
        rust,
        expected,
        fails,
    })
}

/// Builds each script as its own binary (as `cargo vox run FILE.vox` does)
/// and compares what it prints with the evaluator's output.
fn script_batch(tag: &str, scripts: &[Script], out: &mut BTreeMap<u64, Failure>) {
    let mut live: Vec<&Script> = scripts.iter().collect();
    while !live.is_empty() {
        let mut manifest = scratch_manifest(tag, "autobins = false\n");
        // Binaries are named by slot, not seed, so that a sweep leaves at
        // most one batch of them in the target directory.
        for (slot, s) in live.iter().enumerate() {
            let _ = write!(
                manifest,
                "\n[[bin]]\nname = \"vd-{tag}-{slot}\"\npath = \"src/m_{}.rs\"\ntest = false\n",
                s.seed
            );
        }
        let dir = scratch_crate(tag, &manifest);
        let src = dir.join("src");
        for s in &live {
            std::fs::write(src.join(format!("m_{}.rs", s.seed)), &s.rust).expect("write script");
            std::fs::write(src.join(format!("m_{}.vox", s.seed)), &s.vox).expect("write source");
        }
        let r = run(
            cargo(&dir).args(["build", "--offline", "--bins", "--message-format=short"]),
            BUILD,
        );
        if !r.status.success() {
            assert!(
                !r.stderr.contains("could not compile `vox-runtime`"),
                "vox-runtime does not compile; nothing was tested\n{}",
                r.dump()
            );
            let mut broken = Vec::new();
            for line in r.stderr.lines() {
                let Some(rest) = line.strip_prefix("src/") else {
                    continue;
                };
                if !rest.contains(": error") {
                    continue;
                }
                if let Some(seed) = seed_in(rest) {
                    out.entry(seed)
                        .or_default()
                        .rustc
                        .push(format!("script: {line}"));
                    if !broken.contains(&seed) {
                        broken.push(seed);
                    }
                }
            }
            if broken.is_empty() {
                for s in &live {
                    out.entry(s.seed).or_default().rustc.push(r.dump());
                }
                return;
            }
            live.retain(|s| !broken.contains(&s.seed));
            continue;
        }
        for (slot, s) in live.iter().enumerate() {
            let exe = target_dir()
                .join("debug")
                .join(format!("vd-{tag}-{slot}{}", std::env::consts::EXE_SUFFIX));
            let ran = run(offline(&mut Command::new(&exe)), BUILD);
            if ran.status.success() == s.fails || ran.stdout != s.expected {
                let script = Emitted {
                    seed: s.seed,
                    vox: s.vox.clone(),
                    rust: s.rust.clone(),
                };
                keep_failed(&script);
                out.entry(s.seed).or_default().tests.push(format!(
                    "script main: expected stdout {:?}{}, got {:?} ({}; stderr {:?})",
                    s.expected,
                    if s.fails {
                        " then a run-time error"
                    } else {
                        ""
                    },
                    ran.stdout,
                    ran.status,
                    ran.stderr.lines().last().unwrap_or("")
                ));
            }
        }
        return;
    }
}

/// Runs `seeds` in batches; returns the failures per seed.
fn differential(
    seeds: &[u64],
    batch: usize,
    tag: &str,
    features: &Features,
) -> BTreeMap<u64, Failure> {
    let mut failures: BTreeMap<u64, Failure> = BTreeMap::new();
    let mut emitted = Vec::new();
    for &seed in seeds {
        match check_and_emit(seed, features) {
            Ok(e) => emitted.push(e),
            Err((vox, diags)) => {
                let f = failures.entry(seed).or_default();
                f.check = diags;
                let dir = target_dir().join("vox-differential").join("rejected");
                std::fs::create_dir_all(&dir).expect("create rejected/");
                std::fs::write(dir.join(format!("m_{seed}.vox")), vox).expect("write");
            }
        }
    }
    let mut n = 0;
    while !emitted.is_empty() {
        let rest = emitted.split_off(batch.min(emitted.len()));
        eprintln!("differential: {tag} batch {n}");
        build_batch(tag, emitted, &mut failures);
        emitted = rest;
        n += 1;
    }
    // The script lane: modules with `fn main`, each a binary whose output
    // must be what the evaluator printed.
    let limit = if tag == "ci" { CI_SCRIPTS } else { usize::MAX };
    let scripts: Vec<Script> = seeds
        .iter()
        .filter_map(|&seed| script_emit(seed, features))
        .take(limit)
        .collect();
    for chunk in scripts.chunks(batch) {
        script_batch(&format!("{tag}-script"), chunk, &mut failures);
    }
    failures.retain(|_, f| !f.is_empty());
    failures
}

/// The kind of a finding, for the summary: the first error's code.
fn kind_of(f: &Failure) -> String {
    let code = |line: &str| {
        line.find("error[")
            .map(|at| {
                let rest = &line[at + 6..];
                rest[..rest.find(']').unwrap_or(rest.len())].to_string()
            })
            .or_else(|| {
                line.find("error: ")
                    .map(|at| line[at + 7..].chars().take(60).collect())
            })
    };
    if let Some(d) = f.check.first() {
        return format!("check {}", code(d).unwrap_or_default());
    }
    if let Some(e) = f.rustc.first() {
        return format!("rustc {}", code(e).unwrap_or_else(|| "(other)".into()));
    }
    "a generated @test failed".into()
}

fn report(failures: &BTreeMap<u64, Failure>, tag: &str) -> String {
    let mut kinds: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (seed, f) in failures {
        kinds.entry(kind_of(f)).or_default().push(*seed);
    }
    let mut out = String::new();
    for (kind, seeds) in &kinds {
        let _ = writeln!(out, "{kind}: {} module(s), seeds {seeds:?}", seeds.len());
    }
    for (seed, f) in failures {
        let _ = writeln!(
            out,
            "== seed {seed} ({tag}): target/vox-differential/failed/m_{seed}.vox and .rs (rejected/m_{seed}.vox if the check failed)"
        );
        for d in f.check.iter().take(3) {
            let _ = writeln!(
                out,
                "  check: {}",
                d.lines().take(4).collect::<Vec<_>>().join("\n         ")
            );
        }
        for e in f.rustc.iter().take(4) {
            let _ = writeln!(out, "  rustc: {e}");
        }
        for t in f.tests.iter().take(3) {
            let _ = writeln!(out, "  test:  {t}");
        }
    }
    out
}

/// `VOX_DIFF_WITHOUT=empty_literals,tricky_names` turns generator features
/// off (to look past one kind of finding), `VOX_DIFF_WITH=…` turns them on.
fn features_from_env() -> Features {
    let mut f = Features::default();
    for (var, on) in [("VOX_DIFF_WITHOUT", false), ("VOX_DIFF_WITH", true)] {
        let Ok(list) = std::env::var(var) else {
            continue;
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let flag = match name {
                "tricky_names" => &mut f.tricky_names,
                "empty_literals" => &mut f.empty_literals,
                "deep_recursion" => &mut f.deep_recursion,
                "net" => &mut f.net,
                "main_fn" => &mut f.main_fn,
                "value_statements" => &mut f.value_statements,
                "dead_stores" => &mut f.dead_stores,
                "non_camel_names" => &mut f.non_camel_names,
                "local_shadows_fn" => &mut f.local_shadows_fn,
                "call_tests" => &mut f.call_tests,
                "paren_heads" => &mut f.paren_heads,
                "decimal" => &mut f.decimal,
                "patterns" => &mut f.patterns,
                "loops" => &mut f.loops,
                "builtins" => &mut f.builtins,
                "maps" => &mut f.maps,
                other => panic!("{var}: unknown generator feature `{other}`"),
            };
            *flag = on;
        }
    }
    f
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_modules_check_compile_and_pass_their_tests() {
    let started = Instant::now();
    let seeds: Vec<u64> = CI_SEEDS.chain(REGRESSION_SEEDS).collect();
    let failures = on_big_stack({
        let seeds = seeds.clone();
        move || differential(&seeds, CI_BATCH, "ci", &Features::default())
    });
    eprintln!(
        "differential: {} seeds in {:.1?}, {} failing",
        seeds.len(),
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} generated modules failed:\n{}",
        failures.len(),
        seeds.len(),
        report(&failures, "ci")
    );
}

#[test]
#[ignore = "the larger sweep: run with --ignored (VOX_DIFF_SEEDS, VOX_DIFF_FIRST, VOX_DIFF_BATCH)"]
fn sweep() {
    let started = Instant::now();
    let seeds: Vec<u64> = match std::env::var("VOX_DIFF_SEED") {
        Ok(one) => {
            let seed: u64 = one.parse().expect("VOX_DIFF_SEED is a number");
            eprintln!("{}", generate(seed, &features_from_env()).render());
            vec![seed]
        }
        Err(_) => {
            let first = env_u64("VOX_DIFF_FIRST", 1000);
            (first..first + env_u64("VOX_DIFF_SEEDS", 200)).collect()
        }
    };
    let batch = env_u64("VOX_DIFF_BATCH", 25) as usize;
    let features = features_from_env();
    let failures = on_big_stack({
        let seeds = seeds.clone();
        move || differential(&seeds, batch, "sweep", &features)
    });
    eprintln!(
        "differential sweep: {} seeds in {:.1?}, {} failing",
        seeds.len(),
        started.elapsed(),
        failures.len()
    );
    let text = report(&failures, "sweep");
    let path = target_dir()
        .join("vox-differential")
        .join("sweep-report.txt");
    std::fs::write(&path, &text).expect("write the sweep report");
    assert!(
        failures.is_empty(),
        "{} of {} generated modules failed (also in {}):\n{text}",
        failures.len(),
        seeds.len(),
        path.display()
    );
}

/// The frontend alone over many more seeds (no cargo): every generated
/// module must check clean.
#[test]
fn generated_modules_check_clean() {
    let mut bad = Vec::new();
    for seed in 0..env_u64("VOX_DIFF_CHECK_SEEDS", 400) {
        if let Err((vox, diags)) = check_and_emit(seed, &Features::default()) {
            let dir = target_dir().join("vox-differential").join("rejected");
            std::fs::create_dir_all(&dir).expect("create rejected/");
            std::fs::write(dir.join(format!("m_{seed}.vox")), vox).expect("write");
            bad.push(format!("== seed {seed}\n{}", diags.join("\n")));
        }
    }
    assert!(
        bad.is_empty(),
        "{} modules did not check clean:\n{}",
        bad.len(),
        bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Checks, builds and tests one hand-written module the way the generated
/// ones are: `VOX_DIFF_FILE=path/to/file.vox cargo test -p vox-e2e --test
/// it differential::one_file -- --ignored` (for minimizing a finding).
#[test]
#[ignore = "needs VOX_DIFF_FILE"]
fn one_file() {
    let Ok(path) = std::env::var("VOX_DIFF_FILE") else {
        return;
    };
    // Relative to the workspace root (tests run in tests/).
    let vox = std::fs::read_to_string(workspace_root().join(&path)).expect("read VOX_DIFF_FILE");
    let rust =
        emit_checked(0, &vox, false).unwrap_or_else(|diags| panic!("check:\n{}", diags.join("\n")));
    let mut failures = BTreeMap::new();
    build_batch("file", vec![Emitted { seed: 0, vox, rust }], &mut failures);
    failures.retain(|_, f| !f.is_empty());
    assert!(failures.is_empty(), "{}", report(&failures, "file"));
}

/// The kind of failure `vox` has as a module (None: it checks unclean, or it
/// builds and passes).
fn failure_kind(seed: u64, vox: &str) -> Option<String> {
    let rust = emit_checked(seed, vox, false).ok()?;
    let mut failures = BTreeMap::new();
    let m = Emitted {
        seed,
        vox: vox.to_string(),
        rust,
    };
    build_batch("shrink", vec![m], &mut failures);
    failures.get(&seed).filter(|f| !f.is_empty()).map(kind_of)
}

/// Shrinks a failing seed's module: drops functions (tests first), then
/// top-level statements, keeping each removal that still checks clean and
/// fails the same way. `VOX_DIFF_SHRINK=<seed> cargo test -p vox-e2e --test
/// it differential::shrink -- --ignored` (with the sweep's VOX_DIFF_WITHOUT/WITH);
/// writes `target/vox-differential/failed/m_<seed>.min.vox`. Each attempt is
/// one cargo build: minutes, not seconds.
#[test]
#[ignore = "needs VOX_DIFF_SHRINK=<seed>"]
fn shrink() {
    let Some(seed) = std::env::var("VOX_DIFF_SHRINK")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return;
    };
    let features = features_from_env();
    let mut m = generate(seed, &features);
    let want = on_big_stack({
        let vox = m.render();
        move || failure_kind(seed, &vox)
    })
    .unwrap_or_else(|| panic!("seed {seed} does not fail"));
    let still =
        |m: &vox_e2e::vox_gen::Module| failure_kind(seed, &m.render()).as_ref() == Some(&want);
    for fi in (0..m.fns.len()).rev() {
        m.hidden.push(fi);
        if !still(&m) {
            m.hidden.pop();
        }
    }
    for fi in 0..m.fns.len() {
        if m.hidden.contains(&fi) {
            continue;
        }
        let mut at = 0;
        while at < m.fns[fi].body.stmts.len() {
            let removed = m.fns[fi].body.stmts.remove(at);
            if !still(&m) {
                m.fns[fi].body.stmts.insert(at, removed);
                at += 1;
            }
        }
    }
    let text = m.render();
    let dir = target_dir().join("vox-differential").join("failed");
    std::fs::create_dir_all(&dir).expect("create failed/");
    std::fs::write(dir.join(format!("m_{seed}.min.vox")), &text).expect("write");
    eprintln!("seed {seed} ({want}), shrunk:\n{text}");
}
