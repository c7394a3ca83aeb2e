//! A work tree is read in place (`source::in_place`): the render must be the one of a
//! materialised copy — untracked and ignored files invisible, also to a build handed to the
//! kustomize binary — and the user's files are never written.

// The shared harness serves several test crates; this one uses part of it.
use std::fs;

use crate::common::{read_tree, repo_from};
use fluxsim::render::{make_builder, render_tree, BuilderChoice, RepoOptions};
use fluxsim::source::{in_place, materialize, SourceOptions};

/// The fleet in a git repository, with work-tree changes Flux would not see.
fn fleet_with_invisible_files() -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    let root = repo.path();
    // An untracked manifest in a folder whose kustomization Flux generates: not listed.
    fs::write(
        root.join("apps/wave-0/untracked.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untracked\n",
    )
    .unwrap();
    // A build kustomize must make (`sortOptions`) that names an untracked file: Flux's
    // source has no such file, so the build fails, whichever builder runs it.
    fs::write(
        root.join("apps/wave-1/untracked.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untracked\n",
    )
    .unwrap();
    let k = root.join("apps/wave-1/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap();
    fs::write(
        &k,
        format!(
            "{}\n  - untracked.yaml\nsortOptions:\n  order: legacy\n",
            text.trim_end()
        ),
    )
    .unwrap();
    repo
}

fn render(tree: fluxsim::source::Tree, builder: BuilderChoice) -> String {
    let opts = RepoOptions {
        builder,
        ..RepoOptions::default()
    };
    let b = make_builder(&opts).expect("kustomize or kubectl is installed");
    let r = render_tree(tree, b.as_ref(), &opts).unwrap();
    fluxsim::report::render_json(&r)
}

#[test]
fn a_work_tree_read_in_place_renders_exactly_as_its_copy_and_is_not_written() {
    let repo = fleet_with_invisible_files();
    let before = read_tree(repo.path());
    let source = SourceOptions::default();
    for builder in [BuilderChoice::Auto, BuilderChoice::Kustomize] {
        let viewed = in_place(repo.path(), &source).unwrap();
        assert!(viewed.in_place());
        let seen = render(viewed, builder);
        let copied = render(materialize(repo.path(), &source).unwrap(), builder);
        if let Some((a, b)) = seen.lines().zip(copied.lines()).find(|(a, b)| a != b) {
            panic!("{builder:?}: in place `{a}`, copied `{b}`");
        }
        assert_eq!(seen, copied, "{builder:?}");
        let json: serde_json::Value = serde_json::from_str(&seen).unwrap();
        for cluster in ["dev", "prod"] {
            let wave1 = crate::common::kustomization(&json, cluster, "apps-wave-1");
            assert_eq!(wave1["status"], "failed", "{builder:?}: {wave1:#}");
            let error = wave1["error"].as_str().unwrap();
            assert!(error.contains("apps/wave-1/untracked.yaml"), "{error}");
            // Named by its place in the source, not in fluxsim's temporary folders.
            assert!(!error.contains("fluxsim-"), "{error}");
            let wave0 = crate::common::kustomization(&json, cluster, "apps-wave-0");
            assert_eq!(wave0["status"], "rendered");
            assert!(
                !wave0["objects"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|o| o["name"] == "untracked"),
                "{wave0:#}"
            );
        }
    }
    assert_eq!(read_tree(repo.path()), before, "the work tree was written");
}
