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

mod entry;
mod error;
mod exclusion;
pub mod git;
pub mod glob;
mod go_match;
mod ignore;
pub mod mapping;
mod narrow;
mod plan;
mod revision;
mod secure_join;
mod tree;
pub mod view;
mod walk;
mod work_tree;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

pub use error::SourceError;
pub use exclusion::{Excluded, Exclusion, LeftOut};
pub use fluxsim_kustomize::bounded::{read_bounded, read_bounded_to, MAX_FILE_BYTES};
pub use ignore::PatternSource;
pub(crate) use ignore::{matcher_match, pattern_result};
pub use narrow::BuildIgnore;
pub use revision::{materialize_rev, resolve_rev, revision_in_place, RevisionId};
pub use secure_join::secure_join;
pub use tree::{Digests, Tree};
pub use view::{DirEntry, SourceFs};
pub use work_tree::{in_place, materialize};

use ignore::Matcher;

/// What to read besides committed files, and the `GitRepository`'s own ignore rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceOptions {
    /// Also copy untracked files that git does not ignore (work trees only).
    pub include_untracked: bool,
    /// `GitRepository.spec.ignore`, in gitignore syntax.
    pub spec_ignore: Option<String>,
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
pub(super) fn slash_path(rel: &Path) -> String {
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

pub(super) fn check_dir(dir: &Path) -> Result<(), SourceError> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(SourceError::NotADirectory {
            path: dir.to_path_buf(),
        })
    }
}
