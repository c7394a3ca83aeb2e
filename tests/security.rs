//! A pull request cannot make fluxsim read outside its repository: every reader, native and
//! delegated to the kustomize binary, is confined to the source root as kustomize-controller's
//! secure file system is (fluxcd/pkg `kustomize/filesys/fs_secure.go`).

use std::fs;
use std::path::Path;
use std::process::Command;

// The shared harness serves several test crates; this one uses part of it.
#[allow(dead_code)]
mod common;

use common::{commit_all, kustomization, read_tree, repo_from};

/// A value put in the environment of fluxsim: were `/proc/self/environ` read, it would show.
const ENV_MARKER: &str = "fluxsim-env-marker-7f3a1c";
/// Content beside the repository: were `../outside.yaml` read, it would show.
const OUTSIDE_MARKER: &str = "outside-marker-91bd2e";
/// Content of the repository's own `.git/config`.
const GIT_MARKER: &str = "git-config-marker-5c0d44";

/// The read-outside fixture in a repository of its own, inside a folder that also holds a
/// manifest beside it; the `.git/config` path is made absolute.
fn hostile_repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let repo = repo_from("testdata/hostile/read-outside");
    let root = top.path().join("repo");
    common::copy_dir(repo.path(), &root);
    common::git(&root, &["init", "-q", "-b", "main"]);
    common::git(&root, &["config", "http.extraheader", GIT_MARKER]);
    let git_config = fs::canonicalize(root.join(".git/config")).unwrap();
    let k = root.join("apps/gitconfig/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap();
    fs::write(
        &k,
        text.replace("GIT_CONFIG_PATH", &git_config.to_string_lossy()),
    )
    .unwrap();
    // `../../../outside.yaml` from apps/parent: beside the repository's folder.
    fs::write(
        top.path().join("outside.yaml"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\ndata:\n  v: {OUTSIDE_MARKER}\n"
        ),
    )
    .unwrap();
    commit_all(&root, "hostile");
    (top, root)
}

fn run(root: &Path, cache: &Path, out: &Path, builder: &str) -> common::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args([
            "render",
            ".",
            "--format",
            "json",
            "--builder",
            builder,
            "--out",
        ])
        .arg(out)
        .env("FLUXSIM_CACHE_DIR", cache)
        .env("FLUXSIM_TEST_SECRET", ENV_MARKER)
        .current_dir(root)
        .output()
        .unwrap();
    common::Output {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn assert_nothing_leaked(what: &str, text: &str) {
    for marker in [ENV_MARKER, OUTSIDE_MARKER, GIT_MARKER, "root:x:0:0"] {
        assert!(!text.contains(marker), "{what} holds {marker}:\n{text}");
    }
}

fn paths_outside_the_root_fail_as_flux_fails_them(builder: &str) {
    let (top, root) = hostile_repo();
    let cache = top.path().join("cache");
    let out = top.path().join("out");
    let o = run(&root, &cache, &out, builder);
    assert_eq!(
        o.code, 1,
        "a failed Kustomization is a finding:\n{}",
        o.stderr
    );
    let json = o.json();
    for (name, file) in [
        ("passwd", "apps/passwd/kustomization.yaml"),
        ("environ", "apps/environ/kustomization.yaml"),
        ("parent", "apps/parent/kustomization.yaml"),
        ("gitconfig", "apps/gitconfig/kustomization.yaml"),
    ] {
        let k = kustomization(&json, "test", name);
        assert_eq!(k["status"], "failed", "{builder} {name}: {k:#}");
        let err = k["error"].as_str().unwrap();
        assert!(
            err.contains("fs-security-constraint") && err.contains("is not in or below"),
            "{builder} {name}: Flux's secure file system error, got {err}"
        );
        assert!(err.contains(file), "{builder} {name}: names {file}: {err}");
    }
    assert_eq!(
        kustomization(&json, "test", "healthy")["status"],
        "rendered"
    );
    assert_nothing_leaked("stdout", &o.stdout);
    assert_nothing_leaked("stderr", &o.stderr);
    for (dir, what) in [(&out, "--out"), (&cache, "the cache")] {
        for (path, bytes) in read_tree(dir) {
            assert_nothing_leaked(&format!("{what} {path}"), &String::from_utf8_lossy(&bytes));
        }
    }
}

#[test]
fn native_builder_refuses_every_path_outside_the_source_root() {
    paths_outside_the_root_fail_as_flux_fails_them("native");
}

#[test]
fn kustomize_binary_is_never_handed_a_path_outside_the_source_root() {
    paths_outside_the_root_fail_as_flux_fails_them("kustomize");
}

#[test]
fn default_builder_refuses_every_path_outside_the_source_root() {
    paths_outside_the_root_fail_as_flux_fails_them("auto");
}
