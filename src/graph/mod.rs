//! `graph`: a cold start of each cluster, simulated on a render — can every Kustomization
//! become Ready, and in what order?
//!
//! What "runs before" means on a cold cluster (nothing but Flux's controllers and CRDs):
//!
//! - The root Kustomization exists from bootstrap (`flux bootstrap` applies Flux's own CRDs
//!   and controllers first, so every `*.toolkit.fluxcd.io` kind exists before any
//!   Kustomization runs).
//! - A Kustomization exists once its **parent** (the Kustomization whose artifact holds it)
//!   has applied it. The parent applies all its objects in one apply, so everything the
//!   parent applies (its CRDs included) is on the cluster when the child first reconciles;
//!   the parent need not be Ready (health checks run after the apply).
//! - A Kustomization reconciles only when each **`dependsOn`** target is Ready
//!   (`checkDependencies` in kustomize-controller's `kustomization_controller.go`). A target
//!   is Ready after its apply, and, with `wait: true` (or `healthChecks`), only once its
//!   objects are healthy (`checkHealth`, same file); with `wait: false`, Ready only means
//!   applied.
//! - So A **runs before** B when A is reached from B over parent and `dependsOn` edges,
//!   transitively; A is **Ready before** B when some path from B enters A through a
//!   `dependsOn` edge. Siblings with no path between them are unordered: they race.
//! - Within one apply, Flux applies CRDs and Namespaces first and waits for them to register
//!   (kustomize-controller's `apply` in `kustomization_controller.go`; `ApplyAllStaged` in
//!   fluxcd/pkg `ssa/manager_apply.go`), so a custom resource may sit with its CRD and an
//!   object with its Namespace. But every object of a stage is dry-run before any is applied
//!   (`ApplyAll`), so one object without its CRD or Namespace fails the whole apply: nothing
//!   of it is applied, child Kustomizations included.
//! - A CRD that a controller registers at run time (declared in `fluxsim.toml`, see
//!   [`config`]) exists once its trigger object has been reconciled by the controller: it must
//!   be applied by a Kustomization that waits for it (`wait: true`, or `healthChecks` naming
//!   it) and is Ready before the custom resource's. A trigger in the same Kustomization as the
//!   custom resource can never be applied.
//! - `substituteFrom` vars are read at build time, before the apply: the ConfigMap or
//!   Secret must come from a Kustomization that runs before, never from the same one.
//!
//! [`check`] takes a render made with `RepoOptions::origins` (so findings point at files and
//! lines) and returns the waves and the findings; the CLI prints them.

pub mod config;
pub mod kinds;
pub mod rules;

mod checks;
mod model;
mod simulate;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::finding::{normalize, Finding, Location};
use crate::flux::NamespacedName;
use crate::render::RepoRender;

pub use config::GraphConfig;
pub use rules::RULES;

/// How one Kustomization comes to exist or wait for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EdgeKind {
    /// `from` applies `to` (`to` is an object of `from`'s artifact).
    Applies,
    /// `to` has `from` in its `dependsOn`.
    DependsOn,
}

/// An edge: `from` comes first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// The Kustomization that comes first.
    pub from: NamespacedName,
    /// The one that comes after.
    pub to: NamespacedName,
    /// Why.
    pub kind: EdgeKind,
}

/// One Kustomization of a cluster's graph.
#[derive(Debug, Clone, Serialize)]
pub struct GraphNode {
    /// Namespace and name.
    pub id: NamespacedName,
    /// `spec.path`.
    pub path: String,
    /// `spec.wait`.
    pub wait: bool,
    /// `spec.prune`.
    pub prune: bool,
    /// The 0-based wave it becomes Ready in, if it ever does.
    pub wave: Option<usize>,
    /// Why it never becomes Ready, if it does not.
    pub never_ready: Option<String>,
    /// Where it is declared.
    pub location: Option<Location>,
}

/// One cluster's cold start.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterGraph {
    /// The cluster's name.
    pub name: String,
    /// Every Kustomization, sorted by id.
    pub kustomizations: Vec<GraphNode>,
    /// Every edge, sorted.
    pub edges: Vec<Edge>,
    /// Names that a `dependsOn` gives but the cluster never defines.
    pub missing: Vec<NamespacedName>,
    /// The cold-start order: wave 0 is the root, each next wave what can reconcile once the
    /// earlier ones are Ready. Ids sorted within a wave.
    pub waves: Vec<Vec<NamespacedName>>,
}

impl ClusterGraph {
    /// Whether every Kustomization becomes Ready.
    #[must_use]
    pub fn converges(&self) -> bool {
        self.kustomizations.iter().all(|k| k.never_ready.is_none()) && self.missing.is_empty()
    }
}

/// The graph check's result.
#[derive(Debug, Clone, Serialize)]
pub struct GraphReport {
    /// One per cluster, sorted by name.
    pub clusters: Vec<ClusterGraph>,
    /// The findings, in printing order.
    pub findings: Vec<Finding>,
}

/// Simulates a cold start of every cluster of `render` and checks the graphs.
#[must_use]
pub fn check(render: &RepoRender, config: &GraphConfig) -> GraphReport {
    let root = render.tree.root();
    let mut files = model::Files::new(root);
    let discovered = crate::discover::discover(root);
    let mut per_cluster: Vec<(String, Vec<model::Node>)> = Vec::new();
    for c in &render.clusters {
        let root_ks = c.kustomizations.iter().find(|k| k.parent.is_none());
        let root_file = root_ks.and_then(|r| {
            discovered
                .clusters
                .iter()
                .find(|d| d.root.id == r.kustomization.id && d.root.path == r.kustomization.path)
                .and_then(|d| d.file.clone())
        });
        per_cluster.push((
            c.name.clone(),
            model::nodes_of(c, root_file.as_deref(), &mut files),
        ));
    }
    let mut findings = Vec::new();
    let mut clusters = Vec::new();
    for (name, nodes) in &per_cluster {
        let order = model::Order::new(nodes);
        let sim = simulate::simulate(nodes, &order, config);
        findings.extend(
            checks::ClusterCheck {
                cluster: name,
                nodes,
                order: &order,
                config,
            }
            .run(&mut files),
        );
        clusters.push(cluster_graph(name, nodes, &sim));
    }
    let pairs: Vec<(&str, &[model::Node])> = per_cluster
        .iter()
        .map(|(n, nodes)| (n.as_str(), nodes.as_slice()))
        .collect();
    findings.extend(checks::compare_clusters(&pairs));
    normalize(&mut findings);
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    GraphReport { clusters, findings }
}

fn cluster_graph(name: &str, nodes: &[model::Node], sim: &simulate::Simulation) -> ClusterGraph {
    let defined: BTreeSet<&NamespacedName> = nodes.iter().map(|n| &n.id).collect();
    let mut edges = Vec::new();
    let mut missing = BTreeSet::new();
    for n in nodes {
        if let Some(p) = &n.parent {
            edges.push(Edge {
                from: p.clone(),
                to: n.id.clone(),
                kind: EdgeKind::Applies,
            });
        }
        for d in &n.depends_on {
            if !defined.contains(d) {
                missing.insert(d.clone());
            }
            edges.push(Edge {
                from: d.clone(),
                to: n.id.clone(),
                kind: EdgeKind::DependsOn,
            });
        }
    }
    edges.sort();
    edges.dedup();
    ClusterGraph {
        name: name.to_string(),
        kustomizations: nodes
            .iter()
            .map(|n| GraphNode {
                id: n.id.clone(),
                path: n.path.clone(),
                wait: n.wait,
                prune: n.prune,
                wave: sim.wave_of.get(&n.id).copied(),
                never_ready: sim.never.get(&n.id).cloned(),
                location: n.location.clone(),
            })
            .collect(),
        edges,
        missing: missing.into_iter().collect(),
        waves: sim.waves.clone(),
    }
}
