//! Getting one request body to the server and one response body back.
//!
//! Owns the pooled `reqwest::Client`, the cap on concurrent requests, the
//! cap on response size, and transport retries (429, 5xx, connect errors,
//! timeouts) with exponential backoff, jitter and `Retry-After`. Retries
//! here are invisible to the re-prompt loop: they never consume attempts.
//! The retry policy (what is retryable, how long to wait) is made of pure
//! functions, unit-tested below. Redirects are followed only as
//! [`RedirectPolicy`] allows (none by default); one that is not followed is
//! an [`Error::Redirect`].

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE, LOCATION, RETRY_AFTER,
};

use crate::config::{Config, Endpoint, Provider, RedirectPolicy, MAX_REDIRECTS};
use crate::error::{Error, TransportErrorKind, BODY_EXCERPT_CHARS};
use crate::in_flight::InFlight;
use crate::redact::{redact_url_passwords, Redactor};

/// At most this much of an error response's body is read for the excerpt.
const ERROR_BODY_READ_LIMIT: usize = 64 * 1024;

/// Gemini URLs kept per model, at most this many (more are parsed per call).
const MAX_CACHED_URLS: usize = 64;

/// Where requests go.
enum Target {
    /// One URL for every model. Parsed once: parsing a URL per request
    /// costs more than the rest of the runtime's per-call work.
    Fixed(reqwest::Url),
    /// Gemini: `{base}/models/{model}:generateContent`, parsed once per
    /// model.
    PerModel {
        base_url: String,
        urls: Mutex<Vec<(Box<str>, reqwest::Url)>>,
    },
}

/// Sends one provider's requests to its server.
pub(crate) struct Transport {
    http: reqwest::Client,
    target: Target,
    /// Removes the credentials this client sends from reply text.
    redactor: Redactor,
    /// At most `max_concurrent_requests` tries at once, each of which
    /// (sending, waiting, reading the body) must fit in `request_timeout`;
    /// shared by the transports of one client.
    in_flight: Arc<InFlight>,
    request_timeout: Duration,
    max_body_bytes: usize,
    retry: RetryPolicy,
}

/// How transport retries are paced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    pub max_retries: u32,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    pub max_retry_after: Duration,
}

/// One failed try, and whether trying again may help.
struct FailedTry {
    error: Error,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl FailedTry {
    fn fatal(error: Error) -> Self {
        FailedTry {
            error,
            retryable: false,
            retry_after: None,
        }
    }
}

impl Transport {
    /// The transport for `provider` at `endpoint` (its base URL and key),
    /// with `config`'s limits, sharing `in_flight` with the client's other
    /// transports.
    pub fn new(
        config: &Config,
        provider: Provider,
        endpoint: &Endpoint,
        in_flight: Arc<InFlight>,
    ) -> Result<Transport, Error> {
        let base_url = endpoint
            .base_url
            .as_deref()
            .ok_or_else(|| Error::Config(format!("provider `{provider}` has no base URL")))?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // How each API takes its key: Anthropic's "Messages" reference
        // (`x-api-key`, `anthropic-version`), Gemini's API reference
        // (`x-goog-api-key`), `Authorization: Bearer` for the others.
        let key_header = match provider {
            Provider::Anthropic => HeaderName::from_static("x-api-key"),
            Provider::Gemini => HeaderName::from_static("x-goog-api-key"),
            _ => AUTHORIZATION,
        };
        if provider == Provider::Anthropic {
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static("2023-06-01"),
            );
        }
        if let Some(key) = &endpoint.api_key {
            let text = if key_header == AUTHORIZATION {
                format!("Bearer {key}")
            } else {
                key.clone()
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| {
                Error::Config(
                    "the API key contains characters not allowed in an HTTP header".into(),
                )
            })?;
            value.set_sensitive(true);
            headers.insert(key_header, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .redirect(redirect_policy(config.follow_redirects))
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(config.max_concurrent_requests)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {e}")))?;
        let path = match provider {
            Provider::Anthropic => Some("/messages"),
            Provider::Ollama => Some("/api/chat"),
            Provider::Gemini => None,
            _ => Some("/chat/completions"),
        };
        let target = match path {
            Some(path) => Target::Fixed(parse_url(&format!("{base_url}{path}"), base_url)?),
            None => {
                // Checked now, so that a bad base URL is a configuration
                // error when the client is built.
                parse_url(&format!("{base_url}/models/m:generateContent"), base_url)?;
                Target::PerModel {
                    base_url: base_url.to_owned(),
                    urls: Mutex::new(Vec::new()),
                }
            }
        };
        Ok(Transport {
            http,
            target,
            redactor: Redactor::new(endpoint.api_key.as_deref(), Some(base_url)),
            in_flight,
            request_timeout: config.request_timeout,
            max_body_bytes: config.max_body_bytes,
            retry: RetryPolicy {
                max_retries: config.max_transport_retries,
                backoff_base: config.backoff_base,
                backoff_max: config.backoff_max,
                max_retry_after: config.max_retry_after,
            },
        })
    }

    /// The URL a request for `model` goes to (borrowed where it is the
    /// same for every model: no copy per call beyond the one each try
    /// hands to reqwest).
    fn url_for(&self, model: &str) -> Result<Cow<'_, reqwest::Url>, Error> {
        match &self.target {
            Target::Fixed(url) => Ok(Cow::Borrowed(url)),
            Target::PerModel { base_url, urls } => {
                let mut urls = urls.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((_, url)) = urls.iter().find(|(m, _)| &**m == model) {
                    return Ok(Cow::Owned(url.clone()));
                }
                // Gemini's reference names models `models/{model}`; accept
                // either spelling.
                let bare = model.strip_prefix("models/").unwrap_or(model);
                let url = parse_url(
                    &format!("{base_url}/models/{bare}:generateContent"),
                    base_url,
                )?;
                if urls.len() < MAX_CACHED_URLS {
                    urls.push((model.into(), url.clone()));
                }
                Ok(Cow::Owned(url))
            }
        }
    }

    /// Removes the credentials this client sends from text that came from
    /// the network, and how (with `server_text`) to make it fit to show.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// `error` from reading a 2xx body ([`crate::reply::parse_response`]):
    /// a malformed response's description, serde_json's, which may quote
    /// the reply, redacted, truncated and escaped; any other error as it is.
    pub fn redact_malformed(&self, error: Error) -> Error {
        match error {
            Error::MalformedResponse(message) => {
                Error::MalformedResponse(self.redactor.shown(&message, BODY_EXCERPT_CHARS))
            }
            other => other,
        }
    }

    /// POSTs `body` (a request for `model`) and returns the response body
    /// of a 2xx answer, retrying transient failures.
    pub async fn post(&self, model: &str, body: Bytes) -> Result<Bytes, Error> {
        let url = self.url_for(model)?;
        let mut retries_done = 0;
        loop {
            let failure = match self.try_once(&url, body.clone()).await {
                Ok(text) => return Ok(text),
                Err(failure) => failure,
            };
            if !failure.retryable || retries_done >= self.retry.max_retries {
                return Err(failure.error);
            }
            let delay = retry_delay(
                &self.retry,
                retries_done,
                failure.retry_after,
                jitter_unit(),
            );
            tracing::warn!(
                retry = retries_done + 1,
                max_retries = self.retry.max_retries,
                delay_ms = delay.as_millis() as u64,
                error = %failure.error,
                "vox.transport_retry"
            );
            tokio::time::sleep(delay).await;
            retries_done += 1;
        }
    }

    /// One try: waits for a slot, then sends and reads within the request
    /// timeout (time spent waiting for a slot does not count).
    async fn try_once(&self, url: &reqwest::Url, body: Bytes) -> Result<Bytes, FailedTry> {
        // The slot is held until the body is read, so at most
        // `max_concurrent_requests` requests (and so connections) are in
        // flight.
        // Boxed: reqwest's futures make this state machine about 1 KB,
        // which every enclosing future (retries, the re-prompt loop, the
        // generated function) would otherwise embed and copy; one small
        // allocation is cheaper than moving kilobytes on each call.
        match self.in_flight.run(Box::pin(self.exchange(url, body))).await {
            Some(result) => result,
            None => Err(FailedTry {
                error: Error::Transport {
                    kind: TransportErrorKind::Timeout,
                    message: format!(
                        "no complete response within the request timeout of {:?}",
                        self.request_timeout
                    ),
                },
                retryable: true,
                retry_after: None,
            }),
        }
    }

    /// Sends the request and reads the response.
    async fn exchange(&self, url: &reqwest::Url, body: Bytes) -> Result<Bytes, FailedTry> {
        let response = self
            .http
            .post(url.clone())
            .body(body)
            .send()
            .await
            .map_err(|e| self.transport_failure(&e))?;
        let status = response.status();
        if status.is_success() {
            return read_capped(response, self.max_body_bytes)
                .await
                .map_err(|e| self.read_failure(e));
        }
        if is_redirect_status(status.as_u16()) {
            // Not followed (the policy stopped it): say where it pointed.
            let location = response.headers().get(LOCATION).map(|value| {
                let text = String::from_utf8_lossy(value.as_bytes());
                let resolved = response
                    .url()
                    .join(&text)
                    .map_or_else(|_| text.into_owned(), String::from);
                self.redactor.shown(&resolved, BODY_EXCERPT_CHARS)
            });
            return Err(FailedTry::fatal(Error::Redirect {
                status: status.as_u16(),
                location,
            }));
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let excerpt =
            match read_capped(response, ERROR_BODY_READ_LIMIT.min(self.max_body_bytes)).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(ReadFailure::TooLarge) => "(body too large to show)".to_owned(),
                Err(ReadFailure::Transport(_)) => "(body could not be read)".to_owned(),
            };
        let retry_after = retry_after.or_else(|| retry_delay_in_body(&excerpt));
        Err(FailedTry {
            retryable: is_retryable_failure(status.as_u16(), &excerpt),
            error: Error::Http {
                status: status.as_u16(),
                body_excerpt: self.redactor.shown(excerpt.trim(), BODY_EXCERPT_CHARS),
            },
            retry_after,
        })
    }

    fn transport_failure(&self, e: &reqwest::Error) -> FailedTry {
        let kind = if e.is_timeout() {
            TransportErrorKind::Timeout
        } else if e.is_connect() {
            TransportErrorKind::Connect
        } else {
            TransportErrorKind::Other
        };
        FailedTry {
            error: Error::Transport {
                kind,
                message: self.redactor.shown(&error_chain(e), BODY_EXCERPT_CHARS),
            },
            // Building the request cannot fail for our fixed URL and body;
            // everything else (connect, timeout, a connection dropped
            // mid-request) is worth another try.
            retryable: !e.is_builder(),
            retry_after: None,
        }
    }

    fn read_failure(&self, failure: ReadFailure) -> FailedTry {
        match failure {
            ReadFailure::TooLarge => FailedTry::fatal(Error::ResponseTooLarge {
                limit_bytes: self.max_body_bytes,
            }),
            ReadFailure::Transport(e) => self.transport_failure(&e),
        }
    }
}

enum ReadFailure {
    TooLarge,
    Transport(reqwest::Error),
}

/// Reads the body, failing as soon as it would exceed `limit` bytes.
async fn read_capped(response: reqwest::Response, limit: usize) -> Result<Bytes, ReadFailure> {
    match response.content_length() {
        Some(len) if len > limit as u64 => Err(ReadFailure::TooLarge),
        // The announced length is within the limit, and hyper never yields
        // more than it announced: take the body whole (usually the very
        // buffer it arrived in, without a copy).
        Some(_) => response.bytes().await.map_err(ReadFailure::Transport),
        None => read_chunks_capped(response, limit).await,
    }
}

/// Reads a body of unannounced length chunk by chunk, up to `limit` bytes.
async fn read_chunks_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, ReadFailure> {
    let mut body = Vec::with_capacity(8 * 1024);
    while let Some(chunk) = response.chunk().await.map_err(ReadFailure::Transport)? {
        if body.len() + chunk.len() > limit {
            return Err(ReadFailure::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// The error and its sources, e.g. "error sending request: connection refused".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let inner_text = inner.to_string();
        if !text.contains(&inner_text) {
            text.push_str(": ");
            text.push_str(&inner_text);
        }
        source = inner.source();
    }
    text
}

/// The redirects reqwest can follow (and [`Error::Redirect`] reports).
pub(crate) fn is_redirect_status(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// reqwest's redirect policy for `policy` (docs/runtime.md, "Security").
fn redirect_policy(policy: RedirectPolicy) -> reqwest::redirect::Policy {
    match policy {
        RedirectPolicy::None => reqwest::redirect::Policy::none(),
        RedirectPolicy::SameOrigin => reqwest::redirect::Policy::custom(|attempt| {
            // `previous` holds the original URL and every one followed.
            let previous = attempt.previous();
            let follow = may_follow(attempt.status().as_u16(), previous.len(), || {
                previous
                    .first()
                    .is_some_and(|first| same_origin(first, attempt.url()))
            });
            if follow {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }),
    }
}

/// Under [`RedirectPolicy::SameOrigin`]: follow only 307 and 308 (method
/// and body kept), within [`MAX_REDIRECTS`], to the original origin.
fn may_follow(status: u16, urls_so_far: usize, same_origin: impl FnOnce() -> bool) -> bool {
    matches!(status, 307 | 308) && urls_so_far <= MAX_REDIRECTS && same_origin()
}

/// Same scheme, host and port (RFC 6454's origin).
fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Statuses worth retrying: rate limiting, request timeout, server errors
/// (Anthropic's 529 "overloaded" among them).
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// Whether an error answer with `status` and `body` is worth another try:
/// a retryable status, unless it is a 5xx that says the request itself is
/// invalid — llama-cpp-python's server answers a request it cannot
/// validate with a 500, and sending it again cannot help.
pub(crate) fn is_retryable_failure(status: u16, body: &str) -> bool {
    is_retryable_status(status) && !(status >= 500 && is_request_validation_error(body))
}

/// Whether an error body says the request failed validation: pydantic's
/// "N validation error(s) for …" (FastAPI servers such as
/// llama-cpp-python), OpenAI's `invalid_request_error` type.
fn is_request_validation_error(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    lower.contains("validation error")
        || lower.contains("invalid_request_error")
        || lower.contains("requestvalidationerror")
}

/// Gemini's retry hint: a `google.rpc.RetryInfo` detail in the error body,
/// `"retryDelay": "22s"` (Gemini API "Troubleshooting", rate-limit errors).
pub(crate) fn retry_delay_in_body(body: &str) -> Option<Duration> {
    let at = body.find("\"retryDelay\"")?;
    let rest = body[at + "\"retryDelay\"".len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let value = &rest[..rest.find('"')?];
    let seconds = value.trim().strip_suffix('s')?.trim().parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::try_from_secs_f64(seconds).ok())
        .flatten()
}

fn parse_url(url: &str, base_url: &str) -> Result<reqwest::Url, Error> {
    reqwest::Url::parse(url).map_err(|e| {
        Error::Config(format!(
            "base URL `{}` is not a valid URL: {e}",
            redact_url_passwords(base_url)
        ))
    })
}

/// Parses a `Retry-After` value given in seconds. HTTP-date values are not
/// honored (they yield `None`, and the normal backoff applies).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Delay before retry number `retries_done + 1`: the server's `Retry-After`
/// (capped at `max_retry_after`) when given, else exponential backoff.
pub(crate) fn retry_delay(
    policy: &RetryPolicy,
    retries_done: u32,
    retry_after: Option<Duration>,
    jitter_unit: f64,
) -> Duration {
    match retry_after {
        Some(wait) => wait.min(policy.max_retry_after),
        None => backoff_delay(
            policy.backoff_base,
            policy.backoff_max,
            retries_done,
            jitter_unit,
        ),
    }
}

/// Exponential backoff with "equal jitter": the ceiling is
/// `base * 2^retries_done` capped at `max`, and the delay lies in
/// `[ceiling / 2, ceiling]`, placed by `jitter_unit` in `[0, 1)`.
pub(crate) fn backoff_delay(
    base: Duration,
    max: Duration,
    retries_done: u32,
    jitter_unit: f64,
) -> Duration {
    let factor = 2u32.saturating_pow(retries_done.min(31));
    let ceiling = base.saturating_mul(factor).min(max);
    let half = ceiling / 2;
    half + half.mul_f64(jitter_unit.clamp(0.0, 1.0))
}

/// A number in `[0, 1)` from a process-wide xorshift generator seeded from
/// the clock: enough to spread retries of concurrent calls apart.
fn jitter_unit() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        for status in [408, 429, 500, 502, 503, 504, 599] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    #[test]
    fn same_origin_policy_follows_only_307_and_308_home_a_few_times() {
        assert!(may_follow(307, 1, || true));
        assert!(may_follow(308, MAX_REDIRECTS, || true));
        assert!(!may_follow(308, MAX_REDIRECTS + 1, || true));
        assert!(!may_follow(307, 1, || false));
        for status in [301, 302, 303, 300, 304] {
            assert!(!may_follow(status, 1, || true), "{status}");
        }
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(same_origin(
            &url("https://h/v1/chat/completions"),
            &url("https://h:443/v2")
        ));
        assert!(!same_origin(&url("https://h/v1"), &url("http://h/v1")));
        assert!(!same_origin(&url("http://h:1/v1"), &url("http://h:2/v1")));
        assert!(!same_origin(&url("http://h/v1"), &url("http://h.evil/v1")));
    }

    #[test]
    fn retry_after_seconds_are_parsed() {
        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after(""), None);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        // jitter 0 gives the floor (half the ceiling), jitter ~1 the ceiling.
        assert_eq!(backoff_delay(base, max, 0, 0.0), Duration::from_millis(50));
        assert_eq!(backoff_delay(base, max, 1, 0.0), Duration::from_millis(100));
        assert_eq!(backoff_delay(base, max, 2, 0.0), Duration::from_millis(200));
        assert_eq!(backoff_delay(base, max, 2, 1.0), Duration::from_millis(400));
        assert_eq!(backoff_delay(base, max, 10, 1.0), max);
        assert_eq!(backoff_delay(base, max, u32::MAX, 1.0), max);
        assert_eq!(
            backoff_delay(base, max, 0, 7.0),
            Duration::from_millis(100),
            "jitter clamped"
        );
    }

    #[test]
    fn retry_after_overrides_backoff_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 3,
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(5),
        };
        assert_eq!(
            retry_delay(&policy, 0, Some(Duration::from_secs(2)), 0.5),
            Duration::from_secs(2)
        );
        assert_eq!(
            retry_delay(&policy, 0, Some(Duration::from_secs(3600)), 0.5),
            Duration::from_secs(5)
        );
        assert_eq!(
            retry_delay(&policy, 1, None, 0.0),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn jitter_stays_in_unit_interval() {
        for _ in 0..1000 {
            let j = jitter_unit();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
