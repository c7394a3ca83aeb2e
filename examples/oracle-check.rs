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
use fluxsim::model::{KustomizationRender, Status};
use fluxsim::oracle::{fluxsim_failure, judge, kustomization_object, Failure, Verdict};
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
