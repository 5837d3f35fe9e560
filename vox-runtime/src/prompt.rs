//! What the runtime says to the model: the conversation of one `@ai` call
//! and the request body that carries it, in the shape of the provider's API
//! ([`Wire`]).
//!
//! Pure functions over plain data, so the exact wording and each request
//! shape (docs/runtime.md, "Providers") are unit-tested without HTTP.

use bytes::Bytes;

use crate::ai_function::{AiFunction, Args};
use crate::config::{Config, Provider, ResponseFormat};
use crate::error::Error;

/// The request and response shape of one provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI's chat completions (`openai`, `openrouter`, `compatible`):
    /// `limit` names the completion limit field, `format` is how the schema
    /// is given.
    Chat {
        limit: &'static str,
        format: ResponseFormat,
    },
    /// Anthropic's Messages API, structured output through a forced tool
    /// call.
    Anthropic,
    /// Gemini's `generateContent` with `responseJsonSchema`.
    Gemini,
    /// Ollama's native `/api/chat` with `format: <schema>`.
    Ollama,
}

impl Wire {
    /// The shape `provider` speaks under `config`.
    pub fn of(provider: Provider, config: &Config) -> Wire {
        match provider {
            Provider::Anthropic => Wire::Anthropic,
            Provider::Gemini => Wire::Gemini,
            Provider::Ollama => Wire::Ollama,
            // OpenAI's "Chat Completions" reference: `max_tokens` is
            // deprecated there in favour of `max_completion_tokens`.
            Provider::OpenAi => Wire::Chat {
                limit: "max_completion_tokens",
                format: ResponseFormat::JsonSchema,
            },
            Provider::OpenRouter => Wire::Chat {
                limit: "max_tokens",
                format: ResponseFormat::JsonSchema,
            },
            Provider::Compatible | Provider::Fixture => Wire::Chat {
                limit: "max_tokens",
                format: config.response_format,
            },
        }
    }
}

/// What the constant parts of a request depend on besides the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartsKey {
    pub wire: Wire,
    pub model: Box<str>,
    pub max_tokens: u32,
}

/// The parts of one function's requests to one model that are the same for
/// every call, already rendered as JSON: everything before the arguments
/// and everything after the messages. Built once per function (see
/// `AiFunction::request_parts`).
#[derive(Debug, Clone)]
pub(crate) struct RequestParts {
    key: PartsKey,
    /// Everything up to where the arguments go in the first user message:
    /// model, system message or instruction, tools, and the start of that
    /// message (the instruction and the function's name).
    head: Box<[u8]>,
    /// What closes the messages and follows them: temperature, completion
    /// limit, the schema (`response_format`, `format`, `generationConfig`).
    tail: Box<[u8]>,
}

/// The system message for APIs that enforce the schema on the reply.
fn system_text<'a>(name: &'a str, schema_name: &'a str) -> [&'a str; 5] {
    [
        "You are the implementation of the function `",
        name,
        "`. Answer only with one JSON value that matches the JSON Schema `",
        schema_name,
        "` of the response format: no prose, no Markdown, no code fences.",
    ]
}

impl RequestParts {
    /// Renders the constant parts of `function`'s requests to `model` with
    /// at most `max_tokens` completion tokens, in the shape of `wire`.
    pub fn new(
        function: &AiFunction,
        wire: Wire,
        model: &str,
        max_tokens: u32,
    ) -> Result<RequestParts, Error> {
        let name = function.name();
        let instruction = function.instruction().trim();
        let schema_name = function.output().name();
        let schema = function.output().raw()?.get().as_bytes();
        let mut head = Vec::with_capacity(
            instruction.len() + 2 * name.len() + model.len() + 300 + schema.len(),
        );
        let separator = if instruction.is_empty() { "" } else { "\n\n" };
        let user_start = [
            instruction,
            separator,
            "Function: ",
            name,
            "\nArguments (JSON): ",
        ];
        let mut tail = Vec::with_capacity(schema.len() + schema_name.len() + 160);
        let temperature = |out: &mut Vec<u8>, key: &[u8], max: f64| -> Result<(), Error> {
            if let Some(t) = function.temperature() {
                out.extend_from_slice(key);
                // A non-finite temperature cannot be sent as JSON; serde_json
                // writes it as `null`, which servers read as "the default".
                serde_json::to_writer(&mut *out, &t.min(max)).map_err(|e| Error::Serialize {
                    argument: "<temperature>".to_owned(),
                    message: e.to_string(),
                })?;
            }
            Ok(())
        };
        let limit = max_tokens.to_string();
        match wire {
            Wire::Chat {
                limit: field,
                format,
            } => {
                head.extend_from_slice(br#"{"model":""#);
                push_escaped(&mut head, model.as_bytes());
                head.extend_from_slice(br#"","messages":["#);
                // The schema itself travels in `response_format`, which
                // OpenAI, OpenRouter and the common compatible servers
                // enforce; repeating it here would double its prompt tokens.
                push_message(&mut head, "system", &system_text(name, schema_name));
                head.push(b',');
                open_message(&mut head, "user", &user_start);

                tail.push(b']');
                temperature(&mut tail, br#","temperature":"#, f64::MAX)?;
                tail.extend_from_slice(b",\"");
                tail.extend_from_slice(field.as_bytes());
                tail.extend_from_slice(b"\":");
                tail.extend_from_slice(limit.as_bytes());
                match format {
                    ResponseFormat::JsonSchema => {
                        tail.extend_from_slice(
                            br#","response_format":{"type":"json_schema","json_schema":{"name":""#,
                        );
                        push_escaped(&mut tail, schema_name.as_bytes());
                        tail.extend_from_slice(br#"","strict":true,"schema":"#);
                        tail.extend_from_slice(schema);
                        tail.extend_from_slice(b"}}}");
                    }
                    // llama-cpp-python's server: `json_object` with the
                    // schema beside the type (docs/runtime.md, "Compatible
                    // servers").
                    ResponseFormat::JsonObject => {
                        tail.extend_from_slice(
                            br#","response_format":{"type":"json_object","schema":"#,
                        );
                        tail.extend_from_slice(schema);
                        tail.extend_from_slice(b"}}");
                    }
                }
            }
            Wire::Anthropic => {
                // Anthropic's "Tool use with Claude" guide: a forced tool
                // call (`tool_choice: {"type": "tool", "name": …}`) whose
                // `input_schema` is the output schema; the answer is the
                // `tool_use` block's `input`.
                let tool = tool_name(name);
                head.extend_from_slice(br#"{"model":""#);
                push_escaped(&mut head, model.as_bytes());
                head.extend_from_slice(br#"","max_tokens":"#);
                head.extend_from_slice(limit.as_bytes());
                head.extend_from_slice(br#","system":""#);
                for part in [
                    "You are the implementation of the function `",
                    name,
                    "`. Answer by calling the tool `",
                    &tool,
                    "` once: its input is the function's result, which must match the tool's \
                     input schema `",
                    schema_name,
                    "`.",
                ] {
                    push_escaped(&mut head, part.as_bytes());
                }
                head.extend_from_slice(br#"","tools":[{"name":""#);
                push_escaped(&mut head, tool.as_bytes());
                head.extend_from_slice(br#"","description":""#);
                for part in ["The result of the function `", name, "`."] {
                    push_escaped(&mut head, part.as_bytes());
                }
                head.extend_from_slice(br#"","input_schema":"#);
                head.extend_from_slice(schema);
                head.extend_from_slice(br#"}],"tool_choice":{"type":"tool","name":""#);
                push_escaped(&mut head, tool.as_bytes());
                head.extend_from_slice(br#""},"messages":["#);
                open_message(&mut head, "user", &user_start);

                tail.push(b']');
                // The Messages API takes temperatures from 0 to 1.
                temperature(&mut tail, br#","temperature":"#, 1.0)?;
                tail.push(b'}');
            }
            Wire::Gemini => {
                // Gemini API "Structured output" guide: `responseMimeType`
                // `application/json` with the schema in `responseJsonSchema`
                // (the JSON Schema field; `responseSchema` takes OpenAPI's).
                // The model is in the URL, not the body.
                head.extend_from_slice(br#"{"systemInstruction":{"parts":[{"text":""#);
                for part in system_text(name, schema_name) {
                    push_escaped(&mut head, part.as_bytes());
                }
                head.extend_from_slice(br#""}]},"contents":[{"role":"user","parts":[{"text":""#);
                for part in user_start {
                    push_escaped(&mut head, part.as_bytes());
                }

                let ordered: Ordered = serde_json::from_slice(schema).map_err(|e| {
                    Error::Config(format!("the schema `{schema_name}` is invalid JSON: {e}"))
                })?;
                let converted = gemini_schema(&ordered, schema_name);
                tail.extend_from_slice(
                    br#"],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":"#,
                );
                serde_json::to_writer(&mut tail, &converted).map_err(|e| {
                    Error::Config(format!(
                        "the schema `{schema_name}` could not be converted: {e}"
                    ))
                })?;
                tail.extend_from_slice(br#","maxOutputTokens":"#);
                tail.extend_from_slice(limit.as_bytes());
                temperature(&mut tail, br#","temperature":"#, 2.0)?;
                tail.extend_from_slice(b"}}");
            }
            Wire::Ollama => {
                // Ollama's API docs, "Generate a chat completion": `format`
                // takes a JSON Schema; `stream: false` answers with one
                // object; `options.num_predict` is the completion limit.
                head.extend_from_slice(br#"{"model":""#);
                push_escaped(&mut head, model.as_bytes());
                head.extend_from_slice(br#"","stream":false,"messages":["#);
                push_message(&mut head, "system", &system_text(name, schema_name));
                head.push(b',');
                open_message(&mut head, "user", &user_start);

                tail.extend_from_slice(br#"],"format":"#);
                tail.extend_from_slice(schema);
                tail.extend_from_slice(br#","options":{"num_predict":"#);
                tail.extend_from_slice(limit.as_bytes());
                temperature(&mut tail, br#","temperature":"#, f64::MAX)?;
                tail.extend_from_slice(b"}}");
            }
        }
        Ok(RequestParts {
            key: PartsKey {
                wire,
                model: model.into(),
                max_tokens,
            },
            head: head.into(),
            tail: tail.into(),
        })
    }

    /// Whether these parts were built for `wire`, `model` and `max_tokens`.
    pub fn is_for(&self, wire: Wire, model: &str, max_tokens: u32) -> bool {
        self.key.wire == wire && self.key.max_tokens == max_tokens && &*self.key.model == model
    }

    /// The model these parts are for.
    pub fn model(&self) -> &str {
        &self.key.model
    }

    /// The API shape these parts are in.
    pub fn wire(&self) -> Wire {
        self.key.wire
    }

    /// The JSON body of one request: the constant parts around
    /// `conversation`, in one allocation.
    pub fn request_body(&self, conversation: &Conversation) -> Bytes {
        let mut body =
            Vec::with_capacity(self.head.len() + conversation.after_head.len() + self.tail.len());
        body.extend_from_slice(&self.head);
        body.extend_from_slice(&conversation.after_head);
        body.extend_from_slice(&self.tail);
        Bytes::from(body)
    }
}

/// The tool name for function `name`: Anthropic allows
/// `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn tool_name(name: &str) -> String {
    let mut tool: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if tool.is_empty() {
        tool.push_str("result");
    }
    tool
}

/// The keywords Gemini's `responseJsonSchema` accepts (Gemini API
/// "Structured output" guide, "JSON Schema support"); others are dropped.
const GEMINI_KEYWORDS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// A JSON value that keeps its objects' key order (serde_json's `Value`
/// sorts them), so the schema Gemini gets lists properties in the order
/// Vox declares them — the order Gemini answers in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar(serde_json::Value),
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut pairs = Vec::new();
                while let Some(entry) = map.next_entry::<String, Ordered>()? {
                    pairs.push(entry);
                }
                Ok(Ordered::Object(pairs))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Ordered>()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Value::Null))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl serde::Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Ordered::Object(pairs) => {
                let mut map = serializer.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Scalar(v) => v.serialize(serializer),
        }
    }
}

/// [`gemini_schema`] on JSON text: what Gemini receives for the strict
/// schema `schema` named `name`. Public (hidden) so that a test can hold it
/// against vox-codegen's copy behind `cargo vox schema --provider gemini`.
#[doc(hidden)]
pub fn gemini_schema_text(schema: &str, name: &str) -> Result<String, serde_json::Error> {
    let ordered: Ordered = serde_json::from_str(schema)?;
    serde_json::to_string(&gemini_schema(&ordered, name))
}

/// `schema` in the subset Gemini's `responseJsonSchema` accepts
/// (docs/runtime.md, "Gemini's schema"): keywords outside
/// [`GEMINI_KEYWORDS`] are dropped (Vox's schemas use none), and references
/// to the root (`{"$ref": "#"}`, from recursive return types) point at a
/// copy of the root under `$defs/<name>` instead, since Gemini resolves
/// references only into `$defs`. Key order is kept. vox-codegen's
/// `schema::gemini_schema` (behind `cargo vox schema --provider gemini`)
/// does the same; `tests/tests/gemini_schema.rs` holds the two together.
pub(crate) fn gemini_schema(schema: &Ordered, name: &str) -> Ordered {
    fn filter(value: &Ordered, root_ref: &str, in_map: bool) -> Ordered {
        match value {
            Ordered::Object(pairs) => Ordered::Object(
                pairs
                    .iter()
                    .filter(|(k, _)| in_map || GEMINI_KEYWORDS.contains(&k.as_str()))
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("$ref", Ordered::Scalar(serde_json::Value::String(r)))
                                if r == "#" && !in_map =>
                            {
                                Ordered::Scalar(root_ref.into())
                            }
                            // Maps from names to schemas: every key is kept.
                            ("properties" | "$defs", _) if !in_map => filter(v, root_ref, true),
                            ("enum" | "required" | "propertyOrdering", _) if !in_map => v.clone(),
                            _ => filter(v, root_ref, false),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Ordered::Array(items) => {
                Ordered::Array(items.iter().map(|v| filter(v, root_ref, false)).collect())
            }
            other => other.clone(),
        }
    }
    fn refers_to_root(value: &Ordered) -> bool {
        match value {
            Ordered::Object(pairs) => pairs.iter().any(|(k, v)| {
                (k == "$ref" && *v == Ordered::Scalar("#".into())) || refers_to_root(v)
            }),
            Ordered::Array(items) => items.iter().any(refers_to_root),
            Ordered::Scalar(_) => false,
        }
    }
    if !refers_to_root(schema) {
        return filter(schema, "#", false);
    }
    let mut def_name = tool_name(name);
    let has_def = |n: &str| match schema {
        Ordered::Object(pairs) => pairs.iter().any(|(k, v)| {
            k == "$defs" && matches!(v, Ordered::Object(defs) if defs.iter().any(|(d, _)| d == n))
        }),
        _ => false,
    };
    while has_def(&def_name) {
        def_name.push('_');
    }
    let root_ref = format!("#/$defs/{def_name}");
    let Ordered::Object(mut pairs) = filter(schema, &root_ref, false) else {
        return filter(schema, &root_ref, false);
    };
    let body = Ordered::Object(
        pairs
            .iter()
            .filter(|(k, _)| k != "$defs")
            .cloned()
            .collect(),
    );
    match pairs.iter_mut().find(|(k, _)| k == "$defs") {
        Some((_, Ordered::Object(defs))) => defs.push((def_name, body)),
        _ => pairs.push(("$defs".into(), Ordered::Object(vec![(def_name, body)]))),
    }
    Ordered::Object(pairs)
}

/// What varies in the messages of one call, kept as the JSON text it is
/// sent as: the rendered arguments that end the first user message, then,
/// for each rejected attempt, the model's reply and the correction. Each
/// message is escaped once, when it is added, not again for every request.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    wire: Wire,
    /// Follows `RequestParts::head`, precedes `RequestParts::tail`.
    after_head: Vec<u8>,
}

const CORRECTION_START: &str = "Your previous reply was rejected: ";
const CORRECTION_END: &str = "\nAnswer again with only one JSON value that matches the schema.";

impl Conversation {
    /// The call's arguments, closing the first user message (whose start,
    /// the instruction, is in `RequestParts::head`).
    pub fn start(wire: Wire, args: &Args) -> Conversation {
        let args_json = args.as_json();
        let mut after_head = Vec::with_capacity(args_json.len() * 5 / 4 + 16);
        push_escaped(&mut after_head, args_json.as_bytes());
        match wire {
            Wire::Gemini => after_head.extend_from_slice(b"\"}]}"),
            _ => after_head.extend_from_slice(b"\"}"),
        }
        Conversation { wire, after_head }
    }

    /// Records a rejected reply and asks the model to correct it, quoting
    /// the exact error.
    pub fn push_correction(&mut self, rejected: &crate::reply::RejectedReply) {
        let (reply, error) = (rejected.reply.as_str(), rejected.error.as_str());
        let out = &mut self.after_head;
        out.push(b',');
        match (self.wire, &rejected.tool_use) {
            // Anthropic's "Tool use with Claude" guide, "Handling tool
            // use and tool result content blocks": the tool call goes back
            // as the assistant's turn, answered by a `tool_result` with
            // `is_error: true` that quotes the error.
            (Wire::Anthropic, Some((block, id))) => {
                out.extend_from_slice(br#"{"role":"assistant","content":["#);
                out.extend_from_slice(block.as_bytes());
                out.extend_from_slice(
                    br#"]},{"role":"user","content":[{"type":"tool_result","tool_use_id":""#,
                );
                push_escaped(out, id.as_bytes());
                out.extend_from_slice(br#"","is_error":true,"content":""#);
                for part in [CORRECTION_START, error, CORRECTION_END] {
                    push_escaped(out, part.as_bytes());
                }
                out.extend_from_slice(b"\"}]}");
            }
            (Wire::Gemini, _) => {
                out.extend_from_slice(br#"{"role":"model","parts":[{"text":""#);
                push_escaped(out, non_empty(reply).as_bytes());
                out.extend_from_slice(br#""}]},{"role":"user","parts":[{"text":""#);
                for part in [CORRECTION_START, error, CORRECTION_END] {
                    push_escaped(out, part.as_bytes());
                }
                out.extend_from_slice(b"\"}]}");
            }
            (wire, _) => {
                // Anthropic refuses empty text blocks.
                let reply = if wire == Wire::Anthropic {
                    non_empty(reply)
                } else {
                    reply
                };
                push_message(out, "assistant", &[reply]);
                out.push(b',');
                push_message(out, "user", &[CORRECTION_START, error, CORRECTION_END]);
            }
        }
    }
}

/// `reply`, or a placeholder where an API refuses empty text.
fn non_empty(reply: &str) -> &str {
    if reply.trim().is_empty() {
        "(no reply)"
    } else {
        reply
    }
}

/// Appends one `{"role":…,"content":…}` message whose content is the
/// concatenation of `content`.
fn push_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
    open_message(out, role, content);
    out.extend_from_slice(b"\"}");
}

/// Appends the start of a message: its role and the beginning of its
/// content, the concatenation of `content`, with the string left open.
fn open_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
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
fn push_escaped(out: &mut Vec<u8>, text: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai_function::OutputSchema;
    use std::borrow::Cow;

    static INVOICE: OutputSchema = OutputSchema::new(
        "Invoice",
        r#"{"type":"object","properties":{"vendor":{"type":"string"}},"required":["vendor"],"additionalProperties":false}"#,
        false,
    );
    static EXTRACT: AiFunction = AiFunction::new(
        "extract_invoice",
        "Extract the invoice fields from OCR text.",
        &INVOICE,
    )
    .with_model("gpt-4o-mini")
    .with_temperature(0.2)
    .with_max_iterations(3);

    /// The request body of `conversation` for `function` and `model`, as JSON.
    const CHAT: Wire = Wire::Chat {
        limit: "max_tokens",
        format: ResponseFormat::JsonSchema,
    };

    fn rejected(reply: &str, error: &str) -> crate::reply::RejectedReply {
        crate::reply::RejectedReply {
            error: error.to_owned(),
            reply: reply.to_owned(),
            tool_use: None,
        }
    }

    fn body(function: &AiFunction, model: &str, conversation: &Conversation) -> serde_json::Value {
        body_of(CHAT, function, model, conversation)
    }

    fn body_of(
        wire: Wire,
        function: &AiFunction,
        model: &str,
        conversation: &Conversation,
    ) -> serde_json::Value {
        let parts = RequestParts::new(function, wire, model, 4096).unwrap();
        serde_json::from_slice(&parts.request_body(conversation)).expect("valid JSON")
    }

    /// The messages of a request body as (role, content) pairs.
    fn messages(body: &serde_json::Value) -> Vec<(String, String)> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn first_user_message_starts_with_instruction_then_json_arguments() {
        let args = Args::new().arg("ocr_text", "ACME, 2 widgets").unwrap();
        let conversation = Conversation::start(CHAT, &args);
        let body = body(&EXTRACT, "gpt-4o-mini", &conversation);
        let [(system_role, system), (user_role, user)] = &messages(&body)[..] else {
            panic!("two messages expected")
        };
        assert_eq!(system_role, "system");
        assert_eq!(
            system,
            "You are the implementation of the function `extract_invoice`. Answer only with one \
             JSON value that matches the JSON Schema `Invoice` of the response format: no prose, \
             no Markdown, no code fences."
        );
        assert_eq!(user_role, "user");
        assert!(user.starts_with(
            "Extract the invoice fields from OCR text.\n\nFunction: extract_invoice\n"
        ));
        let json_start = user.find('{').unwrap();
        let rendered: serde_json::Value = serde_json::from_str(&user[json_start..]).unwrap();
        assert_eq!(rendered, serde_json::json!({"ocr_text": "ACME, 2 widgets"}));
    }

    #[test]
    fn request_body_carries_strict_response_format() {
        let body = body(
            &EXTRACT,
            "gpt-4o-mini",
            &Conversation::start(CHAT, &Args::new()),
        );
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
        assert_eq!(
            body["response_format"],
            serde_json::json!({"type": "json_schema", "json_schema": {
                "name": "Invoice", "strict": true, "schema": INVOICE.value()}})
        );
        let keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(keys.len(), 5, "{keys:?}");
    }

    #[test]
    fn request_body_without_temperature_leaves_it_out() {
        static DEFAULT_TEMPERATURE: AiFunction =
            AiFunction::new("extract_invoice", "Extract.", &INVOICE);
        let body = body(
            &DEFAULT_TEMPERATURE,
            "m",
            &Conversation::start(CHAT, &Args::new()),
        );
        assert!(body.get("temperature").is_none(), "{body}");
    }

    #[test]
    fn every_text_survives_escaping() {
        // Quotes, backslashes, every control character, non-ASCII, and
        // sequences that look like escapes must all come back verbatim.
        let mut tricky: String = (0u8..0x20).map(char::from).collect();
        tricky.push_str("\"quoted\" back\\slash \\n not-a-newline \u{7f} é 😀 \u{2028} {}`");
        static TRICKY_SCHEMA: OutputSchema =
            OutputSchema::new("Odd\"Name\\", r#"{"type":"object"}"#, false);
        static TRICKY_FN: AiFunction =
            AiFunction::new("odd\"fn", "line one\n\ttab \"q\" \\ \u{1}", &TRICKY_SCHEMA)
                .with_temperature(0.2);
        let args = Args::new().arg("text", &tricky).unwrap();
        let mut conversation = Conversation::start(CHAT, &args);
        conversation.push_correction(&rejected(&tricky, &tricky));
        let body = body(&TRICKY_FN, &tricky, &conversation);
        assert_eq!(body["model"], tricky.as_str());
        assert_eq!(
            body["response_format"]["json_schema"]["name"],
            "Odd\"Name\\"
        );
        let messages = body["messages"].as_array().unwrap();
        assert!(messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("`odd\"fn`"));
        let user = messages[1]["content"].as_str().unwrap();
        assert!(user.starts_with("line one\n\ttab \"q\" \\ \u{1}\n\nFunction: odd\"fn\n"));
        let json_start = user.find('{').unwrap();
        let rendered: serde_json::Value = serde_json::from_str(&user[json_start..]).unwrap();
        assert_eq!(rendered["text"], tricky.as_str());
        assert_eq!(messages[2]["content"], tricky.as_str());
        assert!(messages[3]["content"].as_str().unwrap().contains(&tricky));
        // The escaper agrees with serde_json byte for byte.
        let mut ours = Vec::new();
        push_escaped(&mut ours, tricky.as_bytes());
        let theirs = serde_json::to_string(&tricky).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            theirs[1..theirs.len() - 1]
        );
    }

    #[test]
    fn escaper_matches_serde_json_for_every_byte_at_every_offset() {
        // Every ASCII byte (and a multi-byte character) at each position of
        // a word, so the eight-at-a-time path and the tail both see it.
        let mut samples: Vec<String> = Vec::new();
        for byte in 0u8..0x80 {
            for position in 0..17 {
                let mut text = "a".repeat(16);
                text.insert(position, char::from(byte));
                samples.push(text);
            }
        }
        samples.push("ünïcödé ✓ 😀 \u{7f}\u{80}".repeat(3));
        samples.push(String::new());
        for text in samples {
            let mut ours = Vec::new();
            push_escaped(&mut ours, text.as_bytes());
            let theirs = serde_json::to_string(&text).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                theirs[1..theirs.len() - 1],
                "{text:?}"
            );
        }
    }

    #[test]
    fn constant_parts_are_rendered_once_per_function_for_its_model() {
        static ONCE: AiFunction = AiFunction::new("once", "Do it.", &INVOICE);
        let first = ONCE.request_parts(CHAT, "model-a", 4096).unwrap();
        let again = ONCE.request_parts(CHAT, "model-a", 4096).unwrap();
        match (&first, &again) {
            (Cow::Borrowed(a), Cow::Borrowed(b)) => assert!(std::ptr::eq(*a, *b)),
            other => panic!("kept parts expected: {other:?}"),
        }
        // Another model (a second client with another default) gets its
        // own parts, built for that call.
        let other = ONCE.request_parts(CHAT, "model-b", 4096).unwrap();
        assert!(matches!(other, Cow::Owned(_)));
        let body: serde_json::Value =
            serde_json::from_slice(&other.request_body(&Conversation::start(CHAT, &Args::new())))
                .unwrap();
        assert_eq!(body["model"], "model-b");
        assert_eq!(
            ONCE.request_parts(CHAT, "model-a", 4096).unwrap().model(),
            "model-a"
        );

        // A broken generated schema is an error for every call, not a panic.
        static BROKEN: OutputSchema = OutputSchema::new("Broken", "{", false);
        static USES_BROKEN: AiFunction = AiFunction::new("f", "", &BROKEN);
        for _ in 0..2 {
            assert!(matches!(
                USES_BROKEN.request_parts(CHAT, "m", 4096),
                Err(Error::Config(m)) if m.contains("vox-codegen bug")
            ));
        }
    }

    #[test]
    fn an_empty_instruction_starts_the_user_message_with_the_function() {
        static BARE: AiFunction = AiFunction::new("bare", "  ", &INVOICE);
        let args = Args::new().arg("n", &1).unwrap();
        let messages = messages(&body(&BARE, "m", &Conversation::start(CHAT, &args)));
        assert_eq!(
            messages[1],
            (
                "user".to_owned(),
                "Function: bare\nArguments (JSON): {\"n\":1}".to_owned()
            )
        );
    }

    #[test]
    fn correction_appends_reply_and_quotes_error() {
        let mut conversation = Conversation::start(CHAT, &Args::new());
        conversation.push_correction(&rejected("{}", "missing field `vendor` at line 1 column 2"));
        let messages = messages(&body(&EXTRACT, "m", &conversation));
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2], ("assistant".to_owned(), "{}".to_owned()));
        assert_eq!(messages[3].0, "user");
        assert_eq!(
            messages[3].1,
            "Your previous reply was rejected: missing field `vendor` at line 1 column 2\n\
             Answer again with only one JSON value that matches the schema."
        );
    }

    #[test]
    fn every_wire_renders_valid_json_with_its_schema_field_and_limit() {
        let tricky = "\"q\" \\ \n é 😀";
        let args = Args::new().arg("text", tricky).unwrap();
        let openai = Wire::Chat {
            limit: "max_completion_tokens",
            format: ResponseFormat::JsonSchema,
        };
        let object = Wire::Chat {
            limit: "max_tokens",
            format: ResponseFormat::JsonObject,
        };
        for wire in [openai, object, Wire::Anthropic, Wire::Gemini, Wire::Ollama] {
            let mut conversation = Conversation::start(wire, &args);
            conversation.push_correction(&rejected(tricky, tricky));
            conversation.push_correction(&rejected("", "empty"));
            let body = body_of(wire, &EXTRACT, "m", &conversation);
            let schema = INVOICE.value().clone();
            match wire {
                Wire::Chat { limit, format } => {
                    assert_eq!(body[limit], 4096, "{body}");
                    assert_eq!(body["messages"].as_array().unwrap().len(), 6);
                    if format == ResponseFormat::JsonObject {
                        assert_eq!(
                            body["response_format"],
                            serde_json::json!({"type": "json_object", "schema": schema})
                        );
                    }
                }
                Wire::Anthropic => {
                    assert_eq!(body["max_tokens"], 4096);
                    assert_eq!(body["tools"][0]["name"], "extract_invoice");
                    assert_eq!(body["tools"][0]["input_schema"], schema);
                    assert_eq!(
                        body["tool_choice"],
                        serde_json::json!({"type": "tool", "name": "extract_invoice"})
                    );
                    assert!(body["system"]
                        .as_str()
                        .unwrap()
                        .contains("`extract_invoice`"));
                    let messages = body["messages"].as_array().unwrap();
                    assert_eq!(messages.len(), 5);
                    assert_eq!(messages[1]["content"], tricky);
                    assert_eq!(messages[3]["content"], "(no reply)");
                    assert_eq!(body["temperature"], 0.2);
                }
                Wire::Gemini => {
                    let config = &body["generationConfig"];
                    assert_eq!(config["responseMimeType"], "application/json");
                    assert_eq!(config["responseJsonSchema"], schema);
                    assert_eq!(config["maxOutputTokens"], 4096);
                    assert_eq!(config["temperature"], 0.2);
                    let contents = body["contents"].as_array().unwrap();
                    assert_eq!(contents.len(), 5);
                    assert_eq!(contents[1]["role"], "model");
                    assert_eq!(contents[1]["parts"][0]["text"], tricky);
                    assert!(body.get("model").is_none());
                }
                Wire::Ollama => {
                    assert_eq!(body["stream"], false);
                    assert_eq!(body["format"], schema);
                    assert_eq!(body["options"]["num_predict"], 4096);
                    assert_eq!(body["options"]["temperature"], 0.2);
                }
            }
        }
    }

    #[test]
    fn anthropic_correction_answers_the_tool_call_with_an_error_result() {
        let mut conversation = Conversation::start(Wire::Anthropic, &Args::new());
        let block = r#"{"type":"tool_use","id":"toolu_9","name":"extract_invoice","input":{}}"#;
        conversation.push_correction(&crate::reply::RejectedReply {
            error: "missing field `vendor`".into(),
            reply: "{}".into(),
            tool_use: Some((block.into(), "toolu_9".into())),
        });
        let body = body_of(Wire::Anthropic, &EXTRACT, "m", &conversation);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[1],
            serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_9", "name": "extract_invoice", "input": {}}]})
        );
        assert_eq!(
            messages[2],
            serde_json::json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": "toolu_9", "is_error": true,
                "content": "Your previous reply was rejected: missing field `vendor`\nAnswer again with only one JSON value that matches the schema."}]})
        );
        // Temperatures above Anthropic's range of 0 to 1 are clamped.
        static HOT: AiFunction = AiFunction::new("hot", "", &INVOICE).with_temperature(1.7);
        let body = body_of(
            Wire::Anthropic,
            &HOT,
            "m",
            &Conversation::start(Wire::Anthropic, &Args::new()),
        );
        assert_eq!(body["temperature"], 1.0);
    }

    #[test]
    fn gemini_schema_keeps_its_subset_and_moves_root_references_into_defs() {
        let gemini_schema = |value: &serde_json::Value, name: &str| -> serde_json::Value {
            let ordered: Ordered = serde_json::from_value(value.clone()).unwrap();
            serde_json::to_value(super::gemini_schema(&ordered, name)).unwrap()
        };
        let plain = serde_json::json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}},
            "required": ["a"], "additionalProperties": false, "$schema": "x"});
        assert_eq!(
            gemini_schema(&plain, "P"),
            serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}},
                "required": ["a"], "additionalProperties": false})
        );
        let recursive = serde_json::json!({"type": "object", "properties": {
            "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
            "leaf": {"$ref": "#/$defs/Leaf"}},
            "$defs": {"Leaf": {"type": "object", "properties": {"up": {"$ref": "#"}}}}});
        let converted = gemini_schema(&recursive, "Node");
        assert_eq!(
            converted["properties"]["next"]["anyOf"][0]["$ref"],
            "#/$defs/Node"
        );
        assert_eq!(
            converted["$defs"]["Leaf"]["properties"]["up"]["$ref"],
            "#/$defs/Node"
        );
        assert_eq!(
            converted["$defs"]["Node"]["properties"]["next"]["anyOf"][0]["$ref"],
            "#/$defs/Node"
        );
        assert!(converted["$defs"]["Node"].get("$defs").is_none());
        // A property named like a dropped keyword is still a property.
        let named =
            serde_json::json!({"type": "object", "properties": {"pattern": {"type": "string"}}});
        assert_eq!(gemini_schema(&named, "N"), named);
    }

    #[test]
    fn the_gemini_schema_keeps_the_declared_property_order() {
        static ZYX: OutputSchema = OutputSchema::new(
            "Zyx",
            r#"{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"integer"},"x":{"type":"boolean"}},"required":["z","y","x"],"additionalProperties":false}"#,
            false,
        );
        static F: AiFunction = AiFunction::new("f", "", &ZYX);
        let parts = RequestParts::new(&F, Wire::Gemini, "m", 10).unwrap();
        let body = parts.request_body(&Conversation::start(Wire::Gemini, &Args::new()));
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(
            text.contains(r#""responseJsonSchema":{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"integer"},"x":{"type":"boolean"}},"required":["z","y","x"],"additionalProperties":false}"#),
            "{text}"
        );
    }
}
