//! The schema file a kustomization's `openapi: {path: ...}` names, read as kyaml's `parse`
//! reads it (`kyaml/openapi/openapi.go`): JSON when it starts with `{`, else YAML turned into
//! JSON by `sigs.k8s.io/yaml.YAMLToJSON`, then unmarshalled as a `spec.Swagger`, whose
//! `definitions` go to `AddDefinitions` and whose `paths` go to `findNamespaceability`.
//!
//! Only what the native builder reproduces exactly is accepted; anything else is refused with
//! the reason (the build then goes to the kustomize binary):
//! - in `paths`, top-level `parameters`, `responses`, `securityDefinitions` and `security`,
//!   anything beyond the fields of operations, parameters, responses and security schemes a
//!   Kubernetes API server's `/openapi/v2` has, checked for Go's types (a path `$ref`, a
//!   parameter's `items`, a response's `headers` or `$ref`, an operation's `externalDocs`, a
//!   responses key neither `default`, a status code nor an extension, which kube-openapi's
//!   decoder does not skip), and a `get` whose `x-kubernetes-group-version-kind` is a mapping
//!   without a string `version` and `kind` (`toTypeMeta` would panic); the kinds the `get`
//!   operations serve feed [`super::scope`];
//! - anything Go would fail or panic on while reading or using the schema (a field of the
//!   wrong type, an `x-kubernetes-group-version-kind` without `version` or `kind`, a patch
//!   strategy or merge key that is not a string: `toTypeMeta`, `PatchStrategyAndKeyList`
//!   assert their types), a cycle of `$ref`s (kyaml's resolution loop would not end), `items`
//!   given as a list (`Elements` dereferences `Items.Schema`);
//! - a `$ref` that is not `#/definitions/<name>`, a field name Go's case-insensitive JSON
//!   decoding could take for a known one, definitions or kinds of kustomize's own
//!   `kustomizationapi` schema (parsed again over the custom one), a kind two definitions
//!   claim (`AddDefinitions` walks a Go map, so which wins is random), a key twice in one
//!   JSON object (Go's JSON v2 decoder refuses it).

use std::collections::BTreeMap;

use serde_json::Value;

use super::scope::PathScopes;
use super::{Definitions, SchemaNode};

/// A custom schema, reduced to what a strategic merge reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct CustomSchema {
    defs: Definitions,
    /// What the schema's `paths` say of the scope of kinds (`findNamespaceability`).
    scopes: PathScopes,
}

/// The schema fields Go's `encoding/json` fills into `spec.Schema` (matched without regard
/// to case), with what each must hold.
const SCHEMA_FIELDS: &[(&str, Expect)] = &[
    ("$ref", Expect::Str),
    ("$schema", Expect::Str),
    ("id", Expect::Str),
    ("description", Expect::Str),
    ("format", Expect::Str),
    ("title", Expect::Str),
    ("pattern", Expect::Str),
    ("discriminator", Expect::Str),
    ("type", Expect::StrOrStrs),
    ("required", Expect::Strs),
    ("enum", Expect::List),
    ("default", Expect::Any),
    ("example", Expect::Any),
    ("maximum", Expect::Number),
    ("minimum", Expect::Number),
    ("multipleOf", Expect::Number),
    ("maxLength", Expect::Int),
    ("minLength", Expect::Int),
    ("maxItems", Expect::Int),
    ("minItems", Expect::Int),
    ("maxProperties", Expect::Int),
    ("minProperties", Expect::Int),
    ("exclusiveMaximum", Expect::Bool),
    ("exclusiveMinimum", Expect::Bool),
    ("uniqueItems", Expect::Bool),
    ("readOnly", Expect::Bool),
    ("nullable", Expect::Bool),
    ("properties", Expect::Schemas),
    ("patternProperties", Expect::Schemas),
    ("definitions", Expect::Schemas),
    ("items", Expect::Schema),
    ("additionalProperties", Expect::SchemaOrBool),
    ("additionalItems", Expect::SchemaOrBool),
    ("allOf", Expect::SchemaList),
    ("anyOf", Expect::SchemaList),
    ("oneOf", Expect::SchemaList),
    ("not", Expect::Schema),
    ("dependencies", Expect::Dependencies),
    ("externalDocs", Expect::Plain),
    ("xml", Expect::Plain),
];

/// The extensions kyaml reads (looked up by their exact names).
const STRATEGY: &str = "x-kubernetes-patch-strategy";
const MERGE_KEY: &str = "x-kubernetes-patch-merge-key";
const MAP_KEYS: &str = "x-kubernetes-list-map-keys";
const GVK: &str = "x-kubernetes-group-version-kind";

/// kustomize's own schema (`kyaml/openapi/kustomizationapi/swagger.json`), parsed again
/// after a custom one: its definition names, all of group `kustomize.config.k8s.io/v1beta1`.
const KUSTOMIZATION_API: &[&str] = &[
    "ConfigMapArgs",
    "SecretArgs",
    "GeneratorArgs",
    "Kustomization",
    "KvPairSources",
];

#[derive(Debug, Clone, Copy)]
enum Expect {
    Str,
    StrOrStrs,
    Strs,
    List,
    Any,
    Number,
    Int,
    Bool,
    /// A mapping of strings and booleans.
    Plain,
    /// Each value a schema or a list of strings.
    Dependencies,
    Schema,
    Schemas,
    SchemaOrBool,
    SchemaList,
}

impl CustomSchema {
    /// Reads a schema file's text; `Err` says why the native builder does not use it.
    pub(crate) fn parse(text: &str) -> Result<CustomSchema, crate::Unsupported> {
        let doc: Value = if text.starts_with('{') {
            check_no_duplicate_keys(text)?;
            serde_json::from_str(text).map_err(|e| format!("a schema that is not JSON ({e})"))?
        } else {
            goyaml::yaml_json::yaml_to_value(text)
                .map_err(|e| format!("a schema that is not YAML ({e})"))?
        };
        let Value::Object(top) = doc else {
            return Err("a schema that is not a mapping".into());
        };
        let mut defs = BTreeMap::new();
        let mut types = BTreeMap::new();
        let mut scopes = PathScopes::default();
        for (key, value) in &top {
            match key.as_str() {
                "swagger" | "host" | "basePath" if value.is_string() => {}
                "info" if plain_info(value) => {}
                "consumes" | "produces" | "schemes" if strings(value) => {}
                "parameters" => each_value("parameters", value, check_parameter)?,
                "responses" => each_value("responses", value, check_response)?,
                "securityDefinitions" => {
                    each_value("securityDefinitions", value, check_security_scheme)?;
                }
                "security" => check_security("security", value)?,
                "paths" => read_paths(value, &mut scopes)?,
                "definitions" => {
                    let Value::Object(d) = value else {
                        return Err("schema `definitions` that is not a mapping".into());
                    };
                    for (name, def) in d {
                        if kustomization_api_name(name) {
                            return Err(format!(
                                "a schema defining `{name}` (kustomize's own definition)"
                            )
                            .into());
                        }
                        check_schema(def)?;
                        let node = convert(def);
                        for t in kinds(def)? {
                            // AddDefinitions walks a Go map: which of two wins is random.
                            if types.insert(t.clone(), node.clone()).is_some() {
                                return Err(
                                    format!("a schema with two definitions of `{t}`").into()
                                );
                            }
                        }
                        defs.insert(name.clone(), node);
                    }
                }
                k if k.to_ascii_lowercase().starts_with("x-") => {}
                other => return Err(format!("a schema with the field `{other}`").into()),
            }
        }
        let schema = CustomSchema {
            defs: Definitions { defs, types },
            scopes,
        };
        schema.check_reference_cycles()?;
        Ok(schema)
    }

    pub(super) fn definitions(&self) -> &Definitions {
        &self.defs
    }

    /// What the schema's `paths` say of the scope of kinds.
    pub(crate) fn scopes(&self) -> &PathScopes {
        &self.scopes
    }

    /// A definition that stands for another (`$ref`) and so on back to itself.
    fn check_reference_cycles(&self) -> Result<(), crate::Unsupported> {
        for (name, node) in &self.defs.defs {
            let mut seen = vec![name.as_str()];
            let mut next = node.reference.as_deref();
            while let Some(r) = next {
                if seen.contains(&r) {
                    return Err(format!("a schema whose `$ref`s loop (`{name}`)").into());
                }
                seen.push(r);
                next = self.defs.defs.get(r).and_then(|n| n.reference.as_deref());
            }
        }
        Ok(())
    }
}

/// The operations of a path item (`spec.PathItemProps`).
const OPERATIONS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// `spec.Paths` as kube-openapi decodes it and `findNamespaceability` walks it: a key starting
/// with `/` is a path, an `x-` key an extension, any other key is skipped; of each path only
/// the `get` operation's `x-kubernetes-group-version-kind` is read, when it is a mapping
/// (`toTypeMeta`). Anything whose decoding this does not check is refused.
fn read_paths(value: &Value, scopes: &mut PathScopes) -> Result<(), crate::Unsupported> {
    let Value::Object(paths) = value else {
        return Err("schema `paths` that is not a mapping".into());
    };
    for (path, item) in paths {
        if is_extension_key(path) || !path.starts_with('/') {
            continue;
        }
        let Value::Object(item) = item else {
            return Err(format!("a schema path `{path}` that is not a mapping").into());
        };
        for (key, op) in item {
            if is_extension_key(key) {
                continue;
            }
            if key == "parameters" {
                check_parameters(op)?;
                continue;
            }
            if !OPERATIONS.contains(&key.as_str()) {
                return Err(format!("a schema path item with `{key}` (`{path}`)").into());
            }
            check_operation(path, key, op)?;
            if key == "get" {
                if let Some(type_meta) = path_kind(path, op)? {
                    scopes.add(path, type_meta);
                }
            }
        }
    }
    Ok(())
}

/// `internal.IsExtensionKey`: `x-` or `X-`.
fn is_extension_key(k: &str) -> bool {
    k.starts_with("x-") || k.starts_with("X-")
}

/// An operation (`spec.OperationProps`) holding only plain fields of the right types.
fn check_operation(path: &str, name: &str, op: &Value) -> Result<(), crate::Unsupported> {
    let Value::Object(op) = op else {
        return Err(format!("a schema operation `{name}` that is not a mapping (`{path}`)").into());
    };
    for (key, v) in op {
        if is_extension_key(key) {
            continue;
        }
        let ok = match key.as_str() {
            "description" | "summary" | "operationId" => v.is_string(),
            "consumes" | "produces" | "schemes" | "tags" => {
                v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            }
            "deprecated" => v.is_boolean(),
            "parameters" => {
                check_parameters(v)?;
                true
            }
            "responses" => {
                check_responses(v)?;
                true
            }
            "security" => {
                check_security("security", v)?;
                true
            }
            _ => {
                return Err(
                    format!("a schema operation with `{key}` (`{name}` of `{path}`)").into(),
                )
            }
        };
        if !ok {
            return Err(format!(
                "a schema operation `{key}` of the wrong type (`{name}` of `{path}`)"
            )
            .into());
        }
    }
    Ok(())
}

/// A list of strings.
fn strings(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

/// A mapping whose every value `check` accepts.
fn each_value(
    what: &str,
    v: &Value,
    check: fn(&Value) -> Result<(), crate::Unsupported>,
) -> Result<(), crate::Unsupported> {
    let Value::Object(m) = v else {
        return Err(format!("schema `{what}` that is not a mapping").into());
    };
    m.values().try_for_each(check)
}

/// An object of the fields `fields` (exact names, Go's types) and extensions only.
fn check_fields(
    what: &str,
    v: &Value,
    fields: &[(&str, Expect)],
) -> Result<(), crate::Unsupported> {
    let Value::Object(m) = v else {
        return Err(format!("a schema {what} that is not a mapping").into());
    };
    for (key, value) in m {
        if is_extension_key(key) {
            continue;
        }
        let Some((_, expect)) = fields.iter().find(|(n, _)| n == key) else {
            return Err(format!("a schema {what} with `{key}`").into());
        };
        check_value(key, value, *expect)?;
    }
    Ok(())
}

/// `spec.Parameter` fields (`CommonValidations`, `SimpleSchema`, `ParamProps`) this module
/// checks; `items` and anything else are refused.
const PARAMETER_FIELDS: &[(&str, Expect)] = &[
    ("description", Expect::Str),
    ("name", Expect::Str),
    ("in", Expect::Str),
    ("required", Expect::Bool),
    ("schema", Expect::Schema),
    ("allowEmptyValue", Expect::Bool),
    ("type", Expect::Str),
    ("format", Expect::Str),
    ("collectionFormat", Expect::Str),
    ("default", Expect::Any),
    ("example", Expect::Any),
    ("nullable", Expect::Bool),
    ("maximum", Expect::Number),
    ("minimum", Expect::Number),
    ("multipleOf", Expect::Number),
    ("exclusiveMaximum", Expect::Bool),
    ("exclusiveMinimum", Expect::Bool),
    ("uniqueItems", Expect::Bool),
    ("maxLength", Expect::Int),
    ("minLength", Expect::Int),
    ("maxItems", Expect::Int),
    ("minItems", Expect::Int),
    ("pattern", Expect::Str),
    ("enum", Expect::List),
];

/// A list of parameters.
fn check_parameters(v: &Value) -> Result<(), crate::Unsupported> {
    let Value::Array(list) = v else {
        return Err("schema `parameters` that is not a list".into());
    };
    list.iter().try_for_each(check_parameter)
}

/// A parameter: its fields, or a `$ref` to `#/parameters/<name>` (a JSON reference Go
/// parses as a URL: only plain names are taken).
fn check_parameter(v: &Value) -> Result<(), crate::Unsupported> {
    if let Some(r) = v.get("$ref") {
        let plain = r
            .as_str()
            .and_then(|r| r.strip_prefix("#/parameters/"))
            .is_some_and(|n| {
                !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            });
        if !plain {
            return Err(format!("a schema parameter `$ref` {r}").into());
        }
        let without: serde_json::Map<String, Value> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "$ref")
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect();
        return check_fields("parameter", &Value::Object(without), PARAMETER_FIELDS);
    }
    check_fields("parameter", v, PARAMETER_FIELDS)
}

/// `spec.Responses`: `default`, status codes and extensions; kube-openapi's decoder does not
/// skip the value of any other key, so those are refused.
fn check_responses(v: &Value) -> Result<(), crate::Unsupported> {
    let Value::Object(m) = v else {
        return Err("schema `responses` that is not a mapping".into());
    };
    for (key, r) in m {
        if is_extension_key(key) {
            continue;
        }
        let code = !key.is_empty() && key.len() < 10 && key.bytes().all(|b| b.is_ascii_digit());
        if key != "default" && !code {
            return Err(format!("schema `responses` with `{key}`").into());
        }
        check_response(r)?;
    }
    Ok(())
}

/// A response: a description, a schema, examples; `headers` and `$ref` are refused.
fn check_response(v: &Value) -> Result<(), crate::Unsupported> {
    if let Some(e) = v.get("examples") {
        if !e.is_object() && !e.is_null() {
            return Err("a schema response `examples` that is not a mapping".into());
        }
    }
    check_fields(
        "response",
        v,
        &[
            ("description", Expect::Str),
            ("schema", Expect::Schema),
            ("examples", Expect::Any),
        ],
    )
}

/// `spec.SecurityScheme`.
fn check_security_scheme(v: &Value) -> Result<(), crate::Unsupported> {
    if let Some(s) = v.get("scopes") {
        if !s.is_null()
            && !s
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string))
        {
            return Err(
                "a schema security scheme `scopes` that is not a mapping of strings".into(),
            );
        }
    }
    check_fields(
        "security scheme",
        v,
        &[
            ("description", Expect::Str),
            ("type", Expect::Str),
            ("name", Expect::Str),
            ("in", Expect::Str),
            ("flow", Expect::Str),
            ("authorizationUrl", Expect::Str),
            ("tokenUrl", Expect::Str),
            ("scopes", Expect::Any),
        ],
    )
}

/// `security`: a list of mappings of lists of strings.
fn check_security(what: &str, v: &Value) -> Result<(), crate::Unsupported> {
    let ok = v.as_array().is_some_and(|a| {
        a.iter()
            .all(|m| m.as_object().is_some_and(|m| m.values().all(strings)))
    });
    if ok {
        Ok(())
    } else {
        Err(format!("schema `{what}` that is not a list of mappings of lists of strings").into())
    }
}

/// The kind a `get` operation serves (`toTypeMeta` of its `x-kubernetes-group-version-kind`),
/// as `apiVersion kind`; none when the extension is absent or not a mapping.
fn path_kind(path: &str, op: &Value) -> Result<Option<String>, crate::Unsupported> {
    if let Some(k) = op
        .as_object()
        .and_then(|o| o.keys().find(|k| k.eq_ignore_ascii_case(GVK) && *k != GVK))
    {
        return Err(format!("a schema extension `{k}` (kyaml reads `{GVK}`; `{path}`)").into());
    }
    let Some(Value::Object(m)) = op.get(GVK) else {
        return Ok(None);
    };
    let (Some(Value::String(version)), Some(Value::String(kind))) =
        (m.get("version"), m.get("kind"))
    else {
        return Err(
            format!("a schema path `{GVK}` without a string version and kind (`{path}`)").into(),
        );
    };
    let api_version = match m.get("group") {
        Some(Value::String(g)) if !g.is_empty() => format!("{g}/{version}"),
        _ => version.clone(),
    };
    Ok(Some(format!("{api_version} {kind}")))
}

/// An `info` Go reads without error: its string fields and extensions only.
fn plain_info(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.iter().all(|(k, x)| {
            k.starts_with("x-")
                || (matches!(
                    k.as_str(),
                    "title" | "description" | "version" | "termsOfService"
                ) && x.is_string())
        })
    })
}

/// Refuses a JSON text with a key twice in one object: Go's `encoding/json/v2`, which
/// kube-openapi unmarshals a schema with, fails on it (serde keeps the last).
fn check_no_duplicate_keys(text: &str) -> Result<(), crate::Unsupported> {
    struct Unique;
    impl<'de> serde::Deserialize<'de> for Unique {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(UniqueVisitor)
        }
    }
    struct UniqueVisitor;
    impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
        type Value = Unique;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_unit<E>(self) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Unique, A::Error> {
            while a.next_element::<Unique>()?.is_some() {}
            Ok(Unique)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Unique, A::Error> {
            let mut seen = std::collections::BTreeSet::new();
            while let Some(k) = a.next_key::<String>()? {
                if !seen.insert(k.clone()) {
                    return Err(serde::de::Error::custom(format!("the key `{k}` twice")));
                }
                a.next_value::<Unique>()?;
            }
            Ok(Unique)
        }
    }
    serde_json::from_str::<Unique>(text)
        .map(|_| ())
        .map_err(|e| format!("a schema with {e}").into())
}

/// Whether a definition name is one of `kustomizationapi`'s.
fn kustomization_api_name(name: &str) -> bool {
    name.strip_prefix("io.k8s.api.apps.v1.")
        .is_some_and(|k| KUSTOMIZATION_API.contains(&k))
}

/// The kinds a definition is the schema of (`AddDefinitions`, `toTypeMeta`), as
/// `apiVersion kind`.
fn kinds(def: &Value) -> Result<Vec<String>, crate::Unsupported> {
    let Some(Value::Array(list)) = def.get(GVK) else {
        // Not a list: kyaml skips it.
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in list {
        let Value::Object(m) = item else { continue };
        let (Some(Value::String(version)), Some(Value::String(kind))) =
            (m.get("version"), m.get("kind"))
        else {
            return Err(format!("a schema `{GVK}` without a version and a kind").into());
        };
        let api = match m.get("group") {
            Some(Value::String(g)) if !g.is_empty() => format!("{g}/{version}"),
            _ => version.clone(),
        };
        if api == "kustomize.config.k8s.io/v1beta1" && KUSTOMIZATION_API.contains(&kind.as_str()) {
            return Err(format!(
                "a schema for kind `{kind}` of kustomize.config.k8s.io (kustomize's own)"
            )
            .into());
        }
        out.push(format!("{api} {kind}"));
    }
    Ok(out)
}

/// Refuses what Go would fail on when it unmarshals the schema, or kyaml panic on when it
/// reads it, and what this module does not reproduce.
fn check_schema(v: &Value) -> Result<(), crate::Unsupported> {
    let Value::Object(m) = v else {
        return Err("a schema definition that is not a mapping".into());
    };
    for (key, value) in m {
        let lower = key.to_ascii_lowercase();
        if let Some((name, expect)) = SCHEMA_FIELDS
            .iter()
            .find(|(n, _)| n.to_ascii_lowercase() == lower)
        {
            if name != key {
                return Err(format!("a schema field `{key}` (Go reads it as `{name}`)").into());
            }
            check_value(key, value, *expect)?;
            if key == "$ref" {
                let target = value.as_str().unwrap_or_default();
                let ok = target
                    .strip_prefix("#/definitions/")
                    .is_some_and(|n| !n.is_empty() && !n.contains(['/', '~', '%']));
                if !ok {
                    return Err(
                        format!("a schema `$ref` kyaml resolves otherwise (`{target}`)").into(),
                    );
                }
            }
        } else if lower.starts_with("x-") {
            check_extension(key, value)?;
        }
    }
    Ok(())
}

fn check_extension(key: &str, value: &Value) -> Result<(), crate::Unsupported> {
    let known = [STRATEGY, MERGE_KEY, MAP_KEYS, GVK];
    if let Some(name) = known.iter().find(|n| n.eq_ignore_ascii_case(key)) {
        if *name != key {
            return Err(format!("a schema extension `{key}` (kyaml reads `{name}`)").into());
        }
    }
    let ok = match key {
        STRATEGY => value.is_string(),
        MERGE_KEY => value.as_str().is_some_and(|s| !s.is_empty()),
        MAP_KEYS => value
            .as_array()
            .is_some_and(|a| a.iter().all(|s| s.as_str().is_some_and(|s| !s.is_empty()))),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("a schema `{key}` that kyaml cannot read").into())
    }
}

fn check_value(key: &str, v: &Value, expect: Expect) -> Result<(), crate::Unsupported> {
    if v.is_null() {
        return Ok(());
    }
    let ok = match expect {
        Expect::Str => v.is_string(),
        Expect::StrOrStrs => {
            v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
        }
        Expect::Strs => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Expect::List => v.is_array(),
        Expect::Any => true,
        Expect::Number => v.is_number(),
        Expect::Int => v.is_i64() || v.is_u64(),
        Expect::Bool => v.is_boolean(),
        Expect::Plain => v
            .as_object()
            .is_some_and(|m| m.values().all(|x| x.is_string() || x.is_boolean())),
        Expect::Dependencies => {
            let Value::Object(m) = v else {
                return Err(format!("a schema `{key}` that is not a mapping").into());
            };
            return m.values().try_for_each(|d| {
                if d.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                    Ok(())
                } else {
                    check_schema(d)
                }
            });
        }
        Expect::Schema => {
            if v.is_array() {
                return Err(format!("a schema `{key}` that is a list").into());
            }
            return check_schema(v);
        }
        Expect::Schemas => {
            let Value::Object(m) = v else {
                return Err(format!("a schema `{key}` that is not a mapping").into());
            };
            return m.values().try_for_each(check_schema);
        }
        Expect::SchemaOrBool => {
            if v.is_boolean() {
                return Ok(());
            }
            return check_schema(v);
        }
        Expect::SchemaList => {
            let Value::Array(a) = v else {
                return Err(format!("a schema `{key}` that is not a list").into());
            };
            return a.iter().try_for_each(check_schema);
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("a schema `{key}` of the wrong type").into())
    }
}

/// A checked schema, reduced.
fn convert(v: &Value) -> SchemaNode {
    let get = |k: &str| v.get(k).filter(|x| !x.is_null());
    let keys = match (get(MAP_KEYS), get(MERGE_KEY)) {
        (Some(Value::Array(a)), _) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        (_, Some(Value::String(k))) => vec![k.clone()],
        _ => Vec::new(),
    };
    let array = match get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(a)) => a.len() == 1 && a[0] == "array",
        _ => false,
    };
    SchemaNode {
        reference: get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/definitions/"))
            .map(str::to_string),
        properties: get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, s)| (k.clone(), convert(s))).collect())
            .unwrap_or_default(),
        additional: get("additionalProperties")
            .filter(|a| a.is_object())
            .map(|a| Box::new(convert(a))),
        strategy: get(STRATEGY).and_then(Value::as_str).map(str::to_string),
        keys,
        items: get("items")
            .filter(|i| i.is_object())
            .map(|i| Box::new(convert(i))),
        array,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        CustomSchema::parse(text).unwrap_err().into()
    }

    #[test]
    fn json_and_yaml_schemas_read_alike() {
        let json = CustomSchema::parse(
            r#"{"definitions": {"t": {"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Thing"}]}}}"#,
        )
        .unwrap();
        let yaml = CustomSchema::parse(
            "definitions:\n  t:\n    x-kubernetes-group-version-kind:\n    - {group: example.com, version: v1, kind: Thing}\n",
        )
        .unwrap();
        for s in [json, yaml] {
            assert!(s.defs.types.contains_key("example.com/v1 Thing"));
            assert!(s.defs.defs.contains_key("t"));
        }
    }

    // kyaml/openapi/openapi.go findNamespaceability: only `get` operations name kinds, a
    // list-valued `x-kubernetes-group-version-kind` is skipped (toTypeMeta), keys that are
    // neither paths nor extensions are skipped (kube-openapi Paths.UnmarshalNextJSON).
    #[test]
    fn schema_paths_name_the_kinds_their_get_operations_serve() {
        let s = CustomSchema::parse(
            r##"{"paths": {
              "/apis/e.com/v1/things": {"get": {"x-kubernetes-group-version-kind": {"group": "e.com", "version": "v1", "kind": "Thing"}},
                "parameters": [{"$ref": "#/parameters/pretty-tJGM1-ng"}]},
              "/apis/e.com/v1/others": {"put": {"x-kubernetes-group-version-kind": {"group": "e.com", "version": "v1", "kind": "Other"}}},
              "/apis/e.com/v1/lists": {"get": {"x-kubernetes-group-version-kind": [{"group": "e.com", "version": "v1", "kind": "List"}]}},
              "notapath": 5, "x-ext": 1},
              "parameters": {"pretty-tJGM1-ng": {"name": "pretty", "in": "query", "type": "string", "uniqueItems": true}},
              "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}},
              "security": [{"BearerToken": []}]}"##,
        )
        .unwrap();
        let mut want = PathScopes::default();
        want.add("/apis/e.com/v1/things", "e.com/v1 Thing".into());
        assert_eq!(s.scopes(), &want);
    }

    // kyaml/openapi/openapi.go findNamespaceability, toTypeMeta, PatchStrategyAndKeyList,
    // Elements; go-openapi's case-insensitive decoding; the kustomizationapi parse.
    #[test]
    fn what_the_native_builder_does_not_reproduce_is_refused_with_a_reason() {
        assert!(refused(r#"{"paths": {"/apis/x/v1/things": {"$ref": "x"}}}"#).contains("`$ref`"));
        assert!(refused(r#"{"paths": {"/apis/x/v1/things": {"Get": {}}}}"#).contains("`Get`"));
        assert!(refused(r#"{"paths": {"/x": {"get": {"tags": "a"}}}}"#).contains("wrong type"));
        assert!(
            refused(r#"{"paths": {"/x": {"get": {"X-Kubernetes-Group-Version-Kind": {}}}}}"#)
                .contains("kyaml reads")
        );
        assert!(refused(r#"{"paths": []}"#).contains("not a mapping"));
        assert!(refused(r#"{"parameters": {"p": {"items": {}}}}"#).contains("`items`"));
        assert!(refused(r#"{"parameters": {"p": {"$ref": "other.json#/p"}}}"#).contains("$ref"));
        assert!(refused(r#"{"parameters": {"p": {"required": "yes"}}}"#).contains("wrong type"));
        assert!(refused(r#"{"security": [{"a": "b"}]}"#).contains("lists of strings"));
        assert!(
            refused(r#"{"securityDefinitions": {"a": {"scopes": {"x": 1}}}}"#).contains("scopes")
        );
        assert!(refused(
            r#"{"definitions": {"t": {"x-kubernetes-group-version-kind": [{"kind": "T"}]}}}"#
        )
        .contains("without a version"));
        assert!(
            refused(r#"{"definitions": {"t": {"x-kubernetes-patch-merge-key": 3}}}"#)
                .contains("cannot read")
        );
        assert!(refused(r#"{"definitions": {"t": {"items": [{}]}}}"#).contains("list"));
        assert!(refused(r#"{"definitions": {"t": {"Properties": {}}}}"#).contains("Go reads"));
        assert!(refused(r#"{"definitions": {"t": {"$ref": "other.json#/x"}}}"#).contains("$ref"));
        assert!(refused(r##"{"definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}}"##)
            .contains("loop"));
        assert!(
            refused(r#"{"definitions": {"io.k8s.api.apps.v1.Kustomization": {}}}"#)
                .contains("kustomize's own")
        );
        assert!(refused(r#"{"definitions": {"t": {"description": 5}}}"#).contains("wrong type"));
        assert!(refused(
            r#"{"definitions": {"a": {"x-kubernetes-group-version-kind": [{"version": "v1", "kind": "T"}]},
                "b": {"x-kubernetes-group-version-kind": [{"version": "v1", "kind": "T"}]}}}"#
        )
        .contains("two definitions"));
        assert!(refused("").contains("mapping"));
        assert!(refused(r#"{"definitions": {}, "definitions": {}}"#).contains("twice"));
        assert!(refused("[1]").contains("mapping"));
        // Empty paths, swagger and info are read and ignored.
        CustomSchema::parse(
            r#"{"swagger": "2.0", "info": {"title": "t"}, "paths": {}, "definitions": {}}"#,
        )
        .unwrap();
    }
}
