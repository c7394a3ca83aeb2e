//! postBuild substitution of one resource, as kustomize-controller does it.

mod folded;
pub mod yaml_json;

use std::collections::BTreeMap;

/// A postBuild substitution failure for one resource.
#[derive(Debug, thiserror::Error)]
pub enum SubstituteError {
    /// A var name Flux refuses (`kustomize_varsub.go`).
    #[error("'{0}' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'")]
    InvalidVarName(String),
    /// envsubst failed.
    #[error("variable substitution failed: {0}")]
    Envsubst(#[from] crate::envsubst::Error),
    /// The substituted text is not YAML Flux can read back.
    #[error("the substituted resource is not valid YAML: {0}")]
    Yaml(String),
}

/// Flux's var-name rule, ASCII only (`varsubRegex` in `kustomize_varsub.go`).
#[must_use]
pub fn is_valid_var_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'_' | b'a'..=b'z' | b'A'..=b'Z'))
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// What `varSubstitution` does to one resource's YAML text: check the var names, run
/// envsubst, and read the result back as `sigs.k8s.io/yaml.YAMLToJSON` does. Returns the JSON.
pub fn substitute_text(
    text: &str,
    vars: &BTreeMap<String, String>,
    strict: bool,
) -> Result<String, SubstituteError> {
    // Go ranges over a map, so which invalid name is reported first is unspecified; we take
    // the first in sorted order.
    if let Some(bad) = vars.keys().find(|k| !is_valid_var_name(k)) {
        return Err(SubstituteError::InvalidVarName(bad.clone()));
    }
    let out = crate::envsubst::eval(text.as_bytes(), vars, strict)?;
    // A byte-offset substring can split a character; Go's YAML reader rejects invalid UTF-8.
    let out = String::from_utf8(out)
        .map_err(|_| SubstituteError::Yaml("the result is not valid UTF-8".to_string()))?;
    yaml_json::yaml_to_json(&out).map_err(|e| SubstituteError::Yaml(e.to_string()))
}

/// How many bytes the substituted objects of one Kustomization may hold together: fluxsim's
/// bound (each object is bounded by [`crate::envsubst::OUTPUT_GROWTH_LIMIT`] too), so that
/// one hostile Kustomization cannot exhaust the machine while the run goes on with the rest.
pub const KUSTOMIZATION_OUTPUT_LIMIT: usize = 256 << 20;

/// An error once the substituted objects of one Kustomization, `total` bytes so far, pass
/// [`KUSTOMIZATION_OUTPUT_LIMIT`].
pub fn check_total_output(total: usize) -> Result<(), String> {
    check_total_output_within(total, KUSTOMIZATION_OUTPUT_LIMIT)
}

fn check_total_output_within(total: usize, limit: usize) -> Result<(), String> {
    if total > limit {
        return Err(format!(
            "the substituted objects exceed {} MiB together: fluxsim stops here (no cluster \
             could apply that much from one Kustomization)",
            limit >> 20
        ));
    }
    Ok(())
}

/// The label and annotation that turn substitution off for one object.
pub const SUBSTITUTE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// True when the object is labelled or annotated `kustomize.toolkit.fluxcd.io/substitute:
/// disabled` (`SubstituteVariables` in `kustomize_varsub.go` skips it).
#[must_use]
pub fn substitution_disabled(obj: &serde_json::Value) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        obj.get("metadata")
            .and_then(|m| m.get(*field))
            .and_then(|m| m.get(SUBSTITUTE_KEY))
            .and_then(serde_json::Value::as_str)
            == Some("disabled")
    })
}

/// Flux substitutes only when some var is defined, unless `substituteStrategy: Always`.
#[must_use]
pub fn should_substitute(vars: &BTreeMap<String, String>, always: bool) -> bool {
    !vars.is_empty() || always
}

/// The var names a resource's text references (`${NAME...}`), when it parses.
#[must_use]
pub fn referenced_vars(text: &str) -> Vec<String> {
    crate::envsubst::Template::parse(text.as_bytes())
        .map(|t| t.exprs().iter().map(|e| e.param.clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    // kustomize_varsub.go: both the label and the annotation disable substitution.
    #[test]
    fn substitute_disabled_annotation_skips_resource() {
        let obj = json!({"metadata": {"annotations": {SUBSTITUTE_KEY: "disabled"}}});
        assert!(substitution_disabled(&obj));
        let obj = json!({"metadata": {"labels": {SUBSTITUTE_KEY: "disabled"}}});
        assert!(substitution_disabled(&obj));
        let obj = json!({"metadata": {"annotations": {SUBSTITUTE_KEY: "enabled"}}});
        assert!(!substitution_disabled(&obj));
    }

    #[test]
    fn substitution_needs_a_var_unless_strategy_always() {
        assert!(!should_substitute(&vars(&[]), false));
        assert!(should_substitute(&vars(&[]), true));
        assert!(should_substitute(&vars(&[("A", "")]), false));
    }

    // kustomize_varsub.go: varsubRegex is ASCII-only.
    #[test]
    fn invalid_var_name_fails_the_resource() {
        let err = substitute_text("a: b\n", &vars(&[("a.b", "x")]), false).unwrap_err();
        assert!(matches!(err, SubstituteError::InvalidVarName(ref n) if n == "a.b"));
        assert!(!is_valid_var_name("é"));
        assert!(!is_valid_var_name("1A"));
        assert!(is_valid_var_name("_a1"));
    }

    // sigs.k8s.io/yaml re-reads the substituted text as YAML 1.1.
    #[test]
    fn substituted_yes_becomes_a_boolean() {
        let out = substitute_text("a: ${V}\nb: '${V}'\n", &vars(&[("V", "yes")]), true).unwrap();
        assert_eq!(out, r#"{"a":true,"b":"yes"}"#);
    }

    #[test]
    fn substituted_leading_zero_number_is_octal() {
        let out = substitute_text("port: ${V}\n", &vars(&[("V", "010")]), true).unwrap();
        assert_eq!(out, r#"{"port":8}"#);
    }

    // yaml.v2 resolves plain keys too: `n` is the boolean false, then a JSON key "false".
    #[test]
    fn yaml11_boolean_keys_become_string_keys() {
        let out = substitute_text("n: ${V}\ny: 1\n", &vars(&[("V", "x")]), true).unwrap();
        assert_eq!(out, r#"{"false":"x","true":1}"#);
    }

    #[test]
    fn strict_substitution_names_the_unset_var() {
        let err = substitute_text("a: ${NOPE}\n", &vars(&[("A", "x")]), true).unwrap_err();
        assert!(err.to_string().contains("\"NOPE\""), "{err}");
    }

    #[test]
    fn a_value_that_breaks_the_yaml_fails() {
        let err = substitute_text("a: ${V}\n", &vars(&[("V", "[unclosed")]), true).unwrap_err();
        assert!(matches!(err, SubstituteError::Yaml(_)));
    }

    #[test]
    fn a_var_referenced_until_the_object_is_huge_fails_that_object_not_the_machine() {
        // 1 MiB referenced 64 times: 64 MiB, past the 16 MiB bound; fails before allocating it.
        let big = "x".repeat(1 << 20);
        let text = format!(
            "data:\n{}",
            "  k: ${BIG}\n".repeat(64).replacen("k:", "a:", 1)
        );
        let err = substitute_text(&text, &vars(&[("BIG", &big)]), true).unwrap_err();
        assert!(err.to_string().contains("would exceed"), "{err}");
        // A replacement that would multiply a value is refused before it is built.
        let err =
            substitute_text("a: ${BIG//x/${BIG}}\n", &vars(&[("BIG", &big)]), true).unwrap_err();
        assert!(err.to_string().contains("would exceed"), "{err}");
        // Below the bound, the same shape substitutes.
        let out = substitute_text("a: ${BIG}\n", &vars(&[("BIG", &big)]), true).unwrap();
        assert!(out.len() > 1 << 20);
    }

    #[test]
    fn a_kustomization_whose_substituted_objects_pass_the_bound_fails() {
        assert!(check_total_output_within(10, 10).is_ok());
        let err = check_total_output_within(11 << 20, 10 << 20).unwrap_err();
        assert!(err.contains("exceed 10 MiB"), "{err}");
    }
}
