//! Reading a child's output up to the child's exit, not up to the pipe's end.
//!
//! A pipe reaches end of file only when every process holding its write end
//! has closed it, and a child's descendants inherit it: a test that leaves
//! `sleep 20 &` (or a daemon) behind would keep `cargo vox test` waiting for
//! them, where a plain `cargo test > file` returns when the test binary
//! exits. [`ChildOutput`] reads a pipe like any reader until the child has
//! exited ([`Exited`] is set by whoever reaped it); then it takes what is
//! still in the pipe — everything the child wrote, since its writes were
//! done before it exited — and ends there, whatever its descendants still
//! hold open. What they print afterwards is not read (they may then get
//! `SIGPIPE`, as under `cargo test | head`).
//!
//! On other platforms than Unix the pipe is read to its end, as before.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once the child has been reaped (after `wait` returned).
#[derive(Debug, Clone, Default)]
pub struct Exited(Arc<AtomicBool>);

impl Exited {
    pub fn new() -> Exited {
        Exited::default()
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// After the child's exit, read at most this much more: the pipe then holds
/// no more than its capacity of the child's output, and a descendant that
/// writes without end cannot keep the reading going.
const AFTER_EXIT_LIMIT: usize = 16 * 1024 * 1024;

/// How often an idle pipe is checked for the child's exit.
#[cfg(unix)]
const POLL_MS: libc::c_int = 25;

/// A child's stdout or stderr, read until the child has exited (see the module docs).
pub struct ChildOutput<R> {
    pipe: R,
    exited: Exited,
    /// Bytes read since the exit was seen; `None` before.
    after_exit: Option<usize>,
}

impl<R> ChildOutput<R> {
    pub fn new(pipe: R, exited: Exited) -> ChildOutput<R> {
        ChildOutput {
            pipe,
            exited,
            after_exit: None,
        }
    }
}

#[cfg(unix)]
impl<R: Read + std::os::fd::AsRawFd> Read for ChildOutput<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(done) = self.after_exit {
                // Only what is in the pipe now: everything the child wrote.
                if done >= AFTER_EXIT_LIMIT || !readable(self.pipe.as_raw_fd(), 0)? {
                    return Ok(0);
                }
                let n = self.pipe.read(buf)?;
                self.after_exit = Some(done + n);
                return Ok(n);
            }
            // Read the flag before polling: when it is set, every byte the
            // child wrote is already in the pipe.
            let exited = self.exited.is_set();
            if readable(self.pipe.as_raw_fd(), POLL_MS)? {
                match self.pipe.read(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => return other,
                }
            }
            if exited {
                self.after_exit = Some(0);
            }
        }
    }
}

/// Whether `fd` has data (or its end, or an error) to read within `timeout_ms`.
#[cfg(unix)]
fn readable(fd: std::os::fd::RawFd, timeout_ms: libc::c_int) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(unix))]
impl<R: Read> Read for ChildOutput<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let _ = (&self.exited, self.after_exit, AFTER_EXIT_LIMIT);
        self.pipe.read(buf)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// Runs `script` with its stdout read through [`ChildOutput`].
    fn read_sh(script: &str) -> (String, Duration) {
        let started = Instant::now();
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(script)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let exited = Exited::new();
        let mut out = ChildOutput::new(child.stdout.take().unwrap(), exited.clone());
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            exited.set();
            status
        });
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        assert!(waiter.join().unwrap().unwrap().success());
        (text, started.elapsed())
    }

    #[test]
    fn a_leaked_descendant_does_not_hold_the_reading() {
        // `sleep` holds the pipe for 30 s after the shell exits.
        let (text, took) = read_sh("echo one; sleep 30 & echo two");
        assert_eq!(text, "one\ntwo\n");
        assert!(took < Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn everything_the_child_wrote_is_read() {
        // More than a pipe holds, written in bursts, the last just before exit.
        let (text, _) = read_sh(
            "i=0; while [ $i -lt 3000 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; sleep 30 &",
        );
        assert_eq!(text.lines().count(), 3000);
        assert_eq!(
            text.lines().last(),
            Some("line-2999-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        );
        let (text, _) = read_sh("sleep 0.2; printf tail");
        assert_eq!(text, "tail");
    }
}
