//! Printing `fluxsim images`: the images each cluster runs, and what changed between two
//! revisions, as text, JSON and Markdown. A change made the same way in several clusters is
//! printed once, with the clusters.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::escape::OneLine;
use super::markdown::{md, plain_of, Code, Markdown, Text, Texts};
use super::plural;
use crate::images::{ClusterImageDiff, ClusterImages, ImageChange};

/// The image list as a table, then a summary line.
#[must_use]
pub fn images_text(clusters: &[ClusterImages]) -> String {
    let mut rows = vec![[
        "CLUSTER".to_string(),
        "KUSTOMIZATION".into(),
        "IMAGE".into(),
        "OBJECT".into(),
        "PATH".into(),
    ]];
    for c in clusters {
        for k in &c.kustomizations {
            for i in &k.images {
                rows.push([
                    OneLine(&c.cluster).to_string(),
                    OneLine(&k.kustomization).to_string(),
                    OneLine(&i.image).to_string(),
                    OneLine(&i.object).to_string(),
                    OneLine(&i.path).to_string(),
                ]);
            }
        }
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let uses = rows.len() - 1;
    let distinct: std::collections::BTreeSet<&str> =
        rows.iter().skip(1).map(|r| r[2].as_str()).collect();
    let _ = writeln!(
        out,
        "{} ({} distinct) in {}",
        plural(uses, "image reference"),
        distinct.len(),
        plural(clusters.len(), "cluster")
    );
    out
}

/// The image list as stable JSON: `{clusters: [{cluster, kustomizations: [{kustomization,
/// images: [{object, path, from, image}]}]}]}`.
#[must_use]
pub fn images_json(clusters: &[ClusterImages]) -> Value {
    json!({ "clusters": clusters })
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

/// The image diff for people: each change once, with the clusters it is made in.
#[must_use]
pub fn images_diff_text(base: &str, head: &str, diff: &[ClusterImageDiff]) -> String {
    let mut out = format!(
        "fluxsim images: base {} -> head {}\n",
        OneLine(base),
        OneLine(head)
    );
    let groups = grouped(diff);
    for (ch, clusters) in &groups {
        let _ = writeln!(
            out,
            "{} {} {} ({})\n  {}",
            OneLine(&ch.kustomization),
            OneLine(&ch.object),
            OneLine(&ch.path),
            plain_of(&Texts(clusters)),
            change_line(ch)
        );
    }
    let _ = writeln!(out, "result: {}", outcome(&groups));
    out
}

/// The image diff as stable JSON: `{base, head, changed, clusters: [{cluster, changes:
/// [{kustomization, object, path, base, head}]}]}`.
#[must_use]
pub fn images_diff_json(base: &str, head: &str, diff: &[ClusterImageDiff]) -> Value {
    json!({
        "base": base,
        "head": head,
        "changed": diff.iter().any(|c| !c.changes.is_empty()),
        "clusters": diff,
    })
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
