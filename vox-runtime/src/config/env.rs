//! Reading the configuration from the environment: a pure function over a
//! lookup ([`Config::from_lookup`]), so that provider selection is
//! unit-tested without touching the process environment.

use super::builder::check_base_url;
use super::*;

impl Config {
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
    /// | `VOX_LLM_TRACE_CONTENT` | `1`: tracing spans carry each attempt's prompt and reply, see [`ConfigBuilder::trace_content`] |
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
        if let Some(tokens) = var("VOX_LLM_TOKEN_BUDGET") {
            let tokens = tokens.trim().parse::<u64>().map_err(|_| {
                Error::Config(format!(
                    "VOX_LLM_TOKEN_BUDGET must be a whole number of tokens, got `{}`",
                    tokens.trim()
                ))
            })?;
            builder = builder.token_budget(tokens);
        }
        if let Some(list) = var("VOX_LLM_ROUND_ROBIN") {
            let targets = list
                .split(',')
                .filter(|entry| !entry.trim().is_empty())
                .map(str::parse::<ModelRef>)
                .collect::<Result<Vec<_>, _>>()?;
            builder.config.round_robin = targets;
        }
        if let Some(format) = var("VOX_LLM_RESPONSE_FORMAT") {
            builder = builder.response_format(format.parse()?);
        }
        if let Some(prices) = var("VOX_LLM_PRICES") {
            for (model, price) in parse_prices(&prices)? {
                builder = builder.price(model, price);
            }
        }
        if let Some(rule) = var("VOX_LLM_STATE_SHAPE") {
            builder = builder.state_shape(rule.parse()?);
        }
        if let Some(model) = var("VOX_LLM_MODEL") {
            builder = builder.default_model(model.trim());
        }
        if let Some(secs) = var("VOX_LLM_TIMEOUT_SECS") {
            builder = builder.request_timeout(parse_timeout_secs("VOX_LLM_TIMEOUT_SECS", &secs)?);
        }
        if let Some(secs) = var("VOX_LLM_STREAM_FIRST_BYTE_SECS") {
            builder = builder.stream_first_byte_timeout(parse_timeout_secs(
                "VOX_LLM_STREAM_FIRST_BYTE_SECS",
                &secs,
            )?);
        }
        if let Some(secs) = var("VOX_LLM_STREAM_IDLE_SECS") {
            builder =
                builder.stream_idle_timeout(parse_timeout_secs("VOX_LLM_STREAM_IDLE_SECS", &secs)?);
        }
        if let Some(secs) = var("VOX_LLM_STREAM_TIMEOUT_SECS") {
            builder =
                builder.stream_timeout(parse_timeout_secs("VOX_LLM_STREAM_TIMEOUT_SECS", &secs)?);
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
        if let Some(mode) = var("VOX_LLM_CASSETTE_MODE") {
            builder = builder.cassette_mode(mode.parse()?);
        }
        // Unset, the mode depends on the call: outside tests `replay` under
        // CI, else `auto`; in a test always `replay` unless VOX_LLM_LIVE
        // (docs/runtime.md, "Tests").
        builder.config.ci_default_mode = Some(CassetteMode::default_for(lookup("CI").as_deref()));
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
            .live_in_tests(flag(var("VOX_LLM_LIVE"), "VOX_LLM_LIVE")?)
            .trace_content(flag(var("VOX_LLM_TRACE_CONTENT"), "VOX_LLM_TRACE_CONTENT")?);
        builder.build().map_err(|e| match e {
            Error::Config(msg) => Error::Config(format!("{msg} (configured from the environment)")),
            other => other,
        })
    }
}

impl Endpoint {
    /// This endpoint of `provider` as calls use it: the base URL as
    /// configured (else the provider's default) and checked, the key
    /// trimmed, or a configuration error naming what is missing —
    /// `url_hint` says how to set the URL, `key_hint` is added to the key
    /// variables named.
    pub(super) fn resolve(
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

/// `VOX_LLM_PRICES`: `model=input,output[,cached];…`, USD per million
/// tokens.
fn parse_prices(text: &str) -> Result<Vec<(String, crate::Price)>, Error> {
    let bad = |entry: &str| {
        Error::Config(format!(
            "VOX_LLM_PRICES entries are `model=input,output[,cached]` (USD per million tokens), \
             separated by `;`: got `{}`",
            entry.trim()
        ))
    };
    let mut out = Vec::new();
    for entry in text.split(';').filter(|e| !e.trim().is_empty()) {
        let (model, numbers) = entry.split_once('=').ok_or_else(|| bad(entry))?;
        let numbers: Vec<f64> = numbers
            .split(',')
            .map(|n| n.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad(entry))?;
        if model.trim().is_empty() || numbers.iter().any(|n| !n.is_finite() || *n < 0.0) {
            return Err(bad(entry));
        }
        let price = match numbers[..] {
            [input, output] => crate::Price::new(input, output),
            [input, output, cached] => crate::Price::new(input, output).with_cached_input(cached),
            _ => return Err(bad(entry)),
        };
        out.push((model.trim().to_owned(), price));
    }
    Ok(out)
}

fn parse_timeout_secs(name: &str, text: &str) -> Result<Duration, Error> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            Error::Config(format!(
                "{name} must be a positive number of seconds, got `{}`",
                text.trim()
            ))
        })
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
