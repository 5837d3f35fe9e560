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

/// True when the vox packages among the workspace members are the whole
/// story, so the slow full resolve can be skipped: no member declares a
/// dependency on a vox crate from outside the workspace, and every vox
/// crate in `Cargo.lock` (when there is one) is a member.
pub fn members_suffice(
    members: &[VoxPackage],
    declares_outside_vox_dep: bool,
    locked: Option<&[(String, String)]>,
) -> bool {
    if declares_outside_vox_dep {
        return false;
    }
    let Some(locked) = locked else {
        return members.is_empty();
    };
    locked
        .iter()
        .filter(|(name, _)| is_vox_crate(name))
        .all(|(name, version)| {
            members
                .iter()
                .any(|m| &m.name == name && &m.version == version)
        })
}

fn is_vox_crate(name: &str) -> bool {
    name == "vox-build" || name == "vox-runtime"
}

/// `(name, version)` of every package in a `Cargo.lock`.
pub fn locked_packages(lock_text: &str) -> Option<Vec<(String, String)>> {
    let lock: toml::Table = toml::from_str(lock_text).ok()?;
    let packages = lock.get("package")?.as_array()?;
    Some(
        packages
            .iter()
            .filter_map(|p| {
                let name = p.get("name")?.as_str()?;
                let version = p.get("version")?.as_str()?;
                Some((name.to_string(), version.to_string()))
            })
            .collect(),
    )
}

pub fn check_schema_drift(ctx: &ProbeContext) -> Vec<CheckResult> {
    vec![match read_vox_packages(ctx) {
        Ok(packages) => classify_contracts(&packages),
        Err(why) => CheckResult::passed(CheckKind::SchemaDrift, format!("not checked: {why}")),
    }]
}

/// The vox packages the workspace resolves. `cargo metadata --no-deps` is
/// fast and enough when the vox crates are workspace members (or absent);
/// otherwise a full `cargo metadata` resolves their versions.
fn read_vox_packages(ctx: &ProbeContext) -> Result<Vec<VoxPackage>, String> {
    let timeout = ctx.probe_timeout * METADATA_TIMEOUT_FACTOR;
    let command = || {
        let mut command = MetadataCommand::new();
        if let Some(path) = &ctx.manifest_path {
            command.manifest_path(path);
        }
        command
    };
    let workspace = run_metadata(command().no_deps(), timeout)?;
    let members: Vec<VoxPackage> = vox_packages(&workspace);
    let member_names: Vec<&str> = workspace.packages.iter().map(|p| p.name.as_str()).collect();
    let declares_outside_vox_dep = workspace.packages.iter().any(|p| {
        p.dependencies
            .iter()
            .any(|d| is_vox_crate(&d.name) && !member_names.contains(&d.name.as_str()))
    });
    let lock_text = std::fs::read_to_string(workspace.workspace_root.join("Cargo.lock")).ok();
    let locked = lock_text.as_deref().and_then(locked_packages);
    if members_suffice(&members, declares_outside_vox_dep, locked.as_deref()) {
        return Ok(members);
    }
    Ok(vox_packages(&run_metadata(&command(), timeout)?))
}

fn vox_packages(metadata: &cargo_metadata::Metadata) -> Vec<VoxPackage> {
    metadata
        .packages
        .iter()
        .filter(|p| is_vox_crate(p.name.as_str()))
        .map(|p| VoxPackage {
            name: p.name.to_string(),
            version: p.version.to_string(),
            contract: declared_contract(&p.metadata),
        })
        .collect()
}

/// Runs `cargo metadata` under `timeout` and parses it, or says why not.
fn run_metadata(
    command: &MetadataCommand,
    timeout: Duration,
) -> Result<cargo_metadata::Metadata, String> {
    let outcome = run_with_timeout_and_cap(command.cargo_command(), timeout, METADATA_OUTPUT_CAP);
    let stdout = match &outcome {
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
    MetadataCommand::parse(stdout).map_err(|e| format!("unreadable `cargo metadata` output: {e}"))
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
    fn members_suffice_only_when_nothing_vox_comes_from_outside() {
        let members = [
            pkg("vox-build", "0.1.0", Some(json!(1))),
            pkg("vox-runtime", "0.1.0", Some(json!(1))),
        ];
        let lock = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        let local = lock(&[
            ("app", "0.1.0"),
            ("vox-build", "0.1.0"),
            ("vox-runtime", "0.1.0"),
            ("serde", "1.0.0"),
        ]);
        assert!(members_suffice(&members, false, Some(&local)));
        assert!(!members_suffice(&members, true, Some(&local)));
        let registry_runtime = lock(&[
            ("vox-build", "0.1.0"),
            ("vox-runtime", "0.1.0"),
            ("vox-runtime", "0.2.0"),
        ]);
        assert!(!members_suffice(&members, false, Some(&registry_runtime)));
        assert!(members_suffice(
            &[],
            false,
            Some(&lock(&[("serde", "1.0.0")]))
        ));
        assert!(members_suffice(&[], false, None));
        assert!(!members_suffice(&members, false, None));
    }

    #[test]
    fn reads_packages_from_a_lock_file() {
        let text = "version = 4\n\n[[package]]\nname = \"vox-runtime\"\nversion = \"0.1.0\"\nsource = \"registry+https://example.invalid/index\"\n\n[[package]]\nname = \"app\"\nversion = \"0.0.0\"\n";
        assert_eq!(
            locked_packages(text),
            Some(vec![
                ("vox-runtime".to_string(), "0.1.0".to_string()),
                ("app".to_string(), "0.0.0".to_string())
            ])
        );
        assert_eq!(locked_packages("not toml ["), None);
    }

    #[test]
    fn no_or_one_vox_crate_passes() {
        assert!(classify_contracts(&[]).pass);
        assert!(classify_contracts(&[pkg("vox-runtime", "0.1.0", Some(json!(1)))]).pass);
    }
}
