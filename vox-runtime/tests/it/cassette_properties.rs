//! Generated cases for cassettes and the reply cache (docs/runtime.md,
//! "Cassettes", "Reply cache"): any key, echoed back in any form, in a
//! reply, a refusal or a re-prompt, never reaches a cassette; any
//! arguments (quotes, control characters, any script) record, replay
//! without a transport and re-record to the same bytes; the reply cache
//! answers a repeated request without a new one, and tests ignore it.

use crate::support;

use std::path::PathBuf;

use support::{Invoice, EXTRACT_INVOICE};
use vox_runtime::__private::Args;
use vox_runtime::transport::{MemoryTransport, RecordedRequest, ScriptedReply};
use vox_runtime::{CassetteMode, Client, Config, Provider};

/// xorshift64*: a reproducible stream of cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    /// A key of 8 to 48 characters as providers issue them.
    fn key(&mut self) -> String {
        const CHARS: &[u8] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./+=";
        let len = 8 + self.below(41) as usize;
        let prefix = self.pick(&["", "sk-", "sk-proj-", "AIza", "sk-ant-"]);
        let mut key = prefix.to_owned();
        while key.len() < len {
            key.push(CHARS[self.below(CHARS.len() as u64) as usize] as char);
        }
        key
    }

    /// Text with quotes, backslashes, control characters, and non-Latin
    /// scripts.
    fn text(&mut self) -> String {
        const PARTS: &[&str] = &[
            "ACME",
            " ",
            "\"",
            "\\",
            "\n",
            "\t",
            "\u{1b}[31m",
            "€",
            "Straße",
            "東京",
            "🧾",
            "{",
            "}",
            "\u{0}",
            "'",
            "12.50",
            "\r\n",
            "</script>",
        ];
        (0..self.below(12)).map(|_| self.pick(PARTS)).collect()
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("vox-cassette-props-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn chat(content: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &serde_json::json!({
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}
        }),
    )
}

fn refusal(text: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &serde_json::json!({
            "choices": [{"message": {"role": "assistant", "content": null, "refusal": text}, "finish_reason": "stop"}]
        }),
    )
}

/// The forms a server may echo `key` in.
fn echoes(key: &str) -> Vec<String> {
    let percent: String = key
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    vec![key.to_owned(), percent, key.replace('/', "\\/")]
}

#[tokio::test]
async fn no_generated_key_in_any_echoed_form_reaches_a_cassette() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..60 {
        let key = rng.key();
        let password = rng.key();
        let dir = temp_dir(&format!("keys-{case}"));
        let forms = echoes(&key);
        let form = forms[case % forms.len()].clone();
        // A rejected reply and a refusal quoting the key (both go into the
        // conversation of the next attempt), then a valid reply holding it.
        let transport = MemoryTransport::new()
            .reply(chat(&format!(r#"{{"vendor":"{form}"}}"#)))
            .reply(refusal(&format!("I cannot share {form}")))
            .reply(chat(&format!(
                r#"{{"vendor":"Bearer {}","total":1}}"#,
                form.replace('"', "")
            )));
        let config = Config::builder(Provider::OpenAi)
            .api_key(key.clone())
            // Percent-encoded, as a URL's userinfo must be.
            .base_url(format!(
                "http://user:{}@127.0.0.1:9/v1",
                echoes(&password)[1]
            ))
            .max_transport_retries(0)
            .cassette(&dir)
            .cassette_mode(CassetteMode::Record)
            .build()
            .unwrap();
        let client = Client::builder(config)
            .transport(transport.clone())
            .build()
            .unwrap();
        let _ = client
            .call_ai::<Invoice, _>(
                &EXTRACT_INVOICE,
                Args::new().arg("ocr_text", "x").unwrap(),
                async { panic!("no fixture") },
            )
            .await;
        assert_eq!(transport.request_count(), 3, "case {case}");
        let text = std::fs::read_to_string(dir.join("extract_invoice.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 3, "case {case}: {text}");
        for secret in echoes(&key).iter().chain(echoes(&password).iter()) {
            assert!(
                !text.contains(secret.as_str()),
                "case {case}: {secret} in the cassette:\n{text}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn generated_arguments_record_replay_without_a_transport_and_re_record_the_same_bytes() {
    let mut rng = Rng(42);
    let texts: Vec<String> = (0..40).map(|_| rng.text()).collect();
    let dir = temp_dir("arguments");
    // The vendor is the argument's length: each call's reply is its own.
    let responder = |request: &RecordedRequest| {
        let body = request.json();
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        chat(&format!(r#"{{"vendor":"v{}","total":1}}"#, user.len()))
    };
    let mut files = Vec::new();
    let mut recorded = Vec::new();
    for _ in 0..2 {
        let transport = MemoryTransport::new().otherwise(responder);
        let config = Config::builder(Provider::OpenAi)
            .api_key("sk-test-0123456789")
            .cassette(&dir)
            .cassette_mode(CassetteMode::Record)
            .build()
            .unwrap();
        let client = Client::builder(config)
            .transport(transport)
            .build()
            .unwrap();
        recorded.clear();
        for text in &texts {
            let value: Invoice = client
                .call_ai(
                    &EXTRACT_INVOICE,
                    Args::new().arg("ocr_text", text).unwrap(),
                    async { panic!("no fixture") },
                )
                .await
                .unwrap();
            recorded.push(value);
        }
        files.push(std::fs::read(dir.join("extract_invoice.jsonl")).unwrap());
    }
    assert_eq!(files[0], files[1], "re-recording changed bytes");
    let mut distinct = texts.clone();
    distinct.sort();
    distinct.dedup();
    let file = String::from_utf8(files[0].clone()).unwrap();
    assert_eq!(file.lines().count(), distinct.len());
    for line in file.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("each line is JSON");
    }

    // Replay: a transport that answers nothing.
    let silent = MemoryTransport::new();
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-test-0123456789")
        .cassette(&dir)
        .cassette_mode(CassetteMode::Replay)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(silent.clone())
        .build()
        .unwrap();
    for (text, expected) in texts.iter().zip(&recorded) {
        let value: Invoice = client
            .call_ai(
                &EXTRACT_INVOICE,
                Args::new().arg("ocr_text", text).unwrap(),
                async { panic!("no fixture") },
            )
            .await
            .unwrap();
        assert_eq!(&value, expected, "{text:?}");
    }
    assert_eq!(silent.request_count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_reply_cache_answers_a_repeated_request_and_tests_ignore_it() {
    let dir = temp_dir("cache");
    let transport = MemoryTransport::new().otherwise(|_| chat(r#"{"vendor":"V","total":1}"#));
    let config = |test: bool| {
        Config::builder(Provider::OpenAi)
            .api_key("sk-test-0123456789")
            .reply_cache(&dir)
            .test_build(test)
            .live_in_tests(test)
            .build()
            .unwrap()
    };
    let client = Client::builder(config(false))
        .transport(transport.clone())
        .build()
        .unwrap();
    let call = |client: Client, text: &'static str| async move {
        client
            .call_ai::<Invoice, _>(
                &EXTRACT_INVOICE,
                Args::new().arg("ocr_text", text).unwrap(),
                async { panic!("no fixture") },
            )
            .await
            .unwrap()
    };
    call(client.clone(), "a").await;
    call(client.clone(), "a").await;
    assert_eq!(transport.request_count(), 1, "the second call was cached");
    call(client.clone(), "b").await;
    assert_eq!(transport.request_count(), 2);
    // A new client (a re-run of the program) still finds it.
    let again = Client::builder(config(false))
        .transport(transport.clone())
        .build()
        .unwrap();
    call(again, "a").await;
    assert_eq!(transport.request_count(), 2);
    // A test's call ignores the cache (it asks, with the live opt-in).
    let test = Client::builder(config(true))
        .transport(transport.clone())
        .build()
        .unwrap();
    call(test, "a").await;
    assert_eq!(transport.request_count(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
