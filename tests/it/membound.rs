//! Issue 42: fluxsim's own memory is bounded whatever the repository holds. Each bomb runs
//! through the binary under `ulimit -v` (1 GB of address space) and must end with fluxsim's
//! error naming the file and the bound, not with the allocator's abort.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{commit_all, git};

/// A repository whose Kustomization `bomb` builds `apps/bomb` (a kustomization listing
/// `cm.yaml`, so the native kustomize reader reads it) holding `manifest`.
fn bomb_repo(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = [
        (
            "clusters/test/flux-system.yaml",
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  ref: {branch: main}\n  url: ssh://git@example.internal/fleet.git\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/test\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: bomb\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/bomb\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
        ),
        (
            "apps/bomb/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- cm.yaml\n",
        ),
        ("apps/bomb/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n"),
    ];
    for (path, text) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    git(root, &["init", "-q", "-b", "main"]);
    commit_all(root, "base");
    fs::write(root.join("apps/bomb/cm.yaml"), manifest).unwrap();
    commit_all(root, "bomb");
    dir
}

/// The 598-byte manifest of the issue: nine levels of ten aliases (10^9 nodes expanded).
fn billion_laughs() -> String {
    let mut doc = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\nx:\n  a0: &a0 lol\n",
    );
    for i in 1..10 {
        let items = vec![format!("*a{}", i - 1); 10].join(", ");
        let _ = writeln!(doc, "  a{i}: &a{i} [{items}]");
    }
    doc
}

/// A 1 MB string aliased 300 times (300 MB expanded, under go-yaml's ratio).
fn large_string_aliased() -> String {
    let mut doc = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  s: &s {}\nx:\n",
        "x".repeat(1 << 20)
    );
    for _ in 0..300 {
        doc.push_str("- *s\n");
    }
    doc
}

/// Runs the binary in `root` with 1 GB of address space at most.
fn run_bounded(root: &Path, args: &[&str]) -> (i32, String) {
    let cache = tempfile::tempdir().unwrap();
    let mut script = String::from("ulimit -v 1000000; exec \"$0\"");
    for i in 1..=args.len() {
        let _ = write!(script, " \"${{{i}}}\"");
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_fluxsim"))
        .args(args)
        .env("FLUXSIM_CACHE_DIR", cache.path())
        .current_dir(root)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Every command that reads the bomb stops with fluxsim's error (the Kustomization fails,
/// exit 1 as any failed build), naming the file and the bound, within 1 GB.
fn assert_bounded(manifest: &str, bound: &str) {
    let repo = bomb_repo(manifest);
    for args in [
        &["render", ".", "--no-cache", "--format", "json"][..],
        &[
            "render",
            ".",
            "--no-cache",
            "--builder",
            "native",
            "--format",
            "json",
        ][..],
        &["validate", "."][..],
        &["diff", ".", "--base", "HEAD~1"][..],
    ] {
        let (code, text) = run_bounded(repo.path(), args);
        assert!(
            !text.contains("memory allocation") && code != 134,
            "{args:?}: the allocator failed:\n{text}"
        );
        if args[0] == "render" {
            assert_eq!(code, 1, "{args:?}:\n{text}");
            assert!(
                text.contains("reading apps/bomb/cm.yaml: ") && text.contains(bound),
                "{args:?}: no error naming the file and the bound:\n{text}"
            );
        } else {
            assert!(code == 1 || code == 0, "{args:?}: exit {code}:\n{text}");
            assert!(text.contains("bomb"), "{args:?}:\n{text}");
        }
    }
}

// go-yaml v3 decode.go `allowedAliasRatio` (crates/goyaml/src/alias.rs).
#[test]
fn a_yaml_billion_laughs_ends_with_fluxsim_s_error_in_bounded_memory() {
    let doc = billion_laughs();
    assert!(doc.len() < 700, "{}", doc.len());
    assert_bounded(&doc, "excessive aliasing");
}

// fluxsim's own bound on the bytes aliases copy (goyaml::alias::MAX_ALIASED_BYTES).
#[test]
fn a_large_string_aliased_300_times_ends_with_fluxsim_s_error_in_bounded_memory() {
    assert_bounded(&large_string_aliased(), "bound of 32 MiB");
}

/// The ResourceSet bomb of the issue: 100 inputs of 100 KB each in the ResourceSet, times
/// 100 sample pull requests of fluxsim.toml for its GitHubPullRequest provider, permuted:
/// 10,000 combinations (under the operator's count cap) of 1 GB, which fluxsim combines
/// itself. The entry fails with fluxsim's bound, naming the ResourceSet's file and
/// fluxsim.toml, within 1 GB; the rest renders.
// fluxsim's own bound (resourceset::inputs::MAX_COMBINED_BYTES); internal/inputs/permuter.go
// caps only the count.
#[test]
fn a_resourceset_combination_bomb_ends_with_fluxsim_s_error_in_bounded_memory() {
    let repo = bomb_repo("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n");
    let root = repo.path();
    let blob = "x".repeat(100 << 10);
    let mut rset = String::from(
        "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata:\n  \
         name: prs\n  namespace: flux-system\nspec:\n  type: GitHubPullRequest\n  url: \
         https://github.com/example/app\n---\napiVersion: fluxcd.controlplane.io/v1\nkind: \
         ResourceSet\nmetadata:\n  name: bomb\n  namespace: flux-system\nspec:\n  \
         inputStrategy:\n    name: Permute\n  inputsFrom:\n  - kind: ResourceSetInputProvider\n    \
         name: prs\n  resources:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      \
         name: x-<< inputs.id >>\n      namespace: flux-system\n  inputs:\n",
    );
    for i in 0..100 {
        let _ = writeln!(rset, "  - i: \"{i}\"\n    blob: {blob}");
    }
    fs::write(root.join("apps/bomb/rset.yaml"), rset).unwrap();
    fs::write(
        root.join("apps/bomb/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- cm.yaml\n- rset.yaml\n",
    )
    .unwrap();
    let mut toml =
        String::from("[[resourceset.inputs]]\nprovider = \"flux-system/prs\"\ninputs = [\n");
    for i in 0..100 {
        let _ = writeln!(
            toml,
            "  {{ id = \"{i}\", sha = \"{i:07}\", branch = \"b{i}\" }},"
        );
    }
    toml.push_str("]\n");
    fs::write(root.join("fluxsim.toml"), toml).unwrap();
    commit_all(root, "resourceset bomb");
    let (code, text) = run_bounded(root, &["render", ".", "--no-cache", "--format", "json"]);
    assert!(
        !text.contains("memory allocation") && code != 134,
        "the allocator failed:\n{text}"
    );
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("ResourceSet flux-system/bomb (apps/bomb/rset.yaml")
            && text.contains("more than fluxsim's bound of 64 MiB a ResourceSet")
            && text.contains("fluxsim.toml"),
        "no error naming the files and the bound:\n{}",
        &text[..text.len().min(4000)]
    );
}
