//! Validates every object of a `fluxsim render --out DIR` folder, cluster by cluster (each
//! cluster's CRDs added to its validator), and prints the findings and a summary of what was
//! left unchecked. The corpus harness of issue 28:
//!
//! ```text
//! target/release/fluxsim render /work/shared/corpus/<x> --show-secrets --out /tmp/<x>
//! cargo run --release -p fluxsim-kubeschema --example validate-render -- /tmp/<x> \
//!     [--kube-version 1.35] [--crds DIR]
//! ```
//!
//! `--crds DIR` adds the CRDs of every YAML file under DIR to every cluster (what a
//! `--schema-dir` will do), after the cluster's own.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kubeschema::{KubeVersion, Validator};
use serde::Deserialize;
use serde_json::Value;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut version = KubeVersion::DEFAULT;
    let mut dirs = Vec::new();
    let mut extra: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--crds" {
            let mut files = Vec::new();
            yaml_files(Path::new(&args[i + 1]), &mut files);
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                for doc in serde_yaml_ng::Deserializer::from_str(&text) {
                    if let Ok(v) = Value::deserialize(doc) {
                        extra.push(v);
                    }
                }
            }
            i += 2;
        } else if args[i] == "--kube-version" {
            version = KubeVersion::parse(&args[i + 1]).expect("supported version");
            i += 2;
        } else {
            dirs.push(PathBuf::from(&args[i]));
            i += 1;
        }
    }
    for root in dirs {
        let mut files = Vec::new();
        yaml_files(&root, &mut files);
        // `<cluster>/<namespace>/<name>.yaml`: the cluster is everything above the last two.
        let mut clusters: BTreeMap<PathBuf, Vec<(PathBuf, Value)>> = BTreeMap::new();
        for f in files {
            let rel = f.strip_prefix(&root).unwrap().to_path_buf();
            let cluster = rel
                .ancestors()
                .nth(2)
                .unwrap_or(Path::new(""))
                .to_path_buf();
            let text = std::fs::read_to_string(&f).unwrap();
            for doc in serde_yaml_ng::Deserializer::from_str(&text) {
                match Value::deserialize(doc) {
                    Ok(v) if v.is_object() => clusters
                        .entry(cluster.clone())
                        .or_default()
                        .push((rel.clone(), v)),
                    Ok(_) => {}
                    Err(e) => println!("{}: not YAML: {e}", rel.display()),
                }
            }
        }
        let mut total = 0usize;
        let mut findings = 0usize;
        let mut unchecked_objects = 0usize;
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let start = Instant::now();
        for (cluster, objects) in &clusters {
            let mut validator = Validator::new(version);
            validator.set_unknown_marker("fluxsim-unknown:");
            let own = objects.iter().map(|(_, o)| o);
            for e in validator.add_crds(extra.iter().chain(own)) {
                println!("{}: CRD not read: {e}", cluster.display());
            }
            for (file, o) in objects {
                total += 1;
                let report = validator.validate(o);
                for f in &report.findings {
                    findings += 1;
                    println!(
                        "{} {} {} {} :: {}",
                        f.rule.id,
                        file.display(),
                        f.object,
                        f.path,
                        f.message
                    );
                }
                if report.unchecked.iter().any(|u| u.path.is_empty()) {
                    unchecked_objects += 1;
                }
                for u in &report.unchecked {
                    *reasons.entry(u.reason.clone()).or_default() += 1;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "== {}: {} clusters, {total} objects, {findings} findings, {unchecked_objects} objects unchecked, validated in {:.3}s ({:.0} objects/s)",
            root.display(),
            clusters.len(),
            secs,
            total as f64 / secs
        );
        for (reason, n) in &reasons {
            println!("   unchecked x{n}: {reason}");
        }
    }
}
