//! build.rs API for Vox.
