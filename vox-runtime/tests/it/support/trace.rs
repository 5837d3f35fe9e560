//! A small recording tracing subscriber, standing in for
//! `tracing-subscriber`: every span with its fields (including those
//! recorded later, also listed one `Span::record` at a time), and every
//! event with its fields and the span it happened in.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span or an event as recorded: its name (or message) and fields.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub name: String,
    pub fields: HashMap<String, String>,
    /// For events: the name of the span they happened in.
    pub span: Option<String>,
}

#[derive(Default)]
pub struct Log {
    pub spans: HashMap<u64, Recorded>,
    pub events: Vec<Recorded>,
    /// Fields recorded on a span after it was created, one entry per
    /// `Span::record` (named after the span).
    pub records: Vec<Recorded>,
    /// Entered spans, innermost last (tests using it run on one thread).
    stack: Vec<u64>,
}

#[derive(Clone, Default)]
pub struct Recorder {
    pub log: Arc<Mutex<Log>>,
    next_id: Arc<AtomicU64>,
}

impl Recorder {
    /// The events recorded so far.
    pub fn events(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().events.clone()
    }

    /// Forgets the spans and events recorded so far.
    pub fn clear(&self) {
        let mut log = self.log.lock().unwrap();
        log.spans.clear();
        log.events.clear();
        log.records.clear();
    }
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
        let mut log = self.log.lock().unwrap();
        // A span's `span` is its parent's name.
        let parent = match attributes.parent() {
            Some(id) => Some(id.into_u64()),
            None if attributes.is_contextual() => log.stack.last().copied(),
            None => None,
        };
        let parent = parent
            .and_then(|id| log.spans.get(&id))
            .map(|s| s.name.clone());
        log.spans.insert(
            id,
            Recorded {
                name: attributes.metadata().name().to_owned(),
                fields,
                span: parent,
            },
        );
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = HashMap::new();
        values.record(&mut Fields(&mut fields));
        let mut log = self.log.lock().unwrap();
        let name = match log.spans.get_mut(&span.into_u64()) {
            Some(recorded) => {
                recorded.fields.extend(fields.clone());
                recorded.name.clone()
            }
            None => String::new(),
        };
        log.records.push(Recorded {
            name,
            fields,
            span: None,
        });
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
