//! Media arguments (docs/runtime.md, "Media arguments"), the way a program
//! passes them: real small files of every format, and every way a file can
//! lie or fail — a `.png` that is a PDF, an empty file, a file over the
//! provider's limit, a missing file, a directory, a FIFO — each refused
//! with `Error::Media` before any request is sent; a provider that does not
//! take a kind or a URL refused the same way; no content in errors or
//! logs; cassettes keyed by a hash of the content.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::trace::Recorder;
use support::{Invoice, INVOICE_SCHEMA};
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::transport::{MemoryTransport, RecordedRequest, ScriptedReply};
use vox_runtime::{Audio, CassetteMode, Client, Config, Document, Error, Image, Provider};

static READ: AiFunction = AiFunction::new("read_invoice", "Read the invoice.", &INVOICE_SCHEMA);

fn media(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/media")
        .join(name)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vox-media-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A good reply in `provider`'s shape.
fn good(provider: Provider) -> ScriptedReply {
    let value = serde_json::json!({"vendor": "ACME", "total": 7.0});
    ScriptedReply::json(
        200,
        &match provider {
            Provider::Anthropic => serde_json::json!({"content": [{"type": "tool_use",
                "id": "t", "name": "read_invoice", "input": value}], "stop_reason": "tool_use"}),
            Provider::Gemini => serde_json::json!({"candidates": [{"content": {"parts":
                [{"text": value.to_string()}]}, "finishReason": "STOP"}]}),
            Provider::Ollama => serde_json::json!({"message": {"role": "assistant",
                "content": value.to_string()}, "done": true}),
            _ => serde_json::json!({"choices": [{"message": {"role": "assistant",
                "content": value.to_string()}, "finish_reason": "stop"}]}),
        },
    )
}

fn client(provider: Provider, transport: &MemoryTransport) -> Client {
    let config = Config::builder(provider)
        .base_url("http://127.0.0.1:9/v1")
        .api_key("sk-media-test-key")
        .max_transport_retries(0)
        .build()
        .unwrap();
    Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap()
}

/// Calls `READ` on `provider` with `args`: the result and the requests
/// sent.
async fn call(provider: Provider, args: Args) -> (Result<Invoice, Error>, Vec<RecordedRequest>) {
    let transport = MemoryTransport::new().otherwise(move |_| good(provider));
    let result = client(provider, &transport)
        .call_ai(&READ, args, async {
            panic!("no fixture body under a provider")
        })
        .await;
    (result, transport.requests())
}

fn one(name: &str, value: &impl serde::Serialize) -> Args {
    Args::new().arg(name, value).unwrap()
}

/// The reason of an `Error::Media` for `argument`, after checking that no
/// request was sent.
async fn refused(provider: Provider, args: Args, argument: &str) -> String {
    let (result, requests) = call(provider, args).await;
    assert!(
        requests.is_empty(),
        "nothing is sent: {} request(s)",
        requests.len()
    );
    match result {
        Err(Error::Media {
            argument: a,
            reason,
        }) => {
            assert_eq!(a, argument);
            reason
        }
        other => panic!("expected Error::Media, got {other:?}"),
    }
}

#[tokio::test]
async fn real_files_of_every_format_are_detected_from_their_content() {
    for (file, mime) in [
        ("scan.png", "image/png"),
        ("photo.jpg", "image/jpeg"),
        ("pixel.webp", "image/webp"),
        ("pixel.gif", "image/gif"),
    ] {
        let (result, requests) = call(
            Provider::Anthropic,
            one("scan", &Image::from_path(media(file))),
        )
        .await;
        result.unwrap_or_else(|e| panic!("{file}: {e}"));
        let body = std::str::from_utf8(&requests[0].body).unwrap();
        assert!(
            body.contains(&format!(r#""media_type":"{mime}""#)),
            "{file}: {body}"
        );
    }
    // A PNG renamed `.pdf` is still a PNG: the name is never read.
    let dir = temp_dir("renamed");
    let renamed = dir.join("actually-a-png.pdf");
    std::fs::copy(media("scan.png"), &renamed).unwrap();
    let (result, requests) = call(Provider::Gemini, one("scan", &Image::from_path(&renamed))).await;
    result.unwrap();
    assert!(std::str::from_utf8(&requests[0].body)
        .unwrap()
        .contains(r#""mimeType":"image/png""#));

    let (result, requests) = call(
        Provider::Gemini,
        one("doc", &Document::from_path(media("invoice.pdf"))),
    )
    .await;
    result.unwrap();
    assert!(std::str::from_utf8(&requests[0].body)
        .unwrap()
        .contains(r#""mimeType":"application/pdf""#));

    for (file, format) in [("memo.wav", "wav"), ("memo.mp3", "mp3")] {
        let (result, requests) = call(
            Provider::OpenAi,
            one("memo", &Audio::from_path(media(file))),
        )
        .await;
        result.unwrap_or_else(|e| panic!("{file}: {e}"));
        let body = std::str::from_utf8(&requests[0].body).unwrap();
        assert!(
            body.contains(&format!(r#""format":"{format}""#)),
            "{file}: {body}"
        );
        assert!(body.contains(r#""type":"input_audio""#), "{body}");
    }
}

#[tokio::test]
async fn every_lie_and_every_unreadable_file_is_refused_before_sending() {
    let dir = temp_dir("lies");
    // A `.png` that is a PDF.
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_path(media("lie.png"))),
        "scan",
    )
    .await;
    assert!(reason.contains("a PDF document, not an image"), "{reason}");
    assert!(reason.contains("never the file name"), "{reason}");
    // A PDF argument that is an image.
    let reason = refused(
        Provider::OpenAi,
        one("doc", &Document::from_path(media("scan.png"))),
        "doc",
    )
    .await;
    assert!(
        reason.contains("a PNG image, not a PDF document"),
        "{reason}"
    );
    // An empty file.
    let empty = dir.join("empty.png");
    std::fs::write(&empty, b"").unwrap();
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_path(&empty)),
        "scan",
    )
    .await;
    assert!(reason.contains("empty"), "{reason}");
    // A file over the provider's limit (sparse: its size is checked before
    // anything is read).
    let big = dir.join("big.png");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(3_750_001).unwrap();
    let reason = refused(
        Provider::Anthropic,
        one("scan", &Image::from_path(&big)),
        "scan",
    )
    .await;
    assert!(
        reason.contains("over anthropic's limit of 3.8 MB for one image"),
        "{reason}"
    );
    // The same file is within OpenAI's limit, so its content is judged.
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_path(&big)),
        "scan",
    )
    .await;
    assert!(reason.contains("is not an image"), "{reason}");
    // A missing file, named by its file name.
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_path(dir.join("gone.png"))),
        "scan",
    )
    .await;
    assert!(
        reason.contains("file \"gone.png\"") && reason.contains("no such file"),
        "{reason}"
    );
    // A directory.
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_path(&dir)),
        "scan",
    )
    .await;
    assert!(reason.contains("a directory"), "{reason}");
    // A lie in from_bytes.
    let pdf = std::fs::read(media("invoice.pdf")).unwrap();
    let reason = refused(
        Provider::OpenAi,
        one("scan", &Image::from_bytes("image/png", pdf.clone())),
        "scan",
    )
    .await;
    assert!(
        reason.contains("a PDF document, not \"image/png\" as given"),
        "{reason}"
    );
    let reason = refused(
        Provider::OpenAi,
        one("doc", &Document::from_bytes("text/plain", pdf)),
        "doc",
    )
    .await;
    assert!(reason.contains("not one the runtime sends"), "{reason}");
    let reason = refused(
        Provider::OpenAi,
        one("doc", &Document::from_bytes("application/pdf", Vec::new())),
        "doc",
    )
    .await;
    assert!(reason.contains("no bytes"), "{reason}");
    // The placeholder says which media of the argument failed.
    let reason = refused(
        Provider::OpenAi,
        one(
            "pages",
            &vec![
                Image::from_path(media("scan.png")),
                Image::from_path(media("lie.png")),
            ],
        ),
        "pages",
    )
    .await;
    assert!(
        reason.starts_with("<image 2> (file \"lie.png\""),
        "{reason}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("scan.png");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // No writer ever opens it: a blocking open would wait forever, so the
    // call runs on a thread of its own, watched with a deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let reason = vox_runtime::block_on(refused(
            Provider::OpenAi,
            one("scan", &Image::from_path(&fifo)),
            "scan",
        ));
        let _ = tx.send(reason);
    });
    let reason = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("opening a FIFO must not block");
    assert!(reason.contains("a FIFO"), "{reason}");
}

#[tokio::test]
async fn providers_refuse_what_they_do_not_take_and_say_so() {
    let pdf = || Document::from_path(media("invoice.pdf"));
    let reason = refused(Provider::Ollama, one("doc", &pdf()), "doc").await;
    assert!(
        reason.contains("ollama does not take document arguments"),
        "{reason}"
    );
    let reason = refused(
        Provider::Ollama,
        one("scan", &Image::from_url("https://example.com/a.png")),
        "scan",
    )
    .await;
    assert!(
        reason.contains("ollama does not take image URLs"),
        "{reason}"
    );
    let reason = refused(
        Provider::OpenAi,
        one("doc", &Document::from_url("https://example.com/a.pdf")),
        "doc",
    )
    .await;
    assert!(
        reason.contains("openai does not take document URLs"),
        "{reason}"
    );
    let reason = refused(
        Provider::Anthropic,
        one("memo", &Audio::from_path(media("memo.wav"))),
        "memo",
    )
    .await;
    assert!(
        reason.contains("anthropic does not take audio arguments"),
        "{reason}"
    );
    let reason = refused(
        Provider::Gemini,
        one("scan", &Image::from_url("http://example.com/a.png")),
        "scan",
    )
    .await;
    assert!(reason.contains("must be an https URL"), "{reason}");
    // What each takes goes through.
    for (provider, args) in [
        (
            Provider::Anthropic,
            one("doc", &Document::from_url("https://example.com/a.pdf")),
        ),
        (
            Provider::Gemini,
            one("doc", &Document::from_url("https://example.com/a.pdf")),
        ),
        (
            Provider::Gemini,
            one("memo", &Audio::from_path(media("memo.mp3"))),
        ),
        (Provider::OpenRouter, one("doc", &pdf())),
        (
            Provider::Compatible,
            one("scan", &Image::from_path(media("photo.jpg"))),
        ),
    ] {
        let (result, requests) = call(provider, args).await;
        result.unwrap_or_else(|e| panic!("{provider:?}: {e}"));
        assert_eq!(requests.len(), 1);
    }
}

#[tokio::test]
async fn the_total_of_a_request_is_limited_too() {
    // Seven images of 3.5 MB each are each within Anthropic's 3.75 MB, but
    // not together within its 23 MB a request.
    let mut png = std::fs::read(media("scan.png")).unwrap();
    png.resize(3_500_000, 0);
    let pages: Vec<Image> = (0..7)
        .map(|_| Image::from_bytes("image/png", png.clone()))
        .collect();
    let reason = refused(Provider::Anthropic, one("pages", &pages), "pages").await;
    assert!(reason.starts_with("<image 7>"), "{reason}");
    assert!(
        reason.contains("over anthropic's limit of 23 MB of media in one request"),
        "{reason}"
    );
}

/// Content a test can look for: a PNG whose bytes carry a marker, so the
/// marker's text and its base64 show whether content leaked.
fn marked_png(dir: &Path) -> (PathBuf, Vec<String>) {
    let mut bytes = std::fs::read(media("scan.png")).unwrap();
    let marker = b"SECRET-PIXELS-0xC0FFEE-SECRET-PIXELS";
    bytes.extend_from_slice(marker);
    let path = dir.join("marked.png");
    std::fs::write(&path, &bytes).unwrap();
    let base64 = {
        let mut encoded = Vec::new();
        // Any window of the base64 of the file.
        let all = base64_of(&bytes);
        encoded.push(all[all.len() - 40..all.len() - 4].to_owned());
        encoded
    };
    let mut needles = vec![String::from_utf8_lossy(marker).into_owned()];
    needles.extend(base64);
    (path, needles)
}

fn base64_of(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= c.len() {
                A[(n >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

#[test]
fn no_content_in_errors_or_logs() {
    let dir = temp_dir("leaks");
    let (path, needles) = marked_png(&dir);
    let recorder = Recorder::default();
    let log = recorder.log.clone();
    let mut texts = Vec::new();
    tracing::subscriber::with_default(recorder, || {
        vox_runtime::block_on(async {
            // Sent: the body holds it, the logs must not.
            let (result, requests) =
                call(Provider::OpenAi, one("scan", &Image::from_path(&path))).await;
            result.unwrap();
            let body = std::str::from_utf8(&requests[0].body).unwrap();
            assert!(
                needles[1..].iter().all(|n| body.contains(n.as_str())),
                "the test's needles are in the body"
            );
            // Refused, for each reason a file can be refused.
            for (provider, args) in [
                (
                    Provider::Anthropic,
                    one(
                        "scan",
                        &Image::from_bytes("image/png", vec![0u8; 4_000_000]),
                    ),
                ),
                (Provider::OpenAi, one("doc", &Document::from_path(&path))),
                (Provider::Ollama, one("doc", &Document::from_path(&path))),
                (
                    Provider::OpenAi,
                    one(
                        "scan",
                        &Image::from_bytes("image/gif", std::fs::read(&path).unwrap()),
                    ),
                ),
            ] {
                let (result, _) = call(provider, args).await;
                let error = result.unwrap_err();
                texts.push(format!("{error} {error:?}"));
            }
        });
    });
    texts.push(format!(
        "{:?} {}",
        Image::from_path(&path),
        Image::from_path(&path)
    ));
    let log = log.lock().unwrap();
    let media_events: Vec<_> = log
        .events
        .iter()
        .filter(|e| e.name == "vox.ai_media")
        .collect();
    assert_eq!(media_events.len(), 1, "{:?}", log.events);
    assert_eq!(
        media_events[0].fields["media"],
        format!(
            "[<image 1> (image/png, {} bytes)]",
            std::fs::metadata(&path).unwrap().len()
        )
    );
    for event in log.events.iter().chain(log.spans.values()) {
        texts.push(format!("{:?}", event.fields));
    }
    for text in &texts {
        for needle in &needles {
            assert!(!text.contains(needle.as_str()), "content leaked: {text}");
        }
    }
}

#[tokio::test]
async fn cassettes_key_media_by_a_hash_of_their_content() {
    let dir = temp_dir("cassette");
    let cassette = dir.join("cassette");
    let scan = dir.join("scan.png");
    std::fs::copy(media("scan.png"), &scan).unwrap();
    let run = |mode: CassetteMode, answer: bool| {
        let cassette = cassette.clone();
        let scan = scan.clone();
        async move {
            let transport = if answer {
                MemoryTransport::new().otherwise(|_| good(Provider::OpenAi))
            } else {
                MemoryTransport::new()
            };
            let config = Config::builder(Provider::OpenAi)
                .base_url("http://127.0.0.1:9/v1")
                .api_key("sk-media-test-key")
                .max_transport_retries(0)
                .cassette(&cassette)
                .cassette_mode(mode)
                .build()
                .unwrap();
            let client = Client::builder(config)
                .transport(transport.clone())
                .build()
                .unwrap();
            let result: Result<Invoice, Error> = client
                .call_ai(&READ, one("scan", &Image::from_path(&scan)), async {
                    panic!("no fixture")
                })
                .await;
            (result, transport.request_count())
        }
    };
    let (result, sent) = run(CassetteMode::Record, true).await;
    result.unwrap();
    assert_eq!(sent, 1);
    let recorded = std::fs::read_to_string(cassette.join("read_invoice.jsonl")).unwrap();
    assert!(
        recorded.contains(r#"{\"scan\":\"<image 1 fnv128:"#)
            || recorded.contains(r#""scan":"<image 1 fnv128:"#),
        "{recorded}"
    );
    assert!(
        !recorded.contains(&base64_of(&std::fs::read(&scan).unwrap())[..20]),
        "no bytes in the cassette"
    );
    // The same content replays without a request.
    let (result, sent) = run(CassetteMode::Replay, false).await;
    result.unwrap();
    assert_eq!(sent, 0);
    // Other content under the same name misses.
    std::fs::copy(media("photo.jpg"), &scan).unwrap();
    let (result, sent) = run(CassetteMode::Replay, false).await;
    assert!(
        matches!(result, Err(Error::CassetteMiss { .. })),
        "{result:?}"
    );
    assert_eq!(sent, 0);
}

#[tokio::test]
async fn the_fixture_provider_never_reads_media() {
    let config = Config::builder(Provider::Fixture).build().unwrap();
    let client = Client::new(config).unwrap();
    let args = one("scan", &Image::from_path("/nonexistent/never-read.png"));
    let invoice: Invoice = client
        .call_ai(&READ, args, async {
            Ok(Invoice {
                vendor: "fixture".into(),
                total: 1.0,
            })
        })
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "fixture");
}

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An argument value of random shape holding media: records, lists and
/// text (some of it looking like placeholders or markers) around images
/// and PDFs of random content.
fn random_value(g: &mut Gen, depth: u32, media: &mut Vec<Vec<u8>>) -> serde_json::Value {
    use serde_json::json;
    match g.below(if depth > 2 { 3 } else { 5 }) {
        0 | 1 => {
            let signature: &[u8] = if g.below(2) == 0 {
                b"\x89PNG\r\n\x1a\n"
            } else {
                b"%PDF-1.7\n"
            };
            let mut bytes = signature.to_vec();
            for _ in 0..g.below(300) {
                bytes.push(g.next() as u8);
            }
            media.push(bytes);
            // A marker for the test to swap for the media value.
            json!({ "$media": media.len() - 1 })
        }
        2 => json!(match g.below(4) {
            0 => "<image 1>".to_owned(),
            1 => "VOXMEDIA0000#0#".to_owned(),
            2 => "plain \"text\" with \\ and \n".to_owned(),
            _ => format!("n{}", g.next()),
        }),
        3 => serde_json::Value::Array(
            (0..g.below(4))
                .map(|_| random_value(g, depth + 1, media))
                .collect(),
        ),
        _ => serde_json::Value::Object(
            (0..g.below(4))
                .map(|i| (format!("f{i}"), random_value(g, depth + 1, media)))
                .collect(),
        ),
    }
}

/// The value with each `{"$media": i}` replaced by an `Image` or a
/// `Document` of `media[i]` (by its signature).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum WithMedia {
    Image(Image),
    Document(Document),
    List(Vec<WithMedia>),
    Record(std::collections::BTreeMap<String, WithMedia>),
    Json(serde_json::Value),
}

fn with_media(value: &serde_json::Value, media: &[Vec<u8>]) -> WithMedia {
    match value {
        serde_json::Value::Object(o) if o.contains_key("$media") => {
            let bytes = media[o["$media"].as_u64().unwrap() as usize].clone();
            if bytes.starts_with(b"%PDF") {
                WithMedia::Document(Document::from_bytes("application/pdf", bytes))
            } else {
                WithMedia::Image(Image::from_bytes("image/png", bytes))
            }
        }
        serde_json::Value::Array(a) => {
            WithMedia::List(a.iter().map(|v| with_media(v, media)).collect())
        }
        serde_json::Value::Object(o) => WithMedia::Record(
            o.iter()
                .map(|(k, v)| (k.clone(), with_media(v, media)))
                .collect(),
        ),
        other => WithMedia::Json(other.clone()),
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | value(c) << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// Every base64 payload of a request body, in order: the data of data:
/// URLs and of the fields that carry base64.
fn payloads(value: &serde_json::Value, out: &mut Vec<Vec<u8>>) {
    match value {
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                match (k.as_str(), v) {
                    ("url" | "file_data", serde_json::Value::String(s))
                        if s.starts_with("data:") =>
                    {
                        out.push(decode_base64(s.split_once(";base64,").unwrap().1))
                    }
                    ("data", serde_json::Value::String(s)) => out.push(decode_base64(s)),
                    ("images", serde_json::Value::Array(a)) => {
                        out.extend(a.iter().map(|s| decode_base64(s.as_str().unwrap())))
                    }
                    _ => payloads(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| payloads(v, out)),
        _ => {}
    }
}

/// For random arguments holding media at random places, every wire's
/// request is valid JSON whose arguments text numbers the placeholders
/// 1, 2, … in order, and whose payloads are exactly the media, in that
/// order, each sent once; text that looks like a placeholder or a marker
/// stays as it was.
#[tokio::test]
async fn random_arguments_with_media_render_every_media_once_in_order() {
    let mut checked = 0;
    for seed in 1..=80u64 {
        let mut g = Gen(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut media = Vec::new();
        let values: Vec<serde_json::Value> = (0..1 + g.below(3))
            .map(|_| random_value(&mut g, 0, &mut media))
            .collect();
        if media.is_empty() {
            continue;
        }
        checked += 1;
        let provider =
            [Provider::OpenAi, Provider::Anthropic, Provider::Gemini][g.below(3) as usize];
        let mut args = Args::new();
        for (i, v) in values.iter().enumerate() {
            args = args.arg(&format!("a{i}"), &with_media(v, &media)).unwrap();
        }
        let json = args.as_json().to_owned();
        let (result, requests) = call(provider, args).await;
        result.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let body: serde_json::Value = serde_json::from_slice(&requests[0].body)
            .unwrap_or_else(|e| panic!("seed {seed}: the body is not JSON: {e}"));
        let mut sent = Vec::new();
        payloads(&body, &mut sent);
        assert_eq!(
            sent, media,
            "seed {seed} ({provider:?}): payloads in order, each once"
        );
        for (i, m) in media.iter().enumerate() {
            let kind = if m.starts_with(b"%PDF") {
                "document"
            } else {
                "image"
            };
            assert!(
                json.contains(&format!("\"<{kind} {}>\"", i + 1)),
                "seed {seed}: {json}"
            );
        }
        // The arguments text the model sees is the arguments' JSON exactly
        // (markers-like text and placeholders-like text untouched).
        let mut texts = Vec::new();
        strings(&body, &mut texts);
        let expected = format!("Input (JSON): {json}");
        assert!(
            texts.contains(&expected),
            "seed {seed}: {expected} not in {texts:?}"
        );
    }
    assert!(checked >= 30, "only {checked} seeds held media");
}

fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Over real HTTP on 127.0.0.1: a 3 MB image and a PDF reach the server
/// whole, in the body the wire wrote, on the first try and after a
/// correction.
#[tokio::test]
async fn media_reach_a_real_server_whole() {
    use support::{FakeServer, Reply};
    let server = FakeServer::start(
        vec![Reply::chat(r#"{"vendor":"ACME"}"#)],
        Reply::chat(r#"{"vendor":"ACME","total":7.0}"#),
    )
    .await;
    let client = Client::new(
        Config::builder(Provider::Compatible)
            .base_url(server.base_url())
            .max_transport_retries(0)
            .build()
            .unwrap(),
    )
    .unwrap();
    let mut png = std::fs::read(media("scan.png")).unwrap();
    let mut g = Gen(7);
    while png.len() < 3_000_000 {
        png.push(g.next() as u8);
    }
    let pdf = std::fs::read(media("invoice.pdf")).unwrap();
    let args = Args::new()
        .arg("scan", &Image::from_bytes("image/png", png.clone()))
        .unwrap()
        .arg("invoice", &Document::from_path(media("invoice.pdf")))
        .unwrap();
    let read = AiFunction::new("read_invoice", "Read the invoice.", &INVOICE_SCHEMA)
        .with_max_iterations(2);
    let invoice: Invoice = client
        .call_ai(&read, args, async { panic!("no fixture") })
        .await
        .unwrap();
    assert_eq!(invoice.total, 7.0);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "a correction turn");
    for request in &requests {
        let mut sent = Vec::new();
        payloads(&request.json(), &mut sent);
        assert_eq!(sent, [png.clone(), pdf.clone()]);
    }
}

/// A media URL that parsers read differently is refused before anything is
/// sent: `https://evil.example\@good.example.com/x.png` was shown as on
/// `good.example.com` and sent as is, while WHATWG parsers (the providers'
/// fetchers among them) read the `\` as `/` and fetch from `evil.example`.
/// What is accepted is shown by the host a WHATWG parser finds.
#[tokio::test]
async fn media_urls_that_parsers_read_differently_are_refused() {
    for url in [
        r"https://evil.example\@good.example.com/x.png",
        r"https://evil.example\\good.example.com/x.png",
        r"https:\\evil.example/x.png",
        r"https://good.example.com\..\x.png",
        "https://evil.example%5C@good.example.com/x.png",
        "https://good.example.com:99999/x.png",
        "https://[::1/x.png",
        "https://exa mple.com/x.png",
        "https:///x.png",
    ] {
        let reason = refused(Provider::Gemini, one("scan", &Image::from_url(url)), "scan").await;
        // Where a parser could read another host, none is shown as the
        // URL's (with `%5C@` the host is good.example.com to every parser,
        // and the user name is what is refused).
        if url.contains('\\') {
            assert!(!reason.contains("good.example.com"), "{url}: {reason}");
        }
    }
    // Accepted, and sent as the parser normalizes it.
    let (result, requests) = call(
        Provider::Gemini,
        one(
            "scan",
            &Image::from_url("HTTPS://Good.Example.COM/a/../x.png"),
        ),
    )
    .await;
    result.unwrap();
    let body = requests[0].json().to_string();
    assert!(body.contains("https://good.example.com/x.png"), "{body}");
}

/// Gemini's media types are those its guides list: MP3 is `audio/mp3`
/// ("Audio understanding"), and `fileData` for a URL carries a `mimeType`
/// (required by the SDKs' types and Vertex's reference), from the URL's
/// extension; a URL whose type cannot be told is refused for Gemini.
#[tokio::test]
async fn gemini_gets_the_media_types_its_docs_list() {
    let (result, requests) = call(
        Provider::Gemini,
        one("memo", &Audio::from_path(media("memo.mp3"))),
    )
    .await;
    result.unwrap();
    let body = requests[0].json().to_string();
    assert!(body.contains(r#""mimeType":"audio/mp3""#), "{body}");
    for (url, mime) in [
        ("https://example.com/a.pdf", "application/pdf"),
        ("https://example.com/scan.PNG?sig=1", "image/png"),
        ("https://example.com/p/photo.jpeg#frag", "image/jpeg"),
        ("https://example.com/photo.jpg", "image/jpeg"),
        ("https://example.com/x.webp", "image/webp"),
        ("https://example.com/x.gif", "image/gif"),
    ] {
        let args = if mime == "application/pdf" {
            one("doc", &Document::from_url(url))
        } else {
            one("doc", &Image::from_url(url))
        };
        let (result, requests) = call(Provider::Gemini, args).await;
        result.unwrap();
        let parts = &requests[0].json()["contents"][0]["parts"];
        let file = parts
            .as_array()
            .unwrap()
            .iter()
            .find_map(|p| p.get("fileData"))
            .unwrap_or_else(|| panic!("{url}: {parts}"));
        assert_eq!(file["mimeType"], mime, "{url}");
    }
    let reason = refused(
        Provider::Gemini,
        one("scan", &Image::from_url("https://example.com/render?id=7")),
        "scan",
    )
    .await;
    assert!(reason.contains("media type"), "{reason}");
}
