//! The cluster's kinds: which are namespaced and their resources' plurals, from the CRDs of
//! the render and the built-in kinds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{list, str_of};

/// What a cluster knows of its kinds: each custom kind's plural, scope and served versions,
/// from its CRDs; built-in kinds by the API server's rules.
#[derive(Debug, Default, Clone)]
pub struct Kinds {
    /// `(group, kind)` → (plural, namespaced, served versions).
    custom: BTreeMap<(String, String), (String, bool, Vec<String>)>,
}

/// Built-in kinds that are cluster-scoped (k8s.io/api, the kinds without a namespace).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterTrustBundle",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "DeviceClass",
    "FlowSchema",
    "IngressClass",
    "IPAddress",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "ServiceCIDR",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
    "VolumeAttributesClass",
];

impl Kinds {
    /// The kinds of the CRDs among `objects` (other objects are skipped).
    #[must_use]
    pub fn of<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Kinds {
        let mut out = Kinds::default();
        for o in objects {
            if !crate::is_crd(o) {
                continue;
            }
            let spec = o.get("spec").unwrap_or(&Value::Null);
            let (Some(g), Some(k), Some(p)) = (
                str_of(spec, &["group"]),
                str_of(spec, &["names", "kind"]),
                str_of(spec, &["names", "plural"]),
            ) else {
                continue;
            };
            let versions = list(spec, "versions")
                .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
                .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                .collect();
            out.custom.insert(
                (g.to_string(), k.to_string()),
                (
                    p.to_string(),
                    str_of(spec, &["scope"]) != Some("Cluster"),
                    versions,
                ),
            );
        }
        out
    }

    pub(super) fn known(&self, group: &str, kind: &str) -> bool {
        self.custom
            .contains_key(&(group.to_string(), kind.to_string()))
            || !group.contains('.')
            || group.ends_with(".k8s.io")
    }

    /// The resource (plural) of a kind: its CRD's, else the API server's rule for built-ins.
    #[must_use]
    pub fn plural(&self, group: &str, kind: &str) -> String {
        if let Some((p, _, _)) = self.custom.get(&(group.to_string(), kind.to_string())) {
            return p.clone();
        }
        builtin_plural(kind)
    }

    /// Whether a kind is namespaced: its CRD's scope, else the built-in kinds' scopes.
    #[must_use]
    pub fn namespaced(&self, group: &str, kind: &str) -> bool {
        match self.custom.get(&(group.to_string(), kind.to_string())) {
            Some((_, n, _)) => *n,
            None => !CLUSTER_SCOPED.contains(&kind),
        }
    }

    pub(super) fn versions(&self, group: &str, kind: &str) -> &[String] {
        self.custom
            .get(&(group.to_string(), kind.to_string()))
            .map_or(&[], |(_, _, v)| v.as_slice())
    }
}

/// The resource (plural) of a built-in kind, by the API server's rule (lower case, `s`; a
/// consonant's `y` → `ies`; `s`, `x`, `ch`, `sh` → `es`), `Endpoints` being its own plural.
#[must_use]
pub fn builtin_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower == "endpoints" {
        return lower;
    }
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    if ["s", "x", "ch", "sh"].iter().any(|e| lower.ends_with(e)) {
        return format!("{lower}es");
    }
    format!("{lower}s")
}
