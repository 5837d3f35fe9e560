//! Is the compile cache helping or hurting? A fake `sccache` on PATH (a
//! wrapper script, a forwarder to something else) breaks every build that
//! uses it as RUSTC_WRAPPER, and a real one that almost never hits or keeps
//! failing compiles only costs time.
//!
//! Stats are read only while an sccache server is running (seen through
//! `sysinfo`): a fresh server has no history to judge, and asking an old
//! sccache for stats would start one.

use std::process::Command;

use serde_json::Value;

use super::process::{run_with_timeout, RunOutcome};
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::system::process_is_running;
use super::toolchain::{classify_banner, Banner};
use super::ProbeContext;

/// Below this many compile requests the stats say too little to judge.
pub const MIN_REQUESTS: u64 = 200;
/// A hit rate under this percentage is pathological.
pub const MIN_HIT_PERCENT: u64 = 5;
/// Failed compiles (and cache errors) at or above this percentage are pathological.
pub const MAX_FAILURE_PERCENT: u64 = 5;

/// The counters of `sccache --show-stats --stats-format=json` the doctor judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheCounters {
    pub requests: u64,
    pub hits: u64,
    pub misses: u64,
    /// Failed compiles plus cache read, write and other errors.
    pub failures: u64,
}

/// Reads the counters out of sccache's JSON stats; missing fields count as 0.
pub fn parse_stats(json: &str) -> Result<CacheCounters, String> {
    let doc: Value = serde_json::from_str(json.trim()).map_err(|e| format!("not JSON: {e}"))?;
    let stats = doc
        .get("stats")
        .ok_or_else(|| "no `stats` object in the payload".to_string())?;
    let number = |key: &str| stats.get(key).and_then(Value::as_u64).unwrap_or(0);
    let counted = |key: &str| {
        stats
            .get(key)
            .and_then(|v| v.get("counts"))
            .and_then(Value::as_object)
            .map_or(0, |counts| counts.values().filter_map(Value::as_u64).sum())
    };
    Ok(CacheCounters {
        requests: number("compile_requests"),
        hits: counted("cache_hits"),
        misses: counted("cache_misses"),
        failures: number("compile_fails")
            + number("cache_read_errors")
            + number("cache_write_errors")
            + counted("cache_errors"),
    })
}

/// Why these counters are pathological, or `None` when they are fine (or too few).
pub fn pathology(c: &CacheCounters) -> Option<String> {
    if c.requests < MIN_REQUESTS {
        return None;
    }
    let lookups = c.hits + c.misses;
    if c.failures * 100 >= MAX_FAILURE_PERCENT * c.requests {
        return Some(format!(
            "sccache failed {} of {} compile requests (>= {MAX_FAILURE_PERCENT}%)",
            c.failures, c.requests
        ));
    }
    if c.hits * 100 < MIN_HIT_PERCENT * lookups.max(1) {
        return Some(format!(
            "sccache hit {} of {} cacheable compiles over {} requests (< {MIN_HIT_PERCENT}%)",
            c.hits, lookups, c.requests
        ));
    }
    None
}

/// Classifies `sccache --version`: `None` when it is sccache.
pub fn classify_identity(shown: &str, outcome: &RunOutcome) -> Option<CheckResult> {
    let cause = match outcome {
        RunOutcome::Exited {
            code: Some(0),
            output,
        } => {
            match classify_banner("sccache", &output.stdout) {
                Banner::Genuine(_) => return None,
                Banner::Foreign(banner) => {
                    format!("sccache at {shown} printed `{banner}` for --version, not an sccache banner")
                }
            }
        }
        RunOutcome::Exited { code, output } => format!(
            "`sccache --version` at {shown} failed (exit {code:?}): {}",
            output.headline()
        ),
        RunOutcome::TimedOut { .. } => format!("`sccache --version` at {shown} hung"),
        RunOutcome::CouldNotStart { reason } => {
            format!("sccache at {shown} could not start: {reason}")
        }
    };
    Some(CheckResult::fired(
        DiagId::SccacheShadowedShim,
        cause,
        format!("remove or rename {shown} (or install the real sccache); until then build with `RUSTC_WRAPPER=` unset"),
    ))
}

/// Classifies the stats payload of a genuine sccache.
pub fn classify_stats(banner: &str, outcome: &RunOutcome) -> CheckResult {
    let payload = match outcome {
        RunOutcome::Exited {
            code: Some(0),
            output,
        } => output.stdout.as_str(),
        other => {
            return CheckResult::passed(
                CheckKind::Sccache,
                format!("{banner}; stats unavailable ({})", outcome_text(other)),
            )
        }
    };
    match parse_stats(payload) {
        Err(why) => CheckResult::passed(CheckKind::Sccache, format!("{banner}; stats unreadable: {why}")),
        Ok(counters) => match pathology(&counters) {
            Some(cause) => CheckResult::fired(
                DiagId::SccachePathological,
                cause,
                "build without it: `export RUSTC_WRAPPER=` (and unset CARGO_BUILD_RUSTC_WRAPPER); then look at `sccache --show-stats` and `sccache --zero-stats`",
            ),
            None => CheckResult::passed(
                CheckKind::Sccache,
                format!(
                    "{banner}; {} requests, {} hits, {} misses, {} failures",
                    counters.requests, counters.hits, counters.misses, counters.failures
                ),
            ),
        },
    }
}

fn outcome_text(outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Exited { code, output } => format!("exit {code:?}: {}", output.headline()),
        RunOutcome::TimedOut { .. } => "timed out".to_string(),
        RunOutcome::CouldNotStart { reason } => reason.clone(),
    }
}

pub fn check_sccache(ctx: &ProbeContext) -> Vec<CheckResult> {
    let Ok(path) = which::which("sccache") else {
        return vec![CheckResult::passed(
            CheckKind::Sccache,
            "no sccache on PATH (not in use)",
        )];
    };
    let shown = path.display().to_string();
    let mut version = Command::new(&path);
    version.arg("--version");
    let identity = run_with_timeout(version, ctx.probe_timeout);
    if let Some(shim) = classify_identity(&shown, &identity) {
        return vec![shim];
    }
    let banner = match &identity {
        RunOutcome::Exited { output, .. } => output.stdout.trim().to_string(),
        _ => "sccache".to_string(),
    };
    if !process_is_running("sccache") {
        return vec![CheckResult::passed(
            CheckKind::Sccache,
            format!("{banner} at {shown}; no sccache server running, no stats to judge"),
        )];
    }
    let mut stats = Command::new(&path);
    stats.args(["--show-stats", "--stats-format=json"]);
    vec![classify_stats(
        &banner,
        &run_with_timeout(stats, ctx.probe_timeout),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::process::CapturedOutput;
    use super::*;

    /// Shaped like sccache 0.10's `--show-stats --stats-format=json`.
    fn payload(requests: u64, hits: u64, misses: u64, fails: u64) -> String {
        format!(
            r#"{{"stats":{{"compile_requests":{requests},"requests_unsupported_compiler":0,"requests_not_compile":12,"requests_not_cacheable":3,"requests_executed":{requests},"cache_errors":{{"counts":{{}},"adv_counts":{{}}}},"cache_hits":{{"counts":{{"Rust":{hits}}},"adv_counts":{{}}}},"cache_misses":{{"counts":{{"Rust":{misses}}},"adv_counts":{{}}}},"cache_timeouts":0,"cache_read_errors":0,"non_cacheable_compilations":0,"forced_recaches":0,"cache_write_errors":0,"compile_fails":{fails},"not_cached":{{}},"dist_compiles":{{}},"dist_errors":0}},"cache_location":"Local disk","cache_size":1024,"max_cache_size":10737418240}}"#
        )
    }

    fn ok(stdout: &str) -> RunOutcome {
        RunOutcome::Exited {
            code: Some(0),
            output: CapturedOutput {
                stdout: stdout.into(),
                stderr: String::new(),
            },
        }
    }

    #[test]
    fn parses_recorded_stats() {
        let c = parse_stats(&payload(250, 10, 230, 1)).unwrap();
        assert_eq!(
            c,
            CacheCounters {
                requests: 250,
                hits: 10,
                misses: 230,
                failures: 1
            }
        );
        assert!(parse_stats("Compile requests 12").is_err());
        assert!(parse_stats("{}").is_err());
    }

    #[test]
    fn judges_only_with_enough_requests() {
        let few = parse_stats(&payload(199, 0, 199, 0)).unwrap();
        assert_eq!(pathology(&few), None);
        let cold = parse_stats(&payload(250, 5, 240, 0)).unwrap();
        assert!(pathology(&cold).unwrap().contains("hit 5 of 245"));
        let warm = parse_stats(&payload(250, 200, 45, 0)).unwrap();
        assert_eq!(pathology(&warm), None);
        let crashing = parse_stats(&payload(300, 250, 40, 20)).unwrap();
        assert!(pathology(&crashing).unwrap().contains("failed 20 of 300"));
    }

    #[test]
    fn classifies_identity_and_stats() {
        assert_eq!(classify_identity("s", &ok("sccache 0.10.0\n")), None);
        let shim = classify_identity("s", &ok("not really sccache\n")).unwrap();
        assert_eq!(shim.fired_id(), Some(DiagId::SccacheShadowedShim));
        let bad = classify_stats("sccache 0.10.0", &ok(&payload(400, 1, 399, 0)));
        assert_eq!(bad.fired_id(), Some(DiagId::SccachePathological));
        let good = classify_stats("sccache 0.10.0", &ok(&payload(400, 300, 99, 0)));
        assert!(good.pass);
    }
}
