//! Validation throughput: a large generated set of built-in objects and custom resources
//! (with a CRD that has CEL rules), validated one by one; prints objects per second.
//! `cargo bench -p fluxsim-kubeschema`
#![allow(clippy::cast_precision_loss)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use kubeschema::{KubeVersion, Validator};
use serde_json::{json, Value};

fn objects(n: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity(n * 4);
    for i in 0..n {
        let name = format!("app-{i}");
        out.push(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "apps", "labels": {"app.kubernetes.io/name": name}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{
                        "name": "app", "image": format!("ghcr.io/example/app:{i}"),
                        "ports": [{"containerPort": 8080, "name": "http"}],
                        "env": [{"name": "LEVEL", "value": "info"}, {"name": "INDEX", "value": i.to_string()}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}}
                    }]}
                }
            }
        }));
        out.push(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": "http", "name": "http"}]}
        }));
        out.push(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "apps"},
            "data": {"index": i.to_string(), "level": "info"}
        }));
        out.push(json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {"owner": "team", "minReplicas": 1, "maxReplicas": 3, "tier": "gold", "interval": "5m"}
        }));
    }
    out
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "required": ["owner"],
                    "x-kubernetes-validations": [{"rule": "self.minReplicas <= self.maxReplicas"}],
                    "properties": {
                        "owner": {"type": "string"}, "minReplicas": {"type": "integer"},
                        "maxReplicas": {"type": "integer"},
                        "tier": {"type": "string", "enum": ["bronze", "silver", "gold"]},
                        "interval": {"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"}
                    }}}}}}]}
    })
}

fn main() {
    let objects = objects(5_000);
    let start = Instant::now();
    let mut validator = Validator::new(KubeVersion::DEFAULT);
    validator.add_crd(&crd()).expect("CRD reads");
    let setup = start.elapsed();
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for o in &objects {
            let report = validator.validate(black_box(o));
            assert!(report.findings.is_empty(), "{:?}", report.findings);
        }
        best = best.min(t.elapsed());
    }
    let n = objects.len() as f64;
    println!(
        "validate: {} objects in {:.1} ms (best of 5): {:.0} objects/s; catalog load {:.1} ms",
        objects.len(),
        best.as_secs_f64() * 1e3,
        n / best.as_secs_f64(),
        setup.as_secs_f64() * 1e3
    );
}
