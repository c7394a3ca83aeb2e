//! `fluxsim upgrade`: what breaks when each cluster moves to newer Flux and Kubernetes
//! releases, on testdata/upgrade/flux-2-3 (a Flux v2.3 cluster on Kubernetes 1.25, see its
//! README): each removed API at its file and line with its replacement and, where the move is
//! mechanical, its patch; a render that differs at the target; a repository CRD's deprecated
//! version.

use serde_json::Value;

use crate::common::{crate_path, fluxsim_in, repo_from};

const FIXTURE: &str = "testdata/upgrade/flux-2-3";

/// The findings of `upgrade ARGS -o json` on the fixture, and the document.
fn upgrade(args: &[&str]) -> (i32, Value) {
    let repo = repo_from(FIXTURE);
    let mut all = vec!["upgrade", "--helm", "-o", "json"];
    all.extend(args);
    let out = fluxsim_in(Some(repo.path()), &all);
    assert!(out.code <= 1, "{all:?}: {}", out.stderr);
    (out.code, out.json())
}

/// The finding of `rule` at `file:line`.
fn at<'v>(json: &'v Value, rule: &str, file: &str, line: u64) -> &'v Value {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["rule"] == rule && f["location"]["file"] == file && f["location"]["line"] == line
        })
        .unwrap_or_else(|| {
            panic!(
                "no {rule} at {file}:{line}:\n{}",
                serde_json::to_string_pretty(&json["findings"]).unwrap()
            )
        })
}

/// The values of `role` among a finding's related things.
fn related<'v>(f: &'v Value, role: &str) -> Vec<&'v str> {
    f["related"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["role"] == role)
        .filter_map(|r| r["value"].as_str())
        .collect()
}

// Flux's CRDs (kubeschema's embedded history, scripts/gen-flux-crds): source-controller stops
// serving v1beta2 in Flux v2.8 and helm-controller v2beta1 in v2.7; k8s.io/api's lifecycle
// tags (scripts/gen-kube-lifecycle): autoscaling/v2beta2 removed in 1.26 for autoscaling/v2.
#[test]
fn upgrade_names_each_api_the_target_removes_at_its_line_with_the_replacement_and_patch() {
    let (code, json) = upgrade(&[]);
    assert_eq!(code, 1, "errors fail the upgrade");
    assert_eq!(json["kind"], "UpgradeReport");
    let c = &json["clusters"][0];
    assert_eq!(c["from"]["flux"]["version"], "v2.3");
    assert_eq!(c["from"]["kubernetes"]["version"], "1.25");
    assert_eq!(c["to"]["flux"], "v2.9");
    assert_eq!(c["to"]["kubernetes"], "1.36");
    for (file, line, new) in [
        ("apps/sources.yaml", 1, "source.toolkit.fluxcd.io/v1"),
        ("apps/sources.yaml", 10, "source.toolkit.fluxcd.io/v1"),
        ("apps/hpa.yaml", 1, "autoscaling/v2"),
        ("apps/helmrelease.yaml", 28, "helm.toolkit.fluxcd.io/v2"),
    ] {
        let f = at(&json, "FS401", file, line);
        assert_eq!(f["severity"], "error");
        assert_eq!(related(f, "replacement"), [new], "{file}:{line}");
        let patch = related(f, "patch");
        assert_eq!(
            patch.len(),
            1,
            "{file}:{line}: a mechanical move has its patch"
        );
        let old = patch[0].lines().next().unwrap();
        assert!(old.starts_with("-apiVersion: "), "{patch:?}");
        assert_eq!(
            patch[0].lines().nth(1).unwrap(),
            format!("+apiVersion: {new}")
        );
        // The `-` line is the file's own line.
        let text = std::fs::read_to_string(crate_path(&format!("{FIXTURE}/{file}"))).unwrap();
        assert_eq!(text.lines().nth(line as usize - 1).unwrap(), &old[1..]);
    }
    // v2 took patchesStrategicMerge out of the post-renderer: not mechanical, no patch, and
    // the field that stops it is named.
    let hr = at(&json, "FS401", "apps/helmrelease.yaml", 1);
    assert!(related(hr, "patch").is_empty());
    let msg = hr["message"].as_str().unwrap();
    assert!(
        msg.contains("not mechanical") && msg.contains("patchesStrategicMerge"),
        "{msg}"
    );
    assert!(msg.contains("Flux v2.7 removes it"), "{msg}");
    let hpa = at(&json, "FS401", "apps/hpa.yaml", 1)["message"]
        .as_str()
        .unwrap();
    assert!(hpa.contains("Kubernetes 1.26 removes it"), "{hpa}");
}

// kustomize-controller v1.9.0 (Flux v2.9) made StrictPostBuildSubstitutions the default
// (internal/features/features.go): `settings`' `${OPTIONAL_SUFFIX}` without a default is
// emptied on Flux v2.3 and fails on v2.9. The `gated` chart sets a field from Kubernetes 1.30
// on (`semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version`).
#[test]
fn upgrade_renders_again_at_the_target_and_reports_what_renders_differently() {
    let (_, json) = upgrade(&[]);
    let strict = at(&json, "FS403", "clusters/dev/apps.yaml", 33);
    assert_eq!(
        strict["severity"], "error",
        "a failure at the target is an error"
    );
    assert_eq!(strict["kustomization"]["name"], "settings");
    let msg = strict["message"].as_str().unwrap();
    assert!(
        msg.contains("fails at Flux v2.9") && msg.contains("OPTIONAL_SUFFIX"),
        "{msg}"
    );
    let gated = at(&json, "FS403", "apps/helmrelease.yaml", 31);
    assert_eq!(gated["severity"], "warning");
    assert_eq!(gated["kustomization"]["helmRelease"]["name"], "gated");
    assert!(gated["message"]
        .as_str()
        .unwrap()
        .contains("PodDisruptionBudget"));
    // The podinfo chart is fetched from its repository: not compared, and said.
    assert_eq!(json["differ"], 2);
    let nc = json["notCompared"].as_array().unwrap();
    assert_eq!(nc.len(), 1, "{nc:?}");
    assert_eq!(nc[0]["kustomization"]["helmRelease"]["name"], "podinfo");
}

// apiextensions.k8s.io/v1 CustomResourceDefinitionVersion: `deprecated` and
// `deprecationWarning` (the API server warns on every request in that version).
#[test]
fn a_repository_crd_s_deprecated_version_is_a_warning_at_the_object() {
    let (_, json) = upgrade(&[]);
    let f = at(&json, "FS404", "crds/widgets.yaml", 41);
    assert_eq!(f["severity"], "warning");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("use example.com/v1") && msg.contains("move it to `example.com/v1`"),
        "{msg}"
    );
}

#[test]
fn upgrading_to_the_versions_the_cluster_runs_removes_nothing_and_renders_the_same() {
    let (_, json) = upgrade(&["--flux", "2.3", "--kube", "1.25"]);
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(!rules.contains(&"FS401"), "{rules:?}");
    assert!(!rules.contains(&"FS403"), "{rules:?}");
    assert_eq!(json["differ"], 0);
    assert!(json["compared"].as_u64().unwrap() >= 5);
}

#[test]
fn the_upgrade_report_conforms_to_its_schema_and_sarif_lists_its_rules() {
    let (_, json) = upgrade(&[]);
    let path = crate_path("docs/schemas/upgrade.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let repo = repo_from(FIXTURE);
    let out = fluxsim_in(Some(repo.path()), &["upgrade", "-o", "sarif"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let sarif = out.json();
    let rules: Vec<&str> = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(rules, ["FS401", "FS402", "FS403", "FS404"]);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["ruleId"] == "FS401"));
}

#[test]
fn the_text_report_leads_with_the_verdict_and_shows_the_patches() {
    let repo = repo_from(FIXTURE);
    let out = fluxsim_in(Some(repo.path()), &["upgrade", "--helm"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.starts_with("upgrade: FAIL "), "{text}");
    assert!(text.contains("dev: Flux v2.3 → v2.9"), "{text}");
    let patches = &text[text
        .find("mechanical conversions")
        .expect("a patch section")..];
    assert!(patches.contains("  apps/hpa.yaml:1:1\n    -apiVersion: autoscaling/v2beta2\n    +apiVersion: autoscaling/v2\n"), "{patches}");
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
}

#[test]
fn an_unknown_target_is_a_usage_error_naming_the_releases_known() {
    let out = fluxsim_in(None, &["upgrade", "--flux", "3.1", FIXTURE]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("v2.0") && out.stderr.contains("v2.9"),
        "{}",
        out.stderr
    );
    let out = fluxsim_in(None, &["upgrade", "--kube", "1.12", FIXTURE]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("1.36"), "{}", out.stderr);
}

#[test]
fn diff_upgrade_reports_only_the_upgrade_findings_head_brings() {
    let repo = repo_from(FIXTURE);
    let hpa = repo.path().join("apps/hpa.yaml");
    let text = std::fs::read_to_string(&hpa).unwrap();
    std::fs::write(
        &hpa,
        format!(
            "{text}---\n{}",
            text.replace("name: web\n  namespace", "name: api\n  namespace")
        ),
    )
    .unwrap();
    let out = fluxsim_in(
        Some(repo.path()),
        &["diff", "--base", "HEAD", "--upgrade", "-o", "json"],
    );
    assert!(out.code <= 1, "{}", out.stderr);
    let json = out.json();
    let upgrade = json["upgrade"]
        .as_array()
        .expect("--upgrade adds `upgrade`");
    assert_eq!(upgrade.len(), 1, "only the new HPA: {upgrade:#?}");
    assert_eq!(upgrade[0]["rule"], "FS401");
    assert!(upgrade[0]["related"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["role"] == "object" && r["value"].as_str().unwrap().contains("/api")));
    assert_eq!(out.code, 1, "an error head brings fails the diff");
    // Without the flag, no `upgrade` key.
    let plain = fluxsim_in(Some(repo.path()), &["diff", "--base", "HEAD", "-o", "json"]);
    assert!(plain.json().get("upgrade").is_none());
}

// FS402: the target still serves the version and deprecates it (k8s.io/api: autoscaling/
// v2beta2 deprecated in 1.23, removed in 1.26; Kubernetes 1.25 serves it).
#[test]
fn a_version_the_target_deprecates_is_a_warning_naming_its_removal() {
    let (_, json) = upgrade(&["--flux", "2.3", "--kube", "1.25"]);
    let f = at(&json, "FS402", "apps/hpa.yaml", 1);
    assert_eq!(f["severity"], "warning");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("since 1.23") && msg.contains("removed in 1.26"),
        "{msg}"
    );
}
