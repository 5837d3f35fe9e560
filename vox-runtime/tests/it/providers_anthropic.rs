//! The `anthropic` provider against a loopback server speaking the Messages
//! API as Anthropic documents it ("Messages" API reference, "Tool use with
//! Claude", "Errors"): the forced tool call, the `tool_result` re-prompt,
//! truncation, refusals, 429/5xx/529 with `retry-after`, and the key kept
//! out of every error.

use crate::support;

use std::time::{Duration, Instant};

use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

const API_KEY: &str = "sk-ant-test-0a1b2c3d4e5f";

static EXTRACT_ONCE: AiFunction =
    AiFunction::new("extract_once", "Extract.", &INVOICE_SCHEMA).with_model("claude-test");

fn client_for(server: &FakeServer) -> Client {
    Client::new(
        Config::builder(Provider::Anthropic)
            .base_url(server.base_url())
            .api_key(API_KEY)
            .request_timeout(Duration::from_secs(5))
            .max_transport_retries(2)
            .backoff(Duration::from_millis(1), Duration::from_millis(5))
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn args() -> Args {
    Args::new().arg("ocr_text", "ACME, 7.00").unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

/// A Messages API response whose only block is `block`.
fn message(block: serde_json::Value, stop_reason: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": 31, "output_tokens": 9}
        }),
    )
}

fn tool_use(id: &str, input: serde_json::Value) -> Reply {
    message(
        serde_json::json!({"type": "tool_use", "id": id, "name": "extract_invoice", "input": input}),
        "tool_use",
    )
}

/// An error body as the Messages API sends it.
fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &serde_json::json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

#[tokio::test]
async fn forced_tool_call_is_the_answer_and_the_request_is_a_messages_request() {
    let server = FakeServer::start(
        vec![tool_use(
            "toolu_1",
            serde_json::json!({"vendor": "ACME", "total": 7.0}),
        )],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(API_KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(body["model"], "gpt-4o-mini", "the function's own model");
    assert_eq!(body["max_tokens"], vox_runtime::DEFAULT_MAX_TOKENS);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(
        body["tools"],
        serde_json::json!([{"name": "extract_invoice",
            "description": "The result of the function `extract_invoice`.",
            "input_schema": INVOICE_SCHEMA.value()}])
    );
    assert_eq!(
        body["tool_choice"],
        serde_json::json!({"type": "tool", "name": "extract_invoice"})
    );
    assert!(body["system"]
        .as_str()
        .unwrap()
        .contains("calling the tool `extract_invoice`"));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    // The task is the system prompt; the one `str` argument the user turn.
    assert!(body["system"]
        .as_str()
        .unwrap()
        .starts_with("Extract the invoice fields from OCR text.\n\n"));
    assert_eq!(messages[0]["content"], "ACME, 7.00");
}

#[tokio::test]
async fn a_rejected_tool_input_is_answered_with_an_error_tool_result() {
    let server = FakeServer::start(
        vec![
            tool_use("toolu_bad", serde_json::json!({"vendor": "ACME"})),
            tool_use(
                "toolu_good",
                serde_json::json!({"vendor": "ACME", "total": 7.0}),
            ),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client_for(&server)
        .call_ai(&EXTRACT_INVOICE, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.total, 7.0);
    let second = server.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        serde_json::json!({"role": "assistant", "content": [{"type": "tool_use",
            "id": "toolu_bad", "name": "extract_invoice", "input": {"vendor": "ACME"}}]})
    );
    let result = &messages[2]["content"][0];
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_bad");
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains(r#"$: missing required field "total""#),
        "{result}"
    );
}

#[tokio::test]
async fn max_tokens_is_truncation_and_a_refusal_is_rejected() {
    static LIMITED: AiFunction = AiFunction::new("limited", "", &INVOICE_SCHEMA)
        .with_max_tokens(64)
        .with_max_iterations(2);
    let server = FakeServer::start(
        vec![
            // Cut off by the completion limit mid-value.
            message(
                serde_json::json!({"type": "tool_use", "id": "t1", "name": "limited",
                    "input": {"vendor": "AC"}}),
                "max_tokens",
            ),
            message(
                serde_json::json!({"type": "text", "text": "I can't help with that."}),
                "refusal",
            ),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&LIMITED, args(), unreachable_fixture())
        .await
        .unwrap_err();
    // Both attempts failed; the last was the refusal.
    assert!(
        matches!(&err, Error::InvalidOutput { attempts: 2, last_error, last_reply, .. }
            if last_error.starts_with("the model refused (stop_reason = \"refusal\")")
                && last_reply == "I can't help with that."),
        "{err:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].json()["max_tokens"], 64, "with_max_tokens");
    let result = &requests[1].json()["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "t1");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("truncated (stop_reason = \"max_tokens\")"),
        "{result}"
    );
}

#[tokio::test]
async fn stop_reason_max_tokens_is_reported_as_truncation() {
    let server = FakeServer::start(
        vec![message(
            serde_json::json!({"type": "tool_use", "id": "t", "name": "extract_once", "input": {}}),
            "max_tokens",
        )],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOutput { last_error, .. }
            if last_error.contains("truncated (stop_reason = \"max_tokens\")")),
        "{err:?}"
    );
}

#[tokio::test]
async fn rate_limits_overload_and_server_errors_are_retried_with_retry_after() {
    let server = FakeServer::start(
        vec![
            error(429, "rate_limit_error", "slow down").header("retry-after", "1"),
            error(529, "overloaded_error", "Overloaded"),
            error(500, "api_error", "Internal server error"),
            tool_use("t", serde_json::json!({"vendor": "ACME", "total": 7.0})),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = Client::new(
        Config::builder(Provider::Anthropic)
            .base_url(server.base_url())
            .api_key(API_KEY)
            .max_transport_retries(3)
            .backoff(Duration::from_millis(1), Duration::from_millis(5))
            .max_retry_after(Duration::from_millis(300))
            .build()
            .unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let invoice: Invoice = client
        .call_ai(&EXTRACT_ONCE, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    assert_eq!(server.request_count(), 4);
    // `retry-after: 1`, capped at 300 ms, was waited for.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_authentication_error_is_not_retried_and_hides_the_key() {
    let server = FakeServer::start(
        vec![Reply::raw(401, "").echo_header("x-api-key")],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = client_for(&server);
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 1);
    assert!(
        matches!(&err, Error::Http { status: 401, body_excerpt }
            if body_excerpt.contains("x-api-key: [REDACTED]")),
        "{err:?}"
    );
    for text in [
        err.to_string(),
        format!("{err:?}"),
        format!("{client:?}"),
        format!("{:?}", client.config()),
    ] {
        assert!(!text.contains(API_KEY), "key leaked: {text}");
    }
}

#[tokio::test]
async fn a_short_dummy_key_echoed_as_its_header_is_redacted() {
    let server = FakeServer::start(
        vec![Reply::raw(401, "").echo_header("x-api-key")],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let client = Client::new(
        Config::builder(Provider::Anthropic)
            .base_url(server.base_url())
            .api_key("k1")
            .build()
            .unwrap(),
    )
    .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&EXTRACT_ONCE, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Http { body_excerpt, .. }
            if body_excerpt.contains("x-api-key: [REDACTED]") && !body_excerpt.contains("k1")),
        "{err:?}"
    );
}
