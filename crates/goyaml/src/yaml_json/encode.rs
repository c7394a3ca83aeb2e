//! Step 3 of `YAMLToJSON`: `sigs.k8s.io/yaml`'s key conversion, then `encoding/json`
//! (sorted keys, HTML escaping, ES6-style float formatting).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::decode::{Key, Value};
use super::YamlJsonError;
use crate::json::{go_string, push_json_string};
use crate::strconv::{go_format_float32_g, push_json_float};

/// A value ready for `encoding/json`: every map key is a string.
#[derive(Debug)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<Json>),
    Object(BTreeMap<Vec<u8>, Json>),
}

/// yaml.go `convertToJSONableObject()`: string keys for every map, and encoding/json's
/// refusal of infinities and NaN (encode.go `floatEncoder`).
pub(super) fn to_json_value(value: Value) -> Result<Json, YamlJsonError> {
    Ok(match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(b),
        Value::Int(i) => Json::Int(i),
        Value::Uint(u) => Json::Uint(u),
        Value::Float(f, pos) => {
            if !f.is_finite() {
                return Err(YamlJsonError::UnsupportedFloat {
                    line: pos.line,
                    column: pos.column,
                    value: go_format_float32_g(f),
                });
            }
            Json::Float(f)
        }
        Value::Str(s) => Json::Str(s),
        Value::Seq(items) => Json::Array(
            items
                .into_iter()
                .map(to_json_value)
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(entries) => {
            let mut object = BTreeMap::new();
            for (key, value) in entries {
                // Keys that only differ in YAML type (`1` and `"1"`) collide here; Go's map
                // iteration makes the winner random, this keeps the last in document order.
                object.insert(json_key(key)?, to_json_value(value)?);
            }
            Json::Object(object)
        }
    })
}

/// yaml.go `convertToJSONableObject()`: how a non-string key becomes a JSON key.
pub(super) fn json_key(key: Key) -> Result<Vec<u8>, YamlJsonError> {
    Ok(match key {
        Key::Str(s) => s,
        Key::Int(i) => i.to_string().into_bytes(),
        Key::Bool(b) => b.to_string().into_bytes(),
        // yaml.go formats float keys as float32 with 'g', and names infinities the YAML way.
        Key::Float(f) => go_format_float32_g(f).into_bytes(),
        Key::Null(pos) => {
            return Err(YamlJsonError::UnsupportedKey {
                line: pos.line,
                column: pos.column,
                key: "null".to_owned(),
            })
        }
        // yaml.go has no case for uint64 keys (values above the int64 range).
        Key::Uint(u, pos) => {
            return Err(YamlJsonError::UnsupportedKey {
                line: pos.line,
                column: pos.column,
                key: format!("the unsigned integer {u}"),
            })
        }
    })
}

pub(super) fn write_json(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Json::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Json::Float(f) => push_json_float(out, *f),
        Json::Str(s) => push_json_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, key);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

/// The value `serde_json` reads from [`write_json`]'s text, made without the text: strings
/// as `encoding/json` writes them ([`go_string`]), integers as `serde_json` reads integer
/// text, and floats through their Go text, which `serde_json` reads as an integer when it
/// has no fraction or exponent (`100`, `-0`) and as a float otherwise.
pub(super) fn into_serde(value: Json) -> serde_json::Value {
    use serde_json::Value as V;
    match value {
        Json::Null => V::Null,
        Json::Bool(b) => V::Bool(b),
        Json::Int(i) => V::from(i),
        Json::Uint(u) => V::from(u),
        Json::Float(f) => {
            let mut text = String::new();
            push_json_float(&mut text, f);
            // Go's float text is always a JSON number: the fallback is never taken.
            serde_json::from_str(&text).unwrap_or(V::Null)
        }
        Json::Str(s) => V::String(go_string(s)),
        Json::Array(items) => V::Array(items.into_iter().map(into_serde).collect()),
        Json::Object(entries) => V::Object(
            entries
                .into_iter()
                .map(|(k, v)| (go_string(k), into_serde(v)))
                .collect(),
        ),
    }
}

/// [`to_json_value`] then [`into_serde`] in one pass, with the same failures in the same
/// order (each key converted before its value), and the same winner among keys that
/// collide (the last in document order, then the last in key order).
pub(super) fn to_serde_value(value: Value) -> Result<serde_json::Value, YamlJsonError> {
    use serde_json::Value as V;
    Ok(match value {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(b),
        Value::Int(i) => V::from(i),
        Value::Uint(u) => V::from(u),
        f @ Value::Float(..) => into_serde(to_json_value(f)?),
        Value::Str(s) => V::String(go_string(s)),
        Value::Seq(items) => V::Array(
            items
                .into_iter()
                .map(to_serde_value)
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(entries) => {
            let mut object = BTreeMap::new();
            for (key, value) in entries {
                object.insert(json_key(key)?, to_serde_value(value)?);
            }
            V::Object(object.into_iter().map(|(k, v)| (go_string(k), v)).collect())
        }
    })
}
