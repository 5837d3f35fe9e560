//! vox-build's reports as `cargo vox build` reads them, on a copy of
//! `fixtures/lane/two-outputs` (two `Builder`s with different output names
//! in one build script): each output keeps its own report, both are read,
//! and a report left behind by an output name no longer used is not.

use std::path::{Path, PathBuf};

use vox_e2e::{cargo_vox, copy_fixture, only_envelope, run, target_dir, write_later, Run, BUILD};
use vox_metadata::{DiagnosticPayload, Envelope};

/// `cargo vox --json build` in `dir`: its exit status and its one envelope.
fn build(dir: &Path) -> (Run, Envelope) {
    let r = run(cargo_vox(dir).args(["--json", "build"]), BUILD);
    let env = only_envelope(&r, "build");
    (r, env)
}

fn with_code<'a>(env: &'a Envelope, code: &str) -> Vec<&'a DiagnosticPayload> {
    env.diagnostics
        .iter()
        .filter(|d| d.error_code.as_deref() == Some(code))
        .collect()
}

/// The report files named `file` in the fixture's build directories.
fn reports_named(file: &str) -> Vec<PathBuf> {
    let build = target_dir().join("debug").join("build");
    std::fs::read_dir(&build)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("two-outputs-"))
                .map(|e| e.path().join("out").join(file))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_builders_keep_their_own_reports() {
    let root = copy_fixture("lane/two-outputs", "two-outputs");

    // `vox/` has a warning, `prompts/` an error: the second `Builder` used
    // to overwrite the first one's report, and the warning vanished.
    let (r, env) = build(&root);
    r.assert_code(1);
    assert!(!env.ok, "{}", r.dump());
    assert_eq!((env.error_count, env.warning_count), (1, 1), "{}", r.dump());
    let mismatch = with_code(&env, "vox/type/mismatch");
    assert_eq!(mismatch.len(), 1, "{}", r.dump());
    assert_eq!(mismatch[0].file_path, "prompts/prompts.vox");
    assert_eq!(mismatch[0].span.start_line, 2);
    assert_eq!(mismatch[0].package.as_deref(), Some("two-outputs"));
    let unused = with_code(&env, "vox/lint/unused-variable");
    assert_eq!(unused.len(), 1, "{}", r.dump());
    assert_eq!(unused[0].file_path, "vox/main.vox");
    assert_eq!(unused[0].package.as_deref(), Some("two-outputs"));

    // The second output renamed and fixed: the build succeeds; the report
    // the old name left behind (with its error) is not read.
    write_later(
        &root.join("build.rs"),
        std::fs::read_to_string(root.join("build.rs"))
            .unwrap()
            .replace(".out_name(\"prompts\")", ".out_name(\"renamed\")"),
    );
    write_later(
        &root.join("prompts/prompts.vox"),
        "fn answer() to int {\n    return 42\n}\n",
    );
    let (r, env) = build(&root);
    r.assert_code(0);
    assert!(env.ok, "{}", r.dump());
    assert_eq!((env.error_count, env.warning_count), (0, 1), "{}", r.dump());
    assert_eq!(with_code(&env, "vox/lint/unused-variable").len(), 1);
    assert!(
        !reports_named("vox-report-renamed.json").is_empty(),
        "the renamed output has its report"
    );
    assert!(
        !reports_named("vox-report-prompts.json").is_empty(),
        "the old output's report is still there (and must not be read)"
    );

    // A report that cannot be read (here: of a newer format) used to be
    // skipped: its diagnostics vanished and the build said ok. Now it is an
    // error, under `--json` and for people. Nothing reruns (cargo does not
    // watch the report), so the build is fresh and reads the same OUT_DIR.
    let current = reports_named("vox-report.json");
    assert!(!current.is_empty());
    for path in &current {
        let text = std::fs::read_to_string(path).unwrap();
        std::fs::write(
            path,
            text.replace("\"report_version\":1", "\"report_version\":99"),
        )
        .unwrap();
    }
    let (r, env) = build(&root);
    r.assert_code(1);
    assert!(!env.ok, "{}", r.dump());
    let invalid = with_code(&env, vox_metadata::codes::INVALID_REPORT);
    assert_eq!(invalid.len(), 1, "{}", r.dump());
    assert_eq!(env.error_count, 1, "{}", r.dump());
    assert_eq!(invalid[0].source, "cargo-vox");
    assert_eq!(invalid[0].package.as_deref(), Some("two-outputs"));
    assert!(
        invalid[0].file_path.ends_with("vox-report.json")
            && invalid[0].message.contains("report_version"),
        "{}",
        r.dump()
    );
    let human = run(cargo_vox(&root).arg("build"), BUILD);
    human.assert_code(1);
    assert!(
        human.stderr.contains("error[cargo-vox/invalid-report]")
            && human.stderr.contains("report_version"),
        "{}",
        human.dump()
    );
}

/// A `.vox` file whose name holds line breaks spelling a build-script
/// instruction: vox-build must not pass it to cargo as one (it used to print
/// `cargo:rerun-if-changed=` with the raw name, so the name's second line
/// set a cfg that fails this crate's build), and the build compiles it.
#[cfg(unix)]
#[test]
fn a_file_name_cannot_smuggle_a_build_instruction() {
    let root = copy_fixture("lane/app", "build-reports-newline-name");
    std::fs::write(
        root.join("vox")
            .join("x\ncargo:rustc-cfg=vox_injected\ny.vox"),
        "fn smuggled() to int {\n    1\n}\n",
    )
    .expect("write the oddly named source");
    let main_rs = root.join("src").join("main.rs");
    let text = std::fs::read_to_string(&main_rs).expect("read main.rs");
    std::fs::write(
        &main_rs,
        format!("{text}\n#[cfg(vox_injected)]\ncompile_error!(\"a file name set a cfg\");\n"),
    )
    .expect("write main.rs");
    let (r, env) = build(&root);
    assert!(env.ok, "{env:?}\n{}", r.dump());
    assert!(!r.stderr.contains("a file name set a cfg"), "{}", r.dump());
    assert!(
        r.stderr.contains("cannot ask cargo to watch"),
        "the unwatchable file is named in a warning\n{}",
        r.dump()
    );
}
