//! A folder as Flux would see it: a git work tree's tracked (and, when asked, untracked)
//! files with their work-tree contents, or every file of a plain folder.

use std::fs;
use std::path::Path;

use super::entry::{Entry, Kind};
use super::exclusion::Exclusion;
use super::plan::{build, plan};
use super::tree::{Holder, Tree};
use super::{check_dir, git, walk, SourceError, SourceOptions};

/// Copies what Flux would see of the directory `dir` (a git work tree or a folder of one,
/// or a plain directory). Outside git every regular file under `dir` is a candidate.
pub fn materialize(dir: &Path, opts: &SourceOptions) -> Result<Tree, SourceError> {
    check_dir(dir)?;
    build(dir, dir_entries(dir, opts)?, opts, None)
}

/// What Flux would see of the directory `dir`, as [`materialize`] finds it, but read in
/// place: nothing is copied, and its [`SourceFs`](super::SourceFs) shows only those paths.
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
pub(super) fn dir_entries(dir: &Path, opts: &SourceOptions) -> Result<Vec<Entry>, SourceError> {
    if git::in_work_tree(dir)? {
        work_tree_entries(dir, opts.include_untracked)
    } else {
        walk::plain_entries(dir)
    }
}

/// Tracked files as the work tree has them, then untracked ones.
pub(super) fn work_tree_entries(
    dir: &Path,
    include_untracked: bool,
) -> Result<Vec<Entry>, SourceError> {
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
