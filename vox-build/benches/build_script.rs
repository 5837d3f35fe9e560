//! How long does `vox_build::compile()` take in a build script?
//!
//! Generates a ~10,000-line Vox module (records, sum types, pure functions
//! with lets, loops, ifs and matches, and `@ai` functions) and an
//! equivalent `.proto` (records → messages, fields → proto3 fields, sum
//! types → messages with a `oneof` over nested variant messages), then
//! times a full compile (read, check, emit, write):
//!
//! 1. in this process, optimized (`cargo bench` builds with opt-level 3);
//! 2. in a small helper crate built in cargo's default dev profile
//!    (opt-level 0) — how cargo builds a build script and its dependencies
//!    by default, in debug and release builds alike — which also times
//!    prost-build on the `.proto`, for comparison.
//!
//! Goal: under 300 ms unoptimized. Run with `cargo bench -p vox-build
//! --bench build_script` (`VOX_BENCH_LINES=N` changes the module size);
//! the helper crate and its target directory live
//! under `target/bench-work/`.

#[path = "build_script/measure.rs"]
mod measure;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET_LINES: usize = 10_000;
const RUNS: usize = 10;

fn main() {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let workspace = manifest_dir.parent().unwrap().to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let work = target.join("bench-work");

    let lines = std::env::var("VOX_BENCH_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(TARGET_LINES);
    let (vox, proto, stats) = generate(lines);
    let pkg = work.join("vox-package");
    let out = work.join("vox-out");
    let proto_dir = work.join("proto");
    write(&pkg.join("Cargo.toml"), "[package]\nname = \"bench\"\n");
    write(&pkg.join("vox/bench.vox"), &vox);
    write(&proto_dir.join("bench.proto"), &proto);
    println!(
        "module: {} lines, {} records, {} sum types, {} functions ({} @ai); proto: {} lines, {} messages",
        vox.lines().count(),
        stats.records,
        stats.sums,
        stats.functions,
        stats.ai_functions,
        proto.lines().count(),
        stats.messages
    );

    // 1. Optimized, in process.
    measure::time_vox_build(&pkg, &out, 1);
    let times = measure::time_vox_build(&pkg, &out, RUNS);
    println!(
        "vox-build, optimized (in process): median {:.1} ms over {RUNS} runs",
        measure::ms(measure::median(&times))
    );
    measure::print_phases(
        "vox-build, optimized, phase medians",
        &measure::median_phases(&pkg, &out, RUNS),
    );
    let generated = std::fs::read_to_string(out.join("vox_generated.rs")).unwrap();
    println!(
        "generated Rust: {} lines, {} bytes",
        generated.lines().count(),
        generated.len()
    );

    // 2. Unoptimized, in a helper crate built like a build script.
    let helper = work.join("helper");
    let cargo_path = |p: &Path| p.to_string_lossy().replace('\\', "/");
    write(
        &helper.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"vox-bench-helper\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [workspace]\n\n[dependencies]\nvox-build = {{ path = \"{}\" }}\nvox-codegen = {{ path = \"{}\" }}\nprost-build = \"0.14\"\n",
            cargo_path(&manifest_dir),
            cargo_path(&workspace.join("vox-codegen")),
        ),
    );
    write(
        &helper.join("src/main.rs"),
        include_str!("build_script/helper_main.rs"),
    );
    write(
        &helper.join("src/measure.rs"),
        include_str!("build_script/measure.rs"),
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(helper.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(work.join("target"))
        .arg("--")
        .arg(&pkg)
        .arg(work.join("vox-out-unoptimized"))
        .arg(proto_dir.join("bench.proto"))
        .arg(work.join("proto-out"))
        .arg(RUNS.to_string())
        // Cargo's defaults for build scripts, whatever the caller's profile.
        .env_remove("CARGO_PROFILE_DEV_OPT_LEVEL")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the unoptimized helper failed: {status}");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    vox_build::write_if_changed(path, text.as_bytes()).unwrap();
}

#[derive(Default)]
struct Stats {
    records: usize,
    sums: usize,
    functions: usize,
    ai_functions: usize,
    messages: usize,
}

/// A valid Vox module of at least `lines` lines and its `.proto` twin.
fn generate(lines: usize) -> (String, String, Stats) {
    let mut vox = String::from("// Generated by the vox-build benchmark.\n\n");
    let mut proto = String::from("syntax = \"proto3\";\n\npackage bench;\n\n");
    let mut st = Stats::default();
    let mut i = 0;
    while vox.lines().count() < lines {
        block(i, &mut vox, &mut proto, &mut st);
        i += 1;
    }
    (vox, proto, st)
}

fn block(i: usize, vox: &mut String, proto: &mut String, st: &mut Stats) {
    let _ = write!(
        vox,
        r#"/// Customer record {i}.
type Customer{i} {{
    id: int
    name: str
    email: Option[str]
    score: float
    active: bool
    tags: list[str]
    orders: list[Order{i}]
    status: Status{i}
}}

type Order{i} {{
    sku: str
    quantity: int
    unit_price: float
    note: Option[str]
}}

/// Lifecycle of customer {i}.
type Status{i} =
    | Prospect{i}
    | Active{i}(since_days: int)
    | Suspended{i}(reason: str, until: Option[str])

fn order_total{i}(orders: list[Order{i}]) to float {{
    let mut sum = 0.0
    for o in orders {{
        sum = sum + float(o.quantity) * o.unit_price
    }}
    return sum
}}

fn big_orders{i}(c: Customer{i}, threshold: int) to int {{
    let mut count = 0
    for o in c.orders {{
        if o.quantity > threshold {{
            count = count + 1
        }} else if o.quantity is threshold {{
            count = count + 0
        }}
    }}
    count
}}

fn status_label{i}(s: Status{i}) to str {{
    match s {{
        Prospect{i} => "prospect"
        Active{i}(days) => "active for " + str(days) + " days"
        Suspended{i}(reason, _) => "suspended: " + reason
    }}
}}

fn contact{i}(c: Customer{i}) to str {{
    let email = match c.email {{
        Some(e) => e
        None => "none"
    }}
    let state = if c.active {{ "on" }} else {{ "off" }}
    c.name + " <" + email + "> " + state + " " + status_label{i}(c.status)
}}

"#
    );
    st.records += 2;
    st.sums += 1;
    st.functions += 4;
    if i.is_multiple_of(2) {
        let _ = write!(
            vox,
            r#"/// Extract customer {i} from free text.
@ai(structured_output = Customer{i}, max_iterations = 2)
@uses(net)
fn extract_customer{i}(text: str) to Customer{i} {{
    Customer{i} {{ id: {i}, name: text, email: None, score: 0.5, active: true, tags: [], orders: [], status: Prospect{i} }}
}}

"#
        );
        st.functions += 1;
        st.ai_functions += 1;
    }
    let _ = write!(
        proto,
        r#"// Customer record {i}.
message Customer{i} {{
  int64 id = 1;
  string name = 2;
  optional string email = 3;
  double score = 4;
  bool active = 5;
  repeated string tags = 6;
  repeated Order{i} orders = 7;
  Status{i} status = 8;
}}

message Order{i} {{
  string sku = 1;
  int64 quantity = 2;
  double unit_price = 3;
  optional string note = 4;
}}

// Lifecycle of customer {i}.
message Status{i} {{
  message Prospect {{}}
  message Active {{
    int64 since_days = 1;
  }}
  message Suspended {{
    string reason = 1;
    optional string until = 2;
  }}
  oneof kind {{
    Prospect prospect = 1;
    Active active = 2;
    Suspended suspended = 3;
  }}
}}

"#
    );
    st.messages += 6;
}
