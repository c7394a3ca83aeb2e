//! FS105: a value that changes the type of its scalar, or breaks the document, once
//! substituted and read back as YAML 1.1.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::artifact::ArtifactObject;
use crate::audit::context::{finding_for, place_in, ClusterCtx, Occurrences};
use crate::audit::expr::{self, Ref};
use crate::audit::leaves::{container_arg, key_at, lookup, path_text, Leaf, Seg};
use crate::audit::place::{Needle, Sources};
use crate::audit::rules::TYPE_CHANGE;
use crate::finding::Severity;
use crate::model::KustomizationRender;

impl ClusterCtx<'_> {
    /// FS105: substitute the object as Flux does and compare each substituted scalar's type
    /// with the template's.
    pub(crate) fn check_types(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        leaves: &[Leaf],
        files: &mut Sources<'_>,
    ) {
        if leaves.is_empty() {
            return;
        }
        let values: BTreeMap<String, String> = k
            .vars
            .iter()
            .map(|(n, v)| (n.clone(), v.value.clone()))
            .collect();
        let encrypted: BTreeSet<&str> = k
            .vars
            .iter()
            .filter(|(_, v)| v.encrypted)
            .map(|(n, _)| n.as_str())
            .collect();
        // The same steps as `postbuild::substitute_text`, non-strict: undefined vars were
        // judged above.
        let Ok(out) = crate::envsubst::eval(o.yaml.as_bytes(), &values, false) else {
            return;
        };
        let after = String::from_utf8(out)
            .map_err(|_| "the result is not valid UTF-8".to_string())
            .and_then(|s| crate::goyaml::yaml_json::yaml_to_value(&s).map_err(|e| e.to_string()));
        let leaf_refs: Vec<Vec<Ref>> = leaves.iter().map(|l| expr::scan(&l.value).0).collect();
        let mut seen = Occurrences::default();
        let after = match after {
            Ok(v) => v,
            Err(why) => {
                self.broken_document(k, o, &values, &leaf_refs, &why, files);
                return;
            }
        };
        for (leaf, refs) in leaves.iter().zip(&leaf_refs) {
            let needles: Vec<Needle<'_>> = refs.iter().map(|r| seen.next(&r.text)).collect();
            let templated_key = leaf
                .path
                .iter()
                .any(|s| matches!(s, Seg::Key(k) if k.contains("${")));
            if leaf.key || templated_key || refs.is_empty() {
                continue;
            }
            // Unknown values (encrypted, or from a source nothing in the repository applies)
            // cannot be type-checked.
            if refs.iter().any(|r| {
                encrypted.contains(r.name.as_str())
                    || (!r.has_default && !values.contains_key(&r.name))
            }) {
                continue;
            }
            self.checks += 1;
            let got = lookup(&after, &leaf.path);
            let text = crate::envsubst::eval(leaf.value.as_bytes(), &values, false)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            // A list or mapping where the default is one too (`${EXT:=[]}`,
            // `${EXT:=${emptyArray}}`): the template means a structure there.
            if matches!(got, Some(Value::Array(_) | Value::Object(_)))
                && default_shape(&leaf.value, refs, &values).is_some_and(|d| same_shape(d, got))
            {
                continue;
            }
            let place = place_in(files, k, o, needles.first().copied());
            let Some((severity, why)) = judge(&o.id.kind, &leaf.path, got, place.quoted, &text)
            else {
                continue;
            };
            let message = format!(
                "`{}` makes `{}` of {} {}{why}",
                refs[0].text,
                path_text(&leaf.path),
                o.id,
                got.map_or_else(
                    || "disappear".to_string(),
                    |v| format!("{} (`{}` read as YAML 1.1)", describe(v), text.trim())
                ),
            );
            self.findings.push(
                finding_for(&self.cluster.name, k, &TYPE_CHANGE, message, place.location)
                    .with_severity(severity)
                    .about("expression", refs[0].text.clone())
                    .about("field", path_text(&leaf.path))
                    .about("object", o.id.to_string()),
            );
        }
    }

    /// FS105 as an error: the substituted object is no longer YAML Flux can read. Points at
    /// the first reference whose value can change YAML's structure.
    fn broken_document(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        values: &BTreeMap<String, String>,
        leaf_refs: &[Vec<Ref>],
        why: &str,
        files: &mut Sources<'_>,
    ) {
        self.checks += 1;
        // An unknown var (from a source nothing here applies) read as empty proves nothing
        // about the document.
        if leaf_refs
            .iter()
            .flatten()
            .any(|r| !r.has_default && !values.contains_key(&r.name))
        {
            return;
        }
        let mut seen = Occurrences::default();
        let mut culprit = None;
        for r in leaf_refs.iter().flatten() {
            let needle = seen.next(&r.text);
            if culprit.is_none() && values.get(&r.name).is_some_and(|v| yaml_special(v)) {
                culprit = Some((needle, r));
            }
        }
        let place = place_in(files, k, o, culprit.as_ref().map(|(n, _)| *n));
        let by = culprit.map_or_else(String::new, |(_, r)| {
            format!(
                " (`{}` is `{}`)",
                r.text,
                values.get(&r.name).map_or("", String::as_str)
            )
        });
        let message = format!(
            "once substituted{by}, {} is no longer YAML Flux can read ({why}): the \
             Kustomization fails",
            o.id
        );
        self.findings.push(
            finding_for(&self.cluster.name, k, &TYPE_CHANGE, message, place.location)
                .with_severity(Severity::Error)
                .about("object", o.id.to_string()),
        );
    }
}

/// Fields the API server only accepts as strings: a non-string there fails the apply.
fn is_string_field(kind: &str, path: &[Seg]) -> bool {
    let n = path.len();
    let top = key_at(path, 0);
    (n == 2 && top == Some("data") && matches!(kind, "ConfigMap" | "Secret"))
        || (n == 2 && top == Some("stringData") && kind == "Secret")
        || (n >= 3
            && key_at(path, n - 3) == Some("metadata")
            && matches!(key_at(path, n - 2), Some("labels" | "annotations")))
        || (n >= 3
            && key_at(path, n - 1) == Some("value")
            && matches!(path[n - 2], Seg::Index(_))
            && key_at(path, n - 3) == Some("env"))
        || container_arg(path).is_some()
}

/// How a JSON value reads in a message.
fn describe(v: &Value) -> String {
    match v {
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::Null => "null".to_string(),
        Value::Object(_) => "a mapping".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::String(s) => format!("the string `{s}`"),
    }
}

/// A plain scalar whose YAML 1.1 type a YAML 1.2 or JSON reader would not expect: booleans
/// spelled `yes`/`on`/`y`..., numbers with a leading zero (octal), `:` (base 60), `_`, a sign
/// or a base prefix, infinities and NaN, and anything that reads as null.
fn surprising(v: &Value, text: &str) -> bool {
    let t = text.trim();
    match v {
        Value::Bool(_) => !matches!(t, "true" | "false"),
        Value::Number(_) => {
            let d = t.trim_start_matches(['-', '+']);
            let lower = d.to_ascii_lowercase();
            t.starts_with('+')
                || (d.len() > 1 && d.starts_with('0') && d.as_bytes()[1].is_ascii_digit())
                || t.contains([':', '_'])
                || lower.starts_with("0x")
                || lower.starts_with("0b")
                || lower.starts_with("0o")
                || lower.contains("inf")
                || lower.contains("nan")
        }
        Value::Null => true,
        _ => false,
    }
}

/// A value that, dropped into YAML text, can change its structure.
fn yaml_special(v: &str) -> bool {
    v.contains(": ")
        || v.contains(" #")
        || v.ends_with(':')
        || v.starts_with([
            '*', '&', '!', '|', '>', '[', ']', '{', '}', '%', '@', '`', '"', '\'', '#', ',', '?',
        ])
        || v.starts_with("- ")
}

/// What `leaf` reads as with its vars that have a default unset (each default in their
/// place), when it is YAML.
fn default_shape(leaf: &str, refs: &[Ref], values: &BTreeMap<String, String>) -> Option<Value> {
    if !refs.iter().any(|r| r.has_default) {
        return None;
    }
    let mut unset = values.clone();
    for r in refs.iter().filter(|r| r.has_default) {
        unset.remove(&r.name);
    }
    let out = crate::envsubst::eval(leaf.as_bytes(), &unset, false).ok()?;
    crate::goyaml::yaml_json::yaml_to_value(&String::from_utf8(out).ok()?).ok()
}

/// Both lists, or both mappings.
fn same_shape(a: Value, b: Option<&Value>) -> bool {
    matches!(
        (a, b),
        (Value::Array(_), Some(Value::Array(_))) | (Value::Object(_), Some(Value::Object(_)))
    )
}

/// Whether a substituted scalar's type is a hazard, and why.
fn judge(
    kind: &str,
    path: &[Seg],
    got: Option<&Value>,
    quoted: bool,
    text: &str,
) -> Option<(Severity, String)> {
    let Some(got) = got else {
        return Some((
            Severity::Error,
            ": the value changes the document's structure".to_string(),
        ));
    };
    match got {
        Value::String(_) => None,
        Value::Object(_) | Value::Array(_) => Some((
            Severity::Error,
            ": the value changes the document's structure".to_string(),
        )),
        v => {
            if is_string_field(kind, path) {
                Some((
                    Severity::Error,
                    "; the field must be a string, so the apply fails".to_string(),
                ))
            } else if quoted {
                Some((
                    Severity::Warning,
                    "; the template quotes it, but kustomize prints it without the quotes \
                     before Flux substitutes"
                        .to_string(),
                ))
            } else if surprising(v, text) {
                Some((
                    Severity::Warning,
                    "; a YAML 1.2 or JSON reader would not read it so".to_string(),
                ))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::leaves::tests::keys;
    use serde_json::json;

    #[test]
    fn string_fields_are_configmap_data_labels_env_and_container_args() {
        assert!(is_string_field("ConfigMap", &keys(&["data", "A"])));
        assert!(is_string_field("Secret", &keys(&["stringData", "A"])));
        assert!(is_string_field(
            "Deployment",
            &keys(&["spec", "template", "metadata", "labels", "x"])
        ));
        assert!(is_string_field(
            "Pod",
            &keys(&["spec", "containers", "0", "env", "1", "value"])
        ));
        assert!(is_string_field(
            "Pod",
            &keys(&["spec", "containers", "0", "args", "2"])
        ));
        assert!(!is_string_field("Deployment", &keys(&["spec", "replicas"])));
    }

    #[test]
    fn yaml11_surprises_are_told_from_plain_numbers_and_booleans() {
        assert!(surprising(&json!(true), "on"));
        assert!(surprising(&json!(8), "010"));
        assert!(surprising(&json!(5400), "1:30"));
        assert!(surprising(&Value::Null, "~"));
        assert!(!surprising(&json!(3), "3"));
        assert!(!surprising(&json!(true), "true"));
        assert!(!surprising(&json!(0.5), "0.5"));
    }

    #[test]
    fn judge_flags_string_fields_quoted_templates_and_structure_changes() {
        let data = keys(&["data", "A"]);
        assert_eq!(
            judge("ConfigMap", &data, Some(&json!(true)), false, "on").map(|j| j.0),
            Some(Severity::Error)
        );
        let repl = keys(&["spec", "replicas"]);
        assert_eq!(
            judge("Deployment", &repl, Some(&json!(3)), false, "3"),
            None
        );
        assert_eq!(
            judge("Deployment", &repl, Some(&json!(3)), true, "3").map(|j| j.0),
            Some(Severity::Warning)
        );
        assert_eq!(
            judge("X", &repl, Some(&json!({"a": "b"})), false, "a: b").map(|j| j.0),
            Some(Severity::Error)
        );
        assert_eq!(
            judge("X", &repl, None, false, "").map(|j| j.0),
            Some(Severity::Error)
        );
    }
}
