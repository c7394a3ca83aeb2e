//! The graph's nodes, read from a cluster's render: each Flux Kustomization with its edges
//! (the parent that applies it, the `dependsOn` it waits for) and the objects it applies.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::config::Trigger;
use crate::artifact::ArtifactObject;
use crate::finding::Location;
use crate::flux::{is_kustomization, str_at, NamespacedName, ObjectId, SubstituteFrom};
use crate::locate::ObjectLines;
use crate::model::{ClusterRender, KustomizationRender, Status};
use crate::source::SourceFs;

/// What the render made of a Kustomization, as far as the graph cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Rendered: its objects are known.
    Rendered,
    /// Its build or substitution fails: it never becomes Ready.
    Failed(String),
    /// `spec.suspend: true`: never reconciled.
    Suspended,
    /// Its source is not this repository: its objects are unknown.
    External,
    /// Not rendered because something it waits for is not ready: its objects are unknown.
    NotRendered,
}

/// One object a Kustomization applies.
#[derive(Debug, Clone)]
pub(crate) struct Obj {
    /// Which object (as rendered, after namePrefix and substitution).
    pub(crate) id: ObjectId,
    /// The file it came from, relative to the repository root, when known.
    pub(crate) file: Option<String>,
    /// For a CRD: the group and kind it defines.
    pub(crate) defines: Option<(String, String)>,
    /// For a CRD: its objects are cluster-scoped (`spec.scope: Cluster`).
    pub(crate) cluster_scoped: bool,
    /// For a Flux `HelmRelease`: what it installs.
    pub(crate) helm: Option<HelmChart>,
    /// The Secret a controller makes from this object at run time, in its namespace (an
    /// ExternalSecret's target, a SealedSecret ...: [`made_secret`]).
    pub(crate) makes: Option<String>,
}

/// The chart a `HelmRelease` installs, as far as the render tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HelmChart {
    /// `spec.chart.spec.chart`; for a `spec.chartRef` to an `OCIRepository` rendered in the
    /// cluster, the last path segment of its `spec.url` (the chart's name in an OCI registry);
    /// otherwise the `chartRef`'s name.
    pub(crate) chart: String,
    /// `spec.install.crds` (`Create` when unset: helm-controller's default on install).
    pub(crate) install_crds: String,
    /// The namespace `spec.install.createNamespace: true` makes on install: the release's
    /// `spec.targetNamespace`, else the HelmRelease's own (helm-controller
    /// `internal/action/install.go` passes `CreateNamespace` for the target namespace).
    pub(crate) creates_namespace: Option<String>,
}

/// Whether `o` is an object that makes a declared CRD exist.
pub(crate) fn is_trigger(o: &Obj, t: Trigger<'_>) -> bool {
    match t {
        Trigger::Object(k) => o.id.group == k.group && o.id.kind == k.kind,
        Trigger::Chart(c) => o.helm.as_ref().is_some_and(|h| h.chart == c),
    }
}

/// A Flux Kustomization in the graph.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) id: NamespacedName,
    /// The Kustomization that applies this one; `None` for the cluster root.
    pub(crate) parent: Option<NamespacedName>,
    pub(crate) depends_on: Vec<NamespacedName>,
    /// `spec.wait`.
    pub(crate) wait: bool,
    /// `spec.wait` or `spec.healthChecks`: Ready means its (checked) objects are healthy.
    pub(crate) health_checked: bool,
    /// `spec.healthChecks` entries, as (kind, name): with `wait: false`, the objects whose
    /// health Ready waits for.
    pub(crate) health_checks: Vec<(String, String)>,
    pub(crate) prune: bool,
    pub(crate) path: String,
    pub(crate) state: NodeState,
    pub(crate) objects: Vec<Obj>,
    pub(crate) substitute_from: Vec<SubstituteFrom>,
    /// Where the Kustomization is declared.
    pub(crate) location: Option<Location>,
    /// `spec.namePrefix` and `spec.nameSuffix`, to find a renamed object in its file.
    pub(crate) affixes: (Option<String>, Option<String>),
    /// Where the steady-state render found each `substituteFrom` source that no
    /// Kustomization applies (`ConfigMap/name` → `file x (...)`, `bootstrap: ...`,
    /// `fluxsim.toml`): what exists before Flux runs.
    pub(crate) outside_sources: BTreeMap<String, String>,
    /// How long a failed attempt waits for the next: `spec.retryInterval`, else
    /// `spec.interval` (kustomize-controller requeues a failure after `GetRetryInterval`).
    pub(crate) retry_interval: Option<String>,
}

impl Node {
    /// A node with no objects and no edges (for tests and synthetic graphs).
    #[cfg(test)]
    pub(crate) fn bare(name: &str) -> Node {
        Node {
            id: nn(name),
            parent: None,
            depends_on: Vec::new(),
            wait: false,
            health_checked: false,
            health_checks: Vec::new(),
            prune: false,
            path: format!("./{name}"),
            state: NodeState::Rendered,
            objects: Vec::new(),
            substitute_from: Vec::new(),
            location: None,
            affixes: (None, None),
            outside_sources: BTreeMap::new(),
            retry_interval: None,
        }
    }

    /// The `HelmRelease`s this Kustomization applies, with their charts.
    pub(crate) fn helm_releases(&self) -> impl Iterator<Item = (&Obj, &HelmChart)> {
        self.objects
            .iter()
            .filter_map(|o| o.helm.as_ref().map(|h| (o, h)))
    }

    /// Whether this Kustomization's Ready waits for the health of `obj` (`wait: true`, or
    /// `healthChecks` naming it: `checkHealth` in kustomize-controller).
    pub(crate) fn awaits(&self, obj: &Obj) -> bool {
        self.wait
            || self
                .health_checks
                .iter()
                .any(|(k, n)| *k == obj.id.kind && *n == obj.id.name)
    }

    /// The CRDs (group, kind) this Kustomization applies.
    pub(crate) fn crds(&self) -> impl Iterator<Item = &(String, String)> {
        self.objects.iter().filter_map(|o| o.defines.as_ref())
    }
}

/// `flux-system/<name>`, for tests.
#[cfg(test)]
pub(crate) fn nn(name: &str) -> NamespacedName {
    NamespacedName {
        namespace: "flux-system".into(),
        name: name.into(),
    }
}

/// Reads files of the source once each, to find lines in them: each file's documents are
/// read once, for every object looked up in it (a file declaring thousands of
/// Kustomizations is looked up once per Kustomization).
pub(crate) struct Files {
    fs: SourceFs,
    cache: HashMap<String, Option<ObjectLines>>,
}

impl Files {
    pub(crate) fn new(fs: &SourceFs) -> Files {
        Files {
            fs: fs.clone(),
            cache: HashMap::new(),
        }
    }

    fn lines(&mut self, file: &str) -> Option<&ObjectLines> {
        let fs = &self.fs;
        self.cache
            .entry(file.to_string())
            .or_insert_with(|| {
                fs.read_to_string(&fs.root().join(file))
                    .ok()
                    .map(|t| ObjectLines::of(&t))
            })
            .as_ref()
    }

    /// The place of the object of `kind` named one of `names` in `file`: its `name:` line
    /// when found, else the whole file.
    pub(crate) fn object(&mut self, file: &str, kind: &str, names: &[&str]) -> Location {
        let line = self
            .lines(file)
            .and_then(|l| names.iter().find_map(|n| l.line(kind, n)));
        Location {
            file: file.to_string(),
            line,
            column: None,
        }
    }
}

/// The `namespace/name` a Flux Kustomization object gets (namespace defaults to `default`).
fn kustomization_id(obj: &serde_json::Value) -> Option<NamespacedName> {
    Some(NamespacedName {
        namespace: str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string(),
        name: str_at(obj, &["metadata", "name"])?.to_string(),
    })
}

/// The names an object may carry in its file: as rendered, and without the Kustomization's
/// `namePrefix`/`nameSuffix`.
fn file_names<'a>(n: &Node, name: &'a str) -> Vec<&'a str> {
    let mut names = vec![name];
    let mut bare = name;
    if let Some(p) = &n.affixes.0 {
        bare = bare.strip_prefix(p.as_str()).unwrap_or(bare);
    }
    if let Some(s) = &n.affixes.1 {
        bare = bare.strip_suffix(s.as_str()).unwrap_or(bare);
    }
    if bare != name {
        names.push(bare);
    }
    names
}

/// The place of an object of Kustomization `n`.
pub(crate) fn object_location(files: &mut Files, n: &Node, obj: &Obj) -> Option<Location> {
    let file = obj.file.as_deref()?;
    Some(files.object(file, &obj.id.kind, &file_names(n, &obj.id.name)))
}

/// Builds the nodes of one cluster, sorted by id. `root_file` is the file that declares
/// the cluster's root Kustomization, when discovery found one.
pub(crate) fn nodes_of(
    cluster: &ClusterRender,
    root_file: Option<&str>,
    files: &mut Files,
) -> Vec<Node> {
    let by_id: BTreeMap<&NamespacedName, &KustomizationRender> = cluster
        .kustomizations
        .iter()
        .map(|k| (&k.kustomization.id, k))
        .collect();
    let oci_charts = oci_chart_names(cluster);
    // For each Kustomization, the Flux Kustomizations its artifact holds, by id (the first
    // of an id wins): looked up once per child, not searched for in the parent's objects
    // (a root applying thousands of Kustomizations made that quadratic).
    let held_by: BTreeMap<&NamespacedName, BTreeMap<NamespacedName, &ArtifactObject>> = cluster
        .kustomizations
        .iter()
        .map(|k| {
            let mut held = BTreeMap::new();
            for o in k.artifact.iter().flat_map(|a| &a.objects) {
                if is_kustomization(&o.object) {
                    if let Some(id) = kustomization_id(&o.object) {
                        held.entry(id).or_insert(o);
                    }
                }
            }
            (&k.kustomization.id, held)
        })
        .collect();
    let mut nodes = Vec::new();
    for k in &cluster.kustomizations {
        let ks = &k.kustomization;
        // A Kustomization is an object of its parent's artifact (the root: of its own).
        let declaring = k
            .parent
            .as_ref()
            .and_then(|p| by_id.get(p).copied())
            .unwrap_or(k);
        let declared = held_by
            .get(&declaring.kustomization.id)
            .and_then(|held| held.get(&ks.id))
            .copied();
        let health_checks = declared
            .map(|o| health_checks_of(&o.object))
            .unwrap_or_default();
        let file = declared
            .and_then(|o| o.origin.as_ref())
            .and_then(|o| o.path.clone())
            .or_else(|| root_file.filter(|_| k.parent.is_none()).map(str::to_string));
        let location = file.map(|f| files.object(&f, "Kustomization", &[ks.id.name.as_str()]));
        let state = match &k.status {
            Status::Rendered => NodeState::Rendered,
            Status::Failed(e) => NodeState::Failed(e.clone()),
            Status::Suspended => NodeState::Suspended,
            Status::External(_) | Status::NeedsNetwork(_) => NodeState::External,
            Status::Blocked(_) => NodeState::NotRendered,
        };
        let objects = k
            .artifact
            .iter()
            .flat_map(|a| &a.objects)
            .map(|o| Obj {
                id: o.id.clone(),
                file: o
                    .origin
                    .as_ref()
                    .and_then(|x| x.path.clone().or_else(|| x.configured_in.clone())),
                defines: crd_defines(&o.id, &o.object),
                cluster_scoped: str_at(&o.object, &["spec", "scope"]) == Some("Cluster"),
                helm: crate::helm::is_helm_release(&o.object)
                    .then(|| helm_chart(&o.id, &o.object, &oci_charts)),
                makes: made_secret(&o.id, &o.object),
            })
            .collect();
        let retry_interval = declared.and_then(|o| retry_interval_of(&o.object));
        let outside_sources = outside_sources_of(k);
        nodes.push(Node {
            id: ks.id.clone(),
            parent: k.parent.clone(),
            depends_on: ks.depends_on.clone(),
            wait: ks.wait,
            health_checked: ks.wait || !health_checks.is_empty(),
            health_checks,
            prune: ks.prune,
            path: ks.path.clone(),
            state,
            objects,
            substitute_from: ks
                .post_build
                .as_ref()
                .map(|p| p.substitute_from.clone())
                .unwrap_or_default(),
            location,
            affixes: (ks.name_prefix.clone(), ks.name_suffix.clone()),
            outside_sources,
            retry_interval,
        });
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    nodes
}

/// `spec.healthChecks` of a Flux Kustomization object, as (kind, name).
fn health_checks_of(obj: &serde_json::Value) -> Vec<(String, String)> {
    obj.get("spec")
        .and_then(|s| s.get("healthChecks"))
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|h| {
                    Some((
                        str_at(h, &["kind"])?.to_string(),
                        str_at(h, &["name"])?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `spec.retryInterval`, else `spec.interval`, of a Flux Kustomization object.
fn retry_interval_of(obj: &serde_json::Value) -> Option<String> {
    let spec = obj.get("spec")?;
    str_at(spec, &["retryInterval"])
        .or_else(|| str_at(spec, &["interval"]))
        .map(str::to_string)
}

/// The substituteFrom sources the steady state found outside every Kustomization: a file
/// nothing applies (presumed applied before Flux), the root's folder applied at bootstrap,
/// fluxsim.toml's `[[bootstrap.objects]]`; by `Kind/name`, with where.
fn outside_sources_of(k: &KustomizationRender) -> BTreeMap<String, String> {
    k.vars
        .values()
        .filter(|v| {
            v.from.starts_with("file ")
                || v.from.starts_with("bootstrap")
                || v.from.starts_with(crate::config::CONFIG_FILE)
        })
        .map(|v| (v.source.clone(), v.from.clone()))
        .collect()
}

/// For each `OCIRepository` the cluster renders, by (namespace, name), the last path segment
/// of its `spec.url`: the chart's name when a `HelmRelease` installs it through `chartRef`.
fn oci_chart_names(cluster: &ClusterRender) -> BTreeMap<(String, String), String> {
    cluster
        .kustomizations
        .iter()
        .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
        .filter(|o| o.id.group == "source.toolkit.fluxcd.io" && o.id.kind == "OCIRepository")
        .filter_map(|o| {
            let url = str_at(&o.object, &["spec", "url"])?;
            let tail = url.trim_end_matches('/').rsplit('/').next()?;
            Some((
                (o.id.namespace.clone(), o.id.name.clone()),
                tail.to_string(),
            ))
        })
        .collect()
}

/// The chart of a `HelmRelease` (see [`HelmChart`]); `""` when it names none.
fn helm_chart(
    id: &ObjectId,
    obj: &serde_json::Value,
    oci_charts: &BTreeMap<(String, String), String>,
) -> HelmChart {
    let chart = if let Some(c) = str_at(obj, &["spec", "chart", "spec", "chart"]) {
        c.to_string()
    } else if let Some(name) = str_at(obj, &["spec", "chartRef", "name"]) {
        let ns = str_at(obj, &["spec", "chartRef", "namespace"]).unwrap_or(&id.namespace);
        let kind = str_at(obj, &["spec", "chartRef", "kind"]).unwrap_or_default();
        match oci_charts.get(&(ns.to_string(), name.to_string())) {
            Some(tail) if kind == "OCIRepository" => tail.clone(),
            _ => name.to_string(),
        }
    } else {
        String::new()
    };
    let creates = obj
        .pointer("/spec/install/createNamespace")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    HelmChart {
        chart,
        install_crds: str_at(obj, &["spec", "install", "crds"])
            .unwrap_or("Create")
            .to_string(),
        creates_namespace: creates.then(|| {
            str_at(obj, &["spec", "targetNamespace"])
                .filter(|t| !t.is_empty())
                .unwrap_or(&id.namespace)
                .to_string()
        }),
    }
}

/// The Secret a controller makes at run time from `obj`, in `obj`'s namespace: an
/// ExternalSecret's `spec.target.name`, default its own name (external-secrets.io, the
/// `ExternalSecret` API); a SealedSecret's (bitnami.com: the unsealed Secret takes the
/// SealedSecret's name); a 1Password `OnePasswordItem`'s (onepassword.com: a Secret of its
/// name); a Vault Secrets Operator `VaultStaticSecret`/`VaultDynamicSecret`/`VaultPKISecret`'s
/// `spec.destination.name` (secrets.hashicorp.com).
pub(crate) fn made_secret(id: &ObjectId, obj: &serde_json::Value) -> Option<String> {
    let named = |path: &[&str]| {
        str_at(obj, path)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    match (id.group.as_str(), id.kind.as_str()) {
        ("external-secrets.io", "ExternalSecret") => {
            named(&["spec", "target", "name"]).or_else(|| Some(id.name.clone()))
        }
        ("bitnami.com", "SealedSecret") => {
            named(&["spec", "template", "metadata", "name"]).or_else(|| Some(id.name.clone()))
        }
        ("onepassword.com", "OnePasswordItem") => Some(id.name.clone()),
        (
            "secrets.hashicorp.com",
            "VaultStaticSecret" | "VaultDynamicSecret" | "VaultPKISecret",
        ) => named(&["spec", "destination", "name"]),
        _ => None,
    }
}

/// For a CustomResourceDefinition, the (group, kind) it defines.
fn crd_defines(id: &ObjectId, obj: &serde_json::Value) -> Option<(String, String)> {
    if !id.is_crd() {
        return None;
    }
    Some((
        str_at(obj, &["spec", "group"])?.to_string(),
        str_at(obj, &["spec", "names", "kind"])?.to_string(),
    ))
}

/// The edges of the graph, read once: who runs before whom; and the objects of the graph
/// indexed by what other Kustomizations look them up by, so that each check is a lookup
/// per Kustomization and not a scan of every other one (which made `graph` quadratic).
pub(crate) struct Order<'a> {
    pub(crate) nodes: BTreeMap<&'a NamespacedName, &'a Node>,
    /// For each node, the nodes that have applied everything before it applies (its parent
    /// and its dependencies, transitively).
    pub(crate) before: BTreeMap<&'a NamespacedName, BTreeSet<&'a NamespacedName>>,
    /// For each node, the nodes that are Ready before it applies: the targets of a
    /// `dependsOn` edge on any path from it.
    pub(crate) ready_before: BTreeMap<&'a NamespacedName, BTreeSet<&'a NamespacedName>>,
    /// For each node, the nodes that have it in their `before` set.
    after: BTreeMap<&'a NamespacedName, BTreeSet<&'a NamespacedName>>,
    /// The (group, kind) of every cluster-scoped CRD any node applies.
    pub(crate) cluster_scoped: BTreeSet<(&'a str, &'a str)>,
    /// Objects of the core group by (kind, namespace, name), with the nodes that apply them,
    /// in node order, once each.
    /// Keyed by [`core_key`].
    core: BTreeMap<String, Vec<&'a Node>>,
    /// Namespace objects by name (whatever namespace field they carry), likewise.
    namespaces: BTreeMap<&'a str, Vec<&'a Node>>,
    /// Secrets made at run time, by [`core_key`] (kind `Secret`), with the nodes that apply
    /// what makes them.
    made: BTreeMap<String, Vec<&'a Node>>,
    /// Namespaces a HelmRelease's `install.createNamespace` makes, with the nodes that apply
    /// the HelmRelease.
    release_namespaces: BTreeMap<&'a str, Vec<&'a Node>>,
}

impl<'a> Order<'a> {
    pub(crate) fn new(nodes: &'a [Node]) -> Order<'a> {
        let map: BTreeMap<&NamespacedName, &Node> = nodes.iter().map(|n| (&n.id, n)).collect();
        let mut before = BTreeMap::new();
        let mut ready_before = BTreeMap::new();
        let mut after: BTreeMap<&NamespacedName, BTreeSet<&NamespacedName>> = BTreeMap::new();
        for n in nodes {
            // Walk parent and dependsOn edges; a target reached through a dependsOn edge is
            // Ready, a target reached only through a parent edge is applied.
            let mut seen: BTreeSet<&NamespacedName> = BTreeSet::new();
            let mut ready: BTreeSet<&NamespacedName> = BTreeSet::new();
            let mut stack: Vec<&Node> = vec![n];
            let mut visited: BTreeSet<&NamespacedName> = BTreeSet::new();
            while let Some(at) = stack.pop() {
                if !visited.insert(&at.id) {
                    continue;
                }
                for d in &at.depends_on {
                    if let Some(dn) = map.get(d) {
                        seen.insert(&dn.id);
                        ready.insert(&dn.id);
                        stack.push(dn);
                    }
                }
                if let Some(p) = at.parent.as_ref().and_then(|p| map.get(p)) {
                    seen.insert(&p.id);
                    stack.push(p);
                }
            }
            for s in &seen {
                after.entry(*s).or_default().insert(&n.id);
            }
            before.insert(&n.id, seen);
            ready_before.insert(&n.id, ready);
        }
        let cluster_scoped = nodes
            .iter()
            .flat_map(|m| &m.objects)
            .filter(|o| o.cluster_scoped)
            .filter_map(|o| o.defines.as_ref())
            .map(|(g, k)| (g.as_str(), k.as_str()))
            .collect();
        let mut core: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
        let mut namespaces: BTreeMap<&str, Vec<&Node>> = BTreeMap::new();
        let once = |holders: &mut Vec<&'a Node>, n: &'a Node| {
            if holders.last().is_none_or(|m| !std::ptr::eq(*m, n)) {
                holders.push(n);
            }
        };
        let mut made: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
        let mut release_namespaces: BTreeMap<&str, Vec<&Node>> = BTreeMap::new();
        for n in nodes {
            for o in &n.objects {
                if let Some(secret) = &o.makes {
                    once(
                        made.entry(core_key("Secret", &o.id.namespace, secret))
                            .or_default(),
                        n,
                    );
                }
                if let Some(ns) = o.helm.as_ref().and_then(|h| h.creates_namespace.as_deref()) {
                    once(release_namespaces.entry(ns).or_default(), n);
                }
            }
            for o in n.objects.iter().filter(|o| o.id.group.is_empty()) {
                once(
                    core.entry(core_key(&o.id.kind, &o.id.namespace, &o.id.name))
                        .or_default(),
                    n,
                );
                if o.id.kind == "Namespace" {
                    once(namespaces.entry(&o.id.name).or_default(), n);
                }
            }
        }
        Order {
            nodes: map,
            before,
            ready_before,
            after,
            cluster_scoped,
            core,
            namespaces,
            made,
            release_namespaces,
        }
    }

    /// Whether `a` has applied all its objects before `b` applies.
    pub(crate) fn runs_before(&self, a: &NamespacedName, b: &NamespacedName) -> bool {
        self.before.get(b).is_some_and(|s| s.contains(a))
    }

    /// Whether `a` is Ready before `b` applies.
    pub(crate) fn ready_before(&self, a: &NamespacedName, b: &NamespacedName) -> bool {
        self.ready_before.get(b).is_some_and(|s| s.contains(a))
    }

    /// Everything that can only run after `id`: what depends on it or is applied by it,
    /// transitively (and is not `id` itself), sorted.
    pub(crate) fn after(&self, id: &NamespacedName) -> Vec<&'a NamespacedName> {
        self.after
            .get(id)
            .map(|s| s.iter().copied().filter(|k| *k != id).collect())
            .unwrap_or_default()
    }

    /// The nodes that apply a Namespace named `name`, in node order.
    pub(crate) fn namespace_holders(&self, name: &str) -> &[&'a Node] {
        self.namespaces.get(name).map_or(&[], Vec::as_slice)
    }

    /// The nodes that apply what makes the Secret `namespace/name` at run time.
    pub(crate) fn secret_makers(&self, namespace: &str, name: &str) -> &[&'a Node] {
        self.made
            .get(&core_key("Secret", namespace, name))
            .map_or(&[], Vec::as_slice)
    }

    /// The nodes that apply a HelmRelease whose install creates Namespace `name`.
    pub(crate) fn release_namespace_holders(&self, name: &str) -> &[&'a Node] {
        self.release_namespaces.get(name).map_or(&[], Vec::as_slice)
    }

    /// The nodes that apply the core-group object `kind` `namespace/name`, in node order.
    pub(crate) fn core_holders(&self, kind: &str, namespace: &str, name: &str) -> &[&'a Node] {
        self.core
            .get(&core_key(kind, namespace, name))
            .map_or(&[], Vec::as_slice)
    }
}

/// The key of a core-group object in [`Order`]'s index (no name part holds a NUL).
fn core_key(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}\0{namespace}\0{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    // kustomize-controller: a child exists once its parent applied it; a dependsOn target
    // must be Ready (checkDependencies in kustomization_controller.go).
    #[test]
    fn parent_edges_order_applies_and_depends_on_edges_order_readiness() {
        let mut root = Node::bare("root");
        root.parent = None;
        let mut infra = Node::bare("infra");
        infra.parent = Some(nn("root"));
        let mut apps = Node::bare("apps");
        apps.parent = Some(nn("root"));
        apps.depends_on = vec![nn("infra")];
        let nodes = vec![apps, infra, root];
        let o = Order::new(&nodes);
        assert!(o.runs_before(&nn("root"), &nn("apps")));
        assert!(!o.ready_before(&nn("root"), &nn("apps")));
        assert!(o.ready_before(&nn("infra"), &nn("apps")));
        assert!(!o.runs_before(&nn("apps"), &nn("infra")));
        assert_eq!(o.after(&nn("infra")), vec![&nn("apps")]);
    }
}
