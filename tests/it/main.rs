//! The integration tests, one crate (one link of the library) with a module per feature, as
//! ripgrep keeps its tests.

mod common;

mod action;
mod audit;
mod build_jobs;
mod cache;
mod ci_snippets;
mod cli_envsubst;
mod conformance;
mod diff;
mod envsubst_robustness;
mod escaping;
mod exit_policy;
mod fidelity;
mod flux_suites;
mod flux_versions;
mod git_errors;
mod graph;
mod helm;
mod help;
mod hostile;
mod in_place;
mod json_schemas;
mod kustomize_version;
mod layers;
mod membound;
mod native_builder;
mod network;
mod origins;
mod quiet;
mod render;
mod resourcesets;
mod review;
mod security;
mod ship;
mod source;
mod sources;
mod steady;
mod subfolder;
mod untrusted;
mod validate;
mod versions;
mod widths;
mod yaml_reread;
