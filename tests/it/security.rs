//! A pull request cannot make fluxsim read outside its repository: every reader, native and
//! delegated to the kustomize binary, is confined to the source root as kustomize-controller's
//! secure file system is (fluxcd/pkg `kustomize/filesys/fs_secure.go`).

use std::fs;
use std::path::Path;
use std::process::Command;

// The shared harness serves several test crates; this one uses part of it.
use crate::common::{commit_all, kustomization, read_tree, repo_from};

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
    crate::common::copy_dir(repo.path(), &root);
    crate::common::git(&root, &["init", "-q", "-b", "main"]);
    crate::common::git(&root, &["config", "http.extraheader", GIT_MARKER]);
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

fn run(root: &Path, cache: &Path, out: &Path, builder: &str) -> crate::common::Output {
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
    crate::common::Output {
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
        ("openapi", "apps/openapi/kustomization.yaml"),
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

/// A kustomize that answers `version`, and for a build starts a long-lived child of its own
/// and hangs: what a remote base (git) or a `helmCharts` build (helm) looks like when it
/// stalls. Both processes carry `marker` in their command lines (the script in its path, the
/// child as an argument), so that the test finds them in `/proc`: the tool box gives
/// kustomize no variable and no writable file outside the scratch folder to tell their ids.
#[cfg(unix)]
fn hanging_kustomize(dir: &Path, marker: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("kustomize");
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = version ]; then echo v5.8.1; exit 0; fi\n\
             sh -c 'sleep 300; :' {marker}-child &\n\
             wait\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Whether a process is still running (a zombie waiting for its reaper is not).
#[cfg(unix)]
fn running(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The running processes whose command line holds `marker`.
#[cfg(unix)]
fn pids(marker: &str) -> Vec<String> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().into_owned();
            pid.bytes().all(|b| b.is_ascii_digit()).then_some(pid)
        })
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
                && running(pid)
        })
        .collect()
}

/// `render` of the fleet with the hanging kustomize, its temporary folders in `tmp`; the
/// marker its processes carry.
#[cfg(unix)]
fn hanging_render(top: &Path, timeout: &str) -> (Command, String) {
    let repo = repo_from("testdata/fleet");
    let root = top.join("repo");
    crate::common::copy_dir(repo.path(), &root);
    let tmp = top.join("tmp");
    fs::create_dir(&tmp).unwrap();
    // The test's own folder: in the fake kustomize's path and in its child's arguments.
    let marker = top.file_name().unwrap().to_string_lossy().into_owned();
    let bin = hanging_kustomize(top, &marker);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxsim"));
    cmd.args([
        "render",
        ".",
        "--no-cache",
        "--builder",
        "kustomize",
        "-j",
        "2",
    ])
    .args(["--timeout", timeout, "--kustomize"])
    .arg(&bin)
    .env("TMPDIR", &tmp)
    .current_dir(&root);
    (cmd, marker)
}

#[cfg(unix)]
fn assert_all_gone(marker: &str, tmp: &Path) {
    let gone = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        pids(marker).is_empty()
    });
    assert!(
        gone,
        "processes kustomize started survive: {:?}",
        pids(marker)
    );
    let left: Vec<_> = fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "temporary folders left: {left:?}");
}

#[cfg(unix)]
#[test]
fn a_timed_out_kustomize_is_killed_with_what_it_started() {
    let top = tempfile::tempdir().unwrap();
    let (mut cmd, marker) = hanging_render(top.path(), "1");
    let o = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("timed out") || stdout.contains("timeout"),
        "{stdout}"
    );
    assert_all_gone(&marker, &top.path().join("tmp"));
}

#[cfg(unix)]
#[test]
fn a_signal_kills_kustomize_and_removes_every_temporary_folder() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let top = tempfile::tempdir().unwrap();
        let (mut cmd, marker) = hanging_render(top.path(), "120");
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until a build is under way (its kustomize started its child).
        let started = (0..1000).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            !pids(&format!("{marker}-child")).is_empty()
        });
        assert!(started, "no build started");
        let killed = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert_all_gone(&marker, &top.path().join("tmp"));
    }
}

// Substitution is bounded: an object may grow at most 16 MiB beyond its template
// (envsubst::OUTPUT_GROWTH_LIMIT), so a var referenced until the object is huge fails that
// Kustomization, not the machine; a substring whose end wraps past the largest int fails as
// Flux's Go code does (envsubst v1.7.1 funcs.go toSubstr panics), and audit reports both
// (FS113).
#[test]
fn runaway_substitution_fails_its_kustomization_and_audit_reports_it() {
    let repo = repo_from("testdata/hostile/unbounded");
    let dir = repo.path().to_str().unwrap();
    let r = crate::common::fluxsim(&["render", dir, "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let huge = kustomization(&json, "test", "huge");
    assert_eq!(huge["status"], "failed");
    assert!(
        huge["error"].as_str().unwrap().contains("would exceed"),
        "{huge}"
    );
    let negative = kustomization(&json, "test", "negative");
    assert_eq!(negative["status"], "failed");
    assert!(
        negative["error"]
            .as_str()
            .unwrap()
            .contains("slice bounds out of range"),
        "{negative}"
    );
    assert_eq!(
        kustomization(&json, "test", "healthy")["status"],
        "rendered"
    );

    let a = crate::common::fluxsim(&["audit", dir, "--format", "json"]);
    assert_eq!(a.code, 1, "{}", a.stderr);
    let mut found: Vec<(String, String, u64)> = a.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS113")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["location"]["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("error".into(), "apps/huge/configmap.yaml".into(), 7),
            ("error".into(), "apps/negative/configmap.yaml".into(), 7),
        ]
    );
}
