//! The YAML-aware object diff (`--diff-style fields`): which field paths changed, with their
//! old and new values, rather than which lines.

use serde_json::Value;
use std::collections::BTreeSet;

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

/// What the walk carries: the masking rule and the lines written.
struct Walk<'m> {
    masked: &'m dyn Fn(&str) -> bool,
    out: String,
}

impl Walk<'_> {
    fn show_at(&self, path: &str, v: &Value) -> String {
        if (self.masked)(path) {
            "(masked)".to_string()
        } else {
            show(v)
        }
    }

    /// One entry of a mapping or list, present on either side or both.
    fn entry(&mut self, path: &str, before: Option<&Value>, after: Option<&Value>) {
        match (before, after) {
            (Some(x), Some(y)) => self.walk(path, x, y),
            (Some(x), None) => {
                let line = format!("- {path}: {}\n", self.show_at(path, x));
                self.out.push_str(&line);
            }
            (None, Some(y)) => {
                let line = format!("+ {path}: {}\n", self.show_at(path, y));
                self.out.push_str(&line);
            }
            (None, None) => {}
        }
    }

    fn walk(&mut self, path: &str, old: &Value, new: &Value) {
        if old == new {
            return;
        }
        match (old, new) {
            (Value::Object(before), Value::Object(after)) => {
                let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
                for key in keys {
                    let at = if path.is_empty() {
                        segment(key)
                    } else {
                        format!("{path}.{}", segment(key))
                    };
                    self.entry(&at, before.get(key), after.get(key));
                }
            }
            (Value::Array(before), Value::Array(after)) if by_name(before, after) => {
                let name = |i: &Value| i["name"].as_str().unwrap_or_default().to_string();
                let mut names: Vec<String> = before.iter().map(name).collect();
                for n in after.iter().map(name) {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                for n in names {
                    let find = |l: &'_ [Value]| l.iter().find(|i| name(i) == n).cloned();
                    let (x, y) = (find(before), find(after));
                    self.entry(&format!("{path}[name={n}]"), x.as_ref(), y.as_ref());
                }
            }
            (Value::Array(before), Value::Array(after)) => {
                for i in 0..before.len().max(after.len()) {
                    self.entry(&format!("{path}[{i}]"), before.get(i), after.get(i));
                }
            }
            _ => {
                let line = format!(
                    "~ {path}: {} -> {}\n",
                    self.show_at(path, old),
                    self.show_at(path, new)
                );
                self.out.push_str(&line);
            }
        }
    }
}

/// One line per changed field of `old` → `new`: `~ path: old -> new`, `+ path: new`,
/// `- path: old`. Values at paths `masked` says are Secret values print as `(masked)`.
#[must_use]
pub fn field_changes(old: &Value, new: &Value, masked: &dyn Fn(&str) -> bool) -> String {
    let mut w = Walk {
        masked,
        out: String::new(),
    };
    w.walk("", old, new);
    w.out
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
