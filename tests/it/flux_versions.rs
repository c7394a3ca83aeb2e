//! Which Flux and Kubernetes versions each cluster runs, read from the repository's evidence
//! (`crates/core/src/versions/`), and the behaviour that follows the version: strict
//! substitution (on by default from kustomize-controller v1.9.0, Flux v2.9), FS103's
//! severity, the Flux APIs `validate` takes as served.

use serde_json::Value;

use crate::common::{commit_all, fluxsim, repo_from, yaml_objects};

fn cluster<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no cluster {name}: {json:#}"))
}

// flux2 `flux install`/`bootstrap` writes `# Flux Version:` and labels every object
// `app.kubernetes.io/version`; the kustomize-controller image's minor is Flux's (flux2
// manifests/bases/kustomize-controller): the image, the strongest evidence, is named.
#[test]
fn the_flux_version_is_read_from_the_kustomize_controller_image_and_said_with_its_source() {
    let repo = repo_from("testdata/versions/flux-2-4");
    let json = fluxsim(&["render", repo.path().to_str().unwrap(), "-o", "json"]).json();
    let dev = cluster(&json, "dev");
    assert_eq!(dev["versions"]["flux"]["version"], "v2.4.0", "{dev:#}");
    let basis = &dev["versions"]["flux"]["basis"];
    assert_eq!(basis["kind"], "evidence");
    assert!(
        basis["what"]
            .as_str()
            .unwrap()
            .contains("ghcr.io/fluxcd/kustomize-controller:v1.4.0"),
        "{basis:#}"
    );
    assert_eq!(dev["versions"]["kubernetes"], Value::Null);
}

// kustomize-controller internal/features/features.go: StrictPostBuildSubstitutions is off by
// default before v1.9.0, so Flux v2.4 empties `${OPTIONAL_SUFFIX}` where v2.9 fails.
#[test]
fn a_cluster_on_flux_before_2_9_substitutes_without_strict_mode() {
    let repo = repo_from("testdata/versions/flux-2-4");
    let dir = repo.path().to_str().unwrap();
    let json = fluxsim(&["render", dir, "-o", "json"]).json();
    assert_eq!(cluster(&json, "dev")["strict"], false, "{json:#}");
    let out = fluxsim(&["build", dir, "-k", "apps"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cm = yaml_objects(&out.stdout)
        .into_iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("the ConfigMap");
    assert_eq!(cm["data"]["suffix"], "x", "{}", out.stdout);
    // The same tree said to run Flux v2.9 fails the Kustomization.
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[versions]\nflux = \"2.9\"\n",
    )
    .unwrap();
    commit_all(repo.path(), "on 2.9");
    let json = fluxsim(&["render", dir, "-o", "json"]).json();
    let dev = cluster(&json, "dev");
    assert_eq!(dev["strict"], true);
    assert_eq!(dev["versions"]["flux"]["basis"]["kind"], "config");
    assert_eq!(dev["versions"]["flux"]["basis"]["key"], "[versions] flux");
    let apps = dev["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "apps")
        .unwrap();
    assert_eq!(apps["status"], "failed", "{apps:#}");
}

// FS103 follows the Flux version: a warning where the var is emptied, an error where strict
// substitution fails the Kustomization.
#[test]
fn fs103_is_a_warning_on_a_flux_that_empties_unset_vars() {
    let repo = repo_from("testdata/versions/flux-2-4");
    let out = fluxsim(&["audit", repo.path().to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let json = out.json();
    let f: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS103")
        .collect();
    assert_eq!(f.len(), 1, "{json:#}");
    assert_eq!(f[0]["severity"], "warning");
    assert!(f[0]["message"].as_str().unwrap().contains("empty string"));
}

// With nothing in the repository that says it, the newest release fluxsim reproduces is
// presumed, and the report says it is a presumption.
#[test]
fn without_evidence_the_flux_version_is_presumed_and_says_so() {
    let json = fluxsim(&["render", "testdata/fleet", "-o", "json"]).json();
    let dev = cluster(&json, "dev");
    assert_eq!(dev["versions"]["flux"]["basis"]["kind"], "presumed");
    assert!(dev["versions"]["flux"]["basis"]["why"]
        .as_str()
        .unwrap()
        .contains("[versions] flux"));
}

// Flux v2.4's CRDs (source-controller v1.4, helm-controller v1.1) serve v1beta2 sources and
// v2beta2 HelmReleases; Flux v2.8 removes both (the embedded CRDs of every minor): valid for
// the cluster, a warning for its upgrade that names the release.
#[test]
fn a_flux_2_4_repository_s_v1beta2_kinds_are_valid_with_upgrade_warnings() {
    let repo = repo_from("testdata/versions/flux-2-4");
    let out = fluxsim(&["validate", repo.path().to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["counts"]["error"], 0, "{json:#}");
    let c = &json["clusters"][0];
    assert_eq!(c["flux"]["version"], "v2.4", "{c:#}");
    assert!(c["flux"]["basis"]
        .as_str()
        .unwrap()
        .contains("kustomize-controller:v1.4.0"));
    let warnings: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS307")
        .collect();
    assert_eq!(warnings.len(), 2, "{json:#}");
    for w in &warnings {
        assert_eq!(w["severity"], "warning");
        assert!(
            w["message"]
                .as_str()
                .unwrap()
                .contains("Flux v2.8 removes it"),
            "{w:#}"
        );
    }
    assert!(warnings.iter().any(|w| w["message"]
        .as_str()
        .unwrap()
        .contains("move it to `source.toolkit.fluxcd.io/v1`")));
    // Said to run Flux v2.9 (its strict gate off, so that `apps` renders), the same objects
    // are not served: FS303, naming the releases that serve them.
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[versions]\nflux = \"2.9\"\n\n[kustomize_controller]\n\
         feature_gates = [\"StrictPostBuildSubstitutions=false\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "on 2.9");
    let json = fluxsim(&["validate", repo.path().to_str().unwrap(), "-o", "json"]).json();
    let not_served: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS303")
        .collect();
    assert_eq!(not_served.len(), 2, "{json:#}");
    for f in &not_served {
        let m = f["message"].as_str().unwrap();
        assert!(
            m.contains("v2.7, removed in v2.8; cluster `dev` runs Flux v2.9"),
            "{f:#}"
        );
    }
}

// kubernetes apiserver admission: mutating plugins run before validation, so a required
// field a matching MutatingWebhookConfiguration may set is not a defect fluxsim can show.
#[test]
fn a_required_field_a_matching_mutating_webhook_may_set_is_a_note() {
    let repo = repo_from("testdata/versions/mutating-webhook");
    let dir = repo.path().to_str().unwrap();
    let out = fluxsim(&["validate", dir, "-o", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let json = out.json();
    let required: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS301")
        .collect();
    assert_eq!(required.len(), 2, "{json:#}");
    for f in &required {
        assert_eq!(f["severity"], "info");
        assert!(
            f["message"].as_str().unwrap().contains("`flux-defaults`"),
            "{f:#}"
        );
    }
    // Without the webhook, the same fields are errors.
    std::fs::remove_file(repo.path().join("infra/webhook.yaml")).unwrap();
    std::fs::write(
        repo.path().join("infra/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: default\n",
    )
    .unwrap();
    commit_all(repo.path(), "no webhook");
    let out = fluxsim(&["validate", dir, "-o", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["counts"]["error"], 2);
}
