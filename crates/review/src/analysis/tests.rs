//! The analysis read on small reviews: noise hidden, renames paired, counts kept.

use super::*;
use crate::model::{Cluster, Object, ObjectId, Review, Status, Unit};
use serde_json::json;
use serde_json::Value;

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
