//! `@ai` calls end to end against a scripted server on 127.0.0.1: the
//! request shape, the re-prompt loop, transport retries and limits, and
//! key redaction. Every test builds its own `Client`; none reads the
//! process environment.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE, INVOICE_SCHEMA};
use vox_runtime::{
    AiFunction, Args, Client, Config, Error, OutputSchema, Provider, TransportErrorKind,
};

const API_KEY: &str = "sk-test-9f8e7d6c5b4a";

static EXTRACT_ONCE: AiFunction = AiFunction::new("extract_once", "", &INVOICE_SCHEMA);

static TAGS_SCHEMA: OutputSchema = OutputSchema::new(
    "list_str",
    r#"{"type":"object","properties":{"value":{"type":"array","items":{"type":"string"}}},"required":["value"],"additionalProperties":false}"#,
    true,
);

static TAGS: AiFunction =
    AiFunction::new("tags", "List the tags.", &TAGS_SCHEMA).with_max_iterations(2);

static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "int",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    true,
);

static COUNT: AiFunction =
    AiFunction::new("count", "Count the items.", &COUNT_SCHEMA).with_max_iterations(0); // treated as 1

const ACME: &str = r#"{"vendor":"ACME","total":7.0}"#;

fn acme() -> Invoice {
    Invoice {
        vendor: "ACME".into(),
        total: 7.0,
    }
}

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
async fn valid_first_reply_and_request_shape() {
    let server = FakeServer::start(vec![Reply::chat(ACME)], Reply::raw(500, "unexpected")).await;
    let client = client_for(&server);
    let invoice: Invoice = client
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice, acme());

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body = request.json();
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(
        body["response_format"],
        serde_json::json!({"type": "json_schema", "json_schema": {
            "name": "Invoice", "strict": true, "schema": INVOICE_SCHEMA.value()}})
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    // The task is the system message; the one `str` argument is the user's.
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("Extract the invoice fields from OCR text.\n\n"),
        "{system}"
    );
    assert_eq!(messages[1]["content"], "ACME Corp, 2 widgets at 3.50");
}

#[tokio::test]
async fn default_model_is_used_and_temperature_omitted_when_unset() {
    let server = FakeServer::start(vec![], Reply::chat(ACME)).await;
    let _: Invoice = client_for(&server)
        .call_ai(&EXTRACT_ONCE, Args::new(), unreachable_fixture())
        .await
        .unwrap();
    let body = server.requests()[0].json();
    assert_eq!(body["model"], "test-default-model");
    assert!(body.get("temperature").is_none(), "{body}");
}

#[tokio::test]
async fn fenced_reply_is_accepted() {
    let server = FakeServer::start(
        vec![Reply::chat(&format!("```json\n{ACME}\n```"))],
        Reply::raw(500, ""),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice, acme());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn invalid_then_valid_reprompts_with_the_exact_error() {
    let bad = r#"{"vendor":"ACME"}"#;
    let server = FakeServer::start(
        vec![Reply::chat(bad), Reply::chat(ACME)],
        Reply::raw(500, ""),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice, acme());

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "exactly two requests");
    let first = requests[0].json();
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[..2],
        first["messages"].as_array().unwrap()[..],
        "conversation so far"
    );
    assert_eq!(
        messages[2],
        serde_json::json!({"role": "assistant", "content": bad})
    );
    assert_eq!(messages[3]["role"], "user");
    // The problem named by JSON path, in schema terms (not serde's
    // "missing field `total` at line 1 column 17").
    let correction = messages[3]["content"].as_str().unwrap();
    assert!(
        correction
            .contains(r#"the reply does not match the schema: $: missing required field "total""#),
        "{correction}"
    );
    assert!(!correction.contains("line 1 column"), "{correction}");
    assert_eq!(second["response_format"], first["response_format"]);
}

#[tokio::test]
async fn never_valid_makes_exactly_n_attempts() {
    let server = FakeServer::start(
        vec![
            Reply::chat("Let me see."),
            Reply::chat("The vendor is ACME, I believe."),
        ],
        Reply::chat("I think the vendor is ACME."),
    )
    .await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 3);
    match &err {
        Error::InvalidOutput {
            function,
            attempts,
            last_error,
            last_reply,
        } => {
            assert_eq!(function, "extract_invoice");
            assert_eq!(*attempts, 3);
            assert!(last_error.contains("not valid JSON"), "{last_error}");
            assert_eq!(last_reply, "I think the vendor is ACME.");
        }
        other => panic!("expected InvalidOutput, got {other:?}"),
    }
    // The third request carries both earlier replies and corrections.
    assert_eq!(
        server.requests()[2].json()["messages"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
}

/// A model that sends back its previous reply word for word after a
/// correction is not asked again (docs/runtime.md, "What the model sees").
#[tokio::test]
async fn a_reply_repeated_word_for_word_ends_the_call() {
    let server = FakeServer::start(vec![], Reply::chat("I think the vendor is ACME.")).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 2, "max_iterations is 3");
    match &err {
        Error::InvalidOutput {
            attempts,
            last_error,
            ..
        } => {
            assert_eq!(*attempts, 2);
            assert_eq!(
                last_error,
                "the reply is not valid JSON: expected value at line 1 column 1\n\
                 (the model repeated its previous reply word for word after the correction; \
                 not asked again)"
            );
        }
        other => panic!("expected InvalidOutput, got {other:?}"),
    }
}

#[tokio::test]
async fn refusal_is_rejected_and_quoted() {
    let refusal = Reply::choice(serde_json::json!({
        "index": 0,
        "message": {"role": "assistant", "content": null, "refusal": "I cannot read this invoice."},
        "finish_reason": "stop"
    }));
    let server = FakeServer::start(vec![refusal], Reply::chat(ACME)).await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, ocr_args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice, acme());
    let second = server.requests()[1].json();
    let correction = second["messages"][3]["content"].as_str().unwrap();
    assert!(
        correction.contains("I cannot read this invoice."),
        "{correction}"
    );
}

#[tokio::test]
async fn truncated_reply_is_rejected() {
    let truncated = Reply::choice(serde_json::json!({
        "index": 0,
        "message": {"role": "assistant", "content": "{\"vendor\":\"AC"},
        "finish_reason": "length"
    }));
    let server = FakeServer::start(vec![], truncated).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, ocr_args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOutput { attempts: 1, last_error, .. } if last_error.contains("truncated")),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn wrapped_outputs_are_unwrapped() {
    let server = FakeServer::start(
        vec![
            // Not under `value` (a bare list would be repaired).
            Reply::chat(r#"{"tags": ["not", "wrapped"]}"#),
            Reply::chat(r#"{"value": ["urgent", "paid"]}"#),
            Reply::chat(r#"{"value": 42}"#),
        ],
        Reply::raw(500, ""),
    )
    .await;
    let client = client_for(&server);
    let tags: Vec<String> = client
        .call_ai(&TAGS, Args::new(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(tags, ["urgent", "paid"]);
    let count: i64 = client
        .call_ai(&COUNT, Args::new(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(count, 42);
    assert_eq!(server.request_count(), 3);
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
        vox_runtime::call_ai::<Invoice, _>(&EXTRACT_INVOICE, ocr_args(), async { Ok(acme()) });
    assert_send(&through_default);
}
