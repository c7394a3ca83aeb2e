//! What fluxsim makes of a render: revision against revision and cluster against cluster
//! (`compare`), positive controls (`canary`, for `prove`), substitution hazards (`audit`),
//! the cold start (`graph`), container images (`images`), and every report printed
//! (`report`).

pub mod audit;
pub mod canary;
pub mod compare;
pub mod finding;
pub mod graph;
pub mod images;
pub mod report;

// The pipeline's modules this crate reads, under the names they had when fluxsim was one
// crate.
use fluxsim_core::{
    artifact, cache, config, envsubst, flux, goyaml, helm, kustomize, locate, manifest, model,
    postbuild, render, scratch, source, text,
};
