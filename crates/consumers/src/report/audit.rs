//! Printing an audit: text for people (errors and warnings; with `--verbose` every finding,
//! by cluster and path), stable JSON for programs (SARIF comes from `report::findings`).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::findings::{counts, finding_text};
use super::layout::Layout;
use crate::audit::Audit;
use crate::finding::Finding;

/// The verdict first (hazards, info, on how many Kustomizations), then the errors and
/// warnings, a finding of several clusters once (`report::quiet`), and how many info
/// findings there are; wrapped at 80 columns (`--wide`: one line each). `--verbose` lists
/// every finding as it is, per cluster and per Kustomization path under a line of counts
/// (`path=./apps/vms files=3 defined=13 referenced=7 hazards=0`).
#[must_use]
pub fn audit_text(a: &Audit, layout: Layout) -> String {
    let [info, warnings, errors] = counts(&a.findings);
    let clusters: Vec<&str> = {
        let mut seen = Vec::new();
        for p in &a.paths {
            if !seen.contains(&p.cluster.as_str()) {
                seen.push(p.cluster.as_str());
            }
        }
        seen
    };
    // Only the severities there are; the checks counted with --verbose.
    let mut verdict = if errors + warnings == 0 {
        "audit: no hazards".to_string()
    } else {
        let parts: Vec<String> = [
            (errors, super::plural(errors, "error")),
            (warnings, super::plural(warnings, "warning")),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, s)| s)
        .collect();
        format!(
            "audit: {} ({})",
            super::plural(errors + warnings, "hazard"),
            parts.join(", ")
        )
    };
    if info > 0 {
        let _ = write!(verdict, ", {info} info");
    }
    let _ = write!(
        verdict,
        " in {} of {}",
        super::entry_counts(a.paths.iter().map(|p| p.kustomization.as_str())),
        super::plural(clusters.len(), "cluster")
    );
    if layout.verbose {
        let _ = write!(verdict, " ({})", super::plural(a.checks, "check"));
    }
    if !a.strict {
        verdict.push_str(" (--no-strict)");
    }
    let mut out = layout.wrap("", &verdict, "  ");
    // What FS103's grade rests on: each cluster's Flux and its substitution, said when it
    // grades a finding, when a cluster does not substitute strictly, or with --verbose.
    let graded = a.findings.iter().any(|f| f.rule == "FS103");
    let said: Vec<(String, String)> = a
        .clusters
        .iter()
        .filter(|c| layout.verbose || graded || !c.strict)
        .map(|c| (c.name.clone(), c.said.clone()))
        .collect();
    out.push_str(&super::versions::assumed_lines(&said, "  ", layout));
    if !layout.verbose {
        // Quiet: errors and warnings, each alike finding of several clusters once; info
        // counted.
        let listed = super::quiet::listing(&a.findings, "", layout);
        out.push_str(&listed.text);
        out.extend(listed.hint());
        return out;
    }
    // Errors first, then warnings, then info (in file order within each): the hazard the
    // verdict counts is not below dozens of notes.
    let mut by_severity: Vec<&Finding> = a.findings.iter().collect();
    by_severity.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let of = |f: &Finding, cluster: &str, ks: &str| {
        f.cluster.as_deref() == Some(cluster) && f.kustomization.as_deref() == Some(ks)
    };
    for cluster in &clusters {
        let _ = writeln!(out, "cluster {}", OneLine(cluster));
        for p in a.paths.iter().filter(|p| p.cluster == *cluster) {
            let mut line = format!(
                "path={} files={} defined={} referenced={} hazards={} ({}",
                OneLine(display_path(&p.path)),
                p.files,
                p.defined,
                p.referenced,
                p.hazards,
                OneLine(&p.kustomization)
            );
            if p.status != "rendered" {
                let _ = write!(line, ", {}", p.status);
            }
            line.push(')');
            out.push_str(&layout.wrap("  ", &line, "    "));
            for f in by_severity
                .iter()
                .filter(|f| of(f, cluster, &p.kustomization))
            {
                out.push_str(&finding_text(f, &f.message, "    ", layout));
            }
        }
    }
    // Findings that belong to no listed Kustomization (none today), so that nothing is lost.
    for f in a.findings.iter().filter(|f| {
        !a.paths.iter().any(|p| {
            f.cluster.as_deref() == Some(p.cluster.as_str())
                && f.kustomization.as_deref() == Some(p.kustomization.as_str())
        })
    }) {
        out.push_str(&finding_text(f, &f.message, "", layout));
    }
    out
}

/// `spec.path` as Flux users write it (`./apps/vms`).
fn display_path(p: &str) -> String {
    if p.is_empty() || p == "." || p == "./" {
        "./".to_string()
    } else if p.starts_with("./") {
        p.to_string()
    } else {
        format!("./{}", p.trim_start_matches('/'))
    }
}

/// The audit as JSON (documented in `docs/commands/audit.md`).
#[must_use]
pub fn audit_json(a: &Audit) -> Value {
    let [info, warnings, errors] = counts(&a.findings);
    let mut paths = super::json::camel_keys(json!(a.paths));
    if let Some(items) = paths.as_array_mut() {
        for p in items {
            super::json::kustomization_refs(p, "kustomization");
        }
    }
    super::json::document(
        "AuditReport",
        json!({
            "clusters": a.clusters.iter().map(|c| json!({
                "name": c.name,
                "strict": c.strict,
                "versions": super::json::versions(&c.versions),
            })).collect::<Vec<_>>(),
            "strict": a.strict,
            "checks": a.checks,
            "hazards": errors + warnings,
            "counts": { "error": errors, "warning": warnings, "info": info },
            "paths": paths,
            "findings": super::findings::findings_json(&a.findings),
        }),
    )
}
