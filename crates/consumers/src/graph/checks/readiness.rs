//! FS211 and FS212: what is Ready too early (`wait: true` on `wait: false`), and what is
//! never Ready (failed renders, suspended Kustomizations).

use std::collections::BTreeSet;

use super::ClusterCheck;
use crate::finding::Finding;
use crate::graph::nodes::NodeState;
use crate::graph::rules;

impl ClusterCheck<'_> {
    /// FS211: wait: true on top of wait: false.
    pub(super) fn wait_on_unwaited(&self, out: &mut Vec<Finding>) {
        for n in self.nodes.iter().filter(|n| n.wait) {
            for d in &n.depends_on {
                let Some(dn) = self.order.nodes.get(d) else {
                    continue;
                };
                if dn.health_checked || dn.state == NodeState::Suspended {
                    continue;
                }
                out.push(
                    self.finding(
                        &rules::WAIT_ON_UNWAITED,
                        n,
                        format!(
                            "`{}` has `wait: true` and dependsOn `{}`, which has `wait: false`: \
                         `{}` is Ready as soon as its objects are applied, not when they are \
                         healthy, so `{}` may start before what it needs runs",
                            n.id.name, d.name, d.name, n.id.name
                        ),
                    )
                    .about("dependency", d.to_string()),
                );
            }
        }
    }

    /// FS212: failing renders and suspended Kustomizations.
    pub(super) fn never_ready(&self, out: &mut Vec<Finding>) {
        let explained: BTreeSet<String> = out
            .iter()
            .filter(|f| f.rule == rules::SUBSTITUTE_FROM_NOT_BEFORE.id)
            .filter_map(|f| f.kustomization.clone())
            .collect();
        for n in self.nodes {
            let why = match &n.state {
                // A build failing on a missing substituteFrom source is FS208's finding.
                NodeState::Failed(_) if explained.contains(&n.id.to_string()) => continue,
                NodeState::Failed(e) => format!("fails to render ({e})"),
                NodeState::Suspended => "is suspended".to_string(),
                _ => continue,
            };
            let mut f = self.finding(
                &rules::NEVER_READY,
                n,
                format!(
                    "`{}` {why}: it never becomes Ready{}",
                    n.id.name,
                    self.blocked_list(&n.id)
                ),
            );
            // Suspending a leaf is a choice; suspending what others wait for blocks them.
            if n.state == NodeState::Suspended && self.order.after(&n.id).is_empty() {
                f = f.with_severity(crate::finding::Severity::Warning);
            }
            out.push(f);
        }
    }
}
