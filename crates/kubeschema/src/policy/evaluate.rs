//! One policy with one binding and one param evaluated on a request (`validator.go`
//! `Validate`): match conditions, variables, validations and audit annotations in CEL,
//! metered as the API server meters it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use cel::objects::{Key, Map};
use cel::{Context, ExecutionError};
use serde_json::Value;

use super::matching::Request;
use super::spec::{Binding, Expression, Policy};
use super::{Action, Admission, PolicyOutcome};
use crate::cost::{metered, Stop, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET};

/// apiserver `pkg/apis/cel/config.go` `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

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
pub(super) fn evaluate(
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
