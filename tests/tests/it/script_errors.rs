//! A script whose `main` does not handle a failed model call ends with one
//! readable line on stderr and exit status 1 (docs/language.md, "Entry points
//! and recursion"), not Rust's Debug dump of the error. The failure is made
//! offline: the fixture provider's value fails an `@ai(check = …)` that
//! rejects everything, so the call fails after its one attempt.

use std::path::Path;

use vox_e2e::{cargo_vox, run, work_dir, BUILD};

const SCRIPT: &str = r#"type Label {
    text: str,
}

fn never_ok(l: Label) to list[str] {
    return ["the label is never right"]
}

/// Label a ticket.
@ai(check = never_ok, max_iterations = 1)
@uses(net)
fn label(ticket: str) to Label {
    return Label { text: "fixture" }
}

fn main() {
    let l = label("printer on fire")
    print(l.text)
}
"#;

#[test]
fn an_unhandled_failure_in_main_is_one_readable_line_and_status_1() {
    let dir = work_dir("script-errors");
    std::fs::write(dir.join("fail.vox"), SCRIPT).expect("write the script");
    let cache = dir.join("cache");
    let mut cmd = cargo_vox(&dir);
    cmd.env("VOX_LLM_PROVIDER", "fixture")
        .env("VOX_SCRIPT_CACHE", &cache)
        .args(["run", "fail.vox"]);
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.status.code(), Some(1), "{}", r.dump());
    assert!(!r.stdout.contains("fixture"), "{}", r.dump());
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no `error: ` line\n{}", r.dump()));
    assert!(line.contains("label"), "names the function: {line}");
    // Rust's `Termination` would print `Error: AllProvidersFailed { … }`.
    assert!(!r.stderr.contains("Error: "), "{}", r.dump());
    assert!(!line.contains(" { "), "a Debug dump: {line}");
    let _ = Path::new(&cache);
}

/// A run-time error is not a failed model call, also in an `@ai`
/// function's body run as the fixture: `try` does not turn it into
/// `Error(text)`; it stops the program with the message of any run-time
/// error, naming the Vox function and `file:line:col` (docs/language.md,
/// "Failed model calls"). A fixture body is code the author wrote.
const OVERFLOWING_FIXTURE: &str = r#"/// Count the items.
@ai
@uses(net)
fn tally(text: str) to int {
    return 9223372036854775807 + len(text)
}

fn main() {
    let n = match try tally("abc") {
        Ok(n) => n
        Error(e) => -1
    }
    print(f"caught {n}")
}
"#;

#[test]
fn a_run_time_error_in_a_fixture_body_is_not_caught_by_try() {
    let dir = work_dir("script-errors-fixture-overflow");
    std::fs::write(dir.join("count.vox"), OVERFLOWING_FIXTURE).expect("write the script");
    let mut cmd = cargo_vox(&dir);
    cmd.env("VOX_LLM_PROVIDER", "fixture")
        .env("VOX_SCRIPT_CACHE", dir.join("cache"))
        .args(["run", "count.vox"]);
    let r = run(&mut cmd, BUILD);
    assert_ne!(r.status.code(), Some(0), "{}", r.dump());
    assert!(!r.stdout.contains("caught"), "{}", r.dump());
    assert!(
        r.stderr
            .contains("integer overflow in `tally` (count.vox:5:12): 9223372036854775807 + 3"),
        "{}",
        r.dump()
    );
}
