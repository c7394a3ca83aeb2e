//! One unit read with the filters: each object's semantic changes, what the filters hid,
//! the order it changed, and the [`Outcome`] that follows.

use crate::analysis::unit::{ObjectChange, ObjectReview, Outcome, UnitReview};
use crate::model::{ObjectId, Status, Unit};
use crate::semantic::diff;
use crate::strip::{hidden_between, Filters, Hidden};

pub(crate) fn unit(u: &Unit, filters: &Filters) -> UnitReview {
    let mut objects = Vec::new();
    let mut hidden = Hidden::default();
    for o in &u.objects {
        let base = o.base.as_ref().map(|v| filters.stripped(v));
        let head = o.head.as_ref().map(|v| filters.stripped(v));
        let (change, changes) = match (&base, &head) {
            (Some(a), Some(b)) => {
                let h = hidden_between(a, b);
                hidden += h;
                let changes = diff(&a.value, &b.value);
                if changes.is_empty() {
                    continue;
                }
                objects.push(ObjectReview {
                    object: o.id.clone(),
                    change: ObjectChange::Changed,
                    base: Some(a.value.clone()),
                    head: Some(b.value.clone()),
                    changes,
                    hidden: h,
                });
                continue;
            }
            (None, Some(_)) => (ObjectChange::Added, Vec::new()),
            (Some(_), None) => (ObjectChange::Removed, Vec::new()),
            (None, None) => continue,
        };
        objects.push(ObjectReview {
            object: o.id.clone(),
            change,
            base: base.map(|s| s.value),
            head: head.map(|s| s.value),
            changes,
            hidden: Hidden::default(),
        });
    }
    objects.sort_by(|a, b| a.object.cmp(&b.object));
    let reordered = u.order.as_ref().and_then(|o| {
        let common = |l: &[ObjectId], other: &[ObjectId]| -> Vec<String> {
            l.iter()
                .filter(|id| other.contains(id))
                .map(ToString::to_string)
                .collect()
        };
        let (a, b) = (common(&o.base, &o.head), common(&o.head, &o.base));
        (a != b).then_some((a, b))
    });
    let outcome = match u.status {
        Status::Identical => Outcome::Identical,
        Status::Added => Outcome::Added,
        Status::Removed => Outcome::Removed,
        Status::NotCompared => Outcome::NotCompared,
        // A chart bump is news on its own (the release is upgraded to another chart), even
        // when the filters hide every field it changes (a chart's version labels).
        Status::Changed if objects.is_empty() && reordered.is_none() && u.chart.is_none() => {
            Outcome::Filtered
        }
        Status::Changed => Outcome::Changed,
    };
    UnitReview {
        kind: u.kind,
        name: u.name.clone(),
        parent: u.parent.clone(),
        outcome,
        problem: u.problem.clone(),
        reordered,
        objects,
        hidden,
        chart: u.chart.clone(),
        shown: u.shown.clone(),
        renamed_from: None,
        renamed_from_parent: None,
        moved_unchanged: 0,
        moves_deleted: false,
    }
}
