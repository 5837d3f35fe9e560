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
    /// Runs whose counts come from their `test NAME ... RESULT` lines
    /// because no summary agreed with them: why, one line each.
    pub notes: Vec<String>,
}

impl TestReport {
    /// Adds another report's counts and failures to this one.
    pub fn absorb(&mut self, other: TestReport) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
        self.failures.extend(other.failures);
        self.suites += other.suites;
        self.notes.extend(other.notes);
    }
}

/// The Vox function name of a generated `@test`, if `name` is one.
pub fn vox_test_name(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("vox_tests::")
        .or_else(|| name.split_once("::vox_tests::").map(|(_, r)| r))?;
    (!rest.contains("::")).then(|| rest.to_string())
}

/// One test binary's run. `None` when it printed no libtest summary for
/// its own run and no test lines (it crashed, is not a libtest harness, or
/// was asked for `--list`). `stderr` supplies the failure messages that
/// were not captured (`--nocapture`).
///
/// The binary's own run starts at its first line, `running N tests`
/// (nothing runs before libtest prints it). Its summary is a `test result:`
/// line that accounts for exactly N tests, outside any nested run a test
/// printed (a `running M tests` header up to its own summary), and that
/// agrees with the first N `test NAME ... RESULT` lines of the run: so a
/// nested summary, or one printed after libtest's (by a thread or process
/// a test left behind), is not taken for it. With no per-test lines
/// (`--quiet`) the last summary accounting for N tests is the run's. When
/// no summary agrees with the per-test lines, the counts are the lines',
/// and [`TestReport::notes`] says so.
pub fn parse_binary(stdout: &str, stderr: &str) -> Option<TestReport> {
    let lines: Vec<&str> = stdout.lines().collect();
    let Some(header) = lines.iter().position(|l| running_count(l).is_some()) else {
        // Not libtest's layout (a `harness = false` target that prints a
        // summary of its own): its last summary.
        let summary = lines.iter().rposition(|l| l.starts_with("test result: "))?;
        return Some(run_report(&lines, 0, summary, stderr));
    };
    let expected = running_count(lines[header])?;
    let start = header + 1;
    // Expected counts of the nested runs still open.
    let mut nested: Vec<usize> = Vec::new();
    // The first N outcome lines (libtest's own, unless a test printed
    // some while the run was going), and every name's last outcome.
    let mut seen = Outcomes::default();
    let mut by_name: std::collections::BTreeMap<&str, &str> = Default::default();
    let mut agreeing = None;
    // Summaries accounting for N tests, each with the names seen before it.
    let mut accounting: Vec<(usize, Outcomes, usize)> = Vec::new();
    let mut merged = false;
    for (j, line) in lines.iter().enumerate().skip(start) {
        if let Some(m) = running_count(line) {
            nested.push(m);
            continue;
        }
        if let Some(text) = line.strip_prefix("test result: ") {
            let total = summary_total(text);
            if let Some(&m) = nested.last() {
                if total == m || total != expected {
                    nested.pop();
                    continue;
                }
                // Accounts for this run, not the nested one: that one was
                // cut short (its test died), and so were any inside it.
                nested.clear();
            }
            if total == expected {
                if seen.total() == expected && seen.agrees_with(line) {
                    agreeing = Some(j);
                    break;
                }
                let mut named = Outcomes::default();
                for outcome in by_name.values() {
                    named.record_outcome(outcome);
                }
                accounting.push((j, named, by_name.len()));
            }
            continue;
        }
        if !nested.is_empty() {
            continue;
        }
        if seen.total() < expected {
            seen.record(line);
        }
        if let Some((name, outcome)) = outcome_line(line) {
            // A test name never holds ` ... `: this line is libtest's
            // `test NAME ... ` run together with what a test printed
            // (`--nocapture`), so the lines cannot be trusted over the summary.
            merged |= name.contains(" ... ");
            by_name.insert(name, outcome);
        }
    }
    if let Some(j) = agreeing {
        return Some(run_report(&lines, start, j, stderr));
    }
    // A summary the test lines do not contradict: lines missing (`--quiet`,
    // or lost inside a nested run cut short), or more names than tests (a
    // test printed some, or printed into libtest's own lines: the lines
    // cannot be trusted over the summary).
    let allowed = accounting
        .iter()
        .rev()
        .find(|(j, named, names)| merged || *names > expected || named.allows(lines[*j]));
    if let Some((j, _, _)) = allowed {
        return Some(run_report(&lines, start, *j, stderr));
    }
    if by_name.is_empty() {
        return None;
    }
    // The lines name at most N tests and no summary agrees with them.
    let mut named = Outcomes::default();
    for outcome in by_name.values() {
        named.record_outcome(outcome);
    }
    let mut report = match accounting.last() {
        Some((j, _, _)) => run_report(&lines, start, *j, stderr),
        None => TestReport {
            suites: 1,
            ..TestReport::default()
        },
    };
    report.notes.push(match accounting.last() {
        Some((j, _, _)) => format!(
            "its summary ({}) disagrees with its test lines",
            lines[*j].trim_start_matches("test result: ")
        ),
        None => format!("it printed no summary for its {expected} tests"),
    });
    report.passed = named.ok;
    report.failed = named.failed;
    report.ignored = named.ignored;
    Some(report)
}

/// `passed + failed + ignored + measured` of a summary: the tests it accounts for.
fn summary_total(text: &str) -> usize {
    let (p, f, i) = summary_counts(text);
    let measured = text
        .split(';')
        .find_map(|part| {
            let mut words = part.split_whitespace().rev();
            (words.next()? == "measured").then(|| words.next()?.parse::<usize>().ok())?
        })
        .unwrap_or(0);
    p + f + i + measured
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
#[derive(Debug, Default)]
struct Outcomes {
    ok: usize,
    failed: usize,
    ignored: usize,
    other: usize,
}

/// `test NAME ... RESULT` → (NAME, RESULT).
fn outcome_line(line: &str) -> Option<(&str, &str)> {
    line.strip_prefix("test ")?.rsplit_once(" ... ")
}

impl Outcomes {
    fn record(&mut self, line: &str) {
        if let Some((_, outcome)) = outcome_line(line) {
            self.record_outcome(outcome);
        }
    }

    fn record_outcome(&mut self, outcome: &str) {
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

    /// Whether `summary` could count these lines and more (some not seen).
    fn allows(&self, summary: &str) -> bool {
        let (p, f, i) = summary_counts(summary.trim_start_matches("test result: "));
        self.ok <= p && self.failed <= f && self.ignored <= i
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
        notes: Vec::new(),
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
        location: vox_location(&message),
        name,
        message,
        output_excerpt: excerpt.chars().take(EXCERPT_CHARS).collect(),
        ..TestFailure::default()
    }
}

/// Where a failed Vox `assert`/`assert_eq` is written: generated code
/// ends its message with ` at FILE.vox:LINE:COL` (the panic itself is
/// located in the generated Rust).
fn vox_location(message: &str) -> Option<String> {
    let first = message.lines().find(|l| l.contains(".vox:"))?;
    let (_, rest) = first.rsplit_once(" at ")?;
    let site = rest.split_whitespace().next()?;
    let mut parts = site.rsplitn(3, ':');
    let (col, line, file) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (file.ends_with(".vox") && digits(line) && digits(col)).then(|| site.to_owned())
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

/// The end of a text, at most `EXCERPT_CHARS` characters.
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

    fn summary(p: usize, f: usize) -> String {
        format!("test result: ok. {p} passed; {f} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n")
    }

    /// A nested run's lines and summary, as a test running another test
    /// binary (or printing one's output) writes them.
    fn nested(n: usize) -> String {
        let mut out = format!("\nrunning {n} tests\n");
        for i in 0..n {
            out.push_str(&format!("test nested::t{i} ... ok\n"));
        }
        out + "\n" + &summary(n, 0)
    }

    fn counts(r: &TestReport) -> (usize, usize, usize) {
        (r.passed, r.failed, r.ignored)
    }

    #[test]
    fn a_nested_summary_is_not_the_runs() {
        // The binary's one test prints a nested run of 40, then aborts: no summary of its own.
        let aborted = format!("\nrunning 1 test\n{}", nested(40));
        assert_eq!(parse_binary(&aborted, ""), None);
        // The same, and the run finishes: its own summary counts.
        let finished = format!(
            "\nrunning 2 tests\n{}test a ... ok\ntest b ... ok\n\n{}",
            nested(40),
            summary(2, 0)
        );
        let r = parse_binary(&finished, "").expect("a summary");
        assert_eq!((counts(&r), r.notes.len()), ((2, 0, 0), 0), "{r:?}");
        // A nested run of the same size as the binary's.
        let same = format!(
            "\nrunning 2 tests\ntest a ... ok\n{}test b ... FAILED\n\nfailures:\n    b\n\n{}",
            nested(2),
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
        );
        let r = parse_binary(&same, "").expect("a summary");
        assert_eq!(counts(&r), (1, 1, 0), "{r:?}");
        assert_eq!(r.failures.len(), 1);
        // A nested run cut short inside: the run's summary still counts.
        let cut = format!(
            "\nrunning 2 tests\ntest a ... ok\n\nrunning 9 tests\ntest x ... ok\ntest b ... ok\n\n{}",
            summary(2, 0)
        );
        let r = parse_binary(&cut, "").expect("a summary");
        assert_eq!((counts(&r), r.notes.len()), ((2, 0, 0), 0), "{r:?}");
    }

    #[test]
    fn a_summary_printed_after_the_runs_is_not_the_runs() {
        // A thread or process the test left behind prints after libtest's summary.
        for late in [summary(500, 0), nested(500), summary(0, 1)] {
            let text = format!(
                "\nrunning 1 test\ntest a ... ok\n\n{}\n{late}",
                summary(1, 0)
            );
            let r = parse_binary(&text, "").expect("a summary");
            assert_eq!((counts(&r), r.notes.len()), ((1, 0, 0), 0), "{late}: {r:?}");
        }
        // `--quiet`: no test lines; the last summary accounting for the run.
        let quiet = format!(
            "\nrunning 3 tests\n...\n{}\n{}",
            summary(3, 0),
            summary(500, 0)
        );
        assert_eq!(counts(&parse_binary(&quiet, "").unwrap()), (3, 0, 0));
    }

    #[test]
    fn summaries_that_contradict_the_test_lines_are_flagged() {
        let forged = format!(
            "\nrunning 2 tests\ntest a ... ok\ntest b ... FAILED\n\n{}",
            summary(2, 0)
        );
        let r = parse_binary(&forged, "").expect("a report");
        assert_eq!(counts(&r), (1, 1, 0), "{r:?}");
        assert!(r.notes[0].contains("disagrees"), "{r:?}");
        // A test printed a test line first (`--nocapture`): more names
        // than tests, so the lines do not overrule the summary.
        let early = format!(
            "\nrunning 2 tests\ntest fake ... FAILED\ntest a ... ok\ntest b ... ok\n\n{}",
            summary(2, 0)
        );
        let r = parse_binary(&early, "").expect("a report");
        assert_eq!((counts(&r), r.notes.len()), ((2, 0, 0), 0), "{r:?}");
        // Lines but no summary (the binary died after two of its tests).
        let died = "\nrunning 3 tests\ntest a ... ok\ntest b ... ignored\n";
        let r = parse_binary(died, "").expect("a report");
        assert_eq!(counts(&r), (1, 0, 1), "{r:?}");
        assert!(r.notes[0].contains("no summary for its 3 tests"), "{r:?}");
        assert_eq!(r.suites, 1, "one binary's run, however it ended: {r:?}");
    }

    #[test]
    fn a_test_printing_into_libtests_line_does_not_overrule_the_summary() {
        // `--nocapture`: a passing test prints a fake outcome line while
        // libtest is half-way through another test's line.
        let out = "running 2 tests\ntest passes_plainly ... test ghost ... FAILED\ntest ghost ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let r = parse_binary(out, "").expect("a report");
        assert_eq!(counts(&r), (2, 0, 0), "{r:?}");
        assert!(r.notes.is_empty(), "{r:?}");
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

    /// A small deterministic generator (LCG) for the property test below.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }

    /// Generated binaries: a libtest run of N tests (pretty or quiet output,
    /// captured or not) into which the tests print whole nested runs of
    /// another size, and after whose summary a leftover process prints a
    /// summary of another size. The counts are always the run's own.
    #[test]
    fn generated_runs_count_only_their_own_summary() {
        let mut g = Gen(0x5eed);
        for case in 0..2000 {
            let n = 1 + g.next(6);
            let quiet = g.next(4) == 0;
            let outcomes: Vec<usize> = (0..n).map(|_| g.next(3)).collect();
            let (p, f, i) = (
                outcomes.iter().filter(|o| **o == 0).count(),
                outcomes.iter().filter(|o| **o == 1).count(),
                outcomes.iter().filter(|o| **o == 2).count(),
            );
            let other_size = |g: &mut Gen| {
                let m = 1 + g.next(40);
                if m == n {
                    m + 1
                } else {
                    m
                }
            };
            let nested = |g: &mut Gen| {
                let m = other_size(g);
                let mut out = format!("\nrunning {m} tests\n");
                for k in 0..m {
                    out.push_str(&format!("test nested::n{k} ... ok\n"));
                }
                out + "\n" + &summary(m, 0)
            };
            let mut text = format!("\nrunning {n} test{}\n", if n == 1 { "" } else { "s" });
            for (k, o) in outcomes.iter().enumerate() {
                if g.next(3) == 0 {
                    text.push_str(&nested(&mut g));
                }
                if quiet {
                    text.push(['.', 'F', 'i'][*o]);
                } else {
                    let word = ["ok", "FAILED", "ignored"][*o];
                    text.push_str(&format!("test t{k} ... {word}\n"));
                }
            }
            if quiet {
                text.push('\n');
            }
            let failed_names: Vec<String> = outcomes
                .iter()
                .enumerate()
                .filter(|(_, o)| **o == 1)
                .map(|(k, _)| format!("t{k}"))
                .collect();
            if !failed_names.is_empty() {
                text.push_str("\nfailures:\n\n");
                for name in &failed_names {
                    text.push_str(&format!("---- {name} stdout ----\n"));
                    if g.next(2) == 0 {
                        text.push_str(&nested(&mut g));
                    }
                    text.push_str("\nthread 'x' panicked at src/lib.rs:1:1:\nno\n\n");
                }
                text.push_str("\nfailures:\n");
                for name in &failed_names {
                    text.push_str(&format!("    {name}\n"));
                }
            }
            let verdict = if f == 0 { "ok" } else { "FAILED" };
            text.push_str(&format!(
                "\ntest result: {verdict}. {p} passed; {f} failed; {i} ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n"
            ));
            if g.next(2) == 0 {
                let m = other_size(&mut g);
                text.push_str(&summary(m, 0));
            }
            let r =
                parse_binary(&text, "").unwrap_or_else(|| panic!("case {case}: no report\n{text}"));
            assert_eq!(
                (counts(&r), r.failures.len(), r.notes.len()),
                ((p, f, i), f, 0),
                "case {case}\n{text}"
            );
        }
    }

    #[test]
    fn garbage_is_harmless() {
        for text in [
            "test \ntest x ... \n---- y stdout ----\n\u{0}\ntest result: nonsense",
            "running 2 tests\ntest result: \n    \nfailures:\n",
            "running x tests\nrunning 1 test\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed;",
            "failures:\n\ntest result: ok",
            "thread '",
            // A list naming a test twice, its section first in the output.
            "---- a stdout ----\nx\n\nfailures:\n    a\n    a\n\ntest result: FAILED. 0 passed; 2 failed;",
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

    /// Test `a` leaves a process behind that prints a libtest run's tail
    /// into the binary's stdout: an outcome line before libtest's summary,
    /// and a failure list and summary of the same size after it. The run's
    /// summary is the first one that agrees with its first N test lines.
    const LEFT_BEHIND: &str = "
running 3 tests
test a ... ok
test b ... FAILED
test c ... ignored
test ghost ... ok

failures:

---- b stdout ----
thread 'b' (7) panicked at src/lib.rs:2:5:
boom
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    b

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.10s


failures:
    ghost

test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    fn check_left_behind(r: &TestReport) {
        assert_eq!((counts(r), r.notes.len()), ((1, 1, 1), 0), "{r:?}");
        let names: Vec<&str> = r.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["b"], "{r:?}");
        assert_eq!(r.failures[0].message, "boom");
    }

    #[test]
    fn a_run_tail_printed_by_a_leftover_process_is_not_the_runs() {
        check_left_behind(&parse_binary(LEFT_BEHIND, "").expect("a report"));
        let r = parse_text(LEFT_BEHIND);
        assert_eq!(r.suites, 1, "{r:?}");
        check_left_behind(&r);
        // Between two doctest runs, the same: the second run still counts.
        let two = format!(
            "{LEFT_BEHIND}\nrunning 1 test\ntest src/lib.rs - f (line 3) ... ok\n\n{}",
            summary(1, 0)
        );
        let r = parse_text(&two);
        assert_eq!((counts(&r), r.suites), ((2, 1, 1), 2), "{r:?}");
        assert_eq!(r.failures.len(), 1, "{r:?}");
    }

    /// `cargo vox test -- --bench`: benchmarks are counted as `measured`,
    /// and their lines (`bench: …`) belong to the run's N.
    #[test]
    fn benchmarks_are_tests_of_the_run() {
        let run = "
running 2 tests
test a ... ok
test b ... bench:          12.50 ns/iter (+/- 1.25)

test result: ok. 1 passed; 0 failed; 0 ignored; 1 measured; 0 filtered out; finished in 0.40s

";
        let r = parse_binary(run, "").expect("a report");
        assert_eq!((counts(&r), r.notes.len()), ((1, 0, 0), 0), "{r:?}");
        // A leftover process's summary of the same size afterwards is not the run's.
        let late = format!(
            "{run}test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
        );
        let r = parse_binary(&late, "").expect("a report");
        assert_eq!((counts(&r), r.notes.len()), ((1, 0, 0), 0), "{r:?}");
        let r = parse_text(&late);
        assert_eq!((counts(&r), r.suites), ((1, 0, 0), 1), "{r:?}");
    }

    /// A nested run of the binary's size, printed in a failing test's
    /// captured output (the test ran another test binary and showed its
    /// output): its summary agrees with the binary's lines, yet it is not
    /// the binary's.
    #[test]
    fn a_nested_run_in_a_failure_section_is_not_the_runs() {
        let out = "
running 2 tests
test a ... ok
test b ... FAILED

failures:

---- b stdout ----

running 2 tests
test inner::x ... ok
test inner::y ... FAILED

failures:

---- inner::y stdout ----
inner message

failures:
    inner::y

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

thread 'b' (9) panicked at tests/t.rs:4:5:
the inner run failed


failures:
    b

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s
";
        let r = parse_binary(out, "").expect("a report");
        assert_eq!((counts(&r), r.notes.len()), ((1, 1, 0), 0), "{r:?}");
        let names: Vec<&str> = r.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["b"], "{r:?}");
        assert_eq!(r.failures[0].message, "the inner run failed");
    }

    /// A custom harness (`harness = false`) that prints only libtest's
    /// summary, or libtest's failure layout without its `running N tests`.
    #[test]
    fn a_custom_harness_with_libtests_layout() {
        let r = parse_binary(&summary(4, 0), "").expect("a summary");
        assert_eq!((counts(&r), r.failures.len(), r.suites), ((4, 0, 0), 0, 1));
        let out = "---- a stdout ----\nthread 'a' panicked at src/main.rs:3:5:\nboom\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let r = parse_binary(out, "").expect("a summary");
        assert_eq!(counts(&r), (0, 1, 0));
        assert_eq!(r.failures[0].message, "boom");
        assert_eq!(
            r.failures[0].output_excerpt,
            "thread 'a' panicked at src/main.rs:3:5:\nboom"
        );
    }

    /// A failure's excerpt is its captured output, exactly: none of
    /// libtest's lines around it, and the test's own last line kept even
    /// when it reads like one of libtest's.
    #[test]
    fn a_failures_excerpt_is_its_output() {
        let out = "
running 2 tests
test a ... FAILED
test b ... FAILED

failures:

---- a stdout ----
first
failures:

---- b stdout ----
checking
thread 'b' (3) panicked at src/lib.rs:9:9:
nope
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
summary follows
failures:


failures:
    a
    b

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        for r in [parse_binary(out, "").expect("a report"), parse_text(out)] {
            assert_eq!(counts(&r), (0, 2, 0), "{r:?}");
            let excerpts: Vec<&str> = r
                .failures
                .iter()
                .map(|f| f.output_excerpt.as_str())
                .collect();
            assert_eq!(
                excerpts,
                [
                    "first\nfailures:",
                    "checking\nthread 'b' (3) panicked at src/lib.rs:9:9:\nnope\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\nsummary follows\nfailures:"
                ],
                "{r:?}"
            );
            assert_eq!(r.failures[0].message, "first");
            assert_eq!(r.failures[1].message, "nope");
        }
    }

    /// `RUST_BACKTRACE=1`: the message ends where the backtrace starts,
    /// which the excerpt leaves out.
    #[test]
    fn a_backtrace_is_not_the_message() {
        let out = "
running 1 test
test a ... FAILED

failures:

---- a stdout ----
thread 'a' (5) panicked at src/lib.rs:1:5:
boom
stack backtrace:
   0: __rustc::rust_begin_unwind
   1: core::panicking::panic_fmt


failures:
    a

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let r = parse_binary(out, "").expect("a report");
        assert_eq!(r.failures[0].message, "boom");
        assert_eq!(
            r.failures[0].output_excerpt,
            "thread 'a' (5) panicked at src/lib.rs:1:5:\nboom"
        );
        // Uncaptured (`--nocapture`): the same panic on stderr.
        let stdout = "\nrunning 1 test\ntest a ... FAILED\n\nfailures:\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let stderr = "thread 'a' (5) panicked at src/lib.rs:1:5:\nboom\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n";
        let r = parse_binary(stdout, stderr).expect("a report");
        assert_eq!(r.failures[0].message, "boom");
    }

    /// A test whose spawned thread panicked first: its message is the
    /// test's own panic, wherever it is among the others.
    #[test]
    fn the_message_is_the_tests_own_panic() {
        for (first, second) in [("<unnamed>", "t::a"), ("t::a", "<unnamed>")] {
            let out = format!(
                "
running 1 test
test t::a ... FAILED

failures:

---- t::a stdout ----
thread '{first}' (8) panicked at src/lib.rs:3:9:
{first} says
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread '{second}' (7) panicked at src/lib.rs:5:5:
{second} says


failures:
    t::a

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"
            );
            let r = parse_binary(&out, "").expect("a report");
            assert_eq!(r.failures[0].message, "t::a says", "{first} first");
        }
    }
}
