//! Apply-time hazards of a change: what the API server refuses to update (immutable fields),
//! what Flux then recreates (`force`), what prune deletes that holds state or scope, and the
//! changes that stop things (replicas to 0, `suspend`, a chart's major version).
//!
//! Flux's side: `fluxcd/pkg/ssa` `manager_apply.go` (an immutable-field error with `force`
//! deletes the object and applies it again; `ForceSelector` is the annotation
//! `kustomize.toolkit.fluxcd.io/force: enabled`), kustomize-controller's prune (objects of the
//! previous inventory missing from the new one are deleted, unless annotated
//! `kustomize.toolkit.fluxcd.io/prune: disabled`). The Kubernetes side: each rule cites its
//! `pkg/apis/<group>/validation/validation.go` function.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::finding::{Finding, ObjectId, Rule, Severity};
use crate::formats::parse_quantity;
use crate::rules;

/// The annotation that exempts an object from prune.
pub const PRUNE_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/prune";
/// The annotation that makes Flux recreate an object on an immutable-field error.
pub const FORCE_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/force";

/// An object of a render with the settings of the Flux Kustomization that applies it.
#[derive(Debug, Clone, Copy)]
pub struct Applied<'a> {
    /// The rendered object.
    pub object: &'a Value,
    /// `spec.force` of the Kustomization.
    pub force: bool,
    /// `spec.prune` of the Kustomization.
    pub prune: bool,
    /// Which Kustomization applies it (any stable name, e.g. `flux-system/apps`): an object
    /// that changes owner between base and head is a move.
    pub owner: &'a str,
}

fn annotation<'v>(o: &'v Value, key: &str) -> Option<&'v str> {
    o.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn finding(rule: Rule, severity: Severity, object: &Value, path: &str, message: String) -> Finding {
    Finding {
        rule,
        severity,
        object: ObjectId::of(object),
        path: path.to_string(),
        schema_path: String::new(),
        message,
    }
}

/// An immutable field the change touches: its path and the API server's message.
struct Immutable {
    path: String,
    message: String,
}

fn get<'v>(o: &'v Value, pointer: &str) -> Option<&'v Value> {
    o.pointer(pointer).filter(|v| !v.is_null())
}

/// `ValidateImmutableField`'s message (apimachinery `pkg/api/validation/generic.go`).
fn immutable_at(base: &Value, head: &Value, pointer: &str, path: &str) -> Option<Immutable> {
    let (b, h) = (get(base, pointer), get(head, pointer));
    (b != h && b.is_some()).then(|| Immutable {
        path: path.to_string(),
        message: format!(
            "{path}: Invalid value: {}: field is immutable",
            h.map_or("null".to_string(), Value::to_string)
        ),
    })
}

/// The immutable-field changes from `base` to `head` (the same object), as the API server's
/// update validation would reject them.
fn immutable_changes(base: &Value, head: &Value) -> Vec<Immutable> {
    let id = ObjectId::of(head);
    let mut out = Vec::new();
    match (id.group.as_str(), id.kind.as_str()) {
        // pkg/apis/apps/validation/validation.go ValidateDeploymentUpdate,
        // ValidateReplicaSetUpdate, ValidateDaemonSetUpdate: the selector is immutable in
        // apps/v1.
        ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") => {
            out.extend(immutable_at(base, head, "/spec/selector", "spec.selector"));
        }
        // pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate: only replicas,
        // ordinals, template, updateStrategy, revisionHistoryLimit,
        // persistentVolumeClaimRetentionPolicy and minReadySeconds may change.
        ("apps", "StatefulSet") => out.extend(statefulset(base, head)),
        // pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate: selector and
        // template are immutable (the scheduling directives of a suspended Job aside).
        ("batch", "Job") => {
            out.extend(immutable_at(base, head, "/spec/selector", "spec.selector"));
            out.extend(immutable_at(base, head, "/spec/template", "spec.template"));
        }
        // pkg/apis/core/validation/validation.go ValidateServiceUpdate / ValidateServiceClusterIPsRelatedFields:
        // a set clusterIP may not change.
        ("", "Service") => out.extend(service(base, head)),
        // pkg/apis/core/validation/validation.go ValidatePersistentVolumeClaimUpdate.
        ("", "PersistentVolumeClaim") => out.extend(pvc(base, head)),
        // pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate,
        // ValidateClusterRoleBindingUpdate: "cannot change roleRef".
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            let (b, h) = (get(base, "/roleRef"), get(head, "/roleRef"));
            if b.is_some() && b != h {
                out.push(Immutable {
                    path: "roleRef".to_string(),
                    message: format!(
                        "roleRef: Invalid value: {}: cannot change roleRef",
                        h.map_or("null".to_string(), Value::to_string)
                    ),
                });
            }
        }
        // pkg/apis/core/validation/validation.go ValidateSecretUpdate, ValidateConfigMapUpdate:
        // with `immutable: true` the data may not change, nor `immutable` itself.
        ("", "Secret" | "ConfigMap") => out.extend(immutable_data(base, head, &id.kind)),
        _ => {}
    }
    out
}

fn statefulset(base: &Value, head: &Value) -> Vec<Immutable> {
    const MUTABLE: &[&str] = &[
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let spec = |o: &Value| -> BTreeMap<String, Value> {
        let mut m: BTreeMap<String, Value> = o
            .get("spec")
            .and_then(Value::as_object)
            .map(|s| {
                s.iter()
                    .filter(|(k, v)| !MUTABLE.contains(&k.as_str()) && !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        // Defaults the server fills in on both sides (pkg/apis/apps/v1/defaults.go).
        if m.get("podManagementPolicy").and_then(Value::as_str) == Some("OrderedReady") {
            m.remove("podManagementPolicy");
        }
        if let Some(Value::Array(vcts)) = m.get_mut("volumeClaimTemplates") {
            for t in vcts.iter_mut() {
                normalize_claim_template(t);
            }
            if vcts.is_empty() {
                m.remove("volumeClaimTemplates");
            }
        }
        m
    };
    let (b, h) = (spec(base), spec(head));
    if b == h {
        return Vec::new();
    }
    let changed: Vec<&str> = b
        .keys()
        .chain(h.keys())
        .filter(|k| b.get(*k) != h.get(*k))
        .map(String::as_str)
        .collect();
    let mut changed = changed;
    changed.sort_unstable();
    changed.dedup();
    vec![Immutable {
        path: format!("spec.{}", changed.first().copied().unwrap_or("")),
        message: format!(
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', \
             'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', \
             'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden \
             (changed: {})",
            changed.join(", ")
        ),
    }]
}

/// Drops what the API server defaults in a claim template, so that writing a default out
/// is no change.
fn normalize_claim_template(t: &mut Value) {
    let Some(m) = t.as_object_mut() else { return };
    if m.get("apiVersion").and_then(Value::as_str) == Some("v1") {
        m.remove("apiVersion");
    }
    if m.get("kind").and_then(Value::as_str) == Some("PersistentVolumeClaim") {
        m.remove("kind");
    }
    m.remove("status");
    if let Some(Value::Object(meta)) = m.get_mut("metadata") {
        meta.remove("creationTimestamp");
    }
    if let Some(Value::Object(spec)) = m.get_mut("spec") {
        if spec.get("volumeMode").and_then(Value::as_str) == Some("Filesystem") {
            spec.remove("volumeMode");
        }
    }
}

fn service(base: &Value, head: &Value) -> Vec<Immutable> {
    let ip = |o: &Value| {
        get(o, "/spec/clusterIP")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    match (ip(base), ip(head)) {
        (Some(b), Some(h)) if b != h => vec![Immutable {
            path: "spec.clusterIPs[0]".to_string(),
            message: format!("spec.clusterIPs[0]: Invalid value: {h:?}: may not change once set"),
        }],
        _ => Vec::new(),
    }
}

fn pvc(base: &Value, head: &Value) -> Vec<Immutable> {
    let mut out = Vec::new();
    let spec_msg =
        "spec: Forbidden: spec is immutable after creation except resources.requests and \
                    volumeAttributesClassName for bound claims";
    for (pointer, path) in [
        ("/spec/storageClassName", "spec.storageClassName"),
        ("/spec/accessModes", "spec.accessModes"),
        ("/spec/volumeMode", "spec.volumeMode"),
        ("/spec/selector", "spec.selector"),
        ("/spec/dataSource", "spec.dataSource"),
        ("/spec/dataSourceRef", "spec.dataSourceRef"),
    ] {
        let (b, h) = (get(base, pointer), get(head, pointer));
        // A class set where there was none is allowed (the beta annotation's migration), and
        // the default volumeMode written out is no change.
        let defaulted = pointer == "/spec/volumeMode"
            && b.and_then(Value::as_str).unwrap_or("Filesystem")
                == h.and_then(Value::as_str).unwrap_or("Filesystem");
        if b != h && b.is_some() && !defaulted {
            out.push(Immutable {
                path: path.to_string(),
                message: format!("{spec_msg} ({path} changed)"),
            });
        }
    }
    let size = |o: &Value| get(o, "/spec/resources/requests/storage").and_then(quantity);
    if let (Some(b), Some(h)) = (size(base), size(head)) {
        if h < b {
            out.push(Immutable {
                path: "spec.resources.requests.storage".to_string(),
                message: "spec.resources.requests.storage: Forbidden: field can not be less than \
                          status.capacity"
                    .to_string(),
            });
        }
    }
    out
}

fn quantity(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => parse_quantity(s),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

fn immutable_data(base: &Value, head: &Value, kind: &str) -> Vec<Immutable> {
    if base.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if head.get("immutable").and_then(Value::as_bool) != Some(true) {
        out.push(Immutable {
            path: "immutable".to_string(),
            message: "immutable: Forbidden: field is immutable when `immutable` is set".to_string(),
        });
    }
    let fields: &[&str] = if kind == "Secret" {
        &["data", "stringData"]
    } else {
        &["data", "binaryData"]
    };
    for f in fields {
        let empty = Value::Object(serde_json::Map::new());
        let (b, h) = (
            base.get(*f).unwrap_or(&empty),
            head.get(*f).unwrap_or(&empty),
        );
        if b != h {
            out.push(Immutable {
                path: (*f).to_string(),
                message: format!("{f}: Forbidden: field is immutable when `immutable` is set"),
            });
        }
    }
    out
}

/// The hazards of applying `head` over `base`, the same object in two renders, with the
/// settings of the Kustomization that applies `head`: immutable-field changes (recreated when
/// force is on), replicas to 0, `suspend: true` on a Flux object, a HelmRelease chart major
/// bump.
pub fn change_hazards(base: &Value, head: &Value, force: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let forced = force || annotation(head, FORCE_ANNOTATION) == Some("enabled");
    let id = ObjectId::of(head);
    for change in immutable_changes(base, head) {
        if forced {
            out.push(finding(
                rules::RECREATED_BY_FORCE,
                rules::RECREATED_BY_FORCE.severity,
                head,
                &change.path,
                format!(
                    "{id} immutable field detected: Flux deletes and recreates it ({})",
                    change.message
                ),
            ));
        } else {
            out.push(finding(
                rules::IMMUTABLE_FIELD,
                rules::IMMUTABLE_FIELD.severity,
                head,
                &change.path,
                format!(
                    "{id} dry-run failed (Invalid): {} \"{}\" is invalid: {}",
                    id.kind, id.name, change.message
                ),
            ));
        }
    }
    let replicas = |o: &Value| o.pointer("/spec/replicas").and_then(Value::as_i64);
    if replicas(head) == Some(0) && replicas(base) != Some(0) {
        out.push(finding(
            rules::SCALED_TO_ZERO,
            rules::SCALED_TO_ZERO.severity,
            head,
            "spec.replicas",
            format!("{id}: spec.replicas goes to 0"),
        ));
    }
    let suspended = |o: &Value| o.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    if id.group.ends_with(".toolkit.fluxcd.io") && suspended(head) && !suspended(base) {
        out.push(finding(
            rules::FLUX_SUSPENDED,
            rules::FLUX_SUSPENDED.severity,
            head,
            "spec.suspend",
            format!("{id}: spec.suspend becomes true"),
        ));
    }
    if id.group == "helm.toolkit.fluxcd.io" && id.kind == "HelmRelease" {
        let version = |o: &Value| {
            o.pointer("/spec/chart/spec/version")
                .and_then(Value::as_str)
                .and_then(exact_major)
        };
        if let (Some(b), Some(h)) = (version(base), version(head)) {
            if h.0 > b.0 {
                out.push(finding(
                    rules::CHART_MAJOR_BUMP,
                    rules::CHART_MAJOR_BUMP.severity,
                    head,
                    "spec.chart.spec.version",
                    format!(
                        "{id}: chart version {} → {} (major {} → {})",
                        b.1, h.1, b.0, h.0
                    ),
                ));
            }
        }
    }
    out
}

/// The major version of an exact semantic version (`1.2.3`, `v1.2.3`); ranges give `None`.
fn exact_major(v: &str) -> Option<(u64, String)> {
    let t = v.trim().trim_start_matches('v');
    let core = t.split(['-', '+']).next()?;
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3
        || !parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some((parts[0].parse().ok()?, v.trim().to_string()))
}

/// The hazards of prune deleting `deleted` (an object of the base render that the head no
/// longer has): PersistentVolumeClaims, Namespaces, CRDs. `custom_resources` are the objects
/// of the base render that a deleted CRD takes with it (listed in the message). Nothing when
/// prune is off or the object is annotated `kustomize.toolkit.fluxcd.io/prune: disabled`.
pub fn deletion_hazards(
    deleted: &Value,
    prune: bool,
    custom_resources: &[ObjectId],
) -> Vec<Finding> {
    if !prune || annotation(deleted, PRUNE_ANNOTATION) == Some("disabled") {
        return Vec::new();
    }
    let id = ObjectId::of(deleted);
    let (rule, message) = match (id.group.as_str(), id.kind.as_str()) {
        ("", "PersistentVolumeClaim") => (
            rules::PRUNE_VOLUME_CLAIM,
            format!("{id} is deleted by prune: its volume goes with it when the reclaim policy is Delete"),
        ),
        ("", "Namespace") => (rules::PRUNE_NAMESPACE, format!("{id} is deleted by prune: every object in it goes")),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            let listed = if custom_resources.is_empty() {
                "every custom resource of it goes".to_string()
            } else {
                let names: Vec<String> = custom_resources.iter().take(5).map(ToString::to_string).collect();
                let more = custom_resources.len().saturating_sub(5);
                format!(
                    "every custom resource of it goes, {} in this render: {}{}",
                    custom_resources.len(),
                    names.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                )
            };
            (rules::PRUNE_CRD, format!("{id} is deleted by prune: {listed}"))
        }
        _ => return Vec::new(),
    };
    vec![finding(rule, rule.severity, deleted, "", message)]
}

fn holds_state(id: &ObjectId) -> bool {
    matches!(
        (id.group.as_str(), id.kind.as_str()),
        ("", "PersistentVolumeClaim" | "Namespace")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
    )
}

/// The hazards between two renders of a cluster (or of one Kustomization): objects are paired
/// by group, kind, namespace and name; pairs go through [`change_hazards`], objects only in
/// `base` through [`deletion_hazards`] (a CRD lists the base's custom resources of its kind);
/// a namespaced object found in `head` under another namespace is a namespace change (delete
/// + create); a state holder whose owner changes is a move between Kustomizations. Sorted.
pub fn compare_renders(base: &[Applied<'_>], head: &[Applied<'_>]) -> Vec<Finding> {
    let key = |o: &Value| {
        let id = ObjectId::of(o);
        (id.group, id.kind, id.namespace, id.name)
    };
    let head_by_key: HashMap<_, &Applied<'_>> = head.iter().map(|a| (key(a.object), a)).collect();
    let base_keys: std::collections::HashSet<_> = base.iter().map(|a| key(a.object)).collect();
    let mut out = Vec::new();
    for b in base {
        let k = key(b.object);
        if let Some(h) = head_by_key.get(&k) {
            out.extend(change_hazards(b.object, h.object, h.force));
            let id = ObjectId::of(b.object);
            if b.owner != h.owner
                && b.prune
                && holds_state(&id)
                && annotation(b.object, PRUNE_ANNOTATION) != Some("disabled")
            {
                out.push(finding(
                    rules::MOVES_BETWEEN_KUSTOMIZATIONS,
                    rules::MOVES_BETWEEN_KUSTOMIZATIONS.severity,
                    h.object,
                    "",
                    format!(
                        "{id} moves from {} to {}: {} prunes it if it reconciles first",
                        b.owner, h.owner, b.owner
                    ),
                ));
            }
            continue;
        }
        // The same object under another namespace: delete + create.
        let moved = (!k.2.is_empty())
            .then(|| {
                head.iter().find(|h| {
                    let hk = key(h.object);
                    hk.0 == k.0
                        && hk.1 == k.1
                        && hk.3 == k.3
                        && !hk.2.is_empty()
                        && !base_keys.contains(&hk)
                })
            })
            .flatten();
        if let Some(h) = moved {
            let to = ObjectId::of(h.object);
            out.push(finding(
                rules::NAMESPACE_CHANGE,
                rules::NAMESPACE_CHANGE.severity,
                h.object,
                "metadata.namespace",
                format!("{}/{} moves from namespace {} to {}: a new object is created and the old one {}", k.1, k.3, k.2, to.namespace, if b.prune { "pruned" } else { "left behind (prune is off)" }),
            ));
        }
        let crs: Vec<ObjectId> = if k.1 == "CustomResourceDefinition" {
            let group = b
                .object
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kind = b
                .object
                .pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut v: Vec<ObjectId> = base
                .iter()
                .map(|a| ObjectId::of(a.object))
                .filter(|i| i.group == group && i.kind == kind)
                .collect();
            v.sort();
            v
        } else {
            Vec::new()
        };
        out.extend(deletion_hazards(b.object, b.prune, &crs));
    }
    out.sort_by(|a, b| (&a.object, &a.path, a.rule.id).cmp(&(&b.object, &b.path, b.rule.id)));
    out
}
