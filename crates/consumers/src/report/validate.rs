//! `fluxsim validate`'s reports: the verdict and counts first, then one line per finding
//! (text), or a JSON document.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::findings::{counts, findings_json};
use super::layout::Layout;
use crate::model::RepoRender;
use crate::validate::Validation;

/// Kustomizations of the render whose objects were not validated (not rendered), each as
/// `cluster`, `namespace/name`, status.
fn not_validated(r: &RepoRender) -> Vec<(&str, String, &'static str)> {
    r.clusters
        .iter()
        .flat_map(|c| {
            c.kustomizations
                .iter()
                .filter(|k| k.artifact.is_none())
                .map(move |k| {
                    (
                        c.name.as_str(),
                        k.kustomization.id.to_string(),
                        k.status.as_str(),
                    )
                })
        })
        .collect()
}

/// The verdict line: how many objects of how many clusters, against which Kubernetes, and
/// what was found.
fn verdict(r: &RepoRender, v: &Validation) -> String {
    let [info, warnings, errors] = counts(&v.findings);
    let skipped = not_validated(r).len();
    let mut s = format!(
        "validate: {} {}: {}, {}",
        if errors > 0 { "FAIL" } else { "ok" },
        crate::text::plural(v.objects, "object"),
        crate::text::plural(errors, "error"),
        crate::text::plural(warnings, "warning"),
    );
    if info > 0 {
        let _ = write!(s, ", {info} info");
    }
    let _ = write!(
        s,
        "\n  {} against Kubernetes {}",
        crate::text::plural(r.clusters.len(), "cluster"),
        if v.kube_release.is_empty() {
            "-"
        } else {
            &v.kube_release
        }
    );
    if v.unchecked > 0 {
        let _ = write!(
            s,
            "; {} not validated (FS300)",
            crate::text::plural(v.unchecked, "place")
        );
    }
    if skipped > 0 {
        let _ = write!(
            s,
            "; {} not rendered, not validated",
            crate::text::plural(skipped, "Kustomization")
        );
    }
    s.push('\n');
    s
}

/// The text report: the verdict, then the errors and warnings (file:line:
/// severity[rule]: message; alike ones once, info counted: `report::quiet`; every finding
/// with `--verbose`), 80 columns unless `--wide`.
#[must_use]
pub fn validate_text(r: &RepoRender, v: &Validation, layout: Layout) -> String {
    let mut out = String::new();
    for (i, line) in verdict(r, v).lines().enumerate() {
        let first = if i == 0 { "" } else { "  " };
        out.push_str(&layout.wrap(first, line.trim_start(), "    "));
    }
    // What each cluster was validated against, and why.
    let said: Vec<(String, String)> = v
        .targets
        .iter()
        .map(|t| {
            (
                t.cluster.clone(),
                format!(
                    "Flux {}'s CRDs, {}; Kubernetes {}'s schemas, {}",
                    t.flux, t.flux_basis, t.kube, t.kube_basis
                ),
            )
        })
        .collect();
    out.push_str(&super::versions::assumed_lines(&said, "  ", layout));
    let listed = super::quiet::listing(&v.findings, "", layout);
    if !listed.text.is_empty() {
        out.push('\n');
        out.push_str(&listed.text);
    }
    let skipped = not_validated(r);
    if !skipped.is_empty() {
        out.push_str("\nnot rendered, so not validated:\n");
        for (c, k, status) in skipped {
            out.push_str(&layout.wrap(
                "  ",
                &format!("{} {} ({status})", OneLine(c), OneLine(&k)),
                "    ",
            ));
        }
    }
    if let Some(hint) = listed.hint() {
        out.push('\n');
        out.push_str(&hint);
    }
    out
}

/// The JSON report (`ValidateReport`, docs/schemas/validate.schema.json).
#[must_use]
pub fn validate_json(r: &RepoRender, v: &Validation) -> Value {
    super::json::document("ValidateReport", validation_json(r, v))
}

/// The validation as a value, without the document's `schemaVersion` and `kind` (what
/// `render --validate` adds to the render's document).
#[must_use]
pub fn validation_json(r: &RepoRender, v: &Validation) -> Value {
    let [info, warnings, errors] = counts(&v.findings);
    json!({
        "clusters": v.targets.iter().map(|t| json!({
            "name": t.cluster,
            "flux": {"version": t.flux.to_string(), "basis": t.flux_basis},
            "kubernetes": {"version": t.kube.to_string(), "basis": t.kube_basis},
        })).collect::<Vec<_>>(),
        "kubeVersion": v.kube_release,
        "objects": v.objects,
        "unchecked": v.unchecked,
        "counts": { "error": errors, "warning": warnings, "info": info },
        "notValidated": not_validated(r)
            .into_iter()
            .map(|(c, k, s)| {
                json!({"cluster": c, "kustomization": super::json::kustomization(&k), "status": s})
            })
            .collect::<Vec<_>>(),
        "findings": findings_json(&v.findings),
    })
}
