//! Exit statuses of `cargo vox`, one place for all commands (SPEC §8).
//!
//! `run` passes a program's own status through instead.

/// Everything succeeded (warnings allowed).
pub const SUCCESS: i32 = 0;
/// Compile errors, test failures, or a fired error-severity doctor diagnosis.
pub const FAILURE: i32 = 1;
/// The command line was wrong: unknown flag, missing path, unknown doctor id.
pub const USAGE: i32 = 2;
