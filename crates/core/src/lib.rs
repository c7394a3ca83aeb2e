//! fluxsim's pipeline: a repository in, every cluster's render out.
//!
//! `ARCHITECTURE.md` at the repository root maps the pipeline to these modules and states the
//! invariants they keep; each stage is a module here.

pub mod artifact;
pub mod bootstrap;
pub mod cache;
pub mod config;
pub mod conformance;
pub mod digest;
pub mod discover;
pub use ::envsubst;
pub mod flux;
pub mod kustomization_generator;
pub use ::goyaml;
pub use goyaml::manifest;
pub mod helm;
pub mod kustomize;
pub mod locate;
pub mod model;
pub mod net;
pub mod notice;
pub mod postbuild;
pub mod reconcile;
pub mod render;
pub mod resourceset;
pub mod sandbox;
pub mod scratch;
pub mod source;
pub mod store;
#[cfg(test)]
mod testutil;
pub mod text;
pub mod version_range;
pub mod versions;
