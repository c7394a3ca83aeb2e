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

use std::time::Instant;

use serde_json::Value;

use crate::cel::{go_value, to_cel, Outcome};
use crate::finding::{Finding, ObjectId, Report, Rule, Unchecked};
use crate::formats::{self, FormatCheck};
use crate::path::{self, Seg};
use crate::rules;
use crate::schema::{Additional, Arena, ListKind, Node, NodeId, Special, Type};

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
                self.smd_error(rules::SCHEMA_VIOLATION, &message);
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

    /// Step 2 for a custom resource: kube-openapi's validation of the structural schema,
    /// messages as apiextensions `kubeOpenAPIResultToFieldErrors` turns them into field errors.
    fn custom_value(&mut self, n: &Node, v: &'a Value) {
        let name = path::openapi(&self.path);
        let name = if name.is_empty() {
            ".".to_string()
        } else {
            name
        };
        if let Some(expected) = type_error(n, v) {
            let body = format!(
                "Invalid value: {}: {name} in body must be of type {expected}: {:?}",
                go_value(v),
                json_type(v)
            );
            self.field_error(rules::SCHEMA_VIOLATION, None, &body);
            return;
        }
        if let Some(allowed) = &n.enumeration {
            if !allowed.iter().any(|a| json_eq(a, v)) {
                self.field_error(rules::SCHEMA_VIOLATION, None, &not_supported(v, allowed));
            }
        }
        match v {
            Value::String(s) => self.custom_string(n, &name, v, s),
            Value::Number(num) => self.custom_number(n, &name, v, num.as_f64().unwrap_or(0.0)),
            Value::Array(items) => {
                if let Some(b) = &n.bounds {
                    let len = items.len() as u64;
                    if let Some(max) = b.max_items.filter(|m| len > *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!("Too many: {len}: must have at most {max} items"),
                        );
                    }
                    if let Some(min) = b.min_items.filter(|m| len < *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!(
                                "Invalid value: {name} in body should have at least {min} items"
                            ),
                        );
                    }
                }
            }
            Value::Object(map) => {
                for r in &n.required {
                    let present = match (map.get(r), n.property(r)) {
                        // A null of a non-nullable field is pruned before validation.
                        (Some(Value::Null), Some(p)) => self.arena.node(p).nullable,
                        (None, _) | (Some(Value::Null), None) => false,
                        (Some(_), _) => true,
                    };
                    if !present {
                        self.field_error(rules::SCHEMA_VIOLATION, Some(r), "Required value");
                    }
                }
                if let Some(b) = &n.bounds {
                    let len = map.len() as u64;
                    if let Some(max) = b.max_properties.filter(|m| len > *m) {
                        self.field_error(
                            rules::SCHEMA_VIOLATION,
                            None,
                            &format!("Too many: {len}: must have at most {max} items"),
                        );
                    }
                    if let Some(min) = b.min_properties.filter(|m| len < *m) {
                        self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {name} in body should have at least {min} properties"));
                    }
                }
            }
            _ => {}
        }
        self.combinators(n, &name, v);
    }

    fn custom_string(&mut self, n: &Node, name: &str, v: &Value, s: &str) {
        if let Some(b) = &n.bounds {
            let len = s.chars().count() as u64;
            if let Some(max) = b.max_length.filter(|m| len > *m) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!("Too long: may not be more than {max} bytes"),
                );
            }
            if let Some(min) = b.min_length.filter(|m| len < *m) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body should be at least {min} chars long",
                        go_value(v)
                    ),
                );
            }
        }
        if let Some(pattern) = &n.pattern {
            let (source, cell) = &**pattern;
            let compiled = cell.get_or_init(|| formats::go_regex(source));
            match compiled {
                Some(re) if !re.is_match(s) => {
                    self.field_error(
                        rules::SCHEMA_VIOLATION,
                        None,
                        &format!(
                            "Invalid value: {}: {name} in body should match '{source}'",
                            go_value(v)
                        ),
                    );
                }
                Some(_) => {}
                None => self.unchecked(format!(
                    "pattern `{source}` is not a regular expression fluxsim can compile"
                )),
            }
        }
        if let Some(format) = n.format.as_deref().filter(|_| !n.int_or_string) {
            match formats::check_format(format, s) {
                FormatCheck::Invalid => self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body must be of type {format}: {:?}",
                        go_value(v),
                        s
                    ),
                ),
                FormatCheck::NotChecked => {
                    self.unchecked(format!("format `{format}` is not checked by fluxsim"));
                }
                FormatCheck::Valid | FormatCheck::Ignored => {}
            }
        }
    }

    fn custom_number(&mut self, node: &Node, name: &str, value: &Value, number: f64) {
        let Some(bounds) = &node.bounds else { return };
        let shown = go_value(value);
        if let Some(max) = bounds.maximum {
            if bounds.exclusive_maximum && number >= max {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be less than {}",
                        go_float(max)
                    ),
                );
            } else if number > max {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be less than or equal to {}",
                        go_float(max)
                    ),
                );
            }
        }
        if let Some(min) = bounds.minimum {
            if bounds.exclusive_minimum && number <= min {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be greater than {}",
                        go_float(min)
                    ),
                );
            } else if number < min {
                self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {shown}: {name} in body should be greater than or equal to {}", go_float(min)));
            }
        }
        if let Some(factor) = bounds.multiple_of.filter(|f| *f > 0.0) {
            let quotient = number / factor;
            if (quotient - quotient.round()).abs() > 1e-9 {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {shown}: {name} in body should be a multiple of {}",
                        go_float(factor)
                    ),
                );
            }
        }
    }

    /// allOf, anyOf, oneOf and not: value validations only in a structural schema.
    fn combinators(&mut self, n: &Node, name: &str, v: &'a Value) {
        for &sub in &n.all_of {
            let saved = self.values_only;
            self.values_only = true;
            self.walk(v, sub, false);
            self.values_only = saved;
        }
        if !n.any_of.is_empty() && !n.any_of.iter().any(|s| self.passes(v, *s)) {
            self.field_error(
                rules::SCHEMA_VIOLATION,
                None,
                &format!(
                    "Invalid value: {}: {name} in body must validate at least one schema (anyOf)",
                    go_value_or_type(v)
                ),
            );
        }
        if !n.one_of.is_empty() && n.one_of.iter().filter(|s| self.passes(v, **s)).count() != 1 {
            self.field_error(rules::SCHEMA_VIOLATION, None, &format!("Invalid value: {}: {name} in body must validate one and only one schema (oneOf)", go_value_or_type(v)));
        }
        if let Some(not) = n.not {
            if self.passes(v, not) {
                self.field_error(
                    rules::SCHEMA_VIOLATION,
                    None,
                    &format!(
                        "Invalid value: {}: {name} in body must not validate the schema (not)",
                        go_value_or_type(v)
                    ),
                );
            }
        }
    }

    /// Does `v` pass the value validations of a subschema?
    fn passes(&self, v: &'a Value, sub: NodeId) -> bool {
        let mut w = Walker {
            arena: self.arena,
            flavor: self.flavor,
            id: self.id,
            path: self.path.clone(),
            schema: Vec::new(),
            report: Report::default(),
            values_only: true,
            in_status: false,
            marker: self.marker,
            cel_budget: 0,
            cel_stopped: true,
            deadline: None,
        };
        w.walk(v, sub, false);
        w.report.findings.is_empty()
    }

    fn cel(&mut self, n: &Node, id: NodeId, v: &Value, resource_root: bool) {
        if self.marker.is_some() && self.holds_unknown(v) {
            self.unchecked(format!(
                "{} CEL rule(s) not evaluated: the value holds an unknown var's placeholder",
                n.rules.len()
            ));
            return;
        }
        if self.cel_stopped {
            return;
        }
        let this = to_cel(self.arena, id, v, resource_root);
        let deadline = self.deadline.map(|(d, _)| d);
        for rule in &n.rules {
            if let Some((_, what)) = self.deadline.filter(|(d, _)| Instant::now() >= *d) {
                self.unchecked(format!(
                    "CEL rule not evaluated: validation had reached {what}"
                ));
                continue;
            }
            let (outcome, cost) =
                rule.evaluate(&this, n.ty, v, crate::cost::PER_CALL_LIMIT, deadline);
            let ty = schema_type_name(n.ty);
            // apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`: the cost is
            // taken from the budget first, then the outcome is read.
            if cost > self.cel_budget {
                self.field_error(
                    rules::CEL_COST_EXCEEDED,
                    None,
                    &format!(
                        "Invalid value: \"{ty}\": validation failed due to running out of cost \
                         budget, no further validation rules will be run"
                    ),
                );
                self.cel_stopped = true;
                return;
            }
            self.cel_budget -= cost;
            match outcome {
                Outcome::Pass => {}
                Outcome::Fail { field_path, body } => {
                    self.field_error(rules::CEL_RULE_FAILED, field_path.as_deref(), &body);
                }
                Outcome::Unchecked(reason) => self.unchecked(reason),
                Outcome::CostLimit => {
                    self.field_error(
                        rules::CEL_COST_EXCEEDED,
                        None,
                        &format!(
                            "Invalid value: \"{ty}\": '{}': no further validation rules will be \
                             run due to call cost exceeds limit for rule: {}",
                            crate::cost::COST_LIMIT_ERROR,
                            rule.describe()
                        ),
                    );
                    self.cel_stopped = true;
                    return;
                }
                // fluxsim's own deadline is no defect of the repository (a slower machine
                // needs more time): the object is not validated, a warning, never FS308.
                Outcome::Deadline => {
                    let what = self.deadline.map_or("the deadline", |(_, w)| w);
                    self.unchecked(format!(
                        "CEL rule `{}` stopped at {what} before it finished (cost {cost} so \
                         far): the object's other rules are not evaluated",
                        rule.describe()
                    ));
                    self.cel_stopped = true;
                    return;
                }
            }
        }
    }
}

/// A schema type as the API server's field errors name it (`sts.Type`).
fn schema_type_name(ty: Option<Type>) -> &'static str {
    match ty {
        Some(Type::Object) => "object",
        Some(Type::Array) => "array",
        Some(Type::String) => "string",
        Some(Type::Integer) => "integer",
        Some(Type::Number) => "number",
        Some(Type::Boolean) => "boolean",
        None => "",
    }
}

/// structured-merge-diff's scalar and container checks (`typed/validate.go`
/// `validateScalar`, `helpers.go` `listValue`/`mapValue`), on the type kube-openapi's
/// `schemaconv` gives the node.
// The String is the finding's message in structured-merge-diff's wording, never matched on.
fn smd_type(n: &Node, v: &Value) -> Result<(), String> {
    if n.special == Special::Quantity || n.int_or_string {
        return scalar_untyped(v);
    }
    match n.ty {
        None => Ok(()),
        Some(Type::Object) => match v {
            Value::Object(_) => Ok(()),
            _ => Err(format!("expected map, got {}", go_value_ptr(v))),
        },
        Some(Type::Array) => match v {
            Value::Array(_) => Ok(()),
            _ => Err(format!("expected list, got {}", go_value_ptr(v))),
        },
        Some(Type::Integer | Type::Number) => match v {
            Value::Number(_) => Ok(()),
            _ => Err(format!(
                "expected numeric (int or float), got {}",
                go_type(v)
            )),
        },
        Some(Type::Boolean) => match v {
            Value::Bool(_) => Ok(()),
            _ => Err(format!("expected boolean, got {}", go_value_ptr(v))),
        },
        Some(Type::String) => match n.format.as_deref() {
            None | Some("" | "byte") => match v {
                Value::String(_) => Ok(()),
                _ => Err(format!(
                    "expected string, got &value.valueUnstructured{{Value:{}}}",
                    go_sharp_v(v)
                )),
            },
            Some(_) => scalar_untyped(v),
        },
    }
}

// String: see `smd_type`.
fn scalar_untyped(v: &Value) -> Result<(), String> {
    match v {
        Value::Object(_) | Value::Array(_) => {
            Err(format!("expected any scalar, got {}", go_value_ptr(v)))
        }
        _ => Ok(()),
    }
}

/// kube-openapi's type check of a CRD node; `Some(expected type)` when it fails.
fn type_error(n: &Node, v: &Value) -> Option<&'static str> {
    if n.int_or_string {
        return match v {
            Value::String(_) => None,
            Value::Number(x) if is_integral(x) => None,
            _ => Some("integer,string"),
        };
    }
    let ty = n.ty?;
    let ok = match (ty, v) {
        (_, Value::Null)
        | (Type::Object, Value::Object(_))
        | (Type::Array, Value::Array(_))
        | (Type::String, Value::String(_))
        | (Type::Boolean, Value::Bool(_))
        | (Type::Number, Value::Number(_)) => true,
        (Type::Integer, Value::Number(x)) => is_integral(x),
        _ => false,
    };
    if ok {
        None
    } else {
        Some(ty.name())
    }
}

fn is_integral(x: &serde_json::Number) -> bool {
    x.is_i64() || x.is_u64() || x.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// The JSON type name kube-openapi prints (`"string"`, `"integer"`, `"number"` ...).
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(x) if x.is_i64() || x.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
fn not_supported(v: &Value, allowed: &[Value]) -> String {
    let values: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => format!("{s:?}"),
            other => format!("{:?}", other.to_string()),
        })
        .collect();
    format!(
        "Unsupported value: {}: supported values: {}",
        go_value(v),
        values.join(", ")
    )
}

/// The key fields of a list-map element, as structured-merge-diff names them (sorted by
/// field name, JSON values; a missing key takes the schema's default). `None` when the
/// element has none of its keys.
fn key_fields(arena: &Arena, item: NodeId, keys: &[String], v: &Value) -> Option<Vec<String>> {
    let node = arena.node(item);
    let mut fields: Vec<(String, String)> = Vec::new();
    for k in keys {
        let value = v
            .get(k)
            .cloned()
            .or_else(|| node.property(k).and_then(|p| arena.node(p).default.clone()));
        if let Some(value) = value {
            fields.push((k.clone(), smd_scalar(&value)));
        }
    }
    if fields.is_empty() {
        return None;
    }
    fields.sort();
    Some(
        fields
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
    )
}

/// structured-merge-diff `value.ToString`: JSON, strings quoted.
fn smd_scalar(v: &Value) -> String {
    v.to_string()
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// Go's `%T` of the decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(x) if x.is_i64() || x.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of an interface value.
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::String(s) => s.clone(),
        Value::Number(x) => x.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, x)| format!("{k}:{}", go_v(x))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%v` of a structured-merge-diff `value.Value` (a pointer to a struct: `&{...}`).
fn go_value_ptr(v: &Value) -> String {
    format!("&{{{}}}", go_v(v))
}

/// Go's `%#v` of a scalar interface value.
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => format!("[]interface {{}}{{{}}}", ""),
        Value::Object(_) => "map[string]interface {}{...}".to_string(),
        other => go_v(other),
    }
}

fn go_value_or_type(v: &Value) -> String {
    match v {
        Value::Object(_) => "\"object\"".to_string(),
        Value::Array(_) => "\"array\"".to_string(),
        other => go_value(other),
    }
}

/// Go's `%v` of a float64 bound (`10`, `0.5`).
fn go_float(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e21 {
        format!("{x:.0}")
    } else {
        x.to_string()
    }
}

/// Step 3: `ValidateObjectMeta`'s checks of labels, annotation keys and the namespace
/// (apimachinery `pkg/api/validation/objectmeta.go`).
pub(crate) fn object_meta(
    id: &ObjectId,
    object: &Value,
    marker: Option<&str>,
    report: &mut Report,
) {
    let unknown = |s: &str| marker.is_some_and(|m| s.contains(m));
    let Some(meta) = object.get("metadata") else {
        return;
    };
    let mut push = |path: &str, body: String| {
        report.findings.push(Finding {
            rule: rules::INVALID_METADATA,
            severity: rules::INVALID_METADATA.severity,
            object: id.clone(),
            path: path.to_string(),
            schema_path: String::new(),
            message: format!("{path}: {body}"),
        });
    };
    if let Some(Value::Object(labels)) = meta.get("labels") {
        for (k, v) in labels {
            for e in formats::qualified_name_errors(k) {
                push("metadata.labels", format!("Invalid value: {k:?}: {e}"));
            }
            if let Some(s) = v.as_str().filter(|s| !unknown(s)) {
                for e in formats::label_value_errors(s) {
                    push("metadata.labels", format!("Invalid value: {s:?}: {e}"));
                }
            }
        }
    }
    if let Some(Value::Object(annotations)) = meta.get("annotations") {
        let mut total = 0usize;
        for (k, v) in annotations {
            for e in formats::qualified_name_errors(&k.to_lowercase()) {
                push("metadata.annotations", format!("Invalid value: {k:?}: {e}"));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > 256 * 1024 {
            push(
                "metadata.annotations",
                format!("Too long: may not be more than {} bytes", 256 * 1024),
            );
        }
    }
    if let Some(Value::String(ns)) = meta.get("namespace") {
        if !ns.is_empty() && !unknown(ns) && !formats::is_dns1123_label(ns) {
            push(
                "metadata.namespace",
                format!(
                    "Invalid value: {ns:?}: a lowercase RFC 1123 label must consist of lower case \
                     alphanumeric characters or '-', and must start and end with an alphanumeric \
                     character (e.g. 'my-name',  or '123-abc', regex used for validation is \
                     '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                ),
            );
        }
    }
}
