//! Each wire's request, byte for byte: the first call and the correction
//! turn after a rejected reply, for every provider, on the in-memory
//! transport (docs/runtime.md, "Adding a provider"). The bodies are
//! snapshotted as the runtime sends them, pretty-printed with their key
//! order kept; the path and the headers that are not the key come first.

use crate::support;

use support::{Invoice, INVOICE_SCHEMA};
use vox_metadata::json::Json;
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::transport::{MemoryTransport, RecordedRequest, ScriptedReply};
use vox_runtime::{Client, Config, Provider, ResponseFormat};

/// A function with a doc comment, a temperature and two arguments.
static EXTRACT: AiFunction = AiFunction::new(
    "extract_invoice",
    "Extract the invoice fields from OCR text.",
    &INVOICE_SCHEMA,
)
.with_model("snap-model")
.with_temperature(0.2)
.with_max_iterations(2)
.with_max_tokens(512);

/// A bad reply (a field missing), then a good one, in each API's shape.
fn replies(provider: Provider) -> [ScriptedReply; 2] {
    let chat = |content: &str| {
        ScriptedReply::json(
            200,
            &serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant",
                "content": content}, "finish_reason": "stop"}]}),
        )
    };
    match provider {
        Provider::Anthropic => {
            let tool = |input: serde_json::Value| {
                ScriptedReply::json(
                    200,
                    &serde_json::json!({"type": "message", "role": "assistant", "content": [
                        {"type": "tool_use", "id": "toolu_snap", "name": "extract_invoice",
                         "input": input}], "stop_reason": "tool_use"}),
                )
            };
            [
                tool(serde_json::json!({"vendor": "ACME"})),
                tool(serde_json::json!({"vendor": "ACME", "total": 7.0})),
            ]
        }
        Provider::Gemini => {
            let text = |t: &str| {
                ScriptedReply::json(
                    200,
                    &serde_json::json!({"candidates": [{"content": {"role": "model",
                        "parts": [{"text": t}]}, "finishReason": "STOP"}]}),
                )
            };
            [
                text(r#"{"vendor":"ACME"}"#),
                text(r#"{"vendor":"ACME","total":7.0}"#),
            ]
        }
        Provider::Ollama => {
            let message = |t: &str| {
                ScriptedReply::json(
                    200,
                    &serde_json::json!({"model": "snap-model", "message": {"role": "assistant",
                        "content": t}, "done": true, "done_reason": "stop"}),
                )
            };
            [
                message(r#"{"vendor":"ACME"}"#),
                message(r#"{"vendor":"ACME","total":7.0}"#),
            ]
        }
        _ => [
            chat(r#"{"vendor":"ACME"}"#),
            chat(r#"{"vendor":"ACME","total":7.0}"#),
        ],
    }
}

/// The request as the snapshot shows it.
fn shown(request: &RecordedRequest) -> String {
    let body = std::str::from_utf8(&request.body).expect("UTF-8 body");
    let body = Json::parse(body).expect("the body is JSON").to_pretty();
    let mut headers: Vec<String> = request
        .headers
        .iter()
        .filter(|(_, v)| !v.is_sensitive())
        .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("<binary>")))
        .collect();
    headers.sort();
    let key = request
        .headers
        .iter()
        .find(|(_, v)| v.is_sensitive())
        .map_or("none".to_owned(), |(k, _)| k.to_string());
    format!(
        "POST {}\n{}\nkey in: {key}\n\n{body}\n",
        request.path(),
        headers.join("\n")
    )
}

async fn requests_of(provider: Provider, format: ResponseFormat) -> Vec<RecordedRequest> {
    let args = Args::new()
        .arg("ocr_text", "ACME \"Widgets\"\n2 × 3.50")
        .unwrap()
        .arg("currency", "EUR")
        .unwrap();
    requests_with(provider, format, args).await
}

async fn requests_with(
    provider: Provider,
    format: ResponseFormat,
    args: Args,
) -> Vec<RecordedRequest> {
    requests_stating(provider, format, args, vox_runtime::StateShape::Auto).await
}

async fn requests_stating(
    provider: Provider,
    format: ResponseFormat,
    args: Args,
    rule: vox_runtime::StateShape,
) -> Vec<RecordedRequest> {
    let [bad, good] = replies(provider);
    let transport = MemoryTransport::new().reply(bad).reply(good);
    let config = Config::builder(provider)
        .base_url("http://127.0.0.1:9/snap")
        .api_key("sk-snap-key-0123")
        .response_format(format)
        .state_shape(rule)
        .max_transport_retries(0)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    let invoice: Invoice = client
        .call_ai(&EXTRACT, args, async { unreachable!("not fixture") })
        .await
        .unwrap();
    assert_eq!(invoice.vendor, "ACME");
    transport.requests()
}

#[tokio::test]
async fn each_wire_renders_a_first_call_and_a_correction_turn() {
    for (name, provider, format) in [
        ("openai", Provider::OpenAi, ResponseFormat::JsonSchema),
        (
            "openrouter",
            Provider::OpenRouter,
            ResponseFormat::JsonSchema,
        ),
        (
            "compatible",
            Provider::Compatible,
            ResponseFormat::JsonSchema,
        ),
        (
            "compatible_json_object",
            Provider::Compatible,
            ResponseFormat::JsonObject,
        ),
        ("anthropic", Provider::Anthropic, ResponseFormat::JsonSchema),
        ("gemini", Provider::Gemini, ResponseFormat::JsonSchema),
        ("ollama", Provider::Ollama, ResponseFormat::JsonSchema),
    ] {
        let requests = requests_of(provider, format).await;
        assert_eq!(requests.len(), 2, "{name}");
        insta::assert_snapshot!(format!("{name}_first_call"), shown(&requests[0]));
        insta::assert_snapshot!(format!("{name}_correction"), shown(&requests[1]));
        // The correction turn is the first call with turns appended: the
        // same request up to the end of the first user message.
        let first = std::str::from_utf8(&requests[0].body).unwrap();
        let second = std::str::from_utf8(&requests[1].body).unwrap();
        let common = first
            .bytes()
            .zip(second.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        assert!(
            first[..common].contains("EUR"),
            "{name}: the correction turn changed the first call"
        );
    }
}

/// When the system message states the schema's shape (docs/runtime.md,
/// "What the model sees"): under `auto` only where the request does not
/// hold the model to a schema it is shown; `always` and `never` for every
/// provider.
#[tokio::test]
async fn the_shape_is_stated_only_where_the_schema_is_not_enforced() {
    use vox_runtime::StateShape;
    // (provider, format, stated under auto)
    let table = [
        (Provider::OpenAi, ResponseFormat::JsonSchema, false),
        (Provider::OpenRouter, ResponseFormat::JsonSchema, true),
        (Provider::Compatible, ResponseFormat::JsonSchema, false),
        (Provider::Compatible, ResponseFormat::JsonObject, true),
        (Provider::Anthropic, ResponseFormat::JsonSchema, false),
        (Provider::Gemini, ResponseFormat::JsonSchema, false),
        (Provider::Ollama, ResponseFormat::JsonSchema, true),
    ];
    for (provider, format, auto) in table {
        for (rule, want) in [
            (StateShape::Auto, auto),
            (StateShape::Always, true),
            (StateShape::Never, false),
        ] {
            let args = Args::new()
                .arg("ocr_text", "ACME")
                .unwrap()
                .arg("currency", "EUR")
                .unwrap();
            let requests = requests_stating(provider, format, args, rule).await;
            let body = std::str::from_utf8(&requests[0].body).unwrap();
            // The stated shape pictures the fields: `"vendor": <string>`.
            let stated = body.contains("<string>");
            assert_eq!(stated, want, "{provider:?} {format:?} {rule:?}: {body}");
            // The schema itself still travels in the provider's field.
            assert!(body.contains("vendor"), "{body}");
        }
    }
}

/// A small real file of `tests/media`.
fn media(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/media")
        .join(name)
}

/// Each wire sends an image and a PDF in its documented form (docs/runtime.md,
/// "Media arguments"), labelled with the placeholder the arguments show, and
/// the correction turn keeps them in the first user message.
#[tokio::test]
async fn each_wire_sends_an_image_and_a_pdf_in_its_documented_form() {
    use vox_runtime::{Document, Image};
    let image = || {
        Args::new()
            .arg("scan", &Image::from_path(media("scan.png")))
            .unwrap()
            .arg("currency", "EUR")
            .unwrap()
    };
    let pdf = || {
        Args::new()
            .arg("invoice", &Document::from_path(media("invoice.pdf")))
            .unwrap()
            .arg("currency", "EUR")
            .unwrap()
    };
    let urls = || {
        Args::new()
            .arg(
                "pages",
                &vec![Image::from_url(
                    "https://files.example.com/scan.png?sig=s3cr3t",
                )],
            )
            .unwrap()
            .arg("currency", "EUR")
            .unwrap()
    };
    // A PDF by URL: the APIs that fetch one are told it is a PDF where the
    // part says the type (Gemini's `fileData` `mimeType`).
    let pdf_url = || {
        Args::new()
            .arg(
                "invoice",
                &Document::from_url("https://files.example.com/invoice.pdf?sig=s3cr3t"),
            )
            .unwrap()
            .arg("currency", "EUR")
            .unwrap()
    };
    for (name, provider, what) in [
        ("openai", Provider::OpenAi, "image"),
        ("openai", Provider::OpenAi, "pdf"),
        ("openai", Provider::OpenAi, "url"),
        ("anthropic", Provider::Anthropic, "image"),
        ("anthropic", Provider::Anthropic, "pdf"),
        ("anthropic", Provider::Anthropic, "url"),
        ("anthropic", Provider::Anthropic, "pdf_url"),
        ("gemini", Provider::Gemini, "image"),
        ("gemini", Provider::Gemini, "pdf"),
        ("gemini", Provider::Gemini, "url"),
        ("gemini", Provider::Gemini, "pdf_url"),
        ("ollama", Provider::Ollama, "image"),
    ] {
        let args = match what {
            "image" => image(),
            "pdf" => pdf(),
            "pdf_url" => pdf_url(),
            _ => urls(),
        };
        let requests = requests_with(provider, ResponseFormat::JsonSchema, args).await;
        assert_eq!(requests.len(), 2, "{name} {what}");
        insta::assert_snapshot!(
            format!("{name}_media_{what}_first_call"),
            shown(&requests[0])
        );
        // The correction turn is the first call with turns appended: the
        // media stay in the first user message.
        let first = std::str::from_utf8(&requests[0].body).unwrap();
        let second = std::str::from_utf8(&requests[1].body).unwrap();
        let common = first
            .bytes()
            .zip(second.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        if provider == Provider::Anthropic {
            // The correction turn adds a cache breakpoint after the media
            // (docs/runtime.md, "Prompt caching"); the message is the same.
            let strip = |body: &[u8]| {
                let mut v: serde_json::Value = serde_json::from_slice(body).unwrap();
                for block in v["messages"][0]["content"].as_array_mut().unwrap() {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
                v["messages"][0].clone()
            };
            assert_eq!(
                strip(&requests[0].body),
                strip(&requests[1].body),
                "{name} {what}: the correction turn changed the first message"
            );
        } else {
            assert!(
                first[..common].contains("EUR") && first[..common].contains("<"),
                "{name} {what}: the correction turn changed the first message"
            );
        }
        assert!(second.len() > first.len(), "{name} {what}");
    }
}
