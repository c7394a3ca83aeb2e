//! One JSON convention (`crates/consumers/src/report/json.rs`): every command's `--format
//! json` is checked against its published schema (`docs/schemas/<command>.schema.json`, JSON
//! Schema 2020-12, `additionalProperties: false` throughout), on repositories of every shape,
//! with changes, failures and external Kustomizations; and no key is snake_case.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{commit_all, crate_path, fluxsim_in, repo_from};

fn validator(schema: &str) -> jsonschema::Validator {
    let path = crate_path(&format!("docs/schemas/{schema}.schema.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{}: the schema does not compile: {e}", path.display()))
}

/// Every key of `v`, at any depth, except those of a map whose keys are the repository's
/// (a render's `vars`, by var name; a change's values `before` and `after`).
fn keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                if !["vars", "before", "after"].contains(&k.as_str()) {
                    keys(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

/// `fluxsim ARGS -o json` in `repo` conforms to `schema`, is that document, and its keys
/// are camelCase.
fn conforms(repo: &Path, args: &[&str], schema: &str, kind: &str) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = fluxsim_in(Some(repo), &all);
    assert!(out.code <= 1, "{all:?}: {}", out.stderr);
    let json = out.json();
    let errors: Vec<String> = validator(schema)
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{all:?} in {}: {errors:#?}",
        repo.display()
    );
    assert_eq!(json["schemaVersion"], 1, "{all:?}");
    assert_eq!(json["kind"], kind, "{all:?}");
    let mut all_keys = Vec::new();
    keys(&json, &mut all_keys);
    for k in all_keys {
        assert!(
            !k.contains('_') && !k.contains('-') && !k.starts_with(|c: char| c.is_uppercase()),
            "{all:?}: `{k}` is not camelCase"
        );
    }
}

const SHAPES: [&str; 11] = [
    "testdata/fleet",
    "testdata/shapes/env-overlays",
    "testdata/shapes/oci-fleet",
    "testdata/shapes/bootstrap-helmfile",
    "testdata/bad/missing-path",
    "testdata/bad/external-sources",
    "testdata/graph/crds",
    "testdata/operator-fleet",
    "testdata/resourcesets",
    // Kustomizations that need the network: `hides`, what their own files declare.
    "testdata/network/child-url",
    "testdata/network/hidden",
];

#[test]
fn every_report_conforms_to_its_schema_on_every_shape() {
    for shape in SHAPES {
        let repo = repo_from(shape);
        let r = repo.path();
        conforms(r, &["render"], "render", "RenderReport");
        conforms(r, &["audit"], "audit", "AuditReport");
        conforms(r, &["graph"], "graph", "GraphReport");
        conforms(r, &["images"], "images", "ImagesReport");
        conforms(r, &["compare"], "compare", "CompareReport");
        conforms(r, &["validate"], "validate", "ValidateReport");
        conforms(r, &["render", "--validate"], "render", "RenderReport");
    }
}

/// `compare` with a cluster whose root fails: its failures and the rows below the root
/// (`below`) conform too.
#[test]
fn a_comparison_with_a_failed_cluster_root_conforms() {
    let repo = repo_from("testdata/clusters/named-folders");
    let file = repo.path().join("kubernetes/storage/kustomization.yaml");
    let text = fs::read_to_string(&file).unwrap() + "  - missing.yaml\n";
    fs::write(&file, text).unwrap();
    commit_all(repo.path(), "storage's root breaks");
    conforms(repo.path(), &["compare"], "compare", "CompareReport");
}

/// A Helm release's entry (`--helm`) and a ResourceSet's entry name what they are: the
/// render keeps the whole entry id as `name` and adds `helmRelease` / `resourceSet`; a
/// document that names the Kustomization (`images`) splits it.
#[test]
fn release_and_resourceset_entries_say_what_they_are() {
    let fleet = repo_from("testdata/fleet");
    conforms(
        fleet.path(),
        &["render", "--helm"],
        "render",
        "RenderReport",
    );
    conforms(
        fleet.path(),
        &["images", "--helm"],
        "images",
        "ImagesReport",
    );
    let json = fluxsim_in(Some(fleet.path()), &["render", "--helm", "-o", "json"]).json();
    let release = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().contains("/helm/"))
        .expect("a release entry");
    let name = release["name"].as_str().unwrap();
    let (_, rest) = name.split_once("/helm/").unwrap();
    assert_eq!(
        format!(
            "{}/{}",
            release["helmRelease"]["namespace"].as_str().unwrap(),
            release["helmRelease"]["name"].as_str().unwrap()
        ),
        rest
    );
    assert!(release.get("resourceSet").is_none());

    let ops = repo_from("testdata/resourcesets");
    let json = fluxsim_in(Some(ops.path()), &["render", "-o", "json"]).json();
    let entries: Vec<&Value> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .filter(|k| k["name"].as_str().unwrap().contains("/rset/"))
        .collect();
    assert!(
        !entries.is_empty(),
        "testdata/resourcesets has ResourceSets"
    );
    for e in entries {
        let (_, rset) = e["name"].as_str().unwrap().split_once("/rset/").unwrap();
        let said = format!(
            "{}/{}",
            e["resourceSet"]["namespace"].as_str().unwrap(),
            e["resourceSet"]["name"].as_str().unwrap()
        );
        assert_eq!(said, rset);
        assert!(e.get("helmRelease").is_none());
    }
}

/// The substitution hazards (`--audit`) and cold-start findings (`--graph`) a change brings
/// conform too: a `${A:+x}` is one.
#[test]
fn audited_diffs_conform_to_their_schemas() {
    let repo = repo_from("testdata/fleet");
    let r = repo.path();
    let path = r.join("apps/wave-2/web/deployment.yaml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replacen("value: ${TIMEZONE}", "value: ${TIMEZONE:+UTC}", 1),
    )
    .unwrap();
    conforms(
        r,
        &["diff", "--base", "HEAD", "--audit"],
        "diff",
        "DiffReport",
    );
    conforms(
        r,
        &["diff", "--base", "HEAD", "--audit", "--graph"],
        "diff",
        "DiffReport",
    );
    conforms(
        r,
        &[
            "prove", "--base", "HEAD", "--expect", "any", "--audit", "--graph",
        ],
        "prove",
        "ProveReport",
    );
    let audit = fluxsim_in(
        Some(r),
        &["diff", "--base", "HEAD", "--audit", "-o", "json"],
    )
    .json();
    assert!(!audit["audit"].as_array().unwrap().is_empty(), "{audit:#}");
}

#[test]
fn diffs_conform_to_their_schemas_with_changes_failures_and_revisions() {
    let repo = repo_from("testdata/fleet");
    let r = repo.path();
    let edit = |file: &str, from: &str, to: &str| {
        let path = r.join(file);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}");
        fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    edit(
        "apps/wave-1/orders/deployment.yaml",
        "ORDERS_REPLICAS:=2",
        "ORDERS_REPLICAS:=3",
    );
    conforms(r, &["diff", "--base", "HEAD"], "diff", "DiffReport");
    conforms(
        r,
        &["prove", "--base", "HEAD", "--expect", "any"],
        "prove",
        "ProveReport",
    );
    // The review's additions and the change's findings (`--validate`) conform too.
    conforms(
        r,
        &["diff", "--base", "HEAD", "--validate", "--all-findings"],
        "diff",
        "DiffReport",
    );
    conforms(
        r,
        &["prove", "--base", "HEAD", "--expect", "any", "--validate"],
        "prove",
        "ProveReport",
    );
    let json = fluxsim_in(Some(r), &["diff", "--base", "HEAD", "-o", "json"]).json();
    assert!(json["review"]["title"].is_string(), "{json:#}");
    assert!(json["applyHazards"].is_array(), "{json:#}");
    let object = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .flat_map(|k| k["objects"].as_array().unwrap())
        .next()
        .expect("a changed object");
    assert_eq!(object["changes"][0]["op"], "changed", "{object:#}");
    commit_all(r, "scale orders");
    conforms(
        r,
        &["images", "--diff", "--base", "HEAD~1", "--head", "HEAD"],
        "images-diff",
        "ImagesDiffReport",
    );
    // The revisions as programs read them: a name and a commit; the work tree has neither.
    let head = git_commit(r, "HEAD");
    let json = fluxsim_in(Some(r), &["diff", "--base", "HEAD~1", "-o", "json"]).json();
    assert_eq!(json["base"]["ref"], "HEAD~1");
    assert_eq!(json["base"]["commit"], git_commit(r, "HEAD~1"));
    assert_eq!(json["head"]["workTree"], true);
    let json = fluxsim_in(
        Some(r),
        &["diff", "--base", "HEAD~1", "--head", "HEAD", "-o", "json"],
    )
    .json();
    assert_eq!(json["head"]["ref"], "HEAD");
    assert_eq!(json["head"]["commit"], head);
    // A Kustomization named as {namespace, name}, its cluster as `name`.
    let changed: Vec<&Value> = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["change"] == "changed")
        .collect();
    assert_eq!(
        changed[0]["kustomization"],
        serde_json::json!({"namespace": "flux-system", "name": "apps-wave-1"})
    );
    assert_eq!(json["clusters"][0]["name"], "dev");
    // A parent that fails in head: failures, not compared, blind spots conform too.
    edit("clusters/base/apps.yaml", "interval: ", "interval: [");
    conforms(r, &["diff", "--base", "HEAD"], "diff", "DiffReport");
    conforms(
        r,
        &["prove", "--base", "HEAD", "--expect", "any"],
        "prove",
        "ProveReport",
    );
}

fn git_commit(repo: &Path, rev: &str) -> String {
    crate::common::git(repo, &["rev-parse", rev])
        .trim()
        .to_string()
}

#[test]
fn a_schema_rejects_a_document_that_breaks_the_convention() {
    // So that the passes above mean something: a snake_case key, a Kustomization as a
    // string, a missing schemaVersion are each refused.
    let repo = repo_from("testdata/fleet");
    let json = fluxsim_in(Some(repo.path()), &["images", "-o", "json"]).json();
    let v = validator("images");
    assert!(v.is_valid(&json));
    let mut snake = json.clone();
    snake["clusters"][0]["not_compared"] = Value::from(0);
    assert!(!v.is_valid(&snake));
    let mut flat = json.clone();
    flat["clusters"][0]["kustomizations"][0]["kustomization"] = Value::from("flux-system/apps");
    assert!(!v.is_valid(&flat));
    let mut unversioned = json;
    unversioned.as_object_mut().unwrap().remove("schemaVersion");
    assert!(!v.is_valid(&unversioned));
}

#[test]
fn a_rename_conforms_to_the_diff_and_prove_schemas_naming_both_entries() {
    let repo = repo_from("testdata/rename");
    let r = repo.path();
    let path = r.join("clusters/prod/apps.yaml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replacen("name: openspeedtest", "name: speedtest", 1),
    )
    .unwrap();
    conforms(r, &["diff", "--base", "HEAD"], "diff", "DiffReport");
    conforms(
        r,
        &["prove", "--base", "HEAD", "--expect", "any"],
        "prove",
        "ProveReport",
    );
    let json = fluxsim_in(Some(r), &["diff", "--base", "HEAD", "-o", "json"]).json();
    let entry = |name: &str| {
        json["clusters"][0]["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kustomization"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {json:#}"))
            .clone()
    };
    let (old, new) = (entry("openspeedtest"), entry("speedtest"));
    // The outcomes stay the diff's; the rename is what is added.
    assert_eq!(
        (&old["outcome"], &new["outcome"]),
        (&"removed".into(), &"added".into())
    );
    assert_eq!(old["renamedTo"]["name"], "speedtest", "{old:#}");
    assert_eq!(new["renamedFrom"]["name"], "openspeedtest", "{new:#}");
}
