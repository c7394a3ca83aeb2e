//! One cluster reviewed: its units read with the filters (renames paired first), their
//! counts, and what its details show.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::counts::Counts;
use crate::analysis::read::unit;
use crate::analysis::renames::{renamed, renames};
use crate::analysis::unit::{is_zero, Outcome, UnitReview};
use crate::model::{Cluster, Deletion, Failure, ImageBump, Presence, UnitKind};
use crate::strip::{Filters, Hidden};

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

/// `c` read with `filters`: renames paired first, then every other unit.
pub(crate) fn cluster(c: &Cluster, filters: &Filters) -> ClusterReview {
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
