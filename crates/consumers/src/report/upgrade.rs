//! `fluxsim upgrade`'s reports: the verdict and each cluster's move first, then the
//! findings (alike ones once, as `validate` lists them), the mechanical conversions as patches
//! a user can apply, and what was not compared (text); or a JSON document
//! (`docs/schemas/upgrade.schema.json`).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::findings::{counts, findings_json};
use super::layout::Layout;
use crate::upgrade::Upgrade;

/// The verdict line and the counts under it.
fn verdict(u: &Upgrade) -> String {
    let [info, warnings, errors] = counts(&u.findings);
    let mut s = format!(
        "upgrade: {} {}: {}, {}",
        if errors > 0 { "FAIL" } else { "ok" },
        crate::text::plural(u.objects, "object"),
        crate::text::plural(errors, "error"),
        crate::text::plural(warnings, "warning"),
    );
    if info > 0 {
        let _ = write!(s, ", {info} info");
    }
    s.push('\n');
    let _ = write!(
        s,
        "  {} rendered at both versions, {} differently",
        crate::text::plural(u.compared, "Kustomization"),
        u.differ
    );
    if !u.not_compared.is_empty() {
        let _ = write!(s, "; {} not compared", u.not_compared.len());
    }
    s.push('\n');
    s
}

/// The text report, 80 columns unless `--wide`.
#[must_use]
pub fn upgrade_text(u: &Upgrade, layout: Layout) -> String {
    let mut out = String::new();
    for (i, line) in verdict(u).lines().enumerate() {
        let first = if i == 0 { "" } else { "  " };
        out.push_str(&layout.wrap(first, line.trim_start(), "    "));
    }
    let moves: Vec<(String, String)> = u
        .steps
        .iter()
        .map(|s| {
            (
                s.from.cluster.clone(),
                format!(
                    "Flux {} → {} ({}); Kubernetes {} → {} ({})",
                    s.from.flux, s.flux, s.from.flux_basis, s.from.kube, s.kube, s.from.kube_basis
                ),
            )
        })
        .collect();
    out.push_str(&super::versions::assumed_lines(&moves, "  ", layout));
    let listed = super::quiet::listing(&u.findings, "", layout);
    if !listed.text.is_empty() {
        out.push('\n');
        out.push_str(&listed.text);
    }
    // One patch a place: the same file built by several Kustomizations is patched once.
    let mut patches: Vec<(&crate::finding::Finding, &str)> = u
        .findings
        .iter()
        .filter_map(|f| f.related("patch").first().map(|p| (f, *p)))
        .collect();
    patches.dedup_by(|a, b| a.0.location == b.0.location && a.1 == b.1);
    if !patches.is_empty() {
        out.push_str(
            "\nmechanical conversions (the object is valid with only this line changed):\n",
        );
        for (f, patch) in patches {
            let place = f
                .location
                .as_ref()
                .map_or_else(String::new, |l| OneLine(l).to_string());
            let _ = writeln!(out, "  {place}");
            for line in patch.lines() {
                let _ = writeln!(out, "    {}", OneLine(line));
            }
        }
    }
    if !u.not_compared.is_empty() {
        out.push_str("\nnot rendered both ways, so not compared:\n");
        for (c, k, status) in &u.not_compared {
            out.push_str(&layout.wrap(
                "  ",
                &format!("{} {} ({})", OneLine(c), OneLine(k), OneLine(status)),
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

/// The JSON report (`UpgradeReport`).
#[must_use]
pub fn upgrade_json(u: &Upgrade) -> Value {
    let [info, warnings, errors] = counts(&u.findings);
    super::json::document(
        "UpgradeReport",
        json!({
            "clusters": u.steps.iter().map(|s| json!({
                "name": s.from.cluster,
                "from": {
                    "flux": {"version": s.from.flux.to_string(), "basis": s.from.flux_basis},
                    "kubernetes": {"version": s.from.kube.to_string(), "basis": s.from.kube_basis},
                },
                "to": {"flux": s.flux.to_string(), "kubernetes": s.kube.to_string()},
            })).collect::<Vec<_>>(),
            "objects": u.objects,
            "compared": u.compared,
            "differ": u.differ,
            "notCompared": u.not_compared.iter().map(|(c, k, s)| json!({
                "cluster": c,
                "kustomization": super::json::kustomization(k),
                "status": s,
            })).collect::<Vec<_>>(),
            "counts": {"error": errors, "warning": warnings, "info": info},
            "findings": findings_json(&u.findings),
        }),
    )
}
