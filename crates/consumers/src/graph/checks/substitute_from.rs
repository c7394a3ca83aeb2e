//! FS208 and FS209: substituteFrom sources not applied before the Kustomization reads them
//! (FS216 when the bootstrap, or a file nothing applies, presumably provides them).

use super::{names, ClusterCheck};
use crate::finding::{Finding, Severity};
use crate::graph::nodes::Node;
use crate::graph::rules;
use crate::graph::simulate::{
    core_providers, root_reads_its_own, var_source_outside, var_source_providers,
};

impl ClusterCheck<'_> {
    /// FS208/FS209: substituteFrom sources not applied before.
    pub(super) fn substitute_from(&self, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for s in &n.substitute_from {
                if let Some(f) = self.var_source(n, s) {
                    out.push(f);
                }
            }
        }
    }

    /// The finding for `n`'s substituteFrom source `s`, if any.
    fn var_source(&self, n: &Node, s: &crate::flux::SubstituteFrom) -> Option<Finding> {
        let producers: Vec<&Node> = var_source_providers(n, s, self.order);
        let exact = core_providers(&s.kind, &n.id.namespace, &s.name, self.order);
        if exact
            .iter()
            .any(|p| p.id != n.id && self.order.runs_before(&p.id, &n.id))
        {
            return None;
        }
        let source = format!("{}/{}", s.kind, s.name);
        // A Secret a controller makes from an object (an ExternalSecret ...): it
        // exists once that object is reconciled; ordered before and awaited
        // (`wait: true` or a health check naming it, Ready before) it is there.
        let makers = if s.kind == "Secret" {
            self.order.secret_makers(&n.id.namespace, &s.name)
        } else {
            &[]
        };
        let awaited = makers.iter().any(|m| {
            m.id != n.id
                && self.order.ready_before(&m.id, &n.id)
                && m.objects
                    .iter()
                    .filter(|o| o.makes.as_deref() == Some(s.name.as_str()))
                    .any(|o| m.awaits(o))
        });
        if awaited {
            return None;
        }
        if let Some(f) = self.presumed_source(n, s, &source) {
            return Some(f);
        }
        let by = names(producers.iter().map(|p| &p.id));
        let never = producers
            .iter()
            .all(|p| p.id == n.id || self.order.runs_before(&n.id, &p.id));
        let when = if producers.is_empty() {
            format!(
                "no Kustomization of cluster `{}` that fluxsim could render applies or \
                         makes it, and nothing of the bootstrap fluxsim reads does",
                self.cluster
            )
        } else if never {
            format!(
                "it is applied by {by}, which can only run after (vars are read before the apply)"
            )
        } else if producers
            .iter()
            .any(|p| p.id != n.id && self.order.runs_before(&p.id, &n.id))
        {
            format!(
                "it is made at run time by a controller from what {by} applies, which \
                         `{}` does not wait for",
                n.id.name
            )
        } else {
            format!("it is applied by {by}, which is not ordered before it")
        };
        let f = if s.optional {
            if producers.is_empty() {
                // Optional and made by nobody: the author expects it to be absent.
                return None;
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
        } else if never || producers.is_empty() {
            self.finding(
                &rules::SUBSTITUTE_FROM_NOT_BEFORE,
                n,
                format!(
                    "`{}` substitutes from `{source}`, but {when}: on a cold cluster \
                             its build fails forever{}",
                    n.id.name,
                    self.blocked_list(&n.id)
                ),
            )
        } else {
            // Made by an unordered Kustomization (or by a controller from what one
            // applies): the build fails until it exists, then a retry succeeds.
            self.finding(
                &rules::SUBSTITUTE_FROM_NOT_BEFORE,
                n,
                format!(
                    "`{}` substitutes from `{source}`, but {when}: on a cold cluster \
                             its build fails until it appears; {}",
                    n.id.name,
                    self.retries(n)
                ),
            )
            .with_severity(Severity::Info)
        };
        Some(f.about("source", source.clone()))
    }

    /// The finding when `n`'s source `s` is presumed to exist before Flux runs: the
    /// bootstrap applies it (FS216), or the root alone applies it (FS208, a warning: the
    /// bootstrap that makes the root is presumed to apply it first).
    fn presumed_source(
        &self,
        n: &Node,
        s: &crate::flux::SubstituteFrom,
        source: &str,
    ) -> Option<Finding> {
        if let Some(why) = var_source_outside(n, s, self.boot) {
            let f = self.finding(
                &rules::PRESUMED_FROM_BOOTSTRAP,
                n,
                format!(
                    "`{}` substitutes from `{source}`, which no Kustomization applies \
                             before it; presumed applied by the cluster's bootstrap before Flux \
                             runs: {why}",
                    n.id.name
                ),
            );
            return Some(f.about("source", source.to_string()));
        }
        if !s.optional && root_reads_its_own(n, s, self.order) {
            // The root is made by the bootstrap: it can only ever have converged if
            // the bootstrap applied the source first. A presumption, said as one.
            let f = self
                .finding(
                    &rules::SUBSTITUTE_FROM_NOT_BEFORE,
                    n,
                    format!(
                        "the cluster's root `{}` substitutes from `{source}`, which only \
                                 it applies: on a cold cluster its first build fails unless the \
                                 bootstrap applies `{source}` before it, and nothing of the \
                                 bootstrap fluxsim reads does (a Taskfile, helmfile hook, \
                                 `bootstrap/` folder or Talos manifest); presumed applied by \
                                 hand",
                        n.id.name
                    ),
                )
                .with_severity(Severity::Warning);
            return Some(f.about("source", source.to_string()));
        }
        None
    }
}
