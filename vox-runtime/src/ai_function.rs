//! The static description of an `@ai` function and the arguments of a call.
//!
//! Generated code declares one [`OutputSchema`] per structured-output type
//! and one [`AiFunction`] per `@ai` function as `static`s; each call builds
//! [`Args`]. These are plain data: the prompt and the request are built from
//! them in `prompt`.

use std::sync::OnceLock;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::error::Error;

/// The strict JSON Schema of one structured output (SPEC §5), a
/// compile-time constant in generated code. The JSON text is parsed at most
/// once per process.
#[derive(Debug)]
pub struct OutputSchema {
    name: &'static str,
    json: &'static str,
    wrapped: bool,
    parsed: OnceLock<Result<ParsedSchema, String>>,
}

/// The schema checked once: as a value (for callers that inspect it) and
/// as validated raw JSON borrowed from the generated text (spliced into
/// every request body without re-serializing).
#[derive(Debug)]
struct ParsedSchema {
    value: serde_json::Value,
    raw: &'static RawValue,
}

impl OutputSchema {
    /// A schema named `name` (the `json_schema.name` sent to the provider)
    /// with JSON text `json`. `wrapped` is true when the Vox return type is
    /// not an object: the schema is then
    /// `{"type":"object","properties":{"value":…},"required":["value"],"additionalProperties":false}`
    /// and the reply's `"value"` is unwrapped before deserializing.
    pub const fn new(name: &'static str, json: &'static str, wrapped: bool) -> Self {
        OutputSchema {
            name,
            json,
            wrapped,
            parsed: OnceLock::new(),
        }
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The schema's JSON text, as generated.
    pub fn json_text(&self) -> &str {
        self.json
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
    pub(crate) fn raw(&self) -> Result<&'static RawValue, Error> {
        self.parsed().map(|parsed| parsed.raw)
    }

    fn parsed(&self) -> Result<&ParsedSchema, Error> {
        let json: &'static str = self.json;
        self.parsed
            .get_or_init(|| {
                let value = serde_json::from_str(json).map_err(|e| e.to_string())?;
                let raw = serde_json::from_str(json).map_err(|e| e.to_string())?;
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

/// Static description of one `@ai` function, a `static` in generated code.
#[derive(Debug)]
pub struct AiFunction {
    /// The Vox function name.
    pub name: &'static str,
    /// The function's doc comment (may be empty); the prompt's instruction.
    pub instruction: &'static str,
    /// `@ai(model = "…")`; `None` uses the configured default model.
    pub model: Option<&'static str>,
    /// `@ai(temperature = …)`; `None` leaves it to the server.
    pub temperature: Option<f64>,
    /// `@ai(max_iterations = N)`: attempts before giving up (0 counts as 1).
    pub max_iterations: u32,
    /// The schema of the return type.
    pub output: &'static OutputSchema,
}

impl AiFunction {
    /// `max_iterations`, at least 1.
    pub fn attempts_allowed(&self) -> u32 {
        self.max_iterations.max(1)
    }
}

/// The arguments of one call, in declaration order, already rendered as
/// JSON values (they appear in the prompt as one JSON object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    entries: Vec<(String, serde_json::Value)>,
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Self {
        Args::default()
    }

    /// Adds argument `name` with `value`, serialized to JSON.
    pub fn arg<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> Result<Args, Error> {
        let value = serde_json::to_value(value).map_err(|e| Error::Serialize {
            argument: name.to_owned(),
            message: e.to_string(),
        })?;
        self.entries.push((name.to_owned(), value));
        Ok(self)
    }

    /// The arguments, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Serializes as a JSON object in insertion order.
impl Serialize for Args {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (name, value) in &self.entries {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn args_keep_insertion_order_and_render_as_json() {
        let args = Args::new()
            .arg("zeta", &1)
            .unwrap()
            .arg("alpha", "text")
            .unwrap()
            .arg("list", &vec![1.5, 2.0])
            .unwrap();
        assert_eq!(
            serde_json::to_string(&args).unwrap(),
            r#"{"zeta":1,"alpha":"text","list":[1.5,2.0]}"#
        );
        assert_eq!(args.len(), 3);
    }

    #[test]
    fn unserializable_argument_is_a_typed_error() {
        let mut map = HashMap::new();
        map.insert(vec![1u8], 1);
        let err = Args::new().arg("bad", &map).unwrap_err();
        assert!(
            matches!(&err, Error::Serialize { argument, .. } if argument == "bad"),
            "{err}"
        );
    }

    #[test]
    fn schema_is_parsed_once_and_reports_invalid_json() {
        static GOOD: OutputSchema = OutputSchema::new("Good", r#"{"type":"object"}"#, false);
        let first: *const serde_json::Value = GOOD.value();
        let second: *const serde_json::Value = GOOD.value();
        assert_eq!(first, second, "parsed once, same allocation");
        assert_eq!(GOOD.value()["type"], "object");

        static BAD: OutputSchema = OutputSchema::new("Bad", "{", false);
        assert!(matches!(BAD.try_value(), Err(Error::Config(m)) if m.contains("vox-codegen bug")));
    }
}
