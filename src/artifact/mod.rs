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
            });
        }
        Ok(Artifact {
            sha256: sha256_hex(yaml.as_bytes()),
            objects,
            yaml,
        })
    }
}
