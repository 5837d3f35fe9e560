//! Runtime for Vox generated code.
