//! Reading the objects of a YAML stream (its documents split by `goyaml::stream`).

pub use crate::stream::split_documents;

/// Why a YAML document could not be read as an object.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not YAML as Go's `sigs.k8s.io/yaml` reads it.
    #[error(transparent)]
    Yaml(#[from] crate::yaml_json::YamlJsonError),
    /// The JSON it converts to does not parse (a bug of the converter, if ever).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Reads one YAML document as kustomize-controller would (YAML 1.1, via
/// `sigs.k8s.io/yaml.YAMLToJSON`) into a JSON value.
pub fn parse_object(doc: &str) -> Result<serde_json::Value, ParseError> {
    Ok(crate::yaml_json::yaml_to_value(doc)?)
}

/// [`parse_object`] of a text read more than once in a run (a kustomization file is read
/// by the input closure, Flux's generator and the native builder), read once: a text's
/// reading depends on the text alone. Failures are not kept.
pub fn parse_shared(
    doc: &str,
) -> Result<std::sync::Arc<serde_json::Value>, crate::yaml_json::YamlJsonError> {
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
    let v = Arc::new(crate::yaml_json::yaml_to_value(doc)?);
    let mut map = lock();
    if map.len() >= KEEP {
        map.clear();
    }
    map.insert(doc.into(), Arc::clone(&v));
    Ok(v)
}

/// Whether [`parse_document`] shares readings across the run ([`share_readings`]).
static SHARING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`parse_document`] read each text once for the rest of the run: for commands that
/// render the same tree several times (`prove` renders head, plans canaries on another
/// render, then renders the canaries; `diff` renders two revisions), where most build outputs
/// repeat. A single render keeps every text anyway and would only pay for the memory.
pub fn share_readings() {
    SHARING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// One document of a build output, read as [`parse_object`] reads it; through
/// [`parse_shared`] once [`share_readings`] was called (the same value: a reading depends on
/// the text alone).
pub fn parse_document(doc: &str) -> Result<std::sync::Arc<serde_json::Value>, ParseError> {
    if SHARING.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(parse_shared(doc)?);
    }
    Ok(std::sync::Arc::new(parse_object(doc)?))
}

#[cfg(test)]
mod tests {
    // Once shared, a text is read once: the same reading comes back, equal to a fresh one.
    // (Other tests of this process may then share readings too: they read the same values.)
    #[test]
    fn shared_readings_give_one_reading_per_text() {
        let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  on: yes\n";
        super::share_readings();
        let a = super::parse_document(doc).unwrap();
        let b = super::parse_document(doc).unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(*a, super::parse_object(doc).unwrap());
        assert!(super::parse_document("a: [").is_err());
    }
}
