//! The outcome of `prove` (the diff, the canaries, what could not be seen) and the lines that
//! say what the canaries found: below both `report/prove.rs` (its printing) and
//! `report/review.rs` (the reviewer's reports).

use crate::canary::{CanaryReport, Scope};
use crate::compare::{ClusterDiff, RevisionDiff};
use crate::report::diff::{problems, Counts};
use crate::report::markdown::{md, Inline, Message, Out, Plural, Text};

/// A Kustomization the proof could not see: not rendered in base or head.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Blind {
    /// The cluster.
    pub cluster: String,
    /// `namespace/name`.
    pub kustomization: String,
    /// Its status in base and head where it did not render (`head: failed: ...`).
    pub why: Vec<String>,
    /// It rendered in base (or was not there) and does not in head: what the change broke,
    /// the news of a proof, counted apart from what did not render in base either.
    #[serde(skip)]
    pub broken_by_head: bool,
}

/// The Kustomizations a diff could not compare, in cluster and name order.
#[must_use]
pub fn blind_spots(d: &RevisionDiff) -> Vec<Blind> {
    d.clusters
        .iter()
        .flat_map(|c| {
            c.not_compared().map(|k| Blind {
                cluster: c.cluster.clone(),
                kustomization: k.kustomization.clone(),
                why: problems(k),
                broken_by_head: k.base_problem.is_none()
                    && k.external.is_none()
                    && k.head_problem.is_some(),
            })
        })
        .collect()
}

/// Why the proof is blind, the new failures first: `head breaks 1 Kustomization
/// (dev:flux-system/apps); blind to 1 more that did not render in base` (without a new
/// failure: `blind to 2 Kustomizations that did not render`). `code` marks
/// `--allow-blind` as code (the review's sentences); `allowed` leaves the hint out.
pub(crate) struct BlindClause<'a> {
    pub(crate) blind: &'a [Blind],
    pub(crate) code: bool,
    pub(crate) allowed: bool,
}

impl Inline for BlindClause<'_> {
    fn put(&self, w: &mut Out<'_>) {
        /// Named in the clause; more are counted (each is listed below the verdict).
        const NAMED: usize = 3;
        let new: Vec<&Blind> = self.blind.iter().filter(|b| b.broken_by_head).collect();
        let old = self.blind.len() - new.len();
        if !new.is_empty() {
            md!(w, "head breaks {} (", Plural(new.len(), "Kustomization"));
            for (i, b) in new.iter().take(NAMED).enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                md!(w, "{}{}:{}", sep, Text(&b.cluster), Text(&b.kustomization));
            }
            if new.len() > NAMED {
                md!(w, ", and {} more", new.len() - NAMED);
            }
            md!(w, ")");
        }
        if old > 0 {
            let sep = if new.is_empty() { "" } else { "; " };
            let more = if new.is_empty() { "" } else { " more" };
            if new.is_empty() {
                md!(
                    w,
                    "blind to {} that did not render",
                    Plural(old, "Kustomization")
                );
            } else {
                md!(
                    w,
                    "{}blind to {}{} that did not render in base",
                    sep,
                    old,
                    more
                );
            }
        }
        if !self.allowed {
            if self.code {
                md!(w, " (`--allow-blind` to accept)");
            } else {
                md!(w, " (--allow-blind to accept)");
            }
        }
    }
}

/// The outcome of `prove`.
#[derive(Debug, serde::Serialize)]
pub struct Proof<'a> {
    /// The revision diff.
    pub diff: &'a RevisionDiff,
    /// `identical`, `changed` or `any`.
    pub expect: &'static str,
    /// The diff meets the expectation.
    pub expectation_met: bool,
    /// The canaries.
    pub canaries: &'a CanaryReport,
    /// What the proof could not see (Kustomizations not compared).
    pub blind: Vec<Blind>,
    /// `--allow-blind`: blind spots are listed but do not fail the proof.
    pub allow_blind: bool,
    /// Expectation met, every canary detected and restored, and nothing blind (unless
    /// allowed).
    pub passed: bool,
}

/// `dev: 9/9 artifacts identical; canaries 2/2 detected, 2/2 restored`.
pub(crate) struct CanarySummary<'a>(pub(crate) &'a Proof<'a>, pub(crate) &'a ClusterDiff);

impl Inline for CanarySummary<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let (p, cluster) = (self.0, self.1);
        let mine = p.canaries.for_cluster(&cluster.cluster);
        let detected = mine.iter().filter(|c| c.detected).count();
        let restored = mine.iter().filter(|c| c.restored).count();
        md!(
            w,
            "{}: {}; canaries {}/{} detected, {}/{} restored",
            Text(&cluster.cluster),
            Counts(cluster),
            detected,
            mine.len(),
            restored,
            mine.len()
        );
    }
}

/// One line of what the canaries found.
pub(crate) enum CanaryLine<'a> {
    /// A canary: where it was planted and whether it was seen where expected, and undone.
    Canary(&'a crate::canary::CanaryOutcome),
    /// An artifact that changed though no canary should have changed it.
    Stray(&'a crate::canary::Target),
    /// An artifact that did not return to its digest.
    NotRestored(&'a crate::canary::Target),
    /// No canary could be planted (nothing of head rendered).
    NonePlanted,
    /// No shared canary: no file is read by two artifacts or more.
    NoSharedFile,
}

pub(crate) fn canary_lines<'a>(p: &'a Proof<'_>) -> Vec<CanaryLine<'a>> {
    let c = p.canaries;
    let none = c.canaries.is_empty().then_some(CanaryLine::NonePlanted);
    none.into_iter()
        .chain(c.canaries.iter().map(CanaryLine::Canary))
        .chain(c.stray_changes.iter().map(CanaryLine::Stray))
        .chain(c.not_restored.iter().map(CanaryLine::NotRestored))
        .chain((!c.canaries.is_empty() && c.no_shared_file).then_some(CanaryLine::NoSharedFile))
        .collect()
}

impl Inline for CanaryLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        match self {
            CanaryLine::Canary(c) => canary_line(w, c),
            CanaryLine::NonePlanted => md!(
                w,
                "no canary planted: nothing of head rendered from a file of the repository \
                 (see what failed, above)"
            ),
            CanaryLine::NoSharedFile => md!(
                w,
                "no shared canary: no file of the repository is read by two artifacts or more, \
                 so no change to a shared file was planted"
            ),
            CanaryLine::Stray(t) => md!(w, "stray change: {} changed beyond the canaries", Text(t)),
            CanaryLine::NotRestored(t) => md!(
                w,
                "not restored: {} did not return to its digest after the canaries were removed",
                Text(t)
            ),
        }
    }
}

fn canary_line(w: &mut Out<'_>, c: &crate::canary::CanaryOutcome) {
    md!(w, "canary {} (", Text(&c.plan.nonce));
    match &c.plan.scope {
        Scope::Overlay { cluster } => md!(w, "overlay of {}", Text(cluster)),
        Scope::Shared => md!(w, "shared"),
        Scope::Values => md!(w, "values of a HelmRelease"),
        Scope::Template => md!(w, "template of a ResourceSet"),
    }
    md!(w, ") in {}: ", Text(&c.plan.file));
    if c.detected && c.restored {
        md!(w, "detected, restored");
    } else if let Some(why) = &c.plan.excluded {
        md!(
            w,
            "NOT DETECTED: the file is not in what Flux sees ({}): the harness is blind there",
            Message(why)
        );
    } else if c.plan.expected.is_empty() {
        md!(
            w,
            "NOT DETECTED: no rendered object comes from this file: the harness is blind there"
        );
    } else if !c.detected {
        // Only the difference: where it was expected and not seen, and where it was seen
        // though not expected.
        md!(w, "NOT DETECTED as expected: ");
        if !c.missing.is_empty() {
            md!(
                w,
                "not seen in {} of {} expected: ",
                c.missing.len(),
                c.plan.expected.len()
            );
            for (i, u) in c.missing.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                if let Some(why) = &u.why {
                    md!(w, "{}{} ({})", sep, Text(&u.target), Message(why));
                } else {
                    md!(w, "{}{} (why unknown)", sep, Text(&u.target));
                }
            }
        }
        if !c.unexpected.is_empty() {
            let sep = if c.missing.is_empty() { "" } else { "; " };
            md!(w, "{}seen where not expected: ", sep);
            for (i, t) in c.unexpected.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                md!(w, "{}{}", sep, Text(t));
            }
        }
    } else {
        md!(w, "detected, NOT RESTORED");
    }
    md!(
        w,
        "; expected in {}",
        Plural(c.plan.expected.len(), "artifact")
    );
}
