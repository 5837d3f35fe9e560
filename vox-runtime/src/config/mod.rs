//! Which LLM server the runtime talks to, and with which limits.
//!
//! Configuration comes either from code ([`Config::builder`]) or from the
//! environment ([`Config::from_env`]; docs/runtime.md lists every
//! setting). Reading the environment is a pure function over a lookup
//! ([`Config::from_lookup`]) so that provider selection is unit-tested
//! without touching the process environment.
//!
//! The files by concern: `provider.rs` holds what is known about each
//! provider before any configuration (names, defaults, key variables, from
//! the shared provider table) and the value types provider settings take;
//! `env.rs` reads the environment; `builder.rs` is [`ConfigBuilder`] and its
//! checks; this file is [`Config`] itself.

mod builder;
mod env;
mod provider;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::cassette::{CassetteMode, DEFAULT_CACHE_MAX_BYTES};
use crate::error::Error;
use crate::redact::redact_url_passwords;

pub use builder::ConfigBuilder;
pub(crate) use provider::PROVIDER_COUNT;
pub use provider::{ModelRef, Provider, ResponseFormat, StateShape};

/// Model used for `@ai` functions without `model = …` when `VOX_LLM_MODEL`
/// is not set either.
pub const DEFAULT_MODEL: &str = vox_metadata::providers::DEFAULT_MODEL;

/// Default total time allowed for one HTTP request (connect, send, read).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time a streamed attempt may take to its first byte of body
/// (docs/runtime.md, "Streaming").
pub const DEFAULT_STREAM_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time a streamed attempt may go without a chunk.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Default total time of one streamed attempt.
pub const DEFAULT_STREAM_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time a round-robin target that failed is skipped.
pub const DEFAULT_ROUTE_COOLOFF: Duration = Duration::from_secs(30);
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
    pub(crate) state_shape: StateShape,
    /// Prices by model-name prefix, before the built-in table.
    pub(crate) prices: Vec<(String, crate::Price)>,
    pub(crate) stream_first_byte_timeout: Duration,
    pub(crate) stream_idle_timeout: Duration,
    pub(crate) stream_timeout: Duration,
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
    /// Tokens every call of one client may use together.
    pub(crate) token_budget: Option<u64>,
    /// Targets calls rotate over (docs/runtime.md, "Routing").
    pub(crate) round_robin: Vec<ModelRef>,
    /// How long a target that failed is skipped by the rotation.
    pub(crate) route_cooloff: Duration,
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
    /// `None`: in a test `replay` (unless `live_in_tests`); otherwise
    /// `replay` when `CI` is set, else `auto`.
    pub(crate) cassette_mode: Option<CassetteMode>,
    /// The mode `CI` chose when the configuration was read from the
    /// environment; `None`: `CI` is read when the client is built.
    pub(crate) ci_default_mode: Option<CassetteMode>,
    /// The reply cache directory and its bound (docs/runtime.md, "Reply
    /// cache").
    pub(crate) reply_cache: Option<PathBuf>,
    pub(crate) reply_cache_max_bytes: u64,
    /// Every call is a test's (`VOX_LLM_TEST`, set by `cargo vox test`).
    pub(crate) test_build: bool,
    /// Tests may ask the provider without a cassette (`VOX_LLM_LIVE`).
    pub(crate) live_in_tests: bool,
    /// Tracing spans carry the prompt and the reply (`VOX_LLM_TRACE_CONTENT`).
    pub(crate) trace_content: bool,
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
            .field("state_shape", &self.state_shape)
            .field("round_robin", &self.round_robin)
            .field("route_cooloff", &self.route_cooloff)
            .field("prices", &self.prices)
            .field("stream_first_byte_timeout", &self.stream_first_byte_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("stream_timeout", &self.stream_timeout)
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
            .field("trace_content", &self.trace_content)
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
    /// The price of `model`: a configured one (`ConfigBuilder::price`,
    /// `VOX_LLM_PRICES`), else the built-in table's.
    pub fn price_of(&self, model: &str) -> Option<crate::Price> {
        crate::report::price_of(&self.prices, model)
    }
    /// Whether the system message states the schema's shape.
    pub fn state_shape(&self) -> StateShape {
        self.state_shape
    }
    /// Time a streamed attempt may take to the first byte of its body.
    pub fn stream_first_byte_timeout(&self) -> Duration {
        self.stream_first_byte_timeout
    }
    /// Time a streamed attempt may go without receiving a chunk.
    pub fn stream_idle_timeout(&self) -> Duration {
        self.stream_idle_timeout
    }
    /// Total time of one streamed attempt.
    pub fn stream_timeout(&self) -> Duration {
        self.stream_timeout
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
    /// The cassette mode of calls outside tests: as set, else as the `CI`
    /// variable chose when the configuration was read from the
    /// environment (`None`: `CI` is read when the client is built). A
    /// test's calls replay unless the mode was set or tests may call live
    /// (docs/runtime.md, "Tests").
    pub fn cassette_mode(&self) -> Option<CassetteMode> {
        self.cassette_mode.or(self.ci_default_mode)
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

#[cfg(test)]
mod tests {
    use super::*;
    use vox_metadata::providers;

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
