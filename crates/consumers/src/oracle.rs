//! Comparing a render with what Flux's own code makes of the same Kustomization (the
//! oracle, `oracle/` in the repository: `scripts/oracle-check`, and the conformance suite of
//! Flux's own tests, `testdata/flux-suites/`): the same objects with the same content and
//! the same print, or both failing at the same stage of kustomize-controller's reconcile.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::flux::{Kustomization, ObjectId};
use crate::model::{KustomizationRender, Status};

/// The Flux Kustomization object fluxsim simulated, with every field Flux's generator and
/// postBuild read.
pub fn kustomization_object(k: &Kustomization) -> Value {
    let mut spec = serde_json::Map::new();
    spec.insert("path".into(), json!(k.path));
    spec.insert("prune".into(), json!(k.prune));
    let mut put = |key: &str, v: Value| {
        spec.insert(key.into(), v);
    };
    if let Some(ns) = &k.target_namespace {
        put("targetNamespace", json!(ns));
    }
    if let Some(p) = &k.name_prefix {
        put("namePrefix", json!(p));
    }
    if let Some(s) = &k.name_suffix {
        put("nameSuffix", json!(s));
    }
    if !k.patches.is_empty() {
        put("patches", json!(k.patches));
    }
    if !k.images.is_empty() {
        put("images", json!(k.images));
    }
    if !k.components.is_empty() {
        put("components", json!(k.components));
    }
    if !k.build_metadata.is_empty() {
        put("buildMetadata", json!(k.build_metadata));
    }
    if k.ignore_missing_components {
        put("ignoreMissingComponents", json!(true));
    }
    if !k.common_labels.is_empty() || !k.common_annotations.is_empty() {
        let mut cm = serde_json::Map::new();
        if !k.common_labels.is_empty() {
            cm.insert("labels".into(), json!(k.common_labels));
        }
        if !k.common_annotations.is_empty() {
            cm.insert("annotations".into(), json!(k.common_annotations));
        }
        put("commonMetadata", Value::Object(cm));
    }
    if let Some(pb) = &k.post_build {
        let mut p = serde_json::Map::new();
        if !pb.substitute.is_empty() {
            p.insert("substitute".into(), json!(pb.substitute));
        }
        if !pb.substitute_from.is_empty() {
            let refs: Vec<Value> = pb
                .substitute_from
                .iter()
                .map(|r| json!({"kind": r.kind, "name": r.name, "optional": r.optional}))
                .collect();
            p.insert("substituteFrom".into(), Value::Array(refs));
        }
        if pb.always {
            p.insert("substituteStrategy".into(), json!("Always"));
        }
        put("postBuild", Value::Object(p));
    }
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": k.id.name, "namespace": k.id.namespace},
        "spec": Value::Object(spec),
    })
}

/// How a render compares with the oracle's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The same objects, content and print.
    Identical,
    /// Both fail, at the same stage.
    BothFail,
    /// They differ: why, as text.
    Different(String),
}

/// Compares fluxsim's render `k` with the oracle's `result` (`{\"ok\", \"objects\": [{\"yaml\",\n/// \"object\"}], \"error\"}`).
#[must_use]
pub fn judge(k: &KustomizationRender, result: &Value) -> Verdict {
    let oracle_ok = result["ok"].as_bool().unwrap_or(false);
    let error = result["error"].as_str().unwrap_or_default();
    match (&k.status, &k.artifact, oracle_ok) {
        (Status::Failed(e), _, false) => {
            let (ours, theirs) = (fluxsim_failure(e), flux_failure(error));
            // An error neither side's wording names is never taken as the same reason.
            if ours == theirs && ours != Failure::Other {
                Verdict::BothFail
            } else {
                Verdict::Different(format!(
                    "  both fail, for different reasons:\n    fluxsim ({ours:?}): {e}\n    flux    ({theirs:?}): {error}"
                ))
            }
        }
        (Status::Failed(e), _, true) => {
            Verdict::Different(format!("  fluxsim failed, Flux renders: {e}"))
        }
        (Status::Rendered, _, false) => {
            Verdict::Different(format!("  fluxsim renders, Flux fails: {error}"))
        }
        (Status::Rendered, Some(artifact), true) => {
            let mut theirs: BTreeMap<ObjectId, (String, Value)> = BTreeMap::new();
            for o in result["objects"].as_array().into_iter().flatten() {
                let obj = o["object"].clone();
                theirs.insert(
                    ObjectId::of(&obj),
                    (o["yaml"].as_str().unwrap_or_default().to_string(), obj),
                );
            }
            let mut why = Vec::new();
            for ours in &artifact.objects {
                match theirs.remove(&ours.id) {
                    None => why.push(format!("  only fluxsim has {}", show(&ours.id))),
                    Some((yaml, obj)) => {
                        if *ours.object != obj {
                            let pretty = |v: &Value| {
                                serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
                            };
                            let text = if ours.yaml == yaml {
                                diff(&pretty(&ours.object), &pretty(&obj))
                            } else {
                                diff(&ours.yaml, &yaml)
                            };
                            why.push(format!("  {} differs in content:\n{text}", show(&ours.id)));
                        } else if ours.yaml != yaml {
                            why.push(format!(
                                "  {} is printed differently:\n{}",
                                show(&ours.id),
                                diff(&ours.yaml, &yaml)
                            ));
                        }
                    }
                }
            }
            for id in theirs.keys() {
                why.push(format!("  only Flux has {}", show(id)));
            }
            if why.is_empty() {
                Verdict::Identical
            } else {
                Verdict::Different(why.join("\n"))
            }
        }
        (status, _, _) => Verdict::Different(format!("  unexpected fluxsim state {status:?}")),
    }
}

/// Why a Kustomization fails, in the stages kustomize-controller goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// `spec.path` is not in the source (reconcile: "kustomization path not found").
    PathNotFound,
    /// Flux's generator (`kustomize create failed`).
    Generate,
    /// A read outside the source (Flux's secure filesystem, `fs-security-constraint`).
    SecureFs,
    /// `kustomize build` itself.
    Build,
    /// A built object without apiVersion, kind or name.
    Decode,
    /// A var name Flux refuses.
    InvalidVarName,
    /// A var unset and without default, in strict mode.
    StrictUnset,
    /// envsubst cannot parse or evaluate an expression.
    Envsubst,
    /// The substituted text does not read back as YAML (`YAMLToJSON`).
    YamlReread,
    /// The JSON cannot be set back into the resource (`UnmarshalJSON`).
    Unmarshal,
    /// A `substituteFrom` source cannot be read.
    VarSource,
    /// Reading the built objects back for the apply (`ssautil.ReadObjects`): an object
    /// without a kind.
    ReadBack,
    /// Anything else (after the build: reading the objects back for the apply).
    Other,
}

/// The stage the oracle's error (kustomize-controller's own wording) names.
#[must_use]
pub fn flux_failure(e: &str) -> Failure {
    if e.starts_with("kustomization path not found") {
        Failure::PathNotFound
    } else if e.contains("fs-security-constraint") || e.contains("is not in or below") {
        Failure::SecureFs
    } else if e.starts_with("kustomize create failed") {
        Failure::Generate
    } else if e.starts_with("kustomize build failed") {
        Failure::Build
    } else if e.starts_with("failed to decode Kubernetes apiVersion, kind and name") {
        Failure::Decode
    } else if e.contains("Object 'Kind' is missing in")
        || e.contains("items member is not an object")
        || e.starts_with("apply: an item of a List")
    {
        Failure::ReadBack
    } else if e.starts_with("panic:") && e.contains("slice bounds out of range") {
        // envsubst's toSubstr panics on a negative length (funcs.go); controller-runtime
        // recovers the panic and fails the reconcile with it.
        Failure::Envsubst
    } else if e.starts_with("post build failed") {
        if e.contains("var name is invalid") {
            Failure::InvalidVarName
        } else if e.contains("variable not set (strict mode)") {
            Failure::StrictUnset
        } else if e.contains("envsubst error: YAMLToJSON") {
            Failure::YamlReread
        } else if e.contains("UnmarshalJSON: ") {
            // SubstituteVariables' own `res.UnmarshalJSON`, after varSubstitution.
            Failure::Unmarshal
        } else if e.contains("substitute from '") {
            Failure::VarSource
        } else if e.contains("variable substitution failed") {
            Failure::Envsubst
        } else {
            Failure::Other
        }
    } else {
        Failure::Other
    }
}

/// The stage fluxsim's error names (its own wording: `src/generate`, `src/build`,
/// `src/postbuild`, `src/reconcile`).
#[must_use]
pub fn fluxsim_failure(e: &str) -> Failure {
    if e.contains("does not exist in the source") {
        Failure::PathNotFound
    } else if e.contains("fs-security-constraint") || e.contains("is not in or below") {
        Failure::SecureFs
    } else if e.contains("kustomize create failed")
        || e.contains("failed to decode Kubernetes YAML from")
        || e.contains("is not a directory")
    {
        Failure::Generate
    } else if e.contains("kustomize build failed")
        || (e.contains("component `") && e.contains("not found"))
    {
        // A missing component is kept in the kustomization by Flux's generator, and the
        // build fails on it.
        Failure::Build
    } else if e.contains("var name is invalid") {
        Failure::InvalidVarName
    } else if e.contains("variable not set (strict mode)") {
        Failure::StrictUnset
    } else if e.contains("the substituted resource is not valid YAML") {
        Failure::YamlReread
    } else if e.contains("(UnmarshalJSON)") {
        Failure::Unmarshal
    } else if e.contains("substitute from '") {
        Failure::VarSource
    } else if e.contains("variable substitution failed") {
        Failure::Envsubst
    } else if e.contains("apiVersion, kind and name") {
        Failure::Decode
    } else if e.contains("Object 'Kind' is missing in")
        || e.contains("items member is not an object")
        || e.contains("apply: an item of a List")
    {
        Failure::ReadBack
    } else {
        Failure::Other
    }
}

fn show(id: &ObjectId) -> String {
    format!("{}/{}/{}/{}", id.group, id.kind, id.namespace, id.name)
}

fn diff(ours: &str, theirs: &str) -> String {
    similar::TextDiff::from_lines(ours, theirs)
        .unified_diff()
        .header("fluxsim", "flux")
        .context_radius(2)
        .to_string()
}
