//! FS213: namespaces not created before the objects in them (FS216 when the bootstrap
//! presumably creates them).

use super::{names, with_location, ClusterCheck};
use crate::finding::{Finding, Severity};
use crate::flux::NamespacedName;
use crate::graph::nodes::{object_location, Files, Node};
use crate::graph::rules;
use crate::graph::simulate::{namespace_from_bootstrap, namespace_providers, needed_namespaces};

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
                if self.release_namespace_awaited(n, ns) {
                    continue;
                }
                let at = n
                    .objects
                    .iter()
                    .find(|o| &o.id == obj_id)
                    .and_then(|o| object_location(files, n, o))
                    .or_else(|| n.location.clone());
                let f = self
                    .namespace_finding(n, ns, &obj_id.to_string(), &providers)
                    .about("namespace", ns.to_string())
                    .about("object", obj_id.to_string());
                out.push(with_location(f, at));
            }
        }
    }

    /// The finding for namespace `ns` of `obj` in `n`, which none of `providers` (the
    /// Kustomizations that create it) creates before `n`.
    fn namespace_finding(&self, n: &Node, ns: &str, obj: &str, providers: &[&Node]) -> Finding {
        if let Some(why) = namespace_from_bootstrap(ns, self.boot) {
            return self.finding(
                &rules::PRESUMED_FROM_BOOTSTRAP,
                n,
                format!(
                    "`{obj}` in `{}` lives in namespace `{ns}`, which no Kustomization creates \
                     before it; presumed created by the cluster's bootstrap before Flux runs: \
                     {why}",
                    n.id.name
                ),
            );
        }
        if let Some(f) = self.release_namespace(n, ns, obj) {
            return f;
        }
        let unordered: Vec<&NamespacedName> = providers
            .iter()
            .filter(|p| !self.order.runs_before(&n.id, &p.id))
            .map(|p| &p.id)
            .collect();
        let blocked = self.blocked_list(&n.id);
        if providers.is_empty() {
            return self.finding(
                &rules::NAMESPACE_NOT_CREATED_BEFORE,
                n,
                format!(
                    "`{obj}` in `{}` lives in namespace `{ns}`, which no Kustomization of \
                     cluster `{}` creates (nor a HelmRelease's `install.createNamespace`, nor \
                     the bootstrap as far as the repository shows): its apply fails and `{}` \
                     never becomes Ready{blocked}",
                    n.id.name, self.cluster, n.id.name
                ),
            );
        }
        if unordered.is_empty() {
            return self.finding(
                &rules::NAMESPACE_NOT_CREATED_BEFORE,
                n,
                format!(
                    "`{obj}` in `{}` lives in namespace `{ns}`, which {} creates, but that \
                     can only run after `{}`: its apply fails forever{blocked}",
                    n.id.name,
                    names(providers.iter().map(|p| &p.id)),
                    n.id.name
                ),
            );
        }
        self.finding(
            &rules::NAMESPACE_NOT_CREATED_BEFORE,
            n,
            format!(
                "`{obj}` in `{}` lives in namespace `{ns}`, which {} creates, not ordered \
                 before it: on a cold cluster `{}` fails until that one has run; {}",
                n.id.name,
                names(unordered),
                n.id.name,
                self.retries(n)
            ),
        )
        .with_severity(Severity::Info)
    }

    /// The finding when a HelmRelease whose install creates namespace `ns`
    /// (`install.createNamespace`) is applied by a Kustomization that is not `n` and does not
    /// wait on `n`: the namespace appears once the release installs, and a retry of `n`
    /// succeeds.
    fn release_namespace(&self, n: &Node, ns: &str, obj: &str) -> Option<Finding> {
        let releases: Vec<&NamespacedName> = self
            .order
            .release_namespace_holders(ns)
            .iter()
            .filter(|m| m.id != n.id && !self.order.runs_before(&n.id, &m.id))
            .map(|m| &m.id)
            .collect();
        if !releases.is_empty() {
            return Some(
                self.finding(
                    &rules::NAMESPACE_NOT_CREATED_BEFORE,
                    n,
                    format!(
                        "`{obj}` in `{}` lives in namespace `{ns}`, which the \
                         `install.createNamespace` of a HelmRelease in {} creates once it \
                         installs, not awaited before it: on a cold cluster `{}` fails until \
                         then; {}",
                        n.id.name,
                        names(releases),
                        n.id.name,
                        self.retries(n)
                    ),
                )
                .with_severity(Severity::Info),
            );
        }
        None
    }

    /// Whether a HelmRelease whose install creates `ns` is applied by a Kustomization that
    /// waits for it and is Ready before `n`: the namespace is there.
    fn release_namespace_awaited(&self, n: &Node, ns: &str) -> bool {
        self.order.release_namespace_holders(ns).iter().any(|m| {
            m.id != n.id
                && self.order.ready_before(&m.id, &n.id)
                && m.helm_releases()
                    .any(|(o, h)| h.creates_namespace.as_deref() == Some(ns) && m.awaits(o))
        })
    }
}
