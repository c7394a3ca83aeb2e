//! `--kustomize` (or PATH) may hold any kustomize or kubectl; fluxsim reproduces one version
//! and says so when the binary is another (`src/build/mod.rs` `version_warning`).

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
