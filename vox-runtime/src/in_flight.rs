//! The requests one client has in flight: at most `capacity` at once, each
//! within the request timeout.
//!
//! The cap is a tokio [`Semaphore`] (fair: waiting requests get permits in
//! arrival order); a request's timeout starts once it has a permit, so
//! waiting for one does not count.
//!
//! The timeouts are kept by [`Deadlines`]: a table of due times behind one
//! mutex and one watchdog thread per client, asleep until the earliest due
//! time, that wakes the requests whose time is up. A tokio timer per
//! request would do the same, but inserting the first timer into an idle
//! runtime wakes its driver through a system call, once per request: about
//! 0.8 µs on a loopback call of 19 µs, measured by the `call_overhead`
//! bench (1.075× a raw POST instead of 1.035×). The watchdog is woken only
//! when it has nothing to wait for, and all requests share one timeout, so
//! a new due time is never earlier than the one it sleeps until. Every
//! state change happens under the mutex, so a request either sees its
//! deadline passed or has left its waker where the watchdog finds it; the
//! `loom` test below checks every interleaving of that handshake
//! (`RUSTFLAGS="--cfg vox_loom" cargo test -p vox-runtime --lib in_flight`).
//!
//! Due times are on the real clock (the watchdog is a thread, not a task,
//! so that a client can outlive the runtime of any one `block_on`).

use std::future::Future;
use std::pin::pin;
use std::task::{Poll, Waker};
use std::time::Duration;

use tokio::sync::Semaphore;

#[cfg(vox_loom)]
use loom::{
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};
#[cfg(not(vox_loom))]
use std::{
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};

/// The in-flight requests of one client.
pub(crate) struct InFlight {
    permits: Semaphore,
    deadlines: Deadlines<RealClock>,
}

impl InFlight {
    /// Room for `capacity` requests at once (at least one, at most
    /// [`Semaphore::MAX_PERMITS`]), each allowed `timeout` from the moment
    /// it gets a permit.
    pub fn new(capacity: usize, timeout: Duration) -> InFlight {
        InFlight {
            permits: Semaphore::new(capacity.clamp(1, Semaphore::MAX_PERMITS)),
            deadlines: Deadlines::new(RealClock::new(), timeout),
        }
    }

    /// Waits for a slot and holds it until the permit is dropped, without
    /// the request timeout: a streamed answer keeps its own timers
    /// (docs/runtime.md, "Streaming"). `None` only were the semaphore
    /// closed, which it never is.
    pub async fn permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.permits.acquire().await.ok()
    }

    /// Waits for a permit, then runs `future` to completion, or returns
    /// `None` once the timeout has passed since it got the permit.
    pub async fn run<F: Future>(&self, future: F) -> Option<F::Output> {
        // The semaphore is never closed, so acquiring cannot fail; were it
        // closed, running without a permit is the harmless way out.
        let _permit = self.permits.acquire().await.ok();
        let Some(deadline) = self.deadlines.start() else {
            // No watchdog thread could be started: a tokio timer instead.
            return tokio::time::timeout(self.deadlines.timeout, future)
                .await
                .ok();
        };
        let mut future = pin!(future);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            if deadline.passed_or_wake(cx.waker()) {
                Poll::Ready(None)
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// Where due times are measured, in nanoseconds from some start.
pub(crate) trait Clock: Send + Sync + 'static {
    fn now(&self) -> u64;
}

/// The real, monotonic clock.
pub(crate) struct RealClock(std::time::Instant);

impl RealClock {
    fn new() -> RealClock {
        RealClock(std::time::Instant::now())
    }
}

impl Clock for RealClock {
    fn now(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The due times of one client's requests, and the watchdog that wakes
/// the requests whose time is up.
pub(crate) struct Deadlines<C: Clock> {
    shared: Arc<Shared<C>>,
    timeout: Duration,
    /// Whether the watchdog thread runs, once it was started (false: it
    /// could not be).
    watchdog: std::sync::OnceLock<bool>,
}

struct Shared<C> {
    clock: C,
    table: Mutex<Table>,
    /// Wakes the watchdog: when it was idle and a request starts, or when
    /// the client is gone.
    wake: Condvar,
}

#[derive(Default)]
struct Table {
    entries: Vec<Entry>,
    /// Indices of free entries.
    free: Vec<usize>,
    /// The watchdog sleeps with no due time to wait for.
    idle: bool,
    /// The client is gone: the watchdog exits.
    closed: bool,
}

#[derive(Default)]
struct Entry {
    /// Due time (clock nanoseconds); `None` while the entry is free.
    due: Option<u64>,
    passed: bool,
    waker: Option<Waker>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; a poisoned one still holds
    // consistent data.
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl<C: Clock> Deadlines<C> {
    pub fn new(clock: C, timeout: Duration) -> Deadlines<C> {
        Deadlines {
            shared: Arc::new(Shared {
                clock,
                table: Mutex::new(Table::default()),
                wake: Condvar::new(),
            }),
            timeout,
            watchdog: std::sync::OnceLock::new(),
        }
    }

    /// Starts the timeout of one request: `None` if there is no watchdog
    /// to keep it.
    pub fn start(&self) -> Option<Deadline<'_, C>> {
        if !self.ensure_watchdog() {
            return None;
        }
        let shared = &*self.shared;
        let timeout = u64::try_from(self.timeout.as_nanos()).unwrap_or(u64::MAX);
        let due = shared.clock.now().saturating_add(timeout);
        let mut table = lock(&shared.table);
        let index = match table.free.pop() {
            Some(index) => index,
            None => {
                table.entries.push(Entry::default());
                table.entries.len() - 1
            }
        };
        table.entries[index] = Entry {
            due: Some(due),
            passed: false,
            waker: None,
        };
        if table.idle {
            table.idle = false;
            drop(table);
            shared.wake.notify_one();
        }
        Some(Deadline {
            shared: &self.shared,
            index,
        })
    }

    /// Starts the watchdog on first use; whether it runs.
    fn ensure_watchdog(&self) -> bool {
        *self
            .watchdog
            .get_or_init(|| spawn_watchdog(self.shared.clone()))
    }
}

#[cfg(not(vox_loom))]
fn spawn_watchdog<C: Clock>(shared: Arc<Shared<C>>) -> bool {
    thread::Builder::new()
        .name("vox-runtime-timeouts".into())
        .stack_size(64 * 1024)
        .spawn(move || watch(&shared))
        .is_ok()
}

#[cfg(vox_loom)]
fn spawn_watchdog<C: Clock>(shared: Arc<Shared<C>>) -> bool {
    thread::spawn(move || watch(&shared));
    true
}

impl<C: Clock> Drop for Deadlines<C> {
    fn drop(&mut self) {
        lock(&self.shared.table).closed = true;
        self.shared.wake.notify_one();
    }
}

/// One request's timeout; ends when dropped.
pub(crate) struct Deadline<'a, C: Clock> {
    shared: &'a Shared<C>,
    index: usize,
}

impl<C: Clock> Deadline<'_, C> {
    /// Whether the due time has passed; if not, `waker` is woken when it
    /// does.
    pub fn passed_or_wake(&self, waker: &Waker) -> bool {
        let mut table = lock(&self.shared.table);
        let entry = &mut table.entries[self.index];
        if entry.passed {
            return true;
        }
        if !entry.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            entry.waker = Some(waker.clone());
        }
        false
    }
}

impl<C: Clock> Drop for Deadline<'_, C> {
    fn drop(&mut self) {
        let waker = {
            let mut table = lock(&self.shared.table);
            let waker = std::mem::take(&mut table.entries[self.index]).waker;
            table.free.push(self.index);
            waker
        };
        // Dropped outside the lock: a waker's drop may run arbitrary code.
        drop(waker);
    }
}

/// The watchdog: marks the entries whose due time has passed and wakes
/// their requests, then sleeps until the next due time or, with nothing to
/// wait for, until a request starts; exits once the client is gone.
fn watch<C: Clock>(shared: &Shared<C>) {
    let mut table = lock(&shared.table);
    loop {
        if table.closed {
            return;
        }
        let now = shared.clock.now();
        let mut due_wakers = Vec::new();
        let mut next_due: Option<u64> = None;
        for entry in &mut table.entries {
            match entry.due {
                Some(due) if !entry.passed && due <= now => {
                    entry.passed = true;
                    due_wakers.extend(entry.waker.take());
                }
                Some(due) if !entry.passed => {
                    next_due = Some(next_due.map_or(due, |next| next.min(due)));
                }
                _ => {}
            }
        }
        if !due_wakers.is_empty() {
            // Woken outside the lock; then look again.
            drop(table);
            due_wakers.into_iter().for_each(Waker::wake);
            table = lock(&shared.table);
            continue;
        }
        table = match next_due {
            Some(due) => {
                let wait = Duration::from_nanos(due - now);
                match shared.wake.wait_timeout(table, wait) {
                    Ok((table, _)) => table,
                    Err(poisoned) => poisoned.into_inner().0,
                }
            }
            None => {
                table.idle = true;
                match shared.wake.wait(table) {
                    Ok(table) => table,
                    Err(poisoned) => poisoned.into_inner(),
                }
            }
        };
    }
}

#[cfg(all(test, not(vox_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn free(in_flight: &InFlight) -> bool {
        let table = lock(&in_flight.deadlines.shared.table);
        table
            .entries
            .iter()
            .all(|e| e.due.is_none() && e.waker.is_none())
            && in_flight.permits.available_permits() > 0
    }

    #[test]
    fn a_request_that_finishes_in_time_gets_its_output() {
        let in_flight = InFlight::new(2, Duration::from_secs(5));
        let output = runtime().block_on(in_flight.run(async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            7
        }));
        assert_eq!(output, Some(7));
        assert!(free(&in_flight));
        assert_eq!(in_flight.permits.available_permits(), 2);
    }

    #[test]
    fn a_request_that_never_finishes_times_out() {
        let in_flight = InFlight::new(1, Duration::from_millis(100));
        let runtime = runtime();
        for _ in 0..3 {
            let started = Instant::now();
            let output = runtime.block_on(in_flight.run(std::future::pending::<()>()));
            let took = started.elapsed();
            assert_eq!(output, None);
            assert!(took >= Duration::from_millis(100), "{took:?}");
            assert!(took < Duration::from_secs(2), "{took:?}");
            assert!(free(&in_flight));
        }
    }

    #[test]
    fn no_more_than_capacity_run_at_once_and_waiting_does_not_count() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        // Each request takes 40 ms of a 150 ms timeout; 12 requests through
        // 3 permits wait up to 120 ms for one, which must not count.
        let in_flight = std::sync::Arc::new(InFlight::new(3, Duration::from_millis(150)));
        let running = std::sync::Arc::new(AtomicUsize::new(0));
        let peak = std::sync::Arc::new(AtomicUsize::new(0));
        let outputs = runtime.block_on(async {
            let tasks: Vec<_> = (0..12)
                .map(|i| {
                    let (in_flight, running, peak) =
                        (in_flight.clone(), running.clone(), peak.clone());
                    tokio::spawn(async move {
                        in_flight
                            .run(async {
                                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                                peak.fetch_max(now, Ordering::SeqCst);
                                tokio::time::sleep(Duration::from_millis(40)).await;
                                running.fetch_sub(1, Ordering::SeqCst);
                                i
                            })
                            .await
                    })
                })
                .collect();
            let mut outputs = Vec::new();
            for task in tasks {
                outputs.push(task.await.unwrap());
            }
            outputs
        });
        assert_eq!(outputs, (0..12).map(Some).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        assert!(free(&in_flight));
    }

    #[test]
    fn a_dropped_request_frees_its_permit_and_its_deadline() {
        let in_flight = InFlight::new(1, Duration::from_secs(5));
        runtime().block_on(async {
            // Holds the only permit until dropped.
            let mut holder = Box::pin(in_flight.run(std::future::pending::<()>()));
            assert!(poll_once(holder.as_mut()).await.is_none());
            assert_eq!(in_flight.permits.available_permits(), 0);
            // A second request waits; dropping it while it waits must not
            // leave it queued.
            let mut waiter = Box::pin(in_flight.run(async { 1 }));
            assert!(poll_once(waiter.as_mut()).await.is_none());
            drop(waiter);
            drop(holder);
            assert!(free(&in_flight));
            let output = tokio::time::timeout(Duration::from_secs(1), in_flight.run(async { 2 }))
                .await
                .expect("the permit was freed");
            assert_eq!(output, Some(2));
        });
    }

    #[test]
    fn waiting_requests_run_in_arrival_order() {
        let in_flight = InFlight::new(1, Duration::from_secs(5));
        let order = std::sync::Mutex::new(Vec::new());
        runtime().block_on(async {
            let run = |i: u32| {
                let (in_flight, order) = (&in_flight, &order);
                async move {
                    in_flight
                        .run(async {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                            order.lock().unwrap().push(i);
                        })
                        .await
                }
            };
            let (a, b, c) = tokio::join!(run(0), run(1), run(2));
            assert_eq!((a, b, c), (Some(()), Some(()), Some(())));
        });
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn the_watchdog_ends_with_its_client() {
        let in_flight = InFlight::new(1, Duration::from_secs(60));
        assert_eq!(runtime().block_on(in_flight.run(async { 1 })), Some(1));
        let weak = std::sync::Arc::downgrade(&in_flight.deadlines.shared);
        drop(in_flight);
        // The watchdog holds the last reference until it exits.
        let started = Instant::now();
        while weak.upgrade().is_some() {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "watchdog still running"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn capacity_zero_counts_as_one_and_huge_is_capped() {
        let permits = |n| {
            InFlight::new(n, Duration::from_secs(1))
                .permits
                .available_permits()
        };
        assert_eq!(permits(0), 1);
        assert_eq!(permits(usize::MAX), Semaphore::MAX_PERMITS);
    }

    /// Polls `future` once: `Some(output)` if it was ready.
    async fn poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
                Poll::Ready(output) => Some(output),
                Poll::Pending => None,
            })
        })
        .await
    }
}

/// Every interleaving of a request and the watchdog (loom): a request
/// whose due time passes is woken, or sees it passed, and never hangs; one
/// that ends first leaves nothing behind; the watchdog exits with the
/// client.
#[cfg(all(test, vox_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use std::sync::atomic::AtomicBool;
    use std::task::Wake;

    /// A clock the test moves.
    struct TestClock(AtomicU64);

    /// Moves the clock to `now` and ends the watchdog's timed wait, as the
    /// real clock reaching the due time it waits for would; an idle
    /// watchdog (waiting without a due time) is left asleep, as time alone
    /// would leave it. (Loom's timed wait ends only when notified; the
    /// clock moves under the table's lock so that the watchdog cannot read
    /// the old time and then miss the notification.)
    fn advance(clock: &TestClock, deadlines: &Deadlines<&'static TestClock>, now: u64) {
        let table = lock(&deadlines.shared.table);
        clock.0.store(now, Ordering::SeqCst);
        let idle = table.idle;
        drop(table);
        if !idle {
            deadlines.shared.wake.notify_one();
        }
    }

    impl Clock for &'static TestClock {
        fn now(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// A waker that records being woken and unparks the request's thread.
    struct Flag {
        woken: AtomicBool,
        thread: thread::Thread,
    }

    impl Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.woken.store(true, std::sync::atomic::Ordering::SeqCst);
            self.thread.unpark();
        }
    }

    #[test]
    fn a_request_past_its_due_time_is_woken_or_sees_it() {
        loom::model(|| {
            let clock: &'static TestClock = Box::leak(Box::new(TestClock(AtomicU64::new(0))));
            let deadlines = Deadlines::new(clock, Duration::from_nanos(10));
            let deadline = deadlines.start().expect("watchdog");
            let flag = std::sync::Arc::new(Flag {
                woken: AtomicBool::new(false),
                thread: thread::current(),
            });
            let waker = Waker::from(flag.clone());
            // Time passes while the request is pending.
            advance(clock, &deadlines, 10);
            // Either the first look sees the due time passed, or the waker
            // is registered and the watchdog wakes it.
            while !deadline.passed_or_wake(&waker) {
                while !flag.woken.swap(false, std::sync::atomic::Ordering::SeqCst) {
                    thread::park();
                }
            }
            drop(deadline);
            let table = lock(&deadlines.shared.table);
            assert!(table.entries.iter().all(|e| e.due.is_none()));
        });
    }

    #[test]
    fn a_request_that_ends_first_leaves_nothing_behind() {
        loom::model(|| {
            let clock: &'static TestClock = Box::leak(Box::new(TestClock(AtomicU64::new(0))));
            let deadlines = Deadlines::new(clock, Duration::from_nanos(10));
            let deadline = deadlines.start().expect("watchdog");
            let flag = std::sync::Arc::new(Flag {
                woken: AtomicBool::new(false),
                thread: thread::current(),
            });
            assert!(!deadline.passed_or_wake(&Waker::from(flag)));
            drop(deadline);
            advance(clock, &deadlines, 10);
            // A second request reuses the entry and is not marked passed
            // by the first one's due time before its own.
            let second = deadlines.start().expect("watchdog");
            let flag = std::sync::Arc::new(Flag {
                woken: AtomicBool::new(false),
                thread: thread::current(),
            });
            assert!(!second.passed_or_wake(&Waker::from(flag)));
        });
    }
}
