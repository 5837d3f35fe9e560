//! The generated-code contract has one number everywhere: what vox-codegen
//! emits, what vox-runtime accepts, and what vox-build and vox-runtime
//! declare in `[package.metadata.vox] contract` (which `cargo vox doctor`
//! reads to detect drift).

use serde_json::Value;
use vox_e2e::{cargo, run, workspace_root, QUICK};

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
