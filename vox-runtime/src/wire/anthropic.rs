//! Anthropic's Messages API: `POST {base}/messages` with `x-api-key` and
//! `anthropic-version`, structured output through a forced tool call
//! whose input is the result ("Tool use with Claude" guide).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use vox_metadata::providers::{tool_description, tool_name};

use serde::Serialize;

use super::{malformed, temperature, KeyHeader, Message, Prepare, Prepared, Protocol};
use crate::error::Error;
use crate::prompt::{Conversation, RequestParts};
use crate::redact::Redactor;
use crate::reply::{Answer, Usage};
use crate::server_text::REFUSAL_CHARS;

/// Anthropic's Messages API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anthropic;

impl Protocol for Anthropic {
    fn path(&self) -> &'static str {
        "/messages"
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
        Ok(Prepared {
            system: format!(
                "{}\n\nAnswer by calling the tool `{tool}` once: its input is the result.",
                input.task,
            ),
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
                system: &parts.system,
                tools: [Tool {
                    name: tool,
                    description,
                    input_schema: parts.schema,
                }],
                tool_choice: ToolChoice {
                    kind: "tool",
                    name: tool,
                },
                messages: AnthropicMessages(conversation),
                // The Messages API takes temperatures from 0 to 1.
                temperature: temperature(parts, 1.0),
            },
        )
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: AnthropicResponse<'_> = serde_json::from_str(body).map_err(malformed)?;
        let usage = response.usage.unwrap_or_default();
        let mut answer = Answer {
            usage: Usage {
                prompt_tokens: usage.input_tokens,
                completion_tokens: usage.output_tokens,
            },
            ..Answer::default()
        };
        let mut texts: Vec<Cow<'_, str>> = Vec::new();
        for raw in response.content {
            let block: AnthropicBlock<'_> = serde_json::from_str(raw.get()).map_err(malformed)?;
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

/// An Anthropic Messages API response ("Messages" API reference: `content`
/// blocks, `stop_reason`, `usage.input_tokens`/`output_tokens`).
#[derive(Debug, Deserialize)]
struct AnthropicResponse<'a> {
    #[serde(default, borrow)]
    content: Vec<&'a RawValue>,
    #[serde(default, borrow)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<AnthropicUsage>,
}

#[derive(Debug, Deserialize)]
struct AnthropicBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct AnthropicUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a RawValue,
    tools: [Tool<'a>; 1],
    tool_choice: ToolChoice<'a>,
    messages: AnthropicMessages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
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
    name: &'a str,
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
        let mut seq = serializer.serialize_seq(Some(1 + 2 * turns.len()))?;
        seq.serialize_element(&Message {
            role: "user",
            content: &*self.0.first,
        })?;
        for turn in turns {
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
