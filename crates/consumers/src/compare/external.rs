//! An external Kustomization (its source is not this repository, and no `--source` maps it)
//! is not rendered, so its artifact cannot be compared. What it applies is a function of its
//! own object (as its parent applies it: `spec.path`, `sourceRef`, `patches`, `postBuild`
//! ...), of the source object it names (URL, ref, ignore rules, what the source-controller
//! fetches) and of its `substituteFrom` ConfigMaps and Secrets; when every one of those is
//! byte-identical in both revisions, it applies the same thing in both: `identical
//! (external, unchanged)`. When one of them changed, or cannot be found where it must be, it
//! stays `not compared`, and the reason names what changed.
//!
//! A source that no render holds (the Flux Operator makes the `flux-system` source from a
//! `FluxInstance`'s `spec.sync`; source-watcher makes an ExternalArtifact from an
//! `ArtifactGenerator`) is made on the cluster by an object of the repository: then every
//! such maker must be identical too. A ResourceSet whose entry rendered in both revisions is
//! no such maker: what it generates is in the render (and so are the inputs its providers
//! give it); when every ResourceSet of both revisions rendered, no input provider is either.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::artifact::ArtifactObject;
use crate::flux::ObjectId;
use crate::model::{ClusterRender, KustomizationRender, Status};

/// The kinds that make Flux sources on the cluster from their own spec.
const SOURCE_MAKERS: &[(&str, &str)] = &[
    ("fluxcd.controlplane.io", "FluxInstance"),
    ("fluxcd.controlplane.io", "ResourceSet"),
    ("fluxcd.controlplane.io", "ResourceSetInputProvider"),
    ("source.extensions.fluxcd.io", "ArtifactGenerator"),
];

/// Every object the rendered Kustomizations of `cluster` apply, by id (the first owner in
/// the render's order when two apply the same id).
fn objects(cluster: &ClusterRender) -> BTreeMap<&ObjectId, &ArtifactObject> {
    let mut out = BTreeMap::new();
    for k in &cluster.kustomizations {
        for o in k.artifact.iter().flat_map(|a| &a.objects) {
            out.entry(&o.id).or_insert(o);
        }
    }
    out
}

/// The ResourceSets of `cluster` whose entry rendered (their ids as objects).
fn rendered_resourcesets(cluster: &ClusterRender) -> std::collections::BTreeSet<ObjectId> {
    cluster
        .kustomizations
        .iter()
        .filter(|k| k.status == Status::Rendered)
        .filter_map(crate::model::resourceset_of)
        .map(|r| ObjectId {
            group: crate::flux::OPERATOR_GROUP.into(),
            kind: "ResourceSet".into(),
            namespace: r.namespace,
            name: r.name,
        })
        .collect()
}

/// `Kind/namespace/name`, as the external messages name sources.
fn short(id: &ObjectId) -> String {
    if id.namespace.is_empty() {
        format!("{}/{}", id.kind, id.name)
    } else {
        format!("{}/{}/{}", id.kind, id.namespace, id.name)
    }
}

/// A value as one line: JSON, cut when long.
fn show(v: &Value) -> String {
    const MAX: usize = 160;
    let s = v.to_string();
    if s.len() <= MAX {
        return s;
    }
    let mut cut = MAX;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &s[..cut], s.len())
}

/// One field change on one line: `path: old -> new`, `path: new` (added), `path: old`
/// (removed), `path: order a, b -> b, a`; `masked` values print as `(masked)`.
fn change_line(c: &review::semantic::FieldChange, masked: bool) -> String {
    use review::semantic::Op;
    let value = |v: &Value| {
        if masked {
            "(masked)".to_string()
        } else {
            show(v)
        }
    };
    let path = &c.path;
    match &c.op {
        Op::Changed { before, after } => format!("{path}: {} -> {}", value(before), value(after)),
        Op::Added { after } => format!("{path}: {}", value(after)),
        Op::Removed { before } => format!("{path}: {}", value(before)),
        Op::Reordered { before, after } => {
            format!(
                "{path}: order {} -> {}",
                before.join(", "),
                after.join(", ")
            )
        }
    }
}

/// The field changes from `old` to `new`, on one line (Secret values masked unless shown),
/// from the review's semantic differ (`review::semantic::diff`), the one object differ.
fn changes(old: &ArtifactObject, new: &ArtifactObject, show_secrets: bool) -> String {
    const SHOWN: usize = 4;
    let secret = crate::mask::is_secret(&old.object) || crate::mask::is_secret(&new.object);
    let masked = |c: &review::semantic::FieldChange| {
        !show_secrets
            && secret
            && matches!(c.path.0.first(),
                Some(review::path::Segment::Key(k)) if k == "data" || k == "stringData")
    };
    let lines: Vec<String> = review::semantic::diff(&old.object, &new.object)
        .iter()
        .map(|c| change_line(c, masked(c)))
        .collect();
    let mut out = lines
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if lines.len() > SHOWN {
        let _ = write!(out, "; and {} more", lines.len() - SHOWN);
    }
    if out.is_empty() {
        // The same fields, written differently (key order, quoting).
        out = "its text".into();
    }
    out
}

/// Why an external Kustomization is not proven unchanged: what changed between base and head,
/// or what could not be checked. A verdict shown to the user, not a failure of fluxsim.
#[derive(Debug)]
pub(super) struct Unproven(pub(super) String);

/// One input of an external Kustomization, in base and head.
fn same_object(
    what: &ObjectId,
    base: &BTreeMap<&ObjectId, &ArtifactObject>,
    head: &BTreeMap<&ObjectId, &ArtifactObject>,
    show_secrets: bool,
) -> Result<bool, Unproven> {
    match (base.get(what), head.get(what)) {
        (Some(b), Some(h)) if b.yaml == h.yaml => Ok(true),
        (Some(b), Some(h)) => Err(Unproven(format!(
            "{} changed: {}",
            short(what),
            changes(b, h, show_secrets)
        ))),
        (Some(_), None) => Err(Unproven(format!("{} is applied in base only", short(what)))),
        (None, Some(_)) => Err(Unproven(format!("{} is applied in head only", short(what)))),
        (None, None) => Ok(false),
    }
}

/// Whether the Kustomization `k` (external in base, `bk`, and head, `hk`) applies the same in
/// both: `Ok` with what was checked, or `Err` naming what changed or could not be checked.
pub(super) fn external_unchanged(
    bk: &KustomizationRender,
    hk: &KustomizationRender,
    base: &ClusterRender,
    head: &ClusterRender,
    show_secrets: bool,
) -> Result<String, Unproven> {
    if !matches!(bk.status, Status::External(_)) || !matches!(hk.status, Status::External(_)) {
        return Err(Unproven("not external in both revisions".into()));
    }
    let (bo, ho) = (objects(base), objects(head));
    if let Some(release) = crate::model::release_of(bk) {
        return release_unchanged(&release, &bo, &ho, show_secrets);
    }
    let ks = &bk.kustomization;
    let own = ObjectId {
        group: crate::flux::KUSTOMIZE_GROUP.to_string(),
        kind: "Kustomization".into(),
        namespace: ks.id.namespace.clone(),
        name: ks.id.name.clone(),
    };
    if !same_object(&own, &bo, &ho, show_secrets)? {
        return Err(Unproven(format!(
            "{} is applied by no rendered Kustomization, so its spec cannot be compared",
            short(&own)
        )));
    }
    let mut checked = vec!["its Kustomization object".to_string()];
    // The object's bytes being the same, so is every field read below.
    if let Some(src) = &ks.source_ref {
        let source = ObjectId {
            group: "source.toolkit.fluxcd.io".into(),
            kind: src.kind.clone(),
            namespace: src.namespace.clone(),
            name: src.name.clone(),
        };
        if same_object(&source, &bo, &ho, show_secrets)? {
            checked.push(short(&source));
        } else {
            // Made on the cluster: by what?
            let makers = |side: &BTreeMap<&ObjectId, &ArtifactObject>| -> Vec<ObjectId> {
                side.keys()
                    .filter(|id| {
                        SOURCE_MAKERS
                            .iter()
                            .any(|(g, k)| id.group == *g && id.kind == *k)
                    })
                    .map(|id| (*id).clone())
                    .collect()
            };
            let mut all = makers(&bo);
            all.extend(makers(&ho));
            all.sort();
            all.dedup();
            let (br, hr) = (rendered_resourcesets(base), rendered_resourcesets(head));
            let every_rset_rendered =
                |c: &ClusterRender, r: &std::collections::BTreeSet<ObjectId>| {
                    objects(c)
                        .keys()
                        .filter(|id| crate::flux::is_resourceset_id(id))
                        .all(|id| r.contains(*id))
                };
            let providers_known = every_rset_rendered(base, &br) && every_rset_rendered(head, &hr);
            all.retain(|m| {
                let rset = crate::flux::is_resourceset_id(m);
                let provider =
                    m.group == crate::flux::OPERATOR_GROUP && m.kind == "ResourceSetInputProvider";
                let known =
                    (rset && br.contains(m) && hr.contains(m)) || (provider && providers_known);
                !known
            });
            for m in &all {
                same_object(m, &bo, &ho, show_secrets).map_err(|Unproven(e)| {
                    Unproven(format!(
                        "{} is not in the repository and may be made by {}: {e}",
                        short(&source),
                        short(m)
                    ))
                })?;
            }
            checked.push(if all.is_empty() {
                format!("{} (in neither revision)", short(&source))
            } else {
                format!(
                    "{} (in neither revision) and what may make it ({})",
                    short(&source),
                    all.iter().map(short).collect::<Vec<_>>().join(", ")
                )
            });
        }
    }
    for from in ks.post_build.iter().flat_map(|p| &p.substitute_from) {
        let var_source = ObjectId {
            group: String::new(),
            kind: from.kind.clone(),
            namespace: ks.id.namespace.clone(),
            name: from.name.clone(),
        };
        if same_object(&var_source, &bo, &ho, show_secrets)? {
            checked.push(short(&var_source));
        }
    }
    Ok(format!(
        "identical in base and head: {}",
        checked.join(", ")
    ))
}

/// Whether a HelmRelease whose chart could not be had in either revision installs the same
/// in both. What helm-controller renders is a function of the HelmRelease object (chart,
/// version, values, `postRenderers`, as its Kustomization applies it), of the source its
/// chart comes from (`spec.chart.spec.sourceRef`, or `spec.chartRef`: URL, ref, what the
/// source-controller fetches) and of its `valuesFrom` ConfigMaps and Secrets; each must be
/// byte-identical in both renders (a range version resolves the same for both: they are
/// looked at at one time).
fn release_unchanged(
    release: &crate::flux::NamespacedName,
    bo: &BTreeMap<&ObjectId, &ArtifactObject>,
    ho: &BTreeMap<&ObjectId, &ArtifactObject>,
    show_secrets: bool,
) -> Result<String, Unproven> {
    let own = ObjectId {
        group: "helm.toolkit.fluxcd.io".into(),
        kind: "HelmRelease".into(),
        namespace: release.namespace.clone(),
        name: release.name.clone(),
    };
    if !same_object(&own, bo, ho, show_secrets)? {
        return Err(Unproven(format!(
            "{} is applied by no rendered Kustomization, so its spec cannot be compared",
            short(&own)
        )));
    }
    let mut checked = vec!["its HelmRelease object".to_string()];
    // The same bytes in both: the fields read here are the same in both.
    let hr = &bo[&own].object;
    let spec = &hr["spec"];
    let reference = if spec["chartRef"].is_object() {
        &spec["chartRef"]
    } else {
        &spec["chart"]["spec"]["sourceRef"]
    };
    let kind = reference["kind"].as_str().unwrap_or_default();
    if kind.is_empty() {
        return Err(Unproven(format!("{} names no chart source", short(&own))));
    }
    let source = ObjectId {
        group: "source.toolkit.fluxcd.io".into(),
        kind: kind.into(),
        namespace: reference["namespace"]
            .as_str()
            .unwrap_or(&release.namespace)
            .into(),
        name: reference["name"].as_str().unwrap_or_default().into(),
    };
    if same_object(&source, bo, ho, show_secrets)? {
        checked.push(short(&source));
    } else {
        checked.push(format!("{} (in neither revision)", short(&source)));
    }
    for from in spec["valuesFrom"].as_array().into_iter().flatten() {
        let values = ObjectId {
            group: String::new(),
            kind: from["kind"].as_str().unwrap_or_default().into(),
            namespace: release.namespace.clone(),
            name: from["name"].as_str().unwrap_or_default().into(),
        };
        if same_object(&values, bo, ho, show_secrets)? {
            checked.push(short(&values));
        }
    }
    Ok(format!(
        "identical in base and head: {}",
        checked.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> ArtifactObject {
        ArtifactObject {
            api_version: v["apiVersion"].as_str().unwrap_or_default().to_string(),
            id: ObjectId {
                group: String::new(),
                kind: v["kind"].as_str().unwrap_or_default().to_string(),
                namespace: String::new(),
                name: "x".into(),
            },
            sha256: String::new(),
            yaml: v.to_string(),
            object: std::sync::Arc::new(v),
            origin: None,
        }
    }

    #[test]
    fn an_external_inputs_change_names_its_paths_with_list_items_by_merge_key() {
        let old = object(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "spec": {"replicas": 1, "containers": [{"name": "web", "image": "nginx:1.25"}]}}));
        let new = object(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "spec": {"replicas": 3, "team": "shop",
                "containers": [{"name": "web", "image": "nginx:1.26"}]}}));
        assert_eq!(
            changes(&old, &new, false),
            "spec.containers[name=web].image: \"nginx:1.25\" -> \"nginx:1.26\"; \
             spec.replicas: 1 -> 3; spec.team: \"shop\""
        );
    }

    #[test]
    fn an_external_secrets_values_are_masked_unless_shown() {
        let old = object(json!({"apiVersion": "v1", "kind": "Secret", "data": {"p": "eA=="}}));
        let new = object(json!({"apiVersion": "v1", "kind": "Secret", "data": {"p": "eQ=="}}));
        assert_eq!(changes(&old, &new, false), "data.p: (masked) -> (masked)");
        assert_eq!(changes(&old, &new, true), "data.p: \"eA==\" -> \"eQ==\"");
    }
}
