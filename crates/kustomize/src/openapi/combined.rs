//! The schema file a build handed to the kustomize binary gets in place of an
//! `openapi: {path: ...}` file: the built-in definitions with the file's laid over them, as
//! one schema, so that the binary reads what Flux reads.
//!
//! Flux preloads kyaml's built-in schema before every build (`fluxcd/pkg/kustomize` v1.35.6
//! `kustomize_generator.go` `resetOpenAPIWithBuiltins`), so a custom schema *adds to* it
//! (`AddDefinitions` over the maps already there; its test `TestOpenAPIPathMergesBuiltins`);
//! `kustomize build` starts empty, so the same file *replaces* it (see the module above). The
//! binary cannot be told to preload anything, but it reads one custom schema: this writes the
//! one that leaves kyaml's maps as Flux's are.
//!
//! - `definitions`: every built-in definition (from the dump the native builder reads, which
//!   holds all a strategic merge reads: properties, additional properties, `$ref`s, list
//!   items, patch strategies and keys, kinds), then the file's, which replace the built-in
//!   ones of the same name (`globalSchema.schema.Definitions[k] = d`).
//! - kinds (`schemaByResourceType`): a kind the file's definitions claim is theirs; the other
//!   kinds of a built-in definition the file replaces stay with the built-in definition
//!   (`AddDefinitions` kept a pointer to it), written under a name of its own so that `$ref`s
//!   to the name find the file's.
//! - `paths` and every other field: the file's. The built-in kinds' scopes come from kyaml's
//!   precomputed table, asked before any schema's paths, in both.
//!
//! Checked against the binary: kustomize v5.8.1 given this file for an empty custom schema
//! builds 729 kustomizations (`testdata/native`, the fleet, `scripts/native-fuzz` seeds 3, 7
//! and 11) byte for byte as it builds them with its own built-in schema.
//!
//! Only a file the native builder reads ([`CustomSchema::parse`]: nothing Go would read in
//! another way, no kustomize definitions, no kind claimed twice) is rewritten; any other is
//! left to the binary as it is.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::CustomSchema;

/// The built-in definitions as swagger `definitions` without kinds, and each definition's
/// kinds (`apiVersion kind`).
struct Builtin {
    defs: Map<String, Value>,
    kinds: BTreeMap<String, Vec<String>>,
}

fn builtin() -> &'static Builtin {
    static BUILTIN: OnceLock<Builtin> = OnceLock::new();
    BUILTIN.get_or_init(|| {
        let doc: Value =
            serde_json::from_str(include_str!("openapi-v1.21.2.json")).unwrap_or(Value::Null);
        let mut defs = Map::new();
        for (name, def) in doc
            .get("defs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            defs.insert(name.clone(), definition(def));
        }
        let mut kinds: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (t, name) in doc
            .get("types")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str() {
                kinds.entry(name.to_string()).or_default().push(t.clone());
            }
        }
        Builtin { defs, kinds }
    })
}

/// A definition of the dump (`{"p": {...}, "a": ...}`) as a swagger schema.
fn definition(def: &Value) -> Value {
    let mut out = Map::new();
    if let Some(p) = def.get("p").and_then(Value::as_object) {
        let props: Map<String, Value> = p.iter().map(|(k, v)| (k.clone(), property(v))).collect();
        out.insert("properties".into(), Value::Object(props));
    }
    if let Some(a) = def.get("a") {
        out.insert("additionalProperties".into(), property(a));
    }
    Value::Object(out)
}

/// A property of the dump: `@name` a reference, a type name, `{"a": ...}` a map, `{"s",
/// "k", "i"}` a list (what `Elements` and `PatchStrategyAndKeyList` read).
fn property(desc: &Value) -> Value {
    match desc {
        Value::String(s) => match s.strip_prefix('@') {
            Some(name) => json!({"$ref": format!("#/definitions/{name}")}),
            None => json!({"type": s}),
        },
        Value::Object(o) if o.contains_key("a") => {
            json!({"type": "object", "additionalProperties": property(&o["a"])})
        }
        Value::Object(o) => {
            let mut list = Map::new();
            list.insert("type".into(), json!("array"));
            if let Some(i) = o.get("i") {
                list.insert("items".into(), property(i));
            }
            if let Some(s) = o.get("s").and_then(Value::as_str) {
                list.insert("x-kubernetes-patch-strategy".into(), json!(s));
            }
            if let Some(k) = o
                .get("k")
                .and_then(Value::as_array)
                .filter(|k| !k.is_empty())
            {
                list.insert("x-kubernetes-list-map-keys".into(), Value::Array(k.clone()));
            }
            Value::Object(list)
        }
        _ => json!({}),
    }
}

/// `apiVersion kind` as an `x-kubernetes-group-version-kind` entry (`toTypeMeta` reversed).
fn gvk(t: &str) -> Value {
    let (api_version, kind) = t.split_once(' ').unwrap_or((t, ""));
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    json!({"group": group, "version": version, "kind": kind})
}

/// The schema text `text` (an `openapi: {path: ...}` file) laid over the built-in
/// definitions, as JSON for the kustomize binary; `None` when the native builder does not
/// read the file (it is then left as it is).
pub fn laid_over_builtin(text: &str) -> Option<String> {
    let custom = CustomSchema::parse(text).ok()?;
    let mut doc = if text.starts_with('{') {
        serde_json::from_str::<Value>(text).ok()?
    } else {
        goyaml::yaml_json::yaml_to_value(text).ok()?
    };
    let top = doc.as_object_mut()?;
    let own: Map<String, Value> = match top.remove("definitions") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    let claimed: BTreeSet<&String> = custom.definitions().types.keys().collect();
    let b = builtin();
    let mut defs = Map::new();
    for (name, def) in &b.defs {
        let kinds: Vec<Value> = b
            .kinds
            .get(name)
            .into_iter()
            .flatten()
            .filter(|t| !claimed.contains(t))
            .map(|t| gvk(t))
            .collect();
        let mut def = def.clone();
        if !kinds.is_empty() {
            if let Some(d) = def.as_object_mut() {
                d.insert(
                    "x-kubernetes-group-version-kind".into(),
                    Value::Array(kinds.clone()),
                );
            }
        }
        if own.contains_key(name) {
            // Replaced by the file's: only its kinds stay with it, under a name nothing refers to.
            if !kinds.is_empty() {
                defs.insert(format!("{name}.fluxsim-built-in"), def);
            }
        } else {
            defs.insert(name.clone(), def);
        }
    }
    defs.extend(own);
    top.insert("definitions".into(), Value::Object(defs));
    serde_json::to_string(&doc).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_of(doc: &Value, name: &str) -> Vec<String> {
        doc["definitions"][name]["x-kubernetes-group-version-kind"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| format!("{} {} {}", g["group"], g["version"], g["kind"]))
            .collect()
    }

    // fluxcd/pkg/kustomize v1.35.6 kustomize_generator.go resetOpenAPIWithBuiltins, kyaml
    // openapi.go AddDefinitions: the file's definitions over the built-in ones.
    #[test]
    fn a_custom_schema_is_laid_over_the_built_in_definitions() {
        let text = r#"{"swagger": "2.0", "info": {"title": "t", "version": "v1"}, "paths": {}, "definitions": {}}"#;
        let doc: Value = serde_json::from_str(&laid_over_builtin(text).unwrap()).unwrap();
        assert_eq!(doc["swagger"], "2.0");
        let ds = &doc["definitions"]["io.k8s.api.apps.v1.DaemonSet"];
        assert_eq!(
            ds["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.DaemonSetSpec"
        );
        assert_eq!(
            kinds_of(&doc, "io.k8s.api.apps.v1.DaemonSet"),
            ["\"apps\" \"v1\" \"DaemonSet\""]
        );
        let mounts =
            &doc["definitions"]["io.k8s.api.core.v1.Container"]["properties"]["volumeMounts"];
        assert_eq!(mounts["type"], "array");
        assert_eq!(mounts["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(mounts["x-kubernetes-list-map-keys"], json!(["mountPath"]));
        assert_eq!(
            mounts["items"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.VolumeMount"
        );
    }

    #[test]
    fn a_replaced_definition_keeps_the_kinds_the_file_does_not_claim() {
        let text = r"
definitions:
  io.k8s.api.apps.v1.DaemonSet:
    properties:
      spec: {type: object}
  my.Widget:
    x-kubernetes-group-version-kind:
    - {group: apps, version: v1, kind: Deployment}
";
        let doc: Value = serde_json::from_str(&laid_over_builtin(text).unwrap()).unwrap();
        // The file's DaemonSet definition stands under its name, without a kind; the built-in
        // one keeps the DaemonSet kind under a name of its own.
        assert_eq!(
            doc["definitions"]["io.k8s.api.apps.v1.DaemonSet"]["properties"]["spec"]["type"],
            "object"
        );
        assert!(kinds_of(&doc, "io.k8s.api.apps.v1.DaemonSet").is_empty());
        assert_eq!(
            kinds_of(&doc, "io.k8s.api.apps.v1.DaemonSet.fluxsim-built-in"),
            ["\"apps\" \"v1\" \"DaemonSet\""]
        );
        // A kind the file claims leaves the built-in definition.
        assert!(kinds_of(&doc, "io.k8s.api.apps.v1.Deployment").is_empty());
        assert_eq!(
            kinds_of(&doc, "my.Widget"),
            ["\"apps\" \"v1\" \"Deployment\""]
        );
    }

    #[test]
    fn a_file_the_native_builder_does_not_read_is_left_alone() {
        assert_eq!(laid_over_builtin("[1, 2]"), None);
        assert_eq!(laid_over_builtin(r#"{"Definitions": {}}"#), None);
    }
}
