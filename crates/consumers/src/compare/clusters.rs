//! Cluster against cluster: are the Kustomization graphs the same, are the templates (the
//! build output before postBuild substitution) the same, and which var values make the
//! rendered artifacts differ. When graphs and templates match, the clusters run the same
//! templates and differ only in the listed values: the overlay is environment-agnostic.
//!
//! A cluster root (the Kustomization nobody applies) holds the cluster's own files — its
//! `cluster-vars`, its source — so its path and template differ by design and are shown but
//! not held against the verdict.
//!
//! A Kustomization that did not render in some cluster (failed, blocked, external,
//! suspended) is `not compared`: neither same nor different, and never part of a verdict
//! that the clusters differ only in values. So is one missing from a cluster because an
//! ancestor did not render there (the cluster's root failed, say): what that cluster would
//! apply is unknown, not missing. Each failure is said once ([`ClusterComparison::failures`]),
//! with how many Kustomizations it leaves unknown.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::graph::ClusterFolder;
pub use crate::model::graph::GraphNode;
use crate::model::{ClusterRender, KustomizationRender, VarSource};

/// One Kustomization across the clusters' graphs.
#[derive(Debug, Clone, Serialize)]
pub struct GraphRow {
    /// `namespace/name`.
    pub kustomization: String,
    /// Per cluster (in `ClusterComparison::clusters` order); `None` where it is not defined
    /// (or not known: see `TemplateRow::below`).
    pub nodes: Vec<Option<GraphNode>>,
    /// The fields that differ (`missing`, or those of [`crate::model::graph::graph_differences`]:
    /// `path`, `appliedBy`, `dependsOn`, `wait`, `prune`, `substituteFrom`) between the
    /// clusters where it is known; empty when identical.
    pub differences: Vec<String>,
}

/// One Kustomization's template and render across the clusters.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateRow {
    /// `namespace/name`.
    pub kustomization: String,
    /// The cluster root: its template differs by design.
    pub root: bool,
    /// The template digest per cluster (`None` where it did not build or is not defined).
    pub templates: Vec<Option<String>>,
    /// The artifact digest per cluster.
    pub artifacts: Vec<Option<String>>,
    /// All templates present and equal.
    pub same_template: bool,
    /// All artifacts present and equal.
    pub same_artifact: bool,
    /// The vars this Kustomization uses whose values differ between the clusters.
    pub differing_vars: Vec<String>,
    /// It did not render in a cluster that defines it: its templates are not compared.
    pub not_compared: bool,
    /// It failed (or was blocked) in some cluster, rather than being external, suspended or
    /// in need of the network there.
    pub failed: bool,
    /// Per cluster, why it did not render there (`failed: ...`); `None` where it rendered or
    /// is not defined.
    pub problems: Vec<Option<String>>,
    /// Per cluster, the ancestor that did not render there, so that whether this
    /// Kustomization is applied there is unknown (`flux-system/flux-system`, when the
    /// cluster's root failed); `None` where it is defined or really missing.
    pub below: Vec<Option<String>>,
    /// Where its templates differ: each object that differs between the first cluster's
    /// template and another cluster's, with its semantic changes (empty when the templates
    /// are the same, or not all built).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<TemplateObjectDiff>,
}

/// One object of a template that differs between the first cluster and another.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateObjectDiff {
    /// The other cluster (the first is the base of the comparison).
    pub cluster: String,
    /// The object.
    pub object: crate::flux::ObjectId,
    /// `changed`, `added` (only in the other cluster) or `removed` (only in the first).
    pub change: &'static str,
    /// For a changed object: its changes (`path`, `op`, `before`, `after`), after the
    /// review's default filters; Secret values masked.
    pub changes: Vec<review::semantic::FieldChange>,
}

/// The objects that differ between two templates of a Kustomization, `first` against
/// `other`, sorted by object.
fn template_objects(
    first: &crate::artifact::Artifact,
    other: &crate::artifact::Artifact,
    cluster: &str,
) -> Vec<TemplateObjectDiff> {
    let index =
        |a: &crate::artifact::Artifact| -> BTreeMap<crate::flux::ObjectId, serde_json::Value> {
            a.objects
                .iter()
                .map(|o| (o.id.clone(), (*o.object).clone()))
                .collect()
        };
    let (a, b) = (index(first), index(other));
    let filters = review::strip::Filters::new();
    let ids: BTreeSet<&crate::flux::ObjectId> = a.keys().chain(b.keys()).collect();
    let mut out = Vec::new();
    for id in ids {
        let (x, y) = crate::mask::mask_pair(a.get(id), b.get(id));
        let (change, changes) = match (&x, &y) {
            (Some(x), Some(y)) => {
                let changes = review::semantic::diff(&filters.apply(x), &filters.apply(y));
                if changes.is_empty() {
                    continue;
                }
                ("changed", changes)
            }
            (None, Some(_)) => ("added", Vec::new()),
            (Some(_), None) => ("removed", Vec::new()),
            (None, None) => continue,
        };
        out.push(TemplateObjectDiff {
            cluster: cluster.to_string(),
            object: id.clone(),
            change,
            changes,
        });
    }
    out
}

/// A var whose value differs between clusters.
#[derive(Debug, Clone, Serialize)]
pub struct VarDiff {
    /// The var's name.
    pub name: String,
    /// Its value per cluster (`None` where no Kustomization receives it); values from
    /// Secrets are shown as `(secret)`, SOPS ciphertext as `(encrypted)`.
    pub values: Vec<Option<String>>,
    /// Kustomizations (in any cluster) that use it.
    pub used_by: Vec<String>,
}

/// A Kustomization that failed to render by itself in a cluster (not below one that did
/// not render), with how many Kustomizations below it are unknown there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterFailure {
    /// The cluster.
    pub cluster: String,
    /// `namespace/name`.
    pub kustomization: String,
    /// Why it failed.
    pub error: String,
    /// How many Kustomizations the other clusters define below it are not compared because
    /// of it.
    pub below: usize,
}

/// The clusters side by side.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterComparison {
    /// The clusters compared, in the order given.
    pub clusters: Vec<String>,
    /// Every Kustomization of any cluster, sorted.
    pub graph: Vec<GraphRow>,
    /// Templates and renders, sorted.
    pub kustomizations: Vec<TemplateRow>,
    /// Vars whose values differ, sorted by name.
    pub vars: Vec<VarDiff>,
    /// Same graph, and the same templates everywhere but the roots among the Kustomizations
    /// compared: the clusters differ only in var values (as far as could be seen: see
    /// `not_compared`).
    pub agnostic: bool,
    /// How many Kustomizations could not be compared (not rendered in some cluster).
    pub not_compared: usize,
    /// Per cluster: some of its Kustomizations are unknown (below one that did not render
    /// there), so a var no known Kustomization of it receives is unknown there, not
    /// undefined.
    #[serde(skip)]
    pub incomplete: Vec<bool>,
}

fn node(k: &KustomizationRender) -> GraphNode {
    let mut depends_on: Vec<String> = k
        .kustomization
        .depends_on
        .iter()
        .map(ToString::to_string)
        .collect();
    depends_on.sort();
    GraphNode {
        path: k.kustomization.path.clone(),
        parent: k.parent.as_ref().map(ToString::to_string),
        depends_on,
        wait: k.kustomization.wait,
        prune: k.kustomization.prune,
        substitute_from: k
            .kustomization
            .post_build
            .iter()
            .flat_map(|p| &p.substitute_from)
            .map(|s| format!("{}/{}{}", s.kind, s.name, if s.optional { "?" } else { "" }))
            .collect(),
        root: k.parent.is_none(),
    }
}

fn shown(v: &VarSource) -> String {
    if v.encrypted {
        "(encrypted)".into()
    } else if v.source.starts_with("Secret/") {
        "(secret)".into()
    } else {
        v.value.clone()
    }
}

impl ClusterComparison {
    /// What failed to render by itself (`failed: ...` in a cluster, not below an ancestor
    /// that did not render), in the order of the rows and then of the clusters: the first
    /// thing a report says, once, since what it applies is unknown there.
    #[must_use]
    pub fn failures(&self) -> Vec<ClusterFailure> {
        let mut out = Vec::new();
        for k in &self.kustomizations {
            for (i, p) in k.problems.iter().enumerate() {
                let Some(error) = p.as_deref().and_then(|p| p.strip_prefix("failed: ")) else {
                    continue;
                };
                let below = self
                    .kustomizations
                    .iter()
                    .filter(|x| x.below.get(i).and_then(Option::as_deref) == Some(&k.kustomization))
                    .count();
                out.push(ClusterFailure {
                    cluster: self.clusters[i].clone(),
                    kustomization: k.kustomization.clone(),
                    error: error.to_string(),
                    below,
                });
            }
        }
        out
    }
}

/// Compares `clusters` (in the order given) side by side.
#[must_use]
pub fn compare_clusters(clusters: &[&ClusterRender]) -> ClusterComparison {
    let index: Vec<BTreeMap<String, &KustomizationRender>> = clusters
        .iter()
        .map(|c| {
            c.kustomizations
                .iter()
                .map(|k| (k.kustomization.id.to_string(), k))
                .collect()
        })
        .collect();
    let ids: BTreeSet<&String> = index.iter().flat_map(BTreeMap::keys).collect();
    let mut graph = Vec::new();
    let mut rows = Vec::new();
    for id in &ids {
        let ks: Vec<Option<&KustomizationRender>> =
            index.iter().map(|m| m.get(*id).copied()).collect();
        // Where it is missing because an ancestor did not render there, it is unknown.
        let unknown = unknown_in(clusters, &index, &ks);
        let nodes: Vec<Option<GraphNode>> = ks.iter().map(|k| k.map(node)).collect();
        graph.push(GraphRow {
            kustomization: (*id).clone(),
            differences: graph_differences(clusters, &nodes, &unknown),
            nodes,
        });
        let digests = |f: fn(&KustomizationRender) -> Option<String>| -> Vec<Option<String>> {
            ks.iter().map(|k| k.and_then(f)).collect()
        };
        let templates = digests(|k| k.template.as_ref().map(|a| a.sha256.clone()));
        let artifacts = digests(|k| k.artifact.as_ref().map(|a| a.sha256.clone()));
        let all_same = |d: &[Option<String>]| d.iter().all(|x| x.is_some() && *x == d[0]);
        let used: BTreeSet<&String> = ks.iter().flatten().flat_map(|k| &k.vars_used).collect();
        let differing_vars = used
            .into_iter()
            .filter(|v| {
                let vals: BTreeSet<Option<&String>> = ks
                    .iter()
                    .map(|k| k.and_then(|k| k.vars.get(*v)).map(|s| &s.value))
                    .collect();
                vals.len() > 1
            })
            .cloned()
            .collect();
        let problems: Vec<Option<String>> = ks
            .iter()
            .zip(&unknown)
            .map(|(k, u)| match (k, u) {
                (Some(k), _) => super::problem(k),
                (None, Some(u)) => Some(format!("not rendered: below {}, which {}", u.id, u.state)),
                (None, None) => None,
            })
            .collect();
        let root = ks.iter().flatten().any(|k| k.parent.is_none());
        let objects = if !all_same(&templates) && !root && problems.iter().all(Option::is_none) {
            differing_objects(clusters, &ks)
        } else {
            Vec::new()
        };
        rows.push(TemplateRow {
            objects,
            not_compared: problems.iter().any(Option::is_some),
            failed: ks.iter().flatten().any(|k| {
                matches!(
                    k.status,
                    crate::model::Status::Failed(_) | crate::model::Status::Blocked(_)
                )
            }),
            problems,
            below: unknown.into_iter().map(|u| u.map(|u| u.id)).collect(),
            kustomization: (*id).clone(),
            root,
            same_template: all_same(&templates),
            same_artifact: all_same(&artifacts),
            templates,
            artifacts,
            differing_vars,
        });
    }
    // A cluster where some Kustomization is below one that did not render: what it
    // applies, and so the vars it gives, are not all known.
    let incomplete: Vec<bool> = (0..clusters.len())
        .map(|i| rows.iter().any(|r| r.below[i].is_some()))
        .collect();
    let vars = differing_vars(&index, &incomplete);
    let agnostic = graph.iter().all(|g| g.differences.is_empty())
        && rows
            .iter()
            .all(|r| r.root || r.not_compared || r.same_template);
    ClusterComparison {
        incomplete,
        not_compared: rows.iter().filter(|r| r.not_compared).count(),
        clusters: clusters.iter().map(|c| c.name.clone()).collect(),
        graph,
        kustomizations: rows,
        vars,
        agnostic,
    }
}

/// Per cluster, for a Kustomization (`ks`, per cluster) missing there, the ancestor that
/// did not render there (so whether it is applied there is unknown); `None` where it is
/// defined or really missing.
fn unknown_in(
    clusters: &[&ClusterRender],
    index: &[BTreeMap<String, &KustomizationRender>],
    ks: &[Option<&KustomizationRender>],
) -> Vec<Option<super::UnrenderedAncestor>> {
    let Some((here, defined)) = index.iter().zip(ks).find_map(|(m, k)| k.map(|k| (m, k))) else {
        return ks.iter().map(|_| None).collect();
    };
    ks.iter()
        .zip(clusters.iter().zip(index))
        .map(|(k, (c, there))| match k {
            Some(_) => None,
            None => super::unrendered_ancestor(defined, here, there, &c.name),
        })
        .collect()
}

/// The objects of a Kustomization's template (`ks`, per cluster) that differ between the
/// first cluster and each other one.
fn differing_objects(
    clusters: &[&ClusterRender],
    ks: &[Option<&KustomizationRender>],
) -> Vec<TemplateObjectDiff> {
    let built: Vec<Option<&crate::artifact::Artifact>> = ks
        .iter()
        .map(|k| k.and_then(|k| k.template.as_ref()))
        .collect();
    let mut objects = Vec::new();
    if let Some(Some(first)) = built.first() {
        for (c, other) in clusters.iter().zip(&built).skip(1) {
            if let Some(other) = other {
                objects.extend(template_objects(first, other, &c.name));
            }
        }
    }
    objects
}

/// The graph fields that differ between the clusters where the Kustomization is known:
/// `missing` when a cluster does not define it (and no ancestor's failure explains why).
fn graph_differences(
    clusters: &[&ClusterRender],
    nodes: &[Option<GraphNode>],
    unknown: &[Option<super::UnrenderedAncestor>],
) -> Vec<String> {
    let present: Vec<(ClusterFolder<'_>, &GraphNode)> = clusters
        .iter()
        .zip(nodes)
        .filter_map(|(c, n)| {
            let folder = ClusterFolder {
                name: &c.name,
                home: &c.home,
            };
            n.as_ref().map(|n| (folder, n))
        })
        .collect();
    let known = present.len() + unknown.iter().flatten().count();
    if known < nodes.len() {
        return vec!["missing".into()];
    }
    crate::model::graph::graph_differences(&present)
        .into_iter()
        .map(|d| d.field.to_string())
        .collect()
}

/// Vars whose value, as received by the Kustomizations of each cluster, differs (a cluster
/// that is `incomplete` and gives a var to none of its known Kustomizations says nothing of
/// it).
fn differing_vars(
    index: &[BTreeMap<String, &KustomizationRender>],
    incomplete: &[bool],
) -> Vec<VarDiff> {
    // Per var: per cluster, the values its Kustomizations receive.
    let mut values: BTreeMap<&String, Vec<BTreeSet<String>>> = BTreeMap::new();
    let mut used_by: BTreeMap<&String, BTreeSet<String>> = BTreeMap::new();
    for (i, m) in index.iter().enumerate() {
        for (id, k) in m {
            for (name, src) in &k.vars {
                values
                    .entry(name)
                    .or_insert_with(|| vec![BTreeSet::new(); index.len()])[i]
                    .insert(shown(src));
                if k.vars_used.contains(name) {
                    used_by.entry(name).or_default().insert(id.clone());
                }
            }
        }
    }
    values
        .into_iter()
        .filter(|(_, per)| {
            let known: Vec<&BTreeSet<String>> = per
                .iter()
                .zip(incomplete)
                .filter(|(s, inc)| !(s.is_empty() && **inc))
                .map(|(s, _)| s)
                .collect();
            known.iter().any(|s| *s != known[0])
        })
        .map(|(name, per)| VarDiff {
            name: name.clone(),
            values: per
                .into_iter()
                .map(|s| (!s.is_empty()).then(|| s.into_iter().collect::<Vec<_>>().join(" | ")))
                .collect(),
            used_by: used_by
                .remove(name)
                .map(|s| s.into_iter().collect())
                .unwrap_or_default(),
        })
        .collect()
}
