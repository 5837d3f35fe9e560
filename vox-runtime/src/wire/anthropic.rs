//! Anthropic's Messages API: `POST {base}/messages` with `x-api-key` and
//! `anthropic-version`, structured output through a forced tool call
//! whose input is the result ("Tool use with Claude" guide).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use vox_metadata::providers::{tool_description, tool_name};

use super::{
    malformed, non_empty, open_message, push_escaped, push_message, KeyHeader, Protocol, Render,
};
use crate::error::Error;
use crate::redact::Redactor;
use crate::reply::{Answer, RejectedReply, Usage};
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

    fn render(&self, r: &Render<'_>, head: &mut Vec<u8>, tail: &mut Vec<u8>) -> Result<(), Error> {
        // Anthropic's "Tool use with Claude" guide: a forced tool
        // call (`tool_choice: {"type": "tool", "name": …}`) whose
        // `input_schema` is the output schema; the answer is the
        // `tool_use` block's `input`.
        let tool = tool_name(r.function.name());
        head.extend_from_slice(br#"{"model":""#);
        push_escaped(head, r.model.as_bytes());
        head.extend_from_slice(br#"","max_tokens":"#);
        head.extend_from_slice(r.limit.as_bytes());
        head.extend_from_slice(br#","system":""#);
        for part in [
            r.task,
            "\n\nAnswer by calling the tool `",
            &tool,
            "` once: its input is the result.",
        ] {
            push_escaped(head, part.as_bytes());
        }
        head.extend_from_slice(br#"","tools":[{"name":""#);
        push_escaped(head, tool.as_bytes());
        head.extend_from_slice(br#"","description":""#);
        push_escaped(head, tool_description(r.function.name()).as_bytes());
        head.extend_from_slice(br#"","input_schema":"#);
        head.extend_from_slice(r.schema);
        head.extend_from_slice(br#"}],"tool_choice":{"type":"tool","name":""#);
        push_escaped(head, tool.as_bytes());
        head.extend_from_slice(br#""},"messages":["#);
        open_message(head, "user", &[]);

        tail.push(b']');
        // The Messages API takes temperatures from 0 to 1.
        r.temperature(tail, br#","temperature":"#, 1.0)?;
        tail.push(b'}');
        Ok(())
    }

    fn push_correction(&self, out: &mut Vec<u8>, rejected: &RejectedReply, correction: &[&str]) {
        match &rejected.tool_use {
            // "Tool use with Claude", "Handling tool use and tool result
            // content blocks": the tool call goes back as the assistant's
            // turn, answered by a `tool_result` with `is_error: true` that
            // quotes the error.
            Some((block, id)) => {
                out.extend_from_slice(br#"{"role":"assistant","content":["#);
                out.extend_from_slice(block.as_bytes());
                out.extend_from_slice(
                    br#"]},{"role":"user","content":[{"type":"tool_result","tool_use_id":""#,
                );
                push_escaped(out, id.as_bytes());
                out.extend_from_slice(br#"","is_error":true,"content":""#);
                for part in correction {
                    push_escaped(out, part.as_bytes());
                }
                out.extend_from_slice(b"\"}]}");
            }
            // A reply without a tool call: plain messages. Anthropic
            // refuses empty text blocks.
            None => {
                push_message(out, "assistant", &[non_empty(&rejected.reply)]);
                out.push(b',');
                push_message(out, "user", correction);
            }
        }
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
