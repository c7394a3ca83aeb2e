//! postBuild of a whole Kustomization, after its per-resource half (the parent module):
//! every object substituted on its own text, what the apply changes (commonMetadata, a
//! Secret's stringData), and the objects printed again as kustomize prints JSON.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::Value;

use crate::artifact::{Artifact, Origin};
use crate::cache::BuildCache;
use crate::flux::{Kustomization, ObjectId};
use crate::model::{KustomizationRender, Note, UnknownVar};

/// Why a Kustomization's postBuild failed.
#[derive(Debug, thiserror::Error)]
pub enum PostBuildError {
    /// Substituting one object failed, as Flux's `SubstituteVariables` does.
    #[error("{object}: {}", substitute_message(source, at.as_deref()))]
    Substitute {
        /// The object.
        object: ObjectId,
        /// What envsubst or the YAML re-read said.
        #[source]
        source: Box<super::SubstituteError>,
        /// Where the `${...}` that envsubst failed on is in the repository (`file:line:col`),
        /// once the render has found it; envsubst's own place is in the object as printed.
        at: Option<Box<str>>,
    },
    /// The substituted objects together pass fluxsim's bound.
    #[error(transparent)]
    TooLarge(#[from] super::TooLarge),
    /// Printing the substituted objects again (as kustomize prints JSON) failed.
    #[error(transparent)]
    Reprint(#[from] super::reprint::ReprintError),
    /// What the reprint printed is not YAML Flux can read.
    #[error(transparent)]
    Output(#[from] crate::manifest::ParseError),
    /// A built object without `apiVersion`, `kind` or `metadata.name`: kustomize-controller
    /// fails the build (`kustomization_controller.go` `build`), with the object as JSON.
    #[error("failed to decode Kubernetes apiVersion, kind and name from: {0}")]
    NotConforming(String),
    /// After substitution an object has no `kind`: reading the build back for the apply
    /// (`ssautil.ReadObjects`) fails with the apimachinery decoder's message, the object as
    /// JSON.
    #[error("error unmarshaling JSON: while decoding JSON: Object 'Kind' is missing in '{0}'")]
    NotAnObject(String),
    /// An object with a top-level `items` list whose items are not all maps: reading the
    /// build back fails as apimachinery's `EachListItem` fails (Go's `%T` of the map type).
    #[error("items member is not an object: map[string]interface {{}}")]
    ListItemNotAMap,
    /// An item of such a List without `apiVersion`, `kind` or `metadata.name`: the apply
    /// sends it to the API server, which refuses it (offline, the exact answer is not known;
    /// the object as JSON).
    #[error("apply: an item of a List without apiVersion, kind or name: {0}")]
    ListItemNotAnObject(String),
}

/// A substitution failure in words: Flux's message, placed at `at` (the `${...}` in the
/// repository's file) when it is known, else where envsubst found it in the object's text.
fn substitute_message(source: &super::SubstituteError, at: Option<&str>) -> String {
    match (source, at) {
        (super::SubstituteError::Envsubst(e), Some(at)) => format!(
            "variable substitution failed: {at}: {}: {} ({})",
            e.expr,
            e.flux_message(),
            e.hint()
        ),
        _ => source.to_string(),
    }
}

/// postBuild and the apply: each object substituted on its own text as kustomize printed
/// it (`res.AsYAML()` in `kustomize_varsub.go`) and rebuilt from JSON, then what the apply
/// changes (commonMetadata, a Secret's stringData), printed again as kustomize prints JSON.
#[allow(
    clippy::too_many_arguments,
    reason = "the stage's inputs: the Kustomization, its strictness, the render so far, and the build"
)]
pub fn substitute_kustomization(
    cache: &BuildCache<'_>,
    ks: &Kustomization,
    strict: bool,
    r: &mut KustomizationRender,
    template: Artifact,
    origins: &[Option<Origin>],
    substitute_with: Option<&BTreeMap<String, String>>,
) -> Result<Artifact, PostBuildError> {
    let mut changed = substitute_with.is_some();
    // Each object as kustomize printed it; `true` marks JSON that Flux rebuilt.
    let mut pieces: Vec<(bool, String)> = Vec::new();
    let mut piece_ids: Vec<ObjectId> = Vec::new();
    let mut substituted_bytes = 0usize;
    // What reading the output back for the apply finds (see `read_back`): the first object
    // without a kind, and the objects it leaves out.
    let mut kindless: Option<Value> = None;
    // The first failure of the apply (an item of a List it cannot send), after the read-back.
    let mut apply_error: Option<PostBuildError> = None;
    let mut left_out: Vec<(usize, String)> = Vec::new();
    // Which template object each piece comes from (for its origin).
    let mut piece_from: Vec<usize> = Vec::new();
    // The template's objects are the output's documents, in order, already read.
    for (index, object) in template.objects.iter().enumerate() {
        if !conforms(&object.object) {
            return Err(PostBuildError::NotConforming(go_json_text(&object.object)));
        }
        let doc = object.yaml.as_str();
        let mut obj = (*object.object).clone();
        let mut piece = (false, doc.to_string());
        if let Some(vars) = substitute_with {
            if !crate::flux::substitution_disabled(&obj) {
                r.vars_used.extend(super::referenced_vars(doc));
                // res.UnmarshalJSON sets the JSON back into the resource (numbers as
                // float64, through yaml.v3): substitute_resource does the same.
                obj = super::substitute_read_resource(doc, &object.object, vars, strict).map_err(
                    |source| PostBuildError::Substitute {
                        object: ObjectId::of(&obj),
                        source: Box::new(source),
                        at: None,
                    },
                )?;
                let out = super::reprint::object_text(&obj);
                substituted_bytes += out.len();
                super::check_total_output(substituted_bytes)?;
                piece = (true, out);
            }
        }
        match read_back(&obj) {
            ReadBack::Applied => {}
            ReadBack::NoKind => {
                kindless.get_or_insert_with(|| obj.clone());
            }
            ReadBack::LeftOut(why) => left_out.push((pieces.len(), why)),
            ReadBack::List => {
                r.notes
                    .push(Note::ReadBackAsList(ObjectId::of(&obj).to_string()));
                match list_items(&obj, ks, &mut apply_error) {
                    // Null marks it: the first document that does not read wins.
                    None => {
                        kindless.get_or_insert(Value::Null);
                    }
                    Some(items) => {
                        for item in items {
                            piece_ids.push(ObjectId::of(&item));
                            pieces.push((true, super::reprint::object_text(&item)));
                            piece_from.push(index);
                        }
                        changed = true;
                    }
                }
                continue;
            }
        }
        // What happens at apply time: commonMetadata is added to every object, and the API
        // server folds a Secret's stringData into data.
        if apply_time_changes(&mut obj, ks) {
            piece = (true, super::reprint::object_text(&obj));
            changed = true;
        }
        piece_ids.push(ObjectId::of(&obj));
        pieces.push(piece);
        piece_from.push(index);
    }
    // Vars of encrypted sources that the objects use are placeheld too.
    for (name, v) in &r.vars {
        if v.encrypted && r.vars_used.contains(name) {
            r.unknown_vars.push(UnknownVar {
                name: name.clone(),
                sources: vec![v.source.clone()],
                placeholder: v.value.clone(),
            });
        }
    }
    r.unknown_vars.sort_by(|a, b| a.name.cmp(&b.name));
    // Reading the whole build back fails on its first document that does not read (an
    // object without a kind, a List item that is no map); the apply comes after.
    match kindless {
        Some(Value::Null) => return Err(PostBuildError::ListItemNotAMap),
        Some(obj) => return Err(PostBuildError::NotAnObject(go_json_text(&obj))),
        None => {}
    }
    if let Some(e) = apply_error {
        return Err(e);
    }
    for (i, why) in left_out.iter().rev() {
        r.notes.push(Note::NotApplied {
            object: piece_ids[*i].to_string(),
            why: why.clone(),
        });
        pieces.remove(*i);
        piece_ids.remove(*i);
        piece_from.remove(*i);
        changed = true;
    }
    if !changed {
        return Ok(template);
    }
    reprinted(cache, &pieces, &piece_ids, &piece_from, &template, origins)
}

/// The artifact of the pieces printed again as kustomize prints resources read from JSON,
/// each object with the origin of the template object it comes from (substitution may
/// rename objects, so origins follow each piece's final id).
fn reprinted(
    cache: &BuildCache<'_>,
    pieces: &[(bool, String)],
    piece_ids: &[ObjectId],
    piece_from: &[usize],
    template: &Artifact,
    origins: &[Option<Origin>],
) -> Result<Artifact, PostBuildError> {
    let reprinted = super::reprint::reprint(cache, pieces).map_err(PostBuildError::Reprint)?;
    let mut artifact = Artifact::from_kustomize_output_reading(reprinted, template)?;
    if !origins.is_empty() {
        let by_id: BTreeMap<&ObjectId, &Option<Origin>> = piece_ids
            .iter()
            .zip(piece_from)
            .filter_map(|(id, i)| Some((id, origins.get(*i)?)))
            .collect();
        for o in &mut artifact.objects {
            o.origin = by_id.get(&o.id).and_then(|x| (*x).clone());
        }
    }
    Ok(artifact)
}

/// The items of an object read back as a List (ssautil.ReadObjects: `Unstructured.IsList`,
/// then `EachListItem`), each with what the apply changes; `None` when one is not a map
/// (the read-back fails). The first item the apply cannot send (no apiVersion, kind or
/// name) is kept in `apply_error`.
fn list_items(
    obj: &Value,
    ks: &Kustomization,
    apply_error: &mut Option<PostBuildError>,
) -> Option<Vec<Value>> {
    let items = obj["items"].as_array().cloned().unwrap_or_default();
    if items.iter().any(|i| !i.is_object()) {
        return None;
    }
    Some(
        items
            .into_iter()
            .map(|mut item| {
                if !conforms(&item) && apply_error.is_none() {
                    *apply_error = Some(PostBuildError::ListItemNotAnObject(go_json_text(&item)));
                }
                apply_time_changes(&mut item, ks);
                item
            })
            .collect(),
    )
}

/// The var names that the substituted objects of a build output reference without a default
/// and that `vars` does not define, sorted. A var with a default keeps it: that is what its
/// author expects when no source defines it (`${q:='}` quotes, `${KIND:=Deployment}`).
pub fn referenced_undefined(
    output: &str,
    vars: &BTreeMap<String, String>,
) -> Result<BTreeSet<String>, crate::manifest::ParseError> {
    let mut out = BTreeSet::new();
    for doc in crate::manifest::split_documents(output) {
        let obj = crate::manifest::parse_object(doc)?;
        if crate::flux::substitution_disabled(&obj) {
            continue;
        }
        if let Ok(t) = crate::envsubst::Template::parse(doc.as_bytes()) {
            out.extend(
                t.exprs()
                    .into_iter()
                    .filter(|e| !e.has_default() && !vars.contains_key(&e.param))
                    .map(|e| e.param.clone()),
            );
        }
    }
    Ok(out)
}

/// Adds `spec.commonMetadata` and folds Secret `stringData` into `data`; true when changed.
///
/// commonMetadata is set as fluxcd/pkg `ssa/utils/meta.go` SetCommonMetadata sets it: the
/// object's labels (then annotations) are read with `GetLabels`, which is apimachinery's
/// `NestedNullCoercingStringMap` (a null value reads as `""`, and a map holding any other
/// non-string value reads as no map at all), the common ones are added, and the result
/// replaces the field when it is not empty. So with commonMetadata a label emptied by
/// substitution (`app: ${UNSET}` → null) becomes `""`, and one that became a number drops
/// every other label of the object. Found by the Go oracle (scripts/oracle-fuzz).
pub(crate) fn apply_time_changes(obj: &mut Value, ks: &Kustomization) -> bool {
    let common = set_common_metadata(obj, &ks.common_labels, &ks.common_annotations);
    fold_string_data(obj) || common
}

/// fluxcd/pkg `ssa/utils/meta.go` SetCommonMetadata (see [`apply_time_changes`]); true when
/// changed.
pub(crate) fn set_common_metadata(
    obj: &mut Value,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> bool {
    let mut changed = false;
    if labels.is_empty() && annotations.is_empty() {
        return false;
    }
    for (field, extra) in [("labels", labels), ("annotations", annotations)] {
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        let mut merged = null_coercing_string_map(meta.get(field));
        for (k, v) in extra {
            merged.insert(k.clone(), v.clone());
        }
        if merged.is_empty() {
            continue;
        }
        let value = Value::Object(
            merged
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
        );
        if meta.get(field) != Some(&value) {
            meta.insert(field.to_string(), value);
            changed = true;
        }
    }
    changed
}

/// A Secret's `stringData` folded into `data`, as the API server stores it (fluxcd/pkg
/// `ssa/normalize` normalizeSecret before an apply); SOPS-encrypted Secrets are left alone.
/// True when changed.
pub(crate) fn fold_string_data(obj: &mut Value) -> bool {
    let is_secret = ObjectId::of(obj).kind == "Secret" && ObjectId::of(obj).group.is_empty();
    let encrypted = obj.get("sops").is_some();
    if !is_secret || encrypted {
        return false;
    }
    let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return false;
    };
    let data = obj.as_object_mut().map(|o| {
        o.entry("data")
            .or_insert_with(|| Value::Object(serde_json::Map::new()))
    });
    if let Some(Value::Object(data)) = data {
        for (k, v) in string_data {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            data.insert(
                k,
                Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
    true
}

/// apimachinery's `NestedNullCoercingStringMap` as `Unstructured.GetLabels` uses it: a map
/// of strings, null values read as `""`; anything else (no map, a non-string value) is empty.
fn null_coercing_string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = v else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (k, v) in m {
        match v {
            Value::String(s) => {
                out.insert(k.clone(), s.clone());
            }
            Value::Null => {
                out.insert(k.clone(), String::new());
            }
            _ => return BTreeMap::new(),
        }
    }
    out
}

/// Whether a built object has the `apiVersion`, `kind` and `metadata.name` kustomize-controller
/// demands of every object before it substitutes or applies anything
/// (`internal/controller/kustomization_controller.go` `build`: "check if resources conform
/// to the Kubernetes API conventions"). kustomize itself builds an object without them.
#[must_use]
pub fn conforms(obj: &Value) -> bool {
    let set = |v: Option<&Value>| match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    };
    set(obj.get("apiVersion"))
        && set(obj.get("kind"))
        && set(obj.get("metadata").and_then(|m| m.get("name")))
}

/// What kustomize-controller's read-back of a build's output makes of one object
/// (`kustomization_controller.go` `reconcile`: `ssautil.ReadObjects`, fluxcd/pkg ssa
/// `utils/object.go` and `is.go`).
enum ReadBack {
    /// An object it applies.
    Applied,
    /// No `kind`: decoding it into an `unstructured.Unstructured` fails
    /// (`Object 'Kind' is missing`), and so does the Kustomization.
    NoKind,
    /// Not a Kubernetes object it applies (why): left out without a word.
    LeftOut(String),
    /// A top-level `items` list: read as a List, whose items are applied in its place.
    List,
}

/// [`ReadBack`] of one object as substitution left it (kustomize-controller checks the built
/// objects before substituting, [`conforms`]; a var can empty a field after that).
fn read_back(obj: &Value) -> ReadBack {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = text(obj.get("kind"));
    let api_version = text(obj.get("apiVersion"));
    // `GroupVersionKind()` is empty (so is the kind) when the apiVersion does not parse.
    if kind.is_empty() || api_version.matches('/').count() > 1 {
        return ReadBack::NoKind;
    }
    if obj.get("items").is_some_and(Value::is_array) {
        return ReadBack::List;
    }
    let name = text(obj.get("metadata").and_then(|m| m.get("name")));
    // IsKubernetesObject, IsKustomization.
    if name.is_empty() {
        return ReadBack::LeftOut("it has no name".into());
    }
    if api_version.is_empty() {
        return ReadBack::LeftOut("it has no apiVersion".into());
    }
    if kind.eq_ignore_ascii_case("kustomization")
        && api_version.starts_with("kustomize.config.k8s.io/")
    {
        return ReadBack::LeftOut("it is a kustomize Kustomization".into());
    }
    ReadBack::Applied
}

/// An object as kustomize's `Resource.String` writes it in the controller's errors (Go's
/// `json.Marshal` of the map kyaml reads it into: keys sorted, HTML escaped).
#[must_use]
pub fn go_json_text(value: &Value) -> String {
    let mut out = String::new();
    go_json(value, &mut out);
    out
}

fn go_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(m) => {
            out.push('{');
            // serde_json's map keeps its keys sorted, as Go sorts a map's.
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                crate::goyaml::json::push_json_str(out, k);
                out.push(':');
                go_json(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(v, out);
            }
            out.push(']');
        }
        Value::String(s) => crate::goyaml::json::push_json_str(out, s),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod read_back_tests {
    use super::*;
    use serde_json::json;

    // fluxcd/pkg/ssa v0.76.2 utils/object.go ReadObjects, utils/is.go: what the controller's
    // read-back of a build makes of an object.
    #[test]
    fn read_back_follows_ssautil_read_objects() {
        let obj = |v: Value| read_back(&v);
        let cm = |extra: Value| {
            let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
            if let (Some(o), Value::Object(e)) = (o.as_object_mut(), extra) {
                o.extend(e);
            }
            o
        };
        assert!(matches!(obj(cm(json!({}))), ReadBack::Applied));
        assert!(matches!(obj(cm(json!({"kind": null}))), ReadBack::NoKind));
        assert!(matches!(obj(cm(json!({"kind": 5}))), ReadBack::NoKind));
        assert!(matches!(
            obj(cm(json!({"apiVersion": "a/b/c"}))),
            ReadBack::NoKind
        ));
        assert!(matches!(
            obj(cm(json!({"metadata": {"name": true}}))),
            ReadBack::LeftOut(_)
        ));
        assert!(matches!(
            obj(cm(json!({"apiVersion": ""}))),
            ReadBack::LeftOut(_)
        ));
        assert!(matches!(
            obj(
                json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "metadata": {"name": "k"}})
            ),
            ReadBack::LeftOut(_)
        ));
        assert!(matches!(obj(cm(json!({"items": []}))), ReadBack::List));
    }
}
