//! `cargo vox check` on a large generated module (~100,000 lines).
//!
//! Not a timed test: it prints wall time (median of several runs) and peak
//! RSS of the release `cargo-vox` binary and compares them with the goals
//! (< 1 s, < 200 MB). It also times the frontend phases through the library
//! so a missed goal says where the time goes.
//!
//! Run with `cargo bench -p cargo-vox --bench check_large`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TARGET_LINES: usize = 100_000;
/// Every `AI_EVERY`-th group gets an `@ai` function and a caller.
const AI_EVERY: usize = 6;
const RUNS: usize = 7;
const GOAL_WALL: Duration = Duration::from_secs(1);
const GOAL_RSS_MB: f64 = 200.0;

/// One group of declarations: a record, a sum type, functions with loops,
/// matches, if/else, lets and record literals; sometimes an `@ai` function
/// and a caller that declares `@uses(net)`.
fn group(out: &mut String, i: usize) {
    let _ = write!(
        out,
        r#"/// A line item of group {i}.
type Item{i} {{
    name: str
    qty: int
    price: float
    tags: list[str]
    note: Option[str]
}}

type State{i} =
    | Idle{i}
    | Busy{i}(load: int)
    | Done{i}(code: int, msg: str)

fn total{i}(items: list[Item{i}]) to float {{
    let mut sum = 0.0
    for it in items {{
        if it.qty > 0 {{
            sum = sum + float(it.qty) * it.price
        }} else {{
            sum = sum - 1.0
        }}
    }}
    return sum
}}

fn describe{i}(s: State{i}) to str {{
    let label = match s {{
        Idle{i} => "idle"
        Busy{i}(l) => "busy " + str(l)
        Done{i}(c, m) => m + str(c)
    }}
    return label
}}

pub fn make{i}(n: int) to Item{i} {{
    let note: Option[str] = if n > 3 {{ Some("big") }} else {{ None }}
    return Item{i} {{ name: "item", qty: n, price: 1.5, tags: ["a", "b"], note: note }}
}}
"#
    );
    if i.is_multiple_of(AI_EVERY) {
        let _ = write!(
            out,
            r#"
/// Extract an item of group {i}.
@ai(structured_output = Item{i}, max_iterations = 2, model = "gpt-4o-mini")
@uses(net)
fn extract{i}(text: str) to Item{i} {{
    return make{i}(len(text))
}}

@uses(net)
fn pipeline{i}(text: str) to float {{
    let item = extract{i}(text)
    return total{i}([item, make{i}(2)])
}}
"#
        );
    }
    out.push('\n');
}

pub(crate) fn generate() -> (String, usize) {
    let mut src = String::with_capacity(TARGET_LINES * 32);
    let mut groups = 0;
    while src.lines().count() < TARGET_LINES {
        // Append in batches; counting lines each time would be quadratic.
        for _ in 0..200 {
            group(&mut src, groups);
            groups += 1;
        }
    }
    (src, groups)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The release binary; built when missing.
pub(crate) fn cargo_vox_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let target = if target.is_relative() {
        workspace_root().join(target)
    } else {
        target
    };
    let bin = target
        .join("release")
        .join(format!("cargo-vox{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        eprintln!("building the release cargo-vox binary…");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "-p", "cargo-vox"])
            .current_dir(workspace_root())
            .status()
            .expect("cannot run cargo");
        assert!(
            status.success(),
            "cargo build --release -p cargo-vox failed"
        );
    }
    bin
}

/// Peak resident set size of any waited-for child so far, in MB.
fn children_peak_rss_mb() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    // ru_maxrss is in kilobytes on Linux.
    usage.ru_maxrss as f64 / 1024.0
}

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let (src, groups) = generate();
    let lines = src.lines().count();
    // A new private directory (not a predictable name in the shared temp dir).
    let tmp = tempfile::Builder::new()
        .prefix("vox-check-large-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().to_path_buf();
    let file = dir.join("large.vox");
    std::fs::write(&file, &src).unwrap();
    println!(
        "generated {lines} lines, {} KiB: {groups} records, {groups} sum types, {} functions, {} @ai functions",
        src.len() / 1024,
        groups * 3 + 2 * groups.div_ceil(AI_EVERY),
        groups.div_ceil(AI_EVERY)
    );

    // The module must be clean, or we would be timing error reporting.
    let mut sources = vox_codegen::SourceMap::new();
    sources.add(vox_codegen::SourceFile::new("large.vox", src.clone()));
    let t = Instant::now();
    let parsed = vox_codegen::parse(&sources);
    let parse_time = t.elapsed();
    let parse_clean = parsed.diagnostics().is_empty();
    drop(parsed);
    let t = Instant::now();
    let checked = vox_codegen::check(sources);
    let whole_time = t.elapsed();
    if !checked.diagnostics().is_empty() || !parse_clean {
        for d in checked.diagnostics().iter().take(10) {
            eprintln!(
                "{}",
                vox_codegen::diagnostic::render(d, checked.sources(), Default::default())
            );
        }
        panic!(
            "the generated module is not clean: {} diagnostics",
            checked.diagnostics().len()
        );
    }
    println!(
        "library (in-process): lex+parse {:.1} ms, whole frontend {:.1} ms (so check ≈ {:.1} ms)",
        parse_time.as_secs_f64() * 1e3,
        whole_time.as_secs_f64() * 1e3,
        whole_time.saturating_sub(parse_time).as_secs_f64() * 1e3
    );
    drop(checked);

    let bin = cargo_vox_binary();
    let mut walls = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = Command::new(&bin)
            .args(["check", "--json"])
            .arg(&dir)
            .output()
            .expect("cannot run cargo-vox");
        walls.push(t.elapsed());
        assert!(
            out.status.success(),
            "cargo-vox check failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("\"ok\":true") && stdout.contains("\"error_count\":0"),
            "unexpected envelope: {stdout}"
        );
    }
    let wall = median(walls.clone());
    let rss = children_peak_rss_mb();
    let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "cargo-vox check --json ({RUNS} runs): median {:.1} ms (min {:.1}, max {:.1}); goal < {} ms: {}",
        wall.as_secs_f64() * 1e3,
        walls.iter().min().unwrap().as_secs_f64() * 1e3,
        walls.iter().max().unwrap().as_secs_f64() * 1e3,
        GOAL_WALL.as_millis(),
        verdict(wall < GOAL_WALL)
    );
    println!(
        "peak RSS of cargo-vox: {rss:.1} MB; goal < {GOAL_RSS_MB} MB: {}",
        verdict(rss < GOAL_RSS_MB)
    );
    drop(tmp);
}
