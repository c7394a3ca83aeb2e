//! Kinds that exist on a fresh cluster before any Kustomization runs: the Kubernetes API's
//! built-in kinds (by group) and Flux's own kinds (installed by `flux bootstrap`).

/// Built-in kinds of the Kubernetes API (v1.31), by API group (`""` is the core group).
/// Only kinds one can create are listed; an object of any other kind needs a CRD.
pub const BUILTIN_KINDS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "Binding",
            "ConfigMap",
            "Endpoints",
            "Event",
            "LimitRange",
            "Namespace",
            "Node",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Pod",
            "PodTemplate",
            "ReplicationController",
            "ResourceQuota",
            "Secret",
            "Service",
            "ServiceAccount",
        ],
    ),
    (
        "admissionregistration.k8s.io",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingWebhookConfiguration",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
        ],
    ),
    ("apiextensions.k8s.io", &["CustomResourceDefinition"]),
    ("apiregistration.k8s.io", &["APIService"]),
    (
        "apps",
        &[
            "ControllerRevision",
            "DaemonSet",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
        ],
    ),
    (
        "authentication.k8s.io",
        &["SelfSubjectReview", "TokenRequest", "TokenReview"],
    ),
    (
        "authorization.k8s.io",
        &[
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
        ],
    ),
    ("autoscaling", &["HorizontalPodAutoscaler", "Scale"]),
    ("batch", &["CronJob", "Job"]),
    (
        "certificates.k8s.io",
        &["CertificateSigningRequest", "ClusterTrustBundle"],
    ),
    ("coordination.k8s.io", &["Lease", "LeaseCandidate"]),
    ("discovery.k8s.io", &["EndpointSlice"]),
    ("events.k8s.io", &["Event"]),
    (
        "flowcontrol.apiserver.k8s.io",
        &["FlowSchema", "PriorityLevelConfiguration"],
    ),
    ("internal.apiserver.k8s.io", &["StorageVersion"]),
    (
        "networking.k8s.io",
        &[
            "IPAddress",
            "Ingress",
            "IngressClass",
            "NetworkPolicy",
            "ServiceCIDR",
        ],
    ),
    ("node.k8s.io", &["RuntimeClass"]),
    ("policy", &["Eviction", "PodDisruptionBudget"]),
    (
        "rbac.authorization.k8s.io",
        &["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
    ),
    (
        "resource.k8s.io",
        &[
            "DeviceClass",
            "ResourceClaim",
            "ResourceClaimTemplate",
            "ResourceSlice",
        ],
    ),
    ("scheduling.k8s.io", &["PriorityClass"]),
    (
        "storage.k8s.io",
        &[
            "CSIDriver",
            "CSINode",
            "CSIStorageCapacity",
            "StorageClass",
            "VolumeAttachment",
            "VolumeAttributesClass",
        ],
    ),
    ("storagemigration.k8s.io", &["StorageVersionMigration"]),
];

/// Namespaces on a fresh cluster: Kubernetes' own, and `flux-system` (made by
/// `flux bootstrap` before the root Kustomization).
pub const INITIAL_NAMESPACES: &[&str] = &[
    "default",
    "flux-system",
    "kube-node-lease",
    "kube-public",
    "kube-system",
];

/// Flux's API groups end with this; `flux bootstrap` applies Flux's CRDs
/// (`gotk-components.yaml`) before it creates the root Kustomization, so they exist before
/// any Kustomization runs.
pub const FLUX_GROUP_SUFFIX: &str = ".toolkit.fluxcd.io";

/// The Flux groups that exist wherever a root Kustomization reconciles at all: its own kind
/// and its source's.
pub const FLUX_CORE_GROUPS: &[&str] = &["kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"];

/// Whether the API server knows `group`/`kind` without any CRD.
#[must_use]
pub fn is_builtin(group: &str, kind: &str) -> bool {
    BUILTIN_KINDS
        .iter()
        .any(|(g, kinds)| *g == group && kinds.contains(&kind))
}

/// Whether `group` is one of Kubernetes' built-in API groups.
#[must_use]
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_KINDS.iter().any(|(g, _)| *g == group)
}

/// Whether `group` is one of Flux's (`kustomize.toolkit.fluxcd.io`, `source.toolkit.fluxcd.io` ...).
#[must_use]
pub fn is_flux(group: &str) -> bool {
    group.ends_with(FLUX_GROUP_SUFFIX)
}

/// Whether an object of this kind can be applied on a cluster where Flux runs and no CRD was
/// applied yet. Every Flux kind exists when the cluster was bootstrapped (`flux_installed`);
/// otherwise only the groups the root itself needs. A kind fluxsim does not list in a
/// built-in group (a newer Kubernetes kind) is given the benefit of the doubt: nobody can
/// define a CRD in a `*.k8s.io` group without Kubernetes' API approval.
#[must_use]
pub fn exists_on_fresh_cluster(group: &str, kind: &str, flux_installed: bool) -> bool {
    is_builtin(group, kind)
        || is_builtin_group(group)
        || FLUX_CORE_GROUPS.contains(&group)
        || (flux_installed && is_flux(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Kubernetes API reference (k8s.io/api): core/v1 has no group; apps/v1 is "apps".
    #[test]
    fn core_and_apps_kinds_are_builtin() {
        assert!(is_builtin("", "ConfigMap"));
        assert!(is_builtin("apps", "Deployment"));
        assert!(is_builtin("networking.k8s.io", "Ingress"));
        assert!(!is_builtin("", "VIPPool"));
    }

    #[test]
    fn flux_kinds_exist_after_bootstrap_and_custom_groups_do_not() {
        assert!(exists_on_fresh_cluster(
            "kustomize.toolkit.fluxcd.io",
            "Kustomization",
            true
        ));
        assert!(exists_on_fresh_cluster(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            true
        ));
        assert!(!exists_on_fresh_cluster(
            "net.fleet.example.io",
            "VIPPool",
            true
        ));
        assert!(!exists_on_fresh_cluster(
            "kubevirt.io",
            "VirtualMachine",
            true
        ));
    }

    #[test]
    fn without_bootstrap_only_the_roots_own_flux_kinds_exist() {
        assert!(exists_on_fresh_cluster(
            "source.toolkit.fluxcd.io",
            "GitRepository",
            false
        ));
        assert!(!exists_on_fresh_cluster(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            false
        ));
    }
}
