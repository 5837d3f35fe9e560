//! The vox-runtime tests that own process-wide state — the default client
//! behind generated code, the global tracing subscriber — in a binary of
//! their own (the others are in `tests/it`), one test at a time.

#[path = "../it/sloppy/mod.rs"]
mod sloppy;
#[path = "../it/support/mod.rs"]
mod support;

mod global_client;
mod natural_replies;
mod repair_events;

use std::sync::OnceLock;

use support::trace::Recorder;
use tokio::sync::{Mutex, MutexGuard};

/// Serializes this binary's tests: each holds the guard for its whole run.
static EXCLUSIVE: Mutex<()> = Mutex::const_new(());

/// The recording subscriber, installed as the process's global one on
/// first use, with what it recorded so far forgotten. Installed before any
/// test calls the runtime, so no call's span was ever disabled for lack of
/// a subscriber.
fn recorder() -> Recorder {
    static RECORDER: OnceLock<Recorder> = OnceLock::new();
    let recorder = RECORDER.get_or_init(|| {
        let recorder = Recorder::default();
        tracing::subscriber::set_global_default(recorder.clone())
            .expect("the only global subscriber of this process");
        recorder
    });
    recorder.clear();
    recorder.clone()
}

/// For an async test: the binary to itself, and the global recorder.
pub async fn exclusive() -> (MutexGuard<'static, ()>, Recorder) {
    let guard = EXCLUSIVE.lock().await;
    (guard, recorder())
}

/// For a test outside a runtime: the binary to itself, and the global recorder.
pub fn exclusive_blocking() -> (MutexGuard<'static, ()>, Recorder) {
    let guard = EXCLUSIVE.blocking_lock();
    (guard, recorder())
}
