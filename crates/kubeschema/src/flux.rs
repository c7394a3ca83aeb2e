//! The CRDs of Flux's controllers, embedded for every Flux minor release from v2.0 on: most
//! repositories do not hold them (they leave `gotk-components.yaml` out, or the Flux Operator
//! installs Flux), yet Flux's own objects (Kustomizations, sources, HelmReleases) are what a
//! GitOps change edits most, and which of their API versions a cluster serves depends on its
//! Flux release.
//!
//! `scripts/gen-flux-crds` makes `schemas/flux-crds.json.gz` from the controllers' Go modules
//! at the versions each release's `manifests/bases` names: each distinct CRD once, and each
//! release's controllers with the CRDs they ship.

use std::collections::HashMap;
use std::io::Read as _;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The release and controllers of [`FluxMinor::NEWEST`], as [`FluxRelease`]'s `Display`
/// words it (a test checks it against the embedded file).
pub const FLUX_CRDS_SOURCE: &str = "v2.9.5: helm-controller v1.6.4, \
     image-automation-controller v1.2.5, image-reflector-controller v1.2.5, \
     kustomize-controller v1.9.5, notification-controller v1.9.4, source-controller v1.9.5, \
     source-watcher v2.2.4";

/// A Flux minor release (`v2.N`) whose controllers' CRDs are embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FluxMinor(u8);

impl FluxMinor {
    /// Every embedded minor, oldest first (v2.0 to v2.9).
    pub const ALL: [FluxMinor; 10] = {
        let mut all = [FluxMinor(0); 10];
        let mut i = 0;
        while i < all.len() {
            all[i] = FluxMinor(i as u8);
            i += 1;
        }
        all
    };

    /// The oldest embedded minor, v2.0.
    pub const OLDEST: FluxMinor = FluxMinor::ALL[0];

    /// The newest embedded minor, v2.9 (the release of versions.env's `FLUX`).
    pub const NEWEST: FluxMinor = FluxMinor::ALL[FluxMinor::ALL.len() - 1];

    /// The minor number (`4` for v2.4).
    pub fn minor(self) -> u32 {
        u32::from(self.0)
    }

    /// The embedded minor v2.`minor`, if any.
    pub fn from_minor(minor: u32) -> Option<FluxMinor> {
        FluxMinor::ALL.get(usize::try_from(minor).ok()?).copied()
    }

    /// Reads `2.4`, `v2.4`, `v2.4.1`, `2.4.x` or `v2.4.0-rc.1` (the patch is ignored: the API
    /// does not change within a minor).
    pub fn parse(s: &str) -> Result<FluxMinor, UnsupportedFluxVersion> {
        parse_flux_minor(s)
            .and_then(FluxMinor::from_minor)
            .ok_or_else(|| UnsupportedFluxVersion(s.to_string()))
    }

    /// The embedded minor nearest to a detected Flux v2 version: the minor itself when
    /// embedded, else the newest (a release newer than the embedded ones). Fails on what is
    /// no Flux v2 version.
    pub fn nearest(s: &str) -> Result<FluxNearest, UnsupportedFluxVersion> {
        let minor = parse_flux_minor(s).ok_or_else(|| UnsupportedFluxVersion(s.to_string()))?;
        let found = FluxMinor::from_minor(minor);
        Ok(FluxNearest {
            minor: found.unwrap_or(FluxMinor::NEWEST),
            exact: found.is_some(),
        })
    }

    /// The release this minor's CRDs were taken from, and its controllers.
    pub fn release(self) -> &'static FluxRelease {
        &data().releases[usize::from(self.0)]
    }

    fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl std::fmt::Display for FluxMinor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v2.{}", self.0)
    }
}

/// The minor of `[v]2.N[.PATCH]`, PATCH being digits (with a pre-release or build suffix) or
/// `x`.
fn parse_flux_minor(s: &str) -> Option<u32> {
    let t = s.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut parts = t.splitn(3, '.');
    let (major, minor) = (parts.next()?, parts.next()?);
    if major != "2" || minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Some(patch) = parts.next() {
        let digits = patch.split(['-', '+']).next().unwrap_or_default();
        let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if !(numeric || patch == "x" || patch == "X") {
            return None;
        }
    }
    minor.parse().ok()
}

/// What [`FluxMinor::nearest`] chose for a detected version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FluxNearest {
    /// The embedded minor used.
    pub minor: FluxMinor,
    /// Whether it is the detected minor itself (false: the newest, for a newer release).
    pub exact: bool,
}

/// A Flux version that has no embedded CRDs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Flux version `{0}` has no embedded CRDs (supported: {oldest} to {newest})",
    oldest = FluxMinor::OLDEST,
    newest = FluxMinor::NEWEST
)]
pub struct UnsupportedFluxVersion(pub String);

/// The Flux release a minor's CRDs were taken from (the newest patch the Go module proxy
/// serves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxRelease {
    /// The minor.
    pub minor: FluxMinor,
    /// The release (`v2.4.0`).
    pub release: String,
    /// Its controllers (flux2 `manifests/bases`), by name.
    pub controllers: Vec<FluxController>,
}

impl FluxRelease {
    /// The controllers whose CRDs could not be had: their kinds are unknown for this minor.
    pub fn unavailable(&self) -> impl Iterator<Item = &FluxController> {
        self.controllers
            .iter()
            .filter(|c| c.origin == CrdOrigin::Unavailable)
    }
}

/// `v2.4.0: helm-controller v1.1.0, ..., source-controller v1.4.1`; a controller whose CRDs are
/// not embedded is marked `(CRDs not embedded)`.
impl std::fmt::Display for FluxRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:", self.release)?;
        for (i, c) in self.controllers.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{} {}", c.name, c.version)?;
            if c.origin == CrdOrigin::Unavailable {
                f.write_str(" (CRDs not embedded)")?;
            }
        }
        Ok(())
    }
}

/// A controller of a Flux release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxController {
    /// `kustomize-controller`.
    pub name: String,
    /// `v1.4.0`.
    pub version: String,
    /// Where its embedded CRDs come from.
    pub origin: CrdOrigin,
}

/// Where a controller's embedded CRDs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrdOrigin {
    /// `config/crd/bases` of the controller's Go module.
    ControllerModule,
    /// `controller-gen` on its `api` module, as its `make manifests` makes them (the proxy does
    /// not serve the controller's module at that version).
    ApiModule,
    /// Neither module is served: no CRDs of it are embedded.
    Unavailable,
}

/// The CRDs fluxsim validated Flux's objects against before every minor was embedded, and
/// still does by default: those of kustomize-, source- and helm-controller of the newest minor
/// ([`FluxMinor::NEWEST`]), descriptions stripped. [`flux_crds_for`] has every controller's;
/// the others are left out here because a cluster the Flux Operator installs widens the
/// Alert CRD (its `eventSources[].kind` enum takes `FluxInstance`, `ResourceSet`,
/// `ResourceSetInputProvider`), which upstream notification-controller's does not list.
pub fn flux_crds() -> &'static [Value] {
    static CRDS: OnceLock<Vec<Value>> = OnceLock::new();
    CRDS.get_or_init(|| {
        flux_crds_of(
            FluxMinor::NEWEST,
            &[
                "helm-controller",
                "kustomize-controller",
                "source-controller",
            ],
        )
    })
}

/// The embedded CRDs of some of a minor's controllers (by name, `kustomize-controller`), by
/// CRD name, descriptions stripped.
pub fn flux_crds_of(minor: FluxMinor, controllers: &[&str]) -> Vec<Value> {
    let d = data();
    let digests: Vec<&str> = d.release_crds[minor.index()]
        .iter()
        .filter(|(c, _)| controllers.contains(&c.as_str()))
        .map(|(_, digest)| digest.as_str())
        .collect();
    parse_sorted(&digests)
}

/// The CRDs of these digests, parsed, by name.
fn parse_sorted(digests: &[&str]) -> Vec<Value> {
    let d = data();
    let mut crds: Vec<Value> = digests
        .iter()
        .map(|digest| {
            serde_json::from_str(d.crds[*digest].get()).expect("embedded Flux CRD is JSON")
        })
        .collect();
    crds.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    crds
}

/// The embedded CRDs of all of a minor's controllers, by name, descriptions stripped.
pub fn flux_crds_for(minor: FluxMinor) -> &'static [Value] {
    static PER_MINOR: [OnceLock<Vec<Value>>; FluxMinor::ALL.len()] =
        [const { OnceLock::new() }; FluxMinor::ALL.len()];
    PER_MINOR[minor.index()].get_or_init(|| {
        let digests: Vec<&str> = data().release_crds[minor.index()]
            .iter()
            .map(|(_, digest)| digest.as_str())
            .collect();
        parse_sorted(&digests)
    })
}

/// The life of one Flux API (group, version, kind) across the embedded minors, as their CRDs
/// say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiLifecycle {
    /// The minors whose CRDs serve it, oldest first.
    pub served: Vec<FluxMinor>,
    /// The serving minors whose CRD marks it `deprecated: true`.
    pub deprecated: Vec<FluxMinor>,
    /// The `deprecationWarning` of each serving minor that has one.
    pub warnings: Vec<(FluxMinor, String)>,
    /// The first minor after a serving one whose CRDs of the kind are known and do not serve
    /// it (when a minor of [`unknown`](Self::unknown) lies between, the removal may be there).
    pub removed_in: Option<FluxMinor>,
    /// The storage version of the kind in each minor whose CRDs define the kind.
    pub storage: Vec<(FluxMinor, String)>,
    /// The minors whose CRDs of the kind's controller could not be had: nothing is known of
    /// the kind there.
    pub unknown: Vec<FluxMinor>,
}

impl ApiLifecycle {
    /// Whether `minor`'s CRDs serve it.
    pub fn served_in(&self, minor: FluxMinor) -> bool {
        self.served.contains(&minor)
    }

    /// Whether `minor`'s CRD marks it deprecated.
    pub fn deprecated_in(&self, minor: FluxMinor) -> bool {
        self.deprecated.contains(&minor)
    }

    /// The deprecation warning of `minor`'s CRD (`v1beta2 HelmRepository is deprecated,
    /// upgrade to v1`).
    pub fn warning_in(&self, minor: FluxMinor) -> Option<&str> {
        self.warnings
            .iter()
            .find(|(m, _)| *m == minor)
            .map(|(_, w)| w.as_str())
    }

    /// The storage version of the kind in `minor`.
    pub fn storage_in(&self, minor: FluxMinor) -> Option<&str> {
        self.storage
            .iter()
            .find(|(m, _)| *m == minor)
            .map(|(_, v)| v.as_str())
    }

    /// The oldest minor that serves it (an API v2.0 serves may be older).
    pub fn first_served(&self) -> Option<FluxMinor> {
        self.served.first().copied()
    }
}

/// The lifecycle of `group`/`version` `kind` (`source.toolkit.fluxcd.io`, `v1beta2`,
/// `HelmRepository`) across the embedded minors; `None` when no embedded minor's CRDs have
/// that version of the kind.
pub fn flux_api(group: &str, version: &str, kind: &str) -> Option<ApiLifecycle> {
    let d = data();
    let mut life = ApiLifecycle {
        served: Vec::new(),
        deprecated: Vec::new(),
        warnings: Vec::new(),
        removed_in: None,
        storage: Vec::new(),
        unknown: Vec::new(),
    };
    let mut controller = None;
    let mut defined = Vec::new();
    for minor in FluxMinor::ALL {
        let crd = d.release_crds[minor.index()]
            .iter()
            .find_map(|(c, digest)| {
                let head = &d.heads[digest];
                (head.spec.group == group && head.spec.names.kind == kind)
                    .then_some((c.as_str(), head))
            });
        let Some((c, crd)) = crd else {
            defined.push(None);
            continue;
        };
        controller = Some(c);
        if let Some(s) = crd.spec.versions.iter().find(|v| v.storage) {
            life.storage.push((minor, s.name.clone()));
        }
        let this = crd
            .spec
            .versions
            .iter()
            .find(|v| v.name == version && v.served);
        if let Some(v) = this {
            life.served.push(minor);
            if v.deprecated {
                life.deprecated.push(minor);
            }
            if let Some(w) = &v.deprecation_warning {
                life.warnings.push((minor, w.clone()));
            }
        }
        defined.push(Some(this.is_some()));
    }
    if life.served.is_empty() {
        return None;
    }
    // The minors of a release that lists the kind's controller as unavailable.
    if let Some(c) = controller {
        for minor in FluxMinor::ALL {
            if minor.release().unavailable().any(|u| u.name == c) {
                life.unknown.push(minor);
            }
        }
    }
    let mut seen = false;
    for (minor, serves) in FluxMinor::ALL.into_iter().zip(&defined) {
        match serves {
            Some(true) => seen = true,
            Some(false) | None if seen && !life.unknown.contains(&minor) => {
                life.removed_in = Some(minor);
                break;
            }
            _ => {}
        }
    }
    Some(life)
}

/// The embedded file, read once.
struct Data {
    /// Each distinct CRD by digest, as JSON text.
    crds: HashMap<String, Box<RawValue>>,
    /// What [`flux_api`] reads of each CRD, by digest.
    heads: HashMap<String, CrdHead>,
    /// Each minor's release, as [`FluxMinor::ALL`].
    releases: Vec<FluxRelease>,
    /// Each minor's CRDs: (controller, digest).
    release_crds: Vec<Vec<(String, String)>>,
}

/// The fields of a CRD that say which versions it serves.
#[derive(Deserialize)]
struct CrdHead {
    spec: CrdHeadSpec,
}

#[derive(Deserialize)]
struct CrdHeadSpec {
    group: String,
    names: CrdHeadNames,
    versions: Vec<CrdHeadVersion>,
}

#[derive(Deserialize)]
struct CrdHeadNames {
    kind: String,
}

#[derive(Deserialize)]
struct CrdHeadVersion {
    name: String,
    #[serde(default)]
    served: bool,
    #[serde(default)]
    storage: bool,
    #[serde(default)]
    deprecated: bool,
    #[serde(default, rename = "deprecationWarning")]
    deprecation_warning: Option<String>,
}

#[derive(Deserialize)]
struct RawData {
    crds: HashMap<String, Box<RawValue>>,
    releases: Vec<RawRelease>,
}

#[derive(Deserialize)]
struct RawRelease {
    minor: String,
    release: String,
    controllers: Vec<RawController>,
    unavailable: Vec<RawUnavailable>,
}

#[derive(Deserialize)]
struct RawController {
    name: String,
    version: String,
    from: String,
    crds: Vec<String>,
}

#[derive(Deserialize)]
struct RawUnavailable {
    name: String,
    version: String,
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        let mut text = Vec::new();
        // The file is generated and checked by this crate's tests: it always decodes, lists
        // the minors of `FluxMinor::ALL` in order, and names only CRDs it holds.
        flate2::read::GzDecoder::new(&include_bytes!("../schemas/flux-crds.json.gz")[..])
            .read_to_end(&mut text)
            .expect("embedded Flux CRDs decode");
        let raw: RawData = serde_json::from_slice(&text).expect("embedded Flux CRDs are JSON");
        let mut releases = Vec::new();
        let mut release_crds = Vec::new();
        for (minor, r) in FluxMinor::ALL.into_iter().zip(raw.releases) {
            assert_eq!(
                r.minor,
                format!("2.{}", minor.0),
                "embedded Flux releases follow FluxMinor::ALL"
            );
            let mut controllers = Vec::new();
            let mut crds = Vec::new();
            for c in r.controllers {
                crds.extend(c.crds.into_iter().map(|d| (c.name.clone(), d)));
                let origin = if c.from == "module" {
                    CrdOrigin::ControllerModule
                } else {
                    CrdOrigin::ApiModule
                };
                controllers.push(FluxController {
                    name: c.name,
                    version: c.version,
                    origin,
                });
            }
            controllers.extend(r.unavailable.into_iter().map(|u| FluxController {
                name: u.name,
                version: u.version,
                origin: CrdOrigin::Unavailable,
            }));
            controllers.sort_by(|a, b| a.name.cmp(&b.name));
            releases.push(FluxRelease {
                minor,
                release: r.release,
                controllers,
            });
            release_crds.push(crds);
        }
        assert_eq!(releases.len(), FluxMinor::ALL.len(), "one release a minor");
        let heads = raw
            .crds
            .iter()
            .map(|(digest, crd)| {
                let head = serde_json::from_str(crd.get()).expect("embedded Flux CRD has a spec");
                (digest.clone(), head)
            })
            .collect();
        Data {
            crds: raw.crds,
            heads,
            releases,
            release_crds,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KubeVersion, Validator};
    use serde_json::json;

    #[test]
    fn flux_crds_embed_the_kinds_flux_objects_are_written_in() {
        let names: Vec<&str> = flux_crds()
            .iter()
            .map(|c| c["metadata"]["name"].as_str().unwrap())
            .collect();
        for want in [
            "kustomizations.kustomize.toolkit.fluxcd.io",
            "gitrepositories.source.toolkit.fluxcd.io",
            "ocirepositories.source.toolkit.fluxcd.io",
            "helmreleases.helm.toolkit.fluxcd.io",
        ] {
            assert!(names.contains(&want), "{names:?}");
        }
        let mut v = Validator::new(KubeVersion::DEFAULT);
        assert!(v.add_crds(flux_crds()).is_empty());
    }

    // What fluxsim validated against before every minor was embedded: the CRDs of
    // kustomize-controller v1.9.5, source-controller v1.9.5 and helm-controller v1.6.4.
    #[test]
    fn flux_crds_are_the_newest_kustomize_source_and_helm_controller_crds() {
        let names: Vec<&str> = flux_crds()
            .iter()
            .map(|c| c["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "buckets.source.toolkit.fluxcd.io",
                "externalartifacts.source.toolkit.fluxcd.io",
                "gitrepositories.source.toolkit.fluxcd.io",
                "helmcharts.source.toolkit.fluxcd.io",
                "helmreleases.helm.toolkit.fluxcd.io",
                "helmrepositories.source.toolkit.fluxcd.io",
                "kustomizations.kustomize.toolkit.fluxcd.io",
                "ocirepositories.source.toolkit.fluxcd.io",
            ]
        );
        let all = flux_crds_for(FluxMinor::NEWEST);
        assert_eq!(all.len(), 15);
        assert!(flux_crds().iter().all(|c| all.contains(c)));
    }

    // notification-controller api v1.9.4 `CrossNamespaceObjectReference.Kind` lists Flux's own
    // kinds only; the Flux Operator widens the Alert CRD it installs (flux-operator #131:
    // `FluxInstance` events, #224: `ResourceSet`), so an Alert on a FluxInstance is refused by
    // the upstream CRD and accepted on an operator-installed cluster.
    #[test]
    fn the_upstream_alert_crd_refuses_flux_operator_event_sources() {
        let alert = json!({
            "apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
            "metadata": {"name": "flux", "namespace": "flux-system"},
            "spec": {"providerRef": {"name": "alertmanager"},
                     "eventSources": [{"kind": "FluxInstance", "name": "flux"}]}
        });
        let v = validator_of(FluxMinor::NEWEST);
        let r = v.validate(&alert);
        let found: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.rule.id, f.path.as_str()))
            .collect();
        assert_eq!(found, [("FS301", "spec.eventSources[0].kind")]);
        let mut ok = alert.clone();
        ok["spec"]["eventSources"][0]["kind"] = json!("Kustomization");
        assert!(v.validate(&ok).findings.is_empty());
    }

    #[test]
    fn flux_crds_validate_a_kustomization_spec() {
        let mut v = Validator::new(KubeVersion::DEFAULT);
        v.add_crds(flux_crds());
        let ks = json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {"interval": "10m", "path": "./apps", "prune": "yes",
                     "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}
        });
        let report = v.validate(&ks);
        // kustomize-controller v1.9.5 api: `prune` is a boolean.
        assert!(
            report.findings.iter().any(|f| f.path == "spec.prune"),
            "{:#?}",
            report.findings
        );
        let mut ok = ks.clone();
        ok["spec"]["prune"] = json!(true);
        assert!(v.validate(&ok).findings.is_empty());
    }

    fn minor(s: &str) -> FluxMinor {
        FluxMinor::parse(s).unwrap()
    }

    fn minors(list: &[&str]) -> Vec<FluxMinor> {
        list.iter().map(|s| minor(s)).collect()
    }

    fn rule_ids(v: &Validator, object: &Value) -> Vec<&'static str> {
        v.validate(object)
            .findings
            .iter()
            .map(|f| f.rule.id)
            .collect()
    }

    fn validator_of(m: FluxMinor) -> Validator {
        let mut v = Validator::new(KubeVersion::DEFAULT);
        assert!(v.add_crds(flux_crds_for(m)).is_empty(), "{m}");
        v
    }

    #[test]
    fn flux_minor_reads_a_release_and_ignores_the_patch() {
        for s in ["2.4", "v2.4", "v2.4.1", "2.4.x", "v2.4.0-rc.1", " 2.4.3 "] {
            assert_eq!(FluxMinor::parse(s).map(FluxMinor::minor), Ok(4), "{s}");
        }
        assert_eq!(minor("2.4").to_string(), "v2.4");
        for s in [
            "2.10", "1.4", "3.0", "2", "2.", "2.x", "2.4.y", "v2.4.1.2", "flux",
        ] {
            assert!(FluxMinor::parse(s).is_err(), "{s}");
        }
        assert_eq!(
            FluxMinor::parse("2.10").unwrap_err().to_string(),
            "Flux version `2.10` has no embedded CRDs (supported: v2.0 to v2.9)"
        );
        assert_eq!(FluxMinor::ALL.len(), 10);
        assert_eq!(
            (FluxMinor::OLDEST.minor(), FluxMinor::NEWEST.minor()),
            (0, 9)
        );
    }

    #[test]
    fn flux_minor_nearest_uses_the_newest_for_a_newer_release() {
        let n = FluxMinor::nearest("v2.12.0").unwrap();
        assert_eq!((n.minor, n.exact), (FluxMinor::NEWEST, false));
        let n = FluxMinor::nearest("v2.3.0").unwrap();
        assert_eq!((n.minor, n.exact), (minor("2.3"), true));
        assert!(FluxMinor::nearest("v1.25.4").is_err());
    }

    // flux2 manifests/bases/*/kustomization.yaml of each release (module
    // github.com/fluxcd/flux2/v2): the controllers it ships, at these versions.
    #[test]
    fn each_minor_names_the_release_and_controllers_its_crds_come_from() {
        let r = minor("2.4").release();
        assert_eq!(r.release, "v2.4.0");
        assert_eq!(
            r.to_string(),
            "v2.4.0: helm-controller v1.1.0, image-automation-controller v0.39.0, \
             image-reflector-controller v0.33.0, kustomize-controller v1.4.0, \
             notification-controller v1.4.0, source-controller v1.4.1"
        );
        assert!(r
            .controllers
            .iter()
            .all(|c| c.origin == CrdOrigin::ApiModule));
        assert_eq!(FluxMinor::NEWEST.release().to_string(), FLUX_CRDS_SOURCE);
        // The proxy serves neither notification-controller v1.8.2 nor its api module.
        let r = minor("2.8").release();
        assert_eq!(r.release, "v2.8.3");
        let missing: Vec<_> = r.unavailable().map(|c| (&*c.name, &*c.version)).collect();
        assert_eq!(missing, [("notification-controller", "v1.8.2")]);
        assert!(r
            .to_string()
            .contains("notification-controller v1.8.2 (CRDs not embedded)"));
        // source-watcher (ArtifactGenerator) ships from v2.7 on.
        for m in FluxMinor::ALL {
            let has = m
                .release()
                .controllers
                .iter()
                .any(|c| c.name == "source-watcher");
            assert_eq!(has, m >= minor("2.7"), "{m}");
            assert!(m.release().release.starts_with(&format!("{m}.")), "{m}");
        }
    }

    #[test]
    fn every_minors_crds_load_and_each_name_is_there_once() {
        for m in FluxMinor::ALL {
            let crds = flux_crds_for(m);
            let mut names: Vec<&str> = crds
                .iter()
                .map(|c| c["metadata"]["name"].as_str().unwrap())
                .collect();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "{m}: {names:?}");
            assert!(
                names.contains(&"kustomizations.kustomize.toolkit.fluxcd.io"),
                "{m}"
            );
            let mut v = Validator::new(KubeVersion::DEFAULT);
            assert!(v.add_crds(crds).is_empty(), "{m}");
        }
    }

    // source-controller api v1.3.0 (Flux v2.3.0) serves HelmRepository v1beta2 with
    // `deprecationWarning`; source-controller api v1.8.1 (Flux v2.8.3) no longer has it
    // (source-controller CHANGELOG 1.8.0: the v1beta2 APIs were removed).
    #[test]
    fn helm_repository_v1beta2_is_served_until_v2_7_and_removed_in_v2_8() {
        let life = flux_api("source.toolkit.fluxcd.io", "v1beta2", "HelmRepository").unwrap();
        let until_2_7 = ["2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7"];
        assert_eq!(life.served, minors(&until_2_7));
        assert_eq!(life.deprecated, minors(&until_2_7[3..]));
        assert_eq!(life.removed_in, Some(minor("2.8")));
        assert!(life.unknown.is_empty());
        assert_eq!(
            life.warning_in(minor("2.3")),
            Some("v1beta2 HelmRepository is deprecated, upgrade to v1")
        );
        assert_eq!(life.storage_in(minor("2.2")), Some("v1beta2"));
        assert_eq!(life.storage_in(minor("2.3")), Some("v1"));
        let hr = json!({
            "apiVersion": "source.toolkit.fluxcd.io/v1beta2", "kind": "HelmRepository",
            "metadata": {"name": "podinfo", "namespace": "flux-system"},
            "spec": {"interval": "1h", "url": "https://stefanprodan.github.io/podinfo"}
        });
        assert_eq!(
            rule_ids(&validator_of(minor("2.3")), &hr),
            Vec::<&str>::new()
        );
        assert_eq!(rule_ids(&validator_of(FluxMinor::NEWEST), &hr), ["FS303"]);
    }

    // helm-controller api v0.35.0 (Flux v2.0.1) serves v2beta1 only; api v0.37.4 (v2.2.3)
    // adds v2beta2 and deprecates v2beta1; api v1.0.1 (v2.3.0) adds v2 (storage) and deprecates
    // v2beta2; api v1.4.5 (v2.7.5) drops v2beta1 and api v1.5.3 (v2.8.3) v2beta2.
    #[test]
    fn helm_release_v2beta1_and_v2beta2_lifecycles_follow_helm_controller() {
        let b1 = flux_api("helm.toolkit.fluxcd.io", "v2beta1", "HelmRelease").unwrap();
        assert_eq!(
            b1.served,
            minors(&["2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6"])
        );
        assert_eq!(b1.deprecated, minors(&["2.2", "2.3", "2.4", "2.5", "2.6"]));
        assert_eq!(b1.removed_in, Some(minor("2.7")));
        let b2 = flux_api("helm.toolkit.fluxcd.io", "v2beta2", "HelmRelease").unwrap();
        assert_eq!(
            b2.served,
            minors(&["2.2", "2.3", "2.4", "2.5", "2.6", "2.7"])
        );
        assert_eq!(b2.first_served(), Some(minor("2.2")));
        assert_eq!(b2.deprecated, minors(&["2.3", "2.4", "2.5", "2.6", "2.7"]));
        assert_eq!(b2.removed_in, Some(minor("2.8")));
        let storage: Vec<_> = ["2.1", "2.2", "2.3"]
            .iter()
            .map(|m| b2.storage_in(minor(m)).unwrap())
            .collect();
        assert_eq!(storage, ["v2beta1", "v2beta2", "v2"]);
        let v2 = flux_api("helm.toolkit.fluxcd.io", "v2", "HelmRelease").unwrap();
        assert_eq!(v2.first_served(), Some(minor("2.3")));
        assert_eq!(v2.removed_in, None);
        assert!(flux_api("helm.toolkit.fluxcd.io", "v3", "HelmRelease").is_none());
    }

    // kustomize-controller api v1.0.0 (Flux v2.0.1) serves v1 and the deprecated v1beta1 and
    // v1beta2; api v1.7.3 (v2.7.5) drops v1beta1 and api v1.8.2 (v2.8.3) v1beta2
    // (kustomize-controller CHANGELOG 1.8.0: "The `v1beta2` APIs were removed").
    #[test]
    fn kustomization_v1beta2_is_deprecated_from_v2_0_and_removed_in_v2_8() {
        let b2 = flux_api("kustomize.toolkit.fluxcd.io", "v1beta2", "Kustomization").unwrap();
        let until_2_7 = ["2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7"];
        assert_eq!(b2.served, minors(&until_2_7));
        assert_eq!(b2.deprecated, b2.served);
        assert_eq!(b2.removed_in, Some(minor("2.8")));
        let b1 = flux_api("kustomize.toolkit.fluxcd.io", "v1beta1", "Kustomization").unwrap();
        assert_eq!(b1.removed_in, Some(minor("2.7")));
        let v1 = flux_api("kustomize.toolkit.fluxcd.io", "v1", "Kustomization").unwrap();
        assert_eq!(v1.served, FluxMinor::ALL);
        assert!(v1.deprecated.is_empty() && v1.removed_in.is_none());
        assert!(FluxMinor::ALL
            .iter()
            .all(|m| v1.storage_in(*m) == Some("v1")));
    }

    // notification-controller v1.8.2 (Flux v2.8.3) could not be had: what v2.8 serves of its
    // kinds is unknown, and a removal seen in v2.9 may have been in v2.8.
    #[test]
    fn a_minor_without_the_controllers_crds_is_unknown_not_a_removal() {
        let alert = flux_api("notification.toolkit.fluxcd.io", "v1beta2", "Alert").unwrap();
        assert_eq!(alert.unknown, [minor("2.8")]);
        assert_eq!(alert.served.last(), Some(&minor("2.7")));
        assert_eq!(alert.removed_in, Some(minor("2.9")));
        let b3 = flux_api("notification.toolkit.fluxcd.io", "v1beta3", "Alert").unwrap();
        assert!(!b3.served_in(minor("2.8")) && b3.served_in(FluxMinor::NEWEST));
        assert_eq!(b3.removed_in, None);
    }

    // controller-gen v0.16 (which the Flux v2.4 controllers moved to: helm-controller #1064 in
    // its CHANGELOG 1.1.0) makes a `+required` field required even with `omitempty`; v0.15
    // (source-controller v1.3.0's CRDs, Flux v2.3) did not. helm-controller api
    // CrossNamespaceObjectReference: `// +required` on `Kind string json:"kind,omitempty"`.
    #[test]
    fn helm_release_source_ref_kind_is_required_from_v2_4_on() {
        let hr = json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "podinfo", "namespace": "apps"},
            "spec": {"interval": "10m", "chart": {"spec": {
                "chart": "podinfo", "sourceRef": {"name": "podinfo"}}}}
        });
        assert_eq!(
            rule_ids(&validator_of(minor("2.3")), &hr),
            Vec::<&str>::new()
        );
        let v = validator_of(minor("2.4"));
        let r = v.validate(&hr);
        let found: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.rule.id, f.path.as_str()))
            .collect();
        assert_eq!(found, [("FS301", "spec.chart.spec.sourceRef.kind")]);
    }
}
