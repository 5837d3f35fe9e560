//! The `@ai` call itself: provider dispatch, fallbacks and the re-prompt
//! loop.
//!
//! A [`Client`] pairs a [`Config`] with one transport (HTTP unless
//! [`ClientBuilder::transport`] gave another) and one sender per provider
//! it talks to (the configured one at once, others — `provider:` prefixes,
//! fallbacks — on first use), all under one concurrency cap; clones share
//! them. Generated code goes through the process-wide default client
//! ([`crate::__private::call_ai`]), configured once from code ([`configure`]) or from
//! the environment on first use. Tests and embedders can build their own
//! `Client` and never touch global state.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::de::DeserializeOwned;
use tracing::Instrument;

use crate::ai_function::{AiFunction, Args};
use crate::cassette::{
    arguments_with_media, schema_id, CassetteMode, Lookup, Recorded, Recorder, ReplyCache, Request,
    Turn,
};
use crate::config::{Config, ModelRef, Provider, PROVIDER_COUNT};
use crate::error::{Error, ProviderFailure, LAST_ERROR_CHARS, LAST_REPLY_CHARS};
use crate::in_flight::InFlight;
use crate::media::load::Rules;
use crate::options::CallOptions;
use crate::prompt::{Conversation, Step};
use crate::redact::Redactor;
use crate::repair::{parse_reply, Repairs};
use crate::reply::{Answer, RejectedReply, Usage};
use crate::report::AttemptReport;
use crate::stream::call::{AiStream, Tap};
use crate::stream::{Events, Streamed};
use crate::telemetry::{self, CallTrace};
use crate::transport::{is_retryable_failure, HttpTransport, Sender, StreamLimits, Transport};
use crate::validator::{FixtureFits, FnCheck, NoCheck, ValueCheck};
use crate::wire::{parse_response, Backend, RequestParts, Wire};

/// Runs `@ai` calls against one configuration. Cheap to clone; clones share
/// the connection pools and the concurrency limit.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    config: Config,
    /// `None` for the fixture provider, which never opens a connection.
    network: Option<Network>,
    /// The configured cassette, if any (docs/runtime.md, "Cassettes").
    cassette: Option<Recorder>,
    /// The configured cassette as a test's calls use it (in `replay` mode
    /// unless said otherwise).
    test_cassette: Option<Recorder>,
    /// The mode of a package's own cassettes in a test build: as
    /// configured, else `replay`.
    test_cassette_mode: CassetteMode,
    /// The reply cache, if any, under a network provider.
    cache: Option<Recorder>,
    /// Removes every configured credential from what is recorded.
    recording_redactors: Vec<Redactor>,
    /// The round-robin rotation.
    router: Router,
    /// Tokens every call of the client used, for its budget.
    spent: Arc<std::sync::atomic::AtomicU64>,
}

/// The senders of a client under a network provider.
struct Network {
    /// What performs each exchange: the configured transport, else HTTP.
    transport: Arc<dyn Transport>,
    /// One cap on requests in flight for all providers.
    in_flight: Arc<InFlight>,
    /// By `Provider::index`, built on first use (the configured provider's
    /// when the client is built).
    senders: [OnceLock<Result<Sender, Error>>; PROVIDER_COUNT],
}

impl Network {
    /// The sender for `provider`, built on first use.
    fn sender(&self, config: &Config, provider: Provider) -> Result<&Sender, Error> {
        self.senders[provider.index()]
            .get_or_init(|| {
                let endpoint = config.endpoint_for(provider)?;
                Sender::new(
                    config,
                    provider,
                    &endpoint,
                    self.transport.clone(),
                    self.in_flight.clone(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Builds a [`Client`]: its configuration and, optionally, the
/// [`Transport`] its requests go through (docs/runtime.md, "Transports").
///
/// ```
/// use vox_runtime::transport::MemoryTransport;
/// use vox_runtime::{Client, Config, Provider};
///
/// let config = Config::builder(Provider::OpenAi).api_key("sk-test").build()?;
/// let transport = MemoryTransport::new();
/// let client = Client::builder(config).transport(transport.clone()).build()?;
/// # let _ = client;
/// # Ok::<(), vox_runtime::Error>(())
/// ```
#[must_use]
pub struct ClientBuilder {
    config: Config,
    transport: Option<Arc<dyn Transport>>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .field("custom_transport", &self.transport.is_some())
            .finish()
    }
}

impl ClientBuilder {
    /// Sends every request of the client through `transport` instead of
    /// HTTP. The runtime then opens no connection of its own: URLs,
    /// headers, the concurrency cap, the request timeout and transport
    /// retries stay as configured, and apply to `transport`'s exchanges.
    pub fn transport(mut self, transport: impl Transport) -> ClientBuilder {
        self.transport = Some(Arc::new(transport));
        self
    }

    /// The client. Under a network provider, checks the configured
    /// provider's URL and key, and builds the HTTP client unless another
    /// transport was given.
    pub fn build(self) -> Result<Client, Error> {
        let ClientBuilder { config, transport } = self;
        let network = match Backend::of(config.provider, &config) {
            Backend::Fixture => None,
            Backend::Network(_) => {
                let provider = config.provider;
                let transport: Arc<dyn Transport> = match transport {
                    Some(transport) => transport,
                    None => Arc::new(HttpTransport::new(&config)?),
                };
                let network = Network {
                    transport,
                    in_flight: Arc::new(InFlight::new(
                        config.max_concurrent_requests,
                        config.request_timeout,
                    )),
                    senders: Default::default(),
                };
                network.sender(&config, provider)?;
                Some(network)
            }
        };
        let outside_tests = config
            .ci_default_mode
            .unwrap_or_else(|| CassetteMode::default_for(std::env::var("CI").ok().as_deref()));
        let cassette = config
            .cassette
            .as_deref()
            .map(|dir| Recorder::cassette(dir, config.cassette_mode.unwrap_or(outside_tests)));
        // A test never asks a model by accident (docs/runtime.md, "Tests"):
        // unless the mode is said, or VOX_LLM_LIVE, its cassettes replay.
        let test_cassette_mode = config.cassette_mode.unwrap_or(if config.live_in_tests {
            outside_tests
        } else {
            CassetteMode::Replay
        });
        let test_cassette = config
            .cassette
            .as_deref()
            .map(|dir| Recorder::cassette(dir, test_cassette_mode));
        let cache = match (&config.reply_cache, &network) {
            (Some(dir), Some(_)) => Some(Recorder::Cache(Arc::new(ReplyCache::new(
                dir,
                config.reply_cache_max_bytes,
            )))),
            _ => None,
        };
        let mut recording_redactors = vec![Redactor::new(
            config.api_key.as_deref(),
            config.base_url.as_deref(),
        )];
        for endpoint in &config.endpoints {
            recording_redactors.push(Redactor::new(
                endpoint.api_key.as_deref(),
                endpoint.base_url.as_deref(),
            ));
        }
        Ok(Client {
            inner: Arc::new(ClientInner {
                config,
                network,
                cassette,
                test_cassette,
                test_cassette_mode,
                cache,
                recording_redactors,
                router: Router::default(),
                spent: Arc::default(),
            }),
        })
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// A request as it would be sent ([`Client::preview_request`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RequestPreview {
    pub method: &'static str,
    pub url: String,
    /// Name and value of each header; the API key's value is `[redacted]`.
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

/// One provider and model to ask.
#[derive(Debug, Clone, Copy)]
struct Target<'a> {
    provider: Provider,
    model: &'a str,
    /// The model as the program names it, for cassette keys: `model = …`
    /// of the function, else the configured default model, else `None`
    /// (the provider's default); a fallback's `provider:model`.
    named: Option<&'a str>,
    /// Its place in the round-robin rotation, when the rotation chose it.
    route: Option<usize>,
}

/// The round-robin rotation of a client (docs/runtime.md, "Routing"): the
/// next target to start from, and until when each failed one is skipped.
#[derive(Default)]
struct Router {
    next: std::sync::atomic::AtomicUsize,
    down: std::sync::Mutex<Vec<Option<std::time::Instant>>>,
}

impl Router {
    /// The target the next call starts with, of `targets`: the next in
    /// turn among those not cooling off (each one passed over is a
    /// `vox.route_skip` event); when every one is, the next in turn.
    fn pick(&self, targets: &[ModelRef]) -> usize {
        let n = targets.len();
        let turn = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let now = std::time::Instant::now();
        let down = self
            .down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let cooling = |i: usize| down.get(i).copied().flatten().filter(|until| *until > now);
        // The turn goes round the targets that are up, so their shares
        // stay even while one cools off.
        let up: Vec<usize> = (0..n).filter(|i| cooling(*i).is_none()).collect();
        for i in (0..n).filter(|i| cooling(*i).is_some()) {
            if let Some(until) = cooling(i) {
                tracing::info!(
                    target_model = %targets[i],
                    cooloff_ms = until.duration_since(now).as_millis() as u64,
                    "vox.route_skip"
                );
            }
        }
        if up.is_empty() {
            turn % n
        } else {
            up[turn % up.len()]
        }
    }

    /// Whether target `i` is cooling off.
    fn is_down(&self, i: usize) -> bool {
        let down = self
            .down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        down.get(i)
            .copied()
            .flatten()
            .is_some_and(|until| until > std::time::Instant::now())
    }

    /// Target `i` failed: skipped for `cooloff`.
    fn mark_down(&self, i: usize, n: usize, cooloff: std::time::Duration) {
        let mut down = self
            .down
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if down.len() < n {
            down.resize(n, None);
        }
        if let Some(slot) = down.get_mut(i) {
            *slot = Some(std::time::Instant::now() + cooloff);
        }
    }
}

/// Where a call's attempts go: the network (if a provider is configured)
/// and where replies are replayed and recorded (if anywhere).
#[derive(Clone, Copy)]
struct Route<'a> {
    network: Option<&'a Network>,
    recorder: Option<&'a Recorder>,
    /// A streamed call's tap: attempts stream, and report partial values
    /// and retries to it (docs/runtime.md, "Streaming").
    tap: Option<&'a Tap>,
    /// The call's own options (docs/runtime.md, "Options").
    options: &'a CallOptions,
}

/// A call's span and its running totals (docs/runtime.md, "OpenTelemetry").
#[derive(Clone, Copy)]
struct Traced<'a> {
    span: &'a tracing::Span,
    trace: &'a CallTrace,
}

impl Client {
    /// A client for `config`, over HTTP. Builds the HTTP client of the
    /// configured provider unless it is `fixture`.
    pub fn new(config: Config) -> Result<Client, Error> {
        Client::builder(config).build()
    }

    /// A builder of a client for `config`, to give it another
    /// [`Transport`] than HTTP.
    pub fn builder(config: Config) -> ClientBuilder {
        ClientBuilder {
            config,
            transport: None,
        }
    }

    /// The configuration this client runs with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Runs one `@ai` call: under the `fixture` provider (or for a function
    /// whose model says `fixture:`), returns `fixture.await` without any
    /// request, unless a cassette has the reply (docs/runtime.md,
    /// "Cassettes"); otherwise asks the model, up to `function.max_iterations`
    /// times, for a value of type `T`, then its fallbacks if it could not
    /// be reached, and never polls `fixture`.
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
        self.call_ai_with(function, &CallOptions::DEFAULT, args, fixture)
            .await
    }

    /// [`Client::call_ai`] with per-call `options` (what `f_with`
    /// generates; docs/runtime.md, "Options"): a model (with a
    /// `provider:` prefix), fallbacks, temperature, completion limit,
    /// attempts, request timeout, token budget; whatever is unset keeps the
    /// function's compiled value, else the configured one.
    pub async fn call_ai_with<T, F>(
        &self,
        function: &AiFunction,
        options: &CallOptions,
        args: Args,
        fixture: F,
    ) -> Result<T, Error>
    where
        T: DeserializeOwned + Send,
        F: Future<Output = Result<T, Error>>,
    {
        self.call_with(function, options, args, fixture, &NoCheck, None, |_: &T| {})
            .await
    }

    /// Like [`Client::call_ai`], with a check of the value (what
    /// `@ai(check = f)` generates; docs/runtime.md, "Checks"): after a
    /// reply parses, `check` returns the problems it finds in the value,
    /// and any problem rejects the attempt with the problems as the
    /// correction. The fixture body's value is checked too (a rejected one
    /// is `Error::InvalidOutput` after one attempt).
    ///
    /// ```no_run
    /// # use vox_runtime::__private::{AiFunction, Args, OutputSchema};
    /// # use vox_runtime::{Client, Config, Provider};
    /// # static OUT: OutputSchema = OutputSchema::new("int", r#"{"type":"object"}"#, true);
    /// # static COUNT: AiFunction = AiFunction::new("count", "", &OUT).with_max_iterations(3);
    /// # async fn f(client: Client) -> Result<(), vox_runtime::Error> {
    /// let n: i64 = client
    ///     .call_ai_checked(&COUNT, Args::new(), async { Ok(0) }, |n: &i64| {
    ///         if *n < 0 { vec!["a count cannot be negative".into()] } else { vec![] }
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_ai_checked<T, F, C>(
        &self,
        function: &AiFunction,
        args: Args,
        fixture: F,
        check: C,
    ) -> Result<T, Error>
    where
        T: DeserializeOwned + serde::Serialize + Send,
        F: Future<Output = Result<T, Error>>,
        C: Fn(&T) -> Vec<String> + Sync,
    {
        self.call_ai_checked_with(function, &CallOptions::DEFAULT, args, fixture, check)
            .await
    }

    /// [`Client::call_ai_checked`] with per-call `options`.
    pub async fn call_ai_checked_with<T, F, C>(
        &self,
        function: &AiFunction,
        options: &CallOptions,
        args: Args,
        fixture: F,
        check: C,
    ) -> Result<T, Error>
    where
        T: DeserializeOwned + serde::Serialize + Send,
        F: Future<Output = Result<T, Error>>,
        C: Fn(&T) -> Vec<String> + Sync,
    {
        self.call_with(
            function,
            options,
            args,
            fixture,
            &FixtureFits(FnCheck(check)),
            None,
            |_: &T| {},
        )
        .await
    }

    /// [`Client::call_ai`], streamed (what `f_stream` generates;
    /// docs/runtime.md, "Streaming"): an [`AiStream`] of partial values
    /// (`P`, the return type's partial type), retries, and finally the
    /// value or error `call_ai` would give for the same replies. Under the
    /// `fixture` provider the fixture body's value is streamed in pieces.
    /// Nothing runs until the stream is polled.
    pub fn call_ai_stream<P, T, F>(
        &self,
        function: &'static AiFunction,
        args: Args,
        fixture: F,
    ) -> AiStream<P, T>
    where
        P: DeserializeOwned,
        T: DeserializeOwned + serde::Serialize + Send + 'static,
        F: Future<Output = Result<T, Error>> + Send + 'static,
    {
        self.stream_with(
            function,
            CallOptions::DEFAULT,
            args,
            fixture,
            FixtureFits(NoCheck),
        )
    }

    /// [`Client::call_ai_stream`] with per-call `options`.
    pub fn call_ai_stream_with<P, T, F>(
        &self,
        function: &'static AiFunction,
        options: &CallOptions,
        args: Args,
        fixture: F,
    ) -> AiStream<P, T>
    where
        P: DeserializeOwned,
        T: DeserializeOwned + serde::Serialize + Send + 'static,
        F: Future<Output = Result<T, Error>> + Send + 'static,
    {
        self.stream_with(
            function,
            options.clone(),
            args,
            fixture,
            FixtureFits(NoCheck),
        )
    }

    /// [`Client::call_ai_stream`] with a check of the value, as
    /// [`Client::call_ai_checked`]: it runs once per attempt, on the
    /// completed reply, never on a partial.
    pub fn call_ai_stream_checked<P, T, F, C>(
        &self,
        function: &'static AiFunction,
        args: Args,
        fixture: F,
        check: C,
    ) -> AiStream<P, T>
    where
        P: DeserializeOwned,
        T: DeserializeOwned + serde::Serialize + Send + 'static,
        F: Future<Output = Result<T, Error>> + Send + 'static,
        C: Fn(&T) -> Vec<String> + Send + Sync + 'static,
    {
        self.stream_with(
            function,
            CallOptions::DEFAULT,
            args,
            fixture,
            FnCheck(check),
        )
    }

    /// [`Client::call_ai_stream_checked`] with per-call `options`.
    pub fn call_ai_stream_checked_with<P, T, F, C>(
        &self,
        function: &'static AiFunction,
        options: &CallOptions,
        args: Args,
        fixture: F,
        check: C,
    ) -> AiStream<P, T>
    where
        P: DeserializeOwned,
        T: DeserializeOwned + serde::Serialize + Send + 'static,
        F: Future<Output = Result<T, Error>> + Send + 'static,
        C: Fn(&T) -> Vec<String> + Send + Sync + 'static,
    {
        self.stream_with(
            function,
            options.clone(),
            args,
            fixture,
            FixtureFits(FnCheck(check)),
        )
    }

    fn stream_with<P, T, F, C>(
        &self,
        function: &'static AiFunction,
        options: CallOptions,
        args: Args,
        fixture: F,
        check: C,
    ) -> AiStream<P, T>
    where
        P: DeserializeOwned,
        T: DeserializeOwned + serde::Serialize + Send + 'static,
        F: Future<Output = Result<T, Error>> + Send + 'static,
        C: ValueCheck<T> + Send + 'static,
    {
        // Run-time categories are filled in here, so the partials follow
        // the schema the call sends.
        let filled = function.for_call(&options);
        let output = match &filled {
            Ok(Some(filled)) => filled.output(),
            _ => function.output(),
        };
        let wrapped = output.is_wrapped();
        let tap = Arc::new(Tap::new(output.json_text(), wrapped));
        let client = self.clone();
        let call_tap = Arc::clone(&tap);
        let call = async move {
            let tap = &*call_tap;
            let filled = filled?;
            let function = filled.as_ref().unwrap_or(function);
            client
                .call_with(
                    function,
                    &options,
                    args,
                    fixture,
                    &check,
                    Some(tap),
                    |value: &T| {
                        // The fixture's value, in pieces, as a server would
                        // stream it.
                        if let Ok(text) = serde_json::to_string(value) {
                            let text = if wrapped {
                                format!("{{\"value\":{text}}}")
                            } else {
                                text
                            };
                            tap.replay(&text, FIXTURE_PIECE);
                        }
                    },
                )
                .await
        };
        AiStream::new(Box::pin(call), tap)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call_with<T, F, C>(
        &self,
        function: &AiFunction,
        options: &CallOptions,
        args: Args,
        fixture: F,
        check: &C,
        tap: Option<&Tap>,
        fixture_shown: impl FnOnce(&T),
    ) -> Result<T, Error>
    where
        T: DeserializeOwned + Send,
        F: Future<Output = Result<T, Error>>,
        C: ValueCheck<T>,
    {
        // Run-time categories: this call's own function, whose schema
        // lists the values the options give (an error before anything is
        // sent when they are missing or too many).
        let filled = function.for_call(options)?;
        let function = filled.as_ref().unwrap_or(function);
        let config = &self.inner.config;
        let network = self.inner.network.as_ref();
        let recorder = self.recorder_for(function);
        let test = function.test_cassettes().is_some() || config.test_build;
        let named_fixture = options
            .model
            .as_deref()
            .or(function.model())
            .and_then(|m| Provider::split_model(m).0)
            .is_some_and(|p| p == Provider::Fixture);
        // Under the `fixture` provider there is no network: a cassette
        // still replays (a test's committed replies), nothing is recorded.
        let untaped_test = test && recorder.is_none() && !config.live_in_tests;
        if named_fixture || untaped_test || (network.is_none() && recorder.is_none()) {
            if untaped_test && network.is_some() {
                note_test_fixture();
            }
            let value = check.check_fixture(function, fixture.await?)?;
            fixture_shown(&value);
            return Ok(value);
        }
        drop(fixture);
        let target = self.primary_target(function, options);
        let route = Route {
            network,
            recorder: recorder.as_ref(),
            tap,
            options,
        };
        self.ask_model(route, function, &args, target, check).await
    }

    /// Where `function`'s replies are replayed and recorded: in a test
    /// build, the configured cassette, else the package's own
    /// (`vox/cassettes`) when it has a file for the function; otherwise
    /// the configured cassette, else the reply cache.
    fn recorder_for(&self, function: &AiFunction) -> Option<Recorder> {
        let inner = &self.inner;
        if function.test_cassettes().is_none() && !inner.config.test_build {
            return inner.cassette.clone().or_else(|| inner.cache.clone());
        }
        if let Some(cassette) = &inner.test_cassette {
            return Some(cassette.clone());
        }
        let dir = function.test_cassettes()?;
        let recorder = Recorder::cassette(Path::new(dir), inner.test_cassette_mode);
        (recorder.has_file_for(function.name()) || inner.test_cassette_mode == CassetteMode::Record)
            .then_some(recorder)
    }

    /// Where `function`'s calls go first: the provider of its model's
    /// `provider:` prefix, else the configured one.
    fn primary_target<'f>(
        &'f self,
        function: &'f AiFunction,
        options: &'f CallOptions,
    ) -> Target<'f> {
        let config = &self.inner.config;
        let model = options.model.as_deref().or(function.model());
        match model.map(Provider::split_model) {
            Some((Some(provider), name)) => Target {
                provider,
                model: self.model_or_default(provider, name),
                named: model,
                route: None,
            },
            Some((None, name)) => Target {
                provider: config.provider,
                model: self.model_or_default(config.provider, name),
                named: if name.trim().is_empty() {
                    config.default_model.as_deref()
                } else {
                    model
                },
                route: None,
            },
            None if !config.round_robin.is_empty() => {
                let i = self.inner.router.pick(&config.round_robin);
                let next = &config.round_robin[i];
                Target {
                    provider: next.provider,
                    model: self.model_or_default(next.provider, &next.model),
                    // Which target served a call is the rotation's choice,
                    // not the program's: cassette keys leave it out.
                    named: None,
                    route: Some(i),
                }
            }
            None => Target {
                provider: config.provider,
                model: config.default_model(),
                named: config.default_model.as_deref(),
                route: None,
            },
        }
    }

    fn model_or_default<'m>(&'m self, provider: Provider, model: &'m str) -> &'m str {
        if !model.trim().is_empty() {
            model
        } else if provider == self.inner.config.provider {
            self.inner.config.default_model()
        } else {
            provider.default_model()
        }
    }

    /// The network side of `call_ai`. Generic over the return type only
    /// (the fixture's type differs for every `@ai` function, the return
    /// type is often shared), and all it adds to the non-generic
    /// conversation is deserializing into `T`.
    async fn ask_model<T: DeserializeOwned + Send, C: ValueCheck<T>>(
        &self,
        route: Route<'_>,
        function: &AiFunction,
        args: &Args,
        target: Target<'_>,
        check: &C,
    ) -> Result<T, Error> {
        let output = function.output();
        let repair = self.inner.config.repair;
        let mut value = None;
        let mut accept = |content: &str| {
            let (parsed, repairs) = parse_reply::<T>(content, output, repair)?;
            check.check(&parsed)?;
            value = Some(parsed);
            Ok(repairs)
        };
        // One span for the whole call, attempts and fallbacks inside it
        // (docs/runtime.md, "OpenTelemetry").
        let span = telemetry::call_span(function.name(), target.provider, target.model);
        let trace = CallTrace::default();
        let traced = Traced {
            span: &span,
            trace: &trace,
        };
        let asked = async {
            match self
                .converse(route, traced, function, args, target, &mut accept)
                .await
            {
                Ok(()) => Ok(()),
                Err(error) => {
                    self.fall_back(route, traced, function, args, target, error, &mut accept)
                        .await
                }
            }
        };
        // Without a subscriber listening, entering the span on every poll
        // is pure overhead.
        let asked = if span.is_disabled() {
            asked.await
        } else {
            let asked = asked.instrument(span.clone()).await;
            trace.finish(&span, asked.as_ref().err());
            asked
        };
        asked?;
        // `converse` succeeds only once `accept` has stored a value.
        value.ok_or_else(|| {
            Error::MalformedResponse("internal error: an accepted reply left no value".into())
        })
    }

    /// After `first` failed with `error`: the function's fallbacks (else
    /// the configured ones) in order, while each failure is one worth
    /// falling back from (docs/runtime.md, "Fallbacks").
    #[allow(clippy::too_many_arguments)]
    async fn fall_back(
        &self,
        route: Route<'_>,
        traced: Traced<'_>,
        function: &AiFunction,
        args: &Args,
        first: Target<'_>,
        error: Error,
        accept: &mut (dyn FnMut(&str) -> Result<Repairs, String> + Send),
    ) -> Result<(), Error> {
        let config = &self.inner.config;
        let mut fallbacks: Vec<Result<ModelRef, Error>> =
            match (&route.options.fallback, function.fallback()) {
                (Some(list), _) => list.iter().map(|m| m.parse::<ModelRef>()).collect(),
                (None, Some(list)) => list.iter().map(|m| m.parse::<ModelRef>()).collect(),
                (None, None) => config.fallback.iter().cloned().map(Ok).collect(),
            };
        let rotation = &config.round_robin;
        if let (Some(i), true) = (first.route, falls_back(&error)) {
            // The rotation's target failed: skipped for the cool-off, and
            // the call goes on with the others in turn, then the fallbacks.
            self.inner
                .router
                .mark_down(i, rotation.len(), config.route_cooloff);
            let others: Vec<Result<ModelRef, Error>> = (1..rotation.len())
                .map(|k| (i + k) % rotation.len())
                .filter(|k| !self.inner.router.is_down(*k))
                .map(|k| Ok(rotation[k].clone()))
                .collect();
            fallbacks.splice(0..0, others);
        }
        if fallbacks.is_empty() || !falls_back(&error) {
            return Err(error);
        }
        let mut tried = vec![failure(first.provider, first.model, error)];
        for fallback in fallbacks {
            let previous = &tried[tried.len() - 1];
            let result = match &fallback {
                Ok(next) if next.provider == Provider::Fixture => Err(Error::Config(
                    "`fixture` cannot be a fallback (it never fails)".into(),
                )),
                Ok(next) => {
                    tracing::warn!(
                        function = function.name(),
                        from = %format_args!("{}:{}", previous.provider, previous.model),
                        to = %next,
                        error = %previous.error,
                        "vox.provider_fallback"
                    );
                    if let Some(report) = &route.options.report {
                        report.with(|r| r.fallbacks += 1);
                    }
                    traced
                        .trace
                        .fallbacks
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if let Some(tap) = route.tap {
                        tap.retry(&format!("falling back to `{next}`: {}", previous.error));
                    }
                    let named = next.to_string();
                    let in_rotation = first
                        .route
                        .and_then(|_| rotation.iter().position(|t| t == next));
                    let target = Target {
                        provider: next.provider,
                        model: self.model_or_default(next.provider, &next.model),
                        named: if in_rotation.is_some() {
                            None
                        } else {
                            Some(&named)
                        },
                        route: in_rotation,
                    };
                    let result = self
                        .converse(route, traced, function, args, target, accept)
                        .await;
                    if let (Some(k), Err(e)) = (in_rotation, &result) {
                        if falls_back(e) {
                            self.inner
                                .router
                                .mark_down(k, rotation.len(), config.route_cooloff);
                        }
                    }
                    result
                }
                Err(e) => Err(e.clone()),
            };
            let error = match result {
                Ok(()) => return Ok(()),
                Err(error) => error,
            };
            // A fallback that cannot be used (no key, a bad entry) does not
            // end the search; a model that answered badly does.
            let go_on = falls_back(&error) || matches!(error, Error::Config(_));
            let (provider, model) = match &fallback {
                Ok(next) => (next.provider, next.model.as_str()),
                Err(_) => (first.provider, "(invalid fallback)"),
            };
            tried.push(failure(provider, model, error));
            if !go_on {
                break;
            }
        }
        Err(Error::AllProvidersFailed {
            function: function.name().to_owned(),
            tried,
        })
    }

    /// The re-prompt loop against one provider and model, compiled once:
    /// asks until `accept` takes a reply's content, re-prompting with its
    /// error, for up to `max_iterations` attempts.
    async fn converse(
        &self,
        route: Route<'_>,
        traced: Traced<'_>,
        function: &AiFunction,
        args: &Args,
        target: Target<'_>,
        accept: &mut (dyn FnMut(&str) -> Result<Repairs, String> + Send),
    ) -> Result<(), Error> {
        let config = &self.inner.config;
        let mut call = Call::start(
            config,
            function,
            args,
            target,
            route.options,
            &self.inner.spent,
        )?;
        call.call_span = traced.span.clone();
        if !call.conversation.media.is_empty() {
            // Placeholders, media types and sizes (or URL hosts): never
            // content.
            traced.span.in_scope(|| {
                tracing::debug!(media = ?call.conversation.media, "vox.ai_media");
            });
        }
        let fallback = traced
            .trace
            .fallbacks
            .load(std::sync::atomic::Ordering::Relaxed);
        // Built when the first attempt goes to the server: a replayed call
        // needs no key and no URL.
        let mut sender: Option<&Sender> = None;
        let schema = route.recorder.map(|_| keyed_schema(function));
        if schema.is_some() && !call.conversation.media.is_empty() {
            call.keyed_arguments = Some(arguments_with_media(
                args.as_json(),
                &call.conversation.media,
            ));
        }
        let tools = function.tools();
        loop {
            if call.attempt >= call.max_steps {
                return Err(Error::StepLimit {
                    function: function.name().to_owned(),
                    steps: call.attempt,
                    last_calls: call.last_calls.clone(),
                });
            }
            call.attempt += 1;
            call.span = telemetry::request_span(
                traced.span,
                &telemetry::Asked {
                    provider: target.provider,
                    model: call.parts.model(),
                    attempt: call.attempt,
                    fallback,
                    temperature: call.parts.temperature,
                    max_tokens: call.max_tokens,
                },
            );
            let started = std::time::Instant::now();
            let taped = match (route.recorder, &schema) {
                (Some(recorder), Some(schema)) => {
                    let request = call.request(args, schema.clone());
                    let lookup = recorder.lookup(&request, route.network.is_some())?;
                    Some((recorder, request, lookup))
                }
                _ => None,
            };
            let body: Bytes;
            let replayed: Recorded;
            let mut streamed = Streamed::default();
            let answer = match &taped {
                Some((_, _, Lookup::Hit(recorded))) => {
                    if let Some(failure) = recorded.as_error() {
                        return Err(failure);
                    }
                    replayed = recorded.clone();
                    if let (Some(tap), Some(content)) = (route.tap, replayed.content.as_deref()) {
                        // A recorded reply streams in pieces, as it came.
                        tap.replay(content, REPLAY_PIECE);
                    }
                    Answer::replayed(&replayed)
                }
                _ => {
                    let transport = match sender {
                        Some(sender) => sender,
                        None => {
                            let built = self.network_sender(route, target)?;
                            sender = Some(built);
                            built
                        }
                    };
                    let recording = taped
                        .as_ref()
                        .map(|(recorder, request, _)| (*recorder, request));
                    // Streamed (for a tap) or whole; judged the same way.
                    // A function with tools asks each step whole (a turn
                    // of calls is not a value to show) and shows the final
                    // answer once it is accepted.
                    let asked = match route.tap.filter(|_| tools.is_empty()) {
                        Some(tap) => {
                            tap.begin();
                            call.ask_stream(transport, config, Some(tap), &mut streamed)
                                .await
                                .map(|()| None)
                        }
                        None => call.ask(transport).await.map(Some),
                    };
                    let whole = match asked {
                        Ok(whole) => whole,
                        Err(error) => {
                            call.span
                                .record("error.type", telemetry::error_type(&error));
                            // The report counts them when the call drops.
                            traced
                                .trace
                                .retried(call.retries.load(std::sync::atomic::Ordering::Relaxed));
                            // What a call falls back from is recorded, so
                            // the fallback replays too.
                            let error = transport.redact_malformed(error);
                            if let (Some((recorder, request)), Some(failure)) = (
                                recording,
                                Recorded::failure(&error).filter(|_| falls_back(&error)),
                            ) {
                                recorder.save(request, failure)?;
                            }
                            return Err(error);
                        }
                    };
                    let answer = match whole {
                        Some(whole) => {
                            body = whole;
                            // serde_json quotes the reply in its errors:
                            // redact them.
                            parse_response(call.parts.wire(), &body, transport.redactor())
                                .map_err(|e| transport.redact_malformed(e))?
                        }
                        None => streamed.answer(),
                    };
                    if let Some((recorder, request)) = recording {
                        recorder
                            .save(request, answer.recorded(&|text| self.redact_recorded(text)))?;
                    }
                    answer
                }
            };
            let was_replayed = matches!(&taped, Some((_, _, Lookup::Hit(_))));
            drop(taped);
            let mut answer = answer;
            let answer_tool = call.parts.tool.as_ref().map(|(name, _)| &**name);
            answer.settle_tools(!tools.is_empty(), answer_tool);
            let calls = std::mem::take(&mut answer.tool_calls);
            call.record_usage(&answer.usage, !was_replayed);
            let verdict = if calls.is_empty() {
                answer.content().and_then(|content| {
                    accept(content).map_err(|error| answer.rejection(error, content))
                })
            } else {
                // A turn of tool calls: judged when the final answer comes.
                Ok(Repairs::default())
            };
            // What the server said about its answer, for a listening
            // subscriber or a report.
            let observed = !call.span.is_disabled();
            let retries = call.retries.swap(0, std::sync::atomic::Ordering::Relaxed);
            let meta = if observed || route.options.report.is_some() {
                answer.meta.clone()
            } else {
                crate::reply::ResponseMeta::default()
            };
            if observed {
                let rejected = verdict.as_ref().err().map(|r| r.error.as_str());
                telemetry::record_request(&call.span, &answer.usage, &meta, was_replayed, rejected);
                if config.trace_content {
                    let redactor = sender
                        .map(Sender::redactor)
                        .unwrap_or(&self.inner.recording_redactors[0]);
                    let reply = answer
                        .content
                        .as_deref()
                        .map(|c| redactor.shown(c, usize::MAX));
                    telemetry::record_content(
                        &call.span,
                        function.instruction(),
                        &redactor.shown(args.as_json(), usize::MAX),
                        reply.as_deref(),
                    );
                }
                traced.trace.attempt(&answer.usage, meta.clone(), retries);
            }
            let usage = answer.usage;
            let cost = || {
                config.price_of(call.parts.model()).map(|p| {
                    p.cost(
                        usage.prompt_tokens.unwrap_or(0),
                        usage.cached_tokens.unwrap_or(0),
                        usage.completion_tokens.unwrap_or(0),
                    )
                })
            };
            if !was_replayed {
                telemetry::usage_event(function.name(), call.parts.model(), &usage, cost);
            }
            if let Some(report) = &route.options.report {
                let model = call.parts.model().to_owned();
                let cost = cost();
                let rejected = verdict.as_ref().err().map(|r| r.error.clone());
                report.with(|r| {
                    r.transport_retries += retries as u32;
                    r.attempts.push(AttemptReport {
                        provider: target.provider,
                        model,
                        response_model: meta.model,
                        finish_reason: meta.finish_reason,
                        input_tokens: usage.prompt_tokens,
                        output_tokens: usage.completion_tokens,
                        cached_tokens: usage.cached_tokens,
                        reasoning_tokens: usage.reasoning_tokens,
                        latency: started.elapsed(),
                        rejected,
                        replayed: was_replayed,
                        cost_usd: if was_replayed { Some(0.0) } else { cost },
                    });
                });
            }
            if !calls.is_empty() {
                call.last_calls = calls
                    .iter()
                    .map(|c| redactor_shown_name(&c.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                let timeout = route.options.tool_timeout.unwrap_or(DEFAULT_TOOL_TIMEOUT);
                let step =
                    crate::tools::run_calls(function.name(), tools, calls, timeout, &call.span)
                        .await;
                if route.recorder.is_some() {
                    call.turns.push(Turn {
                        reply: self.redact_recorded(&step.keyed_calls()),
                        correction: self.redact_recorded(&step.keyed_results()),
                    });
                }
                call.tool_steps += 1;
                call.conversation.turns.push(Step::Tools(step));
                continue;
            }
            match verdict {
                Ok(repairs) => {
                    if !repairs.is_empty() {
                        call.record_repairs(&repairs);
                    }
                    if let (Some(tap), false, Some(content)) =
                        (route.tap, tools.is_empty(), answer.content.as_deref())
                    {
                        if !was_replayed {
                            tap.replay(content, REPLAY_PIECE);
                        }
                    }
                    return Ok(());
                }
                Err(rejection) => {
                    let redactor = sender
                        .map(Sender::redactor)
                        .unwrap_or(&self.inner.recording_redactors[0]);
                    if route.recorder.is_some() {
                        call.turns.push(Turn {
                            reply: self.redact_recorded(&rejection.reply),
                            correction: self.redact_recorded(&rejection.error),
                        });
                    }
                    let reason = route.tap.map(|_| rejection.error.clone());
                    call.reject(rejection, redactor)?;
                    // Another attempt follows: what this one showed is void.
                    if let (Some(tap), Some(reason)) = (route.tap, reason) {
                        tap.retry(&redactor.shown_message(&reason, LAST_ERROR_CHARS));
                    }
                }
            }
        }
    }

    /// The sender of `target`'s provider, for an attempt that goes to the
    /// network.
    fn network_sender<'c>(
        &'c self,
        route: Route<'c>,
        target: Target<'_>,
    ) -> Result<&'c Sender, Error> {
        let network = route.network.ok_or_else(|| {
            Error::Config("internal error: a call without a provider went to the network".into())
        })?;
        network.sender(&self.inner.config, target.provider)
    }

    /// The first request a call of `function` with `args` would send —
    /// method, URL, headers (the key `[redacted]`) and JSON body, streamed
    /// or not — without sending anything (`cargo vox call --dry-run`). A
    /// configuration error under the `fixture` provider, which sends none.
    pub fn preview_request(
        &self,
        function: &AiFunction,
        options: &CallOptions,
        args: &Args,
        stream: bool,
    ) -> Result<RequestPreview, Error> {
        let config = &self.inner.config;
        let target = self.primary_target(function, options);
        let network = self.inner.network.as_ref().filter(|_| target.provider != Provider::Fixture).ok_or_else(|| {
            Error::Config(
                "the `fixture` provider sends no request: set VOX_LLM_PROVIDER (and a key) to see the one a provider would get".into(),
            )
        })?;
        let sender = network.sender(config, target.provider)?;
        let call = Call::start(config, function, args, target, options, &self.inner.spent)?;
        let wire = call.parts.wire();
        let mut body = call.parts.request_body(&call.conversation).to_vec();
        if stream {
            body = wire.protocol().stream_body(&body);
        }
        let (url, headers) = sender.preview(wire, call.parts.model(), stream)?;
        Ok(RequestPreview {
            method: "POST",
            url: url.to_string(),
            headers,
            body: serde_json::from_slice(&body)
                .map_err(|e| Error::MalformedResponse(e.to_string()))?,
        })
    }

    /// The provider and model `function`'s calls go to first (the batch
    /// runner submits to them).
    pub(crate) fn first_target(
        &self,
        function: &AiFunction,
        options: &CallOptions,
    ) -> (Provider, String) {
        let target = self.primary_target(function, options);
        (target.provider, target.model.to_owned())
    }

    /// The sender for `provider`, for the batch runner; a configuration
    /// error under the fixture provider, which has no network.
    pub(crate) fn sender_for(&self, provider: Provider) -> Result<&Sender, Error> {
        let network = self.inner.network.as_ref().ok_or_else(|| {
            Error::Config(format!(
                "provider `{}` makes no requests: a batch needs a provider with a batch API",
                self.inner.config.provider
            ))
        })?;
        network.sender(&self.inner.config, provider)
    }

    /// A normal call of `function` with `args` and its re-prompt loop and
    /// fallbacks, as `call_ai` makes it under a network provider: what the
    /// batch runner re-runs an item whose batch reply was rejected or
    /// missing with.
    pub(crate) async fn rerun<T: DeserializeOwned + Send, C: ValueCheck<T>>(
        &self,
        function: &AiFunction,
        options: &CallOptions,
        args: &Args,
        check: &C,
    ) -> Result<T, Error> {
        let recorder = self.recorder_for(function);
        let route = Route {
            network: self.inner.network.as_ref(),
            recorder: recorder.as_ref(),
            tap: None,
            options,
        };
        let target = self.primary_target(function, options);
        self.ask_model(route, function, args, target, check).await
    }

    /// `text` without any credential this client is configured with: what
    /// a cassette or the reply cache may keep.
    fn redact_recorded(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for redactor in &self.inner.recording_redactors {
            text = redactor.redact(&text);
        }
        text
    }
}

/// Says once per process that a test's `@ai` calls run their fixture
/// bodies although a provider is configured (docs/runtime.md, "Tests").
fn note_test_fixture() {
    static NOTED: AtomicBool = AtomicBool::new(false);
    if !NOTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "note: vox-runtime: a test build calls no LLM provider without a cassette; \
             @ai functions run their fixture bodies (record real replies with \
             `cargo vox test --record`, or set VOX_LLM_LIVE=1 to call the provider)"
        );
    }
}

fn failure(provider: Provider, model: &str, error: Error) -> ProviderFailure {
    ProviderFailure {
        provider: provider.name().to_owned(),
        model: model.to_owned(),
        error: Box::new(error),
    }
}

/// Whether a failure is one to try a fallback after: the server could not
/// be reached or, after the transport's retries, still failed in a way the
/// transport would retry ([`is_retryable_failure`]: 429, 408, 5xx — 529
/// included — but not a 5xx that says the request is invalid); not another
/// 4xx, nor a model that answered badly.
fn falls_back(error: &Error) -> bool {
    match error {
        Error::Transport { .. } => true,
        Error::Http {
            status,
            body_excerpt,
        } => is_retryable_failure(*status, body_excerpt),
        _ => false,
    }
}

/// The state of one `@ai` call against a server: the conversation so far,
/// the attempt number and the tracing span.
struct Call<'a> {
    function: &'a AiFunction,
    /// The model as the program names it (see `Target::named`).
    named: Option<&'a str>,
    /// The rejected attempts so far, as a cassette key takes them.
    turns: Vec<Turn>,
    /// The function's constant request parts, kept by the function.
    parts: Cow<'a, RequestParts>,
    conversation: Conversation,
    /// The arguments as a cassette keys them, when they hold media.
    keyed_arguments: Option<String>,
    /// Model requests so far (tool turns included).
    attempt: u32,
    /// Of the requests, those answered by tool calls.
    tool_steps: u32,
    /// The model requests allowed in all (docs/runtime.md, "Tools").
    max_steps: u32,
    /// The tools the last turn called, for the step-limit error.
    last_calls: String,
    /// The previous rejected reply, to notice the model repeating it.
    previous_reply: Option<String>,
    /// Whether the temperature was stepped up after a runaway or repeat.
    stepped: bool,
    /// Attempts before giving up (the function's, or the call's option).
    attempts_allowed: u32,
    /// The call's own request timeout, if it set one.
    timeout: Option<std::time::Duration>,
    /// The call's token budget, and the tokens its attempts used so far.
    budget: Option<u64>,
    used_tokens: u64,
    /// The client's budget and what all its calls spent.
    client_budget: Option<(u64, Arc<std::sync::atomic::AtomicU64>)>,
    /// Transport retries since the last attempt was reported.
    retries: std::sync::atomic::AtomicU64,
    /// Where the call's report goes, if anywhere.
    report: Option<crate::ReportHandle>,
    /// The completion limit the requests ask for.
    max_tokens: u32,
    /// The whole call's span, and the current attempt's inside it.
    call_span: tracing::Span,
    span: tracing::Span,
}

impl<'a> Call<'a> {
    fn start(
        config: &Config,
        function: &'a AiFunction,
        args: &Args,
        target: Target<'a>,
        options: &CallOptions,
        spent: &Arc<std::sync::atomic::AtomicU64>,
    ) -> Result<Call<'a>, Error> {
        let facts = target.provider.facts();
        let (wire, rules) = match Backend::of(target.provider, config) {
            Backend::Network(wire) => (
                wire,
                Some(Rules {
                    provider: facts.name,
                    facts: &facts.media,
                }),
            ),
            // A cassette replays under `fixture` without a server: the
            // request is rendered for its key's sake, never sent.
            Backend::Fixture => (Wire::offline(config), None),
        };
        let max_tokens = options
            .max_tokens
            .or(function.max_tokens())
            .unwrap_or(config.max_tokens);
        let conversation =
            Conversation::start(function.framing(), args, rules, wire.lists_media_in_text())?;
        let mut parts = function.request_parts(
            wire,
            target.model,
            max_tokens,
            Some(
                config
                    .state_shape
                    .decide(wire.states_shape(!function.tools().is_empty())),
            ),
        )?;
        if let Some(t) = options.temperature {
            parts.to_mut().set_temperature(t);
        }
        Ok(Call {
            function,
            named: target.named,
            turns: Vec::new(),
            attempts_allowed: options
                .max_iterations
                .map_or(function.attempts_allowed(), |n| n.max(1)),
            timeout: options.request_timeout,
            budget: options.token_budget,
            used_tokens: 0,
            client_budget: config
                .token_budget
                .map(|budget| (budget, Arc::clone(spent))),
            retries: std::sync::atomic::AtomicU64::new(0),
            report: options.report.clone(),
            parts,
            conversation,
            keyed_arguments: None,
            attempt: 0,
            tool_steps: 0,
            max_steps: options.max_steps.map_or(function.max_steps(), |n| n.max(1)),
            last_calls: String::new(),
            previous_reply: None,
            stepped: false,
            max_tokens,
            call_span: tracing::Span::none(),
            span: tracing::Span::none(),
        })
    }

    /// This attempt as a cassette keys it: media by a hash of their
    /// content, never their bytes.
    fn request<'r>(&'r self, args: &'r Args, schema: String) -> Request<'r> {
        let arguments = self.keyed_arguments.as_deref().unwrap_or(args.as_json());
        Request {
            function: self.function.name(),
            model: self.named,
            instruction: self.function.instruction(),
            schema,
            arguments,
            conversation: &self.turns,
        }
    }

    /// Sends this attempt through `transport` and returns the response
    /// body.
    async fn ask(&self, transport: &Sender) -> Result<Bytes, Error> {
        let body = self.parts.request_body(&self.conversation);
        self.within_budget(body.len())?;
        let post = transport.post(self.parts.model(), body, self.timeout, Some(&self.retries));
        // Without a subscriber listening, entering the span on every poll
        // is pure overhead.
        if self.span.is_disabled() {
            post.await
        } else {
            post.instrument(self.span.clone()).await
        }
    }

    /// Sends this attempt as a streamed request through `transport`,
    /// reading the events into `streamed` and the content so far into
    /// `tap` as each chunk arrives (docs/runtime.md, "Streaming").
    async fn ask_stream(
        &self,
        transport: &Sender,
        config: &Config,
        tap: Option<&Tap>,
        streamed: &mut Streamed,
    ) -> Result<(), Error> {
        let wire = self.parts.wire();
        let protocol = wire.protocol();
        let body = Bytes::from(protocol.stream_body(&self.parts.request_body(&self.conversation)));
        self.within_budget(body.len())?;
        let url = transport.stream_url(wire, self.parts.model())?;
        let redactor = transport.redactor();
        let mut events = Events::new(protocol.framing());
        let mut saw_event = false;
        // The body's start, while no event was seen: a server that ignored
        // the request to stream answers with a whole response instead.
        let mut head: Vec<u8> = Vec::new();
        {
            let streamed = &mut *streamed;
            let mut sink = |chunk: &[u8]| -> Result<bool, Error> {
                events.push(chunk, &mut |event| {
                    saw_event = true;
                    protocol.read_event(&event, streamed, redactor)
                })?;
                if !saw_event && head.len() < WHOLE_ANSWER_PROBE {
                    head.extend_from_slice(chunk);
                } else if saw_event {
                    head = Vec::new();
                }
                Ok(tap.is_some_and(|tap| {
                    tap.content(&streamed.content);
                    tap.waiting()
                }))
            };
            let post = transport.post_stream(
                self.parts.model(),
                &url,
                body,
                StreamLimits::of(config),
                Some(&self.retries),
                &mut sink,
            );
            if self.span.is_disabled() {
                post.await?;
            } else {
                post.instrument(self.span.clone()).await?;
            }
        }
        let whole = !saw_event && head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if whole {
            let answer = parse_response(wire, &head, redactor)?;
            streamed.take_whole(&answer);
        } else {
            events.finish(&mut |event| protocol.read_event(&event, streamed, redactor))?;
        }
        if let Some(tap) = tap {
            tap.content(&streamed.content);
            tap.end();
        }
        Ok(())
    }

    /// Refuses the next attempt, a request of `body_bytes`, when it could
    /// cross the call's token budget: the tokens used so far and the
    /// request's own (about four bytes a token) must fit (docs/runtime.md,
    /// "Budgets").
    fn within_budget(&self, body_bytes: usize) -> Result<(), Error> {
        let needed = (body_bytes as u64).div_ceil(4);
        let client = self
            .client_budget
            .as_ref()
            .map(|(budget, spent)| (*budget, spent.load(std::sync::atomic::Ordering::Relaxed)));
        for (budget, used) in [self.budget.map(|b| (b, self.used_tokens)), client]
            .into_iter()
            .flatten()
        {
            if used.saturating_add(needed) > budget {
                return Err(Error::BudgetExceeded {
                    function: self.function.name().to_owned(),
                    budget,
                    used,
                    needed,
                    attempt: self.attempt,
                });
            }
        }
        Ok(())
    }

    /// Records an attempt's usage (`spent`: it was not a replay, whose
    /// tokens cost nothing and count in no budget).
    fn record_usage(&mut self, usage: &Usage, spent: bool) {
        if spent {
            let tokens = usage
                .prompt_tokens
                .unwrap_or(0)
                .saturating_add(usage.completion_tokens.unwrap_or(0));
            self.used_tokens = self.used_tokens.saturating_add(tokens);
            if let Some((_, total)) = &self.client_budget {
                total.fetch_add(tokens, std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.span.in_scope(|| {
            tracing::info!(
                attempt = self.attempt,
                prompt_tokens = usage.prompt_tokens,
                completion_tokens = usage.completion_tokens,
                cached_tokens = usage.cached_tokens,
                reasoning_tokens = usage.reasoning_tokens,
                "vox.ai_attempt"
            );
        });
    }

    /// Records the repairs that made the accepted reply fit: one
    /// `vox.ai_reply_repaired` event naming them, and their number as the
    /// span's `repairs` field (docs/runtime.md, "Repairs").
    #[cold]
    fn record_repairs(&self, repairs: &Repairs) {
        self.call_span.record("repairs", repairs.len());
        self.span.in_scope(|| {
            tracing::info!(
                attempt = self.attempt,
                repairs = %repairs,
                count = repairs.len(),
                "vox.ai_reply_repaired"
            );
        });
    }

    /// Records a rejected reply: the next attempt carries it and a
    /// correction quoting why, or, when the attempts are used up,
    /// `Error::InvalidOutput`.
    fn reject(&mut self, rejection: RejectedReply, redactor: &Redactor) -> Result<(), Error> {
        // Tool turns are steps, not attempts at the answer.
        let attempt = self.attempt - self.tool_steps;
        self.last_calls = "no tool (its answer was rejected)".into();
        // The reason is ours, one problem per line, quoting the reply with
        // its control characters escaped; redacted and bounded here.
        let error = redactor.shown_message(&rejection.error, LAST_ERROR_CHARS);
        self.span.in_scope(|| {
            tracing::warn!(attempt, error = %error, "vox.ai_attempt_rejected");
        });
        let attempts_allowed = self.attempts_allowed;
        // The same reply, word for word, after a correction: asking again
        // would get it once more (docs/runtime.md, "What the model sees").
        let repeated = self.previous_reply.as_deref() == Some(rejection.reply.as_str());
        // A reply that ran to the length limit or repeated the previous one
        // is not asked for again the same way: the temperature steps up,
        // once per call, where the function sets one below the cap
        // (docs/runtime.md, "What the model sees").
        let temperature = self.parts.temperature.filter(|t| *t < TEMPERATURE_STEP_CAP);
        let step = (rejection.cut_off || repeated) && !self.stepped && temperature.is_some();
        if attempt < attempts_allowed && (!repeated || step) {
            if let (true, Some(from)) = (step, temperature) {
                let to = (from.max(0.0) + TEMPERATURE_STEP).min(TEMPERATURE_STEP_CAP);
                self.parts.to_mut().set_temperature(to);
                self.stepped = true;
                self.span.in_scope(|| {
                    tracing::info!(attempt, from, to, "vox.ai_temperature_step");
                });
            }
            self.conversation.push_correction(&rejection);
            self.previous_reply = Some(rejection.reply);
            return Ok(());
        }
        let last_error = if repeated && attempt < attempts_allowed {
            redactor.shown_message(
                &format!(
                    "{}\n(the model repeated its previous reply word for word after the \
                     correction; not asked again)",
                    rejection.error
                ),
                LAST_ERROR_CHARS,
            )
        } else {
            error
        };
        Err(Error::InvalidOutput {
            function: self.function.name().to_owned(),
            attempts: attempt,
            last_error,
            last_reply: redactor.shown(&rejection.reply, LAST_REPLY_CHARS),
        })
    }
}

/// A streamed request answered by a whole response (a server that does
/// not stream) is recognised in a body of at most this many bytes
/// without an event.
const WHOLE_ANSWER_PROBE: usize = 16 * 1024 * 1024;

/// The schema as a cassette keys it: its name and a hash of its text and,
/// for a function with worked examples or tools, of those too (the model
/// sees them: a changed example or tool is a miss, not a stale replay).
fn keyed_schema(function: &AiFunction) -> String {
    let output = function.output();
    if function.examples().is_empty() && function.tools().is_empty() {
        return schema_id(output.name(), output.json_text());
    }
    let mut text = output.json_text().to_owned();
    for example in function.examples() {
        text.push_str("\u{0}example\u{0}");
        text.push_str(example.arguments);
        text.push('\u{0}');
        text.push_str(example.output);
    }
    for tool in function.tools() {
        text.push_str("\u{0}tool\u{0}");
        text.push_str(tool.name);
        text.push('\u{0}');
        text.push_str(tool.description);
        text.push('\u{0}');
        text.push_str(tool.parameters);
    }
    schema_id(output.name(), &text)
}

/// How long one tool call may run unless the call's options say
/// (`CallOptions::tool_timeout`).
pub const DEFAULT_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A tool's name as the step-limit error shows it (the model chose it).
fn redactor_shown_name(name: &str) -> String {
    format!("`{}`", crate::server_text::server_text(name, 64))
}

/// After a reply cut off by the length limit or repeated word for word,
/// the next attempt's temperature is this much higher, at most
/// [`TEMPERATURE_STEP_CAP`] (docs/runtime.md, "What the model sees").
const TEMPERATURE_STEP: f64 = 0.3;
const TEMPERATURE_STEP_CAP: f64 = 1.0;

impl Drop for Call<'_> {
    /// Retries under a try that ended the attempt with an error still
    /// count in the report.
    fn drop(&mut self) {
        let retries = *self.retries.get_mut();
        if let (Some(report), true) = (&self.report, retries > 0) {
            report.with(|r| r.transport_retries += retries as u32);
        }
    }
}

/// A fixture's value streams in pieces of this many bytes.
const FIXTURE_PIECE: usize = 8;
/// A recorded reply replays as a stream in pieces of this many bytes.
const REPLAY_PIECE: usize = 16;

/// The process-wide client: `Ok` once configured, or the configuration
/// error every call reports.
static DEFAULT_CLIENT: OnceLock<Result<Client, Error>> = OnceLock::new();

/// Sets the process-wide configuration of the default client, which the
/// generated `@ai` functions use.
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
            // A cassette replayed answers every call (a miss is an error),
            // so no fixture body runs and there is nothing to warn about.
            let replaying = config.cassette().is_some()
                && config.cassette_mode() == Some(crate::CassetteMode::Replay);
            if config.fixture_by_default && !replaying {
                eprintln!(
                    "warning: vox-runtime: no LLM provider configured (VOX_LLM_PROVIDER, OPENAI_API_KEY, \
                     OPENROUTER_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY are \
                     unset); @ai functions run their fixture bodies"
                );
            }
            Client::new(config)
        })
        .as_ref()
        .map_err(Clone::clone)
}
