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

/// [`parse_object`] of a text read more than once in a run (a kustomization file is read
/// by the input closure, Flux's generator and the native builder), read once: a text's
/// reading depends on the text alone. Failures are not kept.
pub fn parse_shared(
    doc: &str,
) -> Result<std::sync::Arc<serde_json::Value>, crate::goyaml::yaml_json::YamlJsonError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Readings = Mutex<HashMap<Box<str>, Arc<serde_json::Value>>>;
    /// Beyond this many texts the memory starts again (a bound for long test runs).
    const KEEP: usize = 1 << 14;
    static READ: OnceLock<Readings> = OnceLock::new();
    let read = READ.get_or_init(Readings::default);
    let lock = || {
        read.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(v) = lock().get(doc) {
        return Ok(Arc::clone(v));
    }
    let v = Arc::new(crate::goyaml::yaml_json::yaml_to_value(doc)?);
    let mut map = lock();
    if map.len() >= KEEP {
        map.clear();
    }
    map.insert(doc.into(), Arc::clone(&v));
    Ok(v)
}
