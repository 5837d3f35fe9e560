//! vox-codegen's integration tests, one module per area, linked as one binary.

mod inputs;
mod support;

mod ai_providers;
mod corpus;
mod docs_codes;
mod emit_snapshots;
mod fix_corpus;
mod frontend;
mod heldout_fixes;
mod media;
mod never_panics;
mod slips;
mod snapshots_render;
