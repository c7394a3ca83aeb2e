//! Which Flux and Kubernetes versions each cluster runs, read from the evidence the
//! repository holds, and what was assumed when it holds none: `[versions]` in `fluxsim.toml`
//! first, then what is on the cluster once it has converged (the kustomize-controller
//! Deployment's image, the `app.kubernetes.io/version` label `flux install` puts on every
//! object of `gotk-components.yaml`, a Flux Operator `FluxInstance`'s
//! `spec.distribution.version`, a `flux-instance` chart's values, a `flux-manifests`
//! OCIRepository's tag), then the header `flux bootstrap` writes into a
//! `gotk-components.yaml` that is not rendered. The Kubernetes version comes from
//! fluxsim.toml (`[versions] kubernetes`, `[validate] kube_version`), the render (a tuppr
//! `KubernetesUpgrade`, a system-upgrade-controller `Plan` of k3s or RKE2) and the node
//! configuration the repository keeps (Talos `talconfig.yaml` and machine configs, kind
//! node images, Ansible `k3s_version`).
//!
//! Every check whose answer depends on a version says which it assumed and from where
//! ([`ClusterVersions::describe`]); a version nothing in the repository says is
//! [`Basis::Presumed`], never passed off as found.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::flux::ObjectId;
use crate::source::SourceFs;

/// The Flux release fluxsim reproduces (`versions.env` `FLUX`; tests/it/versions.rs checks).
pub const REPRODUCED_FLUX: &str = "v2.9.5";

/// The oldest Flux minor fluxsim knows the APIs of (Flux v2.0, the first GA release).
pub const OLDEST_FLUX_MINOR: u32 = 0;

/// The newest Flux minor fluxsim knows (that of [`REPRODUCED_FLUX`]).
pub const NEWEST_FLUX_MINOR: u32 = 9;

/// A Flux 2.x release: its minor, and its patch when the evidence says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FluxVersion {
    /// `4` for Flux v2.4.
    pub minor: u32,
    /// `1` for v2.4.1; `None` when only the minor is known.
    pub patch: Option<u32>,
}

impl FluxVersion {
    /// The release fluxsim reproduces.
    pub const NEWEST: FluxVersion = FluxVersion {
        minor: NEWEST_FLUX_MINOR,
        patch: None,
    };

    /// Reads `v2.4.1`, `2.4`, `2.4.x`, `v2.4.0-rc.1` (a 2.x version; the patch is kept when
    /// it is a number).
    #[must_use]
    pub fn parse(s: &str) -> Option<FluxVersion> {
        let (major, minor, patch) = numbers(s)?;
        (major == 2).then_some(FluxVersion { minor, patch })
    }

    /// Whether kustomize-controller fails on a var without a default that no source defines
    /// when its `StrictPostBuildSubstitutions` gate is not set: the gate exists since
    /// kustomize-controller v1.3.0 (Flux v2.3) and is on by default since v1.9.0 (Flux v2.9):
    /// `internal/features/features.go` and CHANGELOG.md of kustomize-controller v1.9.5.
    #[must_use]
    pub fn strict_by_default(self) -> bool {
        self.minor >= 9
    }

    /// Whether fluxsim knows this minor's APIs.
    #[must_use]
    pub fn is_known(self) -> bool {
        (OLDEST_FLUX_MINOR..=NEWEST_FLUX_MINOR).contains(&self.minor)
    }
}

impl fmt::Display for FluxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "v2.{}.{p}", self.minor),
            None => write!(f, "v2.{}", self.minor),
        }
    }
}

/// A Kubernetes 1.x release: its minor, and its patch when the evidence says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct KubeVersion {
    /// `31` for Kubernetes 1.31.
    pub minor: u32,
    /// `2` for 1.31.2.
    pub patch: Option<u32>,
}

impl KubeVersion {
    /// Reads `v1.31.2`, `1.31`, `v1.31.2+k3s1` (a 1.x version).
    #[must_use]
    pub fn parse(s: &str) -> Option<KubeVersion> {
        let (major, minor, patch) = numbers(s)?;
        (major == 1 && minor > 0).then_some(KubeVersion { minor, patch })
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "1.{}.{p}", self.minor),
            None => write!(f, "1.{}", self.minor),
        }
    }
}

/// `MAJOR.MINOR[.PATCH]` out of `v2.4.1`, `2.4.x`, `1.31.2+k3s1`, `v1.2.3-rc.1`.
fn numbers(s: &str) -> Option<(u32, u32, Option<u32>)> {
    let t = s.trim().trim_matches(['"', '\'']);
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut parts = t.splitn(3, '.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    let patch = parts.next().and_then(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    });
    Some((major, minor, patch))
}

/// Where a version comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Basis {
    /// `fluxsim.toml`: the key that sets it.
    Config {
        /// `[versions] flux`, `[versions.clusters.dev] kubernetes`, `[validate] kube_version`.
        key: String,
    },
    /// Read from the repository.
    Evidence {
        /// What says it (`` `Deployment/flux-system/kustomize-controller` image
        /// `ghcr.io/fluxcd/kustomize-controller:v1.4.0` ``).
        what: String,
        /// The file (and line) when it is one of the repository's (`talos/talconfig.yaml:4`).
        file: Option<String>,
    },
    /// Nothing in the repository says it: presumed, and why.
    Presumed {
        /// Why this version.
        why: String,
    },
}

impl Basis {
    /// Whether the version was read (from the repository or fluxsim.toml), not presumed.
    #[must_use]
    pub fn is_known(&self) -> bool {
        !matches!(self, Basis::Presumed { .. })
    }
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Basis::Config { key } => write!(f, "set by fluxsim.toml {key}"),
            Basis::Evidence {
                what,
                file: Some(file),
            } => write!(f, "from {what} in {file}"),
            Basis::Evidence { what, file: None } => write!(f, "from {what}"),
            Basis::Presumed { why } => write!(f, "presumed: {why}"),
        }
    }
}

/// A version and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assumed<T> {
    /// The version.
    pub version: T,
    /// Where it comes from.
    pub basis: Basis,
}

/// The versions one cluster runs, as far as the repository tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterVersions {
    /// Flux (always: presumed the newest when nothing says).
    pub flux: Assumed<FluxVersion>,
    /// Kubernetes, when the repository or fluxsim.toml says it.
    pub kubernetes: Option<Assumed<KubeVersion>>,
}

impl Default for ClusterVersions {
    fn default() -> Self {
        ClusterVersions {
            flux: presumed_newest(),
            kubernetes: None,
        }
    }
}

impl ClusterVersions {
    /// One line a report prints: `Flux v2.4 (from ...); Kubernetes 1.31 (from ...)`.
    #[must_use]
    pub fn describe(&self) -> String {
        let flux = format!("Flux {}, {}", self.flux.version, self.flux.basis);
        match &self.kubernetes {
            Some(k) => format!("{flux}; Kubernetes {}, {}", k.version, k.basis),
            None => format!("{flux}; Kubernetes not said by the repository"),
        }
    }
}

/// The presumption when nothing says which Flux a cluster runs: the release fluxsim
/// reproduces.
#[must_use]
pub fn presumed_newest() -> Assumed<FluxVersion> {
    Assumed {
        version: FluxVersion::NEWEST,
        basis: Basis::Presumed {
            why: format!(
                "nothing in the repository says which Flux runs, so the release fluxsim \
                 reproduces, {REPRODUCED_FLUX} (`[versions] flux` in fluxsim.toml says it)"
            ),
        },
    }
}

/// The Flux minors whose CRDs serve each Flux API (`group\tversion\tkind\tminors`, the
/// minors comma-separated), taken from the CRDs of every Flux release fluxsim embeds
/// (fluxsim-kubeschema's `flux_api`; a consumers test keeps this copy equal to it, and
/// `UPDATE_EXPECTED=1` rewrites it).
pub const FLUX_API_TABLE: &str = include_str!("flux_apis.tsv");

/// The minors that serve the Flux API `group`/`version` `kind`, from [`FLUX_API_TABLE`];
/// `None` for an API the table does not hold.
#[must_use]
pub fn flux_api_minors(group: &str, version: &str, kind: &str) -> Option<Vec<u32>> {
    FLUX_API_TABLE.lines().find_map(|l| {
        let mut cells = l.split('\t');
        let (g, v, k, m) = (cells.next()?, cells.next()?, cells.next()?, cells.next()?);
        (g == group && v == version && k == kind)
            .then(|| m.split(',').filter_map(|x| x.parse().ok()).collect())
    })
}

/// A Flux API: group, version, kind.
type Api<'a> = (&'a str, &'a str, &'a str);

/// The presumption when nothing says which Flux a cluster runs but its objects do: the
/// newest minor that serves every Flux API version `used` names (`(group, version, kind)`),
/// when the newest release does not serve them all (a repository written in `v1beta2`
/// sources runs a Flux that serves them); `None` when the newest serves them, or no minor
/// serves them all.
#[must_use]
pub fn presumed_from_apis<'a>(
    used: impl IntoIterator<Item = Api<'a>>,
) -> Option<Assumed<FluxVersion>> {
    let known: Vec<(Api<'_>, Vec<u32>)> = used
        .into_iter()
        .filter_map(|api| flux_api_minors(api.0, api.1, api.2).map(|m| (api, m)))
        .collect();
    let serves = |minor: u32| known.iter().all(|(_, m)| m.contains(&minor));
    if serves(NEWEST_FLUX_MINOR) {
        return None;
    }
    let minor = (OLDEST_FLUX_MINOR..NEWEST_FLUX_MINOR)
        .rev()
        .find(|m| serves(*m))?;
    let mut old: Vec<String> = known
        .iter()
        .filter(|(_, m)| !m.contains(&NEWEST_FLUX_MINOR))
        .map(|((g, v, k), _)| format!("`{g}/{v}` {k}"))
        .collect();
    old.sort();
    old.dedup();
    let more = old.len().saturating_sub(3);
    old.truncate(3);
    if more > 0 {
        old.push(format!("{more} more"));
    }
    Some(Assumed {
        version: FluxVersion { minor, patch: None },
        basis: Basis::Presumed {
            why: format!(
                "nothing in the repository says which Flux runs, and its objects use {} that \
                 Flux v2.{NEWEST_FLUX_MINOR} no longer serves, so v2.{minor}, the newest release \
                 that serves every Flux API the cluster uses (`[versions] flux` in \
                 fluxsim.toml says it)",
                old.join(", ")
            ),
        },
    })
}

/// What a `FluxInstance`'s `spec.distribution.version` (a semver constraint) installs: the
/// newest minor fluxsim knows that satisfies it (`2.x`, `2.4.x`, `~2.4`, `>=2.3 <2.5`,
/// `2.4.1`), the Flux Operator's reading (`fluxcd.controlplane.io/v1` FluxInstance: the
/// newest release of the distribution matching the constraint). `None` when no known minor
/// satisfies it or it cannot be read.
#[must_use]
pub fn from_constraint(constraint: &str) -> Option<FluxVersion> {
    let c = constraint.trim().trim_matches(['"', '\'']);
    if c.is_empty() {
        return None;
    }
    // No operator: equality, a missing or `x` part a wildcard (Masterminds semver, which
    // the operator uses: `2.4` is `2.4.x`, `2.4.1` that release).
    if !c.contains(['<', '>', '~', '^', '=', '!', ' ', ',', '|', '*']) {
        if let Some(v) = FluxVersion::parse(c) {
            return v.is_known().then_some(v);
        }
    }
    let reqs: Vec<semver::VersionReq> = c
        .split("||")
        .filter_map(|alt| {
            semver::VersionReq::parse(&alt.trim().replace(' ', ", ").replace(",,", ",")).ok()
        })
        .collect();
    if reqs.is_empty() {
        return None;
    }
    (OLDEST_FLUX_MINOR..=NEWEST_FLUX_MINOR)
        .rev()
        .find_map(|minor| {
            // Any patch of the minor that satisfies: 0 to 99 (releases stay well below).
            (0..100u64).rev().find_map(|patch| {
                let v = semver::Version::new(2, u64::from(minor), patch);
                reqs.iter()
                    .any(|r| r.matches(&v))
                    .then_some(FluxVersion { minor, patch: None })
            })
        })
}

/// One object on the cluster, as detection reads it.
pub struct Seen<'a> {
    /// Its id.
    pub id: &'a ObjectId,
    /// The object.
    pub object: &'a Value,
    /// Who put it there (`applied by flux-system/apps`, `bootstrap: ...`).
    pub from: &'a str,
}

/// The Flux version that the objects on a cluster show, strongest evidence first: the
/// kustomize-controller image (what runs the substitution), the label `flux install` puts on
/// Flux's own objects, a FluxInstance, a `flux-instance` chart's values, a `flux-manifests`
/// OCIRepository.
#[must_use]
pub fn flux_from_objects<'a>(
    objects: impl IntoIterator<Item = Seen<'a>>,
) -> Option<Assumed<FluxVersion>> {
    let mut best: BTreeMap<u8, Assumed<FluxVersion>> = BTreeMap::new();
    let mut put = |rank: u8, version: FluxVersion, what: String| {
        best.entry(rank).or_insert(Assumed {
            version,
            basis: Basis::Evidence { what, file: None },
        });
    };
    for Seen { id, object, from } in objects {
        match (id.group.as_str(), id.kind.as_str()) {
            ("apps", "Deployment") if id.name == "kustomize-controller" => {
                if let Some((image, v)) = controller_image(object) {
                    put(0, v, format!("`{id}` image `{image}` ({from})"));
                }
            }
            ("fluxcd.controlplane.io", "FluxInstance") => {
                let c = object
                    .pointer("/spec/distribution/version")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(v) = from_constraint(c) {
                    put(
                        2,
                        v,
                        format!("`{id}` spec.distribution.version `{c}` ({from})"),
                    );
                }
            }
            ("helm.toolkit.fluxcd.io", "HelmRelease")
                if chart_of(object) == Some("flux-instance") =>
            {
                let set = object
                    .pointer("/spec/values/instance/distribution/version")
                    .and_then(Value::as_str);
                // The flux-instance chart's values.yaml: instance.distribution.version "2.x".
                let c = set.unwrap_or("2.x");
                if let Some(v) = from_constraint(c) {
                    let how = if set.is_some() {
                        format!("values instance.distribution.version `{c}`")
                    } else {
                        "the chart's default instance.distribution.version `2.x`".to_string()
                    };
                    put(3, v, format!("`{id}` (chart flux-instance) {how} ({from})"));
                }
            }
            ("source.toolkit.fluxcd.io", "OCIRepository") => {
                let url = object
                    .pointer("/spec/url")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let tag = object.pointer("/spec/ref/tag").and_then(Value::as_str);
                if url.trim_end_matches('/').ends_with("/flux-manifests") {
                    if let Some(v) = tag.and_then(FluxVersion::parse) {
                        put(
                            4,
                            v,
                            format!("`{id}` {url} tag `{}` ({from})", tag.unwrap_or("")),
                        );
                    }
                }
            }
            _ => {}
        }
        // `flux install` labels every object it makes: app.kubernetes.io/part-of: flux,
        // app.kubernetes.io/version: v2.4.0 (flux2 pkg/manifestgen/install/templates).
        let labels = object.pointer("/metadata/labels");
        let part_of = labels
            .and_then(|l| l.get("app.kubernetes.io/part-of"))
            .and_then(Value::as_str);
        if part_of == Some("flux") {
            if let Some(v) = labels
                .and_then(|l| l.get("app.kubernetes.io/version"))
                .and_then(Value::as_str)
                .and_then(FluxVersion::parse)
            {
                put(
                    1,
                    v,
                    format!("`{id}` label app.kubernetes.io/version `{v}` ({from})"),
                );
            }
        }
    }
    best.into_values().next()
}

/// A kustomize-controller container image and the Flux release it belongs to: the
/// controller's minor is Flux's since v1.0.0 (Flux v2.0: flux2 `manifests/bases/
/// kustomize-controller/kustomization.yaml` of each release).
fn controller_image(deployment: &Value) -> Option<(String, FluxVersion)> {
    let containers = deployment
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)?;
    containers.iter().find_map(|c| {
        let image = c.get("image").and_then(Value::as_str)?;
        let tag = image.split('@').next()?.rsplit_once(':')?.1;
        let name = image.split('@').next()?.rsplit_once(':')?.0;
        if !name.ends_with("kustomize-controller") {
            return None;
        }
        let (major, minor, patch) = numbers(tag)?;
        (major == 1).then(|| (image.to_string(), FluxVersion { minor, patch }))
    })
}

/// The chart a HelmRelease names: `spec.chart.spec.chart`, or the last path segment of an
/// OCIRepository `chartRef` name (the Flux Operator's charts are referenced so).
fn chart_of(hr: &Value) -> Option<&str> {
    if let Some(c) = hr.pointer("/spec/chart/spec/chart").and_then(Value::as_str) {
        return Some(c.rsplit('/').next().unwrap_or(c));
    }
    hr.pointer("/spec/chartRef/name").and_then(Value::as_str)
}

/// The Kubernetes version objects on the cluster show: a tuppr `KubernetesUpgrade`
/// (`spec.kubernetes.version`), a system-upgrade-controller `Plan` upgrading k3s or RKE2
/// (`spec.version`).
#[must_use]
pub fn kube_from_objects<'a>(
    objects: impl IntoIterator<Item = Seen<'a>>,
) -> Option<Assumed<KubeVersion>> {
    for Seen { id, object, from } in objects {
        let found = match (id.group.as_str(), id.kind.as_str()) {
            ("tuppr.home-operations.com", "KubernetesUpgrade") => object
                .pointer("/spec/kubernetes/version")
                .and_then(Value::as_str)
                .map(|v| (v, "spec.kubernetes.version")),
            ("upgrade.cattle.io", "Plan") => {
                let image = object
                    .pointer("/spec/upgrade/image")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                (image.contains("k3s-upgrade") || image.contains("rke2-upgrade"))
                    .then(|| object.pointer("/spec/version").and_then(Value::as_str))
                    .flatten()
                    .map(|v| (v, "spec.version"))
            }
            _ => None,
        };
        if let Some((text, field)) = found {
            if let Some(v) = KubeVersion::parse(text) {
                return Some(Assumed {
                    version: v,
                    basis: Basis::Evidence {
                        what: format!("`{id}` {field} `{text}` ({from})"),
                        file: None,
                    },
                });
            }
        }
    }
    None
}

/// The most bytes read of one file that may hold a version.
const MAX_BYTES: usize = 256 * 1024;
/// The most such files read.
const MAX_FILES: usize = 400;

/// What the repository's files (not its Kustomizations) say of versions: the header of a
/// `gotk-components.yaml`, Kubernetes versions in node configuration.
#[derive(Debug, Clone, Default)]
pub struct FileEvidence {
    /// `# Flux Version: v2.4.0` headers: (file, line, version).
    pub flux: Vec<(String, usize, FluxVersion)>,
    /// Kubernetes versions: (file, line, what, version).
    pub kubernetes: Vec<(String, usize, String, KubeVersion)>,
}

impl FileEvidence {
    /// Reads the candidate files among `files` (relative paths of the tree `fs`), within the
    /// repository's read bounds.
    #[must_use]
    pub fn read(fs: &SourceFs, files: &[String]) -> FileEvidence {
        let mut out = FileEvidence::default();
        let candidates = files.iter().filter(|f| is_candidate(f)).take(MAX_FILES);
        for rel in candidates {
            let Ok(bytes) = fs.read(&fs.root().join(rel)) else {
                continue;
            };
            if bytes.len() > MAX_BYTES {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            out.scan(rel, &text);
        }
        out
    }

    fn scan(&mut self, rel: &str, text: &str) {
        let name = Path::new(rel)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        for (i, line) in text.lines().enumerate() {
            let at = i + 1;
            let l = line.trim();
            if name == "gotk-components.yaml" {
                // flux2 `cmd/flux/bootstrap`: "# Flux Version: v2.4.0" in the header.
                if let Some(v) = l
                    .strip_prefix("# Flux Version:")
                    .and_then(FluxVersion::parse)
                {
                    self.flux.push((rel.to_string(), at, v));
                }
                continue;
            }
            for (needle, what) in KUBE_NEEDLES {
                let Some(pos) = l.find(needle) else { continue };
                let rest = &l[pos + needle.len()..];
                let value: String = rest
                    .trim_start_matches([' ', '"', '\''])
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | ','))
                    .collect();
                if let Some(v) = KubeVersion::parse(&value) {
                    self.kubernetes
                        .push((rel.to_string(), at, format!("{what} `{value}`"), v));
                }
            }
        }
    }

    /// The Flux version the file headers say for a cluster whose folder is `home`: a
    /// header under `home` first, else the only version the repository's headers say.
    #[must_use]
    pub fn flux_for(&self, home: &str) -> Option<Assumed<FluxVersion>> {
        pick(
            self.flux
                .iter()
                .map(|(f, l, v)| (f.as_str(), *l, "header `# Flux Version`".to_string(), *v)),
            home,
        )
    }

    /// The Kubernetes version the node configuration says for a cluster whose folder is
    /// `home` (named `cluster`): under `home` or in a path that names the cluster first,
    /// else the only version the repository says.
    #[must_use]
    pub fn kube_for(&self, home: &str, cluster: &str) -> Option<Assumed<KubeVersion>> {
        let named: Vec<_> = self
            .kubernetes
            .iter()
            .filter(|(f, ..)| f.split('/').any(|c| c == cluster))
            .collect();
        let all = if named.is_empty() {
            self.kubernetes.iter().collect()
        } else {
            named
        };
        pick(
            all.into_iter()
                .map(|(f, l, w, v)| (f.as_str(), *l, w.clone(), *v)),
            home,
        )
    }
}

/// Among `(file, line, what, version)`, those under `home` if any, else all; one version
/// when they agree (the first file's evidence), none when they disagree.
fn pick<'a, T: Copy + PartialEq>(
    found: impl Iterator<Item = (&'a str, usize, String, T)>,
    home: &str,
) -> Option<Assumed<T>> {
    let found: Vec<_> = found.collect();
    let under: Vec<_> = found
        .iter()
        .filter(|(f, ..)| home.is_empty() || f.starts_with(&format!("{home}/")))
        .collect();
    let set = if under.is_empty() {
        found.iter().collect()
    } else {
        under
    };
    let first = set.first()?;
    if set.iter().any(|(_, _, _, v)| *v != first.3) {
        return None;
    }
    Some(Assumed {
        version: first.3,
        basis: Basis::Evidence {
            what: first.2.clone(),
            file: Some(format!("{}:{}", first.0, first.1)),
        },
    })
}

/// Text that names a Kubernetes version in node configuration, and what it is: Talos
/// (talhelper's `talconfig.yaml`, machine configs' images), kind, k3s/RKE2 Ansible roles.
const KUBE_NEEDLES: &[(&str, &str)] = &[
    ("kubernetesVersion:", "kubernetesVersion"),
    ("registry.k8s.io/kube-apiserver:", "image kube-apiserver"),
    ("ghcr.io/siderolabs/kubelet:", "image kubelet"),
    ("kindest/node:", "image kindest/node"),
    ("k3s_version:", "k3s_version"),
    ("rke2_version:", "rke2_version"),
];

/// Whether a file may hold version evidence: a `gotk-components.yaml`, Talos configuration
/// (`talconfig.yaml`, a file under a `talos` folder), a kind config, Ansible variables.
fn is_candidate(rel: &str) -> bool {
    let p = Path::new(rel);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_dir = |d: &str| {
        p.parent()
            .is_some_and(|parent| parent.components().any(|c| c.as_os_str() == d))
    };
    let text_like = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["yaml", "yml", "j2", "tmpl", "gotmpl"].contains(&e));
    name == "gotk-components.yaml"
        || name == "talconfig.yaml"
        || (text_like
            && (in_dir("talos")
                || in_dir("group_vars")
                || in_dir("host_vars")
                || name.starts_with("kind")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(group: &str, kind: &str, ns: &str, name: &str) -> ObjectId {
        ObjectId {
            group: group.into(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    #[test]
    fn versions_parse_as_flux_and_kubernetes_write_them() {
        assert_eq!(
            FluxVersion::parse("v2.4.1"),
            Some(FluxVersion {
                minor: 4,
                patch: Some(1)
            })
        );
        assert_eq!(
            FluxVersion::parse("2.4.x"),
            Some(FluxVersion {
                minor: 4,
                patch: None
            })
        );
        assert_eq!(
            FluxVersion::parse("2.4"),
            Some(FluxVersion {
                minor: 4,
                patch: None
            })
        );
        assert_eq!(FluxVersion::parse("v1.4.0"), None);
        assert_eq!(
            KubeVersion::parse("v1.31.2+k3s1"),
            Some(KubeVersion {
                minor: 31,
                patch: Some(2)
            })
        );
        assert_eq!(FluxVersion::parse("v2.4.1").unwrap().to_string(), "v2.4.1");
        assert_eq!(KubeVersion::parse("1.35").unwrap().to_string(), "1.35");
    }

    // kustomize-controller internal/features/features.go: StrictPostBuildSubstitutions
    // false in v1.7.3, true in v1.9.5 (CHANGELOG 1.9.0: "Enable StrictPostBuildSubstitutions
    // by default").
    #[test]
    fn strict_substitution_is_the_default_from_flux_2_9_on() {
        assert!(!FluxVersion::parse("2.8").unwrap().strict_by_default());
        assert!(!FluxVersion::parse("2.3").unwrap().strict_by_default());
        assert!(FluxVersion::parse("2.9.0").unwrap().strict_by_default());
    }

    // The Flux Operator reads spec.distribution.version as a semver constraint and installs
    // the newest release matching it.
    #[test]
    fn a_distribution_constraint_installs_the_newest_matching_minor() {
        let minor = |c: &str| from_constraint(c).map(|v| v.minor);
        assert_eq!(minor("2.x"), Some(NEWEST_FLUX_MINOR));
        assert_eq!(minor("2.4.x"), Some(4));
        assert_eq!(minor("~2.3"), Some(3));
        assert_eq!(minor(">=2.3.0 <2.5.0"), Some(4));
        assert_eq!(
            from_constraint("2.4.1"),
            Some(FluxVersion {
                minor: 4,
                patch: Some(1)
            })
        );
        assert_eq!(minor("3.x"), None);
        assert_eq!(minor(""), None);
    }

    #[test]
    fn the_kustomize_controller_image_wins_over_weaker_evidence() {
        let deploy = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "manager", "image": "ghcr.io/fluxcd/kustomize-controller:v1.4.0@sha256:ab"}]}}},
            "metadata": {"labels": {"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/version": "v2.4.0"}}});
        let fi = json!({"spec": {"distribution": {"version": "2.x"}}});
        let (d, f) = (
            id("apps", "Deployment", "flux-system", "kustomize-controller"),
            id(
                "fluxcd.controlplane.io",
                "FluxInstance",
                "flux-system",
                "flux",
            ),
        );
        let found = flux_from_objects([
            Seen {
                id: &f,
                object: &fi,
                from: "applied by flux-system/flux",
            },
            Seen {
                id: &d,
                object: &deploy,
                from: "applied by flux-system/flux-system",
            },
        ])
        .unwrap();
        assert_eq!(
            found.version,
            FluxVersion {
                minor: 4,
                patch: Some(0)
            }
        );
        assert!(
            found
                .basis
                .to_string()
                .contains("kustomize-controller:v1.4.0"),
            "{}",
            found.basis
        );
        let only_instance = flux_from_objects([Seen {
            id: &f,
            object: &fi,
            from: "x",
        }])
        .unwrap();
        assert_eq!(only_instance.version.minor, NEWEST_FLUX_MINOR);
    }

    #[test]
    fn a_flux_instance_chart_without_a_version_installs_its_default_2_x() {
        let hr = json!({"spec": {"chartRef": {"kind": "OCIRepository", "name": "flux-instance"},
            "values": {"instance": {"cluster": {"type": "kubernetes"}}}}});
        let i = id(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "flux-system",
            "flux-instance",
        );
        let found = flux_from_objects([Seen {
            id: &i,
            object: &hr,
            from: "x",
        }])
        .unwrap();
        assert_eq!(found.version.minor, NEWEST_FLUX_MINOR);
        assert!(found.basis.to_string().contains("default"));
        let pinned = json!({"spec": {"chart": {"spec": {"chart": "flux-instance"}},
            "values": {"instance": {"distribution": {"version": "2.5.x"}}}}});
        let found = flux_from_objects([Seen {
            id: &i,
            object: &pinned,
            from: "x",
        }])
        .unwrap();
        assert_eq!(found.version.minor, 5);
    }

    #[test]
    fn node_configuration_and_bootstrap_headers_say_versions_with_file_and_line() {
        let mut e = FileEvidence::default();
        e.scan(
            "clusters/dev/flux-system/gotk-components.yaml",
            "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: v2.3.0\n",
        );
        e.scan(
            "talos/talconfig.yaml",
            "clusterName: home\nkubernetesVersion: v1.31.4\n",
        );
        e.scan(
            "talos/patch.yaml",
            "  image: registry.k8s.io/kube-apiserver:{{ ENV.K8S }}\n",
        );
        let f = e.flux_for("clusters/dev").unwrap();
        assert_eq!(
            f.version,
            FluxVersion {
                minor: 3,
                patch: Some(0)
            }
        );
        assert_eq!(
            f.basis,
            Basis::Evidence {
                what: "header `# Flux Version`".into(),
                file: Some("clusters/dev/flux-system/gotk-components.yaml:3".into())
            }
        );
        let k = e.kube_for("clusters/dev", "dev").unwrap();
        assert_eq!(k.version.to_string(), "1.31.4");
        assert!(
            k.basis.to_string().ends_with("talos/talconfig.yaml:2"),
            "{}",
            k.basis
        );
        // Two clusters' files that disagree, neither under the cluster: nothing is said.
        e.scan(
            "talos/other/controlplane.yaml",
            "image: registry.k8s.io/kube-apiserver:v1.30.1\n",
        );
        assert!(e.kube_for("clusters/dev", "dev").is_none());
        assert!(is_candidate("talos/clusterconfig/node.yaml"));
        assert!(!is_candidate("apps/talos.md"));
    }

    // Flux's CRDs (fluxsim-kubeschema, every minor): source.toolkit.fluxcd.io/v1beta2 is
    // served until v2.7; a repository written in it cannot be running v2.9.
    #[test]
    fn apis_the_newest_release_no_longer_serves_make_the_presumption_older() {
        let old = presumed_from_apis([
            ("source.toolkit.fluxcd.io", "v1beta2", "HelmRepository"),
            ("kustomize.toolkit.fluxcd.io", "v1", "Kustomization"),
        ])
        .expect("a presumption");
        assert_eq!(old.version.minor, 7);
        assert!(old
            .basis
            .to_string()
            .contains("`source.toolkit.fluxcd.io/v1beta2` HelmRepository"));
        assert!(
            presumed_from_apis([("kustomize.toolkit.fluxcd.io", "v1", "Kustomization")]).is_none()
        );
        // v2beta1 HelmRelease (served until v2.6) with v1 Bucket (served from v2.4).
        let mixed = presumed_from_apis([
            ("helm.toolkit.fluxcd.io", "v2beta1", "HelmRelease"),
            ("source.toolkit.fluxcd.io", "v1", "Bucket"),
        ])
        .expect("a presumption");
        assert_eq!(mixed.version.minor, 6);
    }

    #[test]
    fn a_k3s_upgrade_plan_and_a_tuppr_upgrade_say_the_kubernetes_version() {
        let plan = json!({"spec": {"version": "v1.30.5+k3s1", "upgrade": {"image": "rancher/k3s-upgrade"}}});
        let p = id("upgrade.cattle.io", "Plan", "system-upgrade", "server");
        let k = kube_from_objects([Seen {
            id: &p,
            object: &plan,
            from: "x",
        }])
        .unwrap();
        assert_eq!(
            k.version,
            KubeVersion {
                minor: 30,
                patch: Some(5)
            }
        );
        let tuppr = json!({"spec": {"kubernetes": {"version": "v1.36.4"}}});
        let t = id(
            "tuppr.home-operations.com",
            "KubernetesUpgrade",
            "",
            "kubernetes",
        );
        let k = kube_from_objects([Seen {
            id: &t,
            object: &tuppr,
            from: "x",
        }])
        .unwrap();
        assert_eq!(k.version.minor, 36);
    }
}
