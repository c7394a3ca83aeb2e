//! fluxsim: render, offline, exactly what Flux's kustomize-controller would apply.
//!
//! The pipeline is described in `DESIGN.md`; each stage is a module here.

pub mod cli;
pub mod envsubst;
pub mod postbuild;

/// Runs the command line and returns the process exit status.
#[must_use]
pub fn run() -> std::process::ExitCode {
    cli::run()
}
