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
//! - [`exit`]: the exit statuses of `cargo vox`.
//!
//! `cargo vox` serializes these types; its end-to-end tests deserialize
//! them; vox-codegen and vox-build (which stay free of serde so that build
//! scripts compile fast) write the same JSON by hand, and a test in the
//! workspace (`tests/tests/contract.rs`) checks that what they write
//! deserializes into these types and serializes back to exactly the same
//! JSON.
//!
//! # Reading `cargo vox --json`
//!
//! ```
//! use vox_metadata::Envelope;
//!
//! let line = r#"{"envelope_version":1,"command":"check","file_path":"Cargo.toml","ok":true,"error_count":0,"warning_count":0,"diagnostics":[]}"#;
//! let env = Envelope::from_line(line).unwrap();
//! assert!(env.ok);
//! assert_eq!(env.command, "check");
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

mod diagnostic;
mod envelope;
mod error;
pub mod exit;
mod report;
mod schema;

pub use diagnostic::{
    applicability, codes, severity, source, DiagnosticPayload, EditPayload, FixPayload,
    RelatedSpan, SpanPayload,
};
pub use envelope::{AppliedFix, Envelope, TestFailure, ENVELOPE_VERSION};
pub use error::ParseError;
pub use report::{
    is_report_file_name, report_file_name, Report, DEFAULT_OUT_NAME, DEFAULT_REPORT_FILE,
    REPORT_VERSION,
};
pub use schema::SchemaEnvelope;
