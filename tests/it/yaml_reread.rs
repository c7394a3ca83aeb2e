//! The YAML 1.1 re-read after postBuild substitution, vector by vector against Flux's own
//! code (`testdata/conformance/yaml-reread.jsonl`, made by `scripts/gen-yaml-vectors`).
//!
//! Each vector is a manifest as kustomize prints it (or a hand-written one) with a var `V`
//! somewhere in it. fluxsim's postBuild path must give what kustomize-controller's
//! `SubstituteVariables` gives: the same `YAMLToJSON` bytes, or an error of the same kind
//! (for YAML syntax errors, the very message yaml.v2 prints); then the same object once the
//! JSON is set back into the resource (`res.UnmarshalJSON`), or a failure there too.

use std::collections::BTreeMap;

use fluxsim::goyaml::yaml_json::YamlJsonError;
use fluxsim::postbuild::{
    substitute_read_resource, substitute_resource, substitute_text, unmarshal_json, SubstituteError,
};
use serde_json::Value;

/// Vectors fluxsim is known not to match, each a limit written down in the README
/// ("Fidelity"). Empty: every vector matches.
const KNOWN_LIMITS: &[&str] = &[];

/// The kind of failure a Go error text names.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// A yaml.v2 syntax error, with the text yaml.v2 prints after `yaml: `.
    Syntax(String),
    ControlCharacter,
    TagMismatch,
    InvalidBinary,
    RecursiveAlias,
    ExcessiveAliasing,
    CollectionKey,
    InvalidMerge,
    UnsupportedKey,
    UnsupportedFloat,
    InvalidVarName,
    Envsubst,
    NotUtf8,
    TooDeep,
    Unmarshal,
}

/// What Flux's error text (`envsubst error: ...`) says went wrong.
fn go_kind(error: &str) -> Kind {
    let error = error.strip_prefix("envsubst error: ").unwrap_or(error);
    if let Some(rest) = error.strip_prefix("YAMLToJSON: yaml: ") {
        return match rest {
            "control characters are not allowed" => Kind::ControlCharacter,
            "document contains excessive aliasing" => Kind::ExcessiveAliasing,
            "!!binary value contains invalid base64 data" => Kind::InvalidBinary,
            r if r.starts_with("cannot decode ") => Kind::TagMismatch,
            r if r.starts_with("invalid map key") => Kind::CollectionKey,
            r if r.starts_with("map merge requires") => Kind::InvalidMerge,
            r if r.contains("value contains itself") => Kind::RecursiveAlias,
            r => Kind::Syntax(r.to_string()),
        };
    }
    if error.starts_with("YAMLToJSON: unsupported map key") {
        return Kind::UnsupportedKey;
    }
    if error.starts_with("YAMLToJSON: json: unsupported value") {
        return Kind::UnsupportedFloat;
    }
    if error.starts_with("UnmarshalJSON: ") {
        return Kind::Unmarshal;
    }
    if error.contains("var name is invalid") {
        return Kind::InvalidVarName;
    }
    Kind::Envsubst
}

fn fluxsim_kind(err: &SubstituteError) -> Kind {
    match err {
        SubstituteError::InvalidVarName(_) => Kind::InvalidVarName,
        SubstituteError::Envsubst(_) => Kind::Envsubst,
        SubstituteError::NotUtf8 => Kind::NotUtf8,
        SubstituteError::Unmarshal(_) => Kind::Unmarshal,
        SubstituteError::Yaml(e) => match e {
            YamlJsonError::Syntax { go, .. } => Kind::Syntax(go.clone()),
            YamlJsonError::ControlCharacter { .. } => Kind::ControlCharacter,
            YamlJsonError::TagMismatch { .. } => Kind::TagMismatch,
            YamlJsonError::InvalidBinary { .. } => Kind::InvalidBinary,
            YamlJsonError::RecursiveAlias { .. } => Kind::RecursiveAlias,
            YamlJsonError::ExcessiveAliasing | YamlJsonError::AliasedBytes { .. } => {
                Kind::ExcessiveAliasing
            }
            YamlJsonError::CollectionKey { .. } => Kind::CollectionKey,
            YamlJsonError::InvalidMerge { .. } => Kind::InvalidMerge,
            YamlJsonError::UnsupportedKey { .. } => Kind::UnsupportedKey,
            YamlJsonError::UnsupportedFloat { .. } => Kind::UnsupportedFloat,
            YamlJsonError::TooDeep { .. } => Kind::TooDeep,
        },
    }
}

/// Why one vector does not match, or `None`.
fn check(v: &Value) -> Option<String> {
    let input = v["input"].as_str().unwrap_or_default();
    let vars: BTreeMap<String, String> =
        serde_json::from_value(v["vars"].clone()).expect("vars are strings");
    let strict = v["strict"].as_bool().unwrap_or(true);
    let got = substitute_text(input, &vars, strict);
    let output = match (v["ok"].as_bool().unwrap_or(false), &got) {
        (true, Ok(out)) => {
            if Some(out.as_str()) != v["output"].as_str() {
                return Some(format!(
                    "JSON differs:\n  flux    {}\n  fluxsim {out}",
                    v["output"]
                ));
            }
            out
        }
        (true, Err(e)) => return Some(format!("Flux reads it, fluxsim fails: {e}")),
        (false, Ok(out)) => {
            return Some(format!("Flux fails ({}), fluxsim reads {out}", v["error"]));
        }
        (false, Err(e)) => {
            let (want, have) = (
                go_kind(v["error"].as_str().unwrap_or_default()),
                fluxsim_kind(e),
            );
            return (want != have).then(|| {
                format!("both fail, differently:\n  flux    {want:?}\n  fluxsim {have:?} ({e})")
            });
        }
    };
    // Hand-written inputs do not load as kustomize resources: no object step.
    if v["placement"]
        .as_str()
        .unwrap_or_default()
        .starts_with("hand-written")
    {
        return None;
    }
    let object = unmarshal_json(output);
    match (v.get("object_error").and_then(Value::as_str), object) {
        (Some(_), Ok(o)) => Some(format!("Flux fails to set the JSON back, fluxsim has {o}")),
        (Some(_), Err(e)) => (fluxsim_kind(&e) != Kind::Unmarshal)
            .then(|| format!("UnmarshalJSON fails, fluxsim: {e}")),
        (None, Err(e)) => Some(format!("Flux sets the JSON back, fluxsim fails: {e}")),
        (None, Ok(o)) => {
            let want: Value = match v.get("object") {
                Some(object) => object.clone(),
                None => serde_json::from_str(output).expect("JSON output"),
            };
            (o != want).then(|| format!("object differs:\n  flux    {want}\n  fluxsim {o}"))
        }
    }
}

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/conformance/yaml-reread.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON vector"))
        .collect()
}

// kustomize_varsub.go varSubstitution + SubstituteVariables, on every vector.
#[test]
fn yaml_reread_vectors_match_flux() {
    let vectors = vectors();
    assert!(vectors.len() > 5000, "{} vectors", vectors.len());
    let mut failures = Vec::new();
    let mut limits_seen = Vec::new();
    for v in &vectors {
        let id = v["id"].as_str().unwrap_or_default();
        match check(v) {
            Some(_) if KNOWN_LIMITS.contains(&id) => limits_seen.push(id),
            Some(why) => failures.push(format!(
                "{id} ({}, V={:?}):\n  input {:?}\n  {why}",
                v["placement"], v["value"], v["input"]
            )),
            None => {}
        }
    }
    let stale: Vec<_> = KNOWN_LIMITS
        .iter()
        .filter(|id| !limits_seen.contains(id))
        .collect();
    assert!(
        stale.is_empty(),
        "known limits that now match (remove them): {stale:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} vectors differ from Flux:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

/// The in-memory routes must read what the JSON text reads: `substitute_resource` (YAML
/// straight to a value) against `substitute_text` then `unmarshal_json`, and, on each
/// substituted text without a `$` that reads as an object, `substitute_read_resource` (which
/// skips envsubst and the YAML read when nothing can change) against `substitute_resource`.
#[test]
fn in_memory_substitution_reads_what_the_json_text_reads_on_every_vector() {
    let mut dollar_free = 0;
    for v in &vectors() {
        let id = v["id"].as_str().unwrap_or_default();
        let input = v["input"].as_str().unwrap_or_default();
        let vars: BTreeMap<String, String> =
            serde_json::from_value(v["vars"].clone()).expect("vars are strings");
        let strict = v["strict"].as_bool().unwrap_or(true);
        let via_text = substitute_text(input, &vars, strict).and_then(|j| unmarshal_json(&j));
        let direct = substitute_resource(input, &vars, strict);
        match (&via_text, &direct) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{id}"),
            (Err(a), Err(b)) => assert_eq!(fluxsim_kind(a), fluxsim_kind(b), "{id}"),
            _ => panic!("{id}: {via_text:?} against {direct:?}"),
        }
        let Ok(out) = fluxsim::envsubst::eval(input.as_bytes(), &vars, strict) else {
            continue;
        };
        let Ok(out) = String::from_utf8(out) else {
            continue;
        };
        if out.contains('$') {
            continue;
        }
        let Ok(read) = fluxsim::manifest::parse_object(&out) else {
            continue;
        };
        dollar_free += 1;
        let full = substitute_resource(&out, &vars, strict);
        let short = substitute_read_resource(&out, &read, &vars, strict);
        match (&full, &short) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{id}"),
            (Err(a), Err(b)) => assert_eq!(fluxsim_kind(a), fluxsim_kind(b), "{id}"),
            _ => panic!("{id}: {full:?} against {short:?}"),
        }
    }
    assert!(dollar_free > 4000, "{dollar_free} texts without a `$`");
}
