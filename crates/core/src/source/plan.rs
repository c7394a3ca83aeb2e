//! What a tree will hold: the entries of a source with the ignore rules applied
//! (`.sourceignore` files, then `spec.ignore`), written into a copy or read in place.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::entry::{read_contents, Content, Entry, Kind};
use super::exclusion::{Excluded, Exclusion};
use super::ignore::{read_patterns, Matcher, Pattern, PatternSource, IGNORE_FILE};
use super::tree::{copy_fs, source_temp_dir, Digests, Holder, Tree, Unfiltered};
use super::view::SourceFs;
use super::{git, slash_path, SourceError, SourceOptions};

/// Applies the ignore rules to `entries` and writes the survivors into a new temp dir.
pub(super) fn build(
    dir: &Path,
    entries: Vec<Entry>,
    opts: &SourceOptions,
    revision: Option<String>,
) -> Result<Tree, SourceError> {
    plan(dir, entries, opts)?.write_fresh(dir, revision)
}

/// What a tree will hold: the entries that survive the ignore rules, and the folders.
pub(super) struct Plan {
    /// The files to copy, sorted by path, and whether each is executable.
    pub(super) copies: Vec<(PathBuf, Content, bool)>,
    /// Folders the archive would hold (more are made for the files' parents).
    pub(super) folders: BTreeSet<PathBuf>,
    pub(super) excluded: Vec<Excluded>,
    /// What the plan was made from.
    pub(super) unfiltered: Arc<Unfiltered>,
    /// The ignore rules it applied.
    pub(super) matcher: Matcher,
}

/// Applies the ignore rules to `entries`.
pub(super) fn plan(
    dir: &Path,
    mut entries: Vec<Entry>,
    opts: &SourceOptions,
) -> Result<Plan, SourceError> {
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
    pub(super) fn write_fresh(
        self,
        dir: &Path,
        revision: Option<String>,
    ) -> Result<Tree, SourceError> {
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
    pub(super) fn into_tree(
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

pub(super) fn ignored(pattern: &Pattern) -> Exclusion {
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
