//! Canonical JSON text (what `serde_json` writes) read with `serde_json` to the nodes the
//! YAML parser gives it.

use saphyr_parser::ScalarStyle;

use super::scalar::scalar;
use super::{unsupported, EmptyNulls, ReadError};
use crate::node::{Map, Node};

/// A text that is one JSON value exactly as `serde_json` writes it (the objects postBuild
/// rebuilt, which the reprint reads back) is read with `serde_json` instead of the YAML
/// parser, to the same nodes: in such a text every string is double-quoted with only the
/// escapes YAML's double-quoted style shares (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
/// `\u00XX`), every other scalar is a plain `null`, `true`, `false` or number, keys are
/// unique and in text order, and there are no comments, anchors, tags, tabs or empty
/// values; so each scalar goes through [`scalar`] with the style and text the parser would
/// give it. Texts with characters the YAML reader may refuse or fold (DEL, C1 controls,
/// NEL, LS, PS, byte-order marks, U+FFFE/U+FFFF), or with `\/`, take the parser. `None`: not such a text.
pub(super) fn read_canonical_json(
    text: &str,
) -> Option<Result<Vec<(Node, EmptyNulls)>, ReadError>> {
    if !text.starts_with(['{', '[']) {
        return None;
    }
    if text.chars().any(|c| {
        matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
    }) {
        return None;
    }
    // The parser's reading delegates any double-quoted scalar whose text holds `\/` (an
    // escaped backslash before a slash included): such texts take the parser.
    if text.contains("\\/") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let canonical = value.to_string();
    if canonical != text {
        return None;
    }
    Some(json_node(&value).map(|doc| {
        if doc == Node::Null {
            Vec::new()
        } else {
            vec![(doc, EmptyNulls::None)]
        }
    }))
}

/// A node of [`read_canonical_json`]: each scalar read by [`scalar`] as the parser gives it.
fn json_node(v: &serde_json::Value) -> Result<Node, ReadError> {
    use serde_json::Value as V;
    Ok(match v {
        V::Null => scalar("null", ScalarStyle::Plain)?,
        V::Bool(b) => scalar(if *b { "true" } else { "false" }, ScalarStyle::Plain)?,
        V::Number(n) => scalar(&n.to_string(), ScalarStyle::Plain)?,
        V::String(s) => scalar(s, ScalarStyle::DoubleQuoted)?,
        V::Array(items) => Node::Seq(items.iter().map(json_node).collect::<Result<_, _>>()?),
        V::Object(entries) => {
            let mut map = Map::default();
            for (k, v) in entries {
                let Node::Str(key) = scalar(k, ScalarStyle::DoubleQuoted)? else {
                    return Err(unsupported("a mapping key that is not a string"));
                };
                // As the parser's reading: a `<<` key, quoted or not.
                if key == "<<" {
                    return Err(unsupported("a quoted or tagged `<<` key"));
                }
                map.0.push((key, json_node(v)?));
            }
            Node::Map(map)
        }
    })
}
