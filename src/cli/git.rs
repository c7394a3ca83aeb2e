//! What the command line asks git for itself: the default base of a diff (the merge-base of
//! HEAD and the default branch) and where the repository sits in its git work tree (for
//! SARIF paths). Read-only, like `source::git`.

use std::path::Path;
use std::process::Stdio;

/// Runs `git -C dir ARGS` (made as every git command is, by `source::git::command`); its
/// trimmed stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = crate::source::git::command(dir, args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The default branch: what `origin/HEAD` points at, else the first of `main`, `master`,
/// `origin/main`, `origin/master` that exists.
fn default_branch(dir: &Path) -> Option<String> {
    if let Some(r) = git(dir, &["symbolic-ref", "-q", "refs/remotes/origin/HEAD"]) {
        if let Some(short) = r.strip_prefix("refs/remotes/") {
            return Some(short.to_string());
        }
    }
    ["main", "master", "origin/main", "origin/master"]
        .into_iter()
        .find(|b| {
            git(
                dir,
                &["rev-parse", "--verify", "-q", &format!("{b}^{{commit}}")],
            )
            .is_some()
        })
        .map(str::to_string)
}

/// A diff's base when `--base` is not given: the commit, and how the output names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DefaultBase {
    /// The merge-base commit.
    pub(crate) commit: String,
    /// `merge-base of HEAD and main`.
    pub(crate) label: String,
}

/// The merge-base of HEAD and the default branch of the repository at `dir`, as flate and
/// a pull request's "Files changed" take it.
pub(crate) fn default_base(dir: &Path) -> anyhow::Result<DefaultBase> {
    let branch = default_branch(dir).ok_or_else(|| {
        anyhow::anyhow!(
            "no --base given and no default branch found in `{}` (neither origin/HEAD nor \
             main or master); give --base REV",
            dir.display()
        )
    })?;
    let commit = git(dir, &["merge-base", "HEAD", &branch]).ok_or_else(|| {
        anyhow::anyhow!(
            "no --base given and HEAD has no merge-base with `{branch}` (a shallow clone? \
             fetch with `fetch-depth: 0`); give --base REV"
        )
    })?;
    Ok(DefaultBase {
        label: format!("merge-base of HEAD and {branch}"),
        commit,
    })
}

/// Where `dir` sits in its git work tree (`deploy/fleet/`, empty at the top), so that paths
/// relative to `dir` can be made relative to the git root; empty outside git.
pub(crate) fn prefix_in_work_tree(dir: &Path) -> String {
    git(dir, &["rev-parse", "--show-prefix"]).unwrap_or_default()
}
