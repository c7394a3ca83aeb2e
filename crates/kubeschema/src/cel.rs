//! `x-kubernetes-validations`: the CEL rules of a CRD, evaluated with the `cel` crate
//! (cel-rust) on the object converted as the API server converts it
//! (apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`, apiserver
//! `pkg/cel/common/values.go`, `pkg/cel/escaping.go`).
//!
//! The environment is CEL's standard library with the strings, lists and math extensions of
//! the crate. What Kubernetes adds and the crate lacks (`isURL`, `quantity`, `ip`, `cidr`,
//! `isSorted`, `sum`, `min`, `max`, `sets.*`, `format.*`, `semver`, `cel.bind`, two-variable
//! comprehensions, list `indexOf`) fails the evaluation when the rule reaches it; such a rule
//! is reported unchecked with the error, never as a finding. Rules on `oldSelf` (transition
//! rules) are evaluated by the API server only on update, against the live object: unchecked.
//! Runtime cost budgets are not estimated.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::objects::{Key, Map};
use cel::{Context, Env};
use serde_json::Value;

// `CelRule` and its compiled form are declared beside the schema nodes that hold them
// (so that the schema needs nothing of this module); their behaviour is here.
use crate::escape::escape;
use crate::schema::{Additional, Arena, CelRule, Compiled, NodeId, Special, Type};

impl std::fmt::Debug for CelRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CelRule")
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

/// The outcome of one rule on one value.
pub(crate) enum RuleOutcome {
    Pass,
    /// The rule is false: the server's message (field path suffix, error body).
    Fail {
        field_path: Option<String>,
        body: String,
    },
    /// Not evaluated: why.
    Unchecked(String),
    /// Stopped past the per-call cost limit.
    CostLimit,
    /// Stopped at the caller's deadline.
    Deadline,
}

/// Compiles a CEL expression in the environment rules are evaluated in (for the cost
/// estimate of a CRD's rules): its AST, `None` when it does not parse.
pub(crate) fn compile_ast(source: &str) -> Option<cel::IdedExpr> {
    env().compile(source).ok().map(|p| p.expression().clone())
}

pub(crate) fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Each registers names the standard library does not have: it cannot fail.
        let _ = cel::extensions::strings(&mut env);
        let _ = cel::extensions::lists(&mut env);
        let _ = cel::extensions::math(&mut env);
        // `@fluxsim_cost` cannot be spelled in CEL source: no rule's name collides with it.
        let _ = env.add_overload(
            crate::cost::COST_FUNCTION,
            "fluxsim_cost_int_dyn",
            vec![cel::common::types::INT_TYPE, cel::common::types::DYN_TYPE],
            crate::cost::charge,
        );
        Arc::new(env)
    })
}

impl CelRule {
    pub(crate) fn new(spec: &Value) -> CelRule {
        let s = |k: &str| spec.get(k).and_then(Value::as_str).map(str::to_string);
        CelRule {
            rule: s("rule").unwrap_or_default(),
            message: s("message")
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty()),
            reason: s("reason"),
            field_path: s("fieldPath"),
            message_expression_source: s("messageExpression"),
            compiled: OnceLock::new(),
        }
    }

    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let program = env().compile(&self.rule).map_err(|e| e.to_string());
            let uses_old_self = match &program {
                Ok(p) => p.references().has_variable("oldSelf"),
                Err(_) => self.rule.contains("oldSelf"),
            };
            Compiled {
                program: program.map(|p| crate::cost::instrument(p.expression())),
                message_expression: self
                    .message_expression_source
                    .as_deref()
                    .and_then(|m| env().compile(m).ok())
                    .map(|p| crate::cost::instrument(p.expression())),
                uses_old_self,
            }
        })
    }

    /// `ruleErrorString`: the message, or the rule.
    fn error_string(&self) -> &str {
        self.message.as_deref().unwrap_or_else(|| self.rule.trim())
    }

    /// `ruleErrorString`, for the messages of the cost bounds.
    pub(crate) fn describe(&self) -> &str {
        self.error_string()
    }

    /// Evaluates the rule with `self` bound to `value` (already converted), stopping past
    /// `limit` or at `deadline`: the outcome and its cost.
    pub(crate) fn evaluate(
        &self,
        this: &cel::Value,
        schema_type: Option<Type>,
        raw: &Value,
        limit: u64,
        deadline: Option<std::time::Instant>,
    ) -> (RuleOutcome, u64) {
        let (outcome, metered) = crate::cost::metered(limit, deadline, || {
            self.evaluate_unmetered(this, schema_type, raw)
        });
        let outcome = match metered.stop {
            None => outcome,
            Some(crate::cost::Stop::CostLimit) => RuleOutcome::CostLimit,
            Some(crate::cost::Stop::Deadline) => RuleOutcome::Deadline,
        };
        (outcome, metered.cost)
    }

    fn evaluate_unmetered(
        &self,
        this: &cel::Value,
        schema_type: Option<Type>,
        raw: &Value,
    ) -> RuleOutcome {
        let compiled = self.compiled();
        if compiled.uses_old_self {
            return RuleOutcome::Unchecked(format!(
                "transition rule `{}` (oldSelf): the API server evaluates it only on update, \
                 against the live object",
                self.rule.trim()
            ));
        }
        let program = match &compiled.program {
            Ok(p) => p,
            Err(e) => {
                return RuleOutcome::Unchecked(format!(
                    "CEL rule `{}` does not parse in fluxsim's CEL: {}",
                    self.rule.trim(),
                    e.lines().next().unwrap_or_default()
                ))
            }
        };
        let mut ctx = Context::with_env(env().clone());
        ctx.add_variable_from_value("self", this.clone());
        match cel::Value::resolve(program, &ctx) {
            Ok(cel::Value::Bool(true)) => RuleOutcome::Pass,
            Ok(cel::Value::Bool(false)) => {
                let detail = compiled
                    .message_expression
                    .as_ref()
                    .and_then(|m| match cel::Value::resolve(m, &ctx) {
                        Ok(cel::Value::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
                        _ => None,
                    })
                    .unwrap_or_else(|| match &self.message {
                        Some(m) => m.clone(),
                        None => format!("failed rule: {}", self.error_string()),
                    });
                RuleOutcome::Fail {
                    field_path: self.field_path.clone(),
                    body: error_body(self.reason.as_deref(), schema_type, raw, &detail),
                }
            }
            Ok(other) => RuleOutcome::Unchecked(format!(
                "CEL rule `{}` gave {other:?} in fluxsim's CEL, not a boolean",
                self.rule.trim()
            )),
            Err(e) => RuleOutcome::Unchecked(format!(
                "CEL rule `{}` could not be evaluated by fluxsim's CEL (cel crate): {e:?}",
                self.rule.trim()
            )),
        }
    }
}

/// `fieldErrorForReason` and `field.Error.ErrorBody` (apimachinery
/// `pkg/util/validation/field/errors.go`): objects and arrays omit their value.
fn error_body(reason: Option<&str>, ty: Option<Type>, raw: &Value, detail: &str) -> String {
    let value = if matches!(ty, Some(Type::Object | Type::Array)) {
        None
    } else {
        Some(go_value(raw))
    };
    match reason {
        Some("FieldValueForbidden") => format!("Forbidden: {detail}"),
        Some("FieldValueRequired") => format!("Required value: {detail}"),
        Some("FieldValueDuplicate") => match value {
            Some(v) => format!("Duplicate value: {v}"),
            None => "Duplicate value".to_string(),
        },
        _ => match value {
            Some(v) => format!("Invalid value: {v}: {detail}"),
            None => format!("Invalid value: {detail}"),
        },
    }
}

/// A value as `field.Error` prints it: strings quoted, numbers and booleans plain, others JSON.
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn key(s: &str) -> Key {
    Key::String(Arc::new(s.to_string()))
}

/// Converts a JSON value to the CEL value the API server binds for `self` at `node`
/// (`UnstructuredToVal`): integers stay ints and numbers become doubles by the schema,
/// `byte` strings are bytes, `duration` and `date-time` strings durations and timestamps,
/// declared properties are escaped, a resource root's metadata shows only name and
/// generateName.
pub(crate) fn to_cel(arena: &Arena, node: NodeId, v: &Value, resource_root: bool) -> cel::Value {
    let n = arena.node(node);
    if n.special == Special::Any {
        return untyped(v);
    }
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(num) => match (n.ty, num.as_i64()) {
            (Some(Type::Number), _) | (_, None) => {
                cel::Value::Float(num.as_f64().unwrap_or(f64::NAN))
            }
            (_, Some(i)) => cel::Value::Int(i),
        },
        Value::String(s) => string_value(n.format.as_deref(), n.int_or_string, s),
        Value::Array(items) => {
            let list = items
                .iter()
                .map(|x| match n.items {
                    Some(i) => to_cel(arena, i, x, false),
                    None => untyped(x),
                })
                .collect();
            cel::Value::List(Arc::new(list))
        }
        Value::Object(map) => {
            let mut out = HashMap::new();
            let declared = !n.properties.is_empty() || n.embedded;
            for (k, x) in map {
                if let Some(p) = n.property(k) {
                    let Some(name) = escape(k) else { continue };
                    if resource_root && k == "metadata" {
                        out.insert(key(&name), root_metadata(x));
                        continue;
                    }
                    if x.is_null() && !arena.node(p).nullable {
                        continue;
                    }
                    out.insert(key(&name), to_cel(arena, p, x, false));
                } else if let Additional::Schema(a) = n.additional {
                    out.insert(key(k), to_cel(arena, a, x, false));
                } else if !declared || n.preserve_unknown || n.additional == Additional::Any {
                    out.insert(key(k), untyped(x));
                }
            }
            cel::Value::Map(Map { map: Arc::new(out) })
        }
    }
}

fn root_metadata(v: &Value) -> cel::Value {
    let mut out = HashMap::new();
    for k in ["name", "generateName"] {
        if let Some(Value::String(s)) = v.get(k) {
            out.insert(key(k), cel::Value::String(Arc::new(s.clone())));
        }
    }
    cel::Value::Map(Map { map: Arc::new(out) })
}

fn string_value(format: Option<&str>, int_or_string: bool, s: &str) -> cel::Value {
    if !int_or_string {
        match format {
            Some("byte") => {
                if let Some(bytes) = base64_decode(s) {
                    return cel::Value::Bytes(Arc::new(bytes));
                }
            }
            Some("duration") => {
                if let Some(d) = go_duration(s) {
                    return cel::Value::Duration(d);
                }
            }
            Some("date-time" | "datetime") => {
                if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
                    return cel::Value::Timestamp(t);
                }
            }
            _ => {}
        }
    }
    cel::Value::String(Arc::new(s.to_string()))
}

/// A value with no schema: as `UnstructuredToVal` reads it without one (preserved fields).
pub(crate) fn untyped(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => cel::Value::List(Arc::new(a.iter().map(untyped).collect())),
        Value::Object(m) => cel::Value::Map(Map {
            map: Arc::new(m.iter().map(|(k, x)| (key(k), untyped(x))).collect()),
        }),
    }
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    crate::formats::base64_std(s).ok()?;
    let table = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|b| !matches!(b, b'\r' | b'\n' | b'='))
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= table(*c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// Go's `time.ParseDuration`, as a chrono duration.
fn go_duration(s: &str) -> Option<chrono::Duration> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * nanos;
    }
    let nanos = if neg { -total } else { total };
    Some(chrono::Duration::nanoseconds(nanos as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    // apiserver pkg/cel/escaping.go: Escape.
    #[test]
    fn cel_escapes_property_names_as_the_api_server() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("has space"), None);
    }

    // apiserver pkg/apis/cel/config.go `CheckFrequency`: cel-go checks for interruption
    // every 100 iterations; so does the meter, against the caller's deadline.
    #[test]
    fn cel_evaluation_checks_the_deadline_every_check_frequency_iterations() {
        let rule = CelRule::new(&serde_json::json!({
            "rule": "self.all(a, self.all(b, self.all(c, a + b + c >= 0)))"
        }));
        let list = cel::Value::List(Arc::new((0..1000).map(cel::Value::Int).collect()));
        let raw = Value::Null;
        let started = std::time::Instant::now();
        let (outcome, cost) = rule.evaluate(
            &list,
            Some(Type::Array),
            &raw,
            u64::MAX,
            Some(std::time::Instant::now()),
        );
        assert!(matches!(outcome, RuleOutcome::Deadline));
        assert!(cost < 10_000, "stopped at once, cost {cost}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Without a deadline, under its limit, the same rule passes on a short list.
        let short = cel::Value::List(Arc::new((0..3).map(cel::Value::Int).collect()));
        let (outcome, cost) = rule.evaluate(&short, Some(Type::Array), &raw, u64::MAX, None);
        assert!(matches!(outcome, RuleOutcome::Pass));
        assert!(cost >= 27, "27 inner iterations, cost {cost}");
    }

    #[test]
    fn go_durations_read_as_go_does() {
        assert_eq!(go_duration("1h30m"), Some(chrono::Duration::minutes(90)));
        assert_eq!(
            go_duration("500ms"),
            Some(chrono::Duration::milliseconds(500))
        );
        assert_eq!(go_duration("5"), None);
    }
}
