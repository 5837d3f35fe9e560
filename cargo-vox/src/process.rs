//! Running external commands so that none of them can hang the caller.
//!
//! One runner for the doctor's probes and the end-to-end tests
//! ([`run_captured`]): the child gets its own process group (so a shell
//! script's grandchildren die with it), its output is drained by threads (a
//! full pipe cannot stall it) and capped, and on expiry the whole group is
//! killed. After the child exits, its pipes get a bounded grace period: a
//! grandchild that escaped the group and still holds them cannot hang the
//! caller. A program that is missing or cannot start is an `Err`, never a
//! panic. The doctor uses it through [`run_with_timeout`], which folds the
//! result into a [`RunOutcome`].

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// By default at most this many bytes of each stream are kept; the rest is
/// drained and dropped.
pub const DEFAULT_OUTPUT_CAP_BYTES: usize = 1024 * 1024;

/// After the child is gone, how long to wait for its pipes to close. A
/// grandchild that escaped the process group may keep them open forever.
const PIPE_GRACE: Duration = Duration::from_millis(250);

/// What a finished (or abandoned) command printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    pub stdout: String,
    pub stderr: String,
}

/// How a command run under a deadline ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// The command exited by itself; `code` is `None` when a signal ended it.
    Exited {
        code: Option<i32>,
        output: CapturedOutput,
    },
    /// The deadline passed; the command (and its process group) was killed.
    TimedOut { output: CapturedOutput },
    /// The command could not be started (not found, not executable, …).
    CouldNotStart { reason: String },
}

impl CapturedOutput {
    /// The first non-empty line of stderr, else of stdout: what a person
    /// would read first when the command complains.
    pub fn headline(&self) -> String {
        first_line(&self.stderr)
            .or_else(|| first_line(&self.stdout))
            .unwrap_or_default()
    }
}

/// The first non-empty line of `text`, trimmed and cut to 300 characters.
pub fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(300).collect())
}

/// Runs `cmd` with stdin closed, capturing stdout and stderr, and kills it
/// (with its process group) if it has not exited after `timeout`.
pub fn run_with_timeout(cmd: Command, timeout: Duration) -> RunOutcome {
    run_with_timeout_and_cap(cmd, timeout, DEFAULT_OUTPUT_CAP_BYTES)
}

/// [`run_with_timeout`] keeping up to `cap` bytes of each stream, for
/// commands whose output is legitimately large (`cargo metadata`).
pub fn run_with_timeout_and_cap(mut cmd: Command, timeout: Duration, cap: usize) -> RunOutcome {
    let limits = Limits {
        timeout,
        output_cap: cap,
        pipe_grace: PIPE_GRACE,
    };
    match run_captured(&mut cmd, limits) {
        Err(err) => RunOutcome::CouldNotStart {
            reason: err.to_string(),
        },
        Ok(Captured {
            status: Some(status),
            output,
        }) => RunOutcome::Exited {
            code: status.code(),
            output,
        },
        Ok(Captured {
            status: None,
            output,
        }) => RunOutcome::TimedOut { output },
    }
}

/// Bounds on one [`run_captured`] call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// After this long the child's process group is killed.
    pub timeout: Duration,
    /// Bytes kept of each stream; the rest is drained and dropped.
    pub output_cap: usize,
    /// How long to wait for the pipes to close once the child is gone.
    pub pipe_grace: Duration,
}

/// What [`run_captured`] saw.
#[derive(Debug)]
pub struct Captured {
    /// How the child ended; `None` when the deadline passed and it was killed.
    pub status: Option<ExitStatus>,
    pub output: CapturedOutput,
}

/// Runs `cmd` with stdin closed, in its own process group, under `limits`.
/// `Err` only when the program cannot be started.
pub fn run_captured(cmd: &mut Command, limits: Limits) -> std::io::Result<Captured> {
    let Limits {
        timeout,
        output_cap: cap,
        pipe_grace,
    } = limits;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    put_in_own_process_group(cmd);
    let mut child = cmd.spawn()?;
    let started = Instant::now();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let stdout_buf = Arc::new(Mutex::new(Vec::new()));
    let stderr_buf = Arc::new(Mutex::new(Vec::new()));
    let mut readers = 0;
    if let Some(out) = child.stdout.take() {
        drain_in_background(out, Arc::clone(&stdout_buf), cap, done_tx.clone());
        readers += 1;
    }
    if let Some(err) = child.stderr.take() {
        drain_in_background(err, Arc::clone(&stderr_buf), cap, done_tx.clone());
        readers += 1;
    }
    drop(done_tx);

    let exit = wait_until(&mut child, started + timeout);
    if exit.is_none() {
        kill_process_group(&mut child);
    }
    // Reap the child (it is dead or dying) so no zombie is left behind.
    let _ = child.wait();
    let pipes_deadline = Instant::now() + pipe_grace;
    for _ in 0..readers {
        let left = pipes_deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let output = CapturedOutput {
        stdout: take_text(&stdout_buf),
        stderr: take_text(&stderr_buf),
    };
    Ok(Captured {
        status: exit,
        output,
    })
}

/// Polls the child until it exits or `deadline` passes. `Some(status)` on
/// exit.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            // The child can no longer be polled: fall back to a blocking wait
            // (it has been spawned, so this returns once it exits).
            Err(_) => return child.wait().ok(),
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn drain_in_background(
    mut stream: impl Read + Send + 'static,
    sink: Arc<Mutex<Vec<u8>>>,
    cap: usize,
    done: mpsc::Sender<()>,
) {
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut buf) = sink.lock() {
                        let room = cap.saturating_sub(buf.len());
                        buf.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }
        }
        let _ = done.send(());
    });
}

fn take_text(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    match buf.lock() {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    }
}

#[cfg(unix)]
fn put_in_own_process_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
fn put_in_own_process_group(_cmd: &mut Command) {}

#[cfg(unix)]
fn kill_process_group(child: &mut Child) {
    // The child leads its own group (pgid == pid), so this reaches every
    // process it started that did not move to another group.
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid only sends a signal; no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn kill_process_group(child: &mut Child) {
    let _ = child.kill();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    #[test]
    fn captures_both_streams_and_the_exit_code() {
        let out = run_with_timeout(sh("echo out; echo err >&2; exit 3"), Duration::from_secs(5));
        match out {
            RunOutcome::Exited { code, output } => {
                assert_eq!(code, Some(3));
                assert_eq!(output.stdout, "out\n");
                assert_eq!(output.stderr, "err\n");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn kills_a_hanging_command_and_its_children() {
        let started = Instant::now();
        // The shell waits on a child sleep that holds the pipes open.
        let out = run_with_timeout(
            sh("echo early; sleep 30; echo late"),
            Duration::from_millis(300),
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        match out {
            RunOutcome::TimedOut { output } => assert_eq!(output.stdout, "early\n"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn caps_a_flood_of_output_without_deadlocking() {
        let out = run_with_timeout(
            sh("yes 0123456789 | head -c 4000000"),
            Duration::from_secs(10),
        );
        match out {
            RunOutcome::Exited { code, output } => {
                assert_eq!(code, Some(0));
                assert_eq!(output.stdout.len(), DEFAULT_OUTPUT_CAP_BYTES);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_missing_program_is_an_outcome_not_a_panic() {
        let out = run_with_timeout(
            Command::new("/nonexistent/definitely-not-here"),
            Duration::from_secs(1),
        );
        assert!(matches!(out, RunOutcome::CouldNotStart { .. }));
    }
}
