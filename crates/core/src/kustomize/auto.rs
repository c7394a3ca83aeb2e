//! The default builder: native first; any build the native builder cannot do exactly (or
//! that fails, so that the error message is kustomize's own) is handed to the kustomize
//! binary, with the reason. The binary is looked for up front (without running it) and run
//! (its version probed) at the first delegation: a render that delegates nothing needs no
//! kustomize on the machine.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::native::build_native_in;
use super::{BuildError, Builder, Built, Job, KustomizeBinary, Maker};
use crate::notice::{Listener, Quiet};
use crate::store::Store;

/// Native first; any build it cannot do exactly (or that fails, so the error message is
/// kustomize's own) is handed to the kustomize binary.
pub struct AutoBuilder {
    /// Where the binary is (found without running it), or why there is none.
    program: Result<PathBuf, BuildError>,
    timeout: Duration,
    store: Option<Store>,
    /// The binary, opened at the first delegation.
    binary: OnceLock<Result<KustomizeBinary, BuildError>>,
    /// Who hears the binary's version warning, when it is opened.
    listener: Arc<dyn Listener>,
    native_builds: AtomicUsize,
    delegated: AtomicUsize,
}

impl AutoBuilder {
    /// An auto builder delegating to `binary`.
    pub fn new(binary: KustomizeBinary) -> Self {
        AutoBuilder {
            program: Ok(binary.program().to_path_buf()),
            timeout: binary.timeout(),
            store: None,
            binary: OnceLock::from(Ok(binary)),
            listener: Arc::new(Quiet),
            native_builds: AtomicUsize::new(0),
            delegated: AtomicUsize::new(0),
        }
    }

    /// An auto builder that delegates to the kustomize `explicit` names (else the one on
    /// PATH, else kubectl), run only when a build needs it; its probed version is kept in
    /// `store`, and `listener` hears when it is not the version Flux builds with.
    pub fn deferred(
        explicit: Option<&std::path::Path>,
        timeout: Duration,
        store: Option<Store>,
        listener: Arc<dyn Listener>,
    ) -> Self {
        AutoBuilder {
            program: KustomizeBinary::find(explicit),
            timeout,
            store,
            binary: OnceLock::new(),
            listener,
            native_builds: AtomicUsize::new(0),
            delegated: AtomicUsize::new(0),
        }
    }

    /// The binary, opened on first use.
    fn binary(&self) -> Result<&KustomizeBinary, BuildError> {
        self.binary
            .get_or_init(|| {
                let program = self.program.clone()?;
                let binary = KustomizeBinary::open(program, self.timeout, self.store.as_ref())?;
                if let Some(w) = binary.warning() {
                    self.listener.warn(w);
                }
                Ok(binary)
            })
            .as_ref()
            .map_err(Clone::clone)
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
            // A bound crossed is fluxsim's answer: kustomize would take the memory it keeps.
            Err(e @ super::native::NativeError::Bound(_)) => {
                return Built {
                    output: Err(super::in_process::to_build_error(e)),
                    maker: Maker::Native,
                    delegated: None,
                }
            }
            Err(e) => e,
        };
        self.delegated.fetch_add(1, Ordering::Relaxed);
        Built {
            output: self.binary().and_then(|binary| {
                job.disk_dir()
                    .and_then(|dir| binary.run(&dir, job.network, job.git_http))
            }),
            maker: Maker::Kustomize,
            delegated: Some(why.to_string()),
        }
    }

    fn describe(&self) -> String {
        match (&self.program, self.binary()) {
            (Err(e), _) => format!("auto: native, with no kustomize to delegate to ({e})"),
            (Ok(_), Ok(binary)) => format!("auto: native, delegating to {}", binary.describe()),
            (Ok(program), Err(e)) => {
                format!("auto: native, delegating to {} ({e})", program.display())
            }
        }
    }

    /// The binary by what it is on disk (its path, size and modification time), not by
    /// running it: a cached build's key is known before anything is delegated.
    fn identity(&self) -> String {
        let binary = match &self.program {
            Ok(program) => KustomizeBinary::stamp(program)
                .unwrap_or_else(|| format!("unreadable {}", program.display())),
            Err(_) => "no kustomize".to_string(),
        };
        format!(
            "auto: native, delegating to {binary} {}",
            crate::store::own_fingerprint()
        )
    }

    fn stats(&self) -> Option<String> {
        Some(format!(
            "native for {} builds, {} delegated",
            self.native_builds.load(Ordering::Relaxed),
            self.delegated.load(Ordering::Relaxed)
        ))
    }
}
