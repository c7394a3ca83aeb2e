//! Printing findings (audit, graph): text for people, JSON for programs, SARIF 2.1.0 for
//! code scanning.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use crate::finding::{Finding, Rule};

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

/// One entry per finding: `file:line:col: severity[ID]: message (cluster, kustomization)`,
/// wrapped to the layout's width with the continuation indented.
#[must_use]
pub fn findings_text(findings: &[Finding], layout: super::layout::Layout) -> String {
    findings
        .iter()
        .map(|f| finding_text(f, &f.message, "", layout))
        .collect()
}

/// One finding as [`findings_text`] prints it, with `message` in place of its own and every
/// line after `indent`.
#[must_use]
pub fn finding_text(
    f: &Finding,
    message: &str,
    indent: &str,
    layout: super::layout::Layout,
) -> String {
    // A finding of no file (a cluster missing a Kustomization) starts with its severity.
    let place = f
        .location
        .as_ref()
        .map(|l| format!("{}: ", OneLine(l)))
        .unwrap_or_default();
    let mut text = format!("{place}{}[{}]: {message}", f.severity, f.rule);
    match (&f.cluster, &f.kustomization) {
        (Some(c), Some(k)) => {
            let _ = write!(text, " ({}, {})", OneLine(c), OneLine(k));
        }
        (Some(c), None) => {
            let _ = write!(text, " ({})", OneLine(c));
        }
        (None, Some(k)) => {
            let _ = write!(text, " ({})", OneLine(k));
        }
        (None, None) => {}
    }
    layout.wrap(indent, &text, &format!("{indent}    "))
}

/// The findings as a JSON array (stable field names; see `docs/commands/audit.md`).
#[must_use]
pub fn findings_json(findings: &[Finding]) -> Value {
    let mut v = super::json::camel_keys(serde_json::to_value(findings).unwrap_or(Value::Null));
    if let Some(items) = v.as_array_mut() {
        for f in items {
            super::json::kustomization_refs(f, "kustomization");
        }
    }
    v
}

/// Where fluxsim's own documentation lives (the `informationUri` of its SARIF logs).
pub const INFORMATION_URI: &str = env!("CARGO_PKG_REPOSITORY");

/// A SARIF 2.1.0 log with one run of fluxsim: every rule of `rules` in the driver (so code
/// scanning can show help for each), and one result per finding. `prefix` is where the
/// repository sits in its git work tree (`deploy/`, or empty): code scanning resolves paths
/// from the git root, so each finding's file (relative to the repository) is put under it.
#[must_use]
pub fn findings_sarif(rules: &[Rule], findings: &[Finding], prefix: &str) -> Value {
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
                    "artifactLocation": { "uri": git_relative(prefix, &loc.file), "uriBaseId": "%SRCROOT%" },
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
                "informationUri": INFORMATION_URI,
                "rules": driver_rules,
            }},
            "results": results,
        }],
    })
}

/// `file` (relative to the repository) relative to the git root, given the repository's
/// `prefix` in the work tree.
fn git_relative(prefix: &str, file: &str) -> String {
    let file = file.trim_start_matches("./");
    if prefix.is_empty() || file.is_empty() {
        return file.to_string();
    }
    format!("{}/{file}", prefix.trim_end_matches('/'))
}

/// A valid SARIF log with no results, for a run that could not check anything (exit 2): a
/// code-scanning upload then gets a log rather than an empty file, and the run's
/// `invocations` say why.
#[must_use]
pub fn empty_sarif(rules: &[Rule], error: &str) -> Value {
    let mut v = findings_sarif(rules, &[], "");
    v["runs"][0]["invocations"] = json!([{
        "executionSuccessful": false,
        "toolExecutionNotifications": [{ "level": "error", "message": { "text": error } }],
    }]);
    v
}

fn sarif_message(f: &Finding) -> String {
    match (&f.cluster, &f.kustomization) {
        (Some(c), Some(k)) => format!("{} (cluster {c}, Kustomization {k})", f.message),
        (Some(c), None) => format!("{} (cluster {c})", f.message),
        _ => f.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Severity};

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
        let s = findings_sarif(&[R], &[f], "deploy/fleet/");
        assert_eq!(s["version"], "2.1.0");
        let r = &s["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "FS000");
        assert_eq!(r["ruleIndex"], 0);
        assert_eq!(r["level"], "error");
        let p = &r["locations"][0]["physicalLocation"];
        assert_eq!(p["artifactLocation"]["uri"], "deploy/fleet/apps/x.yaml");
        assert_eq!(p["region"]["startLine"], 4);
        assert_eq!(p["region"]["startColumn"], 9);
    }

    #[test]
    fn a_finding_text_starts_with_its_place_or_with_its_severity() {
        let layout = crate::report::layout::Layout::default();
        let at = Finding::new(&R, "boom")
            .in_cluster("dev")
            .at(Location::at("apps/x.yaml", 4, 9));
        assert_eq!(
            finding_text(&at, "boom", "", layout),
            "apps/x.yaml:4:9: error[FS000]: boom (dev)\n"
        );
        let nowhere = Finding::new(&R, "boom").in_cluster("dev");
        assert_eq!(
            finding_text(&nowhere, "boom", "  ", layout),
            "  error[FS000]: boom (dev)\n"
        );
    }

    #[test]
    fn sarif_information_uri_names_this_project() {
        let s = findings_sarif(&[R], &[], "");
        let uri = s["runs"][0]["tool"]["driver"]["informationUri"]
            .as_str()
            .unwrap();
        assert!(uri.contains("fluxsim"), "{uri}");
    }

    #[test]
    fn sarif_paths_are_relative_to_the_git_root() {
        assert_eq!(git_relative("", "apps/x.yaml"), "apps/x.yaml");
        assert_eq!(
            git_relative("deploy/", "./apps/x.yaml"),
            "deploy/apps/x.yaml"
        );
    }

    #[test]
    fn empty_sarif_log_is_valid_and_says_why() {
        let s = empty_sarif(&[R], "no cluster found");
        assert_eq!(s["runs"][0]["results"], json!([]));
        assert_eq!(s["runs"][0]["invocations"][0]["executionSuccessful"], false);
    }

    #[test]
    fn text_line_names_place_severity_rule_and_owner() {
        let f = Finding::new(&R, "boom")
            .in_cluster("dev")
            .in_kustomization("flux-system/apps")
            .at(Location::at("apps/x.yaml", 4, 9));
        assert_eq!(
            findings_text(&[f], crate::report::layout::Layout::default()),
            "apps/x.yaml:4:9: error[FS000]: boom (dev, flux-system/apps)\n"
        );
    }
}
