//! The end-to-end tests, one module per area, linked as one binary (`no_paid_calls`, which sets this process's environment, is a binary of its own).

mod build_reports;
mod cassette_lane;
mod check_cli;
mod contract;
mod differential;
mod doc_citations;
mod editors_textmate;
mod editors_tree_sitter;
mod error_reporting;
mod fix_cli;
mod fixture_crates;
mod fmt_cli;
mod gemini_schema;
mod hostile_trees;
mod lane;
mod lane_counts;
mod lane_runner;
mod light_deps;
mod process_runner;
mod rebuild;
mod schema_cli;
mod script_cache;
mod script_errors;
mod soundness_fixtures;
mod source_writes;
mod workspace_cache;
