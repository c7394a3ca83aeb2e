//! `--helm`: HelmReleases of `testdata/fleet` (charts kept in the repository) rendered as
//! helm-controller would install them, compared with `helm template` run by hand; their
//! place in `--out`, JSON, `diff` and `prove`; charts that cannot be had. Needs `helm`
//! (versions.env `HELM`, `scripts/install-tools`) and kustomize on PATH; no network.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{
    commit_all, crate_path, fluxsim, fluxsim_in, kustomization, repo_from, yaml_objects,
};
use serde_json::{json, Value};

const PODINFO: &str = "apps-helm/helm/apps/podinfo";
const WIDGETS: &str = "apps-helm/helm/apps/widgets";

pub(crate) fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// `helm template` run by hand, as a user would check a release.
fn helm_template(args: &[&str]) -> Vec<Value> {
    let out = Command::new("helm")
        .arg("template")
        .args(args)
        .output()
        .expect("helm is installed (scripts/install-tools)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    yaml_objects(&String::from_utf8_lossy(&out.stdout))
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in {objects:#?}"))
}

/// What helm-controller adds to `helm template`'s output for a release of namespace `apps`:
/// the origin labels (its post-renderer), and the release namespace on a namespaced object
/// without one (helm's kube client at the install).
fn origin_labels(o: &mut Value, name: &str) {
    if o["kind"] != "CustomResourceDefinition" && o["metadata"]["namespace"].is_null() {
        o["metadata"]["namespace"] = json!("apps");
    }
    let labels = o["metadata"]
        .as_object_mut()
        .unwrap()
        .entry("labels")
        .or_insert(json!({}));
    labels["helm.toolkit.fluxcd.io/name"] = json!(name);
    labels["helm.toolkit.fluxcd.io/namespace"] = json!("apps");
}

fn render_helm_out(args: &[&str]) -> (tempfile::TempDir, Value) {
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().join("out");
    let mut all = vec!["render", "testdata/fleet", "--helm", "--format", "json"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out_path.to_str().unwrap()]);
    let out = fluxsim(&all);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    (out_dir, out.json())
}

// The merged values of apps/podinfo (testdata/fleet/README.md) given to helm by hand: the
// release's output must be helm's, with helm-controller's post-renderers and labels.
// helm-controller internal/postrender/build.go (kustomize post-renderer, then origin
// labels), fluxcd/pkg chartutil ChartValuesFromReferences (valuesFrom then values).
#[test]
fn release_output_equals_helm_template_by_hand_with_the_merged_values() {
    let (dir, json) = render_helm_out(&[]);
    let file = dir
        .path()
        .join("out/dev/flux-system")
        .join(format!("{PODINFO}.yaml"));
    let ours = yaml_objects(&fs::read_to_string(&file).unwrap());

    let values = tempfile::NamedTempFile::new().unwrap();
    fs::write(
        values.path(),
        "replicaCount: 2\nmessage: hello from fleet-dev\nresources:\n  requests: {cpu: 10m, memory: 32Mi}\nlogLevel: debug\nimage: {tag: 6.5.4}\n",
    )
    .unwrap();
    let by_hand = helm_template(&[
        "podinfo",
        crate_path("testdata/fleet/charts/podinfo")
            .to_str()
            .unwrap(),
        "--namespace",
        "apps",
        "--values",
        values.path().to_str().unwrap(),
    ]);
    assert_eq!(ours.len(), by_hand.len(), "{ours:#?}");
    let mut service = find(&by_hand, "Service", "podinfo").clone();
    origin_labels(&mut service, "podinfo");
    assert_eq!(find(&ours, "Service", "podinfo"), &service);
    // The post-renderer: a pod annotation and the image mirrored.
    let mut deployment = find(&by_hand, "Deployment", "podinfo").clone();
    origin_labels(&mut deployment, "podinfo");
    deployment["spec"]["template"]["metadata"]["annotations"] =
        json!({"fleet.example.io/cluster": "fleet-dev"});
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/stefanprodan/podinfo:6.5.4"
    );
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("registry.example.net/mirror/podinfo:6.5.4");
    assert_eq!(find(&ours, "Deployment", "podinfo"), &deployment);

    // JSON: the release is an entry of its own, child of its Kustomization.
    let k = kustomization(&json, "dev", PODINFO);
    assert_eq!(k["status"], "rendered");
    assert_eq!(k["objects"].as_array().unwrap().len(), 2);
    let sha = k["sha256"].as_str().unwrap();
    let sums = fs::read_to_string(dir.path().join("out/SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&format!("{sha}  dev/flux-system/{PODINFO}.yaml\n")),
        "{sums}"
    );
    assert_eq!(crate::common::sha256(&fs::read(&file).unwrap()), sha);
}

// helm-controller api/v2 GetReleaseName: `[targetNamespace-]name`; internal/action/crds.go:
// the chart's crds/ are applied (install.crds Create, the default) with the origin labels
// (setOriginVisitor) and without the post-renderers.
#[test]
fn release_name_takes_the_target_namespace_and_crds_get_origin_labels() {
    let (dir, json) = render_helm_out(&[]);
    let text = fs::read_to_string(
        dir.path()
            .join("out/prod/flux-system")
            .join(format!("{WIDGETS}.yaml")),
    )
    .unwrap();
    let ours = yaml_objects(&text);
    let by_hand = helm_template(&[
        "apps-widgets",
        crate_path("testdata/fleet/charts/widgets")
            .to_str()
            .unwrap(),
        "--namespace",
        "apps",
        "--include-crds",
        "--set",
        "widgets[0].name=small,widgets[0].size=1,widgets[1].name=large,widgets[1].size=3",
    ]);
    assert_eq!(ours.len(), 3, "{text}");
    for (kind, name) in [
        ("CustomResourceDefinition", "widgets.example.io"),
        ("Widget", "small"),
        ("Widget", "large"),
    ] {
        let mut expected = find(&by_hand, kind, name).clone();
        origin_labels(&mut expected, "widgets");
        assert_eq!(find(&ours, kind, name), &expected, "{kind}/{name}");
    }
    assert_eq!(
        find(&ours, "Widget", "large")["metadata"]["labels"]["app.kubernetes.io/instance"],
        "apps-widgets"
    );
    // kustomize's legacy order: the CRD first.
    assert_eq!(ours[0]["kind"], "CustomResourceDefinition");
    let note = kustomization(&json, "prod", WIDGETS)["notes"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.starts_with("release apps-widgets in namespace apps, chart GitRepository/flux-system/flux-system ./charts/widgets"),
        "{note}"
    );
}

// helm-controller internal/action/crds.go applyCRDs: policy Skip applies none.
#[test]
fn install_crds_skip_leaves_the_chart_crds_out() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/helm/widgets.yaml",
        "crds: Create",
        "crds: Skip",
    );
    commit_all(repo.path(), "skip crds");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let k = kustomization(&out.json(), "dev", WIDGETS).clone();
    let kinds: Vec<&str> = k["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Widget", "Widget"]);
}

#[test]
fn render_without_helm_has_no_release_and_the_same_kustomization_digests() {
    let plain = fluxsim(&["render", "testdata/fleet", "--format", "json"]);
    let with = fluxsim(&["render", "testdata/fleet", "--format", "json", "--helm"]);
    assert_eq!(plain.code, 0);
    assert_eq!(with.code, 0, "{}", with.stderr);
    assert!(!plain.stdout.contains("/helm/"), "{}", plain.stdout);
    let digests = |json: &Value, releases: bool| -> Vec<(String, String)> {
        crate::common::kustomizations(json)
            .into_iter()
            .filter(|((_, id), _)| id.contains("/helm/") == releases)
            .map(|((c, id), k)| (format!("{c}:{id}"), k["sha256"].to_string()))
            .collect()
    };
    assert_eq!(digests(&plain.json(), false), digests(&with.json(), false));
    assert_eq!(digests(&with.json(), true).len(), 4);
    // The text summary says how many releases and the offline `lookup` caveat.
    let text = fluxsim(&["render", "testdata/fleet", "--helm", "--wide"]);
    assert!(
        text.stdout
            .contains("render: 18/18 Kustomizations rendered in 2 clusters"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains(": 4 releases, 3 distinct (3 templated, 0 from the cache)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("`lookup` returns nothing offline"),
        "{}",
        text.stdout
    );
}

#[test]
fn helm_renders_are_the_same_bytes_whatever_the_jobs() {
    let (one, _) = render_helm_out(&["--jobs", "1"]);
    let (four, _) = render_helm_out(&["--jobs", "4"]);
    assert_eq!(
        crate::common::read_tree(&one.path().join("out")),
        crate::common::read_tree(&four.path().join("out"))
    );
}

/// A HelmRelease of a chart in a HelmRepository, added to the fleet's apps-helm.
pub(crate) fn add_repository_release(repo: &Path, url: &str, version: &str) {
    fs::write(
        repo.join("apps/helm/remote.yaml"),
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\nspec:\n  interval: 1h\n  url: {url}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: remote\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: podinfo\n      version: \"{version}\"\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n  values:\n    replicaCount: 5\n"
        ),
    )
    .unwrap();
    edit(
        repo,
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        "  - widgets.yaml\n  - remote.yaml\n",
    );
    allow_local_server(repo);
}

/// fluxsim.toml letting the fetch box reach the tests' server: plain http on 127.0.0.1.
fn allow_local_server(repo: &Path) {
    fs::write(
        repo.join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
}

// A chart that cannot be had is a status of the release with its reason, never a failed
// run; in a diff it is unchanged only when what it is made from is (its HelmRelease, its
// chart source, its values sources), else not compared.
#[test]
fn a_helm_repository_chart_without_fetch_charts_is_not_fetched_and_compared_by_its_inputs() {
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), "https://charts.example.net", ">=6.0.0");
    commit_all(repo.path(), "remote chart");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let k = kustomization(&out.json(), "dev", "apps-helm/helm/apps/remote").clone();
    assert_eq!(k["status"], "external");
    let why = k["error"].as_str().unwrap();
    assert!(
        why.starts_with("not fetched: chart `podinfo` version `>=6.0.0` from HelmRepository/apps/charts (https://charts.example.net); pass --fetch-charts"),
        "{why}"
    );
    // The table says why too.
    let text = fluxsim_in(
        Some(repo.path()),
        &["render", ".", "--helm", "--cluster", "dev"],
    );
    assert!(
        text.stdout
            .contains("dev: flux-system/apps-helm/helm/apps/remote not fetched: chart `podinfo`"),
        "{}",
        text.stdout
    );
    let diff = fluxsim_in(
        Some(repo.path()),
        &[
            "diff",
            "--base",
            "HEAD",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    let json = diff.json();
    let remote = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| {
            crate::common::ks(&k["kustomization"]) == "flux-system/apps-helm/helm/apps/remote"
        })
        .unwrap()
        .clone();
    // Not fetched in either revision, with its HelmRelease and its chart source the same
    // bytes in both: it installs the same thing in both (compare/external.rs).
    assert_eq!(remote["change"], "external unchanged", "{remote:#}");
    assert_eq!(
        remote["external"],
        "identical in base and head: its HelmRelease object, HelmRepository/apps/charts",
        "{remote:#}"
    );
    // Its HelmRelease changed: not compared, never identical, naming what changed; a
    // warning, which the default does not fail on.
    edit(repo.path(), "apps/helm/remote.yaml", ">=6.0.0", ">=6.1.0");
    let diff = fluxsim_in(
        Some(repo.path()),
        &[
            "diff",
            "--base",
            "HEAD",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    let remote = diff.json()["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| {
            crate::common::ks(&k["kustomization"]) == "flux-system/apps-helm/helm/apps/remote"
        })
        .unwrap()
        .clone();
    assert_eq!(remote["change"], "not compared", "{remote:#}");
    assert!(
        remote["external"]
            .as_str()
            .unwrap()
            .starts_with("HelmRelease/apps/remote changed: spec.chart.spec.version"),
        "{remote:#}"
    );
    assert_eq!(diff.code, 0, "not compared is a warning: {}", diff.stdout);
}

#[test]
fn a_missing_values_from_config_map_fails_the_release_naming_it() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/helm/podinfo.yaml",
        "      name: podinfo-values\n    - kind",
        "      name: podinfo-valuez\n    - kind",
    );
    commit_all(repo.path(), "typo");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "a failed release is a finding: {}", out.stderr);
    let k = kustomization(&out.json(), "dev", PODINFO).clone();
    assert_eq!(k["status"], "failed");
    assert_eq!(
        k["error"],
        "could not resolve ConfigMap reference 'apps/podinfo-valuez': not found"
    );
}

// A values change shows as the Deployment it changes, inside the release's artifact.
#[test]
fn a_values_change_shows_as_a_deployment_diff_in_the_release() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "apps/helm/values.yaml",
        "replicaCount: 2",
        "replicaCount: 4",
    );
    let out = fluxsim_in(
        Some(repo.path()),
        &["diff", "--base", "HEAD", "--helm", "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    for c in json["clusters"].as_array().unwrap() {
        let ks = c["kustomizations"].as_array().unwrap();
        let changed: Vec<String> = ks
            .iter()
            .filter(|k| k["change"] != "identical")
            .map(|k| crate::common::ks(&k["kustomization"]))
            .collect();
        // The ConfigMap of values changes in apps-helm, the Deployment in the release.
        assert_eq!(
            changed,
            [
                "flux-system/apps-helm",
                "flux-system/apps-helm/helm/apps/podinfo"
            ],
            "{c:#}"
        );
        let release = ks
            .iter()
            .find(|k| {
                crate::common::ks(&k["kustomization"]) == "flux-system/apps-helm/helm/apps/podinfo"
            })
            .unwrap();
        let objects = release["objects"].as_array().unwrap();
        assert_eq!(objects.len(), 1, "{objects:#?}");
        assert_eq!(objects[0]["object"]["kind"], "Deployment");
        let diff = objects[0]["diff"].as_str().unwrap();
        assert!(diff.contains("-  replicas: 2\n+  replicas: 4\n"), "{diff}");
    }
}

// `prove --helm`: a canary in the values file that ConfigMap podinfo-values is generated
// from must show up in that ConfigMap's Kustomization and in the release that reads it
// (valuesFrom), in both clusters, and nowhere else; then every digest returns.
#[test]
fn prove_helm_detects_a_canary_in_a_values_file_in_the_release_output() {
    let repo = repo_from("testdata/fleet");
    let out = fluxsim_in(
        Some(repo.path()),
        &["prove", "--base", "HEAD", "--helm", "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let values = json["canaries"]["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scope"] == "values")
        .unwrap_or_else(|| panic!("a values canary: {json:#}"))
        .clone();
    assert_eq!(values["file"], "apps/helm/values.yaml");
    assert_eq!(values["detected"], true, "{values:#}");
    assert_eq!(values["restored"], true, "{values:#}");
    let expected: Vec<String> = values["expected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}:{}",
                t["cluster"].as_str().unwrap(),
                crate::common::ks(&t["kustomization"]).as_str()
            )
        })
        .collect();
    assert_eq!(
        expected,
        [
            "dev:flux-system/apps-helm",
            "dev:flux-system/apps-helm/helm/apps/podinfo",
            "prod:flux-system/apps-helm",
            "prod:flux-system/apps-helm/helm/apps/podinfo"
        ]
    );
    assert_eq!(values["detectedIn"], values["expected"]);
    // With --no-helm there is no release to see it in, and no values canary.
    let plain = fluxsim_in(
        Some(repo.path()),
        &["prove", "--base", "HEAD", "--no-helm", "--format", "json"],
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(!plain.stdout.contains("\"values\""), "{}", plain.stdout);
}

/// A loopback HTTP server for a HelmRepository: serves `files` by path and counts requests.
struct Server {
    url: String,
    hits: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, usize>>>,
}

fn serve(files: std::collections::BTreeMap<String, Vec<u8>>) -> Server {
    use std::io::{BufRead as _, BufReader, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/charts", listener.local_addr().unwrap());
    let hits = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            // Skip the headers.
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            *counted.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
            let (status, body) = match files.get(&path) {
                Some(b) => ("200 OK", b.clone()),
                None => ("404 Not Found", b"not found".to_vec()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    Server { url, hits }
}

/// `helm package` of the fleet's podinfo chart at `version`.
pub(crate) fn package(dir: &Path, version: &str) -> Vec<u8> {
    let out = Command::new("helm")
        .args(["package", "--version", version, "-d"])
        .arg(dir)
        .arg(crate_path("testdata/fleet/charts/podinfo"))
        .output()
        .expect("helm is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::read(dir.join(format!("podinfo-{version}.tgz"))).unwrap()
}

pub(crate) fn render_with_cache(repo: &Path, cache: &Path, args: &[&str]) -> crate::common::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(args)
        .env("FLUXSIM_CACHE_DIR", cache)
        .current_dir(repo)
        .output()
        .unwrap();
    crate::common::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// source-controller internal/helm/repository/chart_repository.go: the index's highest
// version in the range (prereleases only when the range asks for them), the chart's digest
// checked against the index; fetched only with --fetch-charts, then kept in the cache
// folder by digest.
#[test]
fn a_helm_repository_chart_is_fetched_over_http_in_its_version_range_and_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = std::collections::BTreeMap::new();
    let mut index = String::from("apiVersion: v1\nentries:\n  podinfo:\n");
    for (v, created) in [
        ("6.4.0", "2024-01-01T00:00:00Z"),
        ("6.5.0", "2024-02-01T00:00:00Z"),
        ("7.0.0-rc.1", "2024-03-01T00:00:00Z"),
    ] {
        let tgz = package(tmp.path(), v);
        let _ = write!(
            index,
            "  - name: podinfo\n    version: {v}\n    created: \"{created}\"\n    digest: {}\n    urls: [podinfo-{v}.tgz]\n",
            crate::common::sha256(&tgz)
        );
        files.insert(format!("/charts/podinfo-{v}.tgz"), tgz);
    }
    files.insert("/charts/index.yaml".into(), index.into_bytes());
    let server = serve(files);
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), &server.url, ">=6.0.0 <7.0.0");
    commit_all(repo.path(), "remote chart");
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "render",
        ".",
        "--helm",
        "--fetch-charts",
        "--cluster",
        "dev",
        "--format",
        "json",
    ];
    let out = render_with_cache(repo.path(), cache.path(), &args);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let k = kustomization(&out.json(), "dev", "apps-helm/helm/apps/remote").clone();
    assert_eq!(k["status"], "rendered", "{k:#}");
    let note = k["notes"][0].as_str().unwrap();
    assert!(
        note.contains("HelmRepository/apps/charts podinfo@6.5.0"),
        "{note}"
    );
    let deployment = k["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    assert_eq!(deployment["name"], "remote-podinfo");
    let tgz_hits = |s: &Server| {
        s.hits
            .lock()
            .unwrap()
            .get("/charts/podinfo-6.5.0.tgz")
            .copied()
    };
    assert_eq!(tgz_hits(&server), Some(1));
    // Again with the same cache folder: the index is read, the chart is not downloaded.
    let again = render_with_cache(repo.path(), cache.path(), &args);
    assert_eq!(again.stdout, out.stdout);
    assert_eq!(tgz_hits(&server), Some(1));
    assert_eq!(server.hits.lock().unwrap()["/charts/index.yaml"], 2);
}

#[test]
fn a_chart_whose_digest_differs_from_the_index_is_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let tgz = package(tmp.path(), "6.5.0");
    let index = format!(
        "apiVersion: v1\nentries:\n  podinfo:\n  - name: podinfo\n    version: 6.5.0\n    digest: {}\n    urls: [podinfo-6.5.0.tgz]\n",
        "f".repeat(64)
    );
    let server = serve(std::collections::BTreeMap::from([
        ("/charts/index.yaml".to_string(), index.into_bytes()),
        ("/charts/podinfo-6.5.0.tgz".to_string(), tgz),
    ]));
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), &server.url, "6.5.x");
    commit_all(repo.path(), "remote chart");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--helm",
            "--fetch-charts",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let k = kustomization(&out.json(), "dev", "apps-helm/helm/apps/remote").clone();
    assert_eq!(k["status"], "external");
    let why = k["error"].as_str().unwrap();
    assert!(
        why.starts_with("not fetched: ") && why.contains("the index says ffff"),
        "{why}"
    );
}

// source-controller internal/helm/chart/builder_local.go mergeFileValues: valuesFiles
// (paths in the source) replace the chart's values.yaml, merged in order; a missing one
// fails unless ignoreMissingValuesFiles.
#[test]
fn values_files_replace_the_chart_values_and_a_missing_one_fails_the_release() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/helm/podinfo-port.yaml"),
        "service:\n  port: 8080\n",
    )
    .unwrap();
    let with = |files: &str| {
        edit(
            repo.path(),
            "apps/helm/podinfo.yaml",
            "      chart: ./charts/podinfo\n",
            &format!("      chart: ./charts/podinfo\n{files}"),
        );
        commit_all(repo.path(), "values files");
        let out = fluxsim_in(
            Some(repo.path()),
            &[
                "render",
                ".",
                "--helm",
                "--cluster",
                "dev",
                "--format",
                "json",
            ],
        );
        kustomization(&out.json(), "dev", PODINFO).clone()
    };
    let k = with("      valuesFiles: [charts/podinfo/values.yaml, apps/helm/podinfo-port.yaml]\n");
    assert_eq!(k["status"], "rendered", "{k:#}");
    let text = fs::read_to_string(repo.path().join("charts/podinfo/values.yaml")).unwrap();
    assert!(text.contains("port: 9898"));
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "build",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "-k",
            &format!("flux-system/{PODINFO}"),
        ],
    );
    assert!(out.stdout.contains("- --port=8080"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("image: registry.example.net/mirror/podinfo:6.5.4"),
        "the chart's own values.yaml is listed, so its image stays: {}",
        out.stdout
    );

    let repo2 = repo_from("testdata/fleet");
    edit(
        repo2.path(),
        "apps/helm/podinfo.yaml",
        "      chart: ./charts/podinfo\n",
        "      chart: ./charts/podinfo\n      valuesFiles: [apps/helm/missing.yaml]\n",
    );
    commit_all(repo2.path(), "missing values file");
    let out = fluxsim_in(
        Some(repo2.path()),
        &[
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    let k = kustomization(&out.json(), "dev", PODINFO).clone();
    assert_eq!(k["status"], "failed");
    assert!(
        k["error"].as_str().unwrap().contains(
            "no values file found at path '/apps/helm/missing.yaml' (reference 'apps/helm/missing.yaml')"
        ),
        "{k:#}"
    );
}

// Bad input is a status of the release naming what is wrong, never a panic or a failed run.
#[test]
fn a_helm_release_without_a_chart_or_with_a_path_that_holds_none_fails_alone() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/helm/broken.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: nochart\nspec:\n  interval: 1m\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: escape\nspec:\n  chart:\n    spec:\n      chart: ../../../etc\n      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n",
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        "  - widgets.yaml\n  - broken.yaml\n",
    );
    commit_all(repo.path(), "broken releases");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    let k = kustomization(&json, "dev", "apps-helm/helm/apps/nochart");
    assert_eq!(k["status"], "failed");
    assert_eq!(
        k["error"],
        "HelmRelease apps/nochart: neither spec.chart nor spec.chartRef is set"
    );
    // `../` is clamped at the root, as SecureJoin does: nothing outside is read.
    let k = kustomization(&json, "dev", "apps-helm/helm/apps/escape");
    assert_eq!(k["status"], "failed");
    assert_eq!(
        k["error"],
        "no chart at `../../../etc` in GitRepository/flux-system/flux-system: `../../../etc` has no Chart.yaml"
    );
    // The others still render.
    assert_eq!(kustomization(&json, "dev", PODINFO)["status"], "rendered");
}

// A release is made from its chart and the template of the Kustomization that writes its
// values: dev and prod differ in podinfo only through their vars, so `compare --helm` still
// finds the overlay environment-agnostic.
#[test]
fn compare_helm_sees_releases_that_differ_only_by_vars() {
    let out = fluxsim(&["compare", "testdata/fleet", "--helm", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["agnostic"], true);
    let row = json["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| crate::common::ks(&r["kustomization"]) == format!("flux-system/{PODINFO}"))
        .unwrap_or_else(|| panic!("{json:#}"))
        .clone();
    assert_eq!(row["sameTemplate"], true, "{row:#}");
    assert_eq!(row["sameArtifact"], false, "{row:#}");
    assert_eq!(row["differingVars"], json!(["CLUSTER_NAME", "LOG_LEVEL"]));
}

// graph --helm: the CRD groups a chart at hand installs (its release's CRDs) stand for a
// `[[helm_crds]]` declaration, so the Helm presumption (FS215: "if a Helm chart installs
// it") becomes the exact check (FS207) naming the chart; with the dependsOn in place, no
// finding at all where a presumption (FS214) was reported.
#[test]
fn graph_helm_reads_the_chart_crds_so_helm_presumptions_become_exact() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/wave-2/widget.yaml"),
        "apiVersion: example.io/v1\nkind: Widget\nmetadata:\n  name: edge\nspec:\n  size: 2\n",
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/wave-2/kustomization.yaml",
        "resources:\n",
        "resources:\n  - widget.yaml\n",
    );
    commit_all(repo.path(), "a Widget in wave 2");
    let rules = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["graph", ".", "--cluster", "dev", "--format", "json"];
        all.extend_from_slice(args);
        let out = fluxsim_in(Some(repo.path()), &all);
        out.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(rules(&[]), ["FS215"]);
    assert_eq!(rules(&["--helm"]), ["FS207"]);
    edit(
        repo.path(),
        "clusters/base/apps.yaml",
        "    - name: apps-wave-1\n",
        "    - name: apps-wave-1\n    - name: apps-helm\n",
    );
    commit_all(repo.path(), "wave 2 waits for apps-helm");
    assert_eq!(rules(&[]), ["FS214"]);
    assert!(rules(&["--helm"]).is_empty());
}

// A chart in another GitRepository is rendered from the folder `--source` maps it to (as
// Kustomizations on that source are), and is not fetched without the mapping.
#[test]
fn a_chart_in_another_git_repository_is_read_from_its_source_mapping() {
    let repo = repo_from("testdata/fleet");
    fs::create_dir_all(repo.path().join("vendor/charts-repo")).unwrap();
    crate::common::copy_dir(
        &crate_path("testdata/fleet/charts/widgets"),
        &repo.path().join("vendor/charts-repo/widgets"),
    );
    edit(
        repo.path(),
        "apps/helm/widgets.yaml",
        "      chart: ./charts/widgets\n      sourceRef:\n        kind: GitRepository\n        name: flux-system\n",
        "      chart: ./widgets\n      sourceRef:\n        kind: GitRepository\n        name: charts\n",
    );
    commit_all(repo.path(), "widgets from another repository");
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = fluxsim_in(Some(repo.path()), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        kustomization(&out.json(), "dev", WIDGETS).clone()
    };
    let k = render(&[]);
    assert_eq!(k["status"], "external");
    assert!(
        k["error"]
            .as_str()
            .unwrap()
            .contains("--source GitRepository/flux-system/charts=PATH"),
        "{k:#}"
    );
    let k = render(&[
        "--source",
        "GitRepository/flux-system/charts=vendor/charts-repo",
    ]);
    assert_eq!(k["status"], "rendered", "{k:#}");
    assert_eq!(k["objects"].as_array().unwrap().len(), 3);
}

// audit --helm (FS114): a `${...}` of the merged values that the Kustomization applying the
// HelmRelease does not substitute reaches the release's objects verbatim.
#[test]
fn audit_helm_reports_values_expressions_that_reach_the_release_verbatim() {
    let clean = fluxsim(&["audit", "testdata/fleet", "--helm", "--format", "json"]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    assert!(!clean.stdout.contains("FS114"), "{}", clean.stdout);

    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/base/apps-helm.yaml",
        "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n",
        "",
    );
    commit_all(repo.path(), "apps-helm without postBuild");
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "audit",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
    );
    let json = out.json();
    let found: Vec<(String, String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS114")
        .map(|f| {
            let about = |role: &str| {
                f["related"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["role"] == role)
                    .map(|r| r["value"].as_str().unwrap().to_string())
                    .unwrap()
            };
            (
                about("expression"),
                about("object"),
                f["location"]["file"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "${CLUSTER_NAME}".to_string(),
                "Deployment.apps/apps/podinfo".to_string(),
                "apps/helm/podinfo.yaml".to_string()
            ),
            (
                "${LOG_LEVEL}".to_string(),
                "Deployment.apps/apps/podinfo".to_string(),
                "apps/helm/podinfo.yaml".to_string()
            ),
            (
                "${WIDGET_SIZE:=3}".to_string(),
                "Widget.example.io/apps/large".to_string(),
                "apps/helm/widgets.yaml".to_string()
            ),
        ],
        "{json:#}"
    );
}

#[test]
fn a_helm_binary_that_cannot_run_is_a_usage_error_naming_it() {
    let out = fluxsim(&[
        "render",
        "testdata/fleet",
        "--helm",
        "--helm-binary",
        "/nonexistent/helm",
    ]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("/nonexistent/helm"), "{}", out.stderr);
    // Without --helm the same flag is refused: it means nothing alone.
    let out = fluxsim(&["render", "testdata/fleet", "--helm-binary", "/x"]);
    assert_eq!(out.code, 2);
}

// `[helm_controller]` of fluxsim.toml: the Capabilities helm templates with.
#[test]
fn kube_version_and_api_versions_come_from_fluxsim_toml() {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("charts/widgets/templates/caps.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n  monitoring: {{ .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1\" | quote }}\n",
    )
    .unwrap();
    commit_all(repo.path(), "a template that reads Capabilities");
    let caps = |repo: &Path| -> (i32, Value) {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("out");
        let out = fluxsim_in(
            Some(repo),
            &[
                "render",
                ".",
                "--helm",
                "--cluster",
                "dev",
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        let text = fs::read_to_string(
            out_dir
                .join("dev/flux-system")
                .join(format!("{WIDGETS}.yaml")),
        )
        .unwrap_or_default();
        let cm = yaml_objects(&text)
            .into_iter()
            .find(|o| o["kind"] == "ConfigMap")
            .map_or(Value::Null, |o| o["data"].clone());
        (out.code, cm)
    };
    let (code, data) = caps(repo.path());
    assert_eq!(code, 0);
    assert_eq!(data["monitoring"], "false");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[helm_controller]\nkube_version = \"1.31.4\"\napi_versions = [\"monitoring.coreos.com/v1\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "capabilities in fluxsim.toml");
    let (code, data) = caps(repo.path());
    assert_eq!(code, 0);
    assert_eq!(data, json!({"kube": "v1.31.4", "monitoring": "true"}));
    // A key the table does not know is an input error naming the file.
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[helm_controller]\nkube = \"1.31\"\n",
    )
    .unwrap();
    commit_all(repo.path(), "a typo");
    let out = fluxsim_in(Some(repo.path()), &["render", ".", "--helm"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("fluxsim.toml"), "{}", out.stderr);
}

// A chart is no input of the Kustomization that applies its HelmRelease: `--changed-only`
// skips that Kustomization, and the release still sees the chart's change.
#[test]
fn a_chart_change_shows_in_the_release_even_with_changed_only() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "charts/podinfo/templates/service.yaml",
        "protocol: TCP",
        "protocol: UDP",
    );
    let out = fluxsim_in(
        Some(repo.path()),
        &[
            "diff",
            "--base",
            "HEAD",
            "--helm",
            "--changed-only",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for c in out.json()["clusters"].as_array().unwrap() {
        let changed: Vec<String> = c["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["change"] != "identical")
            .map(|k| crate::common::ks(&k["kustomization"]))
            .collect();
        assert_eq!(changed, [format!("flux-system/{PODINFO}")], "{c:#}");
    }
}

// `images --helm`: what the releases' pod templates run, after the post-renderers' images.
#[test]
fn images_helm_lists_what_the_release_runs() {
    let plain = fluxsim(&["images", "testdata/fleet", "--cluster", "dev"]);
    assert!(!plain.stdout.contains("mirror/podinfo"), "{}", plain.stdout);
    let out = fluxsim(&[
        "images",
        "testdata/fleet",
        "--cluster",
        "dev",
        "--helm",
        "--wide",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("registry.example.net/mirror/podinfo:6.5.4"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains(&format!("flux-system/{PODINFO}")), "{line}");
}

// OCI charts with --fetch-charts (source-controller's OCI chart repository and OCIRepository):
// the tags listed by the registry (distribution API), the version picked in the range, the
// manifest's Helm chart layer fetched and checked against its digest.
#[test]
fn oci_charts_are_fetched_from_a_registry_by_tag_range() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = std::collections::BTreeMap::new();
    for v in ["6.4.0", "6.5.0"] {
        let tgz = package(tmp.path(), v);
        let digest = format!("sha256:{}", crate::common::sha256(&tgz));
        let manifest = json!({
            "schemaVersion": 2,
            "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": "sha256:00", "size": 0},
            "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest, "size": tgz.len()}],
        });
        files.insert(
            format!("/v2/charts/podinfo/manifests/{v}"),
            manifest.to_string().into_bytes(),
        );
        files.insert(format!("/v2/charts/podinfo/blobs/{digest}"), tgz);
    }
    files.insert(
        "/v2/charts/podinfo/tags/list".into(),
        br#"{"name":"charts/podinfo","tags":["6.4.0","6.5.0"]}"#.to_vec(),
    );
    let server = serve(files);
    let host = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/charts");
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/helm/remote.yaml"),
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: oci-charts\nspec:\n  type: oci\n  insecure: true\n  url: oci://{host}/charts\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: from-repo\nspec:\n  chart:\n    spec:\n      chart: podinfo\n      version: \"6.x\"\n      sourceRef: {{kind: HelmRepository, name: oci-charts}}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: podinfo\nspec:\n  insecure: true\n  url: oci://{host}/charts/podinfo\n  ref:\n    semver: \"<6.5.0\"\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: from-ref\nspec:\n  chartRef: {{kind: OCIRepository, name: podinfo}}\n"
        ),
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        "  - widgets.yaml\n  - remote.yaml\n",
    );
    allow_local_server(repo.path());
    commit_all(repo.path(), "OCI charts");
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            ".",
            "--helm",
            "--cluster",
            "dev",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = fluxsim_in(Some(repo.path()), &args);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        out.json()
    };
    let offline = render(&[]);
    for name in ["from-repo", "from-ref"] {
        let k = kustomization(&offline, "dev", &format!("apps-helm/helm/apps/{name}"));
        assert_eq!(k["status"], "external", "{k:#}");
    }
    let json = render(&["--fetch-charts"]);
    let chart_label = |name: &str| {
        let k = kustomization(&json, "dev", &format!("apps-helm/helm/apps/{name}"));
        assert_eq!(k["status"], "rendered", "{k:#}");
        k["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .map(|o| o["name"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(chart_label("from-repo"), "from-repo-podinfo");
    assert_eq!(chart_label("from-ref"), "from-ref-podinfo");
    let note = |name: &str| {
        kustomization(&json, "dev", &format!("apps-helm/helm/apps/{name}"))["notes"][0]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        note("from-repo").contains("podinfo@6.5.0"),
        "{}",
        note("from-repo")
    );
    assert!(
        note("from-ref").contains("/charts/podinfo:6.4.0"),
        "{}",
        note("from-ref")
    );
}

// `diff` and `prove` render HelmReleases by default (issue 39): a change of a chart of the
// tree shows in its releases without `--helm`; `--no-helm` turns them off (and the diff is
// then blind to the chart, as before); without a helm binary the Kustomizations are still
// compared, with a warning that names what is not.
#[test]
fn diff_renders_helm_releases_by_default_and_no_helm_turns_them_off() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "charts/podinfo/templates/service.yaml",
        "protocol: TCP",
        "protocol: UDP",
    );
    let changed = |out: &crate::common::Output| -> Vec<String> {
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        out.json()["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["kustomizations"].as_array().unwrap().iter())
            .filter(|k| k["change"] != "identical")
            .map(|k| crate::common::ks(&k["kustomization"]))
            .collect()
    };
    let diff = ["diff", "--base", "HEAD", "--format", "json"];
    let default = fluxsim_in(Some(repo.path()), &diff);
    let release = format!("flux-system/{PODINFO}");
    assert_eq!(
        changed(&default),
        [release.clone(), release],
        "{}",
        default.stdout
    );
    // The count of what head took from base counts Kustomizations, not release entries.
    let text = fluxsim_in(Some(repo.path()), &["diff", "--base", "HEAD"]);
    assert!(
        text.stdout
            .contains(" of 18 Kustomizations taken from base"),
        "{}",
        text.stdout
    );
    let off = fluxsim_in(Some(repo.path()), &[&diff[..], &["--no-helm"]].concat());
    assert_eq!(changed(&off), Vec::<String>::new());
    assert!(!off.stdout.contains("/helm/"), "{}", off.stdout);
    // `--no-helm` with `--helm` is a usage error.
    let both = fluxsim_in(
        Some(repo.path()),
        &["diff", "--base", "HEAD", "--helm", "--no-helm"],
    );
    assert_eq!(both.code, 2, "{}", both.stderr);
    // No helm on PATH (git and kustomize only): the diff goes on without releases, and says so.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "kustomize"] {
        if let Some(p) = crate::common::which(tool) {
            std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(diff)
        .current_dir(repo.path())
        .env("PATH", bin.path())
        .env("FLUXSIM_CACHE_DIR", bin.path().join("cache"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("HelmReleases are not rendered: no helm found on PATH"),
        "{stderr}"
    );
    assert!(!stdout.contains("/helm/"), "{stdout}");
    // With `--helm`, a missing helm is a usage error.
    let asked = std::process::Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(diff)
        .arg("--helm")
        .current_dir(repo.path())
        .env("PATH", bin.path())
        .env("FLUXSIM_CACHE_DIR", bin.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(asked.status.code(), Some(2));
}
