//! Finding the clusters of a repository: each is a root Flux Kustomization.
//!
//! A root is a Flux Kustomization whose `spec.path` is the directory that holds its file, or
//! an ancestor of it (Flux's bootstrap layout keeps `clusters/dev/flux-system/gotk-sync.yaml`
//! with `path: ./clusters/dev`). Roots can also be given as `NAME=PATH`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::flux::{is_kustomization, str_at, Kustomization, NamespacedName, ObjectId};
use crate::generate::spec_dir;

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

/// What one scan of a source tree finds.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The cluster roots, sorted by name.
    pub clusters: Vec<Cluster>,
    /// `spec.ignore` of each GitRepository that has one, by namespace (as written, possibly
    /// empty) and name; the first declaration in file order wins.
    pub source_ignores: BTreeMap<NamespacedName, String>,
}

/// A root that could not be understood.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DiscoverError {
    /// A `NAME=PATH` argument without `=`.
    #[error("--cluster `{0}`: expected NAME=PATH")]
    BadArgument(String),
    /// The path given for a cluster does not exist.
    #[error("--cluster `{0}`: path `{1}` does not exist in the source")]
    MissingPath(String, String),
    /// No cluster was found.
    #[error("no cluster root found: no Flux Kustomization has a spec.path that holds its own file; pass --cluster NAME=PATH")]
    NoClusters,
}

pub(crate) fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
}

/// Finds the cluster roots, and the GitRepositories' ignore lists, in a materialised tree.
pub fn discover(root: &Path) -> Discovery {
    let mut files = Vec::new();
    yaml_files(root, &mut files);
    let mut by_path: BTreeMap<String, Cluster> = BTreeMap::new();
    let mut source_ignores = BTreeMap::new();
    for file in files {
        let rel_file = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        let rel_dir = Path::new(&rel_file)
            .parent()
            .map_or(String::new(), |p| p.to_string_lossy().into_owned());
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for doc in crate::manifest::split_documents(&text) {
            let Ok(v) = crate::manifest::parse_object(doc) else {
                continue;
            };
            let id = ObjectId::of(&v);
            if id.kind == "GitRepository" && id.group == "source.toolkit.fluxcd.io" {
                if let Some(ignore) = str_at(&v, &["spec", "ignore"]) {
                    let key = NamespacedName {
                        namespace: id.namespace,
                        name: id.name,
                    };
                    source_ignores
                        .entry(key)
                        .or_insert_with(|| ignore.to_string());
                }
                continue;
            }
            if !is_kustomization(&v) {
                continue;
            }
            let Ok(ks) = Kustomization::from_json(&v) else {
                continue;
            };
            let Ok(path) = spec_dir(root, &ks.path) else {
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
            let name = if path == "." {
                "root".to_string()
            } else {
                path.rsplit('/').next().unwrap_or(&path).to_string()
            };
            by_path.entry(path).or_insert(Cluster {
                name,
                root: ks,
                file: Some(rel_file.clone()),
                source_ignore: None,
            });
        }
    }
    let mut clusters: Vec<Cluster> = by_path.into_values().collect();
    // Two roots with the same last path component get their full path as a name.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for c in &clusters {
        *counts.entry(c.name.clone()).or_default() += 1;
    }
    for c in &mut clusters {
        if counts[&c.name] > 1 {
            let path = spec_dir(root, &c.root.path).unwrap_or_else(|_| c.root.path.clone());
            c.name = path.replace('/', "-");
        }
    }
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Discovery {
        clusters,
        source_ignores,
    }
}

/// A cluster given as `NAME=PATH`: its root is a synthesised `flux-system/flux-system`
/// Kustomization with that path, unless the source declares one.
pub fn cluster_from_arg(
    root: &Path,
    arg: &str,
    found: &[Cluster],
) -> Result<Cluster, DiscoverError> {
    let (name, path) = arg
        .split_once('=')
        .ok_or_else(|| DiscoverError::BadArgument(arg.to_string()))?;
    let norm = spec_dir(root, path).unwrap_or_else(|_| path.to_string());
    if !root.join(&norm).is_dir() {
        return Err(DiscoverError::MissingPath(
            arg.to_string(),
            path.to_string(),
        ));
    }
    if let Some(c) = found
        .iter()
        .find(|c| spec_dir(root, &c.root.path).is_ok_and(|p| p == norm))
    {
        return Ok(Cluster {
            name: name.to_string(),
            ..c.clone()
        });
    }
    let synthetic = serde_json::json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"path": format!("./{norm}"), "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}
    });
    let ks = Kustomization::from_json(&synthetic)
        .map_err(|_| DiscoverError::BadArgument(arg.to_string()))?;
    Ok(Cluster {
        name: name.to_string(),
        root: ks,
        file: None,
        source_ignore: None,
    })
}
