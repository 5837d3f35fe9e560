//! Wall-clock figures for `cargo vox doctor`, against this machine.
//!
//! Budgets (from the doctor issue): a full run without the compile probe
//! under 1 s, `--diag` for a non-compile id under 200 ms. `cargo bench -p
//! cargo-vox --bench doctor` builds the binary with the release profile and
//! times whole process runs; pass `--with-compile` after `--` to also time
//! one full run with the compile probe.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-vox");
const RUNS: usize = 15;

fn time_runs(args: &[&str], runs: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let status = Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let took = started.elapsed();
        match status {
            Ok(_) => times.push(took),
            Err(err) => {
                eprintln!("could not run {BIN}: {err}");
                std::process::exit(1);
            }
        }
    }
    times.sort();
    times
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(label: &str, args: &[&str], runs: usize, budget: Option<Duration>) -> bool {
    let times = time_runs(args, runs);
    let (Some(min), Some(max)) = (times.first(), times.last()) else {
        return true;
    };
    let median = times[times.len() / 2];
    let within = budget.is_none_or(|b| median < b);
    let verdict = match budget {
        Some(b) if within => format!("within {:.0} ms", ms(b)),
        Some(b) => format!("OVER {:.0} ms", ms(b)),
        None => String::new(),
    };
    println!(
        "{label:<44} runs={runs:<3} min={:>7.1} ms  median={:>7.1} ms  max={:>7.1} ms  {verdict}",
        ms(*min),
        ms(median),
        ms(*max)
    );
    within
}

fn main() {
    let with_compile = std::env::args().any(|a| a == "--with-compile");
    println!("cargo vox doctor, release binary: {BIN}");
    let full = Some(Duration::from_secs(1));
    let diag = Some(Duration::from_millis(200));
    let mut ok = true;
    ok &= report(
        "doctor --no-compile (full run)",
        &["doctor", "--no-compile"],
        RUNS,
        full,
    );
    ok &= report(
        "doctor --no-compile --json",
        &["doctor", "--no-compile", "--json"],
        RUNS,
        full,
    );
    for id in [
        "toolchain.rustc_shadowed",
        "toolchain.rustup_shadowed",
        "toolchain.wrapper_missing",
        "docker.daemon_down",
        "sccache.pathological",
        "vox.schema_drift",
        "linker.lld_missing",
    ] {
        ok &= report(
            &format!("doctor --diag {id}"),
            &["doctor", "--diag", id],
            RUNS,
            diag,
        );
    }
    // Vox crates from outside the workspace need cargo's full resolve.
    let external = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/doctor/external/app/Cargo.toml"
    );
    report(
        "doctor --diag vox.schema_drift (full resolve)",
        &[
            "doctor",
            "--diag",
            "vox.schema_drift",
            "--manifest-path",
            external,
        ],
        RUNS,
        None,
    );
    report("doctor --list", &["doctor", "--list"], RUNS, None);
    if with_compile {
        report("doctor (full run with compile probe)", &["doctor"], 3, None);
    }
    if !ok {
        println!("some figures are over budget");
    }
}
