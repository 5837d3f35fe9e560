//! Can this machine reach a Docker daemon? Docker is optional for Vox, but
//! agents run sandboxes and integration tests in it, and a wedged daemon —
//! notably the WSL one, where `docker info` hangs forever — turns into a
//! silent stall. `docker info` always runs under a short timeout.

use std::process::Command;
use std::time::Duration;

use super::process::{run_with_timeout, RunOutcome};
use super::registry::{CheckKind, DiagId};
use super::report::CheckResult;
use super::system::process_is_running;
use super::ProbeContext;

/// Substrings (lower-case) of docker errors that only occur under WSL.
const WSL_SIGNATURES: &[&str] = &[
    "could not be found in this wsl 2 distro",
    "wsl integration",
    "wsl/service",
    "wsl.exe",
    "//./pipe/docker",
    "docker-desktop",
];

/// What `docker info` says about the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonState {
    Reachable { server_version: String },
    Down { cause: String },
    WslWedged { cause: String },
}

/// Classifies the outcome of `docker info --format {{.ServerVersion}}`.
pub fn classify_docker_info(
    outcome: &RunOutcome,
    wsl_kernel: bool,
    timeout: Duration,
) -> DaemonState {
    match outcome {
        RunOutcome::Exited {
            code: Some(0),
            output,
        } => DaemonState::Reachable {
            server_version: output.stdout.trim().to_string(),
        },
        RunOutcome::TimedOut { .. } => {
            let cause = format!(
                "`docker info` did not answer within {}s",
                timeout.as_secs_f64()
            );
            if wsl_kernel {
                DaemonState::WslWedged {
                    cause: format!("{cause} on a WSL kernel"),
                }
            } else {
                DaemonState::Down { cause }
            }
        }
        RunOutcome::CouldNotStart { reason } => DaemonState::Down {
            cause: format!("docker could not start: {reason}"),
        },
        RunOutcome::Exited { output, .. } => {
            let text = format!("{}\n{}", output.stderr, output.stdout).to_ascii_lowercase();
            let cause = format!("`docker info` failed: {}", output.headline());
            if WSL_SIGNATURES.iter().any(|sig| text.contains(sig)) {
                DaemonState::WslWedged { cause }
            } else {
                DaemonState::Down { cause }
            }
        }
    }
}

/// The step that fixes an unreachable daemon, depending on why.
fn daemon_down_fix(cause: &str, dockerd_running: bool) -> String {
    let lower = cause.to_ascii_lowercase();
    if lower.contains("permission denied") {
        "add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again)"
            .to_string()
    } else if dockerd_running {
        "dockerd is running but unreachable: check DOCKER_HOST and `docker context ls`".to_string()
    } else {
        "start the daemon (`sudo systemctl start docker`, or start Docker Desktop); ignore if you do not use docker".to_string()
    }
}

pub fn check_docker(ctx: &ProbeContext) -> Vec<CheckResult> {
    let Ok(path) = which::which("docker") else {
        return vec![CheckResult::fired(
            DiagId::DockerAbsent,
            "no docker on PATH",
            "install Docker only if you need containers; Vox does not require it",
        )];
    };
    let mut cmd = Command::new(&path);
    cmd.args(["info", "--format", "{{.ServerVersion}}"]);
    let outcome = run_with_timeout(cmd, ctx.probe_timeout);
    let result = match classify_docker_info(&outcome, ctx.wsl_kernel, ctx.probe_timeout) {
        DaemonState::Reachable { server_version } => CheckResult::passed(
            CheckKind::Docker,
            format!("daemon reachable (server {server_version}) via {}", path.display()),
        ),
        DaemonState::Down { cause } => {
            let dockerd_running = process_is_running("dockerd");
            let seen = if dockerd_running {
                "a dockerd process is running"
            } else {
                "no dockerd process is running"
            };
            CheckResult::fired(
                DiagId::DockerDaemonDown,
                format!("{cause} ({seen})"),
                daemon_down_fix(&cause, dockerd_running),
            )
        }
        DaemonState::WslWedged { cause } => CheckResult::fired(
            DiagId::DockerWslWedged,
            cause,
            "from Windows run `wsl --shutdown`, restart Docker Desktop, and check Settings > Resources > WSL integration for this distro",
        ),
    };
    vec![result]
}

#[cfg(test)]
mod tests {
    use super::super::process::CapturedOutput;
    use super::*;

    const T: Duration = Duration::from_secs(5);

    fn failed(stderr: &str) -> RunOutcome {
        RunOutcome::Exited {
            code: Some(1),
            output: CapturedOutput {
                stdout: String::new(),
                stderr: stderr.into(),
            },
        }
    }

    #[test]
    fn a_reachable_daemon_reports_its_version() {
        let ok = RunOutcome::Exited {
            code: Some(0),
            output: CapturedOutput {
                stdout: "28.2.2\n".into(),
                stderr: String::new(),
            },
        };
        assert_eq!(
            classify_docker_info(&ok, false, T),
            DaemonState::Reachable {
                server_version: "28.2.2".into()
            }
        );
    }

    #[test]
    fn the_classic_socket_error_is_daemon_down() {
        let down = failed("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n");
        assert!(matches!(
            classify_docker_info(&down, false, T),
            DaemonState::Down { .. }
        ));
        // The same message on WSL is still just a stopped daemon.
        assert!(matches!(
            classify_docker_info(&down, true, T),
            DaemonState::Down { .. }
        ));
        let denied = failed("permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock");
        let DaemonState::Down { cause } = classify_docker_info(&denied, false, T) else {
            panic!("expected down");
        };
        assert!(daemon_down_fix(&cause, true).contains("docker group"));
    }

    #[test]
    fn wsl_signatures_and_wsl_hangs_are_the_wedge() {
        let integration = failed("\nThe command 'docker' could not be found in this WSL 2 distro.\nWe recommend to activate the WSL integration in Docker Desktop settings.\n");
        assert!(matches!(
            classify_docker_info(&integration, false, T),
            DaemonState::WslWedged { .. }
        ));
        let pipe = failed("error during connect: Get \"http://%2F%2F.%2Fpipe%2FdockerDesktopLinuxEngine/v1.47/info\": open //./pipe/dockerDesktopLinuxEngine: The system cannot find the file specified.");
        assert!(matches!(
            classify_docker_info(&pipe, false, T),
            DaemonState::WslWedged { .. }
        ));
        let hang = RunOutcome::TimedOut {
            output: CapturedOutput::default(),
        };
        assert!(matches!(
            classify_docker_info(&hang, true, T),
            DaemonState::WslWedged { .. }
        ));
        assert!(matches!(
            classify_docker_info(&hang, false, T),
            DaemonState::Down { .. }
        ));
    }
}
