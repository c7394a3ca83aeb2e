//! The container images a render runs: per cluster and Kustomization, from pod templates and
//! HelmRelease values, and what changed between two renders.
//!
//! Read from the rendered objects, so kustomize's `images:` overrides (and Flux's
//! `spec.images`) are already applied, and postBuild vars already substituted.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::flux::ObjectId;
use crate::model::ClusterRender;

/// Where an image reference sits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum From {
    /// A container of a pod spec (`containers`, `initContainers`, `ephemeralContainers`).
    Container,
    /// An `image` of a HelmRelease's `spec.values`.
    HelmValues,
}

/// One image reference of one object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ImageUse {
    /// The object that holds it.
    pub object: ObjectId,
    /// Where in the object: `spec.template.spec.containers[name=web]`,
    /// `spec.values.image`.
    pub path: String,
    /// Container or HelmRelease values.
    pub from: From,
    /// The image reference (`ghcr.io/org/app:1.2.3`, `...@sha256:...`).
    pub image: String,
}

/// The images of one Kustomization.
#[derive(Debug, Clone, Serialize)]
pub struct KustomizationImages {
    /// `namespace/name`.
    pub kustomization: String,
    /// Sorted by object and path.
    pub images: Vec<ImageUse>,
}

/// The images of one cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterImages {
    /// The cluster's name.
    pub cluster: String,
    /// The Kustomizations that run any image, sorted.
    pub kustomizations: Vec<KustomizationImages>,
}

const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// Containers anywhere in the object (pod templates of workloads, a CronJob's job template,
/// a bare Pod, custom resources that embed a pod spec).
fn containers(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if CONTAINER_LISTS.contains(&k.as_str()) {
                    if let Value::Array(items) = child {
                        for (i, c) in items.iter().enumerate() {
                            if let Some(image) = c.get("image").and_then(Value::as_str) {
                                let at = c.get("name").and_then(Value::as_str).map_or_else(
                                    || format!("{p}[{i}]"),
                                    |n| format!("{p}[name={n}]"),
                                );
                                out.push((at, image.to_string()));
                            }
                        }
                        continue;
                    }
                }
                containers(child, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                containers(child, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// `image` fields of Helm values: a string (`image: nginx:1.27`) or a map with a
/// `repository` (and `registry`, `tag`, `digest` when present), as most charts write them.
fn helm_images(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let Value::Object(map) = v else {
        if let Value::Array(items) = v {
            for (i, child) in items.iter().enumerate() {
                helm_images(child, &format!("{path}[{i}]"), out);
            }
        }
        return;
    };
    for (k, child) in map {
        let p = format!("{path}.{k}");
        if k == "image" {
            match child {
                Value::String(s) if !s.is_empty() && !s.contains(char::is_whitespace) => {
                    out.push((p, s.clone()));
                    continue;
                }
                Value::Object(img) => {
                    if let Some(reference) = image_of_map(img) {
                        out.push((p, reference));
                        continue;
                    }
                }
                _ => {}
            }
        }
        helm_images(child, &p, out);
    }
}

/// `registry/repository:tag@digest` from a values map; `None` without a `repository`.
fn image_of_map(img: &serde_json::Map<String, Value>) -> Option<String> {
    let text = |k: &str| match img.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let repository = text("repository")?;
    let mut out = match text("registry") {
        Some(r) => format!("{}/{repository}", r.trim_end_matches('/')),
        None => repository,
    };
    if let Some(tag) = text("tag") {
        out.push(':');
        out.push_str(&tag);
    }
    if let Some(digest) = text("digest") {
        out.push('@');
        out.push_str(&digest);
    }
    Some(out)
}

/// Every image reference of one object, sorted by path.
#[must_use]
pub fn object_images(id: &ObjectId, v: &Value) -> Vec<ImageUse> {
    let mut found = Vec::new();
    if crate::helm::is_helm_release(v) {
        if let Some(values) = v.get("spec").and_then(|s| s.get("values")) {
            let mut h = Vec::new();
            helm_images(values, "spec.values", &mut h);
            found.extend(h.into_iter().map(|(p, i)| (p, i, From::HelmValues)));
        }
    } else {
        let mut c = Vec::new();
        containers(v, "", &mut c);
        found.extend(c.into_iter().map(|(p, i)| (p, i, From::Container)));
    }
    let mut out: Vec<ImageUse> = found
        .into_iter()
        .map(|(path, image, from)| ImageUse {
            object: id.clone(),
            path,
            from,
            image,
        })
        .collect();
    out.sort();
    out
}

/// The images of every rendered Kustomization of every cluster.
#[must_use]
pub fn cluster_images(clusters: &[ClusterRender]) -> Vec<ClusterImages> {
    clusters
        .iter()
        .map(|c| ClusterImages {
            cluster: c.name.clone(),
            kustomizations: c
                .kustomizations
                .iter()
                .filter_map(|k| {
                    let a = k.artifact.as_ref()?;
                    let mut images: Vec<ImageUse> = a
                        .objects
                        .iter()
                        .flat_map(|o| object_images(&o.id, &o.object))
                        .collect();
                    images.sort();
                    (!images.is_empty()).then(|| KustomizationImages {
                        kustomization: k.kustomization.id.to_string(),
                        images,
                    })
                })
                .collect(),
        })
        .collect()
}

/// One image reference that changed between two renders.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ImageChange {
    /// The Kustomization that applies the object (in head, else in base).
    pub kustomization: String,
    /// The object.
    pub object: ObjectId,
    /// Where in the object.
    pub path: String,
    /// The image in base (`None`: added).
    pub base: Option<String>,
    /// The image in head (`None`: removed).
    pub head: Option<String>,
}

/// The image changes of one cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterImageDiff {
    /// The cluster.
    pub cluster: String,
    /// Sorted by Kustomization, object and path.
    pub changes: Vec<ImageChange>,
}

/// `changes` without those of Kustomizations that `diff` could not compare: what one that
/// did not render in a revision runs there is unknown, never added or removed (Flux applies
/// nothing from a failed build and prunes nothing: `fluxcd/kustomize-controller`
/// `internal/controller/kustomization_controller.go`, `reconcile` returns before `apply`
/// and `prune`). A cluster left without a change is dropped.
#[must_use]
pub fn only_compared(
    changes: Vec<ClusterImageDiff>,
    diff: &crate::compare::RevisionDiff,
) -> Vec<ClusterImageDiff> {
    changes
        .into_iter()
        .filter_map(|mut c| {
            let not_compared: BTreeSet<&str> = diff
                .clusters
                .iter()
                .filter(|d| d.cluster == c.cluster)
                .flat_map(crate::compare::ClusterDiff::not_compared)
                .map(|k| k.kustomization.as_str())
                .collect();
            c.changes
                .retain(|i| !not_compared.contains(i.kustomization.as_str()));
            (!c.changes.is_empty()).then_some(c)
        })
        .collect()
}

/// What changed in each cluster's images between `base` and `head` (clusters of either);
/// an image is matched by its object and its place in it, whichever Kustomization applies it.
#[must_use]
pub fn diff_images(base: &[ClusterImages], head: &[ClusterImages]) -> Vec<ClusterImageDiff> {
    type Key = (ObjectId, String);
    fn index(c: Option<&ClusterImages>) -> BTreeMap<Key, (String, String)> {
        c.map(|c| {
            c.kustomizations
                .iter()
                .flat_map(|k| {
                    k.images.iter().map(|i| {
                        (
                            (i.object.clone(), i.path.clone()),
                            (k.kustomization.clone(), i.image.clone()),
                        )
                    })
                })
                .collect()
        })
        .unwrap_or_default()
    }
    let names: BTreeSet<&str> = base
        .iter()
        .chain(head)
        .map(|c| c.cluster.as_str())
        .collect();
    names
        .into_iter()
        .map(|name| {
            let b = index(base.iter().find(|c| c.cluster == name));
            let h = index(head.iter().find(|c| c.cluster == name));
            let keys: BTreeSet<&Key> = b.keys().chain(h.keys()).collect();
            let mut changes: Vec<ImageChange> = keys
                .into_iter()
                .filter_map(|key| {
                    let (bi, hi) = (b.get(key), h.get(key));
                    if bi.map(|x| &x.1) == hi.map(|x| &x.1) {
                        return None;
                    }
                    Some(ImageChange {
                        kustomization: hi.or(bi).map(|x| x.0.clone()).unwrap_or_default(),
                        object: key.0.clone(),
                        path: key.1.clone(),
                        base: bi.map(|x| x.1.clone()),
                        head: hi.map(|x| x.1.clone()),
                    })
                })
                .collect();
            changes.sort();
            ClusterImageDiff {
                cluster: name.to_string(),
                changes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(kind: &str, name: &str) -> ObjectId {
        ObjectId {
            group: String::new(),
            kind: kind.into(),
            namespace: "apps".into(),
            name: name.into(),
        }
    }

    #[test]
    fn images_of_workloads_cronjobs_and_init_containers() {
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"name": "init", "image": "busybox:1.36"}],
            "containers": [{"name": "job", "image": "ghcr.io/x/job:2"}]}}}}}});
        let got: Vec<(String, String)> = object_images(&id("CronJob", "c"), &cron)
            .into_iter()
            .map(|i| (i.path, i.image))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "spec.jobTemplate.spec.template.spec.containers[name=job]".to_string(),
                    "ghcr.io/x/job:2".to_string()
                ),
                (
                    "spec.jobTemplate.spec.template.spec.initContainers[name=init]".to_string(),
                    "busybox:1.36".to_string()
                ),
            ]
        );
    }

    #[test]
    fn images_of_helm_release_values_strings_and_repository_maps() {
        let hr = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "spec": {"values": {
            "image": {"registry": "docker.io", "repository": "grafana/grafana", "tag": "11.1.0"},
            "sidecar": {"image": "quay.io/kiwigrid/k8s-sidecar:1.27.4"},
            "notAnImage": {"image": {"pullPolicy": "Always"}}}}});
        let got: Vec<(String, String)> = object_images(&id("HelmRelease", "g"), &hr)
            .into_iter()
            .map(|i| (i.path, i.image))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "spec.values.image".to_string(),
                    "docker.io/grafana/grafana:11.1.0".to_string()
                ),
                (
                    "spec.values.sidecar.image".to_string(),
                    "quay.io/kiwigrid/k8s-sidecar:1.27.4".to_string()
                ),
            ]
        );
    }

    #[test]
    fn image_diff_reports_bumps_additions_and_removals() {
        let use_ = |path: &str, image: &str| ImageUse {
            object: id("Deployment", "web"),
            path: path.into(),
            from: From::Container,
            image: image.into(),
        };
        let side = |images: Vec<ImageUse>| {
            vec![ClusterImages {
                cluster: "dev".into(),
                kustomizations: vec![KustomizationImages {
                    kustomization: "flux-system/apps".into(),
                    images,
                }],
            }]
        };
        let d = diff_images(
            &side(vec![
                use_("c[name=web]", "nginx:1.25"),
                use_("c[name=old]", "x:1"),
            ]),
            &side(vec![
                use_("c[name=web]", "nginx:1.27"),
                use_("c[name=new]", "y:1"),
            ]),
        );
        let got: Vec<(Option<String>, Option<String>)> = d[0]
            .changes
            .iter()
            .map(|c| (c.base.clone(), c.head.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, Some("y:1".into())),
                (Some("x:1".into()), None),
                (Some("nginx:1.25".into()), Some("nginx:1.27".into())),
            ]
        );
    }
}
