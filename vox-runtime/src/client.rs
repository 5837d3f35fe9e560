//! The `@ai` call itself: provider dispatch and the re-prompt loop.
//!
//! A [`Client`] pairs a [`Config`] with one pooled transport; clones share
//! it. Generated code goes through the process-wide default client
//! ([`crate::call_ai`]), configured once from code ([`configure`]) or from
//! the environment on first use. Tests and embedders can build their own
//! `Client` and never touch global state.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::de::DeserializeOwned;
use tracing::Instrument;

use crate::ai_function::{AiFunction, Args};
use crate::config::{Config, Provider};
use crate::error::{truncate_chars, Error, LAST_REPLY_CHARS};
use crate::prompt::{Conversation, RequestParts};
use crate::reply::{parse_content, parse_response, ChatResponse, RejectedReply};
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
        T: DeserializeOwned + Send,
        F: Future<Output = Result<T, Error>>,
    {
        let Some(transport) = &self.inner.transport else {
            return fixture.await;
        };
        drop(fixture);
        self.ask_model(transport, function, &args).await
    }

    /// The network side of `call_ai`. Generic over the return type only
    /// (the fixture's type differs for every `@ai` function, the return
    /// type is often shared), and all it adds to the non-generic
    /// conversation is deserializing into `T`.
    async fn ask_model<T: DeserializeOwned + Send>(
        &self,
        transport: &Transport,
        function: &AiFunction,
        args: &Args,
    ) -> Result<T, Error> {
        let wrapped = function.output().is_wrapped();
        let mut value = None;
        self.converse(transport, function, args, &mut |content| {
            value = Some(parse_content::<T>(content, wrapped)?);
            Ok(())
        })
        .await?;
        // `converse` succeeds only once `accept` has stored a value.
        value.ok_or_else(|| {
            Error::MalformedResponse("internal error: an accepted reply left no value".into())
        })
    }

    /// The re-prompt loop, compiled once: asks until `accept` takes a
    /// reply's content, re-prompting with its error, for up to
    /// `max_iterations` attempts.
    async fn converse(
        &self,
        transport: &Transport,
        function: &AiFunction,
        args: &Args,
        accept: &mut (dyn FnMut(&str) -> Result<(), String> + Send),
    ) -> Result<(), Error> {
        let mut call = Call::start(transport, &self.inner.config, function, args)?;
        loop {
            let body = call.ask().await?;
            // serde_json quotes the reply in its errors: redact them.
            let response = parse_response(&body).map_err(|e| transport.redact_error(e))?;
            call.record_usage(&response);
            let verdict = response.content().and_then(|content| {
                accept(content).map_err(|error| RejectedReply {
                    error,
                    reply: content.to_owned(),
                })
            });
            match verdict {
                Ok(()) => return Ok(()),
                Err(rejection) => call.reject(rejection)?,
            }
        }
    }
}

/// The state of one `@ai` call against a server: the conversation so far,
/// the attempt number and the tracing span.
struct Call<'a> {
    transport: &'a Transport,
    function: &'a AiFunction,
    /// The function's constant request parts, kept by the function.
    parts: Cow<'a, RequestParts>,
    conversation: Conversation,
    attempt: u32,
    span: tracing::Span,
}

impl<'a> Call<'a> {
    fn start(
        transport: &'a Transport,
        config: &'a Config,
        function: &'a AiFunction,
        args: &Args,
    ) -> Result<Call<'a>, Error> {
        let model = function.model().unwrap_or_else(|| config.default_model());
        Ok(Call {
            transport,
            function,
            parts: function.request_parts(model)?,
            conversation: Conversation::start(args),
            attempt: 0,
            span: tracing::info_span!("vox.ai_call", function = function.name(), model = model),
        })
    }

    /// Sends the next attempt and returns the response body.
    async fn ask(&mut self) -> Result<Bytes, Error> {
        self.attempt += 1;
        let body = self.parts.request_body(&self.conversation);
        let post = self.transport.post(body);
        // Without a subscriber listening, entering the span on every poll
        // is pure overhead.
        if self.span.is_disabled() {
            post.await
        } else {
            post.instrument(self.span.clone()).await
        }
    }

    fn record_usage(&self, response: &ChatResponse<'_>) {
        let usage = response.usage.unwrap_or_default();
        self.span.in_scope(|| {
            tracing::info!(
                attempt = self.attempt,
                prompt_tokens = usage.prompt_tokens,
                completion_tokens = usage.completion_tokens,
                "vox.ai_attempt"
            );
        });
    }

    /// Records a rejected reply: the next attempt carries it and a
    /// correction quoting why, or, when the attempts are used up,
    /// `Error::InvalidOutput`.
    fn reject(&mut self, rejection: RejectedReply) -> Result<(), Error> {
        let transport = self.transport;
        let attempt = self.attempt;
        self.span.in_scope(|| {
            tracing::warn!(attempt, error = %transport.redact(&rejection.error), "vox.ai_attempt_rejected");
        });
        let attempts_allowed = self.function.attempts_allowed();
        if attempt < attempts_allowed {
            self.conversation
                .push_correction(&rejection.reply, &rejection.error);
            return Ok(());
        }
        Err(Error::InvalidOutput {
            function: self.function.name().to_owned(),
            attempts: attempts_allowed,
            last_error: transport.redact(&rejection.error),
            last_reply: truncate_chars(&transport.redact(&rejection.reply), LAST_REPLY_CHARS),
        })
    }
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
