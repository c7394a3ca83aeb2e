//! The native builder (the `fluxsim-kustomize` crate) as a [`Builder`]: a build it does
//! not support fails, naming the feature.

use super::native::{build_native_in, NativeError};
use super::{BuildError, Builder, Built, Job, Maker};

pub(crate) fn to_build_error(e: NativeError) -> BuildError {
    match e {
        NativeError::Unsupported { feature, file } => BuildError::Unsupported { feature, file },
        NativeError::Failed(m) => BuildError::Failed(m),
        NativeError::Bound(m) => BuildError::Bound(m),
    }
}

/// The native builder alone: a build it does not support fails, naming the feature.
#[derive(Debug, Default)]
pub struct NativeBuilder;

impl Builder for NativeBuilder {
    fn build(&self, job: &Job<'_>) -> Built {
        Built {
            output: build_native_in(&job.dir, &job.files).map_err(to_build_error),
            maker: Maker::Native,
            delegated: None,
        }
    }

    fn describe(&self) -> String {
        "native (in-process kustomize subset)".to_string()
    }

    fn identity(&self) -> String {
        format!("{} {}", self.describe(), crate::store::own_fingerprint())
    }
}
