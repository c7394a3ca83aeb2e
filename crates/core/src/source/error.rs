//! Errors of the source stage: each names the path and says what to do.

use std::io;
use std::path::PathBuf;

/// Why a tree could not be materialised.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The directory to render does not exist or is not a directory.
    #[error(
        "`{path}` is not a directory: give the directory of the repository (or a folder in it)"
    )]
    NotADirectory { path: PathBuf },
    /// `git` is needed (the directory is in a git work tree, or a revision was asked for)
    /// but could not be started.
    #[error(
        "`{dir}` needs git, but the `git` command could not be run ({source}): install git or put it on PATH"
    )]
    GitMissing {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A git command failed.
    #[error("`git {command}` failed in `{dir}`: {stderr}")]
    Git {
        dir: PathBuf,
        command: String,
        stderr: String,
    },
    /// A revision was asked for but the directory is not in a git repository.
    #[error("`{dir}` is not inside a git repository: a revision can only be read from one")]
    NotAGitRepository { dir: PathBuf },
    /// The revision names no commit.
    #[error(
        "`{rev}` is not a commit, branch or tag of the repository at `{dir}`: check `git log --oneline` and `git tag`"
    )]
    NotARevision { dir: PathBuf, rev: String },
    /// The folder does not exist at that revision.
    #[error("`{path}` does not exist at revision `{rev}` of the repository at `{dir}`")]
    PathNotInRevision {
        dir: PathBuf,
        rev: String,
        path: String,
    },
    /// git listed a path that would leave the tree (a corrupt or hostile repository).
    #[error("git listed `{path}` under `{dir}`, which is not a plain relative path: refusing to copy it")]
    UnsafePath { dir: PathBuf, path: String },
    /// A file or folder of the source could not be read.
    #[error("cannot read `{path}`: {source}; check that it exists and is readable")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The temporary copy could not be written.
    #[error("cannot write `{path}` in the temporary copy: {source}; check free space in the temporary directory (TMPDIR)")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// `secure_join` was given a root with `..` in it (as `SecureJoin` refuses).
    #[error("the root `{root}` contains `..` components: give a clean absolute root")]
    UnsafeRoot { root: PathBuf },
    /// `secure_join` followed more symlinks than `SecureJoin` allows (255).
    #[error("too many levels of symbolic links resolving `{path}` under `{root}`")]
    SymlinkLoop { root: PathBuf, path: String },
}
