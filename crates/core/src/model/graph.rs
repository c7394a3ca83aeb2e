//! The graph of one cluster's Flux Kustomizations — who applies whom, who depends on whom —
//! as `graph` and `compare` both see it: its `dependsOn` cycles (found once, for reconcile's
//! notes and `graph`'s FS201), and what makes two clusters' graphs differ (one rule, for
//! `graph`'s FS210 and `compare`'s verdict, so the two never disagree on "same graph").
//!
//! kustomize-controller requeues a Kustomization while a dependency is not Ready
//! (`checkDependencies` in `kustomization_controller.go`); on a cycle that is forever, so
//! every member of a strongly connected component with more than one member (or a
//! self-edge) never reconciles.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;

use crate::flux::NamespacedName;

/// One Kustomization's place in one cluster's graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// `spec.path`.
    pub path: String,
    /// The Kustomization that applies it (`namespace/name`); `None` for the cluster root.
    pub parent: Option<String>,
    /// `spec.dependsOn`, as `namespace/name`, sorted.
    pub depends_on: Vec<String>,
    /// `spec.wait`.
    pub wait: bool,
    /// `spec.prune`.
    pub prune: bool,
    /// `spec.postBuild.substituteFrom`, as `Kind/name` (`?` suffix when optional), in order.
    pub substitute_from: Vec<String>,
    /// The cluster root (applied by nobody).
    pub root: bool,
}

/// One way a Kustomization's place differs between clusters: the field (`path`,
/// `appliedBy`, `dependsOn`, `wait`, `prune`, `substituteFrom`) and its value in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphDifference {
    /// The field's name, as the Kustomization spells it.
    pub field: &'static str,
    /// Its value per cluster, as shown to people.
    pub values: Vec<String>,
}

impl GraphDifference {
    /// `field a vs b` for two clusters (`path `./a` vs `./b``, `applied by the root vs
    /// `infra``).
    #[must_use]
    pub fn between_two(&self) -> String {
        let name = match self.field {
            "appliedBy" => "applied by",
            f => f,
        };
        format!("{name} {}", self.values.join(" vs "))
    }
}

/// A cluster as [`graph_differences`] reads a path in it: its name and its own folder
/// (`ClusterRender::home`, `""` for the repository root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterFolder<'a> {
    /// The cluster's name.
    pub name: &'a str,
    /// Its folder (`clusters/dev`).
    pub home: &'a str,
}

/// Whether one Kustomization's `spec.path` in several clusters is the same place: the same
/// path, or paths that differ only where each names its own cluster: its folder, as the
/// start of the path (`./clusters/dev/apps` vs `./clusters/prod/apps`), or, where the paths
/// differ, a folder named as the cluster or as its folder's last part (`./apps/dev` vs
/// `./apps/prod`). A folder that has a cluster's name where every path has it is just a
/// folder (`./apps/network/dns` in clusters `network` and `storage` is one place).
fn same_place(paths: &[(ClusterFolder<'_>, &str)]) -> bool {
    // A cluster's own folder at the start of a path, as one mark no folder is named.
    const HOME: &str = "\0home";
    let clean = |p: &str| p.trim_start_matches("./").trim_end_matches('/').to_string();
    let cleaned: Vec<String> = paths.iter().map(|(_, p)| clean(p)).collect();
    if cleaned.iter().all(|p| *p == cleaned[0]) {
        return true;
    }
    // Each path as folders, its cluster's own folder (a prefix) as the mark.
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .zip(&cleaned)
        .map(|((c, _), p)| {
            let home = c.home.trim_matches('/');
            let rest = (!home.is_empty())
                .then(|| p.strip_prefix(home))
                .flatten()
                .filter(|rest| rest.is_empty() || rest.starts_with('/'));
            match rest {
                Some(rest) => std::iter::once(HOME)
                    .chain(rest.split('/').filter(|s| !s.is_empty()))
                    .collect(),
                None => p.split('/').collect(),
            }
        })
        .collect();
    if parts.iter().any(|p| p.len() != parts[0].len()) {
        return false;
    }
    let own = |c: &ClusterFolder<'_>, folder: &str| {
        folder == c.name || (!c.home.is_empty() && c.home.rsplit('/').next() == Some(folder))
    };
    (0..parts[0].len()).all(|i| {
        parts.iter().all(|p| p[i] == parts[0][i])
            || paths
                .iter()
                .zip(&parts)
                .all(|((c, _), p)| p[i] != HOME && own(c, p[i]))
    })
}

/// What differs in one Kustomization's place between clusters, each given as (cluster,
/// node). A root's path is its own cluster's folder by design and is not compared; nor is
/// a path that differs only where each names its own cluster (see [`same_place`]).
#[must_use]
pub fn graph_differences(nodes: &[(ClusterFolder<'_>, &GraphNode)]) -> Vec<GraphDifference> {
    let mut out = Vec::new();
    let all_roots = nodes.iter().all(|(_, n)| n.root);
    let paths: Vec<(ClusterFolder<'_>, &str)> =
        nodes.iter().map(|(c, n)| (*c, n.path.as_str())).collect();
    if !all_roots && !same_place(&paths) {
        out.push(GraphDifference {
            field: "path",
            values: nodes.iter().map(|(_, n)| format!("`{}`", n.path)).collect(),
        });
    }
    let mut field = |name: &'static str,
                     key: &dyn Fn(&GraphNode) -> String,
                     show: &dyn Fn(&GraphNode) -> String| {
        let Some((_, n0)) = nodes.first() else {
            return;
        };
        if nodes.iter().any(|(_, n)| key(n) != key(n0)) {
            out.push(GraphDifference {
                field: name,
                values: nodes.iter().map(|(_, n)| show(n)).collect(),
            });
        }
    };
    field("appliedBy", &|n| format!("{:?}", n.parent), &|n| {
        n.parent.as_ref().map_or_else(
            || "the root".to_string(),
            |p| format!("`{}`", p.rsplit('/').next().unwrap_or(p)),
        )
    });
    field("dependsOn", &|n| n.depends_on.join(","), &|n| {
        let names: Vec<&str> = n
            .depends_on
            .iter()
            .map(|d| d.rsplit('/').next().unwrap_or(d))
            .collect();
        format!("[{}]", names.join(", "))
    });
    field("wait", &|n| n.wait.to_string(), &|n| n.wait.to_string());
    field("prune", &|n| n.prune.to_string(), &|n| n.prune.to_string());
    field("substituteFrom", &|n| n.substitute_from.join(","), &|n| {
        format!("[{}]", n.substitute_from.join(", "))
    });
    out
}

/// The cycles of the graph `deps` (each Kustomization to what it depends on): one per
/// strongly connected component with more than one member or a self-edge, as the shortest
/// path from the component's smallest id back to it (breadth-first, edges in id order),
/// sorted by that id. Linear in Kustomizations and edges (Tarjan's algorithm, without
/// recursion, so a long chain cannot overflow the stack).
#[must_use]
pub fn dependency_cycles<'a, I, D>(deps: I) -> Vec<Vec<NamespacedName>>
where
    I: IntoIterator<Item = (&'a NamespacedName, D)>,
    D: IntoIterator<Item = &'a NamespacedName>,
{
    // Every id in a dense index; edges to ids that are not nodes lead nowhere.
    let mut edges: BTreeMap<&NamespacedName, Vec<&NamespacedName>> = BTreeMap::new();
    for (id, ds) in deps {
        edges.entry(id).or_default().extend(ds);
    }
    let ids: Vec<&NamespacedName> = edges.keys().copied().collect();
    let index: BTreeMap<&NamespacedName, usize> =
        ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let succ: Vec<Vec<usize>> = ids
        .iter()
        .map(|id| {
            let mut s: Vec<usize> = edges[id]
                .iter()
                .filter_map(|d| index.get(d).copied())
                .collect();
            s.sort_unstable();
            s.dedup();
            s
        })
        .collect();

    let components = strongly_connected(&succ);
    let mut cycles: Vec<Vec<NamespacedName>> = components
        .into_iter()
        .filter(|c| c.len() > 1 || succ[c[0]].contains(&c[0]))
        .map(|c| {
            shortest_cycle(&succ, &c)
                .into_iter()
                .map(|i| ids[i].clone())
                .collect()
        })
        .collect();
    cycles.sort();
    cycles
}

/// Tarjan's strongly connected components of `succ`, iteratively.
fn strongly_connected(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = succ.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    for root in 0..n {
        if order[root] != UNSEEN {
            continue;
        }
        // (node, index of the next successor to visit)
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        order[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if order[w] == UNSEEN {
                    order[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comp.sort_unstable();
                out.push(comp);
            }
        }
    }
    out
}

/// The shortest way from the component's first (smallest) member back to itself, through
/// the component's edges, breadth-first with successors in index (id) order.
fn shortest_cycle(succ: &[Vec<usize>], comp: &[usize]) -> Vec<usize> {
    let members: BTreeSet<usize> = comp.iter().copied().collect();
    let start = comp[0];
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut last = start;
    'search: while let Some(u) = queue.pop_front() {
        for &d in succ[u].iter().filter(|d| members.contains(d)) {
            if d == start {
                last = u;
                break 'search;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(d) {
                e.insert(u);
                queue.push_back(d);
            }
        }
    }
    let mut path = vec![last];
    let mut at = last;
    while at != start {
        match prev.get(&at) {
            Some(&p) => {
                path.push(p);
                at = p;
            }
            None => break,
        }
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nn(name: &str) -> NamespacedName {
        NamespacedName {
            namespace: "flux-system".into(),
            name: name.into(),
        }
    }

    fn cycles(graph: &[(&str, &[&str])]) -> Vec<Vec<String>> {
        let nodes: Vec<(NamespacedName, Vec<NamespacedName>)> = graph
            .iter()
            .map(|(n, ds)| (nn(n), ds.iter().map(|d| nn(d)).collect()))
            .collect();
        dependency_cycles(nodes.iter().map(|(n, ds)| (n, ds.iter())))
            .into_iter()
            .map(|c| c.into_iter().map(|id| id.name).collect())
            .collect()
    }

    // kustomize-controller requeues a Kustomization whose dependency is not Ready
    // (checkDependencies): on a cycle that is forever.
    #[test]
    fn dependency_cycle_is_found_once_as_a_path() {
        let c = cycles(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]);
        assert_eq!(c, [["a", "b", "c"]]);
    }

    #[test]
    fn cycle_path_is_the_shortest_way_back_to_its_start() {
        let c = cycles(&[("a", &["b"]), ("b", &["c", "a"]), ("c", &["a"])]);
        assert_eq!(c, [["a", "b"]]);
    }

    #[test]
    fn self_dependency_is_a_cycle() {
        assert_eq!(cycles(&[("a", &["a"])]), [["a"]]);
    }

    #[test]
    fn separate_cycles_are_each_found_and_a_missing_target_is_no_cycle() {
        let c = cycles(&[
            ("a", &["b"]),
            ("b", &["a"]),
            ("x", &["y", "nowhere"]),
            ("y", &["x"]),
            ("z", &["x"]),
        ]);
        assert_eq!(c, [vec!["a", "b"], vec!["x", "y"]]);
    }

    #[test]
    fn a_long_chain_closing_on_itself_neither_overflows_nor_takes_quadratic_time() {
        let names: Vec<String> = (0..200_000).map(|i| format!("k{i:06}")).collect();
        let nodes: Vec<(NamespacedName, Vec<NamespacedName>)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (nn(n), vec![nn(&names[(i + 1) % names.len()])]))
            .collect();
        let c = dependency_cycles(nodes.iter().map(|(n, ds)| (n, ds.iter())));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].len(), names.len());
        assert_eq!(c[0][0].name, "k000000");
    }

    fn node(path: &str, parent: Option<&str>, deps: &[&str]) -> GraphNode {
        GraphNode {
            path: path.into(),
            parent: parent.map(|p| format!("flux-system/{p}")),
            depends_on: deps.iter().map(|d| format!("flux-system/{d}")).collect(),
            wait: false,
            prune: true,
            substitute_from: Vec::new(),
            root: parent.is_none(),
        }
    }

    /// Clusters named as given, each with its folder `clusters/<name>`.
    fn fields(nodes: &[(&str, &GraphNode)]) -> Vec<String> {
        let homes: Vec<String> = nodes.iter().map(|(c, _)| format!("clusters/{c}")).collect();
        let nodes: Vec<(ClusterFolder<'_>, &GraphNode)> = nodes
            .iter()
            .zip(&homes)
            .map(|((name, n), home)| (ClusterFolder { name, home }, *n))
            .collect();
        graph_differences(&nodes)
            .iter()
            .map(GraphDifference::between_two)
            .collect()
    }

    fn folder<'a>(name: &'a str, home: &'a str) -> ClusterFolder<'a> {
        ClusterFolder { name, home }
    }

    #[test]
    fn paths_that_differ_only_in_the_cluster_name_are_the_same_place() {
        let dev = node("./clusters/dev/apps", Some("flux-system"), &[]);
        let prod = node("./clusters/prod/apps/", Some("flux-system"), &[]);
        assert!(fields(&[("dev", &dev), ("prod", &prod)]).is_empty());
        // The overlay pattern: a folder named as each cluster, outside its folder.
        let dev = node("./apps/dev", Some("flux-system"), &[]);
        let prod = node("./apps/prod", Some("flux-system"), &[]);
        assert!(fields(&[("dev", &dev), ("prod", &prod)]).is_empty());
        let other = node("./apps/b", Some("flux-system"), &[]);
        assert_eq!(
            fields(&[("dev", &dev), ("prod", &other)]),
            ["path `./apps/dev` vs `./apps/b`"]
        );
    }

    // Issue 38: clusters `network` and `storage` both apply `./apps/network/bind-dns`; the
    // folder `network` is not cluster network's own, and equal paths never differ.
    #[test]
    fn a_folder_named_as_a_cluster_is_a_folder_when_every_path_has_it() {
        let dns = node("./apps/network/bind-dns", Some("flux-system"), &[]);
        assert!(fields(&[("network", &dns), ("storage", &dns)]).is_empty());
        // Inside each cluster's own folder too.
        let a = node(
            "./clusters/network/apps/network/dns",
            Some("flux-system"),
            &[],
        );
        let b = node(
            "./clusters/storage/apps/network/dns",
            Some("flux-system"),
            &[],
        );
        assert!(fields(&[("network", &a), ("storage", &b)]).is_empty());
        // Swapped, each names the other cluster: a difference.
        let a = node("./apps/storage/minio", Some("flux-system"), &[]);
        let b = node("./apps/network/minio", Some("flux-system"), &[]);
        assert_eq!(
            fields(&[("network", &a), ("storage", &b)]),
            ["path `./apps/storage/minio` vs `./apps/network/minio`"]
        );
    }

    #[test]
    fn a_clusters_own_folder_is_one_place_whatever_its_depth_and_names() {
        let a = node("./k8s/eu/main/apps", Some("flux-system"), &[]);
        let b = node("./k8s/us/home/apps", Some("flux-system"), &[]);
        let nodes = [
            (folder("europe", "k8s/eu/main"), &a),
            (folder("america", "k8s/us/home"), &b),
        ];
        assert!(graph_differences(&nodes).is_empty());
        // A path outside the cluster's folder is compared as it is written.
        let c = node("./k8s/eu/other/apps", Some("flux-system"), &[]);
        let nodes = [
            (folder("europe", "k8s/eu/main"), &a),
            (folder("america", "k8s/us/home"), &c),
        ];
        assert_eq!(graph_differences(&nodes).len(), 1);
        // The repository root as a cluster's folder abstracts nothing.
        let nodes = [(folder("a", ""), &a), (folder("b", ""), &b)];
        assert_eq!(graph_differences(&nodes)[0].field, "path");
    }

    #[test]
    fn cluster_roots_may_point_at_their_own_directories() {
        let a = node("./clusters/eu-1", None, &[]);
        let b = node("./fleet/us", None, &[]);
        assert!(fields(&[("dev", &a), ("prod", &b)]).is_empty());
    }

    #[test]
    fn clusters_differ_in_the_parent_that_applies_a_kustomization_and_its_dependencies() {
        let a = node("./apps", Some("root"), &["infra"]);
        let b = node("./apps", Some("infra"), &[]);
        assert_eq!(
            fields(&[("dev", &a), ("prod", &b)]),
            ["applied by `root` vs `infra`", "dependsOn [infra] vs []"]
        );
        let mut c = node("./apps", Some("root"), &["infra"]);
        c.wait = true;
        c.substitute_from = vec!["ConfigMap/cluster-vars".into()];
        assert_eq!(
            graph_differences(&[(folder("dev", ""), &a), (folder("prod", ""), &c)])
                .iter()
                .map(|d| d.field)
                .collect::<Vec<_>>(),
            ["wait", "substituteFrom"]
        );
    }
}
