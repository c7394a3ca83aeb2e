//! FS201 and FS202: dependsOn cycles, and dependsOn naming nothing.

use std::collections::BTreeSet;

use super::{blocked_tail, ClusterCheck};
use crate::finding::Finding;
use crate::flux::NamespacedName;
use crate::graph::rules;

impl ClusterCheck<'_> {
    /// FS201: strongly connected components of the `dependsOn` graph.
    pub(super) fn cycles(&self, out: &mut Vec<Finding>) {
        let deps = self.nodes.iter().map(|n| (&n.id, n.depends_on.iter()));
        for cycle in crate::model::graph::dependency_cycles(deps) {
            let path: Vec<&str> = cycle
                .iter()
                .chain(cycle.first())
                .map(|id| id.name.as_str())
                .collect();
            let members: BTreeSet<&NamespacedName> = cycle.iter().collect();
            let mut blocked: Vec<&NamespacedName> = Vec::new();
            for m in &cycle {
                for a in self.order.after(m) {
                    if !members.contains(a) && !blocked.contains(&a) {
                        blocked.push(a);
                    }
                }
            }
            blocked.sort();
            for id in &cycle {
                let Some(n) = self.order.nodes.get(id) else {
                    continue;
                };
                out.push(
                    self.finding(
                        &rules::DEPENDENCY_CYCLE,
                        n,
                        format!(
                            "`{}` is on a dependsOn cycle ({}): none of them ever becomes \
                         Ready{}",
                            id.name,
                            path.join(" -> "),
                            blocked_tail(blocked.iter().copied())
                        ),
                    )
                    .about_all("kustomization", cycle.iter().map(ToString::to_string)),
                );
            }
        }
    }

    /// FS202: dependsOn naming nothing.
    pub(super) fn missing_dependencies(&self, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for d in &n.depends_on {
                if self.order.nodes.contains_key(d) {
                    continue;
                }
                out.push(
                    self.finding(
                        &rules::MISSING_DEPENDENCY,
                        n,
                        format!(
                            "`{}` dependsOn `{d}`, which cluster `{}` never defines: `{}` never \
                         reconciles{}",
                            n.id.name,
                            self.cluster,
                            n.id.name,
                            self.blocked_list(&n.id)
                        ),
                    )
                    .about("dependency", d.to_string()),
                );
            }
        }
    }
}
