//! A pull request's repository cannot make fluxsim run a program it names, nor remove a file
//! fluxsim did not write, and what a command line gets wrong is a clear error (issue 24:
//! "safe on untrusted pull requests").

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{bad_fixture, fluxsim, git};

/// A script that appends its arguments to `ran` (beside it) when run: what a program named
/// by a repository's configuration would leave.
fn tripwire(top: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let script = top.join(name);
    let ran = top.join("ran");
    fs::write(
        &script,
        format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\n", ran.display()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

// git's `core.fsmonitor` (a program run as the index is read: by `ls-files`, `rev-parse`),
// `core.hooksPath` (hooks), `diff.external` and `core.pager` come from the repository's own
// `.git/config` too: fluxsim's command line sets each over it (src/source/git.rs).
#[test]
fn git_runs_no_program_the_repositorys_own_config_names() {
    let top = tempfile::tempdir().unwrap();
    let repo = bad_fixture("missing-path");
    let hooks = top.path().join("hooks");
    fs::create_dir(&hooks).unwrap();
    for hook in [
        "post-index-change",
        "reference-transaction",
        "post-checkout",
    ] {
        fs::rename(tripwire(top.path(), hook), hooks.join(hook)).unwrap();
    }
    let monitor = tripwire(top.path(), "fsmonitor");
    let external = tripwire(top.path(), "external-diff");
    let pager = tripwire(top.path(), "pager");
    for (key, value) in [
        ("core.fsmonitor", &monitor),
        ("core.hooksPath", &hooks),
        ("diff.external", &external),
        ("core.pager", &pager),
    ] {
        git(repo.path(), &["config", key, value.to_str().unwrap()]);
    }
    // A change, so that the diff reads the work tree and a revision.
    let apps = repo.path().join("apps/healthy/configmap.yaml");
    fs::write(
        &apps,
        fs::read_to_string(&apps).unwrap().replace("ok", "changed"),
    )
    .unwrap();
    let root = repo.path().to_str().unwrap();
    for args in [
        vec!["render", root],
        vec!["render", root, "--include-untracked"],
        vec!["diff", root],
        vec!["diff", root, "--base", "HEAD"],
        vec!["audit", root, "--format", "sarif"],
    ] {
        let r = fluxsim(&args);
        assert!(r.code <= 1, "{args:?}: {}", r.stderr);
    }
    let ran = top.path().join("ran");
    assert!(
        !ran.exists(),
        "git ran what the repository's config names:\n{}",
        fs::read_to_string(&ran).unwrap_or_default()
    );
}
