//! An `@ai` call traced to an OpenTelemetry collector over OTLP/HTTP
//! (docs/runtime.md, "OpenTelemetry"). The collector is the one
//! `OTEL_EXPORTER_OTLP_ENDPOINT` names (default `http://localhost:4318`);
//! the model is scripted in memory, so the example runs offline.
//!
//! ```sh
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 cargo run -p vox-runtime --example otel
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Provider};

static CONTACT: OutputSchema = OutputSchema::new(
    "Contact",
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#,
    false,
);
static READ: AiFunction =
    AiFunction::new("read_contact", "Read the contact.", &CONTACT).with_model("gpt-4o-mini");

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Contact {
    name: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The setup docs/runtime.md shows: an OTLP exporter, a tracer
    // provider, and the tracing-opentelemetry layer.
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .build()?;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("vox-example"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let transport = MemoryTransport::new().reply(ScriptedReply::json(
        200,
        &json!({"model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": {"role": "assistant",
            "content": "{\"name\":\"Anna\"}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7}}),
    ));
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-example")
        .build()?;
    let client = Client::builder(config).transport(transport).build()?;
    let contact: Contact = vox_runtime::block_on(client.call_ai(
        &READ,
        Args::new().arg("text", "Anna, 12 Main St")?,
        async { unreachable!("a provider is configured") },
    ))?;
    println!("{contact:?}");
    // Flushes the spans still batched.
    provider.shutdown()?;
    Ok(())
}
