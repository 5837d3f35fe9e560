//! A transport that answers from a script, in memory.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;

use super::{
    BodyError, HeaderMap, Request, Response, SendFuture, Transport, TransportError,
    TransportErrorKind, Url,
};
use crate::config::Provider;
use crate::redact::redact_url_passwords;

/// A [`Transport`] without sockets: it answers each request with the next
/// [`ScriptedReply`] of its script, then with its responder (if any), and
/// records every request it sees. Clones share the script and the record,
/// so a test keeps one and hands another to the client.
///
/// Delays are slept on tokio's clock, as are the runtime's retry waits:
/// under a paused clock (`#[tokio::test(start_paused = true)]`) a test of
/// backoff and `Retry-After` takes no real time, and neither does the
/// request timeout (a tokio timer: under a paused clock, a scripted delay
/// longer than it times out at once). Bodies longer than the request's
/// [`Request::body_limit`] are [`BodyError::TooLarge`], as the default
/// transport reports them. A request with nothing left to answer it fails
/// as a connection error.
///
/// ```
/// use vox_runtime::transport::{MemoryTransport, ScriptedReply};
/// use vox_runtime::{Client, Config, Provider};
///
/// let transport = MemoryTransport::new()
///     .reply(ScriptedReply::new(429, "slow down").header("retry-after", "1"))
///     .reply(ScriptedReply::json(200, &serde_json::json!({
///         "choices": [{"message": {"role": "assistant", "content": "{\"value\":3}"},
///                      "finish_reason": "stop"}]
///     })));
/// let config = Config::builder(Provider::OpenAi).api_key("sk-test").build()?;
/// let client = Client::builder(config).transport(transport.clone()).build()?;
/// // … calls through `client`; then `transport.requests()` lists what was sent.
/// assert!(transport.requests().is_empty());
/// # Ok::<(), vox_runtime::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct MemoryTransport {
    inner: Arc<Inner>,
}

/// What answers a request once the script is used up.
type Responder = Arc<dyn Fn(&RecordedRequest) -> ScriptedReply + Send + Sync>;

#[derive(Default)]
struct Inner {
    script: Mutex<VecDeque<ScriptedReply>>,
    responder: Mutex<Option<Responder>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// Locks `mutex`; its data stays valid even if a holder panicked (every
/// critical section here is a single push, pop or clone).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryTransport {
    /// A transport with an empty script and no responder.
    pub fn new() -> MemoryTransport {
        MemoryTransport::default()
    }

    /// Adds `reply` to the end of the script.
    pub fn reply(self, reply: ScriptedReply) -> MemoryTransport {
        self.push(reply);
        self
    }

    /// Adds `reply` to the end of the script of a transport already in use.
    pub fn push(&self, reply: ScriptedReply) {
        lock(&self.inner.script).push_back(reply);
    }

    /// Answers every request that finds the script used up with
    /// `responder`'s reply to it (say, one reply per provider or URL).
    pub fn otherwise<F>(self, responder: F) -> MemoryTransport
    where
        F: Fn(&RecordedRequest) -> ScriptedReply + Send + Sync + 'static,
    {
        *lock(&self.inner.responder) = Some(Arc::new(responder));
        self
    }

    /// Every request seen so far, in the order they arrived.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner.requests).clone()
    }

    /// How many requests were seen.
    pub fn request_count(&self) -> usize {
        lock(&self.inner.requests).len()
    }

    /// Records `request` and picks its reply.
    fn answer_for(&self, request: &Request<'_>) -> ScriptedReply {
        let recorded = RecordedRequest {
            provider: request.provider(),
            model: request.model().to_owned(),
            url: request.url().clone(),
            headers: request.headers().clone(),
            body: request.body().clone(),
            stream: request.streams(),
        };
        let scripted = lock(&self.inner.script).pop_front();
        let reply = scripted.unwrap_or_else(|| {
            let responder = lock(&self.inner.responder).clone();
            match responder {
                Some(responder) => responder(&recorded),
                None => ScriptedReply::fail(TransportError::new(
                    TransportErrorKind::Connect,
                    format!(
                        "MemoryTransport: no scripted reply left for request {} (to {})",
                        lock(&self.inner.requests).len() + 1,
                        recorded.url
                    ),
                )),
            }
        });
        lock(&self.inner.requests).push(recorded);
        reply
    }
}

impl fmt::Debug for MemoryTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTransport")
            .field("scripted", &lock(&self.inner.script).len())
            .field("requests", &self.request_count())
            .finish_non_exhaustive()
    }
}

impl Transport for MemoryTransport {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        let reply = self.answer_for(&request);
        Box::pin(async move {
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
            let response = reply.outcome?;
            if let Some(chunks) = reply.chunks {
                let stream = ScriptedStream {
                    chunks: chunks.into(),
                    sleep: None,
                };
                return Ok(Response::streaming(response.status, Box::pin(stream))
                    .with_headers(response.headers));
            }
            Ok(match response.body {
                Ok(body) if body.len() > request.body_limit(response.status) => Response {
                    body: Err(BodyError::TooLarge),
                    ..response
                },
                _ => response,
            })
        })
    }
}

/// One answer in a [`MemoryTransport`]'s script: a response, or a failure
/// to get one, after an optional delay.
#[derive(Debug, Clone)]
pub struct ScriptedReply {
    outcome: Result<Response, TransportError>,
    delay: Duration,
    chunks: Option<Vec<ScriptedChunk>>,
}

/// One step of a streamed [`ScriptedReply`]: after a delay, bytes, a
/// failure of the connection, or nothing ever again.
#[derive(Debug, Clone)]
enum ScriptedChunk {
    Data(Duration, Bytes),
    Fail(Duration, TransportError),
    Hang,
}

impl ScriptedReply {
    /// A response with `status` and `body`.
    pub fn new(status: u16, body: impl Into<Bytes>) -> ScriptedReply {
        ScriptedReply::answer(Response::new(status, body))
    }

    /// A response with `status` and `body` as JSON, with a
    /// `content-type: application/json` header.
    pub fn json(status: u16, body: &serde_json::Value) -> ScriptedReply {
        ScriptedReply::new(status, body.to_string()).header("content-type", "application/json")
    }

    /// `response` as it is.
    pub fn answer(response: Response) -> ScriptedReply {
        ScriptedReply {
            outcome: Ok(response),
            delay: Duration::ZERO,
            chunks: None,
        }
    }

    /// No response: the try fails with `error` (a refused connection, a
    /// reset, …).
    pub fn fail(error: TransportError) -> ScriptedReply {
        ScriptedReply {
            outcome: Err(error),
            delay: Duration::ZERO,
            chunks: None,
        }
    }

    /// Adds a header to the response (invalid names or values are
    /// skipped).
    pub fn header(mut self, name: &str, value: &str) -> ScriptedReply {
        self.outcome = self.outcome.map(|response| response.header(name, value));
        self
    }

    /// A streamed answer with `status` ([`Response::streaming`]): its body
    /// is `chunks`, one after another, each after the delay of
    /// [`ScriptedReply::chunk_delay`] (none by default). Scripts the
    /// answers of a server that streams (docs/runtime.md, "Streaming").
    pub fn chunks<B: Into<Bytes>>(
        status: u16,
        chunks: impl IntoIterator<Item = B>,
    ) -> ScriptedReply {
        ScriptedReply {
            outcome: Ok(Response::new(status, Bytes::new())),
            delay: Duration::ZERO,
            chunks: Some(
                chunks
                    .into_iter()
                    .map(|c| ScriptedChunk::Data(Duration::ZERO, c.into()))
                    .collect(),
            ),
        }
    }

    /// Waits `delay` on tokio's clock before each chunk of a streamed
    /// answer (the first included).
    pub fn chunk_delay(mut self, delay: Duration) -> ScriptedReply {
        for chunk in self.chunks.iter_mut().flatten() {
            match chunk {
                ScriptedChunk::Data(d, _) | ScriptedChunk::Fail(d, _) => *d = delay,
                ScriptedChunk::Hang => {}
            }
        }
        self
    }

    /// Ends a streamed answer with a failure of the connection, after the
    /// chunks so far (a connection dropped mid-stream).
    pub fn then_fail(mut self, error: TransportError) -> ScriptedReply {
        let delay = self.last_delay();
        self.chunks
            .get_or_insert_with(Vec::new)
            .push(ScriptedChunk::Fail(delay, error));
        self
    }

    /// Ends a streamed answer with silence: after the chunks so far, the
    /// body neither grows nor ends (a server that stalls).
    pub fn then_hang(mut self) -> ScriptedReply {
        self.chunks
            .get_or_insert_with(Vec::new)
            .push(ScriptedChunk::Hang);
        self
    }

    fn last_delay(&self) -> Duration {
        match self.chunks.as_ref().and_then(|c| c.last()) {
            Some(ScriptedChunk::Data(d, _) | ScriptedChunk::Fail(d, _)) => *d,
            _ => Duration::ZERO,
        }
    }

    /// Answers (or fails) only after `delay` on tokio's clock.
    pub fn delay(mut self, delay: Duration) -> ScriptedReply {
        self.delay = delay;
        self
    }
}

/// One request as a [`MemoryTransport`] saw it.
#[derive(Clone)]
pub struct RecordedRequest {
    /// The provider it was for.
    pub provider: Provider,
    /// The model asked.
    pub model: String,
    /// Where it was sent.
    pub url: Url,
    /// Its headers, the API key among them (marked sensitive: `Debug`
    /// does not show it).
    pub headers: HeaderMap,
    /// Its body.
    pub body: Bytes,
    /// Whether a streamed answer was asked for ([`Request::streams`]).
    pub stream: bool,
}

impl RecordedRequest {
    /// The body parsed as JSON (`Null` if it is not JSON, which the
    /// runtime never sends).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The value of header `name` (any case), if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The URL's path, e.g. `/v1/chat/completions`.
    pub fn path(&self) -> &str {
        self.url.path()
    }
}

impl fmt::Debug for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedRequest")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("url", &redact_url_passwords(self.url.as_str()))
            .field("headers", &self.headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

/// A scripted streamed body: each chunk after its delay.
struct ScriptedStream {
    chunks: VecDeque<ScriptedChunk>,
    sleep: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl futures_core::Stream for ScriptedStream {
    type Item = Result<Bytes, TransportError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let delay = match self.chunks.front() {
            None => return Poll::Ready(None),
            Some(ScriptedChunk::Hang) => return Poll::Pending,
            Some(ScriptedChunk::Data(d, _) | ScriptedChunk::Fail(d, _)) => *d,
        };
        if !delay.is_zero() {
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        Poll::Ready(match self.chunks.pop_front() {
            Some(ScriptedChunk::Data(_, bytes)) => Some(Ok(bytes)),
            Some(ScriptedChunk::Fail(_, error)) => Some(Err(error)),
            Some(ScriptedChunk::Hang) | None => None,
        })
    }
}
