//! Which requests a policy or binding matches (`matching.go` and the webhook predicates
//! `rules`, `namespace`, `object`): resource rules, the namespace and object selectors.

use serde_json::Value;

use super::{list, split_api_version, str_of, Admission};

/// The label the API server puts on every Namespace (`kubernetes.io/metadata.name`,
/// apiserver `NamespaceDefaultLabelName`): known even for a namespace the render lacks.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The request's attributes, as the matchers and `request` read them.
pub(super) struct Request<'a> {
    pub(super) object: &'a Value,
    pub(super) group: String,
    pub(super) version: String,
    pub(super) kind: String,
    pub(super) resource: String,
    pub(super) name: String,
    /// The namespace of a namespaced object (`""` for a cluster-scoped one).
    pub(super) namespace: String,
    pub(super) namespaced: bool,
    pub(super) username: String,
}

impl<'a> Request<'a> {
    pub(super) fn of(object: &'a Value, a: &Admission<'_>) -> Request<'a> {
        let (group, version) =
            split_api_version(str_of(object, &["apiVersion"]).unwrap_or_default());
        let kind = str_of(object, &["kind"]).unwrap_or_default();
        let namespaced = a.kinds.namespaced(group, kind);
        // A namespaced object without a namespace goes to `default`, as a client's request.
        let namespace = if namespaced {
            str_of(object, &["metadata", "namespace"])
                .filter(|n| !n.is_empty())
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        Request {
            object,
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            resource: a.kinds.plural(group, kind),
            name: str_of(object, &["metadata", "name"])
                .unwrap_or_default()
                .to_string(),
            namespace,
            namespaced,
            username: a.username.to_string(),
        }
    }

    pub(super) fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.kind == "Namespace"
    }

    /// `request` as `cel.CreateAdmissionRequest` builds it, for a create.
    pub(super) fn to_cel(&self) -> cel::Value {
        let gvk =
            serde_json::json!({"group": self.group, "version": self.version, "kind": self.kind});
        let gvr = serde_json::json!({"group": self.group, "version": self.version, "resource": self.resource});
        let mut groups = Vec::new();
        if let Some(rest) = self.username.strip_prefix("system:serviceaccount:") {
            if let Some((ns, _)) = rest.split_once(':') {
                groups.push("system:serviceaccounts".to_string());
                groups.push(format!("system:serviceaccounts:{ns}"));
            }
        }
        groups.push("system:authenticated".to_string());
        crate::cel::untyped(&serde_json::json!({
            "kind": gvk, "resource": gvr, "subResource": "",
            "requestKind": gvk, "requestResource": gvr, "requestSubResource": "",
            "name": self.name, "namespace": self.namespace, "operation": "CREATE",
            "userInfo": {"username": self.username, "groups": groups},
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "kustomize-controller"},
        }))
    }
}

/// A matcher's answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Match {
    Yes,
    No,
    Unknown(String),
}

/// `matching.Matcher.Matches` for a create: namespaceSelector, objectSelector, then
/// excludeResourceRules and resourceRules (an empty list matches every resource).
/// `defaulted`: the policy's matchConstraints, which the API server defaults
/// (`matchPolicy: Equivalent`).
pub(super) fn matches(
    m: Option<&Value>,
    req: &Request<'_>,
    a: &Admission<'_>,
    policy: bool,
) -> Match {
    let Some(m) = m else {
        // A policy without matchConstraints matches nothing (the API server requires them).
        return if policy { Match::No } else { Match::Yes };
    };
    let ns = namespace_selector(m.get("namespaceSelector"), req, a);
    if ns == Match::No {
        return Match::No;
    }
    let labels = req
        .object
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    match m
        .get("objectSelector")
        .map(|s| selector_matches(s, &labels))
    {
        Some(Ok(false)) => return Match::No,
        Some(Err(e)) => return Match::Unknown(format!("objectSelector: {e}")),
        _ => {}
    }
    let equivalent = m.get("matchPolicy").and_then(Value::as_str) != Some("Exact");
    let excluded: Vec<&Value> = list(m, "excludeResourceRules").collect();
    if !matches!(rules_match(&excluded, req, a, equivalent), Match::No) {
        return Match::No;
    }
    let rules: Vec<&Value> = list(m, "resourceRules").collect();
    let by_rules = if rules.is_empty() {
        Match::Yes
    } else {
        rules_match(&rules, req, a, equivalent)
    };
    match (by_rules, ns) {
        (Match::Yes, Match::Unknown(r)) => Match::Unknown(r),
        (r, _) => r,
    }
}

/// `namespace.Matcher.MatchNamespaceSelector`: a cluster-scoped object other than a
/// Namespace always matches; a Namespace by its own labels; a namespaced object by its
/// namespace's labels (the render's Namespace, else only `kubernetes.io/metadata.name` is
/// known).
fn namespace_selector(sel: Option<&Value>, req: &Request<'_>, a: &Admission<'_>) -> Match {
    let Some(sel) = sel.filter(|s| !is_empty_selector(s)) else {
        return Match::Yes;
    };
    let (name, labels) = if req.is_namespace() {
        (req.name.as_str(), req.object.pointer("/metadata/labels"))
    } else if req.namespaced {
        if let Some(ns) = a.namespaces.get(&req.namespace) {
            (req.namespace.as_str(), ns.pointer("/metadata/labels"))
        } else {
            if selector_keys(sel).iter().any(|k| k != NAMESPACE_NAME_LABEL) {
                return Match::Unknown(format!(
                    "namespaceSelector: namespace `{}` is not in the render, so its labels \
                     are not known",
                    req.namespace
                ));
            }
            (req.namespace.as_str(), None)
        }
    } else {
        return Match::Yes;
    };
    let mut all = labels
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    all.insert(
        NAMESPACE_NAME_LABEL.to_string(),
        Value::String(name.to_string()),
    );
    match selector_matches(sel, &Value::Object(all)) {
        Ok(true) => Match::Yes,
        Ok(false) => Match::No,
        Err(e) => Match::Unknown(format!("namespaceSelector: {e}")),
    }
}

fn is_empty_selector(sel: &Value) -> bool {
    sel.get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(serde_json::Map::is_empty)
        && sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

fn selector_keys(sel: &Value) -> Vec<String> {
    let mut keys: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.extend(
        list(sel, "matchExpressions").filter_map(|e| str_of(e, &["key"]).map(str::to_string)),
    );
    keys
}

/// A label selector's operator that `metav1.LabelSelectorAsSelector` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a valid label selector operator")]
pub(super) struct BadOperator(String);

/// `metav1.LabelSelectorAsSelector` applied to `labels`: matchLabels and matchExpressions
/// (`In`, `NotIn`, `Exists`, `DoesNotExist`), all of them.
pub(super) fn selector_matches(sel: &Value, labels: &Value) -> Result<bool, BadOperator> {
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            if get(k) != v.as_str() {
                return Ok(false);
            }
        }
    }
    for e in list(sel, "matchExpressions") {
        let key = str_of(e, &["key"]).unwrap_or_default();
        let values: Vec<&str> = list(e, "values").filter_map(Value::as_str).collect();
        let have = get(key);
        let ok = match str_of(e, &["operator"]).unwrap_or_default() {
            "In" => have.is_some_and(|h| values.contains(&h)),
            "NotIn" => have.is_none_or(|h| !values.contains(&h)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            other => return Err(BadOperator(other.to_string())),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `matchesResourceRules`: a rule (`rules.Matcher`) with CREATE, then, under
/// `matchPolicy: Equivalent`, the kind's other served versions (the API server converts the
/// object to the version matched: not checkable offline).
fn rules_match(rules: &[&Value], req: &Request<'_>, a: &Admission<'_>, equivalent: bool) -> Match {
    if rules.iter().any(|r| rule_matches(r, req, &req.version)) {
        return Match::Yes;
    }
    if equivalent {
        for v in a.kinds.versions(&req.group, &req.kind) {
            if *v != req.version && rules.iter().any(|r| rule_matches(r, req, v)) {
                return Match::Unknown(format!(
                    "matched through `matchPolicy: Equivalent` as version `{v}`: the API server \
                     converts the object to it first, which fluxsim cannot"
                ));
            }
        }
    }
    Match::No
}

/// `rules.Matcher.Matches` for a create of a main resource (no subresource), and the
/// rule's `resourceNames`.
fn rule_matches(rule: &Value, req: &Request<'_>, version: &str) -> bool {
    let has = |key: &str, v: &str| {
        list(rule, key)
            .filter_map(Value::as_str)
            .any(|x| x == "*" || x == v)
    };
    let resource_ok = list(rule, "resources")
        .filter_map(Value::as_str)
        .any(|r| r == "*" || r == "*/*" || r == req.resource);
    let scope_ok = match str_of(rule, &["scope"]) {
        None | Some("*") => true,
        // rules.go: a Namespace object is cluster-scoped.
        Some("Namespaced") => req.namespaced && !req.is_namespace(),
        Some("Cluster") => !req.namespaced || req.is_namespace(),
        Some(_) => false,
    };
    let names: Vec<&str> = list(rule, "resourceNames")
        .filter_map(Value::as_str)
        .collect();
    has("operations", "CREATE")
        && has("apiGroups", &req.group)
        && has("apiVersions", version)
        && resource_ok
        && scope_ok
        && (names.is_empty() || names.contains(&req.name.as_str()))
}
