//! `validate --policies`: every rendered object of a cluster evaluated against the
//! ValidatingAdmissionPolicies and bindings the cluster's render applies and those of
//! `[validate] policies` files, as the API server admits a create by the Kustomization's
//! service account (kubeschema's `policy`, after apiserver
//! `pkg/admission/plugin/policy/validating`). Violations are FS340 (the binding's action:
//! Deny an error, Warn a warning, Audit info), what cannot be checked offline FS341, audit
//! annotations FS342; each at the object's file and line.

use std::collections::BTreeMap;

use kubeschema::policy::{Action, Admission, Kinds, Policies, PolicyOutcome, PolicyResult};
use serde_json::Value;

use crate::finding::Severity;
use crate::model::{ClusterRender, KustomizationRender};

/// The service account kustomize-controller applies as, unless a Kustomization names one.
const KUSTOMIZE_CONTROLLER: &str = "system:serviceaccount:flux-system:kustomize-controller";
/// The service account helm-controller installs a release as, unless it names one.
const HELM_CONTROLLER: &str = "system:serviceaccount:flux-system:helm-controller";

/// Who creates the objects of `k`: the Flux object's `spec.serviceAccountName` in its
/// namespace (read from the object the cluster's render applies), else the controller's own.
pub(crate) fn username(c: &ClusterRender, k: &KustomizationRender) -> String {
    let release = crate::model::is_release(k);
    let (group, kind) = if release {
        ("helm.toolkit.fluxcd.io", "HelmRelease")
    } else {
        ("kustomize.toolkit.fluxcd.io", "Kustomization")
    };
    let id = &k.kustomization.id;
    let named = c
        .kustomizations
        .iter()
        .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
        .find(|o| {
            o.id.group == group
                && o.id.kind == kind
                && o.id.name == id.name
                && o.id.namespace == id.namespace
        })
        .and_then(|o| crate::flux::str_at(&o.object, &["spec", "serviceAccountName"]))
        .filter(|s| !s.is_empty());
    match named {
        Some(sa) => format!("system:serviceaccount:{}:{sa}", id.namespace),
        None if release => HELM_CONTROLLER.to_string(),
        None => KUSTOMIZE_CONTROLLER.to_string(),
    }
}

/// Every rendered object of cluster `c`, with the indexes of its Kustomization and of the
/// object in its artifact (what a finding is placed by).
pub(crate) fn cluster_objects(c: &ClusterRender) -> Vec<(usize, usize, &Value)> {
    c.kustomizations
        .iter()
        .enumerate()
        .flat_map(|(ki, k)| {
            k.artifact
                .iter()
                .flat_map(|a| a.objects.iter().enumerate())
                .map(move |(oi, o)| (ki, oi, &*o.object))
        })
        .collect()
}

/// What the policies make of cluster `c`'s objects: its render's policies and bindings with
/// `extra` (those of the policy files; the render's win a name they share, as the cluster's
/// own are what applies), every object evaluated as a create by the service account of the
/// Kustomization (or HelmRelease) that applies it. Each result with the indexes of its
/// Kustomization and object.
pub(crate) fn cluster_results(
    c: &ClusterRender,
    extra: &[(String, Value)],
    extra_crds: &[(String, Value)],
    deadline: Option<std::time::Instant>,
) -> Vec<(usize, usize, PolicyResult)> {
    let objects = cluster_objects(c);
    let policies = Policies::of(
        extra
            .iter()
            .map(|(_, v)| v)
            .chain(objects.iter().map(|(_, _, o)| *o)),
    );
    if policies.is_empty() {
        return Vec::new();
    }
    let all: Vec<&Value> = objects.iter().map(|(_, _, o)| *o).collect();
    let kinds = Kinds::of(extra_crds.iter().map(|(_, v)| v).chain(all.iter().copied()));
    let namespaces: BTreeMap<String, &Value> = all
        .iter()
        .filter(|o| {
            o.get("apiVersion").and_then(Value::as_str) == Some("v1")
                && o.get("kind").and_then(Value::as_str) == Some("Namespace")
        })
        .filter_map(|o| crate::flux::str_at(o, &["metadata", "name"]).map(|n| (n.to_string(), *o)))
        .collect();
    let users: Vec<String> = c.kustomizations.iter().map(|k| username(c, k)).collect();
    let mut out = Vec::new();
    for (ki, oi, object) in &objects {
        let admission = Admission {
            namespaces: &namespaces,
            objects: &all,
            kinds: &kinds,
            username: &users[*ki],
            deadline,
        };
        for r in policies.evaluate(object, &admission) {
            out.push((*ki, *oi, r));
        }
    }
    out
}

/// A policy result as a finding's rule, severity and message (FS340 at the binding's
/// action's level, FS341, FS342).
pub(crate) fn judged(r: &PolicyResult) -> (&'static str, Severity, String) {
    match &r.outcome {
        PolicyOutcome::Violation {
            action, message, ..
        } => (
            "FS340",
            match action {
                Action::Deny => Severity::Error,
                Action::Warn => Severity::Warning,
                Action::Audit => Severity::Info,
            },
            message.clone(),
        ),
        PolicyOutcome::NotCheckable { reason } => (
            "FS341",
            Severity::Warning,
            format!(
                "ValidatingAdmissionPolicy '{}'{} not checkable offline: {reason}",
                r.policy,
                r.binding
                    .as_deref()
                    .map(|b| format!(" with binding '{b}'"))
                    .unwrap_or_default()
            ),
        ),
        PolicyOutcome::AuditAnnotation { key, value } => (
            "FS342",
            Severity::Info,
            format!("audit annotation `{key}`: {value}"),
        ),
    }
}
