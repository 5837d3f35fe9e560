//! The strict JSON Schema of one structured output, as generated code
//! declares it (`static`), and a call's own copy with its run-time
//! categories filled in.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::value::RawValue;

use crate::error::Error;

/// The strict JSON Schema of one structured output (docs/runtime.md), a
/// compile-time constant in generated code. The JSON text is parsed at most
/// once per process.
#[derive(Debug)]
pub struct OutputSchema {
    name: &'static str,
    /// The generated text; a call's own for a schema whose run-time
    /// categories were filled in (`AiFunction::for_call`).
    json: Cow<'static, str>,
    wrapped: bool,
    parsed: OnceLock<Result<ParsedSchema, String>>,
    /// Whether `json` has a `Decimal`, searched for once (every call asks).
    decimals: OnceLock<bool>,
    /// Whether `json` names run-time categories still to be filled in
    /// (`"x-vox-categories"`), searched for once.
    open_categories: OnceLock<bool>,
    /// Filled-in run-time categories: their values are checked in every
    /// reply, since the Rust type (a string) does not.
    categories: bool,
}

/// The schema checked once: as a value (for callers that inspect it) and
/// as validated raw JSON (spliced into every request body without
/// re-serializing).
#[derive(Debug)]
struct ParsedSchema {
    value: serde_json::Value,
    raw: Box<RawValue>,
}

/// The key that marks a run-time category type in a generated schema:
/// `{"type":"string","x-vox-categories":"Category"}`, replaced by the
/// call's values before anything is sent (docs/runtime.md, "Categories at
/// run time").
pub(crate) const CATEGORIES_KEY: &str = "x-vox-categories";

impl OutputSchema {
    /// A schema named `name` (the `json_schema.name` sent to the provider)
    /// with JSON text `json`. `wrapped` is true when the Vox return type is
    /// not an object: the schema is then
    /// `{"type":"object","properties":{"value":…},"required":["value"],"additionalProperties":false}`
    /// and the reply's `"value"` is unwrapped before deserializing.
    pub const fn new(name: &'static str, json: &'static str, wrapped: bool) -> Self {
        OutputSchema {
            name,
            json: Cow::Borrowed(json),
            wrapped,
            parsed: OnceLock::new(),
            decimals: OnceLock::new(),
            open_categories: OnceLock::new(),
            categories: false,
        }
    }

    /// A call's own schema: `json` with its run-time categories filled in.
    pub(crate) fn filled(name: &'static str, json: String, wrapped: bool) -> Self {
        OutputSchema {
            name,
            json: Cow::Owned(json),
            wrapped,
            parsed: OnceLock::new(),
            decimals: OnceLock::new(),
            open_categories: OnceLock::new(),
            categories: true,
        }
    }

    /// The schema's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The schema's JSON text, as generated.
    pub fn json_text(&self) -> &str {
        &self.json
    }

    /// Whether the schema has a run-time category type whose values a call
    /// must supply (`CallOptions::categories`).
    pub fn needs_categories(&self) -> bool {
        *self
            .open_categories
            .get_or_init(|| self.json.contains(CATEGORIES_KEY))
    }

    /// Whether a reply that deserialized still needs its strings checked
    /// against the schema: a `Decimal`'s text, a run-time category's value.
    pub(crate) fn checks_strings(&self) -> bool {
        self.categories || self.has_decimals()
    }

    /// Whether the schema has a `Decimal` or a `Date` (a string with the
    /// decimal or the date pattern), whose text the runtime checks in every
    /// reply.
    pub(crate) fn has_decimals(&self) -> bool {
        *self.decimals.get_or_init(|| {
            self.json.contains(crate::correction::DECIMAL_PATTERN_JSON)
                || self.json.contains(crate::correction::DATE_PATTERN_JSON)
        })
    }

    /// Whether the output is wrapped in `{"value": …}`.
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// The parsed schema.
    ///
    /// # Panics
    ///
    /// If the JSON text is invalid. vox-codegen always emits valid JSON, so
    /// this is a codegen bug; the runtime itself uses [`Self::try_value`],
    /// which reports it as [`Error::Config`] instead.
    pub fn value(&self) -> &serde_json::Value {
        match self.try_value() {
            Ok(value) => value,
            Err(e) => panic!("{e}"),
        }
    }

    /// The parsed schema, or [`Error::Config`] if the generated JSON text is
    /// invalid (a vox-codegen bug).
    pub fn try_value(&self) -> Result<&serde_json::Value, Error> {
        self.parsed().map(|parsed| &parsed.value)
    }

    /// The schema as validated raw JSON, for request bodies.
    pub(crate) fn raw(&self) -> Result<&RawValue, Error> {
        self.parsed().map(|parsed| &*parsed.raw)
    }

    fn parsed(&self) -> Result<&ParsedSchema, Error> {
        let json: &str = &self.json;
        self.parsed
            .get_or_init(|| {
                let value = serde_json::from_str(json).map_err(|e| e.to_string())?;
                let raw = RawValue::from_string(json.to_owned()).map_err(|e| e.to_string())?;
                Ok(ParsedSchema { value, raw })
            })
            .as_ref()
            .map_err(|e| {
                Error::Config(format!(
                    "the generated JSON schema `{}` is invalid JSON ({e}); this is a vox-codegen bug",
                    self.name
                ))
            })
    }
}
