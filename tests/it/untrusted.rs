//! A pull request's repository cannot make fluxsim run a program it names, nor remove a file
//! fluxsim did not write, and what a command line gets wrong is a clear error (issue 24:
//! "safe on untrusted pull requests").

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{bad_fixture, commit_all, fluxsim, fluxsim_in, git};

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

/// Every file under `dir` (relative path to contents).
fn files_of(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    crate::common::read_tree(dir)
}

// `--out` sweeps the staging folders (`.fluxsim-out-<pid>-...`) that killed runs left beside
// its folder, often the repository's own folder in CI. A pull request can commit a folder of
// that name holding a marker, even one that lists its files as fluxsim lists what it wrote:
// a folder git tracks is never fluxsim's, and nothing of it may go.
#[test]
fn out_never_removes_a_folder_the_repository_tracks() {
    let repo = bad_fixture("missing-path");
    let root = repo.path();
    // A real output of fluxsim, marker and all, committed under the names it uses.
    let made = tempfile::tempdir().unwrap();
    let real = made.path().join("out");
    // (`missing-dir` fails: exit 1.)
    let r = fluxsim(&[
        "render",
        root.to_str().unwrap(),
        "--out",
        real.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    for name in [
        ".fluxsim-out-4194305-x",
        ".fluxsim-old-4194305-x",
        "rendered",
    ] {
        crate::common::copy_dir(&real, &root.join(name));
    }
    // And the marker as fluxsim wrote it before it listed digests.
    let old = root.join(".fluxsim-out-4194306-y");
    fs::create_dir_all(old.join("docs")).unwrap();
    fs::write(
        old.join(".fluxsim-output"),
        "fluxsim render --out: fluxsim wrote this folder and replaces it whole; its files:\n\
         docs/notes.md\n",
    )
    .unwrap();
    fs::write(old.join("docs/notes.md"), "tracked notes\n").unwrap();
    commit_all(root, "folders named as fluxsim names its own");
    let before = files_of(root);

    let r = fluxsim_in(Some(root), &["render", ".", "--out", "rendered"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("rendered`: git tracks files in it"),
        "{}",
        r.stderr
    );
    let r = fluxsim_in(Some(root), &["render", ".", "--out", "fresh"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(root.join("fresh/SHA256SUMS").is_file());
    let mut after = files_of(root);
    after.retain(|path, _| !path.starts_with("fresh/"));
    assert_eq!(
        after, before,
        "the repository's files are all there, unchanged"
    );
}

/// Runs `fluxsim render testdata/fleet ARGS`; asserts exit 2 and gives stderr.
fn usage_error(args: &[&str]) -> String {
    let mut all = vec!["render", "testdata/fleet"];
    all.extend_from_slice(args);
    let r = fluxsim(&all);
    assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    r.stderr
}

#[test]
fn a_timeout_of_0_is_refused() {
    let e = usage_error(&["--timeout", "0"]);
    assert!(
        e.contains("'--timeout <TIMEOUT>': a timeout must be at least 1 second"),
        "{e}"
    );
}

#[test]
fn a_kustomize_that_fails_silently_is_an_error_saying_how_it_ended() {
    let e = usage_error(&["--builder", "kustomize", "--kustomize", "/bin/false"]);
    assert!(
        e.contains("`/bin/false version` exited with status 1 and printed nothing"),
        "{e}"
    );
}

#[test]
fn a_cache_dir_fluxsim_cannot_write_in_is_refused_naming_it() {
    let e = usage_error(&["--cache-dir", "/etc/passwd"]);
    assert!(
        e.contains("'--cache-dir <DIR>': `/etc/passwd` is not a folder"),
        "{e}"
    );
    let e = usage_error(&["--cache-dir", "/etc/passwd/cache"]);
    assert!(e.contains("`/etc/passwd/cache` cannot be made"), "{e}");
}

#[test]
fn a_cluster_root_without_its_path_names_cluster_root_and_the_form() {
    let e = usage_error(&["--cluster-root", "foo"]);
    assert!(
        e.contains("invalid value 'foo' for '--cluster-root <NAME=PATH>': expected NAME=PATH"),
        "{e}"
    );
    let e = usage_error(&["--cluster-root", "foo=./nowhere"]);
    assert!(
        e.contains("--cluster-root `foo=./nowhere`: path `./nowhere` does not exist"),
        "{e}"
    );
}
