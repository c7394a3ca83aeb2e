//! FS208 and FS209: substituteFrom sources not applied before the Kustomization reads them.

use super::{names, ClusterCheck};
use crate::finding::Finding;
use crate::graph::nodes::Node;
use crate::graph::rules;
use crate::graph::simulate::var_source_providers;

impl ClusterCheck<'_> {
    /// FS208/FS209: substituteFrom sources not applied before.
    pub(super) fn substitute_from(&self, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for s in &n.substitute_from {
                let producers: Vec<&Node> = var_source_providers(n, s, self.order);
                if producers
                    .iter()
                    .any(|p| p.id != n.id && self.order.runs_before(&p.id, &n.id))
                {
                    continue;
                }
                let source = format!("{}/{}", s.kind, s.name);
                let by = names(producers.iter().map(|p| &p.id));
                let never = producers
                    .iter()
                    .all(|p| p.id == n.id || self.order.runs_before(&n.id, &p.id));
                let when = if producers.is_empty() {
                    format!(
                        "no Kustomization of cluster `{}` that fluxsim could render applies it",
                        self.cluster
                    )
                } else if never {
                    format!("it is applied by {by}, which can only run after (vars are read before the apply)")
                } else {
                    format!("it is applied by {by}, which is not ordered before it")
                };
                let f = if s.optional {
                    if producers.is_empty() {
                        // Optional and made by nobody: the author expects it to be absent.
                        continue;
                    }
                    self.finding(
                        &rules::OPTIONAL_SUBSTITUTE_FROM_NOT_BEFORE,
                        n,
                        format!(
                            "`{}` substitutes from optional `{source}`, but {when}: on a cold \
                             cluster Flux silently renders `{}` without those vars{}",
                            n.id.name,
                            n.id.name,
                            if never {
                                " every time"
                            } else {
                                " until it appears"
                            }
                        ),
                    )
                } else {
                    self.finding(
                        &rules::SUBSTITUTE_FROM_NOT_BEFORE,
                        n,
                        format!(
                            "`{}` substitutes from `{source}`, but {when}: on a cold cluster \
                             its build fails {}{}",
                            n.id.name,
                            if never || producers.is_empty() {
                                "forever"
                            } else {
                                "until it appears"
                            },
                            self.blocked_list(&n.id)
                        ),
                    )
                };
                out.push(f.about("source", source.clone()));
            }
        }
    }
}
