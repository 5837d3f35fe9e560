//! vox-build's rebuild precision (the vox-build crate docs), on a copy of invoice-app:
//! editing, adding or deleting a `.vox` file reruns the build script and
//! nothing else does; nothing is written outside `OUT_DIR`; the report is
//! always there; errors fail the build readably, warnings reach cargo.
//!
//! One copy and one test, steps in order: every build after the first only
//! recompiles the copy's own crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use vox_e2e::{cargo, copy_fixture, listing, read, remove_later, run, write_later, Run, BUILD};
use vox_metadata::Report;

/// What one `cargo build -v --message-format=json` did to the crate.
struct Build {
    run: Run,
    script_ran: bool,
    compiled: bool,
    fresh: bool,
    out_dir: Option<PathBuf>,
}

fn build(dir: &Path) -> Build {
    build_package(dir, REBUILT_INVOICE_APP)
}

/// The package name of this file's invoice-app copy. Cargo gives packages
/// of one name and version outside a workspace one build directory and
/// fingerprint in the shared target directory, whatever their path: under
/// its own name the copy's no-op builds cannot be undone by another test
/// building invoice-app at the same time.
const REBUILT_INVOICE_APP: &str = "rebuild-invoice-app";

/// Renames the package at `root` from `from` to `to` (manifest and lock).
fn rename_package(root: &Path, from: &str, to: &str) {
    for file in ["Cargo.toml", "Cargo.lock"] {
        let path = root.join(file);
        let text = read(&path);
        let renamed = text.replacen(
            &format!("name = \"{from}\""),
            &format!("name = \"{to}\""),
            1,
        );
        assert_ne!(text, renamed, "{file} names the package `{from}`");
        std::fs::write(&path, renamed).unwrap();
    }
}

fn build_package(dir: &Path, package: &str) -> Build {
    let run = run(
        cargo(dir).args(["build", "-v", "--message-format=json"]),
        BUILD,
    );
    let stderr_lines: Vec<&str> = run.stderr.lines().map(str::trim).collect();
    let script_ran = stderr_lines.iter().any(|l| {
        l.starts_with("Running `")
            && l.contains(&format!("{package}-"))
            && l.trim_end_matches('`').ends_with("build-script-build")
    });
    let compiled = stderr_lines
        .iter()
        .any(|l| l.starts_with(&format!("Compiling {package} ")));
    let fresh = stderr_lines
        .iter()
        .any(|l| l.starts_with(&format!("Fresh {package} ")));
    let out_dir = run
        .stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| {
            m["reason"] == "build-script-executed"
                && m["package_id"]
                    .as_str()
                    .is_some_and(|id| id.contains(package))
        })
        .and_then(|m| m["out_dir"].as_str().map(PathBuf::from));
    Build {
        run,
        script_ran,
        compiled,
        fresh,
        out_dir,
    }
}

/// The default output's report, read with the published types (which
/// check `report_version`).
fn report(out_dir: &Path) -> Report {
    let path = out_dir.join(vox_metadata::DEFAULT_REPORT_FILE);
    let text = read(&path);
    Report::from_json(&text)
        .unwrap_or_else(|e| panic!("{} is not a report ({e}): {text}", path.display()))
}

/// Asserts a successful build, the OK report, and an unchanged package tree.
fn assert_clean_success(
    step: &str,
    b: &Build,
    root: &Path,
    expected: &BTreeSet<PathBuf>,
) -> PathBuf {
    assert!(
        b.run.status.success(),
        "{step}: build failed\n{}",
        b.run.dump()
    );
    let out_dir = b
        .out_dir
        .clone()
        .unwrap_or_else(|| panic!("{step}: no build-script-executed message\n{}", b.run.dump()));
    let rep = report(&out_dir);
    assert!(rep.ok, "{step}: report {rep:?}");
    assert_eq!(rep.error_count, 0, "{step}: report {rep:?}");
    let now = listing(root);
    assert_eq!(
        &now,
        expected,
        "{step}: the build wrote into the package (only OUT_DIR is allowed); new: {:?}, gone: {:?}",
        now.difference(expected).collect::<Vec<_>>(),
        expected.difference(&now).collect::<Vec<_>>()
    );
    out_dir
}

#[test]
fn build_script_reruns_exactly_when_vox_sources_change() {
    let root = copy_fixture("invoice-app", "rebuild-invoice-app");
    rename_package(&root, "invoice-app", REBUILT_INVOICE_APP);
    let mut expected = listing(&root);

    let first = build(&root);
    let out_dir = assert_clean_success("first build", &first, &root, &expected);
    assert!(
        first.script_ran,
        "first build runs the script\n{}",
        first.run.dump()
    );
    assert!(out_dir.join("vox_generated.rs").is_file());
    let files = report(&out_dir).files;
    assert_eq!(
        files,
        ["vox/invoice.vox", "vox/triage.vox"],
        "report lists package-relative sources"
    );

    let noop = build(&root);
    assert_clean_success("no-op build", &noop, &root, &expected);
    assert!(
        !noop.script_ran,
        "no-op build reran the build script\n{}",
        noop.run.dump()
    );
    assert!(
        !noop.compiled,
        "no-op build recompiled the crate\n{}",
        noop.run.dump()
    );
    assert!(
        noop.fresh,
        "no-op build: crate is Fresh\n{}",
        noop.run.dump()
    );

    // Editing a .vox file.
    let invoice = root.join("vox/invoice.vox");
    let edited = read(&invoice) + "\nfn added_by_test() to int {\n    41 + 1\n}\n";
    write_later(&invoice, edited);
    let b = build(&root);
    assert_clean_success("edit .vox", &b, &root, &expected);
    assert!(
        b.script_ran,
        "editing a .vox file reruns the script\n{}",
        b.run.dump()
    );
    assert!(
        b.compiled,
        "editing a .vox file rebuilds the crate\n{}",
        b.run.dump()
    );
    assert!(
        read(&out_dir.join("vox_generated.rs")).contains("added_by_test"),
        "generated code follows the edit"
    );

    // Adding a .vox file.
    let extra = root.join("vox/extra.vox");
    write_later(&extra, "fn extra_helper(n: int) to int {\n    n * 2\n}\n");
    expected.insert(PathBuf::from("vox/extra.vox"));
    let b = build(&root);
    assert_clean_success("add .vox", &b, &root, &expected);
    assert!(
        b.script_ran,
        "adding a .vox file reruns the script\n{}",
        b.run.dump()
    );
    assert!(b.compiled, "{}", b.run.dump());
    assert!(report(&out_dir)
        .files
        .contains(&"vox/extra.vox".to_string()));

    // Deleting it.
    remove_later(&extra);
    expected.remove(Path::new("vox/extra.vox"));
    let b = build(&root);
    assert_clean_success("delete .vox", &b, &root, &expected);
    assert!(
        b.script_ran,
        "deleting a .vox file reruns the script\n{}",
        b.run.dump()
    );
    assert!(!report(&out_dir).files.iter().any(|f| f.contains("extra")));

    // Editing Rust only: the crate, not the script.
    let main_rs = root.join("src/main.rs");
    write_later(
        &main_rs,
        read(&main_rs) + "\n// A comment added by the rebuild test.\n",
    );
    let b = build(&root);
    assert_clean_success("edit main.rs", &b, &root, &expected);
    assert!(
        !b.script_ran,
        "editing src/main.rs must not rerun the build script\n{}",
        b.run.dump()
    );
    assert!(
        b.compiled,
        "editing src/main.rs recompiles the crate\n{}",
        b.run.dump()
    );

    // A Vox type error fails the build, readably.
    let broken = root.join("vox/broken.vox");
    write_later(
        &broken,
        "fn broken() to int {\n    return \"not a number\"\n}\n",
    );
    expected.insert(PathBuf::from("vox/broken.vox"));
    let failed = run(cargo(&root).args(["build"]), BUILD);
    failed.assert_failure();
    for needle in [
        "error[vox/type/mismatch]",
        " --> vox/broken.vox:2:12",
        "    return \"not a number\"",
        "could not compile due to 1 error",
    ] {
        assert!(
            failed.stderr.contains(needle),
            "type error: missing {needle:?}\n{}",
            failed.dump()
        );
    }
    for banned in ["panicked", "RUST_BACKTRACE"] {
        assert!(
            !failed.stderr.contains(banned),
            "type error output must not contain {banned:?}\n{}",
            failed.dump()
        );
    }
    let newest = newest_report();
    assert_eq!(
        newest,
        out_dir.join("vox-report.json"),
        "the failed build's report is in OUT_DIR"
    );
    let rep = report(&out_dir);
    assert!(!rep.ok, "{rep:?}");
    assert_eq!(rep.error_count, 1, "{rep:?}");
    let d = &rep.diagnostics[0];
    assert_eq!(
        d.error_code.as_deref(),
        Some("vox/type/mismatch"),
        "{rep:?}"
    );
    assert_eq!(d.file_path, "vox/broken.vox", "{rep:?}");
    assert_eq!(d.span.start_line, 2, "{rep:?}");
    assert_eq!(d.expected_type.as_deref(), Some("int"), "{rep:?}");
    assert_eq!(d.found_type.as_deref(), Some("str"), "{rep:?}");
    assert_eq!(
        listing(&root),
        expected,
        "a failed build writes nothing into the package"
    );

    // Fixing it makes the build pass again.
    write_later(&broken, "fn broken() to int {\n    return 7\n}\n");
    let b = build(&root);
    assert_clean_success("fixed error", &b, &root, &expected);
    assert!(b.script_ran, "{}", b.run.dump());

    // A Vox warning reaches `cargo build` as a `warning:` line.
    write_later(
        &broken,
        "fn broken() to int {\n    let unused_here = 3\n    return 7\n}\n",
    );
    let b = build(&root);
    assert_clean_success("vox warning", &b, &root, &expected);
    let warning = b
        .run
        .stderr
        .lines()
        .find(|l| l.starts_with("warning:") && l.contains("vox/lint/unused-variable"));
    assert!(
        warning.is_some_and(|w| w.contains("vox/broken.vox:2") && w.contains("unused_here")),
        "a cargo warning line names the file, line and variable\n{}",
        b.run.dump()
    );
    let rep = report(&out_dir);
    assert_eq!(rep.warning_count, 1, "{rep:?}");

    // A no-op build after all that is still a no-op, and the report is still there.
    let b = build(&root);
    assert_clean_success("final no-op", &b, &root, &expected);
    assert!(!b.script_ran && !b.compiled, "{}", b.run.dump());
}

/// A configured source directory that does not exist contributes no files;
/// it must not make every `cargo build` rerun the script either (cargo
/// treats a missing `rerun-if-changed` path as always changed).
#[test]
fn missing_source_dir_does_not_force_rebuilds() {
    let root = copy_fixture("kitchen-sink", "rebuild-kitchen-sink");
    rename_package(&root, "kitchen-sink", "rebuild-kitchen-sink");
    let manifest = root.join("Cargo.toml");
    let text = read(&manifest);
    let with_missing = text.replace(
        r#"sources = ["vox", "more-vox"]"#,
        r#"sources = ["vox", "more-vox", "not-there"]"#,
    );
    assert_ne!(text, with_missing, "kitchen-sink sets `sources`");
    std::fs::write(&manifest, with_missing).unwrap();

    let first = build_package(&root, "rebuild-kitchen-sink");
    assert!(first.run.status.success(), "{}", first.run.dump());
    assert!(first.script_ran, "{}", first.run.dump());
    let second = build_package(&root, "rebuild-kitchen-sink");
    assert!(second.run.status.success(), "{}", second.run.dump());
    assert!(
        !second.script_ran && !second.compiled,
        "a no-op build reran the build script because the source directory \
         `not-there` does not exist\n--- cargo stderr ---\n{}",
        second.run.stderr
    );
}

/// The most recently written `vox-report.json` of the invoice-app copy's
/// build script.
fn newest_report() -> PathBuf {
    let build_dir = vox_e2e::profile_dir().join("build");
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&build_dir).expect("target/debug/build") {
        let dir = entry.unwrap().path();
        let is_ours = dir.file_name().is_some_and(|n| {
            n.to_string_lossy()
                .starts_with(&format!("{REBUILT_INVOICE_APP}-"))
        });
        let report = dir.join("out").join("vox-report.json");
        if !is_ours || !report.is_file() {
            continue;
        }
        let mtime = std::fs::metadata(&report).unwrap().modified().unwrap();
        if best.as_ref().is_none_or(|(t, _)| mtime > *t) {
            best = Some((mtime, report));
        }
    }
    best.expect("the invoice-app copy's build wrote vox-report.json")
        .1
}
