//! Each `@ai` call is one `vox.ai_call` span (function, model) holding one
//! `vox.ai_request` span per attempt, whose events report the attempt
//! (number, token usage), its rejected reply and its transport retries; no
//! recorded field carries the API key.
//!
//! A small recording subscriber (tests/support/trace.rs) stands in for
//! `tracing-subscriber`.

use crate::support;

use std::time::Duration;

use support::trace::{Recorded, Recorder};
use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE};
use vox_runtime::__private::Args;
use vox_runtime::{Client, Config, Provider};

const API_KEY: &str = "sk-trace-5a4b3c2d1e";

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
    assert_eq!(calls[0].fields["vox.attempts"], "2");
    assert_eq!(calls[0].fields["vox.transport_retries"], "1");
    assert_eq!(calls[0].fields["gen_ai.usage.input_tokens"], "42");
    assert_eq!(calls[0].fields["gen_ai.usage.output_tokens"], "14");
    let mut requests: Vec<&Recorded> = log
        .spans
        .values()
        .filter(|s| s.name == "vox.ai_request")
        .collect();
    requests.sort_by_key(|s| s.fields["vox.attempt"].clone());
    assert_eq!(requests.len(), 2, "one span per attempt: {:?}", log.spans);
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.span.as_deref(), Some("vox.ai_call"), "{r:?}");
        assert_eq!(r.fields["vox.attempt"], (i + 1).to_string());
        assert_eq!(r.fields["otel.name"], "chat gpt-4o-mini");
        assert_eq!(r.fields["gen_ai.usage.input_tokens"], "21");
    }
    assert!(requests[0].fields["vox.rejected"].contains("total"));
    assert!(!requests[1].fields.contains_key("vox.rejected"));

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
            Some("vox.ai_request"),
            "{} happens inside its attempt's span",
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
    for name in names
        .iter()
        .copied()
        .chain(["vox.ai_call", "vox.ai_request"])
    {
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
