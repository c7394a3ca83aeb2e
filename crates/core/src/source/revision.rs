//! A git revision as Flux would see it: read out of the object database, or in place when
//! the work tree holds it unchanged.

use std::fs;
use std::path::Path;

use super::entry::{Content, Entry, Kind};
use super::plan::{build, plan};
use super::tree::{Holder, Tree};
use super::{check_dir, git, walk, SourceError, SourceOptions};

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
