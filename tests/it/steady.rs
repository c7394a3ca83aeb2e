//! The steady state end to end (`testdata/steady/<case>`): var sources found anywhere in the
//! cluster, in any order, or in a file a bootstrap applies; placeholders for what cannot be
//! known offline; `dependsOn` never blocking a render; what bootstrap applies existing from
//! the start; strictness following the cluster's feature gate.
//!
//! Fixtures are copied into throw-away git repositories, as in `tests/it/render.rs`.

use std::fs;

use serde_json::Value;

use crate::common::{commit_all, fluxsim, kustomization, repo_from, yaml_objects, Output};

fn fixture(case: &str) -> tempfile::TempDir {
    repo_from(&format!("testdata/steady/{case}"))
}

fn render_json(repo: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = vec!["render", repo.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    fluxsim(&args)
}

/// `fluxsim build` of one Kustomization, as objects.
fn built(repo: &std::path::Path, cluster: &str, name: &str) -> Vec<Value> {
    let r = fluxsim(&[
        "build",
        repo.to_str().unwrap(),
        "--cluster",
        cluster,
        "-k",
        name,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    yaml_objects(&r.stdout)
}

fn status(k: &Value) -> &str {
    k["status"].as_str().unwrap()
}

fn notes(k: &Value) -> String {
    k["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn from(k: &Value, var: &str) -> String {
    k["vars"][var]["from"]
        .as_str()
        .unwrap_or_else(|| panic!("no var {var}: {k:#}"))
        .to_string()
}

#[test]
fn root_applying_its_own_vars_substitutes_them() {
    let repo = fixture("own-vars");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let root = kustomization(&json, "test", "flux-system");
    assert_eq!(status(root), "rendered", "{root:#}");
    assert_eq!(
        from(root, "CLUSTER_NAME"),
        "applied by flux-system/flux-system"
    );
    let objects = built(repo.path(), "test", "flux-system");
    let info = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "cluster-info")
        .unwrap();
    assert_eq!(info["data"]["name"], "test");
    assert_eq!(info["data"]["region"], "eu-west-1");
}

#[test]
fn var_source_applied_by_a_later_kustomization_is_found() {
    let repo = fixture("later-source");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let apps = kustomization(&json, "test", "apps");
    assert_eq!(status(apps), "rendered", "{apps:#}");
    assert_eq!(from(apps, "GREETING"), "applied by flux-system/settings");
    assert_eq!(
        built(repo.path(), "test", "apps")[0]["data"]["greeting"],
        "hello"
    );
    // `graph` keeps the cold-start view: the source is not applied before `apps` (FS208).
    let g = fluxsim(&["graph", repo.path().to_str().unwrap(), "--format", "json"]);
    assert!(g.stdout.contains("FS208"), "{}", g.stdout);
}

#[test]
fn failed_dependency_leaves_a_healthy_dependent_rendered_with_a_note() {
    let repo = fixture("failed-dependency");
    let r = render_json(repo.path(), &[]);
    assert_eq!(
        r.code, 1,
        "the failed dependency is a finding: {}",
        r.stderr
    );
    let json = r.json();
    assert_eq!(status(kustomization(&json, "test", "broken")), "failed");
    let healthy = kustomization(&json, "test", "healthy");
    assert_eq!(status(healthy), "rendered", "{healthy:#}");
    assert!(
        notes(healthy).contains("dependency `flux-system/broken` failed"),
        "{}",
        notes(healthy)
    );
    assert_eq!(
        built(repo.path(), "test", "healthy")[0]["data"]["state"],
        "ok"
    );
}

#[test]
fn external_secret_vars_render_as_placeholders_and_the_digest_stays_when_an_unrelated_file_changes()
{
    let repo = fixture("external-secret");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "rendered", "{web:#}");
    let placeholder = "fluxsim-unknown:Secret/flux-system/cluster-secrets:SECRET_DOMAIN";
    assert_eq!(
        web["unknownVars"],
        serde_json::json!([{"name": "SECRET_DOMAIN",
            "sources": ["Secret/flux-system/cluster-secrets"], "placeholder": placeholder}])
    );
    assert!(notes(web).contains("cluster-secrets"), "{}", notes(web));
    let objects = built(repo.path(), "test", "web");
    let ingress = objects.iter().find(|o| o["kind"] == "Ingress").unwrap();
    // The inline var is known; only the unknown source's var is placeheld.
    assert_eq!(ingress["metadata"]["name"], "web");
    assert_eq!(
        ingress["spec"]["rules"][0]["host"],
        format!("web.{placeholder}")
    );
    let digest = web["sha256"].clone();
    let other = kustomization(&json, "test", "other")["sha256"].clone();

    let cm = repo.path().join("apps/other/configmap.yaml");
    let text = fs::read_to_string(&cm).unwrap().replace("v1", "v2");
    fs::write(&cm, text).unwrap();
    commit_all(repo.path(), "an unrelated change");
    let again = render_json(repo.path(), &[]).json();
    assert_eq!(kustomization(&again, "test", "web")["sha256"], digest);
    assert_ne!(kustomization(&again, "test", "other")["sha256"], other);

    // `--strict-sources` fails it as before the steady state.
    let strict = render_json(repo.path(), &["--strict-sources"]);
    assert_eq!(strict.code, 1);
    let web = kustomization(&strict.json(), "test", "web").clone();
    assert_eq!(status(&web), "failed");
    assert!(
        web["error"]
            .as_str()
            .unwrap()
            .contains("Secret/cluster-secrets"),
        "{web:#}"
    );
}

#[test]
fn feature_gate_off_in_a_gotk_components_patch_makes_substitution_lenient() {
    let repo = fixture("gate-off");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let cluster = &json["clusters"][0];
    assert_eq!(cluster["strict"], false);
    assert!(
        cluster["strictFrom"]
            .as_str()
            .unwrap()
            .contains("Deployment.apps/flux-system/kustomize-controller"),
        "{cluster:#}"
    );
    assert_eq!(status(kustomization(&json, "test", "web")), "rendered");
    let cm = &built(repo.path(), "test", "web")[0];
    assert_eq!(cm["data"]["app"], "web");
    assert_eq!(cm["data"]["unset"], "empty-");

    // fluxsim.toml wins over what the repository's manifests set.
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[kustomize_controller]\nfeature_gates = [\"StrictPostBuildSubstitutions=true\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "strict again");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    assert_eq!(json["clusters"][0]["strict"], true);
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "failed");
    assert!(
        web["error"].as_str().unwrap().contains("UNDEFINED"),
        "{web:#}"
    );
}

// fluxsim reads the tree as git tracks it (what source-controller archives): a
// fluxsim.toml the work tree holds but git does not track, or ignores, is not read. That is
// said, with how to track it, rather than skipped without a word.
#[test]
fn an_untracked_or_ignored_fluxsim_toml_is_named_with_how_to_track_it() {
    let repo = fixture("gate-off");
    let config =
        "[kustomize_controller]\nfeature_gates = [\"StrictPostBuildSubstitutions=true\"]\n";
    fs::write(repo.path().join("fluxsim.toml"), config).unwrap();
    let r = render_json(repo.path(), &[]);
    // Not read: the repository's gate (off) holds, `web` renders.
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["clusters"][0]["strict"], false);
    assert_eq!(
        r.stderr.matches("fluxsim.toml").count(),
        2,
        "said once: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "fluxsim: warning: fluxsim.toml is not tracked by git: track it with `git add \
             fluxsim.toml` (or render with --include-untracked); until then fluxsim reads \
             the repository as git tracks it (what Flux sees) and does not use its settings"
        ),
        "{}",
        r.stderr
    );
    // Every command that renders says it.
    let graph = fluxsim(&["graph", repo.path().to_str().unwrap()]);
    assert!(
        graph.stderr.contains("fluxsim.toml is not tracked"),
        "{}",
        graph.stderr
    );
    // --include-untracked reads it: no warning, and its gate holds.
    let r = render_json(repo.path(), &["--include-untracked"]);
    assert!(!r.stderr.contains("fluxsim.toml"), "{}", r.stderr);
    assert_eq!(r.json()["clusters"][0]["strict"], true);
    // Ignored by git: `git add -f`.
    fs::write(repo.path().join(".gitignore"), "fluxsim.toml\n").unwrap();
    commit_all(repo.path(), "ignore the config");
    let r = render_json(repo.path(), &[]);
    assert!(
        r.stderr.contains(
            "fluxsim: warning: fluxsim.toml is ignored by git: track it with `git add -f \
             fluxsim.toml`"
        ),
        "{}",
        r.stderr
    );
    // Tracked: read, and nothing to say.
    crate::common::git(repo.path(), &["add", "-f", "fluxsim.toml"]);
    let r = render_json(repo.path(), &[]);
    assert!(!r.stderr.contains("fluxsim.toml"), "{}", r.stderr);
    assert_eq!(r.json()["clusters"][0]["strict"], true);
}

#[test]
fn bootstrap_applied_config_map_file_that_nothing_applies_is_each_clusters_own() {
    let repo = fixture("bootstrap");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    for (cluster, domain, token) in [
        ("dev", "dev.example.net", "dev-token"),
        ("prod", "example.net", "prod-token"),
    ] {
        let web = kustomization(&json, cluster, "web");
        assert_eq!(status(web), "rendered", "{cluster}: {web:#}");
        assert!(
            from(web, "DOMAIN").contains(&format!(
                "file kubernetes/{cluster}/components/common/vars/cluster-settings.yaml"
            )),
            "{cluster}: {}",
            from(web, "DOMAIN")
        );
        assert_eq!(from(web, "TOKEN"), "declared in fluxsim.toml");
        // `flux`, beside the root in the folder bootstrap applies, is external and counts as
        // Ready: no note on what depends on it.
        assert_eq!(status(kustomization(&json, cluster, "flux")), "external");
        assert_eq!(notes(web), "", "{cluster}");
        let cm = &built(repo.path(), cluster, "web")[0];
        assert_eq!(cm["data"]["cluster"], cluster);
        assert_eq!(cm["data"]["url"], format!("https://web.{domain}"));
        assert_eq!(cm["data"]["token"], token);
    }
}

#[test]
fn invalid_fluxsim_toml_is_an_input_error_naming_the_file_and_line() {
    let repo = fixture("own-vars");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[bootstrap]\n\n[[bootstrap.objects]]\nkind = \"Deployment\"\nname = \"x\"\nvars = {}\n",
    )
    .unwrap();
    commit_all(repo.path(), "bad config");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("fluxsim.toml:3:"), "{}", r.stderr);
}

// A Secret an ExternalSecret of the cluster makes at run time (external-secrets creates
// `spec.target.name` in the ExternalSecret's namespace) is the source Flux finds, here one
// a kustomize Component adds beside every child Kustomization; the template's literal
// values are known.
#[test]
fn secret_made_by_an_external_secret_from_a_component_is_found_with_its_literal_values() {
    let repo = fixture("component-vars");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "rendered", "{web:#}");
    assert!(
        notes(web).contains(
            "Secret/web/cluster-vars is made at run time by ExternalSecret/web/cluster-vars \
             (applied by flux-system/cluster-apps)"
        ),
        "{}",
        notes(web)
    );
    assert!(from(web, "CONFIG_REPLICAS").starts_with("made at run time by ExternalSecret"));
    assert_eq!(
        web["unknownVars"][0]["placeholder"],
        "fluxsim-unknown:Secret/web/cluster-vars:SECRET_DOMAIN"
    );
    let objects = built(repo.path(), "test", "web");
    let deployment = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 2);
}

// The proof a refactor needs on an ExternalSecret-fed Kustomization: placeholders are stable,
// so moving a file and reordering `resources:` proves identical, canaries detected.
#[test]
fn refactor_of_an_external_secret_fed_kustomization_proves_identical_with_canaries() {
    let repo = fixture("component-vars");
    let app = repo.path().join("apps/web/app");
    fs::create_dir_all(app.join("network")).unwrap();
    fs::rename(app.join("service.yaml"), app.join("network/service.yaml")).unwrap();
    fs::write(
        app.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  \
         - ./ingress.yaml\n  - ./network/service.yaml\n  - ./deployment.yaml\n",
    )
    .unwrap();
    commit_all(repo.path(), "move the service, reorder resources");
    let r = fluxsim(&[
        "prove",
        "--diff-style",
        "lines",
        repo.path().to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // No file of this fixture is read by two artifacts: the overlay's canary only, and the
    // proof says it planted no shared one.
    assert!(
        r.stdout
            .contains("test: 3/3 artifacts identical; canaries 1/1 detected, 1/1 restored")
            && r.stdout
                .contains("no shared canary: no file of the repository is read by two"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("prove: PASS"), "{}", r.stdout);
}

// kustomize-controller does not reconcile a suspended Kustomization: what the cluster runs is
// what it last applied, unknown offline. Rendered as `suspended` with a note, it is never
// compared, changed or not.
#[test]
fn suspended_kustomization_is_reported_with_a_note_and_never_compared() {
    let repo = fixture("suspended");
    let r = render_json(repo.path(), &[]);
    assert_eq!(r.code, 0, "suspended is not a failure: {}", r.stderr);
    let json = r.json();
    let paused = kustomization(&json, "test", "paused");
    assert_eq!(status(paused), "suspended");
    assert!(
        notes(paused).contains("spec.suspend: true"),
        "{}",
        notes(paused)
    );
    let text = fluxsim(&["render", repo.path().to_str().unwrap()]);
    assert!(
        text.stdout
            .contains("2/3 Kustomizations rendered in 1 cluster; 1 suspended"),
        "{}",
        text.stdout
    );

    let cm = repo.path().join("apps/paused/configmap.yaml");
    fs::write(&cm, fs::read_to_string(&cm).unwrap().replace("v1", "v2")).unwrap();
    commit_all(repo.path(), "change the suspended path");
    for base in ["HEAD~1", "HEAD"] {
        let r = fluxsim(&[
            "diff",
            repo.path().to_str().unwrap(),
            "--base",
            base,
            "--head",
            "HEAD",
            "--format",
            "json",
            "--fail-on",
            "warning",
        ]);
        assert_eq!(r.code, 1, "{base}: never identical: {}", r.stdout);
        let json = r.json();
        let ks = json["clusters"][0]["kustomizations"].as_array().unwrap();
        let change = |name: &str| {
            ks.iter()
                .find(|k| crate::common::ks(&k["kustomization"]) == name)
                .map(|k| k["change"].clone())
                .unwrap()
        };
        assert_eq!(change("flux-system/paused"), "not compared", "{base}");
        assert_eq!(change("flux-system/live"), "identical", "{base}");
    }
    let prove = fluxsim(&[
        "prove",
        "--diff-style",
        "lines",
        repo.path().to_str().unwrap(),
        "--base",
        "HEAD",
    ]);
    assert_eq!(prove.code, 1, "{}", prove.stdout);
    assert!(
        prove
            .stdout
            .contains("could not see test:flux-system/paused"),
        "{}",
        prove.stdout
    );
}
