//! The OpenAPI schemas a strategic merge reads (`kyaml/openapi`): the one kustomize embeds for
//! the built-in kinds (Kubernetes v1.21.2), and the one a kustomization's `openapi:` field
//! names ([`custom`]), laid over it as Flux lays it.
//!
//! Each schema is reduced to what a strategic merge reads: which definition a kind has
//! (`x-kubernetes-group-version-kind`), the properties of each schema, its additional
//! properties, and for a list its patch strategy, merge keys and items
//! (`ResourceSchema.Field`, `Elements`, `PatchStrategyAndKeyList`).
//!
//! `openapi-v1.21.2.json` was dumped from kyaml v0.21.1's own parse of its `swagger.pb`
//! (`openapi.Schema()`): `types` maps `apiVersion kind` to a definition, `defs` holds each
//! definition's properties (`p`) and additional properties (`a`); a property is `@name` (a
//! reference), a type name, `{"a": ...}` (a map of values) or `{"s", "k", "i"}` (a list: its
//! strategy, keys and items).
//!
//! # What Flux does with `openapi:` (and what `kustomize build` does)
//!
//! kyaml keeps one schema per process (`kyaml/openapi/openapi.go`: `globalSchema`,
//! `customSchema`, `kubernetesOpenAPIVersion`). `krusty/kustomizer.go` `Run` loads the root's
//! `openapi.path` through the build's loader and calls `openapi.SetSchema(openapi, bytes,
//! true)`; `internal/target/kusttarget.go` `accumulateDirectory` does the same for every
//! included kustomization and component with `reset == false`, which does nothing once a
//! version or a custom schema is set: the first `openapi:` met (the root's, else the first
//! in accumulation order) holds for the rest of the build. `SetSchema` only records the file
//! and clears `schemaInit`; the next `initSchema` parses it with `AddDefinitions`, which adds
//! its definitions and kinds to the maps already there, then parses the built-in
//! `kustomizationapi` schema again (and the Kubernetes one only if a namespace-scope check
//! had asked for it first: `schemaParseDelayed`).
//!
//! - **`kustomize build`** starts with empty maps, so a custom schema *replaces* the built-in
//!   one: a patch on a Deployment in a kustomization whose schema does not define Deployment
//!   replaces `containers` instead of merging it by name.
//! - **Flux** (`fluxcd/pkg/kustomize` v1.35.6, which kustomize-controller v1.9.5 builds with)
//!   calls, in `kustomize_generator.go` `Build`, under its build mutex, `openapi.ResetOpenAPI()`
//!   then `openapi.Schema()` (`resetOpenAPIWithBuiltins`) before every build, and
//!   `defer openapi.ResetOpenAPI()` after it: the built-in definitions are parsed first, so a
//!   custom schema *adds to* them (a definition or kind it names wins over the built-in one,
//!   `kustomizationapi`'s are parsed again over it), and nothing leaks from one
//!   Kustomization's build to the next (tests `TestOpenAPIPathMergesBuiltins`,
//!   `TestOpenAPIPollution` in `kustomize_generator_test.go`).
//!
//! History, since a controller's behaviour depends on its patch release: before
//! kustomize-controller v1.9 `Build` reset nothing, so in the long-running controller the
//! first custom schema after a restart stayed for every later build (fluxcd/pkg#1237); v1.9.0
//! reset before each build, which made `openapi.path` replace the built-in schema as in the
//! binary (fluxcd/flux2#5972: DaemonSets with containers lost); fluxcd/pkg#1260 (backported to
//! the v2.9 line as #1261) added the preload above, which `fluxcd/pkg/kustomize` v1.35.6 has.
//!
//! fluxsim follows Flux. `openapi: {version: v1.21.2}` is the built-in schema itself; any other
//! version fails as kustomize does (`the specified OpenAPI version is not built in`).

pub(crate) mod combined;
mod custom;
mod scope;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

pub(crate) use custom::CustomSchema;
pub(crate) use scope::{is_certainly_cluster_scoped, set_custom_paths, BuildScope};

/// The one built-in version kyaml v0.21.1 embeds (`kubernetesapi.DefaultOpenAPI`).
pub(crate) const BUILTIN_VERSION: &str = "v1.21.2";

/// One schema (`spec.Schema`), reduced to what a strategic merge reads.
#[derive(Debug, Default, Clone)]
pub(crate) struct SchemaNode {
    /// `$ref`: the name of the definition it stands for.
    reference: Option<String>,
    /// `properties`.
    properties: BTreeMap<String, SchemaNode>,
    /// `additionalProperties`, when it is a schema.
    additional: Option<Box<SchemaNode>>,
    /// `x-kubernetes-patch-strategy`.
    strategy: Option<String>,
    /// `x-kubernetes-list-map-keys`, else `[x-kubernetes-patch-merge-key]`, else none.
    keys: Vec<String>,
    /// `items`, when it is one schema.
    items: Option<Box<SchemaNode>>,
    /// Whether `type` is `array` alone (`Elements` reads items only then).
    array: bool,
}

/// Definitions by name, and the definition of each `apiVersion kind`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Definitions {
    defs: BTreeMap<String, SchemaNode>,
    types: BTreeMap<String, SchemaNode>,
}

/// The embedded schema, parsed on first use.
fn builtin() -> &'static Definitions {
    static DEFS: OnceLock<Definitions> = OnceLock::new();
    DEFS.get_or_init(|| {
        let doc: Value =
            serde_json::from_str(include_str!("openapi-v1.21.2.json")).unwrap_or(Value::Null);
        let mut out = Definitions::default();
        if let Some(defs) = doc.get("defs").and_then(Value::as_object) {
            for (name, def) in defs {
                out.defs.insert(name.clone(), builtin_def(def));
            }
        }
        if let Some(types) = doc.get("types").and_then(Value::as_object) {
            for (t, name) in types {
                if let Some(def) = name.as_str().and_then(|n| out.defs.get(n)) {
                    out.types.insert(t.clone(), def.clone());
                }
            }
        }
        out
    })
}

/// A definition of the embedded dump: `{"p": {...}, "a": ...}`.
fn builtin_def(def: &Value) -> SchemaNode {
    SchemaNode {
        properties: def
            .get("p")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), builtin_desc(v)))
                    .collect()
            })
            .unwrap_or_default(),
        additional: def.get("a").map(|a| Box::new(builtin_desc(a))),
        ..SchemaNode::default()
    }
}

/// A property description of the embedded dump.
fn builtin_desc(desc: &Value) -> SchemaNode {
    match desc {
        Value::String(s) => SchemaNode {
            reference: s.strip_prefix('@').map(str::to_string),
            ..SchemaNode::default()
        },
        Value::Object(o) if o.contains_key("a") => SchemaNode {
            additional: o.get("a").map(|a| Box::new(builtin_desc(a))),
            ..SchemaNode::default()
        },
        Value::Object(o) => SchemaNode {
            strategy: o.get("s").and_then(Value::as_str).map(str::to_string),
            keys: o
                .get("k")
                .and_then(Value::as_array)
                .map(|k| {
                    k.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            items: o.get("i").map(|i| Box::new(builtin_desc(i))),
            array: true,
            ..SchemaNode::default()
        },
        _ => SchemaNode::default(),
    }
}

/// The schemas one build reads (kyaml's global schema as Flux leaves it for a build): the
/// built-in definitions, with a custom schema's over them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SchemaSet<'a> {
    custom: Option<&'a CustomSchema>,
}

impl<'a> SchemaSet<'a> {
    /// The built-in schema alone.
    #[cfg(test)]
    pub(crate) fn builtin() -> SchemaSet<'static> {
        SchemaSet { custom: None }
    }

    /// `SchemaForResourceType`: the definition of a kind, the custom schema's first
    /// (`AddDefinitions` replaces the kind's entry), not resolved.
    pub(crate) fn for_type(self, api_version: &str, kind: &str) -> Option<Schema<'a>> {
        let key = format!("{api_version} {kind}");
        let node = match self.custom.and_then(|c| c.definitions().types.get(&key)) {
            Some(n) => n,
            None => builtin().types.get(&key)?,
        };
        Some(Schema { node, set: self })
    }

    /// A definition by name (`Resolve` of `#/definitions/<name>` against the global
    /// schema): the custom schema's, else the built-in one.
    fn definition(self, name: &str) -> Option<&'a SchemaNode> {
        match self.custom.and_then(|c| c.definitions().defs.get(name)) {
            Some(n) => Some(n),
            None => builtin().defs.get(name),
        }
    }

    /// Follows `$ref`s as `Field` and `Elements` do (`for s.Ref.String() != ""`); a
    /// reference to a definition that does not exist gives no schema. Custom schemas with a
    /// cycle of references are refused when read ([`custom`]), built-in ones have none.
    fn follow(self, mut node: &'a SchemaNode) -> Option<&'a SchemaNode> {
        while let Some(name) = &node.reference {
            node = self.definition(name)?;
        }
        Some(node)
    }
}

/// The schema of one node (`openapi.ResourceSchema`) within its [`SchemaSet`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schema<'a> {
    node: &'a SchemaNode,
    set: SchemaSet<'a>,
}

impl<'a> Schema<'a> {
    /// `ResourceSchema.Field`: a property, or the values of a map.
    pub(crate) fn field(self, key: &str) -> Option<Schema<'a>> {
        let child = match self.node.properties.get(key) {
            Some(c) => c,
            None => self.node.additional.as_deref()?,
        };
        Some(Schema {
            node: self.set.follow(child)?,
            set: self.set,
        })
    }

    /// `ResourceSchema.Elements`: the schema of a list's items.
    pub(crate) fn elements(self) -> Option<Schema<'a>> {
        if !self.node.array {
            return None;
        }
        Some(Schema {
            node: self.set.follow(self.node.items.as_deref()?)?,
            set: self.set,
        })
    }

    /// Whether the list merges (`schemaHasMergeStrategy`), and its merge keys.
    pub(crate) fn merge_keys(self) -> Option<Vec<String>> {
        let strategy = self.node.strategy.as_deref()?;
        if !strategy.split(',').any(|s| s == "merge") {
            return None;
        }
        Some(self.node.keys.clone())
    }
}

/// Where a build's schema stands (kyaml's `kubernetesOpenAPIVersion` and `customSchema`),
/// from Flux's reset (built-ins loaded, nothing set) on.
#[derive(Debug, Default)]
pub(crate) struct SchemaState {
    /// A version or a custom schema was set: later `SetSchema(.., false)` calls do nothing.
    set: bool,
    /// The custom schema in use.
    custom: Option<CustomSchema>,
}

/// What one kustomization's `openapi:` field asks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct OpenApiField {
    /// `version`, when given (even empty).
    pub(crate) version: Option<String>,
    /// The custom schema `path` named, already read.
    pub(crate) schema: Option<CustomSchema>,
}

impl SchemaState {
    /// Whether a version or a custom schema is set (`SetSchema`'s `schemaIsSet`).
    pub(crate) fn is_set(&self) -> bool {
        self.set
    }

    /// The schemas patches read now.
    pub(crate) fn schemas(&self) -> SchemaSet<'_> {
        SchemaSet {
            custom: self.custom.as_ref(),
        }
    }

    /// `openapi.SetSchema(openAPIField, schema, reset)`: `reset` for the root kustomization
    /// (`krusty/kustomizer.go`), not for included ones (`kusttarget.go`
    /// `accumulateDirectory`); the error is kustomize's.
    pub(crate) fn set_schema(
        &mut self,
        field: OpenApiField,
        reset: bool,
    ) -> Result<(), crate::Unsupported> {
        if self.set && !reset {
            return Ok(());
        }
        if let Some(schema) = field.schema {
            if field.version.is_some() {
                return Err("builtin version and custom schema provided, cannot use both".into());
            }
            self.custom = Some(schema);
            self.set = true;
            return Ok(());
        }
        let version = field.version.unwrap_or_default();
        if version.is_empty() {
            // `kubernetesOpenAPIVersion = ""`: the custom schema, if any, stays.
            self.set = self.custom.is_some();
            return Ok(());
        }
        if version != BUILTIN_VERSION {
            return Err("the specified OpenAPI version is not built in".into());
        }
        // The built-in schema parsed again over the maps: the same definitions. Only a
        // root's reset could come after a custom schema, and the root comes first.
        self.custom = None;
        self.set = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod_spec(set: SchemaSet<'_>) -> Schema<'_> {
        set.for_type("apps/v1", "Deployment")
            .and_then(|s| s.field("spec"))
            .and_then(|s| s.field("template"))
            .and_then(|s| s.field("spec"))
            .unwrap()
    }

    // kyaml/openapi/openapi.go: SchemaForResourceType, Field, Elements, PatchStrategyAndKeyList.
    #[test]
    fn built_in_lists_have_kyamls_merge_keys() {
        let pod = pod_spec(SchemaSet::builtin());
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
        assert!(SchemaSet::builtin()
            .for_type("example.com/v1", "Thing")
            .is_none());
    }

    // fluxcd/pkg kustomize/kustomize_generator.go Build (resetOpenAPIWithBuiltins, then
    // SetSchema in krusty/kustomizer.go): the custom schema adds to the built-in one.
    #[test]
    fn a_custom_schema_adds_kinds_to_the_built_in_ones() {
        let custom = CustomSchema::parse(
            r##"{"definitions": {"com.example.v1.Thing": {
                "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Thing"}],
                "properties": {"spec": {"type": "object", "properties": {"items": {
                    "type": "array", "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "id",
                    "items": {"$ref": "#/definitions/io.k8s.api.core.v1.Container"}}}}}}}}"##,
        )
        .unwrap();
        let set = SchemaSet {
            custom: Some(&custom),
        };
        let items = set
            .for_type("example.com/v1", "Thing")
            .and_then(|s| s.field("spec"))
            .and_then(|s| s.field("items"))
            .unwrap();
        assert_eq!(items.merge_keys(), Some(vec!["id".to_string()]));
        // A reference into the built-in definitions resolves (one global schema).
        let ports = items.elements().and_then(|e| e.field("ports")).unwrap();
        assert_eq!(
            ports.merge_keys(),
            Some(vec!["containerPort".to_string(), "protocol".to_string()])
        );
        // Deployment is not in the custom schema, and is still known.
        assert_eq!(
            pod_spec(set).field("containers").unwrap().merge_keys(),
            Some(vec!["name".to_string()])
        );
    }

    // kyaml/openapi/openapi.go AddDefinitions: `globalSchema.schema.Definitions[k] = d`, and
    // references are resolved by name when a field is read.
    #[test]
    fn a_custom_definition_replaces_the_built_in_one_of_the_same_name() {
        let custom = CustomSchema::parse(
            "definitions:\n  io.k8s.api.core.v1.Container:\n    properties:\n      ports:\n        type: array\n",
        )
        .unwrap();
        let set = SchemaSet {
            custom: Some(&custom),
        };
        let container = pod_spec(set)
            .field("containers")
            .and_then(Schema::elements)
            .unwrap();
        assert!(container.field("ports").unwrap().merge_keys().is_none());
        assert!(container.field("image").is_none());
    }

    // kyaml/openapi/openapi.go SetSchema.
    #[test]
    fn the_first_openapi_field_holds_and_a_root_may_not_name_both() {
        let custom = || CustomSchema::parse("{\"definitions\": {}}").unwrap();
        let mut state = SchemaState::default();
        state
            .set_schema(
                OpenApiField {
                    version: None,
                    schema: Some(custom()),
                },
                false,
            )
            .unwrap();
        assert!(state.schemas().custom.is_some());
        // An included kustomization's field after that does nothing, errors included.
        state
            .set_schema(
                OpenApiField {
                    version: Some("v1.14.1".into()),
                    schema: None,
                },
                false,
            )
            .unwrap();
        assert!(state.schemas().custom.is_some());
        let mut root = SchemaState::default();
        assert_eq!(
            root.set_schema(
                OpenApiField {
                    version: Some(BUILTIN_VERSION.into()),
                    schema: Some(custom()),
                },
                true,
            ),
            Err("builtin version and custom schema provided, cannot use both".into())
        );
        assert_eq!(
            root.set_schema(
                OpenApiField {
                    version: Some("v1.14.1".into()),
                    schema: None,
                },
                true,
            ),
            Err("the specified OpenAPI version is not built in".into())
        );
        root.set_schema(
            OpenApiField {
                version: Some(BUILTIN_VERSION.into()),
                schema: None,
            },
            true,
        )
        .unwrap();
        assert!(root.set && root.custom.is_none());
    }
}
