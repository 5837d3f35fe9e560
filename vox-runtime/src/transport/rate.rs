//! Client-side rate limiting that follows the provider's rate-limit
//! headers (docs/runtime.md, "Rate limits").
//!
//! Each sender (one provider) keeps a gate. An answer that says how many
//! requests are left in the window (`x-ratelimit-remaining-requests`,
//! Anthropic's `anthropic-ratelimit-requests-remaining`, with the reset)
//! lets that many more start before the reset; none left, or no tokens
//! left, closes the gate until the reset; a 429 closes it for its
//! `retry-after-ms` or `Retry-After`. When a window is over, one request
//! goes first and its answer says how many may follow. Every try of every
//! call to that provider passes the gate before it takes a concurrency
//! slot, so a loop of thousands of calls paces itself to the provider's
//! limit instead of each call meeting its own 429 and backing off alone.
//! A server that sends no such headers is not held back. Waits are on
//! tokio's clock and never longer than `max_retry_after`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::HeaderMap;

/// Pairs of (remaining, reset) headers, by provider convention.
const WINDOWS: &[(&str, &str)] = &[
    // OpenAI ("Rate limits": resets as durations, `6m0s`, `20ms`).
    (
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    ),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    // Anthropic ("Rate limits": resets as RFC 3339 times).
    (
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
    (
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
    ),
    (
        "anthropic-ratelimit-input-tokens-remaining",
        "anthropic-ratelimit-input-tokens-reset",
    ),
    (
        "anthropic-ratelimit-output-tokens-remaining",
        "anthropic-ratelimit-output-tokens-reset",
    ),
];

/// One provider's gate.
#[derive(Debug)]
pub(crate) struct RateGate {
    /// Whether a provider's answer ever said anything of its limits (a
    /// rate-limit header, a 429). Until then the gate is open and every
    /// call passes it without taking the lock or reading the clock.
    engaged: AtomicBool,
    state: Mutex<GateState>,
    /// Wakes waiters when an answer changes what is allowed.
    changed: Notify,
    max_wait: Duration,
}

#[derive(Debug, Default)]
struct GateState {
    /// Nothing is sent before this (a 429, or a spent window).
    closed_until: Option<Instant>,
    /// How many more requests may start before `window_end`, as the last
    /// answer with a remaining-requests header said; `None`: no limit known.
    allowance: Option<u64>,
    window_end: Option<Instant>,
    /// One request is finding out what the next window allows.
    probing: bool,
}

/// A request let through by [`RateGate::wait`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pass {
    /// Whether it was counted against a known window.
    counted: bool,
}

/// How long one request probes a new window (its answer says what is
/// left) before another may try.
const PROBE: Duration = Duration::from_secs(1);

/// The longest wait a server's hint is read as, whatever number it sends
/// (`retry-after-ms: 1e30`, a reset of twenty digits, a time in the year
/// 9999): one day. Waits are capped again at `max_retry_after`.
pub(crate) const MAX_HINT: Duration = Duration::from_secs(24 * 60 * 60);

/// A number of seconds a server sent, as a wait: `None` for NaN or a
/// negative number, at most [`MAX_HINT`] (an infinity included). Never
/// panics, unlike `Duration::from_secs_f64`.
pub(crate) fn hint_from_secs(seconds: f64) -> Option<Duration> {
    if seconds.is_nan() || seconds < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(seconds).map_or(MAX_HINT, |wait| wait.min(MAX_HINT)))
}

impl RateGate {
    pub fn new(max_wait: Duration) -> RateGate {
        RateGate {
            engaged: AtomicBool::new(false),
            state: Mutex::new(GateState::default()),
            changed: Notify::new(),
            // A cap of "forever" (`Duration::MAX`) would overflow the
            // deadlines computed from it.
            max_wait: max_wait.min(MAX_HINT),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request may start, and counts it against the window
    /// when one is known. After a window ends, one request goes first; its
    /// answer says how many may follow.
    pub async fn wait(&self) -> Pass {
        if !self.engaged.load(Ordering::Acquire) {
            return Pass { counted: false };
        }
        loop {
            let changed = self.changed.notified();
            let until = {
                let mut state = self.lock();
                let now = Instant::now();
                match (state.closed_until, state.allowance, state.window_end) {
                    (Some(until), _, _) if until > now => until,
                    (_, None, _) => return Pass { counted: false },
                    (_, Some(left), Some(end)) if end > now => {
                        if left > 0 {
                            state.allowance = Some(left - 1);
                            return Pass { counted: true };
                        }
                        end
                    }
                    // The window is over: this request probes the next.
                    _ => {
                        state.allowance = Some(0);
                        state.window_end = Some(now + PROBE.min(self.max_wait));
                        state.probing = true;
                        return Pass { counted: true };
                    }
                }
            };
            tracing::debug!(
                wait_ms = until.saturating_duration_since(Instant::now()).as_millis() as u64,
                "vox.rate_limit_wait"
            );
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(until) => {}
            }
        }
    }

    /// Whether a request that passed the gate as `pass`, then waited for a
    /// concurrency slot, may still go: not if the gate closed meanwhile,
    /// nor if a window became known and has nothing left for a request
    /// not yet counted against it (which is counted now).
    pub fn recheck(&self, pass: Pass) -> bool {
        if !self.engaged.load(Ordering::Acquire) {
            return true;
        }
        let mut state = self.lock();
        let now = Instant::now();
        if state.closed_until.is_some_and(|until| until > now) {
            return false;
        }
        if pass.counted {
            return true;
        }
        match (state.allowance, state.window_end) {
            (Some(left), Some(end)) if end > now => {
                if left == 0 {
                    return false;
                }
                state.allowance = Some(left - 1);
                true
            }
            _ => true,
        }
    }

    /// Takes note of an answer's status and headers.
    pub fn observe(&self, status: u16, headers: &HeaderMap) {
        if !self.engaged.load(Ordering::Acquire) {
            if status != 429
                && !headers
                    .keys()
                    .any(|name| is_rate_limit_header(name.as_str()))
            {
                // Nothing said of limits, and nothing was before: the
                // gate stays open (what the locked path would leave).
                return;
            }
            self.engaged.store(true, Ordering::Release);
        }
        let now = Instant::now();
        let mut state = self.lock();
        if let Some(wait) = closed_for(status, headers, SystemTime::now()) {
            let until = now + wait.min(self.max_wait);
            if state.closed_until.is_none_or(|current| current < until) {
                state.closed_until = Some(until);
            }
            state.allowance = Some(0);
            state.window_end = state.closed_until;
            state.probing = false;
        } else if let Some((left, reset)) = requests_left(headers, SystemTime::now()) {
            let end = now + reset.min(self.max_wait);
            // Answers of one window report what was left when each was
            // sent; the requests started since are already counted here.
            let same_window = !state.probing
                && state
                    .window_end
                    .is_some_and(|old| end <= old + Duration::from_millis(250).min(reset / 2));
            state.allowance = match (same_window, state.allowance) {
                (true, Some(counted)) => Some(counted.min(left)),
                _ => Some(left),
            };
            state.window_end = Some(end);
            state.probing = false;
        } else if (200..300).contains(&status) {
            // A server that says nothing of its limits is not held back.
            state.allowance = None;
            state.window_end = None;
            state.probing = false;
        }
        drop(state);
        self.changed.notify_waiters();
    }
}

/// Whether `name` (lowercase, as `HeaderMap` keeps names) is one of the
/// rate-limit headers [`RateGate::observe`] reads besides a 429's
/// `Retry-After`.
fn is_rate_limit_header(name: &str) -> bool {
    name.starts_with("x-ratelimit-") || name.starts_with("anthropic-ratelimit-")
}

/// What a success says is left of the requests window: how many, and
/// when it resets.
fn requests_left(headers: &HeaderMap, now: SystemTime) -> Option<(u64, Duration)> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    [
        (
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        ),
        (
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
        ),
    ]
    .iter()
    .find_map(|(remaining, reset)| {
        let left = text(remaining)?.trim().parse::<u64>().ok()?;
        Some((left, parse_reset(text(reset)?, now)?))
    })
}

/// How long an answer says to send nothing more: the wait of a 429, or
/// until the reset of a window with nothing left. `now` is the wall clock,
/// for resets given as times.
pub(crate) fn closed_for(status: u16, headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if status == 429 {
        let wait = text("retry-after-ms")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|ms| hint_from_secs(ms / 1000.0))
            .or_else(|| text("retry-after").and_then(super::parse_retry_after));
        if wait.is_some() {
            return wait;
        }
    }
    WINDOWS
        .iter()
        .filter(|(remaining, _)| {
            text(remaining)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .is_some_and(|left| left < 1.0)
        })
        .filter_map(|(_, reset)| text(reset).and_then(|v| parse_reset(v, now)))
        .max()
}

/// A window's reset: a duration (`1s`, `6m0s`, `1h2m3.5s`, `20ms`) or an
/// RFC 3339 time (`2024-08-20T18:37:24Z`), as the time left from `now`.
pub(crate) fn parse_reset(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.len() >= 19 && value.as_bytes().get(4) == Some(&b'-') {
        let at = parse_rfc3339(value)?;
        let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs_f64();
        return hint_from_secs((at - now).max(0.0));
    }
    parse_go_duration(value)
}

/// `1h2m3.5s`, `6m0s`, `20ms`, `1.5s`, `750us`.
fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    hint_from_secs(total)
}

/// Seconds since the Unix epoch of `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn parse_rfc3339(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let num = |from: usize, to: usize| -> Option<i64> { text.get(from..to)?.parse().ok() };
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction = 0.0;
    if let Some(after) = rest.strip_prefix('.') {
        let digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        fraction = format!("0.{}", &after[..digits]).parse().ok()?;
        rest = &after[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hours: i64 = rest.get(1..3)?.parse().ok()?;
            let minutes: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hour * 3600 + minute * 60 + second - offset) as f64 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn durations_as_openai_writes_them() {
        let d = |s| parse_go_duration(s);
        assert_eq!(d("1s"), Some(Duration::from_secs(1)));
        assert_eq!(d("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(d("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(d("1h2m3.5s"), Some(Duration::from_secs_f64(3723.5)));
        for bad in ["", "s", "5", "5x", "1..2s", "-1s"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_as_anthropic_writes_them() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400.0));
        assert_eq!(
            parse_rfc3339("2024-08-20T18:37:24.5Z"),
            Some(1_724_179_044.5)
        );
        assert_eq!(
            parse_rfc3339("2024-08-20T20:37:24+02:00"),
            Some(1_724_179_044.0)
        );
        for bad in [
            "2024-13-01T00:00:00Z",
            "2024-08-20",
            "2024-08-20T18:37:24",
            "yesterday",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        let now = UNIX_EPOCH + Duration::from_secs(1_724_179_040);
        assert_eq!(
            parse_reset("2024-08-20T18:37:24Z", now),
            Some(Duration::from_secs(4))
        );
        assert_eq!(
            parse_reset("2024-08-20T18:37:00Z", now),
            Some(Duration::ZERO),
            "a reset in the past waits for nothing"
        );
    }

    #[test]
    fn a_window_with_nothing_left_closes_until_its_reset() {
        let now = SystemTime::now();
        let open = headers(&[
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "2s"),
        ]);
        assert_eq!(closed_for(200, &open, now), None);
        let spent = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "2s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]);
        assert_eq!(closed_for(200, &spent, now), Some(Duration::from_secs(360)));
        let anthropic = headers(&[("anthropic-ratelimit-requests-remaining", "0")]);
        assert_eq!(closed_for(200, &anthropic, now), None, "no reset: no wait");
    }

    #[test]
    fn a_429_closes_for_its_retry_after() {
        let now = SystemTime::now();
        let ms = headers(&[("retry-after-ms", "250"), ("retry-after", "1")]);
        assert_eq!(closed_for(429, &ms, now), Some(Duration::from_millis(250)));
        let s = headers(&[("retry-after", "3")]);
        assert_eq!(closed_for(429, &s, now), Some(Duration::from_secs(3)));
        assert_eq!(closed_for(503, &s, now), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_gate_holds_every_caller_until_it_opens_and_caps_the_wait() {
        let gate = RateGate::new(Duration::from_secs(10));
        let start = Instant::now();
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        gate.observe(429, &headers(&[("retry-after", "3")]));
        gate.observe(429, &headers(&[("retry-after", "1")]));
        gate.wait().await;
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(3),
            "the later end wins"
        );
        gate.observe(429, &headers(&[("retry-after", "3600")]));
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(13), "capped");
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_admits_what_is_left_then_one_probe() {
        let gate = RateGate::new(Duration::from_secs(60));
        let start = Instant::now();
        gate.observe(
            200,
            &headers(&[
                ("x-ratelimit-remaining-requests", "2"),
                ("x-ratelimit-reset-requests", "5s"),
            ]),
        );
        gate.wait().await;
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::ZERO, "two were left");
        // The third waits for the window's end, then probes the next one;
        // a fourth waits for the probe's answer (or the probe's time).
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(6));
        // A server without rate-limit headers is not held back.
        gate.observe(200, &HeaderMap::new());
        for _ in 0..100 {
            gate.wait().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(6));
    }

    /// Until an answer speaks of limits the gate is not consulted; every
    /// header the gate reads is one that engages it.
    #[test]
    fn every_header_the_gate_reads_engages_it() {
        for (remaining, reset) in WINDOWS {
            assert!(is_rate_limit_header(remaining), "{remaining}");
            assert!(is_rate_limit_header(reset), "{reset}");
        }
        for name in [
            "retry-after",
            "x-request-id",
            "ratelimit-remaining",
            "x-ratelimit",
        ] {
            assert!(!is_rate_limit_header(name), "{name}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_answer_that_speaks_of_limits_engages_the_gate() {
        let gate = RateGate::new(Duration::from_secs(60));
        let start = Instant::now();
        gate.observe(
            200,
            &headers(&[("x-request-id", "req_1"), ("retry-after", "30")]),
        );
        gate.observe(503, &headers(&[("retry-after", "30")]));
        assert!(!gate.engaged.load(Ordering::Acquire));
        assert!(gate.recheck(gate.wait().await));
        assert_eq!(start.elapsed(), Duration::ZERO);
        // No output tokens left until the reset: closed for 2 s, whatever
        // the status.
        gate.observe(
            200,
            &headers(&[
                ("anthropic-ratelimit-output-tokens-remaining", "0"),
                ("anthropic-ratelimit-output-tokens-reset", "2s"),
            ]),
        );
        assert!(gate.engaged.load(Ordering::Acquire));
        assert!(!gate.recheck(Pass { counted: false }));
        gate.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }
}
