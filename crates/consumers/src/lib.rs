//! What fluxsim makes of a render: revision against revision and cluster against cluster
//! (`compare`), positive controls (`canary`, for `prove`), substitution hazards (`audit`),
//! the cold start (`graph`), container images (`images`), a render against Flux's own code
//! (`oracle`), and every report printed (`report`).

pub mod admission;
pub mod audit;
pub mod canary;
pub mod change;
pub mod compare;
pub mod finding;
pub mod graph;
pub mod images;
pub mod kyverno;
pub mod level;
pub mod mask;
pub mod oracle;
pub mod policies;
pub mod report;
pub mod upgrade;
pub mod validate;

/// The reviewer's reports (`fluxsim-review`), which `report::review` feeds.
pub use review;

// What this crate reads of fluxsim-core, under the names the modules had when fluxsim was
// one crate: the render model and what it is made of (`model`, `artifact`, `flux`, Helm's
// `HelmRelease` in `helm`), the repository's files as Flux sees them (`source`, `locate`,
// `manifest`, `config`), shared wording and scratch space (`text`, `scratch`), and the tool
// box a consumer runs a tool in (`sandbox`: `kyverno apply`). Never a
// stage of the pipeline (`discover`, `reconcile`, `kustomization_generator`, `kustomize`, `cache`,
// `postbuild`, `render`): tests/it/layers.rs fails the build's tests when one is named.
use fluxsim_core::{
    artifact, bootstrap, config, envsubst, flux, goyaml, helm, locate, manifest, model, sandbox,
    scratch, source, text, versions,
};
// A unit test renders a repository to check what a consumer makes of it.
#[cfg(test)]
use fluxsim_core::render;
