//! One JSON convention for every command, as Kubernetes writes its own: keys in camelCase;
//! every document says what it is (`schemaVersion`, `kind`); a cluster is `{name, ...}`; a
//! Kustomization named in a document is `{namespace, name}` (a Helm release rendered below
//! one, `--helm`, adds `helmRelease: {namespace, name}`; a ResourceSet's entry adds
//! `resourceSet: {namespace, name}`); an object is `{group, kind, namespace, name}`; a
//! revision is `{ref, commit}` (`workTree: true`, and both null, for the
//! work tree). `docs/schemas/` holds a JSON Schema per document, which the tests check every
//! command's output against. Fields are only ever added within a `schemaVersion`.

use serde_json::{json, Map, Value};

use crate::compare::Revision;

/// The version of every document's layout; a change that is not an addition raises it.
pub const SCHEMA_VERSION: u64 = 1;

/// `body` (an object) with `schemaVersion` and `kind`.
#[must_use]
pub fn document(kind: &str, body: Value) -> Value {
    let mut map = match body {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    };
    map.insert("schemaVersion".into(), json!(SCHEMA_VERSION));
    map.insert("kind".into(), json!(kind));
    Value::Object(map)
}

/// `flux-system/apps` as `{namespace, name}`; a Helm release's artifact
/// (`flux-system/apps/helm/web/podinfo`) as the Kustomization with `helmRelease`; a
/// ResourceSet's entry (`flux-system/apps/rset/tenants/team-a`) as the Kustomization that
/// applies the ResourceSet with `resourceSet` (both when a ResourceSet makes a HelmRelease).
#[must_use]
pub fn kustomization(id: &str) -> Value {
    let (namespace, name) = id.split_once('/').unwrap_or(("", id));
    let mut out = Map::new();
    let name = match name.split_once("/helm/") {
        Some((name, release)) => {
            out.insert("helmRelease".into(), namespaced(release));
            name
        }
        None => name,
    };
    let name = match name.split_once("/rset/") {
        Some((name, rset)) => {
            out.insert("resourceSet".into(), namespaced(rset));
            name
        }
        None => name,
    };
    out.insert("namespace".into(), json!(namespace));
    out.insert("name".into(), json!(name));
    Value::Object(out)
}

/// The `helmRelease` and `resourceSet` fields of `id` (see [`kustomization`]), for a
/// document that names the entry whole.
#[must_use]
pub fn entry_of(id: &str) -> Map<String, Value> {
    let Value::Object(mut m) = kustomization(id) else {
        return Map::new();
    };
    m.remove("namespace");
    m.remove("name");
    m
}

/// The versions a cluster runs: `{flux: {version, basis}, kubernetes: {version, basis} |
/// null}`, each basis `{kind: "config", key}`, `{kind: "evidence", what, file}` or
/// `{kind: "presumed", why}`; versions written as Flux and Kubernetes write them (`v2.4`,
/// `1.31.2`).
#[must_use]
pub fn versions(v: &crate::versions::ClusterVersions) -> Value {
    let basis = |b: &crate::versions::Basis| serde_json::to_value(b).unwrap_or(Value::Null);
    json!({
        "flux": {"version": v.flux.version.to_string(), "basis": basis(&v.flux.basis)},
        "kubernetes": v.kubernetes.as_ref().map(|k| json!({
            "version": k.version.to_string(), "basis": basis(&k.basis),
        })),
    })
}

/// `web/podinfo` as `{namespace, name}`.
fn namespaced(id: &str) -> Value {
    let (namespace, name) = id.split_once('/').unwrap_or(("", id));
    // A synthetic entry's ResourceSet or HelmRelease, as the repository names it.
    json!({
        "namespace": fluxsim_core::flux::id_unsegment(namespace),
        "name": fluxsim_core::flux::id_unsegment(name)
    })
}

/// A revision: `{ref, commit}`, or the work tree.
#[must_use]
pub fn revision(r: &Revision) -> Value {
    match (&r.name, &r.commit) {
        (None, None) => json!({ "ref": null, "commit": null, "workTree": true }),
        (name, commit) => json!({ "ref": name, "commit": commit, "workTree": false }),
    }
}

/// `snake_case` as `camelCase`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Every key of `v` (at any depth) in camelCase: for values serialised from fluxsim's own
/// types, whose keys are field names (never for a map whose keys are the repository's).
#[must_use]
pub fn camel_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (camel(&k), camel_keys(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(camel_keys).collect()),
        other => other,
    }
}

/// `v[key]`, a `namespace/name` string or a list of them (or null), as Kustomization
/// references ([`kustomization`]).
pub fn kustomization_refs(v: &mut Value, key: &str) {
    let Some(field) = v.get_mut(key) else {
        return;
    };
    match field {
        Value::String(s) => *field = kustomization(s),
        Value::Array(items) => {
            for item in items {
                if let Value::String(s) = item {
                    *item = kustomization(s);
                }
            }
        }
        _ => {}
    }
}

/// Each object of the array `v[key]`, changed by `f`.
pub fn each(v: &mut Value, key: &str, mut f: impl FnMut(&mut Value)) {
    if let Some(Value::Array(items)) = v.get_mut(key) {
        for item in items {
            f(item);
        }
    }
}

/// Renames `v[from]` to `v[to]` (an object's field).
pub fn rename(v: &mut Value, from: &str, to: &str) {
    if let Some(m) = v.as_object_mut() {
        if let Some(x) = m.remove(from) {
            m.insert(to.to_string(), x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_camel_case_and_kustomizations_namespace_and_name() {
        assert_eq!(
            camel_keys(json!({"not_compared": 1, "a": [{"prune_outage": true}]})),
            json!({"notCompared": 1, "a": [{"pruneOutage": true}]})
        );
        assert_eq!(
            kustomization("flux-system/apps"),
            json!({"namespace": "flux-system", "name": "apps"})
        );
        assert_eq!(
            kustomization("flux-system/apps-helm/helm/apps/podinfo"),
            json!({
                "namespace": "flux-system",
                "name": "apps-helm",
                "helmRelease": {"namespace": "apps", "name": "podinfo"}
            })
        );
        assert_eq!(
            kustomization("flux-system/tenants/rset/flux-system/team-a"),
            json!({
                "namespace": "flux-system",
                "name": "tenants",
                "resourceSet": {"namespace": "flux-system", "name": "team-a"}
            })
        );
        assert_eq!(
            kustomization("flux-system/tenants/rset/apps/team-a/helm/apps/podinfo"),
            json!({
                "namespace": "flux-system",
                "name": "tenants",
                "resourceSet": {"namespace": "apps", "name": "team-a"},
                "helmRelease": {"namespace": "apps", "name": "podinfo"}
            })
        );
        assert_eq!(
            entry_of("flux-system/tenants/rset/apps/team-a"),
            json!({"resourceSet": {"namespace": "apps", "name": "team-a"}})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(
            revision(&Revision::default()),
            json!({"ref": null, "commit": null, "workTree": true})
        );
        let d = document("DiffReport", json!({"a": 1}));
        assert_eq!(d["schemaVersion"], SCHEMA_VERSION);
        assert_eq!(d["kind"], "DiffReport");
    }
}
