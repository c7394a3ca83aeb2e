//! Discovery's cluster roots and names, on small trees.

use super::*;
use crate::testutil::tree;

// `flux bootstrap` writes clusters/<name>/flux-system/{gotk-components,gotk-sync}.yaml
// and a root Kustomization `flux-system` with `path: ./clusters/<name>` (flux2
// `pkg/manifestgen/sync`); repositories often keep gotk-sync.yaml out of git.
#[test]
fn bootstrap_folder_without_its_sync_file_is_a_cluster_root() {
    let t = tree(&[
        (
            "clusters/staging/flux-system/gotk-components.yaml",
            "# generated\n",
        ),
        (
            "clusters/staging/apps.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
        ),
    ]);
    let d = discover(&crate::testutil::source_fs(t.path()));
    assert_eq!(d.clusters.len(), 1);
    let c = &d.clusters[0];
    assert_eq!(c.name, "staging");
    assert_eq!(c.root.path, "./clusters/staging");
    assert_eq!(c.root.id.to_string(), "flux-system/flux-system");
    assert_eq!(
        c.file.as_deref(),
        Some("clusters/staging/flux-system/gotk-components.yaml")
    );
}

// A lone cluster whose folder says nothing (`cluster/`) is named after the repository
// its root syncs from (issue 43: "== cluster cluster"); a cluster whose folder names it,
// or one of several, keeps the folder's name.
#[test]
fn a_lone_cluster_in_a_generic_folder_is_named_after_the_repository_it_syncs() {
    let sync = |dir: &str, url: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
             name: flux-system\n  namespace: flux-system\nspec:\n  path: ./{dir}\n  \
             sourceRef:\n    kind: GitRepository\n    name: flux-system\n---\n\
             apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  \
             name: flux-system\n  namespace: flux-system\nspec:\n  url: {url}\n"
        )
    };
    let name = |dir: &str, url: &str| {
        let t = tree(&[(&format!("{dir}/flux-system.yaml"), &sync(dir, url))]);
        let d = discover(&crate::testutil::source_fs(t.path()));
        d.clusters
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        name("cluster", "ssh://git@github.com/org/home-ops.git"),
        ["home-ops"]
    );
    assert_eq!(
        name("kubernetes/flux", "https://github.com/org/lab/"),
        ["lab"]
    );
    // The folder names it: kept.
    assert_eq!(
        name("clusters/staging", "https://github.com/org/lab"),
        ["staging"]
    );
    // A URL whose end is no name (or is itself generic): the folder's name stays.
    assert_eq!(name("cluster", "https://github.com/org/flux"), ["cluster"]);
}

// `spec.path: 42` read as unset would be the source root, which holds every file: the
// API server refuses such an object (the CRD's schema says string), so it roots nothing.
#[test]
fn a_kustomization_whose_spec_path_is_not_a_string_is_no_cluster_root() {
    let t = tree(&[(
        "sync.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
         name: flux-system\n  namespace: flux-system\nspec:\n  path: 42\n",
    )]);
    let d = discover(&crate::testutil::source_fs(t.path()));
    assert!(d.clusters.is_empty(), "{:?}", d.clusters);
}

// The Flux Operator reconciles `FluxInstance.spec.sync.path` as the cluster root
// (controlplaneio-fluxcd/flux-operator, FluxInstance API `sync`); the flux-instance chart
// takes it as `instance.sync.path`.
#[test]
fn flux_operator_sync_path_is_a_cluster_root() {
    let t = tree(&[
        ("kubernetes/flux/cluster/ks.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"),
        (
            "kubernetes/apps/flux/hr.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: flux-instance\nspec:\n  values:\n    instance:\n      sync:\n        kind: GitRepository\n        path: kubernetes/flux/cluster\n",
        ),
        (
            "other/fi.yaml",
            "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\nspec:\n  sync:\n    path: ./other/root\n",
        ),
        ("other/root/x.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"),
    ]);
    let d = discover(&crate::testutil::source_fs(t.path()));
    let roots: Vec<(&str, &str)> = d
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.root.path.as_str()))
        .collect();
    assert_eq!(
        roots,
        vec![
            ("cluster", "./kubernetes/flux/cluster"),
            ("root", "./other/root")
        ]
    );
}

#[test]
fn a_root_kustomization_in_the_repository_wins_over_an_implied_one() {
    let t = tree(&[
        ("clusters/dev/flux-system/gotk-components.yaml", "# generated\n"),
        (
            "clusters/dev/flux-system/gotk-sync.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: root\n  namespace: flux-system\nspec:\n  path: ./clusters/dev\n",
        ),
    ]);
    let d = discover(&crate::testutil::source_fs(t.path()));
    assert_eq!(d.clusters.len(), 1);
    assert_eq!(d.clusters[0].root.id.name, "root");
}

#[test]
fn clusters_sharing_a_last_folder_are_named_by_the_component_that_tells_them_apart() {
    assert_eq!(
        cluster_names(&["kubernetes/main/flux", "kubernetes/storage/flux"]),
        ["main", "storage"]
    );
    assert_eq!(
        cluster_names(&[
            "kubernetes/cluster-0/flux",
            "kubernetes/nas-1/flux",
            "clusters/dev"
        ]),
        ["cluster-0", "nas-1", "dev"]
    );
    // `flux` says nothing: `x/flux` is `x`, and `x/y/flux` is `y`.
    assert_eq!(cluster_names(&["x/flux", "x/y/flux"]), ["x", "y"]);
    // Two `dev`: the component that tells them apart.
    assert_eq!(
        cluster_names(&["a/dev/flux", "b/flux", "c/dev"]),
        ["a", "b", "c"]
    );
    // A distinguishing component that is another cluster's name gives way to the path.
    assert_eq!(cluster_names(&["a/dev", "b/dev", "a"]), ["a-dev", "b", "a"]);
    assert_eq!(cluster_names(&["."]), ["root"]);
}

// A person names a cluster `cluster-1`, not `clusters` or `base`: generic folder names
// are taken only when the path has nothing else.
#[test]
fn a_cluster_is_never_named_by_a_generic_folder_when_its_path_has_a_better_name() {
    assert_eq!(cluster_names(&["cluster/base"]), ["cluster"]);
    assert_eq!(cluster_names(&["kubernetes/flux/cluster"]), ["cluster"]);
    assert_eq!(
        cluster_names(&["clusters/cluster-1/flux-system", "clusters/cluster-2/flux"]),
        ["cluster-1", "cluster-2"]
    );
    assert_eq!(
        cluster_names(&["clusters/cluster-1", "overlays/cluster-1/base"]),
        ["clusters-cluster-1", "overlays-cluster-1-base"]
    );
    assert_eq!(cluster_names(&["deploy/k8s"]), ["k8s"]);
    assert_eq!(cluster_names(&["overlays", "."]), ["overlays", "root"]);
}

#[test]
fn each_cluster_takes_the_git_repository_declared_nearest_its_root_folder() {
    let decl = |file: &str, ignore: &str| SourceDecl {
        id: NamespacedName {
            namespace: "flux-system".into(),
            name: "flux-system".into(),
        },
        file: file.into(),
        ignore: Some(ignore.into()),
    };
    let d = Discovery {
        clusters: Vec::new(),
        candidates: Vec::new(),
        sources: vec![
            decl("kubernetes/main/flux/repo.yaml", "main"),
            decl("kubernetes/storage/bootstrap/repo.yaml", "storage"),
            decl("shared/repo.yaml", "shared"),
        ],
    };
    let roots = ["kubernetes/main/flux", "kubernetes/storage/flux", "other/x"];
    let id = d.sources[0].id.clone();
    let got = |dir: &str| d.source_ignore(&id, dir, &roots);
    assert_eq!(got("kubernetes/main/flux").as_deref(), Some("main"));
    // Not inside its own folder, but nearer than any other, and in no other cluster's.
    assert_eq!(got("kubernetes/storage/flux").as_deref(), Some("storage"));
    // Never one inside another cluster's root folder; among equals, the first declared.
    assert_eq!(got("other/x").as_deref(), Some("storage"));
}
