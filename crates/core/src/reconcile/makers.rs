//! What makes a Secret at run time: the objects whose controllers create a Secret they name,
//! so that a `substituteFrom` source no file holds still exists on the cluster by the time
//! Flux reads it. Its values are unknown offline (placeholders), except those the object
//! itself says (a template value without a Go template).
//!
//! Each controller, and where it names the Secret it creates:
//! - external-secrets `ExternalSecret`: `spec.target.name`, default the ExternalSecret's name,
//!   in its namespace; not with `spec.target.creationPolicy` `Merge` (it only updates a Secret
//!   that exists) or `None` (`pkg/controllers/externalsecret/externalsecret_controller.go`).
//! - external-secrets `ClusterExternalSecret`: an ExternalSecret named
//!   `spec.externalSecretName` (default the ClusterExternalSecret's name) from
//!   `spec.externalSecretSpec` in each namespace of `spec.namespaces` and of its namespace
//!   selectors (`pkg/controllers/clusterexternalsecret/clusterexternalsecret_controller.go`);
//!   a selector is presumed to select the namespace (labels are not evaluated).
//! - Bitnami `SealedSecret` (`bitnami.com`): a Secret of its own name and namespace
//!   (`Unseal` in `pkg/apis/sealedsecrets/v1alpha1/sealedsecret_expansion.go` sets them);
//!   `spec.template.data` values without a template and without an encrypted value of the
//!   same key are known.
//! - 1Password `OnePasswordItem` (`onepassword.com`): a Secret of its own name and namespace
//!   (`handleOnePasswordItem` in `internal/controller/onepassworditem_controller.go`).
//! - HashiCorp Vault Secrets Operator (`secrets.hashicorp.com`: `VaultStaticSecret`,
//!   `VaultDynamicSecret`, `VaultPKISecret`, `HCPVaultSecretsApp`): `spec.destination.name` in
//!   its namespace, only with `spec.destination.create: true` (default false: the Secret must
//!   exist already; `Destination` in `api/v1beta1/common.go`).
//! - Bitwarden `BitwardenSecret` (`k8s.bitwarden.com`): `spec.secretName` in its namespace
//!   (`api/v1/bitwardensecret_types.go`).
//! - Doppler `DopplerSecret` (`secrets.doppler.com`): `spec.managedSecret.name` in
//!   `spec.managedSecret.namespace` (default its own), or the older `spec.secretName`
//!   (`api/v1alpha1/dopplersecret_types.go`).
//! - Infisical `InfisicalSecret` (`secrets.infisical.com`): each
//!   `spec.managedKubeSecretReferences[].secretName`, or `spec.managedSecretReference.secretName`,
//!   in its `secretNamespace` (default its own).
//! - cert-manager `Certificate` (`cert-manager.io`): `spec.secretName` in its namespace
//!   (`pkg/apis/certmanager/v1/types_certificate.go`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::objects::World;
use crate::flux::{str_at, ObjectId};

/// A Secret that an object of the cluster makes at run time.
pub(super) struct Maker {
    /// `ExternalSecret/ns/name (applied by ...)`.
    pub(super) by: String,
    /// The keys whose values the repository says (a template value without `{{`).
    pub(super) known: BTreeMap<String, String>,
}

/// Where an object says its Secret goes.
struct Target {
    /// `None`: any namespace a selector picks (presumed to pick the one asked for).
    namespace: Option<String>,
    name: String,
}

/// The Secrets `obj` (of id `oid`) makes, when its controller is one of those above.
fn targets(oid: &ObjectId, obj: &Value) -> Vec<Target> {
    let own = |name: &str| Target {
        namespace: Some(oid.namespace.clone()),
        name: name.to_string(),
    };
    let at = |path: &[&str]| str_at(obj, path).filter(|s| !s.is_empty());
    match (oid.group.as_str(), oid.kind.as_str()) {
        ("external-secrets.io", "ExternalSecret") => {
            if !creates(obj.pointer("/spec/target")) {
                return Vec::new();
            }
            vec![own(at(&["spec", "target", "name"]).unwrap_or(&oid.name))]
        }
        ("external-secrets.io", "ClusterExternalSecret") => {
            if !creates(obj.pointer("/spec/externalSecretSpec/target")) {
                return Vec::new();
            }
            let es = at(&["spec", "externalSecretName"]).unwrap_or(&oid.name);
            let name = at(&["spec", "externalSecretSpec", "target", "name"]).unwrap_or(es);
            let mut out: Vec<Target> = strings(obj.pointer("/spec/namespaces"))
                .into_iter()
                .map(|ns| Target {
                    namespace: Some(ns),
                    name: name.to_string(),
                })
                .collect();
            let selects = obj.pointer("/spec/namespaceSelector").is_some()
                || obj
                    .pointer("/spec/namespaceSelectors")
                    .and_then(Value::as_array)
                    .is_some_and(|s| !s.is_empty());
            if selects {
                out.push(Target {
                    namespace: None,
                    name: name.to_string(),
                });
            }
            out
        }
        ("bitnami.com", "SealedSecret") | ("onepassword.com", "OnePasswordItem") => {
            vec![own(&oid.name)]
        }
        (
            "secrets.hashicorp.com",
            "VaultStaticSecret" | "VaultDynamicSecret" | "VaultPKISecret" | "HCPVaultSecretsApp",
        ) => {
            let create = obj
                .pointer("/spec/destination/create")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match at(&["spec", "destination", "name"]) {
                Some(name) if create => vec![own(name)],
                _ => Vec::new(),
            }
        }
        ("k8s.bitwarden.com", "BitwardenSecret") | ("cert-manager.io", "Certificate") => {
            at(&["spec", "secretName"]).map(own).into_iter().collect()
        }
        ("secrets.doppler.com", "DopplerSecret") => match at(&["spec", "managedSecret", "name"]) {
            Some(name) => vec![Target {
                namespace: Some(
                    at(&["spec", "managedSecret", "namespace"])
                        .unwrap_or(&oid.namespace)
                        .to_string(),
                ),
                name: name.to_string(),
            }],
            None => at(&["spec", "secretName"]).map(own).into_iter().collect(),
        },
        ("secrets.infisical.com", "InfisicalSecret") => {
            let refs = obj
                .pointer("/spec/managedKubeSecretReferences")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .chain(obj.pointer("/spec/managedSecretReference").cloned());
            refs.filter_map(|r| {
                let name = str_at(&r, &["secretName"]).filter(|s| !s.is_empty())?;
                let ns = str_at(&r, &["secretNamespace"])
                    .filter(|s| !s.is_empty())
                    .unwrap_or(&oid.namespace);
                Some(Target {
                    namespace: Some(ns.to_string()),
                    name: name.to_string(),
                })
            })
            .collect()
        }
        _ => Vec::new(),
    }
}

/// Whether an external-secrets target creates its Secret: `creationPolicy` `Owner` (the
/// default) or `Orphan`; `Merge` and `None` do not.
fn creates(target: Option<&Value>) -> bool {
    !matches!(
        target.and_then(|t| str_at(t, &["creationPolicy"])),
        Some("Merge" | "None")
    )
}

/// A list of strings (what else it holds is left out).
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The values `obj` says of the Secret it makes: a template's data without a Go template
/// (an ExternalSecret's `spec.target.template.data`, a ClusterExternalSecret's, a
/// SealedSecret's `spec.template.data` for keys it does not encrypt).
fn known_values(oid: &ObjectId, obj: &Value) -> BTreeMap<String, String> {
    let (template, encrypted) = match oid.kind.as_str() {
        "ExternalSecret" => (obj.pointer("/spec/target/template/data"), None),
        "ClusterExternalSecret" => (
            obj.pointer("/spec/externalSecretSpec/target/template/data"),
            None,
        ),
        "SealedSecret" => (
            obj.pointer("/spec/template/data"),
            obj.pointer("/spec/encryptedData")
                .and_then(Value::as_object),
        ),
        _ => (None, None),
    };
    template
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| encrypted.is_none_or(|e| !e.contains_key(*k)))
        .filter_map(|(k, v)| {
            let v = v.as_str()?;
            (!v.contains("{{")).then(|| (k.clone(), v.replace('\n', "")))
        })
        .collect()
}

/// The object of the cluster that makes the Secret `id` at run time, if any (the first in
/// id order).
pub(super) fn made_at_run_time(id: &ObjectId, world: &World) -> Option<Maker> {
    if id.kind != "Secret" || !id.group.is_empty() {
        return None;
    }
    world.objects.iter().find_map(|(oid, p)| {
        let makes = targets(oid, &p.object).into_iter().any(|t| {
            t.name == id.name && t.namespace.as_ref().is_none_or(|ns| *ns == id.namespace)
        });
        if !makes {
            return None;
        }
        let at = if oid.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", oid.namespace)
        };
        Some(Maker {
            by: format!("{}/{at}{} ({})", oid.kind, oid.name, p.from),
            known: known_values(oid, &p.object),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::objects::Placed;
    use serde_json::json;

    fn world(objects: &[Value]) -> World {
        let mut w = World::default();
        for o in objects {
            w.objects.insert(
                ObjectId::of(o),
                Placed {
                    object: std::sync::Arc::new(o.clone()),
                    from: "applied by flux-system/apps".into(),
                },
            );
        }
        w
    }

    fn secret(ns: &str, name: &str) -> ObjectId {
        ObjectId {
            group: String::new(),
            kind: "Secret".into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    fn object(api: &str, kind: &str, ns: Option<&str>, name: &str, spec: Value) -> Value {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        let mut o = json!({"apiVersion": api, "kind": kind, "metadata": meta});
        o["spec"] = spec;
        o
    }

    fn maker(objects: &[Value], ns: &str, name: &str) -> Option<String> {
        made_at_run_time(&secret(ns, name), &world(objects)).map(|m| m.by)
    }

    // external-secrets externalsecret_controller.go: Merge updates a Secret that exists, None
    // creates nothing; Owner (the default) and Orphan create it.
    #[test]
    fn an_external_secret_makes_its_target_unless_it_only_merges() {
        let es = |policy: Option<&str>| {
            let mut target = json!({"name": "cluster-secrets"});
            if let Some(p) = policy {
                target["creationPolicy"] = json!(p);
            }
            object(
                "external-secrets.io/v1",
                "ExternalSecret",
                Some("flux-system"),
                "vars",
                json!({"target": target}),
            )
        };
        for policy in [None, Some("Owner"), Some("Orphan")] {
            assert_eq!(
                maker(&[es(policy)], "flux-system", "cluster-secrets").as_deref(),
                Some("ExternalSecret/flux-system/vars (applied by flux-system/apps)"),
                "{policy:?}"
            );
        }
        for policy in ["Merge", "None"] {
            assert_eq!(
                maker(&[es(Some(policy))], "flux-system", "cluster-secrets"),
                None
            );
        }
        // Another namespace is another Secret.
        assert_eq!(maker(&[es(None)], "default", "cluster-secrets"), None);
    }

    #[test]
    fn a_cluster_external_secret_makes_its_secret_in_the_namespaces_it_lists_or_selects() {
        let ces = |spec: Value| {
            object(
                "external-secrets.io/v1",
                "ClusterExternalSecret",
                None,
                "shared",
                spec,
            )
        };
        let listed = ces(json!({"namespaces": ["apps"], "externalSecretSpec": {}}));
        assert!(maker(std::slice::from_ref(&listed), "apps", "shared").is_some());
        assert!(maker(std::slice::from_ref(&listed), "flux-system", "shared").is_none());
        let named = ces(json!({"namespaces": ["apps"], "externalSecretName": "es",
            "externalSecretSpec": {"target": {"name": "vars"}}}));
        assert!(maker(std::slice::from_ref(&named), "apps", "vars").is_some());
        assert!(maker(std::slice::from_ref(&named), "apps", "es").is_none());
        let selected = ces(json!({"namespaceSelectors": [{"matchLabels": {"a": "b"}}],
            "externalSecretSpec": {}}));
        assert_eq!(
            maker(&[selected], "anything", "shared").as_deref(),
            Some("ClusterExternalSecret/shared (applied by flux-system/apps)")
        );
    }

    // sealed-secrets sealedsecret_expansion.go Unseal: the Secret's name and namespace are
    // the SealedSecret's; a template value is known unless the key is encrypted.
    #[test]
    fn a_sealed_secret_makes_a_secret_of_its_own_name_with_its_plain_template_values() {
        let ss = object(
            "bitnami.com/v1alpha1",
            "SealedSecret",
            Some("flux-system"),
            "cluster-secrets",
            json!({"encryptedData": {"TOKEN": "AgB..."},
                "template": {"data": {"DOMAIN": "example.net", "TOKEN": "x",
                    "URL": "https://{{ .TOKEN }}"}}}),
        );
        let m = made_at_run_time(&secret("flux-system", "cluster-secrets"), &world(&[ss])).unwrap();
        assert_eq!(
            m.known,
            BTreeMap::from([("DOMAIN".to_string(), "example.net".to_string())])
        );
    }

    #[test]
    fn the_other_secret_operators_make_the_secret_they_name() {
        let ns = Some("apps");
        let cases = [
            (
                object("onepassword.com/v1", "OnePasswordItem", ns, "db", json!({})),
                "db",
            ),
            (
                object(
                    "secrets.hashicorp.com/v1beta1",
                    "VaultStaticSecret",
                    ns,
                    "v",
                    json!({"destination": {"name": "db", "create": true}}),
                ),
                "db",
            ),
            (
                object(
                    "k8s.bitwarden.com/v1",
                    "BitwardenSecret",
                    ns,
                    "b",
                    json!({"secretName": "db"}),
                ),
                "db",
            ),
            (
                object(
                    "secrets.doppler.com/v1alpha1",
                    "DopplerSecret",
                    Some("doppler-operator-system"),
                    "d",
                    json!({"managedSecret": {"name": "db", "namespace": "apps"}}),
                ),
                "db",
            ),
            (
                object(
                    "secrets.infisical.com/v1alpha1",
                    "InfisicalSecret",
                    ns,
                    "i",
                    json!({"managedKubeSecretReferences": [{"secretName": "db"}]}),
                ),
                "db",
            ),
            (
                object(
                    "cert-manager.io/v1",
                    "Certificate",
                    ns,
                    "c",
                    json!({"secretName": "db"}),
                ),
                "db",
            ),
        ];
        for (o, name) in cases {
            assert!(
                maker(std::slice::from_ref(&o), "apps", name).is_some(),
                "{o:#}"
            );
        }
        // Vault: without `create: true` the Secret must exist already.
        let vault = object(
            "secrets.hashicorp.com/v1beta1",
            "VaultDynamicSecret",
            ns,
            "v",
            json!({"destination": {"name": "db"}}),
        );
        assert!(maker(&[vault], "apps", "db").is_none());
    }
}
