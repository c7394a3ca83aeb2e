//! The graph check's rules: stable ids FS2xx, never reused for another check.

use crate::finding::{Rule, Severity};

/// `dependsOn` edges that form a cycle: none of the Kustomizations on it ever reconciles.
pub const DEPENDENCY_CYCLE: Rule = Rule {
    id: "FS201",
    name: "dependency-cycle",
    severity: Severity::Error,
    summary: "Kustomizations depend on each other in a cycle, so none of them ever becomes Ready.",
    help:
        "Remove one `dependsOn` edge of the cycle; `dependsOn` must form a directed acyclic graph.",
};

/// `dependsOn` naming a Kustomization that the cluster never defines.
pub const MISSING_DEPENDENCY: Rule = Rule {
    id: "FS202",
    name: "missing-dependency",
    severity: Severity::Error,
    summary: "A `dependsOn` entry names a Kustomization this cluster never defines, so the \
              Kustomization and everything that waits for it are never reconciled.",
    help: "Define the Kustomization in this cluster (is it missing from the cluster's overlay?) \
           or remove the `dependsOn` entry.",
};

/// A custom resource whose CRD no Kustomization of the cluster applies.
pub const CRD_MISSING: Rule = Rule {
    id: "FS203",
    name: "crd-missing",
    severity: Severity::Error,
    summary: "A custom resource's CRD is applied by no Kustomization of this cluster, and is \
              neither a built-in kind, a Flux kind nor declared in fluxsim.toml.",
    help: "Apply the CRD from this Kustomization or from one it depends on; if a controller \
           registers it at run time, declare it under `[[runtime_crds]]` in fluxsim.toml; if a \
           Helm chart installs it, apply the HelmRelease in a Kustomization with `wait: true` \
           that this one depends on; if the cluster's bootstrap installs it before Flux, list \
           its group under `[bootstrap] crd_groups` in fluxsim.toml.",
};

/// A custom resource whose CRD is applied by a Kustomization that runs after it.
pub const CRD_APPLIED_LATER: Rule = Rule {
    id: "FS204",
    name: "crd-applied-later",
    severity: Severity::Error,
    summary: "A custom resource's CRD is applied by a Kustomization that can only run after \
              this one (a dependent or a child): the apply fails and the graph deadlocks on a \
              cold cluster.",
    help: "Move the CRD into this Kustomization or into one it depends on, or reverse the \
           `dependsOn` edge.",
};

/// A custom resource whose CRD is applied by an unrelated Kustomization (a race that
/// converges after retries).
pub const CRD_UNORDERED: Rule = Rule {
    id: "FS205",
    name: "crd-unordered",
    severity: Severity::Info,
    summary: "A custom resource's CRD is applied by a Kustomization that is not ordered before \
              this one: on a cold cluster the apply fails until the other one has run, then a \
              retry succeeds (a slower cold start, not a deadlock).",
    help: "Add a `dependsOn` on the Kustomization that applies the CRD to save the retries.",
};

/// A custom resource of a CRD that a controller creates at run time, deadlocked.
pub const RUNTIME_CRD_DEADLOCK: Rule = Rule {
    id: "FS206",
    name: "runtime-crd-deadlock",
    severity: Severity::Error,
    summary: "A custom resource's CRD is created at run time by a controller once a trigger \
              object is reconciled, but the trigger is applied by the same Kustomization, by one \
              that runs after it, or by none: the CRD never appears.",
    help: "Apply the trigger object in an earlier Kustomization with `wait: true` and make this \
           one depend on it.",
};

/// A custom resource of a runtime CRD whose trigger nobody waits for (converges after
/// retries).
pub const RUNTIME_CRD_NOT_AWAITED: Rule = Rule {
    id: "FS207",
    name: "runtime-crd-not-awaited",
    severity: Severity::Info,
    summary: "A custom resource's CRD is created at run time once a trigger object is ready, \
              but no `dependsOn` edge waits for a `wait: true` Kustomization that applies the \
              trigger: the apply fails until the controller has caught up, then a retry \
              succeeds.",
    help: "Set `wait: true` on the Kustomization that applies the trigger and depend on it.",
};

/// A `substituteFrom` source produced by a Kustomization that is not ordered before.
pub const SUBSTITUTE_FROM_NOT_BEFORE: Rule = Rule {
    id: "FS208",
    name: "substitute-from-not-before",
    severity: Severity::Error,
    summary: "A `substituteFrom` ConfigMap or Secret is applied (or made) by no Kustomization \
              ordered before this one: on a cold cluster the build fails forever when nothing \
              makes it or only a dependent does (an error), or until it appears when an \
              unordered Kustomization makes it (info: it converges after retries).",
    help: "Apply the ConfigMap/Secret in a Kustomization this one depends on (or in its parent).",
};

/// An optional `substituteFrom` source produced by a Kustomization not ordered before.
pub const OPTIONAL_SUBSTITUTE_FROM_NOT_BEFORE: Rule = Rule {
    id: "FS209",
    name: "optional-substitute-from-not-before",
    severity: Severity::Warning,
    summary: "An `optional: true` `substituteFrom` source is applied by a Kustomization not \
              ordered before this one: on a cold cluster Flux silently renders without its vars.",
    help: "Apply the ConfigMap/Secret in a Kustomization this one depends on; `optional` hides \
           the ordering bug instead of failing.",
};

/// Two clusters' graphs differ.
pub const CLUSTER_GRAPHS_DIFFER: Rule = Rule {
    id: "FS210",
    name: "cluster-graphs-differ",
    severity: Severity::Warning,
    summary: "The same Kustomization differs between clusters in the parent that applies it, \
              its `dependsOn`, `wait`, `prune` or `path`, or exists in only one of them.",
    help: "Make the clusters' graphs the same (share the Flux Kustomizations in a base) unless \
           the difference is intended.",
};

/// `wait: true` depending on `wait: false`: a note, since it presumes the dependent needs
/// the dependency's objects healthy, not only applied.
pub const WAIT_ON_UNWAITED: Rule = Rule {
    id: "FS211",
    name: "wait-on-unwaited-dependency",
    severity: Severity::Info,
    summary: "A `wait: true` Kustomization depends on a `wait: false` one, whose Ready only \
              means applied, not healthy (a note: it matters only if the dependent needs those \
              objects healthy, not only there).",
    help: "Set `wait: true` (or `healthChecks`) on the dependency, or depend on the \
           Kustomization that waits for what you need.",
};

/// A Kustomization that fails to render or is suspended, and what waits for it.
pub const NEVER_READY: Rule = Rule {
    id: "FS212",
    name: "never-ready",
    severity: Severity::Error,
    summary: "A Kustomization fails to render or is suspended, so it and everything that waits \
              for it never become Ready on a cold cluster.",
    help: "Fix the render error (`fluxsim render` shows it), or resume the Kustomization.",
};

/// A namespaced object whose Namespace is not created before it.
pub const NAMESPACE_NOT_CREATED_BEFORE: Rule = Rule {
    id: "FS213",
    name: "namespace-not-created-before",
    severity: Severity::Error,
    summary: "An object's Namespace is created by no Kustomization that runs before (or with) \
              its own, so its apply fails with `namespaces not found` on a cold cluster \
              (info when what creates it is merely unordered, or a HelmRelease's \
              `install.createNamespace`: it converges after retries).",
    help: "Create the Namespace in the same Kustomization (Flux applies Namespaces first) or in \
           one this Kustomization depends on.",
};

/// A custom resource whose CRD is presumed to come from a Helm chart installed before it.
pub const CRD_PRESUMED_FROM_HELM: Rule = Rule {
    id: "FS214",
    name: "crd-presumed-from-helm",
    severity: Severity::Info,
    summary: "A custom resource's CRD is in no rendered manifest and no fluxsim.toml entry, but \
              a Kustomization that waits for its HelmReleases and is Ready before this one \
              applies HelmReleases: the CRD is presumed to come from one of their charts \
              (fluxsim cannot see a chart's CRDs offline).",
    help: "Declare the chart's CRD groups under `[[helm_crds]]` in fluxsim.toml so fluxsim \
           checks the order exactly instead of presuming.",
};

/// A custom resource whose CRD can only come from a Helm chart nothing waits for (converges
/// after retries, if a chart carries it).
pub const CRD_PRESUMED_FROM_HELM_NOT_AWAITED: Rule = Rule {
    id: "FS215",
    name: "crd-presumed-from-helm-not-awaited",
    severity: Severity::Info,
    summary: "A custom resource's CRD is in no rendered manifest and no fluxsim.toml entry; the \
              HelmReleases that might install it are applied by Kustomizations this one does \
              not wait for (unordered, its parent, or a `dependsOn` target without `wait`): on \
              a cold cluster its apply fails until helm-controller has installed the chart.",
    help: "Depend on the Kustomization that applies the chart's HelmRelease and give that one \
           `wait: true`; declare the chart under `[[helm_crds]]` in fluxsim.toml.",
};

/// What the cluster's bootstrap presumably puts there before Flux runs, relied upon.
pub const PRESUMED_FROM_BOOTSTRAP: Rule = Rule {
    id: "FS216",
    name: "presumed-from-bootstrap",
    severity: Severity::Info,
    summary: "A CRD, Namespace or `substituteFrom` source that no Kustomization provides in \
              time is presumed to exist from the start, because the repository's bootstrap \
              (a helmfile, a `bootstrap/` folder, a Taskfile or script, a Talos inline \
              manifest, a file no Kustomization applies) provides it.",
    help: "Nothing to do if the bootstrap runs as the repository says; to make it exact, \
           declare it in fluxsim.toml (`[bootstrap] crd_groups`, `[[bootstrap.objects]]`).",
};

/// Every rule of the graph check, in id order (for SARIF's rule table).
pub const RULES: &[Rule] = &[
    DEPENDENCY_CYCLE,
    MISSING_DEPENDENCY,
    CRD_MISSING,
    CRD_APPLIED_LATER,
    CRD_UNORDERED,
    RUNTIME_CRD_DEADLOCK,
    RUNTIME_CRD_NOT_AWAITED,
    SUBSTITUTE_FROM_NOT_BEFORE,
    OPTIONAL_SUBSTITUTE_FROM_NOT_BEFORE,
    CLUSTER_GRAPHS_DIFFER,
    WAIT_ON_UNWAITED,
    NEVER_READY,
    NAMESPACE_NOT_CREATED_BEFORE,
    CRD_PRESUMED_FROM_HELM,
    CRD_PRESUMED_FROM_HELM_NOT_AWAITED,
    PRESUMED_FROM_BOOTSTRAP,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_sorted_and_fs2xx() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
        assert!(ids.iter().all(|id| id.starts_with("FS2") && id.len() == 5));
    }
}
