//! What a command found, as one severity: the exit policy that `--fail-on` applies, in one
//! place. A command exits 1 when what it found is at or above `--fail-on` (default `error`
//! for every command), 2 when it could not run; `docs/commands/README.md` ("Exit status")
//! is the table of what each level holds for each command, and the tests check it.
//!
//! - `error`: what Flux would fail on, or what makes the answer wrong: a Kustomization that
//!   fails to render (in head, for a diff), a failed proof, an error finding.
//! - `warning`: what the command could not see: a Kustomization not compared for another
//!   reason (external, suspended, failed in base only, in need of the network), a warning
//!   finding.
//! - `info`: what the command is asked to show: a change, clusters that differ in more than
//!   their values, an image bump, an info finding.

use crate::compare::{Change, ClusterComparison, RevisionDiff};
use crate::finding::{Finding, Severity};
use crate::model::{ClusterRender, Status};
use crate::report::proof::Proof;

/// The worst of two levels (`None` is nothing found).
fn worst(a: Option<Severity>, b: Option<Severity>) -> Option<Severity> {
    a.max(b)
}

/// `render` (and `images`, which renders): a Kustomization that failed is an error, one that
/// needs the network a warning (not rendered offline), an external or suspended one info.
#[must_use]
pub fn of_render(clusters: &[ClusterRender]) -> Option<Severity> {
    clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter_map(|k| match k.status {
            Status::Rendered => None,
            Status::Failed(_) | Status::Blocked(_) => Some(Severity::Error),
            Status::NeedsNetwork(_) => Some(Severity::Warning),
            Status::External(_) | Status::Suspended => Some(Severity::Info),
        })
        .max()
}

/// What a diff could not compare: an error when something fails in head (the change breaks
/// it), a warning for anything else not compared.
#[must_use]
pub fn of_diff_problems(d: &RevisionDiff) -> Option<Severity> {
    d.clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| k.change == Change::NotCompared)
        .map(|k| {
            if k.fails_in_head {
                Severity::Error
            } else {
                Severity::Warning
            }
        })
        .max()
}

/// `diff`: [`of_diff_problems`], and a change (an artifact changed, added or removed, an
/// object moved, a cluster added or removed) as info.
#[must_use]
pub fn of_diff(d: &RevisionDiff) -> Option<Severity> {
    worst(of_diff_problems(d), d.changed().then_some(Severity::Info))
}

/// `images --diff`: what the diff could not compare ([`of_diff_problems`]), and an image
/// that changed as info.
#[must_use]
pub fn of_image_diff(d: &RevisionDiff, images_changed: bool) -> Option<Severity> {
    worst(
        of_diff_problems(d),
        images_changed.then_some(Severity::Info),
    )
}

/// `compare`: a Kustomization that failed in some cluster is an error, one not compared
/// otherwise a warning, clusters that differ in more than var values info.
#[must_use]
pub fn of_comparison(c: &ClusterComparison) -> Option<Severity> {
    let problems = c
        .kustomizations
        .iter()
        .filter(|k| k.not_compared)
        .map(|k| {
            if k.failed {
                Severity::Error
            } else {
                Severity::Warning
            }
        })
        .max();
    worst(problems, (!c.agnostic).then_some(Severity::Info))
}

/// `prove`: a failed proof is an error; blind spots it was allowed to pass with
/// (`--allow-blind`) a warning; a change the proof holds for info.
#[must_use]
pub fn of_proof(p: &Proof<'_>) -> Option<Severity> {
    if !p.passed {
        return Some(Severity::Error);
    }
    if !p.blind.is_empty() {
        return Some(Severity::Warning);
    }
    p.diff.changed().then_some(Severity::Info)
}

/// `audit`, `graph`: the worst finding.
#[must_use]
pub fn of_findings(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{ClusterDiff, KustomizationDiff, Presence, TemplateRow};

    fn ks(change: Change, fails_in_head: bool) -> KustomizationDiff {
        KustomizationDiff {
            kustomization: "flux-system/apps".into(),
            change,
            base_sha256: None,
            head_sha256: None,
            base_problem: None,
            head_problem: None,
            blocked_by: None,
            fails_in_head,
            external: None,
            objects: Vec::new(),
            left_out: 0,
            order: None,
            chart: None,
        }
    }

    fn diff(kustomizations: Vec<KustomizationDiff>) -> RevisionDiff {
        RevisionDiff {
            base: "main".into(),
            head: "work tree".into(),
            base_revision: crate::compare::Revision::default(),
            head_revision: crate::compare::Revision::default(),
            clusters: vec![ClusterDiff {
                cluster: "dev".into(),
                presence: Presence::Both,
                kustomizations,
                moves: Vec::new(),
                skipped: Vec::new(),
                prune_deletions: Vec::new(),
            }],
        }
    }

    #[test]
    fn a_change_is_info_not_compared_a_warning_and_a_head_failure_an_error() {
        assert_eq!(of_diff(&diff(vec![ks(Change::Identical, false)])), None);
        assert_eq!(
            of_diff(&diff(vec![ks(Change::Changed, false)])),
            Some(Severity::Info)
        );
        assert_eq!(
            of_diff(&diff(vec![
                ks(Change::Changed, false),
                ks(Change::NotCompared, false)
            ])),
            Some(Severity::Warning)
        );
        assert_eq!(
            of_diff(&diff(vec![ks(Change::NotCompared, true)])),
            Some(Severity::Error)
        );
        // An image diff counts the image changes, not the artifacts', as info.
        assert_eq!(
            of_image_diff(&diff(vec![ks(Change::Changed, false)]), false),
            None
        );
    }

    fn row(not_compared: bool, failed: bool, same_template: bool) -> TemplateRow {
        TemplateRow {
            kustomization: "flux-system/apps".into(),
            root: false,
            templates: Vec::new(),
            artifacts: Vec::new(),
            same_template,
            same_artifact: false,
            differing_vars: Vec::new(),
            not_compared,
            failed,
            problems: Vec::new(),
            below: Vec::new(),
            objects: Vec::new(),
        }
    }

    fn comparison(rows: Vec<TemplateRow>) -> ClusterComparison {
        ClusterComparison {
            clusters: vec!["dev".into(), "prod".into()],
            graph: Vec::new(),
            agnostic: rows.iter().all(|r| r.not_compared || r.same_template),
            not_compared: rows.iter().filter(|r| r.not_compared).count(),
            kustomizations: rows,
            vars: Vec::new(),
            incomplete: vec![false, false],
        }
    }

    #[test]
    fn clusters_that_differ_are_info_and_a_failure_in_one_an_error() {
        assert_eq!(
            of_comparison(&comparison(vec![row(false, false, true)])),
            None
        );
        assert_eq!(
            of_comparison(&comparison(vec![row(false, false, false)])),
            Some(Severity::Info)
        );
        assert_eq!(
            of_comparison(&comparison(vec![row(true, false, true)])),
            Some(Severity::Warning)
        );
        assert_eq!(
            of_comparison(&comparison(vec![row(true, true, true)])),
            Some(Severity::Error)
        );
    }
}
