//! The tracing spans of a call, named and attributed after OpenTelemetry's
//! GenAI semantic conventions so that `tracing-opentelemetry` exports them
//! unchanged (docs/runtime.md, "OpenTelemetry").
//!
//! A call is one `vox.ai_call` span (the whole call: every attempt, every
//! fallback); each attempt sent to a model (or replayed from a cassette) is
//! one `vox.ai_request` span inside it, an inference span in the
//! conventions' sense (`chat {model}`, client kind), which covers that
//! attempt's transport retries. Without a subscriber no span is entered and
//! nothing here runs beyond the spans' creation.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use tracing::field::Empty;
use tracing::Span;

use crate::config::Provider;
use crate::error::Error;
pub(crate) use crate::reply::ResponseMeta;
use crate::reply::Usage;

/// `gen_ai.provider.name` of a provider: the conventions' well-known value
/// where there is one (`openai`, `anthropic`, `gcp.gemini`), else the Vox
/// provider's own name.
pub(crate) fn provider_name(provider: Provider) -> &'static str {
    match provider {
        Provider::Gemini => "gcp.gemini",
        other => other.name(),
    }
}

/// The span of a whole call of `function`, first sent to `provider`'s
/// `model`.
pub(crate) fn call_span(function: &str, provider: Provider, model: &str) -> Span {
    tracing::info_span!(
        "vox.ai_call",
        otel.name = %format_args!("vox {function}"),
        function,
        model,
        provider = provider.name(),
        repairs = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider_name(provider),
        gen_ai.request.model = model,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        vox.attempts = Empty,
        vox.fallbacks = Empty,
        vox.transport_retries = Empty,
        error.type = Empty,
    )
}

/// What a request asked for, for its span.
pub(crate) struct Asked<'a> {
    pub provider: Provider,
    pub model: &'a str,
    pub attempt: u32,
    /// 0 for the first target, then 1, 2, … for each fallback.
    pub fallback: u32,
    pub temperature: Option<f64>,
    pub max_tokens: u32,
}

/// The span of one attempt (an inference request), inside `parent`.
pub(crate) fn request_span(parent: &Span, asked: &Asked<'_>) -> Span {
    if parent.is_disabled() {
        return Span::none();
    }
    let span = tracing::info_span!(
        parent: parent,
        "vox.ai_request",
        otel.name = %format_args!("chat {}", asked.model),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider_name(asked.provider),
        gen_ai.request.model = asked.model,
        gen_ai.request.max_tokens = asked.max_tokens,
        gen_ai.request.temperature = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        vox.attempt = asked.attempt,
        vox.fallback = asked.fallback,
        vox.replayed = Empty,
        vox.rejected = Empty,
        error.type = Empty,
    );
    if let Some(t) = asked.temperature {
        span.record("gen_ai.request.temperature", t);
    }
    span
}

/// Records an attempt's outcome on its span.
pub(crate) fn record_request(
    span: &Span,
    usage: &Usage,
    meta: &ResponseMeta,
    replayed: bool,
    rejected: Option<&str>,
) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    if let Some(model) = &meta.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(reason) = &meta.finish_reason {
        span.record("gen_ai.response.finish_reasons", reason.as_str());
    }
    span.record("vox.replayed", replayed);
    if let Some(reason) = rejected {
        span.record("vox.rejected", reason);
        span.record("error.type", "vox.rejected_reply");
    }
}

fn record_usage(span: &Span, usage: &Usage) {
    let fields = [
        ("gen_ai.usage.input_tokens", usage.prompt_tokens),
        ("gen_ai.usage.output_tokens", usage.completion_tokens),
        ("gen_ai.usage.cache_read.input_tokens", usage.cached_tokens),
        (
            "gen_ai.usage.reasoning.output_tokens",
            usage.reasoning_tokens,
        ),
    ];
    for (name, value) in fields {
        if let Some(v) = value {
            span.record(name, v);
        }
    }
}

/// The conversation of an attempt and its reply, recorded on its span only
/// when the configuration opts in (`VOX_LLM_TRACE_CONTENT=1`), already
/// redacted.
pub(crate) fn record_content(span: &Span, instruction: &str, input: &str, output: Option<&str>) {
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.system_instructions", instruction);
    let input =
        serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": input}]}]);
    span.record("gen_ai.input.messages", input.to_string().as_str());
    if let Some(output) = output {
        let output = serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": output}]}]);
        span.record("gen_ai.output.messages", output.to_string().as_str());
    }
}

/// Counts a model request for `cargo vox run` and `test`'s one-line total
/// (docs/runtime.md, "Usage and cost"): when `VOX_LLM_USAGE_EVENTS` names a
/// file, appends `usage FUNCTION MODEL INPUT OUTPUT CACHED REASONING COST`
/// to it, tab-separated (`-` for an unknown count or price), one short
/// `write` per request so the lines of parallel tests do not mix.
pub(crate) fn usage_event(
    function: &str,
    model: &str,
    usage: &Usage,
    cost: impl FnOnce() -> Option<f64>,
) {
    static FILE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let Some(path) = FILE
        .get_or_init(|| std::env::var_os("VOX_LLM_USAGE_EVENTS").map(Into::into))
        .as_deref()
    else {
        return;
    };
    let count = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let cost = cost().map_or_else(|| "-".to_owned(), |c| format!("{c:.9}"));
    // Names never hold tabs or newlines in practice; keep each line one line.
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    let line = format!(
        "usage\t{}\t{}\t{}\t{}\t{}\t{}\t{cost}\n",
        clean(function),
        clean(model),
        count(usage.prompt_tokens),
        count(usage.completion_tokens),
        count(usage.cached_tokens),
        count(usage.reasoning_tokens),
    );
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        use std::io::Write as _;
        let _ = file.write_all(line.as_bytes());
    }
}

/// `error.type` of an error: its kind, low in cardinality.
pub(crate) fn error_type(error: &Error) -> &'static str {
    match error {
        Error::Config(_) => "vox.config",
        Error::Batch(_) => "vox.batch",
        Error::Http { .. } => "vox.http_status",
        Error::Transport { .. } => "vox.transport",
        Error::InvalidOutput { .. } => "vox.invalid_output",
        Error::StepLimit { .. } => "vox.step_limit",
        Error::Serialize { .. } => "vox.serialize",
        Error::Media { .. } => "vox.media",
        Error::ResponseTooLarge { .. } => "vox.response_too_large",
        Error::InvalidUtf8 { .. } => "vox.invalid_utf8",
        Error::MalformedResponse(_) => "vox.malformed_response",
        Error::Redirect { .. } => "vox.redirect",
        Error::AllProvidersFailed { .. } => "vox.all_providers_failed",
        Error::BudgetExceeded { .. } => "vox.budget_exceeded",
        Error::Categories { .. } => "vox.categories",
        Error::CassetteMiss { .. } => "vox.cassette_miss",
        Error::Cassette { .. } => "vox.cassette",
    }
}

/// The totals of a call across its attempts and fallbacks, for the call's
/// span.
#[derive(Default)]
pub(crate) struct CallTrace {
    input: AtomicU64,
    output: AtomicU64,
    cached: AtomicU64,
    reasoning: AtomicU64,
    attempts: AtomicU32,
    /// How many fallbacks the call has moved to so far.
    pub fallbacks: AtomicU32,
    retries: AtomicU64,
    last: Mutex<ResponseMeta>,
}

impl CallTrace {
    /// Adds one attempt.
    pub(crate) fn attempt(&self, usage: &Usage, meta: ResponseMeta, retries: u64) {
        let add = |to: &AtomicU64, v: Option<u64>| {
            to.fetch_add(v.unwrap_or(0), Ordering::Relaxed);
        };
        add(&self.input, usage.prompt_tokens);
        add(&self.output, usage.completion_tokens);
        add(&self.cached, usage.cached_tokens);
        add(&self.reasoning, usage.reasoning_tokens);
        self.attempts.fetch_add(1, Ordering::Relaxed);
        self.retries.fetch_add(retries, Ordering::Relaxed);
        *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = meta;
    }

    /// Adds transport retries under an attempt that ended in an error.
    pub(crate) fn retried(&self, retries: u64) {
        self.retries.fetch_add(retries, Ordering::Relaxed);
    }

    /// Records the totals (and the error, if the call failed) on `span`.
    pub(crate) fn finish(&self, span: &Span, error: Option<&Error>) {
        if span.is_disabled() {
            return;
        }
        let load = |v: &AtomicU64| v.load(Ordering::Relaxed);
        span.record("gen_ai.usage.input_tokens", load(&self.input));
        span.record("gen_ai.usage.output_tokens", load(&self.output));
        span.record("gen_ai.usage.cache_read.input_tokens", load(&self.cached));
        span.record(
            "gen_ai.usage.reasoning.output_tokens",
            load(&self.reasoning),
        );
        span.record("vox.attempts", self.attempts.load(Ordering::Relaxed));
        span.record("vox.fallbacks", self.fallbacks.load(Ordering::Relaxed));
        span.record("vox.transport_retries", load(&self.retries));
        let last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(model) = &last.model {
            span.record("gen_ai.response.model", model.as_str());
        }
        if let Some(reason) = &last.finish_reason {
            span.record("gen_ai.response.finish_reasons", reason.as_str());
        }
        if let Some(error) = error {
            span.record("error.type", error_type(error));
        }
    }
}
