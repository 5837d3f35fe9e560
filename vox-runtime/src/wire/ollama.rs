//! Ollama's native chat: `POST {base}/api/chat` with `stream: false`, the
//! schema in `format`, the completion limit in `options.num_predict`
//! (Ollama's API docs, "Generate a chat completion"). The prompt states
//! the schema's shape too: not every model Ollama runs is held to it.

use std::borrow::Cow;

use serde::Deserialize;

use serde::Serialize;
use serde_json::value::RawValue;

use super::chat::{ChatMessages, ReplyMessage};
use super::{malformed, temperature, Protocol};
use crate::error::Error;
use crate::prompt::{Conversation, RequestParts};
use crate::redact::Redactor;
use crate::reply::{Answer, Usage};

/// Ollama's `/api/chat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ollama;

impl Protocol for Ollama {
    fn path(&self) -> &'static str {
        "/api/chat"
    }

    fn states_shape(&self) -> bool {
        true
    }

    fn write_request(
        &self,
        parts: &RequestParts,
        conversation: &Conversation,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        serde_json::to_writer(
            out,
            &OllamaRequest {
                model: parts.model(),
                // One object, not a stream of them.
                stream: false,
                messages: ChatMessages {
                    system: &parts.system,
                    conversation,
                },
                format: parts.schema,
                options: Options {
                    num_predict: parts.max_tokens(),
                    temperature: temperature(parts, f64::MAX),
                },
            },
        )
    }

    fn parse<'b>(&self, body: &'b str, _redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: OllamaResponse<'_> = serde_json::from_str(body).map_err(malformed)?;
        Ok(Answer {
            content: response.message.and_then(|m| m.content),
            refused: None,
            reply_otherwise: None,
            // A reply that says it is not done is cut short like one
            // that hit the limit.
            truncated: if response.done == Some(false) {
                Some("done = false")
            } else {
                (response.done_reason.as_deref() == Some("length"))
                    .then_some("done_reason = \"length\"")
            },
            tool_use: None,
            usage: Usage {
                prompt_tokens: response.prompt_eval_count,
                completion_tokens: response.eval_count,
            },
        })
    }
}

/// An Ollama `/api/chat` response with `stream: false` (Ollama API docs,
/// "Generate a chat completion": `message.content`, `done`, `done_reason`,
/// `prompt_eval_count`, `eval_count`).
#[derive(Debug, Deserialize)]
struct OllamaResponse<'a> {
    #[serde(default, borrow)]
    message: Option<ReplyMessage<'a>>,
    /// `false` on a partial response (a streamed chunk): the answer is not
    /// complete.
    #[serde(default)]
    done: Option<bool>,
    #[serde(default, borrow)]
    done_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
}

#[derive(Serialize)]
struct OllamaRequest<'a> {
    model: &'a str,
    stream: bool,
    messages: ChatMessages<'a>,
    format: &'a RawValue,
    options: Options,
}

#[derive(Serialize)]
struct Options {
    num_predict: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}
