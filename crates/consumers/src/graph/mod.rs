//! `graph`: a cold start of each cluster, simulated on a render — can every Kustomization
//! become Ready, and in what order?
//!
//! What "runs before" means on a cold cluster (nothing but Flux's controllers and CRDs):
//!
//! - The root Kustomization exists from bootstrap (`flux bootstrap`, the Flux Operator, a
//!   helmfile or a script installs Flux's CRDs and controllers first). Which Flux kinds exist
//!   ([`kinds::FluxApis`]): when the render carries Flux's CRDs (the repository's
//!   `flux-system/gotk-components.yaml`, written by `flux bootstrap`), exactly those;
//!   otherwise every `*.fluxcd.io` kind, `*.toolkit.fluxcd.io` and `*.extensions.fluxcd.io`
//!   alike: a cluster whose root reconciles runs Flux, and the default `--components`
//!   (source-, kustomize-, helm-, notification-controller) are always installed, the extras
//!   (image-reflector/image-automation-controller, source-watcher's `ArtifactGenerator`)
//!   only with `--components-extra`, which the repository does not say, so a repository that
//!   uses an extra kind is taken to be installed with it
//!   (fluxcd.io/flux/installation/configuration/optional-components/; fluxcd/source-watcher
//!   README). A rendered gotk-components.yaml without an extra kind the cluster uses is
//!   FS203, naming the `--components-extra` value.
//! - What the cluster's bootstrap puts there before Flux runs ([`bootstrap`]: helmfiles,
//!   `bootstrap/` folders, Taskfile and script commands, Talos inline manifests, files no
//!   Kustomization applies) exists from the start, presumed and said (FS216).
//! - A Kustomization exists once its **parent** (the Kustomization whose artifact holds it)
//!   has applied it. The parent applies all its objects in one apply, so everything the
//!   parent applies (its CRDs included) is on the cluster when the child first reconciles;
//!   the parent need not be Ready (health checks run after the apply).
//! - A Flux Operator **ResourceSet** is a node of its own (its render entry
//!   `<parent>/rset/<namespace>/<name>`): it exists once its parent applied it, and applies
//!   what it generates (the Kustomizations among them are its children) in one apply; it is
//!   Ready after that apply, or once its objects are healthy with `spec.wait: true`. Its
//!   `dependsOn` on a Kustomization or a ResourceSet of the cluster is a `dependsOn` edge
//!   (the operator waits for the object, and for its Ready condition with `ready: true`:
//!   `checkDependencies` in flux-operator's `resourceset_controller.go`; fluxsim takes both as
//!   Ready); a dependency on another kind of object is not a node and is left out. A cluster
//!   whose root applies a `FluxInstance` was bootstrapped by the Flux Operator: its kinds
//!   and Flux's exist from the start ([`kinds::FluxApis::Operator`]).
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
//! - CRDs the cluster's bootstrap installs before Flux (`[bootstrap] crd_groups` in
//!   `fluxsim.toml`, see [`config`]) exist from the start, like built-in kinds.
//! - A CRD that a controller registers at run time (declared in `fluxsim.toml`, see
//!   [`config`]) exists once its trigger object has been reconciled by the controller: it must
//!   be applied by a Kustomization that waits for it (`wait: true`, or `healthChecks` naming
//!   it) and is Ready before the custom resource's. A trigger in the same Kustomization as the
//!   custom resource can never be applied.
//! - A CRD in no rendered manifest and no `fluxsim.toml` entry may come from a Helm chart:
//!   helm-controller installs a chart's `crds/` directory before its templates on install
//!   (`spec.install.crds`: `Create` by default, or `CreateReplace`; `Skip` installs none;
//!   on upgrade the default is `Skip`: fluxcd.io/flux/components/helm/helmreleases/,
//!   "Controlling the lifecycle of Custom Resource Definitions"), and charts may template
//!   CRDs too (so `Skip` does not rule a chart out). fluxsim cannot see a chart's CRDs
//!   offline, so it presumes, and says so. A `HelmRelease` applied by a Kustomization that
//!   waits for it (`wait: true` or `healthChecks` naming it: Ready means installed) and is
//!   Ready before the custom resource's Kustomization: FS214 (info), the CRD exists from
//!   then on. Only `HelmRelease`s nothing waits for (an unordered Kustomization, the parent,
//!   a `dependsOn` target with `wait: false`): FS215 (info), the apply fails until
//!   helm-controller has installed the chart, and kustomize-controller retries at
//!   `retryInterval` (or `interval`), so it converges late: a slower cold start, not a
//!   deadlock. Only `HelmRelease`s in the same
//!   Kustomization or in one that runs after it: FS203, for the dry-run of every object
//!   comes before any apply (`ApplyAll`, above), so a `HelmRelease` beside the custom
//!   resource is never applied on a cold cluster. No `HelmRelease` at all: FS203. Candidates
//!   are ranked in the message by the name parts their chart or release shares with the
//!   group (`cert-manager` and `cert-manager.io`), and the best such match is named when it
//!   is not among those the finding relies on; the match never clears or raises a finding.
//!   `[[helm_crds]]` in `fluxsim.toml` makes it exact: the chart's groups then exist once a
//!   `HelmRelease` of that chart is installed, checked like a runtime CRD (FS206/FS207).
//! - `substituteFrom` vars are read at build time, before the apply: the ConfigMap or
//!   Secret must come from a Kustomization that runs before, never from the same one.
//!
//! [`check`] takes a render made with `RepoOptions::origins` (so findings point at files and
//! lines) and returns the waves and the findings; the CLI prints them.

pub(crate) use crate::bootstrap;
pub mod config;
pub mod helm;
pub mod kinds;
pub mod rules;

mod checks;
mod nodes;
mod simulate;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::config::Config;
use crate::finding::{normalize, Finding, Location};
use crate::flux::NamespacedName;
use crate::model::RepoRender;

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
    /// The CRD groups custom resources need that no manifest and no fluxsim.toml entry
    /// defines (FS203, FS215), each once, sorted by group.
    pub missing_crd_groups: Vec<MissingCrdGroup>,
}

/// A CRD group that custom resources need and nothing fluxsim can read defines: said once,
/// with the fluxsim.toml entries that declare it and what the repository's bootstrap shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingCrdGroup {
    /// `external-secrets.io`.
    pub group: String,
    /// The kinds needed (`ExternalSecret`), sorted.
    pub kinds: BTreeSet<String>,
    /// How many findings (one per custom resource) are about it.
    pub findings: usize,
    /// The clusters where it is needed, sorted.
    pub clusters: BTreeSet<String>,
    /// Bootstrap sources that may install it ([`bootstrap::hints_for`]), best first.
    pub hints: Vec<String>,
}

/// The missing CRD groups of `findings` (FS203 for a kind that is not Flux's, FS215), with
/// the hints `sources` give for each.
fn missing_crd_groups(
    findings: &[Finding],
    sources: &[bootstrap::BootstrapSource],
) -> Vec<MissingCrdGroup> {
    let mut groups: std::collections::BTreeMap<String, MissingCrdGroup> =
        std::collections::BTreeMap::new();
    for f in findings {
        // Only what nothing can provide: a group presumed from a chart or the bootstrap is
        // said by its own (info) finding.
        if f.rule != rules::CRD_MISSING.id {
            continue;
        }
        let Some((kind, group)) = f.related("kind").first().and_then(|k| k.split_once('.')) else {
            continue;
        };
        if kinds::is_flux(group) {
            continue;
        }
        let g = groups
            .entry(group.to_string())
            .or_insert_with(|| MissingCrdGroup {
                group: group.to_string(),
                kinds: BTreeSet::new(),
                findings: 0,
                clusters: BTreeSet::new(),
                hints: bootstrap::hints_for(group, sources),
            });
        g.kinds.insert(kind.to_string());
        g.findings += 1;
        if let Some(c) = &f.cluster {
            g.clusters.insert(c.clone());
        }
    }
    groups.into_values().collect()
}

/// Simulates a cold start of every cluster of `render` and checks the graphs.
#[must_use]
pub fn check(render: &RepoRender, config: &Config) -> GraphReport {
    // The render's own discovery of the tree (read once, not again here).
    let root_file = |r: &crate::model::KustomizationRender| {
        render
            .discovered
            .iter()
            .find(|d| d.root.id == r.kustomization.id && d.root.path == r.kustomization.path)
            .and_then(|d| d.file.clone())
    };
    let boot = bootstrap::BootstrapEvidence::read(render.tree.fs(), render.tree.files());
    let (mut clusters, findings) = analyse(
        render.tree.fs(),
        &render.clusters,
        &root_file,
        config,
        &boot,
    );
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    let missing_crd_groups = missing_crd_groups(&findings, &boot.sources);
    GraphReport {
        clusters,
        findings,
        missing_crd_groups,
    }
}

/// The findings of `clusters` as [`check`] finds them, without the report's graphs and
/// hints: what `diff --graph` compares between two revisions. `fs` is the tree the clusters
/// were rendered from; the files of the cluster roots are not known (a root's finding has no
/// file).
#[must_use]
pub fn findings(
    fs: &crate::source::SourceFs,
    clusters: &[crate::model::ClusterRender],
    config: &Config,
) -> Vec<Finding> {
    let files: Vec<std::path::PathBuf> =
        fs.file_paths().map(std::path::Path::to_path_buf).collect();
    let boot = bootstrap::BootstrapEvidence::read(fs, &files);
    analyse(fs, clusters, &|_| None, config, &boot).1
}

/// Each cluster's graph and every finding, normalised.
fn analyse(
    fs: &crate::source::SourceFs,
    clusters: &[crate::model::ClusterRender],
    root_file: &dyn Fn(&crate::model::KustomizationRender) -> Option<String>,
    config: &Config,
    boot: &bootstrap::BootstrapEvidence,
) -> (Vec<ClusterGraph>, Vec<Finding>) {
    let mut files = nodes::Files::new(fs);
    let mut per_cluster: Vec<(String, Vec<nodes::Node>)> = Vec::new();
    for c in clusters {
        let root = c
            .kustomizations
            .iter()
            .find(|k| k.parent.is_none())
            .and_then(root_file);
        per_cluster.push((
            c.name.clone(),
            nodes::nodes_of(c, root.as_deref(), &mut files),
        ));
    }
    let mut findings = Vec::new();
    let mut graphs = Vec::new();
    for (name, nodes) in &per_cluster {
        let order = nodes::Order::new(nodes);
        let sim = simulate::simulate(nodes, &order, config, boot);
        findings.extend(
            checks::ClusterCheck {
                cluster: name,
                nodes,
                order: &order,
                config,
                boot,
                sim: &sim,
            }
            .run(&mut files),
        );
        graphs.push(cluster_graph(name, nodes, &sim));
    }
    let pairs: Vec<(crate::model::graph::ClusterFolder<'_>, &[nodes::Node])> = per_cluster
        .iter()
        .zip(clusters)
        .map(|((n, nodes), c)| {
            let folder = crate::model::graph::ClusterFolder {
                name: n,
                home: &c.home,
            };
            (folder, nodes.as_slice())
        })
        .collect();
    findings.extend(checks::compare_clusters(&pairs));
    normalize(&mut findings);
    (graphs, findings)
}

fn cluster_graph(name: &str, nodes: &[nodes::Node], sim: &simulate::Simulation) -> ClusterGraph {
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

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::render::{render_dir, BuilderChoice, RepoOptions};

    /// A repository whose root applies `n` Flux Kustomizations declared in one file, each
    /// building a folder with one ConfigMap, in runs of `dependsOn`.
    fn one_file_repo(n: usize) -> tempfile::TempDir {
        let mut apps = String::new();
        let mut files: Vec<(String, String)> = Vec::new();
        for i in 0..n {
            let deps = if i % 10 == 0 {
                String::new()
            } else {
                format!("  dependsOn:\n    - name: app-{}\n", i - 1)
            };
            if i > 0 {
                apps.push_str("---\n");
            }
            write!(
                apps,
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n\
                 metadata:\n  name: app-{i}\n  namespace: flux-system\nspec:\n  \
                 interval: 10m\n  path: ./apps/app-{i}\n  prune: true\n  sourceRef:\n    \
                 kind: GitRepository\n    name: flux-system\n{deps}"
            )
            .expect("writing to a String");
            files.push((
                format!("apps/app-{i}/config.yaml"),
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{i}\n  namespace: default\n"),
            ));
        }
        files.push(("clusters/main/apps.yaml".into(), apps));
        files.push((
            "clusters/main/sync.yaml".into(),
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  \
             name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  \
             url: https://example.invalid/repo\n---\n\
             apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
             name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  \
             path: ./clusters/main\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    \
             name: flux-system\n"
                .into(),
        ));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let t = tempfile::tempdir().expect("a temporary folder");
        for (path, text) in refs {
            let p = t.path().join(path);
            std::fs::create_dir_all(p.parent().expect("a relative path")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        t
    }

    /// `graph` is linear in the Kustomizations: each document of a file that declares them
    /// is read once for the whole check, not once per Kustomization declared in it (which
    /// made `graph` quadratic on a file declaring thousands). (That the tree is not
    /// discovered again is the crate graph's: `discover` is not this crate's to call.)
    #[test]
    fn check_reads_each_declaring_document_once_and_discovers_nothing_again() {
        let n = 40;
        let dir = one_file_repo(n);
        let opts = RepoOptions {
            origins: true,
            builder: BuilderChoice::Native,
            jobs: 1,
            ..RepoOptions::default()
        };
        let render = render_dir(dir.path(), &opts).expect("a render");
        assert_eq!(render.clusters.len(), 1);
        assert_eq!(render.clusters[0].kustomizations.len(), n + 1);
        let documents = crate::locate::documents_read();
        let report = check(&render, &Config::default());
        // apps.yaml's n documents and sync.yaml's two: the files that declare Kustomizations.
        assert_eq!(crate::locate::documents_read() - documents, n + 2);
        let graph = &report.clusters[0];
        assert!(graph.converges(), "{:?}", report.findings);
        let located: Vec<Option<usize>> = graph
            .kustomizations
            .iter()
            .map(|k| k.location.as_ref().and_then(|l| l.line))
            .collect();
        assert!(located.iter().all(Option::is_some), "{located:?}");
        assert_eq!(graph.waves.len(), 11, "{:?}", graph.waves);
    }
}
