//! Each `@ai` call is one `vox.ai_call` span (function, model) whose events
//! report every attempt (number, token usage), every rejected reply and
//! every transport retry; no recorded field carries the API key.
//!
//! A small recording subscriber stands in for `tracing-subscriber`.

mod support;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use vox_runtime::{Args, Client, Config, Provider};

const API_KEY: &str = "sk-trace-5a4b3c2d1e";

/// A span or an event as recorded: its name (or message) and fields.
#[derive(Debug, Clone)]
struct Recorded {
    name: String,
    fields: HashMap<String, String>,
    /// For events: the name of the span they happened in.
    span: Option<String>,
}

#[derive(Default)]
struct Log {
    spans: HashMap<u64, Recorded>,
    events: Vec<Recorded>,
    /// Entered spans, innermost last (the test runs on one thread).
    stack: Vec<u64>,
}

#[derive(Clone, Default)]
struct Recorder {
    log: Arc<Mutex<Log>>,
    next_id: Arc<AtomicU64>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = HashMap::new();
        attributes.record(&mut Fields(&mut fields));
        self.log.lock().unwrap().spans.insert(
            id,
            Recorded {
                name: attributes.metadata().name().to_owned(),
                fields,
                span: None,
            },
        );
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(recorded) = self.log.lock().unwrap().spans.get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut recorded.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let mut log = self.log.lock().unwrap();
        let parent = event
            .parent()
            .map(Id::into_u64)
            .or_else(|| log.stack.last().copied());
        let span = parent
            .and_then(|id| log.spans.get(&id))
            .map(|s| s.name.clone());
        let name = fields.get("message").cloned().unwrap_or_default();
        log.events.push(Recorded { name, fields, span });
    }

    fn enter(&self, span: &Id) {
        self.log.lock().unwrap().stack.push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut log = self.log.lock().unwrap();
        if let Some(at) = log.stack.iter().rposition(|&id| id == span.into_u64()) {
            log.stack.remove(at);
        }
    }
}

#[test]
fn one_span_per_call_with_attempts_usage_rejections_and_retries() {
    let recorder = Recorder::default();
    let log = recorder.log.clone();
    tracing::subscriber::with_default(recorder, || {
        vox_runtime::block_on(async {
            let server = FakeServer::start(
                vec![
                    // A transport retry, then an invalid reply, then a valid one.
                    Reply::raw(503, "busy"),
                    Reply::chat(r#"{"vendor":"ACME"}"#),
                    Reply::chat(r#"{"vendor":"ACME","total":7.0}"#),
                ],
                Reply::raw(500, "unexpected"),
            )
            .await;
            let client = Client::new(
                Config::builder(Provider::Compatible)
                    .base_url(server.base_url())
                    .api_key(API_KEY)
                    .backoff(Duration::from_millis(1), Duration::from_millis(5))
                    .build()
                    .unwrap(),
            )
            .unwrap();
            let args = Args::new().arg("ocr_text", "ACME Corp").unwrap();
            let invoice: Invoice = client
                .call_ai(&EXTRACT_INVOICE, args, async { unreachable!() })
                .await
                .unwrap();
            assert_eq!(invoice.total, 7.0);
        });
    });

    let log = log.lock().unwrap();
    let calls: Vec<&Recorded> = log
        .spans
        .values()
        .filter(|s| s.name == "vox.ai_call")
        .collect();
    assert_eq!(calls.len(), 1, "one span per call: {:?}", log.spans);
    assert_eq!(calls[0].fields["function"], "extract_invoice");
    assert_eq!(calls[0].fields["model"], "gpt-4o-mini");

    let ours: Vec<&Recorded> = log
        .events
        .iter()
        .filter(|e| e.name.starts_with("vox."))
        .collect();
    let names: Vec<&str> = ours.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "vox.transport_retry",
            "vox.ai_attempt",
            "vox.ai_attempt_rejected",
            "vox.ai_attempt"
        ],
        "{ours:#?}"
    );
    for event in &ours {
        assert_eq!(
            event.span.as_deref(),
            Some("vox.ai_call"),
            "{} happens inside the call's span",
            event.name
        );
    }
    let attempts: Vec<(&str, &str, &str)> = ours
        .iter()
        .filter(|e| e.name == "vox.ai_attempt")
        .map(|e| {
            (
                e.fields["attempt"].as_str(),
                e.fields["prompt_tokens"].as_str(),
                e.fields["completion_tokens"].as_str(),
            )
        })
        .collect();
    assert_eq!(attempts, [("1", "21", "7"), ("2", "21", "7")]);
    assert!(ours[2].fields["error"].contains(r#"$: missing required field "total""#));

    // docs/runtime.md lists every span and event name users can filter on.
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/runtime.md"),
    )
    .expect("docs/runtime.md");
    for name in names.iter().copied().chain(["vox.ai_call"]) {
        assert!(
            docs.contains(&format!("`{name}`")),
            "docs/runtime.md misses {name}"
        );
    }

    let everything = format!(
        "{:?} {:?}",
        log.spans.values().collect::<Vec<_>>(),
        log.events
    );
    assert!(
        !everything.contains(API_KEY),
        "the API key leaked into tracing"
    );
}
