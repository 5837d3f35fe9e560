//! `cargo vox test --json` counts exactly what ran, whatever the tests
//! print: the real binary and the real cargo on a copy of
//! `fixtures/lane/counts`, whose tests print libtest's own lines (summaries,
//! `test … FAILED`, failure sections), cargo-message JSON, panic with such
//! text, fail a `#[should_panic]`, and whose `harness = false` target fails.
//! Its path dependency `outside/` is not a workspace member and compiles
//! with a warning that is not reported.
//!
//! Expected, for all targets: unit tests 3 passed, 3 failed, 1 ignored
//! (the Vox `@test` passes); integration tests 2 passed; the binary that
//! aborts 1 failed; the `harness = false` target 1 failed; doctests 1
//! passed, 1 failed.

use std::path::Path;

use vox_e2e::{copy_fixture, envelopes, lane_with, read, Run, BUILD};
use vox_metadata::{Envelope, TestFailure};

fn lane(dir: &Path, args: &[&str]) -> Run {
    lane_with(dir, args, &[], BUILD)
}

/// The build and the test envelope of a `--json test` run, read with the
/// published types.
fn build_and_test(r: &Run) -> (Envelope, Envelope) {
    let mut lines = envelopes(r);
    assert_eq!(lines.len(), 2, "build and test envelopes\n{}", r.dump());
    let test = lines.pop().expect("two lines");
    let build = lines.pop().expect("two lines");
    assert_eq!(build.command, "build", "{}", r.dump());
    assert_eq!(test.command, "test", "{}", r.dump());
    (build, test)
}

fn counts(t: &Envelope) -> (usize, usize, usize) {
    let n = |k: &str, v: Option<usize>| v.unwrap_or_else(|| panic!("{k} is a number: {t:?}"));
    (
        n("passed", t.passed),
        n("failed", t.failed),
        n("ignored", t.ignored),
    )
}

/// The failures, each checked to appear once and to name its package.
fn failures(t: &Envelope) -> Vec<&TestFailure> {
    let list: Vec<&TestFailure> = t
        .failures
        .as_ref()
        .unwrap_or_else(|| panic!("failures is a list: {t:?}"))
        .iter()
        .collect();
    for f in &list {
        assert_eq!(
            f.package.as_deref(),
            Some("lane-counts"),
            "every failure names its package: {f:?}"
        );
        let same = list.iter().filter(|g| g.name == f.name).count();
        assert_eq!(same, 1, "{} appears once in {t:?}", f.name);
    }
    list
}

fn failure<'a>(list: &[&'a TestFailure], name: &str) -> &'a TestFailure {
    list.iter()
        .find(|f| f.name == name)
        .copied()
        .unwrap_or_else(|| panic!("a failure named {name:?} in {list:?}"))
}

fn message(f: &TestFailure) -> &str {
    &f.message
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not found"))
        + 1
}

/// libtest's name of the doctest that fails: the fence opening after `pub fn doc_fails`'s docs start.
fn failing_doctest_name(lib_rs: &str) -> String {
    let docs = line_of(lib_rs, "/// A doctest that fails.");
    let fence = lib_rs
        .lines()
        .enumerate()
        .skip(docs)
        .find(|(_, l)| l.trim() == "/// ```")
        .map(|(i, _)| i + 1)
        .expect("the failing doctest's fence");
    format!("src/lib.rs - doc_fails (line {fence})")
}

/// Checks the failures every run must report, with and without `--nocapture`.
fn assert_failures(t: &Envelope, panic_text: &str, doctest: &str) {
    let list = failures(t);
    let names: Vec<&str> = list.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(list.len(), 6, "six failures, no more: {names:?}\n{t:?}");

    let fake = failure(&list, "tests::panics_with_fake_output");
    assert_eq!(
        message(fake),
        panic_text,
        "the whole panic message, libtest- and JSON-looking lines included: {fake:?}"
    );
    assert_eq!(fake.target.as_deref(), Some("lane_counts"), "{fake:?}");

    let should = failure(&list, "tests::should_panic_but_does_not");
    assert!(
        message(should).contains("did not panic as expected"),
        "{should:?}"
    );

    let arithmetic = failure(&list, "tests::arithmetic");
    let m = message(arithmetic);
    assert!(
        m.contains("two and two make five") && m.contains("left: 4") && m.contains("right: 5"),
        "{arithmetic:?}"
    );

    let raw = failure(&list, "raw");
    assert_eq!(raw.target.as_deref(), Some("raw"), "{raw:?}");
    assert!(
        message(raw).contains("harness = false") && message(raw).contains("status 1"),
        "the failed target says what happened: {raw:?}"
    );
    assert!(
        raw.output_excerpt
            .contains("raw check failed: the numbers disagree"),
        "the target's stderr is in the excerpt: {raw:?}"
    );

    let aborted = failure(&list, "aborts");
    assert_eq!(aborted.target.as_deref(), Some("aborts"), "{aborted:?}");
    assert!(
        message(aborted).contains("test binary `aborts`"),
        "a binary that died without a summary is one failure: {aborted:?}"
    );

    let doc = failure(&list, doctest);
    assert!(message(doc).contains("doctest says no"), "{doc:?}");
}

#[test]
fn counts_are_exact_whatever_the_tests_print() {
    let root = copy_fixture("lane/counts", "lane-counts");
    let lib_rs = read(&root.join("src/lib.rs"));
    let panic_text = {
        let start = lib_rs
            .find("pub const PANIC_TEXT: &str = \"")
            .expect("PANIC_TEXT")
            + 30;
        let end = start + lib_rs[start..].find("\";").expect("end of PANIC_TEXT");
        lib_rs[start..end].replace("\\\"", "\"")
    };
    let doctest = failing_doctest_name(&lib_rs);

    // 1. Captured output (libtest's default).
    let r = lane(&root, &["--json", "test"]);
    r.assert_code(1);
    let (build, t) = build_and_test(&r);
    assert!(build.ok, "{}", r.dump());
    assert_eq!(
        counts(&t),
        (6, 6, 1),
        "passed, failed, ignored: {t:?}\n{}",
        r.dump()
    );
    assert!(!t.ok, "{t:?}");
    assert_failures(&t, &panic_text, &doctest);

    // Diagnostics name their package; the path dependency outside the
    // workspace compiles with a warning that is not reported.
    let diagnostics = &build.diagnostics;
    for d in diagnostics {
        assert_eq!(d.package.as_deref(), Some("lane-counts"), "{d:?}");
    }
    let rust_warning = diagnostics
        .iter()
        .find(|d| d.source == "rustc" && d.message.contains("spare"))
        .unwrap_or_else(|| panic!("lane-counts' own unused-variable warning: {build:?}"));
    assert_eq!(rust_warning.severity, "warning");
    assert!(
        !build.to_line().contains("outside_unused"),
        "no warning from the dependency outside the workspace: {build:?}"
    );

    // 2. `--nocapture`: the tests print straight to stdout and panic on
    // stderr; the counts and the messages stay the same.
    let r = lane(&root, &["--json", "test", "--", "--", "--nocapture"]);
    r.assert_code(1);
    let (_, t) = build_and_test(&r);
    assert_eq!(
        counts(&t),
        (6, 6, 1),
        "with --nocapture: {t:?}\n{}",
        r.dump()
    );
    assert_failures(&t, &panic_text, &doctest);

    // 3. One thread, and only the unit tests.
    let r = lane(
        &root,
        &[
            "--json",
            "test",
            "--",
            "--lib",
            "--",
            "--nocapture",
            "--test-threads=1",
        ],
    );
    r.assert_code(1);
    let (_, t) = build_and_test(&r);
    assert_eq!(
        counts(&t),
        (3, 3, 1),
        "unit tests alone: {t:?}\n{}",
        r.dump()
    );

    // 4. The doctests alone.
    let r = lane(&root, &["--json", "test", "--", "--doc"]);
    r.assert_code(1);
    let (build, t) = build_and_test(&r);
    assert!(build.ok, "{}", r.dump());
    assert_eq!(counts(&t), (1, 1, 0), "doctests alone: {t:?}\n{}", r.dump());
    let list = failures(&t);
    assert!(
        message(failure(&list, &doctest)).contains("doctest says no"),
        "{t:?}"
    );

    // 5. For people: stdout carries the tests' own output, the summary is on stderr.
    let r = lane(&root, &["test"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("test: 6 passed, 6 failed, 1 ignored"),
        "{}",
        r.dump()
    );
    assert!(r.stdout.contains("test result:"), "{}", r.dump());
    assert!(!r.stdout.contains("vox-test-output"), "{}", r.dump());
}

/// A test that prints a whole nested libtest run straight to the binary's
/// stdout (as a test running another test binary does), then aborts.
#[cfg(unix)]
const NESTED_THEN_ABORT: &str = r#"
use std::io::Write as _;

#[test]
fn prints_a_nested_run_then_aborts() {
    let mut nested = String::from("\nrunning 40 tests\n");
    for i in 0..40 {
        nested.push_str(&format!("test nested::t{i} ... ok\n"));
    }
    nested.push_str("\ntest result: ok. 40 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n");
    let mut out = std::io::stdout().lock();
    out.write_all(nested.as_bytes()).unwrap();
    out.flush().unwrap();
    std::process::abort();
}
"#;

/// A test whose binary prints a summary after libtest's, as it exits.
#[cfg(unix)]
const SUMMARY_AFTER_EXIT: &str = r#"
extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
    fn write(fd: i32, buf: *const u8, n: usize) -> isize;
}

extern "C" fn late() {
    let text = b"\ntest result: ok. 500 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    // SAFETY: writing a static buffer to stdout.
    unsafe {
        write(1, text.as_ptr(), text.len());
    }
}

#[test]
fn registers_a_late_summary() {
    // SAFETY: registering a handler that only writes.
    assert_eq!(unsafe { atexit(late) }, 0);
}
"#;

/// Test binaries whose stdout holds summaries that are not their own: the
/// counts are those of the binaries' own runs (before: 40 passed for the
/// binary that aborted, 500 for the one that printed late).
#[cfg(unix)]
#[test]
fn only_the_binarys_own_summary_counts() {
    let root = vox_e2e::tiny_crate(
        "lane-counts-nested",
        "nested-summaries",
        &[
            ("src/lib.rs", ""),
            ("tests/nested_abort.rs", NESTED_THEN_ABORT),
            ("tests/late_summary.rs", SUMMARY_AFTER_EXIT),
        ],
    );
    for args in [
        &["--json", "test"][..],
        &["--json", "test", "--", "--", "--nocapture"][..],
    ] {
        let r = lane(&root, args);
        r.assert_code(1);
        let (build, t) = build_and_test(&r);
        assert!(build.ok, "{}", r.dump());
        assert_eq!(counts(&t), (1, 1, 0), "{args:?}: {t:?}\n{}", r.dump());
        let list = t.failures.as_deref().unwrap_or_default();
        assert_eq!(list.len(), 1, "{t:?}");
        assert_eq!(
            list[0].package.as_deref(),
            Some("nested-summaries"),
            "{t:?}"
        );
        assert_eq!(list[0].target.as_deref(), Some("nested_abort"), "{t:?}");
        assert!(list[0].message.contains("signal 6"), "{t:?}");
        assert_eq!(t.warning_count, 0, "{t:?}");
    }
}
