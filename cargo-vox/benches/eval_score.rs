//! `cargo vox eval` re-scoring a recorded run: 10,000 and 100,000 cases.
//!
//! Not a timed test: it records a run of each size once (under the
//! `fixture` provider, so no model is asked: the function's body answers),
//! then times re-scoring it from the recording with the release
//! `cargo-vox` binary — wall time (median of 3) and the process's peak RSS
//! — and compares them with the goals: 100,000 cases in under 10 s, and
//! memory independent of the number of cases (the 100,000-case peak
//! within 25% and 8 MB of the 10,000-case one). Exits 1 when a goal is
//! missed.
//!
//! Run with `cargo bench -p cargo-vox --bench eval_score`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "check_large.rs"]
#[allow(dead_code)]
mod check_large;

const MODULE: &str = r#"type Weight {
    value: int
    unit: str
}

/// Read the weight after the hash sign.
@ai(structured_output = Weight, model = "gpt-4o-mini")
@uses(net)
fn read_weight(text: str) to Weight {
    return Weight { value: len(text), unit: "kg" }
}
"#;

const GOAL: Duration = Duration::from_secs(10);
const SIZES: [usize; 2] = [10_000, 100_000];

/// `n` cases, one in seven expecting a wrong value.
fn cases(n: usize) -> String {
    let mut out = String::with_capacity(n * 70);
    for i in 0..n {
        let text = format!("#n={i}");
        let value = if i % 7 == 0 { 0 } else { text.len() };
        out.push_str(&format!(
            "{{\"args\":{{\"text\":\"{text}\"}},\"expected\":{{\"value\":{value},\"unit\":\"kg\"}}}}\n"
        ));
    }
    out
}

/// Runs `cargo vox` with `args` in `dir`; its wall time and peak RSS (MB).
fn timed(bin: &Path, dir: &Path, cache: &Path, args: &[&str]) -> (Duration, f64, bool) {
    let started = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("VOX_SCRIPT_CACHE", cache)
        .env("VOX_LLM_PROVIDER", "fixture")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot run cargo-vox");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes the status and usage of our own child, which is
    // not waited for anywhere else (`child` is forgotten, not dropped into
    // a second wait).
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut usage);
        usage
    };
    std::mem::forget(child);
    let wall = started.elapsed();
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // ru_maxrss is in kilobytes on Linux.
    (wall, usage.ru_maxrss as f64 / 1024.0, ok)
}

fn main() {
    let bin = check_large::cargo_vox_binary();
    let tmp = tempfile::Builder::new()
        .prefix("vox-eval-score-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let cache = dir.join("cache");
    std::fs::write(dir.join("weight.vox"), MODULE).unwrap();
    let mut peaks = Vec::new();
    let mut missed = false;
    for n in SIZES {
        let file = format!("cases-{n}.jsonl");
        std::fs::write(dir.join(&file), cases(n)).unwrap();
        let base = [
            "--json",
            "eval",
            "read_weight",
            "weight.vox",
            "--cases",
            file.as_str(),
        ];
        let mut record = base.to_vec();
        record.push("--record");
        let (wall, _, ok) = timed(&bin, dir, &cache, &record);
        assert!(ok, "recording {n} cases failed");
        println!(
            "{n:>7} cases: recorded in {:.2} s (the fixture body answering)",
            wall.as_secs_f64()
        );
        let mut walls = Vec::new();
        let mut peak = 0.0f64;
        for _ in 0..3 {
            let (wall, rss, ok) = timed(&bin, dir, &cache, &base);
            assert!(ok, "re-scoring {n} cases failed");
            walls.push(wall);
            peak = peak.max(rss);
        }
        let wall = check_large::median(walls);
        println!(
            "{n:>7} cases: re-scored in {:.2} s (median of 3), peak RSS {peak:.1} MB",
            wall.as_secs_f64()
        );
        if n == 100_000 && wall > GOAL {
            println!(
                "GOAL MISSED: {n} cases took {:.2} s (goal < {} s)",
                wall.as_secs_f64(),
                GOAL.as_secs()
            );
            missed = true;
        }
        peaks.push(peak);
    }
    let (small, large) = (peaks[0], peaks[1]);
    if large > small * 1.25 + 8.0 {
        println!(
            "GOAL MISSED: peak RSS grew from {small:.1} MB to {large:.1} MB with ten times the cases"
        );
        missed = true;
    } else {
        println!(
            "memory independent of the cases: {small:.1} MB at 10,000, {large:.1} MB at 100,000"
        );
    }
    if missed {
        std::process::exit(1);
    }
    println!("goals met");
}
