//! Exit statuses of `cargo vox`, one place for all commands: defined and
//! documented in `vox_metadata::exit` (also in the README, "Exit status").
//!
//! `run` passes a program's own status through instead.

pub use vox_metadata::exit::{FAILURE, SUCCESS, USAGE};
