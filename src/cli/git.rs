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

/// Whether `rev` names a commit of the repository at `dir`.
fn is_commit(dir: &Path, rev: &str) -> bool {
    git(
        dir,
        &["rev-parse", "--verify", "-q", &format!("{rev}^{{commit}}")],
    )
    .is_some()
}

/// The default branch: what `origin/HEAD` points at, else the first of `main`, `master`,
/// `origin/main`, `origin/master` that exists. `Err` with the branch `origin/HEAD` names when
/// that branch was never fetched (`origin/main`), else `Err(None)`.
fn default_branch(dir: &Path) -> Result<String, Option<String>> {
    let mut unfetched = None;
    if let Some(r) = git(dir, &["symbolic-ref", "-q", "refs/remotes/origin/HEAD"]) {
        if let Some(short) = r.strip_prefix("refs/remotes/") {
            if is_commit(dir, short) {
                return Ok(short.to_string());
            }
            unfetched = Some(short.to_string());
        }
    }
    ["main", "master", "origin/main", "origin/master"]
        .into_iter()
        .find(|b| is_commit(dir, b))
        .map(str::to_string)
        .ok_or(unfetched)
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
/// a pull request's "Files changed" take it. Each way it can fail is one error with the next
/// step: not a git repository, no default branch (fetch it), no merge-base (unshallow).
pub(crate) fn default_base(dir: &Path) -> anyhow::Result<DefaultBase> {
    if !dir.is_dir() {
        return Err(crate::source::SourceError::NotADirectory {
            path: dir.to_path_buf(),
        }
        .into());
    }
    if git(dir, &["rev-parse", "--git-dir"]).is_none() {
        return Err(crate::source::SourceError::NotAGitRepository {
            dir: dir.to_path_buf(),
        }
        .into());
    }
    let branch = match default_branch(dir) {
        Ok(branch) => branch,
        Err(Some(unfetched)) => {
            let (remote, name) = unfetched.split_once('/').unwrap_or(("origin", &unfetched));
            anyhow::bail!(
                "no --base given, and the default branch `{unfetched}` was never fetched: run \
                 `git fetch {remote} {name}` (in GitHub Actions, check out with `fetch-depth: \
                 0`), or give --base REV"
            );
        }
        Err(None) => {
            let has_origin =
                git(dir, &["remote"]).is_some_and(|r| r.lines().any(|l| l == "origin"));
            if has_origin {
                anyhow::bail!(
                    "no --base given, and the default branch is not in this clone (no \
                     origin/HEAD, main or master): run `git fetch origin main` (or the branch \
                     pull requests go to), or give --base REV"
                );
            }
            anyhow::bail!(
                "no --base given, and the repository at `{}` has no branch main or master and \
                 no remote `origin`: give --base REV (a commit, branch or tag to compare with)",
                dir.display()
            );
        }
    };
    let commit = git(dir, &["merge-base", "HEAD", &branch]).ok_or_else(|| {
        if crate::source::git::is_shallow(dir) {
            anyhow::anyhow!(
                "no --base given, and this shallow clone does not hold the merge-base of HEAD and \
                 `{branch}`: run `git fetch --unshallow` (in GitHub Actions, check out with \
                 `fetch-depth: 0`), or give --base REV"
            )
        } else {
            anyhow::anyhow!(
                "no --base given, and HEAD shares no history with `{branch}`: give --base REV"
            )
        }
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

/// The top of the git work tree holding `dir`, and where `dir` sits in it (`kubernetes/apps/`,
/// empty at the top); `None` outside git.
pub(crate) fn work_tree_top(dir: &Path) -> Option<(std::path::PathBuf, String)> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let prefix = git(dir, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    Some((std::path::PathBuf::from(top), prefix))
}
