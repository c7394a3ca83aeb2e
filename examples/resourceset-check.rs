//! Renders a repository and checks every ResourceSet entry against the Flux Operator's CLI
//! run by hand: the ResourceSet as its parent applies it, and the cluster's `Static`
//! ResourceSetInputProviders of its namespace, given to `flux-operator build rset`; the
//! objects must be the entry's, but for the data of objects with a `copyFrom` annotation and
//! the `checksum` annotation (the operator's apply-time work with the cluster, which the CLI
//! does not do).
//!
//! `cargo run --release --example resourceset-check -- REPO [--source KIND/NS/NAME=PATH]...`
//! ends with `N identical, M different, S skipped` and exits 1 when M > 0. A ResourceSet
//! with a provider that needs a service (fluxsim's samples or placeholders), or whose entry
//! did not render, is skipped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use fluxsim::render::{render_dir, RepoOptions};
use serde_json::Value;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut repo = None;
    let mut sources = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--source" {
            if let Some(s) = it.next() {
                sources.push(s.clone());
            }
        } else {
            repo = Some(PathBuf::from(a));
        }
    }
    let Some(repo) = repo else {
        eprintln!("usage: resourceset-check REPO [--source KIND/NS/NAME=PATH]...");
        return ExitCode::from(2);
    };
    let opts = RepoOptions {
        sources: sources
            .iter()
            .map(|s| fluxsim::source::mapping::parse_arg(s, &repo))
            .collect(),
        ..RepoOptions::default()
    };
    let render = match render_dir(&repo, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("resourceset-check: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut same, mut different, mut skipped) = (0, 0, 0);
    for c in &render.clusters {
        for entry in c
            .kustomizations
            .iter()
            .filter(|k| fluxsim::model::is_resourceset_entry(k))
        {
            let name = format!("{}:{}", c.name, entry.kustomization.id);
            match check(c, entry) {
                Ok(Verdict::Same(n)) => {
                    println!("identical {name} ({n} objects)");
                    same += 1;
                }
                Ok(Verdict::Different(why)) => {
                    println!("different {name}: {why}");
                    different += 1;
                }
                Ok(Verdict::Skipped(why)) => {
                    println!("skipped   {name}: {why}");
                    skipped += 1;
                }
                Err(e) => {
                    eprintln!("resourceset-check: running flux-operator: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    println!("{same} identical, {different} different, {skipped} skipped");
    if different > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

enum Verdict {
    Same(usize),
    Different(String),
    Skipped(&'static str),
}

/// The entry against the CLI run on its ResourceSet as the parent applies it.
fn check(
    c: &fluxsim::model::ClusterRender,
    entry: &fluxsim::model::KustomizationRender,
) -> std::io::Result<Verdict> {
    use std::fmt::Write as _;
    let sampled = entry.notes.iter().any(|n| {
        matches!(
            n,
            fluxsim::model::Note::ResourceSetSampleInputs { .. }
                | fluxsim::model::Note::ResourceSetPlaceholderInputs { .. }
        )
    });
    if sampled {
        return Ok(Verdict::Skipped("inputs from fluxsim.toml or placeholders"));
    }
    let (Some(artifact), Some(rset)) = (&entry.artifact, fluxsim::model::resourceset_of(entry))
    else {
        return Ok(Verdict::Skipped("not rendered"));
    };
    let all_objects = || {
        c.kustomizations
            .iter()
            .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
    };
    let Some(object) = c
        .kustomizations
        .iter()
        .find(|k| Some(&k.kustomization.id) == entry.parent.as_ref())
        .into_iter()
        .flat_map(|p| p.artifact.iter().flat_map(|a| &a.objects))
        .find(|o| fluxsim::flux::is_resourceset(&o.object) && o.id.name == rset.name)
    else {
        return Ok(Verdict::Skipped(
            "its ResourceSet object is not in its parent",
        ));
    };
    let mut obj = object.object.as_ref().clone();
    obj["metadata"]["namespace"] = Value::String(rset.namespace.clone());
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("rset.yaml");
    std::fs::write(&file, obj.to_string())?;
    let providers = all_objects()
        .filter(|o| {
            o.id.kind == "ResourceSetInputProvider"
                && o.id.namespace == rset.namespace
                && o.object["spec"]["type"] == "Static"
        })
        .fold(String::new(), |mut t, o| {
            let _ = writeln!(t, "---\n{}", o.object);
            t
        });
    let providers_file = dir.path().join("providers.yaml");
    std::fs::write(&providers_file, providers)?;
    let mut cmd = Command::new("flux-operator");
    cmd.args(["build", "rset", "-f"]).arg(&file);
    if obj["spec"]["inputsFrom"].is_array() {
        cmd.arg("--inputs-from-provider").arg(&providers_file);
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Ok(Verdict::Different(format!(
            "the CLI fails: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let theirs = by_id(&String::from_utf8_lossy(&out.stdout));
    let ours = by_id(&artifact.yaml);
    let diff: Vec<&String> = ours
        .keys()
        .chain(theirs.keys())
        .filter(|id| ours.get(*id) != theirs.get(*id))
        .collect();
    Ok(if diff.is_empty() {
        Verdict::Same(ours.len())
    } else {
        Verdict::Different(format!("{diff:?}"))
    })
}

/// Objects by id, without what the operator changes at apply time with the cluster.
fn by_id(text: &str) -> BTreeMap<String, Value> {
    fluxsim::manifest::split_documents(text)
        .into_iter()
        .filter_map(|d| fluxsim::manifest::parse_object(d).ok())
        .filter(|o| !o.is_null())
        .map(|mut o| {
            let id = format!(
                "{} {} {}/{}",
                o["apiVersion"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            if o["metadata"]["annotations"]["fluxcd.controlplane.io/copyFrom"].is_string() {
                if let Some(m) = o.as_object_mut() {
                    m.remove("data");
                    m.remove("stringData");
                    m.remove("binaryData");
                    m.remove("type");
                }
            }
            strip_checksums(&mut o);
            (id, o)
        })
        .collect()
}

fn strip_checksums(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(a)) =
                m.get_mut("metadata").and_then(|x| x.get_mut("annotations"))
            {
                a.remove("fluxcd.controlplane.io/checksum");
            }
            for x in m.values_mut() {
                strip_checksums(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_checksums),
        _ => {}
    }
}
