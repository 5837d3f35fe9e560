//! The generated-code contract has one number everywhere: what vox-codegen
//! emits, what vox-runtime accepts, and what vox-build and vox-runtime
//! declare in `[package.metadata.vox] contract` (which `cargo vox doctor`
//! reads to detect drift).
//!
//! The machine contract (envelopes, diagnostic payloads, vox-build reports,
//! exit statuses) has one definition, the `vox-metadata` crate: what
//! vox-codegen and vox-build write by hand (they stay free of serde) is
//! pinned to it here.

use serde_json::Value;
use vox_e2e::{assert_exact_round_trip, cargo, run, workspace_root, QUICK};

#[test]
fn contract_versions_agree() {
    assert_eq!(
        vox_codegen::emit::CONTRACT_VERSION,
        vox_runtime::CONTRACT_VERSION,
        "vox-codegen emits a contract vox-runtime does not accept"
    );

    let meta = run(
        cargo(&workspace_root()).args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ]),
        QUICK,
    );
    meta.assert_success();
    let meta: Value = serde_json::from_str(&meta.stdout).expect("cargo metadata prints JSON");
    let packages = meta["packages"].as_array().expect("packages");
    for name in ["vox-build", "vox-runtime"] {
        let pkg = packages
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} is a workspace member"));
        let declared = &pkg["metadata"]["vox"]["contract"];
        assert_eq!(
            declared.as_u64(),
            Some(u64::from(vox_runtime::CONTRACT_VERSION)),
            "{name}'s Cargo.toml declares `[package.metadata.vox] contract = {declared}`, \
             but the code's contract is {}",
            vox_runtime::CONTRACT_VERSION
        );
    }
}

#[test]
fn vox_codegen_payloads_are_vox_metadata_diagnostics() {
    let dir = workspace_root().join("fixtures/invalid");
    let files = vox_e2e::vox_files(&dir);
    let (mut payloads, mut fixes, mut related, mut typed) = (0, 0, 0, 0);
    for path in &files {
        let mut sources = vox_codegen::SourceMap::new();
        sources.add(vox_codegen::SourceFile::from_bytes(
            path.file_name().unwrap().to_string_lossy(),
            &std::fs::read(path).unwrap(),
        ));
        let checked = vox_codegen::check(sources);
        for d in checked.diagnostics() {
            let text = vox_codegen::diagnostic::payload(d, checked.sources()).to_compact();
            assert_exact_round_trip::<vox_metadata::DiagnosticPayload>(
                &path.display().to_string(),
                &text,
            );
            payloads += 1;
            fixes += d.fixes.len();
            related += d.related.len();
            typed += usize::from(d.expected.is_some());
        }
    }
    // The corpus exercises every part of the payload.
    assert!(
        payloads > 100 && fixes > 0 && related > 0 && typed > 0,
        "{payloads} payloads, {fixes} fixes, {related} related spans, {typed} with types"
    );
}

#[test]
fn vox_build_reports_are_vox_metadata_reports() {
    assert_eq!(vox_build::REPORT_VERSION, vox_metadata::REPORT_VERSION);
    assert_eq!(vox_build::REPORT_FILE, vox_metadata::DEFAULT_REPORT_FILE);
    assert_eq!(vox_build::DEFAULT_OUT_NAME, vox_metadata::DEFAULT_OUT_NAME);
    for name in ["vox_generated", "prompts", "a-b_9"] {
        assert_eq!(
            vox_build::report_file_name(name),
            vox_metadata::report_file_name(name),
            "{name}"
        );
        assert!(vox_metadata::is_report_file_name(
            &vox_build::report_file_name(name)
        ));
    }

    let root = vox_e2e::work_dir("contract-report");
    std::fs::create_dir_all(root.join("vox")).unwrap();
    std::fs::write(
        root.join("vox/a.vox"),
        "type A { x: int, x: int }\n\nfn f(a: A) to int {\n    let unused = a.y\n    return \"s\"\n}\n",
    )
    .unwrap();
    for out_name in ["vox_generated", "prompts"] {
        let result = vox_build::Builder::new()
            .manifest_dir(&root)
            .out_dir(root.join("out"))
            .out_name(out_name)
            .quiet()
            .try_compile();
        assert!(
            matches!(result, Err(vox_build::Error::Diagnostics { .. })),
            "{result:?}"
        );
        let path = root
            .join("out")
            .join(vox_metadata::report_file_name(out_name));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_exact_round_trip::<vox_metadata::Report>(&path.display().to_string(), &text);
        let report = vox_metadata::Report::from_json(&text).unwrap();
        assert_eq!(report.out_name.as_deref(), Some(out_name));
        assert!(report.run.is_some());
        assert!(!report.ok);
        assert_eq!(
            report.error_count,
            report.diagnostics.iter().filter(|d| d.is_error()).count()
        );
        assert_eq!(
            report.warning_count,
            report.diagnostics.len() - report.error_count
        );
        assert!(
            report.warning_count > 0 && report.error_count >= 3,
            "{text}"
        );
        assert_eq!(report.files, ["vox/a.vox"]);
        assert!(report
            .diagnostics
            .iter()
            .all(|d| d.source == vox_metadata::source::VOX && d.file_path == "vox/a.vox"));
    }
}

#[test]
fn cargo_vox_uses_vox_metadata_exit_statuses_and_version() {
    use cargo_vox::exit;
    assert_eq!(
        (exit::SUCCESS, exit::FAILURE, exit::USAGE),
        (
            vox_metadata::exit::SUCCESS,
            vox_metadata::exit::FAILURE,
            vox_metadata::exit::USAGE
        )
    );
    assert_eq!(
        cargo_vox::envelope::ENVELOPE_VERSION,
        vox_metadata::ENVELOPE_VERSION
    );
}
