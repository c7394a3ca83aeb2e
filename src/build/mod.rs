//! Running `kustomize build` on a prepared directory, behind a small `Builder` trait.
//!
//! The default builder runs the `kustomize` binary (or `kubectl kustomize`) as a subprocess,
//! as Flux's own build would run in-process, with `--load-restrictor LoadRestrictionsNone`
//! (kustomize-controller builds with `LoadRestrictionsNone`). Identical builds within a run
//! are done once (`BuildCache`). `native` builds in-process for the kustomize subset Flux
//! repositories use, and `auto` (the default) delegates the rest to the binary.

pub mod native;

pub mod closure;
pub mod store;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A build failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// No kustomize binary could be found or run.
    #[error(
        "no kustomize found: install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) \
         or kubectl, or pass --kustomize PATH ({0})"
    )]
    NotFound(String),
    /// kustomize ran and failed.
    #[error("kustomize build failed: {0}")]
    Failed(String),
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

/// One build: the folder `dir` as the disk shows it with `files` (held in memory) over it,
/// and how to make that folder real on disk for a builder that must read it there.
pub struct Job<'a> {
    /// The folder to build, as the in-process builder reads it.
    pub dir: PathBuf,
    /// Files that exist only in memory (fluxsim's kustomization file, objects to print).
    pub files: native::vfs::Vfs,
    /// Makes the folder on disk (made once, by the caller's closure) and says where it is.
    pub on_disk: &'a dyn Fn() -> Result<PathBuf, BuildError>,
}

/// Which builder made a build's output: fluxsim's native builder or the kustomize binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Maker {
    /// The in-process builder (`src/build/native/`).
    Native,
    /// The kustomize binary (or `kubectl kustomize`), as a subprocess.
    Kustomize,
}

impl Maker {
    /// `native` or `kustomize`, as reports print it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Maker::Native => "native",
            Maker::Kustomize => "kustomize",
        }
    }

    fn parse(s: &str) -> Option<Maker> {
        match s {
            "native" => Some(Maker::Native),
            "kustomize" => Some(Maker::Kustomize),
            _ => None,
        }
    }
}

/// Something that turns a kustomization directory into kustomize's printed output.
pub trait Builder: Sync + Send {
    /// Builds `dir` and returns what `kustomize build` prints.
    fn build(&self, dir: &Path) -> Result<String, BuildError>;
    /// Builds `job`: by default, on disk.
    fn build_job(&self, job: &Job<'_>) -> Result<String, BuildError> {
        self.build(&(job.on_disk)()?)
    }
    /// [`Self::build_job`], saying which builder made the result (by default, the binary).
    fn build_job_by(&self, job: &Job<'_>) -> (Result<String, BuildError>, Maker) {
        (self.build_job(job), Maker::Kustomize)
    }
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

/// The running fluxsim binary, as its size and modification time: code built into fluxsim
/// (the native builder) can change between builds of the same version, and the build cache
/// must not serve one build's output to another.
#[must_use]
pub fn own_fingerprint() -> String {
    let version = env!("CARGO_PKG_VERSION");
    std::env::current_exe()
        .and_then(std::fs::metadata)
        .map_or_else(
            |_| format!("fluxsim {version} (unknown build)"),
            |m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("fluxsim {version} ({} bytes, {mtime})", m.len())
            },
        )
}

/// The kustomize version fluxsim reproduces: the one kustomize-controller v1.9.x builds with
/// (`sigs.k8s.io/kustomize/api` v0.21.1), which `scripts/install-tools` installs.
pub const REPRODUCED_KUSTOMIZE: &str = "v5.8.1";

/// The `MAJOR.MINOR.PATCH` in what `kustomize version` (`v5.8.1`, or
/// `{Version:kustomize/v4.5.7 ...}` before v5) or kubectl's `Kustomize Version: v5.5.0`
/// reports, with a leading `v`.
#[must_use]
pub fn kustomize_semver(reported: &str) -> Option<String> {
    let bytes = reported.as_bytes();
    (0..bytes.len()).find_map(|start| {
        if start > 0 && (bytes[start - 1].is_ascii_digit() || bytes[start - 1] == b'.') {
            return None;
        }
        let rest = &reported[start..];
        let mut parts = rest.splitn(3, '.');
        let major = parts.next()?;
        let minor = parts.next()?;
        let patch: String = parts
            .next()?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(major) && digits(minor) && digits(&patch))
            .then(|| format!("v{major}.{minor}.{patch}"))
    })
}

/// The warning for a kustomize binary whose version is not [`REPRODUCED_KUSTOMIZE`], if any.
#[must_use]
pub fn version_warning(program: &Path, is_kubectl: bool, reported: &str) -> Option<String> {
    let version = kustomize_semver(reported);
    if version.as_deref() == Some(REPRODUCED_KUSTOMIZE) {
        return None;
    }
    let what = if is_kubectl {
        format!("{} (kubectl's built-in kustomize", program.display())
    } else {
        format!("{} (kustomize", program.display())
    };
    let found = version.unwrap_or_else(|| format!("of unknown version: `{}`", reported.trim()));
    Some(format!(
        "fluxsim: warning: {what} {found}) is not kustomize {REPRODUCED_KUSTOMIZE}, the version \
         Flux's kustomize-controller builds with: the builds it makes may differ from Flux's \
         (install kustomize {REPRODUCED_KUSTOMIZE} with scripts/install-tools, or pass \
         --kustomize PATH)"
    ))
}

/// Prints [`version_warning`] on stderr, once per process however many builders are made.
fn warn_once_unless_reproduced(program: &Path, is_kubectl: bool, reported: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if let Some(warning) = version_warning(program, is_kubectl, reported) {
        WARNED.call_once(|| eprintln!("{warning}"));
    }
}

/// The kustomize binary, run as a subprocess.
#[derive(Debug, Clone)]
pub struct KustomizeBinary {
    program: PathBuf,
    /// `["build"]` for kustomize, `["kustomize"]` for kubectl.
    subcommand: &'static str,
    timeout: Duration,
    version: String,
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl KustomizeBinary {
    /// Finds kustomize: `explicit` when given, else `kustomize` on PATH, else `kubectl`.
    pub fn locate(explicit: Option<&Path>, timeout: Duration) -> Result<Self, BuildError> {
        Self::locate_with(explicit, timeout, None)
    }

    /// [`Self::locate`], remembering the probed version in `store` under the binary's path,
    /// size and modification time, so a run with a warm cache starts no probe process.
    pub fn locate_with(
        explicit: Option<&Path>,
        timeout: Duration,
        store: Option<&store::Store>,
    ) -> Result<Self, BuildError> {
        let program = match explicit {
            Some(p) => p.to_path_buf(),
            None => on_path("kustomize")
                .or_else(|| on_path("kubectl"))
                .ok_or_else(|| BuildError::NotFound("neither is on PATH".into()))?,
        };
        let is_kubectl = program
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("kubectl"));
        let subcommand = if is_kubectl { "kustomize" } else { "build" };
        let key = std::fs::metadata(&program).ok().map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            crate::artifact::sha256_hex(
                format!("tool\0{}\0{}\0{mtime}", program.display(), m.len()).as_bytes(),
            )
        });
        let known = key.as_ref().zip(store).and_then(|(k, s)| s.get(k));
        let version = if let Some(v) = known {
            v
        } else {
            let v = Self::probe_version(&program, is_kubectl)?;
            if let (Some(k), Some(s)) = (&key, store) {
                s.put(k, &v);
            }
            v
        };
        warn_once_unless_reproduced(&program, is_kubectl, &version);
        Ok(KustomizeBinary {
            program,
            subcommand,
            timeout,
            version,
        })
    }

    fn probe_version(program: &Path, is_kubectl: bool) -> Result<String, BuildError> {
        let args: &[&str] = if is_kubectl {
            &["version", "--client"]
        } else {
            &["version"]
        };
        let out = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| BuildError::NotFound(format!("{}: {e}", program.display())))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = if is_kubectl {
            text.lines()
                .find_map(|l| l.strip_prefix("Kustomize Version:"))
                .map_or_else(|| "unknown".into(), |v| v.trim().to_string())
        } else {
            text.trim().to_string()
        };
        Ok(version)
    }

    /// The kustomize version reported by the binary.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }
}

impl Builder for KustomizeBinary {
    fn build(&self, dir: &Path) -> Result<String, BuildError> {
        // Its own process group, so that a timeout or a signal to fluxsim also ends what
        // kustomize started (git for remote bases, helm for helmCharts).
        let mut group = crate::scratch::Group::spawn(
            Command::new(&self.program)
                .arg(self.subcommand)
                .arg("--load-restrictor")
                .arg("LoadRestrictionsNone")
                .arg(dir)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| BuildError::NotFound(format!("{}: {e}", self.program.display())))?;
        let child = group.child();
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| BuildError::Failed("no stdout".into()))?;
        let mut stderr = child
            .stderr
            .take()
            .ok_or_else(|| BuildError::Failed("no stderr".into()))?;
        let out_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        });
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let start = Instant::now();
        let status = loop {
            match group.child().try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if start.elapsed() > self.timeout => {
                    group.kill();
                    return Err(BuildError::Timeout(self.timeout));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(BuildError::Failed(e.to_string())),
            }
        };
        // What the leader started may still hold the pipes open: end the group first.
        drop(group);
        let out = out_reader.join().unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        if !status.success() {
            return Err(BuildError::Failed(clean_error(&String::from_utf8_lossy(
                &err,
            ))));
        }
        String::from_utf8(out).map_err(|_| BuildError::Failed("output is not UTF-8".into()))
    }

    fn describe(&self) -> String {
        let name = self.program.file_name().map_or_else(
            || self.program.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        format!("{name} {} (kustomize {})", self.subcommand, self.version)
    }
}

/// What one build gave, which builder made it, and where it was built (an error names that
/// place).
type Built = (Result<String, BuildError>, Maker, PathBuf);

/// Builds each distinct input once per run, even when asked concurrently, and keeps
/// successful outputs in a persistent [`store::Store`] when given one.
///
/// A build's identity is the digest of its input closure (see [`closure`]) and the builder's
/// identity, so the same inputs in two trees (base and head of a diff, a canary copy) or two
/// clusters are built once. Builds whose inputs cannot be pinned down (remote bases, Helm
/// charts) fall back to the caller's per-tree key and are never stored.
pub struct BuildCache<'b> {
    builder: &'b dyn Builder,
    identity: String,
    store: Option<store::Store>,
    entries: Mutex<HashMap<String, Arc<OnceLock<Built>>>>,
    builds: std::sync::atomic::AtomicUsize,
    stored_hits: std::sync::atomic::AtomicUsize,
}

impl<'b> BuildCache<'b> {
    /// An in-memory cache in front of `builder`.
    pub fn new(builder: &'b dyn Builder) -> Self {
        Self::with_store(builder, None)
    }

    /// A cache in front of `builder` that also reads and writes `store`.
    pub fn with_store(builder: &'b dyn Builder, store: Option<store::Store>) -> Self {
        BuildCache {
            identity: builder.identity(),
            builder,
            store,
            entries: Mutex::new(HashMap::new()),
            builds: 0.into(),
            stored_hits: 0.into(),
        }
    }

    /// The builder behind the cache.
    #[must_use]
    pub fn builder(&self) -> &dyn Builder {
        self.builder
    }

    /// Builds `dir` unless a build of the same inputs was done (or is under way). `key`
    /// identifies the build within its tree, for builds whose inputs cannot be pinned down.
    pub fn build(&self, key: &str, dir: &Path) -> Result<String, BuildError> {
        self.build_with(key, dir, closure::closure(dir).ok().as_ref())
    }

    /// [`Self::build`] with the build's input closure already found (`None`: its inputs
    /// cannot be pinned down).
    pub fn build_with(
        &self,
        key: &str,
        dir: &Path,
        inputs: Option<&closure::Closure>,
    ) -> Result<String, BuildError> {
        let on_disk = || Ok(dir.to_path_buf());
        let job = Job {
            dir: dir.to_path_buf(),
            files: native::vfs::Vfs::disk(),
            on_disk: &on_disk,
        };
        self.build_lazy(key, inputs, &job)
    }

    /// [`Self::build_with`] for a [`Job`]: its folder is made on disk only when a build must
    /// run and the builder needs it there (a cache hit or a native build makes none).
    pub fn build_lazy(
        &self,
        key: &str,
        inputs: Option<&closure::Closure>,
        job: &Job<'_>,
    ) -> Result<String, BuildError> {
        self.build_made(key, inputs, job).map(|(out, _)| out)
    }

    /// [`Self::build_lazy`], saying which builder made the output (for a stored build, the
    /// one that made it when it was stored).
    pub fn build_made(
        &self,
        key: &str,
        inputs: Option<&closure::Closure>,
        job: &Job<'_>,
    ) -> Result<(String, Maker), BuildError> {
        let content = inputs.map(|c| {
            crate::artifact::sha256_hex(format!("{}\0{}", self.identity, c.digest()).as_bytes())
        });
        let cell = {
            let mut map = self
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mem_key = content
                .as_ref()
                .map_or_else(|| format!("tree:{key}"), |d| format!("cas:{d}"));
            map.entry(mem_key).or_default().clone()
        };
        let (result, maker, built_in) = cell.get_or_init(|| {
            // A stored entry is the maker's name, a line break, and the output.
            let stored = content
                .as_ref()
                .zip(self.store.as_ref())
                .and_then(|(d, s)| s.get(d))
                .and_then(|body| {
                    let (maker, out) = body.split_once('\n')?;
                    Some((Maker::parse(maker)?, out.to_string()))
                });
            if let Some((maker, out)) = stored {
                self.stored_hits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return (Ok(out), maker, PathBuf::new());
            }
            self.builds
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (r, maker) = self.builder.build_job_by(job);
            if let (Ok(out), Some(d), Some(s)) = (&r, &content, &self.store) {
                s.put(d, &format!("{}\n{out}", maker.as_str()));
            }
            (r, maker, job.dir.clone())
        });
        match result {
            // An error names the folder it was built in: one from another tree is rebuilt
            // here, so the message names this tree's files.
            Err(_) if *built_in != job.dir => {
                let (r, maker) = self.builder.build_job_by(job);
                r.map(|out| (out, maker))
            }
            r => r.clone().map(|out| (out, *maker)),
        }
    }

    /// How many builds actually ran (neither in memory nor in the store).
    #[must_use]
    pub fn builds_run(&self) -> usize {
        self.builds.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many builds came from the persistent store.
    #[must_use]
    pub fn stored_hits(&self) -> usize {
        self.stored_hits.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// kustomize's error text without the noise that changes from run to run: kubectl wraps it
/// in a klog line (`E1202 15:33:21.263713 31756 run.go:72] "command failed" err="..."`).
fn clean_error(stderr: &str) -> String {
    let text = stderr.trim();
    let re =
        regex::Regex::new(r#"(?s)^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] "command failed" err="(.*)"$"#)
            .expect("static regex");
    let text = match re.captures(text) {
        Some(c) => c[1].replace("\\\"", "\"").replace("\\n", "\n"),
        None => text.to_string(),
    };
    text.trim_start_matches("Error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_klog_prefix_is_removed_from_errors() {
        let e = "E1202 15:33:21.263713   31756 run.go:72] \"command failed\" err=\"accumulating resources: \\\"x\\\" missing\"\n";
        assert_eq!(clean_error(e), "accumulating resources: \"x\" missing");
        assert_eq!(clean_error("Error: plain kustomize\n"), "plain kustomize");
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;

    // What kustomize v5 (`v5.8.1`), kustomize v4 and kubectl 1.32 report.
    #[test]
    fn kustomize_version_is_read_from_every_binary_s_report() {
        assert_eq!(kustomize_semver("v5.8.1\n").as_deref(), Some("v5.8.1"));
        assert_eq!(
            kustomize_semver("{Version:kustomize/v4.5.7 GitCommit:56d82a8 BuildDate:2022-08-02T16:35:54Z GoOs:linux GoArch:amd64}").as_deref(),
            Some("v4.5.7")
        );
        assert_eq!(kustomize_semver(" v5.5.0").as_deref(), Some("v5.5.0"));
        assert_eq!(kustomize_semver("unknown"), None);
        assert_eq!(kustomize_semver("(devel)"), None);
    }

    // kustomize-controller v1.9.x builds with kustomize api v0.21.1, that is kustomize v5.8.1.
    #[test]
    fn a_kustomize_other_than_v5_8_1_is_warned_about() {
        let p = Path::new("/usr/bin/kustomize");
        assert_eq!(version_warning(p, false, "v5.8.1\n"), None);
        let w = version_warning(Path::new("/usr/bin/kubectl"), true, "v5.5.0").unwrap();
        assert!(w.starts_with("fluxsim: warning: /usr/bin/kubectl (kubectl's built-in kustomize v5.5.0) is not kustomize v5.8.1"), "{w}");
        let w = version_warning(p, false, "(devel)").unwrap();
        assert!(w.contains("of unknown version: `(devel)`"), "{w}");
    }
}
