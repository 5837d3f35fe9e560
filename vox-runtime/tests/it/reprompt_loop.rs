//! The request shape and the re-prompt loop of `@ai` calls, on a scripted
//! in-memory transport (no socket): the first request, re-prompts with the
//! exact error, the attempt limit, refusals, cut-off and wrapped replies.
//! Every test builds its own `Client`; none reads the process environment.

use crate::support;

use std::time::Duration;

use support::{acme, Invoice, MemoryServer, Reply, ACME, EXTRACT_INVOICE, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{Client, Config, Error, Provider};

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

fn config_for(server: &MemoryServer) -> vox_runtime::ConfigBuilder {
    Config::builder(Provider::Compatible)
        .base_url(server.base_url())
        .api_key(API_KEY)
        .default_model("test-default-model")
        .request_timeout(Duration::from_secs(5))
        .max_transport_retries(2)
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
}

fn client_for(server: &MemoryServer) -> Client {
    server.client(config_for(server).build().unwrap())
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
    let server = MemoryServer::start(vec![Reply::chat(ACME)], Reply::raw(500, "unexpected")).await;
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
    let server = MemoryServer::start(vec![], Reply::chat(ACME)).await;
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
    let server = MemoryServer::start(
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
    let server = MemoryServer::start(
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
    let server = MemoryServer::start(
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
/// correction is not asked again the same way (docs/runtime.md, "What the
/// model sees"): without a temperature to step up, the call ends.
#[tokio::test]
async fn a_reply_repeated_word_for_word_ends_the_call() {
    static NO_TEMPERATURE: AiFunction =
        AiFunction::new("extract_invoice", "Extract.", &INVOICE_SCHEMA).with_max_iterations(3);
    let server = MemoryServer::start(vec![], Reply::chat("I think the vendor is ACME.")).await;
    let err = client_for(&server)
        .call_ai::<Invoice, _>(&NO_TEMPERATURE, ocr_args(), unreachable_fixture())
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
    let server = MemoryServer::start(vec![refusal], Reply::chat(ACME)).await;
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
    let server = MemoryServer::start(vec![], truncated).await;
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
    let server = MemoryServer::start(
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
