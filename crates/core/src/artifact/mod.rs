//! The rendered artifact of one Flux Kustomization: its objects as kustomize prints them, in
//! kustomize's legacy order, with SHA-256 digests of the whole and of each object.

use serde::Serialize;

use crate::flux::ObjectId;

/// One object of an artifact.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactObject {
    /// `apiVersion`.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// Which object.
    #[serde(flatten)]
    pub id: ObjectId,
    /// SHA-256 of the object's YAML text.
    pub sha256: String,
    /// The object's YAML text.
    #[serde(skip)]
    pub yaml: String,
    /// The object as read back from that text (shared: renders that reuse an artifact, and
    /// the objects a cluster holds, point at the same value).
    #[serde(skip)]
    pub object: std::sync::Arc<serde_json::Value>,
    /// Where the object came from in the repository, when the render tracked origins
    /// (`RepoOptions::origins`); never part of the digests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Where a rendered object came from: kustomize's `config.kubernetes.io/origin` annotation,
/// with its paths made relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Origin {
    /// The manifest file the object was read from (`path:`), relative to the repository root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For generated objects (`configMapGenerator` ...), the kustomization file that
    /// configured the generator (`configuredIn:`), relative to the repository root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured_in: Option<String>,
}

/// What one Kustomization applies.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Artifact {
    /// SHA-256 of `yaml`.
    pub sha256: String,
    /// The objects, in order.
    pub objects: Vec<ArtifactObject>,
    /// The YAML stream, documents separated by `---` as kustomize prints them.
    #[serde(skip)]
    pub yaml: String,
}

pub use crate::digest::sha256_hex;

/// From how many documents an output is read in parallel.
const PARALLEL_DOCUMENTS: usize = 32;

impl Artifact {
    /// Reads kustomize's printed output.
    pub fn from_kustomize_output(yaml: String) -> Result<Artifact, crate::manifest::ParseError> {
        Self::from_kustomize_output_reading(yaml, &Artifact::default())
    }

    /// [`Self::from_kustomize_output`], taking the reading of each document whose text is
    /// that of an object of `known` from it (a reading depends on the text alone): postBuild
    /// prints most objects again exactly as the build printed them.
    pub fn from_kustomize_output_reading(
        yaml: String,
        known: &Artifact,
    ) -> Result<Artifact, crate::manifest::ParseError> {
        use rayon::prelude::*;
        let known: std::collections::HashMap<&str, &std::sync::Arc<serde_json::Value>> = known
            .objects
            .iter()
            .map(|o| (o.yaml.as_str(), &o.object))
            .collect();
        let object = |doc: &str| -> Result<ArtifactObject, crate::manifest::ParseError> {
            let v = match known.get(doc) {
                Some(v) => std::sync::Arc::clone(v),
                None => crate::manifest::parse_document(doc)?,
            };
            Ok(ArtifactObject {
                api_version: crate::flux::str_at(&v, &["apiVersion"])
                    .unwrap_or_default()
                    .to_string(),
                id: ObjectId::of(&v),
                sha256: sha256_hex(doc.as_bytes()),
                yaml: doc.to_string(),
                object: v,
                origin: None,
            })
        };
        let docs = crate::manifest::split_documents(&yaml);
        // The documents are read in parallel when there are many (a root Kustomization that
        // applies hundreds of files is built alone); the first failure in document order is
        // reported either way.
        let read: Vec<Result<ArtifactObject, _>> = if docs.len() >= PARALLEL_DOCUMENTS {
            // Collected whole: rayon's Result collect returns any failure, not the first.
            docs.par_iter().map(|d| object(d)).collect()
        } else {
            docs.iter().map(|d| object(d)).collect()
        };
        let objects = read.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(Artifact {
            sha256: sha256_hex(yaml.as_bytes()),
            objects,
            yaml,
        })
    }
}

/// kustomize's origin annotation (`buildMetadata: [originAnnotations]`).
pub const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// Takes kustomize's origin annotations out of its printed output.
///
/// Returns the output exactly as kustomize prints it without `originAnnotations` (the
/// annotation's lines go, and an `annotations:` key left empty goes too), and, per document,
/// the origin it carried, with paths as kustomize wrote them (relative to the built
/// directory). Written by hand because it must give back kustomize's bytes, which a YAML
/// round trip would not.
#[must_use]
pub fn strip_origins(output: &str) -> (String, Vec<Option<Origin>>) {
    let lines: Vec<&str> = output.split_inclusive('\n').collect();
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let mut out = String::with_capacity(output.len());
    let mut origins: Vec<Option<Origin>> = vec![None];
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let body = line.trim_end_matches(['\n', '\r']);
        if crate::goyaml::stream::is_document_start(body) {
            origins.push(None);
            out.push_str(line);
            i += 1;
            continue;
        }
        let key = format!("{ORIGIN_ANNOTATION}: |");
        if body.trim_start() == key {
            let ind = indent(body);
            let mut block = String::new();
            i += 1;
            while i < lines.len() && {
                let l = lines[i].trim_end_matches(['\n', '\r']);
                !l.trim().is_empty() && indent(l) > ind
            } {
                block.push_str(lines[i].get(ind + 2..).unwrap_or("").trim_end_matches(' '));
                i += 1;
            }
            if let Some(slot) = origins.last_mut() {
                *slot = Some(parse_origin(&block));
            }
            // `annotations:` with nothing left under it is dropped, as kustomize drops an
            // empty annotations map.
            let next_ind = lines.get(i).map_or(0, |l| {
                let l = l.trim_end_matches(['\n', '\r']);
                if crate::goyaml::stream::is_document_start(l) {
                    0
                } else {
                    indent(l)
                }
            });
            if next_ind < ind
                && out.ends_with(&format!(
                    "{}annotations:\n",
                    " ".repeat(ind.saturating_sub(2))
                ))
            {
                let cut = out.len() - (ind.saturating_sub(2) + "annotations:\n".len());
                out.truncate(cut);
            }
            continue;
        }
        out.push_str(line);
        i += 1;
    }
    (out, origins)
}

impl Origin {
    /// The origin with its paths (relative to the built directory `dir`, itself relative to
    /// the repository root) made relative to the repository root.
    #[must_use]
    pub fn relative_to(self, dir: &str) -> Origin {
        let join = |p: String| join_relative(dir, &p).unwrap_or(p);
        Origin {
            path: self.path.map(join),
            configured_in: self.configured_in.map(join),
        }
    }
}

/// `dir/p` normalised lexically (`a/b/../c` is `a/c`); `None` when it climbs above the root.
fn join_relative(dir: &str, p: &str) -> Option<String> {
    crate::source::clean_relative(&format!("{dir}/{p}"))
}

fn parse_origin(block: &str) -> Origin {
    let v = crate::manifest::parse_object(block).unwrap_or(serde_json::Value::Null);
    let field = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    Origin {
        path: field("path"),
        configured_in: field("configuredIn"),
    }
}

/// Prints `value` as `kustomize build` prints an object (for reports that show an object
/// they changed, such as a diff with fields stripped).
#[must_use]
pub fn print_object(value: &serde_json::Value) -> String {
    fluxsim_kustomize::print_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A document printed again as it was takes the earlier reading; a changed one is read.
    #[test]
    fn an_output_read_with_known_texts_reads_as_it_would_alone_sharing_their_readings() {
        let before = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
        let after = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
        let known = Artifact::from_kustomize_output(before.to_string()).unwrap();
        let alone = Artifact::from_kustomize_output(after.to_string()).unwrap();
        let reading = Artifact::from_kustomize_output_reading(after.to_string(), &known).unwrap();
        assert_eq!(reading.sha256, alone.sha256);
        for (r, a) in reading.objects.iter().zip(&alone.objects) {
            assert_eq!(
                (&r.id, &r.sha256, &r.yaml, &r.object),
                (&a.id, &a.sha256, &a.yaml, &a.object)
            );
        }
        assert!(std::sync::Arc::ptr_eq(
            &reading.objects[0].object,
            &known.objects[0].object
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &reading.objects[1].object,
            &known.objects[1].object
        ));
        assert_eq!(reading.objects[1].id.name, "c");
    }

    // What `kubectl kustomize` printed for an overlay with `buildMetadata: [originAnnotations]`
    // (kustomize api/internal/target/kusttarget.go, origin annotations), and without it.
    const WITH: &str = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      configuredIn: ../base/kustomization.yaml\n      configuredBy:\n        apiVersion: builtin\n        kind: ConfigMapGenerator\n  name: gen-4h2mbtbbt6\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../base/cm.yaml\n    keep: \"1\"\n  name: x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: svc.yaml\n  name: sec\n";
    const WITHOUT: &str = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: gen-4h2mbtbbt6\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    keep: \"1\"\n  name: x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sec\n";

    #[test]
    fn strip_origins_gives_back_kustomize_output_without_origin_annotations() {
        let (out, origins) = strip_origins(WITH);
        assert_eq!(out, WITHOUT);
        assert_eq!(origins.len(), 3);
        assert_eq!(
            origins[0].as_ref().unwrap().configured_in.as_deref(),
            Some("../base/kustomization.yaml")
        );
        assert_eq!(
            origins[1].as_ref().unwrap().path.as_deref(),
            Some("../base/cm.yaml")
        );
        assert_eq!(
            origins[2].as_ref().unwrap().path.as_deref(),
            Some("svc.yaml")
        );
    }

    #[test]
    fn origin_paths_are_made_relative_to_the_repository_root() {
        let o = Origin {
            path: Some("../../components/x/a.yaml".into()),
            configured_in: Some("kustomization.yaml".into()),
        }
        .relative_to("apps/wave-1");
        assert_eq!(o.path.as_deref(), Some("components/x/a.yaml"));
        assert_eq!(
            o.configured_in.as_deref(),
            Some("apps/wave-1/kustomization.yaml")
        );
        assert_eq!(join_relative(".", "a.yaml").as_deref(), Some("a.yaml"));
        assert_eq!(join_relative("a", "../../x"), None);
    }

    #[test]
    fn strip_origins_leaves_output_without_annotations_alone() {
        let (out, origins) = strip_origins(WITHOUT);
        assert_eq!(out, WITHOUT);
        assert!(origins.iter().all(Option::is_none));
    }
}
