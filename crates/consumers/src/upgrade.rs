//! `fluxsim upgrade`: what breaks, per cluster, when it moves from the Flux and Kubernetes
//! versions it runs (what the render read of them: `crate::versions`) to newer ones.
//!
//! - API versions the target no longer serves (FS401) or deprecates (FS402): Kubernetes'
//!   built-in kinds as `k8s.io/api`'s prerelease-lifecycle tags say
//!   ([`kubeschema::kube_lifecycle`]), Flux's kinds as each Flux minor's CRDs say
//!   ([`kubeschema::flux_api`]: `served`, `deprecated`, `storage`). Where moving the object to
//!   the replacement version is mechanical (the object, with only its `apiVersion` changed, is
//!   valid against the target's schema), the finding carries the one-line patch.
//! - The repository's own CRDs: an object in a version its CRD marks `deprecated` (FS404).
//! - A Kustomization (or HelmRelease) whose render differs between the two versions (FS403):
//!   the caller renders the repository again at the target (core's `VersionsOverride`:
//!   strict substitution by default from Flux v2.9, Helm's `Capabilities.KubeVersion`) and
//!   hands both renders here; the consumers never run the pipeline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The Flux minors whose CRDs are embedded (`--flux`).
pub use kubeschema::FluxMinor;
use kubeschema::{KubeRelease, KubeVersion};
use serde_json::Value;

use crate::audit::place::Sources;
use crate::finding::{Finding, Location, Rule, Severity};
use crate::model::{ClusterRender, KustomizationRender, RepoRender, Status};
use crate::validate::{Target, ValidateOptions};

/// An API version the target release no longer serves.
pub const API_REMOVED: Rule = Rule {
    id: "FS401",
    name: "api-removed-by-upgrade",
    severity: Severity::Error,
    summary: "An object's API version is served by the release the cluster runs and not by \
              the target: after the upgrade its apply fails.",
    help: "Move the object to the replacement version the finding names (its patch, when the \
           conversion is mechanical) before the upgrade.",
};

/// An API version the target release serves but deprecates.
pub const API_DEPRECATED: Rule = Rule {
    id: "FS402",
    name: "api-deprecated-at-target",
    severity: Severity::Warning,
    summary: "An object's API version is deprecated in the target release: it still applies, \
              and a later release removes it.",
    help: "Move the object to the replacement version the finding names.",
};

/// A Kustomization or HelmRelease that renders differently at the target versions.
pub const RENDERS_DIFFERENTLY: Rule = Rule {
    id: "FS403",
    name: "renders-differently-at-target",
    severity: Severity::Warning,
    summary: "The Kustomization (or HelmRelease) renders differently at the target versions \
              (strict substitution by default, a chart gating on Capabilities), or fails there.",
    help: "Render it at the target (`fluxsim upgrade --format json` lists the objects) and \
           check the difference is meant; a failure at the target is an error.",
};

/// An object in a version its (the repository's own) CRD marks deprecated.
pub const CRD_VERSION_DEPRECATED: Rule = Rule {
    id: "FS404",
    name: "crd-version-deprecated",
    severity: Severity::Warning,
    summary: "A custom resource uses a version its CRD (in the same render) marks \
              `deprecated`.",
    help: "Move the object to the CRD's storage version; the operator that ships the CRD \
           removes deprecated versions in a later release.",
};

/// The upgrade's rules, for SARIF's rule list and the docs.
pub static RULES: [Rule; 4] = [
    API_REMOVED,
    API_DEPRECATED,
    RENDERS_DIFFERENTLY,
    CRD_VERSION_DEPRECATED,
];

/// What to upgrade to.
#[derive(Debug, Clone)]
pub struct UpgradeOptions {
    /// The target Flux minor (`--flux`).
    pub flux: FluxMinor,
    /// The target Kubernetes minor (`--kube`).
    pub kube: KubeVersion,
    /// What objects are validated against besides the render (`--schema-dir`), for the
    /// check that a conversion is mechanical.
    pub validate: ValidateOptions,
}

/// One cluster's move: from the versions it runs (and why fluxsim thinks so) to the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The versions it runs, as `validate` reads them.
    pub from: Target,
    /// The target Flux minor.
    pub flux: FluxMinor,
    /// The target Kubernetes minor.
    pub kube: KubeVersion,
}

/// What the upgrade finds.
#[derive(Debug, Clone, Default)]
pub struct Upgrade {
    /// Per cluster, the move checked.
    pub steps: Vec<Step>,
    /// Objects checked.
    pub objects: usize,
    /// Kustomizations (and releases) compared between the two renders, and how many differ.
    pub compared: usize,
    /// Of `compared`, those whose render differs at the target.
    pub differ: usize,
    /// Kustomizations not compared (not rendered in one of the renders for a reason that is
    /// not the upgrade: needs the network, external, suspended, failed in both), as
    /// `(cluster, namespace/name, status)`.
    pub not_compared: Vec<(String, String, String)>,
    /// Findings, in printing order.
    pub findings: Vec<Finding>,
}

/// The upgrade of every cluster of `render` to `opts`; `at_target` is the same repository
/// rendered at the target versions (`None`: the render comparison is not made and FS403 is
/// not checked).
#[must_use]
pub fn upgrade(
    render: &RepoRender,
    at_target: Option<&RepoRender>,
    opts: &UpgradeOptions,
) -> Upgrade {
    let mut files = Sources::new(render.tree.fs());
    let mut out = check_objects(&mut files, &render.clusters, opts);
    if let Some(t) = at_target {
        compare(render, t, &mut files, &mut out);
    }
    crate::finding::normalize(&mut out.findings);
    out
}

/// The object checks of [`upgrade`] (FS401, FS402, FS404) on clusters whose source is `fs`
/// (`None`: a revision's render from the store, located by the Kustomizations' folders
/// only): what `diff --upgrade` compares between two revisions.
#[must_use]
pub fn upgrade_clusters(
    fs: Option<&crate::source::SourceFs>,
    clusters: &[ClusterRender],
    opts: &UpgradeOptions,
) -> Upgrade {
    let none = crate::source::SourceFs::empty("/nonexistent".into());
    let mut files = Sources::new(fs.unwrap_or(&none));
    let mut out = check_objects(&mut files, clusters, opts);
    crate::finding::normalize(&mut out.findings);
    out
}

fn check_objects(
    files: &mut Sources<'_>,
    clusters: &[ClusterRender],
    opts: &UpgradeOptions,
) -> Upgrade {
    let mut out = Upgrade::default();
    for c in clusters {
        let from = crate::validate::target_of(c, &opts.validate);
        let step = Step {
            from,
            flux: opts.flux,
            kube: opts.kube,
        };
        let to = Target {
            cluster: c.name.clone(),
            flux: opts.flux,
            flux_basis: "the upgrade's target".into(),
            kube: opts.kube,
            kube_basis: "the upgrade's target".into(),
        };
        let (validator, _) = crate::validate::validator_for(c, &opts.validate, &to);
        let crds = deprecated_crd_versions(c);
        for k in &c.kustomizations {
            for o in k.artifact.iter().flat_map(|a| &a.objects) {
                out.objects += 1;
                let Some(api) = ApiOf::of(&o.object) else {
                    continue;
                };
                if let Some(life) = lifecycle(&step, &api) {
                    let at = crate::validate::locate(files, k, o, "apiVersion");
                    let patch = life
                        .replacement
                        .as_deref()
                        .map(|new| conversion(&validator, &o.object, new, &at, files, api.api));
                    out.findings.push(life_finding(
                        c,
                        k,
                        &o.id.to_string(),
                        &api,
                        &life,
                        at,
                        patch,
                    ));
                } else if let Some(warning) = crds.get(&(api.group(), api.version(), api.kind)) {
                    out.findings.push(
                        Finding::new(&CRD_VERSION_DEPRECATED, warning.clone())
                            .in_cluster(&c.name)
                            .in_kustomization(k.kustomization.id.to_string())
                            .at(crate::validate::locate(files, k, o, "apiVersion"))
                            .about("object", o.id.to_string()),
                    );
                }
            }
        }
        out.steps.push(step);
    }
    out
}

/// An object's `apiVersion` and `kind`.
struct ApiOf<'o> {
    api: &'o str,
    kind: &'o str,
}

impl<'o> ApiOf<'o> {
    fn of(obj: &'o Value) -> Option<ApiOf<'o>> {
        Some(ApiOf {
            api: obj.get("apiVersion")?.as_str()?,
            kind: obj.get("kind")?.as_str()?,
        })
    }

    fn group(&self) -> &'o str {
        self.api.rsplit_once('/').map_or("", |(g, _)| g)
    }

    fn version(&self) -> &'o str {
        self.api.rsplit_once('/').map_or(self.api, |(_, v)| v)
    }
}

/// What the target does to one API version.
struct Life {
    /// Removed (FS401) or deprecated (FS402).
    removed: bool,
    /// `Flux v2.8 removes it` / `deprecated since Kubernetes 1.23, removed in 1.26`.
    what: String,
    /// The apiVersion to move to.
    replacement: Option<String>,
}

/// What moving cluster `step` to its target does to `api`, if anything.
fn lifecycle(step: &Step, api: &ApiOf<'_>) -> Option<Life> {
    let (group, version) = (api.group(), api.version());
    if group.ends_with(".fluxcd.io") {
        let life = kubeschema::flux_api(group, version, api.kind)?;
        let (from, to) = (step.from.flux, step.flux);
        if !life.served_in(from) {
            // Not served now: `validate` reports it (FS303), it is not the upgrade's.
            return None;
        }
        let replacement = life
            .storage_in(to)
            .filter(|v| *v != version)
            .map(|v| format!("{group}/{v}"));
        if !life.served_in(to) {
            let when = life.removed_in.filter(|r| *r <= to).map_or_else(
                || format!("Flux {to} does not serve it"),
                |r| format!("Flux {r} removes it"),
            );
            return Some(Life {
                removed: true,
                what: format!(
                    "served by Flux {from} ({}); {when}",
                    runs(&step.from.cluster, &step.from.flux_basis)
                ),
                replacement,
            });
        }
        if life.deprecated_in(to) {
            let since = life
                .deprecated
                .first()
                .map(|d| format!(" since {d}"))
                .unwrap_or_default();
            let warning = life
                .warning_in(to)
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            return Some(Life {
                removed: false,
                what: format!("deprecated in Flux {to}{since}{warning}"),
                replacement,
            });
        }
        return None;
    }
    let life = kubeschema::kube_lifecycle(group, version, api.kind)?;
    let from = KubeRelease {
        major: 1,
        minor: step.from.kube.minor(),
    };
    let to = KubeRelease {
        major: 1,
        minor: step.kube.minor(),
    };
    if !life.served_in(from) {
        // Not served now: `validate` reports it (FS303), it is not the upgrade's.
        return None;
    }
    let replacement = life.replacement.as_ref().map(|(g, v, _)| {
        if g.is_empty() {
            v.clone()
        } else {
            format!("{g}/{v}")
        }
    });
    match life.removed {
        Some(r) if r <= to => Some(Life {
            removed: true,
            what: format!(
                "served by Kubernetes {from} ({}); Kubernetes {r} removes it",
                runs(&step.from.cluster, &step.from.kube_basis)
            ),
            replacement,
        }),
        _ if life.deprecated_in(to) => Some(Life {
            removed: false,
            what: format!(
                "deprecated in Kubernetes {to} (since {}){}",
                life.deprecated.map(|d| d.to_string()).unwrap_or_default(),
                life.removed
                    .map(|r| format!(", removed in {r}"))
                    .unwrap_or_default()
            ),
            replacement,
        }),
        _ => None,
    }
}

/// `what cluster `dev` runs`, or `what cluster `dev` is presumed to run` when nothing in the
/// repository says it (the finding still stands: the target does not serve the version).
fn runs(cluster: &str, basis: &str) -> String {
    if basis.starts_with("presumed") {
        format!("what cluster `{cluster}` is presumed to run")
    } else {
        format!("what cluster `{cluster}` runs")
    }
}

/// The finding of one object's API version.
fn life_finding(
    c: &ClusterRender,
    k: &KustomizationRender,
    object: &str,
    api: &ApiOf<'_>,
    life: &Life,
    at: Location,
    patch: Option<Conversion>,
) -> Finding {
    let rule = if life.removed {
        &API_REMOVED
    } else {
        &API_DEPRECATED
    };
    let mut message = format!("`{}` {}: {}", api.api, api.kind, life.what);
    if let Some(r) = &life.replacement {
        let _ = write!(message, "; move it to `{r}`");
    }
    match &patch {
        Some(Conversion::Mechanical { .. } | Conversion::Unwritten) => {
            message.push_str(" (mechanical: only `apiVersion` changes)");
        }
        Some(Conversion::Fields(fields)) => {
            let _ = write!(message, " (not mechanical: under the new version {fields})");
        }
        None => {}
    }
    let mut f = Finding::new(rule, message)
        .in_cluster(&c.name)
        .in_kustomization(k.kustomization.id.to_string())
        .at(at)
        .about("object", object);
    if let Some(r) = &life.replacement {
        f = f.about("replacement", r.clone());
    }
    if let Some(Conversion::Mechanical { patch }) = patch {
        f = f.about("patch", patch);
    }
    f
}

/// Whether moving an object to another apiVersion is mechanical.
enum Conversion {
    /// The object with only `apiVersion` changed is valid at the target: the patch of its
    /// line (`-apiVersion: old` / `+apiVersion: new`).
    Mechanical { patch: String },
    /// What the target's schema says of the fields (`spec.foo: unknown field`, ...).
    Fields(String),
    /// Valid at the target, but the file's line does not hold the apiVersion (a patch or a
    /// generator sets it, or the render's source is not at hand): no patch to show. The
    /// message says the same as for [`Conversion::Mechanical`], so that `diff --upgrade`
    /// matches the findings of a stored render with those of one read from its files.
    Unwritten,
}

/// Moves `obj` to `new`, validates it against the target, and when that is clean gives the
/// patch of the `apiVersion:` line at `at`.
fn conversion(
    validator: &kubeschema::Validator,
    obj: &Value,
    new: &str,
    at: &Location,
    files: &mut Sources<'_>,
    old: &str,
) -> Conversion {
    let mut moved = obj.clone();
    moved["apiVersion"] = Value::String(new.to_string());
    let report = validator.validate(&moved);
    let errors: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity == kubeschema::Severity::Error)
        .map(|f| {
            let msg = f.message.rsplit(": ").next().unwrap_or(&f.message);
            if f.path.is_empty() {
                msg.to_string()
            } else {
                format!("`{}`: {msg}", f.path)
            }
        })
        .collect();
    if let Some(first) = errors.first() {
        let more = match errors.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        return Conversion::Fields(format!("{first}{more}"));
    }
    let line = at.line.and_then(|n| {
        files
            .text(&at.file)
            .and_then(|t| t.lines().nth(n - 1))
            .map(str::to_string)
    });
    match line {
        Some(l) if l.contains(old) => Conversion::Mechanical {
            patch: format!("-{l}\n+{}", l.replacen(old, new, 1)),
        },
        _ => Conversion::Unwritten,
    }
}

/// The versions the repository's own CRDs mark deprecated in cluster `c`: (group, version,
/// kind) → the message.
fn deprecated_crd_versions(c: &ClusterRender) -> BTreeMap<(&str, &str, &str), String> {
    let mut out = BTreeMap::new();
    for o in c
        .kustomizations
        .iter()
        .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
        .filter(|o| kubeschema::is_crd(&o.object))
    {
        let spec = &o.object["spec"];
        let (Some(group), Some(kind)) = (spec["group"].as_str(), spec["names"]["kind"].as_str())
        else {
            continue;
        };
        let versions = spec["versions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let storage = versions
            .iter()
            .find(|v| v["storage"] == Value::Bool(true))
            .and_then(|v| v["name"].as_str());
        for v in versions
            .iter()
            .filter(|v| v["deprecated"] == Value::Bool(true))
        {
            let Some(name) = v["name"].as_str() else {
                continue;
            };
            let warning = v["deprecationWarning"]
                .as_str()
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            let to = storage
                .filter(|s| *s != name)
                .map(|s| format!("; move it to `{group}/{s}`"))
                .unwrap_or_default();
            out.insert(
                (group, name, kind),
                format!(
                    "`{group}/{name}` {kind}: its CRD `{}` marks the version deprecated{warning}{to}",
                    o.id.name
                ),
            );
        }
    }
    out
}

/// FS403: each Kustomization (and release) of `base` against the same in `target`.
fn compare(base: &RepoRender, target: &RepoRender, files: &mut Sources<'_>, out: &mut Upgrade) {
    for c in &base.clusters {
        let Some(t) = target.clusters.iter().find(|t| t.name == c.name) else {
            continue;
        };
        let step = out.steps.iter().find(|s| s.from.cluster == c.name);
        let at = step.map_or_else(String::new, |s| {
            format!("Flux {} / Kubernetes {}", s.flux, s.kube)
        });
        for k in &c.kustomizations {
            let id = k.kustomization.id.to_string();
            let there = t
                .kustomizations
                .iter()
                .find(|x| x.kustomization.id == k.kustomization.id);
            let message = match (&k.status, there.map(|x| (&x.status, x))) {
                (Status::Rendered, Some((Status::Rendered, x))) => {
                    out.compared += 1;
                    let (Some(a), Some(b)) = (&k.artifact, &x.artifact) else {
                        continue;
                    };
                    if a.sha256 == b.sha256 {
                        continue;
                    }
                    out.differ += 1;
                    Some((
                        Severity::Warning,
                        format!("renders differently at {at}: {}", changed(a, b)),
                    ))
                }
                (Status::Rendered, Some((Status::Failed(e), _))) => {
                    out.compared += 1;
                    out.differ += 1;
                    Some((
                        Severity::Error,
                        format!("renders now, fails at {at}: {}", first_line(e)),
                    ))
                }
                (Status::Failed(_), Some((Status::Rendered, _))) => {
                    out.compared += 1;
                    out.differ += 1;
                    Some((Severity::Info, format!("fails now, renders at {at}")))
                }
                (s, None) => {
                    let status = if matches!(s, Status::Rendered) {
                        "not reached at the target".to_string()
                    } else {
                        s.as_str().to_string()
                    };
                    out.not_compared.push((c.name.clone(), id, status));
                    continue;
                }
                (s, Some((_, _))) => {
                    out.not_compared
                        .push((c.name.clone(), id, s.as_str().to_string()));
                    continue;
                }
            };
            if let Some((severity, message)) = message {
                out.findings.push(
                    Finding::new(&RENDERS_DIFFERENTLY, message)
                        .with_severity(severity)
                        .in_cluster(&c.name)
                        .in_kustomization(id)
                        .at(declared_at(files, c, k)),
                );
            }
        }
    }
}

/// `3 objects differ (the first `Deployment/apps/web`), 1 added`.
fn changed(a: &crate::artifact::Artifact, b: &crate::artifact::Artifact) -> String {
    let before: BTreeMap<String, &str> = a
        .objects
        .iter()
        .map(|o| (o.id.to_string(), o.sha256.as_str()))
        .collect();
    let after: BTreeMap<String, &str> = b
        .objects
        .iter()
        .map(|o| (o.id.to_string(), o.sha256.as_str()))
        .collect();
    let differ: Vec<&String> = before
        .iter()
        .filter(|(id, d)| after.get(*id).is_some_and(|x| x != *d))
        .map(|(id, _)| id)
        .collect();
    let added = after.keys().filter(|id| !before.contains_key(*id)).count();
    let removed = before.keys().filter(|id| !after.contains_key(*id)).count();
    let mut parts = Vec::new();
    if let Some(first) = differ.first() {
        let n = differ.len();
        let verb = if n == 1 {
            "object differs"
        } else {
            "objects differ"
        };
        parts.push(format!("{n} {verb} (the first `{first}`)"));
    }
    if added > 0 {
        parts.push(format!("{added} added"));
    }
    if removed > 0 {
        parts.push(format!("{removed} removed"));
    }
    if parts.is_empty() {
        // Same objects, same bytes, another order.
        parts.push("the objects' order differs".into());
    }
    parts.join(", ")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// Where Kustomization (or release) `k` is declared: its object in its parent's artifact;
/// its folder for a root.
fn declared_at(files: &mut Sources<'_>, c: &ClusterRender, k: &KustomizationRender) -> Location {
    let (kind, id) = match crate::model::release_of(k) {
        Some(hr) => ("HelmRelease", hr),
        None => ("Kustomization", k.kustomization.id.clone()),
    };
    let parent = k
        .parent
        .as_ref()
        .and_then(|p| c.kustomizations.iter().find(|x| &x.kustomization.id == p));
    let object = parent.and_then(|p| {
        p.artifact
            .iter()
            .flat_map(|a| &a.objects)
            .find(|o| o.id.kind == kind && o.id.name == id.name && o.id.namespace == id.namespace)
    });
    match (parent, object) {
        (Some(p), Some(o)) => crate::validate::locate(files, p, o, ""),
        _ => Location::file(k.kustomization.path.trim_start_matches("./").to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(flux_from: u32, flux_to: u32, kube_from: u32, kube_to: u32) -> Step {
        Step {
            from: Target {
                cluster: "dev".into(),
                flux: FluxMinor::from_minor(flux_from).unwrap(),
                flux_basis: String::new(),
                kube: KubeVersion::from_minor(kube_from).unwrap(),
                kube_basis: String::new(),
            },
            flux: FluxMinor::from_minor(flux_to).unwrap(),
            kube: KubeVersion::from_minor(kube_to).unwrap(),
        }
    }

    fn api<'a>(api: &'a str, kind: &'a str) -> ApiOf<'a> {
        ApiOf { api, kind }
    }

    // source-controller's CRDs: v1beta2 HelmRepository is served up to Flux v2.7 and gone
    // from v2.8's (flux2 v2.8.0 release notes: "v1beta2 APIs removed"), stored as v1.
    #[test]
    fn flux_v1beta2_source_is_removed_between_2_3_and_2_9_for_v1() {
        let life = lifecycle(
            &step(3, 9, 30, 36),
            &api("source.toolkit.fluxcd.io/v1beta2", "HelmRepository"),
        )
        .unwrap();
        assert!(life.removed, "{}", life.what);
        assert_eq!(
            life.replacement.as_deref(),
            Some("source.toolkit.fluxcd.io/v1")
        );
    }

    // k8s.io/api autoscaling/v2beta2: removed in 1.26, replaced by autoscaling/v2.
    #[test]
    fn hpa_v2beta2_is_removed_moving_from_kubernetes_1_25_to_1_26() {
        let s = step(3, 9, 25, 26);
        let life = lifecycle(&s, &api("autoscaling/v2beta2", "HorizontalPodAutoscaler")).unwrap();
        assert!(life.removed);
        assert_eq!(life.replacement.as_deref(), Some("autoscaling/v2"));
        // Staying on 1.25 the same object is deprecated, not removed.
        let stay = lifecycle(
            &step(3, 9, 25, 25),
            &api("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
        )
        .unwrap();
        assert!(!stay.removed, "{}", stay.what);
    }

    #[test]
    fn a_stable_api_has_no_upgrade_finding() {
        assert!(lifecycle(&step(3, 9, 25, 36), &api("apps/v1", "Deployment")).is_none());
        assert!(lifecycle(
            &step(3, 9, 25, 36),
            &api("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
        )
        .is_none());
    }
}
