//! Text a hostile server sends — a 6 MiB refusal, a `finishReason` that
//! forges log lines, an error body full of terminal escapes — reaches
//! errors, `Debug` prints and tracing events bounded (a few hundred
//! characters and a "… (N more bytes)" marker) and with its control
//! characters escaped, whatever the provider; and an Ollama reply that says
//! it is not done is not taken as a complete answer.

use crate::support;

use std::time::Duration;

use support::trace::Recorder;
use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

static EXTRACT: AiFunction = AiFunction::new("extract", "", &INVOICE_SCHEMA).with_max_iterations(2);

/// What a hostile server puts in front of its megabytes: a line break
/// followed by a forged log line, and escape sequences that set the
/// terminal's title, clear the screen and ring the bell.
const FORGERY: &str =
    "SAFETY\n2026-12-01T00:00:00Z  INFO vox: all good\r\x1b]0;pwned\x07\x1b[2J\x1b[H\u{202e}";

/// The forgery followed by 6 MiB of text.
fn huge() -> String {
    let mut text = FORGERY.to_owned();
    text.push_str(&"A".repeat(6 * 1024 * 1024));
    text
}

/// Longest text any error, `Debug` print or event field may reach here.
const SHOWN_LIMIT: usize = 16 * 1024;

fn client(provider: Provider, server: &FakeServer) -> Client {
    let base = match provider {
        Provider::Ollama => server.base_url().trim_end_matches("/v1").to_owned(),
        _ => server.base_url(),
    };
    Client::new(
        Config::builder(provider)
            .base_url(base)
            .api_key("sk-server-text-0123456789")
            .request_timeout(Duration::from_secs(20))
            .max_transport_retries(1)
            .backoff(Duration::from_millis(1), Duration::from_millis(2))
            .build()
            .unwrap(),
    )
    .unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

/// A text is fit to show: bounded, no raw line break nor any other control
/// character (nor a bidi override), and the forged line, if present, is on
/// the line of what precedes it.
fn assert_fit_to_show(what: &str, text: &str) {
    assert!(
        text.len() <= SHOWN_LIMIT,
        "{what}: {} bytes: {}…",
        text.len(),
        text.chars().take(300).collect::<String>()
    );
    if let Some(bad) = text
        .chars()
        .find(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
    {
        let start: String = text.chars().take(300).collect();
        panic!("{what}: raw {bad:?} in {start:?}…");
    }
    for line in text.lines() {
        assert!(
            !line.starts_with("2026-12-01T00:00:00Z"),
            "{what}: a forged log line: {:?}",
            text.chars().take(300).collect::<String>()
        );
    }
}

/// Runs `call` under a recording subscriber and checks the error it
/// returns, its `Debug` and every recorded event field.
fn attack(provider: Provider, script: Vec<Reply>) -> Error {
    let recorder = Recorder::default();
    let log = recorder.log.clone();
    let err = tracing::subscriber::with_default(recorder, || {
        vox_runtime::block_on(async {
            let server = FakeServer::start(script, Reply::raw(500, "unexpected")).await;
            client(provider, &server)
                .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
                .await
                .unwrap_err()
        })
    });
    assert_fit_to_show(&format!("{provider}: Display"), &err.to_string());
    assert_fit_to_show(&format!("{provider}: Debug"), &format!("{err:?}"));
    if let Error::InvalidOutput {
        last_error,
        last_reply,
        ..
    } = &err
    {
        assert_fit_to_show(&format!("{provider}: last_error"), last_error);
        assert_fit_to_show(&format!("{provider}: last_reply"), last_reply);
    }
    let log = log.lock().unwrap();
    for event in &log.events {
        for (name, value) in &event.fields {
            assert_fit_to_show(&format!("{provider}: {} {name}", event.name), value);
        }
    }
    assert!(
        log.events
            .iter()
            .any(|e| e.name == "vox.ai_attempt_rejected")
            || !matches!(err, Error::InvalidOutput { .. }),
        "{provider}: the rejection was traced"
    );
    err
}

fn two(reply: Reply) -> Vec<Reply> {
    vec![reply.clone(), reply]
}

#[test]
fn a_six_mib_refusal_is_bounded_and_escaped() {
    let err = attack(
        Provider::OpenAi,
        two(Reply::choice(serde_json::json!({
            "index": 0,
            "message": {"role": "assistant", "content": null, "refusal": huge()},
            "finish_reason": "stop"
        }))),
    );
    let Error::InvalidOutput { last_error, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        last_error.starts_with("the model refused: SAFETY\\n2026-12-01T00:00:00Z  INFO vox: all good\\r\\u{1b}]0;pwned\\u{7}"),
        "{last_error}"
    );
    assert!(last_error.contains(" more bytes)"), "{last_error}");
    // 6,291,620 bytes before: now the refusal's first 500 characters.
    assert!(err.to_string().len() < 1024, "{}", err.to_string().len());
}

#[test]
fn an_anthropic_refusal_is_bounded_and_escaped() {
    let err = attack(
        Provider::Anthropic,
        two(Reply::json(
            200,
            &serde_json::json!({"content": [{"type": "text", "text": huge()}], "stop_reason": "refusal"}),
        )),
    );
    assert!(err.to_string().contains("more bytes)"), "{err}");
}

#[test]
fn a_forging_gemini_finish_reason_is_bounded_and_escaped() {
    let err = attack(
        Provider::Gemini,
        two(Reply::json(
            200,
            &serde_json::json!({"candidates": [{"content": {"parts": [{"text": "{}"}]}, "finishReason": huge()}]}),
        )),
    );
    let Error::InvalidOutput { last_error, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        last_error.starts_with("the reply was blocked (finishReason = SAFETY\\n2026"),
        "{last_error}"
    );
}

#[test]
fn a_forging_gemini_block_reason_is_bounded_and_escaped() {
    attack(
        Provider::Gemini,
        two(Reply::json(
            200,
            &serde_json::json!({"promptFeedback": {"blockReason": huge()}}),
        )),
    );
}

/// Error bodies, with raw escape bytes and line breaks (they need not be
/// JSON), for every provider; retried once, so the retry event carries
/// them too.
#[test]
fn error_bodies_are_escaped_for_every_provider() {
    for provider in [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Compatible,
    ] {
        let body = format!(r#"{{"error":"{FORGERY}"}}"#);
        let err = attack(provider, two(Reply::raw(503, body)));
        let Error::Http { body_excerpt, .. } = &err else {
            panic!("{provider}: {err:?}")
        };
        assert!(
            body_excerpt.contains(
                r#"SAFETY\n2026-12-01T00:00:00Z  INFO vox: all good\r\u{1b}]0;pwned\u{7}\u{1b}[2J"#
            ),
            "{provider}: {body_excerpt}"
        );
    }
}

/// A model reply full of escapes is kept in `last_reply` escaped.
#[test]
fn the_last_reply_is_escaped() {
    let err = attack(Provider::Compatible, two(Reply::chat(&huge())));
    let Error::InvalidOutput { last_reply, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(last_reply.starts_with("SAFETY\\n2026"), "{last_reply}");
}

fn ollama(content: &str, done: bool) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "model": "llama3.2", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": content},
            "done": done, "done_reason": if done { "stop" } else { "" }
        }),
    )
}

/// `"done": false` is a reply cut short, like `done_reason: "length"`:
/// rejected, and the next attempt asked for.
#[tokio::test]
async fn an_ollama_reply_that_is_not_done_is_not_an_answer() {
    let server = FakeServer::start(
        vec![
            ollama(r#"{"vendor":"EVIL","total":0}"#, false),
            ollama(r#"{"vendor":"ACME","total":7.0}"#, true),
        ],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let invoice: Invoice = client(Provider::Ollama, &server)
        .call_ai(&EXTRACT, Args::new(), unreachable_fixture())
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    assert_eq!(server.request_count(), 2);

    let server = FakeServer::start(
        two(ollama(r#"{"vendor":"EVIL","total":0}"#, false)),
        Reply::raw(500, "unexpected"),
    )
    .await;
    let err = client(Provider::Ollama, &server)
        .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOutput { attempts: 2, last_error, .. }
            if last_error.contains("truncated (done = false)")),
        "{err:?}"
    );
}

/// A check's problem quoting the reply (as `@ai(check = …)` functions do)
/// is one line of the last error, whatever the reply's vendor holds.
#[tokio::test]
async fn a_check_quoting_the_reply_cannot_forge_lines() {
    let reply = serde_json::json!({"vendor": FORGERY, "total": 1.0}).to_string();
    let server = FakeServer::start(two(Reply::chat(&reply)), Reply::raw(500, "unexpected")).await;
    let err = client(Provider::Compatible, &server)
        .call_ai_checked::<Invoice, _, _>(
            &EXTRACT,
            Args::new(),
            unreachable_fixture(),
            |inv: &Invoice| vec![format!("vendor {} is not on the list", inv.vendor)],
        )
        .await
        .unwrap_err();
    let Error::InvalidOutput { last_error, .. } = &err else {
        panic!("{err:?}")
    };
    assert_fit_to_show("last_error", last_error);
    assert_eq!(
        last_error.lines().collect::<Vec<_>>(),
        [
            "the reply fits the schema, but the function's check rejected it:",
            "- vendor SAFETY\\n2026-12-01T00:00:00Z  INFO vox: all good\\r\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{1b}[H\\u{202e} is not on the list"
        ]
    );
}
