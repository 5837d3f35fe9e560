//! `compatible` servers that take the schema differently: the `json_object`
//! dialect llama-cpp-python's OpenAI-compatible server accepts, and a 5xx
//! that is really a request-validation error (as that server sends) not
//! retried for nothing.

use crate::support;

use std::time::Duration;

use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider, ResponseFormat};

static EXTRACT: AiFunction = AiFunction::new("extract", "", &INVOICE_SCHEMA).with_model("local");

fn client_for(server: &FakeServer, format: ResponseFormat) -> Client {
    Client::new(
        Config::builder(Provider::Compatible)
            .base_url(server.base_url())
            .response_format(format)
            .max_transport_retries(3)
            .backoff(Duration::from_millis(1), Duration::from_millis(2))
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn args() -> Args {
    Args::new()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

#[tokio::test]
async fn the_json_object_dialect_puts_the_schema_beside_the_type() {
    let server = FakeServer::start(
        vec![Reply::chat(r#"{"vendor":"ACME","total":7.0}"#)],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let _: Invoice = client_for(&server, ResponseFormat::JsonObject)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    let body = server.requests()[0].json();
    assert_eq!(
        body["response_format"],
        serde_json::json!({"type": "json_object", "schema": INVOICE_SCHEMA.value()})
    );
    assert_eq!(body["max_tokens"], vox_runtime::DEFAULT_MAX_TOKENS);
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn a_500_that_is_a_validation_error_is_not_retried() {
    // What llama-cpp-python's server answers to `"type": "json_schema"`.
    let rejected = Reply::json(
        500,
        &serde_json::json!({"error": {"message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object'", "type": "internal_server_error"}}),
    );
    let server = FakeServer::start(vec![rejected], Reply::raw(500, "unexpected")).await;
    let err = client_for(&server, ResponseFormat::JsonSchema)
        .call_ai::<Invoice, _>(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 1, "not retried");
    assert!(
        matches!(&err, Error::Http { status: 500, body_excerpt } if body_excerpt.contains("validation error")),
        "{err:?}"
    );
    // An ordinary 500 still is.
    let server = FakeServer::start(
        vec![
            Reply::raw(500, "out of memory"),
            Reply::chat(r#"{"vendor":"ACME","total":7.0}"#),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let _: Invoice = client_for(&server, ResponseFormat::JsonSchema)
        .call_ai(&EXTRACT, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(server.request_count(), 2);
}
