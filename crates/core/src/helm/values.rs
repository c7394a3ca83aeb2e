//! Values as helm-controller merges them (`chartutil.ChartValuesFromReferences`): each
//! `valuesFrom` ConfigMap or Secret of the HelmRelease's namespace in order (a whole YAML
//! document merged in, or one value put at `targetPath` as `helm --set` does), then
//! `spec.values` over all. The chart's own defaults are merged under the result by Helm
//! itself when it templates.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::release::{HelmRelease, ValuesReference};

crate::message_error! {
    /// Values text Helm refuses: a values file that is not a mapping, or a path or `--set`-style
    /// string its strvals parser does not take.
    pub struct ValuesTextError;
}

/// The ConfigMaps and Secrets of a cluster's steady state, by (kind, namespace, name).
pub type Objects<'a> = BTreeMap<(String, String, String), &'a Value>;

/// Why the values could not be merged (helm-controller's `ErrValuesReference` reasons).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// A non-optional ConfigMap or Secret is not on the cluster.
    #[error("could not resolve {kind} reference '{namespace}/{name}': not found")]
    NotFound {
        kind: String,
        namespace: String,
        name: String,
    },
    /// The key is not in it.
    #[error("could not resolve {kind} reference '{namespace}/{name}': key '{key}' not found")]
    KeyNotFound {
        kind: String,
        namespace: String,
        name: String,
        key: String,
    },
    /// `kind` is neither ConfigMap nor Secret.
    #[error("unsupported values reference kind '{0}'")]
    UnsupportedKind(String),
    /// The data is not a YAML map.
    #[error("could not read values from {kind} '{namespace}/{name}' key '{key}': {why}")]
    Read {
        kind: String,
        namespace: String,
        name: String,
        key: String,
        why: String,
    },
    /// `targetPath` cannot be set.
    #[error("could not merge value of {kind} '{namespace}/{name}' at targetPath '{path}': {why}")]
    TargetPath {
        kind: String,
        namespace: String,
        name: String,
        path: String,
        why: String,
    },
    /// The value comes from a SOPS-encrypted Secret: unknown offline.
    #[error("values from SOPS-encrypted Secret '{namespace}/{name}' cannot be read offline")]
    Encrypted { namespace: String, name: String },
}

/// The merged values of `hr` (without the chart's defaults).
pub fn merged_values(hr: &HelmRelease, objects: &Objects<'_>) -> Result<Value, ValuesError> {
    let mut result = Map::new();
    let ns = &hr.id.namespace;
    for r in &hr.values_from {
        let Some(data) = reference_data(r, ns, objects)? else {
            continue;
        };
        if let Some(path) = &r.target_path {
            replace_path_value(&mut result, path, &data).map_err(|why| {
                ValuesError::TargetPath {
                    kind: r.kind.clone(),
                    namespace: ns.clone(),
                    name: r.name.clone(),
                    path: path.clone(),
                    why: why.into(),
                }
            })?;
            continue;
        }
        let values = read_values(&data).map_err(|why| ValuesError::Read {
            kind: r.kind.clone(),
            namespace: ns.clone(),
            name: r.name.clone(),
            key: r.values_key.clone(),
            why: why.into(),
        })?;
        result = merge_maps(result, values);
    }
    Ok(Value::Object(merge_maps(result, hr.values.clone())))
}

/// The data a reference names, `None` when it is optional and missing.
fn reference_data(
    r: &ValuesReference,
    namespace: &str,
    objects: &Objects<'_>,
) -> Result<Option<String>, ValuesError> {
    if !matches!(r.kind.as_str(), "ConfigMap" | "Secret") {
        return Err(ValuesError::UnsupportedKind(r.kind.clone()));
    }
    let key = (r.kind.clone(), namespace.to_string(), r.name.clone());
    let Some(obj) = objects.get(&key) else {
        if r.optional {
            return Ok(None);
        }
        return Err(ValuesError::NotFound {
            kind: r.kind.clone(),
            namespace: namespace.to_string(),
            name: r.name.clone(),
        });
    };
    let data = if r.kind == "Secret" {
        if obj.get("sops").is_some() {
            return Err(ValuesError::Encrypted {
                namespace: namespace.to_string(),
                name: r.name.clone(),
            });
        }
        secret_value(obj, &r.values_key)
    } else {
        obj.get("data")
            .and_then(|d| d.get(&r.values_key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match data {
        Some(d) => Ok(Some(d)),
        None if r.optional => Ok(None),
        None => Err(ValuesError::KeyNotFound {
            kind: r.kind.clone(),
            namespace: namespace.to_string(),
            name: r.name.clone(),
            key: r.values_key.clone(),
        }),
    }
}

/// A Secret's value as the API server gives it: `data` base64-decoded, `stringData`
/// (folded into `data` on apply) winning.
fn secret_value(obj: &Value, key: &str) -> Option<String> {
    use base64::Engine as _;
    if let Some(s) = obj
        .get("stringData")
        .and_then(|d| d.get(key))
        .and_then(Value::as_str)
    {
        return Some(s.to_string());
    }
    let b64 = obj.get("data")?.get(key)?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Helm's `chartutil.ReadValues`: a YAML document read as Go's `sigs.k8s.io/yaml` does; an
/// empty document is no values.
fn read_values(data: &str) -> Result<Map<String, Value>, ValuesTextError> {
    match crate::manifest::parse_object(data).map_err(|e| e.to_string())? {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(format!(
            "error unmarshaling JSON: cannot unmarshal {} into Go value of type \
             map[string]interface {{}}",
            go_type(&other)
        )
        .into()),
    }
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "value",
    }
}

/// helm-controller's `transform.MergeMaps`: `b` over `a`; maps merge key by key, anything
/// else (lists included) replaces.
#[must_use]
pub fn merge_maps(a: Map<String, Value>, b: Map<String, Value>) -> Map<String, Value> {
    let mut out = a;
    for (k, v) in b {
        match (out.get_mut(&k), v) {
            (Some(Value::Object(old)), Value::Object(new)) => {
                let merged = merge_maps(std::mem::take(old), new);
                *old = merged;
            }
            (_, v) => {
                out.insert(k, v);
            }
        }
    }
    out
}

/// `chartutil.ReplacePathValue`: `path=value` parsed as `helm --set` parses it
/// (`strvals.ParseInto`: typed values), or as `--set-string` when the value is wrapped in
/// single or double quotes (which are trimmed).
pub fn replace_path_value(
    values: &mut Map<String, Value>,
    path: &str,
    value: &str,
) -> Result<(), ValuesTextError> {
    let quoted = |q: char| {
        value.len() >= 2 && value.starts_with(q) && value.ends_with(q)
            || value.len() == 1 && value.starts_with(q)
    };
    let string = quoted('\'') || quoted('"');
    // Go's strings.Trim with both quote characters: every leading and trailing one goes.
    let value = if string {
        value.trim_matches(['\'', '"'])
    } else {
        value
    };
    strvals_parse_into(&format!("{path}={value}"), values, string)
}

/// A subset of Helm's `strvals` parser: `a.b[0].c=value[,more=...]`, with `\` escaping the
/// next character; values typed unless `string`.
fn strvals_parse_into(
    text: &str,
    values: &mut Map<String, Value>,
    string: bool,
) -> Result<(), ValuesTextError> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // The key: up to `=`, with `.` and `[n]` splitting it.
        let mut keys: Vec<Key> = Vec::new();
        let mut cur = String::new();
        let mut found_eq = false;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\\' if i + 1 < chars.len() => {
                    cur.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                '.' => {
                    if !cur.is_empty() {
                        keys.push(Key::Name(std::mem::take(&mut cur)));
                    }
                }
                '[' => {
                    if !cur.is_empty() {
                        keys.push(Key::Name(std::mem::take(&mut cur)));
                    }
                    let end = chars[i..]
                        .iter()
                        .position(|&c| c == ']')
                        .ok_or("missing ] in list index")?;
                    let n: String = chars[i + 1..i + end].iter().collect();
                    let n: usize = n
                        .parse()
                        .map_err(|_| format!("failed to parse list index `{n}`"))?;
                    keys.push(Key::Index(n));
                    i += end;
                }
                '=' => {
                    found_eq = true;
                    i += 1;
                    break;
                }
                ',' => {
                    return Err(format!("key \"{cur}\" has no value (cannot end with ,)").into());
                }
                c => cur.push(c),
            }
            i += 1;
        }
        if !cur.is_empty() {
            keys.push(Key::Name(cur));
        }
        if !found_eq {
            let name = keys
                .iter()
                .map(|k| match k {
                    Key::Name(n) => n.clone(),
                    Key::Index(n) => format!("[{n}]"),
                })
                .collect::<String>();
            return Err(format!("key \"{name}\" has no value").into());
        }
        // The value: up to an unescaped `,`.
        let mut raw = String::new();
        while i < chars.len() && chars[i] != ',' {
            if chars[i] == '\\' && i + 1 < chars.len() {
                raw.push(chars[i + 1]);
                i += 2;
                continue;
            }
            raw.push(chars[i]);
            i += 1;
        }
        if i < chars.len() {
            i += 1; // the comma
        }
        let value = if string {
            Value::String(raw)
        } else {
            typed_value(&raw)
        };
        if keys.is_empty() {
            return Err("key \"\" has no name".into());
        }
        set_path(values, &keys, value)?;
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Key {
    Name(String),
    Index(usize),
}

/// `strvals.typedVal`: `true`/`false`/`null` (any case), `0`, and integers that do not
/// start with `0` are typed; everything else is a string.
fn typed_value(v: &str) -> Value {
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if v == "0" {
        return Value::from(0_i64);
    }
    if !v.is_empty() && !v.starts_with('0') {
        if let Ok(n) = v.parse::<i64>() {
            return Value::from(n);
        }
    }
    Value::String(v.to_string())
}

fn set_path(
    map: &mut Map<String, Value>,
    keys: &[Key],
    value: Value,
) -> Result<(), ValuesTextError> {
    let Some(Key::Name(first)) = keys.first() else {
        return Err("a path must start with a key".into());
    };
    let slot = map.entry(first.clone()).or_insert(Value::Null);
    set_in(slot, &keys[1..], value)
}

fn set_in(slot: &mut Value, keys: &[Key], value: Value) -> Result<(), ValuesTextError> {
    let Some(key) = keys.first() else {
        *slot = value;
        return Ok(());
    };
    match key {
        Key::Name(n) => {
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            let m = slot.as_object_mut().ok_or("not a map")?;
            let next = m.entry(n.clone()).or_insert(Value::Null);
            set_in(next, &keys[1..], value)
        }
        Key::Index(n) => {
            // strvals caps list indexes (MaxIndex 65536).
            if *n > 65536 {
                return Err(format!(
                    "index of {n} is greater than maximum supported index of 65536"
                )
                .into());
            }
            if !slot.is_array() {
                *slot = Value::Array(Vec::new());
            }
            let a = slot.as_array_mut().ok_or("not a list")?;
            while a.len() <= *n {
                a.push(Value::Null);
            }
            set_in(&mut a[*n], &keys[1..], value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hr(spec: Value) -> HelmRelease {
        let mut spec = spec;
        spec["chart"] =
            json!({"spec": {"chart": "./c", "sourceRef": {"kind": "GitRepository", "name": "g"}}});
        HelmRelease::from_json(
            &json!({"metadata": {"name": "r", "namespace": "apps"}, "spec": spec}),
        )
        .unwrap()
    }

    fn objects(list: &[Value]) -> Objects<'_> {
        list.iter()
            .map(|o| {
                (
                    (
                        o["kind"].as_str().unwrap().to_string(),
                        o["metadata"]["namespace"].as_str().unwrap().to_string(),
                        o["metadata"]["name"].as_str().unwrap().to_string(),
                    ),
                    o,
                )
            })
            .collect()
    }

    // fluxcd/pkg chartutil/values.go ChartValuesFromReferences: references merged in order,
    // spec.values last.
    #[test]
    fn values_from_merge_in_order_and_spec_values_win() {
        let list = [
            json!({"kind": "ConfigMap", "metadata": {"namespace": "apps", "name": "a"},
                "data": {"values.yaml": "replicas: 1\nimage: {tag: a, pull: Always}\nlist: [1, 2]\n"}}),
            json!({"kind": "Secret", "metadata": {"namespace": "apps", "name": "b"},
                "data": {"v": "aW1hZ2U6CiAgdGFnOiBiCmxpc3Q6IFszXQo="}}),
        ];
        let h = hr(json!({"valuesFrom": [
            {"kind": "ConfigMap", "name": "a"}, {"kind": "Secret", "name": "b", "valuesKey": "v"}],
            "values": {"replicas": 3}}));
        let v = merged_values(&h, &objects(&list)).unwrap();
        assert_eq!(
            v,
            json!({"replicas": 3, "image": {"tag": "b", "pull": "Always"}, "list": [3]})
        );
    }

    // ChartValuesFromReferences: a missing optional reference (or key) is skipped, a missing
    // required one fails the release with ErrResourceNotFound / ErrKeyNotFound.
    #[test]
    fn values_from_optional_missing_is_skipped_and_required_missing_fails() {
        let list = [
            json!({"kind": "ConfigMap", "metadata": {"namespace": "apps", "name": "a"},
            "data": {"other": "x: 1"}}),
        ];
        let h = hr(json!({"valuesFrom": [
            {"kind": "ConfigMap", "name": "gone", "optional": true},
            {"kind": "ConfigMap", "name": "a", "optional": true}]}));
        assert_eq!(merged_values(&h, &objects(&list)).unwrap(), json!({}));
        let h = hr(json!({"valuesFrom": [{"kind": "ConfigMap", "name": "gone"}]}));
        let e = merged_values(&h, &objects(&list)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "could not resolve ConfigMap reference 'apps/gone': not found"
        );
        let h = hr(json!({"valuesFrom": [{"kind": "ConfigMap", "name": "a"}]}));
        let e = merged_values(&h, &objects(&list)).unwrap_err();
        assert!(matches!(e, ValuesError::KeyNotFound { .. }), "{e}");
    }

    // ChartValuesFromReferences reads references in the HelmRelease's namespace only.
    #[test]
    fn values_from_reads_the_helm_release_namespace_only() {
        let list = [
            json!({"kind": "ConfigMap", "metadata": {"namespace": "other", "name": "a"},
            "data": {"values.yaml": "x: 1"}}),
        ];
        let h = hr(json!({"valuesFrom": [{"kind": "ConfigMap", "name": "a"}]}));
        assert!(merged_values(&h, &objects(&list)).is_err());
    }

    // ChartValuesFromReferences + ReplacePathValue: targetPath sets one value as --set does
    // (typed), or as --set-string when quoted.
    #[test]
    fn values_from_target_path_sets_a_typed_value_or_a_quoted_string() {
        let list = [
            json!({"kind": "ConfigMap", "metadata": {"namespace": "apps", "name": "a"},
            "data": {"n": "3", "b": "true", "s": "\"3\"", "z": "007", "t": "x.y"}}),
        ];
        let h = hr(json!({"valuesFrom": [
            {"kind": "ConfigMap", "name": "a", "valuesKey": "n", "targetPath": "app.replicas"},
            {"kind": "ConfigMap", "name": "a", "valuesKey": "b", "targetPath": "app.enabled"},
            {"kind": "ConfigMap", "name": "a", "valuesKey": "s", "targetPath": "app.str"},
            {"kind": "ConfigMap", "name": "a", "valuesKey": "z", "targetPath": "app.zero"},
            {"kind": "ConfigMap", "name": "a", "valuesKey": "t", "targetPath": "list[1].host"}]}));
        let v = merged_values(&h, &objects(&list)).unwrap();
        assert_eq!(
            v,
            json!({"app": {"replicas": 3, "enabled": true, "str": "3", "zero": "007"},
                "list": [null, {"host": "x.y"}]})
        );
    }

    // strvals.ParseInto: an unescaped comma in the value starts another key, which then
    // has no value.
    #[test]
    fn values_from_target_path_value_with_a_comma_fails_as_helm_set_does() {
        let mut m = Map::new();
        let e = replace_path_value(&mut m, "a", "x,y").unwrap_err();
        assert!(e.contains("key \"y\" has no value"), "{e}");
        replace_path_value(&mut m, "a", "x\\,y").unwrap();
        assert_eq!(Value::Object(m), json!({"a": "x,y"}));
    }

    // transform.MergeMaps: nested maps merge, lists and scalars replace, null is kept (Helm
    // then deletes the key from the chart defaults).
    #[test]
    fn merge_maps_merges_maps_and_replaces_the_rest() {
        let a = json!({"a": {"b": 1, "c": 2}, "l": [1], "s": "x"});
        let b = json!({"a": {"c": 3}, "l": [2], "s": null});
        let Value::Object(m) = Value::Object(merge_maps(
            a.as_object().unwrap().clone(),
            b.as_object().unwrap().clone(),
        )) else {
            unreachable!()
        };
        assert_eq!(
            Value::Object(m),
            json!({"a": {"b": 1, "c": 3}, "l": [2], "s": null})
        );
    }

    #[test]
    fn values_from_a_sops_secret_is_unknown_offline() {
        let list = [
            json!({"kind": "Secret", "metadata": {"namespace": "apps", "name": "s"},
            "data": {"values.yaml": "RU5D"}, "sops": {"mac": "x"}}),
        ];
        let h = hr(json!({"valuesFrom": [{"kind": "Secret", "name": "s"}]}));
        let e = merged_values(&h, &objects(&list)).unwrap_err();
        assert!(matches!(e, ValuesError::Encrypted { .. }), "{e}");
    }

    #[test]
    fn values_that_are_not_a_map_fail_with_the_reference_named() {
        let list = [
            json!({"kind": "ConfigMap", "metadata": {"namespace": "apps", "name": "a"},
            "data": {"values.yaml": "- 1\n- 2\n"}}),
        ];
        let h = hr(json!({"valuesFrom": [{"kind": "ConfigMap", "name": "a"}]}));
        let e = merged_values(&h, &objects(&list)).unwrap_err().to_string();
        assert!(e.contains("ConfigMap 'apps/a' key 'values.yaml'"), "{e}");
    }
}
