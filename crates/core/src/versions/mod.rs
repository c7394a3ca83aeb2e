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

mod apis;
mod files;
mod objects;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use apis::{flux_api_minors, from_constraint, presumed_from_apis, FLUX_API_TABLE};
pub use files::FileEvidence;
pub use objects::{flux_from_objects, kube_from_objects, Seen};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::ObjectId;
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
