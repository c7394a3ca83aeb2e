//! Builds done once: each distinct input is built once per run, even when asked
//! concurrently, and kept across runs in a persistent store ([`store`]), keyed by the digest
//! of its input closure ([`closure`]) and the builder's identity. Whole renders of git
//! revisions are kept in the same store ([`revisions`]), so the base of a diff is rendered once.

pub mod closure;
pub mod revisions;
pub mod store;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::kustomize::{Builder, Built, Job, Maker};

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

/// What one build gave, and where it was built (an error names that place).
type Done = (Built, PathBuf);

/// Builds each distinct input once per run, even when asked concurrently, and keeps
/// successful outputs in a persistent [`store::Store`] when given one.
///
/// A build's identity is the digest of its input closure (see [`closure`]) and the builder's
/// identity, so the same inputs in two trees (base and head of a diff, a canary copy) or two
/// clusters are built once. Builds whose inputs cannot be pinned down (remote bases, Helm
/// charts) fall back to the caller's per-tree key and are never stored.
/// One build asked of the cache.
#[derive(Clone, Copy)]
pub struct Request<'r, 'j> {
    /// Identifies the build within its tree, when its inputs cannot be pinned down.
    pub key: &'r str,
    /// The build's input closure, when known: the same inputs anywhere are one build.
    pub inputs: Option<&'r closure::Closure>,
    /// The build itself.
    pub job: &'r Job<'j>,
}

pub struct BuildCache<'b> {
    builder: &'b dyn Builder,
    identity: String,
    store: Option<store::Store>,
    entries: Mutex<HashMap<String, Arc<OnceLock<Done>>>>,
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

    /// Builds `job` unless a build of the same inputs (`inputs`: its input closure; `None`
    /// when they cannot be pinned down, then `key` identifies the build within its tree) was
    /// done or is under way. Its folder is made on disk only when a build must run and the
    /// builder needs it there (a cache hit or a native build makes none). For a stored
    /// build, the maker (and why it was delegated) are those of when it was stored.
    pub fn get(&self, request: &Request<'_, '_>) -> Built {
        let Request { key, inputs, job } = *request;
        let content = inputs.map(|c| {
            crate::digest::sha256_hex(format!("{}\0{}", self.identity, c.digest()).as_bytes())
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
        let (built, built_in) = cell.get_or_init(|| {
            // A stored entry is a head line (the maker's name, then a tab and why the build
            // was delegated, when it was), a line break, and the output.
            let stored = content
                .as_ref()
                .zip(self.store.as_ref())
                .and_then(|(d, s)| s.get(d))
                .and_then(|body| {
                    let (head, out) = body.split_once('\n')?;
                    let (maker, why) = match head.split_once('\t') {
                        Some((m, w)) => (m, Some(w.to_string())),
                        None => (head, None),
                    };
                    Some(Built {
                        output: Ok(out.to_string()),
                        maker: Maker::parse(maker)?,
                        delegated: why,
                    })
                });
            if let Some(built) = stored {
                self.stored_hits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return (built, PathBuf::new());
            }
            self.builds
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut built = self.builder.build(job);
            // One line, so that the head line stays one.
            built.delegated = built
                .delegated
                .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "));
            if let (Ok(out), Some(d), Some(s)) = (&built.output, &content, &self.store) {
                let head = match &built.delegated {
                    Some(why) => format!("{}\t{why}", built.maker.as_str()),
                    None => built.maker.as_str().to_string(),
                };
                s.put(d, &format!("{head}\n{out}"));
            }
            (built, job.dir.clone())
        });
        match &built.output {
            // An error names the folder it was built in: one from another tree is rebuilt
            // here, so the message names this tree's files.
            Err(_) if *built_in != job.dir => self.builder.build(job),
            _ => built.clone(),
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
