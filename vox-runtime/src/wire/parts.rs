//! The parts of one function's requests that are the same for every call
//! — the system text and the schema as a wire sends them — and the request
//! bodies rendered from them and a call's [`Conversation`].

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::value::RawValue;

use super::{Prepare, Wire};
use crate::error::Error;
use crate::output::OutputSchema;
use crate::prompt::{stated_shape, system_text, task_text, Conversation};

/// What the parts of a function's requests are made of: its name, its
/// instruction (the doc comment), its output schema and temperature.
pub(crate) struct PartsOf<'a> {
    pub name: &'a str,
    pub instruction: &'a str,
    pub output: &'a OutputSchema,
    pub temperature: Option<f64>,
    /// The tools the model may call.
    pub tools: &'a [crate::tools::Tool],
}

/// What the constant parts of a request depend on besides the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartsKey {
    pub wire: Wire,
    pub model: Box<str>,
    pub max_tokens: u32,
    /// Whether the system message states the schema's shape.
    pub stated: bool,
}

/// The parts of one function's requests to one model that are the same for
/// every call: the system text and the schema as the wire sends them.
/// Built once per function (see `AiFunction::request_parts`); the wire
/// renders each request from them and the [`Conversation`].
#[derive(Debug, Clone)]
pub(crate) struct RequestParts {
    key: PartsKey,
    /// The function's temperature, if it has one.
    pub temperature: Option<f64>,
    /// The system message as the wire sends it, already a JSON string
    /// (escaped once, not on every request).
    pub system: Box<RawValue>,
    /// The tool the model is asked to call, and its description, where
    /// the wire has one (Anthropic).
    pub tool: Option<(Box<str>, Box<str>)>,
    /// The strict schema, as generated.
    pub schema: Box<RawValue>,
    /// The schema's name.
    pub schema_name: &'static str,
    /// The schema as the wire sends it when that differs (Gemini's subset).
    pub wire_schema: Option<Box<RawValue>>,
    /// The tools the model may call, their parameters' schemas as JSON.
    pub tools: Vec<ToolDef>,
    /// A first request's body around its user message, rendered on the
    /// first call (see [`RequestParts::request_body`]).
    first_request: OnceLock<Option<FirstRequest>>,
}

/// A tool as every wire declares it: its name, description and the
/// schema of its arguments.
#[derive(Debug, Clone)]
pub(crate) struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Box<RawValue>,
}

/// The body of a first attempt without media, which differs from call to
/// call only in the user message: the bytes before it and after it.
#[derive(Debug, Clone)]
pub(crate) struct FirstRequest {
    head: Box<[u8]>,
    tail: Box<[u8]>,
}

/// The user message a [`FirstRequest`] is rendered with, to be found in
/// the body and cut out: a JSON string that text written by serde cannot
/// contain (its quotes would be escaped), so it could appear elsewhere only
/// as a whole string value of the raw schema. Were it not found exactly
/// once, requests are rendered whole.
const FIRST_MARKER: &str = r#""\u0000vox:first-user-message\u0000""#;

impl RequestParts {
    /// The constant parts of a function's requests to `model` with at most
    /// `max_tokens` completion tokens, in the shape of `wire`, stating the
    /// schema's shape in the system message when `stated` (docs/runtime.md,
    /// "What the model sees").
    pub fn build(
        function: PartsOf<'_>,
        wire: Wire,
        model: &str,
        max_tokens: u32,
        stated: bool,
    ) -> Result<RequestParts, Error> {
        let output = function.output;
        let schema = output.raw()?;
        let protocol = wire.protocol();
        let shape_stated = stated;
        let stated = if stated {
            Some(stated_shape(output)?)
        } else {
            None
        };
        let prepared = protocol.prepare(Prepare {
            function: function.name,
            task: &task_text(function.name, function.instruction),
            system: system_text(function.name, function.instruction, stated.as_deref()),
            shape: stated.as_deref(),
            schema: schema.get(),
            schema_name: output.name(),
            has_tools: !function.tools.is_empty(),
        })?;
        Ok(RequestParts {
            key: PartsKey {
                wire,
                model: model.into(),
                max_tokens,
                stated: shape_stated,
            },
            temperature: function.temperature,
            // A JSON string of any text can be written; were it not, the
            // error names the function.
            system: serde_json::value::to_raw_value(&prepared.system).map_err(|e| {
                Error::Config(format!(
                    "the system message of `{}` could not be written as JSON: {e}",
                    function.name
                ))
            })?,
            tool: prepared
                .tool
                .map(|(name, description)| (name.into(), description.into())),
            schema: schema.to_owned(),
            schema_name: output.name(),
            wire_schema: prepared.schema,
            tools: function
                .tools
                .iter()
                .map(|tool| {
                    // Generated schemas are JSON; were one not, the error
                    // names the tool.
                    RawValue::from_string(tool.parameters.to_owned())
                        .map(|parameters| ToolDef {
                            name: tool.name,
                            description: tool.description,
                            parameters,
                        })
                        .map_err(|e| {
                            Error::Config(format!(
                                "the parameters' schema of tool `{}` is not JSON: {e}",
                                tool.name
                            ))
                        })
                })
                .collect::<Result<_, _>>()?,
            first_request: OnceLock::new(),
        })
    }

    /// Asks at `temperature` from now on (a runaway reply's next attempt).
    pub fn set_temperature(&mut self, temperature: f64) {
        self.temperature = Some(temperature);
        self.first_request = OnceLock::new();
    }

    /// Whether these parts were built for `wire`, `model`, `max_tokens`
    /// and stating the shape or not.
    pub fn is_for(&self, wire: Wire, model: &str, max_tokens: u32, stated: bool) -> bool {
        self.key.wire == wire
            && self.key.max_tokens == max_tokens
            && self.key.stated == stated
            && &*self.key.model == model
    }

    /// The model these parts are for.
    pub fn model(&self) -> &str {
        &self.key.model
    }

    /// The completion limit these parts are for.
    pub fn max_tokens(&self) -> u32 {
        self.key.max_tokens
    }

    /// The API shape these parts are in.
    pub fn wire(&self) -> Wire {
        self.key.wire
    }

    /// The JSON body of one request: these parts and `conversation`, in
    /// the wire's shape.
    ///
    /// A first attempt without media (nearly every request) is the kept
    /// [`FirstRequest`] with the user message put in: the same bytes as
    /// rendering it whole (`first_requests_are_rendered_as_a_whole` holds
    /// that for every wire), without writing the system text, the schema
    /// and the keys again on every call (`call_overhead` bench).
    pub fn request_body(&self, conversation: &Conversation) -> Bytes {
        if conversation.turns.is_empty()
            && conversation.media.is_empty()
            && conversation.examples.is_empty()
            && conversation.history.is_empty()
        {
            if let Some(first) = self.first_request() {
                let user = conversation.first.get().as_bytes();
                let mut body = Vec::with_capacity(first.head.len() + user.len() + first.tail.len());
                body.extend_from_slice(&first.head);
                body.extend_from_slice(user);
                body.extend_from_slice(&first.tail);
                return Bytes::from(body);
            }
        }
        self.render(conversation)
    }

    /// The kept first request, rendered once with [`FIRST_MARKER`] as the
    /// user message; `None` when the marker is not found exactly once.
    pub(crate) fn first_request(&self) -> Option<&FirstRequest> {
        self.first_request
            .get_or_init(|| {
                let probe = Conversation {
                    first: RawValue::from_string(FIRST_MARKER.to_owned()).ok()?,
                    media: Vec::new(),
                    examples: Vec::new(),
                    history: Vec::new(),
                    turns: Vec::new(),
                };
                let body = self.render(&probe);
                let marker = FIRST_MARKER.as_bytes();
                let mut found = body
                    .windows(marker.len())
                    .enumerate()
                    .filter(|(_, w)| *w == marker)
                    .map(|(at, _)| at);
                let at = found.next()?;
                if found.next().is_some() {
                    return None;
                }
                Some(FirstRequest {
                    head: body[..at].into(),
                    tail: body[at + marker.len()..].into(),
                })
            })
            .as_ref()
    }

    /// The JSON body of one request, rendered whole.
    pub(crate) fn render(&self, conversation: &Conversation) -> Bytes {
        let mut body = Vec::with_capacity(
            self.system.get().len()
                + self.schema.get().len()
                + conversation.len()
                + self.key.model.len()
                + 256,
        );
        // Writing to a Vec fails only for a value that cannot be JSON; every
        // field here is text, integers, raw JSON or an f64 (written as
        // `null` when not finite).
        if let Err(e) = self
            .wire()
            .protocol()
            .write_request(self, conversation, &mut body)
        {
            debug_assert!(false, "a request could not be rendered: {e}");
        }
        if !conversation.media.is_empty() {
            // The inline media's base64, written once into the final body.
            body = crate::media::body::splice(body, &conversation.media);
        }
        Bytes::from(body)
    }
}
