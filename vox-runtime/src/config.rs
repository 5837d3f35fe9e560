//! Which LLM server the runtime talks to, and with which limits.
//!
//! Configuration comes either from code ([`Config::builder`]) or from the
//! environment ([`Config::from_env`]; docs/runtime.md lists every
//! setting). Reading the environment is a pure function over a lookup
//! ([`Config::from_lookup`]) so that provider selection is unit-tested
//! without touching the process environment.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use vox_metadata::providers::{self, ProviderFacts};

use crate::cassette::{CassetteMode, DEFAULT_CACHE_MAX_BYTES};
use crate::error::Error;
use crate::redact::redact_url_passwords;

/// Model used for `@ai` functions without `model = …` when `VOX_LLM_MODEL`
/// is not set either.
pub const DEFAULT_MODEL: &str = vox_metadata::providers::DEFAULT_MODEL;

/// Default total time allowed for one HTTP request (connect, send, read).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time allowed to establish a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default number of transport retries (429, 5xx, connect errors, timeouts).
pub const DEFAULT_MAX_TRANSPORT_RETRIES: u32 = 3;
/// Default cap on the bytes read from one response body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Default cap on requests in flight at once through one [`crate::Client`].
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;
/// The most requests one client may keep in flight (a configuration error
/// above it): each is a slot in the client's table and a connection.
pub const MAX_CONCURRENT_REQUESTS_LIMIT: usize = 65_536;
/// Default first backoff delay; it doubles on each retry.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Default longest backoff delay.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(8);
/// Default longest wait honored from a `Retry-After` header.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Default completion limit sent with every request (`max_tokens`,
/// `max_completion_tokens`, `maxOutputTokens` or `num_predict`, as the
/// provider names it): enough for large structured values, and accepted
/// by every current model of the providers (some older Anthropic models
/// allow no more).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Whether the client follows redirects from the model server
/// (docs/runtime.md, "Security").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RedirectPolicy {
    /// Follow none: a 3xx answer is an [`Error::Redirect`] naming the
    /// `Location`, so the base URL can be corrected. The default.
    #[default]
    None,
    /// Follow 307 and 308 (which keep the method and body) to the same
    /// scheme, host and port, at most [`MAX_REDIRECTS`] in a row; never a
    /// 301, 302 or 303 (which would turn the POST into a GET and take the
    /// answer to that as the model's reply), never to another origin.
    SameOrigin,
}

/// The most redirects followed for one request under
/// [`RedirectPolicy::SameOrigin`].
pub const MAX_REDIRECTS: usize = 5;

impl RedirectPolicy {
    /// The name used in `VOX_LLM_FOLLOW_REDIRECTS`.
    pub fn name(self) -> &'static str {
        match self {
            RedirectPolicy::None => "none",
            RedirectPolicy::SameOrigin => "same-origin",
        }
    }
}

impl fmt::Display for RedirectPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RedirectPolicy {
    type Err = Error;

    /// Parses `none` or `same-origin`, ignoring ASCII case and surrounding
    /// spaces.
    fn from_str(s: &str) -> Result<Self, Error> {
        let name = s.trim().to_ascii_lowercase();
        [RedirectPolicy::None, RedirectPolicy::SameOrigin]
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "VOX_LLM_FOLLOW_REDIRECTS must be `none` or `same-origin`, got `{}`",
                    s.trim()
                ))
            })
    }
}

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

/// Where one provider is reached and with which key.
#[derive(Clone, Default)]
pub(crate) struct Endpoint {
    pub base_url: Option<String>,
    pub api_key: Option<String>,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field(
                "base_url",
                &self.base_url.as_deref().map(redact_url_passwords),
            )
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

/// A validated runtime configuration. Build one with [`Config::builder`] or
/// read it from the environment with [`Config::from_env`].
///
/// `Debug` never shows the API key nor a password in the base URL.
#[derive(Clone)]
pub struct Config {
    pub(crate) provider: Provider,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) default_model: Option<String>,
    pub(crate) request_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_transport_retries: u32,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_concurrent_requests: usize,
    pub(crate) backoff_base: Duration,
    pub(crate) backoff_max: Duration,
    pub(crate) max_retry_after: Duration,
    pub(crate) follow_redirects: RedirectPolicy,
    /// Completion limit for functions without `max_tokens = …`.
    pub(crate) max_tokens: u32,
    /// Tried in order when a function without `fallback = […]` fails with
    /// a transport error or a retryable status.
    pub(crate) fallback: Vec<ModelRef>,
    /// How `compatible` servers are given the schema.
    pub(crate) response_format: ResponseFormat,
    /// Whether replies that do not fit are repaired when the repair is
    /// unambiguous (docs/runtime.md, "Repairs").
    pub(crate) repair: bool,
    /// Base URLs and keys of the providers other than `provider` (used by
    /// functions with a `provider:` prefix and by fallbacks), by
    /// `Provider::index`.
    pub(crate) endpoints: [Endpoint; PROVIDER_COUNT],
    /// True when the environment named no provider and no key, so `fixture`
    /// was chosen by default (the runtime warns once on stderr).
    pub(crate) fixture_by_default: bool,
    /// The cassette directory (docs/runtime.md, "Cassettes").
    pub(crate) cassette: Option<PathBuf>,
    /// `None`: `replay` when `CI` is set, else `auto`.
    pub(crate) cassette_mode: Option<CassetteMode>,
    /// The reply cache directory and its bound (docs/runtime.md, "Reply
    /// cache").
    pub(crate) reply_cache: Option<PathBuf>,
    pub(crate) reply_cache_max_bytes: u64,
    /// Every call is a test's (`VOX_LLM_TEST`, set by `cargo vox test`).
    pub(crate) test_build: bool,
    /// Tests may ask the provider without a cassette (`VOX_LLM_LIVE`).
    pub(crate) live_in_tests: bool,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("provider", &self.provider)
            .field(
                "base_url",
                &self.base_url.as_deref().map(redact_url_passwords),
            )
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("default_model", &self.default_model)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_transport_retries", &self.max_transport_retries)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("max_retry_after", &self.max_retry_after)
            .field("follow_redirects", &self.follow_redirects)
            .field("max_tokens", &self.max_tokens)
            .field("fallback", &self.fallback)
            .field("response_format", &self.response_format)
            .field("repair", &self.repair)
            .field("cassette", &self.cassette)
            .field("cassette_mode", &self.cassette_mode)
            .field("reply_cache", &self.reply_cache)
            .field("reply_cache_max_bytes", &self.reply_cache_max_bytes)
            .field("test_build", &self.test_build)
            .field("live_in_tests", &self.live_in_tests)
            .field(
                "other_providers",
                &Provider::ALL
                    .iter()
                    .zip(&self.endpoints)
                    .filter(|(_, e)| e.base_url.is_some() || e.api_key.is_some())
                    .map(|(p, e)| {
                        (
                            p.name(),
                            e.base_url.as_deref().map(redact_url_passwords),
                            e.api_key.as_ref().map(|_| "[REDACTED]"),
                        )
                    })
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Config {
    /// Starts a configuration for `provider` with the documented defaults.
    pub fn builder(provider: Provider) -> ConfigBuilder {
        ConfigBuilder {
            error: None,
            config: Config {
                provider,
                base_url: None,
                api_key: None,
                default_model: None,
                request_timeout: DEFAULT_REQUEST_TIMEOUT,
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                max_transport_retries: DEFAULT_MAX_TRANSPORT_RETRIES,
                max_body_bytes: DEFAULT_MAX_BODY_BYTES,
                max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
                backoff_base: DEFAULT_BACKOFF_BASE,
                backoff_max: DEFAULT_BACKOFF_MAX,
                max_retry_after: DEFAULT_MAX_RETRY_AFTER,
                follow_redirects: RedirectPolicy::None,
                max_tokens: DEFAULT_MAX_TOKENS,
                fallback: Vec::new(),
                response_format: ResponseFormat::JsonSchema,
                repair: true,
                endpoints: Default::default(),
                fixture_by_default: false,
                cassette: None,
                cassette_mode: None,
                reply_cache: None,
                reply_cache_max_bytes: DEFAULT_CACHE_MAX_BYTES,
                test_build: false,
                live_in_tests: false,
            },
        }
    }

    /// Reads the configuration from the process environment (the table in
    /// docs/runtime.md).
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `VOX_LLM_PROVIDER` | `openai`, `openrouter`, `anthropic`, `gemini`, `ollama`, `compatible` or `fixture`. Unset: the first provider whose key is set, in the order `OPENAI_API_KEY`, `OPENROUTER_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`/`GOOGLE_API_KEY`; else `fixture` |
    /// | `OPENAI_API_KEY`, `OPENROUTER_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) | the key of that provider (required by it) |
    /// | `VOX_LLM_BASE_URL` | the selected provider's server (required for `compatible`) |
    /// | `VOX_LLM_API_KEY` | the selected provider's key, before its own variable |
    /// | `VOX_LLM_OPENAI_API_KEY`, `VOX_LLM_COMPATIBLE_API_KEY`, … (one per provider) | that provider's key, before its usual variable; for `compatible` and `ollama` reached through `provider:` prefixes and fallbacks, the only variable (for the selected provider, `VOX_LLM_API_KEY` wins) |
    /// | `VOX_LLM_OPENAI_BASE_URL`, `VOX_LLM_ANTHROPIC_BASE_URL`, … (one per provider) | that provider's server, for `provider:` prefixes and fallbacks (for the selected provider, `VOX_LLM_BASE_URL` wins) |
    /// | `VOX_LLM_MAX_TOKENS` | completion limit (default [`DEFAULT_MAX_TOKENS`]) |
    /// | `VOX_LLM_FALLBACK` | comma-separated `provider:model` list tried when a call fails with a transport error or retryable status |
    /// | `VOX_LLM_RESPONSE_FORMAT` | `json_schema` (default) or `json_object`, for `compatible` |
    /// | `VOX_LLM_MODEL` | default model (else [`DEFAULT_MODEL`]) |
    /// | `VOX_LLM_TIMEOUT_SECS` | request timeout in seconds, e.g. `60` or `2.5` |
    /// | `VOX_LLM_MAX_RETRIES` | transport retries |
    /// | `VOX_LLM_FOLLOW_REDIRECTS` | `none` (default) or `same-origin`, see [`RedirectPolicy`] |
    /// | `VOX_LLM_REPAIR` | `on` (default) or `off`: repair replies whose repair is unambiguous, see [`ConfigBuilder::repair`] |
    /// | `VOX_LLM_CASSETTE` | a cassette directory: calls replay and record replies there, see [`ConfigBuilder::cassette`] |
    /// | `VOX_LLM_CASSETTE_MODE` | `record`, `replay` or `auto`; default `replay` when `CI` is set, else `auto` |
    /// | `VOX_LLM_CACHE` | a reply cache directory for development loops (not for tests), see [`ConfigBuilder::reply_cache`] |
    /// | `VOX_LLM_CACHE_MAX_MB` | the reply cache's bound in MiB (default 64) |
    /// | `VOX_LLM_TEST` | `1`: every call is a test's (`cargo vox test` sets it), see [`ConfigBuilder::test_build`] |
    /// | `VOX_LLM_LIVE` | `1`: tests may call the provider without a cassette, see [`ConfigBuilder::live_in_tests`] |
    ///
    /// Empty values count as unset.
    pub fn from_env() -> Result<Config, Error> {
        Config::from_lookup(&|name| std::env::var(name).ok())
    }

    /// Like [`Config::from_env`], reading variables through `lookup`.
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let key_of = |provider: Provider| {
            provider
                .api_key_variables()
                .iter()
                .find_map(|name| var(name))
        };
        let (provider, fixture_by_default) = match var("VOX_LLM_PROVIDER") {
            Some(name) => (name.parse::<Provider>()?, false),
            None => AUTO_DETECTED
                .into_iter()
                .find(|p| key_of(*p).is_some())
                .map_or((Provider::Fixture, true), |p| (p, false)),
        };
        let mut builder = Config::builder(provider);
        builder.config.fixture_by_default = fixture_by_default;
        if provider != Provider::Fixture {
            // Every other provider's own key and server, for `provider:`
            // prefixes and fallbacks.
            for other in Provider::ALL {
                if other != provider && other != Provider::Fixture {
                    let own = var(&api_key_variable(other));
                    // `VOX_LLM_API_KEY` is the selected provider's, not
                    // compatible's when that is only a prefix or fallback.
                    let usual = (other != Provider::Compatible)
                        .then(|| key_of(other))
                        .flatten();
                    if let Some(key) = own.or(usual) {
                        builder = builder.provider_api_key(other, key.trim());
                    }
                }
                if other != Provider::Fixture {
                    if let Some(url) = var(&base_url_variable(other)) {
                        builder = builder.provider_base_url(other, url.trim());
                    }
                }
            }
            if let Some(key) = var("VOX_LLM_API_KEY")
                .or_else(|| var(&api_key_variable(provider)))
                .or_else(|| key_of(provider))
            {
                builder = builder.api_key(key.trim());
            }
        }
        if let Some(url) = var("VOX_LLM_BASE_URL") {
            builder = builder.base_url(url.trim());
        }
        if let Some(tokens) = var("VOX_LLM_MAX_TOKENS") {
            let tokens = tokens
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    Error::Config(format!(
                        "VOX_LLM_MAX_TOKENS must be a positive integer, got `{}`",
                        tokens.trim()
                    ))
                })?;
            builder = builder.max_tokens(tokens);
        }
        if let Some(list) = var("VOX_LLM_FALLBACK") {
            let fallback = list
                .split(',')
                .filter(|entry| !entry.trim().is_empty())
                .map(str::parse::<ModelRef>)
                .collect::<Result<Vec<_>, _>>()?;
            builder.config.fallback = fallback;
        }
        if let Some(format) = var("VOX_LLM_RESPONSE_FORMAT") {
            builder = builder.response_format(format.parse()?);
        }
        if let Some(model) = var("VOX_LLM_MODEL") {
            builder = builder.default_model(model.trim());
        }
        if let Some(secs) = var("VOX_LLM_TIMEOUT_SECS") {
            builder = builder.request_timeout(parse_timeout_secs(&secs)?);
        }
        if let Some(retries) = var("VOX_LLM_MAX_RETRIES") {
            let retries = retries.trim().parse::<u32>().map_err(|_| {
                Error::Config(format!(
                    "VOX_LLM_MAX_RETRIES must be a non-negative integer, got `{}`",
                    retries.trim()
                ))
            })?;
            builder = builder.max_transport_retries(retries);
        }
        if let Some(policy) = var("VOX_LLM_FOLLOW_REDIRECTS") {
            builder = builder.follow_redirects(policy.parse()?);
        }
        if let Some(repair) = var("VOX_LLM_REPAIR") {
            builder = builder.repair(match repair.trim() {
                "on" => true,
                "off" => false,
                other => {
                    return Err(Error::Config(format!(
                        "VOX_LLM_REPAIR must be `on` or `off`, got `{other}` (configured from the environment)"
                    )))
                }
            });
        }
        if let Some(dir) = var("VOX_LLM_CASSETTE") {
            builder = builder.cassette(dir);
        }
        builder = builder.cassette_mode(match var("VOX_LLM_CASSETTE_MODE") {
            Some(mode) => mode.parse()?,
            None => CassetteMode::default_for(lookup("CI").as_deref()),
        });
        if let Some(dir) = var("VOX_LLM_CACHE") {
            builder = builder.reply_cache(dir);
        }
        if let Some(mb) = var("VOX_LLM_CACHE_MAX_MB") {
            let mb: u64 = mb.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                Error::Config(format!(
                    "VOX_LLM_CACHE_MAX_MB must be a positive integer, got `{}`",
                    crate::server_text::server_text(&mb, 40)
                ))
            })?;
            builder = builder.reply_cache_max_bytes(mb.saturating_mul(1024 * 1024));
        }
        builder = builder
            .test_build(flag(var("VOX_LLM_TEST"), "VOX_LLM_TEST")?)
            .live_in_tests(flag(var("VOX_LLM_LIVE"), "VOX_LLM_LIVE")?);
        builder.build().map_err(|e| match e {
            Error::Config(msg) => Error::Config(format!("{msg} (configured from the environment)")),
            other => other,
        })
    }

    /// The provider calls go to.
    pub fn provider(&self) -> Provider {
        self.provider
    }
    /// The base URL (no trailing slash); `None` only for `fixture`. It is
    /// returned as configured, with any `user:password@`: `Debug` of the
    /// `Config` is the form safe to log.
    pub fn base_url(&self) -> Option<&str> {
        self.base_url.as_deref()
    }
    /// Whether an API key is configured (the key itself is never exposed).
    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }
    /// The model used by `@ai` functions without `model = …`.
    pub fn default_model(&self) -> &str {
        self.default_model
            .as_deref()
            .unwrap_or(self.provider.default_model())
    }
    /// Total time allowed for one HTTP request.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }
    /// Time allowed to establish a connection.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }
    /// Transport retries per request.
    pub fn max_transport_retries(&self) -> u32 {
        self.max_transport_retries
    }
    /// Cap on the bytes read from one response body.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }
    /// Cap on requests in flight at once through one client.
    pub fn max_concurrent_requests(&self) -> usize {
        self.max_concurrent_requests
    }
    /// Which redirects from the server are followed.
    pub fn follow_redirects(&self) -> RedirectPolicy {
        self.follow_redirects
    }
    /// The completion limit of functions without `max_tokens = …`.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }
    /// The fallbacks of functions without `fallback = […]`.
    pub fn fallback(&self) -> &[ModelRef] {
        &self.fallback
    }
    /// How `compatible` servers are given the schema.
    pub fn response_format(&self) -> ResponseFormat {
        self.response_format
    }
    /// Whether unambiguous repairs of replies are made (default true).
    pub fn repair(&self) -> bool {
        self.repair
    }
    /// The cassette directory, if any.
    pub fn cassette(&self) -> Option<&std::path::Path> {
        self.cassette.as_deref()
    }
    /// The cassette mode as set (`None`: by the `CI` variable when the
    /// client is built).
    pub fn cassette_mode(&self) -> Option<CassetteMode> {
        self.cassette_mode
    }
    /// The reply cache directory, if any.
    pub fn reply_cache(&self) -> Option<&std::path::Path> {
        self.reply_cache.as_deref()
    }

    /// The base URL and key for calls to `provider`: the configured ones
    /// for the selected provider, else that provider's own (set with
    /// [`ConfigBuilder::provider_base_url`] / [`ConfigBuilder::provider_api_key`],
    /// or its key variable) and its default URL.
    pub(crate) fn endpoint_for(&self, provider: Provider) -> Result<Endpoint, Error> {
        if provider == self.provider {
            return Ok(Endpoint {
                base_url: self.base_url.clone(),
                api_key: self.api_key.clone(),
            });
        }
        let configured = self.endpoints[provider.index()].clone();
        configured.resolve(
            provider,
            "set it with ConfigBuilder::provider_base_url, or select it with \
             VOX_LLM_PROVIDER and set VOX_LLM_BASE_URL",
            "",
        )
    }
}

impl Endpoint {
    /// This endpoint of `provider` as calls use it: the base URL as
    /// configured (else the provider's default) and checked, the key
    /// trimmed, or a configuration error naming what is missing —
    /// `url_hint` says how to set the URL, `key_hint` is added to the key
    /// variables named.
    fn resolve(
        self,
        provider: Provider,
        url_hint: &str,
        key_hint: &str,
    ) -> Result<Endpoint, Error> {
        let base_url = match self
            .base_url
            .or_else(|| provider.default_base_url().map(str::to_owned))
        {
            Some(url) => check_base_url(&url)?,
            None => {
                return Err(Error::Config(format!(
                    "provider `{provider}` needs a base URL ({url_hint})"
                )))
            }
        };
        let api_key = clean_key(self.api_key);
        if provider.requires_api_key() && api_key.is_none() {
            return Err(Error::Config(format!(
                "provider `{provider}` needs an API key (set {}{key_hint})",
                provider.api_key_variables().join(" or ")
            )));
        }
        Ok(Endpoint {
            base_url: Some(base_url),
            api_key,
        })
    }
}

/// `VOX_LLM_<PROVIDER>_API_KEY`: the key of `provider`, before its usual
/// variable (for the selected provider, `VOX_LLM_API_KEY` wins). The only way
/// outside code to give `compatible` or `ollama` a key when they are reached
/// through a `provider:` prefix or a fallback.
fn api_key_variable(provider: Provider) -> String {
    format!("VOX_LLM_{}_API_KEY", provider.name().to_ascii_uppercase())
}

/// `VOX_LLM_<PROVIDER>_BASE_URL`: the server of `provider` (for the
/// selected provider, `VOX_LLM_BASE_URL` wins).
fn base_url_variable(provider: Provider) -> String {
    format!("VOX_LLM_{}_BASE_URL", provider.name().to_ascii_uppercase())
}

/// Providers chosen by their key variable when `VOX_LLM_PROVIDER` is unset,
/// in this order (docs/runtime.md, "Configuration").
const AUTO_DETECTED: [Provider; 4] = [
    Provider::OpenAi,
    Provider::OpenRouter,
    Provider::Anthropic,
    Provider::Gemini,
];

fn clean_key(key: Option<String>) -> Option<String> {
    key.filter(|k| !k.trim().is_empty())
        .map(|k| k.trim().to_owned())
}

/// `url` trimmed, without trailing slashes, if it is `http(s)://…`.
fn check_base_url(url: &str) -> Result<String, Error> {
    let base_url = url.trim().trim_end_matches('/').to_owned();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(Error::Config(format!(
            "base URL `{}` must start with http:// or https://",
            redact_unparsed_url(&base_url)
        )));
    }
    Ok(base_url)
}

/// `url` with its password hidden, also when it lacks the `scheme://`
/// that [`redact_url_passwords`] looks for (`user:pass@host/v1`).
fn redact_unparsed_url(url: &str) -> String {
    match url.rfind('@') {
        Some(at) if !url.contains("://") => format!("[REDACTED]{}", &url[at..]),
        _ => redact_url_passwords(url).into_owned(),
    }
}

fn parse_timeout_secs(text: &str) -> Result<Duration, Error> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            Error::Config(format!(
                "VOX_LLM_TIMEOUT_SECS must be a positive number of seconds, got `{}`",
                text.trim()
            ))
        })
}

/// Builds a [`Config`]; each method sets the option it is named after.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    config: Config,
    /// A setting that could not be taken, reported by `build`.
    error: Option<Error>,
}

impl ConfigBuilder {
    /// Base URL of the selected provider's API, e.g.
    /// `http://127.0.0.1:8080/v1`: requests go to `{base_url}/chat/completions`
    /// (`openai`, `openrouter`, `compatible`), `{base_url}/messages`
    /// (`anthropic`), `{base_url}/models/{model}:generateContent` (`gemini`)
    /// or `{base_url}/api/chat` (`ollama`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.config.base_url = Some(url.into());
        self
    }
    /// The selected provider's API key, sent as `Authorization: Bearer …`
    /// (`x-api-key` for `anthropic`, `x-goog-api-key` for `gemini`).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.config.api_key = Some(key.into());
        self
    }
    /// Model for `@ai` functions without `model = …`.
    pub fn default_model(mut self, model: impl Into<String>) -> Self {
        self.config.default_model = Some(model.into());
        self
    }
    /// Total time allowed for one HTTP request (default 60 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }
    /// Time allowed to establish a connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }
    /// Transport retries per request for 429, 5xx, connect errors and
    /// timeouts (default 3). Re-prompts are counted separately.
    pub fn max_transport_retries(mut self, retries: u32) -> Self {
        self.config.max_transport_retries = retries;
        self
    }
    /// Cap on the bytes read from one response body (default 8 MiB).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.config.max_body_bytes = bytes;
        self
    }
    /// Cap on requests in flight at once through one client (default 64);
    /// this also bounds the connections the client opens.
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.config.max_concurrent_requests = requests;
        self
    }
    /// Exponential backoff between transport retries: `base`, doubling up to
    /// `max`, with jitter (defaults 500 ms and 8 s).
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.config.backoff_base = base;
        self.config.backoff_max = max;
        self
    }
    /// Longest wait honored from a `Retry-After` header (default 30 s).
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.config.max_retry_after = max;
        self
    }
    /// Which redirects to follow (default [`RedirectPolicy::None`]).
    pub fn follow_redirects(mut self, policy: RedirectPolicy) -> Self {
        self.config.follow_redirects = policy;
        self
    }
    /// Completion limit for functions without `max_tokens = …` (default
    /// [`DEFAULT_MAX_TOKENS`]); a reply that reaches it is truncated.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.config.max_tokens = tokens;
        self
    }
    /// `provider:model` references tried in order when a function without
    /// `fallback = […]` fails with a transport error or a retryable status.
    /// An entry that is not `provider:model` is an error from
    /// [`ConfigBuilder::build`].
    pub fn fallback<I, S>(mut self, models: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        match models
            .into_iter()
            .map(|m| m.as_ref().parse::<ModelRef>())
            .collect::<Result<_, _>>()
        {
            Ok(fallback) => self.config.fallback = fallback,
            Err(e) => self.error = Some(e),
        }
        self
    }
    /// How a `compatible` server is given the schema (default
    /// [`ResponseFormat::JsonSchema`]).
    pub fn response_format(mut self, format: ResponseFormat) -> Self {
        self.config.response_format = format;
        self
    }
    /// Whether a reply that does not fit the return type is repaired when
    /// the repair is unambiguous, before asking again (default `true`;
    /// `false` is the strict mode: every such reply is re-prompted; see
    /// docs/runtime.md, "Repairs").
    pub fn repair(mut self, repair: bool) -> Self {
        self.config.repair = repair;
        self
    }
    /// Replays and records replies in the cassette directory `dir`, one
    /// JSONL file per `@ai` function (docs/runtime.md, "Cassettes").
    pub fn cassette(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.cassette = Some(dir.into());
        self
    }
    /// What the cassette does (default: `replay` when the `CI` environment
    /// variable is set, else `auto`).
    pub fn cassette_mode(mut self, mode: CassetteMode) -> Self {
        self.config.cassette_mode = Some(mode);
        self
    }
    /// Keeps replies in the directory `dir` and answers a request asked
    /// before from there (docs/runtime.md, "Reply cache"). For development
    /// loops: tests use a cassette, and ignore the cache.
    pub fn reply_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.reply_cache = Some(dir.into());
        self
    }
    /// The reply cache's bound (default 64 MiB); the least recently used
    /// replies are removed beyond it.
    pub fn reply_cache_max_bytes(mut self, bytes: u64) -> Self {
        self.config.reply_cache_max_bytes = bytes;
        self
    }
    /// Treats every call as a test's (what `VOX_LLM_TEST=1` and a crate's
    /// own `cfg(test)` build do): without a cassette and without
    /// [`ConfigBuilder::live_in_tests`], a call runs its fixture body and
    /// asks no provider, whatever key is configured.
    pub fn test_build(mut self, test: bool) -> Self {
        self.config.test_build = test;
        self
    }
    /// Lets tests ask the provider without a cassette (`VOX_LLM_LIVE=1`).
    pub fn live_in_tests(mut self, live: bool) -> Self {
        self.config.live_in_tests = live;
        self
    }
    /// The server of `provider` when it is not the selected one (a
    /// function's `provider:` prefix or a fallback); the selected
    /// provider's is [`ConfigBuilder::base_url`].
    pub fn provider_base_url(mut self, provider: Provider, url: impl Into<String>) -> Self {
        if provider == self.config.provider {
            self.config.base_url = Some(url.into());
        } else {
            self.config.endpoints[provider.index()].base_url = Some(url.into());
        }
        self
    }
    /// The key of `provider` when it is not the selected one; the selected
    /// provider's is [`ConfigBuilder::api_key`].
    pub fn provider_api_key(mut self, provider: Provider, key: impl Into<String>) -> Self {
        if provider == self.config.provider {
            self.config.api_key = Some(key.into());
        } else {
            self.config.endpoints[provider.index()].api_key = Some(key.into());
        }
        self
    }

    /// Validates and returns the configuration.
    ///
    /// Errors: `compatible` without a base URL; `openai`/`openrouter`
    /// without an API key; a base URL that is not `http(s)://…`; zero
    /// timeouts, body limit or concurrency; concurrency above
    /// [`MAX_CONCURRENT_REQUESTS_LIMIT`].
    pub fn build(self) -> Result<Config, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut config = self.config;
        let provider = config.provider;
        if provider == Provider::Fixture {
            return Ok(config);
        }
        let endpoint = Endpoint {
            base_url: config.base_url.take(),
            api_key: config.api_key.take(),
        }
        .resolve(
            provider,
            "set VOX_LLM_BASE_URL, e.g. http://127.0.0.1:8080/v1",
            " or VOX_LLM_API_KEY",
        )?;
        config.base_url = endpoint.base_url;
        config.api_key = endpoint.api_key;
        if config.max_tokens == 0 {
            return Err(Error::Config("max_tokens must be greater than zero".into()));
        }
        if config.request_timeout.is_zero() || config.connect_timeout.is_zero() {
            return Err(Error::Config("timeouts must be greater than zero".into()));
        }
        if config.max_body_bytes == 0 || config.max_concurrent_requests == 0 {
            return Err(Error::Config(
                "max_body_bytes and max_concurrent_requests must be greater than zero".into(),
            ));
        }
        if config.max_concurrent_requests > MAX_CONCURRENT_REQUESTS_LIMIT {
            return Err(Error::Config(format!(
                "max_concurrent_requests is {}, more than the {MAX_CONCURRENT_REQUESTS_LIMIT} \
                 requests one client keeps in flight (each holds a slot and a connection)",
                config.max_concurrent_requests
            )));
        }
        Ok(config)
    }
}

/// A yes/no variable: unset, empty, `0` or `false` is no; `1` or `true` is
/// yes; anything else is a configuration error naming `name`.
fn flag(value: Option<String>, name: &str) -> Result<bool, Error> {
    match value.as_deref().map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(other) => Err(Error::Config(format!(
            "{name} must be `1` or `0`, got `{}`",
            crate::server_text::server_text(other, 40)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unparsable_base_url_never_shows_its_password() {
        // A `/` in the password ends the authority early: the URL does not
        // parse, and its error once quoted the password.
        for url in [
            "http://user:pa/ss-w0rd-123456@127.0.0.1:9/v1",
            "https://user:pa?ss-w0rd-123456@example.com/v1",
            "http://:pa#ss/w0rd-123456@h:1/v1",
        ] {
            let config = Config::builder(Provider::OpenAi)
                .api_key("sk-test")
                .base_url(url)
                .build();
            let shown = match config {
                Ok(config) => match crate::Client::new(config) {
                    Ok(_) => continue,
                    Err(e) => e.to_string(),
                },
                Err(e) => e.to_string(),
            };
            for part in ["pa/ss", "pa?ss", "pa#ss", "w0rd-123456"] {
                assert!(!shown.contains(part), "{shown}");
            }
        }
    }
    use std::collections::HashMap;

    fn from_vars(vars: &[(&str, &str)]) -> Result<Config, Error> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(&|name| map.get(name).cloned())
    }

    #[test]
    fn no_provider_and_no_key_selects_fixture_by_default() {
        let config = from_vars(&[]).unwrap();
        assert_eq!(config.provider(), Provider::Fixture);
        assert!(config.fixture_by_default);
        let config = from_vars(&[("OPENAI_API_KEY", "  ")]).unwrap();
        assert_eq!(config.provider(), Provider::Fixture, "blank key is unset");
    }

    #[test]
    fn keys_select_openai_before_openrouter() {
        let config =
            from_vars(&[("OPENAI_API_KEY", "sk-a"), ("OPENROUTER_API_KEY", "sk-b")]).unwrap();
        assert_eq!(config.provider(), Provider::OpenAi);
        assert_eq!(config.base_url(), Some("https://api.openai.com/v1"));
        assert_eq!(config.api_key.as_deref(), Some("sk-a"));
        assert!(!config.fixture_by_default);

        let config = from_vars(&[("OPENROUTER_API_KEY", "sk-b")]).unwrap();
        assert_eq!(config.provider(), Provider::OpenRouter);
        assert_eq!(config.base_url(), Some("https://openrouter.ai/api/v1"));
        assert_eq!(config.api_key.as_deref(), Some("sk-b"));
    }

    #[test]
    fn explicit_provider_wins_and_is_case_insensitive() {
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", " Fixture "),
            ("OPENAI_API_KEY", "sk-a"),
        ])
        .unwrap();
        assert_eq!(config.provider(), Provider::Fixture);
        assert!(!config.fixture_by_default);
        assert!(config.api_key.is_none());
    }

    #[test]
    fn compatible_needs_base_url_and_takes_optional_key() {
        let err = from_vars(&[("VOX_LLM_PROVIDER", "compatible")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("VOX_LLM_BASE_URL")),
            "{err}"
        );

        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "compatible"),
            ("VOX_LLM_BASE_URL", "http://127.0.0.1:11434/v1/"),
        ])
        .unwrap();
        assert_eq!(config.base_url(), Some("http://127.0.0.1:11434/v1"));
        assert!(!config.has_api_key());

        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "compatible"),
            ("VOX_LLM_BASE_URL", "http://localhost:8080/v1"),
            ("VOX_LLM_API_KEY", "local-key"),
            ("OPENAI_API_KEY", "sk-not-this-one"),
        ])
        .unwrap();
        assert_eq!(config.api_key.as_deref(), Some("local-key"));
    }

    #[test]
    fn missing_key_and_unknown_provider_are_config_errors() {
        let err = from_vars(&[("VOX_LLM_PROVIDER", "openai")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("OPENAI_API_KEY")),
            "{err}"
        );
        let err = from_vars(&[("VOX_LLM_PROVIDER", "openrouter")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("OPENROUTER_API_KEY")),
            "{err}"
        );
        let err = from_vars(&[("VOX_LLM_PROVIDER", "anthropic")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("ANTHROPIC_API_KEY")),
            "{err}"
        );
        let err = from_vars(&[("VOX_LLM_PROVIDER", "gemini")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("GEMINI_API_KEY or GOOGLE_API_KEY")),
            "{err}"
        );
        let err = from_vars(&[("VOX_LLM_PROVIDER", "claude")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("unknown provider `claude`")),
            "{err}"
        );
    }

    #[test]
    fn model_timeout_and_retries_come_from_env() {
        let config = from_vars(&[
            ("OPENAI_API_KEY", "sk-a"),
            ("VOX_LLM_MODEL", "gpt-4.1"),
            ("VOX_LLM_TIMEOUT_SECS", "2.5"),
            ("VOX_LLM_MAX_RETRIES", "7"),
        ])
        .unwrap();
        assert_eq!(config.default_model(), "gpt-4.1");
        assert_eq!(config.request_timeout(), Duration::from_millis(2500));
        assert_eq!(config.max_transport_retries(), 7);
        assert_eq!(from_vars(&[]).unwrap().default_model(), DEFAULT_MODEL);

        for bad in ["0", "-1", "soon", "NaN", "inf"] {
            let err = from_vars(&[("VOX_LLM_TIMEOUT_SECS", bad)]).unwrap_err();
            assert!(
                matches!(&err, Error::Config(m) if m.contains("VOX_LLM_TIMEOUT_SECS")),
                "{bad}: {err}"
            );
        }
        assert!(from_vars(&[("VOX_LLM_MAX_RETRIES", "-1")]).is_err());
    }

    #[test]
    fn base_url_must_be_http() {
        let err = Config::builder(Provider::Compatible)
            .base_url("ftp://example")
            .build()
            .unwrap_err();
        assert!(matches!(err, Error::Config(_)));
    }

    #[test]
    fn concurrency_is_bounded_both_ways() {
        let with = |n: usize| {
            Config::builder(Provider::Compatible)
                .base_url("http://127.0.0.1:1/v1")
                .max_concurrent_requests(n)
                .build()
        };
        assert!(matches!(with(0), Err(Error::Config(_))));
        assert!(with(1).is_ok());
        assert!(with(MAX_CONCURRENT_REQUESTS_LIMIT).is_ok());
        let err = with(usize::MAX).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("65536")),
            "{err}"
        );
    }

    #[test]
    fn a_password_in_a_base_url_without_scheme_is_hidden_in_the_error() {
        let err = Config::builder(Provider::Compatible)
            .base_url("alice:hunter2-pw@llm.internal/v1")
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("`[REDACTED]@llm.internal/v1`")),
            "{err}"
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let config = Config::builder(Provider::OpenAi)
            .api_key("sk-secret-123")
            .build()
            .unwrap();
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-secret-123"), "{debug}");
        assert!(debug.contains("[REDACTED]"), "{debug}");
    }

    #[test]
    fn auto_detection_order_covers_the_new_keys() {
        let config =
            from_vars(&[("ANTHROPIC_API_KEY", "sk-ant"), ("GEMINI_API_KEY", "g")]).unwrap();
        assert_eq!(config.provider(), Provider::Anthropic);
        assert_eq!(config.base_url(), Some("https://api.anthropic.com/v1"));
        assert_eq!(config.default_model(), "claude-haiku-4-5");
        // The other keys are kept for prefixes and fallbacks.
        assert_eq!(
            config
                .endpoint_for(Provider::Gemini)
                .unwrap()
                .api_key
                .as_deref(),
            Some("g")
        );
        let config = from_vars(&[("GOOGLE_API_KEY", "g2")]).unwrap();
        assert_eq!(config.provider(), Provider::Gemini);
        assert_eq!(config.api_key.as_deref(), Some("g2"));
        let config = from_vars(&[("GOOGLE_API_KEY", "g2"), ("GEMINI_API_KEY", "g1")]).unwrap();
        assert_eq!(
            config.api_key.as_deref(),
            Some("g1"),
            "GEMINI_API_KEY first"
        );
        let config =
            from_vars(&[("OPENROUTER_API_KEY", "or"), ("ANTHROPIC_API_KEY", "a")]).unwrap();
        assert_eq!(config.provider(), Provider::OpenRouter);
        // Ollama needs no key and has a default server.
        let config = from_vars(&[("VOX_LLM_PROVIDER", "ollama")]).unwrap();
        assert_eq!(config.base_url(), Some("http://127.0.0.1:11434"));
        assert!(!config.has_api_key());
    }

    #[test]
    fn base_url_and_api_key_variables_override_the_selected_provider() {
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "anthropic"),
            ("ANTHROPIC_API_KEY", "own-key"),
            ("VOX_LLM_API_KEY", "gateway-key"),
            ("VOX_LLM_BASE_URL", "http://127.0.0.1:9/proxy/"),
        ])
        .unwrap();
        assert_eq!(config.api_key.as_deref(), Some("gateway-key"));
        assert_eq!(config.base_url(), Some("http://127.0.0.1:9/proxy"));
        // Without a key of its own, VOX_LLM_API_KEY is enough.
        let config =
            from_vars(&[("VOX_LLM_PROVIDER", "gemini"), ("VOX_LLM_API_KEY", "k")]).unwrap();
        assert_eq!(config.api_key.as_deref(), Some("k"));
        // Other providers keep their defaults and need their own key.
        let err = config.endpoint_for(Provider::Anthropic).unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("ANTHROPIC_API_KEY")),
            "{err}"
        );
        // ... unless their own variables say otherwise.
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "gemini"),
            ("VOX_LLM_API_KEY", "k"),
            ("VOX_LLM_COMPATIBLE_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("VOX_LLM_OLLAMA_BASE_URL", "http://gpu-box:11434"),
            ("VOX_LLM_GEMINI_BASE_URL", "http://127.0.0.1:1/not-this"),
            ("VOX_LLM_BASE_URL", "http://127.0.0.1:2/this"),
        ])
        .unwrap();
        assert_eq!(config.base_url(), Some("http://127.0.0.1:2/this"));
        let compatible = config.endpoint_for(Provider::Compatible).unwrap();
        assert_eq!(
            compatible.base_url.as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
        let ollama = config.endpoint_for(Provider::Ollama).unwrap();
        assert_eq!(ollama.base_url.as_deref(), Some("http://gpu-box:11434"));
        // Keys of providers reached through prefixes and fallbacks.
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "openai"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("VOX_LLM_COMPATIBLE_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("VOX_LLM_COMPATIBLE_API_KEY", "local-key"),
            ("VOX_LLM_OLLAMA_API_KEY", "proxy-key"),
            ("ANTHROPIC_API_KEY", "sk-ant-usual"),
            ("VOX_LLM_ANTHROPIC_API_KEY", "sk-ant-own"),
        ])
        .unwrap();
        let key = |p| config.endpoint_for(p).unwrap().api_key;
        assert_eq!(key(Provider::OpenAi).as_deref(), Some("sk-openai"));
        assert_eq!(key(Provider::Compatible).as_deref(), Some("local-key"));
        assert_eq!(key(Provider::Ollama).as_deref(), Some("proxy-key"));
        assert_eq!(key(Provider::Anthropic).as_deref(), Some("sk-ant-own"));
        // The selected provider: VOX_LLM_API_KEY, then its own, then usual.
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "ollama"),
            ("VOX_LLM_OLLAMA_API_KEY", "proxy-key"),
        ])
        .unwrap();
        assert_eq!(
            config
                .endpoint_for(Provider::Ollama)
                .unwrap()
                .api_key
                .as_deref(),
            Some("proxy-key")
        );
        // Selected by its own variable when VOX_LLM_BASE_URL is unset.
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "ollama"),
            ("VOX_LLM_OLLAMA_BASE_URL", "http://gpu-box:11434/"),
        ])
        .unwrap();
        assert_eq!(config.base_url(), Some("http://gpu-box:11434"));
    }

    #[test]
    fn max_tokens_fallback_and_response_format_from_env_and_builder() {
        let config = from_vars(&[
            ("VOX_LLM_PROVIDER", "ollama"),
            ("VOX_LLM_MAX_TOKENS", "512"),
            (
                "VOX_LLM_FALLBACK",
                " openai:gpt-4o-mini , ollama:llama3.2:3b,",
            ),
            ("VOX_LLM_RESPONSE_FORMAT", "json-object"),
        ])
        .unwrap();
        assert_eq!(config.max_tokens(), 512);
        assert_eq!(
            config.fallback(),
            [
                ModelRef {
                    provider: Provider::OpenAi,
                    model: "gpt-4o-mini".into()
                },
                ModelRef {
                    provider: Provider::Ollama,
                    model: "llama3.2:3b".into()
                },
            ]
        );
        assert_eq!(config.response_format(), ResponseFormat::JsonObject);
        assert_eq!(from_vars(&[]).unwrap().max_tokens(), DEFAULT_MAX_TOKENS);
        for (name, bad) in [
            ("VOX_LLM_MAX_TOKENS", "0"),
            ("VOX_LLM_MAX_TOKENS", "lots"),
            ("VOX_LLM_FALLBACK", "gpt-4o-mini"),
            ("VOX_LLM_FALLBACK", "openai:"),
            ("VOX_LLM_RESPONSE_FORMAT", "yaml"),
        ] {
            let err = from_vars(&[(name, bad)]).unwrap_err();
            assert!(matches!(err, Error::Config(_)), "{name}={bad}: {err}");
        }
        let err = Config::builder(Provider::Ollama)
            .fallback(["anthropc:claude"])
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, Error::Config(m) if m.contains("provider:model")),
            "{err}"
        );
        let config = Config::builder(Provider::Ollama)
            .max_tokens(77)
            .fallback(["gemini:gemini-2.5-flash"])
            .provider_base_url(Provider::Gemini, "http://127.0.0.1:1/g")
            .provider_api_key(Provider::Gemini, "gk")
            .build()
            .unwrap();
        assert_eq!(config.max_tokens(), 77);
        let gemini = config.endpoint_for(Provider::Gemini).unwrap();
        assert_eq!(gemini.base_url.as_deref(), Some("http://127.0.0.1:1/g"));
        assert_eq!(gemini.api_key.as_deref(), Some("gk"));
        let debug = format!("{config:?}");
        assert!(!debug.contains("gk\""), "{debug}");
    }

    #[test]
    fn every_provider_is_its_row_of_the_shared_table() {
        assert_eq!(Provider::ALL.len(), providers::PROVIDERS.len());
        for (p, row) in Provider::ALL.into_iter().zip(&providers::PROVIDERS) {
            assert_eq!(p.name(), row.name);
            assert_eq!(p.name().parse::<Provider>().unwrap(), p);
            assert_eq!(
                p == Provider::Fixture,
                row.protocol.is_none(),
                "only fixture has no wire"
            );
        }
    }

    #[test]
    fn model_prefixes_split_only_at_known_providers() {
        assert_eq!(
            Provider::split_model("anthropic:claude-sonnet-4-5"),
            (Some(Provider::Anthropic), "claude-sonnet-4-5")
        );
        assert_eq!(
            Provider::split_model("ollama:llama3.2:3b"),
            (Some(Provider::Ollama), "llama3.2:3b")
        );
        assert_eq!(Provider::split_model("llama3.2:3b"), (None, "llama3.2:3b"));
        assert_eq!(Provider::split_model("gpt-4o"), (None, "gpt-4o"));
        assert_eq!(Provider::split_model("Anthropic:x"), (None, "Anthropic:x"));
    }
}
