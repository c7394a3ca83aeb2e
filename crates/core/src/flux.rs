//! Flux's API objects as fluxsim reads them: `Kustomization` (kustomize.toolkit.fluxcd.io
//! v1 and v1beta2) and the few fields of other kinds that reconcile needs.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

crate::message_error! {
    /// A Flux Kustomization the API server refuses (its CRD's schema): why, in words.
    pub struct InvalidSpec;
}

/// The API group of Flux Kustomizations.
pub const KUSTOMIZE_GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// The API group of HelmReleases.
pub const HELM_GROUP: &str = "helm.toolkit.fluxcd.io";

/// Identifies a Kubernetes object.
///
/// Three `ObjectId` types exist, one per crate that names objects, because those crates
/// share no crate below them: kubeschema's (which depends on nothing) keeps the version and
/// prints as Flux's `FmtUnstructured`; review's (which depends on nothing) sorts by kind
/// first, as a reviewer looks for an object. This one sorts by group first and prints the
/// group; consumers convert at the crate edge, so each output stays as it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct ObjectId {
    /// API group, empty for the core group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects (or when none is set).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectId {
    /// Reads the id of a JSON object.
    #[must_use]
    pub fn of(obj: &Value) -> ObjectId {
        let api_version = str_at(obj, &["apiVersion"]).unwrap_or_default();
        let group = api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_string();
        ObjectId {
            group,
            kind: str_at(obj, &["kind"]).unwrap_or_default().to_string(),
            namespace: str_at(obj, &["metadata", "namespace"])
                .unwrap_or_default()
                .to_string(),
            name: str_at(obj, &["metadata", "name"])
                .unwrap_or_default()
                .to_string(),
        }
    }

    /// Is this a HelmRelease (`helm.toolkit.fluxcd.io`, any version)? The one test of it:
    /// `helm::is_helm_release` asks it of an object.
    #[must_use]
    pub fn is_helm_release(&self) -> bool {
        self.group == HELM_GROUP && self.kind == "HelmRelease"
    }

    /// Is this a CustomResourceDefinition (`apiextensions.k8s.io`, any version)? Asked of an
    /// id; kubeschema's `is_crd` asks it of an object's value (core depends on no kubeschema,
    /// and kubeschema on nothing, so the two cannot share one function).
    #[must_use]
    pub fn is_crd(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.kind == "CustomResourceDefinition"
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        };
        if self.namespace.is_empty() {
            write!(f, "{kind}/{}", self.name)
        } else {
            write!(f, "{kind}/{}/{}", self.namespace, self.name)
        }
    }
}

/// A string at a path of object keys.
#[must_use]
pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

/// `namespace/name` of a Flux object.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct NamespacedName {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// The separators of fluxsim's synthetic entries: a ResourceSet's
/// `<kustomization>/rset/<namespace>/<name>`, a Helm release's `<kustomization>/helm/...`.
const ENTRY_MARKERS: [&str; 2] = ["/rset/", "/helm/"];

/// A declared Kustomization's namespace or name as it stands in its id: as the repository
/// declares it, unless it holds `%` or a synthetic entry's separator (`/rset/`, `/helm/`),
/// which no Kubernetes name can; then with `%` and `/` written `%25` and `%2F`.
///
/// A repository may declare a Kustomization named `app/rset/default/rs` (the API server would
/// refuse it): encoded, it cannot be the id of ResourceSet `default/rs`'s entry under `app`.
/// An id left as declared holds no `%` and no separator, one encoded holds `%` and no `/`,
/// a synthetic one holds a separator: no two objects get one id.
#[must_use]
pub fn id_segment(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('%') && !ENTRY_MARKERS.iter().any(|m| s.contains(m)) {
        return std::borrow::Cow::Borrowed(s);
    }
    entry_part(s)
}

/// A part of a synthetic entry's name (the ResourceSet's or HelmRelease's namespace and
/// name): `%` and `/` written `%25` and `%2F`, so that the entry's only `/` are separators.
#[must_use]
pub fn entry_part(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['%', '/']) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.replace('%', "%25").replace('/', "%2F"))
}

/// The namespace or name that [`id_segment`] or [`entry_part`] encoded, as the repository
/// declares it (one left as declared holds no `%`).
#[must_use]
pub fn id_unsegment(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('%') {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.replace("%2F", "/").replace("%25", "%"))
}

impl fmt::Display for NamespacedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// One `spec.postBuild.substituteFrom` entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubstituteFrom {
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    /// Object name, in the Kustomization's namespace.
    pub name: String,
    /// A missing object is skipped rather than an error.
    pub optional: bool,
}

/// `spec.postBuild`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PostBuild {
    /// Inline vars; they win over every `substituteFrom` source.
    pub substitute: BTreeMap<String, String>,
    /// Sources of vars, in order (later wins).
    pub substitute_from: Vec<SubstituteFrom>,
    /// `substituteStrategy: Always` substitutes even when no var is defined.
    pub always: bool,
}

/// `spec.sourceRef`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceRef {
    /// `GitRepository`, `OCIRepository`, `Bucket`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace (defaults to the Kustomization's).
    pub namespace: String,
}

/// A Flux Kustomization, as much of it as fluxsim simulates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Kustomization {
    /// Namespace and name.
    pub id: NamespacedName,
    /// `apiVersion` as written.
    pub api_version: String,
    /// `spec.path` as written ("" means the source root).
    pub path: String,
    /// `spec.dependsOn` (namespace defaults to the Kustomization's).
    pub depends_on: Vec<NamespacedName>,
    /// `spec.postBuild`, when set.
    pub post_build: Option<PostBuild>,
    /// `spec.prune`.
    pub prune: bool,
    /// `spec.wait`.
    pub wait: bool,
    /// `spec.suspend`.
    pub suspend: bool,
    /// `spec.force`: an object the API server refuses to update (an immutable field) is
    /// deleted and created again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
    /// `spec.sourceRef`.
    pub source_ref: Option<SourceRef>,
    /// `spec.targetNamespace`.
    pub target_namespace: Option<String>,
    /// `spec.namePrefix`.
    pub name_prefix: Option<String>,
    /// `spec.nameSuffix`.
    pub name_suffix: Option<String>,
    /// `spec.patches`, as written.
    pub patches: Vec<Value>,
    /// `spec.images`, as written.
    pub images: Vec<Value>,
    /// `spec.buildMetadata` (kustomize-controller API v1.9): the kustomize build metadata
    /// options Flux's generator puts in the kustomization in place of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_metadata: Vec<String>,
    /// `spec.components`.
    pub components: Vec<String>,
    /// `spec.ignoreMissingComponents`.
    pub ignore_missing_components: bool,
    /// `spec.commonMetadata.labels`.
    pub common_labels: BTreeMap<String, String>,
    /// `spec.commonMetadata.annotations`.
    pub common_annotations: BTreeMap<String, String>,
    /// `spec.decryption` is set (SOPS).
    pub decryption: bool,
    /// Why the API server would refuse the object (a field of the wrong type, which its
    /// schema rejects before any controller sees it), when it would; reconcile fails such
    /// a Kustomization, and discovery never takes it for a cluster root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

/// The API group of the Flux Operator's kinds (`ResourceSet`, `ResourceSetInputProvider`,
/// `FluxInstance`).
pub const OPERATOR_GROUP: &str = "fluxcd.controlplane.io";

/// Is this object a Flux Operator ResourceSet?
#[must_use]
pub fn is_resourceset(obj: &Value) -> bool {
    is_resourceset_id(&ObjectId::of(obj))
}

/// Is this the id of a Flux Operator ResourceSet?
#[must_use]
pub fn is_resourceset_id(id: &ObjectId) -> bool {
    id.group == OPERATOR_GROUP && id.kind == "ResourceSet"
}

/// Is this object a Flux Kustomization?
#[must_use]
pub fn is_kustomization(obj: &Value) -> bool {
    let id = ObjectId::of(obj);
    id.group == KUSTOMIZE_GROUP && id.kind == "Kustomization"
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Why `spec.<field>` breaks the CRD's schema, which types it `string`: the API server
/// refuses the object (`spec.path: Invalid value: "integer": spec.path in body must be of type
/// string`). A null is no value: the field is unset.
fn not_a_string(spec: &Value, field: &str) -> Option<String> {
    let what = match spec.get(field)? {
        Value::Null | Value::String(_) => return None,
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    };
    let mut shown = spec[field].to_string();
    if shown.chars().count() > 40 {
        shown = shown.chars().take(40).chain("...".chars()).collect();
    }
    Some(format!(
        "spec.{field} must be a string, not {what} (`{shown}`): the API server refuses this \
         Kustomization (the CRD's schema types spec.{field} string)"
    ))
}

/// The values the CRD's schema allows in `spec.buildMetadata` (its `BuildMetadataOption`
/// enum, kustomize-controller v1.9.5 `config/crd/bases`).
pub const BUILD_METADATA_OPTIONS: [&str; 2] = ["originAnnotations", "transformerAnnotations"];

/// Why `spec.buildMetadata` breaks the CRD's schema (a list of strings from
/// [`BUILD_METADATA_OPTIONS`]): the API server refuses the object, as it words it.
fn bad_build_metadata(spec: &Value) -> Option<String> {
    let refused = |detail: String| {
        Some(format!(
            "{detail}: the API server refuses this Kustomization (the CRD's schema allows \
             \"originAnnotations\" and \"transformerAnnotations\" in spec.buildMetadata)"
        ))
    };
    let list = match spec.get("buildMetadata")? {
        Value::Null => return None,
        Value::Array(list) => list,
        _ => return refused("spec.buildMetadata must be a list".to_string()),
    };
    for (i, v) in list.iter().enumerate() {
        match v.as_str() {
            Some(s) if BUILD_METADATA_OPTIONS.contains(&s) => {}
            Some(s) => {
                return refused(format!(
                    "spec.buildMetadata[{i}]: Unsupported value: \"{s}\""
                ))
            }
            None => return refused(format!("spec.buildMetadata[{i}] must be a string")),
        }
    }
    None
}

fn list(v: Option<&Value>) -> Vec<Value> {
    v.and_then(Value::as_array).cloned().unwrap_or_default()
}

impl Kustomization {
    /// Each `postBuild.substituteFrom` source, in order, with the object it names: a
    /// core-group ConfigMap or Secret in the Kustomization's own namespace
    /// (`kustomize_varsub.go` reads it there).
    pub fn var_sources(&self) -> impl Iterator<Item = (ObjectId, &SubstituteFrom)> {
        self.post_build
            .iter()
            .flat_map(|pb| &pb.substitute_from)
            .map(|sf| {
                let id = ObjectId {
                    group: String::new(),
                    kind: sf.kind.clone(),
                    namespace: self.id.namespace.clone(),
                    name: sf.name.clone(),
                };
                (id, sf)
            })
    }

    /// Reads a Flux Kustomization from its JSON form; an error says which field is wrong.
    pub fn from_json(obj: &Value) -> Result<Kustomization, InvalidSpec> {
        let namespace = str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string();
        let name = str_at(obj, &["metadata", "name"])
            .ok_or("a Flux Kustomization without metadata.name")?
            .to_string();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let s = |k: &str| spec.get(k).and_then(Value::as_str).map(str::to_string);
        let b = |k: &str| spec.get(k).and_then(Value::as_bool).unwrap_or(false);
        let depends_on = list(spec.get("dependsOn"))
            .iter()
            .map(|d| {
                // Ids of entries, as `id` below is.
                Ok(NamespacedName {
                    namespace: id_segment(str_at(d, &["namespace"]).unwrap_or(&namespace))
                        .into_owned(),
                    name: id_segment(
                        str_at(d, &["name"]).ok_or("spec.dependsOn entry without a name")?,
                    )
                    .into_owned(),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let post_build = spec.get("postBuild").filter(|v| v.is_object()).map(|pb| {
            Ok::<_, String>(PostBuild {
                substitute: string_map(pb.get("substitute")),
                substitute_from: list(pb.get("substituteFrom"))
                    .iter()
                    .map(|r| {
                        Ok(SubstituteFrom {
                            kind: str_at(r, &["kind"]).unwrap_or("ConfigMap").to_string(),
                            name: str_at(r, &["name"])
                                .ok_or("spec.postBuild.substituteFrom entry without a name")?
                                .to_string(),
                            optional: r.get("optional").and_then(Value::as_bool).unwrap_or(false),
                        })
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                always: str_at(pb, &["substituteStrategy"]) == Some("Always"),
            })
        });
        let post_build = post_build.transpose()?;
        let source_ref = spec.get("sourceRef").map(|r| SourceRef {
            kind: str_at(r, &["kind"]).unwrap_or_default().to_string(),
            name: str_at(r, &["name"]).unwrap_or_default().to_string(),
            namespace: str_at(r, &["namespace"]).unwrap_or(&namespace).to_string(),
        });
        Ok(Kustomization {
            api_version: str_at(obj, &["apiVersion"]).unwrap_or_default().to_string(),
            path: s("path").unwrap_or_default(),
            invalid: not_a_string(&spec, "path").or_else(|| bad_build_metadata(&spec)),
            depends_on,
            post_build,
            prune: b("prune"),
            // `wait` defaults to false in the API.
            wait: b("wait"),
            suspend: b("suspend"),
            force: b("force"),
            source_ref,
            target_namespace: s("targetNamespace").filter(|t| !t.is_empty()),
            name_prefix: s("namePrefix").filter(|t| !t.is_empty()),
            name_suffix: s("nameSuffix").filter(|t| !t.is_empty()),
            patches: list(spec.get("patches")),
            images: list(spec.get("images")),
            build_metadata: list(spec.get("buildMetadata"))
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            components: list(spec.get("components"))
                .iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect(),
            ignore_missing_components: b("ignoreMissingComponents"),
            common_labels: string_map(spec.get("commonMetadata").and_then(|m| m.get("labels"))),
            common_annotations: string_map(
                spec.get("commonMetadata")
                    .and_then(|m| m.get("annotations")),
            ),
            decryption: spec.get("decryption").is_some_and(Value::is_object),
            // A synthetic entry's id (a ResourceSet's, a Helm release's) is made encoded.
            id: if matches!(str_at(obj, &["kind"]), Some("ResourceSet" | "HelmRelease")) {
                NamespacedName { namespace, name }
            } else {
                NamespacedName {
                    namespace: id_segment(&namespace).into_owned(),
                    name: id_segment(&name).into_owned(),
                }
            },
        })
    }

    /// True when the Flux generator has something to merge into the kustomization file.
    #[must_use]
    pub fn has_generator_inputs(&self) -> bool {
        self.target_namespace.is_some()
            || self.name_prefix.is_some()
            || self.name_suffix.is_some()
            || !self.patches.is_empty()
            || !self.images.is_empty()
            || !self.components.is_empty()
            || !self.build_metadata.is_empty()
    }
}

/// Flux's var-name rule, ASCII only (`varsubRegex` in `kustomize_varsub.go`).
#[must_use]
pub fn is_valid_var_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'_' | b'a'..=b'z' | b'A'..=b'Z'))
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_on_namespace_defaults_to_the_kustomizations() {
        let k = Kustomization::from_json(&serde_json::json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "a", "namespace": "flux-system"},
            "spec": {"path": "./x", "dependsOn": [{"name": "b"}, {"name": "c", "namespace": "o"}]}
        }))
        .unwrap();
        assert_eq!(k.depends_on[0].to_string(), "flux-system/b");
        assert_eq!(k.depends_on[1].to_string(), "o/c");
        assert!(!k.wait && !k.prune && k.post_build.is_none());
    }

    // The CRD's openAPI schema types spec.path `string`; a null is an unset field.
    #[test]
    fn a_spec_path_of_another_type_makes_the_kustomization_invalid() {
        let with_path = |path: Value| {
            Kustomization::from_json(&serde_json::json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": "a", "namespace": "flux-system"},
                "spec": {"path": path}
            }))
            .unwrap()
        };
        for (path, what) in [
            (serde_json::json!(42), "an integer (`42`)"),
            (serde_json::json!(1.5), "a number (`1.5`)"),
            (serde_json::json!(true), "a boolean (`true`)"),
            (serde_json::json!(["x"]), "a list (`[\"x\"]`)"),
            (serde_json::json!({"a": "b"}), "a map (`{\"a\":\"b\"}`)"),
        ] {
            let k = with_path(path);
            assert_eq!(k.path, "");
            let why = k.invalid.unwrap();
            assert!(
                why.starts_with(&format!("spec.path must be a string, not {what}:")),
                "{why}"
            );
        }
        let long = with_path(serde_json::json!(["x".repeat(100)]));
        assert!(long.invalid.unwrap().contains("xxx...`)"));
        assert_eq!(with_path(Value::Null).invalid, None);
        assert_eq!(with_path(serde_json::json!("./x")).invalid, None);
    }

    // kustomize-controller v1.9.5 api (config/crd/bases): spec.buildMetadata is a list of
    // `originAnnotations` and `transformerAnnotations`; the API server refuses anything else.
    #[test]
    fn spec_build_metadata_is_read_and_checked_against_the_crd_enum() {
        let with = |bm: Value| {
            Kustomization::from_json(&serde_json::json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": "a", "namespace": "flux-system"},
                "spec": {"path": "./x", "buildMetadata": bm}
            }))
            .unwrap()
        };
        let k = with(serde_json::json!([
            "transformerAnnotations",
            "originAnnotations"
        ]));
        assert_eq!(
            k.build_metadata,
            ["transformerAnnotations", "originAnnotations"]
        );
        assert!(k.invalid.is_none() && k.has_generator_inputs());
        let refused = with(serde_json::json!(["originAnnotations", "managedByLabel"]));
        assert!(refused
            .invalid
            .unwrap()
            .starts_with("spec.buildMetadata[1]: Unsupported value: \"managedByLabel\""),);
        assert!(with(serde_json::json!("originAnnotations"))
            .invalid
            .is_some());
        assert!(with(serde_json::json!([1])).invalid.is_some());
        assert!(with(Value::Null).invalid.is_none());
    }

    #[test]
    fn object_id_splits_group_from_api_version() {
        let id = ObjectId::of(
            &serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "apps"}}),
        );
        assert_eq!(id.to_string(), "Deployment.apps/apps/web");
        let id = ObjectId::of(&serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "apps"}}));
        assert_eq!(id.to_string(), "Namespace/apps");
    }
}
