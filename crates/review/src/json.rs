//! The review as JSON, for programs: per cluster, per Kustomization and HelmRelease, per
//! object, each semantic change as `{"path", "op", "before", "after"}` (`op` one of
//! `changed`, `added`, `removed`, `order`; `before` and `after` as the kind of change has
//! them), with the counts, the filters' note and what they hid.

use serde_json::Value;

use crate::analysis::Analysis;

/// The analysis as a JSON value (the shape of [`Analysis`]'s fields).
#[must_use]
pub fn to_value(a: &Analysis) -> Value {
    // Serializing these types cannot fail: every map key is a string.
    serde_json::to_value(a).unwrap_or(Value::Null)
}
