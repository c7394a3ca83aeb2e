//! `diff` and `prove` as a reviewer reads them (issue 26), through the binary: the semantic
//! diff by default (a chart bump shows its image and hides, counting, its label and
//! checksum churn; a list reordered reads "order changed"), `--strip` and the base's
//! `[diff] strip`, `--skip-secrets`/`--skip-crds`, what prune deletes and the hazards it
//! brings, the JSON's semantic changes, the GitLab and Gitea flavours, `--out` with comments
//! that fit (a generated change of 500 Kustomizations), and the HTML report in headless
//! Chromium (its layout measured on `testdata/long-names`: names whole in the sidebar, paths
//! broken between segments, nothing wider than the page, no emoji).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{commit_all, fluxsim_in, repo_from, Output};

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// `fluxsim diff --base HEAD ARGS` in `repo` (its work tree is the head).
fn diff(repo: &Path, args: &[&str]) -> Output {
    let all: Vec<&str> = ["diff", "--base", "HEAD"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    fluxsim_in(Some(repo), &all)
}

/// The fleet with a checksum annotation in its podinfo chart (committed), then a chart bump
/// as Renovate makes it: the chart's version and appVersion, and the release's image tag.
fn chart_bump() -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "charts/podinfo/templates/deployment.yaml",
        "  name: {{ include \"podinfo.fullname\" . }}\n  labels:",
        "  name: {{ include \"podinfo.fullname\" . }}\n  annotations:\n    checksum/config: {{ .Chart.Version | sha256sum }}\n  labels:",
    );
    commit_all(repo.path(), "a checksum annotation");
    edit(
        repo.path(),
        "charts/podinfo/Chart.yaml",
        "version: 6.5.0",
        "version: 6.6.0",
    );
    edit(
        repo.path(),
        "charts/podinfo/Chart.yaml",
        "appVersion: \"6.5.0\"",
        "appVersion: \"6.6.0\"",
    );
    edit(
        repo.path(),
        "apps/helm/podinfo.yaml",
        "tag: 6.5.4",
        "tag: 6.6.0",
    );
    repo
}

#[test]
fn a_chart_bump_shows_the_image_change_and_hides_the_label_and_checksum_churn_counted() {
    let repo = chart_bump();
    let out = diff(repo.path(), &["--helm", "--cluster", "dev"]);
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let text = &out.stdout;
    assert!(
        text.starts_with("fluxsim diff: HEAD (")
            && text.contains(
                ") -> work tree\n1 Kustomization and 1 HelmRelease change in 1 of 1 cluster\n"
            ),
        "{text}"
    );
    assert!(
        text.contains(
            "-- HelmRelease apps/podinfo: changed\n   chart podinfo 6.5.0 → 6.6.0: 1 object changed\n~ Deployment apps/podinfo\n\
             \x20 spec.template.spec.containers[name=podinfo].image\n\
             -   registry.example.net/mirror/podinfo:6.5.4\n\
             +   registry.example.net/mirror/podinfo:6.6.0\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  ~ registry.example.net/mirror/podinfo: 6.5.4 -> 6.6.0\n"),
        "{text}"
    );
    // The chart and version labels of the Deployment and the Service, and the checksum.
    assert!(
        text.contains(
            "\n5 changes hidden by the default filters (--no-default-strip shows them)\n"
        ),
        "{text}"
    );
    for noise in [
        "helm.sh/chart",
        "checksum/config",
        "app.kubernetes.io/version",
        "Service",
    ] {
        assert!(!text.contains(noise), "{noise} is shown:\n{text}");
    }
    // Shown on request, and still a change of the Service without the filters.
    let all = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--no-default-strip"],
    );
    for noise in [
        "metadata.labels.\"helm.sh/chart\"",
        "metadata.annotations.checksum/config",
        "~ Service apps/podinfo",
    ] {
        assert!(
            all.stdout.contains(noise),
            "{noise} is not shown:\n{}",
            all.stdout
        );
    }
    assert!(!all.stdout.contains("hidden by the default filters"));
}

#[test]
fn a_change_only_in_filtered_fields_is_a_change_that_the_report_says_it_hid() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "charts/podinfo/Chart.yaml",
        "version: 6.5.0",
        "version: 6.5.1",
    );
    let out = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--fail-on", "info"],
    );
    // The bytes changed: a change (exit 1 at --fail-on info), never "identical".
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    // A chart bump is the release's change even when only the chart's version labels differ
    // (what the default filters hide): led by its chart line.
    assert!(
        out.stdout.contains(
            "chart podinfo 6.5.0 → 6.5.1: no object changes beyond what the filters hide"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("2 changes hidden by the default filters"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("identical"), "{}", out.stdout);
}

/// A ClusterRole beside the fleet's apps (committed), then its `resources:` list reordered.
fn role_reorder() -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/wave-0/redis/role.yaml"),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: redis-reader\n\
         rules:\n  - apiGroups: [\"\"]\n    resources: [pods, services, endpoints]\n    verbs: [get, list]\n",
    )
    .unwrap();
    commit_all(repo.path(), "a role");
    edit(
        repo.path(),
        "apps/wave-0/redis/role.yaml",
        "[pods, services, endpoints]",
        "[endpoints, pods, services]",
    );
    repo
}

#[test]
fn a_list_reordered_in_an_object_reads_order_changed_and_nothing_else() {
    let repo = role_reorder();
    let out = diff(repo.path(), &["--cluster", "dev"]);
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let details = &out.stdout[out.stdout.find("== cluster dev").expect(&out.stdout)..];
    assert_eq!(
        details,
        "== cluster dev\n\n-- Kustomization flux-system/apps-wave-0: changed\n   1 object changed\n\
         ~ ClusterRole redis-reader\n  rules[0].resources: order changed\n\
         \x20     before: pods, services, endpoints\n      after:  endpoints, pods, services\n",
        "{}",
        out.stdout
    );
    // The line diff of the same change: a line moved.
    let lines = diff(repo.path(), &["--cluster", "dev", "--diff-style", "lines"]);
    assert!(
        lines.stdout.contains("+  - endpoints") && lines.stdout.contains("-  - endpoints"),
        "{}",
        lines.stdout
    );
}

#[test]
fn a_resources_list_reordered_in_a_kustomization_file_changes_nothing() {
    let repo = repo_from("testdata/fleet");
    // The kustomization's own `resources:` in another order: kustomize prints objects in its
    // legacy order, so Flux applies the same (DESIGN.md, artifact).
    let file = repo.path().join("apps/wave-0/postgres/kustomization.yaml");
    let text = fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == "resources:").unwrap() + 1;
    let end = (start..lines.len())
        .find(|&i| !lines[i].starts_with("  - "))
        .unwrap_or(lines.len());
    assert!(end - start >= 2, "{text}");
    lines[start..end].reverse();
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = diff(repo.path(), &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("\nidentical: nothing changes in 2 clusters\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn default_text_fits_80_columns() {
    for repo in [chart_bump(), role_reorder()] {
        let out = diff(repo.path(), &["--helm"]);
        for line in out.stdout.lines() {
            // Values and paths are copied, never wrapped; fluxsim's own lines fit.
            let value = line.starts_with(['+', '-', ' ']) && line.len() > 4;
            assert!(
                value || line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn strip_hides_a_path_and_the_bases_config_strips_what_head_cannot_unstrip() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[diff]\nstrip = [\"spec.replicas\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "strip replicas");
    edit(
        repo.path(),
        "apps/helm/values.yaml",
        "replicaCount: 2",
        "replicaCount: 4",
    );
    // A pull request that also strips the image: the base's file is the one read.
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[diff]\nstrip = [\"spec.template.spec.containers\"]\n",
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/podinfo.yaml",
        "tag: 6.5.4",
        "tag: 6.6.0",
    );
    let out = diff(repo.path(), &["--helm", "--cluster", "dev"]);
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("spec.template.spec.containers[name=podinfo].image\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("spec.replicas"), "{}", out.stdout);
    assert!(out.stdout.contains("hidden by --strip"), "{}", out.stdout);
    // --strip on the command line, in the syntax a report shows.
    let out = diff(
        repo.path(),
        &[
            "--helm",
            "--cluster",
            "dev",
            "--strip",
            "spec.template.spec.containers[name=podinfo].image",
        ],
    );
    assert!(
        !out.stdout.contains("containers[name=podinfo].image"),
        "{}",
        out.stdout
    );
    // A bad path is an error naming it, before anything renders.
    let bad = diff(repo.path(), &["--strip", "a..b"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--strip `a..b`"), "{}", bad.stderr);
}

#[test]
fn skip_secrets_and_skip_crds_leave_them_out_and_say_how_many() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/wave-0/redis/secret.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: redis-auth\nstringData:\n  password: hunter2\n",
    )
    .unwrap();
    commit_all(repo.path(), "a secret");
    edit(
        repo.path(),
        "apps/wave-0/redis/secret.yaml",
        "hunter2",
        "hunter3",
    );
    let shown = diff(repo.path(), &["--cluster", "dev"]);
    // Which key changed, never the value.
    assert!(
        shown
            .stdout
            .contains("  data.password\n-   \"**SECRET**\"\n+   \"**SECRET** (changed)\"\n"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("hunter"), "{}", shown.stdout);
    let skipped = diff(
        repo.path(),
        &["--cluster", "dev", "--skip-secrets", "--fail-on", "info"],
    );
    assert_eq!(skipped.code, 1, "still a change: {}", skipped.stdout);
    assert!(
        !skipped.stdout.contains("Secret redis-auth"),
        "{}",
        skipped.stdout
    );
    assert!(
        skipped
            .stdout
            .contains("1 object changed but not shown (`--skip-secrets`, `--skip-crds`)."),
        "{}",
        skipped.stdout
    );
}

#[test]
fn objects_pruned_and_the_hazards_they_bring_lead_the_summary() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/wave-0/redis/extra.yaml"),
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: redis-data\nspec:\n  resources:\n    requests:\n      storage: 1Gi\n",
    )
    .unwrap();
    commit_all(repo.path(), "a claim");
    fs::remove_file(repo.path().join("apps/wave-0/redis/extra.yaml")).unwrap();
    let out = diff(repo.path(), &["--cluster", "dev", "--format", "markdown"]);
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let summary = &out.stdout[..out.stdout.find("### Cluster").expect(&out.stdout)];
    assert!(
        summary.contains("**1 object** deleted by prune"),
        "{summary}"
    );
    assert!(
        summary.contains("(pruned by `flux-system/apps-wave-0`)"),
        "{summary}"
    );
    assert!(
        summary.contains("prunes `PersistentVolumeClaim"),
        "{summary}"
    );
    // In JSON too, in fluxsim's convention (camelCase, a Kustomization as {namespace, name}).
    let json = diff(repo.path(), &["--cluster", "dev", "--format", "json"]).json();
    let deletions = &json["clusters"][0]["pruneDeletions"];
    assert_eq!(
        deletions[0]["kustomization"],
        serde_json::json!({"namespace": "flux-system", "name": "apps-wave-0"}),
        "{deletions:#}"
    );
    assert_eq!(deletions[0]["object"]["kind"], "PersistentVolumeClaim");
}

#[test]
fn json_gains_each_objects_semantic_changes() {
    let repo = chart_bump();
    let json = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--format", "json"],
    )
    .json();
    let release = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| {
            crate::common::ks(&k["kustomization"]) == "flux-system/apps-helm/helm/apps/podinfo"
        })
        .unwrap();
    let deployment = release["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["object"]["kind"] == "Deployment")
        .unwrap();
    assert_eq!(
        deployment["changes"],
        serde_json::json!([{
            "path": "spec.template.spec.containers[name=podinfo].image",
            "op": "changed",
            "before": "registry.example.net/mirror/podinfo:6.5.4",
            "after": "registry.example.net/mirror/podinfo:6.6.0"
        }])
    );
    assert_eq!(deployment["hiddenChanges"], 3);
    // The Service changed only in what the filters hide: no change to show.
    let service = release["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["object"]["kind"] == "Service")
        .unwrap();
    assert_eq!(service["changes"], serde_json::json!([]));
    assert_eq!(json["review"]["hiddenChanges"]["byDefaultFilters"], 5);
    assert_eq!(
        json["clusters"][0]["imageChanges"][0]["after"],
        "registry.example.net/mirror/podinfo:6.6.0"
    );
    // Named as every Kustomization of fluxsim's JSON is.
    assert_eq!(
        crate::common::ks(&json["clusters"][0]["imageChanges"][0]["kustomization"]),
        "flux-system/apps-helm/helm/apps/podinfo"
    );
}

#[test]
fn gitlab_and_gitea_flavours_fold_as_their_forges_render() {
    let repo = chart_bump();
    let gitlab = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--format", "gitlab"],
    );
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(gitlab.code, 0, "{}", gitlab.stderr);
    // GitLab's collapsible section: `<summary>` on its own line after `<details>`.
    assert!(
        gitlab.stdout.contains("<details open>\n<summary>"),
        "{}",
        gitlab.stdout
    );
    assert!(!gitlab.stdout.contains("<details open><summary>"));
    let gitea = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--format", "gitea"],
    );
    assert!(
        gitea.stdout.contains("<details open>\n<summary>"),
        "{}",
        gitea.stdout
    );
    let github = diff(
        repo.path(),
        &["--helm", "--cluster", "dev", "--format", "markdown"],
    );
    assert!(
        github.stdout.contains("<details open><summary>"),
        "{}",
        github.stdout
    );
    for md in [&gitlab.stdout, &gitea.stdout, &github.stdout] {
        check_markdown(md).unwrap();
        assert!(md.starts_with("## fluxsim diff: `HEAD ("), "{md}");
    }
}

/// What makes a comment valid Markdown on its own: every fenced code block closed, every
/// `<details>` and `<summary>` closed outside them, never before it opens.
fn check_markdown(md: &str) -> Result<(), String> {
    let mut fence = 0;
    let mut details: i64 = 0;
    for (n, line) in md.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        let rest = &trimmed[ticks..];
        if fence > 0 {
            if ticks >= fence && rest.trim().is_empty() {
                fence = 0;
            }
            continue;
        }
        if ticks >= 3 && !rest.contains('`') {
            fence = ticks;
            continue;
        }
        details +=
            (line.matches("<details>").count() + line.matches("<details open>").count()) as i64;
        details -= line.matches("</details>").count() as i64;
        if details < 0 {
            return Err(format!("line {}: closed before it opened: {line}", n + 1));
        }
        if line.matches("<summary>").count() != line.matches("</summary>").count() {
            return Err(format!("line {}: <summary> not closed on its line", n + 1));
        }
    }
    if fence > 0 {
        return Err("a code block is not closed".into());
    }
    if details != 0 {
        return Err(format!("{details} <details> not closed"));
    }
    Ok(())
}

/// A repository of one cluster whose root applies `n` Kustomizations, each of one
/// Deployment and one ConfigMap.
fn many_kustomizations(n: usize, tag: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("fluxsim-test-many-")
        .tempdir()
        .unwrap();
    let root = dir.path();
    let flux = root.join("clusters/prod/flux-system");
    fs::create_dir_all(&flux).unwrap();
    let mut ks = String::new();
    for i in 0..n {
        let _ = write!(
            ks,
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app-{i:03}\n  namespace: flux-system\n\
             spec:\n  interval: 10m\n  path: ./apps/app-{i:03}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        );
        let app = root.join(format!("apps/app-{i:03}"));
        fs::create_dir_all(&app).unwrap();
        fs::write(
            app.join("app.yaml"),
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i:03}\n  namespace: apps\n  labels:\n    helm.sh/chart: app-{tag}\n\
                 spec:\n  selector:\n    matchLabels: {{app: app-{i:03}}}\n  template:\n    metadata:\n      labels: {{app: app-{i:03}}}\n\
                 \x20   spec:\n      containers:\n        - name: app\n          image: ghcr.io/example/app-{i:03}:{tag}\n\
                 ---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{i:03}-config\n  namespace: apps\ndata:\n  config.yaml: |\n    version: {tag}\n    name: app-{i:03}\n    replicas: 2\n"
            ),
        )
        .unwrap();
    }
    fs::write(root.join("clusters/prod/apps.yaml"), ks).unwrap();
    fs::write(
        flux.join("gotk-sync.yaml"),
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\n\
         spec:\n  interval: 1m\n  url: https://example.invalid/fleet\n  ref:\n    branch: main\n---\n\
         apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\n\
         spec:\n  interval: 10m\n  path: ./clusters/prod\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    )
    .unwrap();
    fs::write(
        flux.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-sync.yaml\n",
    )
    .unwrap();
    crate::common::git(root, &["init", "-q", "-b", "main"]);
    commit_all(root, "base");
    dir
}

/// `testdata/rename` with its Kustomization `default/openspeedtest` renamed
/// `default/speedtest` in the work tree, and the ConfigMap it applies changed.
fn renamed() -> tempfile::TempDir {
    let repo = repo_from("testdata/rename");
    edit(
        repo.path(),
        "clusters/prod/apps.yaml",
        "name: openspeedtest",
        "name: speedtest",
    );
    edit(
        repo.path(),
        "apps/speedtest/speedtest.yaml",
        "mode: server",
        "mode: client",
    );
    repo
}

/// `text` with its wrapped lines joined (the text report wraps prose at 80 columns).
fn unwrapped(text: &str) -> String {
    let mut out = text.replace("\n     ", " ");
    while out.contains("\n    ") {
        out = out.replace("\n    ", " ");
    }
    out
}

#[test]
fn a_renamed_kustomization_is_one_entry_showing_only_the_objects_that_differ() {
    let repo = renamed();
    let line = "renamed `default/openspeedtest` → `default/speedtest`: 2 objects move unchanged, \
                1 object changed (prune deletes and recreates them: see the hazards)";
    let text = diff(repo.path(), &[]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    let t = unwrapped(&text.stdout);
    assert!(
        t.contains(&format!(
            "\n-- Kustomization default/speedtest: renamed\n   {line}\n~ ConfigMap default/speedtest\n  data.mode\n-   server\n+   client\n"
        )),
        "{}",
        text.stdout
    );
    // One entry: neither name is listed as added or removed, and no body is printed twice.
    assert!(
        !t.contains("Kustomization default/openspeedtest: removed"),
        "{t}"
    );
    assert!(!t.contains("Kustomization default/speedtest: added"), "{t}");
    assert!(!t.contains("openspeedtest/latest"), "{t}");
    assert!(t.contains("Kustomizations: 1 changed, 1 renamed"), "{t}");
    assert!(
        t.contains("2 Kustomizations (1 renamed) change in 1 of 1 cluster"),
        "{t}"
    );
    // The hazard the line points to: the old one prunes, said once for the three objects.
    assert!(
        t.contains("3 objects move from `default/openspeedtest` to `default/speedtest`"),
        "{t}"
    );

    let md = diff(repo.path(), &["--format", "markdown"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    let md = md.stdout;
    assert!(
        md.contains("<summary>Kustomization <code>default/speedtest</code>: renamed — 1 object changed</summary>"),
        "{md}"
    );
    assert!(md.contains(&format!("\n{line}\n")), "{md}");
    assert!(
        md.contains("| `prod` | Kustomizations | · | 1 | · | 1 | · |"),
        "{md}"
    );
    assert!(!md.contains("openspeedtest/latest"), "{md}");
    check_markdown(&md).unwrap();

    let html = diff(repo.path(), &["--format", "html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let html = html.stdout;
    assert!(
        html.contains(
            "<code>default/speedtest</code> <span class=\"badge changed\">renamed</span>"
        ),
        "{html}"
    );
    assert!(
        html.contains(
            "<p class=\"renamed\">renamed <code>default/openspeedtest</code> → <code>default/speedtest</code>: 2 objects move unchanged, 1 object changed (prune deletes and recreates them: see the hazards)</p>"
        ),
        "{html}"
    );
    assert!(!html.contains("openspeedtest/latest"), "{html}");
}

#[test]
fn a_kustomization_moved_to_another_namespace_is_one_renamed_entry() {
    let repo = repo_from("testdata/rename");
    edit(
        repo.path(),
        "clusters/prod/apps.yaml",
        "name: web\n  namespace: default",
        "name: web\n  namespace: apps",
    );
    let out = diff(repo.path(), &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let t = unwrapped(&out.stdout);
    // `default/web` does not prune: its objects stay, the new one takes them over.
    assert!(
        t.contains(
            "\n-- Kustomization apps/web: renamed\n   renamed `default/web` → `apps/web`: 2 \
             objects move unchanged (the old one does not prune: no outage)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!t.contains("Kustomization default/web: removed"), "{t}");
    assert!(!t.contains("nginx:1.27.0"), "{t}");
}

/// The fleet's HelmRelease `apps/podinfo` renamed `apps/web`, its release name kept
/// (`spec.releaseName`), so that it renders the same objects: one renamed entry whose
/// objects show only the label helm-controller sets from the HelmRelease's name.
#[test]
fn a_renamed_helm_release_is_one_entry_showing_only_what_the_new_name_changes() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/helm/podinfo.yaml",
        "metadata:\n  name: podinfo\nspec:\n",
        "metadata:\n  name: web\nspec:\n  releaseName: podinfo\n",
    );
    let out = diff(repo.path(), &["--helm", "--cluster", "dev"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let t = unwrapped(&out.stdout);
    assert!(
        t.contains(
            "\n-- HelmRelease apps/web: renamed\n   renamed `apps/podinfo` → `apps/web`: 2 \
             objects changed (helm-controller uninstalls the old release, which deletes them, \
             and installs the new one)\n~ Deployment apps/podinfo\n  \
             metadata.labels.\"helm.toolkit.fluxcd.io/name\"\n-   podinfo\n+   web\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!t.contains("HelmRelease apps/podinfo: removed"), "{t}");
    assert!(t.contains("HelmReleases: 1 renamed"), "{t}");
    // The hazard is helm-controller's: the old HelmRelease is pruned, its release uninstalled.
    assert!(
        t.contains("prune deletes the old HelmRelease, so helm-controller uninstalls its release"),
        "{t}"
    );
}

#[test]
fn a_500_kustomization_change_is_split_into_comments_with_the_whole_summary_first() {
    const N: usize = 500;
    let repo = many_kustomizations(N, "1.0.0");
    // Every app bumped: a new image, a new chart label, a new line of config.
    for i in 0..N {
        let f = format!("apps/app-{i:03}/app.yaml");
        let text = fs::read_to_string(repo.path().join(&f)).unwrap();
        fs::write(repo.path().join(&f), text.replace("1.0.0", "1.1.0")).unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("report");
    let run = diff(
        repo.path(),
        &[
            "--format",
            "markdown",
            "--out",
            out.to_str().unwrap(),
            "--report-url",
            "https://ci.example/runs/1",
        ],
    );
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut parts = Vec::new();
    while let Ok(p) = fs::read_to_string(out.join(format!("comment-{}.md", parts.len() + 1))) {
        parts.push(p);
    }
    assert!(parts.len() > 3, "{} comments", parts.len());
    for (i, p) in parts.iter().enumerate() {
        assert!(
            p.len() <= 65_536 - 256,
            "comment {} is {} bytes",
            i + 1,
            p.len()
        );
        check_markdown(p).unwrap_or_else(|e| panic!("comment {}: {e}", i + 1));
    }
    // The whole summary in the first: the verdict, the counts, every image bump, the link.
    let first = &parts[0];
    assert!(
        first.starts_with(&format!(
            "## fluxsim diff: `HEAD ({})` → `work tree`: 500 Kustomizations change in 1 of 1 cluster\n",
            &crate::common::git(repo.path(), &["rev-parse", "HEAD"]).trim()[..12]
        )),
        "{}",
        &first[..300.min(first.len())]
    );
    assert!(
        first.contains("| `prod` | Kustomizations | · | 500 | · | · |"),
        "{first}"
    );
    assert!(first.contains("**500 image changes**"), "{first}");
    assert!(
        first.contains("_500 changes hidden by the default filters"),
        "{first}"
    );
    assert!(
        first.contains("[the HTML report](https://ci.example/runs/1)"),
        "{first}"
    );
    // Nothing lost: every Kustomization's details are in some comment, and the whole
    // report (Markdown and HTML) in the folder.
    let all = parts.join("\n");
    let whole = fs::read_to_string(out.join("report.md")).unwrap();
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    for i in 0..N {
        let name = format!("flux-system/app-{i:03}");
        assert!(all.contains(&format!("<code>{name}</code>")), "{name}");
        assert!(whole.contains(&format!("<code>{name}</code>")), "{name}");
        assert!(html.contains(&format!("<code>{name}</code>")), "{name}");
    }
    // stdout is the whole report.
    assert_eq!(run.stdout, whole);
}

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Headless Chromium on `url` in a new empty profile, nothing fetched: its stdout.
fn browse(browser: &Path, url: &str, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The leaves of the report's navigation tree: (shown, hidden).
fn leaves(dom: &str) -> (usize, usize) {
    let mut counts = (0, 0);
    for li in dom.split("<li class=\"leaf").skip(1) {
        if li.split('>').next().unwrap_or_default().contains(" hidden") {
            counts.1 += 1;
        } else {
            counts.0 += 1;
        }
    }
    counts
}

#[test]
fn the_html_report_of_a_diff_lists_every_changed_object_and_filters_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("FLUXSIM_REQUIRE_BROWSER").is_none(),
            "FLUXSIM_REQUIRE_BROWSER is set and no Chromium was found (apt-get install chromium)"
        );
        eprintln!("skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let repo = chart_bump();
    edit(
        repo.path(),
        "apps/helm/values.yaml",
        "replicaCount: 2",
        "replicaCount: 3",
    );
    let out = diff(repo.path(), &["--helm", "--format", "html"]);
    // A change is info: exit 0 under the default --fail-on error.
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("<!DOCTYPE html>"));
    // One file: nothing to fetch.
    for fetch in ["src=\"http", "href=\"http", "<link", "url("] {
        assert!(!out.stdout.contains(fetch), "{fetch}");
    }
    // Where the test leaves what it saw.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-html");
    fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    fs::write(&page, &out.stdout).unwrap();
    let url = format!("file://{}", page.display());
    // What changed, from the JSON of the same diff: (cluster, unit, object) shown.
    let json = diff(repo.path(), &["--helm", "--format", "json"]).json();
    let mut objects = Vec::new();
    for c in json["clusters"].as_array().unwrap() {
        for k in c["kustomizations"].as_array().unwrap() {
            for o in k["objects"].as_array().unwrap() {
                if !o["changes"].as_array().is_some_and(Vec::is_empty) {
                    objects.push(o["object"]["name"].as_str().unwrap().to_string());
                }
            }
        }
    }
    assert!(objects.len() >= 4, "{objects:?}");
    let dom = browse(&browser, &url, &["--dump-dom"]);
    let (shown, hidden) = leaves(&dom);
    assert_eq!((shown, hidden), (objects.len(), 0), "{objects:?}");
    assert!(
        dom.contains(&format!("{shown} of {shown} shown")),
        "the script did not run"
    );
    for name in &objects {
        assert!(dom.contains(name), "{name} is not in the page");
    }
    // The filter, as a link gives it: only the Deployments of podinfo stay.
    let filtered = browse(
        &browser,
        &format!("{url}#q=deployment%20podinfo"),
        &["--dump-dom"],
    );
    let (kept, _) = leaves(&filtered);
    assert_eq!(kept, 2, "one per cluster");
    assert!(filtered.contains(&format!("2 of {shown} shown")));
    let shot = dir.join("report.png");
    let _ = fs::remove_file(&shot);
    browse(
        &browser,
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000",
        ],
    );
    let png = fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000);
}

/// `testdata/long-names` with each of its objects changed in the work tree.
fn long_names() -> tempfile::TempDir {
    let repo = repo_from("testdata/long-names");
    for (file, from, to) in [
        (
            "apps/observability/helmreleases.yaml",
            "resolve_timeout: 5m\n---",
            "resolve_timeout: 10m\n---",
        ),
        (
            "apps/observability/helmreleases.yaml",
            "resolve_timeout: 5m\n",
            "resolve_timeout: 10m\n",
        ),
        ("apps/observability/rules.yaml", "for: 15m", "for: 20m"),
        ("apps/observability/gateway.yaml", ":1.4.2", ":1.5.0"),
        (
            "apps/observability/gateway.yaml",
            "value: \"30\"",
            "value: \"45\"",
        ),
        (
            "apps/observability/gateway.yaml",
            ": \"false\"",
            ": \"true\"",
        ),
    ] {
        edit(repo.path(), file, from, to);
    }
    repo
}

/// What the layout script appended to a copy of the report measures, as JSON in the
/// `data-layout` attribute of `<body>`: the sidebar's width, the entries it clips or that
/// do not show their name whole, the lines of a field path that start inside a segment
/// (with whether that segment is wider than its column, the one case where it may break),
/// and the elements wider than the page.
const MEASURE: &str = r"(function () {
  var vw = document.documentElement.clientWidth;
  var nav = document.getElementById('nav');
  var r = { viewport: vw, nav: nav.getBoundingClientRect().width,
    navScroll: nav.scrollWidth - nav.clientWidth,
    pageScroll: document.documentElement.scrollWidth - vw,
    clipped: [], cut: [], midword: [], wide: [], paths: 0 };
  // Each entry shows its name whole: the last word of its title (`default/podinfo`).
  nav.querySelectorAll('[title]').forEach(function (e) {
    var name = e.getAttribute('title').split(' ').pop();
    if (e.textContent.indexOf(name) === -1) { r.cut.push(e.getAttribute('title')); }
  });
  nav.querySelectorAll('a, summary, li').forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) { r.clipped.push(e.textContent.trim()); }
    var cs = getComputedStyle(e);
    if (cs.textOverflow === 'ellipsis' && cs.overflowX !== 'visible' && cs.whiteSpace === 'nowrap') {
      r.clipped.push('ellipsis: ' + e.textContent.trim());
    }
  });
  var probe = document.createElement('span');
  probe.style.whiteSpace = 'nowrap';
  probe.style.position = 'absolute';
  probe.style.visibility = 'hidden';
  document.querySelectorAll('table.fields td.path').forEach(function (td) {
    r.paths += 1;
    var text = td.textContent;
    var cs = getComputedStyle(td);
    var room = td.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    probe.style.font = cs.font;
    td.appendChild(probe);
    var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    var at = 0, top = null, node;
    while ((node = walker.nextNode())) {
      if (node.parentNode === probe) { continue; }
      for (var i = 0; i < node.data.length; i += 1, at += 1) {
        var range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        var rect = range.getBoundingClientRect();
        if (top !== null && rect.top > top + 2 && at > 0) {
          var before = text[at - 1], here = text[at];
          if (!(before === '.' || before === '/' || here === '[')) {
            var start = at, end = at;
            while (start > 0 && '.[/'.indexOf(text[start - 1]) === -1 && text[start] !== '[') { start -= 1; }
            if (start > 0 && text[start - 1] === '[') { start -= 1; }
            while (end < text.length && '.[/'.indexOf(text[end]) === -1) { end += 1; }
            var seg = text.slice(start, end);
            probe.textContent = seg;
            r.midword.push({ path: text, at: at, segment: seg,
              wider: probe.getBoundingClientRect().width > room });
          }
        }
        top = rect.top;
      }
    }
    td.removeChild(probe);
  });
  document.querySelectorAll('body *').forEach(function (e) {
    var b = e.getBoundingClientRect();
    if (b.width > 0 && b.right > vw + 1) {
      r.wide.push(e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(b.right));
    }
  });
  document.body.setAttribute('data-layout', JSON.stringify(r));
}());";

/// A copy of `page` with [`MEASURE`] run after the report's script, allowed by the page's
/// Content-Security-Policy (its hash added to `script-src`).
fn with_measure(page: &str) -> String {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(MEASURE));
    assert!(page.contains("script-src 'sha256-"));
    page.replacen(
        "script-src 'sha256-",
        &format!("script-src 'sha256-{hash}' 'sha256-"),
        1,
    )
    .replacen(
        "</body>",
        &format!("<script>{MEASURE}</script>\n</body>"),
        1,
    )
}

/// The measures [`MEASURE`] left in a dumped DOM.
fn layout(dom: &str) -> serde_json::Value {
    let attr = dom
        .split("data-layout=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the layout script did not run");
    let json = attr
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

/// The characters of `s` in the emoji blocks (and the variation selector that asks for an
/// emoji glyph): what a system without an emoji font draws as an empty box.
fn emoji(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            matches!(u32::from(c),
                0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0xFE0F | 0x2300..=0x23FF)
        })
        .collect()
}

#[test]
fn the_html_report_shows_long_names_whole_breaks_paths_between_segments_and_draws_no_emoji() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("FLUXSIM_REQUIRE_BROWSER").is_none(),
            "FLUXSIM_REQUIRE_BROWSER is set and no Chromium was found (apt-get install chromium)"
        );
        eprintln!("skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let repo = long_names();
    let out = diff(repo.path(), &["--format", "html"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = out.stdout;
    // The proof's page has a verdict and the canaries' note, the two that led with emoji.
    let proof = fluxsim_in(
        Some(repo.path()),
        &["prove", "--base", "HEAD", "--format", "html"],
    );
    assert_eq!(proof.code, 1, "{}", proof.stderr);
    assert!(
        proof.stdout.contains("<svg class=\"icon fail\""),
        "{}",
        proof.stdout
    );
    for (name, html) in [("diff", &page), ("prove", &proof.stdout)] {
        assert_eq!(emoji(html), Vec::<char>::new(), "{name}");
    }
    // Each name whole in the sidebar, the whole id in its title.
    let hr = "observability/observability-kube-prometheus-stack-alerting-rules-eu-west-";
    for n in ["1", "2"] {
        assert!(
            page.contains(&format!(
                "title=\"HelmRelease.helm.toolkit.fluxcd.io {hr}{n}\""
            )),
            "{n}"
        );
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-long-names");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("report.html"), &page).unwrap();
    fs::write(dir.join("prove.html"), &proof.stdout).unwrap();
    let measured = dir.join("report-measured.html");
    fs::write(&measured, with_measure(&page)).unwrap();
    let url = format!("file://{}", measured.display());
    // A wide window and a narrow one: the sidebar keeps its width (22%, at least 240px).
    for (width, nav) in [(1400, 308.0), (900, 240.0)] {
        let size = format!("--window-size={width},1000");
        let dom = browse(&browser, &url, &["--dump-dom", &size]);
        let m = layout(&dom);
        let context = format!("{width}px: {m:#}");
        assert_eq!(m["viewport"], width, "{context}");
        assert!(m["nav"].as_f64().unwrap() <= nav + 1.0, "{context}");
        assert_eq!(m["navScroll"], 0, "{context}");
        assert_eq!(m["clipped"], serde_json::json!([]), "{context}");
        assert_eq!(m["cut"], serde_json::json!([]), "{context}");
        assert_eq!(m["pageScroll"], 0, "{context}");
        assert_eq!(m["wide"], serde_json::json!([]), "{context}");
        assert!(m["paths"].as_u64().unwrap() >= 6, "{context}");
        // A path line starts inside a segment only where the segment is wider than its
        // column (the ConfigMap's key, and at 900px the container's name).
        for w in m["midword"].as_array().unwrap() {
            assert_eq!(w["wider"], true, "{context}");
        }
        let shot = dir.join(format!("report-{width}px.png"));
        let _ = fs::remove_file(&shot);
        browse(
            &browser,
            &format!("file://{}", dir.join("report.html").display()),
            &[&format!("--screenshot={}", shot.display()), &size],
        );
        let png = fs::read(&shot).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"));
    }
    let shot = dir.join("prove-1400px.png");
    let _ = fs::remove_file(&shot);
    browse(
        &browser,
        &format!("file://{}", dir.join("prove.html").display()),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000",
        ],
    );
    assert!(fs::read(&shot)
        .expect("a screenshot")
        .starts_with(b"\x89PNG"));
}
