//! Facts about the machine read through `sysinfo`: the header of a full run,
//! the kernel release (which tells a WSL machine apart) and whether a named
//! process (dockerd, an sccache server) is running.
//!
//! The kernel release can be overridden with `VOX_DOCTOR_KERNEL_RELEASE` so
//! the WSL paths can be exercised on any machine.

use serde::Serialize;
use sysinfo::{CpuRefreshKind, ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System};

/// Env var that replaces the detected kernel release (tests, reproductions).
pub const KERNEL_RELEASE_ENV: &str = "VOX_DOCTOR_KERNEL_RELEASE";

/// The header of a doctor run.
#[derive(Debug, Clone, Serialize)]
pub struct SystemInfo {
    pub os: String,
    pub kernel: String,
    pub wsl: bool,
    pub cpus: usize,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
}

impl SystemInfo {
    pub fn gather() -> Self {
        let mut sys =
            System::new_with_specifics(RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing()));
        sys.refresh_memory();
        let cpus = match sys.cpus().len() {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let os = System::long_os_version()
            .or_else(System::name)
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel = super::report::shown(&kernel_release());
        SystemInfo {
            os: super::report::shown(&os),
            wsl: is_wsl_kernel(&kernel),
            kernel,
            cpus,
            memory_total_bytes: sys.total_memory(),
            memory_available_bytes: sys.available_memory(),
        }
    }

    /// The lines printed above the checks of a full run.
    pub fn header_lines(&self) -> Vec<String> {
        let wsl = if self.wsl { " (WSL)" } else { "" };
        vec![
            format!("os:     {}", self.os),
            format!("kernel: {}{wsl}", self.kernel),
            format!("cpus:   {}", self.cpus),
            format!(
                "memory: {} total, {} available",
                gib(self.memory_total_bytes),
                gib(self.memory_available_bytes)
            ),
        ]
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

/// The running kernel's release, or the override from the environment.
pub fn kernel_release() -> String {
    match std::env::var(KERNEL_RELEASE_ENV) {
        Ok(release) if !release.trim().is_empty() => release.trim().to_string(),
        _ => System::kernel_version().unwrap_or_else(|| "unknown".to_string()),
    }
}

/// WSL kernels carry "microsoft" in their release
/// (`5.15.90.1-microsoft-standard-WSL2`, `4.4.0-19041-Microsoft`).
pub fn is_wsl_kernel(release: &str) -> bool {
    let lower = release.to_ascii_lowercase();
    lower.contains("microsoft") || lower.contains("wsl")
}

/// True when a process whose name is `name` (e.g. `dockerd`) is running.
pub fn process_is_running(name: &str) -> bool {
    let mut sys = System::new();
    sys.refresh_processes_specifics(ProcessesToUpdate::All, true, ProcessRefreshKind::nothing());
    sys.processes().values().any(|p| p.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_wsl_kernels() {
        assert!(is_wsl_kernel("5.15.90.1-microsoft-standard-WSL2"));
        assert!(is_wsl_kernel("4.4.0-19041-Microsoft"));
        assert!(!is_wsl_kernel("6.8.0-45-generic"));
        assert!(!is_wsl_kernel("6.18.44-fc-v782"));
    }

    #[test]
    fn header_names_os_kernel_cpus_and_memory() {
        let info = SystemInfo {
            os: "Linux 24.04 Ubuntu".into(),
            kernel: "5.15.90.1-microsoft-standard-WSL2".into(),
            wsl: true,
            cpus: 2,
            memory_total_bytes: 8 * 1024 * 1024 * 1024,
            memory_available_bytes: 4 * 1024 * 1024 * 1024,
        };
        let text = info.header_lines().join("\n");
        assert!(text.contains("kernel: 5.15.90.1-microsoft-standard-WSL2 (WSL)"));
        assert!(text.contains("cpus:   2"));
        assert!(text.contains("8.0 GiB total, 4.0 GiB available"));
    }
}
