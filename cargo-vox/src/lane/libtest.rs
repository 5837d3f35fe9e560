//! Reading the stable, human-readable output of Rust test binaries.
//!
//! libtest's JSON format is nightly-only, so `cargo vox test` reads the
//! text format every stable toolchain prints: `test NAME ... ok|FAILED|ignored`
//! lines, `---- NAME stdout ----` failure sections and `test result:` lines.
//! Pure and line-based: anything else (a program's own prints) is ignored.

pub use crate::envelope::TestFailure;

/// Longest output excerpt kept per failure.
const EXCERPT_CHARS: usize = 2000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestReport {
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub failures: Vec<TestFailure>,
    /// Number of `test result:` lines seen (one per test binary that ran).
    pub suites: usize,
}

/// The Vox function name of a generated `@test`, if `name` is one.
pub fn vox_test_name(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("vox_tests::")
        .or_else(|| name.split_once("::vox_tests::").map(|(_, r)| r))?;
    (!rest.contains("::")).then(|| rest.to_string())
}

/// Parses everything the test binaries printed.
pub fn parse(output: &str) -> TestReport {
    let mut report = TestReport::default();
    let mut failed_names: Vec<String> = Vec::new();
    let mut block: Option<(String, Vec<String>)> = None;
    let finish_block = |block: &mut Option<(String, Vec<String>)>, report: &mut TestReport| {
        if let Some((name, lines)) = block.take() {
            report.failures.push(failure(name, &lines));
        }
    };
    for line in output.lines() {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|l| l.strip_suffix(" stdout ----"))
        {
            finish_block(&mut block, &mut report);
            block = Some((name.to_string(), Vec::new()));
            continue;
        }
        if line == "failures:" || line.starts_with("test result:") {
            finish_block(&mut block, &mut report);
        }
        if let Some((_, lines)) = block.as_mut() {
            lines.push(line.to_string());
            continue;
        }
        if let Some(counts) = line.strip_prefix("test result: ") {
            report.suites += 1;
            let (p, f, i) = summary_counts(counts);
            report.passed += p;
            report.failed += f;
            report.ignored += i;
            continue;
        }
        if let Some(rest) = line.strip_prefix("test ") {
            if let Some((name, outcome)) = rest.rsplit_once(" ... ") {
                if outcome.starts_with("FAILED") {
                    failed_names.push(name.to_string());
                }
            }
        }
    }
    finish_block(&mut block, &mut report);
    // A failure without a captured-output section (e.g. a timeout) still counts.
    for name in failed_names {
        if !report.failures.iter().any(|f| f.name == name) {
            report.failures.push(TestFailure {
                vox_name: vox_test_name(&name),
                name,
                ..TestFailure::default()
            });
        }
    }
    report
}

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

fn failure(name: String, lines: &[String]) -> TestFailure {
    // The message follows "thread '…' panicked at file:line:col:".
    let mut message = Vec::new();
    let mut in_message = false;
    for l in lines {
        if l.starts_with("thread '") && l.contains("panicked at") {
            in_message = true;
            continue;
        }
        if in_message {
            if l.starts_with("note: ") || l.starts_with("stack backtrace:") || l.trim().is_empty() {
                break;
            }
            message.push(l.as_str());
        }
    }
    // A backtrace (RUST_BACKTRACE set) is noise in an excerpt.
    let kept: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .take_while(|l| !l.starts_with("stack backtrace:"))
        .collect();
    let text = kept.join("\n");
    let text = text.trim();
    let excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
    TestFailure {
        vox_name: vox_test_name(&name),
        name,
        message: if message.is_empty() {
            excerpt.lines().next().unwrap_or("").to_string()
        } else {
            message.join("\n")
        },
        output_excerpt: excerpt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "
running 3 tests
test vox_tests::adds ... ok
test vox_tests::total_is_right ... FAILED
test rust_side::slow ... ignored, takes long
words: 3

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

    #[test]
    fn parses_counts_and_failures() {
        let r = parse(OUTPUT);
        assert_eq!((r.passed, r.failed, r.ignored, r.suites), (2, 1, 1, 2));
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
    fn vox_names() {
        assert_eq!(vox_test_name("vox_tests::a"), Some("a".into()));
        assert_eq!(vox_test_name("vox::vox_tests::a"), Some("a".into()));
        assert_eq!(vox_test_name("tests::a"), None);
    }

    #[test]
    fn garbage_is_harmless() {
        let r = parse("test \ntest x ... \n---- y stdout ----\n\u{0}\ntest result: nonsense");
        assert_eq!(r.suites, 1);
        assert_eq!(r.failures.len(), 1);
    }
}
