//! Per-function providers (`provider:` model prefixes) and fallbacks, with
//! one scripted server per provider: the order fallbacks are tried in, what
//! makes the runtime fall back and what does not, the error that lists
//! every provider tried, the `vox.provider_fallback` tracing event, and the
//! `fixture` provider ignoring all of it. The servers are in memory (a
//! `MemoryHub`), except for the concurrency cap and the request timeout,
//! which are tested over loopback connections.

use crate::support;

use std::time::Duration;

use support::trace::Recorder;
use support::{FakeServer, Invoice, MemoryHub, Reply, Server, ACME, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, ConfigBuilder, Error, Provider};

const OPENAI_KEY: &str = "sk-primary-1a2b3c4d5e";
const ANTHROPIC_KEY: &str = "sk-ant-fallback-6f7g8h9i";
const GEMINI_KEY: &str = "AIza-fallback-0j1k2l3m";

static PLAIN: AiFunction = AiFunction::new("plain", "", &INVOICE_SCHEMA).with_model("gpt-test");
static WITH_FALLBACK: AiFunction = AiFunction::new("with_fallback", "", &INVOICE_SCHEMA)
    .with_model("gpt-test")
    .with_fallback(&["anthropic:claude-test"]);
static NO_FALLBACK: AiFunction = AiFunction::new("no_fallback", "", &INVOICE_SCHEMA)
    .with_model("gpt-test")
    .with_fallback(&[]);
static ON_ANTHROPIC: AiFunction =
    AiFunction::new("on_anthropic", "", &INVOICE_SCHEMA).with_model("anthropic:claude-prefixed");

fn args() -> Args {
    Args::new().arg("text", "ACME").unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

fn anthropic_answer(input: &str) -> Reply {
    let input: serde_json::Value = serde_json::from_str(input).unwrap();
    Reply::json(
        200,
        &serde_json::json!({"type": "message", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": input}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 13, "output_tokens": 5}}),
    )
}

fn gemini_answer(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]}),
    )
}

fn ollama_answer(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({"message": {"role": "assistant", "content": text}, "done": true, "done_reason": "stop"}),
    )
}

/// An OpenAI-compatible primary at `primary`, Anthropic and Gemini at the
/// other servers; one try per request (no transport retries).
fn config(primary: &impl Server, anthropic: &str, gemini: &str) -> ConfigBuilder {
    Config::builder(Provider::OpenAi)
        .base_url(primary.base_url())
        .api_key(OPENAI_KEY)
        .provider_base_url(Provider::Anthropic, anthropic)
        .provider_api_key(Provider::Anthropic, ANTHROPIC_KEY)
        .provider_base_url(Provider::Gemini, gemini)
        .provider_api_key(Provider::Gemini, GEMINI_KEY)
        .max_transport_retries(0)
        .request_timeout(Duration::from_secs(5))
}

/// A base URL nothing listens on.
async fn closed_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn a_rate_limited_primary_falls_back_to_the_functions_fallback() {
    let hub = MemoryHub::new();
    let primary = hub
        .start(vec![], Reply::raw(429, r#"{"error":"slow down"}"#))
        .await;
    let anthropic = hub
        .start(vec![anthropic_answer(ACME)], Reply::raw(500, ""))
        .await;
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &hub.closed_url().await)
                .build()
                .unwrap(),
        )
        .unwrap();
    let invoice: Invoice = client
        .call_ai(&WITH_FALLBACK, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    assert_eq!(primary.request_count(), 1);
    let request = &anthropic.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(request.json()["model"], "claude-test");

    let events = recorder.events();
    let switch = events
        .iter()
        .find(|e| e.name == "vox.provider_fallback")
        .expect("a vox.provider_fallback event");
    assert_eq!(switch.fields["function"], "with_fallback");
    assert_eq!(switch.fields["from"], "openai:gpt-test");
    assert_eq!(switch.fields["to"], "anthropic:claude-test");
    assert!(switch.fields["error"].contains("429"), "{switch:?}");
    // Anthropic's usage reaches the attempt event.
    let attempt = events
        .iter()
        .find(|e| e.name == "vox.ai_attempt")
        .expect("a vox.ai_attempt event");
    assert_eq!(attempt.fields["prompt_tokens"], "13", "{attempt:?}");
    assert_eq!(attempt.fields["completion_tokens"], "5", "{attempt:?}");
    for event in &events {
        for value in event.fields.values() {
            for key in [OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY] {
                assert!(!value.contains(key), "key in tracing: {event:?}");
            }
        }
    }
}

#[tokio::test]
async fn configured_fallbacks_are_tried_in_order_past_unreachable_servers() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(503, "unavailable")).await;
    let ollama = hub
        .start(vec![ollama_answer(ACME)], Reply::raw(500, ""))
        .await;
    let anthropic = hub.start(vec![], Reply::raw(500, "unexpected")).await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &hub.closed_url().await)
                .provider_base_url(
                    Provider::Ollama,
                    ollama.base_url().trim_end_matches("/v1").to_owned(),
                )
                .fallback([
                    "gemini:gemini-test",
                    "ollama:llama3.2:3b",
                    "anthropic:never",
                ])
                .build()
                .unwrap(),
        )
        .unwrap();
    let invoice: Invoice = client
        .call_ai(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.total, 7.0);
    assert_eq!(primary.request_count(), 1);
    assert_eq!(ollama.requests()[0].json()["model"], "llama3.2:3b");
    assert_eq!(anthropic.request_count(), 0, "stops at the first success");
}

#[tokio::test]
async fn when_every_provider_fails_the_error_lists_each_and_why() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(500, "primary down")).await;
    let anthropic = hub.start(
        vec![],
        Reply::json(
            529,
            &serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    )
    .await;
    let gemini_down = hub.closed_url().await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &gemini_down)
                .fallback(["anthropic:claude-test", "gemini:gemini-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap_err();
    let Error::AllProvidersFailed { function, tried } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(function, "plain");
    let names: Vec<(&str, &str)> = tried
        .iter()
        .map(|t| (t.provider.as_str(), t.model.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("openai", "gpt-test"),
            ("anthropic", "claude-test"),
            ("gemini", "gemini-test")
        ]
    );
    assert!(matches!(*tried[0].error, Error::Http { status: 500, .. }));
    assert!(matches!(*tried[1].error, Error::Http { status: 529, .. }));
    assert!(matches!(*tried[2].error, Error::Transport { .. }));
    let text = err.to_string();
    assert!(
        text.starts_with("@ai function `plain` failed on every provider tried: openai:gpt-test (LLM server answered HTTP 500"),
        "{text}"
    );
    assert!(
        text.contains("; then anthropic:claude-test (LLM server answered HTTP 529"),
        "{text}"
    );
    for key in [OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY] {
        assert!(!text.contains(key) && !format!("{err:?}").contains(key));
    }
}

#[tokio::test]
async fn other_client_errors_and_bad_answers_do_not_fall_back() {
    let hub = MemoryHub::new();
    let primary = hub
        .start(
            vec![
                Reply::raw(400, r#"{"error":{"message":"bad request"}}"#),
                Reply::chat("not json"),
            ],
            Reply::raw(500, "unexpected"),
        )
        .await;
    let anthropic = hub.start(vec![], anthropic_answer(ACME)).await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &hub.closed_url().await)
                .build()
                .unwrap(),
        )
        .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&WITH_FALLBACK, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Http { status: 400, .. }), "{err:?}");
    let err = client
        .call_ai::<Invoice, _>(&WITH_FALLBACK, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidOutput { .. }), "{err:?}");
    assert_eq!(anthropic.request_count(), 0);
}

#[tokio::test]
async fn a_fallback_that_answers_badly_ends_the_search_and_is_reported() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(429, "limited")).await;
    let anthropic = hub
        .start(vec![], anthropic_answer(r#"{"vendor":"ACME"}"#))
        .await;
    let gemini = hub.start(vec![], gemini_answer(ACME)).await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &gemini.base_url())
                .fallback(["anthropic:claude-test", "gemini:gemini-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap_err();
    let Error::AllProvidersFailed { tried, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(tried.len(), 2);
    assert!(
        matches!(&*tried[1].error, Error::InvalidOutput { last_error, .. } if last_error.contains(r#"$: missing required field "total""#)),
        "{err:?}"
    );
    assert_eq!(gemini.request_count(), 0);
}

#[tokio::test]
async fn a_fallback_without_a_key_is_skipped_and_reported() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(503, "down")).await;
    let gemini = hub.start(vec![], gemini_answer(ACME)).await;
    let client = hub
        .client(
            Config::builder(Provider::OpenAi)
                .base_url(primary.base_url())
                .api_key(OPENAI_KEY)
                .provider_base_url(Provider::Gemini, gemini.base_url())
                .provider_api_key(Provider::Gemini, GEMINI_KEY)
                .max_transport_retries(0)
                .fallback(["anthropic:claude-test", "gemini:gemini-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let _: Invoice = client
        .call_ai(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(gemini.request_count(), 1);
    // Without any fallback left, the missing key is in the error.
    let client = hub
        .client(
            Config::builder(Provider::OpenAi)
                .base_url(primary.base_url())
                .api_key(OPENAI_KEY)
                .max_transport_retries(0)
                .fallback(["anthropic:claude-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::AllProvidersFailed { tried, .. }
            if matches!(&*tried[1].error, Error::Config(m) if m.contains("ANTHROPIC_API_KEY"))),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_empty_function_fallback_list_overrides_the_configured_one() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(503, "down")).await;
    let anthropic = hub.start(vec![], anthropic_answer(ACME)).await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &hub.closed_url().await)
                .fallback(["anthropic:claude-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&NO_FALLBACK, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Http { status: 503, .. }), "{err:?}");
    assert_eq!(anthropic.request_count(), 0);
}

#[tokio::test]
async fn a_provider_prefix_sends_the_function_to_that_provider() {
    let hub = MemoryHub::new();
    let primary = hub.start(vec![], Reply::raw(500, "unexpected")).await;
    let anthropic = hub
        .start(vec![anthropic_answer(ACME)], Reply::raw(500, ""))
        .await;
    let client = hub
        .client(
            config(&primary, &anthropic.base_url(), &hub.closed_url().await)
                .build()
                .unwrap(),
        )
        .unwrap();
    let _: Invoice = client
        .call_ai(&ON_ANTHROPIC, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(primary.request_count(), 0);
    assert_eq!(anthropic.requests()[0].json()["model"], "claude-prefixed");
}

#[tokio::test]
async fn the_fixture_provider_runs_the_body_whatever_the_prefix_or_fallbacks() {
    let hub = MemoryHub::new();
    let client = hub
        .client(
            Config::builder(Provider::Fixture)
                .fallback(["anthropic:claude-test"])
                .build()
                .unwrap(),
        )
        .unwrap();
    let fixture = || async {
        Ok(Invoice {
            vendor: "fixture".into(),
            total: 0.0,
        })
    };
    for function in [&ON_ANTHROPIC, &WITH_FALLBACK, &PLAIN] {
        let invoice: Invoice = client.call_ai(function, args(), fixture()).await.unwrap();
        assert_eq!(invoice.vendor, "fixture");
    }
    // And a function whose model says `fixture:` runs its body under a
    // network provider.
    static OFFLINE: AiFunction =
        AiFunction::new("offline", "", &INVOICE_SCHEMA).with_model("fixture:");
    let primary = hub.start(vec![], Reply::raw(500, "unexpected")).await;
    let client = hub
        .client(
            config(&primary, &hub.closed_url().await, &hub.closed_url().await)
                .build()
                .unwrap(),
        )
        .unwrap();
    let invoice: Invoice = client.call_ai(&OFFLINE, args(), fixture()).await.unwrap();
    assert_eq!(invoice.vendor, "fixture");
    assert_eq!(primary.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_concurrency_cap_covers_every_provider_of_a_client() {
    let delay = Duration::from_millis(150);
    let primary = FakeServer::start(vec![], Reply::chat(ACME).delay(delay)).await;
    let anthropic = FakeServer::start(vec![], anthropic_answer(ACME).delay(delay)).await;
    let client = Client::new(
        config(&primary, &anthropic.base_url(), &closed_url().await)
            .max_concurrent_requests(1)
            .build()
            .unwrap(),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(
        client.call_ai::<Invoice, _>(&PLAIN, args(), unreachable_fixture()),
        client.call_ai::<Invoice, _>(&ON_ANTHROPIC, args(), unreachable_fixture()),
    );
    a.unwrap();
    b.unwrap();
    assert_eq!((primary.request_count(), anthropic.request_count()), (1, 1));
    // One after the other: the second waited for the first's slot.
    assert!(started.elapsed() >= delay * 2, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_provider_that_does_not_answer_in_time_is_a_timeout_and_falls_back() {
    let primary = FakeServer::start(vec![], Reply::chat(ACME).delay(Duration::from_secs(2))).await;
    let gemini = FakeServer::start(vec![], gemini_answer(ACME)).await;
    let client = Client::new(
        config(&primary, &closed_url().await, &gemini.base_url())
            .request_timeout(Duration::from_millis(100))
            .fallback(["gemini:gemini-test"])
            .build()
            .unwrap(),
    )
    .unwrap();
    let _: Invoice = client
        .call_ai(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(gemini.request_count(), 1);
    let client = Client::new(
        config(&primary, &closed_url().await, &gemini.base_url())
            .request_timeout(Duration::from_millis(100))
            .build()
            .unwrap(),
    )
    .unwrap();
    let err = client
        .call_ai::<Invoice, _>(&PLAIN, args(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: vox_runtime::TransportErrorKind::Timeout,
                ..
            }
        ),
        "{err:?}"
    );
}
