//! The integration tests' harness: run the real binary, build throw-away git repositories
//! from fixtures, and read what a render wrote.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// A directory of the crate (`testdata/fleet`, `testdata/bad/<case>`).
pub(crate) fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// What one run of the binary gave.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Output {
    /// Parses stdout as JSON, with the whole output in the panic message when it is not.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Runs `fluxsim ARGS` in `cwd` (the crate root when `None`).
pub(crate) fn fluxsim_in(cwd: Option<&Path>, args: &[&str]) -> Output {
    // A build cache of its own, so runs neither share builds with each other nor with the
    // user's cache (tests count the builds a run makes).
    let cache = tempfile::Builder::new()
        .prefix("fluxsim-test-cache-")
        .tempdir()
        .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxsim"));
    cmd.args(args)
        .env("FLUXSIM_CACHE_DIR", cache.path())
        // Tests are hermetic: `diff` and `prove` fetch what the base names by default, and
        // fixtures name real chart hosts. A test of the network passes `--network` (which
        // wins over the variable) or runs fluxsim itself (tests/it/fetch.rs).
        .env("FLUXSIM_NETWORK", "none")
        .current_dir(cwd.unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR"))))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    let out = cmd.output().expect("the fluxsim binary runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `fluxsim ARGS` in the crate root.
pub(crate) fn fluxsim(args: &[&str]) -> Output {
    fluxsim_in(None, args)
}

/// Runs git in `dir` with a throw-away identity; panics with git's stderr on failure.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "user.name=fluxsim tests",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copies the regular files and folders under `src` into `dst`.
pub(crate) fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let to = dst.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &to);
        } else if kind.is_file() {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// Commits everything in the work tree at `dir`.
pub(crate) fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

/// A new git repository holding a copy of `src` (a crate directory), committed.
pub(crate) fn repo_from(src: &str) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("fluxsim-test-repo-")
        .tempdir()
        .unwrap();
    copy_dir(&crate_path(src), tmp.path());
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    commit_all(tmp.path(), "fixture");
    tmp
}

/// A committed copy of `testdata/bad/<case>`.
pub(crate) fn bad_fixture(case: &str) -> tempfile::TempDir {
    repo_from(&format!("testdata/bad/{case}"))
}

/// Every file under `root` (relative path to contents), skipping `.git`.
pub(crate) fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy();
                out.insert(rel.into_owned(), fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// SHA-256 in lower-case hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `(cluster, namespace/name)` of every Kustomization in a render's JSON, with its entry.
pub(crate) fn kustomizations(json: &Value) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for c in json["clusters"].as_array().expect("clusters is a list") {
        let cluster = c["name"].as_str().unwrap().to_string();
        for k in c["kustomizations"]
            .as_array()
            .expect("kustomizations is a list")
        {
            let id = format!(
                "{}/{}",
                k["namespace"].as_str().unwrap(),
                k["name"].as_str().unwrap()
            );
            out.insert((cluster.clone(), id), k.clone());
        }
    }
    out
}

/// The one Kustomization `name` (any namespace) of `cluster` in a render's JSON.
pub(crate) fn kustomization<'a>(json: &'a Value, cluster: &str, name: &str) -> &'a Value {
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == cluster)
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no Kustomization {name} in cluster {cluster}:\n{json:#}"))
}

/// Every object of a YAML stream, read as Go's `sigs.k8s.io/yaml` would (through fluxsim's
/// own reader, which the postbuild unit tests pin).
pub(crate) fn yaml_objects(text: &str) -> Vec<Value> {
    fluxsim::manifest::split_documents(text)
        .into_iter()
        .map(|doc| {
            let json = fluxsim::goyaml::yaml_json::yaml_to_json(doc)
                .unwrap_or_else(|e| panic!("not YAML ({e}):\n{doc}"));
            serde_json::from_str(&json).unwrap()
        })
        .collect()
}

/// A folder for PATH holding git only.
pub(crate) fn path_with_git_only() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let git_path = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::os::unix::fs::symlink(git_path.trim(), bin.path().join("git")).unwrap();
    bin
}

/// A Kustomization as fluxsim's JSON names it (`{namespace, name}`, with `resourceSet` for
/// a ResourceSet's entry and `helmRelease` for a release's artifact) in the `namespace/name`
/// form its text uses; "" when it is none.
pub(crate) fn ks(v: &Value) -> String {
    let (Some(ns), Some(name)) = (v["namespace"].as_str(), v["name"].as_str()) else {
        return String::new();
    };
    let mut id = format!("{ns}/{name}");
    for (field, word) in [("resourceSet", "rset"), ("helmRelease", "helm")] {
        if let (Some(ens), Some(ename)) =
            (v[field]["namespace"].as_str(), v[field]["name"].as_str())
        {
            id = format!("{id}/{word}/{ens}/{ename}");
        }
    }
    id
}

/// `name` on this process's PATH, as a shell would find it.
pub(crate) fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// fluxsim's subcommands as its clap definition declares them (clap's own `help` is added
/// later, when the command is built, and is not among them).
pub(crate) fn subcommands() -> Vec<clap::Command> {
    <fluxsim::cli::Cli as clap::CommandFactory>::command()
        .get_subcommands()
        .cloned()
        .collect()
}

/// Whether subcommand `c` has the argument `id` (clap's id: the field's name).
pub(crate) fn has_arg(c: &clap::Command, id: &str) -> bool {
    c.get_arguments().any(|a| a.get_id() == id)
}
