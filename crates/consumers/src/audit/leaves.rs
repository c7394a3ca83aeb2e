//! Every string of an object with its path in the object, and which of them are scripts
//! (cloud-init `userData`, `sh -c` arguments, script files in a ConfigMap): where a shell
//! `${var}` is expected and Flux's substitution is a hazard.

use std::fmt::Write as _;

use serde_json::Value;

use super::expr;

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A string in an object (a value, or a mapping key), with where it sits.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    /// From the object's root.
    pub(crate) path: Vec<Seg>,
    /// The string.
    pub(crate) value: String,
    /// It is a mapping key, not a value.
    pub(crate) key: bool,
    /// It is (part of) a script a shell runs.
    pub(crate) script: bool,
}

/// `spec.containers[0].args[1]`.
pub(crate) fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Every string of an object, keys included, in the object's (sorted) key order.
pub(crate) fn string_leaves(obj: &Value) -> Vec<Leaf> {
    fn walk(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Leaf>) {
        match v {
            Value::String(s) => out.push(Leaf {
                path: path.clone(),
                value: s.clone(),
                key: false,
                script: false,
            }),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(item, path, out);
                    path.pop();
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    path.push(Seg::Key(k.clone()));
                    if k.contains("${") {
                        out.push(Leaf {
                            path: path.clone(),
                            value: k.clone(),
                            key: true,
                            script: false,
                        });
                    }
                    walk(item, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(obj, &mut Vec::new(), &mut out);
    for leaf in &mut out {
        leaf.script = !leaf.key && is_script(obj, &leaf.path, &leaf.value);
    }
    out
}

pub(crate) fn key_at(path: &[Seg], i: usize) -> Option<&str> {
    match path.get(i) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    }
}

/// `[.., containers, i, command|args, j]`: the position of `containers`, when it is one.
pub(crate) fn container_arg(path: &[Seg]) -> Option<usize> {
    let n = path.len();
    if n < 4 || !matches!(path[n - 1], Seg::Index(_)) || !matches!(path[n - 3], Seg::Index(_)) {
        return None;
    }
    let list = key_at(path, n - 2)?;
    let containers = key_at(path, n - 4)?;
    (matches!(list, "command" | "args")
        && matches!(
            containers,
            "containers" | "initContainers" | "ephemeralContainers"
        ))
    .then_some(n - 4)
}

/// Whether a string is run by a shell: cloud-init user data, a `script` field, a container
/// whose command is `sh -c` (or bash ...), or text that reads as a script.
fn is_script(obj: &Value, path: &[Seg], value: &str) -> bool {
    let named = path.iter().any(|s| {
        matches!(s, Seg::Key(k) if matches!(
            k.to_ascii_lowercase().as_str(),
            "userdata" | "user-data" | "user_data" | "script"
        ))
    });
    named || shell_container_arg(obj, path) || expr::looks_like_script(value)
}

fn shell_container_arg(obj: &Value, path: &[Seg]) -> bool {
    let Some(at) = container_arg(path) else {
        return false;
    };
    let Some(container) = lookup(obj, &path[..at + 2]) else {
        return false;
    };
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .filter_map(|f| container.get(*f).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let shell = words.iter().any(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        matches!(base, "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh")
    });
    let dash_c = words
        .iter()
        .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'));
    shell && dash_c
}

/// The value at a path.
pub(crate) fn lookup<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn keys(p: &[&str]) -> Vec<Seg> {
        p.iter()
            .map(|s| match s.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key((*s).to_string()),
            })
            .collect()
    }

    #[test]
    fn shell_c_container_args_and_user_data_are_scripts() {
        let pod = json!({"kind": "Pod", "spec": {"containers": [
            {"command": ["/bin/sh", "-ec"], "args": ["echo ${HOME}"]},
            {"args": ["--level=${LEVEL}"]}]}});
        let leaves = string_leaves(&pod);
        let script: Vec<(String, bool)> = leaves
            .iter()
            .map(|l| (path_text(&l.path), l.script))
            .collect();
        assert!(script.contains(&("spec.containers[0].args[0]".into(), true)));
        assert!(script.contains(&("spec.containers[1].args[0]".into(), false)));
        let vm = json!({"spec": {"volumes": [{"cloudInitNoCloud": {"userData": "x ${a}"}}]}});
        assert!(string_leaves(&vm).iter().any(|l| l.script));
    }
}
