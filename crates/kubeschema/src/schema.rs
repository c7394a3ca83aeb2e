//! Compiled schemas: an arena of nodes, built from OpenAPI v3 JSON schemas (the embedded
//! Kubernetes definitions, or a CRD's `openAPIV3Schema`), read as the API server reads them.
//!
//! Two readings of one node matter: the structured-merge-diff type that server-side apply
//! converts the object to (kube-openapi `pkg/schemaconv/openapi.go`), and the value
//! validations of the structural schema (apiextensions-apiserver `pkg/apiserver/validation`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

/// One rule of `x-kubernetes-validations`.
pub(crate) struct CelRule {
    pub(crate) rule: String,
    pub(crate) message: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) field_path: Option<String>,
    pub(crate) message_expression_source: Option<String>,
    /// Compiled on first use: most rules of a CRD never meet an object in a render.
    pub(crate) compiled: OnceLock<Compiled>,
}

pub(crate) struct Compiled {
    /// The rule's AST, metered (`cost::instrument`), or why it does not parse.
    // String: the CEL parser's words, quoted by every finding of the rule; compiled once and
    // shared by every object (OnceLock), so kept as the text that is shown.
    pub(crate) program: Result<::cel::IdedExpr, String>,
    pub(crate) message_expression: Option<::cel::IdedExpr>,
    pub(crate) uses_old_self: bool,
}

/// Index of a node in its [`Arena`].
pub(crate) type NodeId = u32;

/// An OpenAPI `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Option<Type> {
        Some(match s {
            "object" => Type::Object,
            "array" => Type::Array,
            "string" => Type::String,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "boolean" => Type::Boolean,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Type::Object => "object",
            Type::Array => "array",
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
        }
    }
}

/// What a node says of keys its `properties` do not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Additional {
    /// No `additionalProperties`.
    Unset,
    /// `additionalProperties: false`.
    Forbidden,
    /// `additionalProperties: true`.
    Any,
    /// `additionalProperties: {schema}`.
    Schema(NodeId),
}

/// How server-side apply merges a list (`x-kubernetes-list-type`, or the patch strategy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// Types the API server reads its own way, whatever their OpenAPI schema says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    None,
    /// `resource.Quantity`: a string or a number, parsed on decode.
    Quantity,
    /// `runtime.RawExtension`, apiextensions `JSON`: anything.
    Any,
}

/// Numeric, length and count bounds of a node (CRD value validations).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Bounds {
    pub(crate) minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) exclusive_minimum: bool,
    pub(crate) exclusive_maximum: bool,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) min_properties: Option<u64>,
    pub(crate) max_properties: Option<u64>,
}

impl Bounds {
    fn is_empty(&self) -> bool {
        *self == Bounds::default()
    }
}

/// One schema node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The definition name when this node is a named definition (for schema paths).
    pub(crate) name: Option<Arc<str>>,
    pub(crate) ty: Option<Type>,
    pub(crate) int_or_string: bool,
    pub(crate) format: Option<String>,
    /// Sorted by name.
    pub(crate) properties: Vec<(String, NodeId)>,
    pub(crate) additional: Additional,
    pub(crate) items: Option<NodeId>,
    pub(crate) required: Vec<String>,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) nullable: bool,
    /// `x-kubernetes-preserve-unknown-fields: true` on this node.
    pub(crate) preserve_unknown: bool,
    /// The node or an ancestor of the same inline schema preserves unknown fields: server-side
    /// apply then accepts unknown fields below it (kube-openapi schemaconv `visitSpec`).
    pub(crate) smd_preserve: bool,
    pub(crate) embedded: bool,
    pub(crate) list: ListKind,
    pub(crate) default: Option<Value>,
    pub(crate) bounds: Option<Box<Bounds>>,
    /// The pattern and its regex, compiled on first use.
    pub(crate) pattern: Option<Arc<(String, OnceLock<Option<Regex>>)>>,
    pub(crate) all_of: Vec<NodeId>,
    pub(crate) any_of: Vec<NodeId>,
    pub(crate) one_of: Vec<NodeId>,
    pub(crate) not: Option<NodeId>,
    pub(crate) rules: Vec<Arc<CelRule>>,
    pub(crate) special: Special,
}

impl Node {
    fn empty() -> Node {
        Node {
            name: None,
            ty: None,
            int_or_string: false,
            format: None,
            properties: Vec::new(),
            additional: Additional::Unset,
            items: None,
            required: Vec::new(),
            enumeration: None,
            nullable: false,
            preserve_unknown: false,
            smd_preserve: false,
            embedded: false,
            list: ListKind::Atomic,
            default: None,
            bounds: None,
            pattern: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            rules: Vec::new(),
            special: Special::None,
        }
    }

    /// The node of a declared property.
    pub(crate) fn property(&self, name: &str) -> Option<NodeId> {
        self.properties
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| self.properties[i].1)
    }
}

/// Compiled nodes, and the named definitions among them.
#[derive(Debug, Default)]
pub(crate) struct Arena {
    pub(crate) nodes: Vec<Node>,
    named: HashMap<String, NodeId>,
}

/// The names of the definitions server-side apply reads its own way (kube-openapi
/// `pkg/schemaconv/openapi.go`: `quantityResource`, `rawExtensionResource`).
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
/// The object metadata every resource and embedded resource gets.
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Where a schema is read from, for messages.
pub(crate) struct Source<'a> {
    /// The named definitions `$ref` can point at.
    pub(crate) definitions: &'a Map<String, Value>,
}

/// A schema that cannot be compiled (a CRD's bad schema).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// `$ref` to a definition that does not exist.
    #[error("`$ref` to unknown definition `{0}`")]
    UnknownRef(String),
}

impl Arena {
    /// The node of a named definition, compiled on first use.
    pub(crate) fn named(&mut self, source: &Source<'_>, name: &str) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.named.get(name) {
            return Ok(id);
        }
        let schema = source
            .definitions
            .get(name)
            .ok_or_else(|| SchemaError::UnknownRef(name.to_string()))?;
        // Reserve the id first: definitions refer to themselves (JSONSchemaProps).
        let id = self.push(Node::empty());
        self.named.insert(name.to_string(), id);
        let mut node = self.compile_node(source, schema, false)?;
        node.name = Some(Arc::from(name));
        match name {
            QUANTITY => node.special = Special::Quantity,
            RAW_EXTENSION => node.special = Special::Any,
            _ if schema.as_object().is_some_and(Map::is_empty) => node.special = Special::Any,
            _ => {}
        }
        self.nodes[id as usize] = node;
        Ok(id)
    }

    fn push(&mut self, node: Node) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(node);
        id
    }

    /// Compiles an inline schema (a CRD's `openAPIV3Schema`) and returns its node.
    pub(crate) fn compile(
        &mut self,
        source: &Source<'_>,
        schema: &Value,
        smd_preserve: bool,
    ) -> Result<NodeId, SchemaError> {
        if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
            return self.named(source, name);
        }
        let node = self.compile_node(source, schema, smd_preserve)?;
        Ok(self.push(node))
    }

    fn compile_node(
        &mut self,
        source: &Source<'_>,
        schema: &Value,
        inherited_preserve: bool,
    ) -> Result<Node, SchemaError> {
        let mut node = Node::empty();
        let Some(s) = schema.as_object() else {
            return Ok(node);
        };
        let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
        node.preserve_unknown = flag("x-kubernetes-preserve-unknown-fields");
        node.smd_preserve = inherited_preserve || node.preserve_unknown;
        node.ty = s.get("type").and_then(Value::as_str).and_then(Type::parse);
        node.format = s.get("format").and_then(Value::as_str).map(str::to_string);
        node.int_or_string =
            flag("x-kubernetes-int-or-string") || node.format.as_deref() == Some("int-or-string");
        node.nullable = flag("nullable");
        node.embedded = flag("x-kubernetes-embedded-resource");
        node.default = s.get("default").cloned();
        node.enumeration = s.get("enum").and_then(Value::as_array).cloned();
        node.required = strings(s.get("required"));
        node.list = list_kind(s);
        let child_preserve = node.smd_preserve;
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            let mut properties = Vec::with_capacity(props.len());
            for (name, p) in props {
                properties.push((name.clone(), self.compile(source, p, child_preserve)?));
            }
            properties.sort_by(|a, b| a.0.cmp(&b.0));
            node.properties = properties;
        }
        node.additional = match s.get("additionalProperties") {
            None => Additional::Unset,
            Some(Value::Bool(true)) => Additional::Any,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(a) => Additional::Schema(self.compile(source, a, child_preserve)?),
        };
        if let Some(items) = s.get("items") {
            node.items = Some(self.compile(source, items, child_preserve)?);
        }
        for (key, out) in [
            ("allOf", &mut node.all_of),
            ("anyOf", &mut node.any_of),
            ("oneOf", &mut node.one_of),
        ] {
            if let Some(list) = s.get(key).and_then(Value::as_array) {
                for sub in list {
                    out.push(self.compile(source, sub, child_preserve)?);
                }
            }
        }
        if let Some(not) = s.get("not") {
            node.not = Some(self.compile(source, not, child_preserve)?);
        }
        let bounds = Bounds {
            minimum: s.get("minimum").and_then(Value::as_f64),
            maximum: s.get("maximum").and_then(Value::as_f64),
            exclusive_minimum: flag("exclusiveMinimum"),
            exclusive_maximum: flag("exclusiveMaximum"),
            multiple_of: s.get("multipleOf").and_then(Value::as_f64),
            min_length: s.get("minLength").and_then(Value::as_u64),
            max_length: s.get("maxLength").and_then(Value::as_u64),
            min_items: s.get("minItems").and_then(Value::as_u64),
            max_items: s.get("maxItems").and_then(Value::as_u64),
            min_properties: s.get("minProperties").and_then(Value::as_u64),
            max_properties: s.get("maxProperties").and_then(Value::as_u64),
        };
        if !bounds.is_empty() {
            node.bounds = Some(Box::new(bounds));
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            node.pattern = Some(Arc::new((p.to_string(), OnceLock::new())));
        }
        if let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) {
            node.rules = rules.iter().map(|r| Arc::new(CelRule::new(r))).collect();
        }
        if node.embedded {
            // apiextensions builder `addEmbeddedProperties`: an embedded resource gets
            // apiVersion, kind and metadata (ObjectMeta) as properties.
            self.add_type_and_object_meta(source, &mut node)?;
        }
        Ok(node)
    }

    /// Adds `apiVersion`, `kind` (strings) and `metadata` (ObjectMeta) to an object node, as
    /// apiextensions' OpenAPI builder does for a resource root and an embedded resource.
    pub(crate) fn add_type_and_object_meta(
        &mut self,
        source: &Source<'_>,
        node: &mut Node,
    ) -> Result<(), SchemaError> {
        let meta = self.named(source, OBJECT_META)?;
        let mut string = Node::empty();
        string.ty = Some(Type::String);
        let api_version = self.push(string.clone());
        let kind = self.push(string);
        for (name, id) in [
            ("apiVersion", api_version),
            ("kind", kind),
            ("metadata", meta),
        ] {
            match node
                .properties
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
            {
                Ok(i) => node.properties[i].1 = id,
                Err(i) => node.properties.insert(i, (name.to_string(), id)),
            }
        }
        Ok(())
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub(crate) fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// kube-openapi `schemaconv/smd.go` `getListElementRelationship`.
fn list_kind(s: &Map<String, Value>) -> ListKind {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => return ListKind::Set,
        Some("map") => return ListKind::Map(strings(s.get("x-kubernetes-list-map-keys"))),
        Some(_) => return ListKind::Atomic,
        None => {}
    }
    match s.get("x-kubernetes-patch-strategy").and_then(Value::as_str) {
        Some("merge" | "merge,retainKeys") => {
            match s
                .get("x-kubernetes-patch-merge-key")
                .and_then(Value::as_str)
            {
                Some(key) => ListKind::Map(vec![key.to_string()]),
                None => ListKind::Set,
            }
        }
        _ => ListKind::Atomic,
    }
}

/// Fills in the schema's defaults as the API server does when it reads a custom resource,
/// before validating it (apiextensions-apiserver `pkg/apiserver/schema/defaulting/algorithm.go`
/// `Default`): a missing property, or a null one that is not nullable, takes its default;
/// then every child is defaulted. Named definitions (ObjectMeta) are left alone: their
/// defaults are the Go types', not the CRD's.
pub(crate) fn apply_defaults(arena: &Arena, id: NodeId, v: &mut Value) {
    let n = arena.node(id);
    if n.name.is_some() {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, p) in &n.properties {
                let child = arena.node(*p);
                if let Some(default) = &child.default {
                    let missing = match map.get(k) {
                        None => true,
                        Some(Value::Null) => !child.nullable,
                        Some(_) => false,
                    };
                    if missing {
                        map.insert(k.clone(), default.clone());
                    }
                }
            }
            for (k, child) in map.iter_mut() {
                if let Some(p) = n.property(k) {
                    apply_defaults(arena, p, child);
                } else if let Additional::Schema(a) = n.additional {
                    apply_defaults(arena, a, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = n.items {
                for x in items {
                    apply_defaults(arena, item, x);
                }
            }
        }
        _ => {}
    }
}
