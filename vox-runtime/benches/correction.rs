//! Time to judge a reply that does not fit — parse, repair, correction —
//! against its size and shape (issue 19: describing one bad leaf deep in a
//! recursive sum type was exponential in its depth).
//!
//! The return type is `type Expr = | Lit(v: int) | Add(args: list[Expr]) |
//! Mul(args: list[Expr])`. Series:
//! - `deep`: one chain of `Add`/`Mul` nodes with one bad leaf at the bottom,
//!   by depth (serde_json reads at most 128 levels, about 60 nodes);
//! - `wide`: a bushy tree (8 arguments per node) of the given size with one
//!   bad leaf, the last one (everything before it is looked at), 1 KiB to
//!   4 MiB;
//! - `deep+wide`: a chain 40 deep whose every node also has `Lit`
//!   siblings, up to the given size, bad leaf at the bottom;
//! - `many bad`: a bushy tree whose every leaf is bad (the correction
//!   lists 20).
//!
//! Each case prints the median wall time of repeated runs and, on Linux,
//! their mean CPU time (on a loaded machine a run longer than a scheduler
//! slice also waits for a core), with repairs on and off.
//! A series stops once one run takes over a second (the old exponential
//! code would not finish the next size). `VOX_BENCH_SECONDS` sets the time
//! spent per case (default 0.3); `VOX_BENCH_SERIES=wide,many` runs only the
//! series whose names contain one of the words.

use std::time::{Duration, Instant};

use vox_runtime::__private::OutputSchema;

#[derive(Debug, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", tag = "kind")]
#[allow(dead_code)] // only deserialized
enum Expr {
    Lit { v: i64 },
    Add { args: Vec<Expr> },
    Mul { args: Vec<Expr> },
}

static EXPR: OutputSchema = OutputSchema::new(
    "Expr",
    r##"{"type":"object","properties":{"value":{"$ref":"#/$defs/Expr"}},"required":["value"],"additionalProperties":false,"$defs":{"Expr":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Lit"]},"v":{"type":"integer"}},"required":["kind","v"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Add"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["kind","args"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Mul"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["kind","args"],"additionalProperties":false}]}}}"##,
    true,
);

const GOOD_LEAF: &str = r#"{"kind":"Lit","v":7}"#;
const BAD_LEAF: &str = r#"{"kind":"Lit","v":"seven"}"#;

fn node(level: usize, args: &str) -> String {
    let kind = if level.is_multiple_of(2) {
        "Add"
    } else {
        "Mul"
    };
    format!(r#"{{"kind":"{kind}","args":[{args}]}}"#)
}

fn deep(depth: usize) -> String {
    let mut json = BAD_LEAF.to_owned();
    for level in 0..depth {
        json = node(level, &json);
    }
    format!(r#"{{"value":{json}}}"#)
}

/// A tree of `width` arguments per node with about `bytes` bytes; every
/// leaf good but the last (or every leaf bad).
fn bushy(bytes: usize, width: usize, all_bad: bool) -> String {
    let leaves = (bytes / (GOOD_LEAF.len() + 1)).max(1);
    let mut level: Vec<String> = (0..leaves)
        .map(|i| {
            if all_bad || i + 1 == leaves {
                BAD_LEAF.to_owned()
            } else {
                GOOD_LEAF.to_owned()
            }
        })
        .collect();
    let mut depth = 0;
    while level.len() > 1 {
        level = level
            .chunks(width)
            .map(|c| node(depth, &c.join(",")))
            .collect();
        depth += 1;
    }
    format!(r#"{{"value":{}}}"#, level[0])
}

/// A chain `depth` deep, each node with `siblings` good `Lit`s beside the
/// next, bad leaf at the bottom.
fn deep_and_wide(bytes: usize, depth: usize) -> String {
    let siblings = (bytes / depth / (GOOD_LEAF.len() + 1)).max(1);
    let beside = vec![GOOD_LEAF; siblings].join(",");
    let mut json = BAD_LEAF.to_owned();
    for level in 0..depth {
        json = node(level, &format!("{beside},{json}"));
    }
    format!(r#"{{"value":{json}}}"#)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

/// CPU time this thread has run, where Linux says (`/proc/thread-self/
/// schedstat`): on a busy machine the wall clock also counts the time a run
/// waited for a core.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// What judging `content` took: the median wall time, the mean CPU time
/// (when known), and whether one run took over a second.
fn time(content: &str, repair: bool, budget: Duration) -> (Duration, Option<Duration>, bool) {
    let mut runs = Vec::new();
    let started = Instant::now();
    let cpu_start = cpu_time();
    while runs.len() < 3 || (started.elapsed() < budget && runs.len() < 1_000) {
        let t = Instant::now();
        let result = vox_runtime::__private::judge_reply::<Expr>(content, &EXPR, repair);
        let took = t.elapsed();
        assert!(result.is_err(), "the bad reply was accepted");
        runs.push(took);
        if took > Duration::from_secs(1) {
            return (took, None, true);
        }
    }
    let cpu = match (cpu_start, cpu_time()) {
        (Some(a), Some(b)) => Some((b - a) / runs.len() as u32),
        _ => None,
    };
    (median(runs), cpu, false)
}

fn show(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}

fn series(name: &str, cases: Vec<(String, String)>, budget: Duration) {
    let wanted = std::env::var("VOX_BENCH_SERIES").unwrap_or_default();
    if !wanted.is_empty() && !wanted.split(',').any(|w| name.contains(w.trim())) {
        return;
    }
    let mut stopped = false;
    for (label, content) in cases {
        if stopped {
            println!(
                "{name:<10} {label:<14} {:>9} B   skipped (a smaller case took over 1 s)",
                content.len()
            );
            continue;
        }
        let (on, cpu_on, slow_on) = time(&content, true, budget);
        let (off, cpu_off, slow_off) = if slow_on {
            (Duration::ZERO, None, true)
        } else {
            time(&content, false, budget)
        };
        let cpu = |c: Option<Duration>| c.map(show).unwrap_or_else(|| "-".into());
        let per_kib = cpu_on.unwrap_or(on).as_secs_f64() * 1e6 / (content.len() as f64 / 1024.0);
        println!(
            "{name:<10} {label:<11} {:>8} B   repairs on {:>10} (cpu {:>10})   off {:>10} (cpu {:>10})   {per_kib:.1} µs/KiB",
            content.len(),
            show(on),
            cpu(cpu_on),
            if slow_on { "-".into() } else { show(off) },
            cpu(cpu_off),
        );
        stopped = slow_on || slow_off;
    }
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::var("VOX_BENCH_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.3),
    );
    let kib = [1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096];
    series(
        "deep",
        [4, 8, 12, 14, 16, 18, 20, 30, 40, 60]
            .iter()
            .map(|&d| (format!("depth {d}"), deep(d)))
            .collect(),
        budget,
    );
    series(
        "wide",
        kib.iter()
            .map(|&k| (format!("{k} KiB"), bushy(k * 1024, 8, false)))
            .collect(),
        budget,
    );
    series(
        "deep+wide",
        kib.iter()
            .map(|&k| (format!("{k} KiB"), deep_and_wide(k * 1024, 40)))
            .collect(),
        budget,
    );
    series(
        "many bad",
        kib.iter()
            .map(|&k| (format!("{k} KiB"), bushy(k * 1024, 8, true)))
            .collect(),
        budget,
    );
}
