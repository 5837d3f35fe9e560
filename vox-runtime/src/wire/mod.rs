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

use reqwest::header::HeaderName;
use vox_metadata::providers::Protocol as TableProtocol;

use crate::ai_function::AiFunction;
use crate::config::{Config, Provider, ResponseFormat};
use crate::error::Error;
use crate::redact::Redactor;
use crate::reply::{Answer, RejectedReply};

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
                stated: !enforced,
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

/// What the constant parts of one function's requests are made of, the
/// same for every wire.
pub(crate) struct Render<'a> {
    pub function: &'a AiFunction,
    pub model: &'a str,
    /// The completion limit, as JSON.
    pub limit: &'a str,
    /// The task: the function's doc comment, or a sentence naming it.
    pub task: &'a str,
    /// The system message (the task, how to answer, and the schema's shape
    /// when [`Protocol::states_shape`]).
    pub system: &'a str,
    /// The strict schema's JSON text.
    pub schema: &'a [u8],
    pub schema_name: &'a str,
}

impl Render<'_> {
    /// Appends `key` and the function's temperature, at most `max`, if it
    /// has one.
    pub fn temperature(&self, out: &mut Vec<u8>, key: &[u8], max: f64) -> Result<(), Error> {
        if let Some(t) = self.function.temperature() {
            out.extend_from_slice(key);
            // A non-finite temperature cannot be sent as JSON; serde_json
            // writes it as `null`, which servers read as "the default".
            serde_json::to_writer(&mut *out, &t.min(max)).map_err(|e| Error::Serialize {
                argument: "<temperature>".to_owned(),
                message: e.to_string(),
            })?;
        }
        Ok(())
    }
}

/// How a key is sent.
pub(crate) struct KeyHeader {
    /// The header.
    pub name: HeaderName,
    /// Whether its value is `Bearer <key>` rather than the key alone.
    pub bearer: bool,
}

/// Everything protocol-specific about talking to one API.
pub(crate) trait Protocol: Send + Sync {
    /// The path after the base URL requests are POSTed to; `{model}` in
    /// it stands for [`Protocol::model_in_path`] of the model.
    fn path(&self) -> &'static str;

    /// The model as it goes into [`Protocol::path`].
    fn model_in_path<'m>(&self, model: &'m str) -> &'m str {
        model
    }

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

    /// Renders the constant parts of one function's requests: `head` up to
    /// where the first user message's text goes, `tail` from the end of
    /// the messages on.
    fn render(&self, r: &Render<'_>, head: &mut Vec<u8>, tail: &mut Vec<u8>) -> Result<(), Error>;

    /// Closes the first user message after its (escaped) text.
    fn close_first_message(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\"}");
    }

    /// Appends the turns that answer a rejected reply: the reply as the
    /// model's turn, then the correction (the concatenation of
    /// `correction`) as the user's. Starts after a `,` already written.
    fn push_correction(&self, out: &mut Vec<u8>, rejected: &RejectedReply, correction: &[&str]) {
        push_message(out, "assistant", &[&rejected.reply]);
        out.push(b',');
        push_message(out, "user", correction);
    }

    /// Reads a successful response body. What the server says instead of
    /// an answer (a refusal, a finish or block reason) is quoted through
    /// `redactor` ([`Redactor::shown`]): redacted, bounded, escaped.
    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error>;
}

/// An error reading a response body.
pub(crate) fn malformed(e: serde_json::Error) -> Error {
    Error::MalformedResponse(e.to_string())
}

/// `reply`, or a placeholder where an API refuses empty text.
pub(crate) fn non_empty(reply: &str) -> &str {
    if reply.trim().is_empty() {
        "(no reply)"
    } else {
        reply
    }
}

/// Appends one `{"role":…,"content":…}` message whose content is the
/// concatenation of `content`.
pub(crate) fn push_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
    open_message(out, role, content);
    out.extend_from_slice(b"\"}");
}

/// Appends the start of a message: its role and the beginning of its
/// content, the concatenation of `content`, with the string left open.
pub(crate) fn open_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(role.as_bytes());
    out.extend_from_slice(b"\",\"content\":\"");
    for part in content {
        push_escaped(out, part.as_bytes());
    }
}

/// Appends `text` (valid UTF-8) escaped as the inside of a JSON string:
/// `"` and `\` get a backslash, control characters become `\n`, `\t`… or
/// `\u00XX`; everything else, including non-ASCII, is copied as is.
pub(crate) fn push_escaped(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    let mut start = 0;
    let mut i = 0;
    // Eight bytes at a time while none needs escaping: prompts are mostly
    // plain text, so this is the loop that runs.
    while i + 8 <= text.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&text[i..i + 8]);
        if !needs_escape(u64::from_le_bytes(word)) {
            i += 8;
            continue;
        }
        for offset in 0..8 {
            escape_byte(out, text, &mut start, i + offset);
        }
        i += 8;
    }
    while i < text.len() {
        escape_byte(out, text, &mut start, i);
        i += 1;
    }
    out.extend_from_slice(&text[start..]);
}

/// Whether any byte of `word` is a control character, `"` or `\`.
/// (SWAR: `(x - 0x01…) & !x & 0x80…` is non-zero exactly when some byte of
/// `x` is zero, and `(x - n…) & !x & 0x80…` when some byte is below `n`.)
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | has_quote | has_backslash) & HIGH != 0
}

/// Escapes `text[i]` if it needs it, first copying the plain run
/// `text[*start..i]`.
fn escape_byte(out: &mut Vec<u8>, text: &[u8], start: &mut usize, i: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let byte = text[i];
    if byte >= 0x20 && byte != b'"' && byte != b'\\' {
        return;
    }
    out.extend_from_slice(&text[*start..i]);
    *start = i + 1;
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
    }
}
