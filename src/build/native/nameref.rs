//! Generated names and the references that follow them: the content hash kustomize appends
//! to a generated ConfigMap or Secret (`api/hasher/hasher.go`), and the name-reference
//! fix-up for ConfigMaps and Secrets (`api/filters/nameref/nameref.go` with the field specs
//! of `builtinpluginconsts/namereference.go`).

use sha2::{Digest, Sha256};

use super::node::Node;
use super::resource::{is_cluster_scoped, Resource};
use super::NativeError;

/// Appends the content hash to every generated resource that asks for it, then rewrites the
/// ConfigMap and Secret references to them.
pub(crate) fn apply_hash_suffixes(resources: &mut [Resource]) -> Result<(), NativeError> {
    // (kind, old name, new name, namespace)
    let mut renamed: Vec<(String, String, String, String)> = Vec::new();
    for r in resources.iter_mut().filter(|r| r.needs_hash) {
        let hash = hash_of(r);
        let old = r.name().to_string();
        let new = format!("{old}-{hash}");
        if let Some(Node::Map(meta)) = r.node.as_map_mut().and_then(|m| m.get_mut("metadata")) {
            meta.insert("name", Node::Str(new.clone()));
        }
        renamed.push((r.kind().to_string(), old, new, r.namespace().to_string()));
        r.needs_hash = false;
    }
    if renamed.is_empty() {
        return Ok(());
    }
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        if gvk.kind == "Node" && r.node.get_path(&["spec", "configSource"]).is_some() {
            return Err(NativeError::unsupported(
                "a Node configSource reference to a generated name",
                r.name(),
            ));
        }
        let referrer_ns = r.namespace().to_string();
        let referrer_cluster = is_cluster_scoped(&gvk)?;
        for (referral, specs) in [("ConfigMap", CONFIG_MAP_REFS), ("Secret", SECRET_REFS)] {
            for spec in specs {
                let (kind, group, version, path) = *spec;
                if kind != gvk.kind
                    || (!group.is_empty() && group != gvk.group)
                    || (!version.is_empty() && version != gvk.version)
                {
                    continue;
                }
                let path = split_path(path);
                let path: Vec<&str> = path.iter().map(String::as_str).collect();
                let mut result = Ok(());
                visit_scalars(&mut r.node, &path, &mut |value: &mut String| {
                    let candidates: Vec<&(String, String, String, String)> = renamed
                        .iter()
                        .filter(|c| c.0 == referral && c.1 == *value)
                        .filter(|c| referrer_cluster || same_namespace(&c.3, &referrer_ns))
                        .collect();
                    match candidates.as_slice() {
                        [] => {}
                        [one] => *value = one.2.clone(),
                        more => {
                            if more.iter().all(|c| c.2 == more[0].2) {
                                *value = more[0].2.clone();
                            } else {
                                result = Err(NativeError::Failed(format!(
                                    "found multiple possible referrals for {value}"
                                )));
                            }
                        }
                    }
                });
                result?;
            }
        }
    }
    Ok(())
}

/// kustomize's name-reference pass walks every referrer's field specs on every build, and
/// fails (or not, depending on its own field lookup) when a path runs into a scalar, as a
/// patch can make happen: such builds are delegated.
pub(crate) fn check_reference_paths(resources: &[Resource]) -> Result<(), NativeError> {
    for r in resources {
        let gvk = r.gvk();
        for (kind, group, version, path) in CONFIG_MAP_REFS.iter().chain(SECRET_REFS) {
            if *kind != gvk.kind
                || (!group.is_empty() && *group != gvk.group)
                || (!version.is_empty() && *version != gvk.version)
            {
                continue;
            }
            let path = split_path(path);
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            if runs_into_scalar(&r.node, &path) {
                return Err(NativeError::unsupported(
                    "a name-reference path that runs into a scalar",
                    r.name(),
                ));
            }
        }
    }
    Ok(())
}

fn runs_into_scalar(node: &Node, path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match node {
        Node::Seq(items) => items.iter().any(|i| runs_into_scalar(i, path)),
        Node::Map(m) => m.get(first).is_some_and(|v| {
            !rest.is_empty() && !matches!(v, Node::Map(_) | Node::Seq(_))
                || runs_into_scalar(v, rest)
        }),
        _ => true,
    }
}

/// `ResId.IsNsEquals` for two namespaced resources: unset means `default`.
fn same_namespace(a: &str, b: &str) -> bool {
    let norm = |s: &str| if s.is_empty() { "default" } else { s }.to_string();
    norm(a) == norm(b)
}

/// Splits a field-spec path at `/`, keeping `\/` as a slash inside a field name.
fn split_path(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                chars.next();
                if let Some(last) = out.last_mut() {
                    last.push('/');
                }
            }
            '/' => out.push(String::new()),
            other => {
                if let Some(last) = out.last_mut() {
                    last.push(other);
                }
            }
        }
    }
    out
}

/// Walks `path` (sequences element by element, as `fieldspec.Filter` does) and calls `f` on
/// each string found at its end (each element when it ends at a list of strings).
fn visit_scalars(node: &mut Node, path: &[&str], f: &mut dyn FnMut(&mut String)) {
    match node {
        Node::Seq(items) => {
            for item in items {
                visit_scalars(item, path, f);
            }
        }
        Node::Str(s) if path.is_empty() => f(s),
        Node::Map(m) => {
            if let Some((first, rest)) = path.split_first() {
                if let Some(v) = m.get_mut(first) {
                    visit_scalars(v, rest, f);
                }
            }
        }
        _ => {}
    }
}

/// `hasher.Hash` for a ConfigMap or Secret: the JSON of kind, data (and type), with the name
/// left empty (`getNodeValues` looks up `metadata/name` as one field name and finds nothing).
fn hash_of(r: &Resource) -> String {
    let mut json = String::from("{");
    let data = r.node.get_path(&["data"]);
    let field = |json: &mut String, key: &str, value: Option<&Node>| {
        push_json_string(json, key);
        json.push(':');
        match value {
            Some(Node::Map(m)) => {
                let mut entries: Vec<(&String, &Node)> = m.0.iter().map(|(k, v)| (k, v)).collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                json.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        json.push(',');
                    }
                    push_json_string(json, k);
                    json.push(':');
                    push_json_string(json, v.as_str().unwrap_or_default());
                }
                json.push('}');
            }
            Some(Node::Str(s)) => push_json_string(json, s),
            _ => push_json_string(json, ""),
        }
    };
    field(&mut json, "data", data);
    json.push(',');
    if r.kind() == "Secret" {
        field(&mut json, "kind", Some(&Node::Str("Secret".into())));
        json.push(',');
        field(&mut json, "name", None);
        json.push(',');
        field(&mut json, "type", r.node.get_path(&["type"]));
    } else {
        field(&mut json, "kind", Some(&Node::Str("ConfigMap".into())));
        json.push(',');
        field(&mut json, "name", None);
    }
    json.push('}');
    let hex = crate::generate::hex(&Sha256::digest(json.as_bytes()));
    hex.chars()
        .take(10)
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect()
}

/// A string as Go's `json.Marshal` writes it (HTML characters and line separators escaped).
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// (referrer kind, group, version, path) for ConfigMap references.
const CONFIG_MAP_REFS: &[(&str, &str, &str, &str)] = &[
    ("Pod", "", "v1", "spec/volumes/configMap/name"),
    (
        "Pod",
        "",
        "v1",
        "spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Pod",
        "",
        "v1",
        "spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    ("Pod", "", "v1", "spec/containers/envFrom/configMapRef/name"),
    (
        "Pod",
        "",
        "v1",
        "spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "Pod",
        "",
        "v1",
        "spec/volumes/projected/sources/configMap/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/volumes/configMap/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/volumes/configMap/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/volumes/configMap/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/volumes/configMap/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/volumes/configMap/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    ("Job", "", "", "spec/template/spec/volumes/configMap/name"),
    (
        "Job",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/volumes/configMap/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/volumes/projected/sources/configMap/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/containers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/containers/envFrom/configMapRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/initContainers/envFrom/configMapRef/name",
    ),
    ("Role", "", "", "rules/resourceNames"),
    ("ClusterRole", "", "", "rules/resourceNames"),
    (
        "Ingress",
        "",
        "",
        "metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap",
    ),
];

/// (referrer kind, group, version, path) for Secret references.
const SECRET_REFS: &[(&str, &str, &str, &str)] = &[
    ("Pod", "", "v1", "spec/volumes/secret/secretName"),
    (
        "Pod",
        "",
        "v1",
        "spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Pod",
        "",
        "v1",
        "spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    ("Pod", "", "v1", "spec/containers/envFrom/secretRef/name"),
    (
        "Pod",
        "",
        "v1",
        "spec/initContainers/envFrom/secretRef/name",
    ),
    ("Pod", "", "v1", "spec/imagePullSecrets/name"),
    (
        "Pod",
        "",
        "v1",
        "spec/volumes/projected/sources/secret/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/volumes/secret/secretName",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/initContainers/envFrom/secretRef/name",
    ),
    ("PodTemplate", "", "", "template/spec/imagePullSecrets/name"),
    (
        "PodTemplate",
        "",
        "",
        "template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/volumes/secret/secretName",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/imagePullSecrets/name",
    ),
    (
        "Deployment",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/volumes/secret/secretName",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/imagePullSecrets/name",
    ),
    (
        "ReplicaSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/volumes/secret/secretName",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/imagePullSecrets/name",
    ),
    (
        "DaemonSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/volumes/secret/secretName",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/imagePullSecrets/name",
    ),
    (
        "StatefulSet",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/volumes/secret/secretName",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "Job",
        "",
        "",
        "spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    ("Job", "", "", "spec/template/spec/imagePullSecrets/name"),
    (
        "Job",
        "",
        "",
        "spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/volumes/secret/secretName",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/volumes/projected/sources/secret/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/initContainers/env/valueFrom/secretKeyRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/containers/envFrom/secretRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/initContainers/envFrom/secretRef/name",
    ),
    (
        "CronJob",
        "",
        "",
        "spec/jobTemplate/spec/template/spec/imagePullSecrets/name",
    ),
    ("Ingress", "", "", "spec/tls/secretName"),
    (
        "Ingress",
        "",
        "",
        "metadata/annotations/ingress.kubernetes.io\\/auth-secret",
    ),
    (
        "Ingress",
        "",
        "",
        "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret",
    ),
    (
        "Ingress",
        "",
        "",
        "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret",
    ),
    ("ServiceAccount", "", "", "imagePullSecrets/name"),
    ("StorageClass", "", "", "parameters/secretName"),
    ("StorageClass", "", "", "parameters/adminSecretName"),
    ("StorageClass", "", "", "parameters/userSecretName"),
    ("StorageClass", "", "", "parameters/secretRef"),
    ("Role", "", "", "rules/resourceNames"),
    ("ClusterRole", "", "", "rules/resourceNames"),
    (
        "Service",
        "serving.knative.dev",
        "v1",
        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
    ),
    ("PersistentVolume", "", "", "spec/azureFile/secretName"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_paths_keep_escaped_slashes() {
        assert_eq!(
            split_path("metadata/annotations/a.io\\/b"),
            vec!["metadata", "annotations", "a.io/b"]
        );
    }
}
