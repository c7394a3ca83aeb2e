//! The semantic diff of two Kubernetes objects: what changed, as paths with their values
//! before and after (`spec.template.spec.containers[name=app].image: a → b`).
//!
//! Mappings are compared key by key. List items are matched by their merge keys
//! ([`crate::keys`]): an item present on one side only is added or removed, an item on both
//! is compared field by field, and items in another order are one [`Op::Reordered`] entry.
//! A list without merge keys is compared by value: the same items in another order are a
//! reorder, anything else is aligned by a longest-common-subsequence diff of the items (so an
//! argument inserted in the middle is one addition, not a change of every later one). Strings
//! are values like any other; a renderer shows a change of a multi-line string (a
//! ConfigMap's embedded file) as a line diff ([`FieldChange::text`]).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;
use similar::{capture_diff_slices, Algorithm, DiffTag};

use crate::keys::{identity, merge_keys};
use crate::path::{key_value, Path, Segment};

/// What happened at a path.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Op {
    /// A value replaced by another (a scalar, a string, or a value of another type).
    Changed {
        /// The value in base.
        before: Value,
        /// The value in head.
        after: Value,
    },
    /// A field or list item only in head.
    Added {
        /// Its value.
        after: Value,
    },
    /// A field or list item only in base.
    Removed {
        /// Its value.
        before: Value,
    },
    /// The same list items in another order: each item named by its merge keys' values
    /// (`app`, `80/TCP`) or, without keys, by its value as JSON. Only the items on both sides.
    #[serde(rename = "order")]
    Reordered {
        /// The items in base's order.
        before: Vec<String>,
        /// The items in head's order.
        after: Vec<String>,
    },
}

/// One change of an object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// Where.
    pub path: Path,
    /// What.
    #[serde(flatten)]
    pub op: Op,
}

impl FieldChange {
    /// The two texts of a changed string of several lines (shown as a line diff).
    #[must_use]
    pub fn text(&self) -> Option<(&str, &str)> {
        match &self.op {
            Op::Changed {
                before: Value::String(a),
                after: Value::String(b),
            } if a.contains('\n') || b.contains('\n') => Some((a, b)),
            _ => None,
        }
    }
}

/// Every change from `base` to `head`, in the order of the fields (keys sorted, list items in
/// head's order after the removed ones).
#[must_use]
pub fn diff(base: &Value, head: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk(&Path::root(), base, head, &mut out);
    out
}

fn push(out: &mut Vec<FieldChange>, path: Path, op: Op) {
    out.push(FieldChange { path, op });
}

fn walk(path: &Path, base: &Value, head: &Value, out: &mut Vec<FieldChange>) {
    if base == head {
        return;
    }
    match (base, head) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let at = path.key(k);
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk(&at, x, y, out),
                    (Some(x), None) => push(out, at, Op::Removed { before: x.clone() }),
                    (None, Some(y)) => push(out, at, Op::Added { after: y.clone() }),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            let field = match path.0.last() {
                Some(Segment::Key(k)) => Some(k.as_str()),
                _ => None,
            };
            match merge_keys(field, &[a, b]) {
                Some(keys) => keyed(path, keys, a, b, out),
                None => by_value(path, a, b, out),
            }
        }
        _ => push(
            out,
            path.clone(),
            Op::Changed {
                before: base.clone(),
                after: head.clone(),
            },
        ),
    }
}

/// The keys an item shows in its path: those it has (a protocol defaulted for matching is
/// not written).
fn shown_id(item: &Value, keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .filter_map(|k| item.get(*k).map(|v| ((*k).to_string(), key_value(v))))
        .collect()
}

/// An item's name in an "order changed" line: its keys' values, `/`-separated.
fn label(item: &Value, keys: &[&str]) -> String {
    shown_id(item, keys)
        .into_iter()
        .map(|(_, v)| v)
        .collect::<Vec<_>>()
        .join("/")
}

fn keyed(path: &Path, keys: &[&str], a: &[Value], b: &[Value], out: &mut Vec<FieldChange>) {
    // `merge_keys` checked that every item has a distinct identity.
    let ids = |l: &[Value]| -> Vec<Vec<(String, String)>> {
        l.iter()
            .map(|i| identity(i, keys).unwrap_or_default())
            .collect()
    };
    let (ia, ib) = (ids(a), ids(b));
    let common_a: Vec<usize> = (0..a.len()).filter(|&i| ib.contains(&ia[i])).collect();
    let common_b: Vec<usize> = (0..b.len()).filter(|&j| ia.contains(&ib[j])).collect();
    let order_a: Vec<&Vec<(String, String)>> = common_a.iter().map(|&i| &ia[i]).collect();
    let order_b: Vec<&Vec<(String, String)>> = common_b.iter().map(|&j| &ib[j]).collect();
    if order_a != order_b {
        push(
            out,
            path.clone(),
            Op::Reordered {
                before: common_a.iter().map(|&i| label(&a[i], keys)).collect(),
                after: common_b.iter().map(|&j| label(&b[j], keys)).collect(),
            },
        );
    }
    for (i, item) in a.iter().enumerate() {
        if !ib.contains(&ia[i]) {
            let at = path.child(Segment::Match(shown_id(item, keys)));
            push(
                out,
                at,
                Op::Removed {
                    before: item.clone(),
                },
            );
        }
    }
    for (j, item) in b.iter().enumerate() {
        let at = path.child(Segment::Match(shown_id(item, keys)));
        match ia.iter().position(|id| *id == ib[j]) {
            Some(i) => walk(&at, &a[i], item, out),
            None => push(
                out,
                at,
                Op::Added {
                    after: item.clone(),
                },
            ),
        }
    }
}

/// An item of a list without keys, named in an "order changed" line: its JSON, cut.
fn value_label(v: &Value) -> String {
    const MAX: usize = 60;
    let s = key_value(v);
    if s.chars().count() <= MAX {
        return s;
    }
    let cut: String = s.chars().take(MAX - 1).collect();
    format!("{cut}…")
}

fn by_value(path: &Path, a: &[Value], b: &[Value], out: &mut Vec<FieldChange>) {
    let sa: Vec<String> = a.iter().map(Value::to_string).collect();
    let sb: Vec<String> = b.iter().map(Value::to_string).collect();
    let sorted = |s: &[String]| {
        let mut v = s.to_vec();
        v.sort();
        v
    };
    if sorted(&sa) == sorted(&sb) {
        push(
            out,
            path.clone(),
            Op::Reordered {
                before: a.iter().map(value_label).collect(),
                after: b.iter().map(value_label).collect(),
            },
        );
        return;
    }
    for op in capture_diff_slices(Algorithm::Myers, &sa, &sb) {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete | DiffTag::Insert | DiffTag::Replace => {
                let paired = old.len().min(new.len());
                let (gone, came) = (&a[old.clone()], &b[new.clone()]);
                for (k, (x, y)) in gone.iter().zip(came).enumerate() {
                    walk(&path.child(Segment::Index(new.start + k)), x, y, out);
                }
                for (k, x) in gone.iter().enumerate().skip(paired) {
                    let at = path.child(Segment::Index(old.start + k));
                    push(out, at, Op::Removed { before: x.clone() });
                }
                for (k, y) in came.iter().enumerate().skip(paired) {
                    let at = path.child(Segment::Index(new.start + k));
                    push(out, at, Op::Added { after: y.clone() });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(changes: &[FieldChange]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match &c.op {
                Op::Changed { before, after } => format!("~ {}: {before} -> {after}", c.path),
                Op::Added { after } => format!("+ {}: {after}", c.path),
                Op::Removed { before } => format!("- {}: {before}", c.path),
                Op::Reordered { before, after } => {
                    format!(
                        "order {}: {} -> {}",
                        c.path,
                        before.join(","),
                        after.join(",")
                    )
                }
            })
            .collect()
    }

    fn deployment(containers: &Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "apps"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    }

    #[test]
    fn containers_are_matched_by_name_and_changes_are_paths() {
        let a =
            deployment(&json!([{"name": "app", "image": "a:1"}, {"name": "side", "image": "s"}]));
        let b =
            deployment(&json!([{"name": "app", "image": "a:2"}, {"name": "side", "image": "s"}]));
        assert_eq!(
            lines(&diff(&a, &b)),
            ["~ spec.template.spec.containers[name=app].image: \"a:1\" -> \"a:2\""]
        );
    }

    #[test]
    fn a_pure_reorder_is_one_order_changed_entry() {
        let a = deployment(&json!([{"name": "app", "image": "a"}, {"name": "side", "image": "s"}]));
        let b = deployment(&json!([{"name": "side", "image": "s"}, {"name": "app", "image": "a"}]));
        assert_eq!(
            lines(&diff(&a, &b)),
            ["order spec.template.spec.containers: app,side -> side,app"]
        );
        let t = json!({"tolerations": [{"key": "a"}, {"key": "b"}]});
        let u = json!({"tolerations": [{"key": "b"}, {"key": "a"}]});
        assert_eq!(
            lines(&diff(&t, &u)),
            ["order tolerations: {\"key\":\"a\"},{\"key\":\"b\"} -> {\"key\":\"b\"},{\"key\":\"a\"}"]
        );
    }

    #[test]
    fn a_reorder_with_a_change_reports_both() {
        let a = deployment(&json!([{"name": "app", "image": "a"}, {"name": "side", "image": "s"}]));
        let b =
            deployment(&json!([{"name": "side", "image": "s2"}, {"name": "app", "image": "a"}]));
        assert_eq!(
            lines(&diff(&a, &b)),
            [
                "order spec.template.spec.containers: app,side -> side,app",
                "~ spec.template.spec.containers[name=side].image: \"s\" -> \"s2\""
            ]
        );
    }

    #[test]
    fn added_and_removed_items_are_named_by_their_keys() {
        let a = json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]});
        let b = json!({"env": [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}]});
        assert_eq!(
            lines(&diff(&a, &b)),
            [
                "- env[name=B]: {\"name\":\"B\",\"value\":\"2\"}",
                "+ env[name=C]: {\"name\":\"C\",\"value\":\"3\"}"
            ]
        );
    }

    #[test]
    fn ports_without_protocol_are_the_same_port_as_tcp() {
        let a = json!({"ports": [{"containerPort": 80}]});
        let b = json!({"ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]});
        assert_eq!(
            lines(&diff(&a, &b)),
            [
                "+ ports[containerPort=80,protocol=TCP].name: \"http\"",
                "+ ports[containerPort=80,protocol=TCP].protocol: \"TCP\""
            ]
        );
        let s = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}]}});
        let t = json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}});
        assert_eq!(
            lines(&diff(&s, &t)),
            ["~ spec.ports[port=80].targetPort: 8080 -> 9090"]
        );
    }

    #[test]
    fn an_inserted_argument_is_one_addition() {
        let a = json!({"args": ["--a", "--b", "--c"]});
        let b = json!({"args": ["--a", "--x", "--b", "--c"]});
        assert_eq!(lines(&diff(&a, &b)), ["+ args[1]: \"--x\""]);
        let c = json!({"args": ["--a", "--b"]});
        let d = json!({"args": ["--a", "--B"]});
        assert_eq!(lines(&diff(&c, &d)), ["~ args[1]: \"--b\" -> \"--B\""]);
    }

    #[test]
    fn a_multi_line_string_change_is_a_text_change() {
        let a = json!({"data": {"nginx.conf": "a\nb\n", "k": "v"}});
        let b = json!({"data": {"nginx.conf": "a\nc\n", "k": "w"}});
        let changes = diff(&a, &b);
        assert_eq!(changes[1].path.to_string(), "data.\"nginx.conf\"");
        assert_eq!(changes[1].text(), Some(("a\nb\n", "a\nc\n")));
        assert_eq!(changes[0].text(), None);
    }

    #[test]
    fn changes_serialize_as_path_op_before_after() {
        let a = json!({"spec": {"replicas": 1}});
        let b = json!({"spec": {"replicas": 2}});
        assert_eq!(
            serde_json::to_value(diff(&a, &b)).unwrap(),
            json!([{"path": "spec.replicas", "op": "changed", "before": 1, "after": 2}])
        );
    }
}
