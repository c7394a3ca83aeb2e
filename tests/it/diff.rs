//! `fluxsim diff`, `compare` and `prove` on copies of `testdata/fleet` in throw-away git
//! repositories.

// The shared harness serves several test crates; this one uses part of it.
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::common::{commit_all, fluxsim_in, git, read_tree, repo_from};
use serde_json::Value;

fn run(repo: &Path, args: &[&str]) -> crate::common::Output {
    fluxsim_in(Some(repo), args)
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The (cluster, Kustomization, change) of every non-identical artifact in a diff's JSON.
fn changes(json: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for c in json["clusters"].as_array().unwrap() {
        for k in c["kustomizations"].as_array().unwrap() {
            if k["change"] != "identical" {
                out.insert((
                    c["name"].as_str().unwrap().to_string(),
                    crate::common::ks(&k["kustomization"]),
                    k["change"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    out
}

/// A refactor: a file moved to a sub-folder with its kustomization updated, and the
/// resources list reordered. Nothing Flux applies changes.
fn refactor(repo: &Path) {
    fs::create_dir(repo.join("platform-config/info")).unwrap();
    fs::rename(
        repo.join("platform-config/cluster-info.yaml"),
        repo.join("platform-config/info/cluster-info.yaml"),
    )
    .unwrap();
    fs::write(
        repo.join("platform-config/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - info/cluster-info.yaml\n  - priorityclasses.yaml\n  - vippool.yaml\n",
    )
    .unwrap();
}

#[test]
fn pure_refactor_diffs_identical_and_leaves_the_work_tree_alone() {
    let repo = repo_from("testdata/fleet");
    refactor(repo.path());
    let before = read_tree(repo.path());
    let status = git(repo.path(), &["status", "--porcelain"]);
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["changed"], false);
    assert!(changes(&json).is_empty());
    assert_eq!(json["clusters"].as_array().unwrap().len(), 2);
    // The user's files and git's view of them are untouched.
    assert_eq!(read_tree(repo.path()), before);
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), status);
}

#[test]
fn pure_refactor_proves_identical_with_every_canary_detected_and_restored() {
    let repo = repo_from("testdata/fleet");
    refactor(repo.path());
    commit_all(repo.path(), "refactor");
    let out = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("dev: 11/11 artifacts identical; canaries 3/3 detected, 3/3 restored"),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("prod: 11/11 artifacts identical; canaries 3/3 detected, 3/3 restored"));
    assert!(out.stdout.ends_with("prove: PASS\n"), "{}", out.stdout);
}

/// `diff --audit`: the substitution hazards head brings (as `fluxsim audit` finds them), each
/// with its file and line, in the JSON and in the review's hazards; one base has too is not
/// repeated; a warning does not fail the diff unless `--fail-on warning`; without `--audit`,
/// nothing of it.
#[test]
fn diff_audit_reports_the_substitution_hazards_head_brings_with_file_and_line() {
    let repo = repo_from("testdata/fleet");
    let file = "apps/wave-2/web/deployment.yaml";
    // A hazard base already has (`:?` is a plain default in Flux).
    edit(
        repo.path(),
        file,
        "value: ${TIMEZONE}",
        "value: ${TIMEZONE:?tz}",
    );
    commit_all(repo.path(), "base hazard");
    // Head brings another one, on line 23.
    edit(
        repo.path(),
        file,
        "value: ${WEB_HOSTNAME}.${CLUSTER_DOMAIN}",
        "value: ${WEB_HOSTNAME:+www}.${CLUSTER_DOMAIN}",
    );
    let out = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--audit", "-o", "json"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let audit = json["audit"].as_array().expect("audit");
    let said: BTreeSet<(String, String, String, u64)> = audit
        .iter()
        .map(|f| {
            let expr = f["related"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["role"] == "expression")
                .map(|r| r["value"].as_str().unwrap().to_string())
                .unwrap_or_default();
            (
                f["cluster"].as_str().unwrap().to_string(),
                expr,
                f["location"]["file"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: BTreeSet<_> = ["dev", "prod"]
        .iter()
        .map(|c| {
            (
                c.to_string(),
                "${WEB_HOSTNAME:+www}".to_string(),
                file.to_string(),
                23,
            )
        })
        .collect();
    assert_eq!(said, expected, "{json:#}");
    let text = run(repo.path(), &["diff", "--base", "HEAD", "--audit"]).stdout;
    assert!(
        text.contains(&format!("warning `FS102` at `{file}:23:")),
        "{text}"
    );
    assert!(!text.contains("TIMEZONE:?tz"), "base's own hazard: {text}");
    let strict = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--audit", "--fail-on", "warning"],
    );
    assert_eq!(strict.code, 1, "{}", strict.stdout);
    let plain = run(repo.path(), &["diff", "--base", "HEAD", "-o", "json"]).json();
    assert!(plain.get("audit").is_none(), "{plain:#}");
}

/// `diff --graph`: the cold-start findings head brings (as `fluxsim graph` finds them), with
/// file and line: a custom resource whose CRD only a dependent applies (a deadlock); one base
/// has too is not repeated; without `--graph`, nothing of it.
#[test]
fn diff_graph_reports_the_cold_start_findings_head_brings() {
    let repo = repo_from("testdata/fleet");
    let dir = "apps/wave-1/orders";
    // A custom resource of `group` in apps-wave-1, its CRD in apps-wave-2, which depends on
    // apps-wave-1.
    let add = |file: &str, group: &str| {
        let text = format!(
            "apiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: orders\nspec: {{}}\n"
        );
        fs::write(repo.path().join(dir).join(file), text).unwrap();
        edit(
            repo.path(),
            &format!("{dir}/kustomization.yaml"),
            "  - service.yaml\n",
            &format!("  - service.yaml\n  - {file}\n"),
        );
        let crd = format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
             name: widgets.{group}\nspec:\n  group: {group}\n  names:\n    kind: Widget\n    \
             plural: widgets\n  scope: Namespaced\n  versions:\n    - name: v1\n      \
             served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          \
             type: object\n          x-kubernetes-preserve-unknown-fields: true\n"
        );
        fs::write(repo.path().join("apps/wave-2/web").join(file), crd).unwrap();
        edit(
            repo.path(),
            "apps/wave-2/web/kustomization.yaml",
            "  - ingress.yaml\n",
            &format!("  - ingress.yaml\n  - {file}\n"),
        );
    };
    // Base already has one.
    add("widget-a.yaml", "a.example.io");
    commit_all(repo.path(), "a widget");
    // Head adds another.
    add("widget-b.yaml", "b.example.io");
    let file = "widget-b.yaml";
    let json = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--graph", "-o", "json"],
    )
    .json();
    let said: BTreeSet<(String, String, String, u64)> = json["graph"]
        .as_array()
        .expect("graph")
        .iter()
        .map(|f| {
            (
                f["cluster"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["location"]["file"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Line 4: the object's name, where `fluxsim graph` points.
    let expected: BTreeSet<_> = ["dev", "prod"]
        .iter()
        .map(|c| {
            (
                c.to_string(),
                "FS204".to_string(),
                format!("{dir}/{file}"),
                4,
            )
        })
        .collect();
    assert_eq!(said, expected, "{json:#}");
    let text = run(repo.path(), &["diff", "--base", "HEAD", "--graph"]).stdout;
    assert!(
        text.contains(&format!("error `FS204` at `{dir}/{file}:4`")),
        "{text}"
    );
    assert!(
        !text.contains("widget-a.yaml"),
        "base's own finding: {text}"
    );
    let plain = run(repo.path(), &["diff", "--base", "HEAD", "-o", "json"]).json();
    assert!(plain.get("graph").is_none(), "{plain:#}");
}

/// A proof that holds over a change says what changes in the comment's heading, in the
/// line diff style too: a bare "PASS" over two changed Kustomizations reads as "nothing
/// changes".
#[test]
fn a_passing_proof_over_a_change_heads_its_markdown_with_what_changes() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/wave-2/web/deployment.yaml",
        "nginx-unprivileged:1.27.2-alpine",
        "nginx-unprivileged:1.27.3-alpine",
    );
    for style in ["lines", "semantic"] {
        let out = run(
            repo.path(),
            &[
                "prove",
                "--base",
                "HEAD",
                "--expect",
                "any",
                "--diff-style",
                style,
                "-o",
                "markdown",
            ],
        );
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let heading = out.stdout.lines().next().unwrap_or_default();
        assert!(
            heading.starts_with("## ✅ fluxsim prove: ")
                && heading
                    .ends_with(": 2 Kustomizations change in 2 of 2 clusters, the proof holds"),
            "{style}: {heading}"
        );
    }
}

#[test]
fn one_value_change_changes_exactly_one_artifact_with_the_right_diff() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    // The root applies cluster-vars, so its artifact changes too; of the templated
    // Kustomizations only the one that uses WEB_REPLICAS does.
    assert_eq!(
        changes(&json),
        BTreeSet::from([
            (
                "prod".into(),
                "flux-system/apps-wave-2".into(),
                "changed".into()
            ),
            (
                "prod".into(),
                "flux-system/flux-system".into(),
                "changed".into()
            ),
        ])
    );
    let prod = &json["clusters"][1];
    let wave2 = prod["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/apps-wave-2")
        .unwrap();
    let objects = wave2["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1, "{objects:#?}");
    assert_eq!(objects[0]["object"]["kind"], "Deployment");
    let diff = objects[0]["diff"].as_str().unwrap();
    assert!(diff.contains("-  replicas: 3\n+  replicas: 4\n"), "{diff}");
    assert!(diff.starts_with("@@ "), "{diff}");
    assert!(
        diff.lines()
            .next()
            .unwrap()
            .ends_with("Deployment.apps/web/edge-web"),
        "{diff}"
    );
}

#[test]
fn an_object_moved_between_kustomizations_is_a_move_with_the_prune_warning() {
    let repo = repo_from("testdata/fleet");
    fs::rename(
        repo.path().join("platform-config/priorityclasses.yaml"),
        repo.path().join("platform/priorityclasses.yaml"),
    )
    .unwrap();
    edit(
        repo.path(),
        "platform-config/kustomization.yaml",
        "  - priorityclasses.yaml\n",
        "",
    );
    edit(
        repo.path(),
        "platform/kustomization.yaml",
        "  - namespaces.yaml\n",
        "  - namespaces.yaml\n  - priorityclasses.yaml\n",
    );
    let out = run(
        repo.path(),
        &[
            "diff",
            "--base",
            "HEAD",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let moves = json["clusters"][0]["moves"].as_array().unwrap();
    assert!(!moves.is_empty());
    for m in moves {
        assert_eq!(m["object"]["kind"], "PriorityClass");
        assert_eq!(crate::common::ks(&m["from"]), "flux-system/platform-config");
        assert_eq!(crate::common::ks(&m["to"]), "flux-system/platform");
        assert_eq!(m["pruneOutage"], true);
    }
    let text = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--cluster",
            "dev",
            "--wide",
        ],
    );
    assert!(
        text.stdout
            .contains("warning: flux-system/platform-config has prune: true"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_blind_canary_fails_the_proof() {
    // apps/wave-0/scratch/ is in .sourceignore: Flux never sees it, so a canary there cannot
    // be detected, and a proof that relies on it must fail loudly.
    let repo = repo_from("testdata/fleet");
    let out = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--canary-path",
            "apps/wave-0/scratch/memcached.yaml",
            "--wide",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("NOT DETECTED: the file is not in what Flux sees"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("prove: FAIL"), "{}", out.stdout);
}

#[test]
fn a_canary_in_a_file_nothing_renders_fails_the_proof() {
    let repo = repo_from("testdata/fleet");
    let out = run(
        repo.path(),
        &[
            "prove",
            "--base",
            "HEAD",
            "--canary-path",
            "apps/wave-0/postgres/init.sql",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("NOT DETECTED"), "{}", out.stdout);
}

#[test]
fn a_canary_path_that_does_not_exist_is_a_usage_error() {
    let repo = repo_from("testdata/fleet");
    let out = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--canary-path", "no/such.yaml"],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no/such.yaml"), "{}", out.stderr);
}

#[test]
fn prove_expecting_identical_fails_on_a_change_even_with_good_canaries() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "LOG_LEVEL: info",
        "LOG_LEVEL: warn",
    );
    let out = run(
        repo.path(),
        &["prove", "--diff-style", "lines", "--base", "HEAD"],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("prove: FAIL: expected identical, got changes"),
        "{}",
        out.stdout
    );
    let ok = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--expect",
            "changed",
        ],
    );
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
}

#[test]
fn added_and_removed_kustomizations_are_reported() {
    let repo = repo_from("testdata/fleet");
    // Drop apps-vms from the shared base: both clusters lose it.
    edit(
        repo.path(),
        "clusters/base/kustomization.yaml",
        "  - apps-vms.yaml\n",
        "",
    );
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let c = changes(&out.json());
    assert!(
        c.contains(&(
            "dev".into(),
            "flux-system/apps-vms".into(),
            "removed".into()
        )),
        "{c:?}"
    );
    assert!(c.contains(&(
        "prod".into(),
        "flux-system/apps-vms".into(),
        "removed".into()
    )));
    let back = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(back.stdout, out.stdout, "diff output is deterministic");
}

#[test]
fn a_head_that_fails_to_render_is_not_compared_naming_the_error() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "platform-config/kustomization.yaml",
        "  - vippool.yaml\n",
        "  - missing.yaml\n",
    );
    let out = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--cluster",
            "dev",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("head: failed: spec.path `./platform-config`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  not compared flux-system/platform-config"),
        "{}",
        out.stdout
    );
}

#[test]
fn diff_output_is_the_same_whatever_the_thread_count() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/dev/cluster-vars.yaml",
        "LOG_LEVEL: debug",
        "LOG_LEVEL: trace",
    );
    let one = run(
        repo.path(),
        &["diff", "--base", "HEAD", "-j", "1", "--format", "json"],
    );
    let four = run(
        repo.path(),
        &["diff", "--base", "HEAD", "-j", "4", "--format", "json"],
    );
    assert_eq!(one.code, 0);
    assert_eq!(one.stdout, four.stdout);
}

#[test]
fn markdown_summary_has_a_table_per_cluster_and_collapsed_diffs() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    let out = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(out.code, 0);
    let md = &out.stdout;
    assert!(md.starts_with("## fluxsim diff: `HEAD"), "{md}");
    assert!(md.contains("| `dev` | 11/11 artifacts identical |"), "{md}");
    assert!(
        md.contains("| `prod` | 9/11 artifacts identical, 2 changed |"),
        "{md}"
    );
    assert!(md.contains("### `prod`"));
    assert!(
        md.contains("<details><summary><code>flux-system/apps-wave-2</code>"),
        "{md}"
    );
    assert!(md.contains("```diff\n"), "{md}");
}

/// The keys whose values differ between two cluster-vars files, read independently.
fn differing_cluster_vars(repo: &Path) -> BTreeSet<String> {
    let read = |c: &str| {
        let text =
            fs::read_to_string(repo.join(format!("clusters/{c}/cluster-vars.yaml"))).unwrap();
        let v = &crate::common::yaml_objects(&text)[0];
        v["data"].as_object().unwrap().clone()
    };
    let (dev, prod) = (read("dev"), read("prod"));
    dev.keys()
        .chain(prod.keys())
        .filter(|k| dev.get(*k) != prod.get(*k))
        .cloned()
        .collect()
}

#[test]
fn compare_lists_exactly_the_cluster_vars_that_differ() {
    let fleet = crate::common::crate_path("testdata/fleet");
    let out = fluxsim_in(
        None,
        &["compare", fleet.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["agnostic"], true);
    assert_eq!(
        json["clusters"],
        serde_json::json!([{"name": "dev"}, {"name": "prod"}])
    );
    let listed: BTreeSet<String> = json["vars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    let expected = differing_cluster_vars(&fleet);
    assert_eq!(expected.len(), 8);
    assert_eq!(listed, expected);
    // Every Kustomization but the root has the same template in both clusters.
    for k in json["kustomizations"].as_array().unwrap() {
        assert_eq!(k["sameTemplate"] == true, k["root"] == false, "{k}");
    }
    let text = fluxsim_in(
        None,
        &[
            "compare",
            fleet.to_str().unwrap(),
            "--clusters",
            "prod,dev",
            "--wide",
        ],
    );
    assert!(
        text.stdout.replace("\n  ", " ").contains(
            "result: prod vs dev run the same graph and templates; they differ only in these 8 values"
        ),
        "{}",
        text.stdout
    );
}

#[test]
fn compare_reports_a_graph_and_template_difference() {
    let repo = repo_from("testdata/fleet");
    // A prod-only patch that turns off wait and changes the web replicas template.
    edit(
        repo.path(),
        "clusters/prod/kustomization.yaml",
        "patches:\n",
        "patches:\n  - target:\n      kind: Kustomization\n      name: apps-wave-2\n    patch: |\n      - op: replace\n        path: /spec/wait\n        value: false\n      - op: add\n        path: /spec/namePrefix\n        value: prod-\n",
    );
    let out = run(repo.path(), &["compare", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let row = json["graph"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| crate::common::ks(&g["kustomization"]) == "flux-system/apps-wave-2")
        .unwrap();
    assert_eq!(row["differences"], serde_json::json!(["wait"]));
    let t = json["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/apps-wave-2")
        .unwrap();
    assert_eq!(t["sameTemplate"], false);
    assert_eq!(json["agnostic"], false);
    // Which objects differ, and how: the prefix renames every object of the template.
    let objects = t["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 8, "{t:#}");
    assert!(objects.iter().all(|o| o["cluster"] == "prod"));
    assert!(objects
        .iter()
        .any(|o| o["object"]["name"] == "prod-web" && o["change"] == "added"));
    let text = run(repo.path(), &["compare"]);
    // The verdict first, and the result last.
    assert!(
        text.stdout
            .starts_with("compare: dev vs prod: they differ in more than var values\n")
            && text
                .stdout
                .contains("\nresult: dev vs prod differ in more than var values"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("templates DIFFER in 8 objects\n")
            && text
                .stdout
                .contains("    dev -> prod: Deployment web/prod-web added\n"),
        "{}",
        text.stdout
    );
    for line in text.stdout.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    let md = run(repo.path(), &["compare", "--format", "markdown"]);
    assert!(
        md.stdout.contains(
            "<details><summary><code>flux-system/apps-wave-2</code>: the templates differ in 8 objects</summary>"
        ),
        "{}",
        md.stdout
    );
}

#[test]
fn compare_shows_how_a_templates_object_differs_between_clusters() {
    let repo = repo_from("testdata/fleet");
    // A prod-only patch of the web Deployment's template: the replicas and an env var.
    edit(
        repo.path(),
        "clusters/prod/kustomization.yaml",
        "patches:\n",
        "patches:\n  - target:\n      kind: Kustomization\n      name: apps-wave-2\n    patch: |\n      - op: add\n        path: /spec/patches\n        value:\n          - target: {kind: Deployment}\n            patch: |\n              - op: add\n                path: /spec/minReadySeconds\n                value: 10\n",
    );
    let text = run(repo.path(), &["compare"]);
    // Clusters that differ in more than var values are info: exit 0 by default.
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    assert!(
        text.stdout.contains(
            "    dev -> prod: Deployment web/edge-web changed\n      spec.minReadySeconds\n    +   10\n"
        ),
        "{}",
        text.stdout
    );
    let json = run(repo.path(), &["compare", "--format", "json"]).json();
    let t = json["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/apps-wave-2")
        .unwrap();
    assert_eq!(
        t["objects"][0]["changes"][0],
        serde_json::json!({"path": "spec.minReadySeconds", "op": "added", "after": 10})
    );
    // No empty table: the same clusters' vars are listed, and no var table when none differs.
    let md = run(repo.path(), &["compare", "--format", "markdown"]).stdout;
    assert!(md.contains("+   10"), "{md}");
}

// Issue 38: clusters named `network` and `storage` whose apps live in folders of those
// names. Only a cluster's own folder (or, where paths differ, a folder named as the cluster)
// is abstracted; equal paths never differ (`graph`'s FS210 reads the same rule).
#[test]
fn compare_takes_a_folder_named_as_a_cluster_for_a_folder_not_for_the_cluster() {
    let repo = repo_from("testdata/clusters/named-folders");
    let out = run(repo.path(), &["compare", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    for g in json["graph"].as_array().unwrap() {
        assert_eq!(g["differences"], serde_json::json!([]), "{g:#}");
    }
    assert_eq!(json["agnostic"], true);
    assert_eq!(json["notCompared"], 0);
    let vars: Vec<&str> = json["vars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(vars, ["CLUSTER_NAME"]);
    let text = run(repo.path(), &["compare"]).stdout;
    assert!(
        text.contains("\ngraph: the same in every cluster (4 Kustomizations)\n")
            && !text.contains("differs: path"),
        "{text}"
    );
    let graph = run(repo.path(), &["graph", "--format", "json"]).json();
    let fs210: Vec<&Value> = graph["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS210")
        .collect();
    assert!(fs210.is_empty(), "{fs210:#?}");
}

// A cluster whose root does not render: what it applies is unknown, not missing. The
// failure is said once, with how many Kustomizations it leaves out, and no row says
// `(not defined)` or `missing`.
#[test]
fn compare_says_once_that_a_clusters_root_failed_and_compares_nothing_below_it() {
    let repo = repo_from("testdata/clusters/named-folders");
    edit(
        repo.path(),
        "kubernetes/storage/kustomization.yaml",
        "  - apps.yaml\n",
        "  - apps.yaml\n  - missing.yaml\n",
    );
    commit_all(repo.path(), "storage's root breaks");
    let out = run(repo.path(), &["compare"]);
    // A Kustomization that fails in a cluster is an error.
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let text = &out.stdout;
    assert!(
        text.starts_with(
            "compare: network vs storage: nothing compared (4 not compared)\nFAILED: \
             flux-system/cluster failed in storage; 3 Kustomizations the other\n  clusters \
             apply below it are not compared there\n  spec.path `./kubernetes/storage`: \
             kustomize build failed:"
        ),
        "{text}"
    );
    assert_eq!(text.matches("accumulation err=").count(), 1, "{text}");
    assert!(
        text.contains(
            "  flux-system/cluster       not compared (storage: failed, its error is above)\n  \
             3 not compared in storage: below flux-system/cluster, which failed there:\n    \
             flux-system/bind-dns, flux-system/local-storage, flux-system/minio\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains("(not defined)")
            && !text.contains("missing\n")
            && !text.contains("not in every cluster"),
        "{text}"
    );
    assert!(
        text.ends_with("result: not proven: none of the 4 Kustomizations could be compared\n"),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    let json = run(repo.path(), &["compare", "--format", "json"]).json();
    assert_eq!(json["notCompared"], 4);
    assert_eq!(json["failures"].as_array().unwrap().len(), 1, "{json:#}");
    let f = &json["failures"][0];
    assert_eq!(f["cluster"], "storage");
    assert_eq!(
        crate::common::ks(&f["kustomization"]),
        "flux-system/cluster"
    );
    assert_eq!(f["below"], 3);
    let minio = json["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/minio")
        .unwrap();
    assert_eq!(minio["below"][0], Value::Null);
    assert_eq!(crate::common::ks(&minio["below"][1]), "flux-system/cluster");
    assert_eq!(
        minio["problems"][1],
        "not rendered: below flux-system/cluster, which failed"
    );
    for g in json["graph"].as_array().unwrap() {
        assert_eq!(g["differences"], serde_json::json!([]), "{g:#}");
    }
    let md = run(repo.path(), &["compare", "--format", "markdown"]).stdout;
    assert_eq!(md.matches("accumulation err=").count(), 1, "{md}");
    // storage's vars are not known: none is said to differ.
    assert!(md.contains("No var differs between the clusters."), "{md}");
    assert!(
        md.contains(
            "⚠️ 3 not compared in storage: below `flux-system/cluster`, which failed there: \
             flux-system/bind-dns, flux-system/local-storage, flux-system/minio"
        ),
        "{md}"
    );
}

// Issue 38: `diff` and `prove` name the file and line of the `${...}` a head fails on, as
// `render` and `--audit` do (not its line in the rendered object): an indexed expansion
// and a strict-mode unset var, each in a file of a Kustomization Flux generates or lists.
#[test]
fn diff_and_prove_name_the_file_and_line_of_a_failed_substitution() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/wave-1/notifier/deployment.yaml",
        "--log-level=${LOG_LEVEL}",
        "--log-level=${LEVELS[0]}",
    );
    edit(
        repo.path(),
        "apps/wave-0/redis/configmap.yaml",
        "    loglevel ${LOG_LEVEL}",
        "    loglevel ${LOG_LEVEL}\n    requirepass ${REDIS_PASSWORD}",
    );
    // The text, its wrapped lines joined.
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let out = one_line(&run(repo.path(), &["diff"]).stdout);
    assert!(
        out.contains(
            "FAILED: flux-system/apps-wave-1 in head (dev) Deployment.apps/apps/notifier: \
             variable substitution failed: apps/wave-1/notifier/deployment.yaml:21:27: \
             ${LEVELS[0]}: missing closing brace (indexed expansions are not supported; \
             write $${LEVELS[0]} to leave it to the shell)"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "FAILED: flux-system/apps-wave-0 in head (dev) ConfigMap/data/redis-config: \
             variable substitution failed: apps/wave-0/redis/configmap.yaml:15:17: \
             ${REDIS_PASSWORD}: variable not set (strict mode): \"REDIS_PASSWORD\""
        ),
        "{out}"
    );
    let json = run(repo.path(), &["diff", "--format", "json"]).json();
    let errors: Vec<&str> = json["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["error"].as_str().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains(": apps/wave-1/notifier/deployment.yaml:21:27: ${LEVELS[0]}: ")),
        "{errors:#?}"
    );
    // prove renders head with origins for its canaries: the same place.
    let proof = one_line(&run(repo.path(), &["prove", "--expect", "any"]).stdout);
    assert!(
        proof.contains("variable substitution failed: apps/wave-0/redis/configmap.yaml:15:17: "),
        "{proof}"
    );
}

#[test]
fn compare_needs_two_clusters() {
    let fleet = crate::common::crate_path("testdata/fleet");
    let out = fluxsim_in(
        None,
        &["compare", fleet.to_str().unwrap(), "--clusters", "dev"],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("at least two clusters"),
        "{}",
        out.stderr
    );
}

/// The diff JSON without the `skipped` lists, for comparing a changed-only diff with a full one.
fn without_skipped(mut json: Value) -> Value {
    for c in json["clusters"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("skipped");
    }
    json
}

fn skipped(json: &Value, cluster: &str) -> BTreeSet<String> {
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == cluster)
        .and_then(|c| c["skipped"].as_array())
        .map(|s| s.iter().map(crate::common::ks).collect())
        .unwrap_or_default()
}

// Changed-only is the default (tested equal to `--full` below and in the next tests).
#[test]
fn changed_only_is_the_default_skips_what_did_not_change_and_reports_the_same_changes() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    let full = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--full", "--format", "json"],
    );
    assert!(
        skipped(&full.json(), "dev").is_empty(),
        "--full skips nothing"
    );
    let quick = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(quick.code, 0, "{}", quick.stderr);
    let quick_json = quick.json();
    // dev reads nothing that changed; in prod only the root (it applies cluster-vars) and
    // the one Kustomization that uses WEB_REPLICAS are rendered again.
    assert_eq!(skipped(&quick_json, "dev").len(), 9);
    let prod = skipped(&quick_json, "prod");
    assert_eq!(prod.len(), 7, "{prod:?}");
    assert!(!prod.contains("flux-system/apps-wave-2"));
    assert!(!prod.contains("flux-system/flux-system"));
    assert_eq!(without_skipped(quick_json), without_skipped(full.json()));
}

/// An edit of the fleet, named.
type Edit = (&'static str, fn(&Path));

/// One edit of each kind a changed-only diff must see; each touches its own files, so they
/// can be applied one after the other.
fn edit_kinds() -> [Edit; 5] {
    [
        ("leaf manifest", |r| {
            edit(r, "apps/wave-2/web/service.yaml", "port: 80", "port: 8080");
        }),
        ("shared component", |r| {
            edit(
                r,
                "components/pod-hardening/kustomization.yaml",
                "runAsNonRoot: true",
                "runAsNonRoot: false",
            );
        }),
        ("new file in a generated path", |r| {
            fs::write(
                r.join("apps/wave-0/redis/extra.yaml"),
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  a: b\n",
            )
            .unwrap();
        }),
        ("file deleted from a generated path", |r| {
            fs::remove_file(r.join("apps/wave-0/redis/configmap.yaml")).unwrap();
        }),
        ("Kustomization spec", |r| {
            edit(r, "clusters/base/apps.yaml", "timeout: 5m", "timeout: 6m");
            edit(r, "clusters/base/apps.yaml", "prune: true", "prune: false");
        }),
    ]
}

#[test]
fn changed_only_agrees_with_a_full_diff_on_every_kind_of_edit() {
    let edits = edit_kinds();
    for (what, apply) in edits {
        let repo = repo_from("testdata/fleet");
        apply(repo.path());
        // `--fail-on info`: the exit status says whether anything changed.
        let full = run(
            repo.path(),
            &[
                "diff",
                "--base",
                "HEAD",
                "--full",
                "--format",
                "json",
                "--fail-on",
                "info",
            ],
        );
        let quick = run(
            repo.path(),
            &[
                "diff",
                "--base",
                "HEAD",
                "--changed-only",
                "--format",
                "json",
                "--fail-on",
                "info",
            ],
        );
        assert_eq!(
            full.code, 1,
            "{what}: the edit changes something: {}",
            full.stdout
        );
        assert_eq!(quick.code, full.code, "{what}");
        let quick_json = quick.json();
        let n_skipped = skipped(&quick_json, "dev").len() + skipped(&quick_json, "prod").len();
        assert!(n_skipped > 0, "{what}: nothing skipped");
        assert_eq!(
            without_skipped(quick_json),
            without_skipped(full.json()),
            "{what}"
        );
    }
}

// The base's render comes from the store (keyed by its git tree) and the work tree is read in
// place: neither may change what a diff says.
#[test]
fn changed_only_with_a_warm_cache_agrees_with_a_cold_full_diff_after_each_edit() {
    let repo = repo_from("testdata/fleet");
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let quick = [
        "diff",
        "--base",
        "HEAD",
        "--changed-only",
        "--format",
        "json",
    ];
    let warm = |args: &[&str]| run(repo.path(), &[args, &["--cache-dir", cache_dir]].concat());
    let first = warm(&quick);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    assert!(
        cache.path().join("revisions").is_dir(),
        "the base render is stored"
    );
    for (what, apply) in edit_kinds() {
        apply(repo.path());
        let full = run(
            repo.path(),
            &[
                "diff",
                "--base",
                "HEAD",
                "--full",
                "--format",
                "json",
                "--no-cache",
            ],
        );
        assert_eq!(full.code, 0, "{what}: {}", full.stderr);
        for attempt in ["first", "second"] {
            let out = warm(&quick);
            assert_eq!(out.code, 0, "{what}, {attempt} run: {}", out.stderr);
            assert_eq!(
                without_skipped(out.json()),
                without_skipped(full.json()),
                "{what}, {attempt} run"
            );
        }
        let text = ["diff", "--base", "HEAD", "--changed-only"];
        assert_eq!(warm(&text).stdout, run(repo.path(), &text).stdout, "{what}");
    }
}

// A head revision's render is stored as the base's is: the second diff of the same two
// revisions renders neither, and says what a full, cold diff says.
#[test]
fn a_diff_of_two_revisions_keeps_both_renders_and_agrees_with_a_full_cold_diff() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    commit_all(repo.path(), "one value");
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "diff",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--format",
        "json",
        "--cache-dir",
        cache.path().to_str().unwrap(),
    ];
    let first = run(repo.path(), &args);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    let stored = fs::read_dir(cache.path().join("revisions"))
        .unwrap()
        .flatten()
        .count();
    assert_eq!(stored, 2, "base and head renders are stored");
    let second = run(repo.path(), &args);
    let full = run(
        repo.path(),
        &[
            "diff",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--format",
            "json",
            "--full",
            "--no-cache",
        ],
    );
    assert_eq!(full.code, 0, "{}", full.stderr);
    assert_eq!(without_skipped(first.json()), without_skipped(full.json()));
    assert_eq!(without_skipped(second.json()), without_skipped(full.json()));
    // And images --diff, which the action runs next, reads them too.
    let images = run(
        repo.path(),
        &[
            "images",
            "--diff",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
    );
    assert!(images.code == 0 || images.code == 1, "{}", images.stderr);
}

#[test]
fn changed_only_and_full_cannot_be_asked_together() {
    let repo = repo_from("testdata/fleet");
    let out = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--changed-only", "--full"],
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("--full"), "{}", out.stderr);
}

#[test]
fn an_unknown_base_revision_is_an_input_error_naming_it() {
    let repo = repo_from("testdata/fleet");
    let out = run(repo.path(), &["diff", "--base", "no-such-branch"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("no-such-branch"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
}

#[test]
fn an_explicit_head_revision_ignores_the_work_tree() {
    let repo = repo_from("testdata/fleet");
    // Uncommitted: not part of `--head HEAD`.
    edit(
        repo.path(),
        "clusters/dev/cluster-vars.yaml",
        "LOG_LEVEL: debug",
        "LOG_LEVEL: trace",
    );
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--head", "HEAD"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // A change is info: it fails the run only with `--fail-on info`.
    let dirty = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--fail-on", "info"],
    );
    assert_eq!(dirty.code, 1, "{}{}", dirty.stdout, dirty.stderr);
}

/// `testdata/notcompared/fails-in-both` in a git repository: `broken` fails in every
/// revision of both clusters.
fn fails_in_both() -> tempfile::TempDir {
    repo_from("testdata/notcompared/fails-in-both")
}

#[test]
fn a_kustomization_failing_in_both_revisions_is_not_compared_and_fails_the_diff() {
    let repo = fails_in_both();
    let out = run(
        repo.path(),
        &["diff", "--diff-style", "lines", "--base", "HEAD"],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "dev: 2/3 artifacts identical, 1 not compared\n  not compared flux-system/broken"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("    base and head: failed: spec.path `./apps/does-not-exist`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("2 Kustomizations could not be compared"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\nresult: 2 not compared, nothing else changed ("),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("result: identical"), "{}", out.stdout);

    let json = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(json.code, 1);
    let json = json.json();
    assert_eq!(json["changed"], false);
    assert_eq!(json["notCompared"], 2);
    let dev = &json["clusters"][0];
    assert_eq!(dev["presence"], "both");
    assert_eq!(dev["notCompared"], 1);
    let broken = dev["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/broken")
        .unwrap();
    assert_eq!(broken["change"], "not compared");
    assert!(broken["headProblem"]
        .as_str()
        .unwrap()
        .starts_with("failed: "));

    let md = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(md.code, 1);
    assert!(
        md.stdout.contains(": 2 not compared, nothing else changed"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout
            .contains("| `flux-system/broken` | not compared |"),
        "{}",
        md.stdout
    );
}

#[test]
fn a_change_next_to_a_kustomization_that_cannot_be_compared_is_reported_with_both() {
    let repo = fails_in_both();
    edit(repo.path(), "apps/web/configmap.yaml", "hello", "bye");
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["changed"], true);
    assert_eq!(json["notCompared"], 2);
    let c = changes(&json);
    assert!(c.contains(&("dev".into(), "flux-system/web".into(), "changed".into())));
    assert!(c.contains(&(
        "prod".into(),
        "flux-system/broken".into(),
        "not compared".into()
    )));
    let text = run(
        repo.path(),
        &["diff", "--diff-style", "lines", "--base", "HEAD"],
    );
    assert!(
        text.stdout.contains("\nresult: changed; 2 not compared ("),
        "{}",
        text.stdout
    );
}

#[test]
fn prove_is_blind_where_nothing_rendered_unless_allowed_and_then_lists_it() {
    let repo = fails_in_both();
    let out = run(
        repo.path(),
        &["prove", "--diff-style", "lines", "--base", "HEAD", "--wide"],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "prove: FAIL: blind to 2 Kustomizations that did not render (--allow-blind to accept)"
        ),
        "{}",
        out.stdout
    );
    let allowed = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--allow-blind",
            "--wide",
        ],
    );
    assert_eq!(allowed.code, 0, "{}{}", allowed.stdout, allowed.stderr);
    assert!(
        allowed.stdout.contains(
            "could not see dev:flux-system/broken: base and head: failed: spec.path `./apps/does-not-exist`"
        ),
        "{}",
        allowed.stdout
    );
    assert!(allowed
        .stdout
        .contains("could not see prod:flux-system/broken"));
    assert!(
        allowed
            .stdout
            .ends_with("prove: PASS, blind to 2 Kustomizations (allowed)\n"),
        "{}",
        allowed.stdout
    );
    let json = run(
        repo.path(),
        &[
            "prove",
            "--base",
            "HEAD",
            "--allow-blind",
            "--format",
            "json",
        ],
    )
    .json();
    assert_eq!(json["passed"], true);
    assert_eq!(json["allowBlind"], true);
    assert_eq!(json["blind"].as_array().unwrap().len(), 2);
    assert_eq!(
        crate::common::ks(&json["blind"][0]["kustomization"]),
        "flux-system/broken"
    );
}

#[test]
fn compare_calls_two_unrendered_sides_not_compared_and_fails() {
    let repo = fails_in_both();
    let out = run(repo.path(), &["compare", "--wide"]);
    // A Kustomization that fails to render in a cluster: an error.
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("templates DIFFER"), "{}", out.stdout);
    // The same error in both clusters, said once, first; the row points at it.
    assert!(
        out.stdout.contains(
            "\nFAILED: flux-system/broken failed in dev, prod\n  spec.path \
             `./apps/does-not-exist` does not exist in the source\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("  flux-system/broken ")
                && l.contains(" not compared (dev, prod: failed, its error is above)")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("result: not proven: 1 Kustomization could not be compared"),
        "{}",
        out.stdout
    );
    let json = run(repo.path(), &["compare", "--format", "json"]).json();
    assert_eq!(json["notCompared"], 1);
    let md = run(repo.path(), &["compare", "--format", "markdown"]);
    assert!(
        md.stdout
            .contains("| `flux-system/broken` | same | **not compared** |"),
        "{}",
        md.stdout
    );
}

#[test]
fn a_shared_canary_missing_from_an_artifact_prints_only_that_artifact_with_why() {
    let repo = repo_from("testdata/notcompared/canary-unseen");
    let out = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--canary-path",
            "apps/web/configmap.yaml",
            "--wide",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("(shared) in apps/web/configmap.yaml"))
        .unwrap();
    assert!(
        line.contains(
            "NOT DETECTED as expected: not seen in 1 of 2 expected: \
             dev:flux-system/web-patched (failed: spec.path `./apps/web`: "
        ),
        "{line}"
    );
    assert!(line.contains("test failed)"), "{line}");
    // Where it was seen is not repeated.
    assert!(!line.contains("dev:flux-system/web,"), "{line}");
    assert!(!line.contains("dev:flux-system/web "), "{line}");
    let json = run(
        repo.path(),
        &[
            "prove",
            "--base",
            "HEAD",
            "--canary-path",
            "apps/web/configmap.yaml",
            "--format",
            "json",
        ],
    )
    .json();
    let shared = json["canaries"]["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scope"] == "shared")
        .unwrap();
    assert_eq!(shared["missing"].as_array().unwrap().len(), 1);
    assert_eq!(
        crate::common::ks(&shared["missing"][0]["kustomization"]),
        "flux-system/web-patched"
    );
    assert!(shared["missing"][0]["why"]
        .as_str()
        .unwrap()
        .starts_with("failed: "));
}

#[test]
fn a_value_changed_in_one_of_two_colliding_clusters_changes_only_that_cluster() {
    let repo = repo_from("testdata/clusters/colliding");
    edit(
        repo.path(),
        "kubernetes/storage/flux/vars.yaml",
        "REPLICAS: \"1\"",
        "REPLICAS: \"3\"",
    );
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        changes(&out.json()),
        BTreeSet::from([
            (
                "storage".into(),
                "flux-system/apps".into(),
                "changed".into()
            ),
            (
                "storage".into(),
                "flux-system/cluster".into(),
                "changed".into()
            ),
        ])
    );
}

/// A typo in a file the cluster root applies fails the root in head; Flux applies nothing from
/// a failed build and prunes nothing, so what the root applied keeps running: every
/// Kustomization below it is `not compared`, naming the failed parent, never `removed`
/// (issue: "a failure never reads as a deletion"). The same when the base is the broken side.
#[test]
#[allow(clippy::too_many_lines)] // both revisions, each in every format: one story
fn a_parent_failing_in_either_revision_makes_its_children_not_compared_not_removed() {
    let repo = repo_from("testdata/fleet");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    edit(
        repo.path(),
        "clusters/base/apps.yaml",
        "interval: ",
        "interval: [1h ",
    );
    commit_all(repo.path(), "typo");
    let broken = git(repo.path(), &["rev-parse", "HEAD"]);
    for (from, to, side) in [
        (base.trim(), broken.trim(), "head"),
        (broken.trim(), base.trim(), "base"),
    ] {
        let out = run(
            repo.path(),
            &[
                "diff", ".", "--base", from, "--head", to, "--format", "json",
            ],
        );
        // Failing in head is an error (the change breaks it); in base only, a warning.
        let expected = i32::from(side == "head");
        assert_eq!(out.code, expected, "{side}: {}", out.stderr);
        let json = out.json();
        let all: Vec<&Value> = json["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["kustomizations"].as_array().unwrap())
            .collect();
        assert!(
            all.iter()
                .all(|k| k["change"] != "removed" && k["change"] != "added"),
            "{side}: {all:#?}"
        );
        let below: Vec<&&Value> = all
            .iter()
            .filter(|k| {
                k[format!("{side}Problem")]
                    .as_str()
                    .is_some_and(|p| p.starts_with("parent flux-system/flux-system failed in"))
            })
            .collect();
        assert!(!below.is_empty(), "{side}: {all:#?}");
        for k in &below {
            assert_eq!(k["change"], "not compared", "{k:#}");
            assert_eq!(
                crate::common::ks(&k["blockedBy"]),
                "flux-system/flux-system",
                "{k:#}"
            );
            let p = k[format!("{side}Problem")].as_str().unwrap();
            assert!(
                p.contains(&format!("failed in {side}: ")) && p.contains("apps.yaml"),
                "{p}"
            );
        }
        // The failure comes first, with how much it hides, in every format.
        let failures = json["failures"].as_array().unwrap();
        assert_eq!(failures.len(), 2, "{failures:#?}");
        for f in failures {
            assert_eq!(
                crate::common::ks(&f["kustomization"]),
                "flux-system/flux-system"
            );
            assert_eq!(f["side"], side);
            assert_eq!(f["below"], below.len() / 2, "{f:#}");
            assert!(f["error"].as_str().unwrap().contains("apps.yaml"));
        }
        let text = run(
            repo.path(),
            &[
                "diff",
                "--diff-style",
                "lines",
                ".",
                "--base",
                from,
                "--head",
                to,
            ],
        )
        .stdout;
        // After the verdict and the revisions, before any cluster.
        let failed = text
            .find(&format!(
                "\nFAILED: flux-system/flux-system failed in {side} ("
            ))
            .unwrap_or(usize::MAX);
        assert!(failed < text.find("\ndev: ").unwrap_or(0), "{text}");
        assert!(!text.contains("removed"), "{text}");
        let md = run(
            repo.path(),
            &[
                "diff",
                "--diff-style",
                "lines",
                ".",
                "--base",
                from,
                "--head",
                to,
                "--format",
                "markdown",
            ],
        )
        .stdout;
        let failed_at = md.find("### ❌ What failed to render").expect(&md);
        assert!(failed_at < md.find("| cluster |").unwrap(), "{md}");
        let prove = run(
            repo.path(),
            &[
                "prove",
                "--diff-style",
                "lines",
                ".",
                "--base",
                from,
                "--head",
                to,
                "--format",
                "markdown",
            ],
        )
        .stdout;
        let failed_at = prove.find("### ❌ What failed to render").expect(&prove);
        assert!(failed_at < prove.find("| cluster |").unwrap(), "{prove}");
    }
}

/// A committed copy of `testdata/notcompared/external`: `vendor-apps` on an OCIRepository
/// the repository declares (and `substituteFrom` a ConfigMap of the cluster), `tenants` on
/// the OCIRepository a FluxInstance makes, `web` rendered.
fn with_externals() -> tempfile::TempDir {
    repo_from("testdata/notcompared/external")
}

fn kustomization_diff<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == name)
        .unwrap_or_else(|| panic!("{name} in {json:#}"))
}

// What an external Kustomization applies is a function of its own object, its source's
// object and its var sources: all byte-identical, it applies the same, and a refactor
// next to it is proved.
#[test]
fn an_external_kustomization_unchanged_in_both_revisions_is_identical_and_the_proof_passes() {
    let repo = with_externals();
    fs::create_dir(repo.path().join("apps/web/sub")).unwrap();
    fs::rename(
        repo.path().join("apps/web/configmap.yaml"),
        repo.path().join("apps/web/sub/configmap.yaml"),
    )
    .unwrap();
    let out = run(
        repo.path(),
        &["prove", "--diff-style", "lines", "--base", "HEAD", "--wide"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("dev: 2/4 artifacts identical, 2 identical (external, unchanged)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "identical (external, unchanged) flux-system/vendor-apps  - -> -\n    base and head: external: source OCIRepository/flux-system/vendor is not this repository"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "identical in base and head: its Kustomization object, OCIRepository/flux-system/vendor, ConfigMap/flux-system/cluster-vars"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("prove: PASS\n"), "{}", out.stdout);
    let json = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(json.code, 0, "{}{}", json.stdout, json.stderr);
    let json = json.json();
    assert_eq!(json["externalUnchanged"], 2);
    assert_eq!(json["notCompared"], 0);
    assert_eq!(
        kustomization_diff(&json, "flux-system/tenants")["change"],
        "external unchanged"
    );
}

// When the source object changes, what the Kustomization applies may change: not compared,
// naming the field.
#[test]
fn an_external_kustomization_whose_source_changed_is_not_compared_naming_the_change() {
    let repo = with_externals();
    edit(
        repo.path(),
        "clusters/dev/vendor.yaml",
        "tag: v1.2",
        "tag: v1.3",
    );
    let out = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let k = kustomization_diff(&json, "flux-system/vendor-apps");
    assert_eq!(k["change"], "not compared");
    assert_eq!(
        k["external"],
        "OCIRepository/flux-system/vendor changed: spec.ref.tag: \"v1.2\" -> \"v1.3\""
    );
    // The other external one did not change.
    assert_eq!(
        kustomization_diff(&json, "flux-system/tenants")["change"],
        "external unchanged"
    );
    let prove = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--expect",
            "any",
        ],
    );
    assert_eq!(prove.code, 1, "{}{}", prove.stdout, prove.stderr);
    assert!(
        prove
            .stdout
            .contains("could not see dev:flux-system/vendor-apps"),
        "{}",
        prove.stdout
    );
}

// A source no render holds is made on the cluster; when what may make it (a FluxInstance's
// spec.sync) or a var source changes, the Kustomization is not compared.
#[test]
fn an_external_kustomization_whose_source_maker_or_var_source_changed_is_not_compared() {
    let repo = with_externals();
    edit(
        repo.path(),
        "clusters/dev/operator.yaml",
        "ref: latest",
        "ref: stable",
    );
    edit(
        repo.path(),
        "clusters/dev/cluster-vars.yaml",
        "cluster_name: dev",
        "cluster_name: dev-1",
    );
    let json = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]).json();
    let tenants = kustomization_diff(&json, "flux-system/tenants");
    assert_eq!(tenants["change"], "not compared");
    assert_eq!(
        tenants["external"],
        "OCIRepository/flux-system/flux-system is not in the repository and may be made by FluxInstance/flux-system/flux: FluxInstance/flux-system/flux changed: spec.sync.ref: \"latest\" -> \"stable\""
    );
    let vendor = kustomization_diff(&json, "flux-system/vendor-apps");
    assert_eq!(vendor["change"], "not compared");
    assert_eq!(
        vendor["external"],
        "ConfigMap/flux-system/cluster-vars changed: data.cluster_name: \"dev\" -> \"dev-1\""
    );
}

// Flux applies nothing from a failed build and prunes nothing (`fluxcd/kustomize-controller`
// `internal/controller/kustomization_controller.go`: `reconcile` returns before `apply` and
// `prune`): the images below a parent that fails in head keep running. Neither `diff`'s
// review nor `images --diff` calls them removed; `images --diff` says they were not compared.
#[test]
fn a_parent_failing_in_head_removes_no_image() {
    let repo = repo_from("testdata/fleet");
    let path = repo.path().join("clusters/base/apps.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("interval: ", "interval: [", 1)).unwrap();
    let json = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]).json();
    for c in json["clusters"].as_array().unwrap() {
        assert_eq!(c["imageChanges"], serde_json::json!([]), "{c:#}");
    }
    let text = run(repo.path(), &["diff", "--base", "HEAD"]).stdout;
    assert!(!text.contains("image changes"), "{text}");
    let images = run(repo.path(), &["images", "--diff", "--base", "HEAD"]);
    assert!(!images.stdout.contains("- docker.io/"), "{}", images.stdout);
    assert!(
        images
            .stderr
            .contains("18 Kustomizations and 4 HelmReleases not compared"),
        "{}",
        images.stderr
    );
    // A failure in head is an error for both.
    assert_eq!(images.code, 1, "{}", images.stderr);
}
