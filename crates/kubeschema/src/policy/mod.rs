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

mod evaluate;
mod kinds;
mod matching;
mod params;
mod spec;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

use evaluate::evaluate;
pub use kinds::{builtin_plural, Kinds};
use matching::{matches, Match, Request};
use params::{collect_params, Params};
use spec::{policy, Binding, Policy};

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
