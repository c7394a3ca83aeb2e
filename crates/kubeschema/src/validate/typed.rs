//! Step 1: the apply patch as structured-merge-diff types it (`typed/validate.go`): scalar
//! and container types, and the key fields of list elements.

use serde_json::Value;

use super::go_text::{go_sharp_v, go_type, go_value_ptr};
use crate::schema::{Arena, Node, NodeId, Special, Type};

/// A value of the wrong type, as structured-merge-diff words it: `expected map, got ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mismatch {
    /// What the schema's type wants (`map`, `numeric (int or float)`, `any scalar`).
    expected: &'static str,
    /// What the value is, in Go's `%v` of it (`&value.valueUnstructured{Value:1}`).
    got: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {}, got {}", self.expected, self.got)
    }
}

fn mismatch(expected: &'static str, got: String) -> Result<(), Mismatch> {
    Err(Mismatch { expected, got })
}

/// structured-merge-diff's scalar and container checks (`typed/validate.go`
/// `validateScalar`, `helpers.go` `listValue`/`mapValue`), on the type kube-openapi's
/// `schemaconv` gives the node.
pub(super) fn smd_type(n: &Node, v: &Value) -> Result<(), Mismatch> {
    if n.special == Special::Quantity || n.int_or_string {
        return scalar_untyped(v);
    }
    match n.ty {
        None => Ok(()),
        Some(Type::Object) => match v {
            Value::Object(_) => Ok(()),
            _ => mismatch("map", go_value_ptr(v)),
        },
        Some(Type::Array) => match v {
            Value::Array(_) => Ok(()),
            _ => mismatch("list", go_value_ptr(v)),
        },
        Some(Type::Integer | Type::Number) => match v {
            Value::Number(_) => Ok(()),
            _ => mismatch("numeric (int or float)", go_type(v).to_string()),
        },
        Some(Type::Boolean) => match v {
            Value::Bool(_) => Ok(()),
            _ => mismatch("boolean", go_value_ptr(v)),
        },
        Some(Type::String) => match n.format.as_deref() {
            None | Some("" | "byte") => match v {
                Value::String(_) => Ok(()),
                _ => mismatch(
                    "string",
                    format!("&value.valueUnstructured{{Value:{}}}", go_sharp_v(v)),
                ),
            },
            Some(_) => scalar_untyped(v),
        },
    }
}

fn scalar_untyped(v: &Value) -> Result<(), Mismatch> {
    match v {
        Value::Object(_) | Value::Array(_) => mismatch("any scalar", go_value_ptr(v)),
        _ => Ok(()),
    }
}

/// The key fields of a list-map element, as structured-merge-diff names them (sorted by
/// field name, JSON values; a missing key takes the schema's default). `None` when the
/// element has none of its keys.
pub(super) fn key_fields(
    arena: &Arena,
    item: NodeId,
    keys: &[String],
    v: &Value,
) -> Option<Vec<String>> {
    let node = arena.node(item);
    let mut fields: Vec<(String, String)> = Vec::new();
    for k in keys {
        let value = v
            .get(k)
            .cloned()
            .or_else(|| node.property(k).and_then(|p| arena.node(p).default.clone()));
        if let Some(value) = value {
            fields.push((k.clone(), smd_scalar(&value)));
        }
    }
    if fields.is_empty() {
        return None;
    }
    fields.sort();
    Some(
        fields
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
    )
}

/// structured-merge-diff `value.ToString`: JSON, strings quoted.
pub(super) fn smd_scalar(v: &Value) -> String {
    v.to_string()
}
