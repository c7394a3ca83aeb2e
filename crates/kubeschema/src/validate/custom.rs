//! Step 2 for a custom resource: the CRD's structural schema as kube-openapi validates it
//! (`pkg/validation/validate`), its combinators and its CEL rules (`x-kubernetes-validations`).

use std::time::Instant;

use serde_json::Value;

use super::go_text::{go_float, go_value_or_type, not_supported};
use super::Walker;
use crate::cel::{go_value, to_cel, RuleOutcome};
use crate::finding::Report;
use crate::formats::{self, FormatCheck};
use crate::path;
use crate::rules;
use crate::schema::{Node, NodeId, Type};

impl<'a> Walker<'a> {
    /// Step 2 for a custom resource: kube-openapi's validation of the structural schema,
    /// messages as apiextensions `kubeOpenAPIResultToFieldErrors` turns them into field errors.
    pub(super) fn custom_value(&mut self, n: &Node, v: &'a Value) {
        let name = path::openapi(&self.path);
        let name = if name.is_empty() {
            ".".to_string()
        } else {
            name
        };
        if let Some(expected) = type_error(n, v) {
            let body = format!(
                "Invalid value: {}: {name} in body must be of type {expected}: {:?}",
                go_value(v),
                json_type(v)
            );
            self.field_error(rules::SCHEMA_VIOLATION, None, &body);
            return;
        }
        if let Some(allowed) = &n.enumeration {
            if !allowed.iter().any(|a| json_eq(a, v)) {
                self.field_error(rules::SCHEMA_VIOLATION, None, &not_supported(v, allowed));
            }
        }
        match v {
            Value::String(s) => self.custom_string(n, &name, v, s),
            Value::Number(num) => self.custom_number(n, &name, v, num.as_f64().unwrap_or(0.0)),
            Value::Array(items) => {
                if let Some(b) = &n.bounds {
                    let len = items.len() as u64;
                    if let Some(max) = b.max_items.filter(|m| len > *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!("Too many: {len}: must have at most {max} items"),
                        );
                    }
                    if let Some(min) = b.min_items.filter(|m| len < *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!(
                                "Invalid value: {name} in body should have at least {min} items"
                            ),
                        );
                    }
                }
            }
            Value::Object(map) => {
                for r in &n.required {
                    let present = match (map.get(r), n.property(r)) {
                        // A null of a non-nullable field is pruned before validation.
                        (Some(Value::Null), Some(p)) => self.arena.node(p).nullable,
                        (None, _) | (Some(Value::Null), None) => false,
                        (Some(_), _) => true,
                    };
                    if !present {
                        self.field_error(rules::SCHEMA_VIOLATION, Some(r), "Required value");
                    }
                }
                if let Some(b) = &n.bounds {
                    let len = map.len() as u64;
                    if let Some(max) = b.max_properties.filter(|m| len > *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!("Too many: {len}: must have at most {max} items"),
                        );
                    }
                    if let Some(min) = b.min_properties.filter(|m| len < *m) {
                        self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {name} in body should have at least {min} properties"));
                    }
                }
            }
            _ => {}
        }
        self.combinators(n, &name, v);
    }

    fn custom_string(&mut self, n: &Node, name: &str, v: &Value, s: &str) {
        if let Some(b) = &n.bounds {
            let len = s.chars().count() as u64;
            if let Some(max) = b.max_length.filter(|m| len > *m) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!("Too long: may not be more than {max} bytes"),
                );
            }
            if let Some(min) = b.min_length.filter(|m| len < *m) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body should be at least {min} chars long",
                        go_value(v)
                    ),
                );
            }
        }
        if let Some(pattern) = &n.pattern {
            let (source, cell) = &**pattern;
            let compiled = cell.get_or_init(|| formats::go_regex(source));
            match compiled {
                Some(re) if !re.is_match(s) => {
                    self.field_error(
                        rules::SCHEMA_VIOLATION,
                        None,
                        &format!(
                            "Invalid value: {}: {name} in body should match '{source}'",
                            go_value(v)
                        ),
                    );
                }
                Some(_) => {}
                None => self.unchecked(format!(
                    "pattern `{source}` is not a regular expression fluxsim can compile"
                )),
            }
        }
        if let Some(format) = n.format.as_deref().filter(|_| !n.int_or_string) {
            match formats::check_format(format, s) {
                FormatCheck::Invalid => self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body must be of type {format}: {:?}",
                        go_value(v),
                        s
                    ),
                ),
                FormatCheck::NotChecked => {
                    self.unchecked(format!("format `{format}` is not checked by fluxsim"));
                }
                FormatCheck::Valid | FormatCheck::Ignored => {}
            }
        }
    }

    fn custom_number(&mut self, node: &Node, name: &str, value: &Value, number: f64) {
        let Some(bounds) = &node.bounds else { return };
        let shown = go_value(value);
        if let Some(max) = bounds.maximum {
            if bounds.exclusive_maximum && number >= max {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be less than {}",
                        go_float(max)
                    ),
                );
            } else if number > max {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be less than or equal to {}",
                        go_float(max)
                    ),
                );
            }
        }
        if let Some(min) = bounds.minimum {
            if bounds.exclusive_minimum && number <= min {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be greater than {}",
                        go_float(min)
                    ),
                );
            } else if number < min {
                self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {shown}: {name} in body should be greater than or equal to {}", go_float(min)));
            }
        }
        if let Some(factor) = bounds.multiple_of.filter(|f| *f > 0.0) {
            let quotient = number / factor;
            if (quotient - quotient.round()).abs() > 1e-9 {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be a multiple of {}",
                        go_float(factor)
                    ),
                );
            }
        }
    }

    /// allOf, anyOf, oneOf and not: value validations only in a structural schema.
    fn combinators(&mut self, n: &Node, name: &str, v: &'a Value) {
        for &sub in &n.all_of {
            let saved = self.values_only;
            self.values_only = true;
            self.walk(v, sub, false);
            self.values_only = saved;
        }
        if !n.any_of.is_empty() && !n.any_of.iter().any(|s| self.passes(v, *s)) {
            self.field_error(
                rules::SCHEMA_VIOLATION,
                None,
                &format!(
                    "Invalid value: {}: {name} in body must validate at least one schema (anyOf)",
                    go_value_or_type(v)
                ),
            );
        }
        if !n.one_of.is_empty() && n.one_of.iter().filter(|s| self.passes(v, **s)).count() != 1 {
            self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {}: {name} in body must validate one and only one schema (oneOf)", go_value_or_type(v)));
        }
        if let Some(not) = n.not {
            if self.passes(v, not) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body must not validate the schema (not)",
                        go_value_or_type(v)
                    ),
                );
            }
        }
    }

    /// Does `v` pass the value validations of a subschema?
    fn passes(&self, v: &'a Value, sub: NodeId) -> bool {
        let mut w = Walker {
            arena: self.arena,
            flavor: self.flavor,
            id: self.id,
            path: self.path.clone(),
            schema: Vec::new(),
            report: Report::default(),
            values_only: true,
            in_status: false,
            marker: self.marker,
            cel_budget: 0,
            cel_stopped: true,
            deadline: None,
        };
        w.walk(v, sub, false);
        w.report.findings.is_empty()
    }

    pub(super) fn cel(&mut self, n: &Node, id: NodeId, v: &Value, resource_root: bool) {
        if self.marker.is_some() && self.holds_unknown(v) {
            self.unchecked(format!(
                "{} CEL rule(s) not evaluated: the value holds an unknown var's placeholder",
                n.rules.len()
            ));
            return;
        }
        if self.cel_stopped {
            return;
        }
        let this = to_cel(self.arena, id, v, resource_root);
        let deadline = self.deadline.map(|(d, _)| d);
        for rule in &n.rules {
            if let Some((_, what)) = self.deadline.filter(|(d, _)| Instant::now() >= *d) {
                self.unchecked(format!(
                    "CEL rule not evaluated: validation had reached {what}"
                ));
                continue;
            }
            let (outcome, cost) =
                rule.evaluate(&this, n.ty, v, crate::cost::PER_CALL_LIMIT, deadline);
            let ty = schema_type_name(n.ty);
            // apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`: the cost is
            // taken from the budget first, then the outcome is read.
            if cost > self.cel_budget {
                self.field_error(
                    rules::CEL_COST_EXCEEDED,
                    None,
                    &format!(
                        "Invalid value: \"{ty}\": validation failed due to running out of cost \
                         budget, no further validation rules will be run"
                    ),
                );
                self.cel_stopped = true;
                return;
            }
            self.cel_budget -= cost;
            match outcome {
                RuleOutcome::Pass => {}
                RuleOutcome::Fail { field_path, body } => {
                    self.field_error(rules::CEL_RULE_FAILED, field_path.as_deref(), &body);
                }
                RuleOutcome::Unchecked(reason) => self.unchecked(reason),
                RuleOutcome::CostLimit => {
                    self.field_error(
                        rules::CEL_COST_EXCEEDED,
                        None,
                        &format!(
                            "Invalid value: \"{ty}\": '{}': no further validation rules will be \
                             run due to call cost exceeds limit for rule: {}",
                            crate::cost::COST_LIMIT_ERROR,
                            rule.describe()
                        ),
                    );
                    self.cel_stopped = true;
                    return;
                }
                // fluxsim's own deadline is no defect of the repository (a slower machine
                // needs more time): the object is not validated, a warning, never FS308.
                RuleOutcome::Deadline => {
                    let what = self.deadline.map_or("the deadline", |(_, w)| w);
                    self.unchecked(format!(
                        "CEL rule `{}` stopped at {what} before it finished (cost {cost} so \
                         far): the object's other rules are not evaluated",
                        rule.describe()
                    ));
                    self.cel_stopped = true;
                    return;
                }
            }
        }
    }
}

/// A schema type as the API server's field errors name it (`sts.Type`).
fn schema_type_name(ty: Option<Type>) -> &'static str {
    match ty {
        Some(Type::Object) => "object",
        Some(Type::Array) => "array",
        Some(Type::String) => "string",
        Some(Type::Integer) => "integer",
        Some(Type::Number) => "number",
        Some(Type::Boolean) => "boolean",
        None => "",
    }
}

/// kube-openapi's type check of a CRD node; `Some(expected type)` when it fails.
fn type_error(n: &Node, v: &Value) -> Option<&'static str> {
    if n.int_or_string {
        return match v {
            Value::String(_) => None,
            Value::Number(x) if is_integral(x) => None,
            _ => Some("integer,string"),
        };
    }
    let ty = n.ty?;
    let ok = match (ty, v) {
        (_, Value::Null)
        | (Type::Object, Value::Object(_))
        | (Type::Array, Value::Array(_))
        | (Type::String, Value::String(_))
        | (Type::Boolean, Value::Bool(_))
        | (Type::Number, Value::Number(_)) => true,
        (Type::Integer, Value::Number(x)) => is_integral(x),
        _ => false,
    };
    if ok {
        None
    } else {
        Some(ty.name())
    }
}

fn is_integral(x: &serde_json::Number) -> bool {
    x.is_i64() || x.is_u64() || x.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// The JSON type name kube-openapi prints (`"string"`, `"integer"`, `"number"` ...).
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(x) if x.is_i64() || x.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
