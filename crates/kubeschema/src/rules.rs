//! The rules: stable ids `FS3xx`, never reused for another check. `FS30x` are the schema
//! checks of one object (will the API server accept it?), `FS31x`–`FS33x` the apply-time
//! hazards of a change between two renders, `FS34x` the cluster's ValidatingAdmissionPolicies
//! (`validate --policies`).

use crate::finding::{Rule, Severity};

/// An object, field or rule that could not be checked (no schema, CEL the crate cannot
/// evaluate, SOPS-encrypted data): listed, never claimed valid.
pub const NOT_VALIDATED: Rule = Rule {
    id: "FS300",
    name: "not-validated",
    severity: Severity::Info,
    summary: "An object, field or CEL rule that could not be checked against a schema, with the \
              reason.",
    help: "Add the CRD of the kind to the render or to the schema folder, or check it on a \
           cluster (`kubectl apply --dry-run=server`).",
};

/// A value that does not match its schema: type, enum, required, pattern, format, bounds.
pub const SCHEMA_VIOLATION: Rule = Rule {
    id: "FS301",
    name: "schema-violation",
    severity: Severity::Error,
    summary: "A field does not match its schema (type, required, enum, pattern, format, bounds): \
              the API server rejects the object and the Kustomization fails.",
    help: "Fix the value; after substitution, quote a var whose value must stay a string, and \
           leave a number unquoted where an integer belongs.",
};

/// A field the schema does not declare: server-side apply rejects it.
pub const UNKNOWN_FIELD: Rule = Rule {
    id: "FS302",
    name: "unknown-field",
    severity: Severity::Error,
    summary: "A field the schema does not declare: server-side apply (Flux's) rejects the object \
              (`field not declared in schema`).",
    help: "Check the spelling and the indentation of the field, and that the apiVersion is the \
           one whose schema has it.",
};

/// A kind of a known API group in a version the cluster does not serve.
pub const KIND_NOT_SERVED: Rule = Rule {
    id: "FS303",
    name: "kind-not-served",
    severity: Severity::Error,
    summary: "The apiVersion of a known API group does not serve this kind at the chosen \
              Kubernetes version, or the CRD does not serve that version: `no matches for kind`.",
    help: "Move the object to an apiVersion that is served (see the CRD's `spec.versions` or the \
           Kubernetes deprecation guide).",
};

/// A CEL rule (`x-kubernetes-validations`) of a CRD that the object fails.
pub const CEL_RULE_FAILED: Rule = Rule {
    id: "FS304",
    name: "cel-rule-failed",
    severity: Severity::Error,
    summary: "A CEL validation rule of the CRD (`x-kubernetes-validations`) evaluates to false \
              for the object: the API server rejects it.",
    help: "Read the rule's message: it says what the CRD requires.",
};

/// Duplicate keys in a list the server merges by key, or an element without any key.
pub const DUPLICATE_LIST_ENTRY: Rule = Rule {
    id: "FS305",
    name: "duplicate-list-entry",
    severity: Severity::Error,
    summary: "Two entries of a list merged by key (containers by name, env by name, ports by \
              port and protocol ...) have the same key, or an entry has no key: server-side apply \
              rejects the object.",
    help: "Remove or merge the duplicate entry (often a patch that adds an entry the base already \
           has).",
};

/// Labels, annotations or names the API server rejects.
pub const INVALID_METADATA: Rule = Rule {
    id: "FS306",
    name: "invalid-metadata",
    severity: Severity::Error,
    summary: "A label, annotation or namespace that the API server rejects (label values: at \
              most 63 characters of `[A-Za-z0-9_.-]`, starting and ending alphanumeric).",
    help: "Fix the value; a substituted var in a label must give a valid label value.",
};

/// An API version the cluster serves today that a later release removes (or deprecates).
pub const API_REMOVED_LATER: Rule = Rule {
    id: "FS307",
    name: "api-removed-in-a-later-release",
    severity: Severity::Warning,
    summary: "The object's apiVersion is served by the Flux (or Kubernetes) release the cluster \
              runs, but a later release removes it (or its own release deprecates it): the \
              upgrade makes the apply fail with `no matches for kind`.",
    help: "Move the object to the apiVersion the message names (the kind's storage version in \
           the newest release) before upgrading.",
};

/// A CEL rule over the API server's cost bounds: a CRD whose rule's estimated cost is over
/// the limit (the CRD is rejected), or an object whose rules run past the per-call limit or
/// the object's budget (the object is rejected). Past fluxsim's own deadline (`--timeout`)
/// the object is not validated (FS300), which is no defect of the repository.
pub const CEL_COST_EXCEEDED: Rule = Rule {
    id: "FS308",
    name: "cel-cost-exceeded",
    severity: Severity::Error,
    summary: "A CEL validation rule is over the API server's cost bounds: its estimated cost \
              makes the CRD rejected, or its evaluation on the object passes the per-call limit \
              or the object's budget: the apply fails.",
    help: "Bound what the rule iterates (`maxItems`, `maxProperties`, `maxLength` on the \
           lists, maps and strings it reads) or simplify it; the message says which bound.",
};

/// A change of a field the API server does not let an update change.
pub const IMMUTABLE_FIELD: Rule = Rule {
    id: "FS310",
    name: "immutable-field-change",
    severity: Severity::Error,
    summary: "The change touches a field that cannot be updated (a selector, a StatefulSet's \
              volumeClaimTemplates, a Job's template, a PVC's class or size down, a roleRef, an \
              immutable Secret's data ...): the apply fails and the Kustomization with it.",
    help: "Rename the object (a new object is created, the old one pruned), or delete it before \
           the merge; `spec.force: true` or the annotation `kustomize.toolkit.fluxcd.io/force: \
           enabled` makes Flux delete and recreate it.",
};

/// An immutable-field change that Flux applies by deleting and recreating the object.
pub const RECREATED_BY_FORCE: Rule = Rule {
    id: "FS311",
    name: "recreated-by-force",
    severity: Severity::Warning,
    summary: "An immutable field changes and force is on: Flux deletes the object and creates it \
              again (a destructive change: pods restart, a PVC's data goes).",
    help: "Nothing to do if the recreation is meant.",
};

/// Prune deletes a PersistentVolumeClaim: its volume (and its data) may go with it.
pub const PRUNE_VOLUME_CLAIM: Rule = Rule {
    id: "FS320",
    name: "prune-deletes-volume-claim",
    severity: Severity::Warning,
    summary: "A PersistentVolumeClaim leaves the render and prune deletes it: with a `Delete` \
              reclaim policy its volume and data go.",
    help: "Annotate it `kustomize.toolkit.fluxcd.io/prune: disabled` before removing it if the \
           data must stay.",
};

/// Prune deletes a Namespace: every object in it goes.
pub const PRUNE_NAMESPACE: Rule = Rule {
    id: "FS321",
    name: "prune-deletes-namespace",
    severity: Severity::Warning,
    summary: "A Namespace leaves the render and prune deletes it: every object in it goes, \
              whoever created it.",
    help: "Annotate it `kustomize.toolkit.fluxcd.io/prune: disabled` if something else still \
           lives there.",
};

/// Prune deletes a CustomResourceDefinition: every custom resource of it goes.
pub const PRUNE_CRD: Rule = Rule {
    id: "FS322",
    name: "prune-deletes-crd",
    severity: Severity::Warning,
    summary: "A CustomResourceDefinition leaves the render and prune deletes it: every custom \
              resource of that kind, in every namespace, goes with it.",
    help: "Annotate it `kustomize.toolkit.fluxcd.io/prune: disabled` before removing it, unless \
           the kind is meant to go.",
};

/// A state or scope holder that changes Kustomization: the old one may prune it first.
pub const MOVES_BETWEEN_KUSTOMIZATIONS: Rule = Rule {
    id: "FS323",
    name: "moves-between-kustomizations",
    severity: Severity::Warning,
    summary: "A PersistentVolumeClaim, Namespace or CRD moves to another Kustomization: if the \
              old one reconciles first, its prune deletes the object before the new one applies \
              it.",
    help: "Annotate it `kustomize.toolkit.fluxcd.io/prune: disabled` in the old place for the \
           move, or let the new Kustomization apply it first.",
};

/// A namespaced object whose namespace changes: a new object, and the old one pruned.
pub const NAMESPACE_CHANGE: Rule = Rule {
    id: "FS324",
    name: "namespace-change",
    severity: Severity::Warning,
    summary: "A namespaced object changes namespace: that is a new object in the new namespace, \
              and the old one is deleted by prune (delete + create, nothing carries over).",
    help: "Nothing to do if the move is meant; a PersistentVolumeClaim's data does not follow.",
};

/// `replicas` goes to 0.
pub const SCALED_TO_ZERO: Rule = Rule {
    id: "FS330",
    name: "scaled-to-zero",
    severity: Severity::Warning,
    summary: "`spec.replicas` goes to 0: the workload stops.",
    help: "Nothing to do if the stop is meant.",
};

/// `suspend: true` on a Flux object.
pub const FLUX_SUSPENDED: Rule = Rule {
    id: "FS331",
    name: "flux-suspended",
    severity: Severity::Warning,
    summary: "A Flux object gets `spec.suspend: true`: Flux stops reconciling it (and what it \
              applies) until it is resumed.",
    help: "Nothing to do if the pause is meant; remember to resume it.",
};

/// A HelmRelease's chart version changes major version.
pub const CHART_MAJOR_BUMP: Rule = Rule {
    id: "FS332",
    name: "chart-major-bump",
    severity: Severity::Warning,
    summary: "A HelmRelease's chart version changes its major version: by semantic versioning, \
              a breaking change of the chart's values or objects.",
    help: "Read the chart's upgrade notes for the new major version.",
};

/// A ValidatingAdmissionPolicy whose validation the object fails on create (or that fails
/// under `failurePolicy: Fail`): the binding's `validationActions` say how bad (Deny an
/// error, Warn a warning, Audit info).
pub const POLICY_VIOLATION: Rule = Rule {
    id: "FS340",
    name: "admission-policy-violation",
    severity: Severity::Error,
    summary: "A ValidatingAdmissionPolicy of the cluster, with its binding, rejects the object on \
              create (Deny), warns (Warn) or records an audit annotation (Audit).",
    help: "Read the policy's message: change the object, or the policy or its params if the \
           object is meant to be admitted.",
};

/// A ValidatingAdmissionPolicy that could not be checked offline for an object.
pub const POLICY_NOT_CHECKABLE: Rule = Rule {
    id: "FS341",
    name: "admission-policy-not-checkable",
    severity: Severity::Warning,
    summary: "A ValidatingAdmissionPolicy matches the object but fluxsim cannot evaluate it \
              offline (it reads `authorizer`, a namespace the render does not hold, a CEL \
              function fluxsim lacks): neither a pass nor a violation.",
    help: "Check the object against the policy on a cluster (`kubectl apply --dry-run=server`).",
};

/// An audit annotation a ValidatingAdmissionPolicy publishes for the object.
pub const POLICY_AUDIT_ANNOTATION: Rule = Rule {
    id: "FS342",
    name: "admission-policy-audit-annotation",
    severity: Severity::Info,
    summary: "A ValidatingAdmissionPolicy's `auditAnnotations` give a value for the object: the \
              API server records it in the audit event of the create.",
    help: "Nothing to do: this is what the audit log will say.",
};

/// A Kyverno policy of the cluster whose validation the object fails (`kyverno apply`).
pub const KYVERNO_VIOLATION: Rule = Rule {
    id: "FS343",
    name: "kyverno-policy-violation",
    severity: Severity::Error,
    summary: "A Kyverno policy of the cluster (ClusterPolicy, Policy or ValidatingPolicy), \
              evaluated by the Kyverno CLI, fails the object: Enforce or Deny rejects the \
              create (an error), Warn warns, Audit reports it (info).",
    help: "Read the policy's message: change the object, or the policy if the object is \
           meant to be admitted.",
};

/// Kyverno policies that could not be evaluated (no CLI, a rule error).
pub const KYVERNO_NOT_CHECKED: Rule = Rule {
    id: "FS344",
    name: "kyverno-policy-not-checked",
    severity: Severity::Warning,
    summary: "Kyverno policies of the cluster were not evaluated (the Kyverno CLI is not \
              installed, or it failed), or a rule errored on the object: neither a pass nor \
              a violation.",
    help: "Install the Kyverno CLI v1.19.1 as `kyverno` (scripts/install-tools), or read the \
           rule's error.",
};

/// Every rule, in id order.
pub const RULES: &[Rule] = &[
    NOT_VALIDATED,
    SCHEMA_VIOLATION,
    UNKNOWN_FIELD,
    KIND_NOT_SERVED,
    CEL_RULE_FAILED,
    DUPLICATE_LIST_ENTRY,
    INVALID_METADATA,
    API_REMOVED_LATER,
    CEL_COST_EXCEEDED,
    IMMUTABLE_FIELD,
    RECREATED_BY_FORCE,
    PRUNE_VOLUME_CLAIM,
    PRUNE_NAMESPACE,
    PRUNE_CRD,
    MOVES_BETWEEN_KUSTOMIZATIONS,
    NAMESPACE_CHANGE,
    SCALED_TO_ZERO,
    FLUX_SUSPENDED,
    CHART_MAJOR_BUMP,
    POLICY_VIOLATION,
    POLICY_NOT_CHECKABLE,
    POLICY_AUDIT_ANNOTATION,
    KYVERNO_VIOLATION,
    KYVERNO_NOT_CHECKED,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_sorted_and_fs3xx() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
        assert!(ids.iter().all(|id| id.starts_with("FS3") && id.len() == 5));
    }
}
