//! `cargo vox fmt` on the ~100,000-line module of the `check_large` bench.
//!
//! Not a timed test: it prints the in-process time of
//! `vox_codegen::fmt::format_source` and the wall time (median of several
//! runs) of the release binary's `cargo vox fmt --check` and `cargo vox fmt`
//! (which rewrites the file the first time, then finds nothing to do), and
//! compares them with the goal (< 1 s).
//!
//! Run with `cargo bench -p cargo-vox --bench fmt_large`.

#[allow(dead_code)]
#[path = "check_large.rs"]
mod check_large;

use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 7;
const GOAL_WALL: Duration = Duration::from_secs(1);

fn main() {
    let (src, _) = check_large::generate();
    let lines = src.lines().count();
    let tmp = tempfile::Builder::new()
        .prefix("vox-fmt-large-")
        .tempdir()
        .unwrap();
    let file = tmp.path().join("large.vox");
    // Unindent everything, so the formatter has work on every line.
    let messy: String = src
        .lines()
        .map(|l| l.trim_start().to_string() + "\n")
        .collect();
    std::fs::write(&file, &messy).unwrap();
    println!("generated {lines} lines, {} KiB", src.len() / 1024);

    let t = Instant::now();
    let formatted = vox_codegen::fmt::format_source(vox_codegen::FileId(0), &messy)
        .unwrap_or_else(|d| panic!("the generated module has syntax errors: {d:?}"));
    let lib_time = t.elapsed();
    assert_ne!(formatted, messy, "the formatter had nothing to do");
    println!(
        "library (in-process): format_source {:.1} ms",
        lib_time.as_secs_f64() * 1e3
    );

    let bin = check_large::cargo_vox_binary();
    let time = |args: &[&str], expect: Option<i32>| {
        let mut walls = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            let out = Command::new(&bin)
                .args(args)
                .arg(&file)
                .output()
                .expect("cannot run cargo-vox");
            walls.push(t.elapsed());
            if let Some(code) = expect {
                assert_eq!(
                    out.status.code(),
                    Some(code),
                    "cargo-vox {args:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        check_large::median(walls)
    };
    let verdict = |d: Duration| if d < GOAL_WALL { "ok" } else { "MISSED" };
    let check = time(&["fmt", "--check"], Some(1));
    println!(
        "cargo-vox fmt --check (unformatted, {RUNS} runs): median {:.1} ms; goal < {} ms: {}",
        check.as_secs_f64() * 1e3,
        GOAL_WALL.as_millis(),
        verdict(check)
    );
    let write = time(&["fmt"], Some(0));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), formatted);
    println!(
        "cargo-vox fmt (first run rewrites, then nothing to do; {RUNS} runs): median {:.1} ms; goal < {} ms: {}",
        write.as_secs_f64() * 1e3,
        GOAL_WALL.as_millis(),
        verdict(write)
    );
    drop(tmp);
}
