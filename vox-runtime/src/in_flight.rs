//! The requests one client has in flight: at most `capacity` at once, each
//! within the request timeout.
//!
//! A tokio semaphore plus a `tokio::time::timeout` per request would do, but
//! they cost more than everything else the runtime adds to a loopback
//! round trip: the timer is entered into the runtime's wheel, accounted for
//! at every park and removed again, and the semaphore takes a lock on every
//! release. Here a request takes a *slot* — one atomic word holding its due
//! time — and one watchdog thread per client, asleep until the earliest due
//! time, wakes the requests whose time is up. A request that finishes first
//! frees its slot with one store. The fixed number of slots is the
//! concurrency limit; a request that finds none free waits for a release.
//! Waiters are woken in arrival order, but the queue is not a strict one: a
//! request that comes just as a slot frees may take it first (the waiter
//! woken for it waits for the next release).
//!
//! The watchdog starts with the first request and ends when the client is
//! dropped. If it cannot be started, requests fall back to a tokio timer.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::task::{Poll, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// A slot's state: `FREE`, or the due time in nanoseconds since
/// `Shared::epoch` (never 0), with `EXPIRED` set once it has passed.
const FREE: u64 = 0;
const EXPIRED: u64 = 1 << 63;

/// The in-flight requests of one client.
pub(crate) struct InFlight {
    shared: Arc<Shared>,
    /// The watchdog thread, once started (`None`: it could not be).
    watchdog: OnceLock<Option<Thread>>,
}

struct Shared {
    timeout: Duration,
    epoch: Instant,
    slots: Box<[Slot]>,
    /// Where the next search for a free slot starts, spreading concurrent
    /// requests over the slots.
    next_slot: AtomicUsize,
    /// Requests waiting for a free slot, and how they are told of one.
    waiting: AtomicUsize,
    released: Notify,
    /// The watchdog sleeps with no due time to wait for: a new request
    /// must wake it. (While it sleeps until some due time, a new request's
    /// due time is later, since all share one timeout.)
    watchdog_idle: AtomicBool,
    /// The client is gone: the watchdog exits.
    closed: AtomicBool,
    /// Set by the watchdog as it exits (for tests).
    #[cfg(test)]
    watchdog_exited: AtomicBool,
}

#[derive(Default)]
struct Slot {
    state: AtomicU64,
    /// The waker of the task running the slot's request.
    waker: Mutex<Option<Waker>>,
}

impl Slot {
    fn waker(&self) -> MutexGuard<'_, Option<Waker>> {
        // Nothing panics while holding this lock; a poisoned one still
        // holds a valid `Option<Waker>`.
        self.waker.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl InFlight {
    /// Room for `capacity` requests at once (at least one), each allowed
    /// `timeout` from the moment it gets a slot.
    pub fn new(capacity: usize, timeout: Duration) -> InFlight {
        InFlight {
            shared: Arc::new(Shared {
                timeout,
                epoch: Instant::now(),
                slots: (0..capacity.max(1)).map(|_| Slot::default()).collect(),
                next_slot: AtomicUsize::new(0),
                waiting: AtomicUsize::new(0),
                released: Notify::new(),
                watchdog_idle: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                #[cfg(test)]
                watchdog_exited: AtomicBool::new(false),
            }),
            watchdog: OnceLock::new(),
        }
    }

    /// Waits for a free slot, then runs `future` to completion, or returns
    /// `None` once the timeout has passed since it got the slot.
    pub async fn run<F: Future>(&self, future: F) -> Option<F::Output> {
        let watchdog = self.watchdog();
        let guard = self.acquire().await;
        let Some(watchdog) = watchdog else {
            return tokio::time::timeout(self.shared.timeout, future).await.ok();
        };
        if self.shared.watchdog_idle.load(Ordering::SeqCst)
            && self.shared.watchdog_idle.swap(false, Ordering::SeqCst)
        {
            watchdog.unpark();
        }
        let slot = &self.shared.slots[guard.index];
        let mut future = pin!(future);
        let mut registered: Option<Waker> = None;
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            if !registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *slot.waker() = Some(cx.waker().clone());
                registered = Some(cx.waker().clone());
            }
            // Checked after registering: the watchdog marks a slot expired
            // before it looks for the waker to wake.
            if slot.state.load(Ordering::Acquire) & EXPIRED != 0 {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await
    }

    /// Takes a free slot, waiting for one if there is none.
    async fn acquire(&self) -> SlotGuard<'_> {
        loop {
            if let Some(slot) = self.try_acquire() {
                return slot;
            }
            // Announce the wait before looking again, so that a release
            // between the two either is seen by the second look or
            // notifies us.
            let _waiting = WaitingGuard::new(&self.shared.waiting);
            let mut released = pin!(self.shared.released.notified());
            released.as_mut().enable();
            if let Some(slot) = self.try_acquire() {
                return slot;
            }
            released.await;
        }
    }

    fn try_acquire(&self) -> Option<SlotGuard<'_>> {
        let shared = &*self.shared;
        let due = shared.epoch.elapsed().saturating_add(shared.timeout);
        // Clamped below the EXPIRED bit (a due time centuries away never
        // arrives) and above FREE.
        let due = (due.as_nanos().min(u128::from(EXPIRED - 1)) as u64).max(1);
        let count = shared.slots.len();
        let start = shared.next_slot.load(Ordering::Relaxed);
        for offset in 0..count {
            let index = (start + offset) % count;
            let slot = &shared.slots[index];
            if slot.state.load(Ordering::Relaxed) == FREE
                && slot
                    .state
                    .compare_exchange(FREE, due, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
            {
                if count > 1 {
                    shared.next_slot.store(index + 1, Ordering::Relaxed);
                }
                return Some(SlotGuard { shared, index });
            }
        }
        None
    }

    /// The watchdog thread, started on first use.
    fn watchdog(&self) -> Option<&Thread> {
        self.watchdog
            .get_or_init(|| {
                let shared = Arc::downgrade(&self.shared);
                std::thread::Builder::new()
                    .name("vox-runtime-timeouts".into())
                    .stack_size(64 * 1024)
                    .spawn(move || watch(shared))
                    .ok()
                    .map(|handle| handle.thread().clone())
            })
            .as_ref()
    }

    /// Whether the watchdog thread has exited (tests).
    #[cfg(test)]
    fn watchdog_exited(shared: &Shared) -> bool {
        shared.watchdog_exited.load(Ordering::SeqCst)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if let Some(Some(watchdog)) = self.watchdog.get() {
            watchdog.unpark();
        }
    }
}

/// A request's slot, freed when the request ends: completed, timed out or
/// dropped.
struct SlotGuard<'a> {
    shared: &'a Shared,
    index: usize,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let slot = &self.shared.slots[self.index];
        let waker = slot.waker().take();
        slot.state.store(FREE, Ordering::SeqCst);
        if self.shared.waiting.load(Ordering::SeqCst) > 0 {
            self.shared.released.notify_one();
        }
        drop(waker);
    }
}

/// Counts one waiting request for as long as it waits.
struct WaitingGuard<'a>(&'a AtomicUsize);

impl<'a> WaitingGuard<'a> {
    fn new(waiting: &'a AtomicUsize) -> Self {
        waiting.fetch_add(1, Ordering::SeqCst);
        WaitingGuard(waiting)
    }
}

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The watchdog: marks the slots whose due time has passed and wakes their
/// tasks, then sleeps until the next due time, or, with nothing in flight,
/// until a request wakes it. Holds only a weak reference while asleep, and
/// exits once the client is dropped.
fn watch(shared: Weak<Shared>) {
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.closed.load(Ordering::SeqCst) {
            #[cfg(test)]
            shared.watchdog_exited.store(true, Ordering::SeqCst);
            return;
        }
        let mut next_due = expire(&shared);
        if next_due.is_none() {
            // Going idle; look once more, so that a request taking a slot
            // meanwhile is either seen here or sees the flag and wakes us.
            shared.watchdog_idle.store(true, Ordering::SeqCst);
            next_due = expire(&shared);
            if next_due.is_some() {
                shared.watchdog_idle.store(false, Ordering::SeqCst);
            }
        }
        drop(shared);
        match next_due {
            Some(wait) => std::thread::park_timeout(wait),
            None => std::thread::park(),
        }
    }
}

/// Expires the slots that are due and wakes their tasks; returns how long
/// until the next due time, if any slot is still running.
fn expire(shared: &Shared) -> Option<Duration> {
    let now = shared
        .epoch
        .elapsed()
        .as_nanos()
        .min(u128::from(EXPIRED - 1)) as u64;
    let mut next_due: Option<u64> = None;
    for slot in shared.slots.iter() {
        let state = slot.state.load(Ordering::SeqCst);
        if state == FREE || state & EXPIRED != 0 {
            continue;
        }
        if state > now {
            next_due = Some(next_due.map_or(state, |next| next.min(state)));
            continue;
        }
        // Marked only if the slot still holds the request we looked at.
        if slot
            .state
            .compare_exchange(state, state | EXPIRED, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            // Woken outside the lock. If the slot was freed and taken again
            // meanwhile, this wakes the new request once for nothing: it
            // finds its slot not expired and goes on waiting.
            let waker = slot.waker().clone();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
    next_due.map(|due| Duration::from_nanos(due - now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_request_that_finishes_in_time_gets_its_output() {
        let in_flight = InFlight::new(2, Duration::from_secs(5));
        let output = runtime().block_on(in_flight.run(async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            7
        }));
        assert_eq!(output, Some(7));
        assert!(in_flight
            .shared
            .slots
            .iter()
            .all(|s| s.state.load(Ordering::SeqCst) == FREE));
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
        // 3 slots wait up to 120 ms for a slot, which must not count.
        let in_flight = Arc::new(InFlight::new(3, Duration::from_millis(150)));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
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
    }

    #[test]
    fn a_dropped_request_frees_its_slot_and_its_wait() {
        let in_flight = InFlight::new(1, Duration::from_secs(5));
        runtime().block_on(async {
            // Holds the only slot until dropped.
            let mut holder = Box::pin(in_flight.run(std::future::pending::<()>()));
            assert!(futures_poll_once(holder.as_mut()).await.is_none());
            // A second request waits; dropping it while it waits must not
            // leave it counted.
            let mut waiter = Box::pin(in_flight.run(async { 1 }));
            assert!(futures_poll_once(waiter.as_mut()).await.is_none());
            assert_eq!(in_flight.shared.waiting.load(Ordering::SeqCst), 1);
            drop(waiter);
            assert_eq!(in_flight.shared.waiting.load(Ordering::SeqCst), 0);
            drop(holder);
            let output = tokio::time::timeout(Duration::from_secs(1), in_flight.run(async { 2 }))
                .await
                .expect("the slot was freed");
            assert_eq!(output, Some(2));
        });
    }

    #[test]
    fn a_waiting_request_runs_when_a_slot_is_released() {
        let in_flight = InFlight::new(1, Duration::from_secs(5));
        runtime().block_on(async {
            let first = in_flight.run(tokio::time::sleep(Duration::from_millis(30)));
            let second = in_flight.run(async { 2 });
            let (first, second) = tokio::join!(first, second);
            assert_eq!((first, second), (Some(()), Some(2)));
        });
    }

    #[test]
    fn the_watchdog_ends_with_its_client() {
        let in_flight = InFlight::new(1, Duration::from_secs(60));
        assert_eq!(runtime().block_on(in_flight.run(async { 1 })), Some(1));
        let shared = in_flight.shared.clone();
        drop(in_flight);
        let started = Instant::now();
        while !InFlight::watchdog_exited(&shared) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "watchdog still running"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Polls `future` once: `Some(output)` if it was ready.
    async fn futures_poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
                Poll::Ready(output) => Some(output),
                Poll::Pending => None,
            })
        })
        .await
    }
}
