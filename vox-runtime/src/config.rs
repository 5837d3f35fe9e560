//! Which LLM server the runtime talks to, and with which limits.
//!
//! Configuration comes either from code ([`Config::builder`]) or from the
//! environment ([`Config::from_env`]; docs/runtime.md lists every
//! setting). Reading the environment is a pure function over a lookup
//! ([`Config::from_lookup`]) so that provider selection is unit-tested
//! without touching the process environment.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::Error;
use crate::redact::redact_url_passwords;

/// Model used for `@ai` functions without `model = …` when `VOX_LLM_MODEL`
/// is not set either.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

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

/// Where `@ai` calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI's API; needs `OPENAI_API_KEY`.
    OpenAi,
    /// OpenRouter; needs `OPENROUTER_API_KEY`.
    OpenRouter,
    /// Any OpenAI-compatible server (Ollama, llama.cpp, vLLM…) at
    /// `VOX_LLM_BASE_URL`; the key (`VOX_LLM_API_KEY`) is optional.
    Compatible,
    /// No network: each `@ai` function runs its Vox body instead.
    Fixture,
}

impl Provider {
    /// The name used in `VOX_LLM_PROVIDER`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::OpenRouter => "openrouter",
            Provider::Compatible => "compatible",
            Provider::Fixture => "fixture",
        }
    }

    /// The base URL used when none is configured.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::OpenRouter => Some("https://openrouter.ai/api/v1"),
            Provider::Compatible | Provider::Fixture => None,
        }
    }

    /// The environment variable holding this provider's API key.
    pub fn api_key_variable(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("OPENAI_API_KEY"),
            Provider::OpenRouter => Some("OPENROUTER_API_KEY"),
            Provider::Compatible => Some("VOX_LLM_API_KEY"),
            Provider::Fixture => None,
        }
    }

    fn requires_api_key(self) -> bool {
        matches!(self, Provider::OpenAi | Provider::OpenRouter)
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
        [
            Provider::OpenAi,
            Provider::OpenRouter,
            Provider::Compatible,
            Provider::Fixture,
        ]
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            Error::Config(format!(
                "unknown provider `{}` (expected one of: openai, openrouter, compatible, fixture)",
                s.trim()
            ))
        })
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
    /// True when the environment named no provider and no key, so `fixture`
    /// was chosen by default (the runtime warns once on stderr).
    pub(crate) fixture_by_default: bool,
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
            .finish()
    }
}

impl Config {
    /// Starts a configuration for `provider` with the documented defaults.
    pub fn builder(provider: Provider) -> ConfigBuilder {
        ConfigBuilder {
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
                fixture_by_default: false,
            },
        }
    }

    /// Reads the configuration from the process environment (the table in
    /// docs/runtime.md).
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `VOX_LLM_PROVIDER` | `openai`, `openrouter`, `compatible` or `fixture`. Unset: `openai` if `OPENAI_API_KEY` is set, else `openrouter` if `OPENROUTER_API_KEY` is set, else `fixture` |
    /// | `OPENAI_API_KEY`, `OPENROUTER_API_KEY` | the key of that provider (required by it) |
    /// | `VOX_LLM_BASE_URL` | required for `compatible`; overrides the default URL of the others |
    /// | `VOX_LLM_API_KEY` | optional key for `compatible` |
    /// | `VOX_LLM_MODEL` | default model (else [`DEFAULT_MODEL`]) |
    /// | `VOX_LLM_TIMEOUT_SECS` | request timeout in seconds, e.g. `60` or `2.5` |
    /// | `VOX_LLM_MAX_RETRIES` | transport retries |
    /// | `VOX_LLM_FOLLOW_REDIRECTS` | `none` (default) or `same-origin`, see [`RedirectPolicy`] |
    ///
    /// Empty values count as unset.
    pub fn from_env() -> Result<Config, Error> {
        Config::from_lookup(&|name| std::env::var(name).ok())
    }

    /// Like [`Config::from_env`], reading variables through `lookup`.
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let (provider, fixture_by_default) = match var("VOX_LLM_PROVIDER") {
            Some(name) => (name.parse::<Provider>()?, false),
            None if var("OPENAI_API_KEY").is_some() => (Provider::OpenAi, false),
            None if var("OPENROUTER_API_KEY").is_some() => (Provider::OpenRouter, false),
            None => (Provider::Fixture, true),
        };
        let mut builder = Config::builder(provider);
        builder.config.fixture_by_default = fixture_by_default;
        if let Some(key) = provider.api_key_variable().and_then(var) {
            builder = builder.api_key(key.trim());
        }
        if let Some(url) = var("VOX_LLM_BASE_URL") {
            builder = builder.base_url(url.trim());
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
        self.default_model.as_deref().unwrap_or(DEFAULT_MODEL)
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
}

impl ConfigBuilder {
    /// Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:11434/v1`;
    /// requests go to `{base_url}/chat/completions`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.config.base_url = Some(url.into());
        self
    }
    /// API key sent as `Authorization: Bearer …`.
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

    /// Validates and returns the configuration.
    ///
    /// Errors: `compatible` without a base URL; `openai`/`openrouter`
    /// without an API key; a base URL that is not `http(s)://…`; zero
    /// timeouts, body limit or concurrency; concurrency above
    /// [`MAX_CONCURRENT_REQUESTS_LIMIT`].
    pub fn build(self) -> Result<Config, Error> {
        let mut config = self.config;
        let provider = config.provider;
        if provider == Provider::Fixture {
            return Ok(config);
        }
        let base_url = match config
            .base_url
            .take()
            .or_else(|| provider.default_base_url().map(str::to_owned))
        {
            Some(url) => url.trim().trim_end_matches('/').to_owned(),
            None => {
                return Err(Error::Config(format!(
                    "provider `{provider}` needs a base URL (set VOX_LLM_BASE_URL, e.g. http://127.0.0.1:11434/v1)"
                )))
            }
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(Error::Config(format!(
                "base URL `{}` must start with http:// or https://",
                redact_unparsed_url(&base_url)
            )));
        }
        config.base_url = Some(base_url);
        config.api_key = config
            .api_key
            .take()
            .filter(|k| !k.trim().is_empty())
            .map(|k| k.trim().to_owned());
        if provider.requires_api_key() && config.api_key.is_none() {
            return Err(Error::Config(format!(
                "provider `{provider}` needs an API key (set {})",
                provider.api_key_variable().unwrap_or("an API key")
            )));
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

#[cfg(test)]
mod tests {
    use super::*;
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
            matches!(&err, Error::Config(m) if m.contains("unknown provider `anthropic`")),
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
}
