//! Ollama's native chat: `POST {base}/api/chat` with `stream: false`, the
//! schema in `format`, the completion limit in `options.num_predict`
//! (Ollama's API docs, "Generate a chat completion"). The prompt states
//! the schema's shape too: not every model Ollama runs is held to it.

use std::borrow::Cow;

use serde::Deserialize;

use serde::Serialize;
use serde_json::value::RawValue;

use super::chat::{ChatMessages, ReplyMessage};
use super::RequestParts;
use super::{borrowed, read_object, temperature, Protocol};
use crate::error::Error;
use crate::prompt::Conversation;
use crate::redact::Redactor;
use crate::reply::{Answer, ResponseMeta, Usage};
use crate::stream::{Event, Framing, Streamed};

/// Ollama's `/api/chat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ollama;

impl Protocol for Ollama {
    fn path(&self, _model: &str) -> Cow<'static, str> {
        Cow::Borrowed("/api/chat")
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
                    ollama: true,
                },
                format: &parts.schema,
                options: Options {
                    num_predict: parts.max_tokens(),
                    temperature: temperature(parts, f64::MAX),
                },
                // "Tool calling": `tools` in the chat completions' form.
                tools: (!parts.tools.is_empty()).then_some(super::chat::FunctionTools {
                    parts,
                    strict: false,
                }),
            },
        )
    }

    // `stream` is the request's last field: the streamed body says `true`.
    fn stream_body(&self, body: &[u8]) -> Vec<u8> {
        let plain = br#""stream":false}"#;
        match body.strip_suffix(plain.as_slice()) {
            Some(head) => [head, br#""stream":true}"#.as_slice()].concat(),
            None => super::with_fields(body, r#""stream":true"#),
        }
    }

    fn framing(&self) -> Framing {
        Framing::Ndjson
    }

    // NDJSON: each line a response whose `message.content` is the next
    // piece, `done: false` until the last, which has `done_reason` and the
    // counts; `{"error": "…"}` is the request's failure.
    fn read_event(
        &self,
        event: &Event,
        streamed: &mut Streamed,
        redactor: &Redactor,
    ) -> Result<(), Error> {
        #[derive(Deserialize)]
        struct Failed {
            error: String,
        }
        if let Ok(failed) = serde_json::from_str::<Failed>(event.data) {
            return Err(super::stream_error(500, &failed.error, redactor));
        }
        let line: OllamaResponse<'_> = read_object(event.data)?;
        if let Some(text) = line.message.and_then(|m| m.content) {
            streamed.push_content(&text);
        }
        if line.done == Some(true) {
            streamed.finished = true;
            streamed.meta = ResponseMeta {
                model: line.model.clone(),
                finish_reason: line.done_reason.as_deref().map(str::to_owned),
            };
            if line.done_reason.as_deref() == Some("length") {
                streamed.truncated = Some("done_reason = \"length\"");
            }
            streamed.usage = Usage {
                prompt_tokens: line.prompt_eval_count,
                completion_tokens: line.eval_count,
                ..Usage::default()
            };
        }
        Ok(())
    }

    fn parse<'b>(&self, body: &'b str, _redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: OllamaResponse<'_> = read_object(body)?;
        let meta = ResponseMeta {
            model: response.model,
            finish_reason: response.done_reason.as_deref().map(str::to_owned),
        };
        let (content, calls) = match response.message {
            Some(m) => (m.content, m.tool_calls),
            None => (None, Vec::new()),
        };
        Ok(Answer {
            meta,
            content,
            tool_calls: super::chat::tool_calls(calls),
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
                ..Usage::default()
            },
        })
    }
}

/// An Ollama `/api/chat` response with `stream: false` (Ollama API docs,
/// "Generate a chat completion": `message.content`, `done`, `done_reason`,
/// `prompt_eval_count`, `eval_count`).
#[derive(Debug, Deserialize)]
struct OllamaResponse<'a> {
    #[serde(default)]
    model: Option<String>,
    #[serde(default, borrow)]
    message: Option<ReplyMessage<'a>>,
    /// `false` on a partial response (a streamed chunk): the answer is not
    /// complete.
    #[serde(default)]
    done: Option<bool>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    done_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
}

#[derive(Serialize)]
struct OllamaRequest<'a> {
    model: &'a str,
    messages: ChatMessages<'a>,
    format: &'a RawValue,
    options: Options,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<super::chat::FunctionTools<'a>>,
    /// Last: a streamed request's body changes only its end.
    stream: bool,
}

#[derive(Serialize)]
struct Options {
    num_predict: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[cfg(test)]
mod tests {
    //! Reading `/api/chat` responses with `stream: false`, in the shapes of
    //! Ollama's API docs ("Generate a chat completion").

    use super::*;

    fn parse(body: &str) -> Answer<'_> {
        Ollama
            .parse(body, &Redactor::default())
            .unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    /// A complete non-streamed response as the API returns it.
    const RESPONSE: &str = r#"{
      "model": "llama3.2",
      "created_at": "2023-12-12T14:13:43.416799Z",
      "message": {"role": "assistant", "content": "{\"vendor\": \"ACME\"}"},
      "done": true,
      "done_reason": "stop",
      "total_duration": 5191566416,
      "load_duration": 2154458,
      "prompt_eval_count": 26,
      "prompt_eval_duration": 383809000,
      "eval_count": 298,
      "eval_duration": 4799921000
    }"#;

    #[test]
    fn a_done_reply_gives_its_content_and_usage() {
        let answer = parse(RESPONSE);
        assert_eq!(answer.content.as_deref(), Some(r#"{"vendor": "ACME"}"#));
        assert_eq!(answer.refused, None);
        assert_eq!(answer.reply_otherwise, None);
        assert_eq!(answer.truncated, None);
        assert!(answer.tool_use.is_none());
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(26),
                completion_tokens: Some(298),
                ..Usage::default()
            }
        );
    }

    #[test]
    fn a_thinking_model_s_thoughts_are_not_the_content() {
        let body = r#"{"model":"qwen3","message":{"role":"assistant","content":"[1]","thinking":"The user wants a list."},"done":true,"done_reason":"stop"}"#;
        assert_eq!(parse(body).content.as_deref(), Some("[1]"));
    }

    #[test]
    fn cut_short_replies() {
        let with = |done: &str, reason: &str| {
            format!(
                r#"{{"message":{{"role":"assistant","content":"{{\"v\":"}},"done":{done},"done_reason":{reason}}}"#
            )
        };
        for (done, reason, how) in [
            ("true", "\"length\"", Some("done_reason = \"length\"")),
            ("null", "\"length\"", Some("done_reason = \"length\"")),
            ("false", "\"stop\"", Some("done = false")),
            ("false", "\"length\"", Some("done = false")),
            ("false", "null", Some("done = false")),
            ("true", "\"stop\"", None),
            ("true", "\"load\"", None),
            ("true", "null", None),
            ("null", "\"stop\"", None),
            ("true", "\"LENGTH\"", None),
        ] {
            let body = with(done, reason);
            let answer = parse(&body);
            assert_eq!(answer.truncated, how, "{body}");
            assert_eq!(answer.refused, None, "{body}");
            assert_eq!(answer.content.as_deref(), Some("{\"v\":"), "{body}");
        }
    }

    #[test]
    fn missing_parts_are_no_answer_rather_than_an_error() {
        for body in [
            "{}",
            r#"{"model":"m","done":true}"#,
            r#"{"message":null}"#,
            r#"{"message":{"role":"assistant"}}"#,
            r#"{"message":{"role":"assistant","content":null},"prompt_eval_count":null}"#,
        ] {
            let answer = parse(body);
            assert_eq!(answer.content, None, "{body}");
            assert_eq!(answer.truncated, None, "{body}");
            assert_eq!(answer.usage, Usage::default(), "{body}");
            assert_eq!(
                answer.content().unwrap_err().error,
                "the reply had no content"
            );
        }
        let partial = r#"{"eval_count":3}"#;
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
            "{",
            "[]",
            // A streamed response (the request asks for one object): two
            // objects, one per line.
            "{\"message\":{\"content\":\"{\"},\"done\":false}\n{\"message\":{\"content\":\"}\"},\"done\":true}",
            r#"{"message": "text"}"#,
            r#"{"message": {"content": 1}}"#,
            r#"{"done": "true"}"#,
            r#"{"done_reason": 1}"#,
            r#"{"eval_count": -3}"#,
            r#"{"prompt_eval_count": "26"}"#,
        ] {
            match Ollama.parse(body, &Redactor::default()) {
                Err(Error::MalformedResponse(message)) => assert!(!message.is_empty(), "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    /// Ollama's user message takes base64 images in `images`, nothing else
    /// ("Generate a chat completion"): a URL or a document never goes there
    /// (the provider's rules refuse both before a request is rendered; the
    /// messages do not rely on it), and each image sent is its own bytes.
    #[test]
    fn only_inline_images_go_in_the_images() {
        use crate::media::body::{encode_into, splice};
        use crate::media::load::{Content, Loaded, MediaType};
        use crate::media::Kind;
        use bytes::Bytes;
        let inline = |kind, number, media_type, bytes: &'static [u8]| Loaded {
            kind,
            number,
            content: Content::Inline {
                media_type,
                bytes: Bytes::from_static(bytes),
                file_name: "x".into(),
            },
        };
        let conversation = Conversation {
            examples: Vec::new(),
            history: Vec::new(),
            first: RawValue::from_string("\"Input (JSON): {}\"".to_owned()).unwrap(),
            media: vec![
                Loaded {
                    kind: Kind::Image,
                    number: 1,
                    content: Content::Url("https://example.com/a.png".into()),
                },
                inline(Kind::Document, 1, MediaType::Pdf, b"%PDF-1.4 doc"),
                inline(Kind::Image, 2, MediaType::Png, b"\x89PNG image"),
                inline(Kind::Audio, 1, MediaType::Wav, b"RIFF audio"),
            ],
            turns: Vec::new(),
        };
        let system = RawValue::from_string("\"sys\"".to_owned()).unwrap();
        let skeleton = serde_json::to_vec(&ChatMessages {
            system: &system,
            conversation: &conversation,
            ollama: true,
        })
        .unwrap();
        let sent = splice(skeleton, &conversation.media);
        let messages: serde_json::Value = serde_json::from_slice(&sent).unwrap();
        let mut png = Vec::new();
        encode_into(b"\x89PNG image", &mut png);
        assert_eq!(
            messages[1],
            serde_json::json!({
                "role": "user",
                "content": "Input (JSON): {}",
                "images": [String::from_utf8(png).unwrap()],
            })
        );
    }
}
