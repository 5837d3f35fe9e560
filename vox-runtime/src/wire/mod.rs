//! One module per wire protocol: everything that differs between the APIs
//! the runtime speaks (docs/runtime.md, "Adding a provider").
//!
//! A [`Protocol`] owns its API's URL path and key header, the rendering of
//! a request (system message or instruction, arguments, schema, completion
//! limit, temperature), the correction turn after a rejected reply, and
//! reading the reply (content, finish or stop reason, refusal, usage).
//! [`Wire`] picks the protocol a provider speaks from the shared provider
//! table; `fixture` speaks none ([`Backend::Fixture`]): its calls never
//! reach a wire. Everything provider-independent — the wording of the
//! prompt and of corrections, the arguments, the re-prompt loop — stays in
//! `prompt.rs`, `reply.rs` and `client.rs`.

pub(crate) mod anthropic;
pub(crate) mod chat;
pub(crate) mod gemini;
pub(crate) mod ollama;
mod parts;

pub(crate) use parts::{PartsOf, RequestParts};

use std::borrow::Cow;

use reqwest::header::HeaderName;
use serde::Deserialize;
use vox_metadata::providers::Protocol as TableProtocol;

use serde_json::value::RawValue;

use crate::config::{Config, Provider, ResponseFormat};
use crate::error::Error;
use crate::media::body::{DataUrl, Inline};
use crate::media::load::{Content, Loaded};
use crate::prompt::Conversation;
use crate::redact::Redactor;
use crate::reply::Answer;
use crate::stream::{Event, Framing, Streamed};

/// Where one provider's calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// No network: each function runs its Vox body.
    Fixture,
    /// A server speaking this wire protocol.
    Network(Wire),
}

impl Backend {
    /// The backend of `provider` under `config`, from its row of the shared
    /// provider table.
    pub fn of(provider: Provider, config: &Config) -> Backend {
        let Some(protocol) = provider.facts().protocol else {
            return Backend::Fixture;
        };
        Backend::Network(match protocol {
            TableProtocol::Chat { limit, enforced } => Wire::Chat(chat::Chat {
                limit,
                // Only `compatible` servers take the schema in another form.
                format: if provider == Provider::Compatible {
                    config.response_format
                } else {
                    ResponseFormat::JsonSchema
                },
                // `auto`: the shape is stated where the model is not held
                // to a schema it is shown — a server the provider table
                // marks as not enforcing it, except a `compatible` server
                // given `json_schema`, which holds the reply to it (a
                // grammar, on llama.cpp's server) and shows the model
                // nothing more by a second statement.
                stated: !(enforced
                    || provider == Provider::Compatible
                        && config.response_format == ResponseFormat::JsonSchema),
            }),
            TableProtocol::Anthropic => Wire::Anthropic,
            TableProtocol::Gemini => Wire::Gemini,
            TableProtocol::Ollama => Wire::Ollama,
            // The table's protocols are non-exhaustive; a new one needs a
            // wire module before any provider can use it.
            _ => Wire::Chat(chat::Chat {
                limit: "max_tokens",
                format: ResponseFormat::JsonSchema,
                stated: true,
            }),
        })
    }
}

/// The request and response shape of one provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI's chat completions (`openai`, `openrouter`, `compatible`).
    Chat(chat::Chat),
    /// Anthropic's Messages API, structured output through a forced tool
    /// call.
    Anthropic,
    /// Gemini's `generateContent` with `responseJsonSchema`.
    Gemini,
    /// Ollama's native `/api/chat` with `format: <schema>`.
    Ollama,
}

impl Wire {
    /// Whether this API's images carry no labels (Ollama's), so the first
    /// message says how the attached media line up.
    pub(crate) fn lists_media_in_text(self) -> bool {
        matches!(self, Wire::Ollama)
    }

    /// The shape `provider` speaks under `config`, if any (`fixture`
    /// speaks none).
    pub fn of(provider: Provider, config: &Config) -> Option<Wire> {
        match Backend::of(provider, config) {
            Backend::Network(wire) => Some(wire),
            Backend::Fixture => None,
        }
    }

    /// The shape of a request that is never sent (a cassette replaying
    /// under `fixture`): a compatible server's.
    pub fn offline(config: &Config) -> Wire {
        Wire::Chat(chat::Chat {
            limit: "max_tokens",
            format: config.response_format,
            stated: true,
        })
    }

    /// Whether the prompt states the schema's shape for a function with
    /// (`has_tools`) or without tools: where the API may not enforce the
    /// schema, and on Gemini with tools, whose requests then carry no
    /// response schema (docs/runtime.md, "Tools").
    pub fn states_shape(self, has_tools: bool) -> bool {
        self.protocol().states_shape() || (has_tools && self == Wire::Gemini)
    }

    /// The protocol implementation behind this shape.
    pub fn protocol(&self) -> &dyn Protocol {
        match self {
            Wire::Chat(chat) => chat,
            Wire::Anthropic => &anthropic::Anthropic,
            Wire::Gemini => &gemini::Gemini,
            Wire::Ollama => &ollama::Ollama,
        }
    }
}

/// What a wire prepares once per function: the texts every wire gets.
pub(crate) struct Prepare<'a> {
    /// The function's name.
    pub function: &'a str,
    /// The task: the function's doc comment, or a sentence naming it.
    pub task: &'a str,
    /// The system message (the task, how to answer, and the schema's shape
    /// when it is stated).
    pub system: String,
    /// The schema's shape as the prompt states it, when it is stated.
    pub shape: Option<&'a str>,
    /// The strict schema's JSON text.
    pub schema: &'a str,
    pub schema_name: &'a str,
    /// Whether the model may call tools before it answers.
    pub has_tools: bool,
}

/// What a wire keeps for every request of one function.
pub(crate) struct Prepared {
    /// The system text it sends.
    pub system: String,
    /// The schema it sends, when not the strict schema itself.
    pub schema: Option<Box<RawValue>>,
    /// The tool the model is asked to call, and its description.
    pub tool: Option<(String, String)>,
}

/// A temperature as sent: at most `max` (a NaN is written as `null`,
/// which servers read as "the default").
pub(crate) fn temperature(parts: &RequestParts, max: f64) -> Option<f64> {
    parts.temperature.map(|t| t.min(max))
}

/// How a key is sent.
pub(crate) struct KeyHeader {
    /// The header.
    pub name: HeaderName,
    /// Whether its value is `Bearer <key>` rather than the key alone.
    pub bearer: bool,
}

/// A `{"role": …, "content": …}` message of the chat-shaped APIs; the
/// content is text, or (for the system message) a JSON string written once.
#[derive(serde::Serialize)]
pub(crate) struct Message<'a, C: ?Sized + serde::Serialize = str> {
    pub role: &'a str,
    pub content: &'a C,
}

/// The content of the first user message when the arguments hold media:
/// each media's label (its placeholder) and part, as `part` renders it,
/// then the arguments' text as `text` renders it (media first, as the
/// providers' guides advise). The parts hold markers for the inline data
/// (`media::body`), never the data.
pub(crate) fn media_first(
    conversation: &Conversation,
    text: impl Fn(serde_json::Value) -> serde_json::Value,
    part: impl Fn(&Loaded, serde_json::Value) -> Option<serde_json::Value>,
) -> Vec<serde_json::Value> {
    let mut parts = Vec::with_capacity(2 * conversation.media.len() + 1);
    let first = serde_json::Value::from(first_text(conversation));
    for (index, media) in conversation.media.iter().enumerate() {
        // What the data string holds: a marker for inline bytes.
        let data = |prefix: &str| {
            serde_json::to_value(Inline { prefix, index }).unwrap_or(serde_json::Value::Null)
        };
        let data = match &media.content {
            Content::Inline { media_type, .. } => {
                serde_json::json!({ "plain": data(""), "url": data(&DataUrl(media_type.mime()).to_string()) })
            }
            Content::Url(url) => serde_json::json!({ "url": url }),
        };
        parts.push(text(serde_json::Value::from(media.placeholder())));
        match part(media, data) {
            Some(p) => parts.push(p),
            // The provider's rules refuse what a wire cannot send before
            // any request is rendered; were one rendered, the model is told.
            None => parts.push(text(serde_json::Value::from(format!(
                "{} (not sent: this API does not take it in this form)",
                media.placeholder()
            )))),
        }
    }
    parts.push(text(first));
    parts
}

/// The first user message's text, as text.
fn first_text(conversation: &Conversation) -> String {
    // A JSON string written by serde_json: it reads back.
    serde_json::from_str(conversation.first.get()).unwrap_or_default()
}

/// Everything protocol-specific about talking to one API.
pub(crate) trait Protocol: Send + Sync {
    /// The path after the base URL a request for `model` is POSTed to
    /// (the same for every model on most APIs; the transport parses a URL
    /// that does not depend on the model once).
    fn path(&self, model: &str) -> Cow<'static, str>;

    /// The header the API key goes in.
    fn key_header(&self) -> KeyHeader {
        KeyHeader {
            name: reqwest::header::AUTHORIZATION,
            bearer: true,
        }
    }

    /// Headers every request carries besides the key and content type.
    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Whether the prompt states the schema's shape (the API may not hold
    /// the model to the schema, or the model may not see it).
    fn states_shape(&self) -> bool {
        false
    }

    /// Prepares what every request of one function carries (the system
    /// text, the schema in the API's form), once per function.
    fn prepare(&self, input: Prepare<'_>) -> Result<Prepared, Error> {
        Ok(Prepared {
            system: input.system,
            schema: None,
            tool: None,
        })
    }

    /// Writes the JSON body of one request: `parts` (the constant parts)
    /// and `conversation` (the arguments and every rejected attempt with
    /// its correction).
    fn write_request(
        &self,
        parts: &RequestParts,
        conversation: &Conversation,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()>;

    /// The path a streamed request for `model` is POSTed to
    /// (docs/runtime.md, "Streaming").
    fn stream_path(&self, model: &str) -> Cow<'static, str> {
        self.path(model)
    }

    /// The body of a streamed request, made from the plain request's.
    fn stream_body(&self, body: &[u8]) -> Vec<u8> {
        with_fields(body, r#""stream":true"#)
    }

    /// How the API frames a streamed answer.
    fn framing(&self) -> Framing {
        Framing::Sse
    }

    /// Reads one event of a streamed answer into `streamed`. An event
    /// saying the request failed is an error; anything the runtime does
    /// not use is skipped.
    fn read_event(
        &self,
        event: &Event,
        streamed: &mut Streamed,
        redactor: &Redactor,
    ) -> Result<(), Error>;

    /// Reads a successful response body. What the server says instead of
    /// an answer (a refusal, a finish or block reason) is quoted through
    /// `redactor` ([`Redactor::shown`]): redacted, bounded, escaped.
    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error>;
}

/// `body`, a JSON object, with `fields` (`"key":value,…`) added at its end.
pub(crate) fn with_fields(body: &[u8], fields: &str) -> Vec<u8> {
    let end = body.iter().rposition(|b| *b == b'}').unwrap_or(body.len());
    let head = &body[..end];
    let empty = head
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|b| *b == b'{');
    let mut out = Vec::with_capacity(body.len() + fields.len() + 2);
    out.extend_from_slice(head);
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(fields.as_bytes());
    out.push(b'}');
    out
}

/// An `error` a stream carries instead of the rest of the answer, as the
/// HTTP error it stands for: `status` as the API's error type implies.
pub(crate) fn stream_error(status: u16, message: &str, redactor: &Redactor) -> Error {
    Error::Http {
        status,
        body_excerpt: redactor.shown(
            &format!("(in the streamed answer) {}", message.trim()),
            crate::error::BODY_EXCERPT_CHARS,
        ),
    }
}

/// An error reading a response body.
pub(crate) fn malformed(e: serde_json::Error) -> Error {
    Error::MalformedResponse(e.to_string())
}

/// Reads `json` — a response body, or one of its objects — as `T`. It must
/// be a JSON object: serde would read a struct from an array too, its
/// elements taken as the fields in order (so `[]` would be an answer with
/// nothing in it).
pub(crate) fn read_object<'b, T: serde::Deserialize<'b>>(json: &'b str) -> Result<T, Error> {
    if !json.trim_start().starts_with('{') {
        // serde_json's own message for what is there instead.
        let e = match serde_json::from_str::<serde::de::IgnoredAny>(json) {
            Err(e) => e,
            Ok(_) => {
                return Err(Error::MalformedResponse(
                    "expected a JSON object".to_owned(),
                ))
            }
        };
        return Err(malformed(e));
    }
    serde_json::from_str(json).map_err(malformed)
}

/// A field read as its type's default when it is `null` (servers send
/// `"tool_calls": null` as often as they leave it out).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A string field borrowed from the body when it has no escapes (serde
/// borrows a `Cow` only as a field of its own, not inside an `Option`).
pub(crate) fn borrowed<'de, D>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(serde::Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed<'de>>::deserialize(deserializer)?.map(|b| b.0))
}

/// Parses a successful response body (which must be UTF-8 JSON) of the
/// shape `wire` speaks. What the server says instead of an answer (a
/// refusal, a finish or block reason) is quoted in the rejection through
/// `redactor` ([`Redactor::shown`]): redacted, bounded, escaped.
pub(crate) fn parse_response<'b>(
    wire: Wire,
    body: &'b [u8],
    redactor: &Redactor,
) -> Result<Answer<'b>, Error> {
    let text = std::str::from_utf8(body).map_err(|e| Error::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    wire.protocol().parse(text, redactor)
}
