//! A native (in-process) kustomize builder for the subset of kustomize Flux repositories use.
//!
//! Stages mirror kustomize's: `kustfile` (loader), `target` (accumulator: resources,
//! components, generators, transformers), `filters` (the builtin transformers, `patches:` and
//! the name references among them), `configmap_secret_generator`, `resource` (resource map
//! and legacy order), `reader` and `printer` (kyaml's reading and `sigs.k8s.io/yaml`'s
//! printing). Whatever the native builder is not sure to
//! reproduce byte for byte is an [`NativeError::Unsupported`], never a guess.
//!
//! It depends on nothing of fluxsim but `goyaml`: what it reads comes through [`vfs::Vfs`],
//! over a source tree it sees only as [`vfs::SourceFiles`]; files of a folder that is no
//! source are read with the bound of [`bounded`]. The `Builder` that runs it (and hands what
//! it declines to the kustomize binary) is fluxsim-core's `kustomize` module.

pub mod bounded;
mod configmap_secret_generator;
mod filters;
mod konfig;
mod kustfile;
mod node;
pub(crate) mod openapi;
mod printer;
mod reader;
mod resource;
mod selector;
mod target;
pub mod vfs;

use std::path::Path;

pub use kustfile::FILE_NAMES as KUSTOMIZATION_FILES;
/// An `openapi:` schema file laid over kyaml's built-in schema, as Flux reads it: what a
/// build handed to the kustomize binary is given instead of the custom schema alone.
pub use openapi::combined::laid_over_builtin;
use vfs::Vfs;

/// Why the native builder did not build a directory.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NativeError {
    /// The kustomization uses something the native builder does not reproduce.
    #[error("{feature} (in {file}) is not supported by the native builder")]
    Unsupported {
        /// What is not supported.
        feature: String,
        /// Where it was found.
        file: String,
    },
    /// The build fails (kustomize would fail too, with its own words).
    #[error("{0}")]
    Failed(String),
    /// The input crossed one of fluxsim's bounds (alias expansion, `goyaml::alias`): the
    /// build fails and is not handed to kustomize, which would take the memory the bound
    /// keeps.
    #[error("{0}")]
    Bound(String),
}

impl NativeError {
    fn unsupported(feature: &str, file: impl AsRef<Path>) -> NativeError {
        NativeError::Unsupported {
            feature: feature.to_string(),
            file: file.as_ref().display().to_string(),
        }
    }
}

/// A kustomize feature the native builder does not reproduce, said in words (`a
/// strategic-merge patch changing a field's type`). The step that meets it does not know
/// the file; its caller makes it a [`NativeError::Unsupported`] naming the file (or a
/// [`NativeError::Failed`] where kustomize fails too), and `auto` hands the build to the
/// kustomize binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

impl From<String> for Unsupported {
    fn from(what: String) -> Self {
        Unsupported(what)
    }
}

impl From<&str> for Unsupported {
    fn from(what: &str) -> Self {
        Unsupported(what.to_string())
    }
}

impl From<Unsupported> for String {
    fn from(u: Unsupported) -> Self {
        u.0
    }
}

impl std::ops::Deref for Unsupported {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// Builds `dir` natively; the text is what `kustomize build` prints.
pub fn build_native(dir: &Path) -> Result<String, NativeError> {
    target::build_root(dir, &Vfs::disk())
}

/// Builds `dir` natively as `vfs` shows it (the disk with in-memory files over it).
pub fn build_native_in(dir: &Path, vfs: &Vfs) -> Result<String, NativeError> {
    target::build_root(dir, vfs)
}

/// Prints `value` as `kustomize build` prints an object (for reports that show an object
/// they changed, such as a diff with fields stripped).
#[must_use]
pub fn print_value(value: &serde_json::Value) -> String {
    printer::print_resource(&node::Node::from_json(value))
}
