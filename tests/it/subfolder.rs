//! Running from a folder inside a git work tree: without a repository argument, the
//! repository is the top of the work tree, as for git (Flux reads every spec.path from its
//! source's root), and a note says so; a folder given explicitly is read alone, and when its
//! render fails a note names the top to give instead.

use crate::common::{fluxsim_in, repo_from};

#[test]
fn without_a_repository_a_subfolder_reads_the_top_of_the_work_tree_and_says_so() {
    let repo = repo_from("testdata/fleet");
    let top = fluxsim_in(Some(repo.path()), &["render", "--format", "json"]);
    assert_eq!(top.code, 0, "{}", top.stderr);
    let sub = repo.path().join("apps/wave-1");
    let from_sub = fluxsim_in(Some(&sub), &["render", "--format", "json"]);
    assert_eq!(from_sub.code, 0, "{}", from_sub.stderr);
    assert_eq!(from_sub.json()["clusters"], top.json()["clusters"]);
    let top_path = repo.path().canonicalize().unwrap();
    assert!(
        from_sub.stderr.contains(&format!(
            "the repository is the top of the git work tree, `{}`",
            top_path.display()
        )),
        "{}",
        from_sub.stderr
    );
    assert!(
        from_sub.stderr.contains("`apps/wave-1/`"),
        "{}",
        from_sub.stderr
    );
    // At the top, nothing to say.
    assert!(!top.stderr.contains("note:"), "{}", top.stderr);
}

#[test]
fn a_subfolder_given_explicitly_is_read_alone_and_its_failures_name_the_top() {
    let repo = repo_from("testdata/fleet");
    let sub = repo.path().join("clusters");
    // `clusters/dev` holds a root Kustomization whose spec.path is relative to the top.
    let out = fluxsim_in(Some(&sub), &["render", "."]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let top_path = repo.path().canonicalize().unwrap();
    assert!(
        out.stderr.contains(&format!(
            "`.` is the folder `clusters/` of a git work tree; if spec.paths start from its \
             top, give the top: `{}`",
            top_path.display()
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn path_is_the_repository_argument_as_flux_names_it() {
    let repo = repo_from("testdata/fleet");
    let dir = repo.path().to_str().unwrap();
    let positional = fluxsim_in(None, &["render", dir, "--format", "json"]);
    let path = fluxsim_in(None, &["render", "--path", dir, "--format", "json"]);
    assert_eq!(positional.code, 0, "{}", positional.stderr);
    assert_eq!(path.stdout, positional.stdout);
    let both = fluxsim_in(None, &["render", dir, "--path", dir]);
    assert_eq!(both.code, 2, "one or the other: {}", both.stderr);
}

// A repository in a folder of a bigger git work tree (a monorepo's `deploy/fleet`), given
// explicitly: its revisions are read in place too (git reads `--stdin-paths` from the top
// of the work tree, so fluxsim hands it absolute paths).
#[test]
fn a_diff_of_a_folder_below_the_top_of_the_work_tree_reads_its_revisions() {
    let top = tempfile::tempdir().unwrap();
    crate::common::copy_dir(
        &crate::common::crate_path("testdata/fleet"),
        &top.path().join("deploy/fleet"),
    );
    crate::common::git(top.path(), &["init", "-q", "-b", "main"]);
    crate::common::commit_all(top.path(), "fleet");
    let file = top
        .path()
        .join("deploy/fleet/apps/wave-1/orders/deployment.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("ORDERS_REPLICAS:=2", "ORDERS_REPLICAS:=3"),
    )
    .unwrap();
    for (cwd, repo) in [
        (top.path().to_path_buf(), "deploy/fleet"),
        (top.path().join("deploy/fleet"), "."),
    ] {
        let out = fluxsim_in(
            Some(&cwd),
            &["diff", repo, "--base", "HEAD", "--diff-style", "fields"],
        );
        assert_eq!(out.code, 0, "{repo}: {}", out.stderr);
        // `fields` is the old name of `semantic`: the path, then the values before and after.
        assert!(
            out.stdout.contains("  spec.replicas\n-   2\n+   3\n"),
            "{repo}: {}",
            out.stdout
        );
    }
}
