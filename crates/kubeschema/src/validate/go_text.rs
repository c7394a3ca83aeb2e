//! Values as the API server's messages print them: Go's `%v`, `%#v`, `%q` and `%T`, and
//! `field.NotSupported`.

use serde_json::Value;

use crate::cel::go_value;

/// `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
pub(super) fn not_supported(v: &Value, allowed: &[Value]) -> String {
    let values: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => format!("{s:?}"),
            other => format!("{:?}", other.to_string()),
        })
        .collect();
    format!(
        "Unsupported value: {}: supported values: {}",
        go_value(v),
        values.join(", ")
    )
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(super) fn go_quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// Go's `%T` of the decoded JSON value.
pub(super) fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(x) if x.is_i64() || x.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of an interface value.
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::String(s) => s.clone(),
        Value::Number(x) => x.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, x)| format!("{k}:{}", go_v(x))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%v` of a structured-merge-diff `value.Value` (a pointer to a struct: `&{...}`).
pub(super) fn go_value_ptr(v: &Value) -> String {
    format!("&{{{}}}", go_v(v))
}

/// Go's `%#v` of a scalar interface value.
pub(super) fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => format!("[]interface {{}}{{{}}}", ""),
        Value::Object(_) => "map[string]interface {}{...}".to_string(),
        other => go_v(other),
    }
}

pub(super) fn go_value_or_type(v: &Value) -> String {
    match v {
        Value::Object(_) => "\"object\"".to_string(),
        Value::Array(_) => "\"array\"".to_string(),
        other => go_value(other),
    }
}

/// Go's `%v` of a float64 bound (`10`, `0.5`).
pub(super) fn go_float(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e21 {
        format!("{x:.0}")
    } else {
        x.to_string()
    }
}
