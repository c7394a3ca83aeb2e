//! What a change brings at apply time (`diff`, `prove`): the hazards of going from base to
//! head, and with `--validate`, `--audit`, `--graph` and `--upgrade` the findings of those
//! checks that head brings (those base has too are left out). The review's sentences and the
//! JSON keys made of them are `report::change`'s.

use std::collections::BTreeSet;

use crate::config::{Config, ConfigError};
use crate::finding::{Finding, Severity};
use crate::model::{ClusterRender, RepoRender};
use crate::source::SourceFs;
use crate::validate::{self, KubeVersion, ValidateOptions};

/// The trees the audit and the graph of a change read: base's and head's files, where the
/// origins of their renders point.
pub struct AuditTrees<'a> {
    /// Base's files.
    pub base: &'a SourceFs,
    /// Head's files.
    pub head: &'a SourceFs,
    /// Substitution judged as strict (the default), or not (`--no-strict`).
    pub strict: bool,
}

/// Which checks a change gets besides its apply hazards.
#[derive(Debug, Clone, Default)]
pub struct ChangeOptions {
    /// `--validate`: the schema options; `None` without it.
    pub validate: Option<ValidateOptions>,
    /// `--all-findings`: every validation finding of head, not only those base does not have.
    pub all_findings: bool,
    /// `--audit`: the substitution hazards head brings (needs the trees).
    pub audit: bool,
    /// `--graph`: the cold-start findings head brings (needs the trees).
    pub graph: bool,
    /// `--upgrade`: the upgrade findings head brings.
    pub upgrade: bool,
}

/// What a change brings at apply time: the hazards of going from base to head (always),
/// with `--validate` the schema findings of head (new ones unless `--all-findings`), with
/// `--audit` the substitution hazards and with `--graph` the cold-start findings head brings.
#[derive(Debug, Default)]
pub struct ChangeChecks {
    /// The hazards of applying head over base.
    pub hazards: Vec<Finding>,
    /// With `--validate`: the schema findings of head.
    pub validation: Option<Vec<Finding>>,
    /// With `--audit`: the substitution hazards (warning and error) head brings.
    pub audit: Option<Vec<Finding>>,
    /// With `--graph`: the cold-start findings (warning and error) head brings.
    pub graph: Option<Vec<Finding>>,
    /// With `--upgrade`: the upgrade findings (warning and error) head brings.
    pub upgrade: Option<Vec<Finding>>,
}

/// Rules the audit of a change leaves to the diff, which says them in its own words: a
/// Kustomization that failed or never reconciled (FS100) is a failure or "not compared".
const SAID_BY_DIFF: [&str; 1] = ["FS100"];

/// Checks the change from `base` to `head`; `head_render` is head's render when this run
/// made it (its tree locates findings and holds `fluxsim.toml`); `trees` what `--audit` and
/// `--graph` read; `changed` the files that differ between the two (a hazard is located in
/// the one it came from).
///
/// # Errors
///
/// A revision's `fluxsim.toml` that `--graph` reads and cannot parse.
pub fn check_change(
    base: &[ClusterRender],
    head: &[ClusterRender],
    head_render: Option<&RepoRender>,
    trees: Option<&AuditTrees<'_>>,
    changed: Option<&BTreeSet<String>>,
    opts: &ChangeOptions,
) -> Result<ChangeChecks, ConfigError> {
    let fs = head_render.map(|r| r.tree.fs());
    let hazards = validate::change_hazards(base, head, fs, changed);
    let validation = opts.validate.as_ref().map(|vopts| {
        let h = validate::validate_clusters(fs, head, vopts);
        if opts.all_findings {
            h.findings
        } else {
            let b = validate::validate_clusters(None, base, vopts);
            validate::new_findings(&b.findings, &h.findings)
        }
    });
    let graph = match trees.filter(|_| opts.graph) {
        Some(t) => {
            // Each revision's own fluxsim.toml (its bootstrap CRDs, its dependencies).
            let base_config = Config::load(t.base)?;
            let head_config = match head_render {
                Some(r) => r.config.clone(),
                None => Config::load(t.head)?,
            };
            let b = crate::graph::findings(t.base, base, &base_config);
            let h = crate::graph::findings(t.head, head, &head_config);
            Some(at_least_warning(validate::new_findings(&b, &h)))
        }
        None => None,
    };
    let audit = trees.filter(|_| opts.audit).map(|t| {
        let aopts = crate::audit::AuditOptions { strict: t.strict };
        let b = crate::audit::audit_clusters(t.base, base, aopts);
        let h = crate::audit::audit_clusters(t.head, head, aopts);
        at_least_warning(validate::new_findings(&b.findings, &h.findings))
            .into_iter()
            .filter(|f| !SAID_BY_DIFF.contains(&f.rule))
            .collect()
    });
    let upgrade = opts.upgrade.then(|| {
        let uopts = crate::upgrade::UpgradeOptions {
            flux: crate::upgrade::FluxMinor::NEWEST,
            kube: KubeVersion::DEFAULT,
            validate: ValidateOptions::default(),
        };
        let b = crate::upgrade::upgrade_clusters(None, base, &uopts);
        let h = crate::upgrade::upgrade_clusters(fs, head, &uopts);
        at_least_warning(validate::new_findings(&b.findings, &h.findings))
    });
    Ok(ChangeChecks {
        hazards,
        validation,
        audit,
        graph,
        upgrade,
    })
}

/// The findings at warning level or above.
fn at_least_warning(findings: Vec<Finding>) -> Vec<Finding> {
    findings
        .into_iter()
        .filter(|f| f.severity >= Severity::Warning)
        .collect()
}

impl ChangeChecks {
    /// Every finding: the apply hazards, then each check's.
    fn all(&self) -> impl Iterator<Item = &Finding> {
        self.hazards
            .iter()
            .chain(self.validation.iter().flatten())
            .chain(self.audit.iter().flatten())
            .chain(self.graph.iter().flatten())
            .chain(self.upgrade.iter().flatten())
    }

    /// Findings at error level: the apply of head fails.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.all().filter(|f| f.severity == Severity::Error).count()
    }

    /// The level of what the change brings (`--fail-on`): its worst finding.
    #[must_use]
    pub fn level(&self) -> Option<Severity> {
        self.all().map(|f| f.severity).max()
    }
}
