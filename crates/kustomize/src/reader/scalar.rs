//! Scalars as go-yaml v3 resolves them (`resolve.go`), then as the JSON round trip leaves
//! them.

use saphyr_parser::ScalarStyle;

use super::{unsupported, ReadError};
use crate::node::Node;
use goyaml::resolve::{resolve, Flavour, Resolved};

/// An untagged plain scalar's text as go-yaml v3 resolves it (a field that kyaml creates
/// without a tag, then reads back when it prints).
pub(crate) fn resolve_plain(value: &str) -> Result<Node, crate::Unsupported> {
    scalar(value, ScalarStyle::Plain).map_err(|e| match e {
        ReadError::Syntax(m) | ReadError::Unsupported(m) => m.into(),
        ReadError::Bound(b) => b.to_string().into(),
    })
}

/// A scalar as go-yaml v3 resolves it (`resolve.go`), then as the JSON round trip leaves it.
pub(super) fn scalar(value: &str, style: ScalarStyle) -> Result<Node, ReadError> {
    check_string(value)?;
    if style != ScalarStyle::Plain {
        return Ok(Node::Str(value.to_string()));
    }
    // The words as go-yaml v3 reads them; numbers as `number` checks them, delegating what it
    // is not sure of.
    Ok(match resolve(Flavour::V3, "", value) {
        Resolved::Null => Node::Null,
        Resolved::Bool(b) => Node::Bool(b),
        Resolved::Float(f) if !f.is_finite() => {
            return Err(unsupported("an infinite or NaN number"))
        }
        _ => match value.as_bytes().first() {
            Some(b'0'..=b'9' | b'+' | b'-' | b'.') => number(value)?,
            _ => Node::Str(value.to_string()),
        },
    })
}

/// Strings the JSON round trip would not give back unchanged: yaml.v2 reads a raw NEL, LS
/// or PS inside a JSON string as a line break and folds it.
fn check_string(value: &str) -> Result<(), ReadError> {
    if value.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return Err(unsupported("a NEL, LS or PS character in a string"));
    }
    // After a byte-order mark, go-yaml v2's emitter escapes every following character of a
    // double-quoted scalar; not reproduced.
    if value.contains('\u{FEFF}') {
        return Err(unsupported("a byte-order mark in a string"));
    }
    Ok(())
}

/// resolve.go's number branch: timestamps first (kyaml turns them into RFC 3339 text: not
/// reproduced), then `ParseInt(plain, 0, 64)`, `ParseUint`, and the YAML float syntax.
fn number(value: &str) -> Result<Node, ReadError> {
    let b = value.as_bytes();
    if b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
        return Err(unsupported("an unquoted timestamp"));
    }
    // resolve.go tries ParseFloat on the raw text for a leading dot (not the text without
    // underscores, as below); Go's underscore rules there are not reproduced: be safe.
    // ParseFloat takes a text whole or not at all, and one holding anything but digits, `.`,
    // `_`, `e`, `+` and `-` is no float whatever its underscores (`./clusters/${CLUSTER_NAME}`,
    // a path a postBuild fills in, is a string).
    if value.starts_with('.')
        && value.contains('_')
        && value
            .bytes()
            .all(|c| c.is_ascii_digit() || b"._eE+-".contains(&c))
    {
        return Err(unsupported("an unusual number"));
    }
    let plain = value.replace('_', "");
    if let Some(i) = go_parse_int(&plain) {
        return Ok(Node::Int(i));
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Ok(Node::Uint(u));
    }
    if is_yaml_float(&plain) {
        if let Ok(f) = plain.parse::<f64>() {
            if f.is_finite() {
                return Ok(Node::Float(f));
            }
        }
        return Err(unsupported("an out-of-range float"));
    }
    if plain.bytes().all(|c| c.is_ascii_digit()) && !plain.is_empty() {
        // Digits that overflow every integer type.
        return Err(unsupported("an out-of-range integer"));
    }
    Ok(Node::Str(value.to_string()))
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (resolve.go `yamlStyleFloat`):
/// the same rule the postBuild reader uses.
pub(crate) use goyaml::resolve::is_yaml_style_float as is_yaml_float;

/// Go `strconv.ParseUint(s, 0, 64)`: `0x`, `0o`, `0b` and leading-`0` octal prefixes.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    goyaml::strconv::go_parse_uint(s, 0)
}

/// Go `strconv.ParseInt(s, 0, 64)`.
pub(crate) fn go_parse_int(s: &str) -> Option<i64> {
    goyaml::strconv::go_parse_int(s, 0)
}
