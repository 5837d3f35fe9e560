//! Getting one request body to the server and one response body back, and
//! the seam where another way of doing so plugs in.
//!
//! A [`Transport`] performs one HTTP exchange: it is handed a [`Request`]
//! (URL, headers, body, how much of the answer to read) and returns a
//! [`Response`] or a [`TransportError`]. [`HttpTransport`] (reqwest, pooled
//! connections, the configured connect timeout and redirect policy) is the
//! default; [`MemoryTransport`] answers from a script and records every
//! request, without a socket; [`crate::ClientBuilder::transport`] installs
//! any other (record/replay, batch, …).
//!
//! Everything above one exchange stays in the runtime and applies to every
//! transport alike (docs/runtime.md, "Transports"): the URL and
//! authentication headers of each provider, the cap on concurrent
//! requests, the request timeout, classifying the answer (redirect not
//! followed, error status, body too large) and transport retries (429,
//! 5xx, connect errors, timeouts) with exponential backoff, jitter and
//! `Retry-After`, waited on tokio's clock (as the request timeout is, see
//! `in_flight`). Retries here are invisible to the
//! re-prompt loop: they never consume attempts. The retry policy (what is
//! retryable, how long to wait) is made of pure functions, unit-tested
//! below.

mod http;
mod memory;
mod rate;

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, LOCATION, RETRY_AFTER};

pub use self::http::HttpTransport;
pub use self::memory::{MemoryTransport, RecordedRequest, ScriptedReply};
pub use crate::error::TransportErrorKind;
/// Header names and values, as [`Request::headers`] and
/// [`Response::headers`] hold them.
pub use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
/// An HTTP method, as [`Request::method`] holds it.
pub use reqwest::Method;
/// A parsed URL, as [`Request::url`] holds it.
pub use reqwest::Url;

use crate::config::{Config, Endpoint, Provider};
use crate::error::{Error, BODY_EXCERPT_CHARS};
use crate::in_flight::InFlight;
use crate::redact::{redact_url_passwords, Redactor};
use crate::wire::Wire;

/// At most this much of an error response's body is read for the excerpt.
const ERROR_BODY_READ_LIMIT: usize = 64 * 1024;

/// Gemini URLs kept per model, at most this many (more are parsed per call).
const MAX_CACHED_URLS: usize = 64;

/// The body of a streamed answer ([`Response::streaming`]): its chunks as
/// they arrive, each `Ok` with the bytes or `Err` when the connection
/// failed. A `futures_core::Stream`; dropping it closes the connection.
pub type BodyChunks =
    Pin<Box<dyn futures_core::Stream<Item = Result<Bytes, TransportError>> + Send + 'static>>;

/// What [`Transport::send`] returns: a boxed future, so that transports can
/// be used as trait objects.
pub type SendFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Response, TransportError>> + Send + 'a>>;

/// One way of performing an HTTP exchange: POST a request, return the
/// answer. Implement it to record, replay, batch or reroute the runtime's
/// requests, and install it with [`crate::ClientBuilder::transport`].
///
/// A transport is called once per try; the runtime above it decides what
/// to send, how many requests run at once, how long a try may take (a try
/// whose future is not done within the request timeout is dropped), and
/// whether and when to try again. It should only do the exchange: answer
/// with whatever status and headers the server gave (a non-2xx status is a
/// [`Response`], not an error), read at most [`Request::body_limit`] bytes
/// of the body, and report a failure to get an answer at all as a
/// [`TransportError`].
///
/// The request's headers carry the provider's API key (marked sensitive):
/// a transport that stores requests must leave it out.
///
/// ```
/// use vox_runtime::transport::{Request, Response, SendFuture, Transport};
///
/// /// Answers every request with 503, as an overloaded server would.
/// struct Overloaded;
///
/// impl Transport for Overloaded {
///     fn send<'a>(&'a self, _request: Request<'a>) -> SendFuture<'a> {
///         Box::pin(async { Ok(Response::new(503, "overloaded")) })
///     }
/// }
/// ```
pub trait Transport: Send + Sync + 'static {
    /// Performs one exchange.
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a>;
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        (**self).send(request)
    }
}

/// One request the runtime sends: a POST of a JSON body for a call; for
/// the batch engines (docs/runtime.md, "Bulk runs") also a POST of a file
/// (multipart) and GETs of a batch's state and results.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    method: Method,
    provider: Provider,
    model: &'a str,
    url: &'a Url,
    headers: &'a HeaderMap,
    body: Bytes,
    max_body_bytes: usize,
    stream: bool,
}

impl<'a> Request<'a> {
    /// Whether the runtime asked for a streamed answer (a call of
    /// `f_stream`; docs/runtime.md, "Streaming"): a transport should then
    /// answer a success with [`Response::streaming`], chunk by chunk as
    /// they arrive. A whole body is accepted too (read as one chunk).
    pub fn streams(&self) -> bool {
        self.stream
    }

    /// The method: `POST` for every call, `GET` for the batch engines'
    /// status and result downloads.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The provider the request is for.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The model asked (as it appears in the body or, for Gemini, the URL).
    pub fn model(&self) -> &'a str {
        self.model
    }

    /// Where to POST it.
    pub fn url(&self) -> &'a Url {
        self.url
    }

    /// The headers to send: `content-type`, the provider's key header (if
    /// a key is configured; marked sensitive) and any header the provider
    /// requires (Anthropic's `anthropic-version`).
    pub fn headers(&self) -> &'a HeaderMap {
        self.headers
    }

    /// The JSON body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Takes the body (cheap: [`Bytes`] is reference-counted).
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// The most bytes of the response body to read for an answer with
    /// `status`: the configured `max_body_bytes` for a success, at most
    /// 64 KiB of an error body (only an excerpt of it is kept). A longer
    /// body is [`BodyError::TooLarge`].
    pub fn body_limit(&self, status: u16) -> usize {
        if (200..300).contains(&status) {
            self.max_body_bytes
        } else {
            ERROR_BODY_READ_LIMIT.min(self.max_body_bytes)
        }
    }
}

/// The answer to one [`Request`].
#[derive(Debug, Clone)]
pub struct Response {
    status: u16,
    headers: HeaderMap,
    body: Result<Bytes, BodyError>,
    chunks: Option<Chunks>,
    url: Option<Url>,
}

/// A streamed body, in a [`Response`] (which is `Debug` and `Clone`: a
/// clone of a streamed response has no body to read).
struct Chunks(Mutex<Option<BodyChunks>>);

impl fmt::Debug for Chunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Chunks(..)")
    }
}

impl Clone for Chunks {
    fn clone(&self) -> Chunks {
        Chunks(Mutex::new(None))
    }
}

impl Response {
    /// An answer with `status` and `body`, no headers.
    pub fn new(status: u16, body: impl Into<Bytes>) -> Response {
        Response {
            status,
            headers: HeaderMap::new(),
            body: Ok(body.into()),
            chunks: None,
            url: None,
        }
    }

    /// A streamed answer with `status`: its body is `chunks`, read as they
    /// arrive (the answer to a request that [`Request::streams`]).
    pub fn streaming(status: u16, chunks: BodyChunks) -> Response {
        Response {
            status,
            headers: HeaderMap::new(),
            body: Ok(Bytes::new()),
            chunks: Some(Chunks(Mutex::new(Some(chunks)))),
            url: None,
        }
    }

    /// Whether the body is streamed ([`Response::streaming`]).
    pub fn is_streaming(&self) -> bool {
        self.chunks.is_some()
    }

    /// Takes the streamed body, once; `None` for a whole body.
    pub fn take_chunks(&mut self) -> Option<BodyChunks> {
        self.chunks
            .as_ref()
            .and_then(|c| c.0.lock().unwrap_or_else(PoisonError::into_inner).take())
    }

    /// An answer with `status` whose body could not be read whole.
    pub fn with_body_error(status: u16, error: BodyError) -> Response {
        Response {
            status,
            headers: HeaderMap::new(),
            body: Err(error),
            chunks: None,
            url: None,
        }
    }

    /// Adds a header. Names and values that are not valid HTTP are
    /// skipped.
    pub fn header(mut self, name: &str, value: &str) -> Response {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            self.headers.append(name, value);
        }
        self
    }

    /// Replaces the headers.
    pub fn with_headers(mut self, headers: HeaderMap) -> Response {
        self.headers = headers;
        self
    }

    /// The URL that answered, when redirects were followed to it (a
    /// relative `Location` of a redirect not followed is resolved against
    /// it; by default, against the request's URL).
    pub fn with_url(mut self, url: Url) -> Response {
        self.url = Some(url);
        self
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body, or why it could not be read (empty for a streamed answer,
    /// whose body is [`Response::take_chunks`]).
    pub fn body(&self) -> Result<&Bytes, &BodyError> {
        self.body.as_ref()
    }
}

/// Why a response's body could not be read whole.
#[derive(Debug, Clone)]
pub enum BodyError {
    /// It was longer than [`Request::body_limit`].
    TooLarge,
    /// The connection failed while it was read.
    Failed(TransportError),
}

/// A try that got no answer: no connection, a timeout, a connection lost
/// mid-request.
#[derive(Debug, Clone)]
pub struct TransportError {
    kind: TransportErrorKind,
    message: String,
    retryable: bool,
}

impl TransportError {
    /// A failure of `kind`, described by `message` (credentials in it are
    /// redacted by the runtime). Worth another try.
    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> TransportError {
        TransportError {
            kind,
            message: message.into(),
            retryable: true,
        }
    }

    /// A failure that another try cannot fix (say, a request the transport
    /// cannot build).
    pub fn permanent(kind: TransportErrorKind, message: impl Into<String>) -> TransportError {
        TransportError {
            retryable: false,
            ..TransportError::new(kind, message)
        }
    }

    /// What kind of failure it was.
    pub fn kind(&self) -> TransportErrorKind {
        self.kind
    }

    /// Its description.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether another try may help.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} error: {}", self.kind, self.message)
    }
}

impl std::error::Error for TransportError {}

/// Where requests go.
enum Target {
    /// One URL for every model. Parsed once: parsing a URL per request
    /// costs more than the rest of the runtime's per-call work.
    Fixed(Url),
    /// A path with the model in it (Gemini's
    /// `{base}/models/{model}:generateContent`), parsed once per model.
    PerModel {
        base_url: String,
        wire: Wire,
        urls: Mutex<Vec<(Box<str>, Url)>>,
    },
}

/// Sends one provider's requests through the client's transport: URL and
/// headers, the concurrency cap and request timeout, classifying answers,
/// retries.
pub(crate) struct Sender {
    transport: Arc<dyn Transport>,
    provider: Provider,
    /// The endpoint's base URL, without a trailing slash.
    base_url: String,
    target: Target,
    headers: HeaderMap,
    /// Removes the credentials this client sends from reply text.
    redactor: Redactor,
    /// At most `max_concurrent_requests` tries at once, each of which
    /// (sending, waiting, reading the body) must fit in `request_timeout`;
    /// shared by the senders of one client.
    in_flight: Arc<InFlight>,
    /// Closed while the provider's rate-limit headers say to wait.
    gate: rate::RateGate,
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

/// What one exchange is: method, target, headers, limits.
struct Exchange<'a> {
    method: Method,
    model: &'a str,
    url: &'a Url,
    headers: &'a HeaderMap,
    max_body_bytes: usize,
    max_retries: u32,
    /// A call's own request timeout, instead of the client's.
    timeout: Option<Duration>,
    /// Counts the retries made, for a call's report.
    retries: Option<&'a AtomicU64>,
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

impl Sender {
    /// The sender for `provider` at `endpoint` (its base URL and key),
    /// with `config`'s limits, through `transport`, sharing `in_flight`
    /// with the client's other senders.
    pub fn new(
        config: &Config,
        provider: Provider,
        endpoint: &Endpoint,
        transport: Arc<dyn Transport>,
        in_flight: Arc<InFlight>,
    ) -> Result<Sender, Error> {
        let base_url = endpoint
            .base_url
            .as_deref()
            .ok_or_else(|| Error::Config(format!("provider `{provider}` has no base URL")))?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // Each wire says how its API takes the key, and where it is.
        let wire = Wire::of(provider, config).ok_or_else(|| {
            Error::Config(format!(
                "provider `{provider}` is not reached over the network"
            ))
        })?;
        let protocol = wire.protocol();
        for (name, value) in protocol.fixed_headers() {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        if let Some(key) = &endpoint.api_key {
            let key_header = protocol.key_header();
            let text = if key_header.bearer {
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
            headers.insert(key_header.name, value);
        }
        let path = protocol.path("m");
        // Checked now, so that a bad base URL is a configuration error when
        // the client is built.
        let url = parse_url(&format!("{base_url}{path}"), base_url)?;
        let target = if path != protocol.path("n") {
            Target::PerModel {
                base_url: base_url.to_owned(),
                wire,
                urls: Mutex::new(Vec::new()),
            }
        } else {
            Target::Fixed(url)
        };
        Ok(Sender {
            transport,
            provider,
            base_url: base_url.trim_end_matches('/').to_owned(),
            target,
            headers,
            redactor: Redactor::new(endpoint.api_key.as_deref(), Some(base_url)),
            in_flight,
            gate: rate::RateGate::new(config.max_retry_after),
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
    /// same for every model).
    fn url_for(&self, model: &str) -> Result<Cow<'_, Url>, Error> {
        match &self.target {
            Target::Fixed(url) => Ok(Cow::Borrowed(url)),
            Target::PerModel {
                base_url,
                wire,
                urls,
            } => {
                let mut urls = urls.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((_, url)) = urls.iter().find(|(m, _)| &**m == model) {
                    return Ok(Cow::Owned(url.clone()));
                }
                let url = parse_url(
                    &format!("{base_url}{}", wire.protocol().path(model)),
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
    pub async fn post(
        &self,
        model: &str,
        body: Bytes,
        timeout: Option<Duration>,
        retries: Option<&AtomicU64>,
    ) -> Result<Bytes, Error> {
        let url = self.url_for(model)?;
        let exchange = Exchange {
            method: Method::POST,
            model,
            url: &url,
            headers: &self.headers,
            max_body_bytes: self.max_body_bytes,
            max_retries: self.retry.max_retries,
            timeout,
            retries,
        };
        self.send(&exchange, body).await
    }

    /// POSTs `body` (a request for `model` asking for a streamed answer)
    /// to `url` and hands each chunk of a 2xx answer's body to `sink` as it
    /// arrives (docs/runtime.md, "Streaming"). Failures before the first
    /// chunk are retried as for [`Sender::post`]; once a chunk has been
    /// handed on, a failure ends the stream with the error. The time to the
    /// first chunk, between chunks and for the whole answer are bounded by
    /// `limits`, and the body by `max_body_bytes`; the concurrency slot is
    /// held until the body ends (or the future is dropped, which closes
    /// the connection). `sink` says whether the program has an event
    /// waiting (a partial due): the next chunk is then read only after the
    /// program has had a chance to take it.
    pub async fn post_stream(
        &self,
        model: &str,
        url: &Url,
        body: Bytes,
        limits: StreamLimits,
        retries: Option<&AtomicU64>,
        sink: &mut (dyn FnMut(&[u8]) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        let mut retries_done = 0;
        loop {
            let failure = match self
                .stream_once(model, url, body.clone(), limits, sink)
                .await
            {
                Ok(()) => return Ok(()),
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
            if let Some(count) = retries {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// One try of [`Sender::post_stream`]. A failure is retryable only
    /// while nothing has been handed to `sink`.
    async fn stream_once(
        &self,
        model: &str,
        url: &Url,
        body: Bytes,
        limits: StreamLimits,
        sink: &mut (dyn FnMut(&[u8]) -> Result<bool, Error> + Send),
    ) -> Result<(), FailedTry> {
        use tokio::time::{timeout_at, Instant};
        let request = Request {
            method: Method::POST,
            provider: self.provider,
            model,
            url,
            headers: &self.headers,
            body,
            max_body_bytes: self.max_body_bytes,
            stream: true,
        };
        let _permit = loop {
            let pass = self.gate.wait().await;
            let permit = self.in_flight.permit().await;
            if self.gate.recheck(pass) {
                break permit;
            }
        };
        let start = Instant::now();
        let first_byte = start + limits.first_byte;
        let whole = start + limits.whole;
        let timed_out = |what: &str, limit: Duration| FailedTry {
            error: Error::Transport {
                kind: TransportErrorKind::Timeout,
                message: format!("{what} ({limit:?})"),
            },
            retryable: false,
            retry_after: None,
        };
        let mut response =
            match timeout_at(first_byte.min(whole), self.transport.send(request)).await {
                Ok(Ok(response)) => response,
                Ok(Err(error)) => return Err(self.transport_failure(error)),
                Err(_) => {
                    let mut failure = timed_out(
                        "no answer to the streamed request within its first-byte timeout",
                        limits.first_byte,
                    );
                    failure.retryable = true;
                    return Err(failure);
                }
            };
        let status = response.status;
        let Some(mut chunks) = response
            .take_chunks()
            .filter(|_| (200..300).contains(&status))
        else {
            // An error status, or a whole body: judged as a plain answer's.
            let response = collect(response, self.max_body_bytes).await;
            let body = self.judge(url, response, self.max_body_bytes)?;
            return sink(&body).map(|_| ()).map_err(FailedTry::fatal);
        };
        self.gate.observe(status, &response.headers);
        let mut received = 0usize;
        loop {
            let deadline = if received == 0 {
                first_byte.min(whole)
            } else {
                (Instant::now() + limits.idle).min(whole)
            };
            let next = timeout_at(
                deadline,
                std::future::poll_fn(|cx| chunks.as_mut().poll_next(cx)),
            )
            .await;
            let chunk = match next {
                Ok(Some(Ok(chunk))) => chunk,
                Ok(None) => return Ok(()),
                Ok(Some(Err(error))) => {
                    let mut failure = self.transport_failure(error);
                    if received > 0 {
                        failure.retryable = false;
                        failure.error = Error::Transport {
                            kind: TransportErrorKind::Other,
                            message: format!(
                                "the connection failed after {received} bytes of the streamed \
                                 answer: {}",
                                failure.error
                            ),
                        };
                    }
                    return Err(failure);
                }
                Err(_) if Instant::now() >= whole => {
                    return Err(timed_out(
                        "the streamed answer did not end within its timeout",
                        limits.whole,
                    ))
                }
                Err(_) if received == 0 => {
                    let mut failure = timed_out(
                        "no byte of the streamed answer within its first-byte timeout",
                        limits.first_byte,
                    );
                    failure.retryable = true;
                    return Err(failure);
                }
                Err(_) => {
                    return Err(timed_out(
                        &format!(
                            "the streamed answer stalled after {received} bytes: no chunk within \
                             its idle timeout"
                        ),
                        limits.idle,
                    ))
                }
            };
            received += chunk.len();
            if received > self.max_body_bytes {
                return Err(FailedTry::fatal(Error::ResponseTooLarge {
                    limit_bytes: self.max_body_bytes,
                }));
            }
            // Let the program see what this chunk showed before the next is
            // read, even when chunks are ready back to back.
            if !chunk.is_empty() && sink(&chunk).map_err(FailedTry::fatal)? {
                tokio::task::yield_now().await;
            }
        }
    }

    /// The URL and headers of a request for `model` (streamed or not), the
    /// key's value shown as `[redacted]`: what `cargo vox call --dry-run`
    /// prints.
    pub fn preview(
        &self,
        wire: Wire,
        model: &str,
        stream: bool,
    ) -> Result<(Url, Vec<(String, String)>), Error> {
        let url = if stream {
            self.stream_url(wire, model)?
        } else {
            self.url_for(model)?.into_owned()
        };
        let headers = self
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = if value.is_sensitive() {
                    "[redacted]".to_owned()
                } else {
                    String::from_utf8_lossy(value.as_bytes()).into_owned()
                };
                (name.as_str().to_owned(), shown)
            })
            .collect();
        Ok((url, headers))
    }

    /// The URL a streamed request for `model` goes to.
    pub fn stream_url(&self, wire: Wire, model: &str) -> Result<Url, Error> {
        parse_url(
            &format!("{}{}", self.base_url, wire.protocol().stream_path(model)),
            &self.base_url,
        )
    }

    /// `path` under the endpoint's base URL.
    pub fn url_at(&self, path: &str) -> Result<Url, Error> {
        parse_url(&format!("{}{path}", self.base_url), &self.base_url)
    }

    /// One exchange other than a call (the batch engines'): `method` to
    /// `url`, with `content_type` instead of JSON when given, reading up
    /// to `max_body_bytes` of the answer, under the same concurrency cap,
    /// timeout, answer classification and redaction as a call; retried
    /// only when `retry` (a request the server may already have acted on,
    /// such as creating a batch, is not sent twice blindly).
    pub async fn exchange(
        &self,
        method: Method,
        url: &Url,
        content_type: Option<&str>,
        body: Bytes,
        max_body_bytes: usize,
        retry: bool,
    ) -> Result<Bytes, Error> {
        let headers = match content_type {
            Some(content_type) => {
                let mut headers = self.headers.clone();
                let value = HeaderValue::from_str(content_type)
                    .map_err(|_| Error::Config(format!("invalid content type `{content_type}`")))?;
                headers.insert(CONTENT_TYPE, value);
                Cow::Owned(headers)
            }
            None => Cow::Borrowed(&self.headers),
        };
        let exchange = Exchange {
            method,
            model: "",
            url,
            headers: &headers,
            max_body_bytes,
            max_retries: if retry { self.retry.max_retries } else { 0 },
            timeout: None,
            retries: None,
        };
        self.send(&exchange, body).await
    }

    /// Sends `body` as `exchange` says, retrying transient failures.
    async fn send(&self, exchange: &Exchange<'_>, body: Bytes) -> Result<Bytes, Error> {
        let mut retries_done = 0;
        loop {
            let failure = match self.try_once(exchange, body.clone()).await {
                Ok(text) => return Ok(text),
                Err(failure) => failure,
            };
            if !failure.retryable || retries_done >= exchange.max_retries {
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
                max_retries = exchange.max_retries,
                delay_ms = delay.as_millis() as u64,
                error = %failure.error,
                "vox.transport_retry"
            );
            tokio::time::sleep(delay).await;
            retries_done += 1;
            if let Some(count) = exchange.retries {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// One try: waits for a slot, then sends and reads within the request
    /// timeout (time spent waiting for a slot does not count).
    async fn try_once(&self, exchange: &Exchange<'_>, body: Bytes) -> Result<Bytes, FailedTry> {
        let request = Request {
            method: exchange.method.clone(),
            provider: self.provider,
            model: exchange.model,
            url: exchange.url,
            headers: exchange.headers,
            body,
            max_body_bytes: exchange.max_body_bytes,
            stream: false,
        };
        // The slot is held until the body is read, so at most
        // `max_concurrent_requests` requests (and so connections) are in
        // flight. The transport's future is boxed (`SendFuture`): the
        // default one's state machine is about 1 KB, which every enclosing
        // future would otherwise embed and copy.
        let sent = loop {
            // A provider that said to wait is not asked, by any call,
            // before then (docs/runtime.md, "Rate limits"): no slot is
            // held while waiting, and a request whose turn came while it
            // waited for a slot asks the gate again.
            let pass = self.gate.wait().await;
            let request = request.clone();
            let sent = self
                .in_flight
                .run_for(exchange.timeout, async move {
                    if self.gate.recheck(pass) {
                        Some(self.transport.send(request).await)
                    } else {
                        None
                    }
                })
                .await;
            match sent {
                Some(None) => continue,
                Some(Some(sent)) => break Some(sent),
                None => break None,
            }
        };
        match sent {
            Some(Ok(response)) if response.is_streaming() => {
                // A transport that streamed an answer not asked to stream:
                // read whole, held to the same limit.
                let response = collect(response, exchange.max_body_bytes).await;
                self.judge(exchange.url, response, exchange.max_body_bytes)
            }
            Some(Ok(response)) => self.judge(exchange.url, response, exchange.max_body_bytes),
            Some(Err(error)) => Err(self.transport_failure(error)),
            None => Err(FailedTry {
                error: Error::Transport {
                    kind: TransportErrorKind::Timeout,
                    message: format!(
                        "no complete response within the request timeout of {:?}",
                        exchange.timeout.unwrap_or(self.request_timeout)
                    ),
                },
                retryable: true,
                retry_after: None,
            }),
        }
    }

    /// The body of a success; the error, and whether to retry, otherwise.
    fn judge(
        &self,
        url: &Url,
        response: Response,
        max_body_bytes: usize,
    ) -> Result<Bytes, FailedTry> {
        let status = response.status;
        self.gate.observe(status, &response.headers);
        if (200..300).contains(&status) {
            return match response.body {
                // A transport that ignored the limit: held to it here.
                Ok(body) if body.len() > max_body_bytes => {
                    Err(self.read_failure(BodyError::TooLarge, max_body_bytes))
                }
                Ok(body) => Ok(body),
                Err(e) => Err(self.read_failure(e, max_body_bytes)),
            };
        }
        if is_redirect_status(status) {
            // Not followed (the policy stopped it): say where it pointed.
            let location = response.headers.get(LOCATION).map(|value| {
                let text = String::from_utf8_lossy(value.as_bytes());
                let resolved = response
                    .url
                    .as_ref()
                    .unwrap_or(url)
                    .join(&text)
                    .map_or_else(|_| text.into_owned(), String::from);
                self.redactor.shown(&resolved, BODY_EXCERPT_CHARS)
            });
            return Err(FailedTry::fatal(Error::Redirect { status, location }));
        }
        let retry_after = response
            .headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let limit = ERROR_BODY_READ_LIMIT.min(self.max_body_bytes);
        let excerpt = match &response.body {
            Ok(bytes) => String::from_utf8_lossy(&bytes[..bytes.len().min(limit)]).into_owned(),
            Err(BodyError::TooLarge) => "(body too large to show)".to_owned(),
            Err(BodyError::Failed(_)) => "(body could not be read)".to_owned(),
        };
        let retry_after = retry_after.or_else(|| retry_delay_in_body(&excerpt));
        Err(FailedTry {
            retryable: is_retryable_failure(status, &excerpt),
            error: Error::Http {
                status,
                body_excerpt: self.redactor.shown(excerpt.trim(), BODY_EXCERPT_CHARS),
            },
            retry_after,
        })
    }

    fn transport_failure(&self, e: TransportError) -> FailedTry {
        FailedTry {
            error: Error::Transport {
                kind: e.kind,
                message: self.redactor.shown(&e.message, BODY_EXCERPT_CHARS),
            },
            retryable: e.retryable,
            retry_after: None,
        }
    }

    fn read_failure(&self, failure: BodyError, max_body_bytes: usize) -> FailedTry {
        match failure {
            BodyError::TooLarge => FailedTry::fatal(Error::ResponseTooLarge {
                limit_bytes: max_body_bytes,
            }),
            BodyError::Failed(e) => self.transport_failure(e),
        }
    }
}

/// The time limits of one streamed answer (docs/runtime.md, "Streaming").
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamLimits {
    /// From sending the request to the first byte of the body.
    pub first_byte: Duration,
    /// Between two chunks.
    pub idle: Duration,
    /// From sending the request to the end of the body.
    pub whole: Duration,
}

impl StreamLimits {
    pub fn of(config: &Config) -> StreamLimits {
        StreamLimits {
            first_byte: config.stream_first_byte_timeout,
            idle: config.stream_idle_timeout,
            whole: config.stream_timeout,
        }
    }
}

/// `response` with its streamed body (if any) read whole, at most
/// `limit` bytes of it (an error body: at most 64 KiB).
async fn collect(mut response: Response, limit: usize) -> Response {
    let Some(mut chunks) = response.take_chunks() else {
        return response;
    };
    let limit = if (200..300).contains(&response.status) {
        limit
    } else {
        ERROR_BODY_READ_LIMIT.min(limit)
    };
    let mut body = Vec::new();
    let read = loop {
        match std::future::poll_fn(|cx| chunks.as_mut().poll_next(cx)).await {
            None => break Ok(Bytes::from(body)),
            Some(Ok(chunk)) if body.len() + chunk.len() > limit => break Err(BodyError::TooLarge),
            Some(Ok(chunk)) => body.extend_from_slice(&chunk),
            Some(Err(e)) => break Err(BodyError::Failed(e)),
        }
    };
    Response {
        body: read,
        chunks: None,
        ..response
    }
}

/// The redirect statuses [`Error::Redirect`] reports when one is not
/// followed.
pub(crate) fn is_redirect_status(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
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
    // Negative or NaN: no hint; longer than a day (an infinity included):
    // a day, capped again at `max_retry_after`.
    rate::hint_from_secs(seconds)
}

fn parse_url(url: &str, base_url: &str) -> Result<Url, Error> {
    Url::parse(url).map_err(|e| {
        Error::Config(format!(
            "base URL `{}` is not a valid URL: {e}",
            unparsable_url_shown(base_url)
        ))
    })
}

/// A URL that did not parse, fit to show: its authority cannot be told
/// from its path (a password with a `/` in it ends the authority early,
/// so [`redact_url_passwords`] would show it), so everything between the
/// scheme and the last `@` is hidden.
fn unparsable_url_shown(url: &str) -> String {
    let start = url.find("://").map_or(0, |s| s + 3);
    match url.rfind('@') {
        Some(at) if at >= start => format!("{}[REDACTED]{}", &url[..start], &url[at..]),
        _ => redact_url_passwords(url).into_owned(),
    }
}

/// Parses a `Retry-After` value given in seconds. HTTP-date values are not
/// honored (they yield `None`, and the normal backoff applies).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds = value.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds).min(rate::MAX_HINT))
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
    // `mul_f64` rounds through an f64: saturate, for a `max` near
    // `Duration::MAX`.
    half.saturating_add(half.mul_f64(jitter_unit.clamp(0.0, 1.0)))
}

/// A number in `[0, 1)` from a process-wide xorshift generator seeded from
/// the clock: enough to spread retries of concurrent calls apart.
fn jitter_unit() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = seed(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64),
        );
    }
    x = xorshift64(x);
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The generator's first state from the clock's nanoseconds: never zero
/// (xorshift stays at zero), and different for processes started apart, so
/// that their retries spread too.
fn seed(nanos: u64) -> u64 {
    nanos | 1
}

/// Marsaglia's xorshift64 step (shifts 13, 7, 17): a full-period generator
/// of the nonzero 64-bit numbers.
fn xorshift64(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
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
    fn jitter_stays_in_unit_interval_and_spreads() {
        let draws: Vec<f64> = (0..1000).map(|_| jitter_unit()).collect();
        for j in &draws {
            assert!((0.0..1.0).contains(j), "{j}");
        }
        let mut distinct = draws.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert!(distinct.len() > 990, "{} distinct", distinct.len());
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((0.4..0.6).contains(&mean), "mean {mean}");
    }

    #[test]
    fn the_seed_is_the_clock_and_never_zero() {
        assert_eq!(seed(0), 1);
        assert_eq!(seed(1), 1);
        assert_eq!(seed(0x1234_5678), 0x1234_5679);
        assert_eq!(seed(u64::MAX), u64::MAX);
    }

    #[test]
    fn the_generator_is_xorshift64() {
        // Marsaglia's generator from the seed 1.
        let mut x = 1;
        let outputs: Vec<u64> = (0..3)
            .map(|_| {
                x = xorshift64(x);
                x
            })
            .collect();
        assert_eq!(
            outputs,
            [
                1_082_269_761,
                1_152_992_998_833_853_505,
                11_177_516_664_432_764_457
            ]
        );
    }

    /// Error answers that are worth another try: rate limiting, request
    /// timeouts and server errors, except a server error that says the
    /// request itself failed validation (sending it again cannot help).
    #[test]
    fn retryable_failures() {
        let pydantic = "1 validation error for ChatCompletionRequest\nmessages\n  field required";
        let openai =
            r#"{"error": {"message": "bad", "type": "invalid_request_error", "param": null}}"#;
        let fastapi = "RequestValidationError: body -> messages";
        for (status, body, retryable) in [
            (500, "Internal Server Error", true),
            (503, "", true),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error"}}"#,
                true,
            ),
            (599, "", true),
            (429, "", true),
            (408, "", true),
            (500, pydantic, false),
            (500, &pydantic.to_uppercase(), false),
            (502, openai, false),
            (599, fastapi, false),
            (500, "requestvalidationerror", false),
            // Below 500 a validation phrase does not matter: 429 is retried.
            (429, pydantic, true),
            (408, openai, true),
            (499, "", false),
            (400, "", false),
            (422, pydantic, false),
            (600, "", false),
        ] {
            assert_eq!(
                is_retryable_failure(status, body),
                retryable,
                "{status} {body}"
            );
        }
    }

    /// What a custom transport says of a failure decides whether it is
    /// tried again.
    #[test]
    fn transport_errors_say_whether_to_try_again() {
        let again = TransportError::new(TransportErrorKind::Connect, "refused");
        assert!(again.is_retryable());
        let permanent = TransportError::permanent(TransportErrorKind::Other, "cannot build");
        assert!(!permanent.is_retryable());
        assert_eq!(permanent.kind(), TransportErrorKind::Other);
        assert_eq!(permanent.message(), "cannot build");
    }

    #[test]
    fn redirect_statuses() {
        for status in [301, 302, 303, 307, 308] {
            assert!(is_redirect_status(status), "{status}");
        }
        for status in [200, 300, 304, 305, 306, 309, 429] {
            assert!(!is_redirect_status(status), "{status}");
        }
    }

    /// Gemini's `google.rpc.RetryInfo` in a 429's body.
    #[test]
    fn retry_delays_in_gemini_error_bodies() {
        let body = r#"{
          "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
              {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
               "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                               "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
              {"@type": "type.googleapis.com/google.rpc.Help",
               "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
              {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "22s"}
            ]
          }
        }"#;
        assert_eq!(retry_delay_in_body(body), Some(Duration::from_secs(22)));
        let hint = |value: &str| retry_delay_in_body(&format!(r#"{{"retryDelay"{value}}}"#));
        assert_eq!(hint(r#": "1.5s""#), Some(Duration::from_millis(1500)));
        assert_eq!(hint(r#" :  " 0s ""#), Some(Duration::ZERO));
        for bad in [
            r#": "22""#,
            r#": 22"#,
            r#": "-1s""#,
            r#": "NaNs""#,
            r#" "22s""#,
            r#": "22s"#,
        ] {
            assert_eq!(hint(bad), None, "{bad}");
        }
        // Too long for a `Duration`, or infinite: the longest hint, a day.
        for huge in [r#": "infs""#, r#": "1e300s""#, r#": "86401s""#] {
            assert_eq!(hint(huge), Some(rate::MAX_HINT), "{huge}");
        }
        assert_eq!(retry_delay_in_body(r#"{"retry": "22s"}"#), None);
        assert_eq!(retry_delay_in_body(""), None);
    }
}
