//! OpenAI's chat completions (`openai`, `openrouter`, `compatible`):
//! `POST {base}/chat/completions`, `Authorization: Bearer`, the schema in
//! `response_format` (OpenAI's "Structured Outputs" guide).

use std::borrow::Cow;

use serde::Deserialize;

use serde::Serialize;
use serde_json::value::RawValue;

use super::RequestParts;
use super::{borrowed, read_object, temperature, Message, Protocol};
use crate::config::ResponseFormat;
use crate::error::Error;
use crate::media::body::Inline;
use crate::media::load::Content;
use crate::media::Kind;
use crate::prompt::{Conversation, Step};
use crate::redact::Redactor;
use crate::reply::{Answer, ResponseMeta, Usage};
use crate::server_text::REFUSAL_CHARS;
use crate::stream::{Event, Streamed};

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
    fn path(&self, _model: &str) -> Cow<'static, str> {
        Cow::Borrowed("/chat/completions")
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
                ollama: false,
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
                        schema: &parts.schema,
                    },
                },
            )?,
            // llama-cpp-python's server: `json_object` with the schema
            // beside the type (docs/runtime.md, "Compatible servers").
            ResponseFormat::JsonObject => map.serialize_entry(
                "response_format",
                &JsonObjectFormat {
                    kind: "json_object",
                    schema: &parts.schema,
                },
            )?,
        }
        if !parts.tools.is_empty() {
            map.serialize_entry(
                "tools",
                &FunctionTools {
                    parts,
                    strict: true,
                },
            )?;
        }
        map.end()
    }

    // Chat completions streaming: `stream: true`, and the usage in a last
    // chunk with `stream_options.include_usage` ("Streaming" in the API
    // reference; compatible servers that ignore it simply send no usage).
    fn stream_body(&self, body: &[u8]) -> Vec<u8> {
        super::with_fields(
            body,
            r#""stream":true,"stream_options":{"include_usage":true}"#,
        )
    }

    // Each `data:` is a `chat.completion.chunk` (`choices[].delta.content`,
    // `delta.refusal`, `finish_reason`, and with `include_usage` a last
    // chunk whose `choices` is empty and `usage` set), then `[DONE]`. An
    // `{"error": …}` object instead is the request's failure.
    fn read_event(
        &self,
        event: &Event,
        streamed: &mut Streamed,
        redactor: &Redactor,
    ) -> Result<(), Error> {
        let data = event.data.trim();
        if data == "[DONE]" {
            streamed.finished = true;
            return Ok(());
        }
        let chunk: ChatChunk<'_> = read_object(data)?;
        if let Some(error) = chunk.error {
            let message = error.message.as_deref().unwrap_or("an error");
            return Err(super::stream_error(500, message, redactor));
        }
        if let Some(usage) = chunk.usage {
            streamed.usage = usage.usage();
        }
        if let (None, Some(model)) = (&streamed.meta.model, chunk.model) {
            streamed.meta.model = Some(model.into_owned());
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content {
                streamed.push_content(&text);
            }
            if let Some(refusal) = delta.refusal {
                streamed
                    .refusal_text
                    .get_or_insert_with(String::new)
                    .push_str(&refusal);
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref() {
            streamed.finished = true;
            streamed.meta.finish_reason = Some(reason.to_owned());
            match reason {
                "length" => streamed.truncated = Some("finish_reason = \"length\""),
                "content_filter" => {
                    streamed.refused = Some(
                        "the reply was blocked (finish_reason = \"content_filter\")".to_owned(),
                    )
                }
                _ => {}
            }
        }
        if let Some(refusal) = &streamed.refusal_text {
            streamed.refused = Some(format!(
                "the model refused: {}",
                redactor.shown(refusal, REFUSAL_CHARS)
            ));
        }
        Ok(())
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: ChatResponse<'_> = read_object(body)?;
        let usage = response.usage.unwrap_or_default();
        let (message, finish_reason) = match response.choices.into_iter().next() {
            Some(choice) => (choice.message, choice.finish_reason),
            None => (None, None),
        };
        let (content, refusal, calls) = message.map_or((None, None, Vec::new()), |m| {
            (m.content, m.refusal, m.tool_calls)
        });
        let refused = match (&refusal, finish_reason.as_deref()) {
            (Some(r), _) => Some(format!(
                "the model refused: {}",
                redactor.shown(r, REFUSAL_CHARS)
            )),
            // "content_filter": the content was omitted or cut by the
            // provider's filters (chat completions reference,
            // `finish_reason`); what is left is not an answer.
            (None, Some("content_filter")) => {
                Some("the reply was blocked (finish_reason = \"content_filter\")".to_owned())
            }
            (None, _) => None,
        };
        Ok(Answer {
            content,
            refused,
            reply_otherwise: refusal,
            truncated: (finish_reason.as_deref() == Some("length"))
                .then_some("finish_reason = \"length\""),
            tool_use: None,
            tool_calls: tool_calls(calls),
            usage: usage.usage(),
            meta: ResponseMeta {
                model: response.model.map(Cow::into_owned),
                finish_reason: finish_reason.map(Cow::into_owned),
            },
        })
    }
}

/// The parts of a chat-completions response the runtime uses, borrowing
/// from the body where JSON escapes allow.
#[derive(Debug, Deserialize)]
struct ChatResponse<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

/// One `chat.completion.chunk` of a streamed answer.
#[derive(Debug, Deserialize)]
struct ChatChunk<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    choices: Vec<ChunkChoice<'a>>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default, borrow)]
    error: Option<ChunkError<'a>>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<ReplyMessage<'a>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct ChunkError<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    message: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    message: Option<ReplyMessage<'a>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReplyMessage<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    pub content: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    refusal: Option<Cow<'a, str>>,
    /// The tools the model calls (chat completions: `id`, and `function`
    /// with `name` and `arguments` as a string of JSON; Ollama: `function`
    /// with `arguments` as an object, and no id). Every field may be
    /// missing in a streamed delta.
    #[serde(default, deserialize_with = "super::null_as_default")]
    pub tool_calls: Vec<ReplyToolCall>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReplyToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<ReplyFunction>,
}

#[derive(Debug, Deserialize)]
struct ReplyFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
}

/// The calls of a reply as the runtime keeps them: arguments sent as a
/// string (chat completions) are that string's text, an object (Ollama)
/// its JSON.
pub(crate) fn tool_calls(calls: Vec<ReplyToolCall>) -> Vec<crate::tools::ToolCall> {
    calls
        .into_iter()
        .filter_map(|call| {
            let function = call.function?;
            let arguments = match function.arguments {
                None => String::new(),
                Some(raw) => match serde_json::from_str::<String>(raw.get()) {
                    Ok(text) => text,
                    Err(_) => raw.get().to_owned(),
                },
            };
            Some(crate::tools::ToolCall {
                id: call.id.unwrap_or_default(),
                name: function.name.unwrap_or_default(),
                arguments,
                raw: None,
            })
        })
        .collect()
}

/// The `tools` of a chat request (and Ollama's): each a `function` with
/// its name, description and parameters' schema.
pub(crate) struct FunctionTools<'a> {
    pub parts: &'a RequestParts,
    /// OpenAI's `strict: true` (Ollama takes no such field).
    pub strict: bool,
}

impl Serialize for FunctionTools<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        #[derive(Serialize)]
        struct Function<'f> {
            name: &'f str,
            description: &'f str,
            parameters: &'f RawValue,
            #[serde(skip_serializing_if = "Option::is_none")]
            strict: Option<bool>,
        }
        #[derive(Serialize)]
        struct Entry<'f> {
            #[serde(rename = "type")]
            kind: &'f str,
            function: Function<'f>,
        }
        let mut seq = serializer.serialize_seq(Some(self.parts.tools.len()))?;
        for tool in &self.parts.tools {
            seq.serialize_element(&Entry {
                kind: "function",
                function: Function {
                    name: tool.name,
                    description: tool.description,
                    parameters: &tool.parameters,
                    strict: self.strict.then_some(true),
                },
            })?;
        }
        seq.end()
    }
}

/// A tool result's text as the chat-shaped APIs take it (they have no
/// error flag): the value's JSON, or `{"error": …}`.
pub(crate) fn result_text(result: &crate::tools::ToolResult) -> String {
    if result.is_error {
        serde_json::json!({ "error": result.content }).to_string()
    } else {
        result.content.clone()
    }
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    /// `prompt_tokens_details.cached_tokens` (part of `prompt_tokens`).
    #[serde(default)]
    prompt_tokens_details: Option<TokenDetails>,
    /// `completion_tokens_details.reasoning_tokens` (part of
    /// `completion_tokens`).
    #[serde(default)]
    completion_tokens_details: Option<TokenDetails>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct TokenDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl ChatUsage {
    fn usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            cached_tokens: self.prompt_tokens_details.and_then(|d| d.cached_tokens),
            reasoning_tokens: self
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens),
        }
    }
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
    /// Ollama's shape: media as the user message's `images`.
    pub ollama: bool,
}

/// The first user message's content parts with media (OpenAI's "Images and
/// vision": `image_url` with a data URL or an https URL; "File inputs":
/// `file` with `filename` and `file_data`, a data URL; "Audio":
/// `input_audio` with base64 `data` and `format`).
fn chat_parts(conversation: &Conversation) -> Vec<serde_json::Value> {
    use serde_json::json;
    super::media_first(
        conversation,
        |text| json!({"type": "text", "text": text}),
        |media, data| match (&media.content, media.kind) {
            (_, Kind::Image) => {
                Some(json!({"type": "image_url", "image_url": {"url": data["url"]}}))
            }
            (Content::Inline { file_name, .. }, Kind::Document) => Some(json!({
                "type": "file",
                "file": {"filename": file_name, "file_data": data["url"]}
            })),
            (Content::Inline { media_type, .. }, Kind::Audio) => Some(json!({
                "type": "input_audio",
                "input_audio": {"data": data["plain"], "format": media_type.audio_format()}
            })),
            (Content::Url(_), _) => None,
        },
    )
}

/// Ollama's user message with images ("Generate a chat completion": a
/// message's `images`, base64).
#[derive(Serialize)]
struct OllamaUser<'a> {
    role: &'a str,
    content: &'a RawValue,
    images: Vec<serde_json::Value>,
}

fn ollama_images(conversation: &Conversation) -> Vec<serde_json::Value> {
    conversation
        .media
        .iter()
        .enumerate()
        .filter(|(_, m)| m.kind == Kind::Image && matches!(m.content, Content::Inline { .. }))
        .map(|(index, _)| {
            serde_json::to_value(Inline { prefix: "", index }).unwrap_or(serde_json::Value::Null)
        })
        .collect()
}

impl Serialize for ChatMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let turns = &self.conversation.turns;
        // Written only as JSON, which needs no length up front.
        let mut seq = serializer.serialize_seq(None)?;
        seq.serialize_element(&Message {
            role: "system",
            content: self.system,
        })?;
        for (assistant, text) in self.conversation.before_first() {
            seq.serialize_element(&Message {
                role: if assistant { "assistant" } else { "user" },
                content: text,
            })?;
        }
        if self.conversation.media.is_empty() {
            seq.serialize_element(&Message {
                role: "user",
                content: &*self.conversation.first,
            })?;
        } else if self.ollama {
            seq.serialize_element(&OllamaUser {
                role: "user",
                content: &self.conversation.first,
                images: ollama_images(self.conversation),
            })?;
        } else {
            seq.serialize_element(&Message {
                role: "user",
                content: &chat_parts(self.conversation),
            })?;
        }
        for step in turns {
            match step {
                Step::Rejected(turn) => {
                    seq.serialize_element(&Message {
                        role: "assistant",
                        content: &*turn.reply,
                    })?;
                    seq.serialize_element(&Message {
                        role: "user",
                        content: &*turn.correction,
                    })?;
                }
                Step::Tools(step) => {
                    use serde_json::json;
                    let calls: Vec<serde_json::Value> = step
                        .calls
                        .iter()
                        .map(|c| {
                            if self.ollama {
                                // Ollama's arguments are an object.
                                json!({"function": {"name": c.name, "arguments": c.arguments_value()}})
                            } else {
                                json!({"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments}})
                            }
                        })
                        .collect();
                    let content = if self.ollama {
                        serde_json::Value::from("")
                    } else {
                        serde_json::Value::Null
                    };
                    seq.serialize_element(
                        &json!({"role": "assistant", "content": content, "tool_calls": calls}),
                    )?;
                    for result in &step.results {
                        let text = result_text(result);
                        seq.serialize_element(&if self.ollama {
                            json!({"role": "tool", "tool_name": result.name, "content": text})
                        } else {
                            json!({"role": "tool", "tool_call_id": result.id, "content": text})
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    //! Reading chat-completions responses, in the shapes of the chat
    //! completions API reference (the chat completion object).

    use super::*;

    const WIRE: Chat = Chat {
        limit: "max_completion_tokens",
        format: ResponseFormat::JsonSchema,
        stated: false,
    };

    fn parse(body: &str) -> Answer<'_> {
        WIRE.parse(body, &Redactor::default())
            .unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    /// A complete response as the API reference shows it, every field the
    /// runtime does not read included.
    const COMPLETION: &str = r#"{
      "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
      "object": "chat.completion",
      "created": 1741569952,
      "model": "gpt-4.1-2025-04-14",
      "choices": [
        {
          "index": 0,
          "message": {
            "role": "assistant",
            "content": "{\"vendor\":\"ACME\",\"total\":12.5}",
            "refusal": null,
            "annotations": []
          },
          "logprobs": null,
          "finish_reason": "stop"
        }
      ],
      "usage": {
        "prompt_tokens": 19,
        "completion_tokens": 10,
        "total_tokens": 29,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
      },
      "service_tier": "default",
      "system_fingerprint": "fp_44709d6fcb"
    }"#;

    #[test]
    fn a_completed_reply_gives_its_content_and_usage() {
        let answer = parse(COMPLETION);
        assert_eq!(
            answer.content.as_deref(),
            Some(r#"{"vendor":"ACME","total":12.5}"#)
        );
        assert_eq!(answer.refused, None);
        assert_eq!(answer.reply_otherwise, None);
        assert_eq!(answer.truncated, None);
        assert!(answer.tool_use.is_none());
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(19),
                completion_tokens: Some(10),
                // `prompt_tokens_details` and `completion_tokens_details`.
                cached_tokens: Some(0),
                reasoning_tokens: Some(0),
            }
        );
        assert_eq!(
            answer.content().unwrap(),
            r#"{"vendor":"ACME","total":12.5}"#
        );
    }

    #[test]
    fn content_without_escapes_is_borrowed_and_with_escapes_is_decoded() {
        let plain = r#"{"choices":[{"message":{"content":"42"}}]}"#;
        assert!(matches!(parse(plain).content, Some(Cow::Borrowed("42"))));
        let escaped = r#"{"choices":[{"message":{"content":"{\"a\":\"x\\ny\u00e9\"}"}}]}"#;
        assert_eq!(
            parse(escaped).content.as_deref(),
            Some("{\"a\":\"x\\ny\u{e9}\"}")
        );
    }

    #[test]
    fn only_the_first_choice_is_read() {
        let body = r#"{"choices":[
            {"index":0,"message":{"role":"assistant","content":"1"},"finish_reason":"stop"},
            {"index":1,"message":{"role":"assistant","content":"2"},"finish_reason":"length"}
        ]}"#;
        let answer = parse(body);
        assert_eq!(answer.content.as_deref(), Some("1"));
        assert_eq!(answer.truncated, None);
    }

    #[test]
    fn a_refusal_is_quoted_and_goes_back_as_the_reply() {
        let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,
            "message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't assist with that request."},
            "logprobs":null,"finish_reason":"stop"}],
            "usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}"#;
        let answer = parse(body);
        assert_eq!(answer.content, None);
        assert_eq!(
            answer.refused.as_deref(),
            Some("the model refused: I'm sorry, I can't assist with that request.")
        );
        assert_eq!(
            answer.reply_otherwise.as_deref(),
            Some("I'm sorry, I can't assist with that request.")
        );
        assert_eq!(answer.usage.completion_tokens, Some(9));
        let rejected = answer.content().unwrap_err();
        assert_eq!(
            rejected.reply,
            "I'm sorry, I can't assist with that request."
        );
    }

    #[test]
    fn finish_reasons() {
        let with = |reason: &str| {
            format!(
                r#"{{"choices":[{{"message":{{"content":"{{\"value\": [1, 2"}},"finish_reason":{reason}}}]}}"#
            )
        };
        let length = with("\"length\"");
        let answer = parse(&length);
        assert_eq!(answer.truncated, Some("finish_reason = \"length\""));
        assert_eq!(answer.refused, None);
        assert!(answer
            .content()
            .unwrap_err()
            .error
            .contains("finish_reason = \"length\""));
        for reason in ["\"stop\"", "\"tool_calls\"", "null", "\"LENGTH\""] {
            let body = with(reason);
            let answer = parse(&body);
            assert_eq!(answer.truncated, None, "{reason}");
            assert_eq!(answer.refused, None, "{reason}");
            assert_eq!(answer.content.as_deref(), Some("{\"value\": [1, 2"));
        }
        // Content omitted by the provider's filters is not an answer, even
        // when some text is left.
        let filtered = with("\"content_filter\"");
        let answer = parse(&filtered);
        assert_eq!(
            answer.content().unwrap_err().error,
            "the reply was blocked (finish_reason = \"content_filter\")"
        );
        // A refusal says more than the finish reason: it is what is quoted.
        let body =
            r#"{"choices":[{"message":{"refusal":"No."},"finish_reason":"content_filter"}]}"#;
        assert_eq!(
            parse(body).refused.as_deref(),
            Some("the model refused: No.")
        );
    }

    #[test]
    fn missing_parts_are_no_answer_rather_than_an_error() {
        for body in [
            r#"{}"#,
            r#"{"choices":[]}"#,
            r#"{"choices":[{}]}"#,
            r#"{"choices":[{"message":null,"finish_reason":null}]}"#,
            r#"{"choices":[{"message":{"role":"assistant"}}],"usage":null}"#,
            r#"{"choices":[{"message":{"content":null,"refusal":null}}]}"#,
        ] {
            let answer = parse(body);
            assert_eq!(answer.content, None, "{body}");
            assert_eq!(answer.refused, None, "{body}");
            assert_eq!(answer.truncated, None, "{body}");
            assert_eq!(answer.usage, Usage::default(), "{body}");
            assert_eq!(
                answer.content().unwrap_err().error,
                "the reply had no content"
            );
        }
        let partial = r#"{"choices":[],"usage":{"completion_tokens":3}}"#;
        assert_eq!(
            parse(partial).usage,
            Usage {
                prompt_tokens: None,
                completion_tokens: Some(3),
                ..Usage::default()
            }
        );
    }

    #[test]
    fn malformed_bodies_are_typed_errors() {
        for body in [
            "",
            "not json",
            "[]",
            "null",
            r#"{"choices": "#,
            r#"{"choices": {"message": {"content": "1"}}}"#,
            r#"{"choices": [{"message": {"content": 1}}]}"#,
            r#"{"choices": [{"message": "text"}]}"#,
            r#"{"choices": [{"finish_reason": 7}]}"#,
            r#"{"usage": {"prompt_tokens": -1}}"#,
            r#"{"usage": {"prompt_tokens": "12"}}"#,
            r#"{"choices": []} trailing"#,
        ] {
            match WIRE.parse(body, &Redactor::default()) {
                Err(Error::MalformedResponse(message)) => assert!(!message.is_empty(), "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    /// A refusal is the server's text: redacted, then bounded and put on
    /// one line.
    #[test]
    fn a_refusal_is_redacted_bounded_and_escaped() {
        let key = "sk-proj-chat-refusal-0123456789";
        let redactor = Redactor::new(Some(key), None);
        let refusal = format!("key {key}\n\u{1b}[2J{}", "x".repeat(2 * REFUSAL_CHARS));
        let body = serde_json::json!({"choices": [{"message": {"refusal": refusal}}]}).to_string();
        let answer = WIRE.parse(&body, &redactor).unwrap();
        let refused = answer.refused.unwrap();
        assert!(!refused.contains(key), "{refused}");
        assert!(
            refused.starts_with("the model refused: key [REDACTED]\\n\\u{1b}[2Jxxx"),
            "{refused}"
        );
        assert!(refused.ends_with(" more bytes)"), "{refused}");
        assert!(!refused.chars().any(char::is_control), "{refused}");
        let quoted = refused.trim_start_matches("the model refused: ");
        let shown = quoted.split('…').next().unwrap();
        assert_eq!(shown.chars().count(), REFUSAL_CHARS);
        // What goes back to the model is its own text, unchanged.
        assert_eq!(answer.reply_otherwise.as_deref(), Some(&*refusal));
    }
}
