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

/// Flux's API groups end with this (`*.toolkit.fluxcd.io` for the toolkit controllers,
/// `*.extensions.fluxcd.io` for extensions such as source-watcher's `ArtifactGenerator`).
/// The domain is Flux's, so nobody else defines CRDs in it.
pub const FLUX_GROUP_SUFFIX: &str = ".fluxcd.io";

/// The Flux groups that exist wherever a root Kustomization reconciles at all: its own kind
/// and its source's.
pub const FLUX_CORE_GROUPS: &[&str] = &["kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"];

/// Flux groups whose controllers `flux bootstrap` installs only when asked with
/// `--components-extra` (the default `--components` are source-, kustomize-, helm- and
/// notification-controller: fluxcd.io/flux/installation/configuration/optional-components/;
/// source-watcher needs `--components-extra=source-watcher`, Flux 2.7.2+:
/// github.com/fluxcd/source-watcher README), with the value to pass.
pub const FLUX_EXTRA_COMPONENTS: &[(&str, &str)] = &[
    (
        "image.toolkit.fluxcd.io",
        "image-reflector-controller,image-automation-controller",
    ),
    ("source.extensions.fluxcd.io", "source-watcher"),
];

/// The `--components-extra` value that installs `group`'s controller, if it is an extra.
#[must_use]
pub fn flux_extra_component(group: &str) -> Option<&'static str> {
    FLUX_EXTRA_COMPONENTS
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, c)| *c)
}

/// Which of Flux's kinds a cluster has before any Kustomization runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FluxApis {
    /// The render carries none of Flux's CRDs (`gotk-components.yaml` is the placeholder a
    /// repository has before `flux bootstrap` writes it, or lies outside the root's path, or
    /// Flux was installed by a helmfile, a script, a chart): a cluster whose root reconciles
    /// runs Flux, and its components are whatever installed it, which the repository does
    /// not say, so every `*.fluxcd.io` kind is presumed to exist.
    Presumed,
    /// The render carries Flux's CRDs (`gotk-components.yaml`, which `flux bootstrap` applies
    /// before the root reconciles): exactly these (group, kind) exist.
    Rendered(Vec<(String, String)>),
    /// The Flux Operator bootstrapped the cluster: the root applies a `FluxInstance`, which
    /// the operator (installed first, with its CRDs, by `flux-operator install` or its Helm
    /// chart) reconciles into Flux's controllers. The operator's own kinds
    /// ([`OPERATOR_GROUP`]: `FluxInstance`, `ResourceSet`, `ResourceSetInputProvider`) exist,
    /// and every `*.fluxcd.io` kind is presumed (the instance's `spec.components` come from
    /// an OCI distribution fluxsim does not read).
    Operator,
}

/// The Flux Operator's API group.
pub const OPERATOR_GROUP: &str = "fluxcd.controlplane.io";

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

/// Whether `group` is one of Flux's (`kustomize.toolkit.fluxcd.io`,
/// `source.extensions.fluxcd.io` ...).
#[must_use]
pub fn is_flux(group: &str) -> bool {
    group.ends_with(FLUX_GROUP_SUFFIX)
}

/// Whether an object of this kind can be applied on a cluster where Flux runs and no CRD was
/// applied yet (see [`FluxApis`] for Flux's own kinds). A kind fluxsim does not list in a
/// built-in group (a newer Kubernetes kind) is given the benefit of the doubt: nobody can
/// define a CRD in a `*.k8s.io` group without Kubernetes' API approval.
#[must_use]
pub fn exists_on_fresh_cluster(group: &str, kind: &str, flux: &FluxApis) -> bool {
    is_builtin(group, kind)
        || is_builtin_group(group)
        || FLUX_CORE_GROUPS.contains(&group)
        || match flux {
            FluxApis::Presumed => is_flux(group),
            FluxApis::Operator => is_flux(group) || group == OPERATOR_GROUP,
            FluxApis::Rendered(kinds) => kinds.iter().any(|(g, k)| g == group && k == kind),
        }
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
            &FluxApis::Presumed
        ));
        assert!(exists_on_fresh_cluster(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            &FluxApis::Presumed
        ));
        assert!(!exists_on_fresh_cluster(
            "net.fleet.example.io",
            "VIPPool",
            &FluxApis::Presumed
        ));
        assert!(!exists_on_fresh_cluster(
            "kubevirt.io",
            "VirtualMachine",
            &FluxApis::Presumed
        ));
    }

    // flux-operator docs (FluxInstance, "Flux Operator installation"): the operator and its
    // CRDs are installed before a FluxInstance, which installs Flux's controllers.
    #[test]
    fn a_cluster_the_flux_operator_bootstraps_has_its_kinds_and_flux_s() {
        for (g, k) in [
            ("fluxcd.controlplane.io", "ResourceSet"),
            ("fluxcd.controlplane.io", "ResourceSetInputProvider"),
            ("helm.toolkit.fluxcd.io", "HelmRelease"),
        ] {
            assert!(
                exists_on_fresh_cluster(g, k, &FluxApis::Operator),
                "{g}/{k}"
            );
            assert_eq!(
                exists_on_fresh_cluster(g, k, &FluxApis::Presumed),
                g != OPERATOR_GROUP,
                "{g}/{k}"
            );
        }
    }

    // flux2 optional-components docs: extras are installed only with --components-extra;
    // a render that carries gotk-components.yaml says which were.
    #[test]
    fn flux_extensions_are_presumed_after_bootstrap_unless_the_render_lists_flux_crds() {
        assert!(exists_on_fresh_cluster(
            "source.extensions.fluxcd.io",
            "ArtifactGenerator",
            &FluxApis::Presumed
        ));
        let rendered = FluxApis::Rendered(vec![(
            "helm.toolkit.fluxcd.io".to_string(),
            "HelmRelease".to_string(),
        )]);
        assert!(exists_on_fresh_cluster(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            &rendered
        ));
        assert!(!exists_on_fresh_cluster(
            "source.extensions.fluxcd.io",
            "ArtifactGenerator",
            &rendered
        ));
        assert_eq!(
            flux_extra_component("source.extensions.fluxcd.io"),
            Some("source-watcher")
        );
    }
}
