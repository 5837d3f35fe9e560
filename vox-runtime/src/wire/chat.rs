//! OpenAI's chat completions (`openai`, `openrouter`, `compatible`):
//! `POST {base}/chat/completions`, `Authorization: Bearer`, the schema in
//! `response_format` (OpenAI's "Structured Outputs" guide).

use std::borrow::Cow;

use serde::Deserialize;

use super::{malformed, open_message, push_escaped, push_message, Protocol, Render};
use crate::config::ResponseFormat;
use crate::error::Error;
use crate::redact::Redactor;
use crate::reply::{Answer, Usage};
use crate::server_text::REFUSAL_CHARS;

/// The chat-completions wire of one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chat {
    /// The completion limit field (`max_tokens`, or OpenAI's
    /// `max_completion_tokens`).
    pub limit: &'static str,
    /// How the schema is given.
    pub format: ResponseFormat,
    /// Whether the prompt also states the expected shape (for servers that
    /// may not enforce `response_format`).
    pub stated: bool,
}

impl Protocol for Chat {
    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn states_shape(&self) -> bool {
        self.stated
    }

    fn render(&self, r: &Render<'_>, head: &mut Vec<u8>, tail: &mut Vec<u8>) -> Result<(), Error> {
        head.extend_from_slice(br#"{"model":""#);
        push_escaped(head, r.model.as_bytes());
        head.extend_from_slice(br#"","messages":["#);
        // The schema travels in `response_format`; the system
        // message states its shape too where it may not be enforced.
        push_message(head, "system", &[r.system]);
        head.push(b',');
        open_message(head, "user", &[]);

        tail.push(b']');
        r.temperature(tail, br#","temperature":"#, f64::MAX)?;
        tail.extend_from_slice(b",\"");
        tail.extend_from_slice(self.limit.as_bytes());
        tail.extend_from_slice(b"\":");
        tail.extend_from_slice(r.limit.as_bytes());
        match self.format {
            ResponseFormat::JsonSchema => {
                tail.extend_from_slice(
                    br#","response_format":{"type":"json_schema","json_schema":{"name":""#,
                );
                push_escaped(tail, r.schema_name.as_bytes());
                tail.extend_from_slice(br#"","strict":true,"schema":"#);
                tail.extend_from_slice(r.schema);
                tail.extend_from_slice(b"}}}");
            }
            // llama-cpp-python's server: `json_object` with the
            // schema beside the type (docs/runtime.md, "Compatible
            // servers").
            ResponseFormat::JsonObject => {
                tail.extend_from_slice(br#","response_format":{"type":"json_object","schema":"#);
                tail.extend_from_slice(r.schema);
                tail.extend_from_slice(b"}}");
            }
        }
        Ok(())
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: ChatResponse<'_> = serde_json::from_str(body).map_err(malformed)?;
        let usage = response.usage.unwrap_or_default();
        let (message, finish_reason) = match response.choices.into_iter().next() {
            Some(choice) => (choice.message, choice.finish_reason),
            None => (None, None),
        };
        let (content, refusal) = message.map_or((None, None), |m| (m.content, m.refusal));
        Ok(Answer {
            content,
            refused: refusal
                .as_ref()
                .map(|r| format!("the model refused: {}", redactor.shown(r, REFUSAL_CHARS))),
            reply_otherwise: refusal,
            truncated: (finish_reason.as_deref() == Some("length"))
                .then_some("finish_reason = \"length\""),
            tool_use: None,
            usage: Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
            },
        })
    }
}

/// The parts of a chat-completions response the runtime uses, borrowing
/// from the body where JSON escapes allow.
#[derive(Debug, Deserialize)]
struct ChatResponse<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    message: Option<ReplyMessage<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReplyMessage<'a> {
    #[serde(default, borrow)]
    pub content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    refusal: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}
