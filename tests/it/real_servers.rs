//! fluxsim's fetching against real servers, not fakes (issue 39, "Tested against real
//! servers"): the CNCF distribution registry (htpasswd auth, TLS from a CA the test makes)
//! with charts `helm push`ed to it, a chart repository whose `index.yaml` `helm repo index`
//! made, served over TLS, and a git server (`git http-backend` behind a small CGI server)
//! for a remote kustomize base. Every server listens on 127.0.0.1 on a port of its own.
//!
//! The registry is installed by `scripts/install-tools` (`.ci/run` runs it); without it on
//! PATH its tests say so and pass.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead as _, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{commit_all, git, repo_from};
use crate::fetch::{changed_releases, release, run, REMOTE};
use crate::helm::{add_repository_release, edit};

/// A CA the test makes and a server certificate it signs for 127.0.0.1 (`openssl`).
struct Tls {
    dir: tempfile::TempDir,
}

impl Tls {
    fn new() -> Tls {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(
            d.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            d,
            &[
                &["req", "-x509"],
                &ec[..],
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=fluxsim test CA",
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            ]
            .concat(),
        );
        openssl(
            d,
            &[
                &["req"],
                &ec[..],
                &[
                    "-keyout",
                    "key.pem",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "cert.pem",
                "-days",
                "2",
                "-extfile",
                "server.ext",
            ],
        );
        Tls { dir }
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn cert(&self) -> PathBuf {
        self.dir.path().join("cert.pem")
    }

    fn key(&self) -> PathBuf {
        self.dir.path().join("key.pem")
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs = CertificateDer::pem_file_iter(self.cert())
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(self.key()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
        Arc::new(config)
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A request as a [`Web`] server read it.
struct Request {
    method: String,
    /// The path with its query.
    target: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// An answer of a [`Web`] server.
struct Response {
    status: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A small HTTP/1.1 server on 127.0.0.1 (over TLS with a certificate of [`Tls`]), one
/// thread a connection, one request a connection, recording each request's target.
struct Web {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

impl Web {
    fn start(tls: Option<&Tls>, handler: Box<Handler>) -> Web {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        Web::serve(listener, tls, handler)
    }

    fn serve(listener: TcpListener, tls: Option<&Tls>, handler: Box<Handler>) -> Web {
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let config = tls.map(Tls::server_config);
        let handler: Arc<Handler> = Arc::from(handler);
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { continue };
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(30)));
                let stream: Box<dyn Stream> = match &config {
                    Some(c) => match rustls::ServerConnection::new(c.clone()) {
                        Ok(conn) => Box::new(rustls::StreamOwned::new(conn, tcp)),
                        Err(_) => continue,
                    },
                    None => Box::new(tcp),
                };
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    let Some(req) = read_request(&mut reader) else {
                        return;
                    };
                    log.lock().unwrap().push(req.target.clone());
                    let res = handler(&req);
                    let mut head = format!("HTTP/1.1 {}\r\n", res.status);
                    for (k, v) in &res.headers {
                        let _ = write!(head, "{k}: {v}\r\n");
                    }
                    let _ = write!(
                        head,
                        "Content-Length: {}\r\nConnection: close\r\n\r\n",
                        res.body.len()
                    );
                    let stream = reader.get_mut();
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&res.body);
                    let _ = stream.flush();
                });
            }
        });
        Web { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(reader: &mut BufReader<Box<dyn Stream>>) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? <= 2 {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = headers.get("content-length") {
        body = vec![0; n.parse().ok()?];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// Files of `root` by path (404 otherwise).
fn static_files(root: PathBuf) -> Box<Handler> {
    Box::new(move |req| {
        let path = req.target.split('?').next().unwrap_or("");
        match fs::read(root.join(path.trim_start_matches('/'))) {
            Ok(body) if !path.contains("..") => Response {
                status: "200 OK".into(),
                headers: Vec::new(),
                body,
            },
            _ => Response {
                status: "404 Not Found".into(),
                headers: Vec::new(),
                body: b"not found".to_vec(),
            },
        }
    })
}

/// `git http-backend` as a CGI program, serving the bare repositories of `root`.
fn git_http_backend(root: PathBuf) -> Box<Handler> {
    Box::new(move |req| {
        let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        let mut cmd = Command::new("git");
        cmd.arg("http-backend")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_PROJECT_ROOT", &root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("REQUEST_METHOD", &req.method)
            .env("PATH_INFO", path)
            .env("QUERY_STRING", query)
            .env("CONTENT_LENGTH", req.body.len().to_string())
            .env("REMOTE_ADDR", "127.0.0.1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (var, header) in [
            ("CONTENT_TYPE", "content-type"),
            ("HTTP_CONTENT_ENCODING", "content-encoding"),
            ("GIT_PROTOCOL", "git-protocol"),
        ] {
            if let Some(v) = req.header(header) {
                cmd.env(var, v);
            }
        }
        let mut child = cmd.spawn().expect("git http-backend runs");
        let mut stdin = child.stdin.take().unwrap();
        let body = req.body.clone();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&body);
        });
        let out = child.wait_with_output().unwrap();
        let _ = writer.join();
        // CGI: headers, a blank line, the body; `Status:` gives the status.
        let text = out.stdout;
        let split = text
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|i| (i, 4))
            .or_else(|| text.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
        let Some((at, sep)) = split else {
            return Response {
                status: "500 Internal Server Error".into(),
                headers: Vec::new(),
                body: text,
            };
        };
        let mut status = "200 OK".to_string();
        let mut headers = Vec::new();
        for line in String::from_utf8_lossy(&text[..at]).lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("status") {
                    status = v.trim().to_string();
                } else {
                    headers.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
        }
        Response {
            status,
            headers,
            body: text[at + sep..].to_vec(),
        }
    })
}

/// The registry binary (`scripts/install-tools` installs it), or `None` with the reason
/// printed.
fn registry_binary() -> Option<PathBuf> {
    let found = crate::common::which("registry");
    if found.is_none() {
        eprintln!(
            "skipped: the distribution registry is not on PATH (scripts/install-tools installs \
             it into $(go env GOPATH)/bin)"
        );
    }
    found
}

const USER: &str = "ci-user";
const PASSWORD: &str = "ci-pass";

/// The CNCF distribution registry on 127.0.0.1: TLS with the test's certificate, htpasswd
/// auth for [`USER`]; killed when dropped.
struct Registry {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Registry {
    fn start(binary: &Path, tls: &Tls) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let hash = bcrypt::hash_with_salt(PASSWORD, 4, *b"fluxsim-tests-16")
            .unwrap()
            .format_for_version(bcrypt::Version::TwoA);
        fs::write(dir.path().join("htpasswd"), format!("{USER}:{hash}\n")).unwrap();
        // A free port: the registry binds it itself.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {root}\n\
             http:\n  addr: 127.0.0.1:{port}\n  secret: fluxsim-tests\n  tls:\n    certificate: {cert}\n    key: {key}\n\
             auth:\n  htpasswd:\n    realm: fluxsim-tests\n    path: {htpasswd}\n",
            root = dir.path().join("data").display(),
            cert = tls.cert().display(),
            key = tls.key().display(),
            htpasswd = dir.path().join("htpasswd").display(),
        );
        fs::write(dir.path().join("config.yml"), config).unwrap();
        let child = Command::new(binary)
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .env("OTEL_TRACES_EXPORTER", "none")
            .env("OTEL_METRICS_EXPORTER", "none")
            .env("OTEL_LOGS_EXPORTER", "none")
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.path().join("registry.log")).unwrap())
            .spawn()
            .expect("the registry starts");
        let registry = Registry {
            child: Some(child),
            port,
            dir,
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the registry did not listen on {port}: {}",
                fs::read_to_string(registry.dir.path().join("registry.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// helm with a configuration folder of its own (`helm registry login` writes there).
struct Helm {
    home: tempfile::TempDir,
}

impl Helm {
    fn new() -> Helm {
        Helm {
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) {
        let h = self.home.path();
        let out = Command::new("helm")
            .args(args)
            .env("HOME", h)
            .env("XDG_CONFIG_HOME", h.join("config"))
            .env("XDG_CACHE_HOME", h.join("cache"))
            .env("XDG_DATA_HOME", h.join("data"))
            .env("HELM_REGISTRY_CONFIG", h.join("registry.json"))
            .output()
            .expect("helm runs");
        assert!(
            out.status.success(),
            "helm {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// testdata/fleet/charts/podinfo packaged at `version` into `dir`.
    fn package(&self, dir: &Path, version: &str) -> PathBuf {
        self.run(&[
            "package",
            "--version",
            version,
            "-d",
            dir.to_str().unwrap(),
            crate::common::crate_path("testdata/fleet/charts/podinfo")
                .to_str()
                .unwrap(),
        ]);
        dir.join(format!("podinfo-{version}.tgz"))
    }
}

/// podinfo at `versions` pushed to `registry` as `oci://HOST/charts/podinfo:VERSION`.
fn push_charts(registry: &Registry, tls: &Tls, versions: &[&str]) {
    let helm = Helm::new();
    let ca = tls.ca();
    let ca = ca.to_str().unwrap();
    helm.run(&[
        "registry",
        "login",
        &registry.host(),
        "--username",
        USER,
        "--password",
        PASSWORD,
        "--ca-file",
        ca,
    ]);
    let tmp = tempfile::tempdir().unwrap();
    for v in versions {
        let tgz = helm.package(tmp.path(), v);
        helm.run(&[
            "push",
            tgz.to_str().unwrap(),
            &format!("oci://{}/charts", registry.host()),
            "--ca-file",
            ca,
        ]);
    }
}

/// fluxsim.toml: 127.0.0.1 reachable (https only), the registry's credential from
/// `REG_USER` and `REG_PASS`.
fn registry_config(repo: &Path, host: &str) {
    fs::write(
        repo.join("fluxsim.toml"),
        format!(
            "[network]\nprivate = [\"127.0.0.1\"]\n\n[network.credentials.\"{host}\"]\n\
             username_env = \"REG_USER\"\npassword_env = \"REG_PASS\"\n"
        ),
    )
    .unwrap();
}

/// The fleet with HelmRelease `remote` of podinfo `version` from the OCI HelmRepository
/// `oci://HOST/charts`, committed.
fn fleet_with_oci_chart(host: &str, version: &str) -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), &format!("oci://{host}/charts"), version);
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        "  interval: 1h\n  url: oci://",
        "  interval: 1h\n  type: oci\n  url: oci://",
    );
    registry_config(repo.path(), host);
    commit_all(repo.path(), "a chart from the registry");
    repo
}

fn bump(repo: &Path, from: &str, to: &str) -> String {
    let base = git(repo, &["rev-parse", "HEAD"]).trim().to_string();
    edit(
        repo,
        "apps/helm/remote.yaml",
        &format!("version: \"{from}\""),
        &format!("version: \"{to}\""),
    );
    commit_all(repo, &format!("chore(deps): update podinfo to {to}"));
    base
}

fn env<'a>(tls: &'a Path, password: &'a str) -> [(&'a str, &'a str); 3] {
    [
        ("FLUXSIM_CA_FILE", tls.to_str().unwrap()),
        ("REG_USER", USER),
        ("REG_PASS", password),
    ]
}

fn render_dev(repo: &Path, env: &[(&str, &str)], cache: Option<&Path>) -> serde_json::Value {
    let out = run(
        repo,
        &[
            "render",
            "--network",
            "base-trusted",
            "--helm",
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

/// The `chart` of the diff's entry for the remote release in the first cluster.
fn chart_bump(json: &serde_json::Value) -> Option<serde_json::Value> {
    json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]).ends_with(REMOTE))
        .map(|k| k["chart"].clone())
}

// A Renovate bump of a chart in a real OCI registry (htpasswd auth, TLS from the test's
// CA): `diff` fetches both versions by default, the credential from the environment
// variables fluxsim.toml names, and the release's objects are compared.
#[test]
fn a_chart_bump_in_a_real_oci_registry_is_fetched_and_diffed() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0", "6.5.0"]);
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    let base = bump(repo.path(), "6.4.0", "6.5.0");
    let ca = tls.ca();
    let env = env(&ca, PASSWORD);
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &env,
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(
        chart_bump(&json),
        Some(serde_json::json!({"name": "podinfo", "base": "6.4.0", "head": "6.5.0"})),
        "{}",
        out.stdout
    );
    let changed = changed_releases(&json);
    assert!(
        changed
            .iter()
            .any(|(c, k, change)| c == "dev" && k.ends_with(REMOTE) && change == "changed"),
        "{changed:?}\n{}",
        out.stdout
    );
    let text = run(
        repo.path(),
        &["diff", "--base", &base, "--no-default-strip"],
        &env,
        None,
    );
    assert!(
        text.stdout
            .contains("chart podinfo 6.4.0 → 6.5.0: 2 objects changed"),
        "{}{}",
        text.stdout,
        text.stderr
    );
}

// A pull request that moves the chart to a registry host the base does not name: nothing
// is fetched from it (not a connection), and the release says what to review.
#[test]
fn a_pull_request_that_adds_a_registry_host_is_not_fetched() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0"]);
    let other = Web::start(Some(&tls), static_files(PathBuf::from("/nonexistent")));
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    let other_host = format!("127.0.0.1:{}", other.port);
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        &registry.host(),
        &other_host,
    );
    commit_all(repo.path(), "another registry");
    let ca = tls.ca();
    let out = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--format", "json"],
        &env(&ca, PASSWORD),
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        other.seen(),
        Vec::<String>::new(),
        "the new host was reached"
    );
    let want = format!("head adds remote input oci://{other_host}/charts");
    assert!(out.stdout.contains(&want), "{}", out.stdout);
}

// The CI cache makes the second run offline: a chart version fetched once renders again
// with the registry stopped.
#[test]
fn a_chart_fetched_once_renders_again_with_the_registry_stopped() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let mut registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0"]);
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    let cache = tempfile::tempdir().unwrap();
    let ca = tls.ca();
    let env = env(&ca, PASSWORD);
    let first = render_dev(repo.path(), &env, Some(cache.path()));
    assert_eq!(first["status"], "rendered", "{first:#}");
    registry.stop();
    let second = render_dev(repo.path(), &env, Some(cache.path()));
    assert_eq!(second, first);
}

// Credentials come from the environment variables fluxsim.toml names, never from the
// repository's `secretRef`: without them, or with a wrong password, the chart is not
// fetched and the release says what the registry answered.
#[test]
fn registry_credentials_come_from_the_environment_only() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0"]);
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    // The repository names a Secret with the right credentials: never read.
    edit(
        repo.path(),
        "apps/helm/remote.yaml",
        "  type: oci\n",
        "  type: oci\n  secretRef:\n    name: registry-creds\n",
    );
    fs::write(
        repo.path().join("apps/helm/creds.yaml"),
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: registry-creds\nstringData:\n  \
             username: {USER}\n  password: {PASSWORD}\n"
        ),
    )
    .unwrap();
    commit_all(repo.path(), "the repository's own credentials");
    let ca = tls.ca();
    let ca = ca.to_str().unwrap();
    let without = render_dev(repo.path(), &[("FLUXSIM_CA_FILE", ca)], None);
    assert_eq!(without["status"], "external", "{without:#}");
    let why = without["error"].as_str().unwrap();
    assert!(
        why.contains("401") && why.contains("asks for credentials"),
        "{why}"
    );
    let wrong = render_dev(repo.path(), &env(Path::new(ca), "wrong"), None);
    assert_eq!(wrong["status"], "external", "{wrong:#}");
    let why = wrong["error"].as_str().unwrap();
    assert!(
        why.contains("refused the ones given") && why.contains("UNAUTHORIZED"),
        "{why}"
    );
    let right = render_dev(repo.path(), &env(Path::new(ca), PASSWORD), None);
    assert_eq!(right["status"], "rendered", "{right:#}");
    // Without the test's CA the registry's certificate is not trusted.
    let untrusted = render_dev(
        repo.path(),
        &[("REG_USER", USER), ("REG_PASS", PASSWORD)],
        None,
    );
    assert_eq!(untrusted["status"], "external", "{untrusted:#}");
}

// A chart repository whose index.yaml `helm repo index` made, served over TLS: the bump
// is fetched from it (index and both packages) and diffed.
#[test]
fn a_chart_bump_in_a_real_https_chart_repository_is_fetched_and_diffed() {
    let tls = Tls::new();
    let site = tempfile::tempdir().unwrap();
    let charts = site.path().join("charts");
    fs::create_dir(&charts).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}/charts",
        listener.local_addr().unwrap().port()
    );
    let helm = Helm::new();
    for v in ["6.4.0", "6.5.0"] {
        helm.package(&charts, v);
    }
    helm.run(&["repo", "index", charts.to_str().unwrap(), "--url", &url]);
    let server = Web::serve(
        listener,
        Some(&tls),
        static_files(site.path().to_path_buf()),
    );
    let repo = repo_from("testdata/fleet");
    add_repository_release(repo.path(), &url, "6.4.0");
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "a chart from an https repository");
    let base = bump(repo.path(), "6.4.0", "6.5.0");
    let ca = tls.ca();
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &[("FLUXSIM_CA_FILE", ca.to_str().unwrap())],
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        chart_bump(&out.json()),
        Some(serde_json::json!({"name": "podinfo", "base": "6.4.0", "head": "6.5.0"})),
        "{}",
        out.stdout
    );
    let seen = server.seen();
    for path in [
        "/charts/index.yaml",
        "/charts/podinfo-6.4.0.tgz",
        "/charts/podinfo-6.5.0.tgz",
    ] {
        assert!(
            seen.iter().any(|p| p == path),
            "{path} not fetched: {seen:?}"
        );
    }
}

/// A bare repository `base.git` in a new folder: `app/` a kustomization of one ConfigMap
/// whose `data.ref` is the tag, at tags `v1` and `v2`.
fn remote_base_repository() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    fs::create_dir_all(work.join("app")).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    fs::write(
        work.join("app/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\n",
    )
    .unwrap();
    for tag in ["v1", "v2"] {
        fs::write(
            work.join("app/cm.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote-base\ndata:\n  ref: {tag}\n"),
        )
        .unwrap();
        commit_all(&work, tag);
        git(&work, &["tag", tag]);
    }
    git(root.path(), &["clone", "-q", "--bare", "work", "base.git"]);
    root
}

/// The fleet with `fluxsim.toml` `config` and apps-helm naming the remote base `url("v1")`,
/// committed (the base revision, whose commit is returned), then bumped to `url("v2")` and
/// committed.
fn remote_base_bump(url: &dyn Fn(&str) -> String, config: &str) -> (tempfile::TempDir, String) {
    let repo = repo_from("testdata/fleet");
    fs::write(repo.path().join("fluxsim.toml"), config).unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        &format!("  - widgets.yaml\n  - {}\n", url("v1")),
    );
    commit_all(repo.path(), "a remote base");
    let base = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        &url("v1"),
        &url("v2"),
    );
    commit_all(repo.path(), "chore(deps): update the remote base to v2");
    (repo, base)
}

// A remote kustomize base on a git server (`git http-backend`): the base revision names
// the repository at `?ref=v1`, the head at `?ref=v2`; base-trusted fetches it (kustomize
// clones it) and the Kustomization is compared on what each ref holds.
#[test]
fn a_remote_base_ref_bump_over_a_git_server_is_fetched_and_diffed() {
    let repos = remote_base_repository();
    let server = Web::start(None, git_http_backend(repos.path().to_path_buf()));
    let url = |r: &str| format!("http://127.0.0.1:{}/base.git//app?ref={r}", server.port);
    let (repo, base) = remote_base_bump(
        &url,
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    );
    let out = run(
        repo.path(),
        &["diff", "--base", base.trim(), "--format", "json"],
        &[],
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert!(
        server.seen().iter().any(|p| p.contains("git-upload-pack")),
        "the git server was not reached: {:?}\n{}",
        server.seen(),
        out.stdout
    );
    assert_eq!(
        crate::fetch::outcomes(&out.json(), "apps-helm"),
        ["changed", "changed"],
        "{}",
        out.stdout
    );
    let text = run(repo.path(), &["diff", "--base", base.trim()], &[], None);
    assert!(text.stdout.contains("remote-base"), "{}", text.stdout);
}

// The same remote base over https, on a git server whose certificate a private CA signed:
// `FLUXSIM_CA_FILE` is what kustomize's git trusts too (not plain http, not the machine's
// roots), so the base-trusted clone succeeds; without it the clone fails on the certificate
// and the Kustomization is not compared, never "identical".
#[test]
fn a_remote_base_over_https_with_a_private_ca_is_cloned_with_fluxsim_s_ca() {
    let tls = Tls::new();
    let repos = remote_base_repository();
    let server = Web::start(Some(&tls), git_http_backend(repos.path().to_path_buf()));
    let url = |r: &str| format!("https://127.0.0.1:{}/base.git//app?ref={r}", server.port);
    let (repo, base) = remote_base_bump(&url, "[network]\nprivate = [\"127.0.0.1\"]\n");
    let diff = |env: &[(&str, &str)]| {
        run(
            repo.path(),
            &["diff", "--base", base.trim(), "--format", "json"],
            env,
            None,
        )
    };
    let ca = tls.ca();
    let out = diff(&[("FLUXSIM_CA_FILE", ca.to_str().unwrap())]);
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert!(
        server.seen().iter().any(|p| p.contains("git-upload-pack")),
        "the git server was not reached: {:?}\n{}",
        server.seen(),
        out.stdout
    );
    assert_eq!(
        crate::fetch::outcomes(&out.json(), "apps-helm"),
        ["changed", "changed"],
        "{}",
        out.stdout
    );
    let untrusted = diff(&[]);
    let outcomes = crate::fetch::outcomes(&untrusted.json(), "apps-helm");
    assert!(
        outcomes.iter().all(|o| o != "identical" && o != "changed"),
        "{outcomes:?}\n{}",
        untrusted.stdout
    );
}

/// Pushes `files` to `registry` as `flux push artifact` lays an artifact out
/// (fluxcd/pkg `oci/client/push.go`): a config of media type
/// `application/vnd.cncf.flux.config.v1+json` and one layer, the gzip-compressed tarball of
/// the files, of media type `application/vnd.cncf.flux.content.v1.tar+gzip`; at
/// `oci://HOST/REPO:TAG`, through the distribution API (curl, with the test's CA and the
/// registry's user).
fn push_flux_artifact(
    registry: &Registry,
    tls: &Tls,
    repo: &str,
    tag: &str,
    files: &[(&str, &str)],
) {
    let tmp = tempfile::tempdir().unwrap();
    let content = tmp.path().join("content");
    for (name, body) in files {
        let path = content.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
    let layer = tmp.path().join("layer.tgz");
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&layer)
        .arg("-C")
        .arg(&content)
        .arg(".")
        .status()
        .unwrap();
    assert!(ok.success());
    let config = tmp.path().join("config.json");
    fs::write(&config, "{}").unwrap();
    let ca = tls.ca();
    let base = format!("https://{}/v2/{repo}", registry.host());
    let upload = |file: &Path| upload_blob(registry, &ca, repo, file);
    let (config_digest, config_size) = upload(&config);
    let (layer_digest, layer_size) = upload(&layer);
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.cncf.flux.config.v1+json",
            "digest": config_digest,
            "size": config_size,
        },
        "layers": [{
            "mediaType": "application/vnd.cncf.flux.content.v1.tar+gzip",
            "digest": layer_digest,
            "size": layer_size,
        }],
        "annotations": {
            "org.opencontainers.image.source": "https://github.com/example/manifests",
            "org.opencontainers.image.revision": format!("{tag}@sha1:0123"),
        },
    });
    let file = tmp.path().join("manifest.json");
    fs::write(&file, manifest.to_string()).unwrap();
    let code = curl(
        &ca,
        &[
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/vnd.oci.image.manifest.v1+json",
            "--data-binary",
            &format!("@{}", file.display()),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{base}/manifests/{tag}"),
        ],
    );
    assert_eq!(code, "201", "manifest of {repo}:{tag}");
}

/// curl with the test's CA and the registry's user; its stdout.
fn curl(ca: &Path, args: &[&str]) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--cacert", ca.to_str().unwrap()])
        .args(["-u", &format!("{USER}:{PASSWORD}")])
        .args(args)
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Uploads `file` as a blob of `repo` (the distribution API's POST, then PUT with its
/// digest); its digest and size.
fn upload_blob(registry: &Registry, ca: &Path, repo: &str, file: &Path) -> (String, u64) {
    let bytes = fs::read(file).unwrap();
    let digest = format!("sha256:{}", crate::common::sha256(&bytes));
    let uploads = format!("https://{}/v2/{repo}/blobs/uploads/", registry.host());
    let headers = curl(ca, &["-X", "POST", "-D", "-", "-o", "/dev/null", &uploads]);
    let location = headers
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("location")
                .then(|| v.trim().to_string())
        })
        .expect("an upload location");
    let location = if location.starts_with('/') {
        format!("https://{}{location}", registry.host())
    } else {
        location
    };
    let sep = if location.contains('?') { '&' } else { '?' };
    let code = curl(
        ca,
        &[
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &format!("@{}", file.display()),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{location}{sep}digest={digest}"),
        ],
    );
    assert_eq!(code, "201", "blob upload of {}", file.display());
    (digest, bytes.len() as u64)
}

/// The outcomes (cluster by cluster) of Kustomization `apps/remote-app` in a diff's JSON.
fn remote_app_outcomes(json: &serde_json::Value) -> Vec<String> {
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap().iter())
        .filter(|k| crate::common::ks(&k["kustomization"]) == "apps/remote-app")
        .map(|k| k["outcome"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The fleet with an OCIRepository `manifests` of `oci://HOST/manifests/app` at `tag`, and a
/// Kustomization `remote-app` built from it (both applied by apps-helm), committed.
fn fleet_with_oci_source(host: &str, tag: &str) -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/helm/remote-app.yaml"),
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: manifests\n\
             spec:\n  interval: 10m\n  url: oci://{host}/manifests/app\n  ref:\n    tag: {tag}\n---\n\
             apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: remote-app\n\
             spec:\n  interval: 10m\n  path: ./app\n  prune: true\n  sourceRef:\n    kind: OCIRepository\n    name: manifests\n"
        ),
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        "  - widgets.yaml\n  - remote-app.yaml\n",
    );
    registry_config(repo.path(), host);
    commit_all(repo.path(), "manifests from an OCI artifact");
    repo
}

fn artifact_files(tag: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "app/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\n"
                .to_string(),
        ),
        (
            "app/cm.yaml",
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\n  namespace: apps\ndata:\n  release: {tag}\n"),
        ),
    ]
}

// An OCIRepository of manifests pushed as `flux push artifact` does, in a real registry
// (TLS, htpasswd): the base revision names the registry, so a bump of its tag is fetched at
// both tags and the Kustomization built from it is compared on what each holds. Offline it
// is external (not compared), never "identical".
#[test]
fn an_oci_artifact_source_bump_in_a_real_registry_is_fetched_and_diffed() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    for tag in ["v1", "v2"] {
        let files = artifact_files(tag);
        let files: Vec<(&str, &str)> = files.iter().map(|(n, b)| (*n, b.as_str())).collect();
        push_flux_artifact(&registry, &tls, "manifests/app", tag, &files);
    }
    let repo = fleet_with_oci_source(&registry.host(), "v1");
    let base = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    edit(
        repo.path(),
        "apps/helm/remote-app.yaml",
        "tag: v1",
        "tag: v2",
    );
    commit_all(repo.path(), "chore(deps): update the manifests to v2");
    let ca = tls.ca();
    let env = env(&ca, PASSWORD);
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &env,
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    let outcomes = remote_app_outcomes(&out.json());
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o == "changed"),
        "{outcomes:?}\n{}",
        out.stdout
    );
    let text = run(repo.path(), &["diff", "--base", &base], &env, None);
    assert!(
        text.stdout.contains("from-oci") && text.stdout.contains("v2"),
        "{}",
        text.stdout
    );
    // Offline: not compared, saying how to render it.
    let offline = run(
        repo.path(),
        &[
            "diff",
            "--base",
            &base,
            "--network",
            "none",
            "--format",
            "json",
        ],
        &env,
        None,
    );
    let outcomes = remote_app_outcomes(&offline.json());
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o != "changed" && o != "identical"),
        "{outcomes:?}\n{}",
        offline.stdout
    );
}

// A pull request that points the OCIRepository at a registry the base does not name: not a
// request reaches it, and the Kustomization says what to review.
#[test]
fn a_pull_request_that_moves_an_oci_source_to_a_new_host_is_not_fetched() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    let files = artifact_files("v1");
    let files: Vec<(&str, &str)> = files.iter().map(|(n, b)| (*n, b.as_str())).collect();
    push_flux_artifact(&registry, &tls, "manifests/app", "v1", &files);
    let other = Web::start(Some(&tls), static_files(PathBuf::from("/nonexistent")));
    let repo = fleet_with_oci_source(&registry.host(), "v1");
    let base = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    let other_host = format!("127.0.0.1:{}", other.port);
    edit(
        repo.path(),
        "apps/helm/remote-app.yaml",
        &registry.host(),
        &other_host,
    );
    commit_all(repo.path(), "another registry");
    let ca = tls.ca();
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &env(&ca, PASSWORD),
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        other.seen(),
        Vec::<String>::new(),
        "the new host was reached"
    );
    let want = format!("head adds remote input oci://{other_host}/manifests/app");
    assert!(out.stdout.contains(&want), "{}", out.stdout);
    let outcomes = remote_app_outcomes(&out.json());
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o != "changed" && o != "identical"),
        "{outcomes:?}"
    );
}

/// The fleet with a GitRepository `apps-src` of `url` at `ref_yaml` (the `ref:` block's
/// lines), and a Kustomization `remote-app` built from its `./app` (both applied by
/// apps-helm), committed; 127.0.0.1 reachable over plain http.
fn fleet_with_git_source(url: &str, ref_yaml: &str) -> tempfile::TempDir {
    let repo = repo_from("testdata/fleet");
    fs::write(
        repo.path().join("apps/helm/remote-app.yaml"),
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: apps-src\n\
             spec:\n  interval: 10m\n  url: {url}\n  ref:\n{ref_yaml}---\n\
             apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: remote-app\n\
             spec:\n  interval: 10m\n  path: ./app\n  prune: true\n  targetNamespace: apps\n  sourceRef:\n    kind: GitRepository\n    name: apps-src\n"
        ),
    )
    .unwrap();
    edit(
        repo.path(),
        "apps/helm/kustomization.yaml",
        "  - widgets.yaml\n",
        "  - widgets.yaml\n  - remote-app.yaml\n",
    );
    fs::write(
        repo.path().join("fluxsim.toml"),
        "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "manifests from another GitRepository");
    repo
}

// A second GitRepository on a git server (`git http-backend`), named by the base revision:
// a bump of its tag is cloned at both tags and the Kustomization built from it compared on
// what each holds; a commit pinned on its branch is checked out; offline it is not compared.
#[test]
fn a_git_repository_source_bump_over_a_git_server_is_cloned_and_diffed() {
    let repos = remote_base_repository();
    let server = Web::start(None, git_http_backend(repos.path().to_path_buf()));
    let url = format!("http://127.0.0.1:{}/base.git", server.port);
    let repo = fleet_with_git_source(&url, "    tag: v1\n");
    let base = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    edit(
        repo.path(),
        "apps/helm/remote-app.yaml",
        "tag: v1",
        "tag: v2",
    );
    commit_all(repo.path(), "chore(deps): update apps-src to v2");
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &[],
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert!(
        server.seen().iter().any(|p| p.contains("git-upload-pack")),
        "the git server was not reached: {:?}",
        server.seen()
    );
    let outcomes = remote_app_outcomes(&out.json());
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o == "changed"),
        "{outcomes:?}\n{}",
        out.stdout
    );
    let text = run(repo.path(), &["diff", "--base", &base], &[], None);
    assert!(
        text.stdout.contains("remote-base") && text.stdout.contains("v2"),
        "{}",
        text.stdout
    );
    // The commit of v1 on branch main, pinned: it renders what tag v1 holds, not v2.
    let v1 = git(&repos.path().join("base.git"), &["rev-parse", "v1"]);
    let digest_at = |ref_yaml: &str| {
        let fleet = fleet_with_git_source(&url, ref_yaml);
        let render = run(
            fleet.path(),
            &[
                "render",
                "--network",
                "any",
                "--cluster",
                "dev",
                "--format",
                "json",
            ],
            &[],
            None,
        );
        let json = render.json();
        let ks = json["clusters"][0]["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == "remote-app" && k["status"] == "rendered")
            .unwrap_or_else(|| panic!("remote-app not rendered: {}", render.stdout))
            .clone();
        ks["sha256"].as_str().unwrap().to_string()
    };
    let pinned = digest_at(&format!("    branch: main\n    commit: {}\n", v1.trim()));
    assert_eq!(pinned, digest_at("    tag: v1\n"));
    assert_ne!(pinned, digest_at("    tag: v2\n"));
    let offline = run(
        repo.path(),
        &[
            "diff",
            "--base",
            &base,
            "--network",
            "none",
            "--format",
            "json",
        ],
        &[],
        None,
    );
    let outcomes = remote_app_outcomes(&offline.json());
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o != "changed" && o != "identical"),
        "{outcomes:?}"
    );
}

// The registry on 127.0.0.1 without fluxsim.toml's `private` naming it: the fetch box
// refuses the loopback address after resolution, so nothing is fetched and the release is
// not compared, saying why; with `private = ["127.0.0.1"]` the same PR is fetched.
#[test]
fn a_registry_on_a_private_address_is_refused_unless_fluxsim_toml_allows_it() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0", "6.5.0"]);
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    // The base's fluxsim.toml names the credential, but no private host.
    fs::write(
        repo.path().join("fluxsim.toml"),
        format!(
            "[network.credentials.\"{}\"]\nusername_env = \"REG_USER\"\npassword_env = \"REG_PASS\"\n",
            registry.host()
        ),
    )
    .unwrap();
    commit_all(repo.path(), "no private hosts");
    let base = bump(repo.path(), "6.4.0", "6.5.0");
    let ca = tls.ca();
    let env = env(&ca, PASSWORD);
    let out = run(
        repo.path(),
        &["diff", "--base", &base, "--format", "json"],
        &env,
        None,
    );
    assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("loopback"), "{}", out.stdout);
    let changed = changed_releases(&out.json());
    assert!(
        !changed
            .iter()
            .any(|(_, k, change)| k.ends_with(REMOTE) && change == "changed"),
        "{changed:?}"
    );
    let allowed = fleet_with_oci_chart(&registry.host(), "6.4.0");
    let base = bump(allowed.path(), "6.4.0", "6.5.0");
    let out = run(
        allowed.path(),
        &["diff", "--base", &base, "--format", "json"],
        &env,
        None,
    );
    let changed = changed_releases(&out.json());
    assert!(
        changed
            .iter()
            .any(|(_, k, change)| k.ends_with(REMOTE) && change == "changed"),
        "{changed:?}\n{}",
        out.stdout
    );
}

// The action's own step (`scripts/action/run`, its defaults: `diff`, HelmReleases whenever
// helm is there, the base revision's sources trusted) on a Renovate bump of a chart in the
// real registry: with no flag given, the comment shows the release, led by its chart bump
// line, and counts it among the changes.
#[test]
fn the_action_s_comment_on_a_registry_chart_bump_shows_the_rendered_diff_by_default() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let registry = Registry::start(&binary, &tls);
    push_charts(&registry, &tls, &["6.4.0", "6.5.0"]);
    let repo = fleet_with_oci_chart(&registry.host(), "6.4.0");
    let base = bump(repo.path(), "6.4.0", "6.5.0");
    let out = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ca = tls.ca();
    let status = Command::new("bash")
        .arg(crate::common::crate_path("scripts/action/run"))
        .current_dir(repo.path())
        .env_remove("FLUXSIM_NETWORK")
        .envs(env(&ca, PASSWORD))
        .env("BASE", &base)
        .env("COMMAND", "diff")
        .env("FLUXSIM", env!("CARGO_BIN_EXE_fluxsim"))
        .env("FLUXSIM_CACHE_DIR", cache.path())
        .env("OUT", out.path())
        .env("SARIF", "false")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let comment = fs::read_to_string(out.path().join("report/comment-1.md")).unwrap();
    assert!(
        comment.contains("chart podinfo 6.4.0 → 6.5.0"),
        "{comment}\n{}",
        fs::read_to_string(out.path().join("stderr.txt")).unwrap_or_default()
    );
    // The bump counts as the release's change in the title and in the summary alike, even
    // though the test chart's versions differ only in labels the default filters hide.
    assert!(
        comment.contains("and 2 HelmReleases change")
            && comment.contains("**HelmReleases**: 2 changed"),
        "{comment}"
    );
}

// An OCIRepository at an exact version tag, fetched once, renders again with the registry
// stopped (the CI cache makes the next run offline); the render is the same.
#[test]
fn an_oci_artifact_at_an_exact_tag_fetched_once_renders_again_with_the_registry_stopped() {
    let Some(binary) = registry_binary() else {
        return;
    };
    let tls = Tls::new();
    let mut registry = Registry::start(&binary, &tls);
    let files = artifact_files("1.0.0");
    let files: Vec<(&str, &str)> = files.iter().map(|(n, b)| (*n, b.as_str())).collect();
    push_flux_artifact(&registry, &tls, "manifests/app", "1.0.0", &files);
    let repo = fleet_with_oci_source(&registry.host(), "1.0.0");
    let cache = tempfile::tempdir().unwrap();
    let ca = tls.ca();
    let env = env(&ca, PASSWORD);
    let render = || {
        let out = run(
            repo.path(),
            &[
                "render",
                "--network",
                "any",
                "--cluster",
                "dev",
                "--format",
                "json",
            ],
            &env,
            Some(cache.path()),
        );
        let json = out.json();
        json["clusters"][0]["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == "remote-app")
            .cloned()
            .unwrap_or_else(|| panic!("no remote-app: {}", out.stdout))
    };
    let first = render();
    assert_eq!(first["status"], "rendered", "{first:#}");
    registry.stop();
    let second = render();
    assert_eq!(second, first);
}

/// `inner`, behind HTTP basic auth for `user`/`password` (401 otherwise).
fn with_basic_auth(user: &str, password: &str, inner: Box<Handler>) -> Box<Handler> {
    use base64::Engine as _;
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    );
    Box::new(move |req| {
        if req.header("authorization") == Some(want.as_str()) {
            inner(req)
        } else {
            Response {
                status: "401 Unauthorized".into(),
                headers: vec![("WWW-Authenticate".into(), "Basic realm=\"git\"".into())],
                body: b"credentials, please".to_vec(),
            }
        }
    })
}

// A private GitRepository source: the credential fluxsim.toml names for the git server's
// host, from environment variables, is sent (never the repository's `secretRef`); without
// the variables the clone is refused and the Kustomization is not compared.
#[test]
fn a_private_git_repository_source_is_cloned_with_the_credential_fluxsim_toml_names() {
    let repos = remote_base_repository();
    let server = Web::start(
        None,
        with_basic_auth(USER, PASSWORD, git_http_backend(repos.path().to_path_buf())),
    );
    let host = format!("127.0.0.1:{}", server.port);
    let url = format!("http://{host}/base.git");
    let repo = fleet_with_git_source(&url, "    tag: v1\n");
    fs::write(
        repo.path().join("fluxsim.toml"),
        format!(
            "[network]\ninsecure = [\"127.0.0.1\"]\nprivate = [\"127.0.0.1\"]\n\n\
             [network.credentials.\"{host}\"]\nusername_env = \"GIT_USER\"\npassword_env = \"GIT_PASS\"\n"
        ),
    )
    .unwrap();
    commit_all(repo.path(), "a private source");
    let base = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_string();
    edit(
        repo.path(),
        "apps/helm/remote-app.yaml",
        "tag: v1",
        "tag: v2",
    );
    commit_all(repo.path(), "chore(deps): update apps-src to v2");
    let diff = |env: &[(&str, &str)]| {
        let out = run(
            repo.path(),
            &["diff", "--base", &base, "--format", "json"],
            env,
            None,
        );
        assert!(out.code <= 1, "{}{}", out.stdout, out.stderr);
        remote_app_outcomes(&out.json())
    };
    let with = diff(&[("GIT_USER", USER), ("GIT_PASS", PASSWORD)]);
    assert!(
        !with.is_empty() && with.iter().all(|o| o == "changed"),
        "{with:?}"
    );
    let without = diff(&[]);
    assert!(
        !without.is_empty() && without.iter().all(|o| o != "changed" && o != "identical"),
        "{without:?}"
    );
}
