//! A server echoing the API key it was sent, in every form servers and
//! proxies write one — a header in any case, JSON-quoted, Python-repr'd, a
//! `key=` URL query parameter, percent-encoded, `Bearer` in any case, `\/`
//! escaped — never gets it into an error, whatever the key's length
//! (1 to 64 characters, generated) and whatever the provider.

use crate::support;

use std::time::Duration;

use support::keys::key;
use support::{FakeServer, Invoice, Reply, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::{Client, Config, Error, Provider};

static EXTRACT: AiFunction = AiFunction::new("extract", "", &INVOICE_SCHEMA);

/// How servers echo a key (`{key}`; `{key%}` percent-encoded; `{key\/}`
/// with `/` escaped), each a 401 body.
const ECHOES: &[&str] = &[
    "X-Api-Key: {key}",
    "x-api-key:{key}",
    "X-API-KEY = {key}",
    r#"{"error":{"message":"invalid x-goog-api-key","headers":{"X-Goog-Api-Key":"{key}"}}}"#,
    r#"{"x-goog-api-key": ["{key}"]}"#,
    r#"{'x-api-key': '{key}', 'accept': '*/*'}"#,
    r#"[("x-goog-api-key", "{key}")]"#,
    r#"{"detail":"{\"x-api-key\": \"{key}\"}"}"#,
    "Authorization: Bearer {key}",
    "authorization: bearer {key}",
    "AUTHORIZATION: BEARER {key}",
    r#"{"Authorization":"Bearer {key}"}"#,
    "POST /v1beta/models/m:generateContent?key={key}&alt=json",
    "upstream https://example.test/v1?key={key%} failed",
    "api_key={key}; expires=never",
    r#"{"api_key": "{key}", "valid": false}"#,
    "invalid api key: {key}.",
    "token={key%}",
    r#"{"message":"bad key \"{key}\""}"#,
    r#"{"key":"{key\/}"}"#,
];

fn client(provider: Provider, server: &FakeServer, key: &str) -> Client {
    let base = match provider {
        Provider::Ollama => server.base_url().trim_end_matches("/v1").to_owned(),
        _ => server.base_url(),
    };
    Client::new(
        Config::builder(provider)
            .base_url(base)
            .api_key(key)
            .request_timeout(Duration::from_secs(10))
            .max_transport_retries(0)
            .build()
            .unwrap(),
    )
    .unwrap()
}

async fn unreachable_fixture<T>() -> Result<T, Error> {
    panic!("the fixture must not be polled under a network provider")
}

#[tokio::test]
async fn an_echoed_key_is_redacted_whatever_its_length_form_and_provider() {
    let providers = [
        Provider::OpenAi,
        Provider::OpenRouter,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Compatible,
    ];
    let mut checked = 0;
    for (p, &provider) in providers.iter().enumerate() {
        for len in 1..=64 {
            let key = key(len, (p * 64 + len) as u64);
            // Every form, then the key on its own in ordinary words.
            let mut script: Vec<Reply> = ECHOES
                .iter()
                .map(|echo| Reply::raw(401, "").echo_key(echo))
                .collect();
            script.push(Reply::raw(401, "").echo_key("the word {key} in a sentence"));
            let server = FakeServer::start(script, Reply::raw(500, "unexpected")).await;
            let client = client(provider, &server, &key);
            for echo in ECHOES {
                let err = client
                    .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
                    .await
                    .unwrap_err();
                let Error::Http {
                    status: 401,
                    body_excerpt,
                } = &err
                else {
                    panic!("{provider}: {err:?}")
                };
                let expected = echo
                    .replace("{key}", "[REDACTED]")
                    .replace("{key%}", "[REDACTED]")
                    .replace("{key\\/}", "[REDACTED]");
                assert_eq!(
                    body_excerpt, &expected,
                    "{provider}, key {key:?} ({len} chars), echoed as {echo:?}"
                );
                checked += 1;
            }
            // Outside a credential's place a short key is an ordinary word
            // (`x`, `none`, `ollama` are what local servers are given); a
            // long one is removed wherever it appears.
            let err = client
                .call_ai::<Invoice, _>(&EXTRACT, Args::new(), unreachable_fixture())
                .await
                .unwrap_err();
            let Error::Http { body_excerpt, .. } = &err else {
                panic!("{provider}: {err:?}")
            };
            let shown = if len >= vox_runtime_min_secret_chars() {
                "[REDACTED]"
            } else {
                key.as_str()
            };
            assert_eq!(
                body_excerpt,
                &format!("the word {shown} in a sentence"),
                "{provider}, key {key:?}"
            );
            // Each key was sent, and so echoed, in its provider's header.
            let request = &server.requests()[0];
            let sent = [
                request.header("authorization"),
                request.header("x-api-key"),
                request.header("x-goog-api-key"),
            ];
            assert!(
                sent.iter().flatten().any(|v| v.ends_with(key.as_str())),
                "{provider}: {:?}",
                request.headers
            );
        }
    }
    assert_eq!(checked, providers.len() * 64 * ECHOES.len());
}

/// docs/runtime.md, "Security": keys of 8 characters or more are removed
/// wherever they appear.
fn vox_runtime_min_secret_chars() -> usize {
    8
}
