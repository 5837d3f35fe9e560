//! Anthropic's Messages API: `POST {base}/messages` with `x-api-key` and
//! `anthropic-version`, structured output through a forced tool call
//! whose input is the result ("Tool use with Claude" guide).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use vox_metadata::providers::{tool_description, tool_name};

use serde::Serialize;

use super::RequestParts;
use super::{borrowed, read_object, temperature, KeyHeader, Message, Prepare, Prepared, Protocol};
use crate::error::Error;
use crate::media::load::Content;
use crate::media::Kind;
use crate::prompt::{Conversation, Step};
use crate::redact::Redactor;
use crate::reply::{Answer, ResponseMeta, Usage};
use crate::server_text::REFUSAL_CHARS;
use crate::stream::{Event, Streamed};

/// Anthropic's Messages API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anthropic;

impl Protocol for Anthropic {
    fn path(&self, _model: &str) -> Cow<'static, str> {
        Cow::Borrowed("/messages")
    }

    // Anthropic's "Messages" reference: `x-api-key`, `anthropic-version`.
    fn key_header(&self) -> KeyHeader {
        KeyHeader {
            name: reqwest::header::HeaderName::from_static("x-api-key"),
            bearer: false,
        }
    }

    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("anthropic-version", "2023-06-01")]
    }

    // "Tool use with Claude": a forced tool call (`tool_choice: {"type":
    // "tool", "name": …}`) whose `input_schema` is the output schema; the
    // answer is the `tool_use` block's `input`.
    fn prepare(&self, input: Prepare<'_>) -> Result<Prepared, Error> {
        let tool = tool_name(input.function);
        let mut system = if input.has_tools {
            format!(
                "{}\n\nCall the other tools as you need them; then answer by calling the tool \
                 `{tool}` once: its input is the result.",
                input.task,
            )
        } else {
            format!(
                "{}\n\nAnswer by calling the tool `{tool}` once: its input is the result.",
                input.task,
            )
        };
        // Only when asked (`VOX_LLM_STATE_SHAPE=always`): the tool's
        // `input_schema` shows the model the schema already.
        if let Some(shape) = input.shape {
            system.push_str("\nIts input has this shape:\n");
            system.push_str(shape);
        }
        Ok(Prepared {
            system,
            schema: None,
            tool: Some((tool, tool_description(input.function))),
        })
    }

    fn write_request(
        &self,
        parts: &RequestParts,
        conversation: &Conversation,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        let (tool, description) = match &parts.tool {
            Some((tool, description)) => (&**tool, &**description),
            // Parts prepared by this wire always name the tool.
            None => ("result", ""),
        };
        serde_json::to_writer(
            out,
            &AnthropicRequest {
                model: parts.model(),
                // Required by the Messages API.
                max_tokens: parts.max_tokens(),
                system: System {
                    text: &parts.system,
                    cached: cacheable(parts),
                },
                // The user's tools, then the answer's ("Tool use with
                // Claude": `tool_choice: {"type": "any"}` makes the model
                // call one of them — a tool, or the answer).
                tools: parts
                    .tools
                    .iter()
                    .map(|t| Tool {
                        name: t.name,
                        description: t.description,
                        input_schema: &t.parameters,
                    })
                    .chain([Tool {
                        name: tool,
                        description,
                        input_schema: &parts.schema,
                    }])
                    .collect(),
                tool_choice: if parts.tools.is_empty() {
                    ToolChoice {
                        kind: "tool",
                        name: Some(tool),
                    }
                } else {
                    ToolChoice {
                        kind: "any",
                        name: None,
                    }
                },
                messages: AnthropicMessages(conversation),
                // The Messages API takes temperatures from 0 to 1.
                temperature: temperature(parts, 1.0),
            },
        )
    }

    // Messages streaming ("Streaming Messages"): `message_start` (input
    // usage), `content_block_start` (the forced `tool_use` block's id and
    // name), `content_block_delta` (`input_json_delta.partial_json`, or
    // `text_delta`), `message_delta` (`stop_reason`, output usage),
    // `message_stop`; `ping` is skipped and `error` fails the request.
    // Fine-grained tool streaming (`eager_input_streaming`) is not asked
    // for: it sends tool input unvalidated, so a cut-off reply could end
    // in input that is not JSON, and the default streaming already sends
    // the input in pieces.
    fn read_event(
        &self,
        event: &Event,
        streamed: &mut Streamed,
        redactor: &Redactor,
    ) -> Result<(), Error> {
        let data: StreamEvent<'_> = read_object(event.data)?;
        match data.kind.as_ref() {
            "message_start" => {
                let (usage, model) = data.message.map_or((None, None), |m| (m.usage, m.model));
                if model.is_some() {
                    streamed.meta.model = model;
                }
                if let Some(usage) = usage {
                    streamed.usage.prompt_tokens = usage.input();
                    streamed.usage.cached_tokens = usage.cache_read_input_tokens;
                    if usage.output_tokens.is_some() {
                        streamed.usage.completion_tokens = usage.output_tokens;
                    }
                }
            }
            "content_block_start" => {
                if let Some(block) = data.content_block {
                    match block.kind.as_ref() {
                        "tool_use" if streamed.tool.is_none() => {
                            // The tool's input is the answer: text before
                            // it is not.
                            streamed.content.clear();
                            streamed.has_content = true;
                            streamed.tool = Some((
                                block.id.unwrap_or_default().into_owned(),
                                block.name.unwrap_or_default().into_owned(),
                            ));
                            tool_block_open(streamed, data.index);
                        }
                        "text" if streamed.tool.is_none() => {
                            if let Some(text) = block.text {
                                streamed.push_content(&text);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "content_block_delta" => {
                if let Some(delta) = data.delta {
                    match delta.kind.as_deref() {
                        Some("input_json_delta") if tool_block_is(streamed, data.index) => {
                            if let Some(json) = delta.partial_json {
                                streamed.push_content(&json);
                            }
                        }
                        Some("text_delta") if streamed.tool.is_none() => {
                            if let Some(text) = delta.text {
                                streamed.push_content(&text);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "message_delta" => {
                if let Some(usage) = data.usage {
                    if usage.output_tokens.is_some() {
                        streamed.usage.completion_tokens = usage.output_tokens;
                    }
                    if usage.input().is_some() {
                        streamed.usage.prompt_tokens = usage.input();
                    }
                    if usage.cache_read_input_tokens.is_some() {
                        streamed.usage.cached_tokens = usage.cache_read_input_tokens;
                    }
                }
                let stop = data.delta.and_then(|d| d.stop_reason);
                if let Some(reason) = &stop {
                    streamed.meta.finish_reason = Some(reason.to_string());
                }
                match stop.as_deref() {
                    Some("max_tokens") => streamed.truncated = Some("stop_reason = \"max_tokens\""),
                    Some("model_context_window_exceeded") => {
                        streamed.truncated = Some("stop_reason = \"model_context_window_exceeded\"")
                    }
                    Some("refusal") => {
                        let said = Some(streamed.content.as_str())
                            .filter(|t| !t.trim().is_empty())
                            .map(|t| format!(": {}", redactor.shown(t, REFUSAL_CHARS)))
                            .unwrap_or_default();
                        streamed.refused = Some(format!(
                            "the model refused (stop_reason = \"refusal\"){said}"
                        ));
                    }
                    _ => {}
                }
            }
            "message_stop" => streamed.finished = true,
            "error" => {
                let error = data.error.unwrap_or_default();
                let status = match error.kind.as_deref() {
                    Some("invalid_request_error") => 400,
                    Some("authentication_error") => 401,
                    Some("permission_error") => 403,
                    Some("not_found_error") => 404,
                    Some("request_too_large") => 413,
                    Some("rate_limit_error") => 429,
                    Some("overloaded_error") => 529,
                    _ => 500,
                };
                let message = format!(
                    "{}: {}",
                    error.kind.as_deref().unwrap_or("error"),
                    error.message.as_deref().unwrap_or_default()
                );
                return Err(super::stream_error(status, &message, redactor));
            }
            _ => {}
        }
        Ok(())
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: AnthropicResponse<'_> = read_object(body)?;
        let usage = response.usage.unwrap_or_default();
        let mut answer = Answer {
            usage: Usage {
                prompt_tokens: usage.input(),
                completion_tokens: usage.output_tokens,
                cached_tokens: usage.cache_read_input_tokens,
                reasoning_tokens: None,
            },
            meta: ResponseMeta {
                model: response.model,
                finish_reason: response.stop_reason.as_deref().map(str::to_owned),
            },
            ..Answer::default()
        };
        let mut texts: Vec<Cow<'_, str>> = Vec::new();
        for raw in response.content {
            let block: AnthropicBlock<'_> = read_object(raw.get())?;
            if block.kind == "tool_use" {
                answer.tool_calls.push(crate::tools::ToolCall {
                    id: block.id.as_deref().unwrap_or_default().to_owned(),
                    name: block.name.as_deref().unwrap_or_default().to_owned(),
                    arguments: block.input.map(|i| i.get().to_owned()).unwrap_or_default(),
                    raw: Some(raw.get().to_owned()),
                });
            }
            match block.kind.as_ref() {
                "tool_use" if answer.tool_use.is_none() => {
                    answer.content = block.input.map(|input| Cow::Borrowed(input.get()));
                    answer.tool_use = Some((raw.get(), block.id.unwrap_or_default()));
                }
                "text" => texts.extend(block.text),
                _ => {}
            }
        }
        if answer.content.is_none() && !texts.is_empty() {
            // No tool call (it was forced, but a reply may lack it):
            // the text may still hold the JSON.
            answer.content = Some(Cow::Owned(texts.concat()));
        }
        match response.stop_reason.as_deref() {
            Some("max_tokens") => answer.truncated = Some("stop_reason = \"max_tokens\""),
            // The reply filled the model's context window: cut off like one
            // that hit `max_tokens` ("Handling stop reasons").
            Some("model_context_window_exceeded") => {
                answer.truncated = Some("stop_reason = \"model_context_window_exceeded\"")
            }
            Some("refusal") => {
                answer.refused = Some(format!(
                    "the model refused (stop_reason = \"refusal\"){}",
                    answer
                        .content
                        .as_deref()
                        .filter(|t| !t.trim().is_empty())
                        .map(|t| format!(": {}", redactor.shown(t, REFUSAL_CHARS)))
                        .unwrap_or_default()
                ))
            }
            _ => {}
        }
        Ok(answer)
    }
}

/// Notes the index of the forced tool's block: its deltas are the input.
fn tool_block_open(streamed: &mut Streamed, index: Option<u64>) {
    streamed.tool_index = index;
}

fn tool_block_is(streamed: &Streamed, index: Option<u64>) -> bool {
    streamed.tool.is_some() && index == streamed.tool_index
}

/// One event of a streamed Messages answer.
#[derive(Debug, Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<StreamMessage>,
    #[serde(default, borrow)]
    content_block: Option<AnthropicBlock<'a>>,
    #[serde(default, borrow)]
    delta: Option<StreamDelta<'a>>,
    #[serde(default)]
    usage: Option<AnthropicUsage>,
    #[serde(default)]
    error: Option<StreamError>,
}

#[derive(Debug, Deserialize)]
struct StreamMessage {
    #[serde(default)]
    usage: Option<AnthropicUsage>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Debug, Deserialize)]
struct StreamDelta<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "borrowed")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Deserialize)]
struct StreamError {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// An Anthropic Messages API response ("Messages" API reference: `content`
/// blocks, `stop_reason`, `usage.input_tokens`/`output_tokens`).
#[derive(Debug, Deserialize)]
struct AnthropicResponse<'a> {
    #[serde(default)]
    model: Option<String>,
    #[serde(default, borrow)]
    content: Vec<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<AnthropicUsage>,
}

#[derive(Debug, Deserialize)]
struct AnthropicBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct AnthropicUsage {
    /// The input tokens after the last cache breakpoint (not cached).
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl AnthropicUsage {
    /// Every input token (`input_tokens` counts only those after the
    /// cache: "Prompt caching", tracking cache performance), and those
    /// read from the cache.
    fn input(&self) -> Option<u64> {
        match (
            self.input_tokens,
            self.cache_read_input_tokens,
            self.cache_creation_input_tokens,
        ) {
            (None, None, None) => None,
            (a, b, c) => Some(a.unwrap_or(0) + b.unwrap_or(0) + c.unwrap_or(0)),
        }
    }
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: System<'a>,
    tools: Vec<Tool<'a>>,
    tool_choice: ToolChoice<'a>,
    messages: AnthropicMessages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

/// The system text: a string, or when the constant prefix (the tool and
/// the system text) is long enough to be cached, one text block with a
/// `cache_control` breakpoint ("Prompt caching": the prefix of tools, then
/// system, up to the breakpoint is cached; shorter prefixes are not
/// cached at all).
struct System<'a> {
    text: &'a RawValue,
    cached: bool,
}

impl Serialize for System<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        if !self.cached {
            return self.text.serialize(serializer);
        }
        struct Block<'b>(&'b RawValue);
        impl Serialize for Block<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", self.0)?;
                map.serialize_entry("cache_control", &Ephemeral::default())?;
                map.end()
            }
        }
        let mut seq = serializer.serialize_seq(Some(1))?;
        seq.serialize_element(&Block(self.text))?;
        seq.end()
    }
}

/// `{"type": "ephemeral"}`, a cache breakpoint.
#[derive(Serialize, Default)]
struct Ephemeral {
    #[serde(rename = "type")]
    kind: EphemeralKind,
}

#[derive(Serialize, Default)]
enum EphemeralKind {
    #[default]
    #[serde(rename = "ephemeral")]
    Ephemeral,
}

/// Whether the constant prefix (tool schema and system text) reaches the
/// shortest prefix Anthropic caches: 2,048 tokens for the Haiku models,
/// 1,024 for the others ("Prompt caching", cache limitations), at about
/// four bytes a token.
fn cacheable(parts: &RequestParts) -> bool {
    let tokens = (parts.system.get().len() + parts.schema.get().len()) / 4;
    let least = if parts.model().contains("haiku") {
        2048
    } else {
        1024
    };
    tokens >= least
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
}

#[derive(Serialize)]
struct ToolChoice<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

/// The arguments, then each rejected attempt. A rejected tool call goes
/// back as the assistant's turn, answered by a `tool_result` with
/// `is_error: true` that quotes the error ("Tool use with Claude",
/// "Handling tool use and tool result content blocks"); a reply without a
/// tool call goes back as text, never empty (Anthropic refuses empty text
/// blocks).
struct AnthropicMessages<'a>(&'a Conversation);

impl Serialize for AnthropicMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let turns = &self.0.turns;
        // Written only as JSON, which needs no length up front.
        let mut seq = serializer.serialize_seq(None)?;
        for (assistant, text) in self.0.before_first() {
            seq.serialize_element(&Message {
                role: if assistant { "assistant" } else { "user" },
                content: text,
            })?;
        }
        if self.0.media.is_empty() {
            seq.serialize_element(&Message {
                role: "user",
                content: &*self.0.first,
            })?;
        } else {
            let mut parts = anthropic_parts(self.0);
            // Media kept through correction turns: a breakpoint after them
            // once a correction follows, so later attempts read them from
            // the cache instead of paying for them again. Not on the first
            // attempt, which a cache write would make dearer (1.25×) for
            // nothing when it is accepted.
            if !turns.is_empty() {
                if let Some(serde_json::Value::Object(last)) = parts.last_mut() {
                    last.insert(
                        "cache_control".into(),
                        serde_json::json!({"type": "ephemeral"}),
                    );
                }
            }
            seq.serialize_element(&Message {
                role: "user",
                content: &parts,
            })?;
        }
        for step in turns {
            let turn = match step {
                Step::Rejected(turn) => turn,
                Step::Tools(step) => {
                    // The model's `tool_use` blocks as sent, then one
                    // `tool_result` per call, in one user turn.
                    let blocks: Vec<serde_json::Value> = step
                        .calls
                        .iter()
                        .map(|c| {
                            c.as_sent(|input| {
                                serde_json::json!({"type": "tool_use", "id": c.id,
                                    "name": c.name, "input": input})
                            })
                        })
                        .collect();
                    seq.serialize_element(&serde_json::json!({
                        "role": "assistant", "content": blocks
                    }))?;
                    let results: Vec<serde_json::Value> = step
                        .results
                        .iter()
                        .map(|r| {
                            serde_json::json!({"type": "tool_result", "tool_use_id": r.id,
                                "is_error": r.is_error, "content": r.content})
                        })
                        .collect();
                    seq.serialize_element(&serde_json::json!({
                        "role": "user", "content": results
                    }))?;
                    continue;
                }
            };
            match &turn.tool_use {
                Some((block, id)) => {
                    seq.serialize_element(&Blocks {
                        role: "assistant",
                        content: [&**block],
                    })?;
                    seq.serialize_element(&Blocks {
                        role: "user",
                        content: [ToolResult {
                            kind: "tool_result",
                            tool_use_id: id,
                            is_error: true,
                            content: &turn.correction,
                        }],
                    })?;
                }
                None => {
                    seq.serialize_element(&Message {
                        role: "assistant",
                        content: &*turn.reply_non_empty,
                    })?;
                    seq.serialize_element(&Message {
                        role: "user",
                        content: &*turn.correction,
                    })?;
                }
            }
        }
        seq.end()
    }
}

/// The first user message's blocks with media ("Images and vision":
/// `image` blocks; "PDF support": `document` blocks; each with a `base64`
/// source, `media_type` and `data`, or a `url` source).
fn anthropic_parts(conversation: &Conversation) -> Vec<serde_json::Value> {
    use serde_json::json;
    super::media_first(
        conversation,
        |text| json!({"type": "text", "text": text}),
        |media, data| {
            let block = match media.kind {
                Kind::Image => "image",
                Kind::Document => "document",
                Kind::Audio => return None,
            };
            let source = match &media.content {
                Content::Inline { media_type, .. } => json!({
                    "type": "base64",
                    "media_type": media_type.mime(),
                    "data": data["plain"]
                }),
                Content::Url(url) => json!({"type": "url", "url": url}),
            };
            Some(json!({"type": block, "source": source}))
        },
    )
}

#[derive(Serialize)]
struct Blocks<'a, T> {
    role: &'a str,
    content: [T; 1],
}

#[derive(Serialize)]
struct ToolResult<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    tool_use_id: &'a str,
    is_error: bool,
    content: &'a RawValue,
}

#[cfg(test)]
mod tests {
    //! Reading Messages API responses, in the shapes of the "Messages" API
    //! reference and the "Tool use with Claude" guide.

    use super::*;

    fn parse(body: &str) -> Answer<'_> {
        Anthropic
            .parse(body, &Redactor::default())
            .unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    /// A forced tool call as the API returns it, with the fields the
    /// runtime does not read.
    const TOOL_USE: &str = r#"{
      "id": "msg_01Aq9w938a90dw8q",
      "type": "message",
      "role": "assistant",
      "model": "claude-sonnet-4-5",
      "content": [
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "vox_extract",
         "input": {"vendor": "ACME", "total": 12.5}}
      ],
      "stop_reason": "tool_use",
      "stop_sequence": null,
      "usage": {"input_tokens": 472, "output_tokens": 91, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "service_tier": "standard"}
    }"#;

    #[test]
    fn a_tool_call_s_input_is_the_content_and_its_block_is_kept() {
        let answer = parse(TOOL_USE);
        // The input exactly as sent: the model's bytes are what is judged.
        assert_eq!(
            answer.content.as_deref(),
            Some(r#"{"vendor": "ACME", "total": 12.5}"#)
        );
        let (block, id) = answer.tool_use.as_ref().unwrap();
        assert_eq!(id, "toolu_01A09q90qw90lq917835lq9");
        assert!(
            block.starts_with(r#"{"type": "tool_use", "id": "toolu_01A09"#),
            "{block}"
        );
        assert!(block.ends_with(r#""total": 12.5}}"#), "{block}");
        assert_eq!(answer.refused, None);
        assert_eq!(answer.truncated, None);
        assert_eq!(answer.reply_otherwise, None);
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(472),
                completion_tokens: Some(91),
                // `cache_read_input_tokens`.
                cached_tokens: Some(0),
                ..Usage::default()
            }
        );
    }

    #[test]
    fn the_first_tool_call_wins_over_text_thinking_and_later_calls() {
        let body = r#"{"type":"message","role":"assistant","content":[
            {"type":"thinking","thinking":"Let me work out the total.","signature":"EqQBCgIYAhIM"},
            {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"},
            {"type":"text","text":"I'll call the tool now."},
            {"type":"tool_use","id":"toolu_1","name":"f","input":{"value":1}},
            {"type":"text","text":"{\"value\":3}"},
            {"type":"tool_use","id":"toolu_2","name":"f","input":{"value":2}}
        ],"stop_reason":"tool_use"}"#;
        let answer = parse(body);
        assert_eq!(answer.content.as_deref(), Some(r#"{"value":1}"#));
        assert_eq!(answer.tool_use.as_ref().unwrap().1, "toolu_1");
    }

    #[test]
    fn without_a_tool_call_the_texts_are_the_content() {
        let body = r#"{"id":"msg_2","type":"message","role":"assistant","content":[
            {"type":"text","text":"{\"value\":"},
            {"type":"thinking","thinking":"…","signature":"x"},
            {"type":"text","text":" 7}"}
        ],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}"#;
        let answer = parse(body);
        assert_eq!(answer.content.as_deref(), Some(r#"{"value": 7}"#));
        assert!(answer.tool_use.is_none());
        assert_eq!(answer.content().unwrap(), r#"{"value": 7}"#);
        // One text block: its text.
        let one = r#"{"content":[{"type":"text","text":"42"}],"stop_reason":"end_turn"}"#;
        assert_eq!(parse(one).content.as_deref(), Some("42"));
    }

    #[test]
    fn a_tool_call_without_input_has_no_content_but_its_text() {
        let body = r#"{"content":[{"type":"tool_use","id":"toolu_3","name":"f"}],"stop_reason":"tool_use"}"#;
        let answer = parse(body);
        assert_eq!(answer.content, None);
        assert_eq!(answer.tool_use.as_ref().unwrap().1, "toolu_3");
        assert_eq!(
            answer.content().unwrap_err().error,
            "the reply had no content"
        );
        // Text beside it may still hold the JSON; the call is still the
        // turn the correction answers.
        let body = r#"{"content":[{"type":"tool_use","id":"toolu_3","name":"f"},
            {"type":"text","text":"{}"}],"stop_reason":"tool_use"}"#;
        let answer = parse(body);
        assert_eq!(answer.content.as_deref(), Some("{}"));
        assert_eq!(answer.tool_use.as_ref().unwrap().1, "toolu_3");
        // A block without an id is answered with an empty one.
        let no_id = r#"{"content":[{"type":"tool_use","name":"f","input":{}}]}"#;
        assert_eq!(parse(no_id).tool_use.unwrap().1, "");
    }

    #[test]
    fn stop_reasons() {
        let with = |reason: &str| {
            format!(
                r#"{{"content":[{{"type":"tool_use","id":"t","name":"f","input":{{"value":[1,2]}}}}],"stop_reason":{reason}}}"#
            )
        };
        for (reason, how) in [
            ("\"max_tokens\"", "stop_reason = \"max_tokens\""),
            (
                "\"model_context_window_exceeded\"",
                "stop_reason = \"model_context_window_exceeded\"",
            ),
        ] {
            let body = with(reason);
            let answer = parse(&body);
            assert_eq!(answer.truncated, Some(how));
            assert_eq!(answer.refused, None);
            assert!(answer.content().unwrap_err().error.contains(how));
        }
        for reason in [
            "\"end_turn\"",
            "\"tool_use\"",
            "\"stop_sequence\"",
            "\"pause_turn\"",
            "null",
            "\"MAX_TOKENS\"",
        ] {
            let body = with(reason);
            let answer = parse(&body);
            assert_eq!(answer.truncated, None, "{reason}");
            assert_eq!(answer.refused, None, "{reason}");
            assert_eq!(answer.content().unwrap(), r#"{"value":[1,2]}"#);
        }
    }

    #[test]
    fn a_refusal_quotes_what_the_model_said_if_anything() {
        let refused = |content: &str| {
            let body = format!(
                r#"{{"id":"msg_4","type":"message","role":"assistant","content":{content},"stop_reason":"refusal","usage":{{"input_tokens":10,"output_tokens":0}}}}"#
            );
            let answer = Anthropic.parse(&body, &Redactor::default()).unwrap();
            assert_eq!(answer.usage.completion_tokens, Some(0));
            answer.content().unwrap_err()
        };
        let e = refused("[]");
        assert_eq!(e.error, "the model refused (stop_reason = \"refusal\")");
        assert_eq!(e.reply, "");
        let e = refused(r#"[{"type":"text","text":"  \n "}]"#);
        assert_eq!(e.error, "the model refused (stop_reason = \"refusal\")");
        let e = refused(r#"[{"type":"text","text":"I can't help with that."}]"#);
        assert_eq!(
            e.error,
            "the model refused (stop_reason = \"refusal\"): I can't help with that."
        );
        assert_eq!(e.reply, "I can't help with that.");
    }

    #[test]
    fn a_refusal_is_redacted_bounded_and_escaped() {
        let key = "sk-ant-api03-refusal-0123456789";
        let redactor = Redactor::new(Some(key), None);
        let text = format!("{key}\r\n\u{202e}{}", "y".repeat(3 * REFUSAL_CHARS));
        let body = serde_json::json!({"content": [{"type": "text", "text": text}], "stop_reason": "refusal"})
            .to_string();
        let answer = Anthropic.parse(&body, &redactor).unwrap();
        let refused = answer.refused.unwrap();
        assert!(!refused.contains(key), "{refused}");
        assert!(
            refused.starts_with(
                "the model refused (stop_reason = \"refusal\"): [REDACTED]\\r\\n\\u{202e}yyy"
            ),
            "{refused}"
        );
        assert!(refused.ends_with(" more bytes)"), "{refused}");
        assert!(!refused.chars().any(char::is_control), "{refused}");
    }

    #[test]
    fn missing_parts_are_no_answer_rather_than_an_error() {
        for body in [
            "{}",
            r#"{"content":[]}"#,
            r#"{"content":[{"type":"thinking","thinking":"x"}],"usage":null}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"{"content":[{"type":"image","source":{}}],"stop_reason":null}"#,
        ] {
            let answer = parse(body);
            assert_eq!(answer.content, None, "{body}");
            assert!(answer.tool_use.is_none(), "{body}");
            assert_eq!(answer.refused, None, "{body}");
            assert_eq!(answer.truncated, None, "{body}");
            assert_eq!(answer.usage, Usage::default(), "{body}");
        }
        let partial = r#"{"usage":{"input_tokens":4}}"#;
        assert_eq!(
            parse(partial).usage,
            Usage {
                prompt_tokens: Some(4),
                completion_tokens: None,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn malformed_bodies_are_typed_errors() {
        for body in [
            "",
            "{",
            "[]",
            r#"{"content": {"type": "text", "text": "1"}}"#,
            r#"{"content": ["text"]}"#,
            r#"{"content": [["tool_use", null, "toolu_1", {}]]}"#,
            r#"{"content": [{"text": "no type"}]}"#,
            r#"{"content": [{"type": 1}]}"#,
            r#"{"content": [{"type": "text", "text": 1}]}"#,
            r#"{"content": [{"type": "tool_use", "id": 5, "input": {}}]}"#,
            r#"{"stop_reason": 1}"#,
            r#"{"usage": {"output_tokens": 1.5}}"#,
            r#"{"content": []}{}"#,
        ] {
            match Anthropic.parse(body, &Redactor::default()) {
                Err(Error::MalformedResponse(message)) => assert!(!message.is_empty(), "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }
}
