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

/// `spec.path` with the cluster's name as a path component replaced by `{cluster}`: each
/// root, and each overlay, points at its own cluster's folder (`./clusters/dev/apps`), which
/// is not a difference.
fn normalized_path(path: &str, cluster: &str) -> String {
    let trimmed = path.trim_start_matches("./").trim_end_matches('/');
    trimmed
        .split('/')
        .map(|c| if c == cluster { "{cluster}" } else { c })
        .collect::<Vec<_>>()
        .join("/")
}

/// What differs in one Kustomization's place between clusters, each given as (cluster
/// name, node). A root's path is its own cluster's folder by design and is not compared;
/// nor is a path that differs only in the cluster's name.
#[must_use]
pub fn graph_differences(nodes: &[(&str, &GraphNode)]) -> Vec<GraphDifference> {
    let mut out = Vec::new();
    let mut field = |name: &'static str,
                     key: &dyn Fn(&str, &GraphNode) -> String,
                     show: &dyn Fn(&GraphNode) -> String| {
        let Some((c0, n0)) = nodes.first() else {
            return;
        };
        if nodes.iter().any(|(c, n)| key(c, n) != key(c0, n0)) {
            out.push(GraphDifference {
                field: name,
                values: nodes.iter().map(|(_, n)| show(n)).collect(),
            });
        }
    };
    let all_roots = nodes.iter().all(|(_, n)| n.root);
    if !all_roots {
        field("path", &|c, n| normalized_path(&n.path, c), &|n| {
            format!("`{}`", n.path)
        });
    }
    field("appliedBy", &|_, n| format!("{:?}", n.parent), &|n| {
        n.parent.as_ref().map_or_else(
            || "the root".to_string(),
            |p| format!("`{}`", p.rsplit('/').next().unwrap_or(p)),
        )
    });
    field("dependsOn", &|_, n| n.depends_on.join(","), &|n| {
        let names: Vec<&str> = n
            .depends_on
            .iter()
            .map(|d| d.rsplit('/').next().unwrap_or(d))
            .collect();
        format!("[{}]", names.join(", "))
    });
    field("wait", &|_, n| n.wait.to_string(), &|n| n.wait.to_string());
    field("prune", &|_, n| n.prune.to_string(), &|n| {
        n.prune.to_string()
    });
    field(
        "substituteFrom",
        &|_, n| n.substitute_from.join(","),
        &|n| format!("[{}]", n.substitute_from.join(", ")),
    );
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

    fn fields(nodes: &[(&str, &GraphNode)]) -> Vec<String> {
        graph_differences(nodes)
            .iter()
            .map(GraphDifference::between_two)
            .collect()
    }

    #[test]
    fn paths_that_differ_only_in_the_cluster_name_are_the_same_place() {
        let dev = node("./clusters/dev/apps", Some("flux-system"), &[]);
        let prod = node("./clusters/prod/apps/", Some("flux-system"), &[]);
        assert!(fields(&[("dev", &dev), ("prod", &prod)]).is_empty());
        let other = node("./apps/b", Some("flux-system"), &[]);
        assert_eq!(
            fields(&[("dev", &dev), ("prod", &other)]),
            ["path `./clusters/dev/apps` vs `./apps/b`"]
        );
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
            graph_differences(&[("dev", &a), ("prod", &c)])
                .iter()
                .map(|d| d.field)
                .collect::<Vec<_>>(),
            ["wait", "substituteFrom"]
        );
    }
}
