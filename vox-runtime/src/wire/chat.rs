//! OpenAI's chat completions (`openai`, `openrouter`, `compatible`):
//! `POST {base}/chat/completions`, `Authorization: Bearer`, the schema in
//! `response_format` (OpenAI's "Structured Outputs" guide).

use std::borrow::Cow;

use serde::Deserialize;

use serde::Serialize;
use serde_json::value::RawValue;

use super::{malformed, temperature, Message, Protocol};
use crate::config::ResponseFormat;
use crate::error::Error;
use crate::prompt::{Conversation, RequestParts};
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

    fn write_request(
        &self,
        parts: &RequestParts,
        conversation: &Conversation,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        use serde::ser::{SerializeMap, Serializer};
        let mut ser = serde_json::Serializer::new(out);
        let mut map = ser.serialize_map(None)?;
        map.serialize_entry("model", parts.model())?;
        // The schema travels in `response_format`; the system message
        // states its shape too where it may not be enforced.
        map.serialize_entry(
            "messages",
            &ChatMessages {
                system: &parts.system,
                conversation,
            },
        )?;
        if let Some(t) = temperature(parts, f64::MAX) {
            map.serialize_entry("temperature", &t)?;
        }
        map.serialize_entry(self.limit, &parts.max_tokens())?;
        match self.format {
            ResponseFormat::JsonSchema => map.serialize_entry(
                "response_format",
                &JsonSchemaFormat {
                    kind: "json_schema",
                    json_schema: NamedSchema {
                        name: parts.schema_name,
                        strict: true,
                        schema: parts.schema,
                    },
                },
            )?,
            // llama-cpp-python's server: `json_object` with the schema
            // beside the type (docs/runtime.md, "Compatible servers").
            ResponseFormat::JsonObject => map.serialize_entry(
                "response_format",
                &JsonObjectFormat {
                    kind: "json_object",
                    schema: parts.schema,
                },
            )?,
        }
        map.end()
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

#[derive(Serialize)]
struct JsonSchemaFormat<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    json_schema: NamedSchema<'a>,
}

#[derive(Serialize)]
struct NamedSchema<'a> {
    name: &'a str,
    strict: bool,
    schema: &'a RawValue,
}

#[derive(Serialize)]
struct JsonObjectFormat<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    schema: &'a RawValue,
}

/// The messages of a chat request (and of Ollama's): the system message,
/// the arguments, then each rejected reply and its correction.
pub(crate) struct ChatMessages<'a> {
    pub system: &'a RawValue,
    pub conversation: &'a Conversation,
}

impl Serialize for ChatMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let turns = &self.conversation.turns;
        let mut seq = serializer.serialize_seq(Some(2 + 2 * turns.len()))?;
        seq.serialize_element(&Message {
            role: "system",
            content: self.system,
        })?;
        seq.serialize_element(&Message {
            role: "user",
            content: &*self.conversation.first,
        })?;
        for turn in turns {
            seq.serialize_element(&Message {
                role: "assistant",
                content: &*turn.reply,
            })?;
            seq.serialize_element(&Message {
                role: "user",
                content: &*turn.correction,
            })?;
        }
        seq.end()
    }
}
