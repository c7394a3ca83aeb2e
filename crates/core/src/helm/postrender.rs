//! What helm-controller does to `helm template`'s output before it applies it
//! (`internal/postrender/build.go` BuildPostRenderers): each `spec.postRenderers[].kustomize`
//! in order (a kustomize build of the output with its `patches` and `images`), then the
//! origin labels `helm.toolkit.fluxcd.io/name` and `.../namespace` on every object
//! (`origin_labels.go`, a LabelTransformer on `metadata/labels` only). The chart's `crds/`
//! skip the post-renderers (`internal/action/crds.go` applies them apart) but get the origin
//! labels too (`setOriginVisitor`).
//!
//! Then what helm's kube client does as it builds the manifest for the install: every
//! namespaced object without `metadata.namespace` is put in the release's namespace
//! ([`default_namespaces`]).
//!
//! Every step is a kustomize build run through fluxsim's builder, so the result is printed
//! as every other artifact is (kustomize's key order and style, legacy object order).

use std::path::Path;

use serde_json::{json, Value};

use crate::kustomize::{Builder, Job};

use super::release::{HelmRelease, HELM_GROUP};

/// Writes `kustomization.yaml` (as JSON, which is YAML) and `resources` into `dir` and
/// builds it.
fn build(
    builder: &dyn Builder,
    dir: &Path,
    resources: &[(&str, &str)],
    mut kustomization: serde_json::Map<String, Value>,
) -> Result<String, super::HelmError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("writing {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for (name, text) in resources.iter().filter(|(_, t)| !t.trim().is_empty()) {
        std::fs::write(dir.join(name), text).map_err(|e| format!("writing {name}: {e}"))?;
        names.push(Value::String((*name).to_string()));
    }
    if names.is_empty() {
        return Ok(String::new());
    }
    kustomization.insert(
        "apiVersion".into(),
        json!("kustomize.config.k8s.io/v1beta1"),
    );
    kustomization.insert("kind".into(), json!("Kustomization"));
    kustomization.insert("resources".into(), Value::Array(names));
    let text =
        serde_json::to_string_pretty(&Value::Object(kustomization)).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("kustomization.yaml"), text)
        .map_err(|e| format!("writing kustomization.yaml: {e}"))?;
    builder
        .build(&Job::folder(dir))
        .output
        .map_err(|e| super::HelmError(crate::scratch::scrub(&e.to_string())))
}

/// The kustomization of one `spec.postRenderers[].kustomize`: only the fields of
/// helm-controller's API, `patches` as `{patch, target}` (fluxcd/pkg `apis/kustomize`
/// `Patch`: there is no `path`, the API server prunes it) and `images` as
/// `{name, newName, newTag, digest}` (`Image`). Nothing in it names a file, so the build reads
/// nothing but the helm output it is given.
fn post_renderer_kustomization(pr: &Value) -> serde_json::Map<String, Value> {
    let keep = |entries: Option<&Value>, fields: &[&str]| -> Option<Value> {
        let entries = entries?.as_array()?;
        Some(Value::Array(
            entries
                .iter()
                .filter_map(Value::as_object)
                .map(|e| {
                    Value::Object(
                        e.iter()
                            .filter(|(k, _)| fields.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    )
                })
                .collect(),
        ))
    };
    let mut k = serde_json::Map::new();
    if let Some(p) = keep(pr.get("patches"), &["patch", "target"]) {
        k.insert("patches".into(), p);
    }
    if let Some(i) = keep(pr.get("images"), &["name", "newName", "newTag", "digest"]) {
        k.insert("images".into(), i);
    }
    k
}

/// `templates` (helm's output without the chart's CRDs) and `crds` after helm-controller's
/// post-renderers, as one kustomize-printed stream.
pub fn post_render(
    builder: &dyn Builder,
    work: &Path,
    hr: &HelmRelease,
    crds: &str,
    templates: &str,
) -> Result<String, super::HelmError> {
    let mut current = templates.to_string();
    for (i, pr) in hr.post_renderers.iter().enumerate() {
        if current.trim().is_empty() {
            break;
        }
        let k = post_renderer_kustomization(pr);
        current = build(
            builder,
            &work.join(format!("post-renderer-{i}")),
            &[("helm-output.yaml", &current)],
            k,
        )
        .map_err(|e| format!("post-renderer {i} (kustomize): {e}"))?;
    }
    let current = default_namespaces(&current, crds, &hr.release_namespace());
    let mut k = serde_json::Map::new();
    k.insert(
        "labels".into(),
        json!([{ "pairs": {
            format!("{HELM_GROUP}/name"): hr.id.name,
            format!("{HELM_GROUP}/namespace"): hr.id.namespace,
        }}]),
    );
    build(
        builder,
        &work.join("origin-labels"),
        &[("crds.yaml", crds), ("helm-output.yaml", &current)],
        k,
    )
    .map_err(|e| super::HelmError(format!("origin labels (kustomize): {e}")))
}

/// The kinds a Kubernetes v1.36 API server serves without a namespace (`kubectl
/// api-resources --namespaced=false`), by group and kind; helm's kube client asks the
/// cluster's REST mapper, which offline is this list and the CRDs of the release.
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "ComponentStatus"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
];

/// The group of an `apiVersion`.
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// `manifests` with every namespaced object that has no `metadata.namespace` put in
/// `namespace`, as helm's kube client builds a manifest for the install (helm v4.2.4
/// `pkg/kube/client.go` `buildResourceList`: `NamespaceParam(namespace).DefaultNamespace()`,
/// the client's namespace being the release's, helm-controller v1.6.4
/// `internal/action/config.go`). A kind is namespaced unless Kubernetes serves it without a
/// namespace ([`CLUSTER_SCOPED`]) or a CustomResourceDefinition of the release (in `crds` or
/// the manifests) says `scope: Cluster`. An object so placed is handed on as JSON (YAML),
/// which the next build prints as kustomize prints it; the others as they were.
fn default_namespaces(manifests: &str, crds: &str, namespace: &str) -> String {
    let docs: Vec<&str> = crate::manifest::split_documents(manifests);
    let parsed: Vec<Option<Value>> = docs
        .iter()
        .map(|d| {
            crate::manifest::parse_object(d)
                .ok()
                .filter(Value::is_object)
        })
        .collect();
    let mut cluster: std::collections::BTreeSet<(String, String)> = CLUSTER_SCOPED
        .iter()
        .map(|(g, k)| ((*g).to_string(), (*k).to_string()))
        .collect();
    let crd_docs = crate::manifest::split_documents(crds);
    let crd_objects = crd_docs
        .iter()
        .filter_map(|d| crate::manifest::parse_object(d).ok())
        .chain(parsed.iter().flatten().cloned());
    for o in crd_objects {
        if o["kind"] == "CustomResourceDefinition" && o["spec"]["scope"] == "Cluster" {
            if let (Some(g), Some(k)) = (
                o["spec"]["group"].as_str(),
                o["spec"]["names"]["kind"].as_str(),
            ) {
                cluster.insert((g.to_string(), k.to_string()));
            }
        }
    }
    let needs = |o: &Value| {
        let ns = o["metadata"]["namespace"].as_str().unwrap_or_default();
        let (Some(api), Some(kind)) = (o["apiVersion"].as_str(), o["kind"].as_str()) else {
            return false;
        };
        ns.is_empty() && !cluster.contains(&(group_of(api).to_string(), kind.to_string()))
    };
    if !parsed.iter().flatten().any(needs) {
        return manifests.to_string();
    }
    let mut out = String::with_capacity(manifests.len());
    for (doc, obj) in docs.iter().zip(&parsed) {
        if !out.is_empty() {
            out.push_str("---\n");
        }
        match obj {
            Some(o) if needs(o) => {
                let mut o = o.clone();
                o["metadata"]["namespace"] = Value::from(namespace);
                out.push_str(&crate::postbuild::reprint::object_text(&o));
                out.push('\n');
            }
            _ => {
                out.push_str(doc);
                if !doc.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // helm v4.2.4 pkg/kube/client.go buildResourceList (DefaultNamespace): at the install a
    // namespaced object without a namespace is created in the release's; a cluster-scoped
    // kind (built in, or by a CRD of the release) and an object with its own namespace keep
    // theirs.
    #[test]
    fn namespaced_release_objects_without_a_namespace_get_the_release_namespace() {
        let manifests = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: other\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n";
        let crds = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Gadget\n  scope: Cluster\n";
        let out = default_namespaces(manifests, crds, "apps");
        let objects: Vec<Value> = crate::manifest::split_documents(&out)
            .iter()
            .map(|d| crate::manifest::parse_object(d).unwrap())
            .collect();
        let ns: Vec<&Value> = objects
            .iter()
            .map(|o| &o["metadata"]["namespace"])
            .collect();
        assert_eq!(
            ns,
            [
                &json!("apps"),
                &json!("other"),
                &Value::Null,
                &json!("apps"),
                &Value::Null
            ]
        );
        // Nothing to place: the text as it was.
        let placed = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: x\n";
        assert_eq!(default_namespaces(placed, "", "apps"), placed);
    }

    // helm-controller's Patch has `patch` and `target` only (fluxcd/pkg apis/kustomize
    // types.go): a `path` to any file of the machine was read by the post-render build.
    #[test]
    fn a_post_renderer_patch_path_is_not_part_of_the_api_and_is_dropped() {
        let pr = json!({
            "patches": [
                {"path": "/etc/passwd", "target": {"kind": "ConfigMap"}},
                {"patch": "- op: add", "target": {"kind": "X"}, "options": {"allowNameChange": true}}
            ],
            "images": [{"name": "a", "newTag": "2", "path": "/dev/zero"}],
            "configMapGenerator": [{"name": "x", "files": ["/etc/passwd"]}]
        });
        let k = post_renderer_kustomization(&pr);
        assert_eq!(
            Value::Object(k),
            json!({
                "patches": [
                    {"target": {"kind": "ConfigMap"}},
                    {"patch": "- op: add", "target": {"kind": "X"}}
                ],
                "images": [{"name": "a", "newTag": "2"}]
            })
        );
    }
}
