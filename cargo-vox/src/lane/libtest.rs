//! Reading the stable, human-readable output of Rust test binaries.
//!
//! libtest's JSON format needs `RUSTC_BOOTSTRAP` in the environment of the
//! tests themselves (and of everything they spawn), so `cargo vox test`
//! reads the text format every stable toolchain prints. Tests can print
//! anything — libtest's own lines included — so nothing here trusts a line
//! for what it looks like alone:
//!
//! - [`parse_binary`] reads one test binary's stdout (the lane runs each
//!   binary through itself, see `lane::testrun`) from its end: libtest's
//!   summary is the last thing it prints, after every test has finished,
//!   and the sorted list of failed tests comes right before it.
//! - [`parse_text`] reads runs printed one after the other (doctests) from
//!   the front, with the tests' output captured: a `test result:` line is
//!   the run's summary only if it agrees with the `test NAME ... RESULT`
//!   lines before it and with the list of failures above it.
//!
//! Failure messages come from the `---- NAME stdout ----` sections; when the
//! output was not captured (`--nocapture`), from the panics on stderr.
//! Pure: no I/O, no panics on any input.

pub use crate::envelope::TestFailure;

/// Longest output excerpt kept per failure.
const EXCERPT_CHARS: usize = 2000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestReport {
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub failures: Vec<TestFailure>,
    /// Number of libtest runs read (one per test binary or doctest run).
    pub suites: usize,
}

impl TestReport {
    /// Adds another report's counts and failures to this one.
    pub fn absorb(&mut self, other: TestReport) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
        self.failures.extend(other.failures);
        self.suites += other.suites;
    }
}

/// The Vox function name of a generated `@test`, if `name` is one.
pub fn vox_test_name(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("vox_tests::")
        .or_else(|| name.split_once("::vox_tests::").map(|(_, r)| r))?;
    (!rest.contains("::")).then(|| rest.to_string())
}

/// One test binary's run, read from the end of its stdout. `None` when it
/// printed no libtest summary (it crashed, is not a libtest harness, or
/// was asked for `--list`). `stderr` supplies the failure messages that
/// were not captured (`--nocapture`).
pub fn parse_binary(stdout: &str, stderr: &str) -> Option<TestReport> {
    let lines: Vec<&str> = stdout.lines().collect();
    let summary = lines.iter().rposition(|l| l.starts_with("test result: "))?;
    Some(run_report(&lines, 0, summary, stderr))
}

/// Every libtest run in `output`, printed one after the other with the
/// tests' output captured (doctests, or test binaries run by cargo itself).
pub fn parse_text(output: &str) -> TestReport {
    let lines: Vec<&str> = output.lines().collect();
    let mut report = TestReport::default();
    let mut i = 0;
    while i < lines.len() {
        let Some(expected) = running_count(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut seen = Outcomes::default();
        let mut summary = None;
        let mut last_candidate = None;
        let mut j = start;
        while j < lines.len() {
            let line = lines[j];
            if line.starts_with("test result: ") {
                last_candidate = Some(j);
                if seen.total() == expected && seen.agrees_with(line) {
                    summary = Some(j);
                    break;
                }
            } else if last_candidate.is_some() && running_count(line).is_some() {
                // The next run began and none of this one's summaries
                // agreed with its results (`--quiet` prints none).
                break;
            } else if seen.total() < expected {
                seen.record(line);
            }
            j += 1;
        }
        // Output that never settles (a run cut short) still counts its last summary.
        let Some(end) = summary.or(last_candidate) else {
            break;
        };
        report.absorb(run_report(&lines, start, end, ""));
        i = end + 1;
    }
    report
}

/// `running 3 tests` / `running 1 test` → the number.
fn running_count(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("running ")?;
    let n = rest
        .strip_suffix(" tests")
        .or_else(|| rest.strip_suffix(" test"))?;
    n.parse().ok()
}

/// The `test NAME ... RESULT` lines of one run.
#[derive(Default)]
struct Outcomes {
    ok: usize,
    failed: usize,
    ignored: usize,
    other: usize,
}

impl Outcomes {
    fn record(&mut self, line: &str) {
        let Some((_, outcome)) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.rsplit_once(" ... "))
        else {
            return;
        };
        if outcome == "ok" {
            self.ok += 1;
        } else if outcome.starts_with("FAILED") {
            self.failed += 1;
        } else if outcome.starts_with("ignored") {
            self.ignored += 1;
        } else if outcome.starts_with("bench:") {
            self.other += 1;
        }
    }

    fn total(&self) -> usize {
        self.ok + self.failed + self.ignored + self.other
    }

    fn agrees_with(&self, summary: &str) -> bool {
        let (p, f, i) = summary_counts(summary.trim_start_matches("test result: "));
        (p, f, i) == (self.ok, self.failed, self.ignored)
    }
}

/// The report of one run whose summary is `lines[summary]`; its output starts at `lines[start]`.
fn run_report(lines: &[&str], start: usize, summary: usize, stderr: &str) -> TestReport {
    let (passed, failed, ignored) =
        summary_counts(lines[summary].trim_start_matches("test result: "));
    // Above the summary: a blank line, the sorted failed names, `failures:`.
    let mut names = Vec::new();
    let mut list_start = summary;
    let mut k = summary;
    if k > start && lines[k - 1].is_empty() {
        k -= 1;
    }
    while k > start {
        let line = lines[k - 1];
        if line == "failures:" {
            list_start = k - 1;
            break;
        }
        match line.strip_prefix("    ") {
            Some(name) => names.push(name.to_string()),
            None => {
                names.clear();
                break;
            }
        }
        k -= 1;
    }
    if list_start == summary {
        names.clear();
    }
    names.reverse();
    let panics = panics(stderr);
    let sections = sections(&lines[start..list_start], &names);
    let failures = names
        .into_iter()
        .map(|name| {
            let section = sections
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.as_slice());
            failure(name, section.unwrap_or(&[]), &panics)
        })
        .collect();
    TestReport {
        passed,
        failed,
        ignored,
        failures,
        suites: 1,
    }
}

/// The `---- NAME stdout ----` sections of the failed tests in `region`.
/// Each header is taken at its last occurrence, so a test that prints an
/// earlier test's header does not split that test's section.
fn sections<'a>(region: &[&'a str], names: &[String]) -> Vec<(String, Vec<&'a str>)> {
    let mut heads: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|name| {
            let header = format!("---- {name} stdout ----");
            region
                .iter()
                .rposition(|l| *l == header)
                .map(|at| (at, name))
        })
        .collect();
    heads.sort();
    let mut out = Vec::new();
    for (n, (at, name)) in heads.iter().enumerate() {
        let end = heads.get(n + 1).map_or(region.len(), |(next, _)| *next);
        let mut body: Vec<&str> = region[at + 1..end.max(at + 1)].to_vec();
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body.pop();
        }
        // The last section runs into libtest's `failures:` heading.
        if n + 1 == heads.len() && body.last() == Some(&"failures:") {
            body.pop();
        }
        out.push(((*name).clone(), body));
    }
    out
}

/// A panic as the default hook prints it: `thread 'NAME' (ID) panicked at FILE:LINE:COL:`
/// and the message lines after it.
struct Panic<'a> {
    thread: &'a str,
    message: Vec<&'a str>,
}

/// Every panic in `text`, in order.
fn panics(text: &str) -> Vec<Panic<'_>> {
    let mut out: Vec<Panic<'_>> = Vec::new();
    let mut current: Option<Panic<'_>> = None;
    for line in text.lines() {
        if let Some(thread) = panic_thread(line) {
            out.extend(current.take());
            current = Some(Panic {
                thread,
                message: Vec::new(),
            });
            continue;
        }
        if let Some(p) = current.as_mut() {
            if line.starts_with("note: ")
                || line.starts_with("stack backtrace:")
                || line.trim().is_empty()
            {
                out.extend(current.take());
            } else {
                p.message.push(line);
            }
        }
    }
    out.extend(current);
    out
}

fn panic_thread(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("thread '")?;
    if !rest.contains(" panicked at ") {
        return None;
    }
    let end = [rest.find("' ("), rest.find("' panicked at ")]
        .into_iter()
        .flatten()
        .min()?;
    Some(&rest[..end])
}

/// The failure of `name` from its captured-output section, or (output not
/// captured) from its panic on stderr.
fn failure(name: String, section: &[&str], stderr_panics: &[Panic<'_>]) -> TestFailure {
    let text = section.join("\n");
    let in_section = panics(&text);
    let own = |ps: &[Panic<'_>]| -> Option<String> {
        ps.iter()
            .find(|p| p.thread == name)
            .or_else(|| ps.first())
            .map(|p| p.message.join("\n"))
    };
    let stderr_own = || {
        stderr_panics
            .iter()
            .rev()
            .find(|p| p.thread == name)
            .map(|p| p.message.join("\n"))
    };
    // A backtrace (RUST_BACKTRACE set) is noise in an excerpt.
    let kept: Vec<&str> = section
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("stack backtrace:"))
        .collect();
    let mut excerpt = kept.join("\n").trim().to_string();
    let message = match own(&in_section) {
        Some(m) => m,
        None => match stderr_own() {
            Some(m) => {
                if excerpt.is_empty() {
                    excerpt = m.clone();
                }
                m
            }
            None => {
                let first = excerpt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                // `#[should_panic]` and time-outs: libtest's own note.
                first.strip_prefix("note: ").unwrap_or(first).to_string()
            }
        },
    };
    TestFailure {
        vox_name: vox_test_name(&name),
        name,
        message,
        output_excerpt: excerpt.chars().take(EXCERPT_CHARS).collect(),
        ..TestFailure::default()
    }
}

/// `1 passed; 2 failed; 0 ignored; …` → (passed, failed, ignored).
fn summary_counts(text: &str) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for part in text.split(';') {
        let mut words = part.split_whitespace().rev();
        let (Some(label), Some(n)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else { continue };
        match label {
            "passed" => counts.0 = n,
            "failed" => counts.1 = n,
            "ignored" => counts.2 = n,
            _ => {}
        }
    }
    counts
}

/// The start of a text, at most [`EXCERPT_CHARS`] characters.
pub fn excerpt(text: &str) -> String {
    text.trim().chars().take(EXCERPT_CHARS).collect()
}

/// The end of a text, at most [`EXCERPT_CHARS`] characters.
pub fn excerpt_tail(text: &str) -> String {
    let text = text.trim();
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(EXCERPT_CHARS)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "
running 3 tests
test vox_tests::adds ... ok
test vox_tests::total_is_right ... FAILED
test rust_side::slow ... ignored, takes long

failures:

---- vox_tests::total_is_right stdout ----

thread 'vox_tests::total_is_right' panicked at /t/out/vox_generated.rs:40:9:
assertion `left == right` failed: assert_eq(total(inv), 20.0)
  left: 19.25
 right: 20.0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    vox_tests::total_is_right

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s


running 1 test
test src/lib.rs - f (line 3) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

    fn check_vox_failure(r: &TestReport) {
        assert_eq!(r.failures.len(), 1);
        let f = &r.failures[0];
        assert_eq!(f.name, "vox_tests::total_is_right");
        assert_eq!(f.vox_name.as_deref(), Some("total_is_right"));
        assert_eq!(
            f.message,
            "assertion `left == right` failed: assert_eq(total(inv), 20.0)\n  left: 19.25\n right: 20.0"
        );
        assert!(f.output_excerpt.contains("left: 19.25"));
    }

    #[test]
    fn parses_counts_and_failures() {
        let r = parse_text(OUTPUT);
        assert_eq!((r.passed, r.failed, r.ignored, r.suites), (2, 1, 1, 2));
        check_vox_failure(&r);
    }

    #[test]
    fn one_binary_from_its_end() {
        let first = OUTPUT.split("\n\n\nrunning 1 test").next().unwrap();
        let r = parse_binary(first, "").expect("a summary");
        assert_eq!((r.passed, r.failed, r.ignored, r.suites), (1, 1, 1, 1));
        check_vox_failure(&r);
    }

    /// A failing test whose panic message imitates libtest: the counts
    /// and the message stay exact.
    const FAKES: &str = "
running 3 tests
test t::prints ... ok
test t::sp - should panic ... FAILED
test t::bad ... FAILED

failures:

---- t::sp stdout ----
note: test did not panic as expected at src/lib.rs:8:32
---- t::bad stdout ----

thread 't::bad' (21071) panicked at src/lib.rs:9:24:
boom
test result: ok. 7 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
test foo ... FAILED
---- t::prints stdout ----
failures:
    phantom
{\"reason\":\"build-finished\",\"success\":true}
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    t::bad
    t::sp

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.13s

";

    fn check_fakes(r: &TestReport) {
        assert_eq!((r.passed, r.failed, r.ignored), (1, 2, 0), "{r:?}");
        let names: Vec<&str> = r.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["t::bad", "t::sp"]);
        assert_eq!(
            r.failures[0].message,
            "boom\ntest result: ok. 7 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\ntest foo ... FAILED\n---- t::prints stdout ----\nfailures:\n    phantom\n{\"reason\":\"build-finished\",\"success\":true}"
        );
        assert_eq!(
            r.failures[1].message,
            "test did not panic as expected at src/lib.rs:8:32"
        );
    }

    #[test]
    fn libtest_lines_in_a_panic_message_are_only_its_message() {
        check_fakes(&parse_binary(FAKES, "").expect("a summary"));
        let r = parse_text(FAKES);
        assert_eq!(r.suites, 1);
        check_fakes(&r);
    }

    #[test]
    fn quiet_runs_stay_apart() {
        let quiet = "
running 2 tests
.F
failures:

---- a stdout ----
thread 'a' (1) panicked at src/lib.rs:1:1:
no

failures:
    a

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s


running 3 tests
..i
test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let r = parse_text(quiet);
        assert_eq!((r.passed, r.failed, r.ignored, r.suites), (3, 1, 1, 2));
        assert_eq!(r.failures.len(), 1);
        assert_eq!(r.failures[0].message, "no");
    }

    #[test]
    fn uncaptured_output_takes_messages_from_stderr() {
        let stdout = "
running 2 tests
test result: ok. 7 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
test ghost ... FAILED
test t::ok ... ok
test t::bad ... FAILED

failures:

failures:
    t::bad

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.13s
";
        let stderr = "thread 't::other' (3) panicked at src/lib.rs:1:1:\nnot this one\n\
                      thread 't::bad' (4) panicked at src/lib.rs:9:24:\nboom\n  left: 1\nnote: run with `RUST_BACKTRACE=1`\n";
        let r = parse_binary(stdout, stderr).expect("a summary");
        assert_eq!((r.passed, r.failed, r.ignored), (1, 1, 0));
        assert_eq!(r.failures.len(), 1);
        assert_eq!(r.failures[0].message, "boom\n  left: 1");
    }

    #[test]
    fn no_summary_is_no_report() {
        assert_eq!(parse_binary("test a ... ok\n", ""), None);
        assert_eq!(parse_binary("", ""), None);
    }

    #[test]
    fn vox_names() {
        assert_eq!(vox_test_name("vox_tests::a"), Some("a".into()));
        assert_eq!(vox_test_name("vox::vox_tests::a"), Some("a".into()));
        assert_eq!(vox_test_name("tests::a"), None);
    }

    #[test]
    fn garbage_is_harmless() {
        for text in [
            "test \ntest x ... \n---- y stdout ----\n\u{0}\ntest result: nonsense",
            "running 2 tests\ntest result: \n    \nfailures:\n",
            "running x tests\nrunning 1 test\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed;",
            "failures:\n\ntest result: ok",
            "thread '",
        ] {
            let _ = parse_text(text);
            let _ = parse_binary(text, text);
        }
        let r = parse_binary(
            "failures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed;",
            "",
        )
        .expect("a summary");
        assert_eq!(r.failures.len(), 1);
    }
}
