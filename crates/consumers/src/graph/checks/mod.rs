//! The graph's findings: what keeps a cluster's Kustomizations from converging on a cold
//! cluster, and how two clusters' graphs differ. One file per family of rules.

mod clusters;
mod crds;
mod cycles;
mod namespaces;
mod readiness;
mod substitute_from;

use super::bootstrap::BootstrapEvidence;
use super::nodes::{Files, Node, Order};
use super::simulate::Simulation;
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
    /// What the repository shows of the cluster's bootstrap.
    pub(crate) boot: &'a BootstrapEvidence,
    /// The cold start, simulated (for how many retries a race costs).
    pub(crate) sim: &'a Simulation,
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

    /// How many failed attempts a Kustomization that waits on a race makes before it
    /// converges, as the simulation places it: the waves between the one its parent and
    /// `dependsOn` allow and the one it becomes Ready in (at least one), each a
    /// `retryInterval` (else `interval`) apart (kustomize-controller requeues a failed
    /// reconcile after `GetRetryInterval`).
    fn retries(&self, n: &Node) -> String {
        let wave = |id: &NamespacedName| self.sim.wave_of.get(id).copied();
        let natural = n
            .parent
            .iter()
            .chain(&n.depends_on)
            .filter_map(wave)
            .max()
            .map_or(0, |w| w + 1);
        let every = n
            .retry_interval
            .as_deref()
            .map_or_else(|| "its retry interval".to_string(), |i| format!("`{i}`"));
        match wave(&n.id) {
            Some(w) => {
                let extra = w.saturating_sub(natural).max(1);
                format!(
                    "it converges after about {extra} failed attempt{}, {every} apart",
                    if extra == 1 { "" } else { "s" }
                )
            }
            None => "it does not converge while what it waits for does not".to_string(),
        }
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

/// How many names a message lists before `and N more`.
const NAMES_SHOWN: usize = 8;

/// `` `a`, `b` `` (at most [`NAMES_SHOWN`], then `and N more`) or "nothing".
fn names<'a>(ids: impl IntoIterator<Item = &'a NamespacedName>) -> String {
    let mut v: Vec<&str> = ids.into_iter().map(|i| i.name.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        return "nothing".to_string();
    }
    let mut shown: Vec<String> = v
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("`{n}`"))
        .collect();
    if v.len() > NAMES_SHOWN {
        shown.push(format!("and {} more", v.len() - NAMES_SHOWN));
    }
    shown.join(", ")
}
