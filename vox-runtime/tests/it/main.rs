//! vox-runtime's integration tests, one module per area, linked as one binary (the tests that own process-wide state are in `tests/global`).

mod batch_emulator;
mod sloppy;
mod support;

mod ai_calls;
mod ai_checks;
mod batch_engines;
mod call_options;
mod call_path_modules;
mod cassette_processes;
mod cassette_properties;
mod cassettes;
mod hostile_headers;
mod hostile_replies;
mod key_echoes;
mod media_arguments;
mod prompt_caching;
mod providers_anthropic;
mod providers_compatible;
mod providers_fallback;
mod providers_gemini;
mod providers_ollama;
mod providers_redaction;
mod rate_limits;
mod reply_repairs;
mod reprompt_loop;
mod runaway_replies;
mod runtime_categories;
mod security;
mod server_text;
mod streaming;
mod streaming_http;
mod tracing_span;
mod transport_seam;
mod usage_fields;
mod wire_snapshots;
