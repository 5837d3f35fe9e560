//! The machine contract of Vox for Cargo, as Rust types.
//!
//! Everything a program can read from Vox tooling is defined here, once:
//!
//! - [`Envelope`]: the one-line JSON object `cargo vox --json <command>`
//!   prints on stdout for each result (versioned by [`ENVELOPE_VERSION`]);
//! - [`DiagnosticPayload`]: one diagnostic, from the Vox frontend or rustc,
//!   with its [`SpanPayload`], [`FixPayload`]s and [`RelatedSpan`]s;
//! - [`SchemaEnvelope`]: what `cargo vox --json schema` prints on success;
//! - [`Report`]: the diagnostics report vox-build writes to `OUT_DIR` for
//!   every output it compiles (versioned by [`REPORT_VERSION`], named by
//!   [`report_file_name`]);
//! - [`exit`]: the exit statuses of `cargo vox`;
//! - [`providers`]: the table of providers the compiler and the runtime
//!   share (names, `provider:` prefixes, keys and defaults, Anthropic's tool
//!   name, the schema Gemini is given), and [`json`], the small ordered JSON
//!   value both write schemas with.
//!
//! Without the `serde` feature (on by default) only [`providers`], [`json`],
//! [`exit`] and the report file names are compiled, with no dependencies at
//! all: vox-codegen (inside every user's build script) and vox-runtime use
//! the crate that way. The generated-code contract version is deliberately
//! not here: it must travel with the code of each side (vox-codegen's
//! emitter, vox-runtime), or the check that the two agree would compare a
//! number with itself whenever both resolve one version of this crate.
//!
//! `cargo vox` serializes these types; its end-to-end tests deserialize
//! them; vox-codegen and vox-build (which stay free of serde so that build
//! scripts compile fast) write the same JSON by hand, and a test in the
//! workspace (`tests/tests/it/contract.rs`) checks that what they write
//! deserializes into these types and serializes back to exactly the same
//! JSON.
//!
//! # Reading `cargo vox --json`
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use vox_metadata::Envelope;
//!
//! let line = r#"{"envelope_version":1,"command":"check","file_path":"Cargo.toml","ok":true,"error_count":0,"warning_count":0,"diagnostics":[]}"#;
//! let env = Envelope::from_line(line).unwrap();
//! assert!(env.ok);
//! assert_eq!(env.command, "check");
//! # }
//! ```
//!
//! `build`, `test` and `run` print one envelope per line, in order (`test`
//! prints a `build` envelope, then a `test` envelope): read stdout line by
//! line and parse each with [`Envelope::from_line`].
//!
//! # Compatibility
//!
//! Within one [`ENVELOPE_VERSION`] (or [`REPORT_VERSION`]), fields are only
//! ever added, never renamed, removed or given another type, and string
//! fields documented as "one of" may gain values. The types here therefore
//! ignore fields they do not know, and consumers should tolerate unknown
//! values in `command`, `source`, `severity` and `applicability`. An
//! incompatible change bumps the version; [`Envelope::from_line`] and
//! [`Report::from_json`] refuse versions they do not know
//! ([`ParseError::UnsupportedVersion`]).
//!
//! # Exit status
//!
//! | status | constant | meaning |
//! |---|---|---|
//! | 0 | [`exit::SUCCESS`] | success (warnings allowed) |
//! | 1 | [`exit::FAILURE`] | compile errors, test failures, a failure of cargo itself, or a fired error-severity doctor diagnosis |
//! | 2 | [`exit::USAGE`] | usage errors: unknown flag, missing path or package, unknown doctor id |
//!
//! `cargo vox run` passes the program's own status through instead (128 +
//! signal number when it was killed).

#[cfg(feature = "serde")]
mod diagnostic;
#[cfg(feature = "serde")]
mod envelope;
#[cfg(feature = "serde")]
mod error;
pub mod exit;
pub mod json;
pub mod providers;
#[cfg(feature = "serde")]
mod report;
mod report_names;
#[cfg(feature = "serde")]
mod schema;

#[cfg(feature = "serde")]
pub use diagnostic::{
    applicability, codes, severity, source, DiagnosticPayload, EditPayload, FixPayload,
    RelatedSpan, SpanPayload,
};
#[cfg(feature = "serde")]
pub use envelope::{AppliedFix, Envelope, TestFailure, ENVELOPE_VERSION};
#[cfg(feature = "serde")]
pub use error::ParseError;
#[cfg(feature = "serde")]
pub use report::Report;
pub use report_names::{
    is_report_file_name, report_file_name, DEFAULT_OUT_NAME, DEFAULT_REPORT_FILE, REPORT_VERSION,
};
#[cfg(feature = "serde")]
pub use schema::{SchemaArgument, SchemaEnvelope};
