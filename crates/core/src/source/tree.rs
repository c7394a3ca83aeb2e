//! The [`Tree`]: what Flux would see of a source, held as a copy, read in place or as a
//! view made from other trees, and read only through its [`SourceFs`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tempfile::TempDir;

use super::entry::Entry;
use super::exclusion::{Excluded, Exclusion, LeftOut};
use super::view::SourceFs;
use super::{slash_path, SourceError};

/// What Flux would see: a materialised copy (deleted when dropped), the user's folder read
/// in place, or a view made from another tree; read only through its [`SourceFs`].
#[derive(Debug)]
pub struct Tree {
    pub(super) fs: SourceFs,
    pub(super) dir: Holder,
    pub(super) files: Vec<PathBuf>,
    pub(super) folders: BTreeSet<String>,
    pub(super) excluded: Vec<Excluded>,
    pub(super) revision: Option<String>,
    pub(super) digests: OnceLock<Digests>,
    /// What the tree was made from before the ignore rules, when it was read from a folder
    /// or a revision: a GitRepository with its own `spec.ignore` archives that again.
    pub(super) unfiltered: Option<Arc<Unfiltered>>,
}

/// The paths a tree was made from, before the ignore rules (sorted), and the folder they
/// were read from (the repository, for a revision's blobs).
#[derive(Debug)]
pub(super) struct Unfiltered {
    pub(super) dir: PathBuf,
    pub(super) entries: Vec<Entry>,
}

/// The SHA-256 (lower-case hex) of each file of a tree, by relative `/`-separated path.
pub type Digests = BTreeMap<String, String>;

/// What a tree's folder is.
#[derive(Debug)]
pub(super) enum Holder {
    /// A temporary folder of its own (a copy fluxsim made).
    Temp { _copy: TempDir },
    /// The user's folder, read in place (nothing is ever written there).
    InPlace,
    /// A view made from other trees (narrowed, changed, linked), under a name of its own:
    /// the empty folder held here while the tree lives, so that no other view takes it.
    View { _name: TempDir },
}

/// A name of its own for a view of a tree: an empty temporary folder (held while the view
/// lives, so no other view takes the name) and its resolved path.
pub(super) fn view_name() -> Result<(tempfile::TempDir, PathBuf), SourceError> {
    let name = crate::scratch::tempdir(crate::scratch::Kind::View).map_err(|source| {
        SourceError::Write {
            path: std::env::temp_dir(),
            source,
        }
    })?;
    let root = fs::canonicalize(name.path()).map_err(|source| SourceError::Read {
        path: name.path().to_path_buf(),
        source,
    })?;
    Ok((name, root))
}

impl Tree {
    /// The root of the tree: the copy, the viewed folder, or the view's name.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.fs.root()
    }

    /// The tree's files, as Flux would see them: the only way to read them.
    #[must_use]
    pub fn fs(&self) -> &SourceFs {
        &self.fs
    }

    /// Whether the tree is read in place (the user's folder, or a view made from trees):
    /// nothing of it is a copy on disk.
    #[must_use]
    pub fn in_place(&self) -> bool {
        !matches!(self.dir, Holder::Temp { .. })
    }

    /// Relative paths of the regular files copied, sorted.
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Relative paths (`/`-separated) of the folders in the copy, the root left out.
    #[must_use]
    pub fn folders(&self) -> &BTreeSet<String> {
        &self.folders
    }

    /// Paths left out, with the reason, sorted by path.
    #[must_use]
    pub fn excluded(&self) -> &[Excluded] {
        &self.excluded
    }

    /// The commit the copy was read from (`materialize_rev` only).
    #[must_use]
    pub fn revision(&self) -> Option<&str> {
        self.revision.as_deref()
    }

    /// Why the file `rel` (relative to the root) of the folder this tree was read from is
    /// not in the tree, when the folder holds it as a regular file: git does not track it,
    /// git ignores it, or an ignore rule leaves it out. `None` when the tree holds it, when
    /// the folder does not, and for a revision (whose files are git's, not the folder's).
    #[must_use]
    pub fn left_out(&self, rel: &str) -> Option<LeftOut> {
        let unfiltered = self.unfiltered.as_ref()?;
        let path = Path::new(rel);
        if self.revision.is_some() || self.files.iter().any(|f| f == path) {
            return None;
        }
        if let Some(e) = self.excluded.iter().find(|e| e.path == path) {
            return match &e.reason {
                Exclusion::NotTracked => Some(LeftOut::NotTracked),
                reason @ Exclusion::Ignored { .. } => Some(LeftOut::Excluded(reason.clone())),
                _ => None,
            };
        }
        // A path git lists neither as tracked nor as untracked, there on disk: git ignores it.
        let on_disk = fs::symlink_metadata(unfiltered.dir.join(path)).is_ok_and(|m| m.is_file());
        let listed = unfiltered.entries.iter().any(|e| e.path == path);
        (on_disk && !listed).then_some(LeftOut::IgnoredByGit)
    }

    /// The SHA-256 of each file as it was materialised (read on first use, unless the
    /// materialisation already knew them). A tree whose files are changed in place after
    /// this is called must not call it again.
    pub fn digests(&self) -> &Digests {
        self.digests.get_or_init(|| {
            self.files
                .iter()
                .filter_map(|rel| {
                    let bytes = self.fs.read(&self.root().join(rel)).ok()?;
                    Some((slash_path(rel), crate::digest::sha256_hex(&bytes)))
                })
                .collect()
        })
    }

    /// A tree of the same lists as this one, read through `fs`, held by `dir`.
    pub(super) fn derived(&self, fs: SourceFs, dir: Holder) -> Tree {
        Tree {
            fs,
            dir,
            files: self.files.clone(),
            folders: self.folders.clone(),
            excluded: self.excluded.clone(),
            revision: self.revision.clone(),
            digests: OnceLock::new(),
            unfiltered: self.unfiltered.clone(),
        }
    }

    /// The same tree again for another render: the same value when it is the user's folder
    /// read in place (nothing copied), else a [`Self::duplicate`].
    pub fn reopen(&self) -> Result<Tree, SourceError> {
        match self.dir {
            Holder::InPlace => Ok(self.derived(self.fs.clone(), Holder::InPlace)),
            _ => self.duplicate(),
        }
    }

    /// This tree with some files' contents replaced (`changes`, by relative path), for
    /// experiments (canaries) that must not disturb it: a view of the same files under a
    /// name of its own, with the changed files held in memory (nothing is copied or
    /// written).
    pub fn changed(&self, changes: &BTreeMap<PathBuf, Vec<u8>>) -> Result<Tree, SourceError> {
        let (name, root) = view_name()?;
        let fs = self.fs.changed(root, changes);
        Ok(self.derived(fs, Holder::View { _name: name }))
    }

    /// The folder `folder` (relative, `/`-separated; `""` for the root) of this tree as a tree
    /// of its own: a view whose files are this tree's files under the folder (read through
    /// this tree's value, so its changed files apply), nothing copied. `None` when the tree
    /// has no such folder.
    pub fn subtree(&self, folder: &str) -> Result<Option<Tree>, SourceError> {
        let folder = folder.trim_matches('/');
        if !folder.is_empty() && !self.folders.contains(folder) {
            return Ok(None);
        }
        let prefix = if folder.is_empty() {
            PathBuf::new()
        } else {
            PathBuf::from(folder)
        };
        let links: BTreeMap<PathBuf, (SourceFs, PathBuf)> = self
            .files
            .iter()
            .filter_map(|f| {
                let rel = f.strip_prefix(&prefix).ok()?;
                Some((rel.to_path_buf(), (self.fs.clone(), self.root().join(f))))
            })
            .collect();
        let folders: BTreeSet<String> = self
            .folders
            .iter()
            .filter_map(|d| {
                let rel = Path::new(d).strip_prefix(&prefix).ok()?;
                (!rel.as_os_str().is_empty()).then(|| slash_path(rel))
            })
            .collect();
        Tree::linked(links, folders, self.revision.clone()).map(Some)
    }

    /// A tree made of other trees' files: `links` maps each of its files (relative) to a file
    /// of another tree (its value, and the file's path there), whose bytes it shows;
    /// `folders` are its folders (every file's parents are added). Nothing is copied or
    /// written.
    pub fn linked(
        links: BTreeMap<PathBuf, (SourceFs, PathBuf)>,
        mut folders: BTreeSet<String>,
        revision: Option<String>,
    ) -> Result<Tree, SourceError> {
        for f in links.keys() {
            folders.extend(
                f.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let (name, root) = view_name()?;
        let files: Vec<PathBuf> = links.keys().cloned().collect();
        let fs = SourceFs::linked(root, links, folders.iter().map(PathBuf::from).collect());
        Ok(Tree {
            fs,
            dir: Holder::View { _name: name },
            files,
            folders,
            excluded: Vec::new(),
            revision,
            digests: OnceLock::new(),
            unfiltered: None,
        })
    }

    /// A second copy of this tree in a new temporary directory, folders and file modes
    /// included, for experiments (canaries) that must not disturb this one.
    pub fn duplicate(&self) -> Result<Tree, SourceError> {
        let out = source_temp_dir()?;
        for folder in &self.folders {
            let target = out.path().join(folder);
            fs::create_dir_all(&target).map_err(|source| SourceError::Write {
                path: target,
                source,
            })?;
        }
        for file in &self.files {
            let target = out.path().join(file);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|source| SourceError::Write {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            // A file plainly on disk is copied (its mode with it); a changed or linked one
            // holds bytes that are elsewhere.
            if let Some(from) = self.fs.disk_file(file) {
                fs::copy(&from, &target).map_err(|source| SourceError::Write {
                    path: target,
                    source,
                })?;
                continue;
            }
            let from = self.root().join(file);
            let bytes = self.fs.read(&from).map_err(|source| SourceError::Read {
                path: from.clone(),
                source,
            })?;
            fs::write(&target, bytes).map_err(|source| SourceError::Write {
                path: target,
                source,
            })?;
        }
        let fs = copy_fs(out.path(), &self.files, &self.folders);
        Ok(self.derived(fs, Holder::Temp { _copy: out }))
    }
}

/// The value reading fluxsim's own copy at `root`, which holds exactly `files` and
/// `folders`.
pub(super) fn copy_fs(root: &Path, files: &[PathBuf], folders: &BTreeSet<String>) -> SourceFs {
    SourceFs::on_folder(
        root.to_path_buf(),
        root.to_path_buf(),
        files.iter().cloned().collect(),
        folders.iter().map(PathBuf::from).collect(),
        true,
    )
}

/// A new, empty temporary folder for a tree.
pub(super) fn source_temp_dir() -> Result<TempDir, SourceError> {
    crate::scratch::tempdir(crate::scratch::Kind::Source).map_err(|source| SourceError::Write {
        path: std::env::temp_dir(),
        source,
    })
}
