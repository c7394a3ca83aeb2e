//! Compares fluxsim's render of each Flux Kustomization with Flux's own code (the Go
//! program in `oracle/`), object for object and byte for byte.
//!
//! `cargo run --release --example oracle-check -- --oracle BIN [--no-strict] [--verbose]
//! [--source KIND/NAMESPACE/NAME=PATH]... REPO...`
//!
//! For each repository it renders every cluster as `fluxsim render` does, then hands each
//! Kustomization to the oracle with what Flux itself would start from:
//! - the raw tree: the files git tracks (every file when the folder is no git work tree),
//!   before any ignore rule; the oracle applies source-controller's archive filter itself
//!   (the `.sourceignore` files and the cluster's `GitRepository.spec.ignore`). A Kustomization
//!   on a mapped source (`--source`, `fluxsim.toml`) gets the mapped folder's raw files, archived
//!   without a `spec.ignore`; one on an ArtifactGenerator's artifact gets the tree fluxsim made
//!   (source-watcher's module is not served by the Go module proxy: the copy itself is not
//!   judged);
//! - the Kustomization as applied: the object its parent's artifact holds (the root's, as
//!   fluxsim read it);
//! - the cluster's objects: every ConfigMap and Secret the cluster's Kustomizations apply, as
//!   applied, so postBuild.substituteFrom finds what Flux would find (a wrong choice among
//!   sources is caught); a source fluxsim took from elsewhere (a bootstrap object, a file
//!   nothing applies, `fluxsim.toml`) is rebuilt from the vars it gave, and a var fluxsim
//!   could not know offline (a source found nowhere, a SOPS-encrypted value) holds the
//!   placeholder fluxsim substituted, so everything else is still compared.
//!
//! Both sides must agree: the same objects (by group, kind, namespace and name) with the
//! same content and the same printed YAML, or both fail at the same stage
//! (`fluxsim::oracle::judge`). It ends with `N identical, M different, F both fail, S
//! skipped` and the skips by reason, and exits 1 when M > 0 (2 on a usage or oracle error).
//! Skipped: Kustomizations fluxsim does not render (an external source, the network,
//! suspended, blocked by a failed dependency), those the API server refuses (a field its CRD
//! schema rejects) and those failing on fluxsim's own size bound.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use base64::Engine as _;
use fluxsim::model::{ClusterRender, KustomizationRender, ReadFrom, Status};
use fluxsim::oracle::{judge, kustomization_object, Verdict};
use fluxsim::render::{render_dir, RepoOptions};
use serde_json::{json, Value};

struct Args {
    oracle: PathBuf,
    /// `--helm BIN`: the helm oracle (oracle/helm), which HelmReleases are compared with.
    helm: Option<PathBuf>,
    strict: bool,
    verbose: bool,
    sources: Vec<String>,
    repos: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        oracle: PathBuf::new(),
        helm: None,
        strict: true,
        verbose: false,
        sources: Vec::new(),
        repos: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--oracle" => args.oracle = it.next().ok_or("--oracle needs a path")?.into(),
            "--no-strict" => args.strict = false,
            "--helm" => args.helm = Some(it.next().ok_or("--helm needs the helm oracle")?.into()),
            "--verbose" => args.verbose = true,
            "--source" => args
                .sources
                .push(it.next().ok_or("--source needs KIND/NAMESPACE/NAME=PATH")?),
            s if s.starts_with("--") => return Err(format!("unknown flag {s}")),
            s => args.repos.push(s.into()),
        }
    }
    if args.oracle.as_os_str().is_empty() || args.repos.is_empty() {
        return Err(
            "usage: oracle-check --oracle BIN [--no-strict] [--verbose] \
                    [--source KIND/NAMESPACE/NAME=PATH]... REPO..."
                .into(),
        );
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("oracle-check: {e}");
            return ExitCode::from(2);
        }
    };
    let mut tally = Tally::default();
    for repo in &args.repos {
        if let Err(e) = check_repo(repo, &args, &mut tally) {
            eprintln!("oracle-check: {}: {e}", repo.display());
            return ExitCode::from(2);
        }
    }
    let skipped: usize = tally.skipped.values().sum();
    println!(
        "{} identical, {} different, {} both fail, {skipped} skipped",
        tally.identical, tally.different, tally.both_fail
    );
    for (why, n) in &tally.skipped {
        println!("  skipped {n}: {why}");
    }
    if tally.different > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[derive(Default)]
struct Tally {
    identical: usize,
    different: usize,
    both_fail: usize,
    /// By reason.
    skipped: BTreeMap<&'static str, usize>,
}

/// Why a Kustomization is not compared, if it is not.
fn skip_reason(k: &KustomizationRender) -> Option<&'static str> {
    // A ResourceSet's entry is the Flux Operator's, not kustomize-controller's
    // (scripts/resourceset-check compares it with the operator's CLI).
    if fluxsim::model::is_resourceset_entry(k) {
        return Some("a ResourceSet's entry (the Flux Operator's; scripts/resourceset-check)");
    }
    if k.kustomization.invalid.is_some() {
        return Some(
            "refused by the API server (a field its CRD schema rejects): no controller sees it",
        );
    }
    match &k.status {
        Status::Failed(e) if e.contains("fluxsim stops") => {
            Some("fails on fluxsim's own size bound, which Flux does not have")
        }
        Status::Rendered | Status::Failed(_) => None,
        Status::External(_) => Some("not rendered: an external source"),
        Status::NeedsNetwork(_) => Some("not rendered: needs the network"),
        Status::Suspended => Some("not rendered: suspended"),
        Status::Blocked(_) => Some("not rendered: blocked (a dependency failed, or not reached)"),
    }
}

fn check_repo(repo: &Path, args: &Args, tally: &mut Tally) -> Result<(), String> {
    let mut sources = Vec::new();
    for s in &args.sources {
        sources.push(fluxsim::source::mapping::parse_arg(s, repo));
    }
    let opts = RepoOptions {
        strict: args.strict,
        keep_sources: true,
        sources,
        helm: args
            .helm
            .as_ref()
            .map(|_| fluxsim::helm::HelmOptions::default()),
        ..RepoOptions::default()
    };
    let render = render_dir(repo, &opts).map_err(|e| e.to_string())?;
    let raw = copy_raw(repo, opts.include_untracked)?;
    let ignores: BTreeMap<String, Option<String>> =
        fluxsim::render::clusters_of(render.tree.fs(), &opts)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|c| (c.name, c.source_ignore))
            .collect();
    // Trees other than the repository, written once each (the same label may name another
    // tree in another cluster: by the snapshot itself).
    let mut trees: BTreeMap<usize, (tempfile::TempDir, bool)> = BTreeMap::new();
    let mut jobs = Vec::new();
    let mut renders: Vec<(String, &KustomizationRender)> = Vec::new();
    let mut helm_jobs = Vec::new();
    let mut releases: Vec<(String, &KustomizationRender)> = Vec::new();
    let config = fluxsim::config::Config::load(render.tree.fs()).map_err(|e| e.to_string())?;
    for c in &render.clusters {
        let objects = cluster_objects(c);
        for k in &c.kustomizations {
            if fluxsim::model::is_release(k) {
                if args.helm.is_none() {
                    continue;
                }
                match helm_job(c, k, raw.path(), &objects, &config.helm_controller) {
                    Ok(job) => {
                        helm_jobs.push(job);
                        releases.push((job_id(c, k), k));
                    }
                    Err(why) => *tally.skipped.entry(why).or_default() += 1,
                }
                continue;
            }
            if let Some(why) = skip_reason(k) {
                *tally.skipped.entry(why).or_default() += 1;
                continue;
            }
            let id = job_id(c, k);
            let (root, archive) = match &k.source_tree {
                None => (
                    raw.path().to_path_buf(),
                    json!({"ignore": ignores.get(&c.name).cloned().flatten()}),
                ),
                Some(snap) => {
                    let key = std::sync::Arc::as_ptr(snap) as usize;
                    if let std::collections::btree_map::Entry::Vacant(e) = trees.entry(key) {
                        e.insert(match &snap.read_from {
                            Some(ReadFrom::Folder(f)) => (copy_raw_under(raw.path(), f)?, true),
                            Some(ReadFrom::Checkout(p)) => (copy_raw(p, false)?, true),
                            None => (write_snapshot(snap)?, false),
                        });
                    }
                    let (dir, archived) = &trees[&key];
                    let archive = if *archived { json!({}) } else { Value::Null };
                    (dir.path().to_path_buf(), archive)
                }
            };
            let mut job = json!({
                "id": id,
                "root": root,
                "kustomization": applied_object(c, k),
                "objects": objects_for(&objects, k),
                "strict": k.strict,
            });
            if !archive.is_null() {
                job["archive"] = archive;
            }
            jobs.push(job);
            renders.push((id, k));
        }
    }
    let mut results = run_oracle(&args.oracle, &jobs)?;
    let mut judged: Vec<(String, &KustomizationRender, Verdict)> = renders
        .into_iter()
        .zip(results.drain(..))
        .map(|((id, k), r)| {
            let v = judge(k, &r);
            (id, k, v)
        })
        .collect();
    if let Some(helm) = &args.helm {
        let results = run_oracle(helm, &helm_jobs)?;
        for ((id, k), r) in releases.into_iter().zip(results) {
            let v = judge_release(k, &r);
            judged.push((id, k, v));
        }
    }
    tell(repo, judged, args.verbose, tally);
    Ok(())
}

fn job_id(c: &ClusterRender, k: &KustomizationRender) -> String {
    format!(
        "{}: {}/{}",
        c.name, k.kustomization.id.namespace, k.kustomization.id.name
    )
}

/// The helm oracle's job for a release of `--helm`: the HelmRelease as its Kustomization
/// applies it, the chart folder of the raw tree (a chart from a GitRepository: what
/// source-controller packages, the chart's own `.helmignore` applied by helm's loader), the
/// cluster's objects (valuesFrom) and what `fluxsim.toml` tells Helm of the cluster; or why
/// the release is not compared.
fn helm_job(
    c: &ClusterRender,
    k: &KustomizationRender,
    raw: &Path,
    objects: &BTreeMap<(String, String, String), Value>,
    config: &fluxsim::config::HelmConfig,
) -> Result<Value, &'static str> {
    match &k.status {
        Status::Rendered | Status::Failed(_) => {}
        Status::External(_) => {
            return Err("release not rendered: its chart is not in the repository")
        }
        _ => return Err("release not rendered"),
    }
    // `<kustomization>/helm/<namespace>/<name>`.
    let parts: Vec<&str> = k.kustomization.id.name.rsplitn(4, '/').collect();
    let [name, namespace, "helm", _] = parts[..] else {
        return Err("release entry without a HelmRelease name");
    };
    let parent = c
        .kustomizations
        .iter()
        .find(|x| Some(&x.kustomization.id) == k.parent.as_ref())
        .ok_or("release without its Kustomization")?;
    let hr = parent
        .artifact
        .as_ref()
        .and_then(|a| {
            a.objects.iter().find(|o| {
                o.object["kind"] == "HelmRelease"
                    && o.object["metadata"]["name"] == name
                    && o.object["metadata"]["namespace"] == namespace
            })
        })
        .ok_or("release whose HelmRelease is not in its Kustomization's artifact")?;
    let hr = (*hr.object).clone();
    let spec = &hr["spec"]["chart"]["spec"];
    if hr["spec"].get("chartRef").is_some() || spec["sourceRef"]["kind"] != "GitRepository" {
        return Err("release whose chart is not in a GitRepository (not a local chart)");
    }
    if spec.get("valuesFiles").is_some_and(|v| !v.is_null()) {
        return Err("release with spec.chart.spec.valuesFiles (source-controller's chart build is not in the helm oracle)");
    }
    let path = spec["chart"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("./");
    let chart = raw.join(path);
    if path.is_empty() || path.contains("..") || !chart.join("Chart.yaml").is_file() {
        return Err("release whose chart folder is not in the raw tree");
    }
    let ns = namespace.to_string();
    let objects: Vec<Value> = objects
        .iter()
        .filter(|((_, n, _), _)| *n == ns)
        .map(|(_, v)| v.clone())
        .collect();
    Ok(json!({
        "id": job_id(c, k),
        "helmRelease": hr,
        "chart": chart,
        "objects": objects,
        "kubeVersion": config.kube_version.clone().unwrap_or_default(),
        "apiVersions": config.api_versions,
    }))
}

/// A release against the helm oracle's: the same objects (by group, kind, namespace and
/// name) with the same content, or both failing. The print is not compared: fluxsim prints
/// a release as kustomize prints a build, helm-controller applies helm's manifest text.
fn judge_release(k: &KustomizationRender, result: &Value) -> Verdict {
    use fluxsim::flux::ObjectId;
    let ok = result["ok"].as_bool().unwrap_or(false);
    match (&k.status, &k.artifact, ok) {
        (Status::Failed(_), _, false) => Verdict::BothFail,
        (Status::Failed(e), _, true) => {
            Verdict::Different(format!("  fluxsim fails, Flux installs: {e}"))
        }
        (_, _, false) => Verdict::Different(format!(
            "  fluxsim renders, Flux fails: {}",
            result["error"].as_str().unwrap_or_default()
        )),
        (Status::Rendered, Some(artifact), true) => {
            let mut theirs: BTreeMap<ObjectId, Value> = result["objects"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| (ObjectId::of(o), o.clone()))
                .collect();
            let mut why = Vec::new();
            for o in &artifact.objects {
                match theirs.remove(&o.id) {
                    None => why.push(format!("  only fluxsim has {:?}", o.id)),
                    Some(t) if t != *o.object => {
                        let pretty =
                            |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
                        why.push(format!(
                            "  {:?} differs:\n{}",
                            o.id,
                            similar::TextDiff::from_lines(pretty(&o.object), pretty(&t))
                                .unified_diff()
                                .header("fluxsim", "flux")
                        ));
                    }
                    Some(_) => {}
                }
            }
            for id in theirs.keys() {
                why.push(format!("  only Flux has {id:?}"));
            }
            if why.is_empty() {
                Verdict::Identical
            } else {
                Verdict::Different(why.join("\n"))
            }
        }
        (status, _, _) => Verdict::Different(format!("  unexpected fluxsim state {status:?}")),
    }
}

/// Counts and prints the verdicts of one repository.
fn tell(
    repo: &Path,
    judged: Vec<(String, &KustomizationRender, Verdict)>,
    verbose: bool,
    tally: &mut Tally,
) {
    for (id, _, verdict) in judged {
        match &verdict {
            Verdict::Identical => tally.identical += 1,
            Verdict::BothFail => tally.both_fail += 1,
            Verdict::Different(why) => {
                tally.different += 1;
                println!("DIFFERENT {}: {id}\n{why}", repo.display());
            }
        }
        if verbose && !matches!(verdict, Verdict::Different(_)) {
            let word = if matches!(verdict, Verdict::Identical) {
                "identical"
            } else {
                "both fail"
            };
            println!("{word} {}: {id}", repo.display());
        }
    }
}

/// The files of `dir` as a clone holds them: those git tracks (with `untracked`, also the
/// untracked ones git does not ignore), or every file when `dir` is no git work tree; only
/// regular files (source-controller archives nothing else). Paths relative to `dir`.
fn raw_files(dir: &Path, untracked: bool) -> Result<Vec<PathBuf>, String> {
    let inside = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--is-inside-work-tree"])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"true"));
    let mut out = Vec::new();
    if inside {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(dir).args(["ls-files", "-z", "--cached"]);
        if untracked {
            cmd.args(["--others", "--exclude-standard"]);
        }
        let o = cmd.output().map_err(|e| format!("git ls-files: {e}"))?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        for p in o.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            out.push(PathBuf::from(String::from_utf8_lossy(p).into_owned()));
        }
    } else {
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let entries = std::fs::read_dir(dir.join(&rel))
                .map_err(|e| format!("{}: {e}", dir.join(&rel).display()))?;
            for e in entries.flatten() {
                if e.file_name() == ".git" {
                    continue;
                }
                let p = rel.join(e.file_name());
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(p),
                    Ok(t) if t.is_file() => out.push(p),
                    _ => {}
                }
            }
        }
    }
    out.retain(|p| std::fs::symlink_metadata(dir.join(p)).is_ok_and(|m| m.file_type().is_file()));
    out.sort();
    Ok(out)
}

fn tempdir() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("fluxsim-oracle-source-")
        .tempdir()
        .map_err(|e| e.to_string())
}

fn write_file(to: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(to, bytes).map_err(|e| format!("{}: {e}", to.display()))
}

/// A temporary copy of `dir`'s raw files ([`raw_files`]).
fn copy_raw(dir: &Path, untracked: bool) -> Result<tempfile::TempDir, String> {
    let out = tempdir()?;
    for f in raw_files(dir, untracked)? {
        let bytes = std::fs::read(dir.join(&f)).map_err(|e| format!("{}: {e}", f.display()))?;
        write_file(&out.path().join(&f), &bytes)?;
    }
    Ok(out)
}

/// A temporary copy of the raw files under `folder` of the raw copy `raw`.
fn copy_raw_under(raw: &Path, folder: &str) -> Result<tempfile::TempDir, String> {
    let out = tempdir()?;
    let from = raw.join(folder);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(from.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = rel.join(e.file_name());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::create_dir_all(out.path().join(&p)).map_err(|e| e.to_string())?;
                stack.push(p);
            } else {
                let bytes = std::fs::read(from.join(&p)).map_err(|e| e.to_string())?;
                write_file(&out.path().join(&p), &bytes)?;
            }
        }
    }
    Ok(out)
}

/// A tree fluxsim made (an ArtifactGenerator's artifact), as it is.
fn write_snapshot(snap: &fluxsim::model::SourceSnapshot) -> Result<tempfile::TempDir, String> {
    let out = tempdir()?;
    for d in &snap.dirs {
        std::fs::create_dir_all(out.path().join(d)).map_err(|e| e.to_string())?;
    }
    for (f, bytes) in &snap.files {
        write_file(&out.path().join(f), bytes)?;
    }
    Ok(out)
}

fn is_kind(o: &Value, kind: &str) -> bool {
    o["kind"] == kind && o["apiVersion"] == "v1"
}

fn object_key(o: &Value) -> (String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        s(&o["kind"]),
        s(&o["metadata"]["namespace"]),
        s(&o["metadata"]["name"]),
    )
}

/// The ConfigMaps and Secrets the cluster's Kustomizations apply, as applied (by kind,
/// namespace and name; the first Kustomization to apply one, in the render's order, holds
/// it). A SOPS-encrypted Secret is given its ciphertext as values (fluxsim has no keys; a var
/// it gives is a placeholder, see [`objects_for`]); a Secret whose data is not base64, which
/// the API server refuses, is left out.
fn cluster_objects(c: &ClusterRender) -> BTreeMap<(String, String, String), Value> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = BTreeMap::new();
    for k in &c.kustomizations {
        let Some(artifact) = &k.artifact else {
            continue;
        };
        for o in &artifact.objects {
            let v = &*o.object;
            if !(is_kind(v, "ConfigMap") || is_kind(v, "Secret")) {
                continue;
            }
            let mut v = v.clone();
            if v.get("sops").is_some() {
                v.as_object_mut().unwrap().remove("sops");
                if let Some(m) = v.get_mut("data").and_then(Value::as_object_mut) {
                    for x in m.values_mut() {
                        *x = Value::from(b64.encode(x.as_str().unwrap_or_default()));
                    }
                }
            }
            let valid = stored_as_is(&v);
            if valid {
                out.entry(object_key(&v)).or_insert(v);
            }
        }
    }
    out
}

/// Whether the API server would store this ConfigMap or Secret: `data`, `binaryData` and
/// `stringData` maps of strings, a Secret's `data` and a ConfigMap's `binaryData` base64
/// (Go's decoder, for a `[]byte` in JSON, skips line breaks). One it refuses is on no
/// cluster, and would fail the oracle's every read.
fn stored_as_is(v: &Value) -> bool {
    let b64 = base64::engine::general_purpose::STANDARD;
    let base64 = |s: &str| b64.decode(s.replace(['\n', '\r'], "")).is_ok();
    let secret = is_kind(v, "Secret");
    let field_ok = |field: &str, encoded: bool| match v.get(field) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m
            .values()
            .all(|x| x.as_str().is_some_and(|s| !encoded || base64(s))),
        Some(_) => false,
    };
    v["metadata"]["name"].is_string()
        && field_ok("data", secret)
        && field_ok("stringData", false)
        && field_ok("binaryData", true)
}

/// The cluster's objects as `k`'s job gives them: a var source fluxsim took from outside the
/// cluster's objects (bootstrap, a file nothing applies, `fluxsim.toml`) rebuilt from the vars
/// it gave, and each var fluxsim could not know (a source found nowhere, a SOPS-encrypted
/// value) holding the placeholder fluxsim substituted, in the last source it may come from
/// (a later `substituteFrom` entry wins).
fn objects_for(
    objects: &BTreeMap<(String, String, String), Value>,
    k: &KustomizationRender,
) -> Vec<Value> {
    let ns = &k.kustomization.id.namespace;
    let mut out = objects.clone();
    for (name, v) in &k.vars {
        let Some((kind, src)) = v
            .source
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .split_once('/')
        else {
            continue;
        };
        let on_cluster = objects.contains_key(&(kind.to_string(), ns.clone(), src.to_string()));
        // An encrypted value is what fluxsim substituted for it (a placeholder); a source not
        // on the cluster is rebuilt from the vars it gave.
        if v.encrypted || !on_cluster {
            put(&mut out, kind, ns, src, name, &v.value);
        }
    }
    for u in &k.unknown_vars {
        let Some(last) = u.sources.last() else {
            continue;
        };
        let parts: Vec<&str> = last.splitn(3, '/').collect();
        if let [kind, namespace, name] = parts[..] {
            put(&mut out, kind, namespace, name, &u.name, &u.placeholder);
        }
    }
    out.into_values().collect()
}

/// Sets `key` of the ConfigMap or Secret `kind/namespace/name` of `out` (made when missing)
/// to `value`.
fn put(
    out: &mut BTreeMap<(String, String, String), Value>,
    kind: &str,
    namespace: &str,
    name: &str,
    key: &str,
    value: &str,
) {
    let entry = out
        .entry((kind.to_string(), namespace.to_string(), name.to_string()))
        .or_insert_with(|| {
            json!({
                "apiVersion": "v1",
                "kind": kind,
                "metadata": {"name": name, "namespace": namespace},
            })
        });
    let obj = entry.as_object_mut().unwrap();
    let data = obj.entry("data").or_insert_with(|| json!({}));
    let value = if kind == "Secret" {
        base64::engine::general_purpose::STANDARD.encode(value)
    } else {
        value.to_string()
    };
    data[key] = Value::from(value);
    if let Some(sd) = obj.get_mut("stringData").and_then(Value::as_object_mut) {
        sd.remove(key);
    }
}

/// The Flux Kustomization as applied: the object its parent's artifact holds, else (the
/// root) as fluxsim read it.
fn applied_object(c: &ClusterRender, k: &KustomizationRender) -> Value {
    let id = &k.kustomization.id;
    let from_parent = k.parent.as_ref().and_then(|p| {
        let parent = c.kustomizations.iter().find(|x| &x.kustomization.id == p)?;
        parent.artifact.as_ref()?.objects.iter().find_map(|o| {
            let v = &*o.object;
            let ok = v["kind"] == "Kustomization"
                && v["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
                && v["metadata"]["name"] == id.name.as_str()
                && v["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or(&parent.kustomization.id.namespace)
                    == id.namespace;
            ok.then(|| v.clone())
        })
    });
    from_parent.unwrap_or_else(|| kustomization_object(&k.kustomization))
}

fn run_oracle(oracle: &Path, jobs: &[Value]) -> Result<Vec<Value>, String> {
    let mut child = Command::new(oracle)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running {}: {e}", oracle.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut input = String::new();
    for j in jobs {
        input.push_str(&j.to_string());
        input.push('\n');
    }
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut results = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        results.push(serde_json::from_str(&line).map_err(|e| format!("oracle output: {e}"))?);
    }
    writer
        .join()
        .map_err(|_| "writing jobs".to_string())?
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() || results.len() != jobs.len() {
        return Err(format!(
            "the oracle exited with {status} after {} of {} results",
            results.len(),
            jobs.len()
        ));
    }
    Ok(results)
}
