//! Timing of one vox-build compile, end to end and by phase. Compiled twice:
//! into the optimized bench binary, and (copied) into the unoptimized helper
//! crate that stands in for a build script.

use std::path::Path;
use std::time::{Duration, Instant};

/// Median of a set of timings.
pub fn median(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    t[t.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `runs` end-to-end compiles of the package at `pkg` into `out`. The
/// generated file is removed before each run, so every run writes it, as a
/// build script does after a `.vox` file changed.
pub fn time_vox_build(pkg: &Path, out: &Path, runs: usize) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let _ = std::fs::remove_file(out.join("vox_generated.rs"));
            let start = Instant::now();
            vox_build::Builder::new()
                .manifest_dir(pkg)
                .out_dir(out)
                .quiet()
                .try_compile()
                .expect("the generated module compiles");
            start.elapsed()
        })
        .collect()
}

/// Phases of one compile: read, lex+parse, check, emit, write.
pub const PHASES: [&str; 5] = ["read", "lex+parse", "check", "emit", "write"];

/// Runs the pipeline step by step over the `.vox` files of `pkg/vox`.
pub fn time_phases(pkg: &Path, out: &Path) -> [Duration; 5] {
    let mut t = [Duration::ZERO; 5];
    let start = Instant::now();
    let mut paths: Vec<_> = std::fs::read_dir(pkg.join("vox"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut sources = vox_codegen::SourceMap::new();
    let mut names = Vec::new();
    for p in &paths {
        let name = p.strip_prefix(pkg).unwrap().to_string_lossy().into_owned();
        sources.add(vox_codegen::SourceFile::from_bytes(
            name.clone(),
            &std::fs::read(p).unwrap(),
        ));
        names.push(name);
    }
    t[0] = start.elapsed();

    let start = Instant::now();
    let parsed = vox_codegen::parse(&sources);
    t[1] = start.elapsed();

    let start = Instant::now();
    let checked = parsed.check(sources);
    t[2] = start.elapsed();
    assert!(!checked.has_errors(), "generated module has errors");

    let start = Instant::now();
    let opts = vox_codegen::emit::EmitOptions {
        script: false,
        standalone: false,
        source_names: names,
        cassettes: None,
    };
    let code = checked.emit(&opts);
    t[3] = start.elapsed();

    let target = out.join("vox_generated.rs");
    let _ = std::fs::remove_file(&target);
    let start = Instant::now();
    vox_build::write_if_changed(&target, code.as_bytes()).unwrap();
    t[4] = start.elapsed();
    t
}

/// Median of each phase over `runs` runs.
pub fn median_phases(pkg: &Path, out: &Path, runs: usize) -> [Duration; 5] {
    let all: Vec<[Duration; 5]> = (0..runs).map(|_| time_phases(pkg, out)).collect();
    std::array::from_fn(|i| median(&all.iter().map(|p| p[i]).collect::<Vec<_>>()))
}

pub fn print_phases(label: &str, phases: &[Duration; 5]) {
    let parts: Vec<String> = PHASES
        .iter()
        .zip(phases)
        .map(|(n, d)| format!("{n} {:.1} ms", ms(*d)))
        .collect();
    println!("{label}: {}", parts.join(", "));
}
