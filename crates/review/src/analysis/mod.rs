//! A [`Review`] read as a reviewer reads it: each object's semantic changes after the
//! filters, what the filters hid, and per cluster the counts the summary gives. Every
//! report (text, Markdown, HTML, JSON) is printed from an [`Analysis`].

mod cluster;
mod counts;
mod images;
mod read;
mod renames;
mod unit;

use serde::Serialize;

pub use cluster::{ClusterReview, Shown};
pub use counts::Counts;
pub use images::{image_groups, ImageGroup};
pub use renames::renames;
pub use unit::{ObjectChange, ObjectReview, Outcome, UnitReview};

use crate::model::{Review, Section, UnitKind, Verdict};
use crate::strip::{Filters, Hidden};

/// Which filters were on (for the report's note).
#[derive(Debug, Clone, Serialize)]
pub struct FilterNote {
    /// The default set.
    pub defaults: bool,
    /// The user's paths and labels.
    pub user: Vec<String>,
}

/// A whole review, ready to print.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// The base revision.
    pub base: String,
    /// The head revision.
    pub head: String,
    /// The filters used.
    pub filters: FilterNote,
    /// Per cluster, sorted by name.
    pub clusters: Vec<ClusterReview>,
    /// What the reports are called (`fluxsim review` when the review named nothing).
    pub title: String,
    /// The caller's verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The caller's sentences for the summary.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The caller's sections after the details.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
}

impl Analysis {
    /// What the filters hid, in every cluster.
    #[must_use]
    pub fn hidden(&self) -> Hidden {
        let mut h = Hidden::default();
        for c in &self.clusters {
            h += c.hidden;
        }
        h
    }

    /// Counts of a kind over every cluster.
    #[must_use]
    pub fn totals(&self, kind: UnitKind) -> Counts {
        let mut t = Counts::default();
        for c in &self.clusters {
            t.merge(c.counts(kind));
        }
        t
    }

    /// Whether any cluster has a unit of this kind (in either revision).
    #[must_use]
    pub fn has(&self, kind: UnitKind) -> bool {
        self.clusters
            .iter()
            .any(|c| c.units.iter().any(|u| u.kind == kind))
    }

    /// Whether anything at all is to be reported.
    #[must_use]
    pub fn changed(&self) -> bool {
        self.clusters.iter().any(ClusterReview::changed)
    }

    /// The units shown, with their cluster: what the details list.
    pub fn shown_units(&self) -> impl Iterator<Item = (&ClusterReview, &UnitReview)> {
        self.clusters
            .iter()
            .flat_map(|c| c.units.iter().map(move |u| (c, u)))
            .filter(|(_, u)| u.outcome.shown())
    }
}

/// Reads `review` with `filters`: the one entry point every report starts from.
#[must_use]
pub fn analyze(review: &Review, filters: &Filters) -> Analysis {
    let mut clusters: Vec<ClusterReview> = review
        .clusters
        .iter()
        .map(|c| cluster::cluster(c, filters))
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Analysis {
        base: review.base.clone(),
        head: review.head.clone(),
        filters: FilterNote {
            defaults: filters.defaults(),
            user: filters.user_filters().to_vec(),
        },
        clusters,
        title: if review.title.is_empty() {
            "fluxsim review".to_string()
        } else {
            review.title.clone()
        },
        verdict: review.verdict.clone(),
        notes: review.notes.clone(),
        sections: review.sections.clone(),
    }
}

#[cfg(test)]
mod tests;
