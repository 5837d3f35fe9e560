//! The fixture crates build with real cargo against vox-build and
//! vox-runtime: kitchen-sink's generated code compiles warning-free and its
//! Rust and Vox tests pass; invoice-app runs offline on the `fixture` provider;
//! batch-app's generated `_batch` functions run against a loopback batch engine.

use std::path::Path;

use serde_json::Value;
use vox_e2e::{cargo, copy_fixture, read, run, workspace_root, BUILD};

/// Names of the `@test` functions declared in the `.vox` files under `dir`.
fn vox_test_names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension() != Some("vox".as_ref()) {
            continue;
        }
        let text = read(&path);
        let mut after_test = false;
        for line in text.lines().map(str::trim) {
            if line == "@test" {
                after_test = true;
            } else if let Some(rest) = line.strip_prefix("fn ").filter(|_| after_test) {
                names.push(rest.split('(').next().unwrap().trim().to_string());
                after_test = false;
            } else if !line.starts_with('@') && !line.starts_with("//") && !line.is_empty() {
                after_test = false;
            }
        }
    }
    names
}

#[test]
fn kitchen_sink_builds_warning_free_and_passes_its_tests() {
    // A copy, so the build script and the crate are compiled from scratch
    // and every warning they produce is visible.
    let copy = copy_fixture("kitchen-sink", "fixture-kitchen-sink");
    let build = run(
        cargo(&copy).args(["build", "--all-targets", "--message-format=json"]),
        BUILD,
    );
    build.assert_success();
    let mut warnings = Vec::new();
    let mut script_ran = false;
    for line in build.stdout.lines().filter(|l| l.starts_with('{')) {
        let msg: Value = serde_json::from_str(line).expect("cargo JSON message");
        let ours = msg["package_id"]
            .as_str()
            .is_some_and(|id| id.contains("kitchen-sink"));
        if !ours {
            continue;
        }
        match msg["reason"].as_str() {
            Some("compiler-message") if msg["message"]["level"] != "note" => {
                warnings.push(
                    msg["message"]["rendered"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                );
            }
            Some("build-script-executed") => script_ran = true,
            _ => {}
        }
    }
    assert!(script_ran, "the build script ran\n{}", build.dump());
    for line in build.stderr.lines() {
        if line.starts_with("warning") && line.contains("kitchen-sink") {
            warnings.push(line.to_string());
        }
    }
    assert!(
        warnings.is_empty(),
        "kitchen-sink must compile without warnings:\n{}",
        warnings.join("\n")
    );

    let test = run(cargo(&copy).args(["test"]), BUILD);
    test.assert_success();
    assert!(test.stdout.contains("test result: ok."), "{}", test.dump());
    let mut expected: Vec<String> = ["vox", "more-vox"]
        .iter()
        .flat_map(|d| vox_test_names(&copy.join(d)))
        .map(|n| format!("vox_tests::{n}"))
        .collect();
    assert!(
        expected.iter().any(|n| n == "vox_tests::patterns"),
        "{expected:?}"
    );
    expected.push("rust_side::pure_functions_are_plain_rust".into());
    for name in &expected {
        assert!(
            test.stdout.contains(&format!("test {name} ... ok")),
            "missing passing test {name}\n{}",
            test.dump()
        );
    }
    assert!(!test.stdout.contains("FAILED"), "{}", test.dump());
    // `log_words` prints from inside a passing Vox @test: libtest captures
    // it, so it never lands in (and garbles) the test report.
    assert!(
        !test.stdout.contains("words: "),
        "Vox print output escaped libtest's capture\n{}",
        test.dump()
    );
}

#[test]
fn invoice_app_tests_replay_the_committed_cassette() {
    // `cargo test` offline (the fixture provider, no key): the Vox @test
    // `reads_a_recorded_invoice` passes only on the replies recorded in
    // vox/cassettes/extract_invoice.jsonl (a re-prompt included); the
    // fixture body would say "ACME Corp".
    let app = workspace_root().join("fixtures/invoice-app");
    let cassette = app.join("vox/cassettes/extract_invoice.jsonl");
    let before = std::fs::read(&cassette).expect("the committed cassette");
    let mut cmd = cargo(&app);
    cmd.args(["test", "--quiet"]);
    let r = run(&mut cmd, BUILD);
    r.assert_success();
    assert!(r.stdout.contains("4 passed; 0 failed"), "{}", r.dump());
    assert_eq!(
        std::fs::read(&cassette).unwrap(),
        before,
        "replaying changed the cassette"
    );
}

#[test]
fn invoice_app_runs_offline() {
    let app = workspace_root().join("fixtures/invoice-app");
    // `cargo` runs it offline: the fixture provider, no key inherited.
    let mut cmd = cargo(&app);
    cmd.args(["run", "--quiet"]);
    let r = run(&mut cmd, BUILD);
    r.assert_success();
    for needle in [
        "ACME Corp: 2 lines",
        "total    19.25",
        // The image variant: its fixture body runs, the scan is not read.
        "scan: ACME Corp: 2 lines, due 2026-12-31",
        "triage \"hi\": low",
        // Streamed under `fixture`: the fixture's value, in pieces.
        "streamed: ACME Corp: 2 lines, due 2026-12-31, open (",
    ] {
        assert!(
            r.stdout.contains(needle),
            "missing {needle:?}\n{}",
            r.dump()
        );
    }
    assert!(
        !r.stderr.contains("no LLM provider configured"),
        "an explicit provider needs no warning\n{}",
        r.dump()
    );

    // No provider and no keys: still `fixture`, with a one-time warning.
    let mut cmd = cargo(&app);
    cmd.args(["run", "--quiet"]).env_remove("VOX_LLM_PROVIDER");
    let r = run(&mut cmd, BUILD);
    r.assert_success();
    assert!(r.stdout.contains("ACME Corp: 2 lines"), "{}", r.dump());
    assert!(r.stdout.contains("total    19.25"), "{}", r.dump());
    let warnings: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("warning") && l.contains("fixture"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "exactly one warning about the fixture provider, though several @ai calls ran\n{}",
        r.dump()
    );
}

#[test]
fn batch_app_runs_its_generated_batch_functions_on_a_loopback_engine() {
    // batch-app's own test starts a loopback emulation of OpenAI's Files
    // and Batch APIs and configures the default client to it: the
    // generated `read_count_batch` and `read_page_count_batch` (a tuple
    // input, `check = f`) run, re-run what does not fit, and resume.
    let app = workspace_root().join("fixtures/batch-app");
    let mut cmd = cargo(&app);
    cmd.args(["test", "--quiet"]);
    let r = run(&mut cmd, BUILD);
    r.assert_success();
    assert!(
        r.stdout.contains("1 passed; 0 failed"),
        "the batch test ran\n{}",
        r.dump()
    );
}

/// The committed lock files of the fixture crates match their manifests and
/// the workspace's crates (a new dependency of vox-codegen, say), so the
/// README's first command and CI do not rewrite files in the checkout.
#[test]
fn fixture_lock_files_are_current() {
    let fixtures = workspace_root().join("fixtures");
    let mut stale = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&fixtures)
        .expect("fixtures/ exists")
        .flatten()
    {
        let dir = entry.path();
        if !dir.join("Cargo.lock").is_file() {
            continue;
        }
        seen += 1;
        // `--locked` resolves the whole lock file; the platform filter
        // keeps cargo from needing the sources of other targets' packages
        // (`bumpalo` for wasm), which nothing here downloads, so the check
        // stays offline on a machine that only built for its own host.
        let out = cargo(&dir)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--locked",
                "--offline",
                "--filter-platform",
                "host-tuple",
            ])
            .output()
            .expect("cargo runs");
        if !out.status.success() {
            stale.push(format!(
                "{}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(
        seen >= 3,
        "found only {seen} fixture crates with a Cargo.lock"
    );
    assert!(
        stale.is_empty(),
        "stale Cargo.lock (run `cargo metadata` in each):\n{}",
        stale.join("\n")
    );
}
