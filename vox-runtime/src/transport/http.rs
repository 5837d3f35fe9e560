//! The default transport: HTTP over reqwest.

use bytes::Bytes;

use super::{BodyError, Request, Response, SendFuture, Transport, TransportError, Url};
use crate::config::{Config, RedirectPolicy, MAX_REDIRECTS};
use crate::error::{Error, TransportErrorKind};

/// The default [`Transport`]: HTTP/1.1 and HTTP/2 over TLS (rustls) or
/// plain TCP, one connection pool for every provider, with the
/// configuration's connect timeout and redirect policy (docs/runtime.md,
/// "Security"). Wrap it to observe or alter real traffic.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    http: reqwest::Client,
}

impl HttpTransport {
    /// The transport for `config`: its connect timeout, redirect policy
    /// and pool size (`max_concurrent_requests` idle connections per host).
    pub fn new(config: &Config) -> Result<HttpTransport, Error> {
        let http = reqwest::Client::builder()
            .redirect(redirect_policy(config.follow_redirects))
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(config.max_concurrent_requests)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {e}")))?;
        Ok(HttpTransport { http })
    }

    async fn exchange(&self, request: Request<'_>) -> Result<Response, TransportError> {
        let limits = (request.body_limit(200), request.body_limit(500));
        let stream = request.streams();
        let url = request.url;
        let method = request.method().clone();
        let sent = if url.username().is_empty() && url.password().is_none() {
            // The request as it is, without the builder's second pass over
            // the headers.
            let mut http_request = reqwest::Request::new(method, url.clone());
            *http_request.headers_mut() = request.headers.clone();
            *http_request.body_mut() = Some(request.into_body().into());
            self.http.execute(http_request).await
        } else {
            // The builder moves `user:password@` into `Authorization: Basic`.
            self.http
                .request(method, url.clone())
                .headers(request.headers.clone())
                .body(request.into_body())
                .send()
                .await
        };
        let mut response = sent.map_err(|e| failure(&e))?;
        let status = response.status().as_u16();
        let limit = if (200..300).contains(&status) {
            limits.0
        } else {
            limits.1
        };
        // Taken, not copied: the body's length comes from the body itself.
        let headers = std::mem::take(response.headers_mut());
        if stream && (200..300).contains(&status) {
            // Chunk by chunk as hyper yields them; the runtime holds the
            // stream to the size cap and its timeouts.
            return Ok(
                Response::streaming(status, Box::pin(ChunkStream::new(response)))
                    .with_headers(headers),
            );
        }
        // Only a redirect's `Location` is resolved against it.
        let url = super::is_redirect_status(status).then(|| response.url().clone());
        let body = read_capped(response, limit).await;
        Ok(Response {
            status,
            headers,
            body,
            chunks: None,
            url,
        })
    }
}

impl Transport for HttpTransport {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        Box::pin(self.exchange(request))
    }
}

/// A streamed reqwest body as a `futures_core::Stream` of chunks. Dropping
/// it drops the response, which closes the connection (a body not read to
/// its end is never put back in the pool).
struct ChunkStream {
    next: Option<ChunkFuture>,
}

type ChunkFuture = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = (reqwest::Response, Result<Option<Bytes>, reqwest::Error>)>
            + Send,
    >,
>;

impl ChunkStream {
    fn new(response: reqwest::Response) -> ChunkStream {
        ChunkStream {
            next: Some(Self::read(response)),
        }
    }

    fn read(mut response: reqwest::Response) -> ChunkFuture {
        Box::pin(async move {
            let chunk = response.chunk().await;
            (response, chunk)
        })
    }
}

impl futures_core::Stream for ChunkStream {
    type Item = Result<Bytes, TransportError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let Some(next) = self.next.as_mut() else {
            return Poll::Ready(None);
        };
        let (response, chunk) = match next.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(done) => done,
        };
        match chunk {
            Ok(Some(bytes)) => {
                self.next = Some(Self::read(response));
                Poll::Ready(Some(Ok(bytes)))
            }
            Ok(None) => {
                self.next = None;
                Poll::Ready(None)
            }
            Err(e) => {
                self.next = None;
                Poll::Ready(Some(Err(failure(&e))))
            }
        }
    }
}

/// reqwest's error as a [`TransportError`]: what kind, and its chain of
/// causes.
fn failure(e: &reqwest::Error) -> TransportError {
    let kind = if e.is_timeout() {
        TransportErrorKind::Timeout
    } else if e.is_connect() {
        TransportErrorKind::Connect
    } else {
        TransportErrorKind::Other
    };
    let message = error_chain(e);
    // Building the request cannot fail for the runtime's URL and body;
    // everything else (connect, timeout, a connection dropped mid-request)
    // is worth another try.
    if e.is_builder() {
        TransportError::permanent(kind, message)
    } else {
        TransportError::new(kind, message)
    }
}

/// Reads the body, failing as soon as it would exceed `limit` bytes.
async fn read_capped(response: reqwest::Response, limit: usize) -> Result<Bytes, BodyError> {
    match response.content_length() {
        Some(len) if len > limit as u64 => Err(BodyError::TooLarge),
        // The announced length is within the limit, and hyper never yields
        // more than it announced: take the body whole (usually the very
        // buffer it arrived in, without a copy).
        Some(_) => response
            .bytes()
            .await
            .map_err(|e| BodyError::Failed(failure(&e))),
        None => read_chunks_capped(response, limit).await,
    }
}

/// Reads a body of unannounced length chunk by chunk, up to `limit` bytes.
async fn read_chunks_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, BodyError> {
    let mut body = Vec::with_capacity(8 * 1024);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Failed(failure(&e)))?
    {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
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
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_policy_follows_only_307_and_308_home_a_few_times() {
        assert!(may_follow(307, 1, || true));
        assert!(may_follow(308, MAX_REDIRECTS, || true));
        assert!(!may_follow(308, MAX_REDIRECTS + 1, || true));
        assert!(!may_follow(307, 1, || false));
        for status in [301, 302, 303, 300, 304] {
            assert!(!may_follow(status, 1, || true), "{status}");
        }
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(same_origin(
            &url("https://h/v1/chat/completions"),
            &url("https://h:443/v2")
        ));
        assert!(!same_origin(&url("https://h/v1"), &url("http://h/v1")));
        assert!(!same_origin(&url("http://h:1/v1"), &url("http://h:2/v1")));
        assert!(!same_origin(&url("http://h/v1"), &url("http://h.evil/v1")));
    }
}
