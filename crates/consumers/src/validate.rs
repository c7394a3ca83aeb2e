//! Will it apply? Every rendered object checked against its schema as the API server checks
//! kustomize-controller's server-side apply (built-in kinds against the Kubernetes version
//! asked for, custom resources against the CRDs of the same cluster's render and of
//! `--schema-dir`), and the apply-time hazards of a change between two renders (immutable
//! fields, prune of state, ...). The checks are `fluxsim-kubeschema`'s; this module feeds it
//! a render and turns its findings into fluxsim's (rule ids FS300–FS344, with `policies`
//! the cluster's ValidatingAdmissionPolicies, the file and line
//! of the field in the user's repository, the cluster and the Kustomization).

use std::collections::{BTreeMap, BTreeSet};

use kubeschema::{Applied, Validator};

/// The Kubernetes versions whose schemas are embedded (`--kube-version`).
pub use kubeschema::KubeVersion;
use serde_json::Value;

use crate::audit::context::source_names;
use crate::audit::place::{ObjectRef, Sources};
use crate::finding::{Finding, Location, Rule, Severity};
use crate::model::{ClusterRender, KustomizationRender, RepoRender};

/// The rules of validation and apply-time hazards (for SARIF's rule list and the docs'
/// table): kubeschema's, whose `Rule` is fluxsim's.
pub static RULES: &[Rule] = kubeschema::rules::RULES;

fn rule(id: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| &RULES[0])
}

/// What to validate against.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// The Kubernetes version of the built-in schemas (`--kube-version`).
    pub kube_version: Option<KubeVersion>,
    /// CRDs that the render does not hold (`--schema-dir`, `[validate] schema_dirs`), with
    /// the file each came from.
    pub extra_crds: Vec<(String, Value)>,
    /// `--timeout`: CEL evaluation of one validation (every cluster of a render) stops
    /// this long after it starts; the rule running then is a finding (FS308), the rules not
    /// yet run are not validated (FS300). `None`: only the API server's cost bounds.
    pub timeout: Option<std::time::Duration>,
    /// `--policies` (or `[validate] policies`): the objects are evaluated against the
    /// ValidatingAdmissionPolicies and bindings each cluster's render applies and these, the
    /// policy files' (with the file each came from). `None`: no policy is evaluated.
    pub policies: Option<Vec<(String, Value)>>,
}

/// The versions one cluster was validated against, and why each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The cluster.
    pub cluster: String,
    /// The Flux minor whose CRDs validated Flux's kinds.
    pub flux: kubeschema::FluxMinor,
    /// Why that minor (`kustomize-controller image ... in ...`, `presumed: ...`).
    pub flux_basis: String,
    /// The Kubernetes minor whose schemas validated the built-in kinds.
    pub kube: KubeVersion,
    /// Why that minor.
    pub kube_basis: String,
}

/// What validation found in a render.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    /// The Kubernetes release whose schemas were used (`1.36.3`; the last cluster's, when
    /// clusters differ).
    pub kube_release: String,
    /// Per cluster, the versions validated against.
    pub targets: Vec<Target>,
    /// Objects validated.
    pub objects: usize,
    /// Objects, fields or rules that could not be checked (counted in FS300 findings).
    pub unchecked: usize,
    /// Findings, in printing order.
    pub findings: Vec<Finding>,
}

/// The prefix of fluxsim's placeholder for a var it cannot read offline: such a value is
/// unknown, never validated.
const UNKNOWN_MARKER: &str = crate::model::PLACEHOLDER_PREFIX;

/// The versions cluster `c` is validated against: `--kube-version`, else what the render
/// read of the cluster's versions (its evidence, `[versions]`, `[validate] kube_version`, or
/// what the render presumed: `crate::versions`), each taken to the nearest embedded minor.
#[must_use]
pub fn target_of(c: &ClusterRender, opts: &ValidateOptions) -> Target {
    let v = &c.versions;
    let (flux, flux_basis) = match kubeschema::FluxMinor::nearest(&v.flux.version.to_string()) {
        Ok(n) if n.exact => (n.minor, v.flux.basis.to_string()),
        Ok(n) => (
            n.minor,
            format!(
                "{}; newer than fluxsim knows, {}'s CRDs used",
                v.flux.basis, n.minor
            ),
        ),
        Err(_) => (kubeschema::FluxMinor::NEWEST, v.flux.basis.to_string()),
    };
    let (kube, kube_basis) = match (opts.kube_version, &v.kubernetes) {
        (Some(k), _) => (k, "--kube-version".to_string()),
        (None, Some(k)) => match KubeVersion::nearest(&k.version.to_string()) {
            Ok(n) if n.exact => (n.version, k.basis.to_string()),
            Ok(n) => (
                n.version,
                format!(
                    "{}: Kubernetes {}; the nearest embedded schemas, {}, used",
                    k.basis, k.version, n.version
                ),
            ),
            Err(_) => (KubeVersion::DEFAULT, k.basis.to_string()),
        },
        (None, None) => (
            KubeVersion::DEFAULT,
            format!(
                "presumed: nothing in the repository says which Kubernetes runs, so {}, the \
                 newest Flux {} supports (`[versions] kubernetes` in fluxsim.toml says it)",
                KubeVersion::DEFAULT,
                kubeschema::FluxMinor::NEWEST
            ),
        ),
    };
    Target {
        cluster: c.name.clone(),
        flux,
        flux_basis,
        kube,
        kube_basis,
    }
}

/// Whether the cluster's Flux is installed by the Flux Operator, which widens upstream's
/// Alert CRD (its `eventSources` take the operator's kinds: flux-operator #131, #224).
fn operator_installed(c: &ClusterRender) -> bool {
    c.kustomizations
        .iter()
        .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
        .any(|o| {
            (o.id.group == "fluxcd.controlplane.io" && o.id.kind == "FluxInstance")
                || (o.id.is_helm_release()
                    && (o.id.name == "flux-instance"
                        || crate::flux::str_at(&o.object, &["spec", "chart", "spec", "chart"])
                            == Some("flux-instance")))
        })
}

/// The Flux CRDs of `minor` a cluster's objects are checked against (a rendered CRD of the
/// same name replaces one: the cluster's own is what applies).
fn flux_crds(c: &ClusterRender, minor: kubeschema::FluxMinor) -> Vec<Value> {
    if operator_installed(c) {
        let controllers: Vec<&str> = minor
            .release()
            .controllers
            .iter()
            .map(|k| k.name.as_str())
            .filter(|n| *n != "notification-controller")
            .collect();
        kubeschema::flux_crds_of(minor, &controllers)
    } else {
        kubeschema::flux_crds_for(minor).to_vec()
    }
}

/// Builds the validator of one cluster: its render's CRDs, then the extra ones (a CRD the
/// render holds wins over a file's of the same name, as the cluster's own is what applies).
pub(crate) fn validator_for(
    c: &ClusterRender,
    opts: &ValidateOptions,
    target: &Target,
) -> (Validator, Vec<Finding>) {
    let mut v = Validator::new(target.kube);
    v.set_unknown_marker(UNKNOWN_MARKER);
    // Flux's own CRDs first (those of the minor the cluster runs), then the files', then
    // the render's: a later CRD of the same name replaces an earlier one, and the cluster's
    // own is what applies.
    let _ = v.add_crds(&flux_crds(c, target.flux));
    let mut problems = Vec::new();
    for (file, crd) in &opts.extra_crds {
        if let Err(e) = v.add_crd(crd) {
            problems.push(
                Finding::new(rule("FS300"), format!("CRD not read: {e}"))
                    .in_cluster(&c.name)
                    .at(Location::file(file.clone())),
            );
        }
    }
    for k in &c.kustomizations {
        for o in k.artifact.iter().flat_map(|a| &a.objects) {
            if kubeschema::is_crd(&o.object) {
                if let Err(e) = v.add_crd(&o.object) {
                    problems.push(
                        Finding::new(rule("FS300"), format!("CRD not read: {e}"))
                            .in_cluster(&c.name)
                            .in_kustomization(k.kustomization.id.to_string()),
                    );
                }
            }
        }
    }
    (v, problems)
}

/// When CEL evaluation of one validation stops (`--timeout` from its start), and its words.
struct Deadline(Option<(std::time::Instant, String)>);

impl Deadline {
    fn of(opts: &ValidateOptions) -> Deadline {
        Deadline(opts.timeout.map(|t| {
            (
                std::time::Instant::now() + t,
                format!("--timeout {}s", t.as_secs()),
            )
        }))
    }

    fn set(&self, v: &mut Validator) {
        if let Some((at, what)) = &self.0 {
            v.set_deadline(*at, what.clone());
        }
    }
}

/// Validates every object of every rendered Kustomization (and HelmRelease) of `render`.
#[must_use]
pub fn validate(render: &RepoRender, opts: &ValidateOptions) -> Validation {
    validate_clusters(Some(render.tree.fs()), &render.clusters, opts)
}

/// [`validate`] of clusters whose source is `fs` (`None`: a revision's render from the store,
/// located by the Kustomizations' folders only).
#[must_use]
#[allow(clippy::too_many_lines)] // the checks of one cluster, read top to bottom
pub fn validate_clusters(
    fs: Option<&crate::source::SourceFs>,
    clusters: &[ClusterRender],
    opts: &ValidateOptions,
) -> Validation {
    use rayon::prelude::*;
    let none = crate::source::SourceFs::empty("/nonexistent".into());
    let mut files = Sources::new(fs.unwrap_or(&none));
    let mut out = Validation::default();
    let deadline = Deadline::of(opts);
    for c in clusters {
        let target = target_of(c, opts);
        let (mut validator, problems) = validator_for(c, opts, &target);
        deadline.set(&mut validator);
        let mutators = crate::admission::Mutators::of(c);
        out.kube_release = validator.kube_release().to_string();
        out.findings.extend(problems);
        out.findings
            .extend(policy_findings(c, opts, &mut files, &deadline));
        // Objects in parallel (the validator is Sync); locating stays on this thread, as
        // `Sources` reads each file once.
        let reports: Vec<(usize, usize, kubeschema::Report)> = c
            .kustomizations
            .iter()
            .enumerate()
            .flat_map(|(ki, k)| {
                k.artifact
                    .iter()
                    .flat_map(|a| a.objects.iter().enumerate())
                    .map(move |(oi, _)| (ki, oi))
            })
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(ki, oi)| {
                let o = &c.kustomizations[ki]
                    .artifact
                    .as_ref()
                    .expect("listed")
                    .objects[oi];
                (ki, oi, validator.validate(&o.object))
            })
            .collect();
        // FS300 is counted per cluster and reason, not printed per object: a repository whose
        // CRDs come from outside would otherwise print one line per custom resource.
        let mut unchecked: BTreeMap<String, (usize, String, usize, usize)> = BTreeMap::new();
        for (ki, oi, report) in reports {
            out.objects += 1;
            let k = &c.kustomizations[ki];
            let o = &k.artifact.as_ref().expect("listed").objects[oi];
            for f in report.findings {
                let place = locate(&mut files, k, o, &f.path);
                let webhook = mutated(&mutators, &o.object, &f);
                let served = (f.rule.id == "FS303")
                    .then(|| served_by(&target, &o.object))
                    .flatten();
                let mut finding = convert(&c.name, k, f, place);
                if let Some(when) = served {
                    finding.message = format!("{}; {when}", finding.message);
                }
                if let Some(who) = webhook {
                    finding.message = format!(
                        "{}; presumed set on create by {who}, which matches this kind \
                         (mutating admission runs before validation)",
                        finding.message
                    );
                    finding = finding.with_severity(Severity::Info);
                }
                out.findings.push(finding);
            }
            if let Some(f) = lifecycle(&target, &o.object) {
                let place = locate(&mut files, k, o, "apiVersion");
                out.findings.push(
                    Finding::new(rule("FS307"), f)
                        .in_cluster(&c.name)
                        .in_kustomization(k.kustomization.id.to_string())
                        .at(place)
                        .about("object", o.id.to_string()),
                );
            }
            for u in report.unchecked {
                out.unchecked += 1;
                let what = if u.path.is_empty() {
                    u.object.to_string()
                } else {
                    format!("{} {}", u.object, u.path)
                };
                let e = unchecked.entry(u.reason).or_insert((0, what, ki, oi));
                e.0 += 1;
            }
        }
        out.targets.push(target);
        for (reason, (n, first, ki, oi)) in unchecked {
            let k = &c.kustomizations[ki];
            let o = &k.artifact.as_ref().expect("listed").objects[oi];
            let place = locate(&mut files, k, o, "");
            let message = if n == 1 {
                format!("not validated: {reason} (`{first}`)")
            } else {
                format!("not validated: {reason} ({n} places, the first `{first}`)")
            };
            out.findings.push(
                Finding::new(rule("FS300"), message)
                    .in_cluster(&c.name)
                    .in_kustomization(k.kustomization.id.to_string())
                    .at(place),
            );
        }
    }
    crate::finding::normalize(&mut out.findings);
    out
}

/// With `--policies`, the findings of cluster `c`'s ValidatingAdmissionPolicies (its
/// render's and the policy files'), each at its object's file and line.
/// (Put in order with the others by `normalize`.)
fn policy_findings(
    c: &ClusterRender,
    opts: &ValidateOptions,
    files: &mut Sources<'_>,
    deadline: &Deadline,
) -> Vec<Finding> {
    let Some(extra) = &opts.policies else {
        return Vec::new();
    };
    let at = deadline.0.as_ref().map(|(at, _)| *at);
    let mut out = Vec::new();
    for (ki, oi, r) in crate::policies::cluster_results(c, extra, &opts.extra_crds, at) {
        let k = &c.kustomizations[ki];
        let o = &k.artifact.as_ref().expect("listed").objects[oi];
        let (id, severity, message) = crate::policies::judged(&r);
        let mut f = Finding::new(rule(id), message)
            .with_severity(severity)
            .in_cluster(&c.name)
            .in_kustomization(k.kustomization.id.to_string())
            .at(locate(files, k, o, ""))
            .about("object", o.id.to_string())
            .about("policy", r.policy);
        if let Some(b) = r.binding {
            f = f.about("binding", b);
        }
        out.push(f);
    }
    out.extend(kyverno_findings(c, extra, opts, files));
    out
}

/// With `--policies`, the findings of cluster `c`'s Kyverno policies (its render's and the
/// policy files'), by `kyverno apply`: FS343 at the object's file and line, as bad as the
/// policy's action; FS344 for a rule that errored on an object, or once for the cluster when
/// the CLI could not evaluate them.
fn kyverno_findings(
    c: &ClusterRender,
    extra: &[(String, Value)],
    opts: &ValidateOptions,
    files: &mut Sources<'_>,
) -> Vec<Finding> {
    let users: Vec<String> = c
        .kustomizations
        .iter()
        .map(|k| crate::policies::username(c, k))
        .collect();
    let ky = crate::kyverno::cluster_results(c, extra, &opts.extra_crds, &users, opts.timeout);
    let mut out = Vec::new();
    for (ki, oi, r) in &ky.results {
        let k = &c.kustomizations[*ki];
        let o = &k.artifact.as_ref().expect("listed").objects[*oi];
        let named = match &r.rule {
            Some(rule) => format!("Kyverno policy '{}' rule '{rule}'", r.policy),
            None => format!("Kyverno policy '{}'", r.policy),
        };
        let (id, severity, message) = if r.result == "error" {
            (
                "FS344",
                Severity::Warning,
                format!("{named} could not be evaluated: {}", r.message),
            )
        } else {
            ("FS343", ky.severity(r), format!("{named}: {}", r.message))
        };
        let mut f = Finding::new(rule(id), message)
            .with_severity(severity)
            .in_cluster(&c.name)
            .in_kustomization(k.kustomization.id.to_string())
            .at(locate(files, k, o, ""))
            .about("object", o.id.to_string())
            .about("policy", r.policy.clone());
        if let Some(rule) = &r.rule {
            f = f.about("rule", rule.clone());
        }
        out.push(f);
    }
    if let Some(why) = &ky.not_checked {
        out.push(
            Finding::new(
                rule("FS344"),
                format!(
                    "{} not evaluated: {why}",
                    if ky.policies == 1 {
                        "1 Kyverno policy".to_string()
                    } else {
                        format!("{} Kyverno policies", ky.policies)
                    }
                ),
            )
            .in_cluster(&c.name),
        );
    }
    out
}

/// FS307: an API version the cluster's Flux (or Kubernetes) serves that a later release
/// fluxsim knows removes (or that its own release deprecates): the upgrade breaks the apply.
fn lifecycle(t: &Target, obj: &Value) -> Option<String> {
    let api = obj.get("apiVersion").and_then(Value::as_str)?;
    let kind = obj.get("kind").and_then(Value::as_str)?;
    let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
    if group.ends_with(".fluxcd.io") {
        let life = kubeschema::flux_api(group, version, kind)?;
        if !life.served_in(t.flux) {
            return None;
        }
        let to = life
            .storage_in(kubeschema::FluxMinor::NEWEST)
            .filter(|v| *v != version)
            .map(|v| format!(": move it to `{group}/{v}`"))
            .unwrap_or_default();
        let deprecated = life
            .deprecated
            .first()
            .filter(|d| **d <= t.flux)
            .map(|d| format!(", deprecated since {d}"))
            .unwrap_or_default();
        return match life.removed_in {
            Some(r) if r > t.flux => Some(format!(
                "`{api}` {kind} is served by Flux {} (what cluster `{}` runs){deprecated}, \
                 and Flux {r} removes it{to}",
                t.flux, t.cluster
            )),
            None if life.deprecated_in(t.flux) => Some(format!(
                "`{api}` {kind} is deprecated in Flux {} (what cluster `{}` runs){}{to}",
                t.flux,
                t.cluster,
                life.warning_in(t.flux)
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default()
            )),
            _ => None,
        };
    }
    let life = kubeschema::kube_api(group, version, kind)?;
    match life.removed_in {
        Some(r) if life.served_in(t.kube) && r > t.kube => Some(format!(
            "`{api}` {kind} is served by Kubernetes {} (what cluster `{}` runs), and \
             Kubernetes {r} removes it",
            t.kube, t.cluster
        )),
        _ => None,
    }
}

/// For a Flux kind in a version the cluster's minor does not serve: which releases serve
/// it, and what was assumed of the cluster (`served by Flux v2.0–v2.7, removed in v2.8;
/// cluster `dev` runs v2.9 (...)`).
fn served_by(t: &Target, obj: &Value) -> Option<String> {
    let api = obj.get("apiVersion").and_then(Value::as_str)?;
    let kind = obj.get("kind").and_then(Value::as_str)?;
    let (group, version) = api.rsplit_once('/')?;
    if !group.ends_with(".fluxcd.io") {
        return None;
    }
    let life = kubeschema::flux_api(group, version, kind)?;
    let (first, last) = (life.served.first()?, life.served.last()?);
    let removed = life
        .removed_in
        .map(|r| format!(", removed in {r}"))
        .unwrap_or_default();
    Some(format!(
        "served by Flux {first}–{last}{removed}; cluster `{}` runs Flux {}, {}",
        t.cluster, t.flux, t.flux_basis
    ))
}

/// The mutator of the cluster that may set the field whose absence `f` reports (a required
/// field: `Required value`), if any.
fn mutated<'m>(
    mutators: &'m crate::admission::Mutators,
    obj: &Value,
    f: &kubeschema::Finding,
) -> Option<&'m str> {
    if mutators.is_empty() || f.rule.id != "FS301" || !f.message.ends_with("Required value") {
        return None;
    }
    let api = obj.get("apiVersion").and_then(Value::as_str)?;
    let kind = obj.get("kind").and_then(Value::as_str)?;
    mutators.setting(api, kind, &f.path)
}

/// The place of field `path` of object `o` in the user's files.
pub(crate) fn locate(
    files: &mut Sources<'_>,
    k: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
    path: &str,
) -> Location {
    locate_changed(files, k, o, path, None)
}

/// [`locate`], and for an object whose origin the render did not record, its source file
/// found among the files its Kustomization's build read (`inputs`): of those that declare
/// it (its kind and name), one `changed` holds; else the one input `changed` holds (a
/// component's patch that changed it); else the one that declares it. The Kustomization's
/// folder when none is found.
fn locate_changed(
    files: &mut Sources<'_>,
    k: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
    path: &str,
    changed: Option<&BTreeSet<String>>,
) -> Location {
    let names = source_names(k, &o.id.name);
    let found;
    let origin = match (&o.origin, &k.inputs) {
        (Some(origin), _) => Some(origin),
        (None, Some(inputs)) => {
            found = source_of(files, inputs, &o.id.kind, &names, changed).map(|file| {
                crate::artifact::Origin {
                    path: Some(file),
                    configured_in: None,
                }
            });
            found.as_ref()
        }
        (None, None) => None,
    };
    let obj = ObjectRef {
        origin,
        kind: &o.id.kind,
        names: &names,
        fallback_dir: k.build_path.as_deref().unwrap_or(&k.kustomization.path),
    };
    if path.is_empty() {
        files.find(obj, None).location
    } else {
        files.find_field(obj, path).location
    }
}

/// The source file of an object among a build's input files (see [`locate_changed`]).
fn source_of(
    files: &mut Sources<'_>,
    inputs: &BTreeSet<String>,
    kind: &str,
    names: &[String],
    changed: Option<&BTreeSet<String>>,
) -> Option<String> {
    let is_changed = |f: &String| changed.is_some_and(|c| c.contains(f));
    let mut declaring = Vec::new();
    for f in inputs.iter().filter(|f| is_manifest(f)) {
        let Some(text) = files.text(f) else { continue };
        if names
            .iter()
            .any(|n| crate::locate::object_line(text, kind, n).is_some())
        {
            declaring.push(f);
        }
    }
    if let Some(f) = declaring.iter().find(|f| is_changed(f)) {
        return Some((*f).clone());
    }
    let changed_inputs: Vec<&String> = inputs.iter().filter(|f| is_changed(f)).collect();
    if let [one] = changed_inputs.as_slice() {
        return Some((*one).clone());
    }
    match declaring.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// A YAML or JSON file (what can declare an object).
fn is_manifest(f: &str) -> bool {
    [".yaml", ".yml", ".json"].iter().any(|e| f.ends_with(e))
}

/// A kubeschema finding as fluxsim's.
fn convert(
    cluster: &str,
    k: &KustomizationRender,
    f: kubeschema::Finding,
    at: Location,
) -> Finding {
    let mut out = Finding::new(rule(f.rule.id), f.message)
        .with_severity(f.severity)
        .in_cluster(cluster)
        .in_kustomization(k.kustomization.id.to_string())
        .at(at)
        .about("object", f.object.to_string());
    if !f.path.is_empty() {
        out = out.about("field", f.path);
    }
    if !f.schema_path.is_empty() {
        out = out.about("schema", f.schema_path);
    }
    out
}

/// The objects a cluster applies, each with the settings of the Kustomization that applies
/// it (HelmRelease entries apply their release's objects: neither `force` nor prune by a
/// Kustomization reaches them, helm uninstalls what a release drops).
fn applied<'c>(c: &'c ClusterRender, owners: &'c [String]) -> Vec<(Applied<'c>, usize, usize)> {
    let mut out = Vec::new();
    for (ki, k) in c.kustomizations.iter().enumerate() {
        let release = crate::model::is_release(k);
        for (oi, o) in k.artifact.iter().flat_map(|a| a.objects.iter().enumerate()) {
            out.push((
                Applied {
                    object: &o.object,
                    force: !release && k.kustomization.force,
                    prune: !release && k.kustomization.prune,
                    owner: &owners[ki],
                },
                ki,
                oi,
            ));
        }
    }
    out
}

/// A stable name for each entry of a cluster's render: the Kustomization's `namespace/name`,
/// `helm:namespace/name` for a HelmRelease entry (the two may share a name).
fn owner_names(c: &ClusterRender) -> Vec<String> {
    c.kustomizations
        .iter()
        .map(|k| {
            if crate::model::is_release(k) {
                format!("helm:{}", k.kustomization.id)
            } else {
                k.kustomization.id.to_string()
            }
        })
        .collect()
}

/// The apply-time hazards of going from `base` to `head`, per cluster present in both
/// (a cluster added or removed applies or deletes everything; that is not a change of an
/// object). Only Kustomizations rendered in both revisions are compared: an object of one
/// that failed or was not rendered is neither changed nor deleted.
/// `head_fs` is head's source, when the caller has it: objects are then located at their
/// line, through the origins the render tracked, else through the files their build read,
/// preferring those in `changed` (the files that differ between the revisions, when the
/// caller knows them): the component or base a change came from, rather than each
/// Kustomization's folder. Objects deleted are located by their base Kustomization's
/// folder.
#[must_use]
pub fn change_hazards(
    base: &[ClusterRender],
    head: &[ClusterRender],
    head_fs: Option<&crate::source::SourceFs>,
    changed: Option<&BTreeSet<String>>,
) -> Vec<Finding> {
    let none = crate::source::SourceFs::empty("/nonexistent".into());
    let mut files = Sources::new(head_fs.unwrap_or(&none));
    let mut base_files = Sources::new(&none);
    let mut out = Vec::new();
    for hc in head {
        let Some(bc) = base.iter().find(|c| c.name == hc.name) else {
            continue;
        };
        let (b_owners, h_owners) = (owner_names(bc), owner_names(hc));
        let rendered = |c: &ClusterRender, owners: &[String]| -> BTreeSet<String> {
            c.kustomizations
                .iter()
                .zip(owners)
                .filter(|(k, _)| k.artifact.is_some())
                .map(|(_, o)| o.clone())
                .collect()
        };
        let both: BTreeSet<String> = rendered(bc, &b_owners)
            .intersection(&rendered(hc, &h_owners))
            .cloned()
            .collect();
        let mut b = applied(bc, &b_owners);
        b.retain(|(a, _, _)| both.contains(a.owner));
        let mut h = applied(hc, &h_owners);
        h.retain(|(a, _, _)| both.contains(a.owner));
        let b_objs: Vec<Applied<'_>> = b.iter().map(|x| x.0).collect();
        let h_objs: Vec<Applied<'_>> = h.iter().map(|x| x.0).collect();
        for f in kubeschema::compare_renders(&b_objs, &h_objs) {
            // Located in head when the object is there, else (a deletion) in base.
            let id = &f.object;
            let find = |side: &[(Applied<'_>, usize, usize)]| {
                side.iter()
                    .find(|(a, _, _)| kubeschema::ObjectId::of(a.object).same_object(id))
                    .map(|(_, ki, oi)| (*ki, *oi))
            };
            let (k, place) = if let Some((ki, oi)) = find(&h) {
                let k = &hc.kustomizations[ki];
                let o = &k.artifact.as_ref().expect("rendered").objects[oi];
                (k, locate_changed(&mut files, k, o, &f.path, changed))
            } else if let Some((ki, oi)) = find(&b) {
                let k = &bc.kustomizations[ki];
                let o = &k.artifact.as_ref().expect("rendered").objects[oi];
                (k, locate(&mut base_files, k, o, ""))
            } else {
                continue;
            };
            out.push(convert(&hc.name, k, f, place));
        }
    }
    crate::finding::normalize(&mut out);
    out
}

/// What identifies a finding across two revisions, whatever its line: the rule, cluster,
/// Kustomization, object, field and message.
fn identity(f: &Finding) -> impl Ord + '_ {
    (
        f.rule,
        f.cluster.as_deref(),
        f.kustomization.as_deref(),
        f.related("object"),
        f.related("field"),
        &f.message,
    )
}

/// The findings of `head` that `base` does not have (a finding moved to another line is
/// the same finding): what a change introduces.
#[must_use]
pub fn new_findings(base: &[Finding], head: &[Finding]) -> Vec<Finding> {
    let old: BTreeSet<_> = base.iter().map(identity).collect();
    head.iter()
        .filter(|f| !old.contains(&identity(f)))
        .cloned()
        .collect()
}

/// A CRD file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct SchemaFileError {
    /// The file, as the user named it (relative to the repository for `[validate]`).
    pub file: String,
    /// The 1-based line of the document that failed.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// How many schema files a folder may hold: the walk stops with an error beyond it.
pub const MAX_SCHEMA_FILES: usize = 10_000;

/// Whether a file name is one the schema folders are read for.
#[must_use]
pub fn is_schema_file(name: &str) -> bool {
    [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e))
}

/// The CRDs of the files `(name, text)` (multi-document YAML or JSON; objects that are not
/// CRDs are skipped): a document that is not YAML is an error naming its file and line.
pub fn crds_of_files(files: &[(String, String)]) -> Result<Vec<(String, Value)>, SchemaFileError> {
    objects_of_files(files, kubeschema::is_crd)
}

/// The ValidatingAdmissionPolicies and bindings of policy files `(name, text)` (multi-document
/// YAML or JSON; other objects are skipped): a document that is not YAML is an error naming
/// its file and line.
pub fn policies_of_files(
    files: &[(String, String)],
) -> Result<Vec<(String, Value)>, SchemaFileError> {
    objects_of_files(files, |v| {
        kubeschema::policy::is_policy_object(v) || crate::kyverno::is_policy(v)
    })
}

/// The objects of the files `(name, text)` that `keep` takes, each with its file.
fn objects_of_files(
    files: &[(String, String)],
    keep: fn(&Value) -> bool,
) -> Result<Vec<(String, Value)>, SchemaFileError> {
    let mut out = Vec::new();
    for (file, text) in files {
        for doc in crate::goyaml::stream::split_documents(text) {
            // The documents are slices of the text: where one starts is its line.
            let offset = doc.as_ptr() as usize - text.as_ptr() as usize;
            let start = crate::locate::line_col(text, offset).0;
            let value = crate::manifest::parse_object(doc).map_err(|e| SchemaFileError {
                file: file.clone(),
                line: start,
                message: e.to_string(),
            })?;
            if keep(&value) {
                out.push((file.clone(), value));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    /// Every Flux API (group, version, kind) of the embedded CRDs of every minor, with the
    /// minors that serve it, as fluxsim-core's `FLUX_API_TABLE` holds it.
    fn flux_api_table() -> String {
        let mut apis = std::collections::BTreeSet::new();
        for m in kubeschema::FluxMinor::ALL {
            for crd in kubeschema::flux_crds_for(m) {
                let g = crd["spec"]["group"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let k = crd["spec"]["names"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                    let name = v["name"].as_str().unwrap_or_default().to_string();
                    apis.insert((g.clone(), name, k.clone()));
                }
            }
        }
        let mut out = String::new();
        for (g, v, k) in apis {
            let Some(life) = kubeschema::flux_api(&g, &v, &k) else {
                continue;
            };
            let minors: Vec<String> = life.served.iter().map(|m| m.minor().to_string()).collect();
            if minors.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{g}\t{v}\t{k}\t{}", minors.join(","));
        }
        out
    }

    // The core's copy of which minors serve which Flux API (it decides the presumed version,
    // and with it strict substitution) is the embedded CRDs' word for word.
    #[test]
    fn the_core_flux_api_table_is_what_the_embedded_crds_serve() {
        let want = flux_api_table();
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src/flux_apis.tsv");
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            std::fs::write(&path, &want).expect("write the table");
        }
        assert_eq!(
            crate::versions::FLUX_API_TABLE,
            want,
            "run with UPDATE_EXPECTED=1"
        );
    }
}
