//! What helm-controller does to `helm template`'s output before it applies it
//! (`internal/postrender/build.go` BuildPostRenderers): each `spec.postRenderers[].kustomize`
//! in order (a kustomize build of the output with its `patches` and `images`), then the
//! origin labels `helm.toolkit.fluxcd.io/name` and `.../namespace` on every object
//! (`origin_labels.go`, a LabelTransformer on `metadata/labels` only). The chart's `crds/`
//! skip the post-renderers (`internal/action/crds.go` applies them apart) but get the origin
//! labels too (`setOriginVisitor`).
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

#[cfg(test)]
mod tests {
    use super::*;

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
