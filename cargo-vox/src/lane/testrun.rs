//! How `cargo vox test` sees each test binary on its own.
//!
//! Cargo runs every test binary through a *runner* when one is configured
//! (`target.<cfg>.runner`, see cargo's configuration docs). `cargo vox test`
//! names itself: `cargo-vox __vox-test-runner BINARY ARGS…`. The runner
//! starts the binary exactly as cargo asked (same arguments, environment
//! and directory), passes its output through, and writes a [`BinaryRun`]
//! record — the binary, its exit status, its stdout and its stderr, kept
//! apart — into the directory named by [`RECORDS_ENV`]. Reading a binary's
//! stdout alone, from its end, is what makes the counts exact whatever the
//! tests print (see `lane::libtest`).
//!
//! The binary's stdout is passed through between two marker lines so the
//! lane can tell it from the doctests' output that cargo prints on the same
//! pipe; the lane drops the markers.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::child_output::{ChildOutput, Exited};
use super::user_runner::UserRunner;
use super::ChildStatus;

/// The first argument that makes `cargo-vox` a test runner.
pub const RUNNER_ARG: &str = "__vox-test-runner";
/// The directory the runner writes its records to.
pub const RECORDS_ENV: &str = "VOX_TEST_RECORDS";
/// The marker around each binary's stdout.
pub const MARKER_ENV: &str = "VOX_TEST_MARKER";
/// The user's own runners (JSON, one per target, `null` for none), which
/// the runner runs the binary through (see `lane::user_runner`). The
/// argument after [`RUNNER_ARG`] is the index of the target's.
pub const USER_RUNNERS_ENV: &str = "VOX_TEST_USER_RUNNERS";

/// Keep this much of a binary's stdout (the end: libtest's summary is last).
const STDOUT_KEEP: usize = 16 * 1024 * 1024;
/// Keep this much of a binary's stderr (the end).
const STDERR_KEEP: usize = 1024 * 1024;

/// One test binary's run, as the runner saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryRun {
    pub executable: PathBuf,
    /// Exit code, if it exited.
    pub code: Option<i32>,
    /// Signal, if it was killed by one (Unix).
    pub signal: Option<i32>,
    /// Why it could not start, if it could not.
    pub spawn_error: Option<String>,
    pub stdout: String,
    pub stderr: String,
}

impl BinaryRun {
    pub fn status(&self) -> ChildStatus {
        match (&self.spawn_error, self.code, self.signal) {
            (Some(e), _, _) => ChildStatus::SpawnFailed(e.clone()),
            (None, Some(c), _) => ChildStatus::Exited(c),
            (None, None, Some(s)) => ChildStatus::Signaled(s),
            (None, None, None) => ChildStatus::Exited(1),
        }
    }
}

/// The marker lines around a binary's stdout.
pub fn marker_lines(marker: &str) -> (String, String) {
    (format!("{marker} begin"), format!("{marker} end"))
}

/// `cargo-vox __vox-test-runner INDEX BINARY ARGS…`: runs the binary
/// (through the user's runner for target INDEX, if any), records it, and
/// exits as it did.
pub fn runner_main(args: &[OsString]) -> i32 {
    let (user, args) = match args.split_first() {
        Some((index, rest)) if !rest.is_empty() => match index.to_str().map(str::parse::<usize>) {
            Some(Ok(i)) => (user_runner(i), rest),
            _ => (None, args),
        },
        _ => (None, args),
    };
    let Some((exe, rest)) = args.split_first() else {
        eprintln!("cargo-vox: {RUNNER_ARG} needs a program to run");
        return 101;
    };
    let records = std::env::var_os(RECORDS_ENV).map(PathBuf::from);
    let marker = std::env::var(MARKER_ENV).ok();
    super::ignore_interrupts_while_children_run();
    let mut cmd = match &user {
        Some(u) => {
            let mut cmd = Command::new(&u.program);
            cmd.args(&u.args).arg(exe);
            cmd
        }
        None => Command::new(exe),
    };
    cmd.args(rest)
        .env_remove(RECORDS_ENV)
        .env_remove(MARKER_ENV)
        .env_remove(USER_RUNNERS_ENV)
        .stdin(Stdio::inherit());
    let cannot_run = |e: &str| match &user {
        Some(u) => eprintln!(
            "cargo-vox: cannot run the test runner {} (set in {}) for {}: {e}",
            u.program.display(),
            u.origin,
            Path::new(exe).display()
        ),
        None => eprintln!("cargo-vox: cannot run {}: {e}", Path::new(exe).display()),
    };
    let Some(records) = records else {
        // Not under `cargo vox test`: stay out of the way.
        return match cmd.status() {
            Ok(st) => exit_like(ChildStatus::from_status(st)),
            Err(e) => {
                cannot_run(&e.to_string());
                101
            }
        };
    };
    let mut record = BinaryRun {
        executable: PathBuf::from(exe),
        ..BinaryRun::default()
    };
    let status = run_recorded(&mut cmd, marker.as_deref(), &mut record);
    match &status {
        ChildStatus::Exited(c) => record.code = Some(*c),
        ChildStatus::Signaled(s) => record.signal = Some(*s),
        ChildStatus::SpawnFailed(e) => {
            cannot_run(e);
            record.spawn_error = Some(e.clone());
        }
    }
    if let Err(e) = write_record(&records, &record) {
        eprintln!(
            "cargo-vox: cannot record the run of {} in {}: {e}",
            Path::new(exe).display(),
            records.display()
        );
    }
    exit_like(status)
}

/// The user's runner for target `index`, from [`USER_RUNNERS_ENV`].
fn user_runner(index: usize) -> Option<UserRunner> {
    let text = std::env::var(USER_RUNNERS_ENV).ok()?;
    let all: Vec<Option<UserRunner>> = serde_json::from_str(&text).ok()?;
    all.into_iter().nth(index).flatten()
}

fn run_recorded(cmd: &mut Command, marker: Option<&str>, record: &mut BinaryRun) -> ChildStatus {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ChildStatus::SpawnFailed(e.to_string()),
    };
    // The binary's output is read until it exits, not until its pipes
    // close: a process it leaves behind (`sleep 20 &`, a daemon) may hold
    // them open for as long as it lives (see `lane::child_output`).
    let exited = Exited::new();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let waiter = {
        let exited = exited.clone();
        std::thread::spawn(move || {
            let status = child.wait();
            exited.set();
            status
        })
    };
    let err_exited = exited.clone();
    let err_thread = std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(err) = stderr {
            let mut err = ChildOutput::new(err, err_exited);
            pass_through(&mut err, &mut std::io::stderr(), &mut kept, STDERR_KEEP);
        }
        kept
    });
    let mut out = std::io::stdout();
    let (begin, end) = marker.map(marker_lines).unzip();
    if let Some(begin) = &begin {
        let _ = writeln!(out, "{begin}");
        let _ = out.flush();
    }
    let mut kept = Vec::new();
    if let Some(stdout) = stdout {
        let mut stdout = ChildOutput::new(stdout, exited);
        pass_through(&mut stdout, &mut out, &mut kept, STDOUT_KEEP);
    }
    if let Some(end) = &end {
        if kept.last().is_some_and(|b| *b != b'\n') {
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "{end}");
    }
    let _ = out.flush();
    let status = match waiter.join() {
        Ok(Ok(s)) => ChildStatus::from_status(s),
        Ok(Err(e)) => ChildStatus::SpawnFailed(e.to_string()),
        Err(_) => ChildStatus::SpawnFailed("lost track of the test binary".to_string()),
    };
    record.stdout = String::from_utf8_lossy(&kept).into_owned();
    record.stderr = String::from_utf8_lossy(&err_thread.join().unwrap_or_default()).into_owned();
    status
}

/// Copies `from` to `to` as it arrives, keeping the last `keep` bytes.
fn pass_through(from: &mut impl Read, to: &mut impl Write, kept: &mut Vec<u8>, keep: usize) {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let _ = to.write_all(&buf[..n]);
                let _ = to.flush();
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * keep {
                    kept.drain(..kept.len() - keep);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if kept.len() > keep {
        kept.drain(..kept.len() - keep);
    }
}

/// Each record is its own file, written whole to an exclusively created
/// temporary file and then renamed into place (never through a file or
/// symlink planted at a predictable name).
fn write_record(dir: &Path, record: &BinaryRun) -> std::io::Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("{nanos:030}-{}", std::process::id());
    let text = serde_json::to_string(record).map_err(std::io::Error::other)?;
    vox_build::write_if_changed(&dir.join(format!("{name}.json")), text.as_bytes())
        .map_err(std::io::Error::other)
}

/// The records in `dir`, in the order the binaries finished.
#[derive(Debug, Default)]
pub struct Records {
    pub runs: Vec<BinaryRun>,
    /// Record files that could not be read or parsed: each is a test binary
    /// whose result is unknown, never silently left out of the counts.
    pub unreadable: Vec<PathBuf>,
}

/// Every record in `dir`, in the order the binaries finished.
pub fn read_records(dir: &Path) -> Records {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Records::default();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut records = Records::default();
    for path in paths {
        let parsed = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        match parsed {
            Some(run) => records.runs.push(run),
            None => records.unreadable.push(path),
        }
    }
    records
}

/// Ends this process the way the binary ended: its exit code, or (Unix) the same signal.
fn exit_like(status: ChildStatus) -> i32 {
    match status {
        ChildStatus::Exited(c) => c,
        ChildStatus::SpawnFailed(_) => 101,
        ChildStatus::Signaled(s) => {
            #[cfg(unix)]
            {
                let _ = std::io::stdout().flush();
                // SAFETY: restoring the default action of a signal and
                // raising it in this process, which then ends.
                unsafe {
                    libc::signal(s, libc::SIG_DFL);
                    libc::raise(s);
                }
            }
            128 + s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = BinaryRun {
            executable: "/t/a".into(),
            code: Some(0),
            stdout: "running 0 tests\n".into(),
            ..BinaryRun::default()
        };
        let b = BinaryRun {
            executable: "/t/b".into(),
            signal: Some(9),
            ..BinaryRun::default()
        };
        write_record(dir.path(), &a).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        write_record(dir.path(), &b).unwrap();
        std::fs::write(dir.path().join("junk.json"), "{not json").unwrap();
        let back = read_records(dir.path());
        assert_eq!(back.runs, [a, b.clone()]);
        assert_eq!(back.unreadable, [dir.path().join("junk.json")]);
        assert_eq!(b.status(), ChildStatus::Signaled(9));
        let missing = read_records(&dir.path().join("missing"));
        assert!(missing.runs.is_empty() && missing.unreadable.is_empty());
    }

    #[test]
    fn keeps_the_end() {
        let mut kept = Vec::new();
        let mut sink = Vec::new();
        let data = vec![b'x'; 100];
        pass_through(&mut data.as_slice(), &mut sink, &mut kept, 10);
        assert_eq!(sink.len(), 100);
        assert_eq!(kept.len(), 10);
    }
}
