//! How long does rustc take over the code vox-build generates?
//!
//! Generates a module with 200 record types, 100 `@ai` functions and 100
//! pure functions, puts it in a fresh scratch crate (build.rs calls
//! `vox_build::compile()`, src/lib.rs is `vox_runtime::include_vox!()`,
//! path dependencies on this workspace), builds the dependencies once, then
//! times rebuilds of the crate alone:
//!
//! - "touch lib.rs": the crate is recompiled, the build script is not rerun;
//! - "edit .vox": a comment is appended to the `.vox` file, so the build
//!   script reruns and the crate is recompiled.
//!
//! in the dev and release profiles, for variants of the module (all of it,
//! without the `@ai` functions, types only) to show what dominates, and a
//! floor for the `@ai` functions: the module without them plus, in Rust,
//! the `serde_json::from_str` of each of their return types, which any
//! typed client of those functions compiles too.
//! Run with `cargo bench -p vox-codegen --bench generated_compile_time`
//! (`VOX_BENCH_RUNS=N` repetitions, default 3); the scratch crates and
//! their target directory live under `target/bench-work/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RECORDS: usize = 200;
const AI_FUNCTIONS: usize = 100;
const PURE_FUNCTIONS: usize = 100;

#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    ai: bool,
    pure: bool,
    /// Instead of the `@ai` functions, what any typed client of the same
    /// 100 functions compiles at least: one hand-written
    /// `serde_json::from_str::<RecN>` per return type.
    serde_floor: bool,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        name: "full",
        ai: true,
        pure: true,
        serde_floor: false,
    },
    Variant {
        name: "serde-floor",
        ai: false,
        pure: true,
        serde_floor: true,
    },
    Variant {
        name: "no-ai",
        ai: false,
        pure: true,
        serde_floor: false,
    },
    Variant {
        name: "types-only",
        ai: false,
        pure: false,
        serde_floor: false,
    },
];

fn main() {
    let codegen_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let workspace = codegen_dir.parent().unwrap().to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let work = target.join("bench-work").join("generated-compile");
    let runs: usize = std::env::var("VOX_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let shared_target = work.join("target");

    println!(
        "module: {RECORDS} records, {AI_FUNCTIONS} @ai functions, {PURE_FUNCTIONS} pure functions; median of {runs} rebuild(s)"
    );
    for profile in ["dev", "release"] {
        for v in VARIANTS {
            let krate = work.join(v.name);
            let vox = module(v);
            scratch_crate(&krate, &workspace, v, &vox);
            let build = || {
                let start = Instant::now();
                let status = Command::new(&cargo)
                    .args(["build", "--quiet", "--profile", profile, "--manifest-path"])
                    .arg(krate.join("Cargo.toml"))
                    .arg("--target-dir")
                    .arg(&shared_target)
                    .status()
                    .expect("cargo runs");
                assert!(status.success(), "{} ({profile}) failed to build", v.name);
                start.elapsed()
            };
            // Warm-up: dependencies, the build script, and the crate once.
            let first = build();
            let touch: Vec<Duration> = (0..runs)
                .map(|_| {
                    touch_file(&krate.join("src/lib.rs"));
                    build()
                })
                .collect();
            let edit: Vec<Duration> = (0..runs)
                .map(|i| {
                    let text = format!("{vox}// edit {i} {:?}\n", Instant::now());
                    std::fs::write(krate.join("vox/gen.vox"), text).unwrap();
                    build()
                })
                .collect();
            let generated = find_generated(&shared_target, profile, v.name);
            println!(
                "{profile:>7} {:<11}  touch lib.rs {:>6.2} s   edit .vox {:>6.2} s   (first build incl. deps {:.1} s; generated {} lines)",
                v.name,
                median(&touch).as_secs_f64(),
                median(&edit).as_secs_f64(),
                first.as_secs_f64(),
                generated.map_or(0, |g| g.lines().count()),
            );
        }
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    t[t.len() / 2]
}

/// Bumps a file's mtime by rewriting it (cargo compares mtimes).
fn touch_file(path: &Path) {
    let text = std::fs::read(path).unwrap();
    std::thread::sleep(Duration::from_millis(10));
    std::fs::write(path, text).unwrap();
}

fn find_generated(target: &Path, profile: &str, variant: &str) -> Option<String> {
    let dir = if profile == "dev" { "debug" } else { profile };
    let build = target.join(dir).join("build");
    let prefix = format!("vox-bench-{variant}-");
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in std::fs::read_dir(build).ok()? {
        let p = e.ok()?.path();
        let file = p.join("out/vox_generated.rs");
        let named = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&prefix));
        if let (true, Ok(meta)) = (named, std::fs::metadata(&file)) {
            let m = meta.modified().ok()?;
            if newest.as_ref().is_none_or(|(t, _)| m > *t) {
                newest = Some((m, file));
            }
        }
    }
    std::fs::read_to_string(newest?.1).ok()
}

fn scratch_crate(dir: &Path, workspace: &Path, v: Variant, vox: &str) {
    let path = |p: &Path| p.to_string_lossy().replace('\\', "/");
    let manifest = format!(
        "[package]\nname = \"vox-bench-{}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\nvox-runtime = {{ path = \"{}\" }}\n\n\
         [build-dependencies]\nvox-build = {{ path = \"{}\" }}\n",
        v.name,
        path(&workspace.join("vox-runtime")),
        path(&workspace.join("vox-build")),
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(
        &dir.join("build.rs"),
        "fn main() {\n    vox_build::compile().unwrap();\n}\n",
    );
    let mut lib = String::from("vox_runtime::include_vox!();\n");
    if v.serde_floor {
        for k in 0..AI_FUNCTIONS {
            let _ = writeln!(
                lib,
                "pub fn parse{k}(text: &str) -> Result<Rec{}, vox_runtime::serde_json::Error> {{ vox_runtime::serde_json::from_str(text) }}",
                2 * k
            );
        }
    }
    write_if_changed(&dir.join("src/lib.rs"), &lib);
    write_if_changed(&dir.join("vox/gen.vox"), vox);
    // Resolve to the workspace's versions (and skip an index update).
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        let _ = std::fs::copy(workspace.join("Cargo.lock"), lock);
    }
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The generated module of a variant.
fn module(v: Variant) -> String {
    let mut s = String::from("// Generated by the vox-codegen compile-time benchmark.\n\n");
    for i in 0..RECORDS {
        // Records refer to a few earlier ones (schemas stay shallow).
        let link = if i >= 20 {
            format!("\n    related: list[Rec{}]", i % 20)
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "/// Record {i}.\ntype Rec{i} {{\n    id: int\n    name: str\n    score: float\n    \
             active: bool\n    tags: list[str]\n    note: Option[str]{link}\n}}\n\n"
        );
    }
    if v.pure {
        for i in 0..PURE_FUNCTIONS {
            let _ = write!(
                s,
                "fn score{i}(r: Rec{i}, bonus: int) to float {{\n    let mut total = r.score\n    \
                 for t in r.tags {{\n        if len(t) > 3 {{\n            total = total + 1.0\n        }}\n    }}\n    \
                 let extra = match r.note {{\n        Some(n) => float(len(n))\n        None => 0.0\n    }}\n    \
                 total + extra + float(bonus)\n}}\n\n"
            );
        }
    }
    if v.ai {
        for k in 0..AI_FUNCTIONS {
            let i = 2 * k;
            let related = if i >= 20 { ", related: []" } else { "" };
            let _ = write!(
                s,
                "/// Extract record {i} from text.\n@ai(structured_output = Rec{i}, max_iterations = 2)\n@uses(net)\n\
                 fn extract{k}(text: str) to Rec{i} {{\n    \
                 Rec{i} {{ id: {i}, name: text, score: 0.5, active: true, tags: [], note: None{related} }}\n}}\n\n"
            );
        }
    }
    s
}
