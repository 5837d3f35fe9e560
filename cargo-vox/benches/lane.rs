//! Build-lane benchmarks (run with `cargo bench -p cargo-vox --bench lane`):
//!
//! 1. Parsing a synthetic stream of 100,000 cargo messages (goal: < 1 s).
//! 2. A fresh (no-op) `cargo vox build --json` against `cargo build
//!    --message-format=json` on the example crate, measured alternately in
//!    one run: wall time, and CPU time of the whole process tree (user +
//!    system of every child reaped, which a loaded machine disturbs far
//!    less); goal: at most 1.10× for each. The workspace cache
//!    (`workspace::cache`) is what keeps `cargo metadata` out of a no-op
//!    build; the run with `VOX_WORKSPACE_CACHE=off` shows what it saves.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn synthetic_stream(n: usize) -> String {
    let mut s = String::with_capacity(n * 700);
    for i in 0..n {
        match i % 4 {
            0 => s.push_str(&format!(
                r#"{{"reason":"compiler-message","package_id":"path+file:///ws/app#0.1.0","manifest_path":"/ws/app/Cargo.toml","target":{{"kind":["lib"],"crate_types":["lib"],"name":"app","src_path":"/ws/app/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true}},"message":{{"message":"unused variable: `x{i}`","code":{{"code":"unused_variables","explanation":null}},"level":"warning","spans":[{{"file_name":"src/lib.rs","byte_start":{i},"byte_end":{e},"line_start":{l},"line_end":{l},"column_start":9,"column_end":10,"is_primary":true,"text":[],"label":null,"suggested_replacement":null,"suggestion_applicability":null,"expansion":null}}],"children":[{{"message":"if this is intentional, prefix it with an underscore","code":null,"level":"help","spans":[{{"file_name":"src/lib.rs","byte_start":{i},"byte_end":{e},"line_start":{l},"line_end":{l},"column_start":9,"column_end":10,"is_primary":true,"text":[],"label":null,"suggested_replacement":"_x{i}","suggestion_applicability":"MachineApplicable","expansion":null}}],"children":[],"rendered":null}}],"rendered":"warning: unused variable\n"}}}}"#,
                e = i + 1,
                l = i + 1
            )),
            1 => s.push_str(&format!(
                r#"{{"reason":"compiler-artifact","package_id":"path+file:///ws/dep{i}#0.1.0","manifest_path":"/ws/dep/Cargo.toml","target":{{"kind":["lib"],"crate_types":["lib"],"name":"dep{i}","src_path":"/ws/dep/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true}},"profile":{{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":false}},"features":[],"filenames":["/ws/target/debug/libdep.rlib"],"executable":null,"fresh":true}}"#
            )),
            2 => s.push_str(&format!(
                r#"{{"reason":"build-script-executed","package_id":"path+file:///ws/b{i}#0.1.0","linked_libs":[],"linked_paths":[],"cfgs":[],"env":[],"out_dir":"/ws/target/debug/build/b-{i}/out"}}"#
            )),
            _ => s.push_str("a line of program output that is not JSON"),
        }
        s.push('\n');
    }
    s.push_str(r#"{"reason":"build-finished","success":true}"#);
    s.push('\n');
    s
}

fn bench_parse() {
    let stream = synthetic_stream(100_000);
    let mut times = Vec::new();
    let mut diags = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let out = cargo_vox::lane::stream::read_stream(stream.as_bytes(), Path::new("/ws"), |_| {});
        times.push(t.elapsed());
        diags = out.diagnostics.len();
    }
    let m = median(times);
    println!(
        "parse 100,000 cargo messages ({:.1} MB, {diags} distinct diagnostics): median {:.1} ms (goal < 1000 ms){}",
        stream.len() as f64 / 1e6,
        m.as_secs_f64() * 1e3,
        if m < Duration::from_secs(1) { "" } else { "  ** MISSED **" }
    );
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// CPU time (user + system) of every child process reaped so far.
#[cfg(unix)]
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(not(unix))]
fn children_cpu() -> Duration {
    Duration::ZERO
}

/// Wall time and CPU time of the command's whole process tree.
fn time(cmd: &mut Command) -> (Duration, Duration) {
    let cpu = children_cpu();
    let t = Instant::now();
    let out = cmd.output().expect("run command");
    let d = t.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (d, children_cpu().saturating_sub(cpu))
}

fn bench_fresh_build() {
    let root = workspace_root();
    let target = root.join("target");
    let status = Command::new("cargo")
        .args(["build", "--release", "-p", "cargo-vox"])
        .current_dir(&root)
        .status()
        .expect("cargo");
    assert!(status.success());
    let cargo_vox = target.join("release").join("cargo-vox");
    let manifest = root.join("fixtures").join("invoice-app").join("Cargo.toml");
    // Both series run the same cargo binary: `$CARGO` when set (cargo
    // bench sets it to the real cargo, which cargo-vox also runs), not the
    // rustup proxy that a bare `cargo` may resolve to.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let plain = || {
        let mut c = Command::new(&cargo);
        c.args(["build", "--message-format=json", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target);
        c
    };
    let vox = || {
        let mut c = Command::new(&cargo_vox);
        c.args(["--json", "--manifest-path"])
            .arg(&manifest)
            .arg("build")
            .env("CARGO", &cargo)
            .env("CARGO_TARGET_DIR", &target);
        c
    };
    let uncached = || {
        let mut c = vox();
        c.env("VOX_WORKSPACE_CACHE", "off");
        c
    };
    // Warm up: make the build fresh, and the workspace cached.
    time(&mut plain());
    time(&mut vox());
    let mut runs: [Vec<(Duration, Duration)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..15 {
        runs[0].push(time(&mut plain()));
        runs[1].push(time(&mut vox()));
        runs[2].push(time(&mut uncached()));
    }
    let wall = |r: &[(Duration, Duration)]| median(r.iter().map(|t| t.0).collect());
    let cpu = |r: &[(Duration, Duration)]| median(r.iter().map(|t| t.1).collect());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
    let goal = |r: f64| if r <= 1.10 { "" } else { "  ** MISSED **" };
    let (wa, wb, wc) = (wall(&runs[0]), wall(&runs[1]), wall(&runs[2]));
    let (ca, cb, cc) = (cpu(&runs[0]), cpu(&runs[1]), cpu(&runs[2]));
    println!(
        "fresh build, median of 15 alternating runs, wall: cargo build --message-format=json {:.1} ms, cargo vox --json build {:.1} ms, ratio {:.3} (goal <= 1.10){}; without the workspace cache {:.1} ms, ratio {:.3}",
        ms(wa), ms(wb), ratio(wa, wb), goal(ratio(wa, wb)), ms(wc), ratio(wa, wc)
    );
    println!(
        "fresh build, median of 15 alternating runs, CPU (process tree): cargo build --message-format=json {:.1} ms, cargo vox --json build {:.1} ms, ratio {:.3} (goal <= 1.10){}; without the workspace cache {:.1} ms, ratio {:.3}",
        ms(ca), ms(cb), ratio(ca, cb), goal(ratio(ca, cb)), ms(cc), ratio(ca, cc)
    );
}

fn main() {
    bench_parse();
    bench_fresh_build();
}
