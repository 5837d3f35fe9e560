//! The static description of an `@ai` function and the arguments of a call.
//!
//! Generated code declares one [`OutputSchema`] per structured-output type
//! and one [`AiFunction`] per `@ai` function as `static`s; each call builds
//! [`Args`]. These are plain data: the prompt and the request are built from
//! them in `prompt`.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

pub use crate::args::{Args, Example};
use crate::error::Error;
pub use crate::output::OutputSchema;
pub(crate) use crate::output::CATEGORIES_KEY;
pub use crate::tools::Tool;
use crate::wire::{RequestParts, Wire};

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
    /// The doc comment, or a call's own (`CallOptions::instruction`).
    instruction: Cow<'static, str>,
    model: Option<&'static str>,
    temperature: Option<f64>,
    max_iterations: u32,
    max_tokens: Option<u32>,
    fallback: Option<&'static [&'static str]>,
    output: Output,
    test_cassettes: Option<&'static str>,
    /// The parameter holding the conversation so far (`list[Message]`).
    history: Option<&'static str>,
    examples: &'static [Example],
    tools: &'static [Tool],
    max_steps: Option<u32>,
    request_parts: OnceLock<RequestParts>,
}

/// The model requests a call with tools makes at most when the function
/// does not say (`@ai(max_steps = N)`).
pub const DEFAULT_MAX_STEPS: u32 = 8;

/// A function's output schema: the generated one, or one call's own with
/// its run-time categories filled in.
enum Output {
    Static(&'static OutputSchema),
    Filled(Box<OutputSchema>),
}

impl AiFunction {
    /// What the constant parts of this function's requests are made of.
    pub(crate) fn parts_of(&self) -> crate::wire::PartsOf<'_> {
        crate::wire::PartsOf {
            name: self.name,
            instruction: &self.instruction,
            output: self.output(),
            temperature: self.temperature,
            tools: self.tools,
        }
    }

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
            instruction: Cow::Borrowed(instruction),
            model: None,
            temperature: None,
            max_iterations: 1,
            max_tokens: None,
            fallback: None,
            output: Output::Static(output),
            test_cassettes: None,
            history: None,
            examples: &[],
            tools: &[],
            max_steps: None,
            request_parts: OnceLock::new(),
        }
    }

    /// The parameter `name` (a `list[Message]`) is the conversation so
    /// far: its messages go to the model as turns (docs/runtime.md,
    /// "Conversations").
    pub const fn with_history(mut self, name: &'static str) -> AiFunction {
        self.history = Some(name);
        self
    }

    /// The function's worked examples, sent before each call's turns.
    pub const fn with_examples(mut self, examples: &'static [Example]) -> AiFunction {
        self.examples = examples;
        self
    }

    /// `@ai(tools = [...])`: the functions the model may call before it
    /// answers (docs/runtime.md, "Tools").
    pub const fn with_tools(mut self, tools: &'static [Tool]) -> AiFunction {
        self.tools = tools;
        self
    }

    /// `@ai(max_steps = N)`: the model requests a call makes at most, tool
    /// turns and corrections together (0 counts as 1).
    pub const fn with_max_steps(mut self, steps: u32) -> AiFunction {
        self.max_steps = Some(steps);
        self
    }

    /// What frames this function's calls besides their arguments.
    pub(crate) fn framing(&self) -> crate::prompt::Framing<'static> {
        crate::prompt::Framing {
            history: self.history,
            examples: self.examples,
        }
    }

    /// The parameter holding the conversation so far, if any.
    pub fn history_param(&self) -> Option<&'static str> {
        self.history
    }

    /// The worked examples.
    pub fn examples(&self) -> &'static [Example] {
        self.examples
    }

    /// The tools the model may call.
    pub fn tools(&self) -> &'static [Tool] {
        self.tools
    }

    /// The model requests a call makes at most: `max_steps`, else
    /// [`DEFAULT_MAX_STEPS`] (at least `max_iterations`) with tools, and
    /// no bound but `max_iterations` without.
    pub fn max_steps(&self) -> u32 {
        match self.max_steps {
            Some(n) => n.max(1),
            None if self.tools.is_empty() => u32::MAX,
            None => DEFAULT_MAX_STEPS.max(self.attempts_allowed()),
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
    pub fn instruction(&self) -> &str {
        &self.instruction
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

    /// This function for one call with `options`: its run-time category
    /// types take the values the options give them (docs/runtime.md,
    /// "Categories at run time"), and the options' instruction replaces the
    /// doc comment. `None` when neither changes anything, else a copy. An
    /// error, before anything is sent, when a category type has no values,
    /// or the filled-in schema crosses a strict-mode limit.
    pub(crate) fn for_call(
        &self,
        options: &crate::CallOptions,
    ) -> Result<Option<AiFunction>, Error> {
        let output = self.output();
        let fill = output.needs_categories();
        let instruction = options
            .instruction
            .as_deref()
            .filter(|i| *i != &*self.instruction);
        if !fill && instruction.is_none() {
            return Ok(None);
        }
        let schema = if fill {
            let json = crate::categories::fill(
                self.name,
                output.try_value()?,
                options.categories_given(),
            )?;
            OutputSchema::filled(output.name(), json, output.is_wrapped())
        } else {
            // A call's own copy of an already filled schema.
            match &self.output {
                Output::Static(s) => {
                    return Ok(Some(self.copy(Output::Static(s), instruction)));
                }
                Output::Filled(s) => {
                    OutputSchema::filled(s.name(), s.json_text().to_owned(), s.is_wrapped())
                }
            }
        };
        Ok(Some(
            self.copy(Output::Filled(Box::new(schema)), instruction),
        ))
    }

    /// This function with `output`, and `instruction` instead of its own
    /// when given: a call's own copy, whose request parts it builds anew.
    fn copy(&self, output: Output, instruction: Option<&str>) -> AiFunction {
        AiFunction {
            name: self.name,
            instruction: match instruction {
                Some(text) => Cow::Owned(text.to_owned()),
                None => self.instruction.clone(),
            },
            model: self.model,
            temperature: self.temperature,
            max_iterations: self.max_iterations,
            max_tokens: self.max_tokens,
            fallback: self.fallback,
            output,
            test_cassettes: self.test_cassettes,
            history: self.history,
            examples: self.examples,
            tools: self.tools,
            max_steps: self.max_steps,
            request_parts: OnceLock::new(),
        }
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
        let stated = stated.unwrap_or_else(|| wire.states_shape(!self.tools.is_empty()));
        let fits = |parts: &RequestParts| parts.is_for(wire, model, max_tokens, stated);
        let build = || RequestParts::build(self.parts_of(), wire, model, max_tokens, stated);
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

#[cfg(test)]
impl RequestParts {
    /// The constant parts of `function`'s requests to `model` with at most
    /// `max_tokens` completion tokens, in the shape of `wire` (stating the
    /// shape where the wire does), for the tests of the prompt and wires.
    pub fn new(
        function: &AiFunction,
        wire: Wire,
        model: &str,
        max_tokens: u32,
    ) -> Result<RequestParts, Error> {
        RequestParts::build(
            function.parts_of(),
            wire,
            model,
            max_tokens,
            wire.states_shape(!function.tools().is_empty()),
        )
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
