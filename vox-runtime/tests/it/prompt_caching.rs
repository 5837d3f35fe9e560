//! Anthropic prompt caching (docs/runtime.md, "Prompt caching"): a
//! breakpoint after the constant prefix when it is long enough to be
//! cached, and after the media of a call once a correction follows.

use serde_json::{json, Value};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Image, Provider};

static NAME: OutputSchema = OutputSchema::new(
    "Name",
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#,
    false,
);
static SHORT: AiFunction = AiFunction::new("read", "Read the name.", &NAME)
    .with_model("claude-sonnet-4-5")
    .with_max_iterations(2);

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Name {
    name: String,
}

fn tool(input: Value) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &json!({"type": "message", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": input}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}),
    )
}

async fn bodies(
    function: &'static AiFunction,
    args: Args,
    replies: Vec<ScriptedReply>,
) -> Vec<Value> {
    let mut transport = MemoryTransport::new();
    for r in replies {
        transport = transport.reply(r);
    }
    let config = Config::builder(Provider::Anthropic)
        .api_key("sk-ant-cache")
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    let _: Name = client
        .call_ai(function, args, async { panic!("no fixture") })
        .await
        .unwrap();
    transport.requests().iter().map(|r| r.json()).collect()
}

#[tokio::test]
async fn a_long_constant_prefix_gets_a_breakpoint_and_a_short_one_none() {
    let short = bodies(
        &SHORT,
        Args::new().arg("text", "x").unwrap(),
        vec![tool(json!({"name": "A"}))],
    )
    .await;
    assert!(short[0]["system"].is_string(), "{}", short[0]["system"]);
    static LONG_TEXT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    let text = LONG_TEXT.get_or_init(|| {
        Box::leak(
            "Read the name, following these house rules. "
                .repeat(120)
                .into_boxed_str(),
        )
    });
    let long: &'static AiFunction = Box::leak(Box::new(
        AiFunction::new("read", text, &NAME).with_model("claude-sonnet-4-5"),
    ));
    let body = &bodies(
        long,
        Args::new().arg("text", "x").unwrap(),
        vec![tool(json!({"name": "A"}))],
    )
    .await[0];
    let system = body["system"].as_array().expect("system as blocks");
    assert_eq!(system.len(), 1);
    assert_eq!(system[0]["type"], "text");
    assert!(system[0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Read the name"));
    assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}));
}

#[tokio::test]
async fn media_get_a_breakpoint_once_a_correction_follows() {
    let scan = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/media/scan.png");
    let args = Args::new().arg("scan", &Image::from_path(scan)).unwrap();
    let bodies = bodies(
        &SHORT,
        args,
        vec![tool(json!({"nom": "A"})), tool(json!({"name": "A"}))],
    )
    .await;
    let last_block = |body: &Value| {
        body["messages"][0]["content"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap()
    };
    assert!(last_block(&bodies[0]).get("cache_control").is_none());
    assert_eq!(
        last_block(&bodies[1])["cache_control"],
        json!({"type": "ephemeral"})
    );
    // The media block itself is still the first turn's.
    assert!(bodies[1]["messages"][0]["content"][0].get("type").is_some());
}
