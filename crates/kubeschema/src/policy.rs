//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`) and its bindings, evaluated
//! offline as the API server evaluates them on a create (apiserver
//! `pkg/admission/plugin/policy/validating/dispatcher.go` and `validator.go`, matching in
//! `pkg/admission/plugin/policy/matching/matching.go` with the webhook predicates
//! `pkg/admission/plugin/webhook/predicates/{rules,namespace,object}`, params in
//! `pkg/admission/plugin/policy/generic/policy_dispatcher.go` `CollectParams`).
//!
//! What is evaluated: `matchConstraints` (resource rules, `excludeResourceRules`,
//! `namespaceSelector`, `objectSelector`, `matchPolicy`), the binding's `matchResources`,
//! `matchConditions`, `paramKind` with the binding's `paramRef` (name, namespace, selector,
//! `parameterNotFoundAction`), `variables`, `validations` (`message`, `messageExpression`,
//! `reason`), `auditAnnotations`, `failurePolicy` and the binding's `validationActions`.
//! CEL runs in the crate's environment, metered as the API server meters it (`PerCallLimit`
//! per expression, `RuntimeCELCostBudget` per evaluation of a policy with one binding and
//! one param).
//!
//! What is never guessed (reported [`PolicyOutcome::NotCheckable`]): an expression that reads
//! `authorizer` (offline there is no authorizer; the stub answers nothing), directly or
//! through a variable; one that reads `namespaceObject` when the namespace is not in the
//! render; a `namespaceSelector` on labels of a namespace the render does not hold; an
//! expression the crate's CEL does not parse or cannot evaluate (a Kubernetes library
//! function it lacks); a resource matched only through `matchPolicy: Equivalent` in another
//! version (the API server converts the object first; fluxsim cannot); a `paramKind` the
//! render neither holds objects of nor knows the kind of; the caller's deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::objects::{Key, Map};
use cel::{Context, ExecutionError};
use serde_json::Value;

use crate::cost::{metered, Stop, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET};

/// apiserver `pkg/apis/cel/config.go` `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;
/// The label the API server puts on every Namespace (`kubernetes.io/metadata.name`,
/// apiserver `NamespaceDefaultLabelName`): known even for a namespace the render lacks.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// A binding's `validationActions` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// The request is denied (fluxsim: an error).
    Deny,
    /// The client gets a warning (fluxsim: a warning).
    Warn,
    /// The audit event gets an annotation (fluxsim: info).
    Audit,
}

/// What one policy (with one binding, when there is one) makes of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyResult {
    /// The ValidatingAdmissionPolicy's name.
    pub policy: String,
    /// The binding's name (`None` for what concerns the policy alone).
    pub binding: Option<String>,
    /// What happened.
    pub outcome: PolicyOutcome,
}

/// The outcome of a policy on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyOutcome {
    /// A validation is false, or failed under `failurePolicy: Fail`: one result per action
    /// of the binding, with the API server's words for that action.
    Violation {
        /// Deny, Warn or Audit.
        action: Action,
        /// The message as the API server words it for the action.
        message: String,
        /// The validation's index, when one failed.
        validation: Option<usize>,
    },
    /// An audit annotation the policy publishes (`policy/key` and its value).
    AuditAnnotation {
        /// `policy/key`.
        key: String,
        /// The value.
        value: String,
    },
    /// Not checked offline, and why: never a pass or a violation.
    NotCheckable {
        /// Why.
        reason: String,
    },
}

/// One CEL expression of a policy, compiled once.
#[derive(Debug)]
struct Expression {
    source: String,
    program: Result<IdedExpr, String>,
    idents: BTreeSet<String>,
    variables: BTreeSet<String>,
}

impl Expression {
    fn new(source: &str) -> Expression {
        let (program, idents, variables) = match crate::cel::env().compile(source) {
            Ok(p) => {
                let mut idents = BTreeSet::new();
                let mut variables = BTreeSet::new();
                references(p.expression(), &mut idents, &mut variables);
                (
                    Ok(crate::cost::instrument(p.expression())),
                    idents,
                    variables,
                )
            }
            Err(e) => (
                Err(e.to_string().lines().next().unwrap_or_default().to_string()),
                BTreeSet::new(),
                BTreeSet::new(),
            ),
        };
        Expression {
            source: source.trim().to_string(),
            program,
            idents,
            variables,
        }
    }

    fn reads(&self, name: &str) -> bool {
        self.idents.contains(name)
    }
}

/// The identifiers an expression reads, and the `variables.<name>` it selects.
fn references(e: &IdedExpr, idents: &mut BTreeSet<String>, vars: &mut BTreeSet<String>) {
    match &e.expr {
        Expr::Ident(n) => {
            idents.insert(n.clone());
        }
        Expr::Select(s) => {
            if matches!(&s.operand.expr, Expr::Ident(n) if n == "variables") {
                vars.insert(s.field.clone());
            }
            references(&s.operand, idents, vars);
        }
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref() {
                references(t, idents, vars);
            }
            for a in &c.args {
                references(a, idents, vars);
            }
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                references(x, idents, vars);
            }
        }
        Expr::List(l) => {
            for x in &l.elements {
                references(x, idents, vars);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::MapEntry(me) => {
                        references(&me.key, idents, vars);
                        references(&me.value, idents, vars);
                    }
                    EntryExpr::StructField(f) => references(&f.value, idents, vars),
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                match &entry.expr {
                    EntryExpr::StructField(f) => references(&f.value, idents, vars),
                    EntryExpr::MapEntry(me) => references(&me.value, idents, vars),
                }
            }
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

#[derive(Debug)]
struct Validation {
    expression: Expression,
    message: Option<String>,
    message_expression: Option<Expression>,
}

#[derive(Debug)]
struct Policy {
    name: String,
    /// `failurePolicy: Fail` (the default).
    fail: bool,
    match_constraints: Option<Value>,
    /// `paramKind`: (group, kind).
    param_kind: Option<(String, String)>,
    match_conditions: Vec<(String, Expression)>,
    variables: Vec<(String, Expression)>,
    validations: Vec<Validation>,
    audit_annotations: Vec<(String, Expression)>,
}

#[derive(Debug)]
struct Binding {
    name: String,
    policy: String,
    param_ref: Option<Value>,
    match_resources: Option<Value>,
    actions: Vec<Action>,
}

fn str_of<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    let mut at = v;
    for p in path {
        at = at.get(p)?;
    }
    at.as_str()
}

fn list<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Whether `object` is an `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy or
/// ValidatingAdmissionPolicyBinding.
#[must_use]
pub fn is_policy_object(object: &Value) -> bool {
    object.get("apiVersion").and_then(Value::as_str) == Some("admissionregistration.k8s.io/v1")
        && matches!(
            object.get("kind").and_then(Value::as_str),
            Some("ValidatingAdmissionPolicy" | "ValidatingAdmissionPolicyBinding")
        )
}

/// What a cluster knows of its kinds: each custom kind's plural, scope and served versions,
/// from its CRDs; built-in kinds by the API server's rules.
#[derive(Debug, Default, Clone)]
pub struct Kinds {
    /// `(group, kind)` → (plural, namespaced, served versions).
    custom: BTreeMap<(String, String), (String, bool, Vec<String>)>,
}

/// Built-in kinds that are cluster-scoped (k8s.io/api, the kinds without a namespace).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterTrustBundle",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "DeviceClass",
    "FlowSchema",
    "IngressClass",
    "IPAddress",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "ServiceCIDR",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
    "VolumeAttributesClass",
];

impl Kinds {
    /// The kinds of the CRDs among `objects` (other objects are skipped).
    #[must_use]
    pub fn of<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Kinds {
        let mut out = Kinds::default();
        for o in objects {
            if !crate::is_crd(o) {
                continue;
            }
            let spec = o.get("spec").unwrap_or(&Value::Null);
            let (Some(g), Some(k), Some(p)) = (
                str_of(spec, &["group"]),
                str_of(spec, &["names", "kind"]),
                str_of(spec, &["names", "plural"]),
            ) else {
                continue;
            };
            let versions = list(spec, "versions")
                .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
                .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                .collect();
            out.custom.insert(
                (g.to_string(), k.to_string()),
                (
                    p.to_string(),
                    str_of(spec, &["scope"]) != Some("Cluster"),
                    versions,
                ),
            );
        }
        out
    }

    fn known(&self, group: &str, kind: &str) -> bool {
        self.custom
            .contains_key(&(group.to_string(), kind.to_string()))
            || !group.contains('.')
            || group.ends_with(".k8s.io")
    }

    /// The resource (plural) of a kind: its CRD's, else the API server's rule for built-ins.
    #[must_use]
    pub fn plural(&self, group: &str, kind: &str) -> String {
        if let Some((p, _, _)) = self.custom.get(&(group.to_string(), kind.to_string())) {
            return p.clone();
        }
        builtin_plural(kind)
    }

    /// Whether a kind is namespaced: its CRD's scope, else the built-in kinds' scopes.
    #[must_use]
    pub fn namespaced(&self, group: &str, kind: &str) -> bool {
        match self.custom.get(&(group.to_string(), kind.to_string())) {
            Some((_, n, _)) => *n,
            None => !CLUSTER_SCOPED.contains(&kind),
        }
    }

    fn versions(&self, group: &str, kind: &str) -> &[String] {
        self.custom
            .get(&(group.to_string(), kind.to_string()))
            .map_or(&[], |(_, _, v)| v.as_slice())
    }
}

/// The policies and bindings of a cluster, compiled once.
#[derive(Debug, Default)]
pub struct Policies {
    policies: Vec<Policy>,
    bindings: Vec<Binding>,
}

/// What one object is evaluated with: the cluster's Namespaces and objects (params come from
/// these), its kinds, and who creates it.
pub struct Admission<'a> {
    /// The Namespaces of the render, by name.
    pub namespaces: &'a BTreeMap<String, &'a Value>,
    /// Every object of the render (param candidates).
    pub objects: &'a [&'a Value],
    /// The cluster's kinds.
    pub kinds: &'a Kinds,
    /// The user the request is made by (`system:serviceaccount:flux-system:kustomize-controller`).
    pub username: &'a str,
    /// CEL stops here (`--timeout`); an expression stopped is not checkable.
    pub deadline: Option<Instant>,
}

impl Policies {
    /// The policies and bindings among `objects` (later ones of the same name replace
    /// earlier ones, as an apply does); other objects are skipped.
    #[must_use]
    pub fn of<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Policies {
        let mut out = Policies::default();
        for o in objects {
            if !is_policy_object(o) {
                continue;
            }
            let name = str_of(o, &["metadata", "name"])
                .unwrap_or_default()
                .to_string();
            let spec = o.get("spec").unwrap_or(&Value::Null);
            if o.get("kind").and_then(Value::as_str) == Some("ValidatingAdmissionPolicy") {
                out.policies.retain(|p| p.name != name);
                out.policies.push(policy(name, spec));
            } else {
                out.bindings.retain(|b| b.name != name);
                out.bindings.push(Binding {
                    name,
                    policy: str_of(spec, &["policyName"])
                        .unwrap_or_default()
                        .to_string(),
                    param_ref: spec.get("paramRef").filter(|v| v.is_object()).cloned(),
                    match_resources: spec
                        .get("matchResources")
                        .filter(|v| v.is_object())
                        .cloned(),
                    actions: list(spec, "validationActions")
                        .filter_map(Value::as_str)
                        .filter_map(|a| match a {
                            "Deny" => Some(Action::Deny),
                            "Warn" => Some(Action::Warn),
                            "Audit" => Some(Action::Audit),
                            _ => None,
                        })
                        .collect(),
                });
            }
        }
        out.policies.sort_by(|a, b| a.name.cmp(&b.name));
        out.bindings.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Whether there is no policy.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// What every policy and binding makes of creating `object`, in policy then binding
    /// order.
    #[must_use]
    pub fn evaluate(&self, object: &Value, a: &Admission<'_>) -> Vec<PolicyResult> {
        let mut out = Vec::new();
        let req = Request::of(object, a);
        for p in &self.policies {
            let result = |binding: Option<&str>, outcome| PolicyResult {
                policy: p.name.clone(),
                binding: binding.map(str::to_string),
                outcome,
            };
            match matches(p.match_constraints.as_ref(), &req, a, true) {
                Match::No => continue,
                Match::Unknown(reason) => {
                    out.push(result(None, PolicyOutcome::NotCheckable { reason }));
                    continue;
                }
                Match::Yes => {}
            }
            for b in self.bindings.iter().filter(|b| b.policy == p.name) {
                if let Some(m) = &b.match_resources {
                    match matches(Some(m), &req, a, false) {
                        Match::No => continue,
                        Match::Unknown(reason) => {
                            out.push(result(
                                Some(&b.name),
                                PolicyOutcome::NotCheckable { reason },
                            ));
                            continue;
                        }
                        Match::Yes => {}
                    }
                }
                let params = match collect_params(p, b, &req, a) {
                    Params::Found(list) => list,
                    Params::Unknown(reason) => {
                        out.push(result(
                            Some(&b.name),
                            PolicyOutcome::NotCheckable { reason },
                        ));
                        continue;
                    }
                    Params::ConfigError(e) => {
                        // dispatcher.go addConfigError: Fail denies whatever the actions.
                        if p.fail {
                            out.push(result(
                                Some(&b.name),
                                PolicyOutcome::Violation {
                                    action: Action::Deny,
                                    message: format!(
                                        "ValidatingAdmissionPolicy '{}' with binding '{}' \
                                         denied request: failed to configure binding: {e}",
                                        p.name, b.name
                                    ),
                                    validation: None,
                                },
                            ));
                        }
                        continue;
                    }
                };
                for param in params {
                    for outcome in evaluate(p, b, &req, param, a) {
                        out.push(result(Some(&b.name), outcome));
                    }
                }
            }
        }
        out
    }
}

fn policy(name: String, spec: &Value) -> Policy {
    let named = |key: &str, field: &str| -> Vec<(String, Expression)> {
        list(spec, key)
            .map(|c| {
                (
                    str_of(c, &[field]).unwrap_or_default().to_string(),
                    Expression::new(
                        str_of(c, &["expression"])
                            .or(str_of(c, &["valueExpression"]))
                            .unwrap_or_default(),
                    ),
                )
            })
            .collect()
    };
    Policy {
        fail: str_of(spec, &["failurePolicy"]) != Some("Ignore"),
        match_constraints: spec
            .get("matchConstraints")
            .filter(|v| v.is_object())
            .cloned(),
        param_kind: spec.get("paramKind").and_then(|k| {
            let api = str_of(k, &["apiVersion"])?;
            let kind = str_of(k, &["kind"])?;
            Some((split_api_version(api).0.to_string(), kind.to_string()))
        }),
        match_conditions: named("matchConditions", "name"),
        variables: named("variables", "name"),
        validations: list(spec, "validations")
            .map(|v| Validation {
                expression: Expression::new(str_of(v, &["expression"]).unwrap_or_default()),
                message: str_of(v, &["message"])
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty()),
                message_expression: str_of(v, &["messageExpression"]).map(Expression::new),
            })
            .collect(),
        audit_annotations: named("auditAnnotations", "key"),
        name,
    }
}

/// The request's attributes, as the matchers and `request` read them.
struct Request<'a> {
    object: &'a Value,
    group: String,
    version: String,
    kind: String,
    resource: String,
    name: String,
    /// The namespace of a namespaced object (`""` for a cluster-scoped one).
    namespace: String,
    namespaced: bool,
    username: String,
}

impl<'a> Request<'a> {
    fn of(object: &'a Value, a: &Admission<'_>) -> Request<'a> {
        let (group, version) =
            split_api_version(str_of(object, &["apiVersion"]).unwrap_or_default());
        let kind = str_of(object, &["kind"]).unwrap_or_default();
        let namespaced = a.kinds.namespaced(group, kind);
        // A namespaced object without a namespace goes to `default`, as a client's request.
        let namespace = if namespaced {
            str_of(object, &["metadata", "namespace"])
                .filter(|n| !n.is_empty())
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        Request {
            object,
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            resource: a.kinds.plural(group, kind),
            name: str_of(object, &["metadata", "name"])
                .unwrap_or_default()
                .to_string(),
            namespace,
            namespaced,
            username: a.username.to_string(),
        }
    }

    fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.kind == "Namespace"
    }

    /// `request` as `cel.CreateAdmissionRequest` builds it, for a create.
    fn to_cel(&self) -> cel::Value {
        let gvk =
            serde_json::json!({"group": self.group, "version": self.version, "kind": self.kind});
        let gvr = serde_json::json!({"group": self.group, "version": self.version, "resource": self.resource});
        let mut groups = Vec::new();
        if let Some(rest) = self.username.strip_prefix("system:serviceaccount:") {
            if let Some((ns, _)) = rest.split_once(':') {
                groups.push("system:serviceaccounts".to_string());
                groups.push(format!("system:serviceaccounts:{ns}"));
            }
        }
        groups.push("system:authenticated".to_string());
        crate::cel::untyped(&serde_json::json!({
            "kind": gvk, "resource": gvr, "subResource": "",
            "requestKind": gvk, "requestResource": gvr, "requestSubResource": "",
            "name": self.name, "namespace": self.namespace, "operation": "CREATE",
            "userInfo": {"username": self.username, "groups": groups},
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "kustomize-controller"},
        }))
    }
}

/// A matcher's answer.
#[derive(Debug, PartialEq, Eq)]
enum Match {
    Yes,
    No,
    Unknown(String),
}

/// `matching.Matcher.Matches` for a create: namespaceSelector, objectSelector, then
/// excludeResourceRules and resourceRules (an empty list matches every resource).
/// `defaulted`: the policy's matchConstraints, which the API server defaults
/// (`matchPolicy: Equivalent`).
fn matches(m: Option<&Value>, req: &Request<'_>, a: &Admission<'_>, policy: bool) -> Match {
    let Some(m) = m else {
        // A policy without matchConstraints matches nothing (the API server requires them).
        return if policy { Match::No } else { Match::Yes };
    };
    let ns = namespace_selector(m.get("namespaceSelector"), req, a);
    if ns == Match::No {
        return Match::No;
    }
    let labels = req
        .object
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    match m
        .get("objectSelector")
        .map(|s| selector_matches(s, &labels))
    {
        Some(Ok(false)) => return Match::No,
        Some(Err(e)) => return Match::Unknown(format!("objectSelector: {e}")),
        _ => {}
    }
    let equivalent = m.get("matchPolicy").and_then(Value::as_str) != Some("Exact");
    let excluded: Vec<&Value> = list(m, "excludeResourceRules").collect();
    if !matches!(rules_match(&excluded, req, a, equivalent), Match::No) {
        return Match::No;
    }
    let rules: Vec<&Value> = list(m, "resourceRules").collect();
    let by_rules = if rules.is_empty() {
        Match::Yes
    } else {
        rules_match(&rules, req, a, equivalent)
    };
    match (by_rules, ns) {
        (Match::Yes, Match::Unknown(r)) => Match::Unknown(r),
        (r, _) => r,
    }
}

/// `namespace.Matcher.MatchNamespaceSelector`: a cluster-scoped object other than a
/// Namespace always matches; a Namespace by its own labels; a namespaced object by its
/// namespace's labels (the render's Namespace, else only `kubernetes.io/metadata.name` is
/// known).
fn namespace_selector(sel: Option<&Value>, req: &Request<'_>, a: &Admission<'_>) -> Match {
    let Some(sel) = sel.filter(|s| !is_empty_selector(s)) else {
        return Match::Yes;
    };
    let (name, labels) = if req.is_namespace() {
        (req.name.as_str(), req.object.pointer("/metadata/labels"))
    } else if req.namespaced {
        if let Some(ns) = a.namespaces.get(&req.namespace) {
            (req.namespace.as_str(), ns.pointer("/metadata/labels"))
        } else {
            if selector_keys(sel).iter().any(|k| k != NAMESPACE_NAME_LABEL) {
                return Match::Unknown(format!(
                    "namespaceSelector: namespace `{}` is not in the render, so its labels \
                     are not known",
                    req.namespace
                ));
            }
            (req.namespace.as_str(), None)
        }
    } else {
        return Match::Yes;
    };
    let mut all = labels
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    all.insert(
        NAMESPACE_NAME_LABEL.to_string(),
        Value::String(name.to_string()),
    );
    match selector_matches(sel, &Value::Object(all)) {
        Ok(true) => Match::Yes,
        Ok(false) => Match::No,
        Err(e) => Match::Unknown(format!("namespaceSelector: {e}")),
    }
}

fn is_empty_selector(sel: &Value) -> bool {
    sel.get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty)
        && sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

fn selector_keys(sel: &Value) -> Vec<String> {
    let mut keys: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.extend(
        list(sel, "matchExpressions").filter_map(|e| str_of(e, &["key"]).map(str::to_string)),
    );
    keys
}

/// `metav1.LabelSelectorAsSelector` applied to `labels`: matchLabels and matchExpressions
/// (`In`, `NotIn`, `Exists`, `DoesNotExist`), all of them.
pub(crate) fn selector_matches(sel: &Value, labels: &Value) -> Result<bool, String> {
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            if get(k) != v.as_str() {
                return Ok(false);
            }
        }
    }
    for e in list(sel, "matchExpressions") {
        let key = str_of(e, &["key"]).unwrap_or_default();
        let values: Vec<&str> = list(e, "values").filter_map(Value::as_str).collect();
        let have = get(key);
        let ok = match str_of(e, &["operator"]).unwrap_or_default() {
            "In" => have.is_some_and(|h| values.contains(&h)),
            "NotIn" => have.is_none_or(|h| !values.contains(&h)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            other => return Err(format!("`{other}` is not a valid label selector operator")),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `matchesResourceRules`: a rule (`rules.Matcher`) with CREATE, then, under
/// `matchPolicy: Equivalent`, the kind's other served versions (the API server converts the
/// object to the version matched: not checkable offline).
fn rules_match(rules: &[&Value], req: &Request<'_>, a: &Admission<'_>, equivalent: bool) -> Match {
    if rules.iter().any(|r| rule_matches(r, req, &req.version)) {
        return Match::Yes;
    }
    if equivalent {
        for v in a.kinds.versions(&req.group, &req.kind) {
            if *v != req.version && rules.iter().any(|r| rule_matches(r, req, v)) {
                return Match::Unknown(format!(
                    "matched through `matchPolicy: Equivalent` as version `{v}`: the API server \
                     converts the object to it first, which fluxsim cannot"
                ));
            }
        }
    }
    Match::No
}

/// `rules.Matcher.Matches` for a create of a main resource (no subresource), and the
/// rule's `resourceNames`.
fn rule_matches(rule: &Value, req: &Request<'_>, version: &str) -> bool {
    let has = |key: &str, v: &str| {
        list(rule, key)
            .filter_map(Value::as_str)
            .any(|x| x == "*" || x == v)
    };
    let resource_ok = list(rule, "resources")
        .filter_map(Value::as_str)
        .any(|r| r == "*" || r == "*/*" || r == req.resource);
    let scope_ok = match str_of(rule, &["scope"]) {
        None | Some("*") => true,
        // rules.go: a Namespace object is cluster-scoped.
        Some("Namespaced") => req.namespaced && !req.is_namespace(),
        Some("Cluster") => !req.namespaced || req.is_namespace(),
        Some(_) => false,
    };
    let names: Vec<&str> = list(rule, "resourceNames")
        .filter_map(Value::as_str)
        .collect();
    has("operations", "CREATE")
        && has("apiGroups", &req.group)
        && has("apiVersions", version)
        && resource_ok
        && scope_ok
        && (names.is_empty() || names.contains(&req.name.as_str()))
}

enum Params<'a> {
    /// The params to evaluate with (`None`: `params` is null).
    Found(Vec<Option<&'a Value>>),
    Unknown(String),
    ConfigError(String),
}

/// `generic.CollectParams`, on the render's objects.
fn collect_params<'a>(
    policy: &Policy,
    binding: &Binding,
    req: &Request<'_>,
    adm: &Admission<'a>,
) -> Params<'a> {
    let (Some((group, kind)), Some(param_ref)) = (&policy.param_kind, &binding.param_ref) else {
        // No paramKind, or a binding that does not use it: validated with null params.
        return Params::Found(vec![None]);
    };
    let candidates: Vec<&'a Value> = adm
        .objects
        .iter()
        .copied()
        .filter(|o| {
            let (g, _) = split_api_version(str_of(o, &["apiVersion"]).unwrap_or_default());
            g == group && str_of(o, &["kind"]) == Some(kind)
        })
        .collect();
    if candidates.is_empty() && !adm.kinds.known(group, kind) {
        return Params::Unknown(format!(
            "paramKind `{kind}` ({}) is neither in the render nor a kind fluxsim knows",
            if group.is_empty() { "core" } else { group }
        ));
    }
    let namespaced = adm.kinds.namespaced(group, kind);
    let ref_ns = str_of(param_ref, &["namespace"]).unwrap_or_default();
    let ns = if !namespaced {
        if !ref_ns.is_empty() {
            return Params::ConfigError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            );
        }
        None
    } else if !ref_ns.is_empty() {
        Some(ref_ns.to_string())
    } else if !req.namespace.is_empty() {
        Some(req.namespace.clone())
    } else {
        return Params::ConfigError(
            "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                .into(),
        );
    };
    let in_scope = |o: &&Value| {
        ns.as_deref()
            .is_none_or(|n| str_of(o, &["metadata", "namespace"]).unwrap_or("default") == n)
    };
    let name = str_of(param_ref, &["name"]).unwrap_or_default();
    let found: Vec<Option<&'a Value>> = if !name.is_empty() {
        candidates
            .into_iter()
            .filter(in_scope)
            .filter(|o| str_of(o, &["metadata", "name"]) == Some(name))
            .map(Some)
            .collect()
    } else if let Some(sel) = param_ref.get("selector") {
        let mut out = Vec::new();
        for o in candidates.into_iter().filter(in_scope) {
            let labels = o
                .pointer("/metadata/labels")
                .cloned()
                .unwrap_or(Value::Null);
            match selector_matches(sel, &labels) {
                Ok(true) => out.push(Some(o)),
                Ok(false) => {}
                Err(e) => return Params::ConfigError(e),
            }
        }
        out
    } else {
        return Params::ConfigError("one of name or selector must be provided".into());
    };
    if found.is_empty() && str_of(param_ref, &["parameterNotFoundAction"]) == Some("Deny") {
        return Params::ConfigError(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Params::Found(found)
}

/// Why an evaluation did not give a value.
enum EvalError {
    /// An error the API server's CEL gives too: handled by `failurePolicy`.
    Failed(String),
    /// Not checkable offline.
    NotCheckable(String),
}

/// One evaluation of a policy with one binding and one param: the budget they share and the
/// bound variables.
struct Run<'r> {
    ctx: Context<'r, 'r>,
    budget: u64,
    deadline: Option<Instant>,
    /// Variables not checkable or failed, by name.
    broken: BTreeMap<String, EvalError>,
    namespace_known: bool,
}

impl Run<'_> {
    fn eval(&mut self, e: &Expression) -> Result<cel::Value, EvalError> {
        if e.reads("authorizer") || e.reads("authorizerRequestResource") {
            return Err(EvalError::NotCheckable(format!(
                "`{}` reads `authorizer`: offline there is no authorizer to ask",
                e.source
            )));
        }
        if e.reads("namespaceObject") && !self.namespace_known {
            return Err(EvalError::NotCheckable(format!(
                "`{}` reads `namespaceObject`, and the namespace is not in the render",
                e.source
            )));
        }
        for v in &e.variables {
            match self.broken.get(v) {
                Some(EvalError::NotCheckable(r)) => {
                    return Err(EvalError::NotCheckable(format!("variable `{v}`: {r}")))
                }
                Some(EvalError::Failed(m)) => return Err(EvalError::Failed(m.clone())),
                None => {}
            }
        }
        let program = match &e.program {
            Ok(p) => p,
            Err(err) => {
                return Err(EvalError::NotCheckable(format!(
                    "`{}` does not parse in fluxsim's CEL: {err}",
                    e.source
                )))
            }
        };
        let limit = PER_CALL_LIMIT.min(self.budget);
        let ctx = &self.ctx;
        let (result, m) = metered(limit, self.deadline, || cel::Value::resolve(program, ctx));
        self.budget = self.budget.saturating_sub(m.cost);
        match (m.stop, result) {
            (Some(Stop::Deadline), _) => Err(EvalError::NotCheckable(format!(
                "`{}`: stopped at fluxsim's deadline (--timeout)",
                e.source
            ))),
            (Some(Stop::CostLimit), _) => Err(EvalError::Failed(format!(
                "expression '{}' resulted in error: {}",
                e.source,
                crate::cost::COST_LIMIT_ERROR
            ))),
            (None, Ok(v)) => Ok(v),
            (None, Err(err)) => Err(classify(&e.source, &err)),
        }
    }
}

/// An evaluation error the API server's CEL raises too (a missing key, an index out of
/// range, a division by zero, an overflow) fails the expression; any other one is a gap of
/// the crate's CEL (a Kubernetes library function it lacks, a type it reads otherwise).
fn classify(source: &str, err: &ExecutionError) -> EvalError {
    match err {
        ExecutionError::NoSuchKey(_)
        | ExecutionError::DivisionByZero(_)
        | ExecutionError::RemainderByZero(_)
        | ExecutionError::Overflow(..)
        | ExecutionError::IndexOutOfBounds(_) => {
            EvalError::Failed(format!("expression '{source}' resulted in error: {err}"))
        }
        _ => EvalError::NotCheckable(format!(
            "`{source}` could not be evaluated by fluxsim's CEL (cel crate): {err}"
        )),
    }
}

fn key(s: &str) -> Key {
    Key::String(Arc::new(s.to_string()))
}

/// `validator.Validate` and the dispatcher's handling of its decisions, for one binding and
/// one param.
#[allow(clippy::too_many_lines)] // validator.go's Validate, read top to bottom in its order
fn evaluate(
    p: &Policy,
    b: &Binding,
    req: &Request<'_>,
    param: Option<&Value>,
    a: &Admission<'_>,
) -> Vec<PolicyOutcome> {
    let namespace = (!req.namespace.is_empty() && !req.is_namespace())
        .then(|| a.namespaces.get(&req.namespace).copied())
        .flatten();
    let namespace_known = req.namespace.is_empty() || req.is_namespace() || namespace.is_some();
    let mut ctx = Context::with_env(crate::cel::env().clone());
    ctx.add_variable_from_value("object", crate::cel::untyped(req.object));
    ctx.add_variable_from_value("oldObject", cel::Value::Null);
    ctx.add_variable_from_value("request", req.to_cel());
    ctx.add_variable_from_value(
        "params",
        param.map_or(cel::Value::Null, crate::cel::untyped),
    );
    ctx.add_variable_from_value(
        "namespaceObject",
        namespace.map_or(cel::Value::Null, crate::cel::untyped),
    );
    ctx.add_variable_from_value(
        "variables",
        cel::Value::Map(Map {
            map: Arc::new(std::collections::HashMap::default()),
        }),
    );
    let mut run = Run {
        ctx,
        budget: RUNTIME_CEL_COST_BUDGET,
        deadline: a.deadline,
        broken: BTreeMap::new(),
        namespace_known,
    };
    let mut out = Vec::new();
    let not_checkable = |reason: String| PolicyOutcome::NotCheckable { reason };
    // A decision to deny, under the binding's actions (dispatcher.go).
    let deny = |message: &str, validation: Option<usize>| -> Vec<PolicyOutcome> {
        b.actions
            .iter()
            .map(|action| PolicyOutcome::Violation {
                action: *action,
                message: match action {
                    Action::Deny => format!(
                        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {message}",
                        p.name, b.name
                    ),
                    Action::Warn => format!(
                        "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {message}",
                        p.name, b.name
                    ),
                    Action::Audit => format!(
                        "audit annotation validation.policy.admission.k8s.io/validation_failure: \
                         ValidatingAdmissionPolicy '{}' with binding '{}': {message}",
                        p.name, b.name
                    ),
                },
                validation,
            })
            .collect()
    };
    // matchConditions: any false skips the policy; an error is the failure policy's.
    let mut matched = true;
    for (name, c) in &p.match_conditions {
        match run.eval(c) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => matched = false,
            Ok(other) => {
                out.push(not_checkable(format!(
                    "matchCondition `{name}` gave {other:?} in fluxsim's CEL, not a boolean"
                )));
                return out;
            }
            Err(EvalError::NotCheckable(r)) => {
                out.push(not_checkable(format!("matchCondition `{name}`: {r}")));
                return out;
            }
            Err(EvalError::Failed(m)) => {
                if p.fail {
                    out.extend(deny(&format!("matchCondition '{name}': {m}"), None));
                }
                return out;
            }
        }
    }
    if !matched {
        return out;
    }
    // variables: in order, each seeing those before it (composition variables).
    let mut vars: std::collections::HashMap<Key, cel::Value> = std::collections::HashMap::new();
    for (name, v) in &p.variables {
        match run.eval(v) {
            Ok(value) => {
                vars.insert(key(name), value);
                run.ctx.add_variable_from_value(
                    "variables",
                    cel::Value::Map(Map {
                        map: Arc::new(vars.clone()),
                    }),
                );
            }
            Err(e) => {
                run.broken.insert(name.clone(), e);
            }
        }
    }
    for (i, v) in p.validations.iter().enumerate() {
        match run.eval(&v.expression) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => {
                // validator.go: messageExpression (a one-line string), else message, else
                // the expression.
                let from_expression =
                    v.message_expression
                        .as_ref()
                        .and_then(|m| match run.eval(m) {
                            Ok(cel::Value::String(s)) => {
                                let s = s.trim();
                                (!s.is_empty() && s.len() <= MAX_MESSAGE_BYTES && !s.contains('\n'))
                                    .then(|| s.to_string())
                            }
                            _ => None,
                        });
                let message = from_expression
                    .or_else(|| v.message.clone())
                    .unwrap_or_else(|| format!("failed expression: {}", v.expression.source));
                out.extend(deny(&message, Some(i)));
            }
            Ok(other) => out.push(not_checkable(format!(
                "validation `{}` gave {other:?} in fluxsim's CEL, not a boolean",
                v.expression.source
            ))),
            Err(EvalError::NotCheckable(r)) => out.push(not_checkable(format!("validation {r}"))),
            Err(EvalError::Failed(m)) => {
                if p.fail {
                    out.extend(deny(&m, Some(i)));
                }
            }
        }
    }
    for (k, e) in &p.audit_annotations {
        match run.eval(e) {
            Ok(cel::Value::String(s)) if !s.trim().is_empty() => {
                out.push(PolicyOutcome::AuditAnnotation {
                    key: format!("{}/{k}", p.name),
                    value: s.trim().to_string(),
                });
            }
            Ok(cel::Value::String(_) | cel::Value::Null) => {}
            Ok(other) => out.push(not_checkable(format!(
                "auditAnnotation `{k}` gave {other:?} in fluxsim's CEL, not a string or null"
            ))),
            Err(EvalError::NotCheckable(r)) => {
                out.push(not_checkable(format!("auditAnnotation `{k}`: {r}")));
            }
            Err(EvalError::Failed(m)) => {
                // dispatcher.go: an audit annotation's error under Fail is a denial,
                // whatever the actions.
                if p.fail {
                    out.push(PolicyOutcome::Violation {
                        action: Action::Deny,
                        message: format!(
                            "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {m}",
                            p.name, b.name
                        ),
                        validation: None,
                    });
                }
            }
        }
    }
    out
}

/// The resource (plural) of a built-in kind, by the API server's rule (lower case, `s`; a
/// consonant's `y` → `ies`; `s`, `x`, `ch`, `sh` → `es`), `Endpoints` being its own plural.
#[must_use]
pub fn builtin_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower == "endpoints" {
        return lower;
    }
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    if ["s", "x", "ch", "sh"].iter().any(|e| lower.ends_with(e)) {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // the builders read as the JSON literals they take
mod tests {
    use super::*;
    use serde_json::json;

    const FLUX: &str = "system:serviceaccount:flux-system:kustomize-controller";

    fn vap(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": spec})
    }

    fn binding(name: &str, policy: &str, actions: &[&str], extra: Value) -> Value {
        let mut spec = json!({"policyName": policy, "validationActions": actions});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": spec})
    }

    fn deployments() -> Value {
        json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]})
    }

    fn deployment(ns: &str, replicas: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns, "labels": {"app": "web"}},
            "spec": {"replicas": replicas}})
    }

    fn run(objects: &[Value], object: &Value) -> Vec<PolicyResult> {
        run_as(objects, object, FLUX)
    }

    fn run_as(objects: &[Value], object: &Value, user: &str) -> Vec<PolicyResult> {
        let policies = Policies::of(objects);
        let refs: Vec<&Value> = objects.iter().collect();
        let namespaces: BTreeMap<String, &Value> = objects
            .iter()
            .filter(|o| o["kind"] == "Namespace")
            .map(|o| {
                (
                    o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    o,
                )
            })
            .collect();
        let kinds = Kinds::of(objects);
        policies.evaluate(
            object,
            &Admission {
                namespaces: &namespaces,
                objects: &refs,
                kinds: &kinds,
                username: user,
                deadline: None,
            },
        )
    }

    fn messages(results: &[PolicyResult]) -> Vec<(Action, String)> {
        results
            .iter()
            .filter_map(|r| match &r.outcome {
                PolicyOutcome::Violation {
                    action, message, ..
                } => Some((*action, message.clone())),
                _ => None,
            })
            .collect()
    }

    fn not_checkable(results: &[PolicyResult]) -> Vec<String> {
        results
            .iter()
            .filter_map(|r| match &r.outcome {
                PolicyOutcome::NotCheckable { reason } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }

    fn max_replicas(extra: Value) -> Value {
        let mut spec = json!({"matchConstraints": deployments(),
            "validations": [{"expression": "object.spec.replicas <= 5", "message": "at most 5 replicas"}]});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        vap("max-replicas", spec)
    }

    // validating/dispatcher.go: a Deny decision becomes
    // "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s".
    #[test]
    fn a_deny_binding_denies_a_false_validation_in_the_api_servers_words() {
        let objs = [
            max_replicas(json!({})),
            binding("b", "max-replicas", &["Deny"], json!({})),
        ];
        assert_eq!(
            messages(&run(&objs, &deployment("apps", 7))),
            vec![(Action::Deny, "ValidatingAdmissionPolicy 'max-replicas' with binding 'b' denied request: at most 5 replicas".to_string())]
        );
        assert!(run(&objs, &deployment("apps", 3)).is_empty());
    }

    // dispatcher.go: Warn adds "Validation failed for ValidatingAdmissionPolicy '%s' with
    // binding '%s': %s"; Audit publishes validation.policy.admission.k8s.io/validation_failure.
    #[test]
    fn warn_and_audit_actions_each_report_the_failure() {
        let objs = [
            max_replicas(json!({})),
            binding("b", "max-replicas", &["Warn", "Audit"], json!({})),
        ];
        let got = messages(&run(&objs, &deployment("apps", 7)));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (Action::Warn, "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'b': at most 5 replicas".to_string()));
        assert_eq!(got[1].0, Action::Audit);
        assert!(got[1]
            .1
            .contains("validation.policy.admission.k8s.io/validation_failure"));
    }

    // A policy without a binding does nothing (kubernetes.io ValidatingAdmissionPolicy docs:
    // "a policy ... and a binding ... are both required").
    #[test]
    fn a_policy_without_a_binding_does_nothing() {
        assert!(run(&[max_replicas(json!({}))], &deployment("apps", 7)).is_empty());
    }

    // validator.go: messageExpression wins when it gives a non-empty one-line string; else
    // message; else "failed expression: <expression>".
    #[test]
    fn message_expression_then_message_then_the_expression() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(), "validations": [
            {"expression": "object.spec.replicas <= 5", "message": "m",
             "messageExpression": "'replicas ' + string(object.spec.replicas) + ' > 5'"},
            {"expression": "object.spec.replicas < 2", "messageExpression": "''"},
            {"expression": "object.spec.replicas < 1"}]}),
        );
        let got = messages(&run(
            &[p, binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 7),
        ));
        assert!(
            got[0].1.ends_with("denied request: replicas 7 > 5"),
            "{got:?}"
        );
        // An empty messageExpression falls back (no message: the expression).
        assert!(got[1]
            .1
            .ends_with("denied request: failed expression: object.spec.replicas < 2"));
        assert!(got[2]
            .1
            .ends_with("denied request: failed expression: object.spec.replicas < 1"));
    }

    // predicates/namespace: a namespaced object is matched by its Namespace's labels (with
    // kubernetes.io/metadata.name, which the API server sets).
    #[test]
    fn namespace_selector_reads_the_rendered_namespaces_labels() {
        let objs = [
            max_replicas(
                json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
                "namespaceSelector": {"matchLabels": {"env": "prod"}}}}),
            ),
            binding("b", "max-replicas", &["Deny"], json!({})),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev", "labels": {"env": "dev"}}}),
        ];
        assert_eq!(messages(&run(&objs, &deployment("prod", 7))).len(), 1);
        assert!(run(&objs, &deployment("dev", 7)).is_empty());
        // A namespace the render lacks: its labels are unknown.
        assert_eq!(
            not_checkable(&run(&objs, &deployment("elsewhere", 7))).len(),
            1
        );
    }

    #[test]
    fn a_namespace_name_selector_is_known_without_the_namespace() {
        let objs = [
            max_replicas(
                json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
                "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                    "operator": "NotIn", "values": ["kube-system"]}]}}}),
            ),
            binding("b", "max-replicas", &["Deny"], json!({})),
        ];
        assert_eq!(messages(&run(&objs, &deployment("apps", 7))).len(), 1);
        assert!(run(&objs, &deployment("kube-system", 7)).is_empty());
    }

    // matching.go: excludeResourceRules first; objectSelector on the object's labels.
    #[test]
    fn exclude_rules_and_object_selector_narrow_the_match() {
        let excluded = max_replicas(
            json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
            "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"],
                "resources": ["deployments"], "resourceNames": ["web"]}]}}),
        );
        let b = binding("b", "max-replicas", &["Deny"], json!({}));
        assert!(run(&[excluded, b.clone()], &deployment("apps", 7)).is_empty());
        let selected = max_replicas(
            json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
            "objectSelector": {"matchLabels": {"app": "other"}}}}),
        );
        assert!(run(&[selected, b], &deployment("apps", 7)).is_empty());
    }

    // The binding's matchResources narrows what the policy matches.
    #[test]
    fn binding_match_resources_narrow_the_policy() {
        let objs = [
            max_replicas(json!({})),
            binding(
                "b",
                "max-replicas",
                &["Deny"],
                json!({"matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "prod"}}}}),
            ),
        ];
        assert!(run(&objs, &deployment("apps", 7)).is_empty());
        assert_eq!(messages(&run(&objs, &deployment("prod", 7))).len(), 1);
    }

    // rules.go: operations must include CREATE (or *); the scope `Cluster` leaves
    // namespaced objects out.
    #[test]
    fn resource_rules_need_create_and_the_scope() {
        let b = binding("b", "max-replicas", &["Deny"], json!({}));
        let update = max_replicas(
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
            "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments"]}]}}),
        );
        assert!(run(&[update, b.clone()], &deployment("apps", 7)).is_empty());
        let cluster = max_replicas(
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["*"],
            "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "scope": "Cluster"}]}}),
        );
        assert!(run(&[cluster, b], &deployment("apps", 7)).is_empty());
    }

    fn with_params(param_ref: Value) -> Vec<Value> {
        vec![
            vap(
                "max-replicas",
                json!({"matchConstraints": deployments(),
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                    "messageExpression": "'at most ' + params.data.max"}]}),
            ),
            binding(
                "b",
                "max-replicas",
                &["Deny"],
                json!({"paramRef": param_ref}),
            ),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "apps",
                "labels": {"limits": "yes"}}, "data": {"max": "3"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "other"},
                "data": {"max": "10"}}),
        ]
    }

    // policy_dispatcher.go CollectParams: a namespaced paramKind is read in the paramRef's
    // namespace, else the object's.
    #[test]
    fn params_by_name_come_from_the_objects_namespace() {
        let objs = with_params(json!({"name": "limits", "parameterNotFoundAction": "Deny"}));
        let got = messages(&run(&objs, &deployment("apps", 5)));
        assert_eq!(got.len(), 1);
        assert!(got[0].1.ends_with("denied request: at most 3"), "{got:?}");
        assert!(run(&objs, &deployment("other", 5)).is_empty());
        let objs = with_params(
            json!({"name": "limits", "namespace": "other", "parameterNotFoundAction": "Deny"}),
        );
        assert!(run(&objs, &deployment("apps", 5)).is_empty());
    }

    #[test]
    fn params_by_selector_evaluate_each_match() {
        let objs = with_params(
            json!({"selector": {"matchLabels": {"limits": "yes"}}, "parameterNotFoundAction": "Allow"}),
        );
        assert_eq!(messages(&run(&objs, &deployment("apps", 5))).len(), 1);
        // In another namespace no param matches: Allow admits.
        assert!(run(&objs, &deployment("other", 5)).is_empty());
    }

    // CollectParams: no param and `Deny` is a configuration error; under failurePolicy Fail
    // it denies whatever the binding's actions (dispatcher.go addConfigError).
    #[test]
    fn parameter_not_found_deny_fails_the_binding() {
        let objs = with_params(json!({"name": "missing", "parameterNotFoundAction": "Deny"}));
        let got = messages(&run(&objs, &deployment("apps", 1)));
        assert_eq!(got.len(), 1);
        assert!(
            got[0]
                .1
                .contains("failed to configure binding: no params found"),
            "{got:?}"
        );
        let allow = with_params(json!({"name": "missing", "parameterNotFoundAction": "Allow"}));
        assert!(run(&allow, &deployment("apps", 1)).is_empty());
    }

    // validator.go policyDecisionActionForError: an error is a Deny decision under Fail
    // (through the binding's actions), nothing under Ignore.
    #[test]
    fn failure_policy_decides_what_an_error_does() {
        let erring = |fp: &str| {
            vap(
                "p",
                json!({"matchConstraints": deployments(), "failurePolicy": fp,
            "validations": [{"expression": "object.spec.missing == 1"}]}),
            )
        };
        let got = messages(&run(
            &[erring("Fail"), binding("b", "p", &["Warn"], json!({}))],
            &deployment("apps", 1),
        ));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, Action::Warn);
        assert!(got[0].1.contains("resulted in error"), "{got:?}");
        assert!(run(
            &[erring("Ignore"), binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 1)
        )
        .is_empty());
    }

    // The authorizer is stubbed: an expression that reads it, or reads a variable that does,
    // is not checkable, never a pass or a violation.
    #[test]
    fn an_expression_reading_the_authorizer_is_not_checkable() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(),
            "variables": [{"name": "allowed", "expression": "authorizer.group('apps').resource('deployments').check('scale').allowed()"}],
            "validations": [
                {"expression": "authorizer.serviceAccount('x', 'y').group('').resource('pods').check('get').allowed()"},
                {"expression": "variables.allowed"},
                {"expression": "object.spec.replicas < 3"}]}),
        );
        let got = run(
            &[p, binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 7),
        );
        let nc = not_checkable(&got);
        assert_eq!(nc.len(), 2, "{got:?}");
        assert!(nc.iter().all(|r| r.contains("authorizer")), "{nc:?}");
        // The validation that does not read it is still checked.
        assert_eq!(messages(&got).len(), 1);
    }

    // matchConditions: any false skips the policy (kubernetes.io docs, "Matching requests").
    #[test]
    fn a_false_match_condition_skips_the_policy() {
        let p = max_replicas(
            json!({"matchConditions": [{"name": "not-flux", "expression": "!request.userInfo.username.startsWith('system:serviceaccount:flux-system:')"}]}),
        );
        let objs = [p, binding("b", "max-replicas", &["Deny"], json!({}))];
        assert!(run(&objs, &deployment("apps", 7)).is_empty());
        assert_eq!(
            messages(&run_as(
                &objs,
                &deployment("apps", 7),
                "system:serviceaccount:apps:deployer"
            ))
            .len(),
            1
        );
    }

    // cel.CreateAdmissionRequest: a create by the Kustomization's service account.
    #[test]
    fn request_is_a_create_by_the_flux_service_account() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(), "validations": [
            {"expression": "request.operation == 'CREATE' && request.resource.resource == 'deployments' && request.namespace == 'apps' && 'system:serviceaccounts:flux-system' in request.userInfo.groups && oldObject == null"}]}),
        );
        assert!(run(
            &[p, binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 7)
        )
        .is_empty());
    }

    // Composition variables see the variables before them.
    #[test]
    fn variables_compose_in_order() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(),
            "variables": [{"name": "r", "expression": "object.spec.replicas"}, {"name": "twice", "expression": "variables.r * 2"}],
            "validations": [{"expression": "variables.twice <= 10"}]}),
        );
        assert_eq!(
            messages(&run(
                &[p, binding("b", "p", &["Deny"], json!({}))],
                &deployment("apps", 7)
            ))
            .len(),
            1
        );
    }

    // validator.go: auditAnnotations publish `policy/key` when the value is a non-empty string.
    #[test]
    fn audit_annotations_publish_their_value() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(),
            "auditAnnotations": [{"key": "high-replicas", "valueExpression": "object.spec.replicas > 5 ? 'replicas ' + string(object.spec.replicas) : null"}]}),
        );
        let objs = [p, binding("b", "p", &["Audit"], json!({}))];
        let got = run(&objs, &deployment("apps", 7));
        assert_eq!(
            got[0].outcome,
            PolicyOutcome::AuditAnnotation {
                key: "p/high-replicas".into(),
                value: "replicas 7".into()
            }
        );
        assert!(run(&objs, &deployment("apps", 2)).is_empty());
    }

    // A comprehension bomb stops at PerCallLimit (apiserver pkg/apis/cel/config.go), an
    // error under failurePolicy, never a hang.
    #[test]
    fn a_cel_bomb_in_a_policy_is_bounded() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(), "validations": [{"expression":
            "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, a + b + c + d + e + f + g > 0)))))))"}]}),
        );
        let started = Instant::now();
        let got = messages(&run(
            &[p, binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 1),
        ));
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        assert_eq!(got.len(), 1);
        assert!(got[0].1.contains(crate::cost::COST_LIMIT_ERROR), "{got:?}");
    }

    // matchPolicy Equivalent (the default): a rule for another served version of the CRD
    // matches after conversion, which fluxsim cannot do.
    #[test]
    fn an_equivalent_version_match_is_not_checkable() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true}, {"name": "v2", "served": true}]}});
        let p = vap(
            "p",
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["example.com"],
            "apiVersions": ["v2"], "operations": ["CREATE"], "resources": ["widgets"]}]},
            "validations": [{"expression": "false"}]}),
        );
        let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "a"}});
        let objs = [crd, p.clone(), binding("b", "p", &["Deny"], json!({}))];
        assert_eq!(not_checkable(&run(&objs, &w)).len(), 1);
        let mut exact = p;
        exact["spec"]["matchConstraints"]["matchPolicy"] = json!("Exact");
        let objs = [
            objs[0].clone(),
            exact,
            binding("b", "p", &["Deny"], json!({})),
        ];
        assert!(run(&objs, &w).is_empty());
    }

    // The resource of a kind: its CRD's plural and scope, else the API server's rules for
    // built-in kinds.
    #[test]
    fn kinds_map_to_resources_through_crds_and_built_ins() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "octopi.example.com"}, "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"kind": "Octopus", "plural": "octopi"}, "versions": [{"name": "v1", "served": true}]}});
        let kinds = Kinds::of([&crd]);
        assert_eq!(kinds.plural("example.com", "Octopus"), "octopi");
        assert!(!kinds.namespaced("example.com", "Octopus"));
        assert_eq!(kinds.plural("networking.k8s.io", "Ingress"), "ingresses");
        assert_eq!(kinds.plural("", "Endpoints"), "endpoints");
        assert_eq!(
            kinds.plural("networking.k8s.io", "NetworkPolicy"),
            "networkpolicies"
        );
        assert!(kinds.namespaced("apps", "Deployment"));
        assert!(!kinds.namespaced("rbac.authorization.k8s.io", "ClusterRole"));
    }

    // namespaceObject is the object's Namespace; one the render lacks is unknown, so an
    // expression reading it is not checkable.
    #[test]
    fn namespace_object_is_the_rendered_namespace_or_not_checkable() {
        let p = vap(
            "p",
            json!({"matchConstraints": deployments(), "validations": [
            {"expression": "namespaceObject.metadata.labels['tier'] == 'gold'"}]}),
        );
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"tier": "silver"}}});
        let objs = [p, binding("b", "p", &["Deny"], json!({})), ns];
        assert_eq!(messages(&run(&objs, &deployment("apps", 1))).len(), 1);
        let got = run(&objs, &deployment("elsewhere", 1));
        assert!(messages(&got).is_empty());
        assert_eq!(not_checkable(&got).len(), 1, "{got:?}");
    }
}
