//! The render data model: what a render says of each cluster and each of its Flux
//! Kustomizations (status, artifact, template, vars and where they came from, notes). It is
//! made by `reconcile` and read by every consumer (`compare`, `audit`, `graph`, `canary`,
//! `report`, `revision`), so it lives apart from the simulation that fills it.

pub mod graph;
mod note;

pub use note::{DependencyState, Note};

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::artifact::Artifact;
use crate::discover::{Cluster, FileFacts};
use crate::flux::{Kustomization, NamespacedName};
use crate::source::Tree;

/// Where one var's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarSource {
    /// `inline` for `postBuild.substitute`, else `ConfigMap/name` or `Secret/name`.
    pub source: String,
    /// Who put the source on the cluster: `applied by NS/NAME`, `bootstrap: ...`, `file
    /// PATH (...)`, `declared in fluxsim.toml`, `postBuild.substitute`.
    pub from: String,
    /// The value is SOPS-encrypted ciphertext: the real value is unknown offline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub encrypted: bool,
    /// The value (never printed by `render`: it may come from a Secret).
    #[serde(skip)]
    pub value: String,
}

/// What became of one Kustomization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Status {
    /// Built, substituted, ready to apply.
    Rendered,
    /// The build or the substitution failed.
    Failed(String),
    /// Never rendered. Not made any more (`dependsOn` never blocks a render); kept so that
    /// stored renders and JSON readers keep their meaning.
    Blocked(String),
    /// Its source is not this repository; not rendered.
    External(String),
    /// `spec.suspend: true`.
    Suspended,
    /// Its build reads something over the network (a remote base, a URL in a file field)
    /// and the network was not allowed (`--allow-network`); not rendered. Says what it reads
    /// and from which file.
    NeedsNetwork(String),
}

impl Status {
    /// The word for the outcome, as reports print it.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Rendered => "rendered",
            Status::Failed(_) => "failed",
            Status::Blocked(_) => "blocked",
            Status::External(_) => "external",
            Status::Suspended => "suspended",
            Status::NeedsNetwork(_) => "needs-network",
        }
    }
}

/// One Kustomization's render.
#[derive(Debug, Clone, Serialize)]
pub struct KustomizationRender {
    /// The Kustomization as applied on the cluster (after its parent's substitution).
    pub kustomization: Kustomization,
    /// The Kustomization that applies this one (`None` for the root).
    pub parent: Option<NamespacedName>,
    /// The outcome.
    pub status: Status,
    /// The artifact, when rendered.
    pub artifact: Option<Artifact>,
    /// The build output before postBuild substitution and apply-time changes (the template
    /// the artifact was made from); equal to the artifact when nothing changed it.
    #[serde(skip)]
    pub template: Option<Artifact>,
    /// Whether postBuild substitution ran.
    pub substituted: bool,
    /// The vars available to substitution and where each came from.
    pub vars: BTreeMap<String, VarSource>,
    /// The vars its objects reference whose values cannot be known offline (from a Secret
    /// made at run time, or SOPS-encrypted): each was replaced by a placeholder.
    pub unknown_vars: Vec<UnknownVar>,
    /// Its `substituteFrom` sources made at run time (`Kind/namespace/name`): their values
    /// are unknown.
    #[serde(skip)]
    pub unknown_sources: Vec<String>,
    /// The var names referenced by the substituted objects.
    pub vars_used: BTreeSet<String>,
    /// The directory built, relative to the source root.
    pub build_path: Option<String>,
    /// The kustomization file fluxsim generated or merged, when it wrote one.
    pub generated: Option<String>,
    /// Which builder made the build output (`None` when there is none: not rendered, or the
    /// build failed).
    pub built_by: Option<Maker>,
    /// Why the native builder handed the build to the kustomize binary, when it did (the
    /// build cache keeps the reason with the build).
    pub delegated: Option<String>,
    /// Things the user should know (encrypted vars, unknown values).
    #[serde(serialize_with = "note::as_text")]
    pub notes: Vec<Note>,
    /// The files the build read, relative to the source root (`None` when they cannot be
    /// pinned down: remote bases, Helm charts).
    #[serde(skip)]
    pub inputs: Option<BTreeSet<String>>,
    /// Taken from the base render unchanged (`diff --changed-only`): same spec, same vars,
    /// and no input file changed.
    #[serde(skip)]
    pub reused: bool,
    /// Substituted strictly.
    #[serde(skip)]
    pub strict: bool,
    /// The tree it was built from when that is not the cluster's own source (a mapped
    /// source, an ArtifactGenerator's artifact), kept when `RepoOptions::keep_sources` asks
    /// (`scripts/oracle-check` hands it to Flux's code).
    #[serde(skip)]
    pub source_tree: Option<std::sync::Arc<SourceSnapshot>>,
    /// For a Kustomization that needs the network (and may not reach it): what its own files
    /// declare, read with the remote entries left out. `None` for any other.
    #[serde(skip)]
    pub offline: Option<Offline>,
    /// The remote entries its kustomization files name (remote bases and files, as
    /// written), whether or not they were fetched: what a base revision trusts
    /// (`--network base-trusted`).
    #[serde(skip)]
    pub remote_inputs: Vec<String>,
    /// A release entry's chart is a folder of the tree (not a chart repository's or a
    /// registry's): what it renders is the tree's (a revision's render may be stored).
    #[serde(skip)]
    pub chart_in_tree: bool,
}

impl KustomizationRender {
    /// A render of `kustomization` (applied by `parent`) with `status` and nothing else yet:
    /// no artifact, template, vars, notes or inputs, not substituted, built by no one, not
    /// reused, strict, from the cluster's own tree. Every step that makes one starts here
    /// and sets what it knows (`..KustomizationRender::new(..)`), so a new field has one
    /// default.
    #[must_use]
    pub fn new(
        kustomization: Kustomization,
        parent: Option<NamespacedName>,
        status: Status,
    ) -> Self {
        KustomizationRender {
            kustomization,
            parent,
            status,
            artifact: None,
            template: None,
            substituted: false,
            vars: BTreeMap::new(),
            unknown_vars: Vec::new(),
            unknown_sources: Vec::new(),
            vars_used: BTreeSet::new(),
            build_path: None,
            generated: None,
            built_by: None,
            delegated: None,
            notes: Vec::new(),
            inputs: None,
            reused: false,
            strict: true,
            source_tree: None,
            offline: None,
            remote_inputs: Vec::new(),
            chart_in_tree: false,
        }
    }

    /// The objects the cluster's simulation takes this Kustomization to apply: its
    /// artifact's, or, for one that needs the network, those its own files declare
    /// ([`Offline::declared`]).
    pub fn applied_objects(&self) -> impl Iterator<Item = &crate::artifact::ArtifactObject> {
        self.artifact.iter().flat_map(|a| &a.objects).chain(
            self.offline
                .iter()
                .filter_map(|o| o.declared.as_ref().ok())
                .flatten(),
        )
    }
}

/// What a Kustomization that needs the network declares in its own files, found without it:
/// its build with every remote entry left out of its kustomization files, substituted as its
/// own build would be. It presumes that the remote entries add no Flux object, var source
/// or Kustomization and change none; the Kustomization itself stays not rendered (never
/// compared), and what this finds is rendered as the cluster's (each child with a note).
#[derive(Debug, Clone)]
pub struct Offline {
    /// The objects found ([`read_offline`]), or why that build failed (then nothing below
    /// the Kustomization is found through it).
    pub declared: Result<Vec<crate::artifact::ArtifactObject>, String>,
    /// The remote entries left out (`file: field `url``), in the order the build meets them.
    pub left_out: Vec<String>,
    /// The Flux Kustomizations declared in the files below it (as discovery reads them)
    /// that the cluster's render does not hold, by name, sorted: what it hides.
    pub hides: Vec<String>,
}

impl Default for Offline {
    fn default() -> Self {
        Offline {
            declared: Ok(Vec::new()),
            left_out: Vec::new(),
            hides: Vec::new(),
        }
    }
}

/// Whether an object found offline ([`Offline`]) is kept: what the simulation of the
/// cluster reads of what a Kustomization applies. Flux objects (Kustomizations, sources,
/// ArtifactGenerators: groups `*.fluxcd.io`, the Flux Operator's `fluxcd.controlplane.io`),
/// and the var sources: ConfigMaps, Secrets, and ExternalSecrets (which make Secrets).
#[must_use]
pub fn read_offline(id: &crate::flux::ObjectId) -> bool {
    id.group.ends_with(".fluxcd.io")
        || id.group == "fluxcd.controlplane.io"
        || (id.group.is_empty() && matches!(id.kind.as_str(), "ConfigMap" | "Secret"))
        || (id.group == "external-secrets.io" && id.kind == "ExternalSecret")
}

/// A tree a Kustomization was built from, other than the cluster's own source.
#[derive(Debug)]
pub struct SourceSnapshot {
    /// How notes name it (`Note::BuiltFrom`).
    pub label: String,
    /// Where a mapped source was read (`None`: a tree fluxsim made, an ArtifactGenerator's).
    pub read_from: Option<ReadFrom>,
    /// Its files (path relative to its root, `/`-separated) and their bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Its folders (an empty one exists in an artifact).
    pub dirs: BTreeSet<String>,
}

/// Where a mapped source's folder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadFrom {
    /// A folder of the repository (relative to its root; empty for the root).
    Folder(String),
    /// Another checkout.
    Checkout(std::path::PathBuf),
}

/// A var whose value cannot be known offline, and the placeholder that stands for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct UnknownVar {
    /// The var's name.
    pub name: String,
    /// The sources it may come from (`Kind/namespace/name`).
    pub sources: Vec<String>,
    /// What was substituted (`fluxsim-unknown:Secret/ns/name:KEY`).
    pub placeholder: String,
}

/// A repository's render.
pub struct RepoRender {
    /// The materialised source (kept alive for the renders' lifetime).
    pub tree: Tree,
    /// The builder used, as text (`kubectl kustomize (kustomize v5.5.0)`).
    pub builder: String,
    /// What the builder did in this run (`native for 22 builds, 1 delegated`), when it says.
    pub builder_stats: Option<String>,
    /// One render per cluster, sorted by name.
    pub clusters: Vec<ClusterRender>,
    /// Distinct kustomize builds that ran.
    pub builds_run: usize,
    /// Builds read from the persistent cache instead.
    pub stored_hits: usize,
    /// What discovery read from each YAML file of the tree that holds anything for it.
    pub facts: BTreeMap<String, FileFacts>,
    /// Every cluster root discovery found in the tree, sorted by name, before `--cluster`
    /// and `--only` chose among them (`source_ignore` not filled in).
    pub discovered: Vec<Cluster>,
    /// The tree narrowed by each cluster's `GitRepository.spec.ignore` (kept alive while the
    /// renders are read).
    pub views: Vec<Tree>,
    /// What the helm step did (`--helm`), for the summary line.
    pub helm_summary: Option<String>,
    /// What the ResourceSets step did (the flux-operator CLI, placeholder inputs), for the
    /// summary line, when the render found any.
    pub resourceset_summary: Option<String>,
    /// The repository's `fluxsim.toml` as the render read it (through the source tree: what
    /// git tracks), so that what reads it after the render (`graph`, `validate`) reads it
    /// once.
    pub config: crate::config::Config,
}

/// One cluster's render.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRender {
    /// The cluster's name.
    pub name: String,
    /// Every Kustomization reached, sorted by namespace and name.
    pub kustomizations: Vec<KustomizationRender>,
    /// The steps of the fixed point: the ids rendered at each step (a Kustomization appears
    /// again when its vars changed).
    pub waves: Vec<Vec<NamespacedName>>,
    /// Whether substitution was strict on this cluster.
    pub strict: bool,
    /// Where the cluster's `StrictPostBuildSubstitutions` gate was read, when it sets one.
    pub strict_from: Option<String>,
    /// Whether the cluster's kustomize-controller substitutes strictly (its gate, else the
    /// default of its Flux version), whatever `--no-strict` asked of the render.
    pub flux_strict: bool,
    /// The Flux and Kubernetes versions the cluster runs, and where each comes from.
    pub versions: crate::versions::ClusterVersions,
    /// The cluster's own folder (`kubernetes/dev`; `reconcile::sources::home_of`), `""` for
    /// the repository root: the part of a path that is this cluster's, which comparing
    /// clusters abstracts.
    pub home: String,
}

impl ClusterRender {
    /// Looks up a Kustomization by `namespace/name` or by name alone.
    #[must_use]
    pub fn find(&self, which: &str) -> Option<&KustomizationRender> {
        self.kustomizations.iter().find(|k| {
            let id = &k.kustomization.id;
            which == id.to_string() || which == id.name
        })
    }
}

/// Which builder made a build's output: fluxsim's native builder or the kustomize binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Maker {
    /// The in-process builder (the `fluxsim-kustomize` crate).
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

    pub(crate) fn parse(s: &str) -> Option<Maker> {
        match s {
            "native" => Some(Maker::Native),
            "kustomize" => Some(Maker::Kustomize),
            _ => None,
        }
    }
}

/// How every placeholder for a var fluxsim cannot read offline starts
/// (`fluxsim-unknown:Secret/ns/name:KEY`): consumers treat a value holding it as unknown.
pub const PLACEHOLDER_PREFIX: &str = "fluxsim-unknown:";

/// The apiVersion of a Helm release's entry in a cluster's render (`--helm`).
pub const RELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";

/// Whether a render entry is a Helm release (a child artifact), not a Kustomization.
#[must_use]
pub fn is_release(k: &KustomizationRender) -> bool {
    k.kustomization.api_version == RELEASE_API_VERSION
}

/// The apiVersion of a ResourceSet's entry in a cluster's render (the Flux Operator's
/// `fluxcd.controlplane.io/v1`).
pub const RSET_API_VERSION: &str = "fluxcd.controlplane.io/v1";

/// Whether a render entry is a Flux Operator ResourceSet's (its generated objects, a child
/// artifact `<parent>/rset/<namespace>/<name>`), not a Kustomization.
#[must_use]
pub fn is_resourceset_entry(k: &KustomizationRender) -> bool {
    k.kustomization.api_version == RSET_API_VERSION
}

/// The id of the entry of ResourceSet `rset` applied by `parent`:
/// `<parent namespace>/<parent name>/rset/<namespace>/<name>`.
#[must_use]
pub fn resourceset_entry_id(parent: &NamespacedName, rset: &NamespacedName) -> NamespacedName {
    NamespacedName {
        namespace: parent.namespace.clone(),
        // The parent's name is an entry's id already; the ResourceSet's are encoded, so the
        // only `/` of an entry's name are its separators.
        name: format!(
            "{}/rset/{}/{}",
            parent.name,
            crate::flux::entry_part(&rset.namespace),
            crate::flux::entry_part(&rset.name)
        ),
    }
}

/// The HelmRelease (namespace and name) a release entry renders, read from its id
/// (`<parent>/helm/<namespace>/<name>`, made by `helm::step::release_entry`).
#[must_use]
pub fn release_of(entry: &KustomizationRender) -> Option<NamespacedName> {
    if !is_release(entry) {
        return None;
    }
    let (_, rest) = entry.kustomization.id.name.rsplit_once("/helm/")?;
    let (namespace, name) = rest.split_once('/')?;
    Some(NamespacedName {
        namespace: crate::flux::id_unsegment(namespace).into_owned(),
        name: crate::flux::id_unsegment(name).into_owned(),
    })
}

/// The ResourceSet (namespace and name) a ResourceSet entry renders, read from its id.
#[must_use]
pub fn resourceset_of(entry: &KustomizationRender) -> Option<NamespacedName> {
    if !is_resourceset_entry(entry) {
        return None;
    }
    let (_, rest) = entry.kustomization.id.name.split_once("/rset/")?;
    let (namespace, name) = rest.split_once('/')?;
    Some(NamespacedName {
        namespace: crate::flux::id_unsegment(namespace).into_owned(),
        name: crate::flux::id_unsegment(name).into_owned(),
    })
}
