//! Exit statuses of `cargo vox`, the same for every command.
//!
//! `cargo vox run` is the exception: once the program started, its own exit
//! status becomes `cargo vox`'s (128 + the signal number when it was killed
//! by a signal). A failure before it started (the build failed, no binary)
//! uses the statuses below.

/// Everything succeeded; warnings are allowed. The envelope has `"ok":true`.
pub const SUCCESS: i32 = 0;

/// The command ran and failed: Vox or rustc compile errors, failed tests,
/// cargo itself failing (missing, crashed, killed), or, for `cargo vox
/// doctor`, an error-severity diagnosis fired. The envelope has
/// `"ok":false`, with diagnostics or a `message`.
pub const FAILURE: i32 = 1;

/// The command line was wrong: an unknown flag or command, a path or
/// package that does not exist, an unknown doctor id. Under `--json` the
/// envelope (when one is printed) has `"ok":false` and a `message`.
pub const USAGE: i32 = 2;
