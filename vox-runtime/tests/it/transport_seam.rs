//! The transport seam (docs/runtime.md, "Transports"): a custom transport
//! sees every request the runtime makes and the runtime opens no socket of
//! its own; the retry rules, the concurrency cap, the request timeout and
//! the judging of answers sit above the seam and hold for any transport.
//! Retry pacing runs on tokio's paused clock: no test here sleeps for real
//! except the one of the request timeout.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::{acme, Invoice, ACME, INVOICE_SCHEMA};
use tokio::time::Instant;
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::transport::{
    MemoryTransport, Request, ScriptedReply, SendFuture, Transport, TransportError,
    TransportErrorKind,
};
use vox_runtime::{Client, Config, ConfigBuilder, Error, Provider};

const KEY: &str = "sk-seam-test-0a1b2c3d";
const ANTHROPIC_KEY: &str = "sk-ant-seam-4e5f6a7b";
static EXTRACT: AiFunction = AiFunction::new("extract", "Extract it.", &INVOICE_SCHEMA)
    .with_model("gpt-seam")
    .with_max_iterations(2)
    .with_fallback(&["anthropic:claude-seam"]);
static ONCE: AiFunction = AiFunction::new("once", "", &INVOICE_SCHEMA).with_model("gpt-seam");

fn chat(content: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &serde_json::json!({"choices": [{"index": 0,
            "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2}}),
    )
}

fn anthropic(input: serde_json::Value) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &serde_json::json!({"type": "message", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "extract", "input": input}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}),
    )
}

fn args() -> Args {
    Args::new().arg("text", "ACME, 7").unwrap()
}

async fn call(client: &Client, function: &AiFunction) -> Result<Invoice, Error> {
    client
        .call_ai(function, args(), async {
            panic!("the fixture must not run under a network provider")
        })
        .await
}

/// An OpenAI provider with no retries (tests that want them set them).
fn config(base_url: &str) -> ConfigBuilder {
    Config::builder(Provider::OpenAi)
        .base_url(base_url)
        .api_key(KEY)
        .max_transport_retries(0)
}

fn client(config: ConfigBuilder, transport: &MemoryTransport) -> Client {
    Client::builder(config.build().unwrap())
        .transport(transport.clone())
        .build()
        .unwrap()
}

/// A listener on 127.0.0.1 that counts the connections made to it.
async fn tripwire() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((_stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (format!("http://{addr}/v1"), connections)
}

#[tokio::test]
async fn a_custom_transport_sees_every_request_and_the_runtime_opens_no_socket() {
    // Both providers' base URLs point at a listener that counts
    // connections: a request that bypassed the transport would reach it.
    let (url, connections) = tripwire().await;
    let transport = MemoryTransport::new()
        // The first answer does not fit: a re-prompt.
        .reply(chat("not json"))
        // The re-prompt meets an overloaded server: the fallback.
        .reply(ScriptedReply::new(503, "overloaded"))
        .reply(anthropic(
            serde_json::json!({"vendor": "ACME", "total": 7.0}),
        ));
    let client = client(
        config(&url)
            .provider_base_url(Provider::Anthropic, url.clone())
            .provider_api_key(Provider::Anthropic, ANTHROPIC_KEY),
        &transport,
    );
    assert_eq!(call(&client, &EXTRACT).await.unwrap(), acme());

    let seen = transport.requests();
    let summary: Vec<_> = seen
        .iter()
        .map(|r| (r.provider, r.model.as_str(), r.url.as_str()))
        .collect();
    let chat_url = format!("{url}/chat/completions");
    let messages_url = format!("{url}/messages");
    assert_eq!(
        summary,
        [
            (Provider::OpenAi, "gpt-seam", chat_url.as_str()),
            (Provider::OpenAi, "gpt-seam", chat_url.as_str()),
            (Provider::Anthropic, "claude-seam", messages_url.as_str()),
        ]
    );
    // Each request carries its provider's key header and a JSON body.
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(seen[2].header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(seen[2].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(seen[0].json()["model"], "gpt-seam");
    // The re-prompt carries the rejected reply and the correction.
    let messages = seen[1].json()["messages"].as_array().unwrap().clone();
    assert_eq!(messages[messages.len() - 2]["content"], "not json");
    // The key never shows in a Debug of what was recorded.
    assert!(!format!("{seen:?}").contains(KEY));

    // Give a stray connection time to arrive before looking.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(connections.load(Ordering::SeqCst), 0, "a socket was opened");
}

#[tokio::test]
async fn the_default_transport_does_reach_the_tripwire() {
    // The tripwire above would notice: without a custom transport the same
    // configuration connects to it.
    let (url, connections) = tripwire().await;
    let client = Client::new(
        config(&url)
            .request_timeout(Duration::from_millis(200))
            .build()
            .unwrap(),
    )
    .unwrap();
    let error = call(&client, &ONCE).await.unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error}");
    assert!(connections.load(Ordering::SeqCst) >= 1);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_on_tokios_clock_and_retries_are_invisible_to_the_loop() {
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::new(429, "slow down").header("retry-after", "7"))
        .reply(ScriptedReply::new(529, "overloaded").header("retry-after", "3"))
        .reply(chat(ACME));
    let client = client(
        config("http://192.0.2.1/v1").max_transport_retries(2),
        &transport,
    );
    let started = Instant::now();
    assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    let seen = transport.requests();
    assert_eq!(seen.len(), 3);
    // A retry resends the very same body: no attempt was used.
    assert!(seen.iter().all(|r| r.body == seen[0].body));
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_longer_than_the_cap_waits_the_cap() {
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::new(503, "busy").header("retry-after", "3600"))
        .reply(chat(ACME));
    let client = client(
        config("http://192.0.2.1/v1")
            .max_transport_retries(1)
            .max_retry_after(Duration::from_secs(5)),
        &transport,
    );
    let started = Instant::now();
    assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
    assert_eq!(started.elapsed(), Duration::from_secs(5));
}

/// A Gemini answer holding `ACME`.
fn gemini_ok() -> ScriptedReply {
    ScriptedReply::json(
        200,
        &serde_json::json!({"candidates": [{"content": {"parts": [{"text": ACME}]},
            "finishReason": "STOP"}]}),
    )
}

/// A Gemini client on `transport` that tries a failed request once more.
fn gemini_client(transport: &MemoryTransport) -> Client {
    client(
        Config::builder(Provider::Gemini)
            .base_url("http://192.0.2.1/v1beta")
            .api_key(KEY)
            .max_transport_retries(1),
        transport,
    )
}

#[tokio::test(start_paused = true)]
async fn gemini_retry_delay_in_the_body_is_honoured() {
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::json(
            429,
            &serde_json::json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": "22s"}]}}),
        ))
        .reply(gemini_ok());
    let client = gemini_client(&transport);
    let started = Instant::now();
    assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
    assert_eq!(started.elapsed(), Duration::from_secs(22));
    assert_eq!(
        transport.requests()[0].url.as_str(),
        "http://192.0.2.1/v1beta/models/gpt-seam:generateContent"
    );
    assert_eq!(transport.requests()[0].header("x-goog-api-key"), Some(KEY));
}

/// Gemini puts `RetryInfo` after its quota details, which can run to
/// kilobytes: the delay is read from the first 64 KiB of an error body,
/// wherever it is in them, and not from beyond.
#[tokio::test(start_paused = true)]
async fn gemini_retry_delay_after_long_details_is_honoured_within_64_kib() {
    let answered = |padding: usize| {
        let violations: Vec<_> = (0..padding / 100)
            .map(|i| serde_json::json!({"quotaMetric": format!("generativelanguage.googleapis.com/metric-{i:04}-{}", "x".repeat(40))}))
            .collect();
        let body = serde_json::json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota.",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": violations},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "25s"}]}});
        let transport = MemoryTransport::new()
            .reply(ScriptedReply::json(429, &body))
            .reply(gemini_ok());
        (transport, body.to_string().len())
    };
    for (padding, honoured) in [(3_000, true), (60_000, true), (70_000, false)] {
        let (transport, len) = answered(padding);
        let client = gemini_client(&transport);
        let started = Instant::now();
        assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
        let waited = started.elapsed();
        if honoured {
            assert!(len < 64 * 1024, "{len}");
            assert_eq!(waited, Duration::from_secs(25), "{len} bytes");
        } else {
            assert!(len > 64 * 1024, "{len}");
            assert!(waited < Duration::from_secs(25), "{len} bytes: {waited:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn server_errors_and_lost_connections_back_off_exponentially_then_give_up() {
    let base = Duration::from_secs(1);
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::new(500, "oops"))
        .reply(ScriptedReply::fail(TransportError::new(
            TransportErrorKind::Other,
            "connection reset",
        )))
        .reply(ScriptedReply::new(502, "bad gateway"))
        .reply(ScriptedReply::new(503, "still down"));
    let client = client(
        config("http://192.0.2.1/v1")
            .max_transport_retries(3)
            .backoff(base, Duration::from_secs(60)),
        &transport,
    );
    let started = Instant::now();
    let error = call(&client, &ONCE).await.unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(&error, Error::Http { status: 503, body_excerpt } if body_excerpt == "still down"),
        "{error}"
    );
    assert_eq!(transport.request_count(), 4);
    // Equal jitter: retry n waits within [base·2ⁿ⁻¹/2, base·2ⁿ⁻¹].
    assert!(
        took >= base * 7 / 2 && took <= base * 7,
        "three backoffs took {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn what_is_not_worth_another_try_is_tried_once() {
    type Expect = fn(&Error) -> bool;
    let cases: Vec<(ScriptedReply, Expect)> = vec![
        (ScriptedReply::new(400, "bad request"), |e| {
            matches!(e, Error::Http { status: 400, .. })
        }),
        (ScriptedReply::new(401, "who are you"), |e| {
            matches!(e, Error::Http { status: 401, .. })
        }),
        (
            ScriptedReply::new(500, "1 validation error for ChatRequest"),
            |e| matches!(e, Error::Http { status: 500, .. }),
        ),
        (
            ScriptedReply::new(302, "").header("location", "/elsewhere"),
            |e| {
                matches!(e, Error::Redirect { status: 302, location: Some(l) }
                    if l == "http://192.0.2.1/elsewhere")
            },
        ),
        (
            ScriptedReply::fail(TransportError::permanent(
                TransportErrorKind::Other,
                "cannot build the request",
            )),
            |e| matches!(e, Error::Transport { .. }),
        ),
        (ScriptedReply::new(200, vec![b' '; 2048]), |e| {
            matches!(e, Error::ResponseTooLarge { limit_bytes: 1024 })
        }),
    ];
    for (reply, expected) in cases {
        let transport = MemoryTransport::new()
            .reply(reply)
            .otherwise(|_| chat(ACME));
        let client = client(
            config("http://192.0.2.1/v1")
                .max_transport_retries(3)
                .max_body_bytes(1024),
            &transport,
        );
        let error = call(&client, &ONCE).await.unwrap_err();
        assert!(expected(&error), "{error}");
        assert_eq!(transport.request_count(), 1, "{error}");
    }
}

#[tokio::test(start_paused = true)]
async fn server_text_in_errors_is_redacted_whatever_the_transport() {
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::new(
            401,
            format!("invalid key Bearer {KEY} for http://192.0.2.1/v1"),
        ))
        .reply(ScriptedReply::fail(TransportError::new(
            TransportErrorKind::Connect,
            format!("refused while sending {KEY}"),
        )));
    let client = client(config("http://192.0.2.1/v1"), &transport);
    for _ in 0..2 {
        let error = call(&client, &ONCE).await.unwrap_err();
        let text = format!("{error} {error:?}");
        assert!(!text.contains(KEY), "{text}");
    }
}

/// A transport that counts how many of its exchanges run at once.
struct Gauge {
    inner: MemoryTransport,
    running: AtomicUsize,
    peak: AtomicUsize,
}

impl Transport for Gauge {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        Box::pin(async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            let response = self.inner.send(request).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            response
        })
    }
}

/// A transport that wraps another and notes what passes through it, read
/// through the public accessors of `Request` and `Response` (what a
/// logging or metering transport does).
#[derive(Default)]
struct Observer {
    inner: MemoryTransport,
    seen: std::sync::Mutex<Vec<String>>,
}

impl Transport for Observer {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        Box::pin(async move {
            let asked = format!(
                "{} {} {} bytes, key header {}",
                request.method(),
                request.url(),
                request.body().len(),
                request.headers().contains_key("authorization")
            );
            let answer = self.inner.send(request).await;
            let note = match &answer {
                Ok(response) => format!(
                    "{asked} -> {} trace={:?} {:?}",
                    response.status(),
                    response
                        .headers()
                        .get("x-trace")
                        .and_then(|v| v.to_str().ok()),
                    response
                        .body()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                ),
                Err(e) => format!("{asked} -> {e}"),
            };
            self.seen.lock().unwrap().push(note);
            answer
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_wrapping_transport_reads_requests_and_answers_through_their_accessors() {
    let reply = serde_json::json!({"choices": [{"index": 0,
        "message": {"role": "assistant", "content": ACME}, "finish_reason": "stop"}]});
    let observer = Arc::new(Observer {
        inner: MemoryTransport::new()
            .reply(ScriptedReply::fail(TransportError::new(
                TransportErrorKind::Connect,
                "connection refused",
            )))
            .reply(ScriptedReply::json(200, &reply).header("x-trace", "t-42")),
        seen: Default::default(),
    });
    let client = Client::builder(
        config("http://192.0.2.1/v1")
            .max_transport_retries(1)
            .build()
            .unwrap(),
    )
    .transport(observer.clone())
    .build()
    .unwrap();
    assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
    let seen = observer.seen.lock().unwrap().clone();
    let sent = &observer.inner.requests()[0];
    let asked = format!(
        "POST http://192.0.2.1/v1/chat/completions {} bytes, key header true",
        sent.body.len()
    );
    assert_eq!(
        seen,
        [
            format!("{asked} -> connect error: connection refused"),
            format!(
                "{asked} -> 200 trace=Some(\"t-42\") Ok({:?})",
                reply.to_string()
            ),
        ]
    );
}

/// A transport that ignores `Request::body_limit`: it answers each
/// request with the next body whole.
struct Unlimited(std::sync::Mutex<Vec<String>>);

impl Transport for Unlimited {
    fn send<'a>(&'a self, _request: Request<'a>) -> SendFuture<'a> {
        let body = self.0.lock().unwrap().remove(0);
        Box::pin(async move { Ok(vox_runtime::transport::Response::new(200, body)) })
    }
}

/// `max_body_bytes` holds for a transport that ignores
/// `Request::body_limit` and hands back a longer body: exactly the limit
/// is read, one byte more is `ResponseTooLarge`, without another try.
#[tokio::test(start_paused = true)]
async fn a_body_over_the_limit_from_any_transport_is_too_large() {
    let body = |pad: usize| {
        serde_json::json!({"choices": [{"index": 0,
            "message": {"role": "assistant", "content": ACME}, "finish_reason": "stop"}],
            "pad": "x".repeat(pad)})
        .to_string()
    };
    let at_limit = body(100).len();
    let transport = Arc::new(Unlimited(std::sync::Mutex::new(vec![
        body(100),
        body(101),
        body(0),
    ])));
    let client = Client::builder(
        config("http://192.0.2.1/v1")
            .max_transport_retries(2)
            .max_body_bytes(at_limit)
            .build()
            .unwrap(),
    )
    .transport(transport.clone())
    .build()
    .unwrap();
    assert_eq!(call(&client, &ONCE).await.unwrap(), acme());
    match call(&client, &ONCE).await {
        Err(Error::ResponseTooLarge { limit_bytes }) => assert_eq!(limit_bytes, at_limit),
        other => panic!("{other:?}"),
    }
    // Not tried again: one body is left.
    assert_eq!(transport.0.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_cap_bounds_a_custom_transport_too() {
    let gauge = Arc::new(Gauge {
        inner: MemoryTransport::new().otherwise(|_| chat(ACME).delay(Duration::from_secs(1))),
        running: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let client = Client::builder(
        config("http://192.0.2.1/v1")
            .max_concurrent_requests(3)
            .build()
            .unwrap(),
    )
    .transport(gauge.clone())
    .build()
    .unwrap();
    let started = Instant::now();
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { call(&client, &ONCE).await })
        })
        .collect();
    for task in calls {
        assert_eq!(task.await.unwrap().unwrap(), acme());
    }
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 3);
    assert_eq!(gauge.inner.request_count(), 10);
    // Four rounds of one second (3 + 3 + 3 + 1).
    assert_eq!(started.elapsed(), Duration::from_secs(4));
}

#[tokio::test]
async fn a_transport_that_does_not_answer_in_time_is_a_timeout() {
    // The request timeout holds any transport to it (here on the real
    // clock: a short timeout, one try).
    let transport =
        MemoryTransport::new().otherwise(|_| chat(ACME).delay(Duration::from_secs(3600)));
    let client = client(
        config("http://192.0.2.1/v1").request_timeout(Duration::from_millis(100)),
        &transport,
    );
    let error = tokio::time::timeout(Duration::from_secs(30), call(&client, &ONCE))
        .await
        .expect("the request timeout ends the call")
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Transport {
                kind: TransportErrorKind::Timeout,
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_script_used_up_is_a_connect_error_naming_the_request() {
    let transport = MemoryTransport::new();
    let client = client(config("http://192.0.2.1/v1"), &transport);
    let error = call(&client, &ONCE).await.unwrap_err();
    assert!(
        matches!(&error, Error::Transport { kind: TransportErrorKind::Connect, message }
            if message.contains("no scripted reply left for request 1")),
        "{error}"
    );
}

#[test]
fn the_fixture_provider_never_uses_the_transport() {
    let transport = MemoryTransport::new();
    let client = Client::builder(Config::builder(Provider::Fixture).build().unwrap())
        .transport(transport.clone())
        .build()
        .unwrap();
    let value: Invoice =
        vox_runtime::block_on(client.call_ai(&ONCE, args(), async { Ok(acme()) })).unwrap();
    assert_eq!(value, acme());
    assert_eq!(transport.request_count(), 0);
}
