//! Substitution throughput on a large multi-document manifest, as a ratio against a plain copy
//! of the same bytes measured in the same run. `cargo bench -p fluxsim-envsubst`
#![allow(clippy::cast_precision_loss, clippy::format_push_string)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn manifest(docs: usize) -> String {
    let mut s = String::new();
    for i in 0..docs {
        s.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  \
             namespace: ${{NAMESPACE}}\n  labels:\n    cluster: ${{CLUSTER_NAME}}\nspec:\n  \
             replicas: ${{REPLICAS:=2}}\n  template:\n    spec:\n      containers:\n      - \
             name: app\n        image: ghcr.io/example/app:${{VERSION}}\n        args:\n        \
             - --domain=${{DOMAIN}}\n        - --log-level=${{LOG_LEVEL:-info}}\n        \
             command: [\"sh\", \"-c\", \"echo $${{HOME}} $$(date) $PATH\"]\n"
        ));
    }
    s
}

/// Best-of-N wall time for `f`, which processes `bytes` bytes per call.
fn measure(bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..15 {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
    }
    bytes as f64 / best.as_secs_f64() / 1e6
}

fn main() {
    let input = manifest(20_000);
    let vars: BTreeMap<String, String> = [
        ("NAMESPACE", "apps"),
        ("CLUSTER_NAME", "prod"),
        ("VERSION", "1.2.3"),
        ("DOMAIN", "example.com"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
    .collect();
    let n = input.len();
    let copy = measure(n, || {
        black_box(black_box(input.as_bytes()).to_vec());
    });
    let subst = measure(n, || {
        black_box(envsubst::eval(black_box(input.as_bytes()), &vars, true).unwrap());
    });
    let parse = measure(n, || {
        black_box(envsubst::Template::parse(black_box(input.as_bytes())).unwrap());
    });
    println!("input: {:.1} MB, {} documents", n as f64 / 1e6, 20_000);
    println!("plain copy:          {copy:>9.1} MB/s  (baseline)");
    println!(
        "envsubst parse:      {parse:>9.1} MB/s  ({:.3}x of copy)",
        parse / copy
    );
    println!(
        "envsubst parse+eval: {subst:>9.1} MB/s  ({:.3}x of copy)",
        subst / copy
    );
}
