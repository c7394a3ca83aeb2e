//! Finding the clusters of a repository: each is a root Flux Kustomization.
//!
//! A root is a Flux Kustomization whose `spec.path` is the directory that holds its file, or
//! an ancestor of it (Flux's bootstrap layout keeps `clusters/dev/flux-system/gotk-sync.yaml`
//! with `path: ./clusters/dev`). Roots can also be given as `NAME=PATH`.
//!
//! Where the root Kustomization is not in the repository, the cluster's root folder is still
//! recognisable, and a `flux-system/flux-system` root is synthesised for it (as `flux
//! bootstrap` or the Flux Operator would create it on the cluster):
//! - a folder holding `flux-system/gotk-components.yaml` or `flux-system/gotk-sync.yaml`
//!   (`flux bootstrap`'s layout, whose generated `gotk-sync.yaml` is often left out of git);
//! - the `spec.sync.path` of a Flux Operator `FluxInstance`, or the `instance.sync.path`
//!   value of a HelmRelease (the `flux-instance` chart's values);
//! - an apply set: a folder whose kustomization reaches (through `resources`, `components`
//!   and `bases`, read without building) files that declare Flux Kustomizations, and that no
//!   Flux Kustomization of the repository reaches, nor another apply set. A bootstrap script
//!   or Ansible applies it (`kubectl apply -k clusters/dev`), so it is a cluster's root.
//!
//! Clusters are named by their root folder's last component, or, where several share it, by
//! the component that tells them apart (see [`cluster_names`]).

mod facts;
mod names;
mod reach;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::flux::{is_kustomization, str_at, Kustomization, NamespacedName, ObjectId};
use crate::source::mapping::SourceMapping;
use crate::source::spec_dir;
use crate::source::SourceFs;

pub(crate) use facts::yaml_files;
use facts::{applicable, is_git_repository, operator_sync_path};
pub use facts::{is_yaml_file, FileFacts};
pub use names::cluster_names;
use names::{named, SyncUrls};
pub use reach::kustomizations_below;
use reach::{apply_sets, parent_dir};

/// A cluster to render.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The cluster's name (the root directory's last component unless given).
    pub name: String,
    /// The root Kustomization (as found in the source, or synthesised for `NAME=PATH`).
    pub root: Kustomization,
    /// The file that declares the root, relative to the source root, when there is one.
    pub file: Option<String>,
    /// `spec.ignore` of the GitRepository the root reconciles from, when the source
    /// declares it (filled in by `render::clusters_of` from [`Discovery::source_ignores`]).
    pub source_ignore: Option<String>,
}

/// A GitRepository declared in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDecl {
    /// Its namespace (as written, possibly empty) and name.
    pub id: NamespacedName,
    /// The file that declares it, relative to the source root.
    pub file: String,
    /// Its `spec.ignore`, when set.
    pub ignore: Option<String>,
}

/// What one scan of a source tree finds.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The cluster roots, sorted by name.
    pub clusters: Vec<Cluster>,
    /// Every GitRepository declared, in file order.
    pub sources: Vec<SourceDecl>,
    /// The folders that hold files declaring Flux Kustomizations, sorted (where to look for
    /// a root when none is found).
    pub candidates: Vec<String>,
}

impl Discovery {
    /// `spec.ignore` of the GitRepository `source` as the cluster whose root folder is
    /// `root_dir` has it, when the source declares it. Clusters are separate worlds: two may
    /// declare a GitRepository of the same name with different rules. The declaration that
    /// counts is the one nearest the cluster's root folder (the most leading folders in
    /// common; the first in file order among equals), never one inside another cluster's root
    /// folder (`other_roots`) unless it is inside this one's too.
    #[must_use]
    pub fn source_ignore(
        &self,
        source: &NamespacedName,
        root_dir: &str,
        other_roots: &[&str],
    ) -> Option<String> {
        let parts = |p: &str| -> Vec<String> {
            if p == "." {
                Vec::new()
            } else {
                p.split('/').map(str::to_string).collect()
            }
        };
        let own = parts(root_dir);
        let inside = |file: &str, dir: &str| dir == "." || file.starts_with(&format!("{dir}/"));
        self.sources
            .iter()
            .filter(|d| d.id == *source)
            .filter(|d| {
                inside(&d.file, root_dir)
                    || !other_roots
                        .iter()
                        .any(|o| *o != root_dir && *o != "." && inside(&d.file, o))
            })
            .map(|d| {
                let dir = parts(d.file.rsplit_once('/').map_or(".", |(dir, _)| dir));
                let common = dir.iter().zip(&own).take_while(|(a, b)| a == b).count();
                (common, d)
            })
            // The first of the best: `max_by_key` keeps the last, so compare reversed.
            .fold(None::<(usize, &SourceDecl)>, |best, (n, d)| match best {
                Some((m, _)) if m >= n => best,
                _ => Some((n, d)),
            })
            .and_then(|(_, d)| d.ignore.clone())
    }
}

/// A root that could not be understood.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DiscoverError {
    /// A `NAME=PATH` argument (`--cluster-root`, or `--cluster` spelt so) without `=`.
    #[error("--cluster-root `{0}`: expected NAME=PATH (`prod=./clusters/prod`)")]
    BadArgument(String),
    /// The path given for a cluster does not exist.
    #[error("--cluster-root `{0}`: path `{1}` does not exist in the source")]
    MissingPath(String, String),
    /// No cluster was found; `candidates` are the folders that hold Flux Kustomizations.
    #[error("no cluster root found: no Flux Kustomization has a spec.path that holds its own file, no folder holds flux-system/gotk-components.yaml or gotk-sync.yaml, no Flux Operator sync path was found and no kustomization applies Flux Kustomizations that nothing else reaches; pass --cluster-root NAME=PATH{}", candidate_lines(.candidates))]
    NoClusters {
        /// Folders holding Flux Kustomizations, relative to the source root, sorted.
        candidates: Vec<String>,
    },
}

fn candidate_lines(candidates: &[String]) -> String {
    use std::fmt::Write as _;
    if candidates.is_empty() {
        return " (no folder holds a Flux Kustomization)".to_string();
    }
    let names = cluster_names(&candidates.iter().map(String::as_str).collect::<Vec<_>>());
    let mut out = String::from(". Folders that hold Flux Kustomizations:");
    for (dir, name) in candidates.iter().zip(names) {
        let _ = write!(out, "\n  --cluster-root {name}={dir}");
    }
    out
}

/// Finds the cluster roots, and the GitRepositories' ignore lists, in a source tree.
pub fn discover(fs: &SourceFs) -> Discovery {
    let root = fs.root();
    let mut files = Vec::new();
    yaml_files(fs, root, &mut files);
    let facts: Vec<(String, FileFacts)> = files
        .iter()
        .map(|file| {
            let rel_file = file
                .strip_prefix(root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            let text = fs.read_to_string(file).ok();
            (rel_file, FileFacts::of(text.as_deref()))
        })
        .collect();
    discover_files(fs, &facts)
}

/// [`discover`] from the facts of every YAML file of the tree `fs` (paths relative to its
/// root, in the order of a sorted walk: component by component).
#[must_use]
pub fn discover_files(fs: &SourceFs, files: &[(String, FileFacts)]) -> Discovery {
    discover_files_with(fs, files, &[])
}

/// [`discover_files`], with the sources mapped to folders (`--source`, `fluxsim.toml`): a
/// Kustomization on a mapped source builds `spec.path` inside the mapped folder, so that is
/// the folder it reaches.
#[must_use]
pub fn discover_files_with(
    fs: &SourceFs,
    files: &[(String, FileFacts)],
    mapped: &[SourceMapping],
) -> Discovery {
    let mut by_path: BTreeMap<String, Cluster> = BTreeMap::new();
    let mut sources = Vec::new();
    // Root folders whose root Kustomization lives on the cluster only: (path, declared in).
    let mut implied: BTreeMap<String, String> = BTreeMap::new();
    for (rel_file, facts) in files {
        let rel_dir = Path::new(rel_file)
            .parent()
            .map_or(String::new(), |p| p.to_string_lossy().into_owned());
        if let Some(cluster_dir) = bootstrap_dir(rel_file) {
            implied
                .entry(cluster_dir)
                .or_insert_with(|| rel_file.clone());
        }
        for v in &facts.0 {
            let id = ObjectId::of(v);
            if let Some(sync_path) = operator_sync_path(v, &id) {
                if let Ok(p) = spec_dir(fs, sync_path) {
                    implied.entry(p).or_insert_with(|| rel_file.clone());
                }
                continue;
            }
            if is_git_repository(&id) {
                sources.push(SourceDecl {
                    id: NamespacedName {
                        namespace: id.namespace,
                        name: id.name,
                    },
                    file: rel_file.clone(),
                    ignore: str_at(v, &["spec", "ignore"]).map(str::to_string),
                });
                continue;
            }
            if !is_kustomization(v) {
                continue;
            }
            let Some(ks) = applicable(v) else {
                continue;
            };
            let Ok(path) = spec_dir(fs, &ks.path) else {
                continue;
            };
            let holds = if path == "." {
                rel_dir.is_empty()
            } else {
                rel_dir == path || rel_dir.starts_with(&format!("{path}/"))
            };
            if !holds {
                continue;
            }
            by_path.entry(path).or_insert(Cluster {
                name: String::new(),
                root: ks,
                file: Some(rel_file.clone()),
                source_ignore: None,
            });
        }
    }
    for (path, file) in implied {
        if by_path.contains_key(&path) || !fs.is_dir(&fs.root().join(&path)) {
            continue;
        }
        if let Some(ks) = synthetic_root(&path) {
            by_path.insert(
                path,
                Cluster {
                    name: String::new(),
                    root: ks,
                    file: Some(file),
                    source_ignore: None,
                },
            );
        }
    }
    let holders: BTreeSet<String> = files
        .iter()
        .filter(|(_, f)| f.0.iter().any(is_kustomization))
        .map(|(file, _)| parent_dir(file))
        .collect();
    for (dir, file) in apply_sets(fs, files, &by_path, mapped) {
        if let Some(ks) = synthetic_root(&dir) {
            by_path.entry(dir).or_insert(Cluster {
                name: String::new(),
                root: ks,
                file: Some(file),
                source_ignore: None,
            });
        }
    }
    let mut clusters = named(by_path, &SyncUrls::of(fs, files));
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Discovery {
        clusters,
        sources,
        candidates: holders.into_iter().collect(),
    }
}

/// A cluster given as `NAME=PATH`: its root is a synthesised `flux-system/flux-system`
/// Kustomization with that path, unless the source declares one.
pub fn cluster_from_arg(
    fs: &SourceFs,
    arg: &str,
    found: &[Cluster],
) -> Result<Cluster, DiscoverError> {
    let (name, path) = arg
        .split_once('=')
        .ok_or_else(|| DiscoverError::BadArgument(arg.to_string()))?;
    let norm = spec_dir(fs, path).unwrap_or_else(|_| path.to_string());
    if !fs.is_dir(&fs.root().join(&norm)) {
        return Err(DiscoverError::MissingPath(
            arg.to_string(),
            path.to_string(),
        ));
    }
    if let Some(c) = found
        .iter()
        .find(|c| spec_dir(fs, &c.root.path).is_ok_and(|p| p == norm))
    {
        return Ok(Cluster {
            name: name.to_string(),
            ..c.clone()
        });
    }
    let ks = synthetic_root(&norm).ok_or_else(|| DiscoverError::BadArgument(arg.to_string()))?;
    Ok(Cluster {
        name: name.to_string(),
        root: ks,
        file: None,
        source_ignore: None,
    })
}

/// The root Kustomization `flux bootstrap` (or the Flux Operator) creates on the cluster for
/// the folder `path` (relative to the source root): `flux-system/flux-system`, pruning, from
/// the `flux-system` GitRepository.
fn synthetic_root(path: &str) -> Option<Kustomization> {
    let synthetic = serde_json::json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"path": format!("./{path}"), "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}
    });
    Kustomization::from_json(&synthetic).ok()
}

/// For `<dir>/flux-system/gotk-components.yaml` or `.../gotk-sync.yaml`, the cluster folder
/// `<dir>` (`.` at the source root).
fn bootstrap_dir(rel_file: &str) -> Option<String> {
    let dir = ["gotk-components.yaml", "gotk-sync.yaml"]
        .iter()
        .find_map(|f| rel_file.strip_suffix(&format!("flux-system/{f}")))?;
    if dir.is_empty() {
        return Some(".".into());
    }
    dir.strip_suffix('/').map(str::to_string)
}
