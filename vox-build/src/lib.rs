//! build.rs API for Vox: compile a package's `.vox` files to Rust in `OUT_DIR`.

pub mod layout;

pub use layout::{LayoutError, SourceLayout};
