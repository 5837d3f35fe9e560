//! `@ai` calls end to end against a scripted server on 127.0.0.1:
//! transport retries and limits over real connections, timeouts, the
//! concurrency cap, and key redaction. (The request shape and the re-prompt
//! loop are tested without a socket, in `reprompt_loop.rs`.) Every test
//! builds its own `Client`; none reads the process environment.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{acme, FakeServer, Invoice, Reply, ACME, EXTRACT_INVOICE, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider, TransportErrorKind};

const API_KEY: &str = "sk-test-9f8e7d6c5b4a";

static EXTRACT_ONCE: AiFunction = AiFunction::new("extract_once", "", &INVOICE_SCHEMA);

fn config_for(server: &FakeServer) -> vox_runtime::ConfigBuilder {
    Config::builder(Provider::Compatible)
        .base_url(server.base_url())
        .api_key(API_KEY)
        .default_model("test-default-model")
        .request_timeout(Duration::from_secs(5))
        .max_transport_retries(2)
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
}

fn client_for(server: &FakeServer) -> Client {
    Client::new(config_for(server).build().unwrap()).unwrap()
}

fn ocr_args() -> Args {
    Args::new()
        .arg("ocr_text", "ACME Corp, 2 widgets at 3.50")
        .unwrap()
}

/// A fixture future that must never run under a network provider.
async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

#[tokio::test]
async fn rate_limit_honors_retry_after() {
    let server = FakeServer::start(
        vec![
            Reply::json(429, &serde_json::json!({"error": "slow down"})).header("Retry-After", "1")
        ],
        Reply::chat(ACME),
    )
    .await;
    let started = Instant::now();
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(invoice, acme());
    assert_eq!(
        server.request_count(),
        2,
        "a transport retry is not an attempt"
    );
    assert!(
        elapsed >= Duration::from_secs(1),
        "Retry-After honored: {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "and bounded: {elapsed:?}");
}

#[tokio::test]
async fn retry_after_is_capped() {
    let server = FakeServer::start(
        vec![Reply::raw(503, "busy").header("Retry-After", "3600")],
        Reply::chat(ACME),
    )
    .await;
    let client = Client::new(
        config_for(&server)
            .max_retry_after(Duration::from_millis(50))
            .build()
            .unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let _: Invoice = client
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn repeated_server_errors_end_in_http_error_after_bounded_retries() {
    let server = FakeServer::start(vec![], Reply::raw(500, "internal error, try later")).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 3, "one try plus two retries");
    assert_eq!(
        err,
        Error::Http {
            status: 500,
            body_excerpt: "internal error, try later".into()
        }
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = FakeServer::start(vec![], Reply::raw(400, r#"{"error":"bad schema"}"#)).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Http { status: 400, body_excerpt } if body_excerpt.contains("bad schema")),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    // Bind and drop a listener to find a port with nothing listening.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = Config::builder(Provider::Compatible)
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .max_transport_retries(1)
        .backoff(Duration::from_millis(1), Duration::from_millis(2))
        .build()
        .unwrap();
    let err = Client::new(config)
        .unwrap()
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Transport {
                kind: TransportErrorKind::Connect,
                ..
            }
        ),
        "{err:?}"
    );
}

/// A try that gets no complete answer within the request timeout fails as
/// `Timeout` (and is retried as such) — whether the server is slow to
/// answer at all, or sends its headers and then stalls mid-body.
async fn assert_times_out(reply: Reply, retries: u32) {
    let server = FakeServer::start(vec![], reply).await;
    let client = Client::new(
        config_for(&server)
            .request_timeout(Duration::from_millis(200))
            .max_transport_retries(retries)
            .build()
            .unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Transport {
                kind: TransportErrorKind::Timeout,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        server.request_count(),
        1 + retries as usize,
        "a timeout is retried"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn slow_server_times_out() {
    assert_times_out(Reply::chat(ACME).delay(Duration::from_secs(3)), 1).await;
}

#[tokio::test]
async fn stalled_body_times_out() {
    assert_times_out(Reply::chat(ACME).stall_body(Duration::from_secs(3)), 0).await;
}

#[tokio::test]
async fn oversized_body_is_refused() {
    let huge = Reply::chat(&"x".repeat(10_000));
    let server = FakeServer::start(
        vec![huge.clone(), huge.close_delimited()],
        Reply::raw(500, ""),
    )
    .await;
    let client = Client::new(config_for(&server).max_body_bytes(4_096).build().unwrap()).unwrap();
    for announced in ["with Content-Length", "close-delimited"] {
        let err = client
            .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::ResponseTooLarge { limit_bytes: 4_096 },
            "{announced}"
        );
    }
    assert_eq!(server.request_count(), 2, "not retried");
}

/// A reply without `Content-Length` (ended by closing the connection) is
/// read chunk by chunk under the cap, and parses like any other.
#[tokio::test]
async fn close_delimited_reply_within_the_cap_is_read() {
    let server = FakeServer::start(
        vec![Reply::chat(ACME).close_delimited()],
        Reply::raw(500, ""),
    )
    .await;
    let client = Client::new(config_for(&server).max_body_bytes(4_096).build().unwrap()).unwrap();
    let invoice: Invoice = client
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
}

#[tokio::test]
async fn non_utf8_body_is_a_typed_error() {
    let mut body = br#"{"choices":[{"message":{"content":""#.to_vec();
    let valid_prefix = body.len();
    body.extend_from_slice(&[0xff, 0xfe, 0x80]);
    body.extend_from_slice(br#""}}]}"#);
    let server = FakeServer::start(vec![Reply::raw(200, body)], Reply::raw(500, "")).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        Error::InvalidUtf8 {
            valid_up_to: valid_prefix
        }
    );
}

#[tokio::test]
async fn malformed_success_body_is_a_typed_error() {
    let server = FakeServer::start(
        vec![Reply::raw(200, "<html>proxy page</html>")],
        Reply::raw(500, ""),
    )
    .await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::MalformedResponse(_)), "{err:?}");
}

#[tokio::test]
async fn fixture_provider_runs_the_body_without_requests() {
    let server = FakeServer::start(vec![], Reply::chat(ACME)).await;
    let config = Config::builder(Provider::Fixture)
        .base_url(server.base_url())
        .build()
        .unwrap();
    let client = Client::new(config).unwrap();
    let invoice: Invoice = client
        .call_ai(&EXTRACT_INVOICE, ocr_args(), async {
            Ok(Invoice {
                vendor: "fixture".into(),
                total: 0.0,
            })
        })
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "fixture");
    assert_eq!(server.connections(), 0);
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn network_provider_never_polls_the_fixture() {
    let server = FakeServer::start(vec![], Reply::chat(ACME)).await;
    let polled = Arc::new(AtomicBool::new(false));
    let flag = polled.clone();
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, ocr_args(), async move {
            flag.store(true, Ordering::SeqCst);
            Ok(Invoice {
                vendor: "fixture".into(),
                total: 0.0,
            })
        })
        .await
        .unwrap();
    assert_eq!(invoice, acme());
    assert!(!polled.load(Ordering::SeqCst));
}

#[tokio::test]
async fn api_key_never_leaks() {
    let leaky_model = Reply::chat(&format!("my key is {API_KEY}"));
    let server = FakeServer::start(
        vec![Reply::raw(401, "").echo_authorization(), leaky_model],
        Reply::raw(500, ""),
    )
    .await;
    let client = client_for(&server);

    let http = client
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&http, Error::Http { status: 401, body_excerpt } if body_excerpt.contains("Bearer [REDACTED]")),
        "{http:?}"
    );

    let invalid = client
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&invalid, Error::InvalidOutput { last_reply, .. } if last_reply.contains("[REDACTED]")),
        "{invalid:?}"
    );

    for text in [
        http.to_string(),
        format!("{http:?}"),
        invalid.to_string(),
        format!("{invalid:?}"),
        format!("{client:?}"),
        format!("{:?}", client.config()),
    ] {
        assert!(!text.contains(API_KEY), "key leaked: {text}");
    }
}

/// `count` concurrent `extract_invoice` calls, each on its own task.
fn spawn_calls(client: &Client, count: usize) -> tokio::task::JoinSet<Result<Invoice, Error>> {
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..count {
        let client = client.clone();
        calls.spawn(async move {
            client
                .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
                .await
        });
    }
    calls
}

/// Requests queued behind the cap time out on their own clock: each gets
/// the whole timeout once it has a slot, on a multi-thread runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_time_out_each_from_its_own_slot() {
    let server = FakeServer::start(vec![], Reply::chat(ACME).delay(Duration::from_secs(3))).await;
    let client = Client::new(
        config_for(&server)
            .max_concurrent_requests(3)
            .request_timeout(Duration::from_millis(150))
            .max_transport_retries(0)
            .build()
            .unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let mut calls = spawn_calls(&client, 9);
    while let Some(result) = calls.join_next().await {
        let err = result.unwrap().unwrap_err();
        assert!(
            matches!(
                err,
                Error::Transport {
                    kind: TransportErrorKind::Timeout,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    let took = started.elapsed();
    // Three rounds of three, each cut off after 150 ms: at least 450 ms
    // (all nine at once would take 150 ms; a clock started while queued
    // would cut the later rounds short), and far less than one 3 s reply.
    // (The server's own count is no measure here: it keeps sleeping on
    // requests the client has given up on.)
    assert!(took >= Duration::from_millis(440), "{took:?}");
    assert!(took < Duration::from_millis(2500), "{took:?}");
    assert_eq!(server.request_count(), 9);
}

#[tokio::test]
async fn concurrent_requests_are_capped() {
    let server =
        FakeServer::start(vec![], Reply::chat(ACME).delay(Duration::from_millis(20))).await;
    let client = Client::new(
        config_for(&server)
            .max_concurrent_requests(2)
            .build()
            .unwrap(),
    )
    .unwrap();
    let mut calls = spawn_calls(&client, 10);
    while let Some(result) = calls.join_next().await {
        assert_eq!(result.unwrap().unwrap(), acme());
    }
    assert_eq!(server.request_count(), 10);
    assert!(
        server.peak_in_flight() <= 2,
        "peak {}",
        server.peak_in_flight()
    );
    // Connections are bounded by the cap up to a race inside the pool (a
    // freed connection may be returned to it just after the next request
    // started dialing), so allow slack here; the peak above is exact.
    assert!(
        server.connections() <= 4,
        "connections {}",
        server.connections()
    );
}

/// Generated `#[test]`s call `block_on` once each; one client must keep
/// working across those short-lived runtimes.
#[test]
fn one_client_serves_successive_block_on_runtimes() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeServer::start(vec![], Reply::chat(ACME)));
    let client = client_for(&server);
    for _ in 0..3 {
        let invoice: Invoice = vox_runtime::block_on(client.call_ai(
            &EXTRACT_INVOICE,
            ocr_args(),
            unreachable_fixture(),
        ))
        .unwrap();
        assert_eq!(invoice, acme());
    }
    assert_eq!(server.request_count(), 3);
}

/// Generated `@ai` functions are spawned on multi-thread runtimes: the
/// futures of both entry points must be `Send`.
#[test]
fn call_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let client = Client::new(Config::builder(Provider::Fixture).build().unwrap()).unwrap();
    let through_client =
        client.call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), async { Ok(acme()) });
    assert_send(&through_client);
    let through_default =
        vox_runtime::__private::call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), async {
            Ok(acme())
        });
    assert_send(&through_default);
}
