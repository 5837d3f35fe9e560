//! Sloppy first replies from a scripted in-memory transport: which are
//! right on the first reply (repaired), which need a re-prompt, and that
//! none is ever accepted with a wrong value (docs/runtime.md, "Repairs"
//! and "Corrections").
//!
//! The corpus is run twice, with repairs on (the default) and off
//! (`VOX_LLM_REPAIR=off`), and prints both counts.

use crate::sloppy;
use crate::support;

use sloppy::{
    client, corpus, correction, expected, Invoice, Repaired, Reprompted, COUNT, EXTRACT, GOOD,
};
use support::{MemoryServer, Reply};
use vox_runtime::__private::Args;
use vox_runtime::Error;

/// Runs the corpus; returns (right on the first reply, after a re-prompt).
async fn run(repair: bool) -> (usize, usize, Vec<String>) {
    let (mut first, mut second) = (0, 0);
    let mut failures = Vec::new();
    for case in corpus() {
        let server = MemoryServer::start(vec![case.reply.clone()], Reply::chat(GOOD)).await;
        let result = client(&server, repair)
            .call_ai::<Invoice, _>(&EXTRACT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await;
        // Never a wrong value: every case ends with exactly the invoice.
        match &result {
            Ok(invoice) if *invoice == expected() => {}
            other => failures.push(format!("{}: accepted {other:?}", case.name)),
        }
        let correction = correction(&server);
        match server.request_count() {
            1 => first += 1,
            2 => second += 1,
            n => failures.push(format!("{}: {n} requests", case.name)),
        }
        if !repair {
            continue;
        }
        match case.outcome {
            Repaired(_) if server.request_count() != 1 => failures.push(format!(
                "{}: not repaired; correction: {correction:?}",
                case.name
            )),
            Reprompted(text) => match &correction {
                Some(c) if c.contains(text) => {
                    // serde's position of a syntax error stays; its type
                    // names never reach the model.
                    let schema_problem = !c.contains("not valid JSON");
                    for rust in ["i64", "f64", "internally tagged", "struct "]
                        .into_iter()
                        .chain(schema_problem.then_some("line 1 column"))
                    {
                        if c.contains(rust) && !text.contains(rust) {
                            failures.push(format!("{}: Rust/serde words in {c:?}", case.name));
                        }
                    }
                }
                other => failures.push(format!(
                    "{}: correction {other:?} lacks {text:?}",
                    case.name
                )),
            },
            Repaired(_) => {}
        }
    }
    (first, second, failures)
}

#[tokio::test]
async fn sloppy_first_replies_are_repaired_or_reprompted_never_accepted_wrong() {
    let cases = corpus();
    let repairable = cases
        .iter()
        .filter(|c| matches!(c.outcome, Repaired(_)))
        .count();
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let (first, second, failures) = run(true).await;
    let (first_strict, second_strict, strict_failures) = run(false).await;
    eprintln!(
        "sloppy-reply corpus, {} cases: repairs on: {first} right on the first reply, {second} after a \
         re-prompt; repairs off: {first_strict} first, {second_strict} after a re-prompt; \
         0 accepted with a wrong value",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(strict_failures.is_empty(), "{}", strict_failures.join("\n"));
    assert_eq!((first, second), (repairable, cases.len() - repairable));
    // Without repairs only the code fences pass on the first reply.
    assert_eq!((first_strict, second_strict), (2, cases.len() - 2));
}

#[tokio::test]
async fn wrapped_values_are_repaired_under_value() {
    for (reply, want) in [
        (r#"{"value": "7"}"#, Some(7)),
        (r#"Count: {"value": 7.0,}"#, Some(7)),
        (r#"{"value": "7 items"}"#, None),
        // A bare value of the inner type is wrapped (`bare_value`).
        ("7", Some(7)),
        ("7.0", Some(7)),
        (r#""7 items""#, None),
        (r#"{"count": 7}"#, None),
    ] {
        let server =
            MemoryServer::start(vec![Reply::chat(reply)], Reply::chat(r#"{"value": 1}"#)).await;
        let n: i64 = client(&server, true)
            .call_ai(&COUNT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await
            .unwrap();
        match want {
            Some(v) => assert_eq!((n, server.request_count()), (v, 1), "{reply}"),
            None => assert_eq!((n, server.request_count()), (1, 2), "{reply}"),
        }
    }
    // A bare value that does not fit is named under `value`, where it goes.
    let server =
        MemoryServer::start(vec![Reply::chat("7.5")], Reply::chat(r#"{"value": 1}"#)).await;
    let _: i64 = client(&server, true)
        .call_ai(&COUNT, Args::new(), async { Ok(0) })
        .await
        .unwrap();
    let c = correction(&server).unwrap();
    assert!(
        c.contains("$.value: expected an integer, found the number 7.5"),
        "{c}"
    );
}

#[tokio::test]
async fn the_last_error_lists_every_problem_by_path() {
    let bad = r#"{"lines":[{"description":"Bolts","quantity":"two","unit_price":"3.5 EUR"}],"status":"OPEN","due_date":5,"note":"x"}"#;
    let server = MemoryServer::start(vec![], Reply::chat(bad)).await;
    let err = client(&server, true)
        .call_ai::<Invoice, _>(&EXTRACT, Args::new(), async {
            Err(Error::Config("the fixture must not run".into()))
        })
        .await
        .unwrap_err();
    let Error::InvalidOutput {
        attempts: 2,
        last_error,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        last_error,
        "the reply does not match the schema (6 problems):\n\
         - $: missing required field \"vendor\"\n\
         - $.lines[0].quantity: expected an integer, found the string \"two\"\n\
         - $.lines[0].unit_price: expected a number, found the string \"3.5 EUR\"\n\
         - $.status: expected one of {\"kind\":\"Paid\"} or {\"kind\":\"Open\",\"days_overdue\":<integer>}, found \"OPEN\"\n\
         - $.due_date: expected a string or null, found the number 5\n\
         - $: unexpected field \"note\" (the fields are \"vendor\", \"lines\", \"status\", \"due_date\")"
    );
    // The same text was the correction of the first attempt.
    assert!(correction(&server).unwrap().contains(last_error.as_str()));
}

/// Repairs read each provider's answer the same way: Anthropic's forced
/// tool input, Gemini's text parts and Ollama's message content.
#[tokio::test]
async fn repairs_apply_to_every_providers_answer() {
    use vox_runtime::{Config, Provider};
    let sloppy: serde_json::Value = serde_json::from_str(
        &GOOD
            .replace(r#""quantity":2"#, r#""quantity":"2""#)
            .replace(r#""kind":"Open""#, r#""kind":"open""#),
    )
    .unwrap();
    let sloppy_text = format!("Here you go: {sloppy}");
    let replies = [
        (
            Provider::Anthropic,
            Reply::json(
                200,
                &serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "extract_invoice",
                        "input": sloppy}], "stop_reason": "tool_use"}),
            ),
        ),
        (
            Provider::Gemini,
            Reply::json(
                200,
                &serde_json::json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"text": sloppy_text}]}, "finishReason": "STOP"}]}),
            ),
        ),
        (
            Provider::Ollama,
            Reply::json(
                200,
                &serde_json::json!({"model": "m", "message": {"role": "assistant",
                    "content": sloppy_text}, "done": true, "done_reason": "stop"}),
            ),
        ),
    ];
    for (provider, reply) in replies {
        let server = MemoryServer::start(vec![reply], Reply::raw(500, "")).await;
        let client = server.client(
            Config::builder(provider)
                .base_url(server.base_url())
                .api_key("sk-repair-test-1234")
                .max_transport_retries(0)
                .build()
                .unwrap(),
        );
        let invoice: Invoice = client
            .call_ai(&EXTRACT, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await
            .unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(invoice, expected(), "{provider}");
        assert_eq!(server.request_count(), 1, "{provider}");
    }
}
