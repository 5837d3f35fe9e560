//! The `ollama` provider against a loopback server speaking Ollama's native
//! `/api/chat` as its API docs describe it ("Generate a chat completion",
//! `format` with a JSON Schema, `stream: false`, `done_reason`, errors as
//! `{"error": "…"}`).

use crate::support;

use std::time::Duration;

use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

static EXTRACT: AiFunction = AiFunction::new("extract", "Extract.", &INVOICE_SCHEMA)
    .with_model("llama3.2:3b")
    .with_max_tokens(300)
    .with_max_iterations(2);

fn client_for(server: &FakeServer, key: Option<&str>) -> Client {
    // The fake server's base URL ends in /v1; Ollama's API sits at the
    // root, so strip it.
    let base = server.base_url().trim_end_matches("/v1").to_owned();
    let mut builder = Config::builder(Provider::Ollama)
        .base_url(base)
        .request_timeout(Duration::from_secs(5))
        .max_transport_retries(2)
        .backoff(Duration::from_millis(1), Duration::from_millis(5));
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    Client::new(builder.build().unwrap()).unwrap()
}

fn args() -> Args {
    Args::new().arg("ocr_text", "ACME, 7.00").unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

fn chat(content: &str, done_reason: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "model": "llama3.2:3b", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": content},
            "done": true, "done_reason": done_reason,
            "prompt_eval_count": 26, "eval_count": 12
        }),
    )
}

#[tokio::test]
async fn the_schema_goes_in_format_and_the_reply_in_message_content() {
    let server = FakeServer::start(
        vec![chat(r#"{"vendor":"ACME","total":7.0}"#, "stop")],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server, None)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.header("authorization"), None, "no key, no header");
    let body = request.json();
    assert_eq!(
        body["model"], "llama3.2:3b",
        "a colon in a model name is not a prefix"
    );
    assert_eq!(body["stream"], false);
    assert_eq!(body["format"], *INVOICE_SCHEMA.value());
    assert_eq!(body["options"], serde_json::json!({"num_predict": 300}));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
}

#[tokio::test]
async fn done_reason_length_is_truncation_then_corrected() {
    let server = FakeServer::start(
        vec![
            chat(r#"{"vendor":"AC"#, "length"),
            chat(r#"{"vendor":"ACME","total":7.0}"#, "stop"),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server, None)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.total, 7.0);
    let messages = server.requests()[1].json()["messages"].clone();
    assert_eq!(messages[2]["role"], "assistant");
    assert!(messages[3]["content"]
        .as_str()
        .unwrap()
        .contains("truncated (done_reason = \"length\")"));
}

#[tokio::test]
async fn server_errors_are_retried_and_a_missing_model_is_not() {
    let server = FakeServer::start(
        vec![
            Reply::json(500, &serde_json::json!({"error": "llama runner process has terminated"})),
            Reply::json(429, &serde_json::json!({"error": "server busy"})).header("Retry-After", "0"),
            chat(r#"{"vendor":"ACME","total":7.0}"#, "stop"),
            Reply::json(404, &serde_json::json!({"error": "model \"llama3.2:3b\" not found, try pulling it first"})),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = client_for(&server, None);
    let _: Invoice = client
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(server.request_count(), 3);
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 4);
    assert!(
        matches!(&err, Error::Http { status: 404, body_excerpt } if body_excerpt.contains("try pulling it")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_key_for_a_proxy_is_sent_as_bearer_and_redacted() {
    const KEY: &str = "ollama-proxy-key-123456";
    let server = FakeServer::start(
        vec![Reply::raw(401, "").echo_authorization()],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = client_for(&server, Some(KEY));
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Http { status: 401, body_excerpt } if body_excerpt.contains("Bearer [REDACTED]")),
        "{err:?}"
    );
    for text in [err.to_string(), format!("{err:?}"), format!("{client:?}")] {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
}

#[test]
fn the_default_server_is_local() {
    let config = Config::builder(Provider::Ollama).build().unwrap();
    assert_eq!(config.base_url(), Some("http://127.0.0.1:11434"));
    assert_eq!(config.default_model(), "llama3.2");
}
