//! The Vox compiler.
