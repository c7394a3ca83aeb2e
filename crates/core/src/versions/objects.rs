//! The versions the objects on a converged cluster show: the controllers' images, Flux's
//! labels, a Flux Operator instance, the Kubernetes upgrade plans.

use std::collections::BTreeMap;

use serde_json::Value;

use super::apis::from_constraint;
use super::{numbers, Assumed, Basis, FluxVersion, KubeVersion};
use crate::flux::ObjectId;

/// One object on the cluster, as detection reads it.
pub struct Seen<'a> {
    /// Its id.
    pub id: &'a ObjectId,
    /// The object.
    pub object: &'a Value,
    /// Who put it there (`applied by flux-system/apps`, `bootstrap: ...`).
    pub from: &'a str,
}

/// The Flux version that the objects on a cluster show, strongest evidence first: the
/// kustomize-controller image (what runs the substitution), the label `flux install` puts on
/// Flux's own objects, a FluxInstance, a `flux-instance` chart's values, a `flux-manifests`
/// OCIRepository.
#[must_use]
pub fn flux_from_objects<'a>(
    objects: impl IntoIterator<Item = Seen<'a>>,
) -> Option<Assumed<FluxVersion>> {
    let mut best: BTreeMap<u8, Assumed<FluxVersion>> = BTreeMap::new();
    let mut put = |rank: u8, version: FluxVersion, what: String| {
        best.entry(rank).or_insert(Assumed {
            version,
            basis: Basis::Evidence { what, file: None },
        });
    };
    for Seen { id, object, from } in objects {
        match (id.group.as_str(), id.kind.as_str()) {
            ("apps", "Deployment") if id.name == "kustomize-controller" => {
                if let Some((image, v)) = controller_image(object) {
                    put(0, v, format!("`{id}` image `{image}` ({from})"));
                }
            }
            ("fluxcd.controlplane.io", "FluxInstance") => {
                let c = object
                    .pointer("/spec/distribution/version")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(v) = from_constraint(c) {
                    put(
                        2,
                        v,
                        format!("`{id}` spec.distribution.version `{c}` ({from})"),
                    );
                }
            }
            ("helm.toolkit.fluxcd.io", "HelmRelease")
                if chart_of(object) == Some("flux-instance") =>
            {
                let set = object
                    .pointer("/spec/values/instance/distribution/version")
                    .and_then(Value::as_str);
                // The flux-instance chart's values.yaml: instance.distribution.version "2.x".
                let c = set.unwrap_or("2.x");
                if let Some(v) = from_constraint(c) {
                    let how = if set.is_some() {
                        format!("values instance.distribution.version `{c}`")
                    } else {
                        "the chart's default instance.distribution.version `2.x`".to_string()
                    };
                    put(3, v, format!("`{id}` (chart flux-instance) {how} ({from})"));
                }
            }
            ("source.toolkit.fluxcd.io", "OCIRepository") => {
                let url = object
                    .pointer("/spec/url")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let tag = object.pointer("/spec/ref/tag").and_then(Value::as_str);
                if url.trim_end_matches('/').ends_with("/flux-manifests") {
                    if let Some(v) = tag.and_then(FluxVersion::parse) {
                        put(
                            4,
                            v,
                            format!("`{id}` {url} tag `{}` ({from})", tag.unwrap_or("")),
                        );
                    }
                }
            }
            _ => {}
        }
        // `flux install` labels every object it makes: app.kubernetes.io/part-of: flux,
        // app.kubernetes.io/version: v2.4.0 (flux2 pkg/manifestgen/install/templates).
        let labels = object.pointer("/metadata/labels");
        let part_of = labels
            .and_then(|l| l.get("app.kubernetes.io/part-of"))
            .and_then(Value::as_str);
        if part_of == Some("flux") {
            if let Some(v) = labels
                .and_then(|l| l.get("app.kubernetes.io/version"))
                .and_then(Value::as_str)
                .and_then(FluxVersion::parse)
            {
                put(
                    1,
                    v,
                    format!("`{id}` label app.kubernetes.io/version `{v}` ({from})"),
                );
            }
        }
    }
    best.into_values().next()
}

/// A kustomize-controller container image and the Flux release it belongs to: the
/// controller's minor is Flux's since v1.0.0 (Flux v2.0: flux2 `manifests/bases/
/// kustomize-controller/kustomization.yaml` of each release).
fn controller_image(deployment: &Value) -> Option<(String, FluxVersion)> {
    let containers = deployment
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)?;
    containers.iter().find_map(|c| {
        let image = c.get("image").and_then(Value::as_str)?;
        let tag = image.split('@').next()?.rsplit_once(':')?.1;
        let name = image.split('@').next()?.rsplit_once(':')?.0;
        if !name.ends_with("kustomize-controller") {
            return None;
        }
        let (major, minor, patch) = numbers(tag)?;
        (major == 1).then(|| (image.to_string(), FluxVersion { minor, patch }))
    })
}

/// The chart a HelmRelease names: `spec.chart.spec.chart`, or the last path segment of an
/// OCIRepository `chartRef` name (the Flux Operator's charts are referenced so).
fn chart_of(hr: &Value) -> Option<&str> {
    if let Some(c) = hr.pointer("/spec/chart/spec/chart").and_then(Value::as_str) {
        return Some(c.rsplit('/').next().unwrap_or(c));
    }
    hr.pointer("/spec/chartRef/name").and_then(Value::as_str)
}

/// The Kubernetes version objects on the cluster show: a tuppr `KubernetesUpgrade`
/// (`spec.kubernetes.version`), a system-upgrade-controller `Plan` upgrading k3s or RKE2
/// (`spec.version`).
#[must_use]
pub fn kube_from_objects<'a>(
    objects: impl IntoIterator<Item = Seen<'a>>,
) -> Option<Assumed<KubeVersion>> {
    for Seen { id, object, from } in objects {
        let found = match (id.group.as_str(), id.kind.as_str()) {
            ("tuppr.home-operations.com", "KubernetesUpgrade") => object
                .pointer("/spec/kubernetes/version")
                .and_then(Value::as_str)
                .map(|v| (v, "spec.kubernetes.version")),
            ("upgrade.cattle.io", "Plan") => {
                let image = object
                    .pointer("/spec/upgrade/image")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                (image.contains("k3s-upgrade") || image.contains("rke2-upgrade"))
                    .then(|| object.pointer("/spec/version").and_then(Value::as_str))
                    .flatten()
                    .map(|v| (v, "spec.version"))
            }
            _ => None,
        };
        if let Some((text, field)) = found {
            if let Some(v) = KubeVersion::parse(text) {
                return Some(Assumed {
                    version: v,
                    basis: Basis::Evidence {
                        what: format!("`{id}` {field} `{text}` ({from})"),
                        file: None,
                    },
                });
            }
        }
    }
    None
}
