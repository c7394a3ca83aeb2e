//! Sources other than the cluster's own GitRepository, end to end
//! (`testdata/sources/<case>`): a source mapped to a folder with `--source` or fluxsim.toml's
//! `[sources]` (confined to the repository when fluxsim.toml says it), another checkout
//! mapped from the command line, and source-watcher's ArtifactGenerator simulated.
//!
//! Fixtures are copied into throw-away git repositories, as in `tests/it/render.rs`.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{commit_all, fluxsim, kustomization, repo_from, yaml_objects, Output};

const MAP_OCI: &str = "OCIRepository/flux-system/manifests=./kubernetes";

fn fixture(case: &str) -> tempfile::TempDir {
    repo_from(&format!("testdata/sources/{case}"))
}

fn render(repo: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["render", repo.to_str().unwrap()];
    args.extend_from_slice(extra);
    fluxsim(&args)
}

fn render_json(repo: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    let r = render(repo, &args);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    r.json()
}

fn status(k: &Value) -> &str {
    k["status"].as_str().unwrap()
}

fn error(k: &Value) -> &str {
    k["error"].as_str().unwrap_or("")
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

fn object_names(k: &Value) -> Vec<String> {
    k["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn build(repo: &Path, name: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "build",
        repo.to_str().unwrap(),
        "--cluster",
        "test",
        "-k",
        name,
    ];
    args.extend_from_slice(extra);
    let r = fluxsim(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    yaml_objects(&r.stdout)
}

#[test]
fn source_not_mapped_is_external_and_the_summary_names_the_flag() {
    let repo = fixture("oci-mapped");
    let r = render(repo.path(), &[]);
    assert_eq!(r.code, 0, "external is not a failure: {}", r.stderr);
    assert!(
        r.stdout
            .contains("1/3 Kustomizations rendered in 1 cluster; 2 external"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("--source OCIRepository/flux-system/manifests=PATH (2)"),
        "{}",
        r.stdout
    );
    let json = render_json(repo.path(), &[]);
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "external");
    assert!(error(web).contains("--source OCIRepository/flux-system/manifests=PATH"));
}

#[test]
fn oci_repository_mapped_with_source_renders_from_the_folder() {
    let repo = fixture("oci-mapped");
    let json = render_json(repo.path(), &["--source", MAP_OCI]);
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "rendered", "{web:#}");
    assert_eq!(object_names(web), ["ConfigMap/web-settings"]);
    assert!(notes(web)
        .contains("built from OCIRepository/flux-system/manifests=./kubernetes (--source)"));
    let objects = build(repo.path(), "web", &["--source", MAP_OCI]);
    assert_eq!(objects[0]["data"]["greeting"], "hello");
}

#[test]
fn mapped_folder_is_confined_to_its_root() {
    // kustomize-controller's secure file system is rooted at the artifact: a file above
    // ./kubernetes is not in what CI pushed.
    let repo = fixture("oci-mapped");
    let r = render(repo.path(), &["--source", MAP_OCI, "--format", "json"]);
    assert_eq!(r.code, 1);
    let json = r.json();
    let escape = kustomization(&json, "test", "escape");
    assert_eq!(status(escape), "failed");
    assert!(
        error(escape).contains("fs-security-constraint")
            && error(escape).contains("kubernetes/apps/escape/kustomization.yaml"),
        "{}",
        error(escape)
    );
    assert!(!r.stdout.contains("must-not-render"));
}

#[test]
fn fluxsim_toml_mapping_renders_like_the_flag() {
    let repo = fixture("oci-mapped");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[sources]\n\"OCIRepository/flux-system/manifests\" = \"kubernetes\"\n",
    )
    .unwrap();
    commit_all(repo.path(), "map the OCI source");
    let json = render_json(repo.path(), &[]);
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "rendered", "{web:#}");
    assert!(notes(web).contains("(fluxsim.toml)"), "{}", notes(web));
    // The command line wins over fluxsim.toml.
    let json = render_json(
        repo.path(),
        &["--source", "OCIRepository/flux-system/manifests=./clusters"],
    );
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "failed", "{web:#}");
    assert!(error(web).contains("does not exist"), "{}", error(web));
}

#[test]
fn fluxsim_toml_mapping_that_leaves_the_repository_is_refused() {
    let repo = fixture("toml-escape");
    let r = render(repo.path(), &[]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("fluxsim.toml:6:")
            && r.stderr.contains("outside the repository")
            && r.stderr.contains("--source"),
        "{}",
        r.stderr
    );
    for path in ["../outside", "kubernetes/../../outside"] {
        fs::write(
            repo.path().join("fluxsim.toml"),
            format!("[sources]\n\"OCIRepository/flux-system/manifests\" = \"{path}\"\n"),
        )
        .unwrap();
        commit_all(repo.path(), "climb out");
        let r = render(repo.path(), &[]);
        assert_eq!(r.code, 2, "{path}: {}", r.stderr);
        assert!(r.stderr.contains("fluxsim.toml:2:"), "{}", r.stderr);
    }
    // A symbolic link inside the repository is not a folder of it (source-controller never
    // archives links): nothing behind it is read.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", repo.path().join("linked")).unwrap();
        fs::write(
            repo.path().join("fluxsim.toml"),
            "[sources]\n\"OCIRepository/flux-system/manifests\" = \"linked\"\n",
        )
        .unwrap();
        commit_all(repo.path(), "a link out");
        let json = render_json(repo.path(), &[]);
        let web = kustomization(&json, "test", "web");
        assert_eq!(status(web), "failed", "{web:#}");
        assert!(
            error(web).contains("no folder of the repository"),
            "{}",
            error(web)
        );
    }
}

#[test]
fn prove_plants_canaries_in_a_mapped_folder_and_sees_them() {
    let repo = fixture("oci-mapped");
    fs::remove_dir_all(repo.path().join("kubernetes/apps/escape")).unwrap();
    commit_all(repo.path(), "drop the escape");
    let r = fluxsim(&[
        "prove",
        "--diff-style",
        "lines",
        repo.path().to_str().unwrap(),
        "--base",
        "HEAD",
        "--source",
        MAP_OCI,
        "--canary-path",
        "kubernetes/apps/web/configmap.yaml",
        "--allow-blind",
        "--wide",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("in kubernetes/apps/web/configmap.yaml: detected, restored"),
        "{}",
        r.stdout
    );
}

#[test]
fn source_flag_errors_are_input_errors() {
    let repo = fixture("oci-mapped");
    for (arg, says) in [
        ("Helm/flux-system/x=./kubernetes", "not a kind"),
        (
            "OCIRepository/flux-system/manifests",
            "KIND/NAMESPACE/NAME=PATH",
        ),
        (
            "OCIRepository/flux-system/manifests=../elsewhere",
            "leaves the repository",
        ),
        (
            "OCIRepository/flux-system/manifests=/nonexistent/fluxsim",
            "cannot be read",
        ),
    ] {
        let r = render(repo.path(), &["--source", arg]);
        assert_eq!(r.code, 2, "{arg}");
        assert!(r.stderr.contains(says), "{arg}: {}", r.stderr);
    }
}

#[test]
fn another_checkout_mapped_from_the_command_line_renders_with_its_own_source_rules() {
    let repo = fixture("oci-mapped");
    // The manifests repository, checked out beside this one; an untracked file is not in
    // what Flux would fetch.
    let other = tempfile::tempdir().unwrap();
    crate::common::copy_dir(&repo.path().join("kubernetes"), other.path());
    crate::common::git(other.path(), &["init", "-q", "-b", "main"]);
    commit_all(other.path(), "manifests");
    fs::write(
        other.path().join("apps/web/untracked.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untracked\n",
    )
    .unwrap();
    let arg = format!(
        "OCIRepository/flux-system/manifests={}",
        other.path().display()
    );
    let json = render_json(repo.path(), &["--source", &arg]);
    let web = kustomization(&json, "test", "web");
    assert_eq!(status(web), "rendered", "{web:#}");
    assert_eq!(object_names(web), ["ConfigMap/web-settings"]);
}

#[test]
fn diff_reads_a_mapped_folder_at_each_revision() {
    let repo = fixture("oci-mapped");
    let cm = repo.path().join("kubernetes/apps/web/configmap.yaml");
    fs::write(
        &cm,
        fs::read_to_string(&cm).unwrap().replace("hello", "bonjour"),
    )
    .unwrap();
    commit_all(repo.path(), "greet in French");
    let r = fluxsim(&[
        "diff",
        repo.path().to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--source",
        MAP_OCI,
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let ks = json["clusters"][0]["kustomizations"].as_array().unwrap();
    let web = ks
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/web")
        .unwrap();
    assert_eq!(web["change"], "changed", "{web:#}");
    assert!(web["objects"][0]["diff"]
        .as_str()
        .unwrap()
        .contains("+  greeting: bonjour"));
    let root = ks
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/flux-system")
        .unwrap();
    assert_eq!(root["change"], "identical");
}

#[test]
fn artifact_generator_with_two_copy_rules_renders_its_external_artifact() {
    let repo = fixture("artifact-generator");
    let json = render_json(repo.path(), &[]);
    let apps = kustomization(&json, "test", "apps");
    assert_eq!(status(apps), "rendered", "{apps:#}");
    assert!(notes(apps).contains(
        "ExternalArtifact/flux-system/apps, made by ArtifactGenerator flux-system/monorepo"
    ));
    let objects = build(repo.path(), "apps", &[]);
    assert_eq!(objects.len(), 1);
    // The overlay copied to test/ reaches the base copied to base/, as in the repository.
    assert_eq!(objects[0]["metadata"]["namespace"], "web");
    assert_eq!(objects[0]["spec"]["replicas"], 2);
}

#[test]
fn artifact_generator_change_in_a_copied_file_is_a_diff_and_canaries_see_through_it() {
    let repo = fixture("artifact-generator");
    let dep = repo.path().join("apps/base/web/deployment.yaml");
    fs::write(
        &dep,
        fs::read_to_string(&dep)
            .unwrap()
            .replace("nginx:1.27", "nginx:1.28"),
    )
    .unwrap();
    commit_all(repo.path(), "bump nginx");
    let r = fluxsim(&[
        "diff",
        "--diff-style",
        "lines",
        repo.path().to_str().unwrap(),
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("changed Deployment.apps/web/web")
            && r.stdout.contains("+      - image: nginx:1.28"),
        "{}",
        r.stdout
    );
    // A file the generator leaves out changes nothing.
    let readme = repo.path().join("apps/base/README.md");
    fs::write(&readme, "Still excluded.\n").unwrap();
    commit_all(repo.path(), "docs");
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
    // One artifact reads the generator's files: no shared canary (it must be in a file two
    // artifacts read), and the proof says so rather than planting one that proves nothing.
    assert!(
        r.stdout.contains("canaries 1/1 detected, 1/1 restored")
            && r.stdout
                .contains("no shared canary: no file of the repository is read by two"),
        "{}",
        r.stdout
    );
}
