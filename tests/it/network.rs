//! Builds that need the network, on the fixtures of `testdata/network`: what needs it is read
//! on the fields kustomize reads (kustomize v5.8.1 `api/internal/target/kusttarget.go`,
//! `api/internal/loader/fileloader.go`), and a Kustomization that needs it still gives what
//! its own files declare. Nothing here is fetched (`hostile.rs` checks that with a server).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{fluxsim_in, kustomization, kustomizations, repo_from};

/// A render of the fixture `testdata/network/<case>` as JSON, and its text headline.
fn render(case: &str) -> (Value, String) {
    let repo = repo_from(&format!("testdata/network/{case}"));
    let json = fluxsim_in(Some(repo.path()), &["render", ".", "--format", "json"]);
    assert_eq!(json.code, 0, "{}{}", json.stdout, json.stderr);
    let text = fluxsim_in(Some(repo.path()), &["render", "."]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    // The headline: every line up to the first table heading.
    let headline = text
        .stdout
        .lines()
        .take_while(|l| !l.starts_with("cluster "))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    (json.json(), headline)
}

/// (cluster, namespace/name, status) of every Kustomization.
fn statuses(json: &Value) -> BTreeSet<(String, String, String)> {
    kustomizations(json)
        .into_iter()
        .map(|((c, k), v)| (c, k, v["status"].as_str().unwrap().to_string()))
        .collect()
}

fn triples(want: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    want.iter()
        .map(|(c, k, s)| ((*c).to_string(), (*k).to_string(), (*s).to_string()))
        .collect()
}

fn notes(k: &Value) -> Vec<&str> {
    k["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

// kusttarget.go reads `namespace:` as the namespace transformer's value and never loads it:
// a folder of that name beside the kustomization, whose kustomization lists a URL, is no input
// of the build. Only the Kustomization whose own path is that folder needs the network.
#[test]
fn a_namespace_naming_a_folder_that_holds_a_url_needs_no_network() {
    let (json, headline) = render("namespace-folder");
    assert_eq!(
        statuses(&json),
        triples(&[
            ("one", "flux-system/api", "rendered"),
            ("one", "flux-system/apps", "rendered"),
            ("one", "flux-system/flux-system", "rendered"),
            ("one", "flux-system/web", "rendered"),
            ("one", "tekton-operator/tekton-operator", "needs-network"),
        ])
    );
    let tekton = kustomization(&json, "one", "tekton-operator");
    let err = tekton["error"].as_str().unwrap();
    assert!(
        err.contains("infrastructure/tekton/tekton-operator/kustomization.yaml reads")
            && err.contains("release.yaml"),
        "{err}"
    );
    // Its own files declare no Flux Kustomization: nothing hidden, nothing to say.
    assert_eq!(tekton["hides"], serde_json::json!([]));
    assert!(
        headline.contains("4/5 Kustomizations rendered")
            && headline.contains("1 needs the network (--network any)")
            && !headline.contains("hides"),
        "{headline}"
    );
}

// kusttarget.go accumulateResources builds a folder Flux's generator lists (`grafana/app`,
// which has a kustomization) as part of `apps`: `apps` really reads the dashboard's URL. Its
// own files, read with that generator left out, still declare every child; those render,
// and no folder below `apps` is taken for a cluster.
#[test]
fn a_parent_whose_build_reads_a_url_still_renders_the_children_its_own_files_declare() {
    let (json, headline) = render("child-url");
    let mut want = Vec::new();
    for c in ["one", "two"] {
        want.extend([
            (c, "flux-system/apps", "needs-network"),
            (c, "flux-system/external-dns", "rendered"),
            (c, "flux-system/flux-system", "rendered"),
            (c, "flux-system/grafana", "needs-network"),
            (c, "flux-system/namespaces", "rendered"),
            (c, "flux-system/podinfo", "rendered"),
            (c, "flux-system/tenants", "rendered"),
        ]);
    }
    assert_eq!(statuses(&json), triples(&want));
    let clusters: Vec<&str> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["one", "two"], "no phantom cluster");
    let apps = kustomization(&json, "one", "apps");
    assert!(apps["sha256"].is_null() && apps["objects"] == serde_json::json!([]));
    assert_eq!(apps["hides"], serde_json::json!([]));
    assert!(
        notes(apps)
            .iter()
            .any(|n| n.contains("declare 5 Kustomizations") && n.contains("presumes")),
        "{apps:#}"
    );
    for child in [
        "external-dns",
        "grafana",
        "namespaces",
        "podinfo",
        "tenants",
    ] {
        let k = kustomization(&json, "one", child);
        assert!(
            notes(k).iter().any(|n| n.starts_with(
                "applied by flux-system/apps, which needs the network: found in its own files"
            )),
            "{child}: {k:#}"
        );
    }
    // A child renders as its own build gives it: the same as in a render where the parent
    // needs nothing (`podinfo` of both clusters alike).
    assert_eq!(
        kustomization(&json, "one", "podinfo")["sha256"],
        kustomization(&json, "two", "podinfo")["sha256"]
    );
    assert!(
        headline.contains("10/14 Kustomizations rendered in 2 clusters")
            && headline.contains("4 need the network (--network any)")
            && !headline.contains("hide"),
        "{headline}"
    );
}

// A Kustomization that needs the network is never compared, and what it does not hide is:
// a diff of the same revision says it is not compared and the children are identical.
#[test]
fn a_kustomization_that_needs_the_network_is_not_compared_and_its_children_are() {
    let repo = repo_from("testdata/network/child-url");
    let out = fluxsim_in(
        Some(repo.path()),
        &["diff", ".", "--base", "HEAD", "--format", "json"],
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let changes: BTreeSet<(String, String)> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "one")
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .map(|k| {
            let id = &k["kustomization"];
            (
                format!(
                    "{}/{}",
                    id["namespace"].as_str().unwrap(),
                    id["name"].as_str().unwrap()
                ),
                k["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("flux-system/apps", "not compared"),
        ("flux-system/external-dns", "identical"),
        ("flux-system/flux-system", "identical"),
        ("flux-system/grafana", "not compared"),
        ("flux-system/namespaces", "identical"),
        ("flux-system/podinfo", "identical"),
        ("flux-system/tenants", "identical"),
    ]
    .iter()
    .map(|(k, c)| ((*k).to_string(), (*c).to_string()))
    .collect();
    assert_eq!(changes, want, "{json:#}");
}

// When its own files cannot be built without the remote base (a patch of the base's
// Deployment matches nothing: kustomize's "no matches for Id"), nothing below it is found:
// the headline says how many Kustomizations declared below it that hides.
#[test]
fn the_headline_says_how_many_kustomizations_a_kustomization_that_needs_the_network_hides() {
    let (json, headline) = render("hidden");
    assert_eq!(
        statuses(&json),
        triples(&[("three", "flux-system/flux-system", "needs-network")])
    );
    let root = kustomization(&json, "three", "flux-system");
    assert_eq!(
        root["hides"],
        serde_json::json!(["app-a", "app-b", "app-c", "apps"])
    );
    assert!(
        notes(root).iter().any(|n| n.contains("could not be built")
            && n.contains("no matches for Id")
            && n.contains("it hides 4 Kustomizations declared below it")),
        "{root:#}"
    );
    assert!(
        headline
            .contains("1 needs the network (--network any; it hides 4 Kustomizations below it)"),
        "{headline}"
    );
    // A diff says so where it says the root is not compared.
    let repo = repo_from("testdata/network/hidden");
    let diff = fluxsim_in(Some(repo.path()), &["diff", ".", "--base", "HEAD"]);
    assert!(
        diff.stdout
            .contains("it hides 4 Kustomizations declared below it"),
        "{}",
        diff.stdout
    );
}
