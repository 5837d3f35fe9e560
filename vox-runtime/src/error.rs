//! The one error type generated code sees.
//!
//! Every failure of an `@ai` call — bad configuration, an unreachable or
//! failing server, a model that never produced a valid value — is a variant
//! of [`Error`], so generated `async fn`s can propagate it with `?` and never
//! panic. Texts that came from the network are redacted (no API key, no
//! credential, no password of a URL; see `redact`), then bounded and their
//! control characters escaped (see `server_text`) before they are stored
//! here, so `Display` and `Debug` of an `Error` are safe to log: bounded,
//! and no server can start a line or send a terminal an escape sequence.

use std::fmt;

/// Longest excerpt of a server's error body kept in [`Error::Http`].
pub(crate) const BODY_EXCERPT_CHARS: usize = 512;
/// Longest model reply kept in [`Error::InvalidOutput`].
pub(crate) const LAST_REPLY_CHARS: usize = 2_000;
/// Longest rejection reason kept in [`Error::InvalidOutput`] and traced.
pub(crate) const LAST_ERROR_CHARS: usize = 4_000;

/// Why the runtime could not produce a value for an `@ai` call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime is misconfigured: unknown provider, a missing required
    /// environment variable, an invalid base URL, `configure` called twice…
    #[error("vox-runtime configuration error: {0}")]
    Config(String),

    /// A batch job (docs/runtime.md, "Bulk runs") cannot go on: its job
    /// directory cannot be read or written, belongs to another function,
    /// or a batch engine answered in a way the runner cannot use. The job
    /// stays resumable unless the message says otherwise.
    #[error("vox batch: {0}")]
    Batch(String),

    /// The server answered with a non-success status (after transport
    /// retries, for retryable statuses). The excerpt is redacted, truncated
    /// and has its control characters escaped.
    #[error("LLM server answered HTTP {status}: {body_excerpt}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body: redacted, at most 512
        /// characters, control characters escaped (`\n`, `\u{1b}`).
        body_excerpt: String,
    },

    /// The request never got a complete answer: connection refused or
    /// reset, DNS failure, or a timeout (after transport retries).
    #[error("LLM request failed ({kind}): {message}")]
    Transport {
        /// What kind of transport failure this was.
        kind: TransportErrorKind,
        /// A description of the failure: redacted, bounded, escaped.
        message: String,
    },

    /// The model never produced a value of the declared return type within
    /// the function's `max_iterations` attempts.
    #[error(
        "@ai function `{function}` produced no valid output in {attempts} attempt(s); last error: {last_error}"
    )]
    InvalidOutput {
        /// The Vox name of the `@ai` function.
        function: String,
        /// How many attempts (requests answered by the model) were made.
        attempts: u32,
        /// Why the last reply was rejected: every problem by JSON path in
        /// schema terms, the check's problems, a refusal, a cut-off reply…
        /// (docs/runtime.md, "Corrections"); the text the model was given,
        /// redacted, cut to 4,000 characters, and with the control
        /// characters of what it quotes escaped (its own line breaks, one
        /// problem per line, are kept).
        last_error: String,
        /// The last reply's content: redacted, at most 2,000 characters,
        /// control characters escaped (`\n`, `\u{1b}`).
        last_reply: String,
    },

    /// An `@ai` call with tools made its `max_steps` model requests (tool
    /// turns and corrections together) without a final answer
    /// (docs/runtime.md, "Tools").
    #[error(
        "@ai function `{function}` gave no final answer in {steps} model request(s) (max_steps); \
         the last turn called {last_calls}"
    )]
    StepLimit {
        /// The Vox name of the `@ai` function.
        function: String,
        /// The model requests made: the function's `max_steps`.
        steps: u32,
        /// The tools the last turn called, as `lookup_order, search_docs`
        /// (`no tool` when it was a rejected answer).
        last_calls: String,
    },

    /// An argument of the call could not be serialized to JSON.
    #[error("could not serialize argument `{argument}` to JSON: {message}")]
    Serialize {
        /// The argument's name.
        argument: String,
        /// serde_json's error text.
        message: String,
    },

    /// A media argument (an image, a document, audio) cannot be sent: its
    /// file is missing, not a regular file, empty or unreadable; its
    /// content is not of a kind it may be (detected from its first bytes,
    /// never the file name) or not what `from_bytes` said; it is over the
    /// provider's size limit; its URL is not `https`; or the provider does
    /// not take it. Checked before anything is sent. The text names the
    /// argument, the file or the URL's host, the media type and size;
    /// never the content (docs/runtime.md, "Media arguments").
    #[error("cannot send argument `{argument}`: {reason}")]
    Media {
        /// The argument the media is in.
        argument: String,
        /// What is wrong.
        reason: String,
    },

    /// The response body was larger than the configured limit.
    #[error("LLM server response exceeded the limit of {limit_bytes} bytes")]
    ResponseTooLarge {
        /// The configured `max_body_bytes`.
        limit_bytes: usize,
    },

    /// The response body was not valid UTF-8.
    #[error("LLM server response is not valid UTF-8 (invalid byte at offset {valid_up_to})")]
    InvalidUtf8 {
        /// Length of the valid UTF-8 prefix.
        valid_up_to: usize,
    },

    /// A successful response was not a response of the provider's API (a
    /// chat completion, an Anthropic message, a Gemini
    /// `GenerateContentResponse`, an Ollama chat response). The description
    /// (serde_json's, which may quote the reply) is redacted, truncated and
    /// escaped.
    #[error("LLM server sent a malformed response: {0}")]
    MalformedResponse(String),

    /// The server answered with a redirect that was not followed. None is
    /// followed by default; with [`crate::RedirectPolicy::SameOrigin`] only
    /// 307 and 308 to the same scheme, host and port are, a few times. Point
    /// the base URL at the address the server names.
    #[error(
        "LLM server answered HTTP {status} redirecting to {}; not followed (redirects are followed only \
         with VOX_LLM_FOLLOW_REDIRECTS=same-origin, and then only 307/308 to the same scheme, host \
         and port): set the base URL to the new address",
        location.as_deref().unwrap_or("(no Location header)")
    )]
    Redirect {
        /// The HTTP status code (3xx).
        status: u16,
        /// Where the server pointed, resolved against the request's URL,
        /// credentials redacted, truncated, escaped.
        location: Option<String>,
    },

    /// The function's model failed with a transport error or a retryable
    /// status, and so did every fallback tried after it (or a fallback
    /// failed otherwise, which ends the search): each provider tried, in
    /// order, with its error.
    #[error(
        "@ai function `{function}` failed on every provider tried: {}",
        list_failures(tried)
    )]
    AllProvidersFailed {
        /// The Vox name of the `@ai` function.
        function: String,
        /// Each provider and model tried, in order, and why it failed.
        tried: Vec<ProviderFailure>,
    },

    /// The call's token budget (`CallOptions::token_budget`;
    /// docs/runtime.md, "Budgets") would be crossed by its next attempt,
    /// which was not sent: `used` tokens so far, about `needed` more for
    /// the next request.
    #[error(
        "@ai function `{function}`: the call's token budget of {budget} would be crossed \
         ({used} used, about {needed} more for attempt {attempt}); attempt {attempt} was not sent"
    )]
    BudgetExceeded {
        /// The Vox name of the `@ai` function.
        function: String,
        /// The budget, in tokens.
        budget: u64,
        /// Tokens used by the attempts sent.
        used: u64,
        /// The next request's estimated size, in tokens.
        needed: u64,
        /// The attempt that was not sent.
        attempt: u32,
    },

    /// A call's run-time categories (`CallOptions::categories`;
    /// docs/runtime.md, "Categories at run time") are missing or cannot be
    /// sent: nothing was sent.
    #[error("@ai function `{function}`: run-time categories `{type_name}`: {problem}")]
    Categories {
        /// The Vox name of the `@ai` function.
        function: String,
        /// The Vox category type (`(all)` for a limit of the whole schema).
        type_name: String,
        /// What is wrong, and how to give the values.
        problem: String,
    },

    /// A cassette (docs/runtime.md, "Cassettes") has no reply for this
    /// call, and its mode does not allow recording one: `replay`, or no
    /// provider is configured to record with. `differs` says how the
    /// nearest entry recorded for the function differs (empty when the
    /// function has none).
    #[error("@ai function `{function}`: {message}")]
    CassetteMiss {
        /// The Vox name of the `@ai` function.
        function: String,
        /// What differs from the nearest recorded entry.
        differs: Vec<CassetteField>,
        /// Which cassette, the values that differ (bounded), and how to
        /// record the reply.
        message: String,
    },

    /// A cassette or the reply cache could not be read or written: a line
    /// that is not an entry (named by its number; the other entries are
    /// still used), or a file system error.
    #[error("cassette {path}{}: {message}", line.map(|n| format!(", line {n}")).unwrap_or_default())]
    Cassette {
        /// The file.
        path: String,
        /// The line, for a line that is not an entry.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

/// What differs between a call and the nearest entry of its cassette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CassetteField {
    /// The model (`model = …`, `VOX_LLM_MODEL`, or a fallback).
    Model,
    /// The function's doc comment.
    Instruction,
    /// The JSON Schema of the return type.
    Schema,
    /// The arguments of the call.
    Arguments,
    /// The rejected replies and corrections before this attempt.
    Conversation,
}

impl fmt::Display for CassetteField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CassetteField::Model => "model",
            CassetteField::Instruction => "instruction",
            CassetteField::Schema => "schema",
            CassetteField::Arguments => "arguments",
            CassetteField::Conversation => "conversation",
        })
    }
}

/// One provider tried for a call that fell back, and how it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderFailure {
    /// The provider's name (`openai`, `anthropic`…).
    pub provider: String,
    /// The model asked.
    pub model: String,
    /// Why it failed (already redacted).
    pub error: Box<Error>,
}

impl fmt::Display for ProviderFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.provider, self.model, self.error)
    }
}

/// `tried`, one failure after the other.
fn list_failures(tried: &[ProviderFailure]) -> String {
    tried
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; then ")
}

/// The kind of an [`Error::Transport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// No connection could be made (refused, DNS, TLS handshake).
    Connect,
    /// The connect or request timeout elapsed.
    Timeout,
    /// The connection failed while the request or response was in flight.
    Other,
}

impl fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportErrorKind::Connect => "connect",
            TransportErrorKind::Timeout => "timeout",
            TransportErrorKind::Other => "connection",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_well() {
        let e = Error::InvalidOutput {
            function: "extract".into(),
            attempts: 3,
            last_error: "missing field `vendor`".into(),
            last_reply: "{}".into(),
        };
        assert_eq!(
            e.to_string(),
            "@ai function `extract` produced no valid output in 3 attempt(s); last error: missing field `vendor`"
        );
        let e = Error::Transport {
            kind: TransportErrorKind::Timeout,
            message: "operation timed out".into(),
        };
        assert_eq!(
            e.to_string(),
            "LLM request failed (timeout): operation timed out"
        );
    }
}
