//! The network decision: whether a render may fetch a remote input, and which ones.
//!
//! The repository is untrusted (a pull request), so what fluxsim reaches is decided by the
//! command line and by what the **base** revision already names, never by the tree being
//! reviewed alone:
//!
//! - [`NetworkMode::None`]: nothing is fetched (the default of the single-revision commands);
//! - [`NetworkMode::BaseTrusted`]: only the remote inputs the base revision names
//!   ([`Trust`]: its HelmRepositories', OCIRepositories' and GitRepositories' URLs, its
//!   kustomizations' remote bases and remote files, each as scheme, host and path prefix), at
//!   whatever version or ref the head asks for (the default of `diff` and `prove`);
//! - [`NetworkMode::Any`]: every remote input (trusted repositories only).
//!
//! What is fetched goes through [`fetch::FetchBox`] (https only, no private addresses, size
//! and time caps, credentials from the user's settings only), whatever the mode.

pub mod fetch;
pub mod oci;

use std::collections::BTreeSet;
use std::sync::Arc;

/// `--network`: what a render may fetch (each variant's first line is its help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum NetworkMode {
    /// Nothing: a Kustomization or release that needs a remote input is reported, not built.
    #[default]
    None,
    /// Only what the base revision already names (host and path prefix), at any version.
    BaseTrusted,
    /// Every remote input the repository names (trusted repositories only).
    Any,
}

impl NetworkMode {
    /// As the command line spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::None => "none",
            NetworkMode::BaseTrusted => "base-trusted",
            NetworkMode::Any => "any",
        }
    }
}

/// Why a remote input was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The network is off (`--network none`).
    #[error("the network is off (`--network none`)")]
    Offline,
    /// Under `--network base-trusted`, the base revision does not name it.
    #[error("head adds remote input {url}, not fetched: review the source")]
    NotTrusted {
        /// The input, as the repository writes it.
        url: String,
    },
    /// The fetch box refuses it (scheme, address), or its host cannot be resolved.
    #[error("not fetched: {0}")]
    Boxed(String),
}

/// What a render may fetch: the mode, what the base trusts, and the box every fetch of
/// fluxsim's own goes through.
#[derive(Debug, Clone, Default)]
pub struct Network {
    /// The mode.
    pub mode: NetworkMode,
    /// Under [`NetworkMode::BaseTrusted`], what the base revision names.
    pub trust: Arc<Trust>,
    /// The fetch box (`[network]` of the trusted fluxsim.toml, and the environment).
    pub fetch_box: Arc<fetch::FetchBox>,
}

impl PartialEq for Network {
    fn eq(&self, other: &Self) -> bool {
        self.mode == other.mode && self.trust == other.trust
    }
}

impl Network {
    /// No network at all.
    #[must_use]
    pub fn offline() -> Network {
        Network::default()
    }

    /// Whether anything may be fetched at all (a tool then gets the network).
    #[must_use]
    pub fn reaches(&self) -> bool {
        self.mode != NetworkMode::None
    }

    /// Whether `url` (a remote input as the repository writes it) may be fetched.
    ///
    /// # Errors
    /// Why not.
    pub fn permits(&self, url: &str) -> Result<(), Refusal> {
        match self.mode {
            NetworkMode::None => Err(Refusal::Offline),
            NetworkMode::Any => Ok(()),
            NetworkMode::BaseTrusted if self.trust.trusts(url) => Ok(()),
            NetworkMode::BaseTrusted => Err(Refusal::NotTrusted {
                url: url.to_string(),
            }),
        }
    }

    /// The same network with `mode`.
    #[must_use]
    pub fn with_mode(&self, mode: NetworkMode) -> Network {
        Network {
            mode,
            ..self.clone()
        }
    }
}

/// One trusted prefix: a scheme, a host (with its port, lower case) and leading path
/// segments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Prefix {
    /// `https`, `http`, `oci`, `ssh`.
    pub scheme: String,
    /// `charts.example.com`, `registry.local:5000`.
    pub host: String,
    /// The path's segments the input must start with.
    pub path: Vec<String>,
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}/{}", self.scheme, self.host, self.path.join("/"))
    }
}

/// What the base revision names: the prefixes a head's remote input may start with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    prefixes: BTreeSet<Prefix>,
}

/// How many path segments of a remote file's folder a trusted prefix keeps: the
/// `owner/repository` level of the forges (`raw.githubusercontent.com/org/repo/v1.2/x.yaml`
/// trusts `org/repo` at any ref).
const FILE_PREFIX_SEGMENTS: usize = 2;

impl Trust {
    /// The prefixes, in order.
    pub fn prefixes(&self) -> impl Iterator<Item = &Prefix> {
        self.prefixes.iter()
    }

    /// Trusts a Flux source's URL (a HelmRepository, OCIRepository or GitRepository
    /// `spec.url`): every input below it.
    pub fn add_source(&mut self, url: &str) {
        if let Some(p) = parse(url) {
            self.prefixes.insert(p);
        }
    }

    /// Trusts a kustomization's remote entry: a remote base, its repository at any ref; a
    /// remote file, its folder's first [`FILE_PREFIX_SEGMENTS`] segments.
    pub fn add_entry(&mut self, url: &str) {
        if let Some(mut p) = parse(url) {
            if !is_git_form(url) {
                // The file name goes, then all but the leading segments of its folder.
                p.path.pop();
                p.path.truncate(FILE_PREFIX_SEGMENTS);
            }
            self.prefixes.insert(p);
        }
    }

    /// Whether `url` starts with a trusted prefix (scheme and host equal, the prefix's path
    /// segments leading its path).
    #[must_use]
    pub fn trusts(&self, url: &str) -> bool {
        let Some(u) = parse(url) else {
            return false;
        };
        self.prefixes
            .iter()
            .any(|p| p.scheme == u.scheme && p.host == u.host && u.path.starts_with(&p.path))
    }

    /// Whether nothing is trusted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }
}

/// Whether kustomize reads `url` as a git repository (a remote base), not a file: it takes it
/// as a repository ([`crate::cache::remote::is_remote_base`]) and it is no plain http(s)
/// file, or it carries a repository's marks (`//` after the host, `.git`, `_git/`, a `ref`
/// or `version` query).
fn is_git_form(url: &str) -> bool {
    use crate::cache::remote::{is_remote_base, is_remote_file};
    if !is_remote_base(url) {
        return false;
    }
    if !is_remote_file(url) {
        return true;
    }
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    let (path, query) = after_scheme.split_once('?').unwrap_or((after_scheme, ""));
    path.contains("//")
        || path.contains(".git")
        || path.contains("_git/")
        || query
            .split('&')
            .any(|kv| kv.starts_with("ref=") || kv.starts_with("version="))
}

/// A remote input as scheme, host and path: `https://h/a/b`, `oci://h/a`, a kustomize git
/// form (`github.com/org/repo//sub?ref=v1`, `git@github.com:org/repo`,
/// `git::https://h/org/repo`), the repository path ending at `//`, `.git` or the query.
#[must_use]
pub fn parse(url: &str) -> Option<Prefix> {
    let url = url.trim();
    let url = url.strip_prefix("git::").unwrap_or(url);
    let (scheme, rest) = if let Some((s, r)) = url.split_once("://") {
        (s.to_ascii_lowercase(), r)
    } else if let Some(r) = url.strip_prefix("git@") {
        // scp-like: git@host:org/repo
        let (host, path) = r.split_once(':')?;
        return Some(prefix("ssh", host, path, true));
    } else {
        // kustomize reads `github.com/org/repo` as https.
        ("https".to_string(), url)
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    // user@host: the user is not part of what is trusted.
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let git = is_git_form(url);
    Some(prefix(&scheme, host, path, git))
}

fn prefix(scheme: &str, host: &str, path: &str, git: bool) -> Prefix {
    let mut host = host.to_ascii_lowercase();
    // The scheme's own port is the same host.
    for (s, port) in [("https", ":443"), ("http", ":80"), ("ssh", ":22")] {
        if scheme == s {
            if let Some(h) = host.strip_suffix(port) {
                host = h.to_string();
            }
        }
    }
    // A remote base's repository path (`repospec.go` parsePathParts): up to `_git/NAME`,
    // `//`, `.git` (the same repository without it), else its first two segments.
    let path = if git {
        if let Some(i) = path.find("_git/") {
            let after = &path[i + 5..];
            format!(
                "{}{}",
                &path[..i + 5],
                after.split('/').next().unwrap_or_default()
            )
        } else if let Some(i) = path.find("//") {
            path[..i].trim_end_matches(".git").to_string()
        } else if let Some(i) = path.find(".git") {
            path[..i].to_string()
        } else {
            path.split('/').take(2).collect::<Vec<_>>().join("/")
        }
    } else {
        path.to_string()
    };
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::to_string)
        .collect();
    Prefix {
        scheme: scheme.to_string(),
        host,
        path: segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trust(sources: &[&str], entries: &[&str]) -> Trust {
        let mut t = Trust::default();
        for s in sources {
            t.add_source(s);
        }
        for e in entries {
            t.add_entry(e);
        }
        t
    }

    #[test]
    fn a_helm_repository_trusts_every_chart_below_its_url_and_no_sibling() {
        let t = trust(&["https://charts.example.com/stable/"], &[]);
        assert!(t.trusts("https://charts.example.com/stable"));
        assert!(t.trusts("https://charts.example.com/stable/sub"));
        assert!(!t.trusts("https://charts.example.com/stable-evil"));
        assert!(!t.trusts("https://charts.example.com/"));
        assert!(
            !t.trusts("http://charts.example.com/stable"),
            "scheme counts"
        );
        assert!(!t.trusts("https://charts.example.com.evil.net/stable"));
        assert!(t.trusts("https://CHARTS.example.com:443/stable"));
    }

    #[test]
    fn an_oci_registry_path_trusts_the_charts_below_it_at_any_tag() {
        let t = trust(&["oci://ghcr.io/stefanprodan/charts"], &[]);
        assert!(t.trusts("oci://ghcr.io/stefanprodan/charts/podinfo"));
        assert!(!t.trusts("oci://ghcr.io/stefanprodan"));
        assert!(!t.trusts("oci://ghcr.io/attacker/charts/podinfo"));
    }

    // A Renovate bump changes the ref: the repository is what is trusted.
    #[test]
    fn a_remote_base_is_trusted_at_any_ref_of_its_repository() {
        let t = trust(&[], &["https://github.com/org/infra//base?ref=v1.0.0"]);
        assert!(t.trusts("https://github.com/org/infra//base?ref=v1.1.0"));
        assert!(t.trusts("https://github.com/org/infra.git//other?ref=main"));
        assert!(!t.trusts("https://github.com/org/other//base?ref=v1"));
        let t = trust(&[], &["github.com/org/infra/base?ref=v1"]);
        assert!(t.trusts("github.com/org/infra/base?ref=v2"));
        let t = trust(&[], &["git@github.com:org/infra.git//base"]);
        assert!(t.trusts("git@github.com:org/infra//x?ref=v2"));
        assert!(
            !t.trusts("https://github.com/org/infra//x"),
            "ssh is not https"
        );
    }

    #[test]
    fn a_remote_file_trusts_the_owner_and_repository_level_of_its_folder() {
        let t = trust(
            &[],
            &["https://raw.githubusercontent.com/org/repo/v1.2.0/deploy/crds.yaml"],
        );
        assert!(t.trusts("https://raw.githubusercontent.com/org/repo/v1.3.0/deploy/crds.yaml"));
        assert!(!t.trusts("https://raw.githubusercontent.com/other/repo/v1/crds.yaml"));
        let t = trust(&[], &["https://example.com/a.yaml"]);
        assert!(
            t.trusts("https://example.com/b.yaml"),
            "a file at the top trusts the host"
        );
    }

    #[test]
    fn the_modes_decide_before_the_trust() {
        let n = Network {
            mode: NetworkMode::BaseTrusted,
            trust: Arc::new(trust(&["https://a.example/x"], &[])),
            ..Network::default()
        };
        assert_eq!(n.permits("https://a.example/x/index.yaml"), Ok(()));
        assert_eq!(
            n.permits("https://b.example/x").unwrap_err().to_string(),
            "head adds remote input https://b.example/x, not fetched: review the source"
        );
        assert_eq!(
            n.with_mode(NetworkMode::Any).permits("https://b.example/"),
            Ok(())
        );
        assert_eq!(
            n.with_mode(NetworkMode::None)
                .permits("https://a.example/x"),
            Err(Refusal::Offline)
        );
        assert!(!Network::offline().reaches());
    }
}
