//! The `@ai` call itself: provider dispatch and the re-prompt loop.
//!
//! A [`Client`] pairs a [`Config`] with one pooled transport; clones share
//! it. Generated code goes through the process-wide default client
//! ([`crate::call_ai`]), configured once from code ([`configure`]) or from
//! the environment on first use. Tests and embedders can build their own
//! `Client` and never touch global state.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use tracing::Instrument;

use crate::ai_function::{AiFunction, Args};
use crate::config::{Config, Provider};
use crate::error::{truncate_chars, Error, LAST_REPLY_CHARS};
use crate::prompt::{request_body, Conversation};
use crate::reply::{judge, parse_response, RejectedReply};
use crate::transport::Transport;

/// Runs `@ai` calls against one configuration. Cheap to clone; clones share
/// the connection pool and the concurrency limit.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    config: Config,
    /// `None` for the fixture provider, which never opens a connection.
    transport: Option<Transport>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `config`. Builds the HTTP client unless the provider is
    /// `fixture`.
    pub fn new(config: Config) -> Result<Client, Error> {
        let transport = match config.provider {
            Provider::Fixture => None,
            _ => Some(Transport::new(&config)?),
        };
        Ok(Client {
            inner: Arc::new(ClientInner { config, transport }),
        })
    }

    /// The configuration this client runs with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Runs one `@ai` call: under the `fixture` provider, returns
    /// `fixture.await` without any request; otherwise asks the model, up to
    /// `function.max_iterations` times, for a value of type `T`, and never
    /// polls `fixture`.
    pub async fn call_ai<T, F>(
        &self,
        function: &AiFunction,
        args: Args,
        fixture: F,
    ) -> Result<T, Error>
    where
        T: DeserializeOwned,
        F: Future<Output = Result<T, Error>>,
    {
        let Some(transport) = &self.inner.transport else {
            return fixture.await;
        };
        drop(fixture);
        let model = function
            .model
            .unwrap_or_else(|| self.inner.config.default_model());
        let span = tracing::info_span!("vox.ai_call", function = function.name, model = model);
        reprompt_loop(transport, function, model, &args)
            .instrument(span)
            .await
    }
}

/// Asks until the reply is a valid `T` or the attempts run out; each
/// rejected reply goes back to the model with a correction quoting why.
async fn reprompt_loop<T: DeserializeOwned>(
    transport: &Transport,
    function: &AiFunction,
    model: &str,
    args: &Args,
) -> Result<T, Error> {
    let attempts_allowed = function.attempts_allowed();
    let mut conversation = Conversation::start(function, args);
    let mut last_rejection = RejectedReply {
        error: String::new(),
        reply: String::new(),
    };
    for attempt in 1..=attempts_allowed {
        let body = request_body(function, model, &conversation)?;
        let response_body = transport.post(body).await?;
        let response = parse_response(&response_body)?;
        let usage = response.usage.unwrap_or_default();
        tracing::info!(
            attempt,
            prompt_tokens = usage.prompt_tokens,
            completion_tokens = usage.completion_tokens,
            "vox.ai_attempt"
        );
        match judge::<T>(&response, function.output.is_wrapped()) {
            Ok(value) => return Ok(value),
            Err(rejection) => {
                tracing::warn!(attempt, error = %transport.redact(&rejection.error), "vox.ai_attempt_rejected");
                if attempt < attempts_allowed {
                    conversation.push_correction(&rejection.reply, &rejection.error);
                }
                last_rejection = rejection;
            }
        }
    }
    Err(Error::InvalidOutput {
        function: function.name.to_owned(),
        attempts: attempts_allowed,
        last_error: transport.redact(&last_rejection.error),
        last_reply: truncate_chars(&transport.redact(&last_rejection.reply), LAST_REPLY_CHARS),
    })
}

/// The process-wide client: `Ok` once configured, or the configuration
/// error every call reports.
static DEFAULT_CLIENT: OnceLock<Result<Client, Error>> = OnceLock::new();

/// Sets the process-wide configuration used by [`crate::call_ai`].
///
/// Call it before the first `@ai` call; it fails with [`Error::Config`] if
/// the default client already exists (configured earlier, or read from the
/// environment by a call).
pub fn configure(config: Config) -> Result<(), Error> {
    let client = Client::new(config)?;
    let mut installed = false;
    DEFAULT_CLIENT.get_or_init(|| {
        installed = true;
        Ok(client)
    });
    if installed {
        Ok(())
    } else {
        Err(Error::Config(
            "vox_runtime::configure was called after the runtime was already configured \
             (call it once, before the first @ai call)"
                .into(),
        ))
    }
}

/// The process-wide client, created from the environment
/// ([`Config::from_env`]) on first use unless [`configure`] ran first.
/// A configuration error is returned by this and every later call.
pub fn default_client() -> Result<&'static Client, Error> {
    DEFAULT_CLIENT
        .get_or_init(|| {
            let config = Config::from_env()?;
            if config.fixture_by_default {
                eprintln!(
                    "warning: vox-runtime: no LLM provider configured (VOX_LLM_PROVIDER, OPENAI_API_KEY, \
                     OPENROUTER_API_KEY are unset); @ai functions run their fixture bodies"
                );
            }
            Client::new(config)
        })
        .as_ref()
        .map_err(Clone::clone)
}
