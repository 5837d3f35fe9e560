//! Cassettes (docs/runtime.md, "Cassettes"): record against a loopback
//! server, replay with it stopped; a miss of each kind; concurrent
//! recording; a corrupted line; byte-identical re-recording; no key in any
//! cassette; and no request from a test build without a cassette.

use crate::support;

use std::path::{Path, PathBuf};

use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{CassetteField, CassetteMode, Client, Config, Error, Provider};

const KEY: &str = "sk-cassette-secret-0123456789abcdef";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vox-cassettes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn client(base_url: &str, dir: &Path, mode: CassetteMode) -> Client {
    let config = Config::builder(Provider::OpenAi)
        .base_url(base_url)
        .api_key(KEY)
        .max_transport_retries(0)
        .cassette(dir)
        .cassette_mode(mode)
        .build()
        .unwrap();
    Client::new(config).unwrap()
}

fn args(text: &str) -> Args {
    Args::new().arg("ocr_text", text).unwrap()
}

async fn extract(client: &Client, function: &AiFunction, text: &str) -> Result<Invoice, Error> {
    client
        .call_ai(function, args(text), async {
            panic!("the fixture body must not run")
        })
        .await
}

fn cassette_file(dir: &Path) -> PathBuf {
    dir.join("extract_invoice.jsonl")
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(cassette_file(dir))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A reply missing `total`, then a valid one: a call of two attempts.
fn two_attempts() -> Vec<Reply> {
    vec![
        Reply::chat(r#"{"vendor":"ACME"}"#),
        Reply::chat(r#"{"vendor":"ACME","total":12.5}"#),
    ]
}

#[tokio::test]
async fn recorded_replies_replay_with_the_server_stopped_re_prompts_included() {
    let dir = temp_dir("replay");
    let server = FakeServer::start(two_attempts(), Reply::raw(500, "unexpected")).await;
    let url = server.base_url();
    let recording = client(&url, &dir, CassetteMode::Record);
    let live = extract(&recording, &EXTRACT_INVOICE, "ACME 12.50")
        .await
        .unwrap();
    assert_eq!(server.request_count(), 2);
    drop(server);

    let written = lines(&dir);
    assert_eq!(written.len(), 2, "one entry per request: {written:#?}");
    let entries: Vec<serde_json::Value> = written
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Sorted by key; the second attempt's entry carries the conversation.
    assert!(entries[0]["key"].as_str() < entries[1]["key"].as_str());
    let retry = entries
        .iter()
        .find(|e| e.get("conversation").is_some())
        .expect("an entry for the re-prompt");
    assert_eq!(retry["conversation"][0]["reply"], r#"{"vendor":"ACME"}"#);
    assert!(retry["conversation"][0]["correction"]
        .as_str()
        .unwrap()
        .contains("total"));
    for entry in &entries {
        assert_eq!(entry["function"], "extract_invoice");
        assert_eq!(entry["model"], "gpt-4o-mini");
        assert_eq!(
            entry["arguments"],
            serde_json::json!({"ocr_text": "ACME 12.50"})
        );
        assert_eq!(entry["reply"]["finish"], "stop");
        assert_eq!(entry["reply"]["usage"]["prompt_tokens"], 21);
    }

    // The server is gone: a request would fail to connect.
    let replaying = client(&url, &dir, CassetteMode::Replay);
    let replayed = extract(&replaying, &EXTRACT_INVOICE, "ACME 12.50")
        .await
        .unwrap();
    assert_eq!(replayed, live);
    // Auto replays too, and writes nothing.
    let before = std::fs::read(cassette_file(&dir)).unwrap();
    let auto = client(&url, &dir, CassetteMode::Auto);
    assert_eq!(
        extract(&auto, &EXTRACT_INVOICE, "ACME 12.50")
            .await
            .unwrap(),
        live
    );
    assert_eq!(std::fs::read(cassette_file(&dir)).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn replay_needs_no_provider_and_no_key() {
    let dir = temp_dir("no-provider");
    let server = FakeServer::start(two_attempts(), Reply::raw(500, "unexpected")).await;
    let recording = client(&server.base_url(), &dir, CassetteMode::Record);
    let live = extract(&recording, &EXTRACT_INVOICE, "ACME").await.unwrap();
    drop(server);
    // What CI sees: no provider variable, no key, `CI` set.
    let dir_text = dir.display().to_string();
    let config = Config::from_lookup(&|name| match name {
        "VOX_LLM_CASSETTE" => Some(dir_text.clone()),
        "CI" => Some("true".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(config.cassette_mode(), Some(CassetteMode::Replay));
    let client = Client::new(config).unwrap();
    assert_eq!(
        extract(&client, &EXTRACT_INVOICE, "ACME").await.unwrap(),
        live
    );
    let miss = extract(&client, &EXTRACT_INVOICE, "Globex")
        .await
        .unwrap_err();
    assert!(matches!(&miss, Error::CassetteMiss { .. }), "{miss}");
    // Under the fixture provider too (what an offline test run sets): the
    // cassette replays, and a miss is not recorded.
    let config = Config::builder(Provider::Fixture)
        .cassette(&dir)
        .cassette_mode(CassetteMode::Auto)
        .build()
        .unwrap();
    let client = Client::new(config).unwrap();
    assert_eq!(
        extract(&client, &EXTRACT_INVOICE, "ACME").await.unwrap(),
        live
    );
    let miss = extract(&client, &EXTRACT_INVOICE, "Globex")
        .await
        .unwrap_err();
    assert!(
        miss.to_string().contains("no provider is configured"),
        "{miss}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

static OTHER_SCHEMA: OutputSchema = OutputSchema::new(
    "Invoice",
    r#"{"type":"object","properties":{"vendor":{"type":"string"},"total":{"type":"number"},"currency":{"type":"string"}},"required":["vendor","total"],"additionalProperties":false}"#,
    false,
);
static OTHER_MODEL: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from OCR text.",
    &INVOICE_SCHEMA,
)
.with_model("gpt-4o")
.with_temperature(0.2)
.with_max_iterations(3);
static OTHER_INSTRUCTION: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from the scanned text.",
    &INVOICE_SCHEMA,
)
.with_model("gpt-4o-mini")
.with_temperature(0.2)
.with_max_iterations(3);
static OTHER_SCHEMA_FN: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from OCR text.",
    &OTHER_SCHEMA,
)
.with_model("gpt-4o-mini")
.with_temperature(0.2)
.with_max_iterations(3);

#[tokio::test]
async fn a_miss_of_each_kind_names_the_function_and_what_differs() {
    let dir = temp_dir("misses");
    let server = FakeServer::start(
        vec![Reply::chat(r#"{"vendor":"ACME","total":1}"#)],
        Reply::raw(500, "unexpected"),
    )
    .await;
    let recording = client(&server.base_url(), &dir, CassetteMode::Record);
    extract(&recording, &EXTRACT_INVOICE, "ACME").await.unwrap();
    drop(server);
    let replay = client("http://127.0.0.1:9/v1", &dir, CassetteMode::Replay);
    let cases: [(&AiFunction, &str, CassetteField, &str); 4] = [
        (
            &OTHER_MODEL,
            "ACME",
            CassetteField::Model,
            "model: recorded `gpt-4o-mini`, now `gpt-4o`",
        ),
        (
            &OTHER_INSTRUCTION,
            "ACME",
            CassetteField::Instruction,
            "instruction: recorded \"Extract the invoice fields from OCR text.\"",
        ),
        (
            &OTHER_SCHEMA_FN,
            "ACME",
            CassetteField::Schema,
            "schema of the return type: recorded `Invoice@",
        ),
        (
            &EXTRACT_INVOICE,
            "Globex",
            CassetteField::Arguments,
            "arguments `ocr_text`: recorded \"ACME\", now \"Globex\"",
        ),
    ];
    for (function, text, field, says) in cases {
        let error = extract(&replay, function, text).await.unwrap_err();
        let message = error.to_string();
        match &error {
            Error::CassetteMiss {
                function, differs, ..
            } => {
                assert_eq!(function, "extract_invoice");
                assert_eq!(differs, &vec![field], "{message}");
            }
            other => panic!("expected a miss, got {other}"),
        }
        assert!(message.contains(says), "{message}\nshould say: {says}");
        assert!(message.contains("extract_invoice.jsonl"), "{message}");
        assert!(message.contains("cargo vox test --record"), "{message}");
    }

    // A long argument that changed far into it: the miss shows where,
    // with both texts around that place, each escaped once.
    let long = format!("{}Total: 12.50 EUR\n\"paid\"", "Invoice line. ".repeat(20));
    {
        let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"ACME","total":1}"#)).await;
        let client = client(&server.base_url(), &dir, CassetteMode::Record);
        extract(&client, &EXTRACT_INVOICE, &long).await.unwrap();
    }
    let changed = long.replace("12.50", "12.60");
    let message = extract(&replay, &EXTRACT_INVOICE, &changed)
        .await
        .unwrap_err()
        .to_string();
    // Both values start alike up to the `5` (an ASCII text: bytes are
    // characters).
    let at = long.find("12.5").unwrap() + 3;
    for part in [
        format!("recorded \"…{}", &long[at - 20..at + 1]),
        format!("now \"…{}", &changed[at - 20..at + 1]),
        format!("(they differ from character {})", at + 1),
        r#"EUR\n\"paid\"""#.to_owned(),
    ] {
        assert!(message.contains(&part), "{message}\nshould say: {part}");
    }

    // The conversation: a check rejects the recorded reply on replay, so
    // the second attempt (after one rejected reply) was never recorded.
    let error = replay
        .call_ai_checked(
            &EXTRACT_INVOICE,
            args("ACME"),
            async { panic!("the fixture body must not run") },
            |invoice: &Invoice| {
                if invoice.total < 5.0 {
                    vec!["total: too small".into()]
                } else {
                    vec![]
                }
            },
        )
        .await
        .unwrap_err();
    match &error {
        Error::CassetteMiss { differs, .. } => {
            assert_eq!(differs, &vec![CassetteField::Conversation], "{error}")
        }
        other => panic!("expected a miss, got {other}"),
    }
    assert!(
        error
            .to_string()
            .contains("conversation: recorded after 0 rejected replies, now after 1"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_function_never_recorded_is_a_miss_saying_so() {
    let dir = temp_dir("never");
    let replay = client("http://127.0.0.1:9/v1", &dir, CassetteMode::Replay);
    let error = extract(&replay, &EXTRACT_INVOICE, "ACME")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::CassetteMiss { differs, .. } if differs.is_empty()),
        "{error}"
    );
    assert!(error.to_string().contains("none is recorded"), "{error}");
}

#[tokio::test]
async fn concurrent_calls_record_into_one_cassette() {
    let dir = temp_dir("concurrent");
    let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"V","total":3}"#)).await;
    let recording = client(&server.base_url(), &dir, CassetteMode::Auto);
    let calls = (0..24).map(|i| {
        let client = recording.clone();
        tokio::spawn(
            async move { extract(&client, &EXTRACT_INVOICE, &format!("invoice {i}")).await },
        )
    });
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let written = lines(&dir);
    assert_eq!(written.len(), 24);
    let mut keys: Vec<String> = written
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["key"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let sorted = {
        let mut k = keys.clone();
        k.sort();
        k
    };
    assert_eq!(keys, sorted, "entries are sorted by key");
    keys.dedup();
    assert_eq!(keys.len(), 24);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["extract_invoice.jsonl"]);
    // Every one replays.
    drop(server);
    let replay = client("http://127.0.0.1:9/v1", &dir, CassetteMode::Replay);
    for i in 0..24 {
        extract(&replay, &EXTRACT_INVOICE, &format!("invoice {i}"))
            .await
            .unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_corrupted_line_is_named_and_the_other_entries_still_replay() {
    let dir = temp_dir("corrupt");
    let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"V","total":3}"#)).await;
    let recording = client(&server.base_url(), &dir, CassetteMode::Record);
    for text in ["a", "b", "c"] {
        extract(&recording, &EXTRACT_INVOICE, text).await.unwrap();
    }
    drop(server);
    let mut written = lines(&dir);
    // Damage the second line (as a bad merge would).
    let half = written[1].len() / 2;
    written[1].truncate(half);
    std::fs::write(cassette_file(&dir), written.join("\n") + "\n").unwrap();
    let replay = client("http://127.0.0.1:9/v1", &dir, CassetteMode::Replay);
    let mut errors = Vec::new();
    for text in ["a", "b", "c"] {
        if let Err(e) = extract(&replay, &EXTRACT_INVOICE, text).await {
            errors.push(e);
        }
    }
    assert_eq!(errors.len(), 1, "two entries still replay: {errors:?}");
    match &errors[0] {
        Error::Cassette { path, line, .. } => {
            assert!(path.ends_with("extract_invoice.jsonl"), "{path}");
            assert_eq!(*line, Some(2));
        }
        other => panic!("expected the corrupted line, got {other}"),
    }
    assert!(
        errors[0]
            .to_string()
            .contains("extract_invoice.jsonl, line 2"),
        "{}",
        errors[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cassette with a line that is not an entry cannot be recorded into:
/// in `auto` (a miss) and `record` the call fails before anything is sent,
/// instead of after a paid call whose reply could not be kept. An entry
/// that is there still replays in `auto`.
#[tokio::test]
async fn a_corrupted_line_stops_a_recording_call_before_it_is_sent() {
    for mode in [CassetteMode::Auto, CassetteMode::Record] {
        let dir = temp_dir(&format!("corrupt-before-{mode}"));
        let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"V","total":3}"#)).await;
        let recording = client(&server.base_url(), &dir, CassetteMode::Record);
        extract(&recording, &EXTRACT_INVOICE, "kept").await.unwrap();
        let sent = server.request_count();
        let mut text = std::fs::read_to_string(cassette_file(&dir)).unwrap();
        text.push_str("{\"key\": \"half a line\n");
        std::fs::write(cassette_file(&dir), &text).unwrap();

        let calling = client(&server.base_url(), &dir, mode);
        let error = extract(&calling, &EXTRACT_INVOICE, "new")
            .await
            .unwrap_err();
        match &error {
            Error::Cassette { line, .. } => assert_eq!(*line, Some(2), "{mode}: {error}"),
            other => panic!("{mode}: expected the corrupted line, got {other}"),
        }
        assert_eq!(server.request_count(), sent, "{mode}: nothing is sent");
        if mode == CassetteMode::Auto {
            extract(&calling, &EXTRACT_INVOICE, "kept").await.unwrap();
            assert_eq!(server.request_count(), sent);
        }
        assert_eq!(std::fs::read_to_string(cassette_file(&dir)).unwrap(), text);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn re_recording_an_unchanged_suite_changes_no_bytes() {
    let dir = temp_dir("bytes");
    let mut files = Vec::new();
    for _ in 0..2 {
        let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"V","total":3}"#)).await;
        let recording = client(&server.base_url(), &dir, CassetteMode::Record);
        for text in ["z", "a", "m", "a"] {
            extract(&recording, &EXTRACT_INVOICE, text).await.unwrap();
        }
        files.push(std::fs::read(cassette_file(&dir)).unwrap());
    }
    assert_eq!(files[0], files[1]);
    assert_eq!(
        String::from_utf8_lossy(&files[0]).lines().count(),
        3,
        "de-duplicated"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn no_cassette_contains_the_key_or_a_url_password() {
    let dir = temp_dir("secrets");
    // The model echoes the key back, in the reply and in a refusal.
    let content = format!(r#"{{"vendor":"{KEY}","total":1}}"#);
    let server = FakeServer::start(
        vec![Reply::choice(serde_json::json!({
            "index": 0,
            "message": {"role": "assistant", "content": null, "refusal": format!("no, {KEY}")},
            "finish_reason": "stop"
        }))],
        Reply::chat(&content),
    )
    .await;
    let url = server
        .base_url()
        .replace("http://", "http://user:hunter2-url-password@");
    let recording = client(&url, &dir, CassetteMode::Record);
    let _ = extract(&recording, &EXTRACT_INVOICE, "ACME").await;
    drop(server);
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(KEY), "{text}");
        assert!(!text.contains("hunter2-url-password"), "{text}");
        assert!(
            !text.to_ascii_lowercase().contains("authorization"),
            "{text}"
        );
        assert!(text.contains("[REDACTED]"), "{text}");
        checked += 1;
    }
    assert_eq!(checked, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What generated code compiled under `cfg(test)` declares.
static TEST_BUILD: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from OCR text.",
    &INVOICE_SCHEMA,
)
.with_model("gpt-4o-mini")
.with_max_iterations(3)
.in_test_build(Some("/nonexistent/vox/cassettes"));

#[tokio::test]
async fn a_test_build_with_a_key_and_no_cassette_sends_no_request() {
    let server = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"LIVE","total":1}"#)).await;
    let fixture = Invoice {
        vendor: "FIXTURE".into(),
        total: 0.0,
    };
    let url = server.base_url();
    let from_env = |extra: &'static [(&'static str, &'static str)]| {
        let url = url.clone();
        Config::from_lookup(&move |name| match name {
            "OPENAI_API_KEY" => Some(KEY.into()),
            "VOX_LLM_BASE_URL" => Some(url.clone()),
            _ => extra
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).into()),
        })
        .unwrap()
    };
    // Generated code of a test build, whatever key is in the environment.
    let client = Client::new(from_env(&[])).unwrap();
    let value: Invoice = client
        .call_ai(&TEST_BUILD, args("x"), async { Ok(fixture.clone()) })
        .await
        .unwrap();
    assert_eq!(value, fixture);
    // `cargo vox test` marks every call as a test's.
    let client = Client::new(from_env(&[("VOX_LLM_TEST", "1")])).unwrap();
    let value: Invoice = client
        .call_ai(&EXTRACT_INVOICE, args("x"), async { Ok(fixture.clone()) })
        .await
        .unwrap();
    assert_eq!(value, fixture);
    assert_eq!(server.request_count(), 0, "no request left the process");
    // The documented opt-in reaches the provider.
    let client = Client::new(from_env(&[("VOX_LLM_LIVE", "1")])).unwrap();
    let value: Invoice = client
        .call_ai(&TEST_BUILD, args("x"), async { Ok(fixture.clone()) })
        .await
        .unwrap();
    assert_eq!(value.vendor, "LIVE");
    assert_eq!(server.request_count(), 1);
}

static FALLING_BACK: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from OCR text.",
    &INVOICE_SCHEMA,
)
.with_max_iterations(2)
.with_fallback(&["compatible:backup-model"]);

#[tokio::test]
async fn a_fallback_replays_as_it_ran() {
    let dir = temp_dir("fallback");
    let primary = FakeServer::start(vec![], Reply::raw(503, "overloaded")).await;
    let backup = FakeServer::start(vec![], Reply::chat(r#"{"vendor":"B","total":2}"#)).await;
    let config = |primary: &str, backup: &str, mode| {
        Config::builder(Provider::OpenAi)
            .base_url(primary)
            .api_key(KEY)
            .max_transport_retries(0)
            .provider_base_url(Provider::Compatible, backup)
            .cassette(&dir)
            .cassette_mode(mode)
            .build()
            .unwrap()
    };
    let recording = Client::new(config(
        &primary.base_url(),
        &backup.base_url(),
        CassetteMode::Record,
    ))
    .unwrap();
    let live = extract(&recording, &FALLING_BACK, "x").await.unwrap();
    assert_eq!(live.vendor, "B");
    drop((primary, backup));
    let text = std::fs::read_to_string(cassette_file(&dir)).unwrap();
    assert!(text.contains(r#""finish":"http_error""#), "{text}");
    assert!(
        text.contains(r#""model":"compatible:backup-model""#),
        "{text}"
    );
    let replay = Client::new(config(
        "http://127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1",
        CassetteMode::Replay,
    ))
    .unwrap();
    assert_eq!(extract(&replay, &FALLING_BACK, "x").await.unwrap(), live);
    let _ = std::fs::remove_dir_all(&dir);
}
