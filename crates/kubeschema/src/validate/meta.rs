//! Step 3: the object metadata as apimachinery `ValidateObjectMeta` checks it.

use serde_json::Value;

use crate::finding::{Finding, ObjectId, Report};
use crate::formats;
use crate::rules;

/// Step 3: `ValidateObjectMeta`'s checks of labels, annotation keys and the namespace
/// (apimachinery `pkg/api/validation/objectmeta.go`).
pub(crate) fn object_meta(
    id: &ObjectId,
    object: &Value,
    marker: Option<&str>,
    report: &mut Report,
) {
    let unknown = |s: &str| marker.is_some_and(|m| s.contains(m));
    let Some(meta) = object.get("metadata") else {
        return;
    };
    let mut push = |path: &str, body: String| {
        report.findings.push(Finding {
            rule: rules::INVALID_METADATA,
            severity: rules::INVALID_METADATA.severity,
            object: id.clone(),
            path: path.to_string(),
            schema_path: String::new(),
            message: format!("{path}: {body}"),
        });
    };
    if let Some(Value::Object(labels)) = meta.get("labels") {
        for (k, v) in labels {
            for e in formats::qualified_name_errors(k) {
                push("metadata.labels", format!("Invalid value: {k:?}: {e}"));
            }
            if let Some(s) = v.as_str().filter(|s| !unknown(s)) {
                for e in formats::label_value_errors(s) {
                    push("metadata.labels", format!("Invalid value: {s:?}: {e}"));
                }
            }
        }
    }
    if let Some(Value::Object(annotations)) = meta.get("annotations") {
        let mut total = 0usize;
        for (k, v) in annotations {
            for e in formats::qualified_name_errors(&k.to_lowercase()) {
                push("metadata.annotations", format!("Invalid value: {k:?}: {e}"));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > 256 * 1024 {
            push(
                "metadata.annotations",
                format!("Too long: may not be more than {} bytes", 256 * 1024),
            );
        }
    }
    if let Some(Value::String(ns)) = meta.get("namespace") {
        if !ns.is_empty() && !unknown(ns) && !formats::is_dns1123_label(ns) {
            push(
                "metadata.namespace",
                format!(
                    "Invalid value: {ns:?}: a lowercase RFC 1123 label must consist of lower case \
                     alphanumeric characters or '-', and must start and end with an alphanumeric \
                     character (e.g. 'my-name',  or '123-abc', regex used for validation is \
                     '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                ),
            );
        }
    }
}
