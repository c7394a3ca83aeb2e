//! The fetch box: every request fluxsim makes itself (a chart repository's `index.yaml` and
//! chart, an OCI registry's tags, manifests, blobs and tokens) goes through [`FetchBox::get`],
//! which enforces, whatever the repository says:
//!
//! - **https only**, except hosts `[network] insecure` names;
//! - **public addresses only**: a host that resolves to a loopback, private, link-local
//!   (the cloud metadata address `169.254.169.254` among them), unique-local, shared (CGNAT),
//!   unspecified, broadcast, multicast or documentation address is refused, unless
//!   `[network] private` names that exact host. The check runs on the addresses the
//!   connection is made to (ureq's resolver, wrapped), so a name that answers differently the
//!   second time gains nothing; redirects are followed here, one at a time, each hop checked
//!   again (scheme and addresses), at most [`MAX_REDIRECTS`];
//! - **caps**: the time of one request (the run's `--timeout`), the bytes of one answer;
//! - **credentials only from the user**: `[network.credentials."host"]` names environment
//!   variables; a credential is sent to its own host only, never across a redirect to
//!   another host, and never taken from the repository (a `secretRef` is not read);
//! - no proxy from the environment: the addresses checked are the ones connected to.
//!
//! The CA bundle is the Mozilla roots, or the PEM file `FLUXSIM_CA_FILE` names instead (a
//! private registry's CA; the file is the user's, read from the environment, never from the
//! repository).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

crate::message_error! {
    /// A fetch that was refused or failed, with the URL it was for.
    pub struct FetchError;
}

/// Redirects one fetch may follow (Go's `net/http` default).
pub const MAX_REDIRECTS: usize = 10;
/// The default bound on one answer's bytes.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// Bytes read of an answer that is not a success (for its message).
const ERROR_BODY: u64 = 64 << 10;
/// The environment variable naming a PEM bundle of trusted CAs (instead of Mozilla's): the
/// tool box's, which hands it to the tools it lets onto the network.
pub use crate::sandbox::CA_FILE_ENV;

/// A credential, read from the environment when the box is made.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// HTTP basic (and a registry's token exchange).
    Basic {
        /// User name.
        user: String,
        /// Password.
        password: String,
    },
    /// A bearer token.
    Bearer(String),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never printed.
        f.write_str(match self {
            Secret::Basic { .. } => "Basic(..)",
            Secret::Bearer(_) => "Bearer(..)",
        })
    }
}

impl Secret {
    /// The `Authorization` header's value.
    #[must_use]
    pub fn header(&self) -> String {
        use base64::Engine as _;
        match self {
            Secret::Basic { user, password } => format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            ),
            Secret::Bearer(t) => format!("Bearer {t}"),
        }
    }
}

/// What a request carries for authentication.
#[derive(Debug, Clone)]
pub enum Auth {
    /// The box's credential for the request's host, if it has one.
    Host,
    /// This header value, to this host only (a registry's token); dropped on a redirect to
    /// another host.
    Header(String),
}

/// An answer: its status, the headers a caller reads, its body (bounded).
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL answered, after redirects.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// `WWW-Authenticate`, when the server asked for credentials.
    pub www_authenticate: Option<String>,
    /// The body (for a status that is no success, its first bytes).
    pub body: Vec<u8>,
}

impl Fetched {
    /// Whether the status is 2xx.
    #[must_use]
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// The box (see the module's doc).
#[derive(Debug, Default)]
pub struct FetchBox {
    insecure: BTreeSet<String>,
    private: Arc<BTreeSet<String>>,
    credentials: BTreeMap<String, Secret>,
    /// Hosts whose credential names a variable that is not set.
    missing: Vec<String>,
    roots: Option<Arc<Vec<ureq::tls::Certificate<'static>>>>,
    timeout: Option<Duration>,
    max_bytes: Option<u64>,
    agent: OnceLock<ureq::Agent>,
}

impl FetchBox {
    /// The box of `[network]` (of the trusted fluxsim.toml: the base revision's in a diff),
    /// its credentials read from the environment through `env`.
    ///
    /// # Errors
    /// `FLUXSIM_CA_FILE` names a file that cannot be read as PEM certificates.
    pub fn new(
        config: &crate::config::Network,
        env: &dyn Fn(&str) -> Option<String>,
        timeout: Duration,
    ) -> Result<FetchBox, FetchError> {
        let hosts = |v: &[String]| v.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        let mut credentials = BTreeMap::new();
        let mut missing = Vec::new();
        for (host, c) in &config.credentials {
            let var = |name: &Option<String>| name.as_deref().and_then(env);
            let secret = match (&c.token_env, &c.username_env, &c.password_env) {
                (Some(_), _, _) => var(&c.token_env).map(Secret::Bearer),
                (None, Some(_), Some(_)) => var(&c.username_env)
                    .zip(var(&c.password_env))
                    .map(|(user, password)| Secret::Basic { user, password }),
                _ => {
                    return Err(format!(
                        "fluxsim.toml: [network.credentials.\"{host}\"] needs token_env, or \
                         username_env and password_env"
                    )
                    .into())
                }
            };
            match secret {
                Some(s) => {
                    credentials.insert(host.trim().to_ascii_lowercase(), s);
                }
                None => missing.push(host.clone()),
            }
        }
        let roots = match env(CA_FILE_ENV) {
            Some(path) if !path.is_empty() => Some(Arc::new(read_roots(&path)?)),
            _ => None,
        };
        Ok(FetchBox {
            insecure: hosts(&config.insecure),
            private: Arc::new(hosts(&config.private)),
            credentials,
            missing,
            roots,
            timeout: Some(timeout),
            max_bytes: config.max_bytes,
            agent: OnceLock::new(),
        })
    }

    /// The time one fetch may take (a tool's clone through the box too).
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(Duration::from_secs(120))
    }

    /// The box of `config` with the process's environment.
    ///
    /// # Errors
    /// As [`FetchBox::new`].
    pub fn from_env(
        config: &crate::config::Network,
        timeout: Duration,
    ) -> Result<FetchBox, FetchError> {
        FetchBox::new(config, &|name| std::env::var(name).ok(), timeout)
    }

    /// Hosts whose credential's variables are not set (a warning for the user).
    #[must_use]
    pub fn missing_credentials(&self) -> &[String] {
        &self.missing
    }

    /// The bound on one answer.
    #[must_use]
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes.unwrap_or(DEFAULT_MAX_BYTES)
    }

    /// Whether `[network] insecure` names any host (a tool's git may then use plain http:
    /// each remote entry is checked against the list before the tool runs).
    #[must_use]
    pub fn has_insecure_hosts(&self) -> bool {
        !self.insecure.is_empty()
    }

    /// Whether `[network] insecure` names the host of `url` (`host` or `host:port`).
    #[must_use]
    pub fn insecure_host(&self, url: &str) -> bool {
        url::Url::parse(url).is_ok_and(|u| names(&self.insecure, &u))
    }

    /// The credential for `url`'s host, if the user gave one.
    #[must_use]
    pub fn credential(&self, url: &str) -> Option<&Secret> {
        let u = url::Url::parse(url).ok()?;
        let host = u.host_str()?.to_ascii_lowercase();
        u.port()
            .and_then(|p| self.credentials.get(&format!("{host}:{p}")))
            .or_else(|| self.credentials.get(&host))
    }

    fn agent(&self) -> &ureq::Agent {
        self.agent.get_or_init(|| {
            let mut tls = ureq::tls::TlsConfig::builder();
            if let Some(r) = &self.roots {
                tls = tls.root_certs(ureq::tls::RootCerts::Specific(r.clone()));
            }
            let config = ureq::Agent::config_builder()
                .timeout_global(self.timeout)
                .http_status_as_error(false)
                .max_redirects(0)
                .proxy(None)
                .https_only(false)
                .tls_config(tls.build())
                .build();
            ureq::Agent::with_parts(
                config,
                ureq::unversioned::transport::DefaultConnector::default(),
                Guard {
                    private: self.private.clone(),
                },
            )
        })
    }

    /// Checks `url` before any connection: a URL, http(s), plain http only for a host
    /// `[network] insecure` names.
    fn check(&self, url: &str) -> Result<url::Url, FetchError> {
        let u = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL ({e})"))?;
        match u.scheme() {
            "https" => {}
            "http" if names(&self.insecure, &u) => {}
            "http" => {
                return Err(format!(
                    "refused {url}: plain http (only hosts fluxsim.toml's [network] insecure \
                     names are fetched over http)"
                )
                .into())
            }
            s => return Err(format!("refused {url}: scheme `{s}` is not fetched").into()),
        }
        if u.host_str().is_none_or(str::is_empty) {
            return Err(format!("refused {url}: no host").into());
        }
        Ok(u)
    }

    /// The box's rules on a remote input a tool fetches itself (kustomize's remote bases
    /// and files, which it clones or GETs): the scheme (`https`, `ssh` for a git form, plain
    /// `http` only for a host `[network] insecure` names) and the addresses the host
    /// resolves to now. What the tool does after (a redirect, a second resolution) is its
    /// own; docs/security.md says so.
    ///
    /// # Errors
    /// Why the input is refused.
    pub fn precheck(&self, input: &str) -> Result<(), FetchError> {
        use std::net::ToSocketAddrs as _;
        let p = super::parse(input).ok_or_else(|| format!("`{input}` names no host"))?;
        let (host, port) = split_port(&p.host);
        let port = port.unwrap_or(match p.scheme.as_str() {
            "http" => 80,
            "ssh" => 22,
            _ => 443,
        });
        let named =
            |set: &BTreeSet<String>| set.contains(host) || set.contains(&format!("{host}:{port}"));
        match p.scheme.as_str() {
            "https" | "ssh" => {}
            "http" if named(&self.insecure) => {}
            "http" => {
                return Err(format!(
                    "refused {input}: plain http (only hosts fluxsim.toml's [network] insecure \
                     names are fetched over http)"
                )
                .into())
            }
            s => return Err(format!("refused {input}: scheme `{s}` is not fetched").into()),
        }
        if host.is_empty() {
            return Err(format!("refused {input}: no host").into());
        }
        if named(&self.private) {
            return Ok(());
        }
        let addrs = (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .map_err(|e| format!("refused {input}: {host} cannot be resolved ({e})"))?;
        for a in addrs {
            if let Some(kind) = non_public(a.ip()) {
                return Err(FetchError(format!(
                    "refused {input}: {}",
                    Blocked {
                        host: host.to_string(),
                        addr: a.ip(),
                        kind
                    }
                )));
            }
        }
        Ok(())
    }

    /// GET `url` (with `accept` as `Accept`), redirects followed here, each hop checked;
    /// the body bounded by `limit` (and the box's own bound).
    ///
    /// # Errors
    /// A refused URL or address, a redirect past [`MAX_REDIRECTS`], an answer past the
    /// bound, a failed connection.
    pub fn get(
        &self,
        url: &str,
        accept: Option<&str>,
        auth: &Auth,
        limit: u64,
    ) -> Result<Fetched, FetchError> {
        let limit = limit.min(self.max_bytes());
        let first = self.check(url)?;
        let mut current = first.clone();
        for _ in 0..=MAX_REDIRECTS {
            let shown = current.as_str().to_string();
            let mut req = self.agent().get(&shown);
            if let Some(a) = accept {
                req = req.header("Accept", a);
            }
            let same_host = current.host_str() == first.host_str()
                && current.port_or_known_default() == first.port_or_known_default();
            let header = match auth {
                Auth::Header(h) if same_host => Some(h.clone()),
                Auth::Header(_) => None,
                Auth::Host => self.credential(&shown).map(Secret::header),
            };
            if let Some(h) = header {
                req = req.header("Authorization", h);
            }
            let mut res = req.call().map_err(|e| describe(&shown, e))?;
            let status = res.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let location = res
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| format!("GET {shown}: {status} without a Location"))?;
                let next = current
                    .join(location)
                    .map_err(|e| format!("GET {shown}: redirect to `{location}`: {e}"))?;
                // The scheme, then the addresses the new host resolves to, before any
                // connection to it (the resolver checks the addresses connected to again).
                let then = |e: FetchError| FetchError(format!("GET {shown}: redirected, then {e}"));
                current = self.check(next.as_str()).map_err(then)?;
                self.precheck(current.as_str()).map_err(then)?;
                continue;
            }
            let www_authenticate = res
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let ok = (200..300).contains(&status);
            let body = res
                .body_mut()
                .with_config()
                .limit(if ok { limit } else { ERROR_BODY })
                .read_to_vec();
            let body = match body {
                Ok(b) => b,
                Err(ureq::Error::BodyExceedsLimit(n)) if ok => {
                    return Err(format!(
                        "GET {shown}: the answer is larger than fluxsim's bound of {n} bytes"
                    )
                    .into())
                }
                Err(e) if ok => return Err(describe(&shown, e)),
                Err(_) => Vec::new(),
            };
            return Ok(Fetched {
                url: shown,
                status,
                www_authenticate,
                body,
            });
        }
        Err(format!("GET {url}: more than {MAX_REDIRECTS} redirects").into())
    }
}

/// Whether `hosts` names `u`'s host, alone or with its port.
fn names(hosts: &BTreeSet<String>, u: &url::Url) -> bool {
    let Some(host) = u.host_str().map(str::to_ascii_lowercase) else {
        return false;
    };
    hosts.contains(&host)
        || u.port_or_known_default()
            .is_some_and(|p| hosts.contains(&format!("{host}:{p}")))
}

/// `host:port` as host and port (an IPv6 literal keeps its brackets).
fn split_port(host: &str) -> (&str, Option<u16>) {
    match host.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && (h.starts_with('[') || !h.contains(':')) => {
            p.parse().map_or((host, None), |p| (h, Some(p)))
        }
        _ => (host, None),
    }
}

fn read_roots(path: &str) -> Result<Vec<ureq::tls::Certificate<'static>>, FetchError> {
    use std::io::Read as _;
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4 << 20).read_to_end(&mut text))
        .map_err(|e| format!("{CA_FILE_ENV}={path}: {e}"))?;
    let certs: Vec<_> = ureq::tls::parse_pem(&text)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{CA_FILE_ENV}={path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{CA_FILE_ENV}={path}: no PEM certificate in it").into());
    }
    Ok(certs)
}

/// A connection refused by the address rule.
#[derive(Debug, thiserror::Error)]
#[error("refused: {host} resolves to {addr}, a {kind} address (fluxsim.toml's [network] private allows a host by name)")]
struct Blocked {
    host: String,
    addr: IpAddr,
    kind: &'static str,
}

fn describe(url: &str, e: ureq::Error) -> FetchError {
    match e {
        ureq::Error::Other(b) => match b.downcast::<Blocked>() {
            Ok(blocked) => FetchError(format!("GET {url}: {blocked}")),
            Err(other) => FetchError(format!("GET {url}: {other}")),
        },
        ureq::Error::Timeout(_) => FetchError(format!("GET {url}: timed out")),
        e => FetchError(format!("GET {url}: {e}")),
    }
}

/// ureq's resolver, then the address rule on what it found.
#[derive(Debug)]
struct Guard {
    private: Arc<BTreeSet<String>>,
}

impl ureq::unversioned::resolver::Resolver for Guard {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let addrs = ureq::unversioned::resolver::DefaultResolver::default()
            .resolve(uri, config, timeout)?;
        let host = uri
            .host()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_ascii_lowercase();
        let port = uri
            .port_u16()
            .or_else(|| match uri.scheme_str() {
                Some("http") => Some(80),
                _ => Some(443),
            })
            .unwrap_or(443);
        if self.private.contains(&host) || self.private.contains(&format!("{host}:{port}")) {
            return Ok(addrs);
        }
        for a in &addrs {
            if let Some(kind) = non_public(a.ip()) {
                return Err(ureq::Error::Other(Box::new(Blocked {
                    host,
                    addr: a.ip(),
                    kind,
                })));
            }
        }
        Ok(addrs)
    }
}

/// What kind of non-public address `ip` is, if it is one.
#[must_use]
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local (cloud metadata)")
            } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
                Some("shared (CGNAT)")
            } else if v4.is_unspecified() || o[0] == 0 {
                Some("unspecified")
            } else if v4.is_broadcast() || v4.is_multicast() || o[0] >= 240 {
                Some("broadcast, multicast or reserved")
            } else if v4.is_documentation() || (o[0] == 198 && (o[1] & 0xfe) == 18) {
                Some("documentation or benchmarking")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return non_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local (cloud metadata)")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("unique-local (private)")
            } else if v6.is_multicast() {
                Some("broadcast, multicast or reserved")
            } else if s[0] == 0x2001 && s[1] == 0x0db8 {
                Some("documentation or benchmarking")
            } else if s[0] == 0x0064 && s[1] == 0xff9b {
                // NAT64 of an IPv4 address: judged as that address.
                let v4 = std::net::Ipv4Addr::new(
                    (s[6] >> 8) as u8,
                    (s[6] & 0xff) as u8,
                    (s[7] >> 8) as u8,
                    (s[7] & 0xff) as u8,
                );
                non_public(IpAddr::V4(v4))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn metadata_loopback_and_private_addresses_are_not_public() {
        for a in [
            "169.254.169.254",
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(non_public(ip(a)).is_some(), "{a}");
        }
        for a in ["140.82.112.3", "2606:4700::1111", "8.8.8.8"] {
            assert_eq!(non_public(ip(a)), None, "{a}");
        }
    }

    fn boxed(toml: &str, env: &[(&str, &str)]) -> Result<FetchBox, FetchError> {
        let config = crate::config::Config::parse(toml, "fluxsim.toml").unwrap();
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        FetchBox::new(
            &config.network,
            &|k| env.get(k).cloned(),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn plain_http_is_refused_unless_the_host_is_marked_insecure() {
        let b = boxed("[network]\ninsecure = [\"charts.lan:8080\"]\n", &[]).unwrap();
        let e = b.check("http://charts.example.com/index.yaml").unwrap_err();
        assert!(e.contains("plain http"), "{e}");
        assert!(b.check("http://charts.lan:8080/index.yaml").is_ok());
        assert!(b.check("http://charts.lan:9090/index.yaml").is_err());
        assert!(b.check("https://charts.example.com/index.yaml").is_ok());
        let e = b.check("file:///etc/passwd").unwrap_err();
        assert!(e.contains("scheme `file`"), "{e}");
    }

    #[test]
    fn credentials_come_from_the_variables_fluxsim_toml_names_and_stay_on_their_host() {
        let b = boxed(
            "[network.credentials.\"reg.example:5000\"]\nusername_env = \"U\"\npassword_env = \"P\"\n\
             [network.credentials.\"other.example\"]\ntoken_env = \"UNSET\"\n",
            &[("U", "me"), ("P", "pw")],
        )
        .unwrap();
        assert_eq!(
            b.credential("https://reg.example:5000/v2/"),
            Some(&Secret::Basic {
                user: "me".into(),
                password: "pw".into()
            })
        );
        assert_eq!(b.credential("https://reg.example/v2/"), None);
        assert_eq!(b.missing_credentials(), ["other.example"]);
        assert_eq!(
            format!("{:?}", b.credential("https://reg.example:5000/")),
            "Some(Basic(..))"
        );
        let e = boxed("[network.credentials.h]\nusername_env = \"U\"\n", &[]).unwrap_err();
        assert!(e.contains("needs token_env"), "{e}");
    }

    #[test]
    fn a_tool_s_remote_input_is_checked_for_scheme_and_address_before_it_runs() {
        let b = boxed("[network]\nprivate = [\"127.0.0.1:8443\"]\n", &[]).unwrap();
        let e = b.precheck("https://127.0.0.1/cm.yaml").unwrap_err();
        assert!(e.contains("a loopback address"), "{e}");
        assert!(b.precheck("https://127.0.0.1:8443/cm.yaml").is_ok());
        let e = b.precheck("http://169.254.169.254/latest").unwrap_err();
        assert!(e.contains("plain http"), "{e}");
        let e = b.precheck("https://[::1]:9/x//y?ref=v1").unwrap_err();
        assert!(e.contains("loopback"), "{e}");
        let e = b.precheck("git@10.0.0.5:org/repo//base").unwrap_err();
        assert!(e.contains("a private address"), "{e}");
    }

    // A literal address is checked like a resolved one: no DNS is needed to refuse it.
    #[test]
    fn a_literal_metadata_address_is_refused_before_any_request() {
        let b = boxed("", &[]).unwrap();
        let e = b
            .get(
                "https://169.254.169.254/latest/meta-data/",
                None,
                &Auth::Host,
                100,
            )
            .unwrap_err();
        assert!(e.contains("a link-local (cloud metadata) address"), "{e}");
    }
}
