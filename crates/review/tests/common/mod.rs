//! Fixtures for the tests and the demo: reviews built in code (a realistic change, a
//! generated one of any size, names written to break reports), and a checker of the
//! Markdown structure every comment must keep.
#![allow(dead_code, unreachable_pub)]

use review::model::{
    Cluster, Deletion, Failure, ImageBump, Object, ObjectId, Order, Presence, Review, Status, Unit,
    UnitKind,
};
use serde_json::{json, Value};

pub fn deployment(
    name: &str,
    image: &str,
    chart: &str,
    replicas: u64,
    env: &[(&str, &str)],
) -> Value {
    let env: Vec<Value> = env
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "apps",
                     "labels": {"app.kubernetes.io/name": name, "helm.sh/chart": chart,
                                "app.kubernetes.io/version": chart.rsplit('-').next().unwrap_or("")}},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                 "template": {
                     "metadata": {"labels": {"app.kubernetes.io/name": name},
                                  "annotations": {"checksum/config": format!("sha-{chart}")}},
                     "spec": {"containers": [
                         {"name": "app", "image": image, "env": env,
                          "ports": [{"containerPort": 9898, "name": "http"}],
                          "resources": {"limits": {"memory": "256Mi"}}},
                         {"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:stable-2.14"}]}}}
    })
}

fn config_map(name: &str, conf: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "apps"},
           "data": {"nginx.conf": conf, "LOG_LEVEL": "info"}})
}

fn service(name: &str, target: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "namespace": "apps"},
           "spec": {"ports": [{"port": 80, "targetPort": target, "protocol": "TCP"}],
                    "selector": {"app.kubernetes.io/name": name}}})
}

fn obj(base: Option<Value>, head: Option<Value>) -> Object {
    let id = ObjectId::of(head.as_ref().or(base.as_ref()).unwrap());
    Object { id, base, head }
}

const NGINX_A: &str = "server {\n  listen 80;\n  location / {\n    proxy_pass http://podinfo:9898;\n  }\n  gzip on;\n}\n";
const NGINX_B: &str = "server {\n  listen 8080;\n  location / {\n    proxy_pass http://podinfo:9898;\n    proxy_read_timeout 30s;\n  }\n  gzip on;\n}\n";

/// A change as a home-ops repository sees one: an app's chart bump (image, replicas, env,
/// config), a Service port, an object pruned and one added, a reorder, a HelmRelease that
/// changed only in chart labels, a failure, a new cluster.
#[allow(clippy::too_many_lines)] // one change, read top to bottom
pub fn demo(hostile: bool) -> Review {
    let podinfo_a = deployment(
        "podinfo",
        "ghcr.io/stefanprodan/podinfo:6.5.0",
        "podinfo-6.5.0",
        2,
        &[("PODINFO_UI_COLOR", "#34577c")],
    );
    let podinfo_b = deployment(
        "podinfo",
        "ghcr.io/stefanprodan/podinfo:6.6.0",
        "podinfo-6.6.0",
        3,
        &[
            ("PODINFO_UI_COLOR", "#34577c"),
            ("PODINFO_UI_MESSAGE", "hello"),
        ],
    );
    let old = deployment(
        "legacy-api",
        "ghcr.io/acme/legacy:1.0",
        "legacy-1.0",
        1,
        &[],
    );
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "podinfo", "namespace": "apps"},
        "spec": {"ingressClassName": "nginx", "rules": [{"host": "podinfo.example.com",
            "http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "podinfo", "port": {"number": 80}}}}]}}]}});
    let ds = |order: &[&str]| {
        let containers: Vec<Value> = order
            .iter()
            .map(|n| json!({"name": n, "image": format!("ghcr.io/acme/{n}:1")}))
            .collect();
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-agent", "namespace": "kube-system"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    };
    let prom_a = deployment(
        "kube-state-metrics",
        "registry.k8s.io/kube-state-metrics:v2.10.0",
        "kube-prometheus-stack-55.0.0",
        1,
        &[],
    );
    let mut prom_b = prom_a.clone();
    prom_b["metadata"]["labels"]["helm.sh/chart"] = json!("kube-prometheus-stack-55.1.0");
    prom_b["spec"]["template"]["metadata"]["annotations"]["checksum/config"] = json!("sha-55.1.0");
    let redis = |mem: &str| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "redis-master", "namespace": "apps"},
        "spec": {"template": {"spec": {"containers": [{"name": "redis", "image": "docker.io/bitnami/redis:7.2",
            "resources": {"requests": {"memory": mem, "cpu": "100m"}}}]}}}})
    };
    let id = |v: &Value| ObjectId::of(v);

    let (apps, evil_object) = if hostile {
        (
            "flux-system/apps</details><script>alert(1)</script>",
            "evil`</script><!--@octocat #12",
        )
    } else {
        ("flux-system/apps", "podinfo-extra")
    };
    let mut prod_units = vec![
        Unit {
            kind: UnitKind::Kustomization,
            name: apps.into(),
            status: Status::Changed,
            objects: vec![
                obj(Some(podinfo_a.clone()), Some(podinfo_b.clone())),
                obj(Some(config_map("podinfo-nginx", NGINX_A)), Some(config_map("podinfo-nginx", NGINX_B))),
                obj(Some(service("podinfo", 9898)), Some(service("podinfo", 8080))),
                obj(Some(old.clone()), None),
                obj(None, Some(ingress)),
            ],
            ..Unit::default()
        },
        Unit {
            kind: UnitKind::Kustomization,
            name: "flux-system/infra".into(),
            status: Status::Changed,
            objects: vec![obj(Some(ds(&["agent", "log-shipper"])), Some(ds(&["log-shipper", "agent"])))],
            order: Some(Order {
                base: vec![id(&ds(&[])), id(&service("podinfo", 1))],
                head: vec![id(&service("podinfo", 1)), id(&ds(&[]))],
            }),
            ..Unit::default()
        },
        Unit {
            kind: UnitKind::Kustomization,
            name: "flux-system/tenants".into(),
            status: Status::NotCompared,
            problem: Some("failed: kustomize build `./tenants`: accumulating resources: `team-a/missing.yaml` does not exist".into()),
            ..Unit::default()
        },
        Unit { kind: UnitKind::Kustomization, name: "flux-system/flux-system".into(), status: Status::Identical, ..Unit::default() },
        Unit {
            kind: UnitKind::HelmRelease,
            name: "monitoring/kube-prometheus-stack".into(),
            parent: Some("flux-system/monitoring".into()),
            status: Status::Changed,
            objects: vec![obj(Some(prom_a), Some(prom_b))],
            ..Unit::default()
        },
        Unit {
            kind: UnitKind::HelmRelease,
            name: "apps/redis".into(),
            parent: Some(apps.into()),
            status: Status::Changed,
            objects: vec![obj(Some(redis("256Mi")), Some(redis("512Mi")))],
            ..Unit::default()
        },
    ];
    if hostile {
        let mut cm = config_map(evil_object, "a\u{1b}[2J\n```\n</script>\n");
        cm["data"]["<img src=x onerror=alert(1)>"] = json!("@octocat | `x` <!--");
        prod_units.push(Unit {
            kind: UnitKind::Kustomization,
            name: "<!--".into(),
            status: Status::Added,
            objects: vec![obj(None, Some(cm))],
            ..Unit::default()
        });
    }
    let prod = Cluster {
        name: if hostile { "prod<b>".into() } else { "prod".into() },
        presence: Presence::Both,
        units: prod_units,
        failures: vec![Failure {
            unit: "flux-system/tenants".into(),
            side: "head".into(),
            error: "kustomize build `./tenants`: accumulating resources: `team-a/missing.yaml` does not exist\n(from ./tenants/kustomization.yaml)".into(),
            below: 2,
        }],
        prune_deletions: vec![Deletion { unit: apps.into(), object: id(&old) }],
        image_bumps: vec![ImageBump {
            unit: apps.into(),
            object: id(&podinfo_b),
            path: "spec.template.spec.containers[name=app].image".into(),
            base: Some("ghcr.io/stefanprodan/podinfo:6.5.0".into()),
            head: Some("ghcr.io/stefanprodan/podinfo:6.6.0".into()),
        }],
        hazards: vec!["`flux-system/apps` has `prune: true`: `Deployment apps/legacy-api` is deleted when it reconciles".into()],
    };
    let staging_deploy = deployment(
        "podinfo",
        "ghcr.io/stefanprodan/podinfo:6.6.0",
        "podinfo-6.6.0",
        1,
        &[],
    );
    let staging = Cluster {
        name: "staging".into(),
        presence: Presence::Both,
        units: vec![Unit {
            kind: UnitKind::Kustomization,
            name: "flux-system/apps".into(),
            status: Status::Added,
            objects: vec![
                obj(None, Some(staging_deploy.clone())),
                obj(None, Some(service("podinfo", 9898))),
            ],
            ..Unit::default()
        }],
        image_bumps: vec![ImageBump {
            unit: "flux-system/apps".into(),
            object: id(&staging_deploy),
            path: "spec.template.spec.containers[name=app].image".into(),
            base: None,
            head: Some("ghcr.io/stefanprodan/podinfo:6.6.0".into()),
        }],
        ..Cluster::default()
    };
    let dev = Cluster {
        name: "dev".into(),
        units: vec![Unit {
            name: "flux-system/apps".into(),
            status: Status::Identical,
            ..Unit::default()
        }],
        ..Cluster::default()
    };
    Review {
        base: "main".into(),
        head: if hostile {
            "pr`<b>".into()
        } else {
            "renovate/podinfo-6.x".into()
        },
        clusters: vec![prod, staging, dev],
        ..Review::default()
    }
}

/// `units` changed Kustomizations spread over `clusters` clusters, each with a Deployment
/// bumped (image, chart labels, an env var), a ConfigMap's text changed and a removed
/// object pruned; a HelmRelease in every tenth; a hazard in every twentieth.
pub fn generated(units: usize, clusters: usize) -> Review {
    let mut out: Vec<Cluster> = (0..clusters)
        .map(|c| Cluster {
            name: format!("cluster-{c:02}"),
            ..Cluster::default()
        })
        .collect();
    for i in 0..units {
        let c = &mut out[i % clusters];
        let name = format!("flux-system/app-{i:03}");
        let app = format!("app-{i:03}");
        let a = deployment(
            &app,
            &format!("ghcr.io/acme/{app}:1.{i}.0"),
            &format!("{app}-1.{i}.0"),
            2,
            &[("MODE", "a")],
        );
        let b = deployment(
            &app,
            &format!("ghcr.io/acme/{app}:1.{i}.1"),
            &format!("{app}-1.{i}.1"),
            2,
            &[("MODE", "b")],
        );
        let conf_a = (0..40)
            .map(|l| format!("key{l} = value {l}\n"))
            .collect::<Vec<_>>()
            .concat();
        let conf_b = conf_a
            .replace("key7 = value 7", "key7 = changed 7")
            .replace("key30 = value 30\n", "");
        let gone = deployment(
            &format!("{app}-worker"),
            "ghcr.io/acme/worker:1",
            "w-1",
            1,
            &[],
        );
        c.prune_deletions.push(Deletion {
            unit: name.clone(),
            object: ObjectId::of(&gone),
        });
        c.image_bumps.push(ImageBump {
            unit: name.clone(),
            object: ObjectId::of(&b),
            path: "spec.template.spec.containers[name=app].image".into(),
            base: Some(format!("ghcr.io/acme/{app}:1.{i}.0")),
            head: Some(format!("ghcr.io/acme/{app}:1.{i}.1")),
        });
        if i % 20 == 0 {
            c.hazards.push(format!(
                "`{name}`: `Deployment apps/{app}-worker` is deleted by prune"
            ));
        }
        c.units.push(Unit {
            kind: UnitKind::Kustomization,
            name: name.clone(),
            status: Status::Changed,
            objects: vec![
                obj(Some(a), Some(b)),
                obj(
                    Some(config_map(&format!("{app}-conf"), &conf_a)),
                    Some(config_map(&format!("{app}-conf"), &conf_b)),
                ),
                obj(Some(gone), None),
            ],
            ..Unit::default()
        });
        if i % 10 == 0 {
            c.units.push(Unit {
                kind: UnitKind::HelmRelease,
                name: format!("apps/{app}-redis"),
                parent: Some(name),
                status: Status::Changed,
                objects: vec![obj(
                    Some(service(&format!("{app}-redis"), 6379)),
                    Some(service(&format!("{app}-redis"), 6380)),
                )],
                ..Unit::default()
            });
        }
    }
    Review {
        base: "main".into(),
        head: "big-change".into(),
        clusters: out,
        ..Review::default()
    }
}

/// Checks what makes a comment valid Markdown on its own: every fenced code block closed
/// (CommonMark: up to three spaces, a run of three or more backticks, closed by a run at
/// least as long with nothing after it), and outside code blocks every `<details>` and
/// `<summary>` closed, never closed before it opens.
// String: the test's failure message, asserted with as is.
pub fn check_markdown(md: &str) -> Result<(), String> {
    let mut fence: usize = 0;
    let mut details: i64 = 0;
    let mut summaries: i64 = 0;
    for (n, line) in md.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        let rest = &trimmed[ticks..];
        if fence > 0 {
            if indent <= 3 && ticks >= fence && rest.trim().is_empty() {
                fence = 0;
            }
            continue;
        }
        if indent <= 3 && ticks >= 3 && !rest.contains('`') {
            fence = ticks;
            continue;
        }
        details +=
            (line.matches("<details>").count() + line.matches("<details open>").count()) as i64;
        details -= line.matches("</details>").count() as i64;
        summaries += line.matches("<summary>").count() as i64;
        summaries -= line.matches("</summary>").count() as i64;
        if details < 0 || summaries < 0 {
            return Err(format!(
                "line {}: closed before it was opened: {line}",
                n + 1
            ));
        }
        if summaries != 0 {
            return Err(format!(
                "line {}: <summary> not closed on its line: {line}",
                n + 1
            ));
        }
    }
    if fence > 0 {
        return Err("a code block is not closed".into());
    }
    if details != 0 {
        return Err(format!("{details} <details> not closed"));
    }
    Ok(())
}
