//! Renames: a unit removed in head and one of the same kind added that render mostly the
//! same objects, paired and read as one unit.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::read::unit;
use crate::analysis::unit::{ObjectChange, Outcome, UnitReview};
use crate::model::{Object, ObjectId, Status, Unit};
use crate::strip::Filters;

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
    let ids = |u: &Unit, base: bool| -> BTreeSet<ObjectId> {
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
    let side = |status: Status| -> Vec<(usize, BTreeSet<ObjectId>)> {
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
pub(crate) fn renamed(removed: &Unit, added: &Unit, filters: &Filters) -> UnitReview {
    let mut objects: BTreeMap<ObjectId, Object> = BTreeMap::new();
    for o in &removed.objects {
        let e = objects.entry(o.id.clone()).or_insert_with(|| Object {
            id: o.id.clone(),
            ..Object::default()
        });
        e.base.clone_from(&o.base);
    }
    for o in &added.objects {
        let e = objects.entry(o.id.clone()).or_insert_with(|| Object {
            id: o.id.clone(),
            ..Object::default()
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
