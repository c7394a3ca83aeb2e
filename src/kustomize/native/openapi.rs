//! The OpenAPI schema kustomize embeds for the built-in kinds (`kyaml/openapi`, Kubernetes
//! v1.21.2), reduced to what a strategic merge reads: which definition a kind has, the
//! fields of each definition, and for each list its patch strategy and merge keys
//! (`x-kubernetes-patch-strategy`, `x-kubernetes-list-map-keys`, else
//! `x-kubernetes-patch-merge-key`: `ResourceSchema.PatchStrategyAndKeyList`).
//!
//! `openapi-v1.21.2.json` was dumped from kyaml v0.21.1's own parse of its `swagger.pb`
//! (`openapi.Schema()`): `types` maps `apiVersion kind` to a definition, `defs` holds each
//! definition's properties (`p`) and additional properties (`a`); a property is `@name` (a
//! reference), a type name, `{"a": ...}` (a map of values) or `{"s", "k", "i"}` (a list: its
//! strategy, keys and items).

use std::sync::OnceLock;

use serde_json::Value;

/// The embedded schema, parsed on first use.
fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        serde_json::from_str(include_str!("openapi-v1.21.2.json")).unwrap_or(Value::Null)
    })
}

/// The schema of one node (`openapi.ResourceSchema`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Schema {
    /// A definition (its properties, or a map of values).
    Def(&'static Value),
    /// A list.
    List(&'static Value),
    /// An inline map whose values have one schema.
    Map(&'static Value),
    /// Anything else (a scalar type, an object without properties).
    Leaf,
}

/// Resolves a property description.
fn resolve(desc: &'static Value) -> Option<Schema> {
    match desc {
        Value::String(s) => match s.strip_prefix('@') {
            Some(name) => document()
                .get("defs")
                .and_then(|d| d.get(name))
                .map(Schema::Def),
            None => Some(Schema::Leaf),
        },
        Value::Object(o) if o.contains_key("a") => o.get("a").map(Schema::Map),
        Value::Object(_) => Some(Schema::List(desc)),
        _ => Some(Schema::Leaf),
    }
}

/// `SchemaForResourceType`: the schema of a built-in kind.
pub(crate) fn for_type(api_version: &str, kind: &str) -> Option<Schema> {
    let name = document()
        .get("types")?
        .get(format!("{api_version} {kind}"))?
        .as_str()?;
    document().get("defs")?.get(name).map(Schema::Def)
}

impl Schema {
    /// `ResourceSchema.Field`: a property, or the values of a map.
    pub(crate) fn field(self, key: &str) -> Option<Schema> {
        match self {
            Schema::Def(def) => match def.get("p").and_then(|p| p.get(key)) {
                Some(desc) => resolve(desc),
                None => def.get("a").and_then(resolve),
            },
            Schema::Map(values) => resolve(values),
            Schema::List(_) | Schema::Leaf => None,
        }
    }

    /// `ResourceSchema.Elements`: the schema of a list's items.
    pub(crate) fn elements(self) -> Option<Schema> {
        match self {
            Schema::List(l) => l.get("i").and_then(resolve),
            _ => None,
        }
    }

    /// Whether the list merges (`schemaHasMergeStrategy`), and its merge keys.
    pub(crate) fn merge_keys(self) -> Option<Vec<String>> {
        let Schema::List(l) = self else { return None };
        let strategy = l.get("s").and_then(Value::as_str)?;
        if !strategy.split(',').any(|s| s == "merge") {
            return None;
        }
        Some(
            l.get("k")
                .and_then(Value::as_array)
                .map(|k| {
                    k.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // kyaml/openapi/openapi.go: SchemaForResourceType, Field, Elements, PatchStrategyAndKeyList.
    #[test]
    fn built_in_lists_have_kyamls_merge_keys() {
        let pod = for_type("apps/v1", "Deployment")
            .and_then(|s| s.field("spec"))
            .and_then(|s| s.field("template"))
            .and_then(|s| s.field("spec"))
            .unwrap();
        assert_eq!(
            pod.field("containers").unwrap().merge_keys(),
            Some(vec!["name".to_string()])
        );
        let container = pod.field("containers").unwrap().elements().unwrap();
        assert_eq!(
            container.field("ports").unwrap().merge_keys(),
            Some(vec!["containerPort".to_string(), "protocol".to_string()])
        );
        assert!(container.field("args").unwrap().merge_keys().is_none());
        assert!(pod.field("tolerations").unwrap().merge_keys().is_none());
        assert!(for_type("example.com/v1", "Thing").is_none());
    }
}
