//! `commonAnnotations` (kustomize `api/filters/annotations`).

use super::fieldspec::{apply_specs, Setter};
use crate::konfig::{FieldSpec, COMMON_ANNOTATIONS};
use crate::resource::Resource;
use crate::NativeError;

/// The `commonAnnotations` transformer.
pub(crate) fn add_annotations(
    resources: &mut [Resource],
    pairs: &[(String, String)],
    file: &str,
) -> Result<(), NativeError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let specs: Vec<&FieldSpec> = COMMON_ANNOTATIONS.iter().collect();
    for r in resources {
        apply_specs(r, &specs, Setter::Entries(pairs), file)?;
    }
    Ok(())
}
