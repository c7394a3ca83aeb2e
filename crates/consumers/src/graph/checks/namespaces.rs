//! FS213: namespaces not created before the objects in them.

use super::{names, with_location, ClusterCheck};
use crate::finding::Finding;
use crate::flux::NamespacedName;
use crate::graph::nodes::{object_location, Files};
use crate::graph::rules;
use crate::graph::simulate::{namespace_providers, needed_namespaces};

impl ClusterCheck<'_> {
    /// FS213: namespaces not created before the objects in them.
    pub(super) fn namespaces(&self, files: &mut Files, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for (ns, obj_id) in needed_namespaces(n, self.order) {
                let providers = namespace_providers(ns, n, self.order);
                if providers
                    .iter()
                    .any(|p| self.order.runs_before(&p.id, &n.id))
                {
                    continue;
                }
                let at = n
                    .objects
                    .iter()
                    .find(|o| &o.id == obj_id)
                    .and_then(|o| object_location(files, n, o))
                    .or_else(|| n.location.clone());
                let unordered: Vec<&NamespacedName> = providers
                    .iter()
                    .filter(|p| !self.order.runs_before(&n.id, &p.id))
                    .map(|p| &p.id)
                    .collect();
                let blocked = self.blocked_list(&n.id);
                let (message, race) = if providers.is_empty() {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which no \
                             Kustomization of cluster `{}` creates: its apply fails and `{}` \
                             never becomes Ready{blocked}",
                            n.id.name, self.cluster, n.id.name
                        ),
                        false,
                    )
                } else if unordered.is_empty() {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which {} creates, \
                             but that can only run after `{}`: its apply fails forever{blocked}",
                            n.id.name,
                            names(providers.iter().map(|p| &p.id)),
                            n.id.name
                        ),
                        false,
                    )
                } else {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which {} creates, \
                             not ordered before it: on a cold cluster `{}` fails until that \
                             one has run",
                            n.id.name,
                            names(unordered),
                            n.id.name
                        ),
                        true,
                    )
                };
                let mut f = self
                    .finding(&rules::NAMESPACE_NOT_CREATED_BEFORE, n, message)
                    .about("namespace", ns.to_string())
                    .about("object", obj_id.to_string());
                if race {
                    f = f.with_severity(crate::finding::Severity::Warning);
                }
                out.push(with_location(f, at));
            }
        }
    }
}
