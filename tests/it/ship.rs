//! What a CI user meets first: `images`, the defaults and noise filters of `diff`, masked
//! secrets, `--limit-bytes`, `--color`, SARIF on errors, completions and the small things of
//! issue 18, on copies of `testdata/fleet` in throw-away git repositories.

// The shared harness serves several test crates; this one uses part of it.
use std::fs;
use std::path::Path;

use crate::common::{commit_all, crate_path, fluxsim, fluxsim_in, git, repo_from};

fn run(repo: &Path, args: &[&str]) -> crate::common::Output {
    fluxsim_in(Some(repo), args)
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The fleet's orders API moved from 2.14.1 to 2.15.0 (Flux `spec.images`, in the base both
/// clusters share).
fn bump_orders(repo: &Path) {
    edit(
        repo,
        "clusters/base/apps.yaml",
        "newTag: 2.14.1",
        "newTag: 2.15.0",
    );
}

#[test]
fn images_lists_every_container_image_per_cluster_and_kustomization() {
    let out = fluxsim(&["images", "testdata/fleet", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json = out.json();
    let clusters = json["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 2);
    let dev = &clusters[0];
    assert_eq!(dev["name"], "dev");
    let wave1 = dev["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/apps-wave-1")
        .unwrap();
    // Flux's `spec.images` override is applied by the build: 2.14.1, not the manifest's 2.13.0.
    let images: Vec<&str> = wave1["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["image"].as_str().unwrap())
        .collect();
    assert!(
        images.contains(&"ghcr.io/example-org/orders-api:2.14.1"),
        "{images:?}"
    );
    let text = fluxsim(&["images", "testdata/fleet"]);
    assert!(
        text.stdout
            .contains("14 image references (7 distinct) in 2 clusters"),
        "{}",
        text.stdout
    );
}

#[test]
fn images_diff_shows_an_image_bump_in_the_fleet_once_for_both_clusters() {
    let repo = repo_from("testdata/fleet");
    bump_orders(repo.path());
    commit_all(repo.path(), "bump orders-api");
    let out = run(
        repo.path(),
        &[
            "images",
            "--diff",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--fail-on",
            "info",
            "--wide",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "flux-system/apps-wave-1 Deployment.apps/apps/orders spec.template.spec.containers[name=api] (dev, prod)\n  ~ ghcr.io/example-org/orders-api:2.14.1 -> ghcr.io/example-org/orders-api:2.15.0\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("result: 1 image change in 2 clusters\n"),
        "{}",
        out.stdout
    );
    let same = run(
        repo.path(),
        &["images", "--diff", "--base", "HEAD", "--head", "HEAD"],
    );
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.ends_with("result: no image changed\n"));
}

#[test]
fn diff_without_base_uses_the_merge_base_with_the_default_branch_and_says_so() {
    let repo = repo_from("testdata/fleet");
    git(repo.path(), &["checkout", "-q", "-b", "bump"]);
    bump_orders(repo.path());
    commit_all(repo.path(), "bump");
    let out = run(repo.path(), &["diff"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The revisions, then the verdict (the review's text).
    let first = out.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("fluxsim diff: merge-base of HEAD and main ("),
        "{first}"
    );
    // The merge-base is main itself: the whole branch is the change.
    assert!(out.stdout.contains("orders-api:2.15.0"), "{}", out.stdout);
}

#[test]
fn diff_without_base_or_default_branch_says_what_to_give() {
    let repo = repo_from("testdata/fleet");
    git(repo.path(), &["branch", "-m", "main", "trunk"]);
    let out = run(repo.path(), &["diff"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("give --base REV"), "{}", out.stderr);
}

#[test]
fn diff_prints_a_change_made_the_same_way_in_several_clusters_once() {
    let repo = repo_from("testdata/fleet");
    bump_orders(repo.path());
    let out = run(
        repo.path(),
        &["diff", "--diff-style", "lines", "--base", "HEAD"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("  changed      flux-system/apps-wave-1  (the same in dev, prod)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  changed      flux-system/apps-wave-1  (the same as in dev, above)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout
            .matches("+        image: ghcr.io/example-org/orders-api:2.15.0")
            .count(),
        1,
        "{}",
        out.stdout
    );
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
    assert!(
        md.stdout.contains(
            "<summary><code>flux-system/apps-wave-1</code> in dev, prod: 1 object</summary>"
        ),
        "{}",
        md.stdout
    );
}

#[test]
fn diff_strip_label_drops_noise_before_comparing() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/wave-1/notifier/deployment.yaml",
        "metadata:\n",
        "metadata:\n  labels:\n    example.com/build: \"42\"\n",
    );
    let noisy = run(
        repo.path(),
        &["diff", "--diff-style", "lines", "--base", "HEAD"],
    );
    assert_eq!(noisy.code, 0, "{}{}", noisy.stdout, noisy.stderr);
    let quiet = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--strip-label",
            "example.com/build",
        ],
    );
    assert_eq!(quiet.code, 0, "{}{}", quiet.stdout, quiet.stderr);
    assert!(
        quiet.stdout.contains("\nresult: identical ("),
        "{}",
        quiet.stdout
    );
    let field = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--strip-field",
            "metadata.labels.\"example.com/build\"",
        ],
    );
    assert_eq!(field.code, 0, "{}{}", field.stdout, field.stderr);
    let bad = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--strip-field",
            "a..b",
        ],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn diff_style_semantic_is_the_default_and_names_the_changed_field_paths() {
    let repo = repo_from("testdata/fleet");
    bump_orders(repo.path());
    let out = run(
        repo.path(),
        &[
            "diff",
            "--base",
            "HEAD",
            "--diff-style",
            "fields",
            "--cluster",
            "dev",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let semantic = "~ Deployment apps/orders\n  spec.template.spec.containers[name=api].image\n\
                    -   ghcr.io/example-org/orders-api:2.14.1\n\
                    +   ghcr.io/example-org/orders-api:2.15.0\n";
    assert!(out.stdout.contains(semantic), "{}", out.stdout);
    // `fields` is the old name of `semantic`, the default.
    let default = run(repo.path(), &["diff", "--base", "HEAD", "--cluster", "dev"]);
    assert_eq!(default.stdout, out.stdout);
}

#[test]
fn diff_color_always_colours_and_never_does_not() {
    let repo = repo_from("testdata/fleet");
    bump_orders(repo.path());
    let always = run(
        repo.path(),
        &["diff", "--base", "HEAD", "--color", "always"],
    );
    assert!(always.stdout.contains("\x1b[32m"), "{}", always.stdout);
    assert!(always.stdout.contains("\x1b[31m"), "{}", always.stdout);
    let never = run(repo.path(), &["diff", "--base", "HEAD", "--color", "never"]);
    assert!(!never.stdout.contains('\x1b'));
    // auto: the tests' stdout is a pipe.
    let auto = run(repo.path(), &["diff", "--base", "HEAD"]);
    assert!(!auto.stdout.contains('\x1b'));
}

#[test]
fn limit_bytes_cuts_any_output_with_a_note_of_what_was_cut() {
    let repo = repo_from("testdata/fleet");
    bump_orders(repo.path());
    let out = run(
        repo.path(),
        &[
            "diff",
            "--base",
            "HEAD",
            "--limit-bytes",
            "600",
            "--fail-on",
            "info",
        ],
    );
    assert_eq!(out.code, 1, "the status is the diff's");
    assert!(out.stdout.len() <= 600, "{}", out.stdout.len());
    assert!(
        out.stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("... cut by --limit-bytes 600: "),
        "{}",
        out.stdout
    );
    let md = run(
        repo.path(),
        &[
            "diff",
            "--base",
            "HEAD",
            "--format",
            "markdown",
            "--limit-bytes",
            "1500",
        ],
    );
    assert!(md.stdout.len() <= 1500);
    assert_eq!(
        md.stdout.matches("<details>").count(),
        md.stdout.matches("</details>").count(),
        "{}",
        md.stdout
    );
    let render = fluxsim(&["render", "testdata/fleet", "--limit-bytes", "300"]);
    assert!(render.stdout.len() <= 300);
    assert!(render.stdout.contains("... cut by --limit-bytes 300"));
}

#[test]
fn secret_values_are_masked_in_build_output_unless_shown() {
    let args = [
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "apps-vms",
    ];
    let masked = fluxsim(&args);
    assert_eq!(masked.code, 0, "{}", masked.stderr);
    // stringData is folded into data, as the API server stores it; data values are masked
    // with the base64 of `**SECRET**`, so the Secret stays valid.
    assert!(
        masked.stdout.contains("  userdata: KipTRUNSRVQqKg==\n"),
        "{}",
        masked.stdout
    );
    assert!(
        !masked.stdout.contains("I2Nsb3VkLWNvbmZpZw"),
        "the base64 of #cloud-config"
    );
    let wave1 = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "apps-wave-1",
    ]);
    // SOPS data as `flux build` masks it, and its metadata gone.
    assert!(
        wave1.stdout.contains("  DATABASE_PASSWORD: '**SOPS**'\n"),
        "{}",
        wave1.stdout
    );
    assert!(!wave1.stdout.contains("ENC[AES256_GCM"));
    let mut shown_args = args.to_vec();
    shown_args.push("--show-secrets");
    let shown = fluxsim(&shown_args);
    assert!(
        !shown.stdout.contains("KipTRUNSRVQqKg=="),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("  userdata: I2Nsb3VkLWNvbmZpZw"),
        "{}",
        shown.stdout
    );
}

#[test]
fn masking_is_presentation_only_digests_come_from_the_real_artifact() {
    let json = fluxsim(&[
        "render",
        "testdata/fleet",
        "--format",
        "json",
        "--cluster",
        "dev",
    ])
    .json();
    let k = crate::common::kustomization(&json, "dev", "apps-vms");
    let shown = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "apps-vms",
        "--show-secrets",
    ]);
    assert_eq!(k["sha256"], crate::common::sha256(shown.stdout.as_bytes()));
    // --out writes the masked text, and SHA256SUMS is that of the files written.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("out");
    let r = fluxsim(&[
        "render",
        "testdata/fleet",
        "--cluster",
        "dev",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = fs::read_to_string(dir.join("dev/flux-system/apps-vms.yaml")).unwrap();
    assert!(file.contains("userdata: KipTRUNSRVQqKg=="));
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    assert!(sums.contains(&format!(
        "{}  dev/flux-system/apps-vms.yaml",
        crate::common::sha256(file.as_bytes())
    )));
}

#[test]
fn a_masked_secret_change_is_still_a_change_and_names_the_key() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/vms/unifi/cloudinit-secret.yaml",
        "hostname: unifi",
        "hostname: unifi-2",
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
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("# masked values changed: data.userdata (--show-secrets shows them)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("+  userdata:"), "{}", out.stdout);
    let shown = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--cluster",
            "dev",
            "--show-secrets",
        ],
    );
    assert!(shown.stdout.contains("+  userdata: "), "{}", shown.stdout);
    assert!(!shown.stdout.contains("masked values changed"));
}

#[test]
fn skip_crds_and_skip_secrets_leave_objects_out_of_a_build() {
    let all = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "platform",
    ]);
    assert!(all.stdout.contains("kind: CustomResourceDefinition"));
    let skipped = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "platform",
        "--skip-crds",
    ]);
    assert!(
        !skipped.stdout.contains("kind: CustomResourceDefinition"),
        "{}",
        skipped.stdout
    );
    assert!(skipped.stdout.contains("kind: Deployment"));
    let no_secrets = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "-k",
        "apps-vms",
        "--skip-secrets",
    ]);
    assert!(
        !no_secrets.stdout.contains("kind: Secret"),
        "{}",
        no_secrets.stdout
    );
}

#[test]
fn compare_on_a_one_cluster_repo_exits_0_with_a_note() {
    let out = fluxsim(&["compare", "testdata/steady/own-vars"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "compare: nothing to compare: the repository has 1 cluster (test)\n"
    );
}

#[test]
fn compare_takes_clusters_from_cluster_flags_in_order() {
    let out = fluxsim(&[
        "compare",
        "testdata/fleet",
        "--cluster",
        "prod",
        "--cluster",
        "dev",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("prod vs dev run the same graph"),
        "{}",
        out.stdout
    );
    let one = fluxsim(&["compare", "testdata/fleet", "--cluster", "dev"]);
    assert_eq!(one.code, 2);
    assert!(
        one.stderr.contains("at least two clusters"),
        "{}",
        one.stderr
    );
}

#[test]
fn build_without_cluster_lists_the_clusters() {
    let out = fluxsim(&["build", "testdata/fleet", "-k", "apps-wave-1"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "fluxsim: error: `build` needs --cluster NAME (or several, `a,b`): Kustomization `apps-wave-1` is in 2 clusters (dev, prod)\n"
    );
    let none = fluxsim(&["build", "testdata/fleet", "-k", "nope"]);
    assert_eq!(none.code, 2);
    assert!(
        none.stderr
            .contains("no Kustomization `nope` in any cluster of the repository (dev, prod)"),
        "{}",
        none.stderr
    );
    // A repository of one cluster needs no --cluster.
    let one = fluxsim(&["build", "testdata/steady/own-vars", "-k", "flux-system"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
}

#[test]
fn render_summary_uses_singular_forms_and_says_builds_when_no_kustomize_ran() {
    let out = fluxsim(&[
        "render",
        "testdata/steady/own-vars",
        "--builder",
        "native",
        "--verbose",
        "--wide",
    ]);
    let summary = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.contains("rendered"))
        .unwrap();
    assert!(
        summary.starts_with("1 cluster, 1/1 Kustomization rendered, 2 builds ("),
        "{summary}"
    );
}

#[test]
fn prove_help_matches_its_reference_page() {
    let page = fs::read_to_string(crate_path("docs/commands/prove.md")).unwrap();
    let usage = page
        .split("```\nfluxsim prove ")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("docs/commands/prove.md has a `fluxsim prove` usage block");
    let help = fluxsim(&["prove", "--help"]).stdout;
    let flags = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(str::to_string)
            .collect()
    };
    let documented = flags(usage);
    let offered = flags(&help);
    for f in &documented {
        assert!(
            offered.contains(f),
            "docs/commands/prove.md's usage names {f}, which `prove --help` lacks"
        );
    }
    // prove's own flags (not the render flags every command shares) are all on its page.
    for own in [
        "--base",
        "--head",
        "--expect",
        "--canary-path",
        "--allow-blind",
        "--format",
    ] {
        assert!(
            documented.contains(own),
            "docs/commands/prove.md's usage lacks {own}"
        );
        assert!(offered.contains(own));
    }
    // And what the page says of --base is what --help says (help wraps its lines).
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("merge-base of HEAD and the default branch"),
        "{help}"
    );
}

#[test]
fn sarif_on_exit_2_is_a_valid_empty_log() {
    for args in [
        vec!["audit", "/nonexistent/fluxsim-repo", "--format", "sarif"],
        vec!["graph", "/nonexistent/fluxsim-repo", "--format", "sarif"],
        vec!["audit", "--format", "sarif", "--no-such-flag"],
    ] {
        let out = fluxsim(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let log = out.json();
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
        assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "fluxsim");
    }
}

#[test]
fn sarif_paths_are_relative_to_the_git_root() {
    // testdata/audit sits two folders down in fluxsim's own work tree (when the tests run
    // from a git checkout).
    if !crate_path(".git").exists() {
        return;
    }
    let out = fluxsim(&["audit", "testdata/audit", "--format", "sarif"]);
    let log = out.json();
    let uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(uri.starts_with("testdata/audit/"), "{uri}");
    let info = log["runs"][0]["tool"]["driver"]["informationUri"]
        .as_str()
        .unwrap();
    assert!(info.ends_with("/fluxsim"), "{info}");
}

#[test]
fn graph_markdown_wraps_mermaid_in_a_code_block() {
    let out = fluxsim(&["graph", "testdata/fleet", "--format", "markdown"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("\n```mermaid\nflowchart LR\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("```").count(), 2);
}

#[test]
fn graph_dot_has_a_legend() {
    let out = fluxsim(&["graph", "testdata/fleet", "--format", "dot"]);
    assert!(
        out.stdout.contains("subgraph cluster_legend"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("B dependsOn A"));
    assert!(out.stdout.trim_end().ends_with('}'));
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = fluxsim(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains("images"), "{shell}");
        assert!(out.stdout.contains("prove"), "{shell}");
    }
    assert_eq!(fluxsim(&["completions", "nosuchshell"]).code, 2);
}

// `fluxsim build NAME`, shaped like `flux build ks NAME` (issue 43 item 6): a lone argument
// that is no folder is the Kustomization, the repository found as without one (the top of
// the git work tree); without --cluster, the only cluster that has it is the one built.
#[test]
fn build_takes_a_lone_name_as_the_kustomization_and_picks_the_only_cluster_that_has_it() {
    let repo = crate::common::repo_from("testdata/fleet");
    std::fs::write(
        repo.path().join("clusters/dev/echo.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: echo\n  \
         namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/wave-0\n  prune: true\n  \
         sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    )
    .unwrap();
    let kfile = repo.path().join("clusters/dev/kustomization.yaml");
    let text = std::fs::read_to_string(&kfile).unwrap();
    std::fs::write(
        &kfile,
        text.replacen(
            "  - cluster-vars.yaml\n",
            "  - cluster-vars.yaml\n  - echo.yaml\n",
            1,
        ),
    )
    .unwrap();
    crate::common::commit_all(repo.path(), "echo in dev only");
    let by_name = crate::common::fluxsim_in(Some(repo.path()), &["build", "echo"]);
    assert_eq!(by_name.code, 0, "{}", by_name.stderr);
    let by_flag = crate::common::fluxsim_in(Some(repo.path()), &["build", "-k", "echo"]);
    assert_eq!(by_flag.code, 0, "{}", by_flag.stderr);
    assert_eq!(by_name.stdout, by_flag.stdout);
    let dev = crate::common::fluxsim_in(
        Some(repo.path()),
        &["build", "-k", "echo", "--cluster", "dev"],
    );
    assert_eq!(by_name.stdout, dev.stdout);
    assert!(by_name.stdout.contains("kind: "), "{}", by_name.stdout);
    // A folder stays the repository.
    let folder = crate::common::fluxsim_in(Some(repo.path()), &["build", ".", "-k", "echo"]);
    assert_eq!(folder.stdout, dev.stdout, "{}", folder.stderr);
    // Nothing named: the error says how to name it.
    let bare = crate::common::fluxsim_in(Some(repo.path()), &["build", "--cluster", "dev"]);
    assert_eq!(bare.code, 2);
    assert!(
        bare.stderr.contains("`fluxsim build NAME`"),
        "{}",
        bare.stderr
    );
}
