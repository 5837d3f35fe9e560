//! The registry of diagnosis ids: the single source of truth for what the
//! doctor can say, how serious each finding is, whether its fix can be
//! applied without a person, and which check produces it.
//!
//! `--list`, `--diag` validation and the exit code all read this table; a
//! unit test proves every check emits only registered ids and every id has a
//! check.

use serde::Serialize;

/// How much a fired diagnosis matters. Only `Error` makes a full run exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warn,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warn => "warn",
            Severity::Info => "info",
        }
    }
}

/// The checks the doctor runs; each produces a fixed set of diagnosis ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckKind {
    Rustc,
    Rustup,
    Wrapper,
    Compile,
    Docker,
    Sccache,
    SchemaDrift,
    Linker,
}

impl CheckKind {
    /// Every check, in the order a full run reports them.
    pub const ALL: [CheckKind; 8] = [
        CheckKind::Rustc,
        CheckKind::Rustup,
        CheckKind::Wrapper,
        CheckKind::Compile,
        CheckKind::Docker,
        CheckKind::Sccache,
        CheckKind::SchemaDrift,
        CheckKind::Linker,
    ];

    /// The name a check's results carry in human and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Rustc => "toolchain.rustc",
            CheckKind::Rustup => "toolchain.rustup",
            CheckKind::Wrapper => "toolchain.wrapper",
            CheckKind::Compile => "toolchain.compile",
            CheckKind::Docker => "docker",
            CheckKind::Sccache => "sccache",
            CheckKind::SchemaDrift => "vox.contract",
            CheckKind::Linker => "linker.lld",
        }
    }
}

/// A diagnosis id. Checks can only emit these, and a test proves each one
/// has exactly one registry entry, so nothing unregistered can be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagId {
    RustcAbsent,
    RustcShadowed,
    RustupAbsent,
    RustupShadowed,
    WrapperMissing,
    CompileFailed,
    CompileTimeout,
    DockerAbsent,
    DockerDaemonDown,
    DockerWslWedged,
    SccacheShadowedShim,
    SccachePathological,
    VoxSchemaDrift,
    LinkerLldMissing,
}

impl DiagId {
    /// Every id; the registry test checks each has exactly one entry.
    #[cfg(test)]
    pub const ALL: [DiagId; 14] = [
        DiagId::RustcAbsent,
        DiagId::RustcShadowed,
        DiagId::RustupAbsent,
        DiagId::RustupShadowed,
        DiagId::WrapperMissing,
        DiagId::CompileFailed,
        DiagId::CompileTimeout,
        DiagId::DockerAbsent,
        DiagId::DockerDaemonDown,
        DiagId::DockerWslWedged,
        DiagId::SccacheShadowedShim,
        DiagId::SccachePathological,
        DiagId::VoxSchemaDrift,
        DiagId::LinkerLldMissing,
    ];

    /// The id as users type it after `--diag`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagId::RustcAbsent => "toolchain.rustc_absent",
            DiagId::RustcShadowed => "toolchain.rustc_shadowed",
            DiagId::RustupAbsent => "toolchain.rustup_absent",
            DiagId::RustupShadowed => "toolchain.rustup_shadowed",
            DiagId::WrapperMissing => "toolchain.wrapper_missing",
            DiagId::CompileFailed => "toolchain.compile_failed",
            DiagId::CompileTimeout => "toolchain.compile_timeout",
            DiagId::DockerAbsent => "docker.absent",
            DiagId::DockerDaemonDown => "docker.daemon_down",
            DiagId::DockerWslWedged => "docker.wsl_wedged",
            DiagId::SccacheShadowedShim => "sccache.shadowed_shim",
            DiagId::SccachePathological => "sccache.pathological",
            DiagId::VoxSchemaDrift => "vox.schema_drift",
            DiagId::LinkerLldMissing => "linker.lld_missing",
        }
    }

    /// Parses a registered id; `None` for anything not in the registry.
    pub fn parse(text: &str) -> Option<DiagId> {
        REGISTRY
            .iter()
            .map(|info| info.id)
            .find(|id| id.as_str() == text)
    }

    /// This id's registry entry.
    pub fn info(self) -> &'static DiagInfo {
        // The registry test proves every id has an entry; the fallback only
        // keeps a broken registry from panicking in front of a user.
        REGISTRY
            .iter()
            .find(|info| info.id == self)
            .unwrap_or(&UNREGISTERED)
    }
}

impl Serialize for DiagId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

const UNREGISTERED: DiagInfo = DiagInfo {
    id: DiagId::RustcAbsent,
    severity: Severity::Error,
    heal: false,
    check: CheckKind::Rustc,
    description: "unregistered diagnosis id",
};

/// One diagnosis id and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiagInfo {
    pub id: DiagId,
    pub severity: Severity,
    /// True when the fix is a mechanical step an agent may apply on its own.
    pub heal: bool,
    pub check: CheckKind,
    pub description: &'static str,
}

/// Every diagnosis the doctor can report (README, `cargo vox doctor`).
pub const REGISTRY: &[DiagInfo] = &[
    DiagInfo {
        id: DiagId::RustcAbsent,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Rustc,
        description: "rustc is not on PATH or does not run",
    },
    DiagInfo {
        id: DiagId::RustcShadowed,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Rustc,
        description: "the rustc on PATH prints a banner that is not rustc's (a shim or forwarder)",
    },
    DiagInfo {
        id: DiagId::RustupAbsent,
        severity: Severity::Warn,
        heal: false,
        check: CheckKind::Rustup,
        description: "rustup is not on PATH or does not run (toolchains cannot be managed)",
    },
    DiagInfo {
        id: DiagId::RustupShadowed,
        severity: Severity::Warn,
        heal: false,
        check: CheckKind::Rustup,
        description: "rustup's banner is not its own, or a rustc/cargo earlier on PATH shadows rustup's proxy",
    },
    DiagInfo {
        id: DiagId::WrapperMissing,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Wrapper,
        description: "RUSTC_WRAPPER, RUSTC_WORKSPACE_WRAPPER or [build] rustc-wrapper names a program that is not there (every build fails)",
    },
    DiagInfo {
        id: DiagId::CompileFailed,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Compile,
        description: "cargo cannot build a trivial crate (or there is no cargo on PATH)",
    },
    DiagInfo {
        id: DiagId::CompileTimeout,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Compile,
        description: "building a trivial crate did not finish within VOX_DOCTOR_COMPILE_TIMEOUT_SECS",
    },
    DiagInfo {
        id: DiagId::DockerAbsent,
        severity: Severity::Info,
        heal: false,
        check: CheckKind::Docker,
        description: "no docker on PATH (docker is optional for Vox)",
    },
    DiagInfo {
        id: DiagId::DockerDaemonDown,
        severity: Severity::Warn,
        heal: false,
        check: CheckKind::Docker,
        description: "`docker info` cannot reach the daemon, or hangs outside WSL",
    },
    DiagInfo {
        id: DiagId::DockerWslWedged,
        severity: Severity::Warn,
        heal: false,
        check: CheckKind::Docker,
        description: "the WSL Docker wedge: `docker info` hangs on a WSL kernel or fails with a WSL signature",
    },
    DiagInfo {
        id: DiagId::SccacheShadowedShim,
        severity: Severity::Warn,
        heal: false,
        check: CheckKind::Sccache,
        description: "the sccache on PATH is not sccache (its --version banner is not sccache's)",
    },
    DiagInfo {
        id: DiagId::SccachePathological,
        severity: Severity::Warn,
        heal: true,
        check: CheckKind::Sccache,
        description: "over >=200 requests sccache hits under 5% or fails >=5% of compiles",
    },
    DiagInfo {
        id: DiagId::VoxSchemaDrift,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::SchemaDrift,
        description: "the workspace resolves vox-build and vox-runtime with different generated-code contracts",
    },
    DiagInfo {
        id: DiagId::LinkerLldMissing,
        severity: Severity::Error,
        heal: false,
        check: CheckKind::Linker,
        description: "cargo config, RUSTFLAGS or a target linker asks for lld and none is found",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The ids a check can emit, straight from the registry.
    fn ids_of(check: CheckKind) -> impl Iterator<Item = DiagId> {
        REGISTRY
            .iter()
            .filter(move |info| info.check == check)
            .map(|info| info.id)
    }

    #[test]
    fn every_id_has_exactly_one_registry_entry() {
        for id in DiagId::ALL {
            let entries = REGISTRY.iter().filter(|info| info.id == id).count();
            assert_eq!(entries, 1, "{id:?}");
            assert_eq!(DiagId::parse(id.as_str()), Some(id));
        }
        assert_eq!(REGISTRY.len(), DiagId::ALL.len());
        let names: HashSet<_> = DiagId::ALL.iter().map(|id| id.as_str()).collect();
        assert_eq!(names.len(), DiagId::ALL.len());
    }

    #[test]
    fn every_check_owns_at_least_one_id() {
        for check in CheckKind::ALL {
            assert!(ids_of(check).next().is_some(), "{check:?} owns no id");
        }
    }

    #[test]
    fn unknown_ids_do_not_parse() {
        assert_eq!(DiagId::parse("toolchain.nope"), None);
        assert_eq!(DiagId::parse(""), None);
    }
}
