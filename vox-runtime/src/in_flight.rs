//! The requests one client has in flight: at most `capacity` at once, each
//! within the request timeout.
//!
//! The cap is a tokio [`Semaphore`] (fair: waiting requests get permits in
//! arrival order); a request's timeout starts once it has a permit, so
//! waiting for one does not count. The timeout is a tokio timer
//! (`tokio::time::timeout`), the standard primitive: at model latencies the
//! sub-microsecond a hand-kept table and watchdog thread saved is invisible,
//! and a streamed answer needs a timer per chunk anyway (docs/runtime.md,
//! "Streaming"). The `call_overhead` bench keeps a call within 1.10× a raw
//! POST.

use std::future::Future;
use std::time::Duration;

use tokio::sync::Semaphore;

/// The in-flight requests of one client.
pub(crate) struct InFlight {
    permits: Semaphore,
    timeout: Duration,
}

impl InFlight {
    /// Room for `capacity` requests at once (at least one, at most
    /// [`Semaphore::MAX_PERMITS`]), each allowed `timeout` from the moment
    /// it gets a permit.
    pub fn new(capacity: usize, timeout: Duration) -> InFlight {
        InFlight {
            permits: Semaphore::new(capacity.clamp(1, Semaphore::MAX_PERMITS)),
            timeout,
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
    #[cfg(test)]
    pub async fn run<F: Future>(&self, future: F) -> Option<F::Output> {
        self.run_for(None, future).await
    }

    /// [`InFlight::run`] within `timeout` instead of the client's, when
    /// given (a call's own option).
    pub async fn run_for<F: Future>(
        &self,
        timeout: Option<Duration>,
        future: F,
    ) -> Option<F::Output> {
        // The semaphore is never closed, so acquiring cannot fail; were it
        // closed, running without a permit is the harmless way out.
        let _permit = self.permits.acquire().await.ok();
        tokio::time::timeout(timeout.unwrap_or(self.timeout), future)
            .await
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Poll;
    use std::time::Instant;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn free(in_flight: &InFlight) -> bool {
        in_flight.permits.available_permits() > 0
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
    fn a_dropped_request_frees_its_permit() {
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
