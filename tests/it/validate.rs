//! `fluxsim validate` end to end on `testdata/validate/fleet`: two clusters on the same
//! templates, `clean` (valid values) and `broken` (a var that makes `replicas` a string, a
//! value outside a CRD's enum, a typo'd Service field). The planted problems are reported at
//! the line of the field in the template, the clean cluster gives nothing above info, and
//! what has no schema is reported as not validated (FS300), never as valid.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{commit_all, fluxsim, fluxsim_in, repo_from};

struct Run {
    _repo: tempfile::TempDir,
    code: i32,
    json: Value,
}

fn fleet() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let repo = repo_from("testdata/validate/fleet");
        let out = fluxsim(&[
            "validate",
            repo.path().to_str().unwrap(),
            "--format",
            "json",
        ]);
        Run {
            code: out.code,
            json: out.json(),
            _repo: repo,
        }
    })
}

/// (rule, file:line, cluster) of every finding at `severity`.
fn places(json: &Value, severity: &str) -> BTreeSet<(String, String, String)> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == severity)
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}",
                    f["location"]["file"].as_str().unwrap_or("-"),
                    f["location"]["line"]
                ),
                f["cluster"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn validate_reports_each_planted_problem_at_the_line_of_its_field() {
    let run = fleet();
    let s = |a: &str, b: &str| (a.to_string(), b.to_string(), "broken".to_string());
    assert_eq!(
        places(&run.json, "error"),
        BTreeSet::from([
            // `replicas: ${REPLICAS}` with REPLICAS=two: a string after the YAML re-read.
            s("FS301", "apps/base/web.yaml:7"),
            // `size: ${SIZE}` with SIZE=huge: outside the CRD's enum.
            s("FS301", "apps/base/gadget.yaml:7"),
            // `protocl: TCP`: server-side apply rejects an undeclared field.
            s("FS302", "apps/broken/service.yaml:12"),
            // `retryIntervall` on a Flux Kustomization: Flux's own CRD, embedded.
            s("FS302", "clusters/broken/flux.yaml:49"),
        ]),
        "{:#}",
        run.json
    );
    assert_eq!(run.code, 1, "errors fail the run");
    let messages: Vec<&str> = run.json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.ends_with(".spec.replicas: expected numeric (int or float), got string")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Unsupported value: \"huge\"")),
        "{messages:?}"
    );
}

#[test]
fn validate_clean_cluster_has_no_finding_above_info() {
    let run = fleet();
    let noisy: Vec<&Value> = run.json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["cluster"] == "clean" && f["severity"] != "info")
        .collect();
    assert!(noisy.is_empty(), "{noisy:#?}");
    assert_eq!(run.json["kubeVersion"], "1.36.3");
}

#[test]
fn validate_reports_kinds_without_schema_as_not_validated() {
    let run = fleet();
    let fs300: Vec<&str> = run.json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS300")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        fs300.iter().any(|m| m.contains("ExternalSecret")),
        "{fs300:?}"
    );
    assert!(
        !fs300
            .iter()
            .any(|m| m.contains("GitRepository") || m.contains("Kustomization")),
        "Flux's kinds are validated against the embedded CRDs: {fs300:?}"
    );
    assert!(run.json["unchecked"].as_u64().unwrap() > 0);
}

#[test]
fn validate_without_the_crd_in_the_render_leaves_the_custom_resource_unchecked_until_schema_dir_gives_it(
) {
    let repo = repo_from("testdata/validate/fleet");
    let crd = repo.path().join("crds/gadgets.yaml");
    let schemas = tempfile::tempdir().unwrap();
    std::fs::copy(&crd, schemas.path().join("gadgets.yaml")).unwrap();
    std::fs::write(repo.path().join("crds/gadgets.yaml"), "# moved out\n").unwrap();
    std::fs::write(
        repo.path().join("crds/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
    )
    .unwrap();
    commit_all(repo.path(), "no CRD");
    let dir = repo.path().to_str().unwrap();
    let without = fluxsim(&["validate", dir, "--format", "json"]).json();
    assert!(
        !places(&without, "error")
            .iter()
            .any(|(_, at, _)| at.starts_with("apps/base/gadget.yaml")),
        "{without:#}"
    );
    assert!(
        without["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "FS300" && f["message"].as_str().unwrap().contains("Gadget")),
        "{without:#}"
    );
    let with = fluxsim(&[
        "validate",
        dir,
        "--format",
        "json",
        "--schema-dir",
        schemas.path().to_str().unwrap(),
    ])
    .json();
    assert!(
        places(&with, "error").contains(&(
            "FS301".to_string(),
            "apps/base/gadget.yaml:7".to_string(),
            "broken".to_string()
        )),
        "{with:#}"
    );
}

#[test]
fn validate_schema_dirs_of_fluxsim_toml_are_read_inside_the_repository_only() {
    let repo = repo_from("testdata/validate/fleet");
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[validate]\nschema_dirs = [\"../outside\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "outside");
    let out = fluxsim(&["validate", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("fluxsim.toml")
            && out.stderr.contains("not a folder of the repository"),
        "{}",
        out.stderr
    );
}

#[test]
fn validate_kube_version_is_one_with_embedded_schemas() {
    let run = fluxsim(&["validate", "--kube-version", "1.20", "."]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("1.34, 1.35, 1.36"), "{}", run.stderr);
    let repo = repo_from("testdata/validate/fleet");
    let older = fluxsim_in(
        Some(repo.path()),
        &["validate", "--kube-version", "1.34", "--format", "json"],
    )
    .json();
    assert_eq!(older["kubeVersion"], "1.34.4");
}

#[test]
fn validate_schema_file_that_is_not_yaml_names_the_file_and_line() {
    let repo = repo_from("testdata/validate/fleet");
    let schemas = tempfile::tempdir().unwrap();
    std::fs::write(
        schemas.path().join("bad.yaml"),
        "apiVersion: v1\nkind: ConfigMap\n---\nkey: [unclosed\n",
    )
    .unwrap();
    let out = fluxsim(&[
        "validate",
        repo.path().to_str().unwrap(),
        "--schema-dir",
        schemas.path().to_str().unwrap(),
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bad.yaml:4"), "{}", out.stderr);
}

#[test]
fn validate_sarif_carries_the_rules_and_the_places() {
    let repo = repo_from("testdata/validate/fleet");
    let out = fluxsim(&[
        "validate",
        repo.path().to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let sarif = out.json();
    let run = &sarif["runs"][0];
    let rules: BTreeSet<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains("FS301") && rules.contains("FS310"),
        "{rules:?}"
    );
    let places: BTreeSet<String> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "error")
        .map(|r| {
            let l = &r["locations"][0]["physicalLocation"];
            format!(
                "{}:{}",
                l["artifactLocation"]["uri"].as_str().unwrap(),
                l["region"]["startLine"]
            )
        })
        .collect();
    assert!(places.contains("apps/base/web.yaml:7"), "{places:?}");
}

#[test]
fn render_validate_adds_the_findings_and_fails_on_errors_without_changing_digests() {
    let repo = repo_from("testdata/validate/fleet");
    let dir = repo.path().to_str().unwrap();
    let plain = fluxsim(&["render", dir, "--format", "json"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    let checked = fluxsim(&["render", dir, "--format", "json", "--validate"]);
    assert_eq!(checked.code, 1, "{checked:?}");
    let (plain, checked) = (plain.json(), checked.json());
    assert_eq!(
        checked["validation"]["counts"]["error"], 4,
        "{:#}",
        checked["validation"]
    );
    assert!(plain.get("validation").is_none());
    let digests = |j: &Value| -> Vec<String> {
        j["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["kustomizations"].as_array().unwrap())
            .map(|k| k["sha256"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(digests(&plain).len(), 6);
    assert_eq!(digests(&plain), digests(&checked));
    let text = fluxsim(&["render", dir, "--validate"]);
    assert!(
        text.stdout.contains("apps/base/web.yaml:7:1: error[FS301]"),
        "{}",
        text.stdout
    );
}

fn edit(repo: &std::path::Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// (rule, cluster, object) of a list of findings in JSON.
fn rules(findings: &Value) -> BTreeSet<(String, String, String)> {
    findings
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {findings:#}"))
        .iter()
        .map(|f| {
            let object = f["related"]
                .as_array()
                .and_then(|r| r.iter().find(|r| r["role"] == "object"))
                .map_or(String::new(), |r| r["value"].as_str().unwrap().to_string());
            (
                f["rule"].as_str().unwrap().to_string(),
                f["cluster"].as_str().unwrap().to_string(),
                object,
            )
        })
        .collect()
}

#[test]
fn diff_reports_exactly_the_one_immutable_field_change_and_prove_fails_on_it() {
    let repo = repo_from("testdata/validate/fleet");
    // A Deployment's selector is immutable (apps/validation ValidateDeploymentUpdate).
    edit(
        repo.path(),
        "apps/base/web.yaml",
        "      app: web\n  template",
        "      app: web-v2\n  template",
    );
    edit(
        repo.path(),
        "apps/base/web.yaml",
        "        app: web\n",
        "        app: web-v2\n",
    );
    let dir = repo.path();
    let diff = fluxsim_in(Some(dir), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    let json = diff.json();
    assert_eq!(
        rules(&json["applyHazards"]),
        BTreeSet::from([
            (
                "FS310".to_string(),
                "broken".to_string(),
                "Deployment/default/web".to_string()
            ),
            (
                "FS310".to_string(),
                "clean".to_string(),
                "Deployment/default/web".to_string()
            ),
        ]),
        "{:#}",
        json["applyHazards"]
    );
    assert!(
        json.get("validation").is_none(),
        "no --validate, no validation"
    );
    let text = fluxsim_in(Some(dir), &["diff", "--base", "HEAD"]);
    assert!(text.stdout.contains("FS310"), "{}", text.stdout);
    let prove = fluxsim_in(
        Some(dir),
        &[
            "prove", "--base", "HEAD", "--expect", "changed", "--format", "json",
        ],
    );
    assert_eq!(prove.code, 1, "{prove:?}");
    assert_eq!(prove.json()["passed"], false);
    assert_eq!(
        prove.json()["expectationMet"],
        true,
        "it fails on the hazard alone"
    );
    // The same change without the selector: no hazard, and the proof holds.
    let calm = repo_from("testdata/validate/fleet");
    edit(
        calm.path(),
        "apps/base/web.yaml",
        "image: nginx:1.27",
        "image: nginx:1.28",
    );
    let calm_diff = fluxsim_in(
        Some(calm.path()),
        &["diff", "--base", "HEAD", "--format", "json"],
    );
    assert_eq!(rules(&calm_diff.json()["applyHazards"]), BTreeSet::new());
    let calm_prove = fluxsim_in(
        Some(calm.path()),
        &[
            "prove", "--base", "HEAD", "--expect", "changed", "--format", "json",
        ],
    );
    assert_eq!(calm_prove.json()["passed"], true, "{calm_prove:?}");
}

#[test]
fn diff_validate_reports_only_the_findings_head_brings_unless_all_findings() {
    let repo = repo_from("testdata/validate/fleet");
    // Base already has four errors in `broken`; head adds one in `clean`.
    edit(
        repo.path(),
        "clusters/clean/vars.yaml",
        "SIZE: small",
        "SIZE: tiny",
    );
    let dir = repo.path();
    let new = fluxsim_in(
        Some(dir),
        &["diff", "--base", "HEAD", "--validate", "--format", "json"],
    )
    .json();
    let errors = |v: &Value| -> BTreeSet<(String, String, String)> {
        let only: Vec<Value> = v
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .cloned()
            .collect();
        rules(&Value::Array(only))
    };
    assert_eq!(
        errors(&new["validation"]),
        BTreeSet::from([(
            "FS301".to_string(),
            "clean".to_string(),
            "Gadget/default/gadget".to_string()
        )]),
        "{:#}",
        new["validation"]
    );
    let all = fluxsim_in(
        Some(dir),
        &[
            "diff",
            "--base",
            "HEAD",
            "--validate",
            "--all-findings",
            "--format",
            "json",
        ],
    )
    .json();
    assert_eq!(
        errors(&all["validation"]).len(),
        5,
        "{:#}",
        all["validation"]
    );
}
