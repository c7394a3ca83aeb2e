//! Builds done once: each distinct input is built once per run, even when asked
//! concurrently, and kept across runs in the persistent store ([`crate::store`]), keyed by
//! the digest of its input closure ([`closure`]) and the builder's identity.

pub mod closure;
pub mod remote;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::kustomize::{BuildError, Builder, Built, Job};
use crate::model::Maker;
use crate::store;

/// What one build gave, and where it was built (an error names that place).
type Done = (Built, PathBuf);

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

/// Builds each distinct input once per run, even when asked concurrently, and keeps
/// outputs (and the failures the inputs decide) in a persistent [`store::Store`] when given
/// one.
///
/// A build's identity is the digest of its input closure (see [`closure`]) and the builder's
/// identity, so the same inputs in two trees (base and head of a diff, a canary copy) or two
/// clusters are built once. Builds whose inputs cannot be pinned down (remote bases, Helm
/// charts) fall back to the caller's per-tree key and are never stored.
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

    /// The persistent store it reads and writes, if any (what else a render fetches is
    /// kept there too).
    #[must_use]
    pub fn store(&self) -> Option<&store::Store> {
        self.store.as_ref()
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
            // A build whose closure is not known (it reads the network) is shared only
            // within its own tree: the cache serves both trees of a diff, and the same
            // folder in base and head may name different remote inputs.
            let mem_key = content.as_ref().map_or_else(
                || format!("tree:{}\0{key}", job.dir.display()),
                |d| format!("cas:{d}"),
            );
            map.entry(mem_key).or_default().clone()
        };
        let (built, built_in) = cell.get_or_init(|| {
            if let Some(built) = content
                .as_ref()
                .zip(self.store.as_ref())
                .and_then(|(d, s)| s.get(d))
                .and_then(|body| decode(&body))
            {
                self.stored_hits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // What is stored names no folder (see `encode`): it reads the same here.
                return (built, job.dir.clone());
            }
            self.builds
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut built = self.builder.build(job);
            // One line, so that the head line stays one.
            built.delegated = built
                .delegated
                .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "));
            let made = matches!(job.on_disk, crate::kustomize::OnDisk::Make(_));
            if let (Some(d), Some(s)) = (&content, &self.store) {
                if let Some(entry) = encode(&built, made) {
                    s.put(d, &entry);
                }
            }
            (built, job.dir.clone())
        });
        let made = matches!(job.on_disk, crate::kustomize::OnDisk::Make(_));
        match &built.output {
            // kustomize's rejection of a folder fluxsim made names only scratch paths, which
            // are taken out of every message: it reads the same for any tree.
            Err(BuildError::Rejected(_)) if made => built.clone(),
            // Another error names the folder it was built in: one from another tree is
            // rebuilt here, so the message names this tree's files.
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

/// A build as the store keeps it, when it can be kept: a head line (the maker's name, then a
/// tab and why the build was delegated, when it was), a line break, and the output. A
/// failure that the build's inputs decided (kustomize's error exit, [`BuildError::Rejected`])
/// is kept too, its head marked with `!` and its message as the body, when the build ran in
/// a folder fluxsim made (its paths are scratch paths, which `scratch::scrub` takes out, so
/// the message names no folder of this run). Other failures (a timeout, a missing tool, a
/// signal) may be the machine's and are built again next time.
fn encode(built: &Built, made: bool) -> Option<String> {
    let head = match &built.delegated {
        Some(why) => format!("{}\t{why}", built.maker.as_str()),
        None => built.maker.as_str().to_string(),
    };
    match &built.output {
        Ok(out) => Some(format!("{head}\n{out}")),
        Err(BuildError::Rejected(message)) if made => {
            Some(format!("!{head}\n{}", crate::scratch::scrub(message)))
        }
        Err(_) => None,
    }
}

/// What [`encode`] wrote, or `None` for an entry it did not write.
fn decode(body: &str) -> Option<Built> {
    let (head, rest) = body.split_once('\n')?;
    let (failed, head) = match head.strip_prefix('!') {
        Some(h) => (true, h),
        None => (false, head),
    };
    let (maker, why) = match head.split_once('\t') {
        Some((m, w)) => (m, Some(w.to_string())),
        None => (head, None),
    };
    Some(Built {
        output: if failed {
            Err(BuildError::Rejected(rest.to_string()))
        } else {
            Ok(rest.to_string())
        },
        maker: Maker::parse(maker)?,
        delegated: why,
    })
}
