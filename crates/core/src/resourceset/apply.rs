//! What the operator does to a ResourceSet's built objects before it applies them
//! (`internal/controller/resourceset_controller.go` apply, `resourceset_controller_configs.go`,
//! `internal/copier`), beyond what `flux-operator build rset` prints:
//!
//! - the ownership labels are set first and `spec.commonMetadata` after, so a common label of
//!   the same key wins (the CLI does it the other way round; set again here);
//! - `fluxcd.controlplane.io/copyFrom: NS/NAME` on a `v1` ConfigMap or Secret copies the data
//!   of that object of the cluster (`copier.CopyResources`): a ConfigMap's `data` (and
//!   `binaryData`) replaced, a Secret's `stringData` replaced with the source's data and its
//!   `type` taken when it has none. The cluster is the render's steady state (every object
//!   its Kustomizations, ResourceSets and bootstrap apply); a source that is not there is
//!   noted and the object left as templated;
//! - `fluxcd.controlplane.io/checksumFrom` (any `metadata.annotations` map, nested ones
//!   included) gets its sibling `fluxcd.controlplane.io/checksum`, the SHA-256 of the
//!   referenced data, from the set's own objects first, else the cluster's;
//! - Secrets are normalized (`ssa/normalize`: `stringData` folded into `data`), as fluxsim
//!   folds them for a Kustomization.
//!
//! `fluxcd.controlplane.io/convertKubeConfigFrom` reads a kubeconfig Secret of the cluster:
//! not reproduced, noted.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::ResourceSetError;
use crate::flux::{str_at, ObjectId};
use crate::model::Note;

/// The annotation that copies a ConfigMap's or Secret's data.
pub const COPY_FROM: &str = "fluxcd.controlplane.io/copyFrom";
/// The annotation whose references are checksummed.
pub const CHECKSUM_FROM: &str = "fluxcd.controlplane.io/checksumFrom";
/// Where the checksum goes.
pub const CHECKSUM: &str = "fluxcd.controlplane.io/checksum";
/// The annotation that turns a kubeconfig Secret into a ConfigMap (not reproduced).
pub const CONVERT_KUBECONFIG_FROM: &str = "fluxcd.controlplane.io/convertKubeConfigFrom";

/// The cluster's ConfigMaps and Secrets, by `(kind, namespace, name)`.
pub type ClusterData<'a> = BTreeMap<(String, String, String), &'a Value>;

/// Applies the operator's apply-time changes to `objects`; the notes say what could not be
/// known. `Err` with the operator's words when the operator would fail the apply.
pub fn prepare(
    objects: &mut [Value],
    common_labels: &Map<String, Value>,
    cluster: &ClusterData<'_>,
    notes: &mut Vec<Note>,
) -> Result<(), ResourceSetError> {
    if !common_labels.is_empty() {
        let labels: BTreeMap<String, String> = common_labels
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        for o in objects.iter_mut() {
            crate::postbuild::kustomization::set_common_metadata(o, &labels, &BTreeMap::new());
        }
    }
    for o in objects.iter_mut() {
        copy_from(o, cluster, notes)?;
    }
    for o in objects.iter() {
        let id = ObjectId::of(o);
        if id.group.is_empty()
            && id.kind == "ConfigMap"
            && annotation(o, CONVERT_KUBECONFIG_FROM).is_some()
        {
            notes.push(Note::ResourceSetNotReproduced {
                object: format!("ConfigMap/{}/{}", id.namespace, id.name),
                what: CONVERT_KUBECONFIG_FROM.into(),
            });
        }
    }
    let own: ClusterData<'_> = BTreeMap::new();
    let snapshot: Vec<Value> = objects.to_vec();
    let mut own = own;
    for o in &snapshot {
        let id = ObjectId::of(o);
        if matches!(id.kind.as_str(), "ConfigMap" | "Secret") {
            own.insert((id.kind.clone(), id.namespace.clone(), id.name.clone()), o);
        }
    }
    for o in objects.iter_mut() {
        checksums(o, &own, cluster, notes)?;
    }
    for o in objects.iter_mut() {
        crate::postbuild::kustomization::fold_string_data(o);
    }
    Ok(())
}

fn annotation<'a>(o: &'a Value, key: &str) -> Option<&'a str> {
    o.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// `copier.CopyResources` for one object.
fn copy_from(
    o: &mut Value,
    cluster: &ClusterData<'_>,
    notes: &mut Vec<Note>,
) -> Result<(), ResourceSetError> {
    if str_at(o, &["apiVersion"]) != Some("v1") {
        return Ok(());
    }
    let Some(source) = annotation(o, COPY_FROM).map(str::to_string) else {
        return Ok(());
    };
    let parts: Vec<&str> = source.split('/').collect();
    let [ns, name] = parts[..] else {
        return Err(ResourceSetError::CopyFrom {
            annotation: COPY_FROM,
            value: source,
        });
    };
    let kind = str_at(o, &["kind"]).unwrap_or_default().to_string();
    if !matches!(kind.as_str(), "ConfigMap" | "Secret") {
        return Ok(());
    }
    let Some(src) = cluster.get(&(kind.clone(), ns.to_string(), name.to_string())) else {
        notes.push(Note::CopyFromNotInRender {
            object: format!(
                "{kind}/{}/{}",
                str_at(o, &["metadata", "namespace"]).unwrap_or_default(),
                str_at(o, &["metadata", "name"]).unwrap_or_default()
            ),
            source: format!("{kind}/{source}"),
        });
        return Ok(());
    };
    let Some(obj) = o.as_object_mut() else {
        return Ok(());
    };
    // unstructured.SetNestedStringMap: the whole map is replaced (an absent source map
    // gives an empty one).
    let strings = |v: Option<&Value>| -> Map<String, Value> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| v.is_string())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    if kind == "ConfigMap" {
        obj.insert("data".into(), Value::Object(strings(src.get("data"))));
        let binary = strings(src.get("binaryData"));
        if !binary.is_empty() {
            obj.insert("binaryData".into(), Value::Object(binary));
        }
    } else {
        if obj.get("type").is_none_or(Value::is_null) {
            let t = str_at(src, &["type"]).unwrap_or("Opaque");
            obj.insert("type".into(), Value::String(t.to_string()));
        }
        // stringData is replaced by the source's data (Go strings hold any bytes), and the
        // normalization that follows folds it into `data`: written here on the bytes, so a
        // binary value comes through exactly. The source as the API server holds it: its
        // data and its stringData (which wins).
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut data = strings(obj.get("data"));
        for (k, v) in canonical(src, "Secret")? {
            data.insert(k, Value::String(b64.encode(v)));
        }
        obj.remove("stringData");
        if !data.is_empty() {
            obj.insert("data".into(), Value::Object(data));
        }
    }
    Ok(())
}

/// The canonical data of a ConfigMap or Secret for a checksum (`canonicalFromUnstructured`):
/// a ConfigMap's `data` and decoded `binaryData`, a Secret's decoded `data` and `stringData`.
fn canonical(o: &Value, kind: &str) -> Result<BTreeMap<String, Vec<u8>>, ResourceSetError> {
    let mut out = BTreeMap::new();
    let decode = |field: &'static str, k: &str, v: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(v)
            .map_err(|source| ResourceSetError::Base64 {
                object: format!(
                    "{kind}/{}/{}",
                    str_at(o, &["metadata", "namespace"]).unwrap_or_default(),
                    str_at(o, &["metadata", "name"]).unwrap_or_default()
                ),
                field,
                key: k.to_string(),
                source,
            })
    };
    let strings = |field: &str| -> Vec<(String, String)> {
        o.get(field)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    if kind == "ConfigMap" {
        for (k, v) in strings("data") {
            out.insert(k, v.into_bytes());
        }
        for (k, v) in strings("binaryData") {
            let d = decode("binaryData", &k, &v)?;
            out.insert(k, d);
        }
    } else {
        for (k, v) in strings("data") {
            let d = decode("data", &k, &v)?;
            out.insert(k, d);
        }
        for (k, v) in strings("stringData") {
            out.insert(k, v.into_bytes());
        }
    }
    Ok(out)
}

/// `checksumResolver.walk` for one object: every map with `metadata.annotations` holding a
/// non-empty `checksumFrom` gets `checksum`.
fn checksums(
    o: &mut Value,
    own: &ClusterData<'_>,
    cluster: &ClusterData<'_>,
    notes: &mut Vec<Note>,
) -> Result<(), ResourceSetError> {
    match o {
        Value::Object(m) => {
            let refs = m
                .get("metadata")
                .and_then(|x| x.get("annotations"))
                .and_then(|a| a.get(CHECKSUM_FROM))
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
                .map(str::to_string);
            if let Some(refs) = refs {
                if let Some(sum) = checksum(&refs, own, cluster, notes)? {
                    if let Some(Value::Object(ann)) =
                        m.get_mut("metadata").and_then(|x| x.get_mut("annotations"))
                    {
                        ann.insert(CHECKSUM.into(), Value::String(sum));
                    }
                }
            }
            for v in m.values_mut() {
                checksums(v, own, cluster, notes)?;
            }
        }
        Value::Array(a) => {
            for v in a {
                checksums(v, own, cluster, notes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `checksumResolver.resolve`: `sha256:` and the digest of each reference's kind, namespace,
/// name and sorted data, NUL-separated; `None` (noted) when a reference is on no object of
/// the render.
fn checksum(
    refs: &str,
    own: &ClusterData<'_>,
    cluster: &ClusterData<'_>,
    notes: &mut Vec<Note>,
) -> Result<Option<String>, ResourceSetError> {
    use sha2::Digest as _;
    let mut buf: Vec<u8> = Vec::new();
    for r in refs.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let parts: Vec<&str> = r.split('/').collect();
        let [kind, ns, name] = parts[..] else {
            return Err(ResourceSetError::ChecksumRef {
                annotation: CHECKSUM_FROM,
                reference: r.to_string(),
            });
        };
        if kind.is_empty() || ns.is_empty() || name.is_empty() {
            return Err(ResourceSetError::ChecksumRef {
                annotation: CHECKSUM_FROM,
                reference: r.to_string(),
            });
        }
        if !matches!(kind, "ConfigMap" | "Secret") {
            return Err(ResourceSetError::ChecksumKind {
                annotation: CHECKSUM_FROM,
                kind: kind.to_string(),
            });
        }
        let key = (kind.to_string(), ns.to_string(), name.to_string());
        let Some(src) = own.get(&key).or_else(|| cluster.get(&key)) else {
            notes.push(Note::ChecksumFromNotInRender {
                reference: r.to_string(),
            });
            return Ok(None);
        };
        let data = canonical(src, kind)?;
        buf.extend_from_slice(format!("{kind}/{ns}/{name}").as_bytes());
        buf.push(0);
        for (k, v) in data {
            buf.extend_from_slice(k.as_bytes());
            buf.push(0);
            buf.extend_from_slice(&v);
            buf.push(0);
        }
    }
    Ok(Some(format!("sha256:{:x}", sha2::Sha256::digest(&buf))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sha2::Digest as _;

    fn cluster(objects: &[Value]) -> BTreeMap<(String, String, String), Value> {
        objects
            .iter()
            .map(|o| {
                let id = ObjectId::of(o);
                ((id.kind, id.namespace, id.name), o.clone())
            })
            .collect()
    }

    fn refs(c: &BTreeMap<(String, String, String), Value>) -> ClusterData<'_> {
        c.iter().map(|(k, v)| (k.clone(), v)).collect()
    }

    // internal/copier/resources.go: a ConfigMap's data is replaced by the source's; a
    // Secret's stringData takes the source's decoded data, and its type when it has none.
    #[test]
    fn copy_from_copies_a_configmap_s_data_and_a_secret_s_data_and_type() {
        let c = cluster(&[
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "info", "namespace": "flux-system"}, "data": {"A": "1"}}),
            json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
                "metadata": {"name": "auth", "namespace": "flux-system"}, "data": {"k": "czNjcjN0"}}),
        ]);
        let mut objects = vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "info", "namespace": "team",
                    "annotations": {COPY_FROM: "flux-system/info"}}, "data": {"old": "x"}}),
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "auth", "namespace": "team",
                    "annotations": {COPY_FROM: "flux-system/auth"}}}),
        ];
        let mut notes = Vec::new();
        prepare(&mut objects, &Map::new(), &refs(&c), &mut notes).unwrap();
        assert_eq!(objects[0]["data"], json!({"A": "1"}));
        assert_eq!(objects[1]["type"], "kubernetes.io/dockerconfigjson");
        // stringData folded into data, as the operator's normalization does.
        assert_eq!(objects[1]["data"], json!({"k": "czNjcjN0"}));
        assert!(objects[1].get("stringData").is_none());
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_copy_from_source_not_in_the_render_is_noted_and_a_bad_value_fails() {
        let mut objects = vec![json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "auth", "namespace": "team",
                "annotations": {COPY_FROM: "flux-system/ghcr-auth"}}, "type": "Opaque"})];
        let mut notes = Vec::new();
        prepare(&mut objects, &Map::new(), &BTreeMap::new(), &mut notes).unwrap();
        assert_eq!(
            notes,
            [Note::CopyFromNotInRender {
                object: "Secret/team/auth".into(),
                source: "Secret/flux-system/ghcr-auth".into()
            }]
        );
        let mut objects = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "annotations": {COPY_FROM: "just-a-name"}}})];
        let err = prepare(&mut objects, &Map::new(), &BTreeMap::new(), &mut notes)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("must be in the format 'namespace/name'"),
            "{err}"
        );
    }

    // resourceset_controller.go apply: SetOwnerLabels, then commonMetadata (which wins).
    #[test]
    fn a_common_label_wins_over_the_ownership_label_of_the_same_key() {
        let mut objects = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "labels": {
                "resourceset.fluxcd.controlplane.io/name": "owner", "app": "a"}}})];
        let common = json!({"resourceset.fluxcd.controlplane.io/name": "mine"});
        prepare(
            &mut objects,
            common.as_object().unwrap(),
            &BTreeMap::new(),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(
            objects[0]["metadata"]["labels"],
            json!({"resourceset.fluxcd.controlplane.io/name": "mine", "app": "a"})
        );
    }

    // resourceset_controller_configs.go checksumResolver: the digest of
    // "Kind/ns/name\0" then "key\0value\0" per sorted key, from the set's own objects.
    #[test]
    fn checksum_from_digests_the_referenced_data() {
        let mut objects = vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cfg", "namespace": "apps"}, "data": {"b": "2", "a": "1"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "apps"},
                "spec": {"template": {"metadata": {"annotations": {CHECKSUM_FROM: "ConfigMap/apps/cfg"}}}}}),
        ];
        prepare(&mut objects, &Map::new(), &BTreeMap::new(), &mut Vec::new()).unwrap();
        let want = format!(
            "sha256:{:x}",
            sha2::Sha256::digest(b"ConfigMap/apps/cfg\0a\x001\0b\x002\0")
        );
        assert_eq!(
            objects[1]["spec"]["template"]["metadata"]["annotations"][CHECKSUM],
            want
        );
    }
}
