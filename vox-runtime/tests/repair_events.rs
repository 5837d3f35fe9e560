//! A repaired reply is one `vox.ai_reply_repaired` event naming its
//! repairs, and the `vox.ai_call` span's `repairs` field counts them
//! (docs/runtime.md, "Tracing"). Its own test binary: the recording
//! subscriber is the global one, so no other test's thread can leave the
//! call's span disabled.

mod sloppy;
mod support;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sloppy::{client, corpus, expected, Invoice, Repaired, EXTRACT};
use support::{FakeServer, Reply};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use vox_runtime::{Args, Error};

/// Records the `vox.ai_reply_repaired` events and the `repairs` field of
/// `vox.ai_call` spans.
#[derive(Clone, Default)]
struct Recorder {
    events: Arc<Mutex<Vec<HashMap<String, String>>>>,
    span_repairs: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut fields = HashMap::new();
        values.record(&mut Fields(&mut fields));
        if let Some(n) = fields.remove("repairs") {
            self.span_repairs.lock().unwrap().push(n);
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        if fields.get("message").map(String::as_str) == Some("vox.ai_reply_repaired") {
            self.events.lock().unwrap().push(fields);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn each_repair_is_named_in_one_event_and_counted_on_the_span() {
    let recorder = Recorder::default();
    tracing::subscriber::set_global_default(recorder.clone()).unwrap();
    for case in corpus() {
        let Repaired(names) = case.outcome else {
            continue;
        };
        recorder.events.lock().unwrap().clear();
        recorder.span_repairs.lock().unwrap().clear();
        let server = FakeServer::start(vec![case.reply.clone()], Reply::raw(500, "")).await;
        let invoice = client(&server, true)
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await
            .unwrap_or_else(|e| panic!("{} ({names}): {e}", case.name));
        assert_eq!(invoice, expected(), "{}", case.name);
        let events = recorder.events.lock().unwrap().clone();
        let spans = recorder.span_repairs.lock().unwrap().clone();
        if names.is_empty() {
            // A code fence is not a repair: nothing is reported.
            assert!(
                events.is_empty() && spans.is_empty(),
                "{}: {events:?}",
                case.name
            );
        } else {
            let count = names.split(',').count().to_string();
            assert_eq!(events.len(), 1, "{}: {events:?}", case.name);
            assert_eq!(events[0]["repairs"], names, "{}", case.name);
            assert_eq!(events[0]["count"], count, "{}", case.name);
            assert_eq!(events[0]["attempt"], "1", "{}", case.name);
            assert_eq!(spans, [count], "{}", case.name);
        }
        // Strict mode re-prompts every one of them but the fences.
        let server = FakeServer::start(vec![case.reply.clone()], Reply::raw(500, "")).await;
        let strict = client(&server, false)
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await;
        assert_eq!(
            strict.is_ok(),
            names.is_empty(),
            "{}: {strict:?}",
            case.name
        );
    }
    // docs/runtime.md lists the event and every repair name.
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/runtime.md"),
    )
    .unwrap();
    assert!(docs.contains("`vox.ai_reply_repaired`"));
    for case in corpus() {
        if let Repaired(names) = case.outcome {
            for name in names.split(',').filter(|n| !n.is_empty()) {
                assert!(
                    docs.contains(&format!("`{name}`")),
                    "docs/runtime.md misses {name}"
                );
            }
        }
    }
}
