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
pub mod strip;

use std::collections::{BTreeMap, BTreeSet};

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

use serde::Serialize;

use crate::artifact::Artifact;
use crate::flux::ObjectId;
use crate::model::{ClusterRender, KustomizationRender, Status};

pub use clusters::{
    compare_clusters, ClusterComparison, GraphNode, GraphRow, TemplateObjectDiff, TemplateRow,
    VarDiff,
};

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

/// The chart of a release entry as its note names it: (name, version).
fn chart_of(k: &KustomizationRender) -> Option<(&str, &str)> {
    k.notes.iter().find_map(|n| match n {
        crate::model::Note::HelmRelease {
            chart_name,
            chart_version,
            ..
        } if !chart_version.is_empty() => Some((chart_name.as_str(), chart_version.as_str())),
        _ => None,
    })
}

/// The chart bump between two renders of one release, when its chart's name or version
/// differs.
fn chart_bump(
    bk: Option<&KustomizationRender>,
    hk: Option<&KustomizationRender>,
) -> Option<ChartBump> {
    let ((bn, bv), (hn, hv)) = (chart_of(bk?)?, chart_of(hk?)?);
    if (bn, bv) == (hn, hv) {
        return None;
    }
    Some(ChartBump {
        name: if hn.is_empty() { bn } else { hn }.to_string(),
        base: if bn == hn {
            bv.to_string()
        } else {
            format!("{bn}@{bv}")
        },
        head: hv.to_string(),
    })
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

/// Compares two renders of the same repository, cluster by cluster.
#[must_use]
pub fn diff_revisions(
    base_name: &str,
    base: &[ClusterRender],
    head_name: &str,
    head: &[ClusterRender],
    opts: &DiffOptions,
) -> RevisionDiff {
    let names: BTreeSet<&str> = base.iter().chain(head).map(|c| c.name.as_str()).collect();
    let clusters = names
        .into_iter()
        .map(|name| {
            let b = base.iter().find(|c| c.name == name);
            let h = head.iter().find(|c| c.name == name);
            diff_cluster(name, b, h, opts)
        })
        .collect();
    RevisionDiff {
        base: base_name.to_string(),
        head: head_name.to_string(),
        base_revision: Revision {
            name: Some(base_name.to_string()),
            commit: None,
        },
        head_revision: Revision {
            name: Some(head_name.to_string()),
            commit: None,
        },
        clusters,
    }
}

fn by_id(c: Option<&ClusterRender>) -> BTreeMap<String, &KustomizationRender> {
    c.map(|c| {
        c.kustomizations
            .iter()
            .map(|k| (k.kustomization.id.to_string(), k))
            .collect()
    })
    .unwrap_or_default()
}

/// A Kustomization external on both sides is the same when what it is a function of is:
/// then `change` becomes `ExternalUnchanged`. What was checked, or why it is unproven.
fn external_both(
    bk: Option<&KustomizationRender>,
    hk: Option<&KustomizationRender>,
    base: Option<&ClusterRender>,
    head: Option<&ClusterRender>,
    opts: &DiffOptions,
    change: &mut Change,
) -> Option<String> {
    let (Some(bk), Some(hk), Some(bc), Some(hc)) = (bk, hk, base, head) else {
        return None;
    };
    if !matches!(bk.status, Status::External(_)) || !matches!(hk.status, Status::External(_)) {
        return None;
    }
    match external::external_unchanged(bk, hk, bc, hc, opts.present.show_secrets) {
        Ok(checked) => {
            *change = Change::ExternalUnchanged;
            Some(checked)
        }
        Err(external::Unproven(why)) => Some(why),
    }
}

fn diff_cluster(
    name: &str,
    base: Option<&ClusterRender>,
    head: Option<&ClusterRender>,
    opts: &DiffOptions,
) -> ClusterDiff {
    let (b, h) = (by_id(base), by_id(head));
    let ids: BTreeSet<&String> = b.keys().chain(h.keys()).collect();
    let mut kustomizations = Vec::new();
    for id in ids {
        let (bk, hk) = (b.get(id).copied(), h.get(id).copied());
        let (ba, ha) = (
            bk.and_then(|k| k.artifact.as_ref()),
            hk.and_then(|k| k.artifact.as_ref()),
        );
        let (mut bp, mut hp) = (bk.and_then(problem), hk.and_then(problem));
        // Missing on one side because an ancestor did not render there: Flux applies nothing
        // from a failed build and prunes nothing, so it keeps running. Unknown, never removed
        // or added.
        let blocked = match (bk, hk) {
            (Some(k), None) => unrendered_ancestor(k, &b, &h, "head"),
            (None, Some(k)) => unrendered_ancestor(k, &h, &b, "base"),
            _ => None,
        };
        let blocked_by = blocked.as_ref().map(|a| a.id.clone());
        let failed = |s: &Status| matches!(s, Status::Failed(_) | Status::Blocked(_));
        let fails_in_head = hk.is_some_and(|k| failed(&k.status))
            || (hk.is_none() && blocked.as_ref().is_some_and(|a| a.failed));
        match (bk, hk, blocked) {
            (Some(_), None, Some(a)) => hp = Some(a.why),
            (None, Some(_), Some(a)) => bp = Some(a.why),
            _ => {}
        }
        let unrendered = |k: Option<&KustomizationRender>| {
            k.is_some_and(|k| k.status != Status::Rendered || k.artifact.is_none())
        };
        let mut change = match (bk, hk) {
            _ if unrendered(bk) || unrendered(hk) => Change::NotCompared,
            (Some(_), None) if hp.is_some() => Change::NotCompared,
            (None, Some(_)) if bp.is_some() => Change::NotCompared,
            (None, _) => Change::Added,
            (_, None) => Change::Removed,
            _ if ba.map(|a| &a.sha256) == ha.map(|a| &a.sha256) && bp == hp => Change::Identical,
            _ => Change::Changed,
        };
        let external = external_both(bk, hk, base, head, opts, &mut change);
        let (objects, left_out) = if matches!(
            change,
            Change::Identical | Change::NotCompared | Change::ExternalUnchanged
        ) {
            (Vec::new(), 0)
        } else {
            diff_objects(ba, ha, opts)
        };
        // What differs only in stripped noise is not a change.
        let stripped_only = objects.is_empty() && left_out == 0 && !opts.strip.is_empty();
        if change == Change::Changed && stripped_only {
            change = Change::Identical;
        }
        let order = (change == Change::Changed)
            .then(|| object_order(ba, ha))
            .flatten();
        kustomizations.push(KustomizationDiff {
            kustomization: id.clone(),
            change,
            base_sha256: ba.map(|a| a.sha256.clone()),
            head_sha256: ha.map(|a| a.sha256.clone()),
            base_problem: bp,
            head_problem: hp,
            blocked_by,
            fails_in_head,
            external,
            objects,
            left_out,
            order,
            chart: chart_bump(bk, hk),
        });
    }
    let moves = find_moves(&b, &h);
    let prune_deletions = if base.is_some() && head.is_some() {
        prune_deletions(&b, &h, &kustomizations)
    } else {
        Vec::new()
    };
    let skipped = h
        .iter()
        .filter(|(_, k)| k.reused)
        .map(|(id, _)| id.clone())
        .collect();
    ClusterDiff {
        skipped,
        cluster: name.to_string(),
        presence: match (base, head) {
            (None, _) => Presence::Added,
            (_, None) => Presence::Removed,
            _ => Presence::Both,
        },
        kustomizations,
        moves,
        prune_deletions,
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

/// The ids of the objects of two artifacts, each in its order.
fn object_order(
    base: Option<&Artifact>,
    head: Option<&Artifact>,
) -> Option<(Vec<ObjectId>, Vec<ObjectId>)> {
    let ids = |x: &Artifact| x.objects.iter().map(|o| o.id.clone()).collect();
    Some((ids(base?), ids(head?)))
}

/// The objects Flux's garbage collection deletes when head is applied: those that leave a
/// Kustomization with `prune: true` and are applied by no other Kustomization of head (an
/// object that moves is a [`Move`]), and every object of a Kustomization that head no longer
/// applies, when its parent prunes (it deletes the Kustomization) and it has `prune: true`
/// (its finalizer then deletes its inventory). `fluxcd/kustomize-controller`
/// `internal/controller/kustomization_controller.go` (`prune`, and `finalize`, which garbage
/// collects only when `spec.prune` is set and the Kustomization is not suspended). What was
/// not compared deletes nothing: Flux prunes nothing after a failed build.
fn prune_deletions(
    base: &BTreeMap<String, &KustomizationRender>,
    head: &BTreeMap<String, &KustomizationRender>,
    diffs: &[KustomizationDiff],
) -> Vec<PruneDeletion> {
    let in_head: BTreeSet<&ObjectId> = head
        .values()
        .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
        .map(|o| &o.id)
        .collect();
    let mut out = Vec::new();
    for d in diffs {
        let Some(bk) = base.get(&d.kustomization) else {
            continue;
        };
        let prunes = match d.change {
            Change::Changed => bk.kustomization.prune,
            Change::Removed => {
                let parent_prunes = bk
                    .parent
                    .as_ref()
                    .and_then(|p| base.get(&p.to_string()))
                    .is_none_or(|p| p.kustomization.prune);
                bk.kustomization.prune && !bk.kustomization.suspend && parent_prunes
            }
            _ => false,
        };
        if !prunes {
            continue;
        }
        for o in bk.artifact.iter().flat_map(|a| &a.objects) {
            if !in_head.contains(&o.id) {
                out.push(PruneDeletion {
                    kustomization: d.kustomization.clone(),
                    object: o.id.clone(),
                });
            }
        }
    }
    out.sort();
    out
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

/// Object-by-object differences of two artifacts, sorted by object id: compared after
/// `opts.strip`, shown masked; and how many differ but are left out of what is shown
/// (`--skip-secrets`, `--skip-crds`).
fn diff_objects(
    base: Option<&Artifact>,
    head: Option<&Artifact>,
    opts: &DiffOptions,
) -> (Vec<ObjectDiff>, usize) {
    use crate::artifact::ArtifactObject;
    fn index(a: Option<&Artifact>) -> BTreeMap<ObjectId, &ArtifactObject> {
        a.map(|a| a.objects.iter().map(|o| (o.id.clone(), o)).collect())
            .unwrap_or_default()
    }
    let (b, h) = (index(base), index(head));
    let ids: BTreeSet<&ObjectId> = b.keys().chain(h.keys()).collect();
    let mut out = Vec::new();
    let mut left_out = 0;
    for id in ids {
        let (old, new) = (b.get(id).copied(), h.get(id).copied());
        let change = match (old, new) {
            (None, _) => Change::Added,
            (_, None) => Change::Removed,
            (Some(o), Some(n)) if o.yaml == n.yaml => continue,
            _ => Change::Changed,
        };
        if !old
            .into_iter()
            .chain(new)
            .all(|x| opts.present.shows(&x.object))
        {
            left_out += 1;
            continue;
        }
        let label = id.to_string();
        let diff = if let (Some(o), Some(n)) = (old, new) {
            let (so, sn) = (opts.strip.apply(&o.object), opts.strip.apply(&n.object));
            let (vo, vn) = (
                so.as_ref().unwrap_or(&o.object),
                sn.as_ref().unwrap_or(&n.object),
            );
            if (so.is_some() || sn.is_some()) && vo == vn {
                // The same once the noise is dropped.
                continue;
            }
            changed_text(o, n, vo, vn, so.is_some() || sn.is_some(), &label, opts)
        } else {
            let shown = |x: Option<&ArtifactObject>| {
                x.map(|x| opts.present.object_text(x).into_owned())
                    .unwrap_or_default()
            };
            unified(&shown(old), &shown(new), &label)
        };
        let (ob, oh) = (old.map(|o| &*o.object), new.map(|n| &*n.object));
        let (base, head) = if opts.present.show_secrets {
            (ob.cloned(), oh.cloned())
        } else {
            crate::mask::mask_pair(ob, oh)
        };
        out.push(ObjectDiff {
            object: id.clone(),
            change,
            diff,
            base,
            head,
        });
    }
    (out, left_out)
}

/// The shown difference of an object present on both sides (`vo`, `vn`: the objects once
/// stripped), masked unless secrets are shown, with a note naming Secret values that the
/// masking hides.
fn changed_text(
    o: &crate::artifact::ArtifactObject,
    n: &crate::artifact::ArtifactObject,
    vo: &serde_json::Value,
    vn: &serde_json::Value,
    stripped: bool,
    label: &str,
    opts: &DiffOptions,
) -> String {
    use crate::mask;
    let show = opts.present.show_secrets;
    let mut text = if stripped {
        let print = |v: &serde_json::Value| {
            let t = crate::artifact::print_object(v);
            if show {
                t
            } else {
                mask::mask_object(&t, v).into_owned()
            }
        };
        unified(&print(vo), &print(vn), label)
    } else {
        unified(
            &opts.present.object_text(o),
            &opts.present.object_text(n),
            label,
        )
    };
    if !show {
        let hidden = mask::changed_secret_keys(vo, vn);
        if !hidden.is_empty() {
            use std::fmt::Write as _;
            let _ = writeln!(
                text,
                "# masked values changed: {} (--show-secrets shows them)",
                hidden.join(", ")
            );
        }
    }
    text
}

/// A unified diff with three lines of context, each hunk header followed by `label`.
#[must_use]
pub fn unified(old: &str, new: &str, label: &str) -> String {
    use std::fmt::Write as _;
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let _ = writeln!(out, "{} {label}", hunk.header());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            out.push(sign);
            out.push_str(change.value());
            if change.missing_newline() {
                out.push('\n');
            }
        }
    }
    out
}

/// Objects owned by one Kustomization in base and by another (and not the first) in head.
fn find_moves(
    base: &BTreeMap<String, &KustomizationRender>,
    head: &BTreeMap<String, &KustomizationRender>,
) -> Vec<Move> {
    let owners = |side: &BTreeMap<String, &KustomizationRender>| {
        let mut m: BTreeMap<ObjectId, BTreeSet<String>> = BTreeMap::new();
        for (id, k) in side {
            for o in k.artifact.iter().flat_map(|a| &a.objects) {
                m.entry(o.id.clone()).or_default().insert(id.clone());
            }
        }
        m
    };
    let (b, h) = (owners(base), owners(head));
    let mut moves = Vec::new();
    for (object, before) in &b {
        let Some(after) = h.get(object) else {
            continue;
        };
        for from in before.difference(after) {
            for to in after.difference(before) {
                moves.push(Move {
                    object: object.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    prune_outage: base.get(from).is_some_and(|k| k.kustomization.prune),
                });
            }
        }
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_names_the_object_in_each_hunk_header() {
        let d = unified("a: 1\nb: 2\n", "a: 1\nb: 3\n", "ConfigMap/apps/x");
        assert_eq!(d, "@@ -1,2 +1,2 @@ ConfigMap/apps/x\n a: 1\n-b: 2\n+b: 3\n");
    }

    #[test]
    fn unified_diff_of_equal_text_is_empty() {
        assert_eq!(unified("a\n", "a\n", "x"), "");
    }
}
