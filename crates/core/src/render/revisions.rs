//! Renders of git revisions, kept in the persistent store under the id of the revision's
//! tree: the base of a diff is rendered once, and later diffs against it neither copy it out
//! of git nor render it again.
//!
//! What a revision renders to is a function of its tree (the folder's content at that
//! commit), the render options, the builder (its identity: kustomize's version, and for the
//! native builder fluxsim's own build) and fluxsim itself (its fingerprint). The key holds all
//! of them. A render is stored only when it can be told again offline: every build's inputs
//! are pinned down (one with remote inputs may change without the tree changing) and no build
//! failed (a failure may be the machine's: a timeout, a missing tool); what fails before a
//! build (a missing path) or after it (substitution) is decided by the tree and is stored.
//! Entries are integrity-checked by the store like build outputs: a corrupt one is rendered
//! again, never trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifact::{Artifact, ArtifactObject, Origin};
use crate::cache::BuildCache;
use crate::discover::FileFacts;
use crate::flux::{str_at, Kustomization, NamespacedName, ObjectId};
use crate::model::Maker;
use crate::model::RepoRender;
use crate::model::{ClusterRender, KustomizationRender, Status, UnknownVar, VarSource};
use crate::reconcile::Reuse;
use crate::render::{
    load_tree, render_tree_cached, render_tree_with, Known, Prior, RenderError, RepoOptions,
};
use crate::source::mapping::{MappedPath, SourceMapping};
use crate::source::Tree;
use crate::source::{resolve_rev, Digests};
use crate::store::Store;

const MAGIC: &str = "fluxsim-revision-render v4";

/// The store's folder for revision renders.
const SECTION: &str = "revisions";

/// A revision's render.
pub struct RevisionRender {
    /// The commit the revision names.
    pub commit: String,
    /// One render per cluster, sorted by name.
    pub clusters: Vec<ClusterRender>,
    /// The revision's files, for a render of a revision close to it.
    pub known: Known,
    /// Whether it came from the store.
    pub stored: bool,
}

/// Renders `head_tree` after `base`, the two sides of a diff: the discovery facts of the
/// files `base` read the same are taken from it, and with `changed_only` so is every
/// Kustomization whose spec, vars and input files did not change (`diff --changed-only`).
/// `base` keeps its Kustomizations.
pub fn render_after(
    base: &mut RevisionRender,
    head_tree: Tree,
    cache: &BuildCache<'_>,
    opts: &RepoOptions,
    changed_only: bool,
) -> Result<RepoRender, RenderError> {
    let reuse = changed_only.then(|| {
        let (before, after) = (&base.known.digests, head_tree.digests());
        let changed = crate::source::changed_between(before, after);
        let same_paths = *base.known.folders == *head_tree.folders()
            && changed
                .iter()
                .all(|f| before.contains_key(f) && after.contains_key(f));
        // Moved out of the base render, not copied: put back once head is rendered.
        let mut taken = BTreeMap::new();
        for c in &mut base.clusters {
            for k in std::mem::take(&mut c.kustomizations) {
                taken.insert((c.name.clone(), k.kustomization.id.clone()), k);
            }
        }
        Arc::new(Reuse {
            base: taken,
            changed,
            same_paths,
        })
    });
    let prior = Prior {
        known: Some(base.known.clone()),
        reuse,
    };
    let head = render_tree_with(head_tree, cache, opts, &prior);
    if let Some(reuse) = prior.reuse {
        let reuse = Arc::try_unwrap(reuse).unwrap_or_else(|shared| (*shared).clone());
        // In (cluster, id) order: each cluster's Kustomizations come back sorted, as made.
        for ((cluster, _), k) in reuse.base {
            if let Some(c) = base.clusters.iter_mut().find(|c| c.name == cluster) {
                c.kustomizations.push(k);
            }
        }
    }
    head
}

/// Renders the revision `rev` of the repository holding `dir`, or takes its render from the
/// store (`opts.cache_dir`) when it was stored before.
pub fn render_revision(
    dir: &Path,
    rev: &str,
    cache: &BuildCache<'_>,
    opts: &RepoOptions,
) -> Result<RevisionRender, RenderError> {
    let slot = RevisionSlot::of(dir, rev, cache, opts)?;
    if let Some(stored) = slot.take() {
        return Ok(stored);
    }
    let render = render_tree_cached(load_tree(dir, Some(rev), opts)?, cache, opts)?;
    let known = slot.put(&render);
    let RepoRender { tree, clusters, .. } = render;
    Ok(RevisionRender {
        commit: tree.revision().unwrap_or_default().to_string(),
        clusters,
        known,
        stored: false,
    })
}

/// Where the render of a revision is kept in the store, when it can be: the revision's
/// commit, and the entry's key.
pub struct RevisionSlot {
    id: Option<crate::source::RevisionId>,
    entry: Option<(String, Store)>,
}

impl RevisionSlot {
    /// The slot of the revision `rev` of the repository holding `dir`, rendered with `opts`
    /// through `cache` (one `git rev-parse`; nothing read).
    pub fn of(
        dir: &Path,
        rev: &str,
        cache: &BuildCache<'_>,
        opts: &RepoOptions,
    ) -> Result<RevisionSlot, RenderError> {
        let id = resolve_rev(dir, rev)?;
        // Another checkout mapped with --source is read as its work tree is now: the
        // revision's tree id does not pin it down, so such a render is neither stored nor
        // taken.
        let checkout = opts.sources.iter().any(|m| {
            matches!(
                m,
                Ok(SourceMapping {
                    path: MappedPath::Checkout(_),
                    ..
                })
            )
        });
        let store = opts
            .cache_dir
            .as_deref()
            .filter(|_| !checkout)
            .map(Store::new);
        let entry = id
            .as_ref()
            .zip(store)
            .map(|(id, store)| (entry_key(&id.tree, cache, opts), store));
        Ok(RevisionSlot { id, entry })
    }

    /// The render stored in the slot, when there is one (checked: a corrupt entry is none).
    #[must_use]
    pub fn take(&self) -> Option<RevisionRender> {
        let (id, (key, store)) = self.id.as_ref().zip(self.entry.as_ref())?;
        let entry = store.get_in(SECTION, key).and_then(|body| decode(&body))?;
        Some(RevisionRender {
            commit: id.commit.clone(),
            clusters: entry.clusters,
            known: entry.known,
            stored: true,
        })
    }

    /// Keeps `render` (of this revision) in the slot when it can be told again from the tree
    /// alone; gives what it knows of the revision's files.
    pub fn put(&self, render: &RepoRender) -> Known {
        let known = Known {
            digests: Arc::new(render.tree.digests().clone()),
            folders: Arc::new(render.tree.folders().clone()),
            facts: Arc::new(render.facts.clone()),
        };
        if let Some((key, store)) = &self.entry {
            if storable(render) {
                store.put_in(SECTION, key, &encode(&render.clusters, &known));
            }
        }
        known
    }
}

/// The store key of a revision's render: everything its bytes depend on.
fn entry_key(tree: &str, cache: &BuildCache<'_>, opts: &RepoOptions) -> String {
    let RepoOptions {
        cluster_args,
        only,
        strict,
        strict_sources,
        origins,
        builder,
        sources,
        // What git does not track is not in a revision; the rest changes how the render is
        // made, not what it gives.
        include_untracked: _,
        jobs: _,
        kustomize: _,
        timeout: _,
        cache_dir: _,
        // Which helm renders the releases (a release is stored only when its chart is the
        // tree's: see `storable`), nor one with ResourceSets.
        helm,
        flux_operator: _,
        progress: _,
        listener: _,
        // A render that needed the network is never stored, whether it was allowed (its
        // inputs are not known) or not (`NeedsNetwork`; see `storable`).
        network: _,
        build_ignore,
        // Kept trees are this run's, never stored (the field is skipped).
        keep_sources: _,
        versions_override,
    } = opts;
    let text = serde_json::json!([
        MAGIC,
        tree,
        cluster_args,
        only,
        strict,
        strict_sources,
        origins,
        format!("{builder:?}"),
        sources
            .iter()
            .map(|m| m.as_ref().map(SourceMapping::label).unwrap_or_default())
            .collect::<Vec<_>>(),
        cache.builder().identity(),
        crate::store::own_fingerprint(),
        build_ignore
            .as_ref()
            .map(|b| [&b.cluster, &b.kustomization, &b.patterns]),
        versions_override.as_ref().map(|v| [&v.flux, &v.kubernetes]),
        helm.as_ref().map(helm_identity),
    ]);
    crate::digest::sha256_hex(text.to_string().as_bytes())
}

/// The helm a render's releases come from, for the key: the binary (as found now, with its
/// size and modification time: a helm replaced in place is another helm) and the options.
/// Without a helm found, `diff`'s default renders no release: that is in the key too.
fn helm_identity(h: &crate::helm::HelmOptions) -> Value {
    let binary = h.binary.clone().or_else(|| crate::scratch::on_path("helm"));
    let meta = binary.as_deref().and_then(|b| std::fs::metadata(b).ok());
    serde_json::json!({
        "binary": binary.as_ref().map(|b| b.display().to_string()),
        "len": meta.as_ref().map(std::fs::Metadata::len),
        "modified": meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos().to_string()),
        "fetch_charts": h.fetch_charts,
        "by_default": h.by_default,
        "timeout": h.timeout.as_secs(),
    })
}

/// Whether a render can be told again from its tree alone (see the module's doc).
fn storable(render: &RepoRender) -> bool {
    render
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .all(|k| match k.status {
            // What a ResourceSet makes depends on the flux-operator binary and, for a
            // failure, on whether it could run: not the tree's alone.
            _ if crate::resourceset::is_entry(k) => false,
            // A release is the tree's (and helm's, in the key) when its chart is a folder of
            // the tree; a chart from a chart repository or registry is not (a range may
            // resolve to another version, a cache may hold it or not), nor a failure (a
            // timeout is the machine's).
            _ if crate::model::is_release(k) => {
                (k.status == Status::Rendered && k.chart_in_tree) || k.status == Status::Suspended
            }
            Status::Rendered => k.inputs.is_some(),
            // The build ran; what failed after it (substitution, a var source) is fluxsim's
            // own work on its output and on earlier renders.
            Status::Failed(_) if k.built_by.is_some() => k.inputs.is_some(),
            // The generator failed before any build (the build path is known once it has
            // run): the tree alone decides. A failed build may be the machine's.
            Status::Failed(_) => k.build_path.is_none(),
            Status::Blocked(_) | Status::External(_) | Status::Suspended => true,
            // Whether the network is allowed is not the tree's alone.
            Status::NeedsNetwork(_) => false,
        })
}

/// What is stored.
#[derive(Serialize, Deserialize)]
struct Entry {
    digests: Digests,
    folders: BTreeSet<String>,
    facts: BTreeMap<String, FileFacts>,
    clusters: Vec<StoredCluster>,
}

#[derive(Serialize, Deserialize)]
struct StoredCluster {
    name: String,
    kustomizations: Vec<StoredKustomization>,
    waves: Vec<Vec<NamespacedName>>,
    strict: bool,
    strict_from: Option<String>,
    flux_strict: bool,
    versions: crate::versions::ClusterVersions,
    home: String,
}

#[derive(Serialize, Deserialize)]
struct StoredKustomization {
    kustomization: Kustomization,
    parent: Option<NamespacedName>,
    /// `Status::as_str`, with the reason when it has one.
    status: (String, Option<String>),
    artifact: Option<StoredArtifact>,
    template: StoredTemplate,
    substituted: bool,
    /// Source, whether encrypted, value, who put the source there.
    vars: BTreeMap<String, (String, bool, String, String)>,
    unknown_vars: Vec<UnknownVar>,
    unknown_sources: Vec<String>,
    strict: bool,
    vars_used: BTreeSet<String>,
    build_path: Option<String>,
    generated: Option<String>,
    built_by: Option<String>,
    notes: Vec<crate::model::Note>,
    inputs: Option<BTreeSet<String>>,
}

/// The template, most often the artifact itself.
#[derive(Serialize, Deserialize)]
enum StoredTemplate {
    None,
    SameAsArtifact,
    Own(StoredArtifact),
}

/// An artifact: its text, and each object read back (so no YAML is parsed to load it).
#[derive(Serialize, Deserialize)]
struct StoredArtifact {
    sha256: String,
    yaml: String,
    objects: Vec<StoredObject>,
}

#[derive(Serialize, Deserialize)]
struct StoredObject {
    sha256: String,
    object: Value,
    origin: Option<Origin>,
}

fn encode(clusters: &[ClusterRender], known: &Known) -> String {
    let entry = Entry {
        digests: known.digests.as_ref().clone(),
        folders: known.folders.as_ref().clone(),
        facts: known.facts.as_ref().clone(),
        clusters: clusters.iter().map(encode_cluster).collect(),
    };
    serde_json::to_string(&entry).unwrap_or_default()
}

fn encode_cluster(c: &ClusterRender) -> StoredCluster {
    let ClusterRender {
        name,
        kustomizations,
        waves,
        strict,
        strict_from,
        flux_strict,
        versions,
        home,
    } = c;
    StoredCluster {
        name: name.clone(),
        kustomizations: kustomizations.iter().map(encode_kustomization).collect(),
        waves: waves.clone(),
        strict: *strict,
        strict_from: strict_from.clone(),
        flux_strict: *flux_strict,
        versions: versions.clone(),
        home: home.clone(),
    }
}

fn encode_kustomization(k: &KustomizationRender) -> StoredKustomization {
    // Every field is named, so that a new one cannot be forgotten here.
    let KustomizationRender {
        kustomization,
        parent,
        status,
        artifact,
        template,
        substituted,
        vars,
        unknown_vars,
        unknown_sources,
        vars_used,
        build_path,
        generated,
        built_by,
        // Why a build was delegated is this run's news, not part of the render.
        delegated: _,
        notes,
        inputs,
        reused: _,
        strict,
        // A tree kept for the oracle is this run's, never stored.
        source_tree: _,
        // Only a Kustomization that needs the network has it, and such a render is never
        // stored (`storable`).
        offline: _,
        // A build with remote entries has no pinned inputs (or failed): never stored.
        remote_inputs: _,
        // What `storable` reads before the render is kept; a render read back is never kept
        // again.
        chart_in_tree: _,
    } = k;
    let reason = match status {
        Status::Failed(r) | Status::Blocked(r) | Status::External(r) | Status::NeedsNetwork(r) => {
            Some(r.clone())
        }
        Status::Rendered | Status::Suspended => None,
    };
    let template = match (template, artifact) {
        (None, _) => StoredTemplate::None,
        (Some(t), Some(a)) if same_artifact(t, a) => StoredTemplate::SameAsArtifact,
        (Some(t), _) => StoredTemplate::Own(encode_artifact(t)),
    };
    StoredKustomization {
        kustomization: kustomization.clone(),
        parent: parent.clone(),
        status: (status.as_str().to_string(), reason),
        artifact: artifact.as_ref().map(encode_artifact),
        template,
        substituted: *substituted,
        vars: vars
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (
                        v.source.clone(),
                        v.encrypted,
                        v.value.clone(),
                        v.from.clone(),
                    ),
                )
            })
            .collect(),
        unknown_vars: unknown_vars.clone(),
        unknown_sources: unknown_sources.clone(),
        strict: *strict,
        vars_used: vars_used.clone(),
        build_path: build_path.clone(),
        generated: generated.clone(),
        built_by: built_by.map(|m| m.as_str().to_string()),
        notes: notes.clone(),
        inputs: inputs.clone(),
    }
}

fn same_artifact(a: &Artifact, b: &Artifact) -> bool {
    a.yaml == b.yaml
        && a.objects.len() == b.objects.len()
        && a.objects
            .iter()
            .zip(&b.objects)
            .all(|(x, y)| x.origin == y.origin)
}

fn encode_artifact(a: &Artifact) -> StoredArtifact {
    let Artifact {
        sha256,
        objects,
        yaml,
    } = a;
    StoredArtifact {
        sha256: sha256.clone(),
        yaml: yaml.clone(),
        objects: objects
            .iter()
            .map(|o| {
                let ArtifactObject {
                    sha256,
                    object,
                    origin,
                    // Read again from the object and the artifact's text.
                    api_version: _,
                    id: _,
                    yaml: _,
                } = o;
                StoredObject {
                    sha256: sha256.clone(),
                    object: Value::clone(object),
                    origin: origin.clone(),
                }
            })
            .collect(),
    }
}

/// A stored entry read back: the clusters and the files' facts.
struct Decoded {
    clusters: Vec<ClusterRender>,
    known: Known,
}

/// Reads an entry back; `None` when it does not hold together (it is then rendered again).
fn decode(body: &str) -> Option<Decoded> {
    let entry: Entry = serde_json::from_str(body).ok()?;
    let clusters = entry
        .clusters
        .into_iter()
        .map(|c| {
            Some(ClusterRender {
                name: c.name,
                kustomizations: c
                    .kustomizations
                    .into_iter()
                    .map(decode_kustomization)
                    .collect::<Option<_>>()?,
                waves: c.waves,
                strict: c.strict,
                strict_from: c.strict_from,
                flux_strict: c.flux_strict,
                versions: c.versions,
                home: c.home,
            })
        })
        .collect::<Option<_>>()?;
    Some(Decoded {
        clusters,
        known: Known {
            digests: Arc::new(entry.digests),
            folders: Arc::new(entry.folders),
            facts: Arc::new(entry.facts),
        },
    })
}

fn decode_kustomization(k: StoredKustomization) -> Option<KustomizationRender> {
    let status = match (k.status.0.as_str(), k.status.1) {
        ("rendered", None) => Status::Rendered,
        ("suspended", None) => Status::Suspended,
        ("failed", Some(r)) => Status::Failed(r),
        ("blocked", Some(r)) => Status::Blocked(r),
        ("external", Some(r)) => Status::External(r),
        ("needs-network", Some(r)) => Status::NeedsNetwork(r),
        _ => return None,
    };
    let artifact = match k.artifact {
        Some(a) => Some(decode_artifact(a)?),
        None => None,
    };
    let template = match k.template {
        StoredTemplate::None => None,
        StoredTemplate::SameAsArtifact => Some(artifact.clone()?),
        StoredTemplate::Own(t) => Some(decode_artifact(t)?),
    };
    let built_by = match k.built_by.as_deref() {
        None => None,
        Some("native") => Some(Maker::Native),
        Some("kustomize") => Some(Maker::Kustomize),
        Some(_) => return None,
    };
    Some(KustomizationRender {
        kustomization: k.kustomization,
        parent: k.parent,
        status,
        artifact,
        template,
        substituted: k.substituted,
        vars: k
            .vars
            .into_iter()
            .map(|(name, (source, encrypted, value, from))| {
                (
                    name,
                    VarSource {
                        source,
                        from,
                        encrypted,
                        value,
                    },
                )
            })
            .collect(),
        unknown_vars: k.unknown_vars,
        unknown_sources: k.unknown_sources,
        delegated: None,
        remote_inputs: Vec::new(),
        chart_in_tree: false,
        strict: k.strict,
        vars_used: k.vars_used,
        build_path: k.build_path,
        generated: k.generated,
        built_by,
        notes: k.notes,
        inputs: k.inputs,
        reused: false,
        source_tree: None,
        offline: None,
    })
}

fn decode_artifact(a: StoredArtifact) -> Option<Artifact> {
    let docs = crate::manifest::split_documents(&a.yaml);
    if docs.len() != a.objects.len() {
        return None;
    }
    let objects = docs
        .into_iter()
        .zip(a.objects)
        .map(|(doc, o)| ArtifactObject {
            api_version: str_at(&o.object, &["apiVersion"])
                .unwrap_or_default()
                .to_string(),
            id: ObjectId::of(&o.object),
            sha256: o.sha256,
            yaml: doc.to_string(),
            object: Arc::new(o.object),
            origin: o.origin,
        })
        .collect();
    Some(Artifact {
        sha256: a.sha256,
        objects,
        yaml: a.yaml,
    })
}
