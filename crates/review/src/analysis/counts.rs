//! How many units of a kind had each [`Outcome`]: the numbers a summary gives.

use serde::Serialize;

use crate::analysis::unit::{is_zero_count, Outcome};

/// How many units of a kind had each outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Added in head.
    pub added: usize,
    /// Changed (after the filters).
    pub changed: usize,
    /// Removed in head.
    pub removed: usize,
    /// Renamed (one removed and one added, counted once).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub renamed: usize,
    /// Not rendered on a side where they exist.
    pub not_compared: usize,
    /// Changed only in what the filters hide.
    pub filtered: usize,
    /// Identical.
    pub identical: usize,
}

impl Counts {
    pub(crate) fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Identical => self.identical += 1,
            Outcome::Changed => self.changed += 1,
            Outcome::Added => self.added += 1,
            Outcome::Removed => self.removed += 1,
            Outcome::Renamed => self.renamed += 1,
            Outcome::NotCompared => self.not_compared += 1,
            Outcome::Filtered => self.filtered += 1,
        }
    }

    /// Whether any unit is added, changed, removed or not compared.
    #[must_use]
    pub fn any(&self) -> bool {
        self.added + self.changed + self.removed + self.renamed + self.not_compared > 0
    }

    pub(crate) fn merge(&mut self, o: &Counts) {
        self.added += o.added;
        self.changed += o.changed;
        self.removed += o.removed;
        self.renamed += o.renamed;
        self.not_compared += o.not_compared;
        self.filtered += o.filtered;
        self.identical += o.identical;
    }
}
