//! `cargo vox doctor` against real processes: each diagnosis id fires when
//! it should and stays silent when it should not. Tools are shell-script
//! shims in a temporary directory that is the whole PATH, so nothing on the
//! machine leaks in; a few tests use the real toolchain on purpose.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-vox");
/// No test run of the doctor may take longer than this.
const TEST_DEADLINE: Duration = Duration::from_secs(60);

/// A temporary PATH directory of shims plus a home and cargo home.
struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        for dir in ["bin", "home", "cargo-home", "work"] {
            fs::create_dir_all(root.path().join(dir)).expect("sandbox dir");
        }
        let sandbox = Sandbox { root };
        // Shims may sleep; give them `sleep` without the rest of /usr/bin.
        sandbox.link("sleep", &system_tool("sleep"));
        sandbox
    }

    fn bin(&self) -> PathBuf {
        self.root.path().join("bin")
    }

    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// Writes an executable `#!/bin/sh` script called `name` into `dir`.
    fn script_in(dir: &Path, name: &str, body: &str) {
        let path = dir.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write shim");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod shim");
    }

    fn script(&self, name: &str, body: &str) {
        Self::script_in(&self.bin(), name, body);
    }

    fn link(&self, name: &str, target: &Path) {
        std::os::unix::fs::symlink(target, self.bin().join(name)).expect("symlink");
    }

    /// The doctor with a cleared environment: PATH is only the shim dir.
    fn doctor(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.arg("doctor")
            .args(args)
            .env_clear()
            .env("PATH", self.bin())
            .env("HOME", self.root.path().join("home"))
            .env("CARGO_HOME", self.root.path().join("cargo-home"))
            .env("VOX_DOCTOR_TIMEOUT_SECS", "2")
            .env("VOX_DOCTOR_COMPILE_TIMEOUT_SECS", "20")
            .env("VOX_DOCTOR_KERNEL_RELEASE", "6.8.0-45-generic")
            .current_dir(self.work());
        cmd
    }
}

fn system_tool(name: &str) -> PathBuf {
    ["/bin", "/usr/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no {name} in /bin or /usr/bin"))
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ran {
    fn fired(&self, id: &str) -> bool {
        self.stdout.contains(&format!("[diag id={id} "))
    }
}

/// Runs `cmd` to completion, killing it (and failing the test) past the deadline.
fn run(mut cmd: Command) -> Ran {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cargo-vox");
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > TEST_DEADLINE {
            let _ = child.kill();
            panic!("doctor did not finish within {TEST_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

fn diag(sandbox: &Sandbox, id: &str) -> Ran {
    run(sandbox.doctor(&["--diag", id]))
}

fn assert_fires(ran: &Ran, id: &str) {
    assert_eq!(
        ran.code, 1,
        "{id} should fire\nstdout: {}\nstderr: {}",
        ran.stdout, ran.stderr
    );
    assert!(ran.fired(id), "{id} missing from:\n{}", ran.stdout);
}

fn assert_silent(ran: &Ran, id: &str) {
    assert_eq!(
        ran.code, 0,
        "{id} should stay silent\nstdout: {}\nstderr: {}",
        ran.stdout, ran.stderr
    );
    assert!(!ran.fired(id), "{id} fired:\n{}", ran.stdout);
}

const RUSTC_BANNER: &str = "echo 'rustc 1.95.0 (59807616e 2026-04-14)'";
const RUSTUP_BANNER: &str = "echo 'rustup 1.29.0 (28d1352db 2026-03-05)'";

// ---- toolchain.rustc_* --------------------------------------------------

#[test]
fn rustc_printing_a_cargo_banner_is_shadowed() {
    let s = Sandbox::new();
    s.script("rustc", "echo 'cargo 1.95.0 (f2d3ce0bd 2026-03-21)'");
    assert_fires(
        &diag(&s, "toolchain.rustc_shadowed"),
        "toolchain.rustc_shadowed",
    );
    assert_silent(
        &diag(&s, "toolchain.rustc_absent"),
        "toolchain.rustc_absent",
    );
}

#[test]
fn a_genuine_rustc_is_neither_shadowed_nor_absent() {
    let s = Sandbox::new();
    s.script("rustc", RUSTC_BANNER);
    assert_silent(
        &diag(&s, "toolchain.rustc_shadowed"),
        "toolchain.rustc_shadowed",
    );
    assert_silent(
        &diag(&s, "toolchain.rustc_absent"),
        "toolchain.rustc_absent",
    );
}

#[test]
fn no_rustc_is_absent() {
    let s = Sandbox::new();
    assert_fires(
        &diag(&s, "toolchain.rustc_absent"),
        "toolchain.rustc_absent",
    );
    assert_silent(
        &diag(&s, "toolchain.rustc_shadowed"),
        "toolchain.rustc_shadowed",
    );
}

#[test]
fn a_rustc_that_fails_to_run_is_absent() {
    let s = Sandbox::new();
    s.script(
        "rustc",
        "echo 'error: rustup could not choose a version of rustc to run' >&2; exit 1",
    );
    let ran = diag(&s, "toolchain.rustc_absent");
    assert_fires(&ran, "toolchain.rustc_absent");
    assert!(ran.stdout.contains("rustup default stable"));
}

// ---- toolchain.rustup_* -------------------------------------------------

#[test]
fn rustup_printing_a_foreign_banner_is_shadowed() {
    let s = Sandbox::new();
    s.script("rustup", RUSTC_BANNER);
    assert_fires(
        &diag(&s, "toolchain.rustup_shadowed"),
        "toolchain.rustup_shadowed",
    );
    assert_silent(
        &diag(&s, "toolchain.rustup_absent"),
        "toolchain.rustup_absent",
    );
}

#[test]
fn a_genuine_rustup_is_neither_shadowed_nor_absent() {
    let s = Sandbox::new();
    s.script("rustup", RUSTUP_BANNER);
    s.script("rustc", RUSTC_BANNER);
    assert_silent(
        &diag(&s, "toolchain.rustup_shadowed"),
        "toolchain.rustup_shadowed",
    );
    assert_silent(
        &diag(&s, "toolchain.rustup_absent"),
        "toolchain.rustup_absent",
    );
}

#[test]
fn no_rustup_is_absent() {
    let s = Sandbox::new();
    assert_fires(
        &diag(&s, "toolchain.rustup_absent"),
        "toolchain.rustup_absent",
    );
    assert_silent(
        &diag(&s, "toolchain.rustup_shadowed"),
        "toolchain.rustup_shadowed",
    );
}

#[test]
fn a_rustc_earlier_on_path_shadows_rustups_proxy() {
    let s = Sandbox::new();
    let proxies = s.root.path().join("rustup-bin");
    fs::create_dir_all(&proxies).expect("proxy dir");
    Sandbox::script_in(&proxies, "rustup", RUSTUP_BANNER);
    Sandbox::script_in(&proxies, "rustc", RUSTC_BANNER);
    s.script("rustc", RUSTC_BANNER); // a "distro" rustc, first on PATH
    let path = std::env::join_paths([s.bin(), proxies]).expect("PATH");
    let mut cmd = s.doctor(&["--diag", "toolchain.rustup_shadowed"]);
    cmd.env("PATH", path);
    let ran = run(cmd);
    assert_fires(&ran, "toolchain.rustup_shadowed");
    assert!(
        ran.stdout.contains("shadows rustup's proxy"),
        "{}",
        ran.stdout
    );
}

// ---- toolchain.compile_* ------------------------------------------------

#[test]
fn a_cargo_that_cannot_build_is_compile_failed() {
    let s = Sandbox::new();
    s.script("cargo", "echo 'error: linker `cc` not found' >&2; exit 101");
    let ran = diag(&s, "toolchain.compile_failed");
    assert_fires(&ran, "toolchain.compile_failed");
    assert!(ran.stdout.contains("linker `cc` not found"));
    assert_silent(
        &diag(&s, "toolchain.compile_timeout"),
        "toolchain.compile_timeout",
    );
}

#[test]
fn the_real_cargo_with_a_broken_rustc_is_compile_failed() {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return; // not run by cargo: no real cargo to borrow
    };
    let s = Sandbox::new();
    s.link("cargo", Path::new(&cargo));
    s.script(
        "rustc",
        "echo 'error: internal compiler error: shim' >&2; exit 101",
    );
    let mut cmd = s.doctor(&["--diag", "toolchain.compile_failed"]);
    cmd.env("RUSTC", s.bin().join("rustc"));
    assert_fires(&run(cmd), "toolchain.compile_failed");
}

#[test]
fn no_cargo_is_compile_failed_not_a_crash() {
    let s = Sandbox::new();
    assert_fires(
        &diag(&s, "toolchain.compile_failed"),
        "toolchain.compile_failed",
    );
}

#[test]
fn a_hanging_cargo_is_compile_timeout_within_the_timeout() {
    let s = Sandbox::new();
    // Not `exec`: the sleeping grandchild holds the pipes and must be killed too.
    s.script("cargo", "sleep 1000\necho never");
    let mut cmd = s.doctor(&["--diag", "toolchain.compile_timeout"]);
    cmd.env("VOX_DOCTOR_COMPILE_TIMEOUT_SECS", "1");
    let ran = run(cmd);
    assert_fires(&ran, "toolchain.compile_timeout");
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
}

#[test]
fn the_real_toolchain_compiles() {
    // The machine's own environment: a real cargo building a real crate.
    let mut cmd = Command::new(BIN);
    cmd.args(["doctor", "--diag", "toolchain.compile_failed"])
        .env("VOX_DOCTOR_COMPILE_TIMEOUT_SECS", "50");
    let ran = run(cmd);
    assert_silent(&ran, "toolchain.compile_failed");
    assert!(
        ran.stdout.contains("cargo built a trivial crate"),
        "{}",
        ran.stdout
    );
}

// ---- docker.* -----------------------------------------------------------

const DAEMON_DOWN: &str = "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2; exit 1";

#[test]
fn docker_that_cannot_reach_its_daemon_is_daemon_down() {
    let s = Sandbox::new();
    s.script("docker", DAEMON_DOWN);
    assert_fires(&diag(&s, "docker.daemon_down"), "docker.daemon_down");
    assert_silent(&diag(&s, "docker.wsl_wedged"), "docker.wsl_wedged");
    assert_silent(&diag(&s, "docker.absent"), "docker.absent");
}

#[test]
fn a_reachable_daemon_is_silent() {
    let s = Sandbox::new();
    s.script("docker", "echo 28.2.2");
    for id in ["docker.daemon_down", "docker.wsl_wedged", "docker.absent"] {
        assert_silent(&diag(&s, id), id);
    }
}

#[test]
fn no_docker_is_absent() {
    let s = Sandbox::new();
    assert_fires(&diag(&s, "docker.absent"), "docker.absent");
    assert_silent(&diag(&s, "docker.daemon_down"), "docker.daemon_down");
}

#[test]
fn a_hanging_docker_outside_wsl_is_daemon_down_promptly() {
    let s = Sandbox::new();
    s.script("docker", "sleep 1000");
    let mut cmd = s.doctor(&["--diag", "docker.daemon_down"]);
    cmd.env("VOX_DOCTOR_TIMEOUT_SECS", "1");
    let ran = run(cmd);
    assert_fires(&ran, "docker.daemon_down");
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
}

#[test]
fn a_hanging_docker_on_a_wsl_kernel_is_the_wedge() {
    let s = Sandbox::new();
    s.script("docker", "sleep 1000");
    let mut cmd = s.doctor(&["--diag", "docker.wsl_wedged"]);
    cmd.env("VOX_DOCTOR_TIMEOUT_SECS", "1").env(
        "VOX_DOCTOR_KERNEL_RELEASE",
        "5.15.90.1-microsoft-standard-WSL2",
    );
    let ran = run(cmd);
    assert_fires(&ran, "docker.wsl_wedged");
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
}

#[test]
fn a_full_run_with_a_hanging_docker_finishes_promptly() {
    let s = Sandbox::new();
    s.script("docker", "sleep 1000");
    let mut cmd = s.doctor(&["--no-compile"]);
    cmd.env("VOX_DOCTOR_TIMEOUT_SECS", "1");
    let ran = run(cmd);
    assert!(ran.fired("docker.daemon_down"), "{}", ran.stdout);
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
}

// ---- sccache.* ----------------------------------------------------------

/// A background process named `sccache`, standing in for a running server.
struct FakeServer(Child);

impl FakeServer {
    fn start(sandbox: &Sandbox) -> Self {
        let child = Command::new(sandbox.bin().join("sccache"))
            .arg("--serve")
            .env("PATH", sandbox.bin())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fake sccache server");
        // Let the kernel show it in the process table under its script name.
        std::thread::sleep(Duration::from_millis(100));
        FakeServer(child)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fake_sccache(sandbox: &Sandbox, requests: u64, hits: u64, misses: u64, fails: u64) {
    let stats = format!(
        r#"{{"stats":{{"compile_requests":{requests},"requests_executed":{requests},"cache_errors":{{"counts":{{}},"adv_counts":{{}}}},"cache_hits":{{"counts":{{"Rust":{hits}}},"adv_counts":{{}}}},"cache_misses":{{"counts":{{"Rust":{misses}}},"adv_counts":{{}}}},"cache_read_errors":0,"cache_write_errors":0,"compile_fails":{fails}}},"cache_location":"Local disk","cache_size":0,"max_cache_size":1}}"#
    );
    sandbox.script(
        "sccache",
        &format!(
            "case \"$1\" in\n--version) echo 'sccache 0.10.0';;\n--show-stats) echo '{stats}';;\n--serve) while :; do sleep 1; done;;\nesac"
        ),
    );
}

#[test]
fn an_sccache_that_is_not_sccache_is_a_shadowed_shim() {
    let s = Sandbox::new();
    s.script(
        "sccache",
        "echo 'wrapper 2.0: forwarding to the real compiler'",
    );
    assert_fires(&diag(&s, "sccache.shadowed_shim"), "sccache.shadowed_shim");
    assert_silent(&diag(&s, "sccache.pathological"), "sccache.pathological");
}

#[test]
fn no_sccache_is_silent() {
    let s = Sandbox::new();
    assert_silent(&diag(&s, "sccache.shadowed_shim"), "sccache.shadowed_shim");
    assert_silent(&diag(&s, "sccache.pathological"), "sccache.pathological");
}

#[test]
fn an_sccache_that_never_hits_is_pathological() {
    let s = Sandbox::new();
    fake_sccache(&s, 250, 3, 240, 0);
    let _server = FakeServer::start(&s);
    let ran = diag(&s, "sccache.pathological");
    assert_fires(&ran, "sccache.pathological");
    assert!(ran.stdout.contains("heal=true"));
    assert_silent(&diag(&s, "sccache.shadowed_shim"), "sccache.shadowed_shim");
}

#[test]
fn an_sccache_that_fails_compiles_is_pathological() {
    let s = Sandbox::new();
    fake_sccache(&s, 300, 250, 40, 30);
    let _server = FakeServer::start(&s);
    assert_fires(&diag(&s, "sccache.pathological"), "sccache.pathological");
}

#[test]
fn a_healthy_or_young_sccache_is_silent() {
    let s = Sandbox::new();
    fake_sccache(&s, 400, 300, 100, 0);
    let _server = FakeServer::start(&s);
    assert_silent(&diag(&s, "sccache.pathological"), "sccache.pathological");
    fake_sccache(&s, 150, 0, 150, 0);
    assert_silent(&diag(&s, "sccache.pathological"), "sccache.pathological");
}

// ---- vox.schema_drift ---------------------------------------------------

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join("doctor")
        .join(name)
}

fn drift_run(workspace: &str) -> Ran {
    // cargo metadata needs the real cargo: keep the machine's environment.
    let manifest = fixture(workspace).join("Cargo.toml");
    let mut cmd = Command::new(BIN);
    cmd.args(["doctor", "--diag", "vox.schema_drift", "--manifest-path"])
        .arg(manifest)
        .env("VOX_DOCTOR_TIMEOUT_SECS", "10");
    run(cmd)
}

#[test]
fn mismatched_vox_contracts_are_schema_drift() {
    let ran = drift_run("drift");
    assert_fires(&ran, "vox.schema_drift");
    assert!(
        ran.stdout.contains("vox-build 0.2.0 (contract 2)"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("vox-runtime 0.1.0 (contract 1)"),
        "{}",
        ran.stdout
    );
}

#[test]
fn mismatched_vox_crates_from_outside_the_workspace_are_schema_drift() {
    // Not members: only the full resolve sees them.
    let ran = drift_run("external/app");
    assert_fires(&ran, "vox.schema_drift");
    assert!(
        ran.stdout.contains("vox-build 0.2.0 (contract 2)"),
        "{}",
        ran.stdout
    );
}

#[test]
fn matching_vox_contracts_are_silent() {
    let ran = drift_run("aligned");
    assert_silent(&ran, "vox.schema_drift");
    assert!(ran.stdout.contains("contract 1 agrees"), "{}", ran.stdout);
}

#[test]
fn outside_a_workspace_schema_drift_is_silent() {
    let s = Sandbox::new();
    assert_silent(&diag(&s, "vox.schema_drift"), "vox.schema_drift");
}

// ---- linker.lld_missing -------------------------------------------------

fn with_cargo_config(sandbox: &Sandbox, fixture_name: &str) {
    let dir = sandbox.work().join(".cargo");
    fs::create_dir_all(&dir).expect(".cargo dir");
    fs::copy(
        fixture(fixture_name).join("config.toml"),
        dir.join("config.toml"),
    )
    .expect("copy config");
}

#[test]
fn a_config_asking_for_lld_without_one_is_lld_missing() {
    let s = Sandbox::new();
    with_cargo_config(&s, "lld-requested");
    let ran = diag(&s, "linker.lld_missing");
    assert_fires(&ran, "linker.lld_missing");
    assert!(
        ran.stdout.contains("[build] rustflags asks for `ld.lld`"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_config_asking_for_lld_with_one_on_path_is_silent() {
    let s = Sandbox::new();
    with_cargo_config(&s, "lld-requested");
    s.script("ld.lld", "exit 0");
    assert_silent(&diag(&s, "linker.lld_missing"), "linker.lld_missing");
}

#[test]
fn a_config_not_asking_for_lld_is_silent() {
    let s = Sandbox::new();
    with_cargo_config(&s, "lld-not-requested");
    assert_silent(&diag(&s, "linker.lld_missing"), "linker.lld_missing");
}

#[test]
fn rustflags_asking_for_lld_without_one_is_lld_missing() {
    let s = Sandbox::new();
    let mut cmd = s.doctor(&["--diag", "linker.lld_missing"]);
    cmd.env("RUSTFLAGS", "-Clink-arg=-fuse-ld=lld");
    assert_fires(&run(cmd), "linker.lld_missing");
    let mut encoded = s.doctor(&["--diag", "linker.lld_missing"]);
    encoded.env("CARGO_ENCODED_RUSTFLAGS", "-C\u{1f}linker=rust-lld");
    assert_fires(&run(encoded), "linker.lld_missing");
}

// ---- toolchain.wrapper_missing ------------------------------------------

const WRAPPER: &str = "toolchain.wrapper_missing";

#[test]
fn rustc_wrapper_naming_a_missing_sccache_is_wrapper_missing() {
    let s = Sandbox::new();
    let mut cmd = s.doctor(&["--diag", WRAPPER]);
    cmd.env("RUSTC_WRAPPER", "sccache");
    let ran = run(cmd);
    assert_fires(&ran, WRAPPER);
    assert!(
        ran.stdout
            .contains("RUSTC_WRAPPER = `sccache`: no `sccache` on PATH"),
        "{}",
        ran.stdout
    );
    // The same through cargo's config-in-environment spelling.
    let mut build_env = s.doctor(&["--diag", WRAPPER]);
    build_env.env("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "clippy-driver-wrap");
    assert_fires(&run(build_env), WRAPPER);
}

#[test]
fn a_wrapper_that_is_there_or_turned_off_is_silent() {
    let s = Sandbox::new();
    assert_silent(&diag(&s, WRAPPER), WRAPPER);
    s.script("sccache", "exit 0");
    let mut present = s.doctor(&["--diag", WRAPPER]);
    present.env("RUSTC_WRAPPER", "sccache");
    let ran = run(present);
    assert_silent(&ran, WRAPPER);
    assert!(
        ran.stdout.contains("RUSTC_WRAPPER = `sccache` at "),
        "{}",
        ran.stdout
    );
    // An empty RUSTC_WRAPPER overrides a config that names a missing one.
    let dir = s.work().join(".cargo");
    fs::create_dir_all(&dir).expect(".cargo dir");
    fs::write(
        dir.join("config.toml"),
        "[build]\nrustc-wrapper = \"gone\"\n",
    )
    .expect("config");
    let mut off = s.doctor(&["--diag", WRAPPER]);
    off.env("RUSTC_WRAPPER", "");
    assert_silent(&run(off), WRAPPER);
    assert_fires(&diag(&s, WRAPPER), WRAPPER);
}

#[test]
fn a_config_wrapper_path_must_exist_and_be_executable() {
    let s = Sandbox::new();
    let dir = s.work().join(".cargo");
    fs::create_dir_all(&dir).expect(".cargo dir");
    fs::write(
        dir.join("config.toml"),
        "[build]\nrustc-wrapper = \"tools/wrap\"\n",
    )
    .expect("config");
    let ran = diag(&s, WRAPPER);
    assert_fires(&ran, WRAPPER);
    assert!(
        ran.stdout.contains("[build] rustc-wrapper in "),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("tools/wrap does not exist"),
        "{}",
        ran.stdout
    );

    let tools = s.work().join("tools");
    fs::create_dir_all(&tools).expect("tools dir");
    fs::write(tools.join("wrap"), "#!/bin/sh\nexec \"$@\"\n").expect("wrapper");
    let ran = diag(&s, WRAPPER);
    assert_fires(&ran, WRAPPER);
    assert!(
        ran.stdout.contains("tools/wrap is not executable"),
        "{}",
        ran.stdout
    );

    fs::set_permissions(tools.join("wrap"), fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_silent(&diag(&s, WRAPPER), WRAPPER);
}

/// A rustc that answers like a Linux host's.
const LINUX_RUSTC: &str = r#"case "$*" in
  "-vV") echo 'rustc 1.95.0 (59807616e 2026-04-14)'; echo 'host: x86_64-unknown-linux-gnu' ;;
  "--print cfg") printf 'unix\ntarget_family="unix"\ntarget_os="linux"\n' ;;
  *) echo 'rustc 1.95.0 (59807616e 2026-04-14)' ;;
esac"#;

#[test]
fn a_cfg_table_for_another_platform_does_not_ask_for_lld_here() {
    let s = Sandbox::new();
    s.script("rustc", LINUX_RUSTC);
    let dir = s.work().join(".cargo");
    fs::create_dir_all(&dir).expect(".cargo dir");
    let config = |predicate: &str| {
        fs::write(
            dir.join("config.toml"),
            format!(
                "[target.'cfg({predicate})']\nrustflags = [\"-C\", \"link-arg=-fuse-ld=lld\"]\n"
            ),
        )
        .expect("config");
    };
    config("windows");
    assert_silent(&diag(&s, "linker.lld_missing"), "linker.lld_missing");
    config("all(unix, target_os = \"macos\")");
    assert_silent(&diag(&s, "linker.lld_missing"), "linker.lld_missing");
    config("target_os = \"linux\"");
    let ran = diag(&s, "linker.lld_missing");
    assert_fires(&ran, "linker.lld_missing");
    assert!(
        ran.stdout.contains("cfg(target_os = \"linux\")"),
        "{}",
        ran.stdout
    );
}

// ---- the interface ------------------------------------------------------

#[test]
fn an_unknown_id_is_a_usage_error_that_lists_the_registry() {
    let s = Sandbox::new();
    let ran = diag(&s, "toolchain.nope");
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("toolchain.rustc_absent"));
    assert!(ran.stderr.contains("linker.lld_missing"));
    assert!(ran.stdout.is_empty());
}

#[test]
fn diag_cannot_be_combined_with_other_selection_flags() {
    let s = Sandbox::new();
    for extra in ["--list", "--no-compile"] {
        let ran = run(s.doctor(&["--diag", "docker.absent", extra]));
        assert_eq!(ran.code, 2, "--diag with {extra}: {}", ran.stderr);
    }
}

#[test]
fn list_prints_every_id_with_its_severity() {
    let s = Sandbox::new();
    let ran = run(s.doctor(&["--list"]));
    assert_eq!(ran.code, 0);
    for id in [
        "toolchain.rustc_absent",
        "toolchain.rustup_absent",
        "toolchain.rustc_shadowed",
        "toolchain.rustup_shadowed",
        "toolchain.wrapper_missing",
        "toolchain.compile_failed",
        "toolchain.compile_timeout",
        "docker.absent",
        "docker.daemon_down",
        "docker.wsl_wedged",
        "sccache.shadowed_shim",
        "sccache.pathological",
        "vox.schema_drift",
        "linker.lld_missing",
    ] {
        let line = ran
            .stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} not listed"));
        assert!(
            line.contains("error") || line.contains("warn") || line.contains("info"),
            "{line}"
        );
    }
}

#[test]
fn json_is_one_line_with_system_and_checks() {
    let s = Sandbox::new();
    s.script("docker", DAEMON_DOWN);
    let ran = run(s.doctor(&["--no-compile", "--json"]));
    assert_eq!(ran.stdout.lines().count(), 1, "{}", ran.stdout);
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert!(doc["system"]["cpus"].as_u64().is_some_and(|n| n >= 1));
    let checks = doc["checks"].as_array().expect("checks");
    let docker = checks
        .iter()
        .find(|c| c["name"] == "docker")
        .expect("docker check");
    assert_eq!(docker["pass"], false);
    assert_eq!(docker["diag"]["id"], "docker.daemon_down");
    assert_eq!(docker["diag"]["severity"], "warn");
    assert!(docker["diag"]["fix"]
        .as_str()
        .is_some_and(|f| !f.is_empty()));
    for check in checks {
        assert_eq!(check["pass"] == true, check["diag"].is_null(), "{check}");
    }
    // rustc is absent in the sandbox: an error, so exit 1.
    assert_eq!(ran.code, 1);
}

#[test]
fn diag_json_carries_only_that_check() {
    let s = Sandbox::new();
    let ran = run(s.doctor(&["--json", "--diag", "docker.absent"]));
    assert_eq!(ran.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout).expect("JSON");
    let checks = doc["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["diag"]["id"], "docker.absent");
}

#[test]
fn an_empty_path_is_a_list_of_findings_not_a_crash() {
    let s = Sandbox::new();
    let ran = run(s.doctor(&["--no-compile"]));
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    for id in [
        "toolchain.rustc_absent",
        "toolchain.rustup_absent",
        "docker.absent",
    ] {
        assert!(ran.fired(id), "{id}:\n{}", ran.stdout);
    }
}

#[test]
fn a_full_run_on_this_machine_prints_the_header_and_every_check() {
    let mut cmd = Command::new(BIN);
    cmd.arg("doctor")
        .env("VOX_DOCTOR_COMPILE_TIMEOUT_SECS", "50");
    let ran = run(cmd);
    assert!(
        ran.code == 0 || ran.code == 1,
        "exit {}: {}",
        ran.code,
        ran.stderr
    );
    for header in ["os:", "kernel:", "cpus:", "memory:"] {
        assert!(
            ran.stdout.contains(header),
            "{header} missing:\n{}",
            ran.stdout
        );
    }
    for check in [
        "toolchain.rustc",
        "toolchain.rustup",
        "toolchain.compile",
        "docker",
        "sccache",
        "vox.contract",
        "linker.lld",
    ] {
        assert!(
            ran.stdout
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(check)),
            "{check} missing:\n{}",
            ran.stdout
        );
    }
}

// ---- what probed tools print is shown escaped ---------------------------

/// Sets the terminal's title, clears the screen, homes the cursor, rings
/// the bell, reverses the text direction and starts a forged line.
const HOSTILE: &str = r"\033]0;pwned\007\033[2J\033[H\r\342\200\256\nFAKE ok everything";

/// A control character (or a bidi override) in `text`, other than the
/// line breaks that separate its lines.
fn raw_control(text: &str) -> Option<char> {
    text.chars()
        .find(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
}

/// Fake tools whose banners, stderr, paths and settings carry escape
/// sequences reach neither the human report nor `--json` raw.
#[test]
fn escape_sequences_from_probed_tools_are_shown_escaped() {
    let s = Sandbox::new();
    // One tool in a PATH directory whose name holds an escape sequence.
    let odd_dir = s.root.path().join("odd\x1b[2Jdir");
    fs::create_dir_all(&odd_dir).unwrap();
    Sandbox::script_in(
        &odd_dir,
        "rustc",
        &format!("printf 'rustc 1.95.0 (59807616e 2026-04-14){HOSTILE}\\n'"),
    );
    s.script("rustup", &format!("printf 'rustup-shim {HOSTILE}\\n'"));
    s.script(
        "docker",
        &format!("printf 'Cannot connect{HOSTILE}\\n' >&2; exit 1"),
    );
    s.script("sccache", &format!("printf 'not-sccache{HOSTILE}\\n'"));
    s.script(
        "cargo",
        &format!("printf 'error: broken{HOSTILE}\\n' >&2; exit 101"),
    );
    let path = std::env::join_paths([odd_dir.clone(), s.bin()]).unwrap();
    for json in [false, true] {
        let mut cmd = s.doctor(if json { &["--json"] } else { &[] });
        cmd.env("PATH", &path)
            .env("RUSTC_WRAPPER", "wrap\x1b]0;pwned\x07\x1b[2J")
            .env("VOX_DOCTOR_KERNEL_RELEASE", "6.8.0\x1b[2J-generic");
        let ran = run(cmd);
        assert!(ran.code == 0 || ran.code == 1, "{}", ran.stderr);
        for (what, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            if let Some(c) = raw_control(text) {
                panic!("json={json}: raw {c:?} on {what}:\n{text:?}");
            }
            assert!(
                !text.lines().any(|l| l.starts_with("FAKE")),
                "json={json}: a forged line on {what}:\n{text}"
            );
        }
        // The escapes are shown, not dropped: the text stays informative.
        let shown = if json {
            let doc: serde_json::Value = serde_json::from_str(&ran.stdout).expect("one JSON line");
            let strings = doc.to_string();
            assert!(raw_control(&strings).is_none());
            strings
        } else {
            ran.stdout.clone()
        };
        for expected in ["rustc 1.95.0", "pwned", "rustup-shim", "not-sccache", "odd"] {
            assert!(
                shown.contains(expected),
                "json={json}: {expected}:\n{shown}"
            );
        }
        // (In JSON text the escape's backslash is itself escaped.)
        let escape = if json {
            r"\\u{1b}]0;pwned\\u{7}"
        } else {
            r"\u{1b}]0;pwned\u{7}"
        };
        assert!(shown.contains(escape), "json={json}:\n{shown}");
    }
}
