//! A pull request written to make fluxsim reach the network, read files of the machine, run
//! its tools with the runner's secrets or never finish (issue: "Safe on untrusted pull
//! requests, second round"). Each case is a repository made in a temporary folder beside a
//! file with a marker, run with a local HTTP server on 127.0.0.1 that records every request:
//! no marker may appear in any output, cache or report, no request may reach the server
//! without `--allow-network`, and every bound ends in fluxsim's own error.

use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::common::{commit_all, kustomization, read_tree};

/// In a file beside the repository (`../outside.yaml` of its root).
const OUTSIDE_MARKER: &str = "outside-marker-3c9e1f";
/// In the repository's `.git/config` (as `actions/checkout` stores its token there).
const GIT_MARKER: &str = "AUTHORIZATION: basic git-token-marker-77d1";
/// In fluxsim's environment (as `GITHUB_TOKEN` is in CI).
const ENV_MARKER: &str = "env-token-marker-5a02";
/// What the local server answers: were it fetched, it would show in the render.
const SERVED_MARKER: &str = "served-marker-e41b";

/// A server on 127.0.0.1 that answers every request with a ConfigMap holding
/// [`SERVED_MARKER`] and records the request lines.
struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                seen.lock()
                    .unwrap()
                    .push(text.lines().next().unwrap_or("(connection)").to_string());
                let body = format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: served\ndata:\n  v: {SERVED_MARKER}\n"
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Server { port, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// The cluster root of every hostile repository: a GitRepository and the root
/// Kustomization of `clusters/test`, plus one Flux Kustomization per app folder.
fn cluster_files(apps: &[&str]) -> Vec<(String, String)> {
    let mut root = String::from(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  ref: {branch: main}\n  url: ssh://git@example.internal/fleet.git\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/test\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    for app in apps {
        let _ = write!(
            root,
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {app}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/{app}\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        );
    }
    vec![("clusters/test/flux-system.yaml".into(), root)]
}

const HEALTHY: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: healthy\ndata:\n  a: b\n";

/// A git repository in `top/repo` holding `files` (and a healthy app), with the markers
/// around it; `top/outside.yaml` holds a ConfigMap with [`OUTSIDE_MARKER`].
fn hostile(files: &[(&str, &str)], apps: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("repo");
    let mut all = cluster_files(&[apps, &["healthy"]].concat());
    all.push(("apps/healthy/configmap.yaml".into(), HEALTHY.into()));
    all.extend(
        files
            .iter()
            .map(|(p, c)| ((*p).to_string(), (*c).to_string())),
    );
    for (path, content) in &all {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    crate::common::git(&root, &["init", "-q", "-b", "main"]);
    crate::common::git(&root, &["config", "http.extraheader", GIT_MARKER]);
    commit_all(&root, "hostile");
    fs::write(
        top.path().join("outside.yaml"),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\ndata:\n  v: {OUTSIDE_MARKER}\n"),
    )
    .unwrap();
    (top, root)
}

/// What a run printed and left behind.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    /// Every file of `--out` and of the cache.
    written: Vec<(String, String)>,
}

impl Run {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }

    /// No marker of the machine, the environment, the repository's `.git` or the server
    /// anywhere.
    fn assert_nothing_leaked(&self) {
        let mut texts = vec![
            ("stdout".to_string(), self.stdout.clone()),
            ("stderr".to_string(), self.stderr.clone()),
        ];
        texts.extend(self.written.iter().cloned());
        for (what, text) in texts {
            for marker in [
                OUTSIDE_MARKER,
                GIT_MARKER,
                "git-token-marker",
                ENV_MARKER,
                SERVED_MARKER,
                "root:x:0:0",
            ] {
                assert!(!text.contains(marker), "{what} holds {marker}:\n{text}");
            }
        }
    }
}

fn run_in(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let top = root.parent().unwrap();
    let cache = top.join("cache");
    let out = top.join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxsim"));
    cmd.args(args)
        .env("FLUXSIM_CACHE_DIR", &cache)
        .env("FLUXSIM_TEST_TOKEN", ENV_MARKER)
        .env("GITHUB_TOKEN", ENV_MARKER)
        .current_dir(root);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if args.contains(&"render") {
        cmd.arg("--out").arg(&out);
    }
    let o = cmd.output().unwrap();
    let mut written = Vec::new();
    for dir in [&out, &cache] {
        if dir.exists() {
            for (path, bytes) in read_tree(dir) {
                written.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        written,
    }
}

fn render(root: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["render", ".", "--format", "json"];
    args.extend_from_slice(extra);
    run_in(root, &args, &[])
}

/// Remote resources and URLs in every file field: without `--allow-network` each such
/// Kustomization is `needs-network`, names what it would fetch, and nothing reaches the
/// server, whichever builder runs; with it, kustomize fetches it (the check can fail).
#[test]
fn remote_resources_and_urls_in_file_fields_need_the_network_and_reach_nothing() {
    let server = Server::start();
    let url = server.url("x.yaml");
    let cases: Vec<(&str, String)> = vec![
        ("remote", format!("resources:\n- {url}\n")),
        (
            "gitfile",
            "resources:\n- git::file:///another/checkout//app\n".to_string(),
        ),
        (
            "generator",
            format!("configMapGenerator:\n- name: c\n  files:\n  - creds={url}\n"),
        ),
        (
            "openapi",
            format!("openapi:\n  path: {url}\nresources: [cm.yaml]\n"),
        ),
        ("crds", format!("crds:\n- {url}\nresources: [cm.yaml]\n")),
        (
            "patch",
            format!("resources: [cm.yaml]\npatches:\n- path: {url}\n"),
        ),
        (
            "configurations",
            format!("configurations:\n- {url}\nresources: [cm.yaml]\n"),
        ),
        (
            "transformer",
            format!(
                "resources: [cm.yaml]\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {{name: p}}\n  path: {url}\n"
            ),
        ),
    ];
    let mut files: Vec<(String, String)> = Vec::new();
    for (name, k) in &cases {
        files.push((format!("apps/{name}/kustomization.yaml"), k.clone()));
        files.push((
            format!("apps/{name}/cm.yaml"),
            HEALTHY.replace("healthy", name),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let names: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    let (_top, root) = hostile(&refs, &names);
    for builder in ["auto", "kustomize", "native"] {
        let run = render(&root, &["--builder", builder]);
        let json = run.json();
        for (name, _) in &cases {
            let k = kustomization(&json, "test", name);
            assert_eq!(k["status"], "needs-network", "{builder} {name}: {k:#}");
            let err = k["error"].as_str().unwrap();
            assert!(
                err.contains("over the network") && err.contains("--network any"),
                "{builder} {name}: {err}"
            );
        }
        assert_eq!(
            kustomization(&json, "test", "healthy")["status"],
            "rendered"
        );
        // A known limit, not a failure: the render itself passes.
        assert_eq!(run.code, 0, "{builder}: {}", run.stderr);
        run.assert_nothing_leaked();
        assert_eq!(server.requests(), Vec::<String>::new(), "{builder}");
    }
    // Allowed, but the server is plain http on a loopback address: the fetch box refuses
    // both before kustomize runs.
    let boxed = render(&root, &["--allow-network"]);
    let k = kustomization(&boxed.json(), "test", "remote").clone();
    assert_eq!(k["status"], "needs-network", "{k:#}");
    let err = k["error"].as_str().unwrap();
    assert!(err.contains("plain http"), "{err}");
    assert_eq!(server.requests(), Vec::<String>::new());
    // The positive control: allowed, and fluxsim.toml names the host as insecure and
    // private, kustomize fetches the remote resource.
    fs::write(
        root.join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    commit_all(&root, "the local server");
    let allowed = render(&root, &["--allow-network"]);
    let k = kustomization(&allowed.json(), "test", "remote").clone();
    assert_eq!(k["status"], "rendered", "{k:#}\n{}", allowed.stderr);
    assert!(
        !server.requests().is_empty(),
        "the allowed fetch reached nothing"
    );
}

/// A Kustomization whose build reads URLs (a remote resource, a generator's file, a patch)
/// is read offline with them left out, for the Flux Kustomizations its own files declare:
/// those render, and still nothing reaches the server, whichever builder runs.
#[test]
fn what_a_kustomization_that_needs_the_network_declares_is_read_without_reaching_it() {
    let server = Server::start();
    let parent = format!(
        "resources:\n- child.yaml\n- {}\n- ../base\npatches:\n- path: {}\nconfigMapGenerator:\n- name: g\n  files:\n  - f.json={}\n",
        server.url("r.yaml"),
        server.url("p.yaml"),
        server.url("f.json"),
    );
    let base = format!("resources:\n- {}\n- cm.yaml\n", server.url("b.yaml"));
    let child = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: child\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/child\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let (_top, root) = hostile(
        &[
            ("apps/parent/kustomization.yaml", &parent),
            ("apps/parent/child.yaml", child),
            ("apps/base/kustomization.yaml", &base),
            ("apps/base/cm.yaml", &HEALTHY.replace("healthy", "base")),
            ("apps/child/cm.yaml", &HEALTHY.replace("healthy", "child")),
        ],
        &["parent"],
    );
    for builder in ["auto", "kustomize", "native"] {
        let run = render(&root, &["--builder", builder]);
        let json = run.json();
        assert_eq!(
            kustomization(&json, "test", "parent")["status"],
            "needs-network",
            "{builder}"
        );
        let k = kustomization(&json, "test", "child");
        assert_eq!(k["status"], "rendered", "{builder}: {k:#}\n{}", run.stderr);
        assert_eq!(run.code, 0, "{builder}: {}", run.stderr);
        run.assert_nothing_leaked();
        assert_eq!(server.requests(), Vec::<String>::new(), "{builder}");
    }
}

/// `[network] allow = true` in fluxsim.toml opens the network for a render of the tree, and
/// for a diff only when the base has the same file: a pull request cannot add it.
#[test]
fn a_pull_request_cannot_allow_the_network_for_itself_in_fluxsim_toml() {
    let server = Server::start();
    let k = format!("resources:\n- {}\n", server.url("y.yaml"));
    let (_top, root) = hostile(&[("apps/remote/kustomization.yaml", &k)], &["remote"]);
    let base = crate::common::git(&root, &["rev-parse", "HEAD"]);
    fs::write(
        root.join("fluxsim.toml"),
        "[network]\nallow = true\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    commit_all(&root, "allow the network");
    let diff = run_in(
        &root,
        &["diff", ".", "--base", base.trim(), "--format", "json"],
        &[],
    );
    assert!(diff.code <= 1, "{}", diff.stderr);
    assert_eq!(server.requests(), Vec::<String>::new());
    assert!(diff.stdout.contains("needs-network"), "{}", diff.stdout);
    diff.assert_nothing_leaked();
    // The same file in base and head: the base allowed it, so the head may fetch.
    let same = run_in(
        &root,
        &["diff", ".", "--base", "HEAD", "--format", "json"],
        &[],
    );
    assert!(same.code <= 1, "{}", same.stderr);
    assert!(
        !server.requests().is_empty(),
        "the allowed fetch reached nothing"
    );
}

/// The kustomize binary runs in the tool box: a fake kustomize that prints its environment,
/// working folder and what it can read as a ConfigMap shows none of fluxsim's environment,
/// the repository or the machine's files.
#[cfg(target_os = "linux")]
#[test]
fn the_kustomize_binary_runs_with_a_cleared_environment_outside_the_repository() {
    use std::os::unix::fs::PermissionsExt;
    let (top, root) = hostile(&[], &[]);
    let fake = top.path().join("kustomize");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = version ]; then echo v5.8.1; exit 0; fi\n\
             printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: box\\ndata:\\n'\n\
             printf '  env: \"%s\"\\n' \"$(env | tr '\\n\"' ' _')\"\n\
             printf '  pwd: \"%s\"\\n' \"$(pwd)\"\n\
             printf '  git: \"%s\"\\n' \"$(cat {git} 2>&1 | tr '\\n\"' ' _')\"\n\
             printf '  outside: \"%s\"\\n' \"$(cat {outside} 2>&1 | tr '\\n\"' ' _')\"\n",
            git = root.join(".git/config").display(),
            outside = top.path().join("outside.yaml").display(),
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let run = render(
        &root,
        &[
            "--builder",
            "kustomize",
            "--kustomize",
            fake.to_str().unwrap(),
        ],
    );
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}{}", run.stderr);
    let box_cm = run
        .written
        .iter()
        .find(|(_, text)| text.contains("name: box"))
        .map(|(_, t)| t.clone())
        .expect("the fake kustomize's output");
    assert!(!box_cm.contains(ENV_MARKER), "{box_cm}");
    assert!(!box_cm.contains("GITHUB_TOKEN"), "{box_cm}");
    let pwd = box_cm.lines().find(|l| l.contains("pwd:")).unwrap();
    assert!(!pwd.contains(&root.display().to_string()), "{pwd}");
    if fluxsim::sandbox::isolation().landlock_abi >= 1 {
        assert!(!box_cm.contains("git-token-marker"), "{box_cm}");
        assert!(!box_cm.contains(OUTSIDE_MARKER), "{box_cm}");
    }
}

/// helm-controller's post-renderer patches have no `path` (fluxcd/pkg apis/kustomize `Patch`
/// is `patch` and `target`; the API server prunes the rest): one naming a file of the
/// machine, or `/dev/zero`, reads nothing and ends. Beside a `patch`, the release renders
/// with that patch; alone, the entry is empty and kustomize refuses it, as it refuses it in
/// helm-controller.
#[test]
fn post_renderer_patch_paths_read_nothing_outside_the_repository() {
    let (top, root) = hostile(&[], &[]);
    let release = format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: pr\n  namespace: flux-system\nspec:\n  interval: 1m\n  chart:\n    spec:\n      chart: ./charts/c\n      sourceRef: {{kind: GitRepository, name: flux-system, namespace: flux-system}}\n  postRenderers:\n  - kustomize:\n      patches:\n      - path: {outside}\n        patch: '[{{\"op\": \"add\", \"path\": \"/data/p\", \"value\": \"patched\"}}]'\n        target: {{kind: ConfigMap}}\n      - path: ../../outside.yaml\n        patch: '[{{\"op\": \"add\", \"path\": \"/data/q\", \"value\": \"patched\"}}]'\n        target: {{kind: ConfigMap}}\n      - path: /dev/zero\n        patch: '[{{\"op\": \"add\", \"path\": \"/data/r\", \"value\": \"patched\"}}]'\n        target: {{kind: ConfigMap}}\n      - path: {git}\n        patch: '[{{\"op\": \"add\", \"path\": \"/data/s\", \"value\": \"patched\"}}]'\n        target: {{kind: ConfigMap}}\n---\n{alone}",
        alone = release_yaml("alone", "c", None) + "  postRenderers:\n  - kustomize:\n      patches:\n      - path: /dev/zero\n",
        outside = top.path().join("outside.yaml").display(),
        git = root.join(".git/config").display(),
    );
    write_chart(
        &root,
        "c",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chart\ndata:\n  a: b\n",
    );
    fs::write(root.join("apps/healthy/release.yaml"), release).unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, release.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "post-renderer paths");
    let run = render(&root, &["--helm"]);
    let json = run.json();
    let entry = kustomization(&json, "test", "healthy/helm/flux-system/pr");
    assert_eq!(entry["status"], "rendered", "{entry:#}");
    let text: String = run
        .written
        .iter()
        .filter(|(p, _)| p.contains("helm/flux-system/pr"))
        .map(|(_, t)| t.as_str())
        .collect();
    for key in ["p: patched", "q: patched", "r: patched", "s: patched"] {
        assert!(text.contains(key), "{key} in {text}");
    }
    let alone = kustomization(&json, "test", "healthy/helm/flux-system/alone");
    assert_eq!(alone["status"], "failed", "{alone:#}");
    assert!(
        alone["error"]
            .as_str()
            .unwrap()
            .contains("must specify one of patch and path"),
        "{alone:#}"
    );
    run.assert_nothing_leaked();
}

fn write_chart(root: &Path, name: &str, template: &str) {
    let dir = root.join("charts").join(name);
    fs::create_dir_all(dir.join("templates")).unwrap();
    fs::write(
        dir.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n"),
    )
    .unwrap();
    fs::write(dir.join("templates/t.yaml"), template).unwrap();
}

fn release_yaml(name: &str, chart: &str, release_name: Option<&str>) -> String {
    let rn = release_name.map_or(String::new(), |r| format!("  releaseName: \"{r}\"\n"));
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 1m\n{rn}  chart:\n    spec:\n      chart: ./charts/{chart}\n      sourceRef: {{kind: GitRepository, name: flux-system, namespace: flux-system}}\n"
    )
}

/// A release name from the repository never becomes a helm flag: `--set-file` would put the
/// checkout's token into the comment, `--output-dir` would write anywhere. helm's own rule
/// refuses both (pkg/chart/v2/util/validate_name.go), before helm runs.
#[test]
fn a_release_name_is_never_read_as_a_helm_flag() {
    let (top, root) = hostile(&[], &[]);
    write_chart(
        &root,
        "leak",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  leak: {{ .Values.leak | quote }}\n",
    );
    let written = top.path().join("written");
    let releases = [
        release_yaml("setfile", "leak", Some("--set-file=leak=.git/config")),
        release_yaml(
            "outdir",
            "leak",
            Some(&format!("--output-dir={}", written.display())),
        ),
    ]
    .join("---\n");
    fs::write(root.join("apps/healthy/releases.yaml"), releases).unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, releases.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "release names as flags");
    let run = render(&root, &["--helm"]);
    let json = run.json();
    for name in ["setfile", "outdir"] {
        let entry = kustomization(&json, "test", &format!("healthy/helm/flux-system/{name}"));
        assert_eq!(entry["status"], "failed", "{entry:#}");
        assert!(
            entry["error"]
                .as_str()
                .unwrap()
                .contains("invalid release name"),
            "{entry:#}"
        );
    }
    assert!(!written.exists(), "helm wrote outside --out");
    run.assert_nothing_leaked();
}

/// A chart schema's `$ref` to a file of the machine is never followed, one to the network
/// needs `--allow-network`; nothing reaches the server.
#[test]
fn a_chart_schema_ref_outside_the_chart_is_not_followed() {
    let server = Server::start();
    let (top, root) = hostile(&[], &[]);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: b\n";
    write_chart(&root, "fileref", cm);
    fs::write(
        root.join("charts/fileref/values.schema.json"),
        format!(
            r#"{{"properties": {{"a": {{"$ref": "file://{}"}}}}}}"#,
            top.path().join("outside.yaml").display()
        ),
    )
    .unwrap();
    write_chart(&root, "netref", cm);
    fs::write(
        root.join("charts/netref/values.schema.json"),
        format!(
            r#"{{"properties": {{"a": {{"$ref": "{}"}}}}}}"#,
            server.url("schema.json")
        ),
    )
    .unwrap();
    let releases = [
        release_yaml("fileref", "fileref", None),
        release_yaml("netref", "netref", None),
    ]
    .join("---\n");
    fs::write(root.join("apps/healthy/releases.yaml"), releases).unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, releases.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "schema refs");
    let run = render(&root, &["--helm"]);
    let json = run.json();
    let file = kustomization(&json, "test", "healthy/helm/flux-system/fileref");
    assert_eq!(file["status"], "failed", "{file:#}");
    assert!(file["error"].as_str().unwrap().contains("never follows"));
    let net = kustomization(&json, "test", "healthy/helm/flux-system/netref");
    assert_eq!(net["status"], "needs-network", "{net:#}");
    assert_eq!(server.requests(), Vec::<String>::new());
    run.assert_nothing_leaked();
}

/// A template that loops two billion times grows helm's memory until fluxsim's bound stops
/// it, with fluxsim's error, not the machine's allocator's.
#[test]
fn a_runaway_helm_template_ends_with_fluxsim_s_bound() {
    let (_top, root) = hostile(&[], &[]);
    write_chart(
        &root,
        "loop",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loop\ndata:\n{{- range until 2000000000 }}\n  k{{ . }}: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n{{- end }}\n",
    );
    fs::write(
        root.join("apps/healthy/release.yaml"),
        release_yaml("loop", "loop", None),
    )
    .unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, release.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "runaway template");
    let run = render(&root, &["--helm", "--timeout", "300"]);
    let json = run.json();
    let entry = kustomization(&json, "test", "healthy/helm/flux-system/loop");
    assert_eq!(entry["status"], "failed", "{entry:#}");
    let err = entry["error"].as_str().unwrap();
    assert!(
        err.contains("fluxsim's memory bound") || err.contains("fluxsim's bound"),
        "fluxsim's own bound: {err}"
    );
}

/// Killed outright (SIGKILL: no handler runs), fluxsim leaves no tool behind: the kernel ends
/// each tool it started (`PR_SET_PDEATHSIG`).
#[cfg(target_os = "linux")]
#[test]
fn a_tool_dies_with_fluxsim_even_on_sigkill() {
    use std::os::unix::fs::PermissionsExt;
    let (top, root) = hostile(&[], &[]);
    let marker = top
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let fake = top.path().join("kustomize");
    fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = version ]; then echo v5.8.1; exit 0; fi\nexec sleep 300\n",
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args([
            "render",
            ".",
            "--no-cache",
            "--builder",
            "kustomize",
            "--kustomize",
        ])
        .arg(&fake)
        .current_dir(&root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The fake's `exec sleep 300` keeps its path out of the command line: wait for a
    // `sleep 300` whose parent is fluxsim.
    let fluxsim_pid = child.id().to_string();
    let sleeping = || -> Vec<String> {
        fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            .filter(|p| {
                let cmd = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                let stat = fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                let ppid = stat
                    .rsplit(") ")
                    .next()
                    .and_then(|rest| rest.split(' ').nth(1))
                    .unwrap_or_default()
                    .to_string();
                cmd.starts_with(b"sleep\x00300") && ppid == fluxsim_pid && !stat.contains(") Z ")
            })
            .collect()
    };
    let started = (0..1000).find_map(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let s = sleeping();
        (!s.is_empty()).then_some(s)
    });
    let started = started.expect("the fake kustomize never ran");
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        started.iter().all(|p| {
            fs::read_to_string(format!("/proc/{p}/stat")).map_or(true, |s| s.contains(") Z "))
        })
    });
    assert!(gone, "the tool outlived fluxsim ({marker})");
}

/// A ResourceSet in the `healthy` app with `resources` as given (YAML list items).
fn resourceset_yaml(name: &str, resources: &str) -> String {
    format!(
        "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: {name:?}\n  \
         namespace: flux-system\nspec:\n  inputs:\n    - tenant: a\n  resources:\n{resources}"
    )
}

/// A ResourceSet's template that tries to read the machine's files, its environment or the
/// network: flux-operator's template functions are slim-sprig's hermetic set (no `env`, no
/// `readFile`, no network: internal/builder/resourceset.go), so the build fails with the
/// operator's error, and nothing leaks; the rest of the repository renders.
#[test]
fn a_resourceset_template_cannot_read_files_the_environment_or_the_network() {
    let server = Server::start();
    let (_top, root) = hostile(&[], &[]);
    let attempts = [
        (
            "files",
            format!(
                "<< readFile {:?} >>",
                root.parent().unwrap().join("outside.yaml").display()
            ),
        ),
        ("env", "<< env \"FLUXSIM_TEST_TOKEN\" >>".to_string()),
        ("expandenv", "<< expandenv \"$GITHUB_TOKEN\" >>".to_string()),
        ("http", format!("<< httpGet {:?} >>", server.url("x"))),
    ];
    let docs: Vec<String> = attempts
        .iter()
        .map(|(name, action)| {
            resourceset_yaml(
                name,
                &format!(
                    "    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        \
                     name: leak-{name}\n      data:\n        v: '{action}'\n"
                ),
            )
        })
        .collect();
    fs::write(root.join("apps/healthy/rsets.yaml"), docs.join("---\n")).unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, rsets.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "templates that reach out");
    let run = render(&root, &[]);
    let json = run.json();
    for (name, _) in &attempts {
        let entry = kustomization(&json, "test", &format!("healthy/rset/flux-system/{name}"));
        assert_eq!(entry["status"], "failed", "{entry:#}");
        assert!(
            entry["error"].as_str().unwrap().contains("not defined"),
            "{entry:#}"
        );
    }
    assert_eq!(
        kustomization(&json, "test", "healthy")["status"],
        "rendered"
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    run.assert_nothing_leaked();
}

/// Names and values that look like the CLI's flags reach `flux-operator` only inside the
/// files fluxsim writes (its arguments are fluxsim's own): a ResourceSet named
/// `--inputs-from=...` and a provider named `-f` read nothing of the machine.
#[test]
fn resourceset_names_that_look_like_flags_are_never_read_as_flags() {
    let (top, root) = hostile(&[], &[]);
    let outside = top.path().join("outside.yaml");
    let name = format!("--inputs-from={}", outside.display());
    let rset = resourceset_yaml(
        &name,
        "    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: << inputs.tenant >>\n",
    )
    .replace(
        "  inputs:\n",
        "  inputsFrom:\n    - name: \"-f\"\n  inputs:\n",
    );
    let provider = format!(
        "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata:\n  \
         name: \"-f\"\n  namespace: flux-system\nspec:\n  type: Static\n  defaultValues:\n    \
         tenant: {:?}\n",
        format!("--filename={}", outside.display())
    );
    fs::write(
        root.join("apps/healthy/rset.yaml"),
        format!("{rset}---\n{provider}"),
    )
    .unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, rset.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "flag-like names");
    let run = render(&root, &[]);
    let json = run.json();
    let entry = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().starts_with("healthy/rset/"))
        .unwrap_or_else(|| panic!("no ResourceSet entry: {json:#}"));
    assert_eq!(entry["status"], "rendered", "{entry:#}");
    // The input and the name came through as data: the CLI built both inputs (the inline
    // one and the provider's) and labelled them with the name as it is.
    let written: String = run
        .written
        .iter()
        .filter(|(p, _)| p.contains("/rset/"))
        .map(|(_, t)| t.clone())
        .collect();
    assert!(
        written.contains(&format!("resourceset.fluxcd.controlplane.io/name: {name}")),
        "{written}"
    );
    assert!(written.contains("name: a\n"), "{written}");
    run.assert_nothing_leaked();
}

/// `flux-operator` runs in the tool box: a fake one that prints its environment, working
/// folder and what it can read shows none of fluxsim's environment, the repository or the
/// machine's files.
#[cfg(target_os = "linux")]
#[test]
fn flux_operator_runs_with_a_cleared_environment_outside_the_repository() {
    use std::os::unix::fs::PermissionsExt;
    let (top, root) = hostile(&[], &[]);
    fs::write(
        root.join("apps/healthy/rset.yaml"),
        resourceset_yaml(
            "boxed",
            "    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: x\n",
        ),
    )
    .unwrap();
    fs::write(
        root.join("apps/healthy/kustomization.yaml"),
        "resources: [configmap.yaml, rset.yaml]\n",
    )
    .unwrap();
    commit_all(&root, "a resourceset");
    let fake = top.path().join("flux-operator");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'client: 0.59.0'; exit 0; fi\n\
             printf -- '---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: box\\ndata:\\n'\n\
             printf '  env: \"%s\"\\n' \"$(env | tr '\\n\"' ' _')\"\n\
             printf '  pwd: \"%s\"\\n' \"$(pwd)\"\n\
             printf '  git: \"%s\"\\n' \"$(cat {git} 2>&1 | tr '\\n\"' ' _')\"\n\
             printf '  outside: \"%s\"\\n' \"$(cat {outside} 2>&1 | tr '\\n\"' ' _')\"\n",
            git = root.join(".git/config").display(),
            outside = top.path().join("outside.yaml").display(),
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let run = render(&root, &["--flux-operator", fake.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let box_cm = run
        .written
        .iter()
        .find(|(_, text)| text.contains("pwd: "))
        .map(|(_, t)| t.clone())
        .expect("the fake flux-operator's output");
    assert!(!box_cm.contains(ENV_MARKER), "{box_cm}");
    assert!(!box_cm.contains("GITHUB_TOKEN"), "{box_cm}");
    let pwd = box_cm
        .lines()
        .find(|l| l.contains("pwd:"))
        .unwrap_or_else(|| panic!("{box_cm}"));
    assert!(!pwd.contains(&root.display().to_string()), "{pwd}");
    if fluxsim::sandbox::isolation().landlock_abi >= 1 {
        assert!(!box_cm.contains("git-token-marker"), "{box_cm}");
        assert!(!box_cm.contains(OUTSIDE_MARKER), "{box_cm}");
    }
}

/// The CEL bomb of issue 42 (615 bytes): a CRD whose rule nests `self.l.all(...)` five
/// deep, the list bounded at 300 items so that only the nesting is over the API server's
/// estimate.
const CEL_BOMB_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bombs.example.com}
spec:
  group: example.com
  names: {kind: Bomb, plural: bombs}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.l.all(a, self.l.all(b, self.l.all(c, self.l.all(d, self.l.all(e, a + b + c + d + e >= 0)))))
            properties:
              l: {type: array, maxItems: 300, items: {type: integer}}
";

/// One custom resource of [`CEL_BOMB_CRD`] with 300 items: 300^5 iterations of the rule.
fn cel_bomb_resource() -> String {
    let items: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    format!(
        "apiVersion: example.com/v1\nkind: Bomb\nmetadata:\n  name: boom\n  namespace: default\nspec:\n  l: [{}]\n",
        items.join(", ")
    )
}

// apiserver pkg/apis/cel/config.go (PerCallLimit, RuntimeCELCostBudget) and
// apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go
// (StaticEstimatedCostLimit): the API server rejects the CRD, and a rule stops at its cost
// limit; fluxsim reports both, within --timeout, instead of running until killed.
#[test]
fn a_cel_rule_without_a_cost_bound_ends_with_a_finding_within_the_timeout() {
    assert!(
        (600..=630).contains(&CEL_BOMB_CRD.len()),
        "{}",
        CEL_BOMB_CRD.len()
    );
    let (_top, root) = hostile(&[("apps/bomb/configmap.yaml", HEALTHY)], &["bomb"]);
    fs::write(root.join("apps/bomb/crd.yaml"), CEL_BOMB_CRD).unwrap();
    fs::write(root.join("apps/bomb/bomb.yaml"), cel_bomb_resource()).unwrap();
    commit_all(&root, "bomb");
    for args in [
        &["validate", ".", "--format", "json", "--timeout", "5"][..],
        &[
            "render",
            ".",
            "--validate",
            "--format",
            "json",
            "--timeout",
            "5",
        ][..],
        &[
            "diff",
            ".",
            "--base",
            "HEAD~1",
            "--validate",
            "--format",
            "json",
            "--timeout",
            "5",
        ][..],
    ] {
        let started = std::time::Instant::now();
        let run = run_in(&root, args, &[]);
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(60),
            "{args:?} took {took:?}"
        );
        assert_eq!(run.code, 1, "{args:?}:\n{}\n{}", run.stdout, run.stderr);
        let text = &run.stdout;
        // The CRD: its rule's estimated cost, at the rule, in the CRD's file.
        assert!(
            text.contains("estimated rule cost exceeds budget by factor of more than 100x"),
            "{args:?}:\n{text}"
        );
        assert!(
            text.contains("x-kubernetes-validations[0].rule"),
            "{args:?}:\n{text}"
        );
        assert!(text.contains("apps/bomb/crd.yaml"), "{args:?}:\n{text}");
        // The custom resource: the rule stopped at the per-call limit, named, in its file.
        assert!(
            text.contains("call cost exceeds limit for rule: self.l.all(a, self.l.all(b,"),
            "{args:?}:\n{text}"
        );
        assert!(text.contains("apps/bomb/bomb.yaml"), "{args:?}:\n{text}");
        assert!(text.contains("FS308"), "{args:?}:\n{text}");
    }
}

/// A repository whose cluster declares one Kustomization per name of `names` (each building
/// `apps/<i>`, a ConfigMap `cm-<i>`), and `extra` files.
fn named_repo(names: &[&str], extra: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("repo");
    let mut cluster = cluster_files(&[]).remove(0).1;
    for (i, name) in names.iter().enumerate() {
        let name = serde_json::to_string(name).unwrap();
        let _ = write!(
            cluster,
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/{i}\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        );
        let cm = root.join(format!("apps/{i}/cm.yaml"));
        fs::create_dir_all(cm.parent().unwrap()).unwrap();
        fs::write(
            cm,
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: default\n"),
        )
        .unwrap();
    }
    let mut files = vec![("clusters/test/flux-system.yaml".to_string(), cluster)];
    files.extend(
        extra
            .iter()
            .map(|(p, c)| ((*p).to_string(), (*c).to_string())),
    );
    for (path, text) in &files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    crate::common::git(&root, &["init", "-q", "-b", "main"]);
    commit_all(&root, "names");
    (top, root)
}

/// `%XX` read back as the byte it stands for.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The entry files `--out` wrote, as `SHA256SUMS` lists them.
fn out_files(top: &Path) -> Vec<String> {
    fs::read_to_string(top.join("out/SHA256SUMS"))
        .unwrap()
        .lines()
        .map(|l| l.split_once("  ").unwrap().1.to_string())
        .collect()
}

/// Every declared name is one segment of its `--out` path, as the docs say (`%2F` for `/`,
/// leading too; `%2E%2E` for `..`; `%0A` for a newline; `%25` for `%`), and reads back as
/// the name: the files decode to the names declared. A leading `/` (which made the whole
/// `--out` fail) is one more name; the other entries are written.
#[test]
fn every_declared_name_round_trips_through_out() {
    let names = [
        "/leading",
        "a/b",
        "..",
        "../../x",
        "50%2Fpercent",
        "new\nline",
        "plain",
    ];
    let (top, root) = named_repo(&names, &[]);
    let run = render(&root, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    let files = out_files(top.path());
    let mut read_back: Vec<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix("test/flux-system/"))
        .filter_map(|f| f.strip_suffix(".yaml"))
        .filter(|f| *f != "flux-system")
        .map(|f| {
            assert!(!f.contains('/'), "a name made a folder: {f}");
            percent_decoded(f)
        })
        .collect();
    read_back.sort();
    let mut want: Vec<String> = names.iter().map(ToString::to_string).collect();
    want.sort();
    assert_eq!(read_back, want, "{files:?}");
    assert!(
        files.contains(&"test/flux-system/%2Fleading.yaml".to_string()),
        "{files:?}"
    );
    assert!(
        files.contains(&"test/flux-system/a%2Fb.yaml".to_string()),
        "{files:?}"
    );
    // Each file holds its own Kustomization's objects.
    for (i, name) in names.iter().enumerate() {
        let seg = fluxsim::report::escape::path_segment(name).into_owned();
        let text = fs::read_to_string(top.path().join(format!("out/test/flux-system/{seg}.yaml")))
            .unwrap();
        assert!(
            text.contains(&format!("name: cm-{i}\n")),
            "{name:?}: {text}"
        );
        // The report names it as its id holds it (`/` and `%` encoded).
        let id = fluxsim::flux::id_segment(name).into_owned();
        assert_eq!(kustomization(&json, "test", &id)["status"], "rendered");
    }
}

/// A name that cannot be a file name (a part longer than a file system takes) fails only its
/// own entry: an error naming it on stderr, exit 1, and every other file written.
#[test]
fn a_name_too_long_for_a_file_fails_only_its_own_out_entry() {
    let long = "l".repeat(300);
    let (top, root) = named_repo(&[long.as_str(), "/leading", "plain"], &[]);
    let run = render(&root, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("--out: test/flux-system/{long} not written"))
            && run.stderr.contains("more than the 255 a file system takes"),
        "{}",
        run.stderr
    );
    let files = out_files(top.path());
    for f in ["flux-system", "%2Fleading", "plain"] {
        assert!(
            files.contains(&format!("test/flux-system/{f}.yaml")),
            "{files:?}"
        );
    }
    assert_eq!(files.len(), 3, "{files:?}");
}

/// A Kustomization named `app/rset/default/rs` is not the entry of ResourceSet `default/rs`
/// that Kustomization `app` applies (it vanished under it: "2/2 rendered" for 3 declared):
/// all three Kustomizations and the entry are rendered, each with its own objects, in JSON,
/// text and `--out`.
#[test]
fn a_kustomization_named_like_a_resourceset_entry_is_its_own() {
    let (top, root) = named_repo(
        &["app", "app/rset/default/rs"],
        &[(
            "apps/0/rs.yaml",
            "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: rs\n  namespace: default\nspec:\n  inputs:\n    - tenant: a\n  resources:\n    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: from-rset-<< inputs.tenant >>\n        namespace: default\n",
        )],
    );
    let run = render(&root, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let ks = kustomization(&json, "test", "app%2Frset%2Fdefault%2Frs");
    assert_eq!(ks["objects"][0]["name"], "cm-1", "{ks:#}");
    let entry = kustomization(&json, "test", "app/rset/default/rs");
    assert_eq!(entry["resourceSet"]["name"], "rs", "{entry:#}");
    assert_eq!(entry["objects"][0]["name"], "from-rset-a", "{entry:#}");
    let entries = json["clusters"][0]["kustomizations"].as_array().unwrap();
    assert_eq!(entries.len(), 4, "{json:#}");
    let text = run_in(&root, &["render", "."], &[]);
    assert!(
        text.stdout.contains("render: 3/3 Kustomizations rendered")
            && text
                .stdout
                .contains("flux-system/app%2Frset%2Fdefault%2Frs")
            && text.stdout.contains("flux-system/app/rset/default/rs "),
        "{}",
        text.stdout
    );
    let files = out_files(top.path());
    for f in [
        "app",
        "app%2Frset%2Fdefault%2Frs",
        "app/rset/default/rs",
        "flux-system",
    ] {
        assert!(
            files.contains(&format!("test/flux-system/{f}.yaml")),
            "{files:?}"
        );
    }
}
