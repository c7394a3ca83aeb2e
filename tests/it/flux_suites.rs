//! Flux's own test suites as fluxsim's conformance suite: `testdata/flux-suites/`, made by
//! `scripts/gen-flux-suites` (`oracle/suites`) from the tests of the Flux modules that
//! `versions.env` pins, every expected result made by Flux's own code. Its README says how,
//! and lists the cases a render cannot express and the ones fluxsim does not pass, each with
//! the reason; the tests here check both lists against what runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fluxsim::conformance::{
    ignore_matcher_match, ignore_pattern_result, parse_vectors, run_vector, VectorOutcome,
};
use fluxsim::oracle::{judge, Verdict};
use fluxsim::render::{ignore_for, render_dir, RepoOptions};
use serde_json::Value;

use crate::common::{copy_dir, crate_path};

fn suites() -> PathBuf {
    crate_path("testdata/flux-suites")
}

fn index() -> Vec<Value> {
    let text = std::fs::read_to_string(suites().join("index.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The case ids a README table lists: the first cell of each row between `<!-- NAME -->`
/// and `<!-- /NAME -->`, in backquotes.
fn readme_ids(name: &str) -> BTreeSet<String> {
    let readme = std::fs::read_to_string(suites().join("README.md")).unwrap();
    let start = readme
        .find(&format!("<!-- {name} -->"))
        .unwrap_or_else(|| panic!("README has no {name} table"));
    let end = readme[start..].find(&format!("<!-- /{name} -->")).unwrap() + start;
    readme[start..end]
        .lines()
        .filter_map(|l| {
            let first = l.split('|').nth(1)?.trim();
            (first.starts_with('`') && first.ends_with('`') && first.len() > 2)
                .then(|| first.trim_matches('`').to_string())
        })
        .collect()
}

/// Renders one case folder as fluxsim would the repository, and judges each of its Flux
/// Kustomizations against what Flux's code made of it (`case.json`): the failures, by case
/// and Kustomization.
fn run_case(dir: &Path) -> Vec<String> {
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
    let repo = tempfile::Builder::new()
        .prefix("fluxsim-suite-")
        .tempdir()
        .unwrap();
    copy_dir(&dir.join("repo"), repo.path());
    let mut opts = RepoOptions {
        strict: case["strict"].as_bool().unwrap(),
        ..RepoOptions::default()
    };
    let mut render = match render_dir(repo.path(), &opts) {
        Ok(r) => r,
        Err(e) => return vec![format!("the render fails: {e}")],
    };
    let expected = case["expected"].as_object().unwrap();
    if let Some(patterns) = case["buildIgnore"].as_str() {
        // `fluxsim build --ignore-paths`: one Kustomization, rendered again with the rules.
        let [(id, _)] = expected.iter().collect::<Vec<_>>()[..] else {
            return vec!["a --ignore-paths case has one Kustomization".into()];
        };
        match ignore_for(&render, &opts, id, patterns) {
            Ok(rules) => opts.build_ignore = rules,
            Err(e) => return vec![format!("--ignore-paths: {e}")],
        }
        render = match render_dir(repo.path(), &opts) {
            Ok(r) => r,
            Err(e) => return vec![format!("the render fails: {e}")],
        };
    }
    let Some(cluster) = render.clusters.iter().find(|c| c.name == "suite") else {
        return vec!["no cluster `suite`".into()];
    };
    let mut failures = Vec::new();
    for (id, result) in expected {
        let Some(k) = cluster.find(id) else {
            failures.push(format!("{id}: not rendered"));
            continue;
        };
        if let Verdict::Different(why) = judge(k, result) {
            failures.push(format!("{id}:\n{why}"));
        }
    }
    failures
}

/// Runs every render case of `suite`: failures by case id.
fn run_render_suite(suite: &str) -> BTreeMap<String, String> {
    let cases: Vec<String> = index()
        .iter()
        .filter(|e| e["suite"] == suite && e["kind"] == "render")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !cases.is_empty(),
        "index.json has no render case of {suite}"
    );
    let mut failed = BTreeMap::new();
    for id in cases {
        let f = run_case(&suites().join(&id));
        if !f.is_empty() {
            failed.insert(id, f.join("\n"));
        }
    }
    failed
}

/// Every case of `suite` passes but those the README lists as known differences, and each
/// of those still fails (a fixed one must leave the list).
fn check_render_suite(suite: &str) {
    let failed = run_render_suite(suite);
    let known: BTreeSet<String> = readme_ids("differences")
        .into_iter()
        .filter(|id| id.starts_with(&format!("{suite}/")))
        .collect();
    let unexpected: Vec<String> = failed
        .iter()
        .filter(|(id, _)| !known.contains(*id))
        .map(|(id, why)| format!("{id}:\n{why}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} case(s) of {suite} differ from Flux:\n{}",
        unexpected.len(),
        unexpected.join("\n\n")
    );
    let fixed: Vec<&String> = known
        .iter()
        .filter(|id| !failed.contains_key(*id))
        .collect();
    assert!(
        fixed.is_empty(),
        "listed as differing in testdata/flux-suites/README.md but passing: {fixed:?}"
    );
}

// fluxcd/pkg/kustomize (FLUXCD_PKG_KUSTOMIZE) kustomize_generator_test.go,
// kustomize_generator_whitebox_test.go, kustomize_varsub_test.go: the generator, the secure
// build and postBuild substitution on the tests' folders and Flux Kustomizations.
#[test]
fn flux_pkg_kustomize_test_cases_render_as_flux_renders_them() {
    check_render_suite("kustomize");
}

// kustomize-controller (KUSTOMIZE_CONTROLLER) internal/controller/*_test.go: the Flux
// Kustomization, var sources and artifact of each controller test, as the controller builds
// and substitutes them (kustomization_controller.go `build`) before the apply.
#[test]
fn kustomize_controller_test_cases_render_as_the_controller_builds_them() {
    check_render_suite("controller");
}

// flux2 (FLUX) cmd/flux/build_kustomization_test.go: each `flux build kustomization` of the
// golden-file tests, rendered as flux build renders (case.json, Flux's code) ...
#[test]
fn flux_build_kustomization_cases_render_as_flux_build_renders_them() {
    check_render_suite("flux2");
}

/// The objects of a YAML stream without kustomize-controller's two ownership labels (which
/// `flux build` adds and fluxsim never does), sorted by kind, namespace and name (fluxsim
/// prints in `kustomize build`'s order, `flux build` in the build's): two of the README's
/// differences.
fn comparable(text: &str) -> Vec<Value> {
    let mut objects: Vec<Value> = crate::common::yaml_objects(text)
        .into_iter()
        .map(|mut o| {
            let md = o["metadata"].as_object_mut().unwrap();
            if let Some(labels) = md.get_mut("labels").and_then(Value::as_object_mut) {
                labels.remove("kustomize.toolkit.fluxcd.io/name");
                labels.remove("kustomize.toolkit.fluxcd.io/namespace");
                if labels.is_empty() {
                    md.remove("labels");
                }
            }
            o
        })
        .collect();
    objects.sort_by_key(|o| {
        [
            &o["kind"],
            &o["metadata"]["namespace"],
            &o["metadata"]["name"],
        ]
        .map(ToString::to_string)
    });
    objects
}

/// The golden objects with the Secret values `flux build` shows as they are (those equal to
/// `raw`'s, fluxsim's `--show-secrets` print) masked as fluxsim masks them by default: the
/// third difference. A value `flux build` masked stays as it masked it.
fn masked_as_fluxsim(mut golden: Vec<Value>, raw: &[Value]) -> Vec<Value> {
    for (g, r) in golden.iter_mut().zip(raw) {
        if g["kind"] != "Secret" {
            continue;
        }
        for (field, mask) in [("data", "KipTRUNSRVQqKg=="), ("stringData", "**SECRET**")] {
            let Some(values) = g.get_mut(field).and_then(Value::as_object_mut) else {
                continue;
            };
            for (k, v) in values.iter_mut() {
                if r.get(field).and_then(|m| m.get(k)) == Some(v) {
                    *v = Value::from(mask);
                }
            }
        }
    }
    golden
}

// ... and `fluxsim build` prints flux2's golden file for it (SOPS data masked as flux build
// masks it), but for the README's three differences (ownership labels, plain Secrets masked
// by default, order).
#[test]
fn fluxsim_build_prints_flux_builds_golden_files() {
    let mut failures = Vec::new();
    for e in index()
        .iter()
        .filter(|e| e["suite"] == "flux2" && e["kind"] == "render")
    {
        let dir = suites().join(e["id"].as_str().unwrap());
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
        let repo = tempfile::tempdir().unwrap();
        copy_dir(&dir.join("repo"), repo.path());
        let path = repo.path().to_str().unwrap();
        let mut args = vec!["build", path, "-k", "flux-system/podinfo", "--no-strict"];
        let patterns = case["buildIgnore"]
            .as_str()
            .unwrap_or_default()
            .replace('\n', ",");
        if !patterns.is_empty() {
            args.extend(["--ignore-paths", &patterns]);
        }
        let out = crate::common::fluxsim(&args);
        args.push("--show-secrets");
        let raw = comparable(&crate::common::fluxsim(&args).stdout);
        let golden = std::fs::read_to_string(dir.join("golden.yaml")).unwrap();
        let ours = comparable(&out.stdout);
        let theirs = masked_as_fluxsim(comparable(&golden), &raw);
        if out.code != 0 || ours != theirs {
            let pretty = |v: &Vec<Value>| serde_json::to_string_pretty(v).unwrap();
            failures.push(format!(
                "{}: fluxsim build (exit {}, {}) differs from golden.yaml:\n{}",
                e["id"],
                out.code,
                out.stderr.trim(),
                similar::TextDiff::from_lines(pretty(&ours), pretty(&theirs))
                    .unified_diff()
                    .header("fluxsim", "flux")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden file(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// fluxcd/pkg/envsubst (FLUXCD_PKG_ENVSUBST) eval_test.go, funcs_test.go,
// parse/parse_test.go: every expression of the tests, evaluated by Flux's envsubst.
#[test]
fn flux_envsubst_test_tables_evaluate_as_flux_evaluates_them() {
    let text = std::fs::read_to_string(suites().join("envsubst.jsonl")).unwrap();
    let vectors = parse_vectors(&text).unwrap();
    assert!(vectors.len() > 100, "{} vectors", vectors.len());
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|v| match run_vector(v) {
            VectorOutcome::Fail { expected, actual } => Some(format!(
                "{}: input {:?}\n  expected {expected}\n  actual   {actual}",
                v.id, v.input
            )),
            VectorOutcome::Pass => None,
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} envsubst vectors differ:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

// fluxcd/pkg/sourceignore (FLUXCD_PKG_SOURCEIGNORE) sourceignore_test.go and
// gitignore/{pattern,matcher}_test.go: each pattern and matcher check of the tests answered
// by fluxsim's matcher, and the tests' tree archived as source-controller archives it.
#[test]
fn flux_sourceignore_tests_match_as_flux_matches_them() {
    let text = std::fs::read_to_string(suites().join("sourceignore.jsonl")).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines() {
        count += 1;
        let v: Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        let patterns: Vec<(String, Vec<String>)> = v["patterns"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["line"].as_str().unwrap().to_string(),
                    strings(&p["domain"]),
                )
            })
            .collect();
        let path = strings(&v["path"]);
        let dir = v["dir"].as_bool().unwrap_or(false);
        match v["kind"].as_str().unwrap() {
            "pattern" => {
                let (line, domain) = &patterns[0];
                let ours = ignore_pattern_result(line, domain, &path, dir);
                if ours != v["result"] {
                    failures.push(format!(
                        "{id}: {line:?} on {path:?}: {ours}, Flux {}",
                        v["result"]
                    ));
                }
            }
            "matcher" => {
                let defaults = v["defaultMatcher"]
                    .as_bool()
                    .unwrap_or(false)
                    .then(|| strings(&v["defaults"]));
                let ours = ignore_matcher_match(&patterns, defaults.as_deref(), &path, dir);
                if Value::Bool(ours) != v["match"] {
                    failures.push(format!(
                        "{id}: {patterns:?} on {path:?}: {ours}, Flux {}",
                        v["match"]
                    ));
                }
            }
            "archive" => {
                let tmp = tempfile::tempdir().unwrap();
                for (name, content) in v["files"].as_object().unwrap() {
                    let p = tmp.path().join(name);
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(p, content.as_str().unwrap()).unwrap();
                }
                let opts = RepoOptions::default();
                let mut tree = fluxsim::render::load_tree(tmp.path(), None, &opts).unwrap();
                if let Some(ignore) = v["ignore"].as_str() {
                    tree = tree.narrowed(ignore).unwrap();
                }
                let ours: Vec<String> = tree
                    .files()
                    .iter()
                    .map(|f| f.to_string_lossy().replace('\\', "/"))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if ours != strings(&v["archived"]) {
                    failures.push(format!("{id}: archived {ours:?}, Flux {}", v["archived"]));
                }
            }
            other => failures.push(format!("{id}: unknown kind {other}")),
        }
    }
    assert!(count > 50, "{count} vectors");
    assert!(
        failures.is_empty(),
        "{} of {count} sourceignore vectors differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// Every case of index.json is in the folder (a render case has its case.json, a vector its
// line), and every case a render cannot express is in the README's table with its reason.
#[test]
fn flux_suites_index_and_readme_list_every_case() {
    let entries = index();
    let limits: BTreeSet<String> = entries
        .iter()
        .filter(|e| e["kind"] == "limit")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        readme_ids("limits"),
        limits,
        "testdata/flux-suites/README.md's limits table and index.json's limits differ"
    );
    for e in &entries {
        let id = e["id"].as_str().unwrap();
        assert!(
            e["from"].as_str().is_some_and(|f| f.starts_with("fluxcd/")),
            "{id}: from"
        );
        if e["kind"] == "render" {
            assert!(
                suites().join(id).join("case.json").is_file(),
                "{id}: no case.json"
            );
        }
    }
}
