//! What a hostile or misconfigured server can get out of the client: keys
//! and passwords echoed back must not reach errors or `Debug` output,
//! redaction must not mangle ordinary text, and redirects must not carry
//! the prompt anywhere the user did not configure (docs/runtime.md,
//! "Security"). Every test talks to servers on 127.0.0.1 it starts itself.

use crate::support;

use std::time::Duration;

use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE};
use vox_runtime::__private::Args;
use vox_runtime::{Client, Config, Error, Provider, RedirectPolicy};

const API_KEY: &str = "sk-sec-0a1b2c3d4e5f6789";

fn config_with_key(base_url: &str, key: &str) -> vox_runtime::ConfigBuilder {
    Config::builder(Provider::Compatible)
        .base_url(base_url)
        .api_key(key)
        .request_timeout(Duration::from_secs(5))
        .max_transport_retries(0)
}

fn client(base_url: &str, key: &str) -> Client {
    Client::new(config_with_key(base_url, key).build().unwrap()).unwrap()
}

fn ocr_args() -> Args {
    Args::new()
        .arg("ocr_text", "PRIVATE: patient Jane Roe, invoice 4711")
        .unwrap()
}

async fn call(client: &Client) -> Result<Invoice, Error> {
    client
        .call_ai(&EXTRACT_INVOICE, ocr_args(), async {
            panic!("the fixture must not run under a network provider")
        })
        .await
}

fn assert_no_leak(error: &Error, secrets: &[&str]) {
    for text in [error.to_string(), format!("{error:?}")] {
        for secret in secrets {
            assert!(!text.contains(secret), "`{secret}` leaked: {text}");
        }
    }
}

// ---- item 4: every text from a reply is redacted -------------------------

/// A server that echoes the `Authorization` header into a field of the
/// wrong type: serde_json quotes the value in its error.
#[tokio::test]
async fn authorization_echoed_into_a_wrongly_typed_field_is_redacted() {
    let echo = format!(r#"{{"id":"x","choices":"Bearer {API_KEY}"}}"#);
    let server = FakeServer::start(vec![], Reply::raw(200, echo)).await;
    let err = call(&client(&server.base_url(), API_KEY))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::MalformedResponse(m) if m.contains("[REDACTED]") && m.contains("expected")),
        "{err:?}"
    );
    assert_no_leak(&err, &[API_KEY]);

    let echo = format!(r#"{{"choices":[],"usage":{{"prompt_tokens":"{API_KEY}"}}}}"#);
    let server = FakeServer::start(vec![], Reply::raw(200, echo)).await;
    let err = call(&client(&server.base_url(), API_KEY))
        .await
        .unwrap_err();
    assert!(matches!(&err, Error::MalformedResponse(_)), "{err:?}");
    assert_no_leak(&err, &[API_KEY]);
}

/// A huge wrongly typed string is not copied whole into the error.
#[tokio::test]
async fn malformed_response_messages_are_truncated() {
    let echo = format!(r#"{{"choices":"{}"}}"#, "a".repeat(100_000));
    let server = FakeServer::start(vec![], Reply::raw(200, echo)).await;
    let err = call(&client(&server.base_url(), API_KEY))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::MalformedResponse(m) if m.len() < 2_000),
        "{} bytes",
        err.to_string().len()
    );
}

#[test]
fn config_debug_and_errors_hide_a_password_in_the_base_url() {
    let config = Config::builder(Provider::Compatible)
        .base_url("https://alice:hunter2-pw@llm.internal:8443/v1")
        .build()
        .unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains("hunter2-pw"), "{debug}");
    assert!(
        debug.contains("alice:[REDACTED]@llm.internal:8443"),
        "{debug}"
    );

    // Even a one-letter password: the URL's userinfo is structure, not text.
    let config = Config::builder(Provider::Compatible)
        .base_url("http://bob:p@127.0.0.1:1/v1")
        .build()
        .unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains("bob:p@"), "{debug}");

    for bad in [
        "ftp://alice:hunter2-pw@llm.internal/v1",
        "https://alice:hunter2-pw@[::1/v1",
    ] {
        let err = Config::builder(Provider::Compatible)
            .base_url(bad)
            .build()
            .and_then(Client::new)
            .unwrap_err();
        assert!(matches!(&err, Error::Config(_)), "{err:?}");
        assert_no_leak(&err, &["hunter2-pw"]);
    }

    let err = Config::from_lookup(&|name| match name {
        "VOX_LLM_PROVIDER" => Some("compatible".into()),
        "VOX_LLM_BASE_URL" => Some("htps://alice:hunter2-pw@llm.internal/v1".into()),
        _ => None,
    })
    .unwrap_err();
    assert_no_leak(&err, &["hunter2-pw"]);
}

/// reqwest sends a password in the base URL as `Authorization: Basic …`;
/// a server echoing that header must not get it into the error.
#[tokio::test]
async fn basic_credentials_from_the_base_url_are_redacted_when_echoed() {
    let server = FakeServer::start(vec![], Reply::raw(401, "").echo_authorization()).await;
    let url = server
        .base_url()
        .replace("http://", "http://alice:hunter2-pw@");
    let client = Client::new(
        Config::builder(Provider::Compatible)
            .base_url(url)
            .max_transport_retries(0)
            .build()
            .unwrap(),
    )
    .unwrap();
    let err = call(&client).await.unwrap_err();
    let sent = server.requests()[0]
        .header("authorization")
        .unwrap()
        .to_owned();
    let credential = sent.strip_prefix("Basic ").expect("basic auth sent");
    assert!(
        matches!(&err, Error::Http { status: 401, body_excerpt } if body_excerpt.contains("Basic [REDACTED]")),
        "{err:?}"
    );
    assert_no_leak(&err, &[credential, "hunter2-pw"]);
    let debug = format!("{client:?}");
    assert!(!debug.contains("hunter2-pw"), "{debug}");
}

/// Transport errors name the URL they failed on: never with its password.
#[tokio::test]
async fn transport_errors_do_not_show_a_password_in_the_base_url() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let client = Client::new(
        Config::builder(Provider::Compatible)
            .base_url(format!("http://alice:hunter2-pw@127.0.0.1:{port}/v1"))
            .max_transport_retries(0)
            .build()
            .unwrap(),
    )
    .unwrap();
    let err = call(&client).await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport { kind: vox_runtime::TransportErrorKind::Connect, message } if message.contains("127.0.0.1")),
        "{err:?}"
    );
    assert_no_leak(&err, &["hunter2-pw"]);
}

// ---- item 8: redaction keeps ordinary text intact ------------------------

/// Dummy keys given to local servers (`x`, `none`, `ollama`) are not
/// secrets; blanking every occurrence destroyed the server's error text.
#[tokio::test]
async fn short_dummy_keys_do_not_mangle_error_messages() {
    let body = r#"{"error":{"message":"std::exception: invalid schema at #/properties/next: none of the variants matched","type":"invalid_request_error"}}"#;
    for key in ["x", "none", "ollama"] {
        let server = FakeServer::start(vec![], Reply::raw(400, body)).await;
        let err = call(&client(&server.base_url(), key)).await.unwrap_err();
        let Error::Http {
            status: 400,
            body_excerpt,
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(body_excerpt, body, "key `{key}`");
    }

    // The model's own reply and serde_json's error about it, too.
    let server =
        FakeServer::start(vec![], Reply::chat(r#"{"vendor":"Exxon","total":"next"}"#)).await;
    let err = call(&client(&server.base_url(), "x")).await.unwrap_err();
    let Error::InvalidOutput {
        last_error,
        last_reply,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(last_reply, r#"{"vendor":"Exxon","total":"next"}"#);
    assert!(
        last_error.contains(r#"$.total: expected a number, found the string "next""#),
        "{last_error}"
    );
}

/// Whatever its length, the key is still removed where it is echoed as the
/// header value it was sent in.
#[tokio::test]
async fn a_short_key_echoed_as_its_header_is_still_redacted() {
    let server = FakeServer::start(vec![], Reply::raw(401, "").echo_authorization()).await;
    let err = call(&client(&server.base_url(), "x")).await.unwrap_err();
    assert!(
        matches!(&err, Error::Http { status: 401, body_excerpt } if body_excerpt == r#"{"error":{"message":"invalid credentials: Bearer [REDACTED]"}}"#),
        "{err:?}"
    );
}

/// Bearer tokens other than the configured key (a proxy's, say) that a
/// server quotes are credentials too; plain words after "Bearer" are not.
#[tokio::test]
async fn other_bearer_tokens_are_redacted_but_words_are_kept() {
    let body = r#"{"error":"upstream rejected Bearer eyJhbGciOiJIUzI1NiJ9.e30.x-Y_z; expected a Bearer token"}"#;
    let server = FakeServer::start(vec![], Reply::raw(403, body)).await;
    let err = call(&client(&server.base_url(), API_KEY))
        .await
        .unwrap_err();
    let Error::Http { body_excerpt, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        body_excerpt,
        r#"{"error":"upstream rejected Bearer [REDACTED]; expected a Bearer token"}"#
    );
}

// ---- item 6: redirects ----------------------------------------------------

/// The prompt (with personal data) must not be re-POSTed to wherever a 307
/// or 308 points.
#[tokio::test]
async fn redirects_are_not_followed_by_default() {
    for status in [301, 302, 303, 307, 308] {
        let elsewhere =
            FakeServer::start(vec![], Reply::chat(r#"{"vendor":"EVIL","total":0}"#)).await;
        let server = FakeServer::start(
            vec![],
            Reply::raw(status, "").header("Location", &elsewhere.chat_url()),
        )
        .await;
        let result = call(&client(&server.base_url(), API_KEY)).await;
        assert_eq!(elsewhere.request_count(), 0, "{status}: followed");
        let err = result.expect_err("a redirect's answer taken as the model's reply");
        assert_eq!(
            err,
            Error::Redirect {
                status,
                location: Some(elsewhere.chat_url()),
            }
        );
        assert!(err.to_string().contains(&elsewhere.chat_url()), "{err}");
        assert_eq!(server.request_count(), 1);
    }
}

fn same_origin_client(base_url: &str) -> Client {
    Client::new(
        config_with_key(base_url, API_KEY)
            .follow_redirects(RedirectPolicy::SameOrigin)
            .build()
            .unwrap(),
    )
    .unwrap()
}

/// Opted in, a 307 or 308 to the same origin is followed with the same
/// method, body and credentials.
#[tokio::test]
async fn same_origin_307_and_308_are_followed_when_opted_in() {
    for status in [307, 308] {
        let server = FakeServer::start(
            vec![
                Reply::raw(status, "").header("Location", "/v2/chat/completions"),
                Reply::chat(r#"{"vendor":"ACME","total":7.0}"#),
            ],
            Reply::raw(500, "unexpected"),
        )
        .await;
        let invoice = call(&same_origin_client(&server.base_url())).await.unwrap();
        assert_eq!(invoice.vendor, "ACME");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1].path, "/v2/chat/completions");
        assert_eq!(requests[1].body, requests[0].body, "{status}: body kept");
        assert_eq!(
            requests[1].header("authorization"),
            Some(format!("Bearer {API_KEY}").as_str())
        );
    }
}

/// Opted in, still never to another origin (another port on the same
/// host is one), and never a redirect that turns the POST into a GET.
#[tokio::test]
async fn same_origin_policy_refuses_other_origins_and_method_changes() {
    for status in [307, 308] {
        let elsewhere =
            FakeServer::start(vec![], Reply::chat(r#"{"vendor":"EVIL","total":0}"#)).await;
        let server = FakeServer::start(
            vec![],
            Reply::raw(status, "").header("Location", &elsewhere.chat_url()),
        )
        .await;
        let err = call(&same_origin_client(&server.base_url()))
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::Redirect { status: s, .. } if s == status),
            "{err:?}"
        );
        assert_eq!(
            elsewhere.request_count(),
            0,
            "{status}: prompt sent elsewhere"
        );
    }
    for status in [301, 302, 303] {
        let server = FakeServer::start(
            vec![Reply::raw(status, "").header("Location", "/v2/chat/completions")],
            Reply::chat(r#"{"vendor":"GET","total":0}"#),
        )
        .await;
        let err = call(&same_origin_client(&server.base_url()))
            .await
            .unwrap_err();
        // The relative Location is shown resolved.
        let location = server.chat_url().replace("/v1/", "/v2/");
        assert_eq!(
            err,
            Error::Redirect {
                status,
                location: Some(location),
            }
        );
        assert_eq!(server.request_count(), 1, "{status}: followed as a GET");
    }
}

/// A same-origin redirect loop ends after `MAX_REDIRECTS` hops.
#[tokio::test]
async fn same_origin_redirect_loops_end() {
    let server = FakeServer::start(
        vec![],
        Reply::raw(307, "").header("Location", "/v1/chat/completions"),
    )
    .await;
    let err = call(&same_origin_client(&server.base_url()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Redirect { status: 307, .. }),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1 + vox_runtime::MAX_REDIRECTS);
}

/// The `Location` is server text like any other: credentials in it are
/// redacted before it is shown.
#[tokio::test]
async fn redirect_locations_are_redacted() {
    let server = FakeServer::start(
        vec![],
        Reply::raw(302, "").header(
            "Location",
            &format!("https://eve:stolen-pw@elsewhere.example/v1?key={API_KEY}"),
        ),
    )
    .await;
    let err = call(&client(&server.base_url(), API_KEY))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        Error::Redirect {
            status: 302,
            location: Some("https://eve:[REDACTED]@elsewhere.example/v1?key=[REDACTED]".into()),
        }
    );
}

#[test]
fn redirect_policy_comes_from_the_environment() {
    let with = |value: Option<&str>| {
        let value = value.map(str::to_owned);
        Config::from_lookup(&move |name| match name {
            "VOX_LLM_PROVIDER" => Some("compatible".into()),
            "VOX_LLM_BASE_URL" => Some("http://127.0.0.1:1/v1".into()),
            "VOX_LLM_FOLLOW_REDIRECTS" => value.clone(),
            _ => None,
        })
    };
    assert_eq!(with(None).unwrap().follow_redirects(), RedirectPolicy::None);
    assert_eq!(
        with(Some("none")).unwrap().follow_redirects(),
        RedirectPolicy::None
    );
    assert_eq!(
        with(Some(" Same-Origin ")).unwrap().follow_redirects(),
        RedirectPolicy::SameOrigin
    );
    let err = with(Some("all")).unwrap_err();
    assert!(
        matches!(&err, Error::Config(m) if m.contains("VOX_LLM_FOLLOW_REDIRECTS") && m.contains("`all`")),
        "{err}"
    );
}
