//! The trees a Kustomization is built from: the cluster's own GitRepository (the
//! repository), a source mapped to a folder (`--source`, fluxsim.toml `[sources]`), or an
//! ExternalArtifact that an ArtifactGenerator assembles (`generator`). Each is read through its
//! value ([`SourceFs`]), so nothing is copied, and each says how its paths map back to the
//! repository's, so that inputs, origins and build paths are the repository's own.

use crate::model::{ReadFrom, SourceSnapshot};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use std::sync::{Arc, OnceLock};

use crate::source::glob::Listing;
use crate::source::mapping::{MappedPath, SourceId, SourceMapping};
use crate::source::{SourceError, SourceFs, SourceOptions, Tree};

/// How the paths of a tree map to the repository's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathMap {
    /// The tree is the repository.
    Same,
    /// The tree is a folder of the repository (`""`: its root).
    Folder(String),
    /// Each file and folder of the tree comes from a file or folder of the repository, or
    /// (`None`) from elsewhere.
    Files {
        files: BTreeMap<String, Option<String>>,
        dirs: BTreeMap<String, Option<String>>,
    },
    /// Another checkout: nothing of it is the repository's.
    Outside,
}

impl PathMap {
    /// The repository path of the file `rel` of the tree.
    pub(crate) fn file(&self, rel: &str) -> Option<String> {
        match self {
            PathMap::Same => Some(rel.to_string()),
            PathMap::Folder(f) => Some(prefixed(f, rel)),
            PathMap::Files { files, .. } => files.get(rel).cloned().flatten(),
            PathMap::Outside => None,
        }
    }

    /// The repository path of the folder `rel` (`.` the root) of the tree.
    pub(crate) fn folder(&self, rel: &str) -> Option<String> {
        match self {
            PathMap::Same => Some(rel.to_string()),
            PathMap::Folder(f) if rel == "." => {
                Some(if f.is_empty() { ".".into() } else { f.clone() })
            }
            PathMap::Folder(f) => Some(prefixed(f, rel)),
            PathMap::Files { dirs, .. } => dirs.get(rel).cloned().flatten(),
            PathMap::Outside => None,
        }
    }
}

fn prefixed(folder: &str, rel: &str) -> String {
    if folder.is_empty() {
        rel.to_string()
    } else if rel.is_empty() || rel == "." {
        folder.to_string()
    } else {
        format!("{folder}/{rel}")
    }
}

/// A tree a Kustomization can be built from.
pub(crate) struct SourceTree {
    /// What the tree holds, for telling two renders apart: equal when the content is.
    pub(crate) identity: String,
    /// What readers read.
    pub(crate) fs: SourceFs,
    /// Its paths in the repository.
    pub(crate) map: PathMap,
    /// How a note names it.
    pub(crate) label: String,
    listing: OnceLock<Listing>,
    /// Its files, read once when a render keeps them (`RenderOptions::keep_sources`).
    snapshot: OnceLock<Arc<SourceSnapshot>>,
    /// Keeps the tree's folders (a view's name) while it is read.
    _tree: Option<Tree>,
}

impl fmt::Debug for SourceTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceTree")
            .field("identity", &self.identity)
            .field("root", &self.fs.root())
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl SourceTree {
    /// The cluster's own source: the repository (as the cluster's GitRepository shows it).
    pub(crate) fn own(fs: &SourceFs) -> SourceTree {
        SourceTree {
            identity: "own".into(),
            fs: fs.clone(),
            map: PathMap::Same,
            label: "the cluster's own GitRepository".into(),
            listing: OnceLock::new(),
            snapshot: OnceLock::new(),
            _tree: None,
        }
    }

    /// A tree made elsewhere (a mapping, an ArtifactGenerator), kept while this lives.
    pub(crate) fn made(identity: String, tree: Tree, map: PathMap, label: String) -> SourceTree {
        SourceTree {
            identity,
            fs: tree.fs().clone(),
            map,
            label,
            listing: OnceLock::new(),
            snapshot: OnceLock::new(),
            _tree: Some(tree),
        }
    }

    /// Its files and folders, and where a mapped tree was read (for the oracle).
    pub(crate) fn snapshot(&self) -> Arc<SourceSnapshot> {
        self.snapshot
            .get_or_init(|| {
                let mut files = BTreeMap::new();
                let mut dirs = BTreeSet::new();
                for (path, is_dir) in self.listing().walk(".") {
                    if is_dir {
                        dirs.insert(path);
                    } else if let Ok(bytes) = self.fs.read(&self.fs.root().join(&path)) {
                        files.insert(path, bytes);
                    }
                }
                let read_from = match &self.map {
                    PathMap::Folder(f) => Some(ReadFrom::Folder(f.clone())),
                    PathMap::Outside => Some(ReadFrom::Checkout(self.fs.root().to_path_buf())),
                    PathMap::Same | PathMap::Files { .. } => None,
                };
                Arc::new(SourceSnapshot {
                    label: self.label.clone(),
                    read_from,
                    files,
                    dirs,
                })
            })
            .clone()
    }

    /// Its files and folders, read through its value once.
    pub(crate) fn listing(&self) -> &Listing {
        self.listing.get_or_init(|| {
            let mut files = BTreeSet::new();
            let mut dirs = BTreeSet::new();
            let mut pending = vec![String::new()];
            while let Some(dir) = pending.pop() {
                let Ok(entries) = self.fs.read_dir(&self.fs.root().join(&dir)) else {
                    continue;
                };
                for e in entries {
                    let name = e.name.to_string_lossy();
                    let path = if dir.is_empty() {
                        name.into_owned()
                    } else {
                        format!("{dir}/{name}")
                    };
                    if e.is_dir {
                        dirs.insert(path.clone());
                        pending.push(path);
                    } else {
                        files.insert(path);
                    }
                }
            }
            Listing::new(files, dirs)
        })
    }
}

/// Where a Kustomization's source is, once looked up.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// The cluster's own GitRepository.
    Own,
    /// Another tree fluxsim can read.
    Tree(Arc<SourceTree>),
    /// Not in this repository, nor mapped: not rendered (the reason says which flag would).
    External(String),
    /// The source itself fails as Flux's would (its ArtifactGenerator fails, its folder is
    /// missing).
    Failed(String),
}

impl PartialEq for Choice {
    fn eq(&self, other: &Choice) -> bool {
        match (self, other) {
            (Choice::Own, Choice::Own) => true,
            (Choice::Tree(a), Choice::Tree(b)) => a.identity == b.identity,
            (Choice::External(a), Choice::External(b)) | (Choice::Failed(a), Choice::Failed(b)) => {
                a == b
            }
            _ => false,
        }
    }
}

/// The sources mapped to folders for one render, read once (a folder of the repository as
/// a view of it, another checkout read as fluxsim reads a repository).
#[derive(Debug, Default)]
pub struct Mapped {
    pub(crate) entries: BTreeMap<SourceId, Result<Arc<SourceTree>, String>>,
}

impl Mapped {
    /// Reads `mappings` against the repository `repo`. A folder missing from this tree (at
    /// this revision) fails the Kustomizations on it; a checkout that cannot be read is an
    /// error.
    pub fn read(repo: &Tree, mappings: &[SourceMapping]) -> Result<Mapped, SourceError> {
        let mut entries = BTreeMap::new();
        for m in mappings {
            let label = m.label();
            let entry = match &m.path {
                MappedPath::Folder(folder) => match repo.subtree(folder)? {
                    Some(tree) => Ok(Arc::new(SourceTree::made(
                        format!("mapped {label}"),
                        tree,
                        PathMap::Folder(folder.clone()),
                        label,
                    ))),
                    None => Err(format!(
                        "source {} is mapped to {} ({}), which is no folder of the repository \
                         (here)",
                        m.source, m.path, m.from
                    )),
                },
                MappedPath::Checkout(path) => {
                    let tree = crate::source::in_place(path, &SourceOptions::default())?;
                    Ok(Arc::new(SourceTree::made(
                        format!("mapped {label}"),
                        tree,
                        PathMap::Outside,
                        label,
                    )))
                }
            };
            entries.insert(m.source.clone(), entry);
        }
        Ok(Mapped { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_back_to_the_repository() {
        let f = PathMap::Folder("kubernetes".into());
        assert_eq!(
            f.file("apps/a.yaml").as_deref(),
            Some("kubernetes/apps/a.yaml")
        );
        assert_eq!(f.folder(".").as_deref(), Some("kubernetes"));
        assert_eq!(
            PathMap::Folder(String::new()).folder(".").as_deref(),
            Some(".")
        );
        assert_eq!(PathMap::Outside.file("a.yaml"), None);
        let files = PathMap::Files {
            files: BTreeMap::from([("base/a.yaml".into(), Some("apps/base/a.yaml".into()))]),
            dirs: BTreeMap::new(),
        };
        assert_eq!(
            files.file("base/a.yaml").as_deref(),
            Some("apps/base/a.yaml")
        );
        assert_eq!(files.file("base/b.yaml"), None);
    }
}
