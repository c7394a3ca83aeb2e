//! Printing findings (audit, graph): text for people, JSON for programs, SARIF 2.1.0 for
//! code scanning.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::finding::{Finding, Rule, Severity};

/// The SARIF schema URI written into every log.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Counts per severity.
#[must_use]
pub fn counts(findings: &[Finding]) -> [usize; 3] {
    let mut c = [0; 3];
    for f in findings {
        c[f.severity as usize] += 1;
    }
    c
}

/// One line per finding: `file:line:col: severity[ID]: message (cluster, kustomization)`.
#[must_use]
pub fn findings_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let place = f
            .location
            .as_ref()
            .map_or_else(|| "-".to_string(), ToString::to_string);
        let _ = write!(out, "{place}: {}[{}]: {}", f.severity, f.rule, f.message);
        match (&f.cluster, &f.kustomization) {
            (Some(c), Some(k)) => {
                let _ = write!(out, " ({c}, {k})");
            }
            (Some(c), None) => {
                let _ = write!(out, " ({c})");
            }
            (None, Some(k)) => {
                let _ = write!(out, " ({k})");
            }
            (None, None) => {}
        }
        out.push('\n');
    }
    out
}

/// The findings as a JSON array (stable field names; see README).
#[must_use]
pub fn findings_json(findings: &[Finding]) -> Value {
    serde_json::to_value(findings).unwrap_or(Value::Null)
}

/// A SARIF 2.1.0 log with one run of fluxsim: every rule of `rules` in the driver (so code
/// scanning can show help for each), and one result per finding.
#[must_use]
pub fn findings_sarif(rules: &[Rule], findings: &[Finding]) -> Value {
    let rule_index = |id: &str| rules.iter().position(|r| r.id == id);
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut r = json!({
                "ruleId": f.rule,
                "level": f.severity.sarif_level(),
                "message": { "text": sarif_message(f) },
            });
            if let Some(i) = rule_index(f.rule) {
                r["ruleIndex"] = json!(i);
            }
            if let Some(loc) = &f.location {
                let mut region = serde_json::Map::new();
                if let Some(l) = loc.line {
                    region.insert("startLine".into(), json!(l));
                    if let Some(c) = loc.column {
                        region.insert("startColumn".into(), json!(c));
                    }
                }
                let mut phys = json!({
                    "artifactLocation": { "uri": loc.file, "uriBaseId": "%SRCROOT%" },
                });
                if !region.is_empty() {
                    phys["region"] = Value::Object(region);
                }
                r["locations"] = json!([{ "physicalLocation": phys }]);
            }
            r
        })
        .collect();
    let driver_rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "help": { "text": r.help },
                "defaultConfiguration": { "level": r.severity.sarif_level() },
            })
        })
        .collect();
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "fluxsim",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/fluxcd/flux2",
                "rules": driver_rules,
            }},
            "results": results,
        }],
    })
}

fn sarif_message(f: &Finding) -> String {
    match (&f.cluster, &f.kustomization) {
        (Some(c), Some(k)) => format!("{} (cluster {c}, Kustomization {k})", f.message),
        (Some(c), None) => format!("{} (cluster {c})", f.message),
        _ => f.message.clone(),
    }
}

/// Whether any finding is at or above `fail_on`.
#[must_use]
pub fn fails(findings: &[Finding], fail_on: Severity) -> bool {
    findings.iter().any(|f| f.severity >= fail_on)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Location;

    const R: Rule = Rule {
        id: "FS000",
        name: "test-rule",
        severity: Severity::Error,
        summary: "A test rule.",
        help: "Nothing to do.",
    };

    #[test]
    fn sarif_result_points_at_file_line_and_rule() {
        let f = Finding::new(&R, "boom")
            .in_cluster("dev")
            .at(Location::at("apps/x.yaml", 4, 9));
        let s = findings_sarif(&[R], &[f]);
        assert_eq!(s["version"], "2.1.0");
        let r = &s["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "FS000");
        assert_eq!(r["ruleIndex"], 0);
        assert_eq!(r["level"], "error");
        let p = &r["locations"][0]["physicalLocation"];
        assert_eq!(p["artifactLocation"]["uri"], "apps/x.yaml");
        assert_eq!(p["region"]["startLine"], 4);
        assert_eq!(p["region"]["startColumn"], 9);
    }

    #[test]
    fn text_line_names_place_severity_rule_and_owner() {
        let f = Finding::new(&R, "boom")
            .in_cluster("dev")
            .in_kustomization("flux-system/apps")
            .at(Location::at("apps/x.yaml", 4, 9));
        assert_eq!(
            findings_text(&[f]),
            "apps/x.yaml:4:9: error[FS000]: boom (dev, flux-system/apps)\n"
        );
    }

    #[test]
    fn fails_at_or_above_threshold_only() {
        let w = Finding::new(&R, "w").with_severity(Severity::Warning);
        assert!(fails(std::slice::from_ref(&w), Severity::Warning));
        assert!(!fails(&[w], Severity::Error));
    }
}
