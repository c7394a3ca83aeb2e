//! Why a path is not in a tree: the ignore rules, what Flux never archives, and what git
//! does not track.

use std::fmt;
use std::path::PathBuf;

use super::ignore::PatternSource;

/// Why a file of the folder a tree was read from is not in the tree ([`Tree::left_out`](super::Tree::left_out)).
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
