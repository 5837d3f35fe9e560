//! cargo-vox's integration tests, one module per area, linked as one binary.

mod batch_cli;
mod call_cli;
mod doctor;
mod eval_cli;
mod eval_example;
mod lsp;
mod lsp_hostile;
mod lsp_never_panics;
