//! The rendered artifact of one Flux Kustomization: its objects as kustomize prints them, in
//! kustomize's legacy order, with SHA-256 digests of the whole and of each object.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::flux::ObjectId;
use crate::generate::hex;

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
    /// The object as read back from that text.
    #[serde(skip)]
    pub object: serde_json::Value,
    /// Where the object came from in the repository, when the render tracked origins
    /// (`RepoOptions::origins`); never part of the digests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Where a rendered object came from: kustomize's `config.kubernetes.io/origin` annotation,
/// with its paths made relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct Artifact {
    /// SHA-256 of `yaml`.
    pub sha256: String,
    /// The objects, in order.
    pub objects: Vec<ArtifactObject>,
    /// The YAML stream, documents separated by `---` as kustomize prints them.
    #[serde(skip)]
    pub yaml: String,
}

/// SHA-256 in lower-case hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

impl Artifact {
    /// Reads kustomize's printed output.
    pub fn from_kustomize_output(yaml: String) -> Result<Artifact, String> {
        let mut objects = Vec::new();
        for doc in crate::manifest::split_documents(&yaml) {
            let v = crate::manifest::parse_object(doc)?;
            objects.push(ArtifactObject {
                api_version: crate::flux::str_at(&v, &["apiVersion"])
                    .unwrap_or_default()
                    .to_string(),
                id: ObjectId::of(&v),
                sha256: sha256_hex(doc.as_bytes()),
                yaml: doc.to_string(),
                object: v,
                origin: None,
            });
        }
        Ok(Artifact {
            sha256: sha256_hex(yaml.as_bytes()),
            objects,
            yaml,
        })
    }
}
