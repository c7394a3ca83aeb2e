//! postBuild substitution of one resource, as kustomize-controller does it; [`reprint`]
//! prints the substituted objects again as kustomize prints JSON.

pub mod kustomization;
pub mod reprint;

use std::collections::BTreeMap;

use crate::flux::is_valid_var_name;

crate::message_error! {
    /// fluxsim's bound on what one Kustomization's substituted objects may hold, passed.
    pub struct TooLarge;
}
#[cfg(test)]
use crate::flux::{substitution_disabled, SUBSTITUTE_KEY};

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
    Yaml(#[from] crate::goyaml::yaml_json::YamlJsonError),
    /// A byte-offset substring split a character: Go's YAML reader refuses invalid UTF-8.
    #[error("the substituted resource is not valid YAML: the result is not valid UTF-8")]
    NotUtf8,
    /// The JSON cannot be set back into the kustomize resource (`res.UnmarshalJSON`).
    #[error("the substituted resource cannot be set back into kustomize's resource (UnmarshalJSON): {0}")]
    Unmarshal(String),
}

/// What `varSubstitution` does to one resource's YAML text: check the var names, run
/// envsubst, and read the result back as `sigs.k8s.io/yaml.YAMLToJSON` does. Returns the JSON.
pub fn substitute_text(
    text: &str,
    vars: &BTreeMap<String, String>,
    strict: bool,
) -> Result<String, SubstituteError> {
    Ok(crate::goyaml::yaml_json::yaml_to_json(&envsubst_text(
        text, vars, strict,
    )?)?)
}

/// The var-name check and envsubst of [`substitute_text`]: the YAML text Flux reads back.
fn envsubst_text(
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
    String::from_utf8(out).map_err(|_| SubstituteError::NotUtf8)
}

/// What `SubstituteVariables` (`kustomize_varsub.go`) leaves of one resource:
/// [`substitute_text`], then the JSON set back into the kustomize resource with
/// `res.UnmarshalJSON` (see [`unmarshal_json`]).
pub fn substitute_resource(
    text: &str,
    vars: &BTreeMap<String, String>,
    strict: bool,
) -> Result<serde_json::Value, SubstituteError> {
    let out = envsubst_text(text, vars, strict)?;
    unmarshal_value(crate::goyaml::yaml_json::yaml_to_value(&out)?)
}

/// [`substitute_resource`] of a text whose YAMLToJSON reading is already known (`read`,
/// from the build output): when the text holds no `$`, envsubst gives it back unchanged
/// (an expression starts with `$`, and nothing else is rewritten or can fail, strict or
/// not), so Flux reads back the same value and only `res.UnmarshalJSON` is left to run.
/// The var names are checked first, as `varSubstitution` checks them for every resource.
pub fn substitute_read_resource(
    text: &str,
    read: &serde_json::Value,
    vars: &BTreeMap<String, String>,
    strict: bool,
) -> Result<serde_json::Value, SubstituteError> {
    if text.contains('$') {
        return substitute_resource(text, vars, strict);
    }
    if let Some(bad) = vars.keys().find(|k| !is_valid_var_name(k)) {
        return Err(SubstituteError::InvalidVarName(bad.clone()));
    }
    unmarshal_value(read.clone())
}

/// kyaml `RNode.UnmarshalJSON` (kyaml v0.21.1 `yaml/rnode.go`), as `SubstituteVariables`
/// runs it on the substituted JSON: `json.Unmarshal` into a `map[string]interface{}` (so
/// the JSON must be an object or null, and every number becomes a float64), then
/// `FromMap`, which marshals the map with yaml.v3 and parses the text again. Two things
/// follow that fluxsim reproduces: integers lose what a float64 cannot hold
/// (`9223372036854775807` is applied as `9223372036854776000`, `-0` as `0`), and a string
/// that yaml.v3 writes as a literal block starting with a tab does not read back, which
/// fails the Kustomization (checked against Flux's code by
/// `testdata/conformance/yaml-reread.jsonl`).
pub fn unmarshal_json(json: &str) -> Result<serde_json::Value, SubstituteError> {
    unmarshal_value(
        serde_json::from_str(json).map_err(|e| SubstituteError::Unmarshal(e.to_string()))?,
    )
}

/// [`unmarshal_json`] of the value `serde_json` reads from the JSON.
pub fn unmarshal_value(value: serde_json::Value) -> Result<serde_json::Value, SubstituteError> {
    use serde_json::Value;
    let mut value = match value {
        Value::Object(_) => value,
        // json.Unmarshal of null leaves a nil map, which FromMap marshals as `{}`.
        Value::Null => Value::Object(serde_json::Map::new()),
        other => {
            let kind = match other {
                Value::Bool(_) => "bool",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                _ => "array",
            };
            return Err(SubstituteError::Unmarshal(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            )));
        }
    };
    let mut path = Vec::new();
    through_float64_and_yaml_v3(&mut value, &mut path)?;
    Ok(value)
}

/// Every number as a float64 that yaml.v3 writes and reads back; every string (key or value)
/// checked against yaml.v3's literal-block round trip. `path` names the place for errors.
fn through_float64_and_yaml_v3(
    value: &mut serde_json::Value,
    path: &mut Vec<String>,
) -> Result<(), SubstituteError> {
    use serde_json::Value;
    match value {
        Value::Number(n) => *n = as_float64(n),
        Value::String(s) => check_literal_block(s, path)?,
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(i.to_string());
                through_float64_and_yaml_v3(item, path)?;
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                path.push(key.clone());
                check_literal_block(key, path)?;
                through_float64_and_yaml_v3(item, path)?;
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
    Ok(())
}

/// A JSON number after Go's float64 and yaml.v3's round trip: what `encoding/json` prints
/// for the float64, read as an integer where that text is one (`-0` is written `-0` by
/// yaml.v3 and read back as the integer 0).
fn as_float64(n: &serde_json::Number) -> serde_json::Number {
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        return serde_json::Number::from(0u64);
    }
    let text = crate::goyaml::strconv::go_json_float(f);
    if let Ok(u) = text.parse::<u64>() {
        return serde_json::Number::from(u);
    }
    if let Ok(i) = text.parse::<i64>() {
        return serde_json::Number::from(i);
    }
    serde_json::Number::from_f64(f).unwrap_or_else(|| n.clone())
}

/// yaml.v3 (`encode.go` `stringv`, `emitterc.go`) writes a string holding a line break as a
/// literal block scalar when its characters allow one (no space before a break, no trailing
/// space, nothing unprintable but tabs); without an indentation indicator, which it adds only
/// for a leading space or break, a block whose first line starts with a tab cannot be read
/// back ("found a tab character where an indentation space is expected").
fn check_literal_block(s: &str, path: &[String]) -> Result<(), SubstituteError> {
    if !s.starts_with('\t') || !s.contains('\n') {
        return Ok(());
    }
    let is_break = |c: char| matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let printable = |c: char| {
        matches!(c, '\n' | '\t' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            && c != '\u{FEFF}'
    };
    let space_break = s
        .chars()
        .zip(s.chars().skip(1))
        .any(|(a, b)| a == ' ' && is_break(b));
    if s.ends_with(' ') || space_break || !s.chars().all(printable) {
        return Ok(());
    }
    Err(SubstituteError::Unmarshal(format!(
        "found a tab character where an indentation space is expected: the string at `{}` \
         starts with a tab and holds a line break, which kustomize's YAML (yaml.v3) writes \
         as a block it cannot read back",
        path.join(".")
    )))
}

/// How many bytes the substituted objects of one Kustomization may hold together: fluxsim's
/// bound (each object is bounded by [`crate::envsubst::OUTPUT_GROWTH_LIMIT`] too), so that
/// one hostile Kustomization cannot exhaust the machine while the run goes on with the rest.
/// (The same as a tool's output may hold, [`crate::sandbox::OUTPUT_LIMIT`].)
pub const KUSTOMIZATION_OUTPUT_LIMIT: usize = crate::sandbox::OUTPUT_LIMIT;

/// An error once the substituted objects of one Kustomization, `total` bytes so far, pass
/// [`KUSTOMIZATION_OUTPUT_LIMIT`].
pub fn check_total_output(total: usize) -> Result<(), TooLarge> {
    check_total_output_within(total, KUSTOMIZATION_OUTPUT_LIMIT)
}

fn check_total_output_within(total: usize, limit: usize) -> Result<(), TooLarge> {
    if total > limit {
        return Err(format!(
            "the substituted objects exceed {} MiB together: fluxsim stops here (no cluster \
             could apply that much from one Kustomization)",
            limit >> 20
        )
        .into());
    }
    Ok(())
}

/// Flux substitutes only when some var is defined, unless `substituteStrategy: Always`.
#[must_use]
pub fn should_substitute(vars: &BTreeMap<String, String>, always: bool) -> bool {
    !vars.is_empty() || always
}

/// The var names a resource's text references (`${NAME...}`), when it parses.
#[must_use]
pub fn referenced_vars(text: &str) -> Vec<String> {
    // Every expression starts with `$`.
    if !text.contains('$') {
        return Vec::new();
    }
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

    // kyaml rnode.go UnmarshalJSON: json.Unmarshal makes every number a float64.
    #[test]
    fn substituted_integers_are_applied_as_float64_holds_them() {
        let vars = vars(&[("V", "9223372036854775807")]);
        let obj = substitute_resource("a: ${V}\nb: -0.0\nc: 7\nd: 1.5\n", &vars, true).unwrap();
        // Go prints the float64 9223372036854775808 with its shortest digits.
        assert_eq!(
            obj.to_string(),
            r#"{"a":9223372036854776000,"b":0,"c":7,"d":1.5}"#
        );
        let obj = unmarshal_json(r#"{"a":-9223372036854775808,"b":123456789012345678,"c":1e21}"#)
            .unwrap();
        assert_eq!(obj["b"], json!(123_456_789_012_345_680_u64));
        assert_eq!(obj["c"], json!(1e21));
        assert_eq!(obj["a"].as_f64(), Some(-9_223_372_036_854_775_808.0));
    }

    // kyaml FromMap marshals with yaml.v3, which writes "\tx\n" as a literal block it cannot
    // read back: Flux fails the resource (checked against kyaml v0.21.1).
    #[test]
    fn tab_started_multiline_string_fails_as_kyaml_fails_it() {
        let err = unmarshal_json(r#"{"data":{"k":"\tx\n"}}"#).unwrap_err();
        assert!(
            matches!(err, SubstituteError::Unmarshal(ref m) if m.contains("`data.k`")),
            "{err}"
        );
        assert!(unmarshal_json(r#"{"data":{"\tk\ny":"v"}}"#).is_err());
        // A trailing space, a space before the break, a control or 4-byte character, or no
        // tab first: yaml.v3 quotes the string, and it reads back.
        for ok in [
            r"\tx\ny ",
            r"\tx \n",
            r"\t\u0085\n",
            "\\t😀\\n",
            r"\n\tx",
            r" \tx\n",
            r"\t",
        ] {
            let text = format!(r#"{{"a":"{ok}"}}"#);
            assert!(unmarshal_json(&text).is_ok(), "{text}");
        }
    }

    // json.Unmarshal into a map: only an object (or null) fits.
    #[test]
    fn substituted_document_that_is_no_mapping_fails() {
        let err = substitute_resource("${V}: x\n", &vars(&[("V", "a #b")]), true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the substituted resource cannot be set back into kustomize's resource (UnmarshalJSON): json: cannot unmarshal string into Go value of type map[string]interface {}"
        );
        assert_eq!(unmarshal_json("null").unwrap(), json!({}));
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

    // The `$`-free shortcut of `substitute_read_resource` rests on envsubst giving back any
    // text without a `$` unchanged, strict or not, whatever else it holds (drone/envsubst
    // `parse/scan.go`: only `$` starts an expression, and `\` escapes only inside one).
    #[test]
    fn envsubst_gives_back_text_without_a_dollar_unchanged() {
        let pieces = [
            "a", "{", "}", "\\", "\\/", ":", "-", "#", "'", "\"", "\n", " ", "é", "😀", "%", "!",
            "=", "/", "*", "?", "[", "]", "\t", "\\\\", "{{", "}}",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let len = usize::try_from(next() % 24).unwrap_or(0);
            let text: String = (0..len)
                .map(|_| pieces[usize::try_from(next()).unwrap_or(0) % pieces.len()])
                .collect();
            for strict in [true, false] {
                let out = crate::envsubst::eval(text.as_bytes(), &vars(&[("A", "x")]), strict)
                    .unwrap_or_else(|e| panic!("{text:?}: {e}"));
                assert_eq!(out, text.as_bytes(), "{text:?}");
            }
        }
    }

    #[test]
    fn a_read_resource_without_a_dollar_is_set_back_without_reading_it_again() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  count: 9223372036854775807\n";
        let read = crate::manifest::parse_object(text).unwrap();
        let vars = vars(&[("A", "x")]);
        let short = substitute_read_resource(text, &read, &vars, true).unwrap();
        assert_eq!(short, substitute_resource(text, &vars, true).unwrap());
        // The number went through a float64, as res.UnmarshalJSON leaves it.
        assert_eq!(
            short["data"]["count"],
            serde_json::json!(9_223_372_036_854_776_000_u64)
        );
        // A bad var name still fails the resource.
        let bad = self::vars(&[("a.b", "x")]);
        assert!(matches!(
            substitute_read_resource(text, &read, &bad, false),
            Err(SubstituteError::InvalidVarName(_))
        ));
    }
}
