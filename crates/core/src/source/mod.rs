//! The source stage: what Flux's source-controller would archive of a directory or a git
//! revision, as a [`Tree`] whose files are read only through its [`SourceFs`] (see [`view`]).
//! A work tree is read in place, a revision is copied into a temporary directory; either way
//! the user's tree is never written, and a reader sees the listed files and nothing else.
//! Reading the user's folder (or a revision's blobs) to *make* a tree is the one place this
//! module reads the disk directly.
//!
//! What is in the tree (each rule with its Flux source):
//! - In a git work tree, the files git tracks, with their work-tree contents (source-controller
//!   clones the repository, so only committed paths exist); untracked, not git-ignored files
//!   only when asked for. A revision is read from the object database instead.
//! - Never a symlink or other non-regular file: `Storage.Archive` skips anything that is not a
//!   regular file or a folder (`fluxcd/pkg` `artifact/storage/archive.go`). Newer
//!   source-controller builds copy in-repo symlink targets first (`resolveSymlinks` in
//!   `internal/controller/gitrepository_controller.go`); fluxsim does not, yet.
//! - Minus ignored paths (`fluxcd/pkg` `sourceignore/sourceignore.go`): the VCS patterns
//!   always; the default image/archive/CI patterns only while no user pattern exists, and
//!   `.sourceignore` lines count as user patterns just like `spec.ignore` ones
//!   (`SourceIgnoreFilter`'s `len(ps) > 0`); the `.sourceignore` files apply in
//!   `LoadIgnorePatterns`' depth-first order, and `spec.ignore` has the last word (a tree read
//!   without it keeps its unfiltered source, so [`Tree::narrowed`] can bring back what its
//!   negations re-include). Each file is
//!   matched on its own path with go-git's matcher, so a `!` pattern can re-include a file
//!   below an excluded folder, which git itself would not.
//!
//! Paths are relative to the directory given, which plays the repository root.

mod error;
pub mod git;
pub mod glob;
mod go_match;
mod ignore;
pub mod mapping;
mod secure_join;
pub mod view;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tempfile::TempDir;

pub use error::SourceError;
pub use fluxsim_kustomize::bounded::{read_bounded, read_bounded_to, MAX_FILE_BYTES};
pub use ignore::PatternSource;
pub(crate) use ignore::{matcher_match, pattern_result};
pub use secure_join::secure_join;
pub use view::{DirEntry, SourceFs};

use ignore::{read_patterns, Matcher, Pattern, IGNORE_FILE};

/// What to read besides committed files, and the `GitRepository`'s own ignore rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceOptions {
    /// Also copy untracked files that git does not ignore (work trees only).
    pub include_untracked: bool,
    /// `GitRepository.spec.ignore`, in gitignore syntax.
    pub spec_ignore: Option<String>,
}

/// What Flux would see: a materialised copy (deleted when dropped), the user's folder read
/// in place, or a view made from another tree; read only through its [`SourceFs`].
#[derive(Debug)]
pub struct Tree {
    fs: SourceFs,
    dir: Holder,
    files: Vec<PathBuf>,
    folders: BTreeSet<String>,
    excluded: Vec<Excluded>,
    revision: Option<String>,
    digests: OnceLock<Digests>,
    /// What the tree was made from before the ignore rules, when it was read from a folder
    /// or a revision: a GitRepository with its own `spec.ignore` archives that again.
    unfiltered: Option<Arc<Unfiltered>>,
}

/// The paths a tree was made from, before the ignore rules (sorted), and the folder they
/// were read from (the repository, for a revision's blobs).
#[derive(Debug)]
struct Unfiltered {
    dir: PathBuf,
    entries: Vec<Entry>,
}

/// The SHA-256 (lower-case hex) of each file of a tree, by relative `/`-separated path.
pub type Digests = BTreeMap<String, String>;

/// What a tree's folder is.
#[derive(Debug)]
enum Holder {
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
fn view_name() -> Result<(tempfile::TempDir, PathBuf), SourceError> {
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
    fn derived(&self, fs: SourceFs, dir: Holder) -> Tree {
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

    /// This tree as a GitRepository whose `spec.ignore` is `spec_ignore` archives it: the
    /// same source filtered again with `spec.ignore` after the `.sourceignore` patterns
    /// (`reconcileArtifact` appends it last, so its negations re-include what a
    /// `.sourceignore` excluded, and once it holds a pattern source-controller's default
    /// patterns are dropped), as a view under a name of its own: the files this tree shows
    /// are read through it, the others from where the tree was read (nothing is copied).
    /// A tree not read from a folder or a revision (made of other trees) is only narrowed.
    pub fn narrowed(&self, spec_ignore: &str) -> Result<Tree, SourceError> {
        let Some(unfiltered) = &self.unfiltered else {
            return self.narrowed_view(spec_ignore);
        };
        let opts = SourceOptions {
            include_untracked: false,
            spec_ignore: Some(spec_ignore.to_owned()),
        };
        let plan = plan(&unfiltered.dir, unfiltered.entries.clone(), &opts)?;
        let mut shown = BTreeSet::new();
        let mut reincluded = Vec::new();
        for (path, content, _) in &plan.copies {
            if self.fs.is_file(&self.root().join(path)) {
                shown.insert(path.clone());
            } else {
                reincluded.push((path.clone(), content.clone()));
            }
        }
        // Files this tree has that its source had not (added to it by `changed`, for a
        // canary) go through the same rules.
        let known: BTreeSet<&PathBuf> = unfiltered.entries.iter().map(|e| &e.path).collect();
        let mut files: Vec<PathBuf> = plan.copies.iter().map(|(p, _, _)| p.clone()).collect();
        for f in &self.files {
            if !known.contains(f) && plan.matcher.excluded_by(f, false).is_none() {
                shown.insert(f.clone());
                files.push(f.clone());
            }
        }
        files.sort();
        let mut changes = BTreeMap::new();
        read_contents(&unfiltered.dir, &reincluded, |path, bytes| {
            changes.insert(path.clone(), bytes);
        })?;
        let mut folders: BTreeSet<String> = plan.folders.iter().map(|f| slash_path(f)).collect();
        for path in &files {
            folders.extend(
                path.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let (name, root) = view_name()?;
        let fs = self
            .fs
            .narrowed(
                root.clone(),
                shown,
                folders.iter().map(PathBuf::from).collect(),
            )
            .changed(root, &changes);
        Ok(Tree {
            fs,
            dir: Holder::View { _name: name },
            files,
            folders,
            excluded: plan.excluded,
            revision: self.revision.clone(),
            digests: OnceLock::new(),
            unfiltered: self.unfiltered.clone(),
        })
    }

    /// [`Self::narrowed`] of a tree without its unfiltered source: the files of this tree
    /// that no pattern of `spec_ignore` excludes.
    fn narrowed_view(&self, spec_ignore: &str) -> Result<Tree, SourceError> {
        let matcher = Matcher::new(read_patterns(spec_ignore, &[], &PatternSource::SpecIgnore));
        let mut excluded = self.excluded.clone();
        let mut files = Vec::new();
        for f in &self.files {
            match matcher.excluded_by(f, false) {
                Some(pattern) => excluded.push(Excluded {
                    path: f.clone(),
                    reason: ignored(pattern),
                }),
                None => files.push(f.clone()),
            }
        }
        excluded.sort();
        // As the archive holds them: the folders the patterns keep, and every kept file's.
        let mut folders: BTreeSet<String> = self
            .folders
            .iter()
            .filter(|d| matcher.excluded_by(Path::new(d), true).is_none())
            .cloned()
            .collect();
        for f in &files {
            folders.extend(
                f.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let (name, root) = view_name()?;
        let fs = self.fs.narrowed(
            root,
            files.iter().cloned().collect(),
            folders.iter().map(PathBuf::from).collect(),
        );
        Ok(Tree {
            fs,
            dir: Holder::View { _name: name },
            files,
            folders,
            excluded,
            revision: self.revision.clone(),
            digests: OnceLock::new(),
            unfiltered: None,
        })
    }

    /// The ignore rules `flux build kustomization --ignore-paths PATTERNS` gives Flux's
    /// generator for the Kustomization whose `spec.path` is the folder `dir` of this tree
    /// (`fluxcd/pkg/kustomize` `NewGeneratorWithIgnore`, `GenerateManifest`): the
    /// `.sourceignore` files at and below `dir` (`LoadIgnorePatterns`, depth first, each scoped
    /// to its folder), then `ignore_paths` scoped to `dir`, over the VCS and default patterns
    /// (`NewDefaultMatcher`); the last matching pattern decides. With them, the files of `dir`
    /// that one of those `.sourceignore` files left out of this tree and the rules keep (a
    /// negation in `ignore_paths`), with their bytes: `flux build` reads a checkout, where they
    /// are.
    pub fn build_ignore(
        &self,
        dir: &str,
        ignore_paths: &str,
    ) -> Result<(BuildIgnore, BTreeMap<PathBuf, Vec<u8>>), SourceError> {
        let dir = Path::new(if dir == "." { "" } else { dir });
        let domain: Vec<String> = dir
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let under = |p: &Path| p.starts_with(dir);
        let is_ignore_file = |p: &Path| {
            p.file_name().is_some_and(|n| n == IGNORE_FILE)
                && !p.components().any(|c| c.as_os_str() == ".git")
                && p.parent().is_some_and(under)
        };
        // The `.sourceignore` files of `dir`, from the source before the ignore rules (they
        // may exclude themselves), else from this tree.
        let mut ignore_files: Vec<(PathBuf, Content)> = match &self.unfiltered {
            Some(u) => u
                .entries
                .iter()
                .filter_map(|e| match &e.kind {
                    Kind::File { content, .. } if is_ignore_file(&e.path) => {
                        Some((e.path.clone(), content.clone()))
                    }
                    _ => None,
                })
                .collect(),
            None => self
                .files
                .iter()
                .filter(|f| is_ignore_file(f))
                .map(|f| (f.clone(), Content::WorkTree(self.root().join(f))))
                .collect(),
        };
        ignore_files.sort_by(|(a, _), (b, _)| a.parent().cmp(&b.parent()));
        let repo = self
            .unfiltered
            .as_ref()
            .map_or_else(|| self.root().to_path_buf(), |u| u.dir.clone());
        let mut texts = vec![String::new(); ignore_files.len()];
        let listed: Vec<(usize, Content)> = ignore_files
            .iter()
            .enumerate()
            .map(|(i, (_, c))| (i, c.clone()))
            .collect();
        if self.unfiltered.is_some() {
            read_contents(&repo, &listed, |i, bytes| {
                texts[*i] = String::from_utf8_lossy(&bytes).into_owned();
            })?;
        } else {
            for (i, (path, _)) in ignore_files.iter().enumerate() {
                let bytes = self.fs.read(&self.root().join(path)).unwrap_or_default();
                texts[i] = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
        let mut patterns = Vec::new();
        for ((path, _), text) in ignore_files.iter().zip(&texts) {
            let folder: Vec<String> = path
                .parent()
                .into_iter()
                .flat_map(Path::components)
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let source = PatternSource::SourceIgnore(path.clone());
            patterns.extend(read_patterns(text, &folder, &source));
        }
        patterns.extend(read_patterns(
            ignore_paths,
            &domain,
            &PatternSource::IgnorePaths,
        ));
        let rules = BuildIgnore {
            any: !patterns.is_empty(),
            matcher: Matcher::with_defaults(&domain, patterns),
        };
        // What a `.sourceignore` of `dir` kept out of this tree and the rules keep.
        let by_own_ignore_file = |path: &Path| {
            self.excluded.iter().any(|e| {
                e.path == path
                    && matches!(&e.reason, Exclusion::Ignored {
                        source: PatternSource::SourceIgnore(f), ..
                    } if is_ignore_file(f))
            })
        };
        let mut revealed = Vec::new();
        if let Some(u) = &self.unfiltered {
            for e in &u.entries {
                if let Kind::File { content, .. } = &e.kind {
                    if under(&e.path)
                        && !self.fs.is_file(&self.root().join(&e.path))
                        && by_own_ignore_file(&e.path)
                        && rules.matcher.excluded_by(&e.path, false).is_none()
                    {
                        revealed.push((e.path.clone(), content.clone()));
                    }
                }
            }
        }
        let mut bytes = BTreeMap::new();
        read_contents(&repo, &revealed, |path, b| {
            bytes.insert(path.clone(), b);
        })?;
        Ok((rules, bytes))
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
fn copy_fs(root: &Path, files: &[PathBuf], folders: &BTreeSet<String>) -> SourceFs {
    SourceFs::on_folder(
        root.to_path_buf(),
        root.to_path_buf(),
        files.iter().cloned().collect(),
        folders.iter().map(PathBuf::from).collect(),
        true,
    )
}

/// `spec.path` joined onto the source root as kustomize-controller joins it (SecureJoin:
/// `..` is clamped at the root), relative to the root: `.` for the root itself.
pub fn spec_dir(fs: &SourceFs, path: &str) -> Result<String, SourceError> {
    let joined = fs.secure_join(path)?;
    let rel = joined
        .strip_prefix(fs.root())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(if rel.is_empty() { ".".to_string() } else { rel })
}

/// Whether source-controller's archive filter with no user pattern
/// (`SourceIgnoreFilter(nil, nil)`: the VCS and default patterns) leaves `path` out, as
/// source-watcher archives an ExternalArtifact.
#[must_use]
pub fn excluded_by_default(path: &str, is_dir: bool) -> bool {
    static MATCHER: OnceLock<Matcher> = OnceLock::new();
    MATCHER
        .get_or_init(|| Matcher::new(Vec::new()))
        .excluded_by(Path::new(path), is_dir)
        .is_some()
}

/// A new, empty temporary folder for a tree.
fn source_temp_dir() -> Result<TempDir, SourceError> {
    crate::scratch::tempdir(crate::scratch::Kind::Source).map_err(|source| SourceError::Write {
        path: std::env::temp_dir(),
        source,
    })
}

/// `a/./b/../c` as `a/c` (`/`-separated, relative); `None` when it climbs above its start.
#[must_use]
pub fn clean_relative(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// A relative path as `/`-separated text.
fn slash_path(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}

/// The files (relative paths, `/`-separated) that are in only one of two trees, or in both
/// with different contents.
#[must_use]
pub fn changed_files(a: &Tree, b: &Tree) -> BTreeSet<String> {
    changed_between(a.digests(), b.digests())
}

/// [`changed_files`] from the two trees' digests.
#[must_use]
pub fn changed_between(a: &Digests, b: &Digests) -> BTreeSet<String> {
    let all: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    all.into_iter()
        .filter(|rel| a.get(*rel) != b.get(*rel))
        .cloned()
        .collect()
}

/// The ignore rules `flux build kustomization --ignore-paths` gives Flux's generator for one
/// Kustomization ([`Tree::build_ignore`]): which files its listing skips
/// (`shouldIgnoreFile`) and which entries of its kustomization it drops
/// (`filterKsWithIgnoreFiles`, `fluxcd/pkg/kustomize` `filters.go`).
#[derive(Debug, Clone)]
pub struct BuildIgnore {
    matcher: Matcher,
    /// Some pattern was given or found: `shouldIgnoreFile` skips nothing without one.
    any: bool,
}

impl BuildIgnore {
    /// Whether the generator leaves the manifest `path` (relative to the source root) out of
    /// the `resources` it lists.
    #[must_use]
    pub fn skips_manifest(&self, path: &Path) -> bool {
        self.any && self.matcher.excluded_by(path, false).is_some()
    }

    /// Whether the generator drops a `resources`, `components` or `crds` entry naming
    /// `path` (relative to the source root), a folder when `is_dir`.
    #[must_use]
    pub fn drops_entry(&self, path: &Path, is_dir: bool) -> bool {
        self.matcher.excluded_by(path, is_dir).is_some()
    }
}

/// Why a file of the folder a tree was read from is not in the tree ([`Tree::left_out`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// git does not track it (and untracked files were not asked for).
    NotTracked,
    /// git ignores it (`.gitignore`, `.git/info/exclude`).
    IgnoredByGit,
    /// An ignore rule of Flux's archive leaves it out.
    Excluded(Exclusion),
}

/// A path that is not in the copy.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Excluded {
    /// Relative to the tree root.
    pub path: PathBuf,
    /// Why it was left out.
    pub reason: Exclusion,
}

/// Why a path is not in the copy.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exclusion {
    /// An ignore pattern excludes it (the last matching pattern decides).
    Ignored {
        /// The pattern as written.
        pattern: String,
        /// Where the pattern came from.
        source: PatternSource,
    },
    /// A symbolic link: never archived.
    Symlink,
    /// A FIFO, socket or device: never archived.
    NotRegularFile,
    /// A git submodule: Flux does not recurse into submodules unless told to.
    Submodule,
    /// Not tracked by git (and untracked files were not asked for), or a nested repository.
    NotTracked,
    /// Tracked by git but missing from the work tree.
    DeletedFromWorkTree,
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ignored { pattern, source } => write!(f, "ignored by `{pattern}` from {source}"),
            Self::Symlink => f.write_str("a symlink (source-controller never archives symlinks)"),
            Self::NotRegularFile => f.write_str("not a regular file"),
            Self::Submodule => f.write_str("a git submodule (not fetched)"),
            Self::NotTracked => f.write_str("not tracked by git"),
            Self::DeletedFromWorkTree => f.write_str("tracked but deleted from the work tree"),
        }
    }
}

/// Where a file's bytes come from.
#[derive(Debug, Clone)]
enum Content {
    /// A file in the user's tree (absolute path), with its stamp when the platform gives one.
    WorkTree(PathBuf),
    /// A blob of the repository containing `dir`.
    Blob(String),
}

/// One path found in the source, before ignore rules.
#[derive(Debug, Clone)]
enum Kind {
    File {
        content: Content,
        executable: bool,
    },
    Dir,
    Symlink,
    Other,
    Submodule,
    /// Not part of what Flux would see; recorded only.
    Absent(Exclusion),
}

#[derive(Debug, Clone)]
struct Entry {
    path: PathBuf,
    kind: Kind,
}

/// Copies what Flux would see of the directory `dir` (a git work tree or a folder of one,
/// or a plain directory). Outside git every regular file under `dir` is a candidate.
pub fn materialize(dir: &Path, opts: &SourceOptions) -> Result<Tree, SourceError> {
    check_dir(dir)?;
    build(dir, dir_entries(dir, opts)?, opts, None)
}

/// What Flux would see of the directory `dir`, as [`materialize`] finds it, but read in
/// place: nothing is copied, and its [`SourceFs`] shows only those paths.
pub fn in_place(dir: &Path, opts: &SourceOptions) -> Result<Tree, SourceError> {
    check_dir(dir)?;
    let root = fs::canonicalize(dir).map_err(|source| SourceError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let plan = plan(&root, dir_entries(&root, opts)?, opts)?;
    Ok(plan.into_tree(Holder::InPlace, &root, None, None))
}

/// What a directory holds: a git work tree's tracked (and untracked) paths, or every path.
fn dir_entries(dir: &Path, opts: &SourceOptions) -> Result<Vec<Entry>, SourceError> {
    if git::in_work_tree(dir)? {
        work_tree_entries(dir, opts.include_untracked)
    } else {
        walk::plain_entries(dir)
    }
}

/// Copies what Flux would see of `dir`'s folder at the git revision `rev` (a commit, branch
/// or tag) of the repository containing `dir`. Reads objects only: the work tree and the
/// index are never touched, and `include_untracked` does not apply.
pub fn materialize_rev(dir: &Path, rev: &str, opts: &SourceOptions) -> Result<Tree, SourceError> {
    check_dir(dir)?;
    let revision = git::revision(dir, rev)?;
    let entries = revision
        .entries
        .into_iter()
        .map(|e| {
            let kind = match e.mode.as_str() {
                "100644" | "100755" | "100664" => Kind::File {
                    executable: e.mode == "100755",
                    content: Content::Blob(e.oid),
                },
                "120000" => Kind::Symlink,
                "160000" => Kind::Submodule,
                _ => Kind::Other,
            };
            Entry { path: e.path, kind }
        })
        .collect();
    build(dir, entries, opts, Some(revision.commit))
}

/// What [`materialize_rev`] gives, read in place from the work tree when the work tree holds
/// the revision: every file of the revision's folder is a regular file there whose bytes
/// hash to the revision's blob (`git hash-object --no-filters`: no line-ending or filter
/// conversion taken for equality). The tree shows those files only, whatever else the work
/// tree holds (untracked or newly staged files are not in it, as they are not in the
/// revision). A CI job's
/// checkout of the head it diffs is such a work tree: nothing is copied out of git. `None`
/// when the work tree differs in any way (the revision is then materialised).
pub fn revision_in_place(
    dir: &Path,
    rev: &str,
    opts: &SourceOptions,
) -> Result<Option<Tree>, SourceError> {
    check_dir(dir)?;
    // Only a revision of the folder HEAD has is tried (a diff's base seldom is).
    let Some((commit, tree, head_tree)) = git::resolve_with_head(dir, rev)? else {
        return Ok(None);
    };
    if tree != head_tree {
        return Ok(None);
    }
    let revision = git::Revision {
        commit,
        entries: git::list_tree(dir, &tree)?,
    };
    let regular = |mode: &str| matches!(mode, "100644" | "100755" | "100664");
    if revision.entries.iter().any(|e| !regular(&e.mode)) {
        return Ok(None);
    }
    let root = fs::canonicalize(dir).map_err(|source| SourceError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut entries = Vec::with_capacity(revision.entries.len());
    let mut paths = Vec::with_capacity(revision.entries.len());
    for e in &revision.entries {
        let Some(kind @ Kind::File { .. }) = walk::classify(&root.join(&e.path))? else {
            return Ok(None);
        };
        let Some(text) = e.path.to_str().filter(|p| !p.contains('\n')) else {
            return Ok(None);
        };
        paths.push(text);
        entries.push(Entry {
            path: e.path.clone(),
            kind,
        });
    }
    let oids = git::hash_files(dir, &paths)?;
    if oids.len() != revision.entries.len()
        || oids.iter().zip(&revision.entries).any(|(o, e)| *o != e.oid)
    {
        return Ok(None);
    }
    let plan = plan(&root, entries, opts)?;
    Ok(Some(plan.into_tree(
        Holder::InPlace,
        &root,
        Some(revision.commit),
        None,
    )))
}

/// A revision of the repository containing a directory, as git names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionId {
    /// The commit.
    pub commit: String,
    /// The tree of the directory's folder in that commit: what [`materialize_rev`] copies
    /// is a function of it (and of the options).
    pub tree: String,
}

/// Resolves `rev` for `dir` with one git process, reading no file of it; `None` when it
/// does not resolve to a commit holding `dir`'s folder ([`materialize_rev`] says why).
pub fn resolve_rev(dir: &Path, rev: &str) -> Result<Option<RevisionId>, SourceError> {
    check_dir(dir)?;
    Ok(git::resolve(dir, rev)?.map(|(commit, tree)| RevisionId { commit, tree }))
}

fn check_dir(dir: &Path) -> Result<(), SourceError> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(SourceError::NotADirectory {
            path: dir.to_path_buf(),
        })
    }
}

/// Tracked files as the work tree has them, then untracked ones.
fn work_tree_entries(dir: &Path, include_untracked: bool) -> Result<Vec<Entry>, SourceError> {
    let mut entries = Vec::new();
    // The two listings are independent: the untracked one runs beside the tracked one.
    let (tracked, untracked) = std::thread::scope(|scope| {
        let untracked = scope.spawn(|| git::untracked(dir));
        let tracked = git::tracked(dir);
        (tracked, untracked.join())
    });
    let untracked = untracked.unwrap_or_else(|_| git::untracked(dir));
    for path in tracked? {
        let kind = match walk::classify(&dir.join(&path))? {
            // A gitlink: the submodule's folder.
            Some(Kind::Dir) => Kind::Submodule,
            Some(kind) => kind,
            None => Kind::Absent(Exclusion::DeletedFromWorkTree),
        };
        entries.push(Entry { path, kind });
    }
    for path in untracked? {
        let kind = match walk::classify(&dir.join(&path))? {
            Some(kind @ (Kind::File { .. } | Kind::Symlink | Kind::Other)) if include_untracked => {
                kind
            }
            _ => Kind::Absent(Exclusion::NotTracked),
        };
        entries.push(Entry { path, kind });
    }
    Ok(entries)
}

/// Applies the ignore rules to `entries` and writes the survivors into a new temp dir.
fn build(
    dir: &Path,
    entries: Vec<Entry>,
    opts: &SourceOptions,
    revision: Option<String>,
) -> Result<Tree, SourceError> {
    plan(dir, entries, opts)?.write_fresh(dir, revision)
}

/// What a tree will hold: the entries that survive the ignore rules, and the folders.
struct Plan {
    /// The files to copy, sorted by path, and whether each is executable.
    copies: Vec<(PathBuf, Content, bool)>,
    /// Folders the archive would hold (more are made for the files' parents).
    folders: BTreeSet<PathBuf>,
    excluded: Vec<Excluded>,
    /// What the plan was made from.
    unfiltered: Arc<Unfiltered>,
    /// The ignore rules it applied.
    matcher: Matcher,
}

/// Applies the ignore rules to `entries`.
fn plan(dir: &Path, mut entries: Vec<Entry>, opts: &SourceOptions) -> Result<Plan, SourceError> {
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let matcher = Matcher::new(user_patterns(dir, &entries, opts)?);
    let unfiltered = Arc::new(Unfiltered {
        dir: dir.to_path_buf(),
        entries: entries.clone(),
    });

    let mut excluded = Vec::new();
    let mut copies: Vec<(PathBuf, Content, bool)> = Vec::new();
    // Folders the archive would hold: every folder of an existing path.
    let mut folders = BTreeSet::new();
    for entry in entries {
        let reason = match &entry.kind {
            Kind::Absent(reason) => {
                excluded.push(Excluded {
                    path: entry.path.clone(),
                    reason: reason.clone(),
                });
                continue;
            }
            Kind::File {
                content,
                executable,
            } => {
                let pattern = matcher.excluded_by(&entry.path, false);
                if pattern.is_none() {
                    copies.push((entry.path.clone(), content.clone(), *executable));
                }
                pattern.map(ignored)
            }
            Kind::Dir => {
                folders.insert(entry.path.clone());
                None
            }
            // Flux clones submodule folders empty (unconfirmed: go-git's checkout).
            Kind::Submodule => {
                folders.insert(entry.path.clone());
                Some(Exclusion::Submodule)
            }
            Kind::Symlink => Some(Exclusion::Symlink),
            Kind::Other => Some(Exclusion::NotRegularFile),
        };
        folders.extend(
            entry
                .path
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .map(Path::to_path_buf),
        );
        if let Some(reason) = reason {
            excluded.push(Excluded {
                path: entry.path.clone(),
                reason,
            });
        }
    }
    // Archive writes a header for every folder the filter keeps, so an emptied folder
    // still exists after extraction (a `spec.path` to it is found, and builds empty).
    folders.retain(|folder| matcher.excluded_by(folder, true).is_none());
    excluded.sort();
    Ok(Plan {
        copies,
        folders,
        excluded,
        unfiltered,
        matcher,
    })
}

impl Plan {
    /// Writes the plan into a new temporary directory.
    fn write_fresh(self, dir: &Path, revision: Option<String>) -> Result<Tree, SourceError> {
        let out = source_temp_dir()?;
        let root = out.path().to_path_buf();
        for folder in &self.folders {
            let target = root.join(folder);
            fs::create_dir_all(&target).map_err(|source| SourceError::Write {
                path: target,
                source,
            })?;
        }
        write_files(dir, &root, &self.copies)?;
        Ok(self.into_tree(Holder::Temp { _copy: out }, &root, revision, None))
    }

    /// The tree of this plan at `root`: the copy `dir` holds, or the user's folder read in
    /// place; its value shows exactly the plan's files and folders.
    fn into_tree(
        self,
        dir: Holder,
        root: &Path,
        revision: Option<String>,
        digests: Option<Digests>,
    ) -> Tree {
        let digests = digests.map(OnceLock::from).unwrap_or_default();
        // Every folder the copy holds: those the archive keeps, and every file's.
        let mut folders: BTreeSet<String> = self.folders.iter().map(|f| slash_path(f)).collect();
        for (path, _, _) in &self.copies {
            folders.extend(
                path.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let files: Vec<PathBuf> = self.copies.into_iter().map(|(p, _, _)| p).collect();
        let fs = match dir {
            Holder::Temp { .. } => copy_fs(root, &files, &folders),
            _ => SourceFs::on_folder(
                root.to_path_buf(),
                root.to_path_buf(),
                files.iter().cloned().collect(),
                folders.iter().map(PathBuf::from).collect(),
                false,
            ),
        };
        Tree {
            fs,
            dir,
            folders,
            files,
            excluded: self.excluded,
            revision,
            digests,
            unfiltered: Some(self.unfiltered),
        }
    }
}

fn ignored(pattern: &Pattern) -> Exclusion {
    Exclusion::Ignored {
        pattern: pattern.text.clone(),
        source: pattern.source.clone(),
    }
}

/// `.sourceignore` patterns (outer folders first, as `LoadIgnorePatterns` walks), then
/// `spec.ignore` (`ReadPatterns`), as source-controller's `GitRepository` reconciler appends
/// them in `reconcileArtifact`.
fn user_patterns(
    dir: &Path,
    entries: &[Entry],
    opts: &SourceOptions,
) -> Result<Vec<Pattern>, SourceError> {
    // LoadIgnorePatterns skips folders named `.git` and only sees what the clone has.
    let files: Vec<(&PathBuf, &Content)> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::File { content, .. }
                if e.path.file_name().is_some_and(|n| n == IGNORE_FILE)
                    && !e.path.components().any(|c| c.as_os_str() == ".git") =>
            {
                Some((&e.path, content))
            }
            _ => None,
        })
        .collect();
    // LoadIgnorePatterns' depth-first order: a folder's own `.sourceignore` first, then its
    // sub-folders in name order (`os.ReadDir`), which is the order of the files' folders
    // compared component by component (not of the files' paths: `-a/.sourceignore` sorts
    // before `.sourceignore`, while the root's file comes first).
    let mut files = files;
    files.sort_by(|(a, _), (b, _)| a.parent().cmp(&b.parent()));
    let mut texts = vec![String::new(); files.len()];
    let listed: Vec<(usize, Content)> = files
        .iter()
        .enumerate()
        .map(|(i, (_, content))| (i, (*content).clone()))
        .collect();
    read_contents(dir, &listed, |i, bytes| {
        texts[*i] = String::from_utf8_lossy(&bytes).into_owned();
    })?;

    let mut patterns = Vec::new();
    for ((path, _), text) in files.iter().zip(&texts) {
        let domain: Vec<String> = path
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let source = PatternSource::SourceIgnore((*path).clone());
        patterns.extend(read_patterns(text, &domain, &source));
    }
    if let Some(spec) = &opts.spec_ignore {
        patterns.extend(read_patterns(spec, &[], &PatternSource::SpecIgnore));
    }
    Ok(patterns)
}

/// The bytes of each listed file (its key, and where its bytes are), handed to `each`: a
/// work-tree file read from the disk, a blob from the repository at `dir`.
fn read_contents<K>(
    dir: &Path,
    listed: &[(K, Content)],
    mut each: impl FnMut(&K, Vec<u8>),
) -> Result<(), SourceError> {
    let mut blobs = Vec::new();
    for (key, content) in listed {
        match content {
            Content::WorkTree(abs) => {
                let bytes = read_bounded(abs).map_err(|source| SourceError::Read {
                    path: abs.clone(),
                    source,
                })?;
                each(key, bytes);
            }
            Content::Blob(oid) => blobs.push((key, oid.as_str())),
        }
    }
    let oids: Vec<&str> = blobs.iter().map(|(_, oid)| *oid).collect();
    git::for_each_blob(dir, &oids, |n, bytes| {
        each(blobs[n].0, bytes);
        Ok(())
    })
}

fn write_files(
    dir: &Path,
    root: &Path,
    copies: &[(PathBuf, Content, bool)],
) -> Result<(), SourceError> {
    let write_err = |path: PathBuf| move |source| SourceError::Write { path, source };
    let mut blobs = Vec::new();
    for (path, content, executable) in copies {
        let target = root.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(write_err(parent.to_path_buf()))?;
        }
        match content {
            Content::WorkTree(abs) => {
                fs::copy(abs, &target).map_err(|source| SourceError::Read {
                    path: abs.clone(),
                    source,
                })?;
            }
            Content::Blob(oid) => blobs.push((oid.as_str(), target, *executable)),
        }
    }
    let oids: Vec<&str> = blobs.iter().map(|(oid, _, _)| *oid).collect();
    git::for_each_blob(dir, &oids, |n, bytes| {
        let (_, target, executable) = &blobs[n];
        fs::write(target, bytes).map_err(write_err(target.clone()))?;
        if *executable {
            set_executable(target).map_err(write_err(target.clone()))?;
        }
        Ok(())
    })
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}
