//! FS210: graphs that differ between clusters, by the one rule `compare` uses too
//! (`ksgraph::graph_differences`).

use std::collections::{BTreeMap, BTreeSet};

use crate::finding::Finding;
use crate::flux::NamespacedName;
use crate::graph::nodes::Node;
use crate::graph::rules;
use crate::model::graph::{ClusterFolder, GraphNode};

/// FS210: every pair of clusters (each with its folder), compared Kustomization by
/// Kustomization (by id).
pub(crate) fn compare_clusters(clusters: &[(ClusterFolder<'_>, &[Node])]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (af, an)) in clusters.iter().enumerate() {
        for (bf, bn) in &clusters[i + 1..] {
            let am: BTreeMap<&NamespacedName, &Node> = an.iter().map(|n| (&n.id, n)).collect();
            let bm: BTreeMap<&NamespacedName, &Node> = bn.iter().map(|n| (&n.id, n)).collect();
            let ids: BTreeSet<&NamespacedName> = am.keys().chain(bm.keys()).copied().collect();
            for id in ids {
                let f = match (am.get(id), bm.get(id)) {
                    (Some(x), None) => only_in(x, af.name, bf.name),
                    (None, Some(y)) => only_in(y, bf.name, af.name),
                    (Some(x), Some(y)) => match differences(x, *af, y, *bf) {
                        Some(f) => f,
                        None => continue,
                    },
                    (None, None) => continue,
                };
                out.push(f);
            }
        }
    }
    out
}

/// A Kustomization one cluster has and another lacks: a note, since clusters of one
/// repository often run different sets by design (an update cluster, a lab); what the
/// lacking cluster then misses is FS202's, an error, when something there depends on it.
fn only_in(n: &Node, here: &str, there: &str) -> Finding {
    let mut f = Finding::new(
        &rules::CLUSTER_GRAPHS_DIFFER,
        format!(
            "`{}` is defined in cluster `{here}` but not in `{there}`",
            n.id.name
        ),
    )
    .in_cluster(here)
    .in_kustomization(n.id.to_string())
    .about("cluster", there)
    .about("field", "missing")
    .with_severity(crate::finding::Severity::Info);
    f.location.clone_from(&n.location);
    f
}

/// The Kustomization's place in its cluster's graph, as `compare` sees it.
fn place(n: &Node) -> GraphNode {
    let mut depends_on: Vec<String> = n.depends_on.iter().map(ToString::to_string).collect();
    depends_on.sort();
    GraphNode {
        path: n.path.clone(),
        parent: n.parent.as_ref().map(ToString::to_string),
        depends_on,
        wait: n.wait,
        prune: n.prune,
        substitute_from: n
            .substitute_from
            .iter()
            .map(|s| format!("{}/{}{}", s.kind, s.name, if s.optional { "?" } else { "" }))
            .collect(),
        root: n.parent.is_none(),
    }
}

fn differences(
    x: &Node,
    af: ClusterFolder<'_>,
    y: &Node,
    bf: ClusterFolder<'_>,
) -> Option<Finding> {
    let (a, other) = (af.name, bf.name);
    let differences = crate::model::graph::graph_differences(&[(af, &place(x)), (bf, &place(y))]);
    let diffs: Vec<String> = differences
        .iter()
        .map(crate::model::graph::GraphDifference::between_two)
        .collect();
    if diffs.is_empty() {
        return None;
    }
    let there = y
        .location
        .as_ref()
        .map_or(String::new(), |l| format!(" ({other}: {l})"));
    let mut finding = Finding::new(
        &rules::CLUSTER_GRAPHS_DIFFER,
        format!(
            "`{}` differs between clusters `{a}` and `{other}`: {}{there}",
            x.id.name,
            diffs.join("; ")
        ),
    )
    .in_cluster(a)
    .in_kustomization(x.id.to_string())
    .about("cluster", other)
    .about_all("field", differences.iter().map(|d| d.field));
    finding.location.clone_from(&x.location);
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::nodes::nn;

    fn folder(name: &str) -> ClusterFolder<'_> {
        ClusterFolder { name, home: "" }
    }

    fn dep(name: &str, deps: &[&str]) -> Node {
        let mut n = Node::bare(name);
        n.depends_on = deps.iter().map(|d| nn(d)).collect();
        n
    }

    #[test]
    fn clusters_differ_in_the_parent_that_applies_a_kustomization() {
        let mut a = dep("apps", &[]);
        a.parent = Some(nn("root"));
        let mut b = dep("apps", &[]);
        b.parent = Some(nn("infra"));
        let f = compare_clusters(&[(folder("dev"), &[a]), (folder("prod"), &[b])]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].related("field"), ["appliedBy"]);
        assert_eq!(f[0].related("cluster"), ["prod"]);
        assert!(
            f[0].message.contains("applied by `root` vs `infra`"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn clusters_differ_in_wait_and_dependencies() {
        let dev = vec![dep("apps", &["infra"]), dep("infra", &[])];
        let mut apps = dep("apps", &[]);
        apps.wait = true;
        let prod = vec![apps];
        let f = compare_clusters(&[(folder("dev"), &dev), (folder("prod"), &prod)]);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(f[0].related("field"), ["dependsOn", "wait"]);
        assert_eq!(f[1].related("field"), ["missing"]);
        assert!(
            f[0].message.contains("dependsOn [infra] vs []"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("wait false vs true"),
            "{}",
            f[0].message
        );
        assert!(f[1]
            .message
            .contains("`infra` is defined in cluster `dev` but not in `prod`"));
    }
}
