//! Which field identifies an item of a list: the merge keys of Kubernetes' strategic merge
//! patch, so that `containers` are matched by `name` and a reorder is not churn.
//!
//! Source: the `x-kubernetes-patch-merge-key` (and `x-kubernetes-list-map-keys`) of every
//! list with `x-kubernetes-patch-strategy: merge` in the OpenAPI schema kustomize embeds
//! (kyaml v0.21.1, Kubernetes v1.21.2), the one fluxsim's native builder merges patches with
//! (`src/kustomize/native/openapi/openapi-v1.21.2.json`); plus the lists added to the pod
//! spec since (`resourceClaims` v1.26, `schedulingGates` v1.27, `k8s.io/api/core/v1/types.go`
//! `patchMergeKey:"name"`). Lists the schema merges without a key (`finalizers`,
//! `podCIDRs`) and lists it replaces (`tolerations`, `args`, `command`) have no entry: their
//! items are matched by value ([`crate::semantic`]).
//!
//! The schema places a key on a field of a definition (`PodSpec.containers`); a diff of a
//! rendered object does not resolve definitions, so an entry applies to a field of that name
//! whose items all carry the first key, and the first entry that fits wins: `ports` items
//! with `containerPort` are a container's, with `port` a Service's. Custom resources (a
//! HelmRelease's values, a CRD's lists) have no schema here: a list whose items all have a
//! distinct `name` is matched by it, as fluxsim's `--diff-style fields` did.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::path::key_value;

/// One list field and the fields that identify its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeKey {
    /// The list's field name.
    pub field: &'static str,
    /// Its merge keys, the first one required.
    pub keys: &'static [&'static str],
    /// The definitions that declare it (for the reader of the table).
    pub of: &'static str,
}

const fn mk(field: &'static str, keys: &'static [&'static str], of: &'static str) -> MergeKey {
    MergeKey { field, keys, of }
}

/// The strategic-merge keys of the Kubernetes API (see the module documentation).
pub const MERGE_KEYS: &[MergeKey] = &[
    mk("containers", &["name"], "PodSpec"),
    mk("initContainers", &["name"], "PodSpec"),
    mk("ephemeralContainers", &["name"], "PodSpec"),
    mk("imagePullSecrets", &["name"], "PodSpec"),
    mk("volumes", &["name"], "PodSpec (merge,retainKeys)"),
    mk("hostAliases", &["ip"], "PodSpec"),
    mk(
        "topologySpreadConstraints",
        &["topologyKey", "whenUnsatisfiable"],
        "PodSpec",
    ),
    mk("resourceClaims", &["name"], "PodSpec (v1.26+)"),
    mk("schedulingGates", &["name"], "PodSpec (v1.27+)"),
    mk("env", &["name"], "Container, EphemeralContainer"),
    mk(
        "ports",
        &["containerPort", "protocol"],
        "Container, EphemeralContainer",
    ),
    mk("ports", &["port", "protocol"], "ServiceSpec"),
    mk(
        "volumeMounts",
        &["mountPath"],
        "Container, EphemeralContainer",
    ),
    mk(
        "volumeDevices",
        &["devicePath"],
        "Container, EphemeralContainer",
    ),
    mk("secrets", &["name"], "ServiceAccount"),
    mk("ownerReferences", &["uid"], "ObjectMeta"),
    mk(
        "webhooks",
        &["name"],
        "MutatingWebhookConfiguration, ValidatingWebhookConfiguration",
    ),
    mk("drivers", &["name"], "CSINodeSpec"),
    mk("conditions", &["type"], "status of most kinds"),
    mk("addresses", &["type"], "NodeStatus"),
    mk("podIPs", &["ip"], "PodStatus"),
    mk("configMapGenerator", &["name"], "kustomize's Kustomization"),
    mk("secretGenerator", &["name"], "kustomize's Kustomization"),
];

/// The key of a port's protocol, which the API server defaults to `TCP` (`ContainerPort`,
/// `ServicePort` in `k8s.io/api/core/v1/types.go`): a port written without it is the same
/// port as one written with `TCP`.
fn key_of(item: &Value, key: &str) -> Option<String> {
    match item.get(key) {
        Some(v) => Some(key_value(v)),
        None if key == "protocol" => Some("TCP".to_string()),
        None => None,
    }
}

/// The identity of `item` under `keys`: (key, value) of the keys it has, `None` when it lacks
/// the first or is not a mapping.
#[must_use]
pub fn identity(item: &Value, keys: &[&str]) -> Option<Vec<(String, String)>> {
    if !item.is_object() {
        return None;
    }
    let (first, rest) = keys.split_first()?;
    let mut out = vec![((*first).to_string(), key_value(item.get(*first)?))];
    for k in rest {
        if let Some(v) = key_of(item, k) {
            out.push(((*k).to_string(), v));
        }
    }
    Some(out)
}

/// Whether every item of every list has an identity under `keys`, each distinct in its list.
fn identifies(keys: &[&str], lists: &[&[Value]]) -> bool {
    lists.iter().all(|l| {
        let mut seen = BTreeSet::new();
        l.iter()
            .all(|i| identity(i, keys).is_some_and(|id| seen.insert(id)))
    })
}

/// The merge keys of the list under `field` whose items are `lists` (one list, or base and
/// head): the table's first entry that identifies every item, else `name` when every item
/// has a distinct one, else none.
#[must_use]
pub fn merge_keys(field: Option<&str>, lists: &[&[Value]]) -> Option<&'static [&'static str]> {
    if lists.iter().all(|l| l.is_empty()) {
        return None;
    }
    if let Some(field) = field {
        for entry in MERGE_KEYS.iter().filter(|e| e.field == field) {
            if identifies(entry.keys, lists) {
                return Some(entry.keys);
            }
        }
    }
    identifies(&["name"], lists).then_some(&["name"][..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_ports_and_service_ports_have_their_own_keys() {
        let c = [
            json!({"containerPort": 80}),
            json!({"containerPort": 53, "protocol": "UDP"}),
        ];
        assert_eq!(
            merge_keys(Some("ports"), &[&c]),
            Some(&["containerPort", "protocol"][..])
        );
        let s = [json!({"port": 80, "targetPort": 8080})];
        assert_eq!(
            merge_keys(Some("ports"), &[&s]),
            Some(&["port", "protocol"][..])
        );
        assert_eq!(
            identity(&c[0], &["containerPort", "protocol"]),
            Some(vec![
                ("containerPort".into(), "80".into()),
                ("protocol".into(), "TCP".into())
            ])
        );
    }

    #[test]
    fn volume_mounts_are_matched_by_mount_path_as_the_schema_says() {
        let m = [
            json!({"name": "data", "mountPath": "/a"}),
            json!({"name": "data", "mountPath": "/b"}),
        ];
        assert_eq!(
            merge_keys(Some("volumeMounts"), &[&m]),
            Some(&["mountPath"][..])
        );
    }

    #[test]
    fn unknown_lists_with_distinct_names_are_matched_by_name_and_others_by_value() {
        let named = [json!({"name": "a"}), json!({"name": "b"})];
        assert_eq!(merge_keys(Some("things"), &[&named]), Some(&["name"][..]));
        let dup = [json!({"name": "a"}), json!({"name": "a"})];
        assert_eq!(merge_keys(Some("things"), &[&dup]), None);
        let tolerations = [json!({"key": "a", "operator": "Exists"})];
        assert_eq!(merge_keys(Some("tolerations"), &[&tolerations]), None);
        assert_eq!(merge_keys(Some("args"), &[&[json!("--x")]]), None);
    }
}
