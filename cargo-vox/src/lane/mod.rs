//! The build lane: `cargo vox build`, `test` and `run` (README, `cargo vox build`, `test`, `run`).
//!
//! Each command runs cargo with `--message-format=json`, reads the stream
//! ([`stream`]), adds the Vox report of every package that compiles Vox in
//! its build script ([`reports`]), and prints exactly one envelope per
//! result. Whatever goes wrong — cargo missing, crashing, killed, printing
//! junk — the command still ends with its envelope.

pub mod child_output;
pub mod commands;
pub mod libtest;
pub mod reports;
pub mod rustc;
pub mod script;
pub mod stream;
pub mod testrun;
pub mod usage;
pub mod user_runner;

use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::process::{Command, Stdio};

use stream::BuildOutcome;

/// How a child process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildStatus {
    Exited(i32),
    /// Killed by this signal (Unix).
    Signaled(i32),
    /// Could not be started.
    SpawnFailed(String),
}

impl ChildStatus {
    pub fn success(&self) -> bool {
        *self == ChildStatus::Exited(0)
    }

    /// The exit code to report and pass on: signals become `128 + n`, like a shell.
    pub fn code(&self) -> Option<i32> {
        match self {
            ChildStatus::Exited(c) => Some(*c),
            ChildStatus::Signaled(s) => Some(128 + s),
            ChildStatus::SpawnFailed(_) => None,
        }
    }

    pub(crate) fn from_status(status: std::process::ExitStatus) -> ChildStatus {
        if let Some(c) = status.code() {
            return ChildStatus::Exited(c);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(s) = status.signal() {
                return ChildStatus::Signaled(s);
            }
        }
        ChildStatus::Exited(1)
    }

    /// A sentence for envelopes' `message` when the child failed by itself.
    pub fn describe(&self, what: &str) -> String {
        match self {
            ChildStatus::Exited(c) => format!("{what} exited with status {c}"),
            ChildStatus::Signaled(s) => format!("{what} was killed by signal {s}"),
            ChildStatus::SpawnFailed(e) => format!("cannot run {what}: {e}"),
        }
    }
}

/// The result of one cargo invocation.
pub struct CargoRun {
    pub outcome: BuildOutcome,
    pub status: ChildStatus,
    /// The end of cargo's stderr (it is also passed through live).
    pub stderr_tail: String,
    /// Non-message stdout lines (test binaries' output under `cargo test`).
    pub text: String,
}

/// Keep this much of cargo's stderr for messages.
const STDERR_TAIL: usize = 64 * 1024;

/// Runs cargo, streaming its stderr through and parsing its stdout.
/// `echo_text` decides where non-message stdout lines go (tests' output):
/// to our stdout for people, to our stderr under `--json`.
pub fn run_cargo<R: stream::WorkspaceRoot + ?Sized>(
    args: &[OsString],
    workspace_root: &R,
    json: bool,
) -> CargoRun {
    run_cargo_with(args, &[], workspace_root, json, None)
}

/// [`run_cargo`] with extra environment and, for `cargo test` with the
/// lane's test runner, the `marker` around test binaries' output (see
/// [`testrun`]): that output is passed on like the rest but kept out of
/// [`CargoRun::text`], which then holds only what cargo itself ran (doctests).
pub fn run_cargo_with<R: stream::WorkspaceRoot + ?Sized>(
    args: &[OsString],
    env: &[(&str, OsString)],
    workspace_root: &R,
    json: bool,
    marker: Option<&str>,
) -> CargoRun {
    ignore_interrupts_while_children_run();
    let program = crate::cargo::cargo_program();
    let mut cmd = Command::new(&program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return CargoRun {
                outcome: BuildOutcome::default(),
                status: ChildStatus::SpawnFailed(format!("`{}`: {e}", program.to_string_lossy())),
                stderr_tail: String::new(),
                text: String::new(),
            }
        }
    };
    // Cargo's output is read until cargo exits, whatever a process it
    // left behind still holds open (see `child_output`).
    let exited = child_output::Exited::new();
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
    let forward = std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let Some(err) = stderr else {
            return String::new();
        };
        let mut err = child_output::ChildOutput::new(err, err_exited);
        let mut buf = [0u8; 8192];
        loop {
            match err.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let _ = std::io::stderr().write_all(&buf[..n]);
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > 2 * STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                }
            }
        }
        let start = tail.len().saturating_sub(STDERR_TAIL);
        String::from_utf8_lossy(&tail[start..]).into_owned()
    });
    let mut text = String::new();
    let outcome = match stdout {
        Some(out) => stream::read_stream_marked(
            BufReader::new(child_output::ChildOutput::new(out, exited)),
            workspace_root,
            marker,
            |line, from_binary| {
                if !from_binary {
                    text.push_str(line);
                    text.push('\n');
                }
                if json {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
            },
        ),
        None => BuildOutcome::default(),
    };
    let status = match waiter.join() {
        Ok(Ok(s)) => ChildStatus::from_status(s),
        Ok(Err(e)) => ChildStatus::SpawnFailed(e.to_string()),
        Err(_) => ChildStatus::SpawnFailed("lost track of cargo".to_string()),
    };
    let stderr_tail = forward.join().unwrap_or_default();
    CargoRun {
        outcome,
        status,
        stderr_tail,
        text,
    }
}

/// Ctrl-C goes to the whole foreground process group, so cargo (and the
/// program) receive it directly; `cargo vox` itself keeps running so it can
/// wait for them and still print its envelope. A handler (not `SIG_IGN`,
/// which children would inherit) is installed once.
pub fn ignore_interrupts_while_children_run() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        extern "C" fn on_interrupt(_: libc::c_int) {}
        ONCE.call_once(|| {
            // SAFETY: installing an async-signal-safe no-op handler for SIGINT.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut action.sa_mask);
                action.sa_flags = libc::SA_RESTART;
                libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
            }
        });
    }
}

/// The most useful lines of cargo's stderr when it failed without diagnostics.
pub fn failure_summary(stderr_tail: &str) -> Option<String> {
    let lines: Vec<&str> = stderr_tail
        .lines()
        .map(strip_ansi_prefixless)
        .filter(|l| l.trim_start().starts_with("error"))
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(
        lines
            .iter()
            .rev()
            .take(3)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("; "),
    )
}

fn strip_ansi_prefixless(line: &str) -> &str {
    line.trim_start_matches(|c: char| {
        c == '\u{1b}' || c == '[' || c.is_ascii_digit() || c == 'm' || c == ';'
    })
}
