//! OpenTelemetry (docs/runtime.md, "OpenTelemetry"): the `tracing` spans
//! of a call, exported by `tracing-opentelemetry` unchanged, carry the
//! GenAI semantic-convention attributes and the attempt/fallback structure
//! — and no prompt, reply or key unless the configuration opts in to the
//! text (never the key).
//!
//! A binary of its own: the OpenTelemetry layer is the process's global
//! subscriber, installed before any call, so no other test's thread can
//! leave a call's spans disabled (tracing caches each callsite's interest
//! process-wide); its tests run one at a time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{CallOptions, Client, Config, Provider};

const OPENAI_KEY: &str = "sk-otel-0a1b2c3d4e5f";
const OPENROUTER_KEY: &str = "sk-or-otel-6a7b8c9d";

static CONTACT: OutputSchema = OutputSchema::new(
    "Contact",
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#,
    false,
);
static READ: AiFunction = AiFunction::new("read_contact", "Read the contact.", &CONTACT)
    .with_model("gpt-4o-mini")
    .with_max_iterations(3);

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Contact {
    name: String,
}

/// The issue's call: an invalid first attempt (100 in, 20 out, 50 cached),
/// a 429 the transport retries and gets again, then the fallback's valid
/// answer (120 in, 30 out, 10 reasoning).
fn scripted() -> MemoryTransport {
    MemoryTransport::new()
        .reply(ScriptedReply::json(
            200,
            &json!({"model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant",
                "content": "{\"nom\":\"Secret Anna\"}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                    "prompt_tokens_details": {"cached_tokens": 50}}}),
        ))
        .reply(ScriptedReply::new(429, "slow down"))
        .reply(ScriptedReply::new(429, "slow down"))
        .reply(ScriptedReply::json(
            200,
            &json!({"model": "backup-model-v2",
                "choices": [{"index": 0, "message": {"role": "assistant",
                "content": "{\"name\":\"Secret Anna\"}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                    "completion_tokens_details": {"reasoning_tokens": 10}}}),
        ))
}

/// The process's OpenTelemetry pipeline: the tracing-opentelemetry layer
/// over an in-memory exporter, the global subscriber.
fn pipeline() -> &'static (SdkTracerProvider, InMemorySpanExporter) {
    static PIPELINE: OnceLock<(SdkTracerProvider, InMemorySpanExporter)> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("vox-test")));
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        (provider, exporter)
    })
}

/// One test at a time: they share the exporter.
fn exclusive() -> MutexGuard<'static, ()> {
    static EXCLUSIVE: Mutex<()> = Mutex::new(());
    EXCLUSIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the scripted call under the OpenTelemetry pipeline; returns the
/// spans it exported.
fn exported(trace_content: bool) -> Vec<SpanData> {
    let (provider, exporter) = pipeline();
    exporter.reset();
    let transport = scripted();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = Config::builder(Provider::OpenAi)
            .api_key(OPENAI_KEY)
            .provider_api_key(Provider::OpenRouter, OPENROUTER_KEY)
            .max_transport_retries(1)
            .backoff(Duration::from_millis(1), Duration::from_millis(2))
            .trace_content(trace_content)
            .build()
            .unwrap();
        let client = Client::builder(config)
            .transport(transport.clone())
            .build()
            .unwrap();
        let options = CallOptions::new()
            .fallback(["openrouter:backup-model"])
            .temperature(0.3);
        let contact: Contact = client
            .call_ai_with(
                &READ,
                &options,
                Args::new().arg("text", "Secret Anna, 12 Main St").unwrap(),
                async { panic!("no fixture") },
            )
            .await
            .unwrap();
        assert_eq!(contact.name, "Secret Anna");
    });
    provider.force_flush().unwrap();
    assert_eq!(transport.request_count(), 4);
    exporter.get_finished_spans().unwrap()
}

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
}

fn text(attrs: &HashMap<String, Value>, key: &str) -> String {
    attrs
        .get(key)
        .unwrap_or_else(|| panic!("no `{key}` in {attrs:#?}"))
        .as_str()
        .into_owned()
}

#[test]
fn an_exporter_receives_a_call_span_and_one_inference_span_per_attempt() {
    let _exclusive = exclusive();
    let spans = exported(false);
    let calls: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "vox read_contact")
        .collect();
    assert_eq!(calls.len(), 1, "{spans:#?}");
    let call = calls[0];
    let c = attributes(call);
    assert_eq!(text(&c, "gen_ai.operation.name"), "chat");
    assert_eq!(text(&c, "gen_ai.provider.name"), "openai");
    assert_eq!(text(&c, "gen_ai.request.model"), "gpt-4o-mini");
    assert_eq!(text(&c, "gen_ai.response.model"), "backup-model-v2");
    assert_eq!(text(&c, "gen_ai.response.finish_reasons"), "stop");
    assert_eq!(text(&c, "gen_ai.usage.input_tokens"), "220");
    assert_eq!(text(&c, "gen_ai.usage.output_tokens"), "50");
    assert_eq!(text(&c, "gen_ai.usage.cache_read.input_tokens"), "50");
    assert_eq!(text(&c, "gen_ai.usage.reasoning.output_tokens"), "10");
    assert_eq!(text(&c, "vox.attempts"), "2");
    assert_eq!(text(&c, "vox.fallbacks"), "1");
    assert_eq!(text(&c, "vox.transport_retries"), "1");
    assert!(!c.contains_key("error.type"), "{c:#?}");

    let mut attempts: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == call.span_context.span_id())
        .collect();
    attempts.sort_by_key(|s| s.start_time);
    let names: Vec<&str> = attempts.iter().map(|s| s.name.as_ref()).collect();
    // The second request to OpenAI got a 429 twice: an inference span
    // that failed, which is not a model attempt.
    assert_eq!(
        names,
        ["chat gpt-4o-mini", "chat gpt-4o-mini", "chat backup-model"],
        "{spans:#?}"
    );
    let (first, failed, second) = (
        attributes(attempts[0]),
        attributes(attempts[1]),
        attributes(attempts[2]),
    );
    for (span, (attrs, attempt)) in
        attempts
            .iter()
            .zip([(&first, "1"), (&failed, "2"), (&second, "1")])
    {
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(span.span_context.trace_id(), call.span_context.trace_id());
        assert_eq!(text(attrs, "gen_ai.operation.name"), "chat");
        assert_eq!(text(attrs, "gen_ai.request.temperature"), "0.3");
        assert_eq!(text(attrs, "gen_ai.request.max_tokens"), "4096");
        assert_eq!(text(attrs, "vox.attempt"), attempt);
    }
    assert_eq!(text(&failed, "error.type"), "vox.http_status");
    assert!(!failed.contains_key("gen_ai.usage.input_tokens"));
    assert_eq!(text(&first, "gen_ai.provider.name"), "openai");
    assert_eq!(
        text(&first, "gen_ai.response.model"),
        "gpt-4o-mini-2024-07-18"
    );
    assert_eq!(text(&first, "gen_ai.response.finish_reasons"), "stop");
    assert_eq!(text(&first, "gen_ai.usage.input_tokens"), "100");
    assert_eq!(text(&first, "gen_ai.usage.output_tokens"), "20");
    assert_eq!(text(&first, "gen_ai.usage.cache_read.input_tokens"), "50");
    assert_eq!(text(&first, "vox.fallback"), "0");
    assert_eq!(text(&first, "error.type"), "vox.rejected_reply");
    assert!(text(&first, "vox.rejected").contains("nom"));
    assert_eq!(text(&second, "gen_ai.provider.name"), "openrouter");
    assert_eq!(text(&second, "gen_ai.request.model"), "backup-model");
    assert_eq!(text(&second, "gen_ai.response.model"), "backup-model-v2");
    assert_eq!(text(&second, "gen_ai.usage.input_tokens"), "120");
    assert_eq!(text(&second, "gen_ai.usage.reasoning.output_tokens"), "10");
    assert_eq!(text(&second, "vox.fallback"), "1");
    assert!(!second.contains_key("vox.rejected"));

    // No prompt or reply text, no key, in any attribute.
    let everything = format!("{spans:?}");
    assert!(!everything.contains("12 Main St"), "the prompt leaked");
    assert!(!everything.contains("gen_ai.input.messages"));
    assert!(!everything.contains("gen_ai.output.messages"));
    for key in [OPENAI_KEY, OPENROUTER_KEY] {
        assert!(!everything.contains(key), "a key leaked");
    }
}

#[test]
fn opting_in_records_the_prompt_and_reply_but_never_a_key() {
    let _exclusive = exclusive();
    let spans = exported(true);
    let attempt = spans
        .iter()
        .find(|s| s.name == "chat backup-model")
        .expect("the fallback's attempt");
    let a = attributes(attempt);
    assert_eq!(text(&a, "gen_ai.system_instructions"), "Read the contact.");
    assert!(text(&a, "gen_ai.input.messages").contains("12 Main St"));
    let output: serde_json::Value =
        serde_json::from_str(&text(&a, "gen_ai.output.messages")).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(
        output[0]["parts"][0]["content"],
        r#"{"name":"Secret Anna"}"#
    );
    let everything = format!("{spans:?}");
    for key in [OPENAI_KEY, OPENROUTER_KEY] {
        assert!(!everything.contains(key), "a key leaked");
    }
}

/// The example program (`examples/otel.rs`), built if this test binary was
/// built without it.
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    let bin = dir.join(format!("otel{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "vox-runtime", "--example", "otel"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "building the otel example failed");
    }
    bin
}

/// One OTLP/HTTP request's path and body, as a collector receives it.
fn receive(listener: &TcpListener) -> (String, Vec<u8>) {
    let (stream, _) = listener.accept().unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let mut stream = reader.into_inner();
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
        )
        .unwrap();
    (path, body)
}

#[test]
fn an_otlp_http_receiver_on_loopback_receives_the_example_s_spans() {
    let bin = example_binary();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let collector = std::thread::spawn(move || {
        let mut bodies = Vec::new();
        // The batch processor may send the spans in one request or more;
        // the example's last request ends when it exits.
        listener.set_nonblocking(false).unwrap();
        while bodies.len() < 8 {
            let (path, body) = receive(&listener);
            assert_eq!(path, "/v1/traces");
            let done = String::from_utf8_lossy(&body).contains("vox read_contact");
            bodies.push(body);
            if done {
                break;
            }
        }
        bodies
    });
    let output = Command::new(&bin)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("VOX_LLM_PROVIDER")
        .env_remove("VOX_LLM_TRACE_CONTENT")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the example failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bodies = collector.join().unwrap();
    let spans: Vec<serde_json::Value> = bodies
        .iter()
        .flat_map(|b| {
            let v: serde_json::Value = serde_json::from_slice(b).unwrap();
            v["resourceSpans"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .flat_map(|r| r["scopeSpans"].as_array().cloned().unwrap_or_default())
                .flat_map(|s| s["spans"].as_array().cloned().unwrap_or_default())
        })
        .collect();
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.contains(&"vox read_contact"), "{names:?}");
    assert!(names.contains(&"chat gpt-4o-mini"), "{names:?}");
    let attempt = spans
        .iter()
        .find(|s| s["name"] == "chat gpt-4o-mini")
        .unwrap();
    let keys: Vec<&str> = attempt["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["key"].as_str())
        .collect();
    for key in [
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.response.finish_reasons",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
}
