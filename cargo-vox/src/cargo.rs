//! How `cargo vox` finds cargo: every cargo it runs (builds, tests,
//! `cargo metadata`, a script crate's lockfile) is this one.

use std::ffi::OsString;

/// The cargo to run: `$CARGO` (set when invoked as `cargo vox`), else `cargo`.
pub fn cargo_program() -> OsString {
    std::env::var_os("CARGO")
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "cargo".into())
}
