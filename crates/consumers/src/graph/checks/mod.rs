//! The graph's findings: what keeps a cluster's Kustomizations from converging on a cold
//! cluster, and how two clusters' graphs differ. One file per family of rules.

mod clusters;
mod crds;
mod cycles;
mod namespaces;
mod readiness;
mod substitute_from;

use super::nodes::{Files, Node, Order};
use crate::config::Config;
use crate::finding::{Finding, Location, Rule};
use crate::flux::NamespacedName;

pub(crate) use clusters::compare_clusters;

/// Everything one cluster's graph is checked with.
pub(crate) struct ClusterCheck<'a> {
    pub(crate) cluster: &'a str,
    pub(crate) nodes: &'a [Node],
    pub(crate) order: &'a Order<'a>,
    pub(crate) config: &'a Config,
}

impl ClusterCheck<'_> {
    fn finding(&self, rule: &Rule, n: &Node, message: String) -> Finding {
        let mut f = Finding::new(rule, message)
            .in_cluster(self.cluster)
            .in_kustomization(n.id.to_string());
        if let Some(l) = &n.location {
            f = f.at(l.clone());
        }
        f
    }

    /// `, nor does what waits for it: `a`, `b``, or nothing when nothing waits for `id`.
    fn blocked_list(&self, id: &NamespacedName) -> String {
        blocked_tail(self.order.after(id))
    }

    /// Runs every per-cluster check.
    pub(crate) fn run(&self, files: &mut Files) -> Vec<Finding> {
        let mut out = Vec::new();
        self.cycles(&mut out);
        self.missing_dependencies(&mut out);
        self.custom_resources(files, &mut out);
        self.namespaces(files, &mut out);
        self.substitute_from(&mut out);
        self.wait_on_unwaited(&mut out);
        self.never_ready(&mut out);
        out
    }
}

fn with_location(mut f: Finding, at: Option<Location>) -> Finding {
    f.location = at;
    f
}

/// `; what waits for it never does either: `a`, `b``, or "" when the list is empty.
fn blocked_tail<'a>(ids: impl IntoIterator<Item = &'a NamespacedName>) -> String {
    let list = names(ids);
    if list == "nothing" {
        String::new()
    } else {
        format!("; what waits for it never does either: {list}")
    }
}

/// `` `a`, `b` `` or "nothing".
fn names<'a>(ids: impl IntoIterator<Item = &'a NamespacedName>) -> String {
    let mut v: Vec<&str> = ids.into_iter().map(|i| i.name.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        "nothing".to_string()
    } else {
        v.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
