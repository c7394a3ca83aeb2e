//! How clusters are named: by their root folder's last component that says something, by the
//! component that tells them apart where several share it, and a lone cluster whose folder
//! says nothing after the repository it syncs.

use std::collections::BTreeMap;

use super::facts::{is_git_repository, operator_sync_path, operator_sync_url, FileFacts};
use super::Cluster;
use crate::flux::{str_at, ObjectId};
use crate::source::spec_dir;
use crate::source::SourceFs;

/// The repositories clusters sync from, for naming a lone cluster whose folder says nothing.
pub(super) struct SyncUrls {
    /// The GitRepositories' `spec.url`, by (namespace, name).
    git: BTreeMap<(String, String), String>,
    /// A Flux Operator instance's `sync.url`, by the folder it syncs.
    sync: BTreeMap<String, String>,
}

impl SyncUrls {
    pub(super) fn of(fs: &SourceFs, files: &[(String, FileFacts)]) -> SyncUrls {
        let mut urls = SyncUrls {
            git: BTreeMap::new(),
            sync: BTreeMap::new(),
        };
        for v in files.iter().flat_map(|(_, facts)| &facts.0) {
            let id = ObjectId::of(v);
            if is_git_repository(&id) {
                if let Some(url) = str_at(v, &["spec", "url"]) {
                    urls.git
                        .entry((id.namespace.clone(), id.name.clone()))
                        .or_insert_with(|| url.to_string());
                }
            }
            let path = operator_sync_path(v, &id).and_then(|p| spec_dir(fs, p).ok());
            if let (Some(p), Some(url)) = (path, operator_sync_url(v, &id)) {
                urls.sync.entry(p).or_insert_with(|| url.to_string());
            }
        }
        urls
    }
}

/// The clusters of `by_path` (root folder → cluster), named ([`cluster_names`]; a lone one
/// whose folder says nothing after its repository: [`lone_cluster_name`]).
pub(super) fn named(by_path: BTreeMap<String, Cluster>, urls: &SyncUrls) -> Vec<Cluster> {
    let SyncUrls {
        git: git_urls,
        sync: sync_urls,
    } = urls;
    let mut names = cluster_names(&by_path.keys().map(String::as_str).collect::<Vec<_>>());
    if let ([name], [(dir, cluster)]) = (
        names.as_mut_slice(),
        by_path.iter().collect::<Vec<_>>().as_slice(),
    ) {
        let url = cluster
            .root
            .source_ref
            .as_ref()
            .filter(|src| src.kind == "GitRepository")
            .and_then(|src| git_urls.get(&(src.namespace.clone(), src.name.clone())))
            .or_else(|| sync_urls.get(dir.as_str()));
        if let Some(repo) = url.and_then(|url| lone_cluster_name(name, url)) {
            *name = repo;
        }
    }
    by_path
        .into_values()
        .zip(names)
        .map(|(c, name)| Cluster { name, ..c })
        .collect()
}

/// The name of a repository's only cluster when its folder says nothing (`cluster/`, the
/// source root, a generic folder: "== cluster cluster" in a report): the last segment of
/// `url`, the repository its root syncs from (its GitRepository's, or the Flux Operator
/// instance's `sync.url`: `ssh://git@github.com/org/home-ops` is `home-ops`), when that is a
/// name; else `None` (the folder's name stays).
fn lone_cluster_name(name: &str, url: &str) -> Option<String> {
    let says_nothing =
        matches!(name.to_ascii_lowercase().as_str(), "cluster" | "root") || is_generic(name);
    if !says_nothing {
        return None;
    }
    let last = url
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()?
        .trim_end_matches(".git");
    let ok = !last.is_empty()
        && last.len() <= 63
        && last
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !is_generic(last);
    ok.then(|| last.to_string())
}

/// Folder names that say what a folder is for, not which cluster it is: a cluster is named
/// by one of these only when its path has nothing else (`kubernetes/flux/cluster` is
/// `cluster`, `clusters/cluster-1/flux` is `cluster-1`, `cluster/base` is `cluster`).
const GENERIC_FOLDERS: &[&str] = &[
    "apps",
    "base",
    "bases",
    "bootstrap",
    "clusters",
    "config",
    "configs",
    "deploy",
    "deployment",
    "deployments",
    "environments",
    "envs",
    "flux",
    "flux-system",
    "fluxcd",
    "gitops",
    "infra",
    "infrastructure",
    "k8s",
    "kube",
    "kubernetes",
    "manifests",
    "overlay",
    "overlays",
];

fn is_generic(component: &str) -> bool {
    GENERIC_FOLDERS.contains(&component.to_ascii_lowercase().as_str())
}

/// The names of the clusters whose root folders are `paths` (distinct, relative to the
/// source root), in the same order: each folder's last component that is not a generic
/// folder name ([`GENERIC_FOLDERS`]; the last component when all are; `root` for the source
/// root itself); where several share it, the component nearest the end of each path that no
/// other of them holds and is not generic (`kubernetes/main/flux` and
/// `kubernetes/storage/flux` are `main` and `storage`); the whole path with `-` for `/` where
/// no such component tells them apart.
#[must_use]
pub fn cluster_names(paths: &[&str]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            if *p == "." {
                Vec::new()
            } else {
                p.split('/').collect()
            }
        })
        .collect();
    // Components nearest the end first, generic ones after the others.
    let preference = |i: usize| -> Vec<&str> {
        let (named, generic): (Vec<&str>, Vec<&str>) =
            parts[i].iter().rev().partition(|c| !is_generic(c));
        named.into_iter().chain(generic).collect()
    };
    let first = |i: usize| preference(i).first().map_or("root", |c| *c).to_string();
    let mut names: Vec<String> = (0..paths.len()).map(first).collect();
    for i in 0..paths.len() {
        let group: Vec<usize> = (0..paths.len())
            .filter(|&j| j != i && first(j) == first(i))
            .collect();
        if group.is_empty() {
            continue;
        }
        // Never a generic name: the path says more.
        let distinct = preference(i)
            .into_iter()
            .filter(|c| !is_generic(c))
            .find(|c| group.iter().all(|&j| !parts[j].contains(c)));
        names[i] = match distinct {
            Some(c) => c.to_string(),
            None => paths[i].replace('/', "-"),
        };
    }
    // A distinguishing component may be another cluster's name: those take their paths.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for n in &names {
        *counts.entry(n.clone()).or_default() += 1;
    }
    for (i, n) in names.iter_mut().enumerate() {
        if counts[n.as_str()] > 1 {
            *n = paths[i].replace('/', "-");
        }
    }
    names
}
