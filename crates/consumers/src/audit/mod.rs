//! The audit: every way a postBuild substitution can fail a Kustomization, silently empty a
//! value or ship the wrong literal, found in a render before Flux finds it, with the file and
//! line it comes from.
//!
//! A consumer of a render made with origins (`RepoOptions::origins`): it reads each
//! Kustomization's template (the build before substitution), its vars and where they came
//! from, and returns findings under the rules of [`rules`]. It prints nothing.

mod checks;
pub(crate) mod context;
mod expr;
pub mod helm;
mod leaves;
pub(crate) mod place;
pub mod rules;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::artifact::Artifact;
use crate::finding::{normalize, Finding, Severity};
use crate::model::{ClusterRender, KustomizationRender};

pub use rules::RULES;

/// How the audit judges what it finds.
#[derive(Debug, Clone, Copy)]
pub struct AuditOptions {
    /// Strict substitution (the default since kustomize-controller v1.9.0): an undefined
    /// var fails the Kustomization; without it, it is emptied silently.
    pub strict: bool,
}

/// One Kustomization's line in the audit's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathSummary {
    /// The cluster.
    pub cluster: String,
    /// The Flux Kustomization, `namespace/name`.
    pub kustomization: String,
    /// `spec.path` as written.
    pub path: String,
    /// What became of it in the render (`rendered`, `failed` ...).
    pub status: &'static str,
    /// Whether Flux substitutes its objects (postBuild set, and a var defined or
    /// `substituteStrategy: Always`).
    pub substitutes: bool,
    /// Distinct source files its objects came from.
    pub files: usize,
    /// Vars it receives.
    pub defined: usize,
    /// Distinct var names its substituted objects reference.
    pub referenced: usize,
    /// Findings at warning or error.
    pub hazards: usize,
}

/// What a cluster's render assumed of its Flux version, and the substitution that follows
/// (`Flux v2.4 (kustomize-controller image ...): substitution not strict`).
#[must_use]
pub fn flux_said(c: &ClusterRender) -> String {
    let strict = if c.flux_strict {
        "strict substitution"
    } else {
        "substitution not strict"
    };
    let gate = c
        .strict_from
        .as_deref()
        .map(|g| format!(" (the gate as {g} sets it)"))
        .unwrap_or_default();
    format!(
        "Flux {}, {}; {strict}{gate}",
        c.versions.flux.version, c.versions.flux.basis
    )
}

/// One cluster as the audit judged it.
#[derive(Debug, Clone, Serialize)]
pub struct AuditedCluster {
    /// The cluster.
    pub name: String,
    /// Whether an undefined var fails its Kustomizations there (its Flux's strict
    /// substitution, unless `--no-strict`).
    pub strict: bool,
    /// What was assumed of its Flux, and the substitution that follows.
    pub said: String,
    /// Its versions, as the render read them.
    pub versions: crate::versions::ClusterVersions,
}

/// What the audit found.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// Each cluster, with the versions it was judged by.
    pub clusters: Vec<AuditedCluster>,
    /// Whether the audit judged as strict substitution does.
    pub strict: bool,
    /// Checks made: one per expression examined, per substituted value compared, per var
    /// checked, per substituteFrom source, per object searched for another cluster's values.
    pub checks: usize,
    /// One line per Kustomization, by cluster then path.
    pub paths: Vec<PathSummary>,
    /// The findings, in printing order.
    pub findings: Vec<Finding>,
}

impl Audit {
    /// Findings at warning or error.
    #[must_use]
    pub fn hazards(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .count()
    }
}

/// Audits every cluster of a render; `fs` is the source the render read (the origins' paths
/// are relative to its root).
#[must_use]
pub fn audit_clusters(
    fs: &crate::source::SourceFs,
    clusters: &[ClusterRender],
    opts: AuditOptions,
) -> Audit {
    let mut files = place::Sources::new(fs);
    let mut findings = Vec::new();
    let mut checks = 0;
    let mut summaries = Vec::new();
    let mut literal_inputs = Vec::new();
    let mut audited = Vec::new();
    for c in clusters {
        audited.push(AuditedCluster {
            name: c.name.clone(),
            strict: opts.strict && c.flux_strict,
            said: if opts.strict {
                flux_said(c)
            } else {
                format!(
                    "Flux {}, {}; substitution not strict (--no-strict)",
                    c.versions.flux.version, c.versions.flux.basis
                )
            },
            versions: c.versions.clone(),
        });
        let mut ctx = context::ClusterCtx::new(c, opts);
        for i in 0..c.kustomizations.len() {
            ctx.audit_kustomization(i, &mut files);
        }
        checks::sources::audit_sources(&mut ctx, &mut files);
        checks += ctx.checks;
        literal_inputs.push(checks::literals::LiteralInput::of(&ctx));
        summaries.extend(ctx.summaries());
        findings.extend(ctx.findings);
    }
    let (found, n) =
        checks::literals::other_cluster_literals(clusters, &literal_inputs, &mut files);
    findings.extend(found);
    checks += n;
    normalize(&mut findings);
    // Hazards per Kustomization, counted after duplicates are gone.
    let mut per_ks: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.severity >= Severity::Warning) {
        if let (Some(c), Some(k)) = (&f.cluster, &f.kustomization) {
            *per_ks.entry((c.clone(), k.clone())).or_default() += 1;
        }
    }
    for s in &mut summaries {
        s.hazards = per_ks
            .get(&(s.cluster.clone(), s.kustomization.clone()))
            .copied()
            .unwrap_or(0);
    }
    summaries.sort_by(|a, b| {
        (&a.cluster, &a.path, &a.kustomization).cmp(&(&b.cluster, &b.path, &b.kustomization))
    });
    Audit {
        clusters: audited,
        strict: opts.strict,
        checks,
        paths: summaries,
        findings,
    }
}

/// Audits a repository's render.
#[must_use]
pub fn audit(render: &crate::model::RepoRender, opts: AuditOptions) -> Audit {
    audit_clusters(render.tree.fs(), &render.clusters, opts)
}

/// The objects to audit: the build before substitution; for a ResourceSet's entry, the
/// objects it generates (nothing substitutes them: a `${...}` left in them ships verbatim,
/// and they are var sources like any applied object).
fn template_of(k: &KustomizationRender) -> Option<&Artifact> {
    if crate::model::is_resourceset_entry(k) {
        return k.artifact.as_ref();
    }
    k.template.as_ref()
}

/// Whether Flux substitutes this Kustomization's objects: postBuild is set and some var is
/// defined, or `substituteStrategy: Always` (kustomize-controller's
/// `kustomization_controller.go` calls `SubstituteVariables` only then; see
/// `postbuild::should_substitute`).
fn substitutes(k: &KustomizationRender) -> bool {
    k.kustomization
        .post_build
        .as_ref()
        .is_some_and(|pb| !k.vars.is_empty() || pb.always)
}

/// The names in a set, as `` `a`, `b` `` (the first `max`, then "and N more").
fn list_names<'a>(names: impl IntoIterator<Item = &'a str>, max: usize) -> String {
    let all: BTreeSet<&str> = names.into_iter().collect();
    let mut out: Vec<String> = all.iter().take(max).map(|n| format!("`{n}`")).collect();
    if all.len() > max {
        out.push(format!("and {} more", all.len() - max));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests;
