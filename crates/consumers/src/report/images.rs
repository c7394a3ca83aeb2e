//! Printing `fluxsim images`: the images each cluster runs, and what changed between two
//! revisions, as text, JSON and Markdown. A change made the same way in several clusters is
//! printed once, with the clusters.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::layout::Layout;
use super::markdown::{md, plain_of, Code, Markdown, Text, Texts};
use super::plural;
use crate::images::{ClusterImageDiff, ClusterImages, ImageChange};

/// An image reference as the default text shows it: a digest cut to 12 hex digits (the
/// tag says which image; `--wide` shows the whole digest).
fn short_image(image: &str, layout: Layout) -> String {
    if layout.wide {
        return image.to_string();
    }
    match image.split_once("@sha256:") {
        Some((name, digest)) if digest.len() > 12 => format!("{name}@sha256:{}…", &digest[..12]),
        _ => image.to_string(),
    }
}

/// The image list: how many first, then per cluster and Kustomization its images, one a
/// line (80 columns: digests cut, long references shortened in the middle). `--wide`: one
/// table with the object and field of each reference.
#[must_use]
pub fn images_text(clusters: &[ClusterImages], layout: Layout) -> String {
    let uses: Vec<&str> = clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .flat_map(|k| &k.images)
        .map(|i| i.image.as_str())
        .collect();
    let distinct: std::collections::BTreeSet<&str> = uses.iter().copied().collect();
    let mut out = layout.wrap(
        "",
        &format!(
            "images: {} ({} distinct) in {}",
            plural(uses.len(), "image reference"),
            distinct.len(),
            plural(clusters.len(), "cluster")
        ),
        "  ",
    );
    if layout.wide {
        let mut rows = vec![vec![
            "CLUSTER".to_string(),
            "KUSTOMIZATION".into(),
            "IMAGE".into(),
            "OBJECT".into(),
            "PATH".into(),
        ]];
        for c in clusters {
            for k in &c.kustomizations {
                for i in &k.images {
                    rows.push(vec![
                        OneLine(&c.cluster).to_string(),
                        OneLine(&k.kustomization).to_string(),
                        OneLine(&i.image).to_string(),
                        OneLine(&i.object).to_string(),
                        OneLine(&i.path).to_string(),
                    ]);
                }
            }
        }
        out.push_str(&layout.table("", &rows, 1));
        return out;
    }
    for c in clusters {
        let _ = writeln!(out, "cluster {}", OneLine(&c.cluster));
        for k in &c.kustomizations {
            let _ = writeln!(
                out,
                "  {}",
                layout.fit(&OneLine(&k.kustomization).to_string(), 78)
            );
            let mut seen = std::collections::BTreeSet::new();
            for i in &k.images {
                // The same reference in two containers of a Kustomization: once.
                if !seen.insert(&i.image) {
                    continue;
                }
                let shown = short_image(&OneLine(&i.image).to_string(), layout);
                let _ = writeln!(out, "    {}", layout.fit(&shown, 76));
                if layout.verbose {
                    out.push_str(&layout.wrap(
                        "      ",
                        &format!("{} {}", OneLine(&i.object), OneLine(&i.path)),
                        "        ",
                    ));
                }
            }
        }
    }
    out
}

/// The image list as stable JSON: `{clusters: [{cluster, kustomizations: [{kustomization,
/// images: [{object, path, from, image}]}]}]}`.
#[must_use]
pub fn images_json(clusters: &[ClusterImages]) -> Value {
    let mut v = super::json::camel_keys(json!(clusters));
    if let Some(items) = v.as_array_mut() {
        for c in items {
            super::json::rename(c, "cluster", "name");
            super::json::each(c, "kustomizations", |k| {
                super::json::kustomization_refs(k, "kustomization");
            });
        }
    }
    super::json::document("ImagesReport", json!({ "clusters": v }))
}

/// The image list as Markdown: one table per cluster.
#[must_use]
pub fn images_markdown(clusters: &[ClusterImages]) -> String {
    let mut doc = Markdown::new();
    md!(doc, "## fluxsim images\n");
    for c in clusters {
        md!(
            doc,
            "\n### {}\n\n| Kustomization | image | object |\n|---|---|---|\n",
            Code(&c.cluster)
        );
        for k in &c.kustomizations {
            for i in &k.images {
                md!(
                    doc,
                    "| {} | {} | {} {} |\n",
                    Code(&k.kustomization),
                    Code(&i.image),
                    Code(&i.object),
                    Code(&i.path)
                );
            }
        }
    }
    doc.finish()
}

/// A change and the clusters where it is made the same way, in cluster order.
type Grouped<'a> = Vec<(&'a ImageChange, Vec<&'a str>)>;

fn grouped(diff: &[ClusterImageDiff]) -> Grouped<'_> {
    let mut groups: BTreeMap<&ImageChange, Vec<&str>> = BTreeMap::new();
    for c in diff {
        for ch in &c.changes {
            groups.entry(ch).or_default().push(&c.cluster);
        }
    }
    groups.into_iter().collect()
}

fn change_line(ch: &ImageChange) -> String {
    match (&ch.base, &ch.head) {
        (Some(b), Some(h)) => format!("~ {} -> {}", OneLine(b), OneLine(h)),
        (None, Some(h)) => format!("+ {}", OneLine(h)),
        (Some(b), None) => format!("- {}", OneLine(b)),
        (None, None) => String::new(),
    }
}

fn outcome(groups: &Grouped<'_>) -> String {
    if groups.is_empty() {
        return "no image changed".to_string();
    }
    let clusters: std::collections::BTreeSet<&str> =
        groups.iter().flat_map(|(_, c)| c.iter().copied()).collect();
    format!(
        "{} in {}",
        plural(groups.len(), "image change"),
        plural(clusters.len(), "cluster")
    )
}

/// The image diff for people: the verdict and the revisions first, then each change once,
/// with the clusters it is made in (wrapped at 80 columns unless `--wide`).
#[must_use]
pub fn images_diff_text(
    base: &str,
    head: &str,
    diff: &[ClusterImageDiff],
    layout: Layout,
) -> String {
    let groups = grouped(diff);
    let mut out = layout.wrap(
        "",
        &format!(
            "images: {} (base {} -> head {})",
            outcome(&groups),
            OneLine(base),
            OneLine(head)
        ),
        "  ",
    );
    for (ch, clusters) in &groups {
        out.push_str(&layout.wrap(
            "",
            &format!(
                "{} {} {} ({})",
                OneLine(&ch.kustomization),
                OneLine(&ch.object),
                OneLine(&ch.path),
                plain_of(&Texts(clusters)),
            ),
            "    ",
        ));
        out.push_str(&layout.wrap("  ", &change_line(ch), "    "));
    }
    let _ = writeln!(out, "result: {}", outcome(&groups));
    out
}

/// The image diff as stable JSON: `{base, head, changed, clusters: [{cluster, changes:
/// [{kustomization, object, path, base, head}]}]}`.
#[must_use]
pub fn images_diff_json(
    base: &crate::compare::Revision,
    head: &crate::compare::Revision,
    diff: &[ClusterImageDiff],
) -> Value {
    let mut clusters = super::json::camel_keys(json!(diff));
    if let Some(items) = clusters.as_array_mut() {
        for c in items {
            super::json::rename(c, "cluster", "name");
            super::json::each(c, "changes", |ch| {
                super::json::kustomization_refs(ch, "kustomization");
            });
        }
    }
    super::json::document(
        "ImagesDiffReport",
        json!({
            "base": super::json::revision(base),
            "head": super::json::revision(head),
            "changed": diff.iter().any(|c| !c.changes.is_empty()),
            "clusters": clusters,
        }),
    )
}

/// The image diff as a pull-request section.
#[must_use]
pub fn images_diff_markdown(base: &str, head: &str, diff: &[ClusterImageDiff]) -> String {
    let groups = grouped(diff);
    let mut doc = Markdown::new();
    md!(
        doc,
        "## fluxsim images: {} → {}: {}\n",
        Code(base),
        Code(head),
        Text(outcome(&groups))
    );
    if groups.is_empty() {
        return doc.finish();
    }
    md!(doc, "\n| image | where | clusters |\n|---|---|---|\n");
    for (ch, clusters) in &groups {
        md!(doc, "| ");
        match (&ch.base, &ch.head) {
            (Some(b), Some(h)) => md!(doc, "{} → {}", Code(b), Code(h)),
            (None, Some(h)) => md!(doc, "added {}", Code(h)),
            (Some(b), None) => md!(doc, "removed {}", Code(b)),
            (None, None) => {}
        }
        md!(
            doc,
            " | {} {} {} | {} |\n",
            Code(&ch.kustomization),
            Code(&ch.object),
            Code(&ch.path),
            Texts(clusters)
        );
    }
    doc.finish()
}
