//! The static description of an `@ai` function and the arguments of a call.
//!
//! Generated code declares one [`OutputSchema`] per structured-output type
//! and one [`AiFunction`] per `@ai` function as `static`s; each call builds
//! [`Args`]. These are plain data: the prompt and the request are built from
//! them in `prompt`.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::media::MediaArg;
use crate::prompt::RequestParts;
use crate::wire::Wire;

/// The strict JSON Schema of one structured output (docs/runtime.md), a
/// compile-time constant in generated code. The JSON text is parsed at most
/// once per process.
#[derive(Debug)]
pub struct OutputSchema {
    name: &'static str,
    /// The generated text; a call's own for a schema whose run-time
    /// categories were filled in ([`AiFunction::with_categories`]).
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
    fn filled(name: &'static str, json: String, wrapped: bool) -> Self {
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

    /// Whether the schema has a `Decimal` (a string with the decimal
    /// pattern), whose text the runtime checks in every reply.
    pub(crate) fn has_decimals(&self) -> bool {
        *self
            .decimals
            .get_or_init(|| self.json.contains(crate::correction::DECIMAL_PATTERN_JSON))
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

/// Static description of one `@ai` function, a `static` in generated code:
///
/// ```
/// # use vox_runtime::__private::{AiFunction, OutputSchema};
/// static INVOICE: OutputSchema = OutputSchema::new("Invoice", r#"{"type":"object"}"#, false);
/// static EXTRACT: AiFunction = AiFunction::new("extract", "Extract the invoice.", &INVOICE)
///     .with_model("gpt-4o-mini")
///     .with_temperature(0.2)
///     .with_max_iterations(3)
///     .with_max_tokens(512)
///     .with_fallback(&["anthropic:claude-haiku-4-5", "ollama:llama3.2"]);
/// static NO_FALLBACK: AiFunction = AiFunction::new("f", "", &INVOICE).with_fallback(&[]);
/// assert_eq!(EXTRACT.attempts_allowed(), 3);
/// assert_eq!(EXTRACT.max_tokens(), Some(512));
/// assert_eq!(NO_FALLBACK.fallback(), Some(&[][..]));
/// ```
///
/// It also keeps, once built on the first call, the parts of its requests
/// that are the same for every call (model, system message, instruction,
/// temperature, `response_format`), so a call only renders its arguments.
pub struct AiFunction {
    name: &'static str,
    instruction: &'static str,
    model: Option<&'static str>,
    temperature: Option<f64>,
    max_iterations: u32,
    max_tokens: Option<u32>,
    fallback: Option<&'static [&'static str]>,
    output: Output,
    test_cassettes: Option<&'static str>,
    request_parts: OnceLock<RequestParts>,
}

/// A function's output schema: the generated one, or one call's own with
/// its run-time categories filled in.
enum Output {
    Static(&'static OutputSchema),
    Filled(Box<OutputSchema>),
}

impl AiFunction {
    /// The function `name`, whose doc comment `instruction` (may be empty)
    /// leads the prompt, returning a value of schema `output`. One attempt,
    /// the configured default model and the server's default temperature
    /// unless set below.
    pub const fn new(
        name: &'static str,
        instruction: &'static str,
        output: &'static OutputSchema,
    ) -> AiFunction {
        AiFunction {
            name,
            instruction,
            model: None,
            temperature: None,
            max_iterations: 1,
            max_tokens: None,
            fallback: None,
            output: Output::Static(output),
            test_cassettes: None,
            request_parts: OnceLock::new(),
        }
    }

    /// `@ai(model = "…")`. A `provider:` prefix (`"anthropic:claude-sonnet-4-5"`)
    /// sends this function's calls to that provider instead of the
    /// configured one (see [`crate::Provider::split_model`]).
    pub const fn with_model(mut self, model: &'static str) -> AiFunction {
        self.model = Some(model);
        self
    }

    /// `@ai(temperature = …)`.
    pub const fn with_temperature(mut self, temperature: f64) -> AiFunction {
        self.temperature = Some(temperature);
        self
    }

    /// `@ai(max_iterations = N)`: attempts before giving up (0 counts as 1).
    pub const fn with_max_iterations(mut self, attempts: u32) -> AiFunction {
        self.max_iterations = attempts;
        self
    }

    /// `@ai(max_tokens = N)`: the completion limit of this function's
    /// requests (else the configured one).
    pub const fn with_max_tokens(mut self, tokens: u32) -> AiFunction {
        self.max_tokens = Some(tokens);
        self
    }

    /// `@ai(fallback = ["provider:model", …])`: tried in order when a call
    /// fails with a transport error or a retryable status; replaces the
    /// configured fallbacks (an empty list means none).
    pub const fn with_fallback(mut self, models: &'static [&'static str]) -> AiFunction {
        self.fallback = Some(models);
        self
    }

    /// Marks the function as compiled in a test build (`cfg(test)`) when
    /// `cassettes` is `Some`: the package's cassette directory
    /// (`vox/cassettes`), used when no other is configured. Its calls then
    /// never reach a provider by accident (docs/runtime.md, "Tests"):
    /// they replay the cassette, else run the fixture body, unless
    /// `VOX_LLM_LIVE=1`. Generated code passes
    /// `if cfg!(test) { Some(concat!(env!("CARGO_MANIFEST_DIR"), "/vox/cassettes")) } else { None }`.
    pub const fn in_test_build(mut self, cassettes: Option<&'static str>) -> AiFunction {
        self.test_cassettes = cassettes;
        self
    }

    /// The package's cassette directory when compiled in a test build.
    pub fn test_cassettes(&self) -> Option<&'static str> {
        self.test_cassettes
    }

    /// The completion limit set on the function.
    pub fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }

    /// The fallbacks set on the function; `None` uses the configured ones.
    pub fn fallback(&self) -> Option<&'static [&'static str]> {
        self.fallback
    }

    /// The Vox function name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The function's doc comment (may be empty): the prompt's instruction.
    pub fn instruction(&self) -> &'static str {
        self.instruction
    }

    /// The model set on the function; `None` uses the configured default.
    pub fn model(&self) -> Option<&'static str> {
        self.model
    }

    /// The temperature set on the function; `None` leaves it to the server.
    pub fn temperature(&self) -> Option<f64> {
        self.temperature
    }

    /// `max_iterations` as set (0 counts as 1).
    pub fn max_iterations(&self) -> u32 {
        self.max_iterations
    }

    /// `max_iterations`, at least 1.
    pub fn attempts_allowed(&self) -> u32 {
        self.max_iterations.max(1)
    }

    /// The schema of the return type.
    pub fn output(&self) -> &OutputSchema {
        match &self.output {
            Output::Static(output) => output,
            Output::Filled(output) => output,
        }
    }

    /// This function for one call whose run-time category types take the
    /// values `categories` gives them (docs/runtime.md, "Categories at run
    /// time"): `None` when its schema has no such type, else a copy whose
    /// schema lists exactly those values. An error, before anything is
    /// sent, when a type has no values, or the filled-in schema crosses a
    /// strict-mode limit.
    pub(crate) fn with_categories(
        &self,
        categories: &crate::categories::Categories,
    ) -> Result<Option<AiFunction>, Error> {
        let output = self.output();
        if !output.needs_categories() {
            return Ok(None);
        }
        let json = crate::categories::fill(self.name, output.try_value()?, categories)?;
        Ok(Some(AiFunction {
            name: self.name,
            instruction: self.instruction,
            model: self.model,
            temperature: self.temperature,
            max_iterations: self.max_iterations,
            max_tokens: self.max_tokens,
            fallback: self.fallback,
            output: Output::Filled(Box::new(OutputSchema::filled(
                output.name,
                json,
                output.wrapped,
            ))),
            test_cassettes: self.test_cassettes,
            request_parts: OnceLock::new(),
        }))
    }

    /// The constant parts of this function's requests in the shape `wire`
    /// to `model` with the completion limit `max_tokens`: built on the first
    /// call and kept (for the first such combination asked for; a function
    /// also called another way, say through a fallback, builds those per
    /// call).
    pub(crate) fn request_parts(
        &self,
        wire: Wire,
        model: &str,
        max_tokens: u32,
        stated: Option<bool>,
    ) -> Result<Cow<'_, RequestParts>, Error> {
        let stated = stated.unwrap_or_else(|| wire.protocol().states_shape());
        let fits = |parts: &RequestParts| parts.is_for(wire, model, max_tokens, stated);
        let build = || RequestParts::build(self, wire, model, max_tokens, stated);
        if let Some(parts) = self.request_parts.get() {
            if fits(parts) {
                return Ok(Cow::Borrowed(parts));
            }
            return build().map(Cow::Owned);
        }
        let parts = build()?;
        // Another thread may have got there first, possibly for another
        // model: use whatever is kept if it fits, else this call's parts.
        let kept = self.request_parts.get_or_init(|| parts.clone());
        if fits(kept) {
            Ok(Cow::Borrowed(kept))
        } else {
            Ok(Cow::Owned(parts))
        }
    }
}

impl fmt::Debug for AiFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AiFunction")
            .field("name", &self.name)
            .field("instruction", &self.instruction)
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_iterations", &self.max_iterations)
            .field("max_tokens", &self.max_tokens)
            .field("fallback", &self.fallback)
            .field("output", &self.output().name())
            .field("test_cassettes", &self.test_cassettes)
            .finish()
    }
}

/// The arguments of one call, in declaration order, rendered once as the
/// JSON object the prompt shows (`{"name":value,…}`).
///
/// Each argument is serialized straight into that text: no intermediate
/// `serde_json::Value` tree is built per call.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Always a complete JSON object, valid UTF-8 (serde_json writes only
    /// that, and names are `&str`).
    json: Vec<u8>,
    len: usize,
    /// Where the first argument's value starts in `json` (after `"name":`).
    first_value: usize,
    /// The media met in the arguments, in the order of their placeholders
    /// (`"<image 1>"` is the first; see `media`).
    media: Vec<MediaArg>,
}

impl Default for Args {
    fn default() -> Self {
        // Room for a few short arguments without regrowing.
        let mut json = Vec::with_capacity(128);
        json.extend_from_slice(b"{}");
        Args {
            json,
            len: 0,
            first_value: 0,
            media: Vec::new(),
        }
    }
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Self {
        Args::default()
    }

    /// Adds argument `name` with `value`, serialized to JSON.
    pub fn arg<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> Result<Args, Error> {
        let before = self.json.len();
        // Reopen the object: drop the closing brace, add a separator.
        self.json.pop();
        if self.len > 0 {
            self.json.push(b',');
        }
        let json = &mut self.json;
        let mut value_start = 0;
        let (written, media) = crate::media::collecting(self.media.len(), || {
            serde_json::to_writer(&mut *json, name).and_then(|()| {
                json.push(b':');
                value_start = json.len();
                serde_json::to_writer(&mut *json, value)
            })
        });
        if let Err(e) = written {
            // Leave the arguments as they were before this one.
            self.json.truncate(before - 1);
            self.json.push(b'}');
            return Err(Error::Serialize {
                argument: name.to_owned(),
                message: e.to_string(),
            });
        }
        self.json.push(b'}');
        if self.len == 0 {
            self.first_value = value_start;
        }
        self.len += 1;
        self.media
            .extend(media.into_iter().map(|(kind, source)| MediaArg {
                argument: name.into(),
                kind,
                source,
            }));
        Ok(self)
    }

    /// The arguments as one JSON object, in insertion order.
    pub fn as_json(&self) -> &str {
        // Always valid UTF-8 (see `json`); the fallback is unreachable.
        std::str::from_utf8(&self.json).unwrap_or("{}")
    }

    /// The text of the only argument, when there is one and it is a
    /// string (a `str`): the model is given it plainly, as the user message
    /// (docs/runtime.md, "What the model sees").
    #[cfg(test)]
    pub(crate) fn single_text(&self) -> Option<String> {
        serde_json::from_str(self.single_text_json()?).ok()
    }

    /// The text of the only argument (see `single_text`) as the JSON string serde wrote (quotes and
    /// escapes included), sliced out of the arguments without parsing them.
    pub(crate) fn single_text_json(&self) -> Option<&str> {
        if self.len != 1 || !self.media.is_empty() {
            return None;
        }
        // The only value runs from `first_value` to the closing brace.
        let value = self.as_json().get(self.first_value..self.json.len() - 1)?;
        value.starts_with('"').then_some(value)
    }

    /// The media in the arguments (images, documents, audio), in the
    /// order of their placeholders.
    pub(crate) fn media(&self) -> &[MediaArg] {
        &self.media
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Serializes as the JSON object (its text is spliced in as is).
impl Serialize for Args {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw =
            serde_json::from_str::<&RawValue>(self.as_json()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_single_text_is_sliced_as_serde_wrote_it() {
        for text in [
            "plain",
            "quote \" and \\ and \n newline",
            "  ",
            "",
            "\u{1F600} \u{7}",
        ] {
            let args = Args::new().arg("t", text).unwrap();
            assert_eq!(
                args.single_text_json(),
                Some(&*serde_json::to_string(text).unwrap())
            );
            assert_eq!(args.single_text().as_deref(), Some(text));
        }
        // Not a single `str`: a number, two arguments, a list.
        assert_eq!(Args::new().arg("n", &3).unwrap().single_text_json(), None);
        let two = Args::new().arg("a", "x").unwrap().arg("b", "y").unwrap();
        assert_eq!(two.single_text_json(), None);
        assert_eq!(
            Args::new().arg("l", &["x"]).unwrap().single_text_json(),
            None
        );
        assert_eq!(Args::new().single_text_json(), None);
    }

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
        assert_eq!(
            args.as_json(),
            r#"{"zeta":1,"alpha":"text","list":[1.5,2.0]}"#
        );
        assert_eq!(args.len(), 3);
        assert_eq!(Args::new().as_json(), "{}");
        assert!(Args::new().is_empty());
    }

    #[test]
    fn unserializable_argument_is_a_typed_error() {
        let mut map = HashMap::new();
        map.insert(vec![1u8], 1);
        let good = Args::new().arg("n", &1).unwrap();
        let err = good.clone().arg("bad", &map).unwrap_err();
        assert!(
            matches!(&err, Error::Serialize { argument, .. } if argument == "bad"),
            "{err}"
        );
        // A failed argument leaves nothing half-written behind.
        let mut args = Args::new();
        for i in 0..3 {
            args = match args.clone().arg("bad", &map) {
                Ok(_) => panic!("a map with non-string keys is not JSON"),
                Err(_) => args.arg(&format!("a{i}"), &i).unwrap(),
            };
        }
        assert_eq!(args.as_json(), r#"{"a0":0,"a1":1,"a2":2}"#);
        assert_eq!(good.as_json(), r#"{"n":1}"#);
    }

    #[test]
    fn media_anywhere_in_an_argument_is_collected_behind_numbered_placeholders() {
        use crate::media::Kind;
        use crate::{Document, Image};
        #[derive(serde::Serialize)]
        struct Scan {
            page: Document,
            thumbs: Vec<Image>,
        }
        let args = Args::new()
            .arg("note", "see below")
            .unwrap()
            .arg("logo", &Image::from_url("https://example.com/logo.png"))
            .unwrap()
            .arg(
                "scan",
                &Scan {
                    page: Document::from_path("a.pdf"),
                    thumbs: vec![Image::from_path("b.png"), Image::from_path("c.png")],
                },
            )
            .unwrap();
        assert_eq!(
            args.as_json(),
            r#"{"note":"see below","logo":"<image 1>","scan":{"page":"<document 2>","thumbs":["<image 3>","<image 4>"]}}"#
        );
        let media = args.media();
        assert_eq!(media.len(), 4);
        assert_eq!(&*media[0].argument, "logo");
        assert_eq!(
            media.iter().map(|m| m.kind).collect::<Vec<_>>(),
            [Kind::Image, Kind::Document, Kind::Image, Kind::Image]
        );
        assert!(media[1..].iter().all(|m| &*m.argument == "scan"));
        // A lone media argument is not sent as plain text.
        let one = Args::new().arg("scan", &Image::from_path("x.png")).unwrap();
        assert_eq!(one.single_text(), None);
        // A failed argument leaves no media behind.
        let mut bad = HashMap::new();
        bad.insert(vec![1u8], Image::from_path("y.png"));
        let err = one.clone().arg("bad", &(Image::from_path("z.png"), bad));
        assert!(err.is_err());
        assert_eq!(one.media().len(), 1);
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
