//! Comparing renders: a revision against another (`diff`), and a cluster against another
//! (`compare`).
//!
//! A revision diff matches artifacts by (cluster, Kustomization) and objects by their
//! `ObjectId` (group, kind, namespace, name: the identity the API server and Flux's inventory
//! use), so a reordered `resources:` list or an `apiVersion` bump of the same object is not a
//! move. An object that leaves one Kustomization and appears in another of the same cluster is
//! a move: with `prune: true` on the old owner, Flux's garbage collection deletes it when the
//! old owner reconciles and the new owner recreates it (`fluxcd/kustomize-controller`
//! `internal/controller/kustomization_controller.go`, `prune` of the stale inventory entries).
//!
//! Nothing unrendered is called identical: a Kustomization that did not render (failed,
//! blocked, external, suspended) in a revision where it exists is `not compared`, with its
//! status, whatever the other side holds.

mod clusters;
mod external;
mod objects;
mod revisions;
pub mod strip;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::flux::ObjectId;
use crate::model::{KustomizationRender, Status};

pub use clusters::{
    compare_clusters, ClusterComparison, GraphNode, GraphRow, TemplateObjectDiff, TemplateRow,
    VarDiff,
};
pub use objects::unified;
pub use revisions::diff_revisions;

/// What a `--helm` release entry's name holds between its Kustomization and the release
/// (`<kustomization>/helm/<namespace>/<name>`, made by core's `helm::step::release_entry`).
pub(crate) const HELM_SEPARATOR: &str = "/helm/";

/// `N Kustomizations`, `M HelmReleases`, or both joined by `and` (nothing: `0 Kustomizations`).
#[must_use]
pub fn units(kustomizations: usize, releases: usize) -> String {
    let (k, r) = (
        crate::text::plural(kustomizations, "Kustomization"),
        crate::text::plural(releases, "HelmRelease"),
    );
    match (kustomizations, releases) {
        (_, 0) => k,
        (0, _) => r,
        _ => format!("{k} and {r}"),
    }
}

/// Whether a diff's entry is a Flux Kustomization: neither a `--helm` release entry nor a
/// ResourceSet's entry (`<ks>/rset/<ns>/<name>`), by its name.
pub(crate) fn is_kustomization_entry(entry: &str) -> bool {
    !is_release_entry(entry) && !entry.contains("/rset/")
}

/// Whether a diff's entry is a `--helm` release entry, by its name.
pub(crate) fn is_release_entry(entry: &str) -> bool {
    entry.contains(HELM_SEPARATOR)
}

/// How a revision diff compares and shows objects.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// Secrets masked (unless shown) in the object diffs, never in the comparison; Secrets
    /// and CRDs left out of what is shown (`--skip-secrets`, `--skip-crds`).
    pub present: crate::mask::Presentation,
    /// Noise dropped from both sides before objects are compared.
    pub strip: strip::Strip,
}

/// What became of one thing between two revisions.
///
/// It shares five variants with review's `model::Status`, the review's input, and is not
/// that type: a diff also knows `ExternalUnchanged`, which the review's input has no word
/// for, and the review's `analysis::Outcome` is what the review makes of a `Status` after its
/// filters (`Renamed`, `Filtered`). `report/review.rs` maps this one to review's `Status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The same bytes.
    Identical,
    /// Present in both, different.
    Changed,
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
    /// Not rendered in a revision where it exists: what it applies there is unknown, so it
    /// is neither identical nor changed.
    #[serde(rename = "not compared")]
    NotCompared,
    /// External in both revisions (not rendered), and everything it applies is a function
    /// of (its object, its source's object, its var sources) byte-identical in both: it
    /// applies the same.
    #[serde(rename = "external unchanged")]
    ExternalUnchanged,
}

impl Change {
    /// The word used in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Identical => "identical",
            Change::Changed => "changed",
            Change::Added => "added",
            Change::Removed => "removed",
            Change::NotCompared => "not compared",
            Change::ExternalUnchanged => "identical (external, unchanged)",
        }
    }
}

/// Whether a cluster exists in both revisions, or only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// In base and head.
    Both,
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
}

/// One object's difference inside a changed artifact.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectDiff {
    /// Which object.
    pub object: ObjectId,
    /// Changed, added or removed.
    pub change: Change,
    /// A unified diff of the object's YAML (base → head); each hunk header names the object.
    pub diff: String,
    /// The object in base as a review shows it (Secret values masked unless shown).
    #[serde(skip)]
    pub base: Option<serde_json::Value>,
    /// The object in head as a review shows it.
    #[serde(skip)]
    pub head: Option<serde_json::Value>,
}

/// One Kustomization's artifact in base and head.
#[derive(Debug, Clone, Serialize)]
pub struct KustomizationDiff {
    /// `namespace/name`.
    pub kustomization: String,
    /// What happened to it.
    pub change: Change,
    /// The artifact digest in base (when it rendered there).
    pub base_sha256: Option<String>,
    /// The artifact digest in head (when it rendered there).
    pub head_sha256: Option<String>,
    /// Its status in base when it did not render (`failed: ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_problem: Option<String>,
    /// Its status in head when it did not render.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_problem: Option<String>,
    /// The ancestor whose failure (in the revision where this one is missing) left it
    /// unrendered there (`flux-system/apps`): its problem says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    /// It failed in head, or is missing from head below an ancestor that failed there: the
    /// change breaks it (an error for `--fail-on`, where not being compared otherwise is a
    /// warning).
    pub fails_in_head: bool,
    /// For a Kustomization external in both revisions: what was found identical
    /// (`identical (external, unchanged)`), or what changed or could not be checked (`not
    /// compared`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
    /// Objects that differ, sorted by id.
    pub objects: Vec<ObjectDiff>,
    /// Objects that differ but are not shown (`--skip-secrets`, `--skip-crds`).
    #[serde(skip)]
    pub left_out: usize,
    /// The ids of its objects in each revision's order, for a changed artifact (a review
    /// says "order changed" when only that differs).
    #[serde(skip)]
    pub order: Option<(Vec<ObjectId>, Vec<ObjectId>)>,
    /// A release entry whose chart's name or version differs between base and head (a
    /// chart bump).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartBump>,
}

/// A release's chart in base and head, as its `Chart.yaml` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChartBump {
    /// The chart's name in head (in base when head has none).
    pub name: String,
    /// Its version in base (`name@version` when the name changed too).
    pub base: String,
    /// Its version in head.
    pub head: String,
}

/// An object Flux's garbage collection deletes when head is applied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PruneDeletion {
    /// The Kustomization whose inventory held it (`namespace/name`).
    pub kustomization: String,
    /// The object.
    pub object: ObjectId,
}

/// An object that moved from one Kustomization to another.
#[derive(Debug, Clone, Serialize)]
pub struct Move {
    /// Which object.
    pub object: ObjectId,
    /// Its owner in base.
    pub from: String,
    /// Its owner in head.
    pub to: String,
    /// The old owner prunes: Flux deletes the object, then the new owner recreates it.
    pub prune_outage: bool,
}

/// One cluster's differences.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterDiff {
    /// The cluster's name.
    pub cluster: String,
    /// Whether the cluster exists in both, or only one, revision.
    pub presence: Presence,
    /// Every Kustomization of either revision, sorted.
    pub kustomizations: Vec<KustomizationDiff>,
    /// Objects that moved between Kustomizations.
    pub moves: Vec<Move>,
    /// Kustomizations not rendered again in head because nothing they read changed
    /// (`--changed-only`); identical by construction.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Objects Flux deletes when head is applied (see [`prune_deletions`]), sorted.
    #[serde(skip)]
    pub prune_deletions: Vec<PruneDeletion>,
}

impl ClusterDiff {
    /// (identical, total) artifacts.
    #[must_use]
    pub fn identical_count(&self) -> (usize, usize) {
        let same = self
            .kustomizations
            .iter()
            .filter(|k| k.change == Change::Identical)
            .count();
        (same, self.kustomizations.len())
    }

    /// The Kustomizations that could not be compared.
    pub fn not_compared(&self) -> impl Iterator<Item = &KustomizationDiff> {
        self.kustomizations
            .iter()
            .filter(|k| k.change == Change::NotCompared)
    }

    /// Whether anything compared differs: the cluster itself, an artifact, an owner.
    #[must_use]
    pub fn changed(&self) -> bool {
        self.presence != Presence::Both
            || !self.moves.is_empty()
            || self.kustomizations.iter().any(|k| {
                !matches!(
                    k.change,
                    Change::Identical | Change::NotCompared | Change::ExternalUnchanged
                )
            })
    }

    /// The Kustomizations external in both revisions that apply the same in both.
    pub fn external_unchanged(&self) -> impl Iterator<Item = &KustomizationDiff> {
        self.kustomizations
            .iter()
            .filter(|k| k.change == Change::ExternalUnchanged)
    }
}

/// A Kustomization that failed to render in a revision (see [`RevisionDiff::failures`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The cluster.
    pub cluster: String,
    /// `namespace/name`.
    pub kustomization: String,
    /// `base`, `head` or `base and head`.
    pub side: &'static str,
    /// Why it failed.
    pub error: String,
    /// How many Kustomizations it applies are not compared because of it.
    pub below: usize,
}

/// A revision against another.
#[derive(Debug, Clone, Serialize)]
pub struct RevisionDiff {
    /// The base revision as given.
    pub base: String,
    /// The head revision as given (`work tree` when none).
    pub head: String,
    /// The base as a name and a commit, for programs (JSON's `base`).
    #[serde(skip)]
    pub base_revision: Revision,
    /// The head as a name and a commit (none for the work tree), for programs.
    #[serde(skip)]
    pub head_revision: Revision,
    /// Per cluster, sorted by name.
    pub clusters: Vec<ClusterDiff>,
}

/// A revision of a diff, as programs read it: the name it was given or chosen by (`main`,
/// `HEAD~1`, `merge-base of HEAD and main`), and the commit it resolved to. The work tree
/// has neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revision {
    /// The name (`None` for the work tree).
    pub name: Option<String>,
    /// The full commit id (`None` for the work tree, or when unknown).
    pub commit: Option<String>,
}

impl RevisionDiff {
    /// Whether anything that could be compared differs (what could not is counted by
    /// [`Self::not_compared`], never taken for identical).
    #[must_use]
    pub fn changed(&self) -> bool {
        self.clusters.iter().any(ClusterDiff::changed)
    }

    /// What failed to render by itself (not below a failed parent), in cluster and name
    /// order, with how many Kustomizations below it are not compared: the first thing every
    /// report says, since nothing it applied can be compared.
    #[must_use]
    pub fn failures(&self) -> Vec<Failure> {
        let mut out = Vec::new();
        for c in &self.clusters {
            for k in &c.kustomizations {
                let own = |p: &Option<String>| {
                    p.as_deref()
                        .and_then(|p| p.strip_prefix("failed: "))
                        .map(str::to_string)
                };
                let (base, head) = (own(&k.base_problem), own(&k.head_problem));
                let (side, error) = match (base, head) {
                    (Some(b), Some(h)) if b == h => ("base and head", h),
                    (_, Some(h)) => ("head", h),
                    (Some(b), None) => ("base", b),
                    (None, None) => continue,
                };
                let below = c
                    .kustomizations
                    .iter()
                    .filter(|x| x.blocked_by.as_deref() == Some(k.kustomization.as_str()))
                    .count();
                out.push(Failure {
                    cluster: c.cluster.clone(),
                    kustomization: k.kustomization.clone(),
                    side,
                    error,
                    below,
                });
            }
        }
        out
    }

    /// How many Kustomizations could not be compared, in every cluster.
    #[must_use]
    pub fn not_compared(&self) -> usize {
        self.clusters.iter().map(|c| c.not_compared().count()).sum()
    }

    /// How many Kustomizations (not `--helm` release entries, not ResourceSets' entries:
    /// neither is ever taken from base) either revision has, in every cluster: what `N of M
    /// Kustomizations taken from base` counts against.
    #[must_use]
    pub fn kustomization_count(&self) -> usize {
        self.clusters
            .iter()
            .flat_map(|c| &c.kustomizations)
            .filter(|k| is_kustomization_entry(&k.kustomization))
            .count()
    }

    /// How many Kustomizations were taken from base (`--changed-only`), counted as
    /// [`Self::kustomization_count`] counts them.
    #[must_use]
    pub fn skipped_count(&self) -> usize {
        self.clusters
            .iter()
            .flat_map(|c| &c.skipped)
            .filter(|k| is_kustomization_entry(k))
            .count()
    }

    /// What could not be compared, named by kind: `2 Kustomizations`, `1 HelmRelease`,
    /// `2 Kustomizations and 1 HelmRelease` (a `--helm` release entry is no Kustomization).
    #[must_use]
    pub fn not_compared_units(&self) -> String {
        let releases = self
            .clusters
            .iter()
            .flat_map(ClusterDiff::not_compared)
            .filter(|k| is_release_entry(&k.kustomization))
            .count();
        units(self.not_compared() - releases, releases)
    }

    /// How many Kustomizations are external in both revisions and unchanged, in every
    /// cluster.
    #[must_use]
    pub fn external_unchanged(&self) -> usize {
        self.clusters
            .iter()
            .map(|c| c.external_unchanged().count())
            .sum()
    }

    /// Nothing changed and everything was compared.
    #[must_use]
    pub fn identical(&self) -> bool {
        !self.changed() && self.not_compared() == 0
    }
}

/// Why a Kustomization did not render (`failed: ...`), or `None` when it did.
#[must_use]
pub fn problem(k: &KustomizationRender) -> Option<String> {
    match &k.status {
        Status::Rendered => None,
        Status::Suspended => Some(k.status.as_str().to_string()),
        Status::Failed(e) | Status::Blocked(e) | Status::External(e) => {
            Some(format!("{}: {e}", k.status.as_str()))
        }
        Status::NeedsNetwork(e) => {
            let hides = k.offline.as_ref().map_or(0, |o| o.hides.len());
            Some(match hides {
                0 => format!("{}: {e}", k.status.as_str()),
                n => format!(
                    "{}: {e}; it hides {} declared below it",
                    k.status.as_str(),
                    crate::text::plural(n, "Kustomization")
                ),
            })
        }
    }
}

/// The ancestor that left a Kustomization unrendered in the other revision (see
/// [`unrendered_ancestor`]).
pub(super) struct UnrenderedAncestor {
    /// `flux-system/apps`.
    pub(super) id: String,
    /// `parent flux-system/apps failed in head: ...`.
    pub(super) why: String,
    /// What it is there, in a few words: `failed`, `did not render`, `is suspended`, `is
    /// external`, `needs the network`.
    pub(super) state: &'static str,
    /// It failed (or was blocked) there, rather than being external, suspended or in need
    /// of the network.
    pub(super) failed: bool,
}

/// Why `k` (of the revision `here`) is missing from the revision `there` (named `side`)
/// when the reason is an ancestor: the nearest ancestor of `k` that `there` holds, when it did
/// not render there, and why (`parent flux-system/apps failed in head: ...`). `None` when
/// that ancestor rendered (the Kustomization is really gone) or none is held.
pub(super) fn unrendered_ancestor(
    k: &KustomizationRender,
    here: &BTreeMap<String, &KustomizationRender>,
    there: &BTreeMap<String, &KustomizationRender>,
    side: &str,
) -> Option<UnrenderedAncestor> {
    let mut parent = k.parent.as_ref();
    // A chain is at most as long as the render (a cycle cannot form, but stay bounded).
    for _ in 0..=here.len() {
        let id = parent?.to_string();
        if let Some(p) = there.get(&id) {
            let (state, error) = match &p.status {
                Status::Rendered => return None,
                Status::Suspended => ("is suspended", None),
                Status::Failed(e) => ("failed", Some(e)),
                Status::Blocked(e) => ("did not render", Some(e)),
                Status::External(e) => ("is external", Some(e)),
                Status::NeedsNetwork(e) => ("needs the network", Some(e)),
            };
            let why = match error {
                Some(e) => format!("parent {id} {state} in {side}: {e}"),
                None => format!("parent {id} {state} in {side}"),
            };
            let failed = matches!(p.status, Status::Failed(_) | Status::Blocked(_));
            return Some(UnrenderedAncestor {
                id,
                why,
                state,
                failed,
            });
        }
        parent = here.get(&id).and_then(|p| p.parent.as_ref());
    }
    None
}
