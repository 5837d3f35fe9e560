//! `cargo vox check`: exit codes, the JSON envelope, human rendering, and
//! how the module to check is chosen (paths, `--manifest-path`, `-p`, the
//! current directory).

use vox_e2e::{copy_fixture, only_envelope, vox, vox_files, work_dir, workspace_root, Run};
use vox_metadata::{DiagnosticPayload, Envelope};

/// The single envelope a `--json` check prints.
fn envelope(r: &Run) -> Envelope {
    only_envelope(r, "check")
}

fn diagnostics_with_code<'a>(env: &'a Envelope, code: &str) -> Vec<&'a DiagnosticPayload> {
    env.diagnostics
        .iter()
        .filter(|d| d.error_code.as_deref() == Some(code))
        .collect()
}

const BROKEN: &str = "type Invoice {
    vendor: str
}

fn vendor_of(inv: Invoice) to str {
    return inv.vendr
}

fn tally() to int {
    return \"many\"
}
";

#[test]
fn valid_module_passes_in_both_modes() {
    let root = workspace_root();
    for args in [
        &["--json", "check", "fixtures/valid"][..],
        &["check", "fixtures/valid", "--json"],
        &["check", "--json", "fixtures/valid/invoice.vox"],
    ] {
        let r = vox(&root, args);
        r.assert_code(0);
        assert_eq!(r.stdout.lines().count(), 1, "one line\n{}", r.dump());
        let env = envelope(&r);
        assert!(env.ok, "{env:?}");
        assert_eq!(env.error_count, 0, "{env:?}");
        assert_eq!(env.warning_count, 0, "{env:?}");
        assert!(env.diagnostics.is_empty(), "{env:?}");
    }
    let human = vox(&root, &["check", "fixtures/valid/invoice.vox"]);
    human.assert_code(0);
    assert_eq!(human.stdout, "", "human mode prints nothing on stdout");
    assert!(
        human.stderr.contains("checked 1 Vox file"),
        "{}",
        human.dump()
    );
}

#[test]
fn cargo_subcommand_form_works() {
    // `cargo vox check` runs `cargo-vox vox check`.
    let root = workspace_root();
    let r = vox(&root, &["vox", "check", "--json", "fixtures/valid"]);
    r.assert_code(0);
    assert!(envelope(&r).ok);
    let r = vox(&root, &["vox", "--json", "check", "fixtures/valid"]);
    r.assert_code(0);
    assert!(envelope(&r).ok);
}

#[test]
fn errors_are_reported_precisely() {
    let dir = work_dir("check-errors");
    std::fs::write(dir.join("broken.vox"), BROKEN).unwrap();

    let r = vox(&dir, &["check", "--json", "broken.vox"]);
    r.assert_code(1);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert_eq!(env.error_count, 2, "{env:?}");
    assert_eq!(env.file_path, "broken.vox", "{env:?}");

    let unknown = diagnostics_with_code(&env, "vox/type/unknown-field");
    assert_eq!(unknown.len(), 1, "{env:?}");
    let d = unknown[0];
    assert_eq!(d.severity, "error");
    assert_eq!(d.source, "vox");
    assert_eq!(d.file_path, "broken.vox");
    assert_eq!(d.span.start_line, 6);
    assert_eq!(d.span.start_col, 16);
    assert!(
        d.correction_hints.iter().any(|h| h.contains("vendor")),
        "did-you-mean hint: {d:?}"
    );
    let fix = &d.suggested_fixes[0];
    assert_eq!(fix.applicability, "machine-applicable", "{d:?}");
    assert_eq!(fix.edits[0].replacement, "vendor", "{d:?}");
    assert_eq!(fix.edits[0].file_path, "broken.vox", "{d:?}");
    assert_eq!(fix.edits[0].span.start_line, 6, "{d:?}");

    let mismatch = diagnostics_with_code(&env, "vox/type/mismatch");
    assert_eq!(mismatch.len(), 1, "{env:?}");
    let d = mismatch[0];
    assert_eq!(d.file_path, "broken.vox");
    assert_eq!(d.span.start_line, 10);
    assert_eq!(d.expected_type.as_deref(), Some("int"));
    assert_eq!(d.found_type.as_deref(), Some("str"));

    // The same facts for people, on stderr only.
    let h = vox(&dir, &["check", "broken.vox"]);
    h.assert_code(1);
    assert_eq!(
        h.stdout,
        "",
        "human mode prints nothing on stdout\n{}",
        h.dump()
    );
    for needle in [
        "error[vox/type/unknown-field]",
        " --> broken.vox:6:16",
        "    return inv.vendr",
        "^^^^^",
        "= help: did you mean `vendor`?",
        "error[vox/type/mismatch]",
        " --> broken.vox:10:12",
        "    return \"many\"",
    ] {
        assert!(
            h.stderr.contains(needle),
            "missing {needle:?}\n{}",
            h.dump()
        );
    }
    let last = h
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(
        last.contains("2 errors") && last.contains("checked 1 Vox file"),
        "one-line summary at the end: {last:?}\n{}",
        h.dump()
    );
}

#[test]
fn errors_in_several_files_form_one_module() {
    // Two files checked together: a type in one is visible in the other,
    // and each diagnostic names its own file.
    let dir = work_dir("check-module");
    std::fs::create_dir_all(dir.join("vox")).unwrap();
    std::fs::write(dir.join("vox/types.vox"), "type Point { x: int, y: int }\n").unwrap();
    std::fs::write(
        dir.join("vox/use.vox"),
        "fn norm(p: Point) to int {\n    p.x + p.y\n}\n\nfn bad() to bool {\n    1\n}\n",
    )
    .unwrap();
    let r = vox(&dir, &["--json", "check", "vox"]);
    r.assert_code(1);
    let env = envelope(&r);
    assert_eq!(env.error_count, 1, "{env:?}");
    let d = &env.diagnostics[0];
    assert_eq!(d.error_code.as_deref(), Some("vox/type/mismatch"), "{d:?}");
    assert_eq!(d.file_path, "vox/use.vox", "{d:?}");
    assert_eq!(d.span.start_line, 6, "{d:?}");
    assert_eq!(d.expected_type.as_deref(), Some("bool"), "{d:?}");
    assert_eq!(d.found_type.as_deref(), Some("int"), "{d:?}");
}

#[test]
fn missing_path_is_a_usage_error() {
    let dir = work_dir("check-missing");
    let h = vox(&dir, &["check", "does-not-exist.vox"]);
    h.assert_code(2);
    assert_eq!(h.stdout, "", "{}", h.dump());
    assert!(
        h.stderr.contains("does-not-exist.vox") && h.stderr.contains("no such file"),
        "clear message\n{}",
        h.dump()
    );

    let r = vox(&dir, &["--json", "check", "does-not-exist.vox"]);
    r.assert_code(2);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    let message = env.message.as_deref().expect("a message");
    assert!(message.contains("does-not-exist.vox"), "{env:?}");

    let r = vox(
        &dir,
        &["--json", "--manifest-path", "nope/Cargo.toml", "check"],
    );
    r.assert_code(2);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert!(env.message.as_deref().is_some(), "{env:?}");
}

#[test]
fn invalid_utf8_and_nul_bytes_are_diagnostics() {
    let dir = work_dir("check-bytes");
    let mut bytes = b"type A { x: int }\n\nfn f() to str {\n    return \"".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0x00, 0xc3]);
    bytes.extend_from_slice(b"\"\n}\n\x00\x00\n");
    std::fs::write(dir.join("bytes.vox"), &bytes).unwrap();
    // Nothing but garbage.
    std::fs::write(
        dir.join("garbage.vox"),
        [0x00, 0xff, 0x80, 0x00, 0xc0, 0xaf],
    )
    .unwrap();

    for file in ["bytes.vox", "garbage.vox"] {
        let r = vox(&dir, &["check", "--json", file]);
        r.assert_code(1);
        let env = envelope(&r);
        assert!(!env.ok, "{env:?}");
        let utf8 = diagnostics_with_code(&env, "vox/syntax/invalid-utf8");
        assert!(!utf8.is_empty(), "{file}: {env:?}");
        assert_eq!(utf8[0].file_path, file, "{env:?}");
        let h = vox(&dir, &["check", file]);
        h.assert_code(1);
        assert!(
            h.stderr.contains("error[vox/syntax/invalid-utf8]"),
            "{}",
            h.dump()
        );
    }
    let d = diagnostics_with_code(
        &envelope(&vox(&dir, &["check", "--json", "bytes.vox"])),
        "vox/syntax/invalid-utf8",
    )[0]
    .clone();
    assert_eq!(d.span.start_line, 4, "{d:?}");
}

#[test]
fn package_mode_reads_metadata_sources() {
    let root = workspace_root();
    let manifest = "fixtures/kitchen-sink/Cargo.toml";

    // Both `vox/` and `more-vox/` count.
    let expected_files = ["vox", "more-vox"]
        .iter()
        .map(|d| vox_files(&root.join("fixtures/kitchen-sink").join(d)).len())
        .sum::<usize>();
    assert!(expected_files >= 3);
    let r = vox(&root, &["--manifest-path", manifest, "check", "--json"]);
    r.assert_code(0);
    let env = envelope(&r);
    assert!(env.ok, "{env:?}");
    assert!(env.file_path.ends_with("Cargo.toml"), "{env:?}");
    let h = vox(&root, &["check", "--manifest-path", manifest]);
    h.assert_code(0);
    assert!(
        h.stderr.contains(&format!(
            "checked {expected_files} Vox files in kitchen-sink"
        )),
        "file count covers vox/ and more-vox/\n{}",
        h.dump()
    );

    // An error in `more-vox/` shows up, with a package-relative path.
    let copy = copy_fixture("kitchen-sink", "check-kitchen-sink");
    std::fs::write(
        copy.join("more-vox/broken.vox"),
        "fn broken() to int {\n    \"not an int\"\n}\n",
    )
    .unwrap();
    let r = vox(
        &root,
        &[
            "check",
            "--json",
            "--manifest-path",
            copy.join("Cargo.toml").to_str().unwrap(),
        ],
    );
    r.assert_code(1);
    let env = envelope(&r);
    let mismatch = diagnostics_with_code(&env, "vox/type/mismatch");
    assert_eq!(mismatch.len(), 1, "{env:?}");
    let path = mismatch[0].file_path.as_str();
    assert!(
        path.ends_with("more-vox/broken.vox"),
        "diagnostic names the file in more-vox: {env:?}"
    );
    assert_eq!(mismatch[0].span.start_line, 2, "{env:?}");

    // With no paths and no manifest, the package around the current directory.
    let r = vox(&copy, &["--json", "check"]);
    r.assert_code(1);
    let env = envelope(&r);
    assert_eq!(env.error_count, 1, "{env:?}");
    assert_eq!(
        diagnostics_with_code(&env, "vox/type/mismatch")[0].file_path,
        "more-vox/broken.vox",
        "{env:?}"
    );
    let r = vox(&copy.join("src"), &["check", "--json"]);
    r.assert_code(1);

    // invoice-app has no metadata: `vox/` is the default.
    let r = vox(&root.join("fixtures/invoice-app"), &["check", "--json"]);
    r.assert_code(0);
    assert!(envelope(&r).ok);
    let h = vox(&root.join("fixtures/invoice-app"), &["check"]);
    h.assert_code(0);
    assert!(
        h.stderr.contains("checked 2 Vox files in invoice-app"),
        "{}",
        h.dump()
    );

    // `-p` names a package of the selected workspace.
    let r = vox(
        &root,
        &[
            "-p",
            "kitchen-sink",
            "--manifest-path",
            manifest,
            "check",
            "--json",
        ],
    );
    r.assert_code(0);
    let r = vox(
        &root,
        &[
            "--manifest-path",
            manifest,
            "check",
            "--json",
            "-p",
            "does-not-exist",
        ],
    );
    r.assert_code(2);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert!(
        env.message.as_deref().unwrap().contains("does-not-exist"),
        "{env:?}"
    );
    let h = vox(&root, &["check", "-p", "does-not-exist"]);
    h.assert_code(2);
    assert!(h.stderr.contains("does-not-exist"), "{}", h.dump());
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let root = workspace_root();
    for args in [
        &["check", "--no-such-flag"][..],
        &["--no-such-flag", "check"],
        &["no-such-command"],
    ] {
        let r = vox(&root, args);
        r.assert_code(2);
        assert_eq!(r.stdout, "", "{}", r.dump());
    }
}

#[test]
fn whole_workspace_check_names_the_workspace_manifest() {
    // At a virtual workspace root with no paths and no `-p`, check works on
    // every member: the envelope's `file_path` is the workspace manifest,
    // not the first member's.
    let root = workspace_root();
    let r = vox(&root, &["check", "--json"]);
    r.assert_code(0);
    let env = envelope(&r);
    assert!(env.ok, "{env:?}");
    assert_eq!(env.file_path, "Cargo.toml", "{env:?}");
}
