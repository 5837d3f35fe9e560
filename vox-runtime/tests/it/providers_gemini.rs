//! The `gemini` provider against a loopback server speaking
//! `generateContent` as the Gemini API documents it (API reference
//! "Generating content", "Structured output" guide, error bodies with
//! `google.rpc.RetryInfo`): JSON output under `responseJsonSchema`,
//! `MAX_TOKENS`, safety blocks, `retryDelay`, errors and the key kept out
//! of them.

use crate::support;

use std::time::{Duration, Instant};

use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

const API_KEY: &str = "AIza-test-9z8y7x6w5v4u";

static EXTRACT: AiFunction = AiFunction::new("extract", "Extract.", &INVOICE_SCHEMA)
    .with_model("gemini-test")
    .with_temperature(0.3)
    .with_max_iterations(2);

fn config_for(server: &FakeServer) -> vox_runtime::ConfigBuilder {
    Config::builder(Provider::Gemini)
        .base_url(server.base_url())
        .api_key(API_KEY)
        .request_timeout(Duration::from_secs(5))
        .max_transport_retries(2)
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
}

fn client_for(server: &FakeServer) -> Client {
    Client::new(config_for(server).build().unwrap()).unwrap()
}

fn args() -> Args {
    Args::new().arg("ocr_text", "ACME, 7.00").unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

fn candidate(text: &str, finish_reason: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": finish_reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 11, "totalTokenCount": 51},
            "modelVersion": "gemini-test"
        }),
    )
}

fn google_error(code: u16, status: &str, details: serde_json::Value) -> Reply {
    Reply::json(
        code,
        &serde_json::json!({"error": {"code": code, "message": "error", "status": status, "details": details}}),
    )
}

#[tokio::test]
async fn json_output_and_the_request_shape() {
    let server = FakeServer::start(
        vec![candidate(r#"{"vendor":"ACME","total":7.0}"#, "STOP")],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/models/gemini-test:generateContent");
    assert_eq!(request.header("x-goog-api-key"), Some(API_KEY));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(
        body["generationConfig"],
        serde_json::json!({
            "responseMimeType": "application/json",
            "responseJsonSchema": INVOICE_SCHEMA.value(),
            "maxOutputTokens": vox_runtime::DEFAULT_MAX_TOKENS,
            "temperature": 0.3
        })
    );
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"],
        "Extract.\n\nAnswer with only one JSON value, with no prose, Markdown or code fences \
         around it."
    );
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0]["role"], "user");
    assert_eq!(contents[0]["parts"][0]["text"], "ACME, 7.00");
}

#[tokio::test]
async fn max_tokens_is_truncation_and_the_correction_continues_the_contents() {
    let server = FakeServer::start(
        vec![
            candidate(r#"{"vendor":"AC"#, "MAX_TOKENS"),
            candidate(r#"{"vendor":"ACME","total":7.0}"#, "STOP"),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.total, 7.0);
    let contents = server.requests()[1].json()["contents"].clone();
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents[1]["parts"][0]["text"], r#"{"vendor":"AC"#);
    assert_eq!(contents[2]["role"], "user");
    assert!(contents[2]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .contains("truncated (finishReason = \"MAX_TOKENS\")"));
}

#[tokio::test]
async fn safety_blocks_are_rejected_replies() {
    let server = FakeServer::start(
        vec![
            Reply::json(
                200,
                &serde_json::json!({"promptFeedback": {"blockReason": "SAFETY"}}),
            ),
            Reply::json(
                200,
                &serde_json::json!({"candidates": [{"finishReason": "SAFETY", "safetyRatings": []}]}),
            ),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOutput { attempts: 2, last_error, .. }
            if last_error == "the reply was blocked (finishReason = SAFETY)"),
        "{err:?}"
    );
    let correction = server.requests()[1].json()["contents"][2]["parts"][0]["text"].clone();
    assert!(
        correction
            .as_str()
            .unwrap()
            .contains("the prompt was blocked (blockReason = SAFETY)"),
        "{correction}"
    );
}

#[tokio::test]
async fn retry_delay_in_the_error_body_is_honoured_and_5xx_retried() {
    let server = FakeServer::start(
        vec![
            google_error(
                429,
                "RESOURCE_EXHAUSTED",
                serde_json::json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.25s"}]),
            ),
            google_error(503, "UNAVAILABLE", serde_json::json!([])),
            candidate(r#"{"vendor":"ACME","total":7.0}"#, "STOP"),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let started = Instant::now();
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    assert_eq!(server.request_count(), 3);
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "retryDelay ignored: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_bad_key_is_not_retried_and_never_shown() {
    let server = FakeServer::start(
        vec![Reply::raw(400, "").echo_header("x-goog-api-key")],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = client_for(&server);
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 1);
    assert!(
        matches!(&err, Error::Http { status: 400, body_excerpt }
            if body_excerpt.contains("x-goog-api-key: [REDACTED]")),
        "{err:?}"
    );
    for text in [err.to_string(), format!("{err:?}"), format!("{client:?}")] {
        assert!(!text.contains(API_KEY), "key leaked: {text}");
    }
}

#[tokio::test]
async fn each_model_gets_its_own_url() {
    static OTHER: AiFunction =
        AiFunction::new("other", "", &INVOICE_SCHEMA).with_model("models/gemini-other");
    let server = FakeServer::start(
        vec![],
        candidate(r#"{"vendor":"ACME","total":7.0}"#, "STOP"),
    )
    .await;
    let client = client_for(&server);
    for function in [&EXTRACT, &OTHER, &EXTRACT] {
        let _: Invoice = client
            .call_ai(function, args(), unreachable_fixture())
            .await
            .unwrap();
    }
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/v1/models/gemini-test:generateContent",
            "/v1/models/gemini-other:generateContent",
            "/v1/models/gemini-test:generateContent"
        ]
    );
}
