//! Do vox-build (which writes the generated code) and vox-runtime (which the
//! generated code calls) agree on the generated-code contract? Each crate
//! declares it as `[package.metadata.vox] contract = N`; a workspace that
//! resolves the two at versions with different contracts compiles generated
//! code against an API it was not written for.
//!
//! The workspace is read through `cargo metadata` (under a timeout) and
//! judged by a pure function over the resolved packages.

use std::time::Duration;

use cargo_metadata::MetadataCommand;
use serde_json::Value;

use super::process::{run_with_timeout_and_cap, RunOutcome};
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::ProbeContext;

/// `cargo metadata` may have to resolve the workspace: it gets this many
/// probe timeouts.
const METADATA_TIMEOUT_FACTOR: u32 = 4;
const METADATA_OUTPUT_CAP: usize = 256 * 1024 * 1024;

/// One resolved vox-build or vox-runtime package.
#[derive(Debug, Clone, PartialEq)]
pub struct VoxPackage {
    pub name: String,
    pub version: String,
    /// `package.metadata.vox.contract`, `None` when undeclared.
    pub contract: Option<Value>,
}

impl VoxPackage {
    fn describe(&self) -> String {
        match &self.contract {
            Some(c) => format!("{} {} (contract {c})", self.name, self.version),
            None => format!("{} {} (no contract declared)", self.name, self.version),
        }
    }
}

/// Reads the contract out of a package's `metadata` value.
pub fn declared_contract(metadata: &Value) -> Option<Value> {
    metadata
        .get("vox")
        .and_then(|vox| vox.get("contract"))
        .filter(|c| !c.is_null())
        .cloned()
}

/// Judges the resolved vox packages: a passing or a `vox.schema_drift` result.
pub fn classify_contracts(packages: &[VoxPackage]) -> CheckResult {
    let builds: Vec<&VoxPackage> = packages.iter().filter(|p| p.name == "vox-build").collect();
    let runtimes: Vec<&VoxPackage> = packages
        .iter()
        .filter(|p| p.name == "vox-runtime")
        .collect();
    if builds.is_empty() || runtimes.is_empty() {
        let detail = if packages.is_empty() {
            "no vox-build or vox-runtime in this workspace; nothing to compare".to_string()
        } else {
            format!(
                "only {} resolved; nothing to compare",
                packages
                    .iter()
                    .map(VoxPackage::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return CheckResult::passed(CheckKind::SchemaDrift, detail);
    }
    let all: Vec<&VoxPackage> = builds.iter().chain(runtimes.iter()).copied().collect();
    let undeclared: Vec<&VoxPackage> = all
        .iter()
        .copied()
        .filter(|p| p.contract.is_none())
        .collect();
    let first = &all[0].contract;
    let agree = undeclared.is_empty() && all.iter().all(|p| &p.contract == first);
    let listing = all
        .iter()
        .map(|p| p.describe())
        .collect::<Vec<_>>()
        .join(", ");
    if agree {
        let contract = first.as_ref().map_or_else(String::new, Value::to_string);
        return CheckResult::passed(
            CheckKind::SchemaDrift,
            format!("generated-code contract {contract} agrees: {listing}"),
        );
    }
    let cause = if undeclared.is_empty() {
        format!("vox-build and vox-runtime declare different generated-code contracts: {listing}")
    } else {
        format!("a vox crate declares no generated-code contract: {listing}")
    };
    CheckResult::fired(
        DiagId::VoxSchemaDrift,
        cause,
        "depend on vox-build and vox-runtime at matching versions (same release), then `cargo update -p vox-build -p vox-runtime`",
    )
}

pub fn check_schema_drift(ctx: &ProbeContext) -> Vec<CheckResult> {
    let mut metadata = MetadataCommand::new();
    if let Some(path) = &ctx.manifest_path {
        metadata.manifest_path(path);
    }
    let timeout = ctx.probe_timeout * METADATA_TIMEOUT_FACTOR;
    let outcome = run_with_timeout_and_cap(metadata.cargo_command(), timeout, METADATA_OUTPUT_CAP);
    vec![match read_vox_packages(&outcome, timeout) {
        Ok(packages) => classify_contracts(&packages),
        Err(why) => CheckResult::passed(CheckKind::SchemaDrift, format!("not checked: {why}")),
    }]
}

/// The resolved vox packages from a `cargo metadata` run, or why there are none.
fn read_vox_packages(outcome: &RunOutcome, timeout: Duration) -> Result<Vec<VoxPackage>, String> {
    let stdout = match outcome {
        RunOutcome::Exited {
            code: Some(0),
            output,
        } => &output.stdout,
        RunOutcome::Exited { output, .. } => {
            let headline = output.headline();
            return Err(if headline.contains("could not find `Cargo.toml`") {
                "not inside a Cargo workspace".to_string()
            } else {
                format!("`cargo metadata` failed: {headline}")
            });
        }
        RunOutcome::TimedOut { .. } => {
            return Err(format!(
                "`cargo metadata` did not finish within {}s",
                timeout.as_secs_f64()
            ))
        }
        RunOutcome::CouldNotStart { reason } => {
            return Err(format!("cargo could not start: {reason}"))
        }
    };
    let metadata = MetadataCommand::parse(stdout)
        .map_err(|e| format!("unreadable `cargo metadata` output: {e}"))?;
    Ok(metadata
        .packages
        .iter()
        .filter(|p| p.name.as_str() == "vox-build" || p.name.as_str() == "vox-runtime")
        .map(|p| VoxPackage {
            name: p.name.to_string(),
            version: p.version.to_string(),
            contract: declared_contract(&p.metadata),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pkg(name: &str, version: &str, contract: Option<Value>) -> VoxPackage {
        VoxPackage {
            name: name.into(),
            version: version.into(),
            contract,
        }
    }

    #[test]
    fn reads_the_contract_from_package_metadata() {
        assert_eq!(
            declared_contract(&json!({"vox": {"contract": 1}})),
            Some(json!(1))
        );
        assert_eq!(declared_contract(&json!({"vox": {}})), None);
        assert_eq!(declared_contract(&Value::Null), None);
    }

    #[test]
    fn matching_contracts_pass() {
        let r = classify_contracts(&[
            pkg("vox-build", "0.1.0", Some(json!(1))),
            pkg("vox-runtime", "0.1.3", Some(json!(1))),
        ]);
        assert!(r.pass, "{}", r.detail);
    }

    #[test]
    fn different_contracts_drift() {
        let r = classify_contracts(&[
            pkg("vox-build", "0.2.0", Some(json!(2))),
            pkg("vox-runtime", "0.1.0", Some(json!(1))),
        ]);
        assert_eq!(r.fired_id(), Some(DiagId::VoxSchemaDrift));
        assert!(r.detail.contains("vox-build 0.2.0 (contract 2)"));
    }

    #[test]
    fn an_undeclared_contract_drifts() {
        let r = classify_contracts(&[
            pkg("vox-build", "0.1.0", Some(json!(1))),
            pkg("vox-runtime", "0.0.9", None),
        ]);
        assert_eq!(r.fired_id(), Some(DiagId::VoxSchemaDrift));
    }

    #[test]
    fn two_runtime_versions_with_different_contracts_drift() {
        let r = classify_contracts(&[
            pkg("vox-build", "0.2.0", Some(json!(2))),
            pkg("vox-runtime", "0.2.0", Some(json!(2))),
            pkg("vox-runtime", "0.1.0", Some(json!(1))),
        ]);
        assert_eq!(r.fired_id(), Some(DiagId::VoxSchemaDrift));
    }

    #[test]
    fn no_or_one_vox_crate_passes() {
        assert!(classify_contracts(&[]).pass);
        assert!(classify_contracts(&[pkg("vox-runtime", "0.1.0", Some(json!(1)))]).pass);
    }
}
