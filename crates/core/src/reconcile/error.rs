//! Why one Kustomization did not render: typed where it happens, so a caller can tell a
//! build failure from a substitution failure; printed as the status a user reads.

/// Why a Kustomization did not render (what kustomize-controller would put in its Ready
/// condition, in fluxsim's words).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Flux's generator could not prepare `spec.path`.
    #[error(transparent)]
    Generate(#[from] crate::kustomization_generator::GenerateError),
    /// A kustomization names a path outside the source root: Flux's secure file system
    /// (`fs_secure.go`) fails the build before any builder reads it.
    #[error("spec.path `{path}`: {file}{message}")]
    OutsideRoot {
        /// `spec.path`.
        path: String,
        /// The folder whose kustomization names the path (`apps/x/`), or empty for the root.
        file: String,
        /// Flux's `fs-security-constraint` message.
        message: String,
    },
    /// The build reads something over the network and the network is not allowed: not
    /// built (`Status::NeedsNetwork`).
    #[error(
        "spec.path `{path}`: {kustomization} reads `{url}` over the network; \
         --network any (or `[network] allow = true` in fluxsim.toml) fetches it"
    )]
    NeedsNetwork {
        /// `spec.path`.
        path: String,
        /// The kustomization file naming it, as the repository names it
        /// (`apps/base/kustomization.yaml`).
        kustomization: String,
        /// What it reads.
        url: String,
    },
    /// The network is on but does not permit one of the build's remote entries (under
    /// `--network base-trusted`, one the base revision does not name): not built
    /// (`Status::NeedsNetwork`, saying why).
    #[error("spec.path `{path}`: {kustomization}: {refusal}")]
    NotFetched {
        /// `spec.path`.
        path: String,
        /// The kustomization file naming it, as the repository names it.
        kustomization: String,
        /// Why it was not fetched.
        refusal: crate::net::Refusal,
    },
    /// `kustomize build` failed; the message names files as the repository does.
    #[error("spec.path `{path}`: {message}")]
    Build {
        /// `spec.path`.
        path: String,
        /// kustomize's error, without fluxsim's temporary folders.
        message: String,
    },
    /// A built object without `apiVersion`, `kind` or `metadata.name`: kustomize-controller
    /// fails the build (`kustomization_controller.go` `build`), with the object as JSON.
    #[error("failed to decode Kubernetes apiVersion, kind and name from: {0}")]
    NotConforming(String),
    /// After substitution an object has no `kind`: reading the build back for the apply
    /// (`ssautil.ReadObjects`) fails with the apimachinery decoder's message, the object as
    /// JSON.
    #[error("error unmarshaling JSON: while decoding JSON: Object 'Kind' is missing in '{0}'")]
    NotAnObject(String),
    /// What a build printed is not YAML Flux can read.
    #[error(transparent)]
    Output(#[from] crate::manifest::ParseError),
    /// The postBuild vars could not be resolved (a source that is missing, unreadable, or
    /// never settles).
    #[error("{0}")]
    Vars(String),
    /// postBuild failed: an object's substitution, fluxsim's bound on the substituted
    /// objects, or printing them again.
    #[error(transparent)]
    PostBuild(#[from] crate::postbuild::kustomization::PostBuildError),
}
