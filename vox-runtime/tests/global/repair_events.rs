//! A repaired reply is one `vox.ai_reply_repaired` event naming its
//! repairs, and the `vox.ai_call` span's `repairs` field counts them
//! (docs/runtime.md, "Tracing"). In the `global` test binary, alone: the
//! recording subscriber is the global one, so no other test's thread can
//! leave the call's span disabled.

use crate::{sloppy, support};

use std::collections::HashMap;

use sloppy::{client, corpus, expected, Invoice, Repaired, EXTRACT};
use support::trace::Recorder;
use support::{MemoryServer, Reply};
use vox_runtime::__private::Args;
use vox_runtime::Error;

#[tokio::test]
async fn each_repair_is_named_in_one_event_and_counted_on_the_span() {
    let (_exclusive, recorder) = crate::exclusive().await;
    for case in corpus() {
        let Repaired(names) = case.outcome else {
            continue;
        };
        recorder.clear();
        let server = MemoryServer::start(vec![case.reply.clone()], Reply::raw(500, "")).await;
        let invoice = client(&server, true)
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await
            .unwrap_or_else(|e| panic!("{} ({names}): {e}", case.name));
        assert_eq!(invoice, expected(), "{}", case.name);
        let (events, spans) = repaired(&recorder);
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
        let server = MemoryServer::start(vec![case.reply.clone()], Reply::raw(500, "")).await;
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

/// The fields of the `vox.ai_reply_repaired` events, and every `repairs`
/// value recorded on a span.
fn repaired(recorder: &Recorder) -> (Vec<HashMap<String, String>>, Vec<String>) {
    let log = recorder.log.lock().unwrap();
    let events = log
        .events
        .iter()
        .filter(|e| e.name == "vox.ai_reply_repaired")
        .map(|e| e.fields.clone())
        .collect();
    let spans = log
        .records
        .iter()
        .filter_map(|r| r.fields.get("repairs").cloned())
        .collect();
    (events, spans)
}
