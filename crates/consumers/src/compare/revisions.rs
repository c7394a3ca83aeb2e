//! A revision's render against another's: Kustomizations matched by cluster and id, the
//! objects that move between them, what pruning deletes, and chart bumps.

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::Artifact;
use crate::flux::ObjectId;
use crate::model::{ClusterRender, KustomizationRender, Status};

use super::objects::diff_objects;
use super::{
    external, problem, unrendered_ancestor, Change, ChartBump, ClusterDiff, DiffOptions,
    KustomizationDiff, Move, Presence, PruneDeletion, Revision, RevisionDiff,
};

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
pub(super) fn prune_deletions(
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
