//! Noise dropped before two objects are compared: `--strip-field PATH` and
//! `--strip-label KEY` (a chart version label, a checksum annotation that changes on every
//! build).

use serde_json::Value;

/// What to drop from every object before comparing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strip {
    /// Field paths, each a list of segments (`*` matches any key or list item).
    pub fields: Vec<Vec<String>>,
    /// Label keys, dropped from every `metadata.labels` of the object (its own, its pod
    /// template's, ...).
    pub labels: Vec<String>,
}

/// Why a `--strip-field` path cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--strip-field `{path}`: {why} (write segments separated by `.`, quote one holding a dot: metadata.annotations.\"example.com/checksum\")")]
pub struct PathError {
    path: String,
    why: &'static str,
}

/// Reads a field path: segments separated by `.`, a segment in double quotes may hold dots.
pub fn parse_path(path: &str) -> Result<Vec<String>, PathError> {
    let err = |why| PathError {
        path: path.to_string(),
        why,
    };
    let mut segments = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let (seg, after) = if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').ok_or_else(|| err("an unclosed quote"))?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        if seg.is_empty() {
            return Err(err("an empty segment"));
        }
        segments.push(seg.to_string());
        rest = match after.strip_prefix('.') {
            Some(r) if !r.is_empty() => r,
            Some(_) => return Err(err("a trailing `.`")),
            None if after.is_empty() => "",
            None => return Err(err("a quote not followed by `.`")),
        };
    }
    if segments.is_empty() {
        return Err(err("an empty path"));
    }
    Ok(segments)
}

impl Strip {
    /// Nothing to strip.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.labels.is_empty()
    }

    /// The object without the stripped fields and labels; `None` when nothing was there to
    /// strip.
    #[must_use]
    pub fn apply(&self, object: &Value) -> Option<Value> {
        let mut v = object.clone();
        let mut changed = false;
        for path in &self.fields {
            changed |= remove_path(&mut v, path);
        }
        if !self.labels.is_empty() {
            changed |= remove_labels(&mut v, &self.labels);
        }
        changed.then_some(v)
    }
}

fn remove_path(v: &mut Value, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match v {
        Value::Object(map) => {
            if rest.is_empty() {
                if first == "*" {
                    let had = !map.is_empty();
                    map.clear();
                    return had;
                }
                return map.remove(first).is_some();
            }
            if first == "*" {
                map.values_mut()
                    .fold(false, |c, child| remove_path(child, rest) | c)
            } else {
                map.get_mut(first)
                    .is_some_and(|child| remove_path(child, rest))
            }
        }
        Value::Array(items) => {
            let index = first.parse::<usize>().ok();
            if rest.is_empty() {
                return match index {
                    Some(i) if i < items.len() => {
                        items.remove(i);
                        true
                    }
                    _ => false,
                };
            }
            match (first.as_str(), index) {
                ("*", _) => items
                    .iter_mut()
                    .fold(false, |c, child| remove_path(child, rest) | c),
                (_, Some(i)) => items
                    .get_mut(i)
                    .is_some_and(|child| remove_path(child, rest)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Drops `keys` from every `metadata.labels` mapping inside `v`.
fn remove_labels(v: &mut Value, keys: &[String]) -> bool {
    let mut changed = false;
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(labels)) =
                map.get_mut("metadata").and_then(|m| m.get_mut("labels"))
            {
                for k in keys {
                    changed |= labels.remove(k).is_some();
                }
            }
            for child in map.values_mut() {
                changed |= remove_labels(child, keys);
            }
        }
        Value::Array(items) => {
            for child in items {
                changed |= remove_labels(child, keys);
            }
        }
        _ => {}
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strip_field_paths_are_dot_separated_with_quoted_segments() {
        assert_eq!(
            parse_path("metadata.annotations.\"example.com/checksum\"").unwrap(),
            vec!["metadata", "annotations", "example.com/checksum"]
        );
        assert!(parse_path("a..b").is_err());
        assert!(parse_path("a.\"b").is_err());
        assert!(parse_path("").is_err());
    }

    #[test]
    fn strip_field_removes_the_field_and_wildcards_reach_every_item() {
        let s = Strip {
            fields: vec![
                parse_path("metadata.annotations.\"example.com/checksum\"").unwrap(),
                parse_path("spec.template.spec.containers.*.env").unwrap(),
            ],
            labels: Vec::new(),
        };
        let v = json!({"metadata": {"annotations": {"example.com/checksum": "1", "keep": "x"}},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "env": [1]}, {"name": "b", "env": [2]}]}}}});
        let out = s.apply(&v).unwrap();
        assert_eq!(out["metadata"]["annotations"], json!({"keep": "x"}));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a"}, {"name": "b"}])
        );
        assert_eq!(s.apply(&json!({"kind": "X"})), None, "nothing to strip");
    }

    #[test]
    fn strip_label_drops_the_label_from_every_metadata() {
        let s = Strip {
            fields: Vec::new(),
            labels: vec!["helm.sh/chart".into()],
        };
        let v = json!({"metadata": {"labels": {"helm.sh/chart": "x-1.0", "app": "x"}},
            "spec": {"selector": {"matchLabels": {"helm.sh/chart": "kept"}},
                     "template": {"metadata": {"labels": {"helm.sh/chart": "x-1.0"}}}}});
        let out = s.apply(&v).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(out["spec"]["template"]["metadata"]["labels"], json!({}));
        assert_eq!(
            out["spec"]["selector"]["matchLabels"]["helm.sh/chart"],
            "kept"
        );
    }
}
