//! `labels` and `commonLabels` (kustomize `api/filters/labels`).

use super::fieldspec::{apply_specs, Setter};
use crate::konfig::{FieldSpec, COMMON_LABEL_SELECTORS, METADATA_LABELS};
use crate::resource::Resource;
use crate::NativeError;

/// The `labels:` transformer for one label set, and `commonLabels` (`include_selectors`).
pub(crate) fn add_labels(
    resources: &mut [Resource],
    pairs: &[(String, String)],
    include_selectors: bool,
    file: &str,
) -> Result<(), NativeError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let specs: Vec<&FieldSpec> = if include_selectors {
        COMMON_LABEL_SELECTORS
            .iter()
            .chain(METADATA_LABELS.iter())
            .collect()
    } else {
        METADATA_LABELS[..1].iter().collect()
    };
    for r in resources {
        apply_specs(r, &specs, Setter::Entries(pairs), file)?;
    }
    Ok(())
}
