//! What is known about each provider before any configuration, from the
//! provider table vox-codegen shares (`vox_metadata::providers`), and the
//! value types provider settings take.

use std::fmt;
use std::str::FromStr;

use vox_metadata::providers::{self, ProviderFacts};

use crate::error::Error;

/// Where `@ai` calls go. Non-exhaustive: providers are added over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI's API; needs `OPENAI_API_KEY`.
    OpenAi,
    /// OpenRouter; needs `OPENROUTER_API_KEY`.
    OpenRouter,
    /// Anthropic's Messages API; needs `ANTHROPIC_API_KEY`. Structured
    /// output through a forced tool call.
    Anthropic,
    /// Google's Gemini API (`generateContent`); needs `GEMINI_API_KEY` (or
    /// `GOOGLE_API_KEY`).
    Gemini,
    /// Ollama's native `/api/chat` at `http://127.0.0.1:11434` unless
    /// `VOX_LLM_BASE_URL` says otherwise; no key needed.
    Ollama,
    /// Any OpenAI-compatible server (llama.cpp, vLLM…) at
    /// `VOX_LLM_BASE_URL`; the key (`VOX_LLM_API_KEY`) is optional.
    Compatible,
    /// No network: each `@ai` function runs its Vox body instead.
    Fixture,
}

/// Number of [`Provider`]s (for per-provider tables).
pub(crate) const PROVIDER_COUNT: usize = providers::PROVIDERS.len();

impl Provider {
    /// Every provider, in the order `VOX_LLM_PROVIDER` lists them.
    pub const ALL: [Provider; PROVIDER_COUNT] = [
        Provider::OpenAi,
        Provider::OpenRouter,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Compatible,
        Provider::Fixture,
    ];

    /// This provider's row of the table vox-codegen shares
    /// (`vox_metadata::providers::PROVIDERS`, in the order of [`Provider::ALL`]).
    pub(crate) fn facts(self) -> &'static ProviderFacts {
        &providers::PROVIDERS[self.index()]
    }

    /// The name used in `VOX_LLM_PROVIDER` and in `provider:` model prefixes.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The base URL used when none is configured.
    pub fn default_base_url(self) -> Option<&'static str> {
        self.facts().default_base_url
    }

    /// The model used when neither the function nor the configuration
    /// names one.
    pub fn default_model(self) -> &'static str {
        self.facts().default_model
    }

    /// The environment variable holding this provider's API key (the first
    /// of [`Provider::api_key_variables`]).
    pub fn api_key_variable(self) -> Option<&'static str> {
        self.api_key_variables().first().copied()
    }

    /// The environment variables holding this provider's API key, in the
    /// order they are read. `VOX_LLM_API_KEY`, when set, is the selected
    /// provider's key whatever it is.
    pub fn api_key_variables(self) -> &'static [&'static str] {
        self.facts().api_key_variables
    }

    pub(crate) fn requires_api_key(self) -> bool {
        self.facts().requires_api_key
    }

    /// Splits a `provider:model` reference: `"anthropic:claude-sonnet-4-5"`
    /// is `(Some(Anthropic), "claude-sonnet-4-5")`. Only an exact provider
    /// name before the first `:` is a prefix, so model names with colons of
    /// their own (`llama3.2:3b`) stay whole: `(None, "llama3.2:3b")`.
    pub fn split_model(model: &str) -> (Option<Provider>, &str) {
        match providers::split_model(model) {
            (Some(facts), rest) => (Provider::ALL.into_iter().find(|p| p.facts() == facts), rest),
            (None, _) => (None, model),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = Error;

    /// Parses a provider name, ignoring ASCII case and surrounding spaces.
    fn from_str(s: &str) -> Result<Self, Error> {
        let name = s.trim().to_ascii_lowercase();
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown provider `{}` (expected one of: openai, openrouter, anthropic, \
                     gemini, ollama, compatible, fixture)",
                    s.trim()
                ))
            })
    }
}

/// How a `compatible` server is given the schema (docs/runtime.md,
/// "Compatible servers").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseFormat {
    /// `response_format: {"type": "json_schema", "json_schema": {name,
    /// strict, schema}}`, as OpenAI documents it. The default.
    #[default]
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": {…}}`, the form
    /// llama-cpp-python's OpenAI-compatible server accepts.
    JsonObject,
}

/// Whether the system message states the schema's shape
/// (`VOX_LLM_STATE_SHAPE`; docs/runtime.md, "What the model sees").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StateShape {
    /// Where the request does not hold the model to a schema it is shown:
    /// `compatible` with `json_object`, OpenRouter (which passes the
    /// schema only to models that take it) and Ollama (whose `format`
    /// constrains the output without showing the model the schema). The
    /// default.
    #[default]
    Auto,
    /// Always, for every provider.
    Always,
    /// Never.
    Never,
}

impl StateShape {
    /// The name used in `VOX_LLM_STATE_SHAPE`.
    pub fn name(self) -> &'static str {
        match self {
            StateShape::Auto => "auto",
            StateShape::Always => "always",
            StateShape::Never => "never",
        }
    }

    /// Whether to state the shape where `auto` would say `auto`.
    pub(crate) fn decide(self, auto: bool) -> bool {
        match self {
            StateShape::Auto => auto,
            StateShape::Always => true,
            StateShape::Never => false,
        }
    }
}

impl FromStr for StateShape {
    type Err = Error;

    /// Parses `auto`, `always` or `never`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let name = s.trim().to_ascii_lowercase();
        [StateShape::Auto, StateShape::Always, StateShape::Never]
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "VOX_LLM_STATE_SHAPE must be `auto`, `always` or `never`, got `{}`",
                    s.trim()
                ))
            })
    }
}

impl ResponseFormat {
    /// The name used in `VOX_LLM_RESPONSE_FORMAT`.
    pub fn name(self) -> &'static str {
        match self {
            ResponseFormat::JsonSchema => "json_schema",
            ResponseFormat::JsonObject => "json_object",
        }
    }
}

impl FromStr for ResponseFormat {
    type Err = Error;

    /// Parses `json_schema` or `json_object` (`-` for `_` also accepted).
    fn from_str(s: &str) -> Result<Self, Error> {
        let name = s.trim().to_ascii_lowercase().replace('-', "_");
        [ResponseFormat::JsonSchema, ResponseFormat::JsonObject]
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "VOX_LLM_RESPONSE_FORMAT must be `json_schema` or `json_object`, got `{}`",
                    s.trim()
                ))
            })
    }
}

/// One `provider:model` to try (a fallback), parsed from text such as
/// `"anthropic:claude-haiku-4-5"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// The provider.
    pub provider: Provider,
    /// The model, as that provider names it.
    pub model: String,
}

impl FromStr for ModelRef {
    type Err = Error;

    /// Parses `provider:model`; the provider prefix is required.
    fn from_str(s: &str) -> Result<Self, Error> {
        let text = s.trim();
        match Provider::split_model(text) {
            (Some(provider), model) if !model.trim().is_empty() => Ok(ModelRef {
                provider,
                model: model.trim().to_owned(),
            }),
            _ => Err(Error::Config(format!(
                "fallback `{text}` must be `provider:model`, e.g. `openai:gpt-4o-mini` \
                 (providers: openai, openrouter, anthropic, gemini, ollama, compatible)"
            ))),
        }
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}
