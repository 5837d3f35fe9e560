//! The ordered JSON value vox-codegen writes diagnostics and schemas with.
//!
//! It lives in vox-metadata (without serde, so vox-codegen stays free of
//! heavy dependencies), where vox-runtime reads schemas back with the same
//! type: see [`vox_metadata::json`].

pub use vox_metadata::json::{write_string, Json, JsonError};
