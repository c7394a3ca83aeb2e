//! The objects of one Kustomization in two renders, matched by id, and the unified diff of
//! their text.

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::Artifact;
use crate::flux::ObjectId;

use super::{Change, DiffOptions, ObjectDiff};

/// Object-by-object differences of two artifacts, sorted by object id: compared after
/// `opts.strip`, shown masked; and how many differ but are left out of what is shown
/// (`--skip-secrets`, `--skip-crds`).
pub(super) fn diff_objects(
    base: Option<&Artifact>,
    head: Option<&Artifact>,
    opts: &DiffOptions,
) -> (Vec<ObjectDiff>, usize) {
    use crate::artifact::ArtifactObject;
    fn index(a: Option<&Artifact>) -> BTreeMap<ObjectId, &ArtifactObject> {
        a.map(|a| a.objects.iter().map(|o| (o.id.clone(), o)).collect())
            .unwrap_or_default()
    }
    let (b, h) = (index(base), index(head));
    let ids: BTreeSet<&ObjectId> = b.keys().chain(h.keys()).collect();
    let mut out = Vec::new();
    let mut left_out = 0;
    for id in ids {
        let (old, new) = (b.get(id).copied(), h.get(id).copied());
        let change = match (old, new) {
            (None, _) => Change::Added,
            (_, None) => Change::Removed,
            (Some(o), Some(n)) if o.yaml == n.yaml => continue,
            _ => Change::Changed,
        };
        if !old
            .into_iter()
            .chain(new)
            .all(|x| opts.present.shows(&x.object))
        {
            left_out += 1;
            continue;
        }
        let label = id.to_string();
        let diff = if let (Some(o), Some(n)) = (old, new) {
            let (so, sn) = (opts.strip.apply(&o.object), opts.strip.apply(&n.object));
            let (vo, vn) = (
                so.as_ref().unwrap_or(&o.object),
                sn.as_ref().unwrap_or(&n.object),
            );
            if (so.is_some() || sn.is_some()) && vo == vn {
                // The same once the noise is dropped.
                continue;
            }
            changed_text(o, n, vo, vn, so.is_some() || sn.is_some(), &label, opts)
        } else {
            let shown = |x: Option<&ArtifactObject>| {
                x.map(|x| opts.present.object_text(x).into_owned())
                    .unwrap_or_default()
            };
            unified(&shown(old), &shown(new), &label)
        };
        let (ob, oh) = (old.map(|o| &*o.object), new.map(|n| &*n.object));
        let (base, head) = if opts.present.show_secrets {
            (ob.cloned(), oh.cloned())
        } else {
            crate::mask::mask_pair(ob, oh)
        };
        out.push(ObjectDiff {
            object: id.clone(),
            change,
            diff,
            base,
            head,
        });
    }
    (out, left_out)
}

/// The shown difference of an object present on both sides (`vo`, `vn`: the objects once
/// stripped), masked unless secrets are shown, with a note naming Secret values that the
/// masking hides.
fn changed_text(
    o: &crate::artifact::ArtifactObject,
    n: &crate::artifact::ArtifactObject,
    vo: &serde_json::Value,
    vn: &serde_json::Value,
    stripped: bool,
    label: &str,
    opts: &DiffOptions,
) -> String {
    use crate::mask;
    let show = opts.present.show_secrets;
    let mut text = if stripped {
        let print = |v: &serde_json::Value| {
            let t = crate::artifact::print_object(v);
            if show {
                t
            } else {
                mask::mask_object(&t, v).into_owned()
            }
        };
        unified(&print(vo), &print(vn), label)
    } else {
        unified(
            &opts.present.object_text(o),
            &opts.present.object_text(n),
            label,
        )
    };
    if !show {
        let hidden = mask::changed_secret_keys(vo, vn);
        if !hidden.is_empty() {
            use std::fmt::Write as _;
            let _ = writeln!(
                text,
                "# masked values changed: {} (--show-secrets shows them)",
                hidden.join(", ")
            );
        }
    }
    text
}

/// A unified diff with three lines of context, each hunk header followed by `label`.
#[must_use]
pub fn unified(old: &str, new: &str, label: &str) -> String {
    use std::fmt::Write as _;
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let _ = writeln!(out, "{} {label}", hunk.header());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            out.push(sign);
            out.push_str(change.value());
            if change.missing_newline() {
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_names_the_object_in_each_hunk_header() {
        let d = unified("a: 1\nb: 2\n", "a: 1\nb: 3\n", "ConfigMap/apps/x");
        assert_eq!(d, "@@ -1,2 +1,2 @@ ConfigMap/apps/x\n a: 1\n-b: 2\n+b: 3\n");
    }

    #[test]
    fn unified_diff_of_equal_text_is_empty() {
        assert_eq!(unified("a\n", "a\n", "x"), "");
    }
}
