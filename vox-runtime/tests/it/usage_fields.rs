//! Every provider's usage fields, read from bodies as each API documents
//! them (cached and reasoning tokens included), kept with the reply in a
//! cassette (docs/runtime.md, "Usage and cost").

use serde_json::{json, Value};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{CassetteMode, Client, Config, Provider};

static NAME: OutputSchema = OutputSchema::new(
    "Name",
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#,
    false,
);
static READ: AiFunction = AiFunction::new("read", "Read the name.", &NAME);

#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Name {
    name: String,
}

/// The usage a cassette recorded for `body` answered by `provider`.
async fn recorded_usage(provider: Provider, body: Value) -> Value {
    let dir = std::env::temp_dir().join(format!(
        "vox-usage-{}-{}-{}",
        provider.name(),
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let transport = MemoryTransport::new().reply(ScriptedReply::json(200, &body));
    let config = Config::builder(provider)
        .api_key("sk-usage")
        .cassette(&dir)
        .cassette_mode(CassetteMode::Record)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport)
        .build()
        .unwrap();
    let _: Name = client
        .call_ai(&READ, Args::new().arg("text", "Anna").unwrap(), async {
            panic!("no fixture")
        })
        .await
        .unwrap();
    let text = std::fs::read_to_string(dir.join("read.jsonl")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let entry: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    entry["reply"]["usage"].clone()
}

#[tokio::test]
async fn each_provider_s_usage_fields_are_read() {
    // OpenAI: cached tokens are part of prompt_tokens, reasoning tokens of
    // completion_tokens.
    let openai = json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "content": "{\"name\":\"Anna\"}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 50, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 10, "audio_tokens": 0}}});
    assert_eq!(
        recorded_usage(Provider::OpenAi, openai).await,
        json!({"prompt_tokens": 120, "completion_tokens": 30, "cached_tokens": 50, "reasoning_tokens": 10})
    );
    // Anthropic: input_tokens counts only what follows the cache; every
    // input token is the sum.
    let anthropic = json!({"type": "message", "role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"name": "Anna"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 7,
            "cache_read_input_tokens": 300, "cache_creation_input_tokens": 5}});
    assert_eq!(
        recorded_usage(Provider::Anthropic, anthropic).await,
        json!({"prompt_tokens": 325, "completion_tokens": 7, "cached_tokens": 300})
    );
    // Gemini: thoughts are billed as output beside the candidates.
    let gemini = json!({"candidates": [{"content": {"parts": [{"text": "{\"name\":\"Anna\"}"}],
        "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 90, "candidatesTokenCount": 12,
            "cachedContentTokenCount": 64, "thoughtsTokenCount": 40, "totalTokenCount": 142}});
    assert_eq!(
        recorded_usage(Provider::Gemini, gemini).await,
        json!({"prompt_tokens": 90, "completion_tokens": 52, "cached_tokens": 64, "reasoning_tokens": 40})
    );
    // Ollama: the counts of the evaluation.
    let ollama = json!({"model": "m", "message": {"role": "assistant", "content": "{\"name\":\"Anna\"}"},
        "done": true, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 9});
    assert_eq!(
        recorded_usage(Provider::Ollama, ollama).await,
        json!({"prompt_tokens": 26, "completion_tokens": 9})
    );
}
