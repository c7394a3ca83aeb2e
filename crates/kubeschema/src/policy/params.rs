//! A binding's params (`policy_dispatcher.go` `CollectParams`): the objects its `paramRef`
//! names, by name or selector, in the namespace it says.

use serde_json::Value;

use super::matching::{selector_matches, Request};
use super::spec::{Binding, Policy};
use super::{split_api_version, str_of, Admission};

pub(super) enum Params<'a> {
    /// The params to evaluate with (`None`: `params` is null).
    Found(Vec<Option<&'a Value>>),
    Unknown(String),
    ConfigError(String),
}

/// `generic.CollectParams`, on the render's objects.
pub(super) fn collect_params<'a>(
    policy: &Policy,
    binding: &Binding,
    req: &Request<'_>,
    adm: &Admission<'a>,
) -> Params<'a> {
    let (Some((group, kind)), Some(param_ref)) = (&policy.param_kind, &binding.param_ref) else {
        // No paramKind, or a binding that does not use it: validated with null params.
        return Params::Found(vec![None]);
    };
    let candidates: Vec<&'a Value> = adm
        .objects
        .iter()
        .copied()
        .filter(|o| {
            let (g, _) = split_api_version(str_of(o, &["apiVersion"]).unwrap_or_default());
            g == group && str_of(o, &["kind"]) == Some(kind)
        })
        .collect();
    if candidates.is_empty() && !adm.kinds.known(group, kind) {
        return Params::Unknown(format!(
            "paramKind `{kind}` ({}) is neither in the render nor a kind fluxsim knows",
            if group.is_empty() { "core" } else { group }
        ));
    }
    let namespaced = adm.kinds.namespaced(group, kind);
    let ref_ns = str_of(param_ref, &["namespace"]).unwrap_or_default();
    let ns = if !namespaced {
        if !ref_ns.is_empty() {
            return Params::ConfigError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            );
        }
        None
    } else if !ref_ns.is_empty() {
        Some(ref_ns.to_string())
    } else if !req.namespace.is_empty() {
        Some(req.namespace.clone())
    } else {
        return Params::ConfigError(
            "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                .into(),
        );
    };
    let in_scope = |o: &&Value| {
        ns.as_deref()
            .is_none_or(|n| str_of(o, &["metadata", "namespace"]).unwrap_or("default") == n)
    };
    let name = str_of(param_ref, &["name"]).unwrap_or_default();
    let found: Vec<Option<&'a Value>> = if !name.is_empty() {
        candidates
            .into_iter()
            .filter(in_scope)
            .filter(|o| str_of(o, &["metadata", "name"]) == Some(name))
            .map(Some)
            .collect()
    } else if let Some(sel) = param_ref.get("selector") {
        let mut out = Vec::new();
        for o in candidates.into_iter().filter(in_scope) {
            let labels = o
                .pointer("/metadata/labels")
                .cloned()
                .unwrap_or(Value::Null);
            match selector_matches(sel, &labels) {
                Ok(true) => out.push(Some(o)),
                Ok(false) => {}
                Err(e) => return Params::ConfigError(e.to_string()),
            }
        }
        out
    } else {
        return Params::ConfigError("one of name or selector must be provided".into());
    };
    if found.is_empty() && str_of(param_ref, &["parameterNotFoundAction"]) == Some("Deny") {
        return Params::ConfigError(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Params::Found(found)
}
