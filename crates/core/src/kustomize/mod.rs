//! Running kustomize on a prepared folder, behind one [`Builder`] trait: the kustomize
//! binary as a subprocess ([`binary`]), fluxsim's in-process builder ([`native`], the
//! `fluxsim-kustomize` crate, run by [`in_process`]) for the kustomize subset Flux
//! repositories use, and [`auto`] (the default), which builds natively and hands the rest to
//! the binary.

pub mod auto;
pub mod binary;
pub mod in_process;

pub use fluxsim_kustomize as native;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use auto::AutoBuilder;
pub use binary::{kustomize_semver, version_warning, KustomizeBinary, REPRODUCED_KUSTOMIZE};
pub use in_process::NativeBuilder;

use crate::model::Maker;

/// A build failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// No kustomize binary could be found or run.
    #[error(
        "no kustomize found: install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) \
         or kubectl, or pass --kustomize PATH ({0})"
    )]
    NotFound(String),
    /// The program named as kustomize ran but did not answer `version` (it failed, or is
    /// not kustomize).
    #[error(
        "`{program}` is not a kustomize that works: `{program} version` {why}; pass --kustomize \
         PATH naming kustomize (or kubectl)"
    )]
    Unusable {
        /// The program.
        program: String,
        /// What it did (`exited with status 1 and printed nothing`).
        why: String,
    },
    /// kustomize ran and failed, or could not be run to the end.
    #[error("kustomize build failed: {0}")]
    Failed(String),
    /// kustomize rejected the build with its error exit: its inputs decided it, so the
    /// failure is kept in the build cache like an output.
    #[error("kustomize build failed: {0}")]
    Rejected(String),
    /// The input crossed one of fluxsim's bounds (YAML alias expansion): never delegated.
    #[error("{0}")]
    Bound(String),
    /// kustomize ran longer than the timeout.
    #[error("kustomize build timed out after {0:?}")]
    Timeout(Duration),
    /// The native builder (`--builder native`) does not reproduce a feature the build uses.
    #[error(
        "native builder: {feature} (in {file}) is not supported; use --builder auto or \
         --builder kustomize"
    )]
    Unsupported {
        /// What is not supported.
        feature: String,
        /// Where it was found.
        file: String,
    },
}

/// One build: the folder `dir` as `files` shows it (the source, with in-memory files over
/// it), and how to make that folder real on disk for a builder that must read it there.
pub struct Job<'a> {
    /// The folder to build, as the in-process builder reads it.
    pub dir: PathBuf,
    /// The files as the build sees them (a source tree, in-memory files, or the disk).
    pub files: native::vfs::Vfs,
    /// Where the folder is on disk for the kustomize binary.
    pub on_disk: OnDisk<'a>,
    /// Whether the kustomize binary may reach the network for it (`--allow-network`; the
    /// build's closure decided beforehand that it needs to).
    pub network: bool,
    /// Whether git may clone over plain http too, with the network (fluxsim.toml's
    /// `[network] insecure` names hosts; the build's remote entries were checked against it).
    pub git_http: bool,
}

/// Where a job's folder is on disk.
pub enum OnDisk<'a> {
    /// `dir` itself is a real folder.
    Here,
    /// Made on first need (a copy of a build's input closure, written once by the caller).
    Make(&'a dyn Fn() -> Result<PathBuf, BuildError>),
}

impl Job<'_> {
    /// A job for a real folder of fluxsim's own on disk (nothing is read outside it).
    #[must_use]
    pub fn folder(dir: &Path) -> Job<'static> {
        Job {
            dir: dir.to_path_buf(),
            files: native::vfs::Vfs::folder(dir),
            on_disk: OnDisk::Here,
            network: false,
            git_http: false,
        }
    }

    /// The folder on disk, made if needed.
    pub fn disk_dir(&self) -> Result<PathBuf, BuildError> {
        match &self.on_disk {
            OnDisk::Here => Ok(self.dir.clone()),
            OnDisk::Make(make) => make(),
        }
    }
}

/// What one build gave, and who made it.
#[derive(Debug, Clone)]
pub struct Built {
    /// What `kustomize build` prints, or why it failed.
    pub output: Result<String, BuildError>,
    /// Which builder made it.
    pub maker: Maker,
    /// Why the native builder handed the build to the binary (the feature and its file),
    /// when it did.
    pub delegated: Option<String>,
}

/// Something that turns a kustomization folder into kustomize's printed output.
pub trait Builder: Sync + Send {
    /// Builds `job`.
    fn build(&self, job: &Job<'_>) -> Built;
    /// What this builder is, for reports (e.g. `kubectl kustomize (kustomize v5.5.0)`); the
    /// same for every run with the same tools.
    fn describe(&self) -> String;
    /// What makes this builder's output what it is, for the build cache's keys: by default
    /// its description (the kustomize version).
    fn identity(&self) -> String {
        self.describe()
    }
    /// What it did in this run, for the summary line (e.g. how many builds it delegated).
    fn stats(&self) -> Option<String> {
        None
    }
}
