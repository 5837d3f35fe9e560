//! No provider's API key reaches an error, a `Debug` print or a tracing
//! event, whatever the provider: a server that echoes the key header it was
//! sent, in an error answer retried and then given up on, and in a reply
//! the model "wrote".

use crate::support;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

static EXTRACT: AiFunction = AiFunction::new("extract", "", &INVOICE_SCHEMA).with_max_iterations(2);

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

/// A reply of `provider`'s API whose text is `text`.
fn answer(provider: Provider, text: &str) -> Reply {
    match provider {
        Provider::Anthropic => Reply::json(
            200,
            &serde_json::json!({"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}),
        ),
        Provider::Gemini => Reply::json(
            200,
            &serde_json::json!({"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]}),
        ),
        Provider::Ollama => Reply::json(
            200,
            &serde_json::json!({"message": {"role": "assistant", "content": text}, "done_reason": "stop"}),
        ),
        _ => Reply::chat(text),
    }
}

#[tokio::test]
async fn no_key_in_errors_debug_or_tracing_for_any_provider() {
    for (provider, key, header) in [
        (
            Provider::OpenAi,
            "sk-openai-key-0123456789",
            "authorization",
        ),
        (
            Provider::OpenRouter,
            "sk-or-key-0123456789",
            "authorization",
        ),
        (Provider::Anthropic, "sk-ant-key-0123456789", "x-api-key"),
        (
            Provider::Gemini,
            "AIza-gemini-key-0123456789",
            "x-goog-api-key",
        ),
        (
            Provider::Ollama,
            "ollama-proxy-key-0123456789",
            "authorization",
        ),
        (
            Provider::Compatible,
            "local-key-0123456789",
            "authorization",
        ),
    ] {
        let server = FakeServer::start(
            vec![
                Reply::raw(503, "").echo_header(header),
                Reply::raw(503, "").echo_header(header),
                answer(provider, &format!("my key is {key}")),
                answer(provider, &format!("still {key}")),
            ],
            Reply::raw(500, "unexpected"),
        )
        .await;
        let recorder = Recorder::default();
        let _guard = tracing::subscriber::set_default(recorder.clone());
        let client = Client::new(
            Config::builder(provider)
                .base_url(server.base_url())
                .api_key(key)
                .max_transport_retries(1)
                .backoff(Duration::from_millis(1), Duration::from_millis(2))
                .build()
                .unwrap(),
        )
        .unwrap();
        let http = client
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
            .await
            .unwrap_err();
        assert!(
            matches!(&http, Error::Http { status: 503, body_excerpt } if body_excerpt.contains("[REDACTED]")),
            "{provider}: {http:?}"
        );
        let invalid = client
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
            .await
            .unwrap_err();
        assert!(
            matches!(&invalid, Error::InvalidOutput { last_reply, .. } if last_reply == "still [REDACTED]"),
            "{provider}: {invalid:?}"
        );
        // The key was sent, and echoed, in the header the provider expects.
        let echoed = server.requests()[0].header(header).unwrap().to_owned();
        assert!(echoed.contains(key), "{provider}: {echoed}");
        let events = recorder.events();
        assert!(
            events.iter().any(|e| e.contains("vox.transport_retry")),
            "{provider}: {events:?}"
        );
        for text in [
            http.to_string(),
            format!("{http:?}"),
            invalid.to_string(),
            format!("{invalid:?}"),
            format!("{client:?}"),
            format!("{:?}", client.config()),
        ]
        .into_iter()
        .chain(events)
        {
            assert!(!text.contains(key), "{provider}: key leaked: {text}");
        }
    }
}

/// Records every event and span as one line of text.
#[derive(Clone, Default)]
struct Recorder {
    lines: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

impl Recorder {
    fn events(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

struct Line<'a>(&'a mut HashMap<String, String>);

impl Visit for Line<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut fields = HashMap::new();
        attributes.record(&mut Line(&mut fields));
        self.lines.lock().unwrap().push(format!("{fields:?}"));
        Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut fields = HashMap::new();
        values.record(&mut Line(&mut fields));
        self.lines.lock().unwrap().push(format!("{fields:?}"));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Line(&mut fields));
        self.lines.lock().unwrap().push(format!("{fields:?}"));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
