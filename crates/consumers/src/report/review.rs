//! The input of the reviewer's reports (`fluxsim-review`: the semantic object diff, the
//! summary-first Markdown split into comments, the HTML page) made from what `diff` and
//! `prove` computed: the revision diff, the image changes, the proof. Values only: the
//! review crate knows nothing of fluxsim's types.
//!
//! Also what `--format json` gains from a review: each object's semantic changes, what the
//! filters hid, the prune deletions, image changes and hazards of each cluster (camelCase
//! keys, added beside the diff's own).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use review::analysis::{Analysis, UnitReview};
use review::model::{
    Cluster, Deletion, Failure, ImageBump, Object, ObjectId as ReviewId, Order, Presence, Review,
    Section, Status, Unit, UnitKind, Verdict,
};
use serde_json::{json, Value};

use crate::compare::{Change, ClusterDiff, KustomizationDiff, RevisionDiff};
use crate::flux::ObjectId;
use crate::images::ClusterImageDiff;
use crate::report::diff::problems;
use crate::report::json as json_doc;
use crate::report::markdown::plain_of;
use crate::report::proof::{canary_lines, BlindClause, CanaryLine, CanarySummary, Proof};
use crate::text::plural;

use crate::compare::{is_release_entry, HELM_SEPARATOR};

fn id(o: &ObjectId) -> ReviewId {
    ReviewId {
        group: o.group.clone(),
        kind: o.kind.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    }
}

/// (kind, name, parent) of a diff's entry: a `--helm` entry
/// `<kustomization>/helm/<namespace>/<name>` is the HelmRelease `<namespace>/<name>` applied
/// by `<kustomization>`.
fn unit_name(entry: &str) -> (UnitKind, String, Option<String>) {
    match entry.split_once(HELM_SEPARATOR) {
        Some((parent, release)) => (
            UnitKind::HelmRelease,
            release.to_string(),
            Some(parent.to_string()),
        ),
        None => (UnitKind::Kustomization, entry.to_string(), None),
    }
}

/// The diff's name of a reviewed unit (inverse of [`unit_name`]).
fn entry_name(u: &UnitReview) -> String {
    match (&u.kind, &u.parent) {
        (UnitKind::HelmRelease, Some(parent)) => format!("{parent}{HELM_SEPARATOR}{}", u.name),
        _ => u.name.clone(),
    }
}

/// The diff's name of a renamed unit in base (inverse of [`unit_name`] for the old name).
fn old_entry_name(u: &UnitReview) -> Option<String> {
    let from = u.renamed_from.as_ref()?;
    Some(match (&u.kind, &u.renamed_from_parent) {
        (UnitKind::HelmRelease, Some(parent)) => format!("{parent}{HELM_SEPARATOR}{from}"),
        _ => from.clone(),
    })
}

fn unit(k: &KustomizationDiff) -> Unit {
    let (kind, name, parent) = unit_name(&k.kustomization);
    let status = match k.change {
        Change::Identical | Change::ExternalUnchanged => Status::Identical,
        Change::Changed => Status::Changed,
        Change::Added => Status::Added,
        Change::Removed => Status::Removed,
        Change::NotCompared => Status::NotCompared,
    };
    let why = problems(k);
    Unit {
        kind,
        name,
        parent,
        status,
        problem: (status == Status::NotCompared && !why.is_empty()).then(|| why.join("; ")),
        objects: k
            .objects
            .iter()
            .map(|o| Object {
                id: id(&o.object),
                base: o.base.clone(),
                head: o.head.clone(),
            })
            .collect(),
        order: k.order.as_ref().map(|(b, h)| Order {
            base: b.iter().map(id).collect(),
            head: h.iter().map(id).collect(),
        }),
        shown: resourceset_shown(&k.kustomization),
        chart: k.chart.as_ref().map(|c| review::model::ChartBump {
            name: c.name.clone(),
            base: c.base.clone(),
            head: c.head.clone(),
        }),
        moves_pruned: false,
    }
}

/// A ResourceSet entry (`<ns>/<parent>/rset/<ns>/<name>`) as people read it: `ResourceSet
/// NAME (from PARENT)`, each without its namespace where the two share it.
fn resourceset_shown(entry: &str) -> Option<review::model::Shown> {
    let (parent, rset) = entry.split_once("/rset/")?;
    let (pns, pname) = parent.split_once('/')?;
    let (rns, rname) = rset.split_once('/')?;
    let un = |s: &str| crate::flux::id_unsegment(s).into_owned();
    Some(review::model::Shown {
        kind: "ResourceSet".into(),
        name: if rns == pns {
            un(rname)
        } else {
            format!("{}/{}", un(rns), un(rname))
        },
        from: un(pname),
    })
}

/// What deleting this kind takes with it, when prune deletes one.
fn deletion_hazard(cluster: &str, d: &crate::compare::PruneDeletion) -> Option<String> {
    let o = &d.object;
    let what = match (o.group.as_str(), o.kind.as_str()) {
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            "deletes every custom resource of that definition in the cluster"
        }
        ("", "Namespace") => "deletes everything in that namespace",
        ("", "PersistentVolumeClaim") => {
            "may delete its volume and the data on it (reclaim policy `Delete`)"
        }
        ("", "PersistentVolume") => "may delete the data on it",
        _ => return None,
    };
    let _ = cluster;
    Some(format!(
        "`{}` prunes `{}`: this {what}",
        d.kustomization,
        display(o)
    ))
}

fn display(o: &ObjectId) -> String {
    id(o).to_string()
}

/// Whether the objects that leave `entry` are deleted before their new owner makes them
/// again: a Kustomization that prunes (the move hazard's `prune_outage`), or a `--helm`
/// release entry whose HelmRelease its Kustomization prunes (helm-controller then uninstalls
/// the release; one its Kustomization keeps stays with its release).
fn moves_delete(c: &ClusterDiff, entry: &str) -> bool {
    match unit_name(entry) {
        (UnitKind::HelmRelease, release, Some(parent)) => c.prune_deletions.iter().any(|d| {
            d.kustomization == parent
                && d.object.is_helm_release()
                && id(&d.object).namespaced_name() == release
        }),
        _ => c.moves.iter().any(|m| m.prune_outage && m.from == entry),
    }
}

/// The moves of a cluster whose objects are deleted first (`outage`, [`moves_delete`]) or
/// not, by (old owner, new owner): a rename moves every object of one entry to another, said
/// once.
fn moves_by_owners(c: &ClusterDiff, outage: bool) -> BTreeMap<(&str, &str), Vec<String>> {
    let mut out: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for m in c
        .moves
        .iter()
        .filter(|m| moves_delete(c, &m.from) == outage)
    {
        out.entry((m.from.as_str(), m.to.as_str()))
            .or_default()
            .push(display(&m.object));
    }
    out
}

/// `` `a`, `b` ``.
fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cluster(c: &ClusterDiff, d: &RevisionDiff, images: &[ClusterImageDiff]) -> Cluster {
    let mut hazards = Vec::new();
    for ((from, to), objects) in moves_by_owners(c, true) {
        if is_release_entry(from) {
            let (n, moves, them) = match objects.as_slice() {
                [one] => (format!("`{one}`"), "moves", "it"),
                many => (
                    format!("{} ({})", plural(many.len(), "object"), code_list(many)),
                    "move",
                    "them",
                ),
            };
            hazards.push(format!(
                "{n} {moves} from `{from}` to `{to}`; prune deletes the old HelmRelease, so \
                 helm-controller uninstalls its release, deleting {them}, and the new one \
                 installs {them} again: a transient outage"
            ));
            continue;
        }
        hazards.push(match objects.as_slice() {
            [one] => format!(
                "`{one}` moves from `{from}` to `{to}`; `{from}` has `prune: true`, so Flux \
                 deletes it when `{from}` reconciles and `{to}` recreates it: a transient outage"
            ),
            many => format!(
                "{} move from `{from}` to `{to}` ({}); `{from}` has `prune: true`, so Flux \
                 deletes them when `{from}` reconciles and `{to}` recreates them: a transient \
                 outage",
                plural(many.len(), "object"),
                code_list(many)
            ),
        });
    }
    hazards.extend(
        c.prune_deletions
            .iter()
            .filter_map(|p| deletion_hazard(&c.cluster, p)),
    );
    Cluster {
        name: c.cluster.clone(),
        presence: match c.presence {
            crate::compare::Presence::Both => Presence::Both,
            crate::compare::Presence::Added => Presence::Added,
            crate::compare::Presence::Removed => Presence::Removed,
        },
        units: c
            .kustomizations
            .iter()
            .map(|k| Unit {
                // The move hazard's own reading (`Move::prune_outage`), which a rename's line
                // points to.
                moves_pruned: moves_delete(c, &k.kustomization),
                ..unit(k)
            })
            .collect(),
        failures: d
            .failures()
            .into_iter()
            .filter(|f| f.cluster == c.cluster)
            .map(|f| Failure {
                unit: f.kustomization,
                side: f.side.to_string(),
                error: f.error,
                below: f.below,
            })
            .collect(),
        prune_deletions: c
            .prune_deletions
            .iter()
            .map(|p| Deletion {
                unit: p.kustomization.clone(),
                object: id(&p.object),
            })
            .collect(),
        image_bumps: images
            .iter()
            .filter(|i| i.cluster == c.cluster)
            .flat_map(|i| &i.changes)
            .map(|i| ImageBump {
                unit: i.kustomization.clone(),
                object: id(&i.object),
                path: i.path.clone(),
                base: i.base.clone(),
                head: i.head.clone(),
            })
            .collect(),
        hazards,
    }
}

/// `2 Kustomizations and 1 HelmRelease`: how many entries of the diff changed (added,
/// changed, removed), by kind; `None` when none did.
fn changed_entries(d: &RevisionDiff) -> Option<String> {
    // (entries, of which renamed) per kind.
    let mut counts: BTreeMap<UnitKind, (usize, usize)> = BTreeMap::new();
    for c in &d.clusters {
        for k in &c.kustomizations {
            if matches!(k.change, Change::Changed | Change::Added | Change::Removed) {
                counts.entry(unit_name(&k.kustomization).0).or_default().0 += 1;
            }
        }
        // A rename is one entry, as the review shows it: the review's own pairing, on the
        // ids alone.
        let units = ids_only(c);
        for (removed, _) in review::analysis::renames(&units) {
            let n = counts.entry(units[removed].kind).or_default();
            n.0 -= 1;
            n.1 += 1;
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(kind, (n, renamed))| {
            let word = if *n == 1 {
                kind.as_str()
            } else {
                kind.plural()
            };
            if *renamed > 0 {
                format!("{n} {word} ({renamed} renamed)")
            } else {
                format!("{n} {word}")
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" and "))
}

/// The added and removed entries of a cluster as review units with their objects' ids and
/// no values: what [`review::analysis::renames`] pairs them by.
fn ids_only(c: &ClusterDiff) -> Vec<Unit> {
    c.kustomizations
        .iter()
        .filter(|k| matches!(k.change, Change::Added | Change::Removed))
        .map(|k| {
            let (kind, name, parent) = unit_name(&k.kustomization);
            Unit {
                kind,
                name,
                parent,
                status: if k.change == Change::Added {
                    Status::Added
                } else {
                    Status::Removed
                },
                objects: k
                    .objects
                    .iter()
                    .map(|o| Object {
                        id: id(&o.object),
                        base: o.base.as_ref().map(|_| Value::Null),
                        head: o.head.as_ref().map(|_| Value::Null),
                    })
                    .collect(),
                ..Unit::default()
            }
        })
        .collect()
}

/// `4 Kustomizations change in 2 of 3 clusters`, `nothing changes in 3 clusters`.
fn what_changes(d: &RevisionDiff) -> String {
    let clusters = d.clusters.iter().filter(|c| c.changed()).count();
    match changed_entries(d) {
        Some(what) => format!(
            "{what} {} in {clusters} of {}",
            if what.starts_with("1 ") && !what.contains(" and ") {
                "changes"
            } else {
                "change"
            },
            plural(d.clusters.len(), "cluster")
        ),
        None if d.changed() => "objects move between Kustomizations".to_string(),
        None => format!("nothing changes in {}", plural(d.clusters.len(), "cluster")),
    }
}

/// The diff's verdict in words: what changes, where, and what could not be compared.
fn diff_verdict(d: &RevisionDiff) -> String {
    let not_compared = d.not_compared();
    if not_compared == 0 {
        let what = what_changes(d);
        return if d.changed() {
            what
        } else {
            format!("identical: {what}")
        };
    }
    let what = if d.changed() {
        what_changes(d)
    } else {
        "nothing else changes".to_string()
    };
    format!("{} not compared; {what}", d.not_compared_units())
}

/// The summary's sentences every diff may add: moves without an outage, what head took from
/// base, external Kustomizations found unchanged, objects left out of what is shown.
fn diff_notes(d: &RevisionDiff) -> Vec<String> {
    let mut notes = Vec::new();
    for c in &d.clusters {
        for ((from, to), objects) in moves_by_owners(c, false) {
            let cluster = &c.cluster;
            if is_release_entry(from) {
                notes.push(format!(
                    "`{cluster}`: {} from `{from}` to `{to}` (the old HelmRelease is not \
                     pruned: it stays on the cluster with its release).",
                    match objects.as_slice() {
                        [one] => format!("`{one}` moves"),
                        many => format!("{} move", plural(many.len(), "object")),
                    }
                ));
                continue;
            }
            notes.push(match objects.as_slice() {
                [one] => format!(
                    "`{cluster}`: `{one}` moves from `{from}` to `{to}` (`{from}` does not \
                     prune: no outage)."
                ),
                many => format!(
                    "`{cluster}`: {} move from `{from}` to `{to}` ({}; `{from}` does not prune: \
                     no outage).",
                    plural(many.len(), "object"),
                    code_list(many)
                ),
            });
        }
    }
    let skipped: usize = d.skipped_count();
    if skipped > 0 {
        let total = d.kustomization_count();
        notes.push(format!(
            "{skipped} of {total} Kustomizations taken from base: nothing they read changed \
             (`--full` renders them again)."
        ));
    }
    let (releases, kustomizations): (Vec<&crate::compare::KustomizationDiff>, Vec<_>) = d
        .clusters
        .iter()
        .flat_map(crate::compare::ClusterDiff::external_unchanged)
        .partition(|k| is_release_entry(&k.kustomization));
    if !kustomizations.is_empty() {
        notes.push(format!(
            "{} external and unchanged: not rendered, but their Kustomization, source and var \
             source objects are identical in base and head.",
            plural(kustomizations.len(), "Kustomization")
        ));
    }
    if !releases.is_empty() {
        notes.push(format!(
            "{} whose chart could not be had, unchanged: not rendered, but their HelmRelease, \
             chart source and values source objects are identical in base and head.",
            plural(releases.len(), "HelmRelease")
        ));
    }
    let left_out: usize = d
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .map(|k| k.left_out)
        .sum();
    if left_out > 0 {
        notes.push(format!(
            "{} changed but not shown (`--skip-secrets`, `--skip-crds`).",
            plural(left_out, "object")
        ));
    }
    notes
}

/// The review of a diff (`fluxsim diff`).
#[must_use]
pub fn diff_review(d: &RevisionDiff, images: &[ClusterImageDiff]) -> Review {
    Review {
        base: d.base.clone(),
        head: d.head.clone(),
        clusters: d.clusters.iter().map(|c| cluster(c, d, images)).collect(),
        title: "fluxsim diff".into(),
        verdict: Some(Verdict {
            passed: None,
            text: diff_verdict(d),
        }),
        notes: diff_notes(d),
        sections: Vec::new(),
    }
}

/// The proof's verdict in words: what changes, and whether the proof holds (and if not, why).
pub(crate) fn prove_verdict(p: &Proof<'_>) -> String {
    let what = what_changes(p.diff);
    if p.passed {
        let mut text = format!("{what}, the proof holds");
        if !p.blind.is_empty() {
            let _ = write!(
                text,
                " (blind to {}, allowed)",
                plural(p.blind.len(), "Kustomization")
            );
        }
        return text;
    }
    let mut why = Vec::new();
    if !p.expectation_met {
        why.push(format!("expected {}", p.expect));
    }
    if !p.canaries.passed() {
        why.push("the canaries did not all pass: the diff cannot be trusted".to_string());
    }
    if !p.blind.is_empty() && !p.allow_blind {
        why.push(plain_of(&BlindClause {
            blind: &p.blind,
            code: true,
            allowed: false,
        }));
    }
    // What head broke is the news: it leads.
    if p.blind.iter().any(|b| b.broken_by_head) && !p.allow_blind {
        why.rotate_right(1);
    }
    format!("{what}; the proof fails: {}", why.join("; "))
}

/// The one line that says what the canaries prove.
fn canary_note(p: &Proof<'_>) -> String {
    let c = p.canaries;
    if c.canaries.is_empty() {
        return "🐤 No canary could be planted (nothing of head rendered from a file of the \
                repository): nothing shows that this diff would see a change."
            .to_string();
    }
    let n = c.canaries.len();
    if c.passed() {
        let where_: Vec<String> = c
            .planted()
            .into_iter()
            .map(|(k, one, many)| format!("{k} {}", if k == 1 { one } else { many }))
            .collect();
        let shared = if c.no_shared_file {
            " No shared canary: no file of the repository is read by two artifacts or more."
        } else {
            ""
        };
        format!(
            "🐤 The canaries prove this diff sees changes: {} planted in head ({}) {} seen in \
             exactly the artifacts expected and undone cleanly.{shared}",
            plural(n, "change"),
            where_.join(", "),
            if n == 1 { "was" } else { "were" }
        )
    } else {
        let seen = c
            .canaries
            .iter()
            .filter(|x| x.detected && x.restored)
            .count();
        format!(
            "🐤 The canaries failed ({seen} of {n} seen where expected and undone): this diff \
             may miss changes; see the canaries below."
        )
    }
}

/// The review of a proof (`fluxsim prove`): the diff's, with the verdict first, what the
/// canaries prove in the summary, and each canary after the details.
#[must_use]
pub fn prove_review(p: &Proof<'_>, images: &[ClusterImageDiff]) -> Review {
    let mut r = diff_review(p.diff, images);
    r.title = "fluxsim prove".into();
    r.verdict = Some(Verdict {
        passed: Some(p.passed),
        text: prove_verdict(p),
    });
    r.notes.insert(0, canary_note(p));
    // Each section's count is its items' (the reports print `Canaries (N)`): the canaries
    // alone, then what moved beyond them, then one line per cluster.
    let (canaries, elsewhere): (Vec<_>, Vec<_>) = canary_lines(p)
        .into_iter()
        // Said in the summary's canary note.
        .filter(|l| !matches!(l, CanaryLine::NonePlanted | CanaryLine::NoSharedFile))
        .partition(|l| matches!(l, CanaryLine::Canary(_)));
    for (title, lines) in [("Canaries", canaries), ("Beyond the canaries", elsewhere)] {
        if !lines.is_empty() {
            r.sections.push(Section {
                title: title.into(),
                items: lines.iter().map(|l| plain_of(l)).collect(),
            });
        }
    }
    if !p.diff.clusters.is_empty() {
        r.sections.push(Section {
            title: "Clusters".into(),
            items: p
                .diff
                .clusters
                .iter()
                .map(|c| plain_of(&CanarySummary(p, c)))
                .collect(),
        });
    }
    r
}

/// `json` (the diff's JSON, `diff_json`'s shape) with what the review adds, in camelCase:
/// per object its semantic `changes` (`path`, `op`, `before`, `after`) and `hiddenChanges`,
/// per Kustomization `orderChanged`, per cluster `pruneDeletions`, `imageChanges` and
/// `hazards`, and at the top `review` (the filters, what they hid, the verdict).
pub fn add_to_json(json: &mut Value, diff: &RevisionDiff, analysis: &Analysis) {
    let Some(clusters) = json.get_mut("clusters").and_then(Value::as_array_mut) else {
        return;
    };
    // The JSON is the diff serialized (`report::diff::diff_json`): a cluster is found by its
    // `name`, its Kustomizations are the diff's, in its order.
    for cj in clusters.iter_mut() {
        let Some(cd) = diff
            .clusters
            .iter()
            .find(|c| cj.get("name").and_then(Value::as_str) == Some(c.cluster.as_str()))
        else {
            continue;
        };
        let Some(cluster) = analysis.clusters.iter().find(|x| x.name == cd.cluster) else {
            continue;
        };
        cj["pruneDeletions"] = json!(cluster
            .prune_deletions
            .iter()
            .map(|d| json!({"kustomization": json_doc::kustomization(&d.unit), "object": d.object}))
            .collect::<Vec<_>>());
        cj["imageChanges"] = json!(cluster
            .image_bumps
            .iter()
            .map(
                |b| json!({"kustomization": json_doc::kustomization(&b.unit), "object": b.object,
                            "path": b.path, "before": b.base, "after": b.head})
            )
            .collect::<Vec<_>>());
        cj["hazards"] = json!(cluster.hazards);
        let units: BTreeMap<String, &UnitReview> =
            cluster.units.iter().map(|u| (entry_name(u), u)).collect();
        // A rename is one unit of the review and two entries of the diff: the old entry keeps
        // its outcome (`removed`) and names the new one (`renamedTo`), the new one keeps
        // `added` and names the old (`renamedFrom`).
        let renamed_to: BTreeMap<String, &UnitReview> = cluster
            .units
            .iter()
            .filter_map(|u| Some((old_entry_name(u)?, u)))
            .collect();
        let Some(ks) = cj.get_mut("kustomizations").and_then(Value::as_array_mut) else {
            continue;
        };
        for (kj, kd) in ks.iter_mut().zip(&cd.kustomizations) {
            if let Some(u) = renamed_to.get(&kd.kustomization) {
                kj["outcome"] = json!(review::analysis::Outcome::Removed);
                kj["renamedTo"] = json!(json_doc::kustomization(&entry_name(u)));
                // Its objects are shown, where they differ, under the new name.
                if let Some(objects) = kj.get_mut("objects").and_then(Value::as_array_mut) {
                    for oj in objects {
                        oj["changes"] = json!([]);
                    }
                }
                continue;
            }
            let Some(u) = units.get(&kd.kustomization) else {
                continue;
            };
            if let Some(from) = old_entry_name(u) {
                kj["outcome"] = json!(review::analysis::Outcome::Added);
                kj["renamedFrom"] = json!(json_doc::kustomization(&from));
            } else {
                kj["outcome"] = json!(u.outcome);
            }
            if let Some((before, after)) = &u.reordered {
                kj["orderChanged"] = json!({"before": before, "after": after});
            }
            let Some(objects) = kj.get_mut("objects").and_then(Value::as_array_mut) else {
                continue;
            };
            for (oj, od) in objects.iter_mut().zip(&kd.objects) {
                let wanted = id(&od.object);
                match u.objects.iter().find(|o| o.object == wanted) {
                    Some(o) => {
                        oj["changes"] = json!(o.changes);
                        oj["hiddenChanges"] = json!(o.hidden.total());
                    }
                    // Changed only in what the filters hide.
                    None => oj["changes"] = json!([]),
                }
            }
        }
    }
    let hidden = analysis.hidden();
    json["review"] = json!({
        "title": analysis.title,
        "verdict": analysis.verdict,
        "filters": {"defaults": analysis.filters.defaults, "user": analysis.filters.user},
        "hiddenChanges": {"byDefaultFilters": hidden.default, "byStrip": hidden.user},
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helm_entry_is_a_helm_release_applied_by_its_kustomization() {
        assert_eq!(
            unit_name("flux-system/apps/helm/podinfo/podinfo"),
            (
                UnitKind::HelmRelease,
                "podinfo/podinfo".to_string(),
                Some("flux-system/apps".to_string())
            )
        );
        assert_eq!(
            unit_name("flux-system/apps"),
            (
                UnitKind::Kustomization,
                "flux-system/apps".to_string(),
                None
            )
        );
    }
}
