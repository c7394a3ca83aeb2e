//! What fluxsim fetches, and from where (issue: "Chart bumps and remote inputs reviewed by
//! default, safely"): `--network base-trusted` (the default of `diff` and `prove`) fetches
//! only what the base revision names, at any version; every fetch of fluxsim's own goes
//! through the fetch box (https only unless `[network] insecure`, no loopback, private or
//! metadata address unless `[network] private`, checked again on each redirect, bounded,
//! credentials only from the environment variables fluxsim.toml names). Each case runs a
//! server on 127.0.0.1 that records every request.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::common::{commit_all, git, kustomization, repo_from};
use crate::helm::{add_repository_release, edit, package};

/// One answer of the server.
#[derive(Clone)]
struct Answer {
    status: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn ok(body: Vec<u8>) -> Answer {
    Answer {
        status: "200 OK",
        headers: Vec::new(),
        body,
    }
}

/// A request as the server saw it: its path and its `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    path: String,
    authorization: Option<String>,
}

/// A server on 127.0.0.1 answering by path (404 otherwise), recording every request. A path
/// in `locked` answers 401 unless the request carries that `Authorization`.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(answers: BTreeMap<String, Answer>, locked: Option<String>) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut authorization = None;
                let mut h = String::new();
                while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                    if let Some((k, v)) = h.split_once(':') {
                        if k.eq_ignore_ascii_case("authorization") {
                            authorization = Some(v.trim().to_string());
                        }
                    }
                    h.clear();
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                log.lock().unwrap().push(Seen {
                    path: path.clone(),
                    authorization: authorization.clone(),
                });
                let answer = match (&locked, answers.get(&path)) {
                    (Some(want), Some(_)) if authorization.as_ref() != Some(want) => Answer {
                        status: "401 Unauthorized",
                        headers: vec![("WWW-Authenticate".into(), "Basic realm=\"charts\"".into())],
                        body: b"no".to_vec(),
                    },
                    (_, Some(a)) => a.clone(),
                    (_, None) => Answer {
                        status: "404 Not Found",
                        headers: Vec::new(),
                        body: b"not found".to_vec(),
                    },
                };
                let mut head = format!("HTTP/1.1 {}\r\n", answer.status);
                for (k, v) in &answer.headers {
                    let _ = write!(head, "{k}: {v}\r\n");
                }
                let _ = write!(
                    head,
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    answer.body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&answer.body);
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }
}

/// A chart repository of podinfo at `versions`: `index.yaml` and each package.
fn chart_repository(versions: &[&str]) -> BTreeMap<String, Answer> {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = BTreeMap::new();
    let mut index = String::from("apiVersion: v1\nentries:\n  podinfo:\n");
    for v in versions {
        let tgz = package(tmp.path(), v);
        let _ = write!(
            index,
            "  - name: podinfo\n    version: {v}\n    digest: {}\n    urls: [podinfo-{v}.tgz]\n",
            crate::common::sha256(&tgz)
        );
        files.insert(format!("/charts/podinfo-{v}.tgz"), ok(tgz));
    }
    files.insert("/charts/index.yaml".into(), ok(index.into_bytes()));
    files
}

/// Runs fluxsim in `repo` with `env` and its own cache folder (or `cache`).
pub(crate) fn run(
    repo: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    cache: Option<&Path>,
) -> crate::common::Output {
    let own = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxsim"));
    cmd.args(args)
        .current_dir(repo)
        .env("FLUXSIM_CACHE_DIR", cache.unwrap_or(own.path()))
        .env_remove("FLUXSIM_NETWORK")
        .env_remove("FLUXSIM_ALLOW_NETWORK");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    crate::common::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) const REMOTE: &str = "apps-helm/helm/apps/remote";

pub(crate) fn release<'a>(json: &'a serde_json::Value, cluster: &str) -> &'a serde_json::Value {
    kustomization(json, cluster, REMOTE)
}

/// The fleet with a HelmRelease of podinfo `version` from the HelmRepository at `url`,
/// committed with a fluxsim.toml that lets the box reach 127.0.0.1 over http.
fn fleet_with_chart(url: &str, version: &str) -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), url, version);
    commit_all(repo.path(), "a remote chart");
    repo
}

/// The changed releases of a `diff --format json`, by cluster.
pub(crate) fn changed_releases(json: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for c in json["clusters"].as_array().unwrap() {
        for k in c["kustomizations"].as_array().unwrap() {
            let name = crate::common::ks(&k["kustomization"]);
            if name.contains("/helm/") && k["change"] != "identical" {
                out.push((
                    c["name"].as_str().unwrap_or_default().to_string(),
                    name,
                    k["change"].as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }
    out
}

// A Renovate bump of a chart version: the base names the chart repository, so the head's
// new version is fetched from it by default (no --fetch-charts, no --network), and the
// release's rendered objects are compared.
#[test]
fn a_chart_bump_is_fetched_from_the_repository_the_base_names_and_diffed() {
    let server = Server::start(chart_repository(&["6.4.0", "6.5.0"]), None);
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        "version: \"6.4.0\"",
        "version: \"6.5.0\"",
    );
    commit_all(repo.path(), "chore(deps): update podinfo to 6.5.0");
    // HelmReleases are rendered by default in a diff: no `--helm`.
    let out = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--format", "json"],
        &[],
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let bump = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]).ends_with(REMOTE))
        .map(|k| k["chart"].clone());
    assert_eq!(
        bump,
        Some(serde_json::json!({"name": "podinfo", "base": "6.4.0", "head": "6.5.0"})),
        "{}",
        out.stdout
    );
    // The review leads with the bump and what it does to the release's objects (only the
    // chart label differs, which the default filters hide).
    let text = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--no-default-strip"],
        &[],
        None,
    );
    assert!(
        text.stdout
            .contains("chart podinfo 6.4.0 → 6.5.0: 2 objects changed"),
        "{}",
        text.stdout
    );
    let changed = changed_releases(&json);
    assert!(
        changed
            .iter()
            .any(|(c, k, change)| c == "dev" && k.ends_with(REMOTE) && change == "changed"),
        "{changed:?}\n{}",
        out.stdout
    );
    let paths = server.paths();
    for tgz in ["/charts/podinfo-6.4.0.tgz", "/charts/podinfo-6.5.0.tgz"] {
        assert!(
            paths.iter().any(|p| p == tgz),
            "{tgz} not fetched: {paths:?}"
        );
    }
}

// A pull request that points the chart at a host the base does not name: nothing is fetched
// from it, the release is not compared, and the reason says what to review.
#[test]
fn a_pull_request_that_adds_a_chart_host_is_not_fetched_and_says_so() {
    let trusted = Server::start(chart_repository(&["6.4.0"]), None);
    let other = Server::start(chart_repository(&["6.4.0"]), None);
    let repo = fleet_with_chart(&trusted.url("/charts"), "6.4.0");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        &trusted.url("/charts"),
        &other.url("/charts"),
    );
    commit_all(repo.path(), "another chart host");
    let out = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--helm", "--format", "json"],
        &[],
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        other.paths(),
        Vec::<String>::new(),
        "the new host was reached"
    );
    assert!(
        !trusted.paths().is_empty(),
        "the base's host was not fetched"
    );
    let head = run(
        repo.path(),
        &[
            "render",
            "--helm",
            "--network",
            "base-trusted",
            "--format",
            "json",
        ],
        &[],
        None,
    );
    // A single revision is its own base: it may fetch what it names itself.
    assert_eq!(release(&head.json(), "dev")["status"], "rendered");
    let text = out.stdout;
    let want = format!(
        "head adds remote input {}: review the source",
        other.url("/charts")
    );
    assert!(text.contains(&want), "{text}");
}

// The same rule for kustomize's remote entries: a remote resource the base names is
// fetched (by kustomize), one only the head adds is not.
#[test]
fn a_remote_resource_only_the_head_adds_is_not_fetched() {
    let cm = |name: &str| {
        ok(format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n").into_bytes())
    };
    let trusted = Server::start(
        BTreeMap::from([
            ("/org/repo/v1/cm.yaml".to_string(), cm("v1")),
            ("/org/repo/v2/cm.yaml".to_string(), cm("v2")),
        ]),
        None,
    );
    let other = Server::start(BTreeMap::from([("/x.yaml".to_string(), cm("x"))]), None);
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let kfile = repo.path().join("apps/helm/kustomization.yaml");
    let text = fs::read_to_string(&kfile).unwrap();
    fs::write(
        &kfile,
        text.replacen(
            "  - widgets.yaml\n",
            &format!(
                "  - widgets.yaml\n  - {}\n",
                trusted.url("/org/repo/v1/cm.yaml")
            ),
            1,
        ),
    )
    .unwrap();
    commit_all(repo.path(), "a remote resource");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    // A bump of the ref in the path (same owner/repo): trusted.
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "/v1/cm.yaml",
        "/v2/cm.yaml",
    );
    commit_all(repo.path(), "bump");
    let bump = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--format", "json"],
        &[],
        None,
    );
    assert!(bump.code <= 1, "{}", bump.stderr);
    let paths = trusted.paths();
    assert!(
        paths.iter().any(|p| p == "/org/repo/v2/cm.yaml"),
        "{paths:?}"
    );
    // And built from what the head fetched, not taken from the base's build of the same
    // folder (a build that reads the network is shared within its own tree only).
    assert_eq!(
        outcomes(&bump.json(), "apps-helm"),
        ["changed", "changed"],
        "{}",
        bump.stdout
    );
    // A new host: not fetched.
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        &trusted.url("/org/repo/v2/cm.yaml"),
        &other.url("/x.yaml"),
    );
    commit_all(repo.path(), "another host");
    let out = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--format", "json"],
        &[],
        None,
    );
    assert!(out.code <= 1, "{}", out.stderr);
    assert_eq!(other.paths(), Vec::<String>::new());
    assert!(
        out.stdout.contains(&format!(
            "head adds remote input {}, not fetched: review the source",
            other.url("/x.yaml")
        )),
        "{}",
        out.stdout
    );
    // `--network none` fetches nothing at all, the base's hosts included.
    let before = trusted.paths().len();
    let none = run(
        repo.path(),
        &[
            "diff",
            "--base",
            base.trim(),
            "--network",
            "none",
            "--format",
            "json",
        ],
        &[],
        None,
    );
    assert!(none.code <= 1, "{}", none.stderr);
    assert_eq!(trusted.paths().len(), before);
}

/// The diff outcome of Kustomization `name` in each cluster.
pub(crate) fn outcomes(json: &serde_json::Value, name: &str) -> Vec<String> {
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap().iter())
        .filter(|k| crate::common::ks(&k["kustomization"]) == format!("flux-system/{name}"))
        .map(|k| k["outcome"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A HelmRepository server whose index redirects to `location`.
fn redirecting(location: &str) -> Server {
    Server::start(
        BTreeMap::from([(
            "/charts/index.yaml".to_string(),
            Answer {
                status: "302 Found",
                headers: vec![("Location".into(), location.into())],
                body: Vec::new(),
            },
        )]),
        None,
    )
}

fn render_remote(repo: &Path, env: &[(&str, &str)], cache: Option<&Path>) -> serde_json::Value {
    let out = run(
        repo,
        &[
            "render",
            "--helm",
            "--network",
            "any",
            "--cluster",
            "dev",
            "--format",
            "json",
        ],
        env,
        cache,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    release(&out.json(), "dev").clone()
}

// The cloud metadata address, reached through a redirect of an allowed host: refused at the
// redirect, before any connection to it.
#[test]
fn a_redirect_to_the_metadata_address_is_refused() {
    let server = redirecting("https://169.254.169.254/latest/meta-data/iam/");
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    let k = render_remote(repo.path(), &[], None);
    assert_eq!(k["status"], "external", "{k:#}");
    let why = k["error"].as_str().unwrap();
    assert!(
        why.contains("redirected, then")
            && why.contains("169.254.169.254")
            && why.contains("link-local (cloud metadata)"),
        "{why}"
    );
    assert_eq!(server.paths(), ["/charts/index.yaml"]);
    // And a redirect to plain http elsewhere: refused as plain http.
    let server = redirecting("http://example.com/index.yaml");
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    let why = render_remote(repo.path(), &[], None)["error"].to_string();
    assert!(why.contains("plain http"), "{why}");
}

// 127.0.0.1 is refused unless fluxsim.toml names the host in `[network] private`.
#[test]
fn a_private_address_is_refused_unless_fluxsim_toml_allows_that_host() {
    let server = Server::start(chart_repository(&["6.4.0"]), None);
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "no private hosts");
    let k = render_remote(repo.path(), &[], None);
    assert_eq!(k["status"], "external", "{k:#}");
    let why = k["error"].as_str().unwrap();
    assert!(
        why.contains("127.0.0.1 resolves to 127.0.0.1, a loopback address"),
        "{why}"
    );
    assert_eq!(server.paths(), Vec::<String>::new());
    // Named as private (with its port): fetched.
    fs::write(
        repo.path().join("fluxsim.toml"),
        format!(
            "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1:{}\"]\n",
            server.port
        ),
    )
    .unwrap();
    commit_all(repo.path(), "the local host");
    assert_eq!(render_remote(repo.path(), &[], None)["status"], "rendered");
}

// `[network] max_bytes`: an answer past it ends the fetch with fluxsim's own error.
#[test]
fn an_answer_past_the_byte_bound_is_refused() {
    let server = Server::start(chart_repository(&["6.4.0"]), None);
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\nmax_bytes = 1000\n",
    )
    .unwrap();
    commit_all(repo.path(), "a small bound");
    let k = render_remote(repo.path(), &[], None);
    assert_eq!(k["status"], "external", "{k:#}");
    let why = k["error"].as_str().unwrap();
    assert!(why.contains("larger than fluxsim's bound"), "{why}");
}

// The repository's `secretRef` is never read for credentials: only the environment
// variables fluxsim.toml names are, and only sent to their host.
#[test]
fn credentials_come_from_the_environment_fluxsim_toml_names_never_from_the_repository() {
    use base64::Engine as _;
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ci-user:ci-pass")
    );
    let server = Server::start(chart_repository(&["6.4.0"]), Some(want.clone()));
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    // The repository asks for its own Secret.
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        "  interval: 1h\n",
        "  interval: 1h\n  secretRef:\n    name: repo-creds\n",
    );
    fs::write(
        repo.path().join("apps/helm/creds.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: repo-creds\nstringData:\n  username: repo-user\n  password: repo-pass\n",
    )
    .unwrap();
    fs::write(
        repo.path().join("fluxsim.toml"),
        format!(
            "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n\
             [network.credentials.\"127.0.0.1:{}\"]\nusername_env = \"CHART_USER\"\npassword_env = \"CHART_PASS\"\n",
            server.port
        ),
    )
    .unwrap();
    commit_all(repo.path(), "credentials");
    let without = render_remote(repo.path(), &[], None);
    assert_eq!(without["status"], "external", "{without:#}");
    assert!(
        without["error"].as_str().unwrap().contains("401"),
        "{without:#}"
    );
    let with = render_remote(
        repo.path(),
        &[("CHART_USER", "ci-user"), ("CHART_PASS", "ci-pass")],
        None,
    );
    assert_eq!(with["status"], "rendered", "{with:#}");
    let repo_creds = base64::engine::general_purpose::STANDARD.encode("repo-user:repo-pass");
    for s in server.seen() {
        let a = s.authorization.unwrap_or_default();
        assert!(!a.contains(&repo_creds), "the repository's Secret was sent");
        assert!(a.is_empty() || a == want, "{a}");
    }
}

// An exact chart version fetched once is served from the cache folder: the second run
// makes no request at all (the CI cache makes it offline).
#[test]
fn an_exact_chart_version_is_fetched_once_then_read_from_the_cache() {
    let server = Server::start(chart_repository(&["6.4.0"]), None);
    let repo = fleet_with_chart(&server.url("/charts"), "6.4.0");
    let cache = tempfile::tempdir().unwrap();
    let first = render_remote(repo.path(), &[], Some(cache.path()));
    assert_eq!(first["status"], "rendered", "{first:#}");
    let n = server.paths().len();
    assert!(n >= 2, "{:?}", server.paths());
    let second = render_remote(repo.path(), &[], Some(cache.path()));
    assert_eq!(second, first);
    assert_eq!(server.paths().len(), n, "{:?}", server.paths());
}

// issue 42 item 3: the action's SARIF audit reads the pull request's tree alone; a pull
// request adding `[network] allow = true` (and the hosts to reach) makes it fetch nothing.
#[test]
fn the_actions_sarif_audit_fetches_nothing_for_a_pull_request_that_allows_the_network() {
    let server = Server::start(
        BTreeMap::from([(
            "/cm.yaml".to_string(),
            ok(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".to_vec()),
        )]),
        None,
    );
    let repo = repo_from("testdata/fleet");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\nallow = true\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        &format!("  - widgets.yaml\n  - {}\n", server.url("/cm.yaml")),
    );
    commit_all(repo.path(), "open the network");
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(crate::common::crate_path("scripts/action/run"))
        .current_dir(repo.path())
        .env("BASE", base.trim())
        .env("SARIF", "true")
        .env("FLUXSIM", env!("CARGO_BIN_EXE_fluxsim"))
        .env("OUT", out.path())
        .env("FLUXSIM_CACHE_DIR", out.path().join("cache"))
        .env_remove("FLUXSIM_NETWORK")
        .status()
        .unwrap();
    assert!(status.success());
    let sarif = fs::read_to_string(out.path().join("fluxsim.sarif")).unwrap();
    assert!(sarif.contains("\"version\": \"2.1.0\"") || sarif.contains("\"version\":\"2.1.0\""));
    assert_eq!(server.paths(), Vec::<String>::new());
    // The positive control: the same tree rendered as its own base does fetch.
    let render = run(repo.path(), &["render", "--format", "json"], &[], None);
    assert_eq!(render.code, 0, "{}", render.stderr);
    assert_eq!(server.paths(), ["/cm.yaml"]);
}
