//! One Kustomization or HelmRelease as the reviewer is told of it: its [`Outcome`], its
//! objects with something to show, and the lines a chart bump or a rename leads with.

use serde::Serialize;
use serde_json::Value;

use crate::model::{ObjectId, UnitKind};
use crate::semantic::FieldChange;
use crate::strip::Hidden;

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
pub(crate) fn is_zero(h: &Hidden) -> bool {
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
    /// [`renames`](crate::analysis::renames)): one entry, `renamed_from` the old name.
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
pub(crate) fn is_zero_count(n: &usize) -> bool {
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
