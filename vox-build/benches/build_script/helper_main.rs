//! Stand-in for a build script: compiled by the bench in cargo's default
//! dev profile (opt-level 0, as cargo builds build scripts and their
//! dependencies by default), then run.
//!
//! Arguments: VOX_PACKAGE VOX_OUT PROTO_FILE PROTO_OUT RUNS

mod measure;

use std::path::Path;
use std::time::{Duration, Instant};

use measure::{median, ms};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [pkg, out, proto, proto_out, runs] = &args[..] else {
        panic!("usage: helper VOX_PACKAGE VOX_OUT PROTO_FILE PROTO_OUT RUNS");
    };
    let (pkg, out, proto, proto_out) = (
        Path::new(pkg),
        Path::new(out),
        Path::new(proto),
        Path::new(proto_out),
    );
    let runs: usize = runs.parse().unwrap();

    measure::time_vox_build(pkg, out, 1); // warm-up: page cache, allocator
    let vox = measure::time_vox_build(pkg, out, runs);
    report("vox-build, unoptimized", &vox);
    measure::print_phases(
        "vox-build, unoptimized, phase medians",
        &measure::median_phases(pkg, out, runs),
    );

    if !protoc_available() {
        println!(
            "protoc not found: apt-get install protobuf-compiler (prost-build comparison skipped)"
        );
        return;
    }
    std::fs::create_dir_all(proto_out).unwrap();
    let include = proto.parent().unwrap();
    let run_prost = || {
        let start = Instant::now();
        prost_build::Config::new()
            .out_dir(proto_out)
            .compile_protos(&[proto], &[include])
            .expect("prost-build compiles the equivalent .proto");
        start.elapsed()
    };
    run_prost();
    let prost: Vec<Duration> = (0..runs).map(|_| run_prost()).collect();
    report(
        "prost-build, unoptimized (protoc itself is a native binary)",
        &prost,
    );
    println!(
        "ratio vox-build / prost-build (medians): {:.2}",
        ms(median(&vox)) / ms(median(&prost))
    );
}

fn report(label: &str, times: &[Duration]) {
    let min = times.iter().min().unwrap();
    let max = times.iter().max().unwrap();
    println!(
        "{label}: median {:.1} ms over {} runs (min {:.1}, max {:.1})",
        ms(median(times)),
        times.len(),
        ms(*min),
        ms(*max)
    );
}

fn protoc_available() -> bool {
    let protoc = std::env::var_os("PROTOC").unwrap_or_else(|| "protoc".into());
    std::process::Command::new(protoc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
