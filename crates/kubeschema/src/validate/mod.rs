//! One object checked as the API server checks Flux's server-side apply, in the order the
//! server does it:
//!
//! 1. the apply patch is converted to a typed object (apimachinery
//!    `pkg/util/managedfields/internal/structuredmerge.go`, structured-merge-diff
//!    `typed/validate.go`): unknown fields, scalar types, list element keys and duplicates;
//!    every error there is `failed to create typed patch object (...)`;
//! 2. a built-in kind is decoded into its Go type (quantities, base64, integer sizes) and
//!    validated by its Go validation, of which the schema carries the enums and the required
//!    fields; a custom resource is validated against the CRD's structural schema
//!    (apiextensions-apiserver `pkg/apiserver/validation`, kube-openapi
//!    `pkg/validation/validate`) and its CEL rules;
//! 3. the object metadata (labels, annotations, namespace) as apimachinery
//!    `ValidateObjectMeta` does.

mod custom;
mod go_text;
mod meta;
mod typed;

use serde_json::Value;

use crate::cel::go_value;
use crate::finding::{Finding, ObjectId, Report, Rule, Unchecked};
use crate::formats;
use crate::path::{self, Seg};
use crate::rules;
use crate::schema::{Additional, Arena, ListKind, Node, NodeId, Special, Type};

use go_text::{go_quoted_list, not_supported};
pub(crate) use meta::object_meta;
use typed::{key_fields, smd_scalar, smd_type};

/// How the second step reads the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// A built-in kind: Go decoding and the schema's enums and required fields.
    Builtin,
    /// A custom resource: the CRD's structural schema and CEL rules.
    Custom,
}

/// A schema path segment.
#[derive(Debug, Clone)]
enum SchemaSeg<'a> {
    Root(&'a str),
    Prop(&'a str),
    Items,
    Additional,
}

pub(crate) struct Walker<'a> {
    arena: &'a Arena,
    flavor: Flavor,
    id: &'a ObjectId,
    path: Vec<Seg<'a>>,
    schema: Vec<SchemaSeg<'a>>,
    pub(crate) report: Report,
    /// Checking a subschema of anyOf/oneOf/not: collect, report nothing of CEL or unchecked.
    values_only: bool,
    /// Below the root's `status`: the API server drops it on create and update of the main
    /// resource before validating (status strategies' `PrepareForCreate`), so only the typed
    /// conversion of server-side apply reads it.
    in_status: bool,
    /// Strings containing it are values the caller does not know (fluxsim's
    /// `fluxsim-unknown:` placeholders of vars from sources it cannot read).
    marker: Option<&'a str>,
    /// What is left of the object's runtime CEL cost budget (`RuntimeCELCostBudget`).
    cel_budget: u64,
    /// A rule stopped on a bound: the API server runs no further rule of the object.
    cel_stopped: bool,
    /// When CEL evaluation stops, and how the caller names that bound.
    pub(crate) deadline: Option<(std::time::Instant, &'a str)>,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(
        arena: &'a Arena,
        flavor: Flavor,
        id: &'a ObjectId,
        root_name: &'a str,
        marker: Option<&'a str>,
    ) -> Self {
        Walker {
            arena,
            flavor,
            id,
            path: Vec::with_capacity(16),
            schema: vec![SchemaSeg::Root(root_name)],
            report: Report::default(),
            values_only: false,
            in_status: false,
            marker,
            cel_budget: crate::cost::RUNTIME_CEL_COST_BUDGET,
            cel_stopped: false,
            deadline: None,
        }
    }

    fn is_unknown(&self, v: &Value) -> bool {
        match (self.marker, v) {
            (Some(m), Value::String(s)) => s.contains(m),
            _ => false,
        }
    }

    fn holds_unknown(&self, v: &Value) -> bool {
        match v {
            Value::String(_) => self.is_unknown(v),
            Value::Array(a) => a.iter().any(|x| self.holds_unknown(x)),
            Value::Object(m) => m.values().any(|x| self.holds_unknown(x)),
            _ => false,
        }
    }

    /// Walks the whole object from its root node.
    pub(crate) fn run(&mut self, object: &'a Value, root: NodeId) {
        self.walk(object, root, true);
    }

    fn schema_path(&self) -> String {
        let start = self
            .schema
            .iter()
            .rposition(|s| matches!(s, SchemaSeg::Root(_)))
            .unwrap_or(0);
        let mut out = String::new();
        for seg in &self.schema[start..] {
            match seg {
                SchemaSeg::Root(r) => {
                    out.push_str(r);
                    if !r.contains('#') {
                        out.push('#');
                    }
                }
                SchemaSeg::Prop(p) => {
                    out.push_str("/properties/");
                    out.push_str(p);
                }
                SchemaSeg::Items => out.push_str("/items"),
                SchemaSeg::Additional => out.push_str("/additionalProperties"),
            }
        }
        out
    }

    fn push_finding(&mut self, rule: Rule, k8s_path: String, message: String) {
        self.report.findings.push(Finding {
            rule,
            severity: rule.severity,
            object: self.id.clone(),
            path: k8s_path,
            schema_path: self.schema_path(),
            message,
        });
    }

    /// A server-side apply (typed patch) error at the current path.
    fn smd_error(&mut self, rule: Rule, message: &str) {
        let id = self.id;
        let gvk = format!(
            "{}, Kind={}",
            if id.group.is_empty() {
                format!("/{}", id.version)
            } else {
                id.api_version()
            },
            id.kind
        );
        let full = format!(
            "failed to create typed patch object ({}/{}; {gvk}): {}: {message}",
            id.namespace,
            id.name,
            path::smd(&self.path)
        );
        self.push_finding(rule, path::k8s(&self.path), full);
    }

    /// A validation error (`field.Error`) at the current path, or below it.
    fn field_error(&mut self, rule: Rule, suffix: Option<&str>, body: &str) {
        let mut p = path::k8s(&self.path);
        if let Some(s) = suffix
            .map(|s| s.trim_start_matches('.'))
            .filter(|s| !s.is_empty())
        {
            if !p.is_empty() && !s.starts_with('[') {
                p.push('.');
            }
            p.push_str(s);
        }
        let shown = if p.is_empty() {
            "<root>".to_string()
        } else {
            p.clone()
        };
        self.push_finding(rule, p, format!("{shown}: {body}"));
    }

    fn unchecked(&mut self, reason: String) {
        if self.values_only {
            return;
        }
        self.report.unchecked.push(Unchecked {
            object: self.id.clone(),
            path: path::k8s(&self.path),
            reason,
        });
    }

    fn walk(&mut self, v: &'a Value, id: NodeId, resource_root: bool) {
        let arena = self.arena;
        let n = arena.node(id);
        let named = n.name.as_deref();
        if let Some(name) = named {
            if !resource_root || self.flavor == Flavor::Builtin {
                self.schema.push(SchemaSeg::Root(name));
            }
        }
        self.walk_node(v, n, id, resource_root);
        if named.is_some() && (!resource_root || self.flavor == Flavor::Builtin) {
            self.schema.pop();
        }
    }

    fn walk_node(&mut self, v: &'a Value, n: &'a Node, id: NodeId, resource_root: bool) {
        if n.special == Special::Any || v.is_null() {
            return;
        }
        if self.is_unknown(v) {
            if let (Value::String(s), Some(m)) = (v, self.marker) {
                // Name the placeholder only: the value may be a whole file.
                let at = s.find(m).unwrap_or(0);
                let token: String = s[at..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | ',' | ')'))
                    .take(120)
                    .collect();
                self.unchecked(format!("the value holds an unknown var: {token}"));
            }
            return;
        }
        if !self.values_only {
            if let Err(message) = smd_type(n, v) {
                self.smd_error(rules::SCHEMA_VIOLATION, &message.to_string());
                return;
            }
        }
        match v {
            Value::Object(map) => {
                for (key, child) in map {
                    if let Some(p) = n.property(key) {
                        let status = resource_root && key == "status";
                        self.in_status |= status;
                        self.path.push(Seg::Field(key));
                        self.schema.push(SchemaSeg::Prop(key));
                        self.walk(child, p, false);
                        self.schema.pop();
                        self.path.pop();
                        if status {
                            self.in_status = false;
                        }
                        continue;
                    }
                    match n.additional {
                        Additional::Schema(a) => {
                            self.path.push(Seg::Key(key));
                            self.schema.push(SchemaSeg::Additional);
                            self.walk(child, a, false);
                            self.schema.pop();
                            self.path.pop();
                        }
                        Additional::Any => {}
                        Additional::Unset if n.smd_preserve || n.properties.is_empty() => {}
                        Additional::Unset | Additional::Forbidden => {
                            if !self.values_only {
                                self.path.push(Seg::Field(key));
                                self.smd_error(
                                    rules::UNKNOWN_FIELD,
                                    "field not declared in schema",
                                );
                                self.path.pop();
                            }
                        }
                    }
                }
            }
            Value::Array(items) => {
                if !self.values_only && !self.list_keys(n, items) {
                    return;
                }
                if let Some(item) = n.items {
                    self.schema.push(SchemaSeg::Items);
                    for (i, child) in items.iter().enumerate() {
                        let name = self.element_name(n, item, child);
                        self.path.push(Seg::Index(i, name));
                        self.walk(child, item, false);
                        self.path.pop();
                    }
                    self.schema.pop();
                }
            }
            _ => {}
        }
        if self.in_status {
            return;
        }
        match self.flavor {
            Flavor::Builtin => self.builtin_value(n, v),
            Flavor::Custom => {
                self.custom_value(n, v);
                if !n.rules.is_empty() && !self.values_only {
                    self.cel(n, id, v, resource_root);
                }
            }
        }
    }

    /// The structured-merge-diff name of a list element, for a list merged by key.
    fn element_name(&self, list: &Node, item: NodeId, v: &Value) -> Option<String> {
        match &list.list {
            ListKind::Atomic => None,
            ListKind::Set => Some(format!("[={}]", smd_scalar(v))),
            ListKind::Map(keys) => {
                let fields = key_fields(self.arena, item, keys, v)?;
                Some(format!("[{}]", fields.join(",")))
            }
        }
    }

    /// structured-merge-diff `visitListItems`: every element of a list merged by key has a
    /// key, and no two the same. False when the list cannot be walked further.
    fn list_keys(&mut self, n: &Node, items: &[Value]) -> bool {
        let Some(item) = n.items else { return true };
        let mut seen: Vec<String> = Vec::new();
        let mut ok = true;
        for (i, child) in items.iter().enumerate() {
            let name = match &n.list {
                ListKind::Atomic => continue,
                ListKind::Set => {
                    if child.is_object() {
                        Err(
                            "associative list without keys has an element that's a map type"
                                .to_string(),
                        )
                    } else if child.is_array() {
                        Err(
                            "associative list without keys has an element that's a list type"
                                .to_string(),
                        )
                    } else {
                        Ok(format!("[={}]", smd_scalar(child)))
                    }
                }
                ListKind::Map(keys) => {
                    if child.is_null() {
                        Err("associative list with keys may not have a null element".to_string())
                    } else if !child.is_object() {
                        Err("associative list with keys may not have non-map elements".to_string())
                    } else {
                        match key_fields(self.arena, item, keys, child) {
                            Some(f) => Ok(format!("[{}]", f.join(","))),
                            None => Err(format!(
                                "associative list with keys has an element that omits all key \
                                 fields {} (and doesn't have default values for any key fields)",
                                go_quoted_list(keys)
                            )),
                        }
                    }
                }
            };
            match name {
                Ok(name) => {
                    if seen.contains(&name) {
                        self.smd_error(
                            rules::DUPLICATE_LIST_ENTRY,
                            &format!("duplicate entries for key {name}"),
                        );
                        ok = false;
                    } else {
                        seen.push(name);
                    }
                }
                Err(message) => {
                    self.smd_error(
                        rules::DUPLICATE_LIST_ENTRY,
                        &format!("element {i}: {message}"),
                    );
                    return false;
                }
            }
        }
        ok
    }

    /// Step 2 for a built-in kind: what decoding into the Go type rejects, and the enums and
    /// required fields the schema carries from the Go validation.
    fn builtin_value(&mut self, n: &Node, v: &Value) {
        if n.special == Special::Quantity {
            if let Value::String(s) = v {
                if formats::parse_quantity(s).is_none() {
                    self.field_error(
                        rules::SCHEMA_VIOLATION,
                        None,
                        &format!(
                            "Invalid value: {}: {}",
                            go_value(v),
                            formats::QUANTITY_MESSAGE
                        ),
                    );
                }
            }
            return;
        }
        match (n.ty, v) {
            (Some(Type::Integer), Value::Number(num)) => {
                let bits = if n.format.as_deref() == Some("int32") {
                    32
                } else {
                    64
                };
                // Go prints an integral float64 without a fraction when the merged object is
                // encoded again, so `3.0` decodes; `1.5` and out-of-range values do not.
                let x = num.as_f64().unwrap_or(f64::NAN);
                let limit = if bits == 32 {
                    f64::from(i32::MAX)
                } else {
                    9.223_372_036_854_776e18
                };
                let fits = num.is_i64()
                    && (bits == 64 || num.as_i64().is_some_and(|i| i32::try_from(i).is_ok()))
                    || (!num.is_i64() && !num.is_u64() && x.fract() == 0.0 && x.abs() <= limit);
                if !fits {
                    self.field_error(
                        rules::SCHEMA_VIOLATION,
                        None,
                        &format!("Invalid value: {num}: cannot unmarshal number {num} into a Go value of type int{bits}"),
                    );
                }
            }
            (Some(Type::String), Value::String(s)) if n.format.as_deref() == Some("byte") => {
                if let Err(at) = formats::base64_std(s) {
                    self.field_error(
                        rules::SCHEMA_VIOLATION,
                        None,
                        &format!("Invalid value: illegal base64 data at input byte {at}"),
                    );
                }
            }
            _ => {}
        }
        if let (Some(allowed), Value::String(s)) = (&n.enumeration, v) {
            // An empty string is the Go zero value: defaulting fills it before validation.
            if !s.is_empty() && !allowed.iter().any(|a| a.as_str() == Some(s)) {
                self.field_error(rules::SCHEMA_VIOLATION, None, &not_supported(v, allowed));
            }
        }
        if let Value::Object(map) = v {
            for r in &n.required {
                if map.get(r).is_none_or(Value::is_null) {
                    self.field_error(rules::SCHEMA_VIOLATION, Some(r), "Required value");
                }
            }
        }
    }
}
