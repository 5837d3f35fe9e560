//! Ollama's native chat: `POST {base}/api/chat` with `stream: false`, the
//! schema in `format`, the completion limit in `options.num_predict`
//! (Ollama's API docs, "Generate a chat completion"). The prompt states
//! the schema's shape too: not every model Ollama runs is held to it.

use std::borrow::Cow;

use serde::Deserialize;

use super::chat::ReplyMessage;
use super::{malformed, open_message, push_escaped, push_message, Protocol, Render};
use crate::error::Error;
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

    fn render(&self, r: &Render<'_>, head: &mut Vec<u8>, tail: &mut Vec<u8>) -> Result<(), Error> {
        // Ollama's API docs, "Generate a chat completion": `format`
        // takes a JSON Schema; `stream: false` answers with one
        // object; `options.num_predict` is the completion limit.
        head.extend_from_slice(br#"{"model":""#);
        push_escaped(head, r.model.as_bytes());
        head.extend_from_slice(br#"","stream":false,"messages":["#);
        push_message(head, "system", &[r.system]);
        head.push(b',');
        open_message(head, "user", &[]);

        tail.extend_from_slice(br#"],"format":"#);
        tail.extend_from_slice(r.schema);
        tail.extend_from_slice(br#","options":{"num_predict":"#);
        tail.extend_from_slice(r.limit.as_bytes());
        r.temperature(tail, br#","temperature":"#, f64::MAX)?;
        tail.extend_from_slice(b"}}");
        Ok(())
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
