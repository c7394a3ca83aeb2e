//! A [`Review`] read as a reviewer reads it: each object's semantic changes after the
//! filters, what the filters hid, and per cluster the counts the summary gives. Every
//! report (text, Markdown, HTML, JSON) is printed from an [`Analysis`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::{
    Cluster, Deletion, Failure, ImageBump, ObjectId, Presence, Review, Section, Status, Unit,
    UnitKind, Verdict,
};
use crate::semantic::{diff, FieldChange};
use crate::strip::{hidden_between, Filters, Hidden};

/// What became of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectChange {
    /// Only in head.
    Added,
    /// In both, with changes left after the filters.
    Changed,
    /// Only in base.
    Removed,
}

impl ObjectChange {
    /// The word used in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectChange::Added => "added",
            ObjectChange::Changed => "changed",
            ObjectChange::Removed => "removed",
        }
    }
}

/// One object with something to show.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReview {
    /// Which object.
    pub object: ObjectId,
    /// Added, changed or removed.
    pub change: ObjectChange,
    /// Its value in base after the filters (for the HTML views and the folded content).
    #[serde(skip)]
    pub base: Option<Value>,
    /// Its value in head after the filters.
    #[serde(skip)]
    pub head: Option<Value>,
    /// Its changes (for a changed object).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    /// What the filters hid in it.
    #[serde(skip_serializing_if = "is_zero")]
    pub hidden: Hidden,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(h: &Hidden) -> bool {
    h.total() == 0
}

/// What a reviewer is told of a Kustomization or HelmRelease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The same artifact.
    Identical,
    /// Something to show.
    Changed,
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
    /// Removed under one name and added under another, with most of the same objects (see
    /// [`renames`]): one entry, `renamed_from` the old name.
    Renamed,
    /// Not rendered in a revision where it exists.
    #[serde(rename = "not compared")]
    NotCompared,
    /// Its artifact differs, but not in anything left after the filters: only in fields
    /// they hide, or in the bytes and not the values.
    #[serde(rename = "filtered")]
    Filtered,
}

impl Outcome {
    /// The word used in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Identical => "identical",
            Outcome::Changed => "changed",
            Outcome::Added => "added",
            Outcome::Removed => "removed",
            Outcome::Renamed => "renamed",
            Outcome::NotCompared => "not compared",
            Outcome::Filtered => "changed only in filtered fields",
        }
    }

    /// Whether the unit is listed in the details.
    #[must_use]
    pub fn shown(self) -> bool {
        !matches!(self, Outcome::Identical | Outcome::Filtered)
    }
}

/// One Kustomization or HelmRelease, reviewed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitReview {
    /// Kustomization or HelmRelease.
    pub kind: UnitKind,
    /// `namespace/name`.
    pub name: String,
    /// The Kustomization that applies it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What the reviewer is told.
    pub outcome: Outcome,
    /// Why it was not compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The same objects in another order: (base order, head order) of the objects on both
    /// sides, as `Kind namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reordered: Option<(Vec<String>, Vec<String>)>,
    /// Objects with something to show, sorted by kind, namespace and name.
    pub objects: Vec<ObjectReview>,
    /// What the filters hid in its objects.
    #[serde(skip_serializing_if = "is_zero")]
    pub hidden: Hidden,
    /// A HelmRelease's chart bump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart: Option<crate::model::ChartBump>,
    /// How people read it, when not by its kind and name ([`crate::model::Shown`]).
    #[serde(skip)]
    pub shown: Option<crate::model::Shown>,
    /// A renamed unit's name in base ([`Outcome::Renamed`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// The Kustomization that applied a renamed HelmRelease in base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from_parent: Option<String>,
    /// A renamed unit's objects in both revisions with nothing to show: they move unchanged.
    #[serde(skip_serializing_if = "is_zero_count")]
    pub moved_unchanged: usize,
    /// A renamed unit's objects are deleted before they are made again (the old
    /// Kustomization prunes them, or the old HelmRelease is pruned and its release
    /// uninstalled: [`crate::model::Unit::moves_pruned`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub moves_deleted: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero_count(n: &usize) -> bool {
    *n == 0
}

impl UnitReview {
    /// (kind, name, from what) as people read it: a ResourceSet's entry by the ResourceSet
    /// and what applies it, any other unit by its kind and name.
    #[must_use]
    pub fn title(&self) -> (&str, &str, Option<&str>) {
        match &self.shown {
            Some(s) => (s.kind.as_str(), s.name.as_str(), Some(s.from.as_str())),
            None => (self.kind.as_str(), self.name.as_str(), None),
        }
    }

    /// The line a chart bump leads with: `chart podinfo 6.4.0 → 6.5.0: 3 objects changed, 1
    /// CRD changed` (what the release's objects do under the new chart; nothing shown
    /// differs: `no object changes`).
    #[must_use]
    pub fn chart_line(&self) -> Option<String> {
        let c = self.chart.as_ref()?;
        let is_crd = |o: &&ObjectReview| {
            o.object.kind == "CustomResourceDefinition" && o.object.group == "apiextensions.k8s.io"
        };
        let count = |crd: bool, change: ObjectChange| {
            self.objects
                .iter()
                .filter(|o| is_crd(o) == crd && o.change == change)
                .count()
        };
        let mut parts = Vec::new();
        for (crd, one, many) in [(false, "object", "objects"), (true, "CRD", "CRDs")] {
            for (change, word) in [
                (ObjectChange::Changed, "changed"),
                (ObjectChange::Added, "added"),
                (ObjectChange::Removed, "removed"),
            ] {
                let n = count(crd, change);
                if n > 0 {
                    parts.push(format!("{n} {} {word}", if n == 1 { one } else { many }));
                }
            }
        }
        if parts.is_empty() {
            parts.push(if self.hidden.total() > 0 {
                "no object changes beyond what the filters hide".into()
            } else {
                "no object changes".into()
            });
        }
        Some(format!(
            "chart {} {} → {}: {}",
            c.name,
            c.base,
            c.head,
            parts.join(", ")
        ))
    }

    /// The line a renamed unit leads with: ``renamed `default/openspeedtest` →
    /// `default/speedtest`: 3 objects move unchanged (prune deletes and recreates them: see
    /// the hazards)``, where `` `...` `` marks code; `None` for a unit not renamed.
    #[must_use]
    pub fn rename_line(&self) -> Option<String> {
        let from = self.renamed_from.as_ref()?;
        let (added, changed, removed) = self.object_counts();
        let n = |n: usize| format!("{n} {}", if n == 1 { "object" } else { "objects" });
        let mut parts = Vec::new();
        if self.moved_unchanged > 0 {
            parts.push(format!("{} move unchanged", n(self.moved_unchanged)));
        }
        for (k, word) in [(changed, "changed"), (added, "added"), (removed, "removed")] {
            if k > 0 {
                parts.push(format!("{} {word}", n(k)));
            }
        }
        let moved = self.moved_unchanged + changed;
        let why = match (self.kind, self.moves_deleted) {
            _ if moved == 0 => "",
            (UnitKind::Kustomization, true) => {
                " (prune deletes and recreates them: see the hazards)"
            }
            (UnitKind::Kustomization, false) => " (the old one does not prune: no outage)",
            (UnitKind::HelmRelease, true) => {
                " (helm-controller uninstalls the old release, which deletes them, and installs \
                 the new one)"
            }
            (UnitKind::HelmRelease, false) => {
                " (the old HelmRelease is not pruned: it stays on the cluster with its release)"
            }
        };
        Some(format!(
            "renamed `{from}` → `{}`: {}{why}",
            self.name,
            parts.join(", ")
        ))
    }

    /// How many of its objects were added, changed and removed.
    #[must_use]
    pub fn object_counts(&self) -> (usize, usize, usize) {
        let n = |c| self.objects.iter().filter(|o| o.change == c).count();
        (
            n(ObjectChange::Added),
            n(ObjectChange::Changed),
            n(ObjectChange::Removed),
        )
    }
}

/// How many units of a kind had each outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Added in head.
    pub added: usize,
    /// Changed (after the filters).
    pub changed: usize,
    /// Removed in head.
    pub removed: usize,
    /// Renamed (one removed and one added, counted once).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub renamed: usize,
    /// Not rendered on a side where they exist.
    pub not_compared: usize,
    /// Changed only in what the filters hide.
    pub filtered: usize,
    /// Identical.
    pub identical: usize,
}

impl Counts {
    fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Identical => self.identical += 1,
            Outcome::Changed => self.changed += 1,
            Outcome::Added => self.added += 1,
            Outcome::Removed => self.removed += 1,
            Outcome::Renamed => self.renamed += 1,
            Outcome::NotCompared => self.not_compared += 1,
            Outcome::Filtered => self.filtered += 1,
        }
    }

    /// Whether any unit is added, changed, removed or not compared.
    #[must_use]
    pub fn any(&self) -> bool {
        self.added + self.changed + self.removed + self.renamed + self.not_compared > 0
    }

    fn merge(&mut self, o: &Counts) {
        self.added += o.added;
        self.changed += o.changed;
        self.removed += o.removed;
        self.renamed += o.renamed;
        self.not_compared += o.not_compared;
        self.filtered += o.filtered;
        self.identical += o.identical;
    }
}

/// One cluster, reviewed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReview {
    /// Its name.
    pub name: String,
    /// In both revisions or one.
    pub presence: Presence,
    /// Kustomizations then HelmReleases, each sorted by name.
    pub units: Vec<UnitReview>,
    /// Counts of Kustomizations.
    pub kustomizations: Counts,
    /// Counts of HelmReleases.
    pub helm_releases: Counts,
    /// What failed to render.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
    /// Deleted by prune, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prune_deletions: Vec<Deletion>,
    /// Image changes, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub image_bumps: Vec<ImageBump>,
    /// Hazards, as given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hazards: Vec<String>,
    /// What the filters hid in the cluster.
    #[serde(skip_serializing_if = "is_zero")]
    pub hidden: Hidden,
}

impl ClusterReview {
    /// Whether the cluster has anything to report.
    #[must_use]
    pub fn changed(&self) -> bool {
        self.presence != Presence::Both
            || self.kustomizations.any()
            || self.helm_releases.any()
            || !self.failures.is_empty()
            || !self.prune_deletions.is_empty()
            || !self.image_bumps.is_empty()
            || !self.hazards.is_empty()
    }

    /// Whether its only changes are in what the filters hide (not "unchanged").
    #[must_use]
    pub fn filtered_only(&self) -> bool {
        !self.changed() && self.kustomizations.filtered + self.helm_releases.filtered > 0
    }

    /// The counts of a kind.
    #[must_use]
    pub fn counts(&self, kind: UnitKind) -> &Counts {
        match kind {
            UnitKind::Kustomization => &self.kustomizations,
            UnitKind::HelmRelease => &self.helm_releases,
        }
    }
}

/// Which filters were on (for the report's note).
#[derive(Debug, Clone, Serialize)]
pub struct FilterNote {
    /// The default set.
    pub defaults: bool,
    /// The user's paths and labels.
    pub user: Vec<String>,
}

/// A whole review, ready to print.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// The base revision.
    pub base: String,
    /// The head revision.
    pub head: String,
    /// The filters used.
    pub filters: FilterNote,
    /// Per cluster, sorted by name.
    pub clusters: Vec<ClusterReview>,
    /// What the reports are called (`fluxsim review` when the review named nothing).
    pub title: String,
    /// The caller's verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The caller's sentences for the summary.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The caller's sections after the details.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
}

impl Analysis {
    /// What the filters hid, in every cluster.
    #[must_use]
    pub fn hidden(&self) -> Hidden {
        let mut h = Hidden::default();
        for c in &self.clusters {
            h += c.hidden;
        }
        h
    }

    /// Counts of a kind over every cluster.
    #[must_use]
    pub fn totals(&self, kind: UnitKind) -> Counts {
        let mut t = Counts::default();
        for c in &self.clusters {
            t.merge(c.counts(kind));
        }
        t
    }

    /// Whether any cluster has a unit of this kind (in either revision).
    #[must_use]
    pub fn has(&self, kind: UnitKind) -> bool {
        self.clusters
            .iter()
            .any(|c| c.units.iter().any(|u| u.kind == kind))
    }

    /// Whether anything at all is to be reported.
    #[must_use]
    pub fn changed(&self) -> bool {
        self.clusters.iter().any(ClusterReview::changed)
    }

    /// The units shown, with their cluster: what the details list.
    pub fn shown_units(&self) -> impl Iterator<Item = (&ClusterReview, &UnitReview)> {
        self.clusters
            .iter()
            .flat_map(|c| c.units.iter().map(move |u| (c, u)))
            .filter(|(_, u)| u.outcome.shown())
    }
}

/// What the details of a cluster show, in order: a unit, or the units not compared for the
/// same reason (the Kustomizations below one failed parent: dozens of them, each with the
/// same sentence, would bury the change), said once with their names.
#[derive(Debug)]
pub enum Shown<'a> {
    /// One unit, shown whole.
    One(&'a UnitReview),
    /// Two or more units of `kind`, not compared because of `problem`, with nothing else to
    /// show, listed where the first of them stands.
    NotCompared {
        /// Kustomization or HelmRelease.
        kind: UnitKind,
        /// Why, as each of them says it.
        problem: &'a str,
        /// Their names, in the cluster's order.
        names: Vec<&'a str>,
    },
}

impl ClusterReview {
    /// The units shown ([`Outcome::shown`]), those not compared for the same reason and with
    /// nothing else to show gathered in one [`Shown::NotCompared`].
    #[must_use]
    pub fn shown(&self) -> Vec<Shown<'_>> {
        let bare = |u: &UnitReview| {
            u.outcome == Outcome::NotCompared
                && u.objects.is_empty()
                && u.reordered.is_none()
                && u.hidden.total() == 0
                && u.problem.is_some()
        };
        let key = |u: &'_ UnitReview| (u.kind, u.problem.clone().unwrap_or_default());
        let mut same: BTreeMap<(UnitKind, String), usize> = BTreeMap::new();
        for u in self.units.iter().filter(|u| bare(u)) {
            *same.entry(key(u)).or_default() += 1;
        }
        let mut out: Vec<Shown<'_>> = Vec::new();
        let mut at: BTreeMap<(UnitKind, String), usize> = BTreeMap::new();
        for u in self.units.iter().filter(|u| u.outcome.shown()) {
            let k = key(u);
            if !bare(u) || same[&k] < 2 {
                out.push(Shown::One(u));
                continue;
            }
            if let Some(&i) = at.get(&k) {
                if let Shown::NotCompared { names, .. } = &mut out[i] {
                    names.push(&u.name);
                }
            } else {
                at.insert(k, out.len());
                out.push(Shown::NotCompared {
                    kind: u.kind,
                    problem: u.problem.as_deref().unwrap_or_default(),
                    names: vec![&u.name],
                });
            }
        }
        out
    }
}

/// Reads `review` with `filters`: the one entry point every report starts from.
#[must_use]
pub fn analyze(review: &Review, filters: &Filters) -> Analysis {
    let mut clusters: Vec<ClusterReview> = review
        .clusters
        .iter()
        .map(|c| cluster(c, filters))
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Analysis {
        base: review.base.clone(),
        head: review.head.clone(),
        filters: FilterNote {
            defaults: filters.defaults(),
            user: filters.user_filters().to_vec(),
        },
        clusters,
        title: if review.title.is_empty() {
            "fluxsim review".to_string()
        } else {
            review.title.clone()
        },
        verdict: review.verdict.clone(),
        notes: review.notes.clone(),
        sections: review.sections.clone(),
    }
}

/// The renames among `units`: (removed, added) indexes of a unit removed in head and one of
/// the same kind added in head that render mostly the same objects.
///
/// The rule: a removed and an added unit of the same kind are a candidate pair when more
/// than half of the objects of each are in both (the same group, kind, namespace and name:
/// the ids Flux's inventory keeps), so that one unit cannot be the rename of two. Candidates
/// are taken by the most objects shared first, ties by the removed unit's name, then the
/// added one's; a unit already paired is skipped. Deterministic, and independent of the
/// order `units` come in.
#[must_use]
pub fn renames(units: &[Unit]) -> Vec<(usize, usize)> {
    let ids = |u: &Unit, base: bool| -> std::collections::BTreeSet<ObjectId> {
        u.objects
            .iter()
            .filter(|o| {
                if base {
                    o.base.is_some()
                } else {
                    o.head.is_some()
                }
            })
            .map(|o| o.id.clone())
            .collect()
    };
    let side = |status: Status| -> Vec<(usize, std::collections::BTreeSet<ObjectId>)> {
        units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.status == status)
            .map(|(i, u)| (i, ids(u, status == Status::Removed)))
            .filter(|(_, s)| !s.is_empty())
            .collect()
    };
    let (removed, added) = (side(Status::Removed), side(Status::Added));
    let mut candidates = Vec::new();
    for (r, rs) in &removed {
        for (a, as_) in &added {
            if units[*r].kind != units[*a].kind {
                continue;
            }
            let shared = rs.intersection(as_).count();
            if 2 * shared > rs.len().max(as_.len()) {
                candidates.push((shared, *r, *a));
            }
        }
    }
    candidates.sort_by(|x, y| {
        y.0.cmp(&x.0)
            .then_with(|| units[x.1].name.cmp(&units[y.1].name))
            .then_with(|| units[x.2].name.cmp(&units[y.2].name))
    });
    let (mut used_r, mut used_a) = (Vec::new(), Vec::new());
    let mut pairs = Vec::new();
    for (_, r, a) in candidates {
        if !used_r.contains(&r) && !used_a.contains(&a) {
            used_r.push(r);
            used_a.push(a);
            pairs.push((r, a));
        }
    }
    pairs.sort_unstable();
    pairs
}

/// A rename read as one unit: the added unit's name and parent, the removed one's objects as
/// base and the added one's as head, so that only what differs is shown.
fn renamed(removed: &Unit, added: &Unit, filters: &Filters) -> UnitReview {
    let mut objects: BTreeMap<ObjectId, crate::model::Object> = BTreeMap::new();
    for o in &removed.objects {
        let e = objects
            .entry(o.id.clone())
            .or_insert_with(|| crate::model::Object {
                id: o.id.clone(),
                ..crate::model::Object::default()
            });
        e.base.clone_from(&o.base);
    }
    for o in &added.objects {
        let e = objects
            .entry(o.id.clone())
            .or_insert_with(|| crate::model::Object {
                id: o.id.clone(),
                ..crate::model::Object::default()
            });
        e.head.clone_from(&o.head);
    }
    let shared = objects
        .values()
        .filter(|o| o.base.is_some() && o.head.is_some())
        .count();
    let merged = Unit {
        status: Status::Changed,
        objects: objects.into_values().collect(),
        order: None,
        ..added.clone()
    };
    let mut u = unit(&merged, filters);
    let changed = u
        .objects
        .iter()
        .filter(|o| o.change == ObjectChange::Changed)
        .count();
    u.outcome = Outcome::Renamed;
    u.renamed_from = Some(removed.name.clone());
    u.renamed_from_parent.clone_from(&removed.parent);
    u.moved_unchanged = shared - changed;
    u.moves_deleted = removed.moves_pruned;
    u
}

fn cluster(c: &Cluster, filters: &Filters) -> ClusterReview {
    let pairs = renames(&c.units);
    let paired = |i: usize| pairs.iter().any(|&(r, a)| r == i || a == i);
    let mut units: Vec<UnitReview> = c
        .units
        .iter()
        .enumerate()
        .filter(|(i, _)| !paired(*i))
        .map(|(_, u)| unit(u, filters))
        .collect();
    units.extend(
        pairs
            .iter()
            .map(|&(r, a)| renamed(&c.units[r], &c.units[a], filters)),
    );
    units.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    let (mut kustomizations, mut helm_releases) = (Counts::default(), Counts::default());
    let mut hidden = Hidden::default();
    for u in &units {
        match u.kind {
            UnitKind::Kustomization => kustomizations.add(u.outcome),
            UnitKind::HelmRelease => helm_releases.add(u.outcome),
        }
        hidden += u.hidden;
    }
    let mut prune_deletions = c.prune_deletions.clone();
    prune_deletions.sort();
    let mut image_bumps = c.image_bumps.clone();
    image_bumps.sort();
    ClusterReview {
        name: c.name.clone(),
        presence: c.presence,
        units,
        kustomizations,
        helm_releases,
        failures: c.failures.clone(),
        prune_deletions,
        image_bumps,
        hazards: c.hazards.clone(),
        hidden,
    }
}

fn unit(u: &Unit, filters: &Filters) -> UnitReview {
    let mut objects = Vec::new();
    let mut hidden = Hidden::default();
    for o in &u.objects {
        let base = o.base.as_ref().map(|v| filters.stripped(v));
        let head = o.head.as_ref().map(|v| filters.stripped(v));
        let (change, changes) = match (&base, &head) {
            (Some(a), Some(b)) => {
                let h = hidden_between(a, b);
                hidden += h;
                let changes = diff(&a.value, &b.value);
                if changes.is_empty() {
                    continue;
                }
                objects.push(ObjectReview {
                    object: o.id.clone(),
                    change: ObjectChange::Changed,
                    base: Some(a.value.clone()),
                    head: Some(b.value.clone()),
                    changes,
                    hidden: h,
                });
                continue;
            }
            (None, Some(_)) => (ObjectChange::Added, Vec::new()),
            (Some(_), None) => (ObjectChange::Removed, Vec::new()),
            (None, None) => continue,
        };
        objects.push(ObjectReview {
            object: o.id.clone(),
            change,
            base: base.map(|s| s.value),
            head: head.map(|s| s.value),
            changes,
            hidden: Hidden::default(),
        });
    }
    objects.sort_by(|a, b| a.object.cmp(&b.object));
    let reordered = u.order.as_ref().and_then(|o| {
        let common = |l: &[ObjectId], other: &[ObjectId]| -> Vec<String> {
            l.iter()
                .filter(|id| other.contains(id))
                .map(ToString::to_string)
                .collect()
        };
        let (a, b) = (common(&o.base, &o.head), common(&o.head, &o.base));
        (a != b).then_some((a, b))
    });
    let outcome = match u.status {
        Status::Identical => Outcome::Identical,
        Status::Added => Outcome::Added,
        Status::Removed => Outcome::Removed,
        Status::NotCompared => Outcome::NotCompared,
        // A chart bump is news on its own (the release is upgraded to another chart), even
        // when the filters hide every field it changes (a chart's version labels).
        Status::Changed if objects.is_empty() && reordered.is_none() && u.chart.is_none() => {
            Outcome::Filtered
        }
        Status::Changed => Outcome::Changed,
    };
    UnitReview {
        kind: u.kind,
        name: u.name.clone(),
        parent: u.parent.clone(),
        outcome,
        problem: u.problem.clone(),
        reordered,
        objects,
        hidden,
        chart: u.chart.clone(),
        shown: u.shown.clone(),
        renamed_from: None,
        renamed_from_parent: None,
        moved_unchanged: 0,
        moves_deleted: false,
    }
}

/// Image bumps that change the same image the same way: (before, after) and the bumps.
pub type ImageGroup<'a> = ((Option<String>, Option<String>), Vec<&'a ImageBump>);

/// Image bumps grouped by what they change: (before, after) → the objects, in order.
#[must_use]
pub fn image_groups(bumps: &[ImageBump]) -> Vec<ImageGroup<'_>> {
    let mut groups: BTreeMap<(Option<String>, Option<String>), Vec<&ImageBump>> = BTreeMap::new();
    for b in bumps {
        groups
            .entry((b.base.clone(), b.head.clone()))
            .or_default()
            .push(b);
    }
    groups.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Object;
    use serde_json::json;

    fn deployment(image: &str, chart: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "podinfo", "namespace": "apps",
                            "labels": {"helm.sh/chart": chart, "app": "podinfo"}},
               "spec": {"template": {"metadata": {"annotations": {"checksum/config": chart}},
                                     "spec": {"containers": [{"name": "app", "image": image}]}}}})
    }

    fn one_unit(objects: Vec<Object>) -> Review {
        Review {
            base: "main".into(),
            head: "pr".into(),
            clusters: vec![Cluster {
                name: "prod".into(),
                units: vec![Unit {
                    name: "flux-system/apps".into(),
                    objects,
                    ..Unit::default()
                }],
                ..Cluster::default()
            }],
            ..Review::default()
        }
    }

    #[test]
    fn chart_bump_noise_is_hidden_and_counted() {
        let a = deployment("podinfo:6.5.0", "podinfo-6.5.0");
        let b = deployment("podinfo:6.6.0", "podinfo-6.6.0");
        let review = one_unit(vec![Object {
            id: ObjectId::of(&a),
            base: Some(a),
            head: Some(b),
        }]);
        let an = analyze(&review, &Filters::new());
        let u = &an.clusters[0].units[0];
        assert_eq!(u.outcome, Outcome::Changed);
        assert_eq!(
            u.objects[0]
                .changes
                .iter()
                .map(|c| c.path.to_string())
                .collect::<Vec<_>>(),
            ["spec.template.spec.containers[name=app].image"]
        );
        assert_eq!(
            an.hidden(),
            Hidden {
                default: 2,
                user: 0
            }
        );
        let all = analyze(&review, &Filters::none());
        assert_eq!(all.clusters[0].units[0].objects[0].changes.len(), 3);
        assert_eq!(all.hidden().total(), 0);
    }

    #[test]
    fn a_unit_changed_only_in_filtered_fields_is_not_counted_as_changed() {
        let a = deployment("podinfo:6.5.0", "podinfo-6.5.0");
        let b = deployment("podinfo:6.5.0", "podinfo-6.5.1");
        let review = one_unit(vec![Object {
            id: ObjectId::of(&a),
            base: Some(a),
            head: Some(b),
        }]);
        let an = analyze(&review, &Filters::new());
        assert_eq!(an.clusters[0].units[0].outcome, Outcome::Filtered);
        assert_eq!(an.clusters[0].kustomizations.changed, 0);
        assert_eq!(an.clusters[0].kustomizations.filtered, 1);
        assert_eq!(an.hidden().default, 2);
    }

    // A release upgraded to another chart whose only changes are the chart's version labels
    // (what the default filters hide): still a change, led by its chart line.
    #[test]
    fn a_chart_bump_hidden_by_the_filters_is_still_a_changed_release() {
        let a = deployment("podinfo:6.5.0", "podinfo-6.5.0");
        let b = deployment("podinfo:6.5.0", "podinfo-6.5.1");
        let mut review = one_unit(vec![Object {
            id: ObjectId::of(&a),
            base: Some(a),
            head: Some(b),
        }]);
        review.clusters[0].units[0].chart = Some(crate::model::ChartBump {
            name: "podinfo".into(),
            base: "6.5.0".into(),
            head: "6.5.1".into(),
        });
        let an = analyze(&review, &Filters::new());
        let u = &an.clusters[0].units[0];
        assert_eq!(u.outcome, Outcome::Changed);
        assert_eq!(
            u.chart_line().unwrap(),
            "chart podinfo 6.5.0 → 6.5.1: no object changes beyond what the filters hide"
        );
    }

    #[test]
    fn objects_in_another_order_are_one_order_changed_entry() {
        let id = |n: &str| ObjectId {
            kind: "ConfigMap".into(),
            namespace: "apps".into(),
            name: n.into(),
            ..ObjectId::default()
        };
        let mut review = one_unit(Vec::new());
        review.clusters[0].units[0].order = Some(crate::model::Order {
            base: vec![id("a"), id("b")],
            head: vec![id("b"), id("a")],
        });
        let an = analyze(&review, &Filters::new());
        let u = &an.clusters[0].units[0];
        assert_eq!(u.outcome, Outcome::Changed);
        assert!(u.objects.is_empty());
        assert_eq!(
            u.reordered,
            Some((
                vec![
                    "ConfigMap apps/a".to_string(),
                    "ConfigMap apps/b".to_string()
                ],
                vec![
                    "ConfigMap apps/b".to_string(),
                    "ConfigMap apps/a".to_string()
                ]
            ))
        );
    }

    fn object(kind: &str, name: &str, replicas: u64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": kind,
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"replicas": replicas}})
    }

    /// A unit of `kind` only on one side (`head`: added), with `objects`.
    fn one_sided(kind: UnitKind, name: &str, head: bool, objects: &[Value]) -> Unit {
        Unit {
            kind,
            name: name.into(),
            status: if head { Status::Added } else { Status::Removed },
            objects: objects
                .iter()
                .map(|v| Object {
                    id: ObjectId::of(v),
                    base: (!head).then(|| v.clone()),
                    head: head.then(|| v.clone()),
                })
                .collect(),
            ..Unit::default()
        }
    }

    fn review_of(units: Vec<Unit>) -> Review {
        Review {
            clusters: vec![Cluster {
                name: "prod".into(),
                units,
                ..Cluster::default()
            }],
            ..Review::default()
        }
    }

    #[test]
    fn a_renamed_kustomization_is_one_entry_showing_only_what_differs() {
        let objects = [
            object("Deployment", "speedtest", 1),
            object("Service", "speedtest", 1),
            object("ConfigMap", "speedtest", 1),
        ];
        let mut head = objects.to_vec();
        head[0] = object("Deployment", "speedtest", 2);
        let mut old = one_sided(
            UnitKind::Kustomization,
            "default/openspeedtest",
            false,
            &objects,
        );
        old.moves_pruned = true;
        let new = one_sided(UnitKind::Kustomization, "default/speedtest", true, &head);
        let an = analyze(&review_of(vec![old, new]), &Filters::new());
        let c = &an.clusters[0];
        assert_eq!(c.units.len(), 1);
        let u = &c.units[0];
        assert_eq!(u.outcome, Outcome::Renamed);
        assert_eq!(u.renamed_from.as_deref(), Some("default/openspeedtest"));
        assert_eq!(u.moved_unchanged, 2);
        assert_eq!(u.object_counts(), (0, 1, 0));
        assert_eq!(
            u.rename_line().as_deref(),
            Some(
                "renamed `default/openspeedtest` → `default/speedtest`: 2 objects move \
                 unchanged, 1 object changed (prune deletes and recreates them: see the hazards)"
            )
        );
        assert_eq!(
            (
                c.kustomizations.renamed,
                c.kustomizations.added,
                c.kustomizations.removed
            ),
            (1, 0, 0)
        );
    }

    #[test]
    fn a_kustomization_moved_to_another_namespace_is_a_rename() {
        let objects = [object("Deployment", "web", 1), object("Service", "web", 1)];
        let old = one_sided(UnitKind::Kustomization, "default/web", false, &objects);
        let new = one_sided(UnitKind::Kustomization, "apps/web", true, &objects);
        let an = analyze(&review_of(vec![old, new]), &Filters::new());
        let u = &an.clusters[0].units[0];
        assert_eq!(
            (an.clusters[0].units.len(), u.outcome),
            (1, Outcome::Renamed)
        );
        assert!(u.objects.is_empty());
        assert_eq!(
            u.rename_line().as_deref(),
            Some("renamed `default/web` → `apps/web`: 2 objects move unchanged (the old one does not prune: no outage)")
        );
    }

    #[test]
    fn a_renamed_helm_release_is_one_entry_and_says_the_old_release_is_uninstalled() {
        let objects = [
            object("Deployment", "podinfo", 1),
            object("Service", "podinfo", 1),
        ];
        let mut old = one_sided(UnitKind::HelmRelease, "apps/podinfo", false, &objects);
        old.parent = Some("flux-system/apps".into());
        old.moves_pruned = true;
        let mut new = one_sided(UnitKind::HelmRelease, "apps/web", true, &objects);
        new.parent = Some("flux-system/apps".into());
        // A Kustomization with the same objects is not a HelmRelease's rename.
        let other = one_sided(UnitKind::Kustomization, "flux-system/web", true, &objects);
        let an = analyze(&review_of(vec![old, new, other]), &Filters::new());
        let c = &an.clusters[0];
        assert_eq!(c.units.len(), 2);
        assert_eq!(c.kustomizations.added, 1);
        assert_eq!(c.helm_releases.renamed, 1);
        let u = c
            .units
            .iter()
            .find(|u| u.kind == UnitKind::HelmRelease)
            .unwrap();
        assert_eq!(u.renamed_from_parent.as_deref(), Some("flux-system/apps"));
        assert!(u
            .rename_line()
            .unwrap()
            .contains("uninstalls the old release"));
        // Its Kustomization keeps the old HelmRelease: nothing is uninstalled.
        let mut kept = u.clone();
        kept.moves_deleted = false;
        assert!(kept.rename_line().unwrap().ends_with(
            "(the old HelmRelease is not pruned: it stays on the cluster with its release)"
        ));
    }

    #[test]
    fn a_rename_pairs_the_largest_overlap_and_needs_most_objects_shared() {
        let a = [
            object("Deployment", "a", 1),
            object("Service", "a", 1),
            object("ConfigMap", "a", 1),
        ];
        let old = one_sided(UnitKind::Kustomization, "default/old", false, &a);
        // Shares two of three: a candidate, but `best` shares all three.
        let near = one_sided(UnitKind::Kustomization, "default/near", true, &a[..2]);
        let best = one_sided(UnitKind::Kustomization, "default/best", true, &a);
        // Shares one object of three: not a rename.
        let few = one_sided(
            UnitKind::Kustomization,
            "default/few",
            false,
            &[
                a[0].clone(),
                object("Secret", "x", 1),
                object("Secret", "y", 1),
            ],
        );
        let units = vec![near, old, few, best];
        assert_eq!(renames(&units), vec![(1, 3)]);
        let mut reversed = units.clone();
        reversed.reverse();
        assert_eq!(renames(&reversed), vec![(2, 0)]);
        // Equal overlaps: the names decide.
        let twins = vec![
            one_sided(UnitKind::Kustomization, "default/y", true, &a),
            one_sided(UnitKind::Kustomization, "default/old", false, &a),
            one_sided(UnitKind::Kustomization, "default/x", true, &a),
        ];
        assert_eq!(renames(&twins), vec![(1, 2)]);
    }
}
