//! What git cannot give a diff is said once, with the next step: not a git repository, a
//! remote branch never fetched, a shallow clone, a name that is nothing.

use std::path::Path;

use crate::common::{commit_all, copy_dir, crate_path, fluxsim_in, git, repo_from};

fn run(dir: &Path, args: &[&str]) -> crate::common::Output {
    fluxsim_in(Some(dir), args)
}

#[test]
fn a_folder_outside_git_is_said_once_whatever_the_base() {
    let plain = tempfile::tempdir().unwrap();
    copy_dir(&crate_path("testdata/fleet"), plain.path());
    for args in [
        &["diff"][..],
        &["diff", "--base", "main"],
        &["prove"],
        &["images", "--diff"],
    ] {
        let out = run(plain.path(), args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.matches("is not inside a git repository").count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("default branch"),
            "{args:?}: one error, not two: {}",
            out.stderr
        );
        assert!(out.stderr.contains("git init"), "{}", out.stderr);
    }
}

/// A clone of the fleet on a branch `pr`, whose `origin/main` (and `origin/HEAD`'s target)
/// was never fetched.
fn clone_without_origin_main() -> (tempfile::TempDir, tempfile::TempDir) {
    let origin = repo_from("testdata/fleet");
    let clone = tempfile::tempdir().unwrap();
    git(
        clone.path(),
        &["clone", "-q", origin.path().to_str().unwrap(), "."],
    );
    git(clone.path(), &["checkout", "-q", "-b", "pr"]);
    git(clone.path(), &["branch", "-q", "-D", "main"]);
    git(
        clone.path(),
        &["update-ref", "-d", "refs/remotes/origin/main"],
    );
    (origin, clone)
}

#[test]
fn an_unfetched_remote_branch_suggests_git_fetch() {
    let (_origin, clone) = clone_without_origin_main();
    let out = run(clone.path(), &["diff", "--base", "origin/main"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("run `git fetch origin main`"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("git log"), "{}", out.stderr);
    // Without --base: origin/HEAD names origin/main, which is not there.
    let out = run(clone.path(), &["diff"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`origin/main` was never fetched: run `git fetch origin main`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_shallow_clone_without_the_base_suggests_unshallowing_it() {
    let origin = repo_from("testdata/fleet");
    std::fs::write(origin.path().join("NOTES.md"), "second\n").unwrap();
    commit_all(origin.path(), "second");
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    git(clone.path(), &["clone", "-q", "--depth", "1", &url, "."]);
    let out = run(clone.path(), &["diff", "--base", "HEAD~1"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("run `git fetch --unshallow`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_name_that_is_no_revision_points_at_the_names_there_are() {
    let repo = repo_from("testdata/fleet");
    let out = run(repo.path(), &["diff", "--base", "no-such-branch"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "`no-such-branch` is not a commit, branch or tag of the repository at `.`: check \
             its name with `git branch -a`"
        ),
        "{}",
        out.stderr
    );
}
