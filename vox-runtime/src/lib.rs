//! Runtime for Rust code generated from `.vox` files.
//!
//! Generated code links against this crate: an `@ai` function becomes an
//! `async fn` that asks an LLM, through a [`Client`], for a value of the
//! function's return type under a strict JSON Schema, re-prompts with the
//! exact error when the reply is invalid, and returns a typed [`Error`]
//! instead of panicking. Providers, limits and retries are configured from
//! the environment (see [`Config::from_env`]) or in code ([`configure`],
//! [`Client`]).
//!
//! Modules, in the order a call goes through them: `config` (which server),
//! `ai_function` (what is asked), `prompt` (the conversation and request
//! body), [`transport`] (retries, and the seam where HTTP or another
//! [`transport::Transport`] plugs in), `in_flight` (the concurrency cap and
//! request timeouts), `reply` (judging an answer), `repair` (unambiguous
//! repairs of a reply that does not fit), `correction` (what is wrong with
//! it, by JSON path), `validator` (checks of the value), `redact` (credentials
//! out of anything a server sent back), `server_text` (such text bounded
//! and escaped before it is shown),
//! `client` (the re-prompt loop).
//!
//! What only generated code calls — the static description of an `@ai`
//! function and its arguments, checked `int` arithmetic, `Decimal` and the
//! builtins, the contract check — is in the hidden module `__private`:
//! public so that generated code can name it, not part of the API, and
//! kept in step with the emitter by [`CONTRACT_VERSION`].

#[doc(hidden)]
pub mod __private;
mod ai_function;
mod args;
mod batch;
mod cassette;
mod categories;
mod client;
mod config;
mod correction;
mod error;
mod in_flight;
mod media;
mod options;
mod output;
mod prompt;
mod redact;
mod repair;
mod reply;
mod report;
mod server_text;
mod stream;
mod telemetry;
mod tools;
pub mod transport;
mod validator;
mod wire;

use std::future::Future;

pub use batch::{
    args_from_json, batch_results, BatchItem, BatchOptions, BatchReport, BatchResults, BatchRun,
    Progress, ProgressHook,
};
pub use cassette::CassetteMode;
pub use client::{configure, default_client, Client, ClientBuilder, RequestPreview};
pub use config::{
    Config, ConfigBuilder, ModelRef, Provider, RedirectPolicy, ResponseFormat, StateShape,
    DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_MAX, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_RETRY_AFTER, DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TRANSPORT_RETRIES, DEFAULT_MODEL, DEFAULT_REQUEST_TIMEOUT,
    MAX_CONCURRENT_REQUESTS_LIMIT, MAX_REDIRECTS,
};
pub use error::{CassetteField, Error, ProviderFailure, TransportErrorKind};
/// The `Stream` trait [`AiStream`] implements, re-exported for generated
/// code and for programs without a futures crate of their own.
pub use futures_core;
pub use media::{Audio, Document, Image};
pub use options::CallOptions;
pub use reply::strip_code_fences;
pub use report::{AttemptReport, CallReport, Price, ReportHandle, UsageTotals};
pub use stream::call::{AiStream, StreamEvent};
pub use tools::{Tool, ToolError, ToolFuture};

/// Re-exported so generated code can write
/// `#[serde(crate = "vox_runtime::serde")]` without its own dependency.
pub use serde;
/// Re-exported for generated code.
pub use serde_json;
/// Re-exported for generated code and [`block_on`] users.
pub use tokio;

/// Version of the contract between the code vox-build generates and this
/// crate. Also recorded as `[package.metadata.vox] contract` in this crate's
/// manifest, where `cargo vox doctor` reads it.
pub const CONTRACT_VERSION: u32 = 9;

/// Runs `future` to completion on a new current-thread tokio runtime (with
/// I/O and timers), for generated `#[test]` functions and script `main`s.
///
/// Clients, including the default one, may be used from many `block_on`
/// calls in turn: a pooled connection whose runtime is gone is discarded.
///
/// # Panics
///
/// When called from inside an async runtime (use `.await` there), or if the
/// operating system refuses the runtime's resources.
pub fn block_on<F: Future>(future: F) -> F::Output {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => panic!("vox-runtime could not start a tokio runtime: {e}"),
    }
}

/// Includes the Rust that vox-build generated in `OUT_DIR`.
///
/// `include_vox!()` includes the package's module (`vox_generated.rs`);
/// `include_vox!("name")` includes `name.rs` from `OUT_DIR`.
///
/// ```ignore
/// // src/lib.rs of a crate whose build.rs calls vox_build::compile()
/// vox_runtime::include_vox!();
/// ```
#[macro_export]
macro_rules! include_vox {
    () => {
        include!(concat!(env!("OUT_DIR"), "/vox_generated.rs"));
    };
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $name, ".rs"));
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn manifest_metadata_matches_contract_version() {
        let manifest = include_str!("../Cargo.toml");
        let expected = format!("contract = {}", super::CONTRACT_VERSION);
        assert!(
            manifest.contains(&expected),
            "[package.metadata.vox] must say `{expected}`"
        );
    }
}
