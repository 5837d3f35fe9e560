//! [`ConfigBuilder`]: a configuration from code, and the checks every
//! configuration passes, however it was made.

use super::*;

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
                state_shape: StateShape::Auto,
                prices: Vec::new(),
                round_robin: Vec::new(),
                token_budget: None,
                route_cooloff: DEFAULT_ROUTE_COOLOFF,
                stream_first_byte_timeout: DEFAULT_STREAM_FIRST_BYTE_TIMEOUT,
                stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
                stream_timeout: DEFAULT_STREAM_TIMEOUT,
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
                ci_default_mode: None,
                reply_cache: None,
                reply_cache_max_bytes: DEFAULT_CACHE_MAX_BYTES,
                test_build: false,
                live_in_tests: false,
                trace_content: false,
            },
        }
    }
}

/// `url` trimmed, without trailing slashes, if it is `http(s)://…`.
pub(super) fn check_base_url(url: &str) -> Result<String, Error> {
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

/// Builds a [`Config`]; each method sets the option it is named after.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    pub(super) config: Config,
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
    /// The price of the models whose names start with `model` (USD per
    /// million tokens), before the built-in table (docs/runtime.md, "Usage
    /// and cost").
    pub fn price(mut self, model: impl Into<String>, price: crate::Price) -> Self {
        self.config.prices.push((model.into(), price));
        self
    }
    /// Whether the system message states the schema's shape: `Auto` (the
    /// default) where the request does not hold the model to a schema it
    /// is shown (docs/runtime.md, "What the model sees").
    pub fn state_shape(mut self, rule: StateShape) -> Self {
        self.config.state_shape = rule;
        self
    }
    /// Time a streamed attempt may take to the first byte of its body
    /// (default 60 s; docs/runtime.md, "Streaming").
    pub fn stream_first_byte_timeout(mut self, timeout: Duration) -> Self {
        self.config.stream_first_byte_timeout = timeout;
        self
    }
    /// Time a streamed attempt may go without a chunk (default 30 s).
    pub fn stream_idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.stream_idle_timeout = timeout;
        self
    }
    /// Total time of one streamed attempt (default 600 s).
    pub fn stream_timeout(mut self, timeout: Duration) -> Self {
        self.config.stream_timeout = timeout;
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
    /// Calls of functions that name no model rotate over these targets
    /// (`provider:model`), one call each in turn, skipping a target that
    /// failed for [`ConfigBuilder::route_cooloff`] (docs/runtime.md,
    /// "Routing").
    pub fn round_robin<I, S>(mut self, targets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        match targets
            .into_iter()
            .map(|m| m.as_ref().parse::<ModelRef>())
            .collect::<Result<_, _>>()
        {
            Ok(targets) => self.config.round_robin = targets,
            Err(e) => self.error = Some(e),
        }
        self
    }
    /// At most this many tokens over every call of the client (so, for
    /// the default client, of the process): an attempt that could cross
    /// it is not sent (`Error::BudgetExceeded`; docs/runtime.md, "Budgets").
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.config.token_budget = Some(tokens);
        self
    }
    /// How long a round-robin target that failed is skipped (default 30 s).
    pub fn route_cooloff(mut self, cooloff: Duration) -> Self {
        self.config.route_cooloff = cooloff;
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
    /// Records each attempt's prompt (the instruction and the arguments)
    /// and reply, redacted, on its tracing span as
    /// `gen_ai.system_instructions`, `gen_ai.input.messages` and
    /// `gen_ai.output.messages` (`VOX_LLM_TRACE_CONTENT=1`). Off by default:
    /// spans carry no prompt or reply text, and never a key
    /// (docs/runtime.md, "OpenTelemetry").
    pub fn trace_content(mut self, on: bool) -> Self {
        self.config.trace_content = on;
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
        if config.request_timeout.is_zero()
            || config.connect_timeout.is_zero()
            || config.stream_first_byte_timeout.is_zero()
            || config.stream_idle_timeout.is_zero()
            || config.stream_timeout.is_zero()
        {
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
