//! A change's review and JSON as `diff` and `prove` print them: the review of the diff (or
//! the proof) with the hazards and findings of [`ChangeChecks`] added as sentences of their
//! cluster, read with the filters; the JSON with the review's keys and the findings'.

use std::fmt::Write as _;

use review::analysis::Analysis;
use review::model::Review;
use review::strip::Filters;
use serde_json::Value;

use crate::change::ChangeChecks;
use crate::compare::RevisionDiff;
use crate::finding::{Finding, Severity};
use crate::images::ClusterImageDiff;
use crate::report::findings::findings_json;
use crate::report::proof::Proof;
use crate::report::quiet::{by_source, SourceGroup};
use crate::text::plural;

/// A change read for people and for programs: the review's analysis (what the text,
/// Markdown and HTML reports print) and the JSON document.
pub struct Reviewed {
    /// The review read with the filters.
    pub analysis: Analysis,
    /// The `--format json` document.
    pub json: Value,
}

/// `diff`'s review and JSON; with `group` (a report for people, not `--verbose`), the apply
/// hazards of one cluster, rule and source file are one sentence.
#[must_use]
pub fn diff_reviewed(
    diff: &RevisionDiff,
    images: &[ClusterImageDiff],
    checks: &ChangeChecks,
    filters: &Filters,
    group: bool,
) -> Reviewed {
    let mut summary = crate::report::review::diff_review(diff, images);
    checks.add_to_review(&mut summary, group);
    let analysis = review::analysis::analyze(&summary, filters);
    let mut json = crate::report::diff::diff_json(diff);
    crate::report::review::add_to_json(&mut json, diff, &analysis);
    checks.add_to_json(&mut json);
    Reviewed { analysis, json }
}

/// `prove`'s review and JSON, as [`diff_reviewed`]; a finding at error level leads the
/// review's notes (the proof fails on it).
#[must_use]
pub fn prove_reviewed(
    proof: &Proof<'_>,
    images: &[ClusterImageDiff],
    checks: &ChangeChecks,
    filters: &Filters,
    group: bool,
) -> Reviewed {
    let mut summary = crate::report::review::prove_review(proof, images);
    checks.add_to_review(&mut summary, group);
    if checks.errors() > 0 {
        summary.notes.insert(
            0,
            format!(
                "{} at error level: Flux's apply of head fails, or applies what the \
                 repository did not mean (see the hazards)",
                plural(checks.errors(), "finding")
            ),
        );
    }
    let analysis = review::analysis::analyze(&summary, filters);
    let mut json = crate::report::prove::prove_json(proof);
    crate::report::review::add_to_json(&mut json["diff"], proof.diff, &analysis);
    checks.add_to_json(&mut json);
    Reviewed { analysis, json }
}

/// Backticks mark code in the review's sentences: the repository's text must not.
fn unticked(s: &str) -> String {
    s.replace('`', "'")
}

/// A finding as a sentence of the review: `error `FS310` at `file:line`: message`.
fn hazard(f: &Finding) -> String {
    let at = f
        .location
        .as_ref()
        .map(|l| format!(" at `{}`", unticked(&l.to_string())))
        .unwrap_or_default();
    format!("{} `{}`{at}: {}", f.severity, f.rule, unticked(&f.message))
}

/// How many Kustomizations a grouped hazard names before `and N more`.
const HAZARD_NAMES_SHOWN: usize = 5;

/// The hazards of one source file as one sentence: the first's, the Kustomizations they
/// are in, and how many there are.
fn grouped_hazard(g: &SourceGroup<'_>) -> String {
    let first = g.members[0];
    if g.members.len() == 1 {
        return hazard(first);
    }
    let ks = g.kustomizations();
    let mut names = ks
        .iter()
        .take(HAZARD_NAMES_SHOWN)
        .map(|k| format!("`{}`", unticked(k)))
        .collect::<Vec<_>>()
        .join(", ");
    if ks.len() > HAZARD_NAMES_SHOWN {
        let _ = write!(names, " and {} more", ks.len() - HAZARD_NAMES_SHOWN);
    }
    let at = first
        .location
        .as_ref()
        .map(|l| format!(" at `{}`", unticked(&l.to_string())))
        .unwrap_or_default();
    format!(
        "{} `{}`{at}, in {} ({}): {}; {} in all from this file (`-o json` lists each)",
        first.severity,
        first.rule,
        plural(ks.len(), "Kustomization"),
        names,
        unticked(&first.message),
        plural(g.members.len(), "hazard"),
    )
}

/// The rules whose findings the review already states in its own words (prune of state and
/// moves under prune): not repeated.
const SAID_BY_REVIEW: [&str; 4] = ["FS320", "FS321", "FS322", "FS323"];

impl ChangeChecks {
    /// Adds the findings to the review's hazards of their cluster, as sentences; with
    /// `group` (a report for people, not `--verbose`), the apply hazards of one cluster, rule
    /// and source file as one sentence that lists their Kustomizations (one edit of a
    /// shared component: one hazard, at the component's file).
    pub fn add_to_review(&self, review: &mut Review, group: bool) {
        let apply: Vec<Finding> = self
            .hazards
            .iter()
            .filter(|f| !SAID_BY_REVIEW.contains(&f.rule))
            .cloned()
            .collect();
        let mut sentences: Vec<(Option<String>, String)> = Vec::new();
        if group {
            for g in by_source(&apply) {
                let f = g.members[0];
                sentences.push((f.cluster.clone(), grouped_hazard(&g)));
            }
        } else {
            sentences.extend(apply.iter().map(|f| (f.cluster.clone(), hazard(f))));
        }
        let others = self
            .validation
            .iter()
            .flatten()
            .filter(|f| f.severity >= Severity::Warning)
            .chain(self.audit.iter().flatten())
            .chain(self.graph.iter().flatten())
            .chain(self.upgrade.iter().flatten());
        sentences.extend(others.map(|f| (f.cluster.clone(), hazard(f))));
        for (cluster, sentence) in sentences {
            let Some(c) = review
                .clusters
                .iter_mut()
                .find(|c| Some(c.name.as_str()) == cluster.as_deref())
            else {
                continue;
            };
            c.hazards.push(sentence);
        }
    }

    /// Adds `applyHazards` and, with `--validate`, `validation`, with `--audit`, `audit`, with
    /// `--graph`, `graph`, with `--upgrade`, `upgrade` to a diff's JSON.
    pub fn add_to_json(&self, json: &mut Value) {
        json["applyHazards"] = findings_json(&self.hazards);
        if let Some(v) = &self.validation {
            json["validation"] = findings_json(v);
        }
        if let Some(a) = &self.audit {
            json["audit"] = findings_json(a);
        }
        if let Some(g) = &self.graph {
            json["graph"] = findings_json(g);
        }
        if let Some(u) = &self.upgrade {
            json["upgrade"] = findings_json(u);
        }
    }
}
