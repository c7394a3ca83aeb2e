//! The default builder: native first; any build the native builder cannot do exactly (or
//! that fails, so that the error message is kustomize's own) is handed to the kustomize
//! binary, with the reason.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::native::build_native_in;
use super::{Builder, Built, Job, KustomizeBinary, Maker};

/// Native first; any build it cannot do exactly (or that fails, so the error message is
/// kustomize's own) is handed to the kustomize binary.
pub struct AutoBuilder {
    binary: KustomizeBinary,
    native_builds: AtomicUsize,
    delegated: AtomicUsize,
}

impl AutoBuilder {
    /// An auto builder delegating to `binary`.
    pub fn new(binary: KustomizeBinary) -> Self {
        AutoBuilder {
            binary,
            native_builds: AtomicUsize::new(0),
            delegated: AtomicUsize::new(0),
        }
    }
}

impl Builder for AutoBuilder {
    /// Native from memory; the folder is made on disk only when the binary takes over.
    fn build(&self, job: &Job<'_>) -> Built {
        let why = match build_native_in(&job.dir, &job.files) {
            Ok(out) => {
                self.native_builds.fetch_add(1, Ordering::Relaxed);
                return Built {
                    output: Ok(out),
                    maker: Maker::Native,
                    delegated: None,
                };
            }
            Err(e) => e,
        };
        self.delegated.fetch_add(1, Ordering::Relaxed);
        Built {
            output: job.disk_dir().and_then(|dir| self.binary.run(&dir)),
            maker: Maker::Kustomize,
            delegated: Some(why.to_string()),
        }
    }

    fn describe(&self) -> String {
        format!("auto: native, delegating to {}", self.binary.describe())
    }

    fn identity(&self) -> String {
        format!("{} {}", self.describe(), crate::cache::own_fingerprint())
    }

    fn stats(&self) -> Option<String> {
        Some(format!(
            "native for {} builds, {} delegated",
            self.native_builds.load(Ordering::Relaxed),
            self.delegated.load(Ordering::Relaxed)
        ))
    }
}
