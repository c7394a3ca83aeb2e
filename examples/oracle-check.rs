//! Compares fluxsim's render of each Flux Kustomization with Flux's own code (the Go
//! program in `oracle/`), object for object and byte for byte.
//!
//! `cargo run --release --example oracle-check -- --oracle BIN [--no-strict] [--verbose] REPO...`
//!
//! For each repository it renders every cluster as `fluxsim render` does, then hands each
//! Kustomization that fluxsim rendered or that failed (at its path, build or substitution) to
//! the oracle: the source as Flux would unpack it (a copy of what fluxsim's source view
//! shows), the Kustomization as applied on the cluster, and the var sources fluxsim resolved
//! for it, rebuilt as ConfigMaps and Secrets that give each var the value fluxsim chose.
//! Both sides must agree: the same objects (by group, kind, namespace and name) with the
//! same content and the same printed YAML, or both fail for the same reason (the stage that
//! fails: path, generator, secure filesystem, build, object decoding, var name, strict
//! unset var, envsubst, YAML re-read, UnmarshalJSON, var source). It ends with
//! `N identical, M different, F both fail, S skipped` and exits 1 when M > 0 (2 on a usage
//! or oracle error). Kustomizations not built by fluxsim (external, blocked) or built from
//! another tree than the repository (mapped sources, ArtifactGenerators) are skipped.
//!
//! Known limit: the var sources are rebuilt from fluxsim's resolution (each var under the
//! source it was taken from), so the oracle checks the substitution and everything after it
//! with fluxsim's vars, not fluxsim's choice among several sources.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use base64::Engine as _;
use fluxsim::flux::{Kustomization, ObjectId};
use fluxsim::model::{KustomizationRender, Status};
use fluxsim::render::{render_dir, RepoOptions};
use serde_json::{json, Value};

struct Args {
    oracle: PathBuf,
    strict: bool,
    verbose: bool,
    repos: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        oracle: PathBuf::new(),
        strict: true,
        verbose: false,
        repos: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--oracle" => args.oracle = it.next().ok_or("--oracle needs a path")?.into(),
            "--no-strict" => args.strict = false,
            "--verbose" => args.verbose = true,
            s if s.starts_with("--") => return Err(format!("unknown flag {s}")),
            s => args.repos.push(s.into()),
        }
    }
    if args.oracle.as_os_str().is_empty() || args.repos.is_empty() {
        return Err("usage: oracle-check --oracle BIN [--no-strict] [--verbose] REPO...".into());
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
    println!(
        "{} identical, {} different, {} both fail, {} skipped",
        tally.identical, tally.different, tally.both_fail, tally.skipped
    );
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
    skipped: usize,
}

fn check_repo(repo: &Path, args: &Args, tally: &mut Tally) -> Result<(), String> {
    let opts = RepoOptions {
        strict: args.strict,
        ..RepoOptions::default()
    };
    let render = render_dir(repo, &opts).map_err(|e| e.to_string())?;
    // The source as Flux would unpack it: only what fluxsim's view shows, narrowed by each
    // cluster's GitRepository `spec.ignore` (one copy per distinct rule set).
    let ignores: BTreeMap<String, Option<String>> =
        fluxsim::render::clusters_of(render.tree.fs(), &opts)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|c| (c.name, c.source_ignore))
            .collect();
    let mut sources: BTreeMap<Option<String>, tempfile::TempDir> = BTreeMap::new();
    for ignore in ignores.values() {
        if sources.contains_key(ignore) {
            continue;
        }
        let narrowed = match ignore {
            Some(rules) => Some(render.tree.narrowed(rules).map_err(|e| e.to_string())?),
            None => None,
        };
        let tree = narrowed.as_ref().unwrap_or(&render.tree);
        sources.insert(ignore.clone(), copy_source(tree)?);
    }
    let mut jobs = Vec::new();
    let mut renders: Vec<(String, &KustomizationRender)> = Vec::new();
    for c in &render.clusters {
        for k in &c.kustomizations {
            // A render resting on placeholders (a var source nothing in the repository
            // gives) has no Flux counterpart offline: skipped, and counted.
            // So does one built from another tree than the repository (a mapped source, an
            // ArtifactGenerator's ExternalArtifact): the oracle is handed the repository.
            // And so does one that fails on fluxsim's own size bound (envsubst's
            // OUTPUT_GROWTH_LIMIT, postbuild's KUSTOMIZATION_OUTPUT_LIMIT: "fluxsim stops"),
            // where Flux has none.
            // And so does one the API server refuses (a field its CRD's schema rejects):
            // no controller ever sees it.
            let refused = k.kustomization.invalid.is_some();
            let bounded = matches!(&k.status, Status::Failed(e) if e.contains("fluxsim stops"));
            let built = matches!(k.status, Status::Rendered | Status::Failed(_))
                && !bounded
                && !refused
                && k.unknown_vars.is_empty()
                && !k
                    .notes
                    .iter()
                    .any(|n| matches!(n, fluxsim::model::Note::BuiltFrom(_)));
            if !built {
                tally.skipped += 1;
                continue;
            }
            let id = format!(
                "{}: {}/{}",
                c.name, k.kustomization.id.namespace, k.kustomization.id.name
            );
            jobs.push(json!({
                "id": id,
                "root": sources
                    .get(ignores.get(&c.name).unwrap_or(&None))
                    .ok_or_else(|| format!("no source for cluster {}", c.name))?
                    .path(),
                "kustomization": kustomization_object(&k.kustomization),
                "objects": var_sources(k),
                "strict": args.strict,
            }));
            renders.push((id, k));
        }
    }
    let results = run_oracle(&args.oracle, &jobs)?;
    for ((id, k), result) in renders.iter().zip(results) {
        let verdict = judge(k, &result);
        match &verdict {
            Verdict::Identical => tally.identical += 1,
            Verdict::BothFail => tally.both_fail += 1,
            Verdict::Different(why) => {
                tally.different += 1;
                println!("DIFFERENT {}: {id}\n{why}", repo.display());
            }
        }
        if args.verbose && !matches!(verdict, Verdict::Different(_)) {
            let word = if matches!(verdict, Verdict::Identical) {
                "identical"
            } else {
                "both fail"
            };
            println!("{word} {}: {id}", repo.display());
        }
    }
    Ok(())
}

/// A temporary folder holding the files `tree` shows, as source-controller archives them.
fn copy_source(tree: &fluxsim::source::Tree) -> Result<tempfile::TempDir, String> {
    let out = tempfile::Builder::new()
        .prefix("fluxsim-oracle-source-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    for f in tree.files() {
        let from = tree.root().join(f);
        let to = out.path().join(f);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let bytes = tree
            .fs()
            .read(&from)
            .map_err(|e| format!("{}: {e}", from.display()))?;
        std::fs::write(&to, bytes).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The Flux Kustomization object fluxsim simulated, with every field Flux's generator and
/// postBuild read.
fn kustomization_object(k: &Kustomization) -> Value {
    let mut spec = serde_json::Map::new();
    spec.insert("path".into(), json!(k.path));
    spec.insert("prune".into(), json!(k.prune));
    let mut put = |key: &str, v: Value| {
        spec.insert(key.into(), v);
    };
    if let Some(ns) = &k.target_namespace {
        put("targetNamespace", json!(ns));
    }
    if let Some(p) = &k.name_prefix {
        put("namePrefix", json!(p));
    }
    if let Some(s) = &k.name_suffix {
        put("nameSuffix", json!(s));
    }
    if !k.patches.is_empty() {
        put("patches", json!(k.patches));
    }
    if !k.images.is_empty() {
        put("images", json!(k.images));
    }
    if !k.components.is_empty() {
        put("components", json!(k.components));
    }
    if !k.build_metadata.is_empty() {
        put("buildMetadata", json!(k.build_metadata));
    }
    if k.ignore_missing_components {
        put("ignoreMissingComponents", json!(true));
    }
    if !k.common_labels.is_empty() || !k.common_annotations.is_empty() {
        let mut cm = serde_json::Map::new();
        if !k.common_labels.is_empty() {
            cm.insert("labels".into(), json!(k.common_labels));
        }
        if !k.common_annotations.is_empty() {
            cm.insert("annotations".into(), json!(k.common_annotations));
        }
        put("commonMetadata", Value::Object(cm));
    }
    if let Some(pb) = &k.post_build {
        let mut p = serde_json::Map::new();
        if !pb.substitute.is_empty() {
            p.insert("substitute".into(), json!(pb.substitute));
        }
        if !pb.substitute_from.is_empty() {
            let refs: Vec<Value> = pb
                .substitute_from
                .iter()
                .map(|r| json!({"kind": r.kind, "name": r.name, "optional": r.optional}))
                .collect();
            p.insert("substituteFrom".into(), Value::Array(refs));
        }
        if pb.always {
            p.insert("substituteStrategy".into(), json!("Always"));
        }
        put("postBuild", Value::Object(p));
    }
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": k.id.name, "namespace": k.id.namespace},
        "spec": Value::Object(spec),
    })
}

/// ConfigMaps and Secrets that give each var the value fluxsim resolved, under the source
/// it came from; every required source exists (empty when it gave no var), also for a
/// Kustomization that failed after its vars were read, so the oracle finds what fluxsim
/// found (scripts/oracle-fuzz found failures compared with a source missing on one side).
fn var_sources(k: &KustomizationRender) -> Vec<Value> {
    let Some(pb) = &k.kustomization.post_build else {
        return Vec::new();
    };
    let mut by_source: BTreeMap<(String, String), BTreeMap<String, String>> = BTreeMap::new();
    for (name, v) in &k.vars {
        let head = v.source.split_whitespace().next().unwrap_or_default();
        if let Some((kind, src)) = head.split_once('/') {
            by_source
                .entry((kind.to_string(), src.to_string()))
                .or_default()
                .insert(name.clone(), v.value.clone());
        }
    }
    // Every required source exists on the oracle's cluster, also when fluxsim failed after
    // reading its vars (a source that gave no var is in no `vars` entry), unless fluxsim
    // failed on a source itself.
    let source_failed =
        matches!(&k.status, Status::Failed(e) if fluxsim_failure(e) == Failure::VarSource);
    let mut wanted: BTreeSet<(String, String)> = by_source.keys().cloned().collect();
    if !source_failed {
        for r in pb.substitute_from.iter().filter(|r| !r.optional) {
            wanted.insert((r.kind.clone(), r.name.clone()));
        }
    }
    wanted
        .into_iter()
        .map(|(kind, name)| {
            let data = by_source
                .remove(&(kind.clone(), name.clone()))
                .unwrap_or_default();
            let data: BTreeMap<String, String> = if kind == "Secret" {
                data.into_iter()
                    .map(|(k, v)| (k, base64::engine::general_purpose::STANDARD.encode(v)))
                    .collect()
            } else {
                data
            };
            json!({
                "apiVersion": "v1",
                "kind": kind,
                "metadata": {"name": name, "namespace": k.kustomization.id.namespace},
                "data": data,
            })
        })
        .collect()
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

enum Verdict {
    Identical,
    BothFail,
    Different(String),
}

fn judge(k: &KustomizationRender, result: &Value) -> Verdict {
    let oracle_ok = result["ok"].as_bool().unwrap_or(false);
    let error = result["error"].as_str().unwrap_or_default();
    match (&k.status, &k.artifact, oracle_ok) {
        (Status::Failed(e), _, false) => {
            let (ours, theirs) = (fluxsim_failure(e), flux_failure(error));
            // An error neither side's wording names is never taken as the same reason.
            if ours == theirs && ours != Failure::Other {
                Verdict::BothFail
            } else {
                Verdict::Different(format!(
                    "  both fail, for different reasons:\n    fluxsim ({ours:?}): {e}\n    flux    ({theirs:?}): {error}"
                ))
            }
        }
        (Status::Failed(e), _, true) => {
            Verdict::Different(format!("  fluxsim failed, Flux renders: {e}"))
        }
        (Status::Rendered, _, false) => {
            Verdict::Different(format!("  fluxsim renders, Flux fails: {error}"))
        }
        (Status::Rendered, Some(artifact), true) => {
            let mut theirs: BTreeMap<ObjectId, (String, Value)> = BTreeMap::new();
            for o in result["objects"].as_array().into_iter().flatten() {
                let obj = o["object"].clone();
                theirs.insert(
                    ObjectId::of(&obj),
                    (o["yaml"].as_str().unwrap_or_default().to_string(), obj),
                );
            }
            let mut why = Vec::new();
            for ours in &artifact.objects {
                match theirs.remove(&ours.id) {
                    None => why.push(format!("  only fluxsim has {}", show(&ours.id))),
                    Some((yaml, obj)) => {
                        if *ours.object != obj {
                            let pretty = |v: &Value| {
                                serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
                            };
                            let text = if ours.yaml == yaml {
                                diff(&pretty(&ours.object), &pretty(&obj))
                            } else {
                                diff(&ours.yaml, &yaml)
                            };
                            why.push(format!("  {} differs in content:\n{text}", show(&ours.id)));
                        } else if ours.yaml != yaml {
                            why.push(format!(
                                "  {} is printed differently:\n{}",
                                show(&ours.id),
                                diff(&ours.yaml, &yaml)
                            ));
                        }
                    }
                }
            }
            for id in theirs.keys() {
                why.push(format!("  only Flux has {}", show(id)));
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

/// Why a Kustomization fails, in the stages kustomize-controller goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// `spec.path` is not in the source (reconcile: "kustomization path not found").
    PathNotFound,
    /// Flux's generator (`kustomize create failed`).
    Generate,
    /// A read outside the source (Flux's secure filesystem, `fs-security-constraint`).
    SecureFs,
    /// `kustomize build` itself.
    Build,
    /// A built object without apiVersion, kind or name.
    Decode,
    /// A var name Flux refuses.
    InvalidVarName,
    /// A var unset and without default, in strict mode.
    StrictUnset,
    /// envsubst cannot parse or evaluate an expression.
    Envsubst,
    /// The substituted text does not read back as YAML (`YAMLToJSON`).
    YamlReread,
    /// The JSON cannot be set back into the resource (`UnmarshalJSON`).
    Unmarshal,
    /// A `substituteFrom` source cannot be read.
    VarSource,
    /// Reading the built objects back for the apply (`ssautil.ReadObjects`): an object
    /// without a kind.
    ReadBack,
    /// Anything else (after the build: reading the objects back for the apply).
    Other,
}

/// The stage the oracle's error (kustomize-controller's own wording) names.
fn flux_failure(e: &str) -> Failure {
    if e.starts_with("kustomization path not found") {
        Failure::PathNotFound
    } else if e.contains("fs-security-constraint") || e.contains("is not in or below") {
        Failure::SecureFs
    } else if e.starts_with("kustomize create failed") {
        Failure::Generate
    } else if e.starts_with("kustomize build failed") {
        Failure::Build
    } else if e.starts_with("failed to decode Kubernetes apiVersion, kind and name") {
        Failure::Decode
    } else if e.contains("Object 'Kind' is missing in") {
        Failure::ReadBack
    } else if e.starts_with("panic:") && e.contains("slice bounds out of range") {
        // envsubst's toSubstr panics on a negative length (funcs.go); controller-runtime
        // recovers the panic and fails the reconcile with it.
        Failure::Envsubst
    } else if e.starts_with("post build failed") {
        if e.contains("var name is invalid") {
            Failure::InvalidVarName
        } else if e.contains("variable not set (strict mode)") {
            Failure::StrictUnset
        } else if e.contains("envsubst error: YAMLToJSON") {
            Failure::YamlReread
        } else if e.contains("UnmarshalJSON: ") {
            // SubstituteVariables' own `res.UnmarshalJSON`, after varSubstitution.
            Failure::Unmarshal
        } else if e.contains("substitute from '") {
            Failure::VarSource
        } else if e.contains("variable substitution failed") {
            Failure::Envsubst
        } else {
            Failure::Other
        }
    } else {
        Failure::Other
    }
}

/// The stage fluxsim's error names (its own wording: `src/generate`, `src/build`,
/// `src/postbuild`, `src/reconcile`).
fn fluxsim_failure(e: &str) -> Failure {
    if e.contains("does not exist in the source") {
        Failure::PathNotFound
    } else if e.contains("fs-security-constraint") || e.contains("is not in or below") {
        Failure::SecureFs
    } else if e.contains("kustomize create failed")
        || e.contains("failed to decode Kubernetes YAML from")
        || e.contains("is not a directory")
    {
        Failure::Generate
    } else if e.contains("kustomize build failed")
        || (e.contains("component `") && e.contains("not found"))
    {
        // A missing component is kept in the kustomization by Flux's generator, and the
        // build fails on it.
        Failure::Build
    } else if e.contains("var name is invalid") {
        Failure::InvalidVarName
    } else if e.contains("variable not set (strict mode)") {
        Failure::StrictUnset
    } else if e.contains("the substituted resource is not valid YAML") {
        Failure::YamlReread
    } else if e.contains("(UnmarshalJSON)") {
        Failure::Unmarshal
    } else if e.contains("substitute from '") {
        Failure::VarSource
    } else if e.contains("variable substitution failed") {
        Failure::Envsubst
    } else if e.contains("apiVersion, kind and name") {
        Failure::Decode
    } else if e.contains("Object 'Kind' is missing in") {
        Failure::ReadBack
    } else {
        Failure::Other
    }
}

fn show(id: &ObjectId) -> String {
    format!("{}/{}/{}/{}", id.group, id.kind, id.namespace, id.name)
}

fn diff(ours: &str, theirs: &str) -> String {
    similar::TextDiff::from_lines(ours, theirs)
        .unified_diff()
        .header("fluxsim", "flux")
        .context_radius(2)
        .to_string()
}
