//! Image bumps grouped by what they change.

use std::collections::BTreeMap;

use crate::model::ImageBump;

/// Image bumps that change the same image the same way: (before, after) and the bumps.
pub type ImageGroup<'a> = ((Option<String>, Option<String>), Vec<&'a ImageBump>);

/// Image bumps grouped by what they change: (before, after) → the objects, in order.
#[must_use]
pub fn image_groups(bumps: &[ImageBump]) -> Vec<ImageGroup<'_>> {
    let mut groups: BTreeMap<(Option<String>, Option<String>), Vec<&ImageBump>> = BTreeMap::new();
    for b in bumps {
        groups
            .entry((b.base.clone(), b.head.clone()))
            .or_default()
            .push(b);
    }
    groups.into_iter().collect()
}
