//! fluxsim: render, offline, exactly what Flux's kustomize-controller would apply.
//!
//! This crate is the binary's: its command line (`cli`). The work lives in the crates of
//! the layers under it (`ARCHITECTURE.md` draws their graph): `fluxsim-core` (the pipeline
//! and the render model), `fluxsim-consumers` (what is made of a render, and every report),
//! `fluxsim-kustomize` (the native builder), `fluxsim-goyaml` and `fluxsim-envsubst`. The
//! modules the command line, the integration tests and the examples use are re-exported
//! here under the paths they had when fluxsim was one crate.

pub mod cli;

pub use fluxsim_consumers::{
    admission, audit, canary, change, compare, finding, graph, images, level, mask, oracle, report,
    review, upgrade, validate,
};
pub use fluxsim_core::{
    cache, config, conformance, envsubst, flux, goyaml, helm, kustomize, manifest, model, net,
    notice, postbuild, render, resourceset, sandbox, scratch, source, store, versions,
};

/// Runs the command line and returns the process exit status.
#[must_use]
pub fn run() -> std::process::ExitCode {
    cli::run()
}
