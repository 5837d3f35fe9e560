//! What `cargo vox --json schema` prints on success.

use serde::{Deserialize, Serialize};

use crate::error::{parse_versioned, ParseError};
use crate::ENVELOPE_VERSION;

/// The one line `cargo vox --json schema TYPE [--provider NAME]` prints when
/// it succeeds (`"ok":true`). When it fails (an unknown type, a module with
/// errors) it prints an ordinary [`Envelope`](crate::Envelope) with
/// `"ok":false` and a `message` or `diagnostics` instead: read the line as
/// a [`serde_json::Value`] first, or try this type, then `Envelope`.
///
/// `response_format` and `request` are printed in the order they are sent
/// to the model; a [`serde_json::Value`] does not keep that order, so use
/// the line itself where the order matters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SchemaEnvelope {
    /// Always [`ENVELOPE_VERSION`].
    pub envelope_version: u32,
    /// Always `schema`.
    pub command: String,
    /// The manifest, or the first path given.
    pub file_path: String,
    /// Always true (failures are [`Envelope`](crate::Envelope)s).
    pub ok: bool,
    /// The return type asked for, as written: `Invoice`, `list[LineItem]`.
    #[serde(rename = "type")]
    pub ty: String,
    /// True when the type is not a record and is sent wrapped as
    /// `{"value": …}` (and unwrapped from the reply).
    pub wrapped: bool,
    /// Without `--provider`: the strict `response_format` (OpenAI's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
    /// With `--provider`: the provider, lower-case (`anthropic`, `gemini`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// With `--provider`: the function the request is for (Anthropic's tool
    /// is named after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// With `--provider`: the request fields that carry the schema to that
    /// provider (`tools`/`tool_choice`, `generationConfig`, `format`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<serde_json::Value>,
    /// How each argument of the `@ai` functions returning the type (or of
    /// `--function`) is sent; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<SchemaArgument>,
}

/// One argument of an `@ai` function, as `cargo vox schema` says it is sent
/// (docs/language.md, "Images, documents and audio").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SchemaArgument {
    /// The `@ai` function.
    pub function: String,
    /// The parameter's name.
    pub name: String,
    /// The parameter's Vox type, as written: `Image`, `list[Page]`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The media kinds sent as parts of the request (`image`, `document`,
    /// `audio`), each in its provider's form; empty when the value is only
    /// JSON in the arguments text.
    pub parts: Vec<String>,
    /// How, in words: `an image part; the arguments' JSON shows "<image 1>"
    /// in its place`, `JSON in the arguments text`.
    pub sent_as: String,
}

impl SchemaEnvelope {
    /// Reads the line `cargo vox --json schema` printed. Refuses another
    /// `envelope_version`; fields it does not know are ignored.
    pub fn from_line(line: &str) -> Result<SchemaEnvelope, ParseError> {
        parse_versioned(line, "envelope_version", ENVELOPE_VERSION)
    }
}
