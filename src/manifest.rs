//! Reading the objects of a YAML stream (its documents split by `goyaml::stream`).

pub use crate::goyaml::stream::split_documents;

/// Why a YAML document could not be read as an object.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not YAML as Go's `sigs.k8s.io/yaml` reads it.
    #[error(transparent)]
    Yaml(#[from] crate::goyaml::yaml_json::YamlJsonError),
    /// The JSON it converts to does not parse (a bug of the converter, if ever).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Reads one YAML document as kustomize-controller would (YAML 1.1, via
/// `sigs.k8s.io/yaml.YAMLToJSON`) into a JSON value.
pub fn parse_object(doc: &str) -> Result<serde_json::Value, ParseError> {
    Ok(crate::goyaml::yaml_json::yaml_to_value(doc)?)
}
