//! `--kustomize` (or PATH) may hold any kustomize or kubectl; fluxsim reproduces one version
//! and says so when the binary is another (`src/kustomize/binary.rs` `version_warning`).

// The shared harness serves several test crates; this one uses only its git helper.
/// A `kustomize` on PATH that reports `version` and hands every build to the real one.
#[cfg(unix)]
fn fake_kustomize(dir: &std::path::Path, version: &str) {
    use std::os::unix::fs::PermissionsExt;
    let real = std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("kustomize"))
                .find(|p| p.is_file())
        })
        .map_or_else(|| "false".to_string(), |p| p.display().to_string());
    let script = dir.join("kustomize");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nif [ \"$1\" = version ]; then echo '{version}'; exit 0; fi\nexec '{real}' \"$@\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `fluxsim ARGS` with `bin` first on PATH.
#[cfg(unix)]
fn fluxsim_with_path(bin: &std::path::Path, args: &[&str]) -> (i32, String) {
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(args)
        .env("PATH", path)
        .env("FLUXSIM_CACHE_DIR", cache.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// fluxsim reproduces kustomize v5.8.1 (kustomize-controller v1.9.x): any other kustomize is
// warned about once on stderr, however many renders the command makes.
#[cfg(unix)]
#[test]
fn a_kustomize_of_another_version_is_warned_about_once() {
    let bin = tempfile::tempdir().unwrap();
    fake_kustomize(bin.path(), "v5.5.0");
    // A diff renders twice (base and head), making a builder each time.
    let repo = crate::common::repo_from("testdata/fleet");
    let repo_path = repo.path().to_str().unwrap();
    let (_, stderr) = fluxsim_with_path(bin.path(), &["diff", repo_path, "--base", "HEAD"]);
    let warning = "is not kustomize v5.8.1, the version Flux's kustomize-controller builds with";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.contains("(kustomize v5.5.0)"), "{stderr}");
    // The version fluxsim reproduces: no warning.
    fake_kustomize(bin.path(), "v5.8.1");
    let (_, stderr) = fluxsim_with_path(bin.path(), &["diff", repo_path, "--base", "HEAD"]);
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// Runs `fluxsim ARGS` with a PATH that holds git and nothing else: no kustomize, no kubectl.
#[cfg(unix)]
fn fluxsim_with_git_only(args: &[&str]) -> (i32, String, String) {
    let bin = crate::common::path_with_git_only();
    let cache = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(args)
        .env("PATH", bin.path())
        .env("FLUXSIM_CACHE_DIR", cache.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// Issue 16: with `--builder auto`, kustomize is looked for when a build is handed to it, not
// before the first build. The example fleet builds natively throughout.
#[cfg(unix)]
#[test]
fn auto_renders_without_kustomize_when_nothing_is_delegated() {
    let args = ["render", "testdata/fleet", "--format", "json"];
    let (code, stdout, stderr) = fluxsim_with_git_only(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("no kustomize found"), "{stderr}");
    // The same render with the binary at hand: the same JSON but for the builder's line.
    let with = crate::common::fluxsim(&args);
    let without_builder = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v.as_object_mut().unwrap().remove("builder");
        v
    };
    let (without, with) = (without_builder(&stdout), without_builder(&with.stdout));
    assert!(with["clusters"].as_array().is_some_and(|c| c.len() == 2));
    assert_eq!(without, with);
}

// A delegated build with no kustomize on the machine fails alone, with the reason; the other
// Kustomizations render.
#[cfg(unix)]
#[test]
fn a_delegated_build_without_kustomize_fails_alone_and_says_why() {
    let repo = crate::common::repo_from("testdata/fleet");
    let apps = repo.path().join("apps/wave-1/kustomization.yaml");
    let mut k = std::fs::read_to_string(&apps).unwrap();
    k.push_str("buildMetadata: [managedByLabel]\n");
    std::fs::write(&apps, k).unwrap();
    crate::common::commit_all(repo.path(), "a build the native builder hands over");
    let root = repo.path().to_str().unwrap();
    let (code, stdout, stderr) =
        fluxsim_with_git_only(&["render", root, "--format", "json", "--no-cache"]);
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", &stdout[..stdout.len().min(300)]));
    let ks: Vec<&serde_json::Value> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .collect();
    let failed: Vec<_> = ks.iter().filter(|k| k["status"] == "failed").collect();
    assert!(!failed.is_empty());
    for k in &failed {
        let error = k["error"].as_str().unwrap_or_default();
        assert!(error.contains("no kustomize found"), "{k}");
    }
    assert!(
        ks.iter().any(|k| k["status"] == "rendered"),
        "nothing else rendered"
    );
}
