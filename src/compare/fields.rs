//! The YAML-aware object diff (`--diff-style fields`): which field paths changed, with their
//! old and new values, rather than which lines.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::Value;

/// A value as one line: JSON, cut when long.
fn show(v: &Value) -> String {
    const MAX: usize = 160;
    let s = v.to_string();
    if s.len() <= MAX {
        return s;
    }
    let mut cut = MAX;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &s[..cut], s.len())
}

/// A key as a path segment: quoted when it holds a `.` or a quote.
fn segment(k: &str) -> String {
    if k.contains(['.', '"', '[', ']']) || k.is_empty() {
        format!("{k:?}")
    } else {
        k.to_string()
    }
}

/// Items of two lists are matched by `name` when every item of both is a mapping with a
/// string `name` (containers, env, ports, volumes), else by position.
fn by_name(a: &[Value], b: &[Value]) -> bool {
    let named = |l: &[Value]| {
        let names: Vec<&str> = l
            .iter()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .collect();
        names.len() == l.len() && names.iter().collect::<BTreeSet<_>>().len() == names.len()
    };
    !(a.is_empty() && b.is_empty()) && named(a) && named(b)
}

fn walk(path: &str, old: &Value, new: &Value, masked: &dyn Fn(&str) -> bool, out: &mut String) {
    if old == new {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            segment(k)
        } else {
            format!("{path}.{}", segment(k))
        }
    };
    let val = |p: &str, v: &Value| {
        if masked(p) {
            "(masked)".to_string()
        } else {
            show(v)
        }
    };
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = join(k);
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk(&p, x, y, masked, out),
                    (Some(x), None) => {
                        let _ = writeln!(out, "- {p}: {}", val(&p, x));
                    }
                    (None, Some(y)) => {
                        let _ = writeln!(out, "+ {p}: {}", val(&p, y));
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if by_name(a, b) => {
            let name = |i: &Value| i["name"].as_str().unwrap_or_default().to_string();
            let names: Vec<String> = a
                .iter()
                .map(name)
                .chain(b.iter().map(name).filter(|n| !a.iter().any(|i| &name(i) == n)))
                .collect();
            for n in names {
                let p = format!("{path}[name={n}]");
                let (x, y) = (
                    a.iter().find(|i| name(i) == n),
                    b.iter().find(|i| name(i) == n),
                );
                match (x, y) {
                    (Some(x), Some(y)) => walk(&p, x, y, masked, out),
                    (Some(x), None) => {
                        let _ = writeln!(out, "- {p}: {}", val(&p, x));
                    }
                    (None, Some(y)) => {
                        let _ = writeln!(out, "+ {p}: {}", val(&p, y));
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let p = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => walk(&p, x, y, masked, out),
                    (Some(x), None) => {
                        let _ = writeln!(out, "- {p}: {}", val(&p, x));
                    }
                    (None, Some(y)) => {
                        let _ = writeln!(out, "+ {p}: {}", val(&p, y));
                    }
                    (None, None) => {}
                }
            }
        }
        _ => {
            let _ = writeln!(out, "~ {path}: {} -> {}", val(path, old), val(path, new));
        }
    }
}

/// One line per changed field of `old` → `new`: `~ path: old -> new`, `+ path: new`,
/// `- path: old`. Values at paths `masked` says are Secret values print as `(masked)`.
#[must_use]
pub fn field_changes(old: &Value, new: &Value, masked: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::new();
    walk("", old, new, masked, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_diff_names_changed_paths_and_matches_list_items_by_name() {
        let old = json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.25"}, {"name": "side", "image": "busybox"}]}}},
            "metadata": {"labels": {"a.b/c": "1"}}});
        let new = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "side", "image": "busybox"}, {"name": "web", "image": "nginx:1.26"}]}}},
            "metadata": {"labels": {"a.b/c": "1", "team": "shop"}}});
        assert_eq!(
            field_changes(&old, &new, &|_| false),
            "+ metadata.labels.team: \"shop\"\n~ spec.replicas: 1 -> 3\n~ spec.template.spec.containers[name=web].image: \"nginx:1.25\" -> \"nginx:1.26\"\n"
        );
    }

    #[test]
    fn field_diff_of_unnamed_lists_goes_by_position_and_masks_secret_values() {
        let old = json!({"args": ["a", "b"], "data": {"p": "eA=="}});
        let new = json!({"args": ["a"], "data": {"p": "eQ=="}});
        assert_eq!(
            field_changes(&old, &new, &|p| p.starts_with("data.")),
            "- args[1]: \"b\"\n~ data.p: (masked) -> (masked)\n"
        );
    }
}
