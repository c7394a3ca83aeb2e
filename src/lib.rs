//! fluxsim: render, offline, exactly what Flux's kustomize-controller would apply.
//!
//! `ARCHITECTURE.md` at the repository root maps the pipeline to these modules and states the
//! invariants they keep; each stage is a module here.

pub mod artifact;
pub mod audit;
pub mod cache;
pub mod canary;
pub mod cli;
pub mod compare;
pub mod config;
pub mod conformance;
pub mod digest;
pub mod discover;
pub use ::envsubst;
pub mod finding;
pub mod flux;
pub mod generate;
pub mod goyaml;
pub mod graph;
pub mod helm;
pub mod images;
pub mod ksgraph;
pub mod kustomize;
pub mod locate;
pub mod manifest;
pub mod model;
pub mod postbuild;
pub mod reconcile;
pub mod render;
pub mod report;
pub mod sandbox;
pub mod scratch;
pub mod source;
#[cfg(test)]
mod testutil;

/// Runs the command line and returns the process exit status.
#[must_use]
pub fn run() -> std::process::ExitCode {
    cli::run()
}
