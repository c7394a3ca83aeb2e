//! Printing an audit: text grouped by cluster and path for people, stable JSON for programs
//! (SARIF comes from `report::findings`).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::findings::counts;
use crate::audit::Audit;
use crate::finding::Finding;

/// Per cluster, one summary line per Kustomization path
/// (`path=./apps/vms files=3 defined=13 referenced=7 hazards=0`) followed by its findings,
/// then a total line.
#[must_use]
pub fn audit_text(a: &Audit) -> String {
    let mut out = String::new();
    let mut cluster: Option<&str> = None;
    for p in &a.paths {
        if cluster != Some(p.cluster.as_str()) {
            let _ = writeln!(out, "cluster {}", OneLine(&p.cluster));
            cluster = Some(p.cluster.as_str());
        }
        let _ = write!(
            out,
            "  path={} files={} defined={} referenced={} hazards={} ({}",
            OneLine(display_path(&p.path)),
            p.files,
            p.defined,
            p.referenced,
            p.hazards,
            OneLine(&p.kustomization)
        );
        if p.status != "rendered" {
            let _ = write!(out, ", {}", p.status);
        }
        out.push_str(")\n");
        for f in a.findings.iter().filter(|f| {
            f.cluster.as_deref() == Some(p.cluster.as_str())
                && f.kustomization.as_deref() == Some(p.kustomization.as_str())
        }) {
            let _ = writeln!(out, "    {}", finding_line(f));
        }
    }
    // Findings that belong to no listed Kustomization (none today), so that nothing is lost.
    for f in a.findings.iter().filter(|f| {
        !a.paths.iter().any(|p| {
            f.cluster.as_deref() == Some(p.cluster.as_str())
                && f.kustomization.as_deref() == Some(p.kustomization.as_str())
        })
    }) {
        let _ = writeln!(out, "{}", finding_line(f));
    }
    let [info, warnings, errors] = counts(&a.findings);
    let clusters = a
        .paths
        .iter()
        .map(|p| p.cluster.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let _ = writeln!(
        out,
        "audit: {} on {} in {}, {} found ({}, {}), {info} info{}",
        super::plural(a.checks, "check"),
        super::plural(a.paths.len(), "Kustomization"),
        super::plural(clusters, "cluster"),
        super::plural(errors + warnings, "hazard"),
        super::plural(errors, "error"),
        super::plural(warnings, "warning"),
        if a.strict { "" } else { " (--no-strict)" }
    );
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

fn finding_line(f: &Finding) -> String {
    let place = f
        .location
        .as_ref()
        .map_or_else(|| "-".to_string(), |l| OneLine(l).to_string());
    format!("{place}: {}[{}]: {}", f.severity, f.rule, f.message)
}

/// The audit as JSON (documented in `docs/commands/audit.md`).
#[must_use]
pub fn audit_json(a: &Audit) -> Value {
    let [info, warnings, errors] = counts(&a.findings);
    json!({
        "strict": a.strict,
        "checks": a.checks,
        "hazards": errors + warnings,
        "counts": { "error": errors, "warning": warnings, "info": info },
        "paths": a.paths,
        "findings": super::findings::findings_json(&a.findings),
    })
}
