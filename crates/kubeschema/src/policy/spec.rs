//! A ValidatingAdmissionPolicy and its binding as read from their objects, each CEL
//! expression compiled once with the names it reads.

use std::collections::BTreeSet;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value;

use super::{list, split_api_version, str_of, Action};

/// One CEL expression of a policy, compiled once.
#[derive(Debug)]
pub(super) struct Expression {
    pub(super) source: String,
    // String: the first line of the CEL parser's words, quoted by every finding of the
    // expression; compiled once per policy, so kept as the text that is shown.
    pub(super) program: Result<IdedExpr, String>,
    pub(super) idents: BTreeSet<String>,
    pub(super) variables: BTreeSet<String>,
}

impl Expression {
    pub(super) fn new(source: &str) -> Expression {
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

    pub(super) fn reads(&self, name: &str) -> bool {
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
pub(super) struct Validation {
    pub(super) expression: Expression,
    pub(super) message: Option<String>,
    pub(super) message_expression: Option<Expression>,
}

#[derive(Debug)]
pub(super) struct Policy {
    pub(super) name: String,
    /// `failurePolicy: Fail` (the default).
    pub(super) fail: bool,
    pub(super) match_constraints: Option<Value>,
    /// `paramKind`: (group, kind).
    pub(super) param_kind: Option<(String, String)>,
    pub(super) match_conditions: Vec<(String, Expression)>,
    pub(super) variables: Vec<(String, Expression)>,
    pub(super) validations: Vec<Validation>,
    pub(super) audit_annotations: Vec<(String, Expression)>,
}

#[derive(Debug)]
pub(super) struct Binding {
    pub(super) name: String,
    pub(super) policy: String,
    pub(super) param_ref: Option<Value>,
    pub(super) match_resources: Option<Value>,
    pub(super) actions: Vec<Action>,
}

pub(super) fn policy(name: String, spec: &Value) -> Policy {
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
