//! The summary that opens the first comment: per cluster, how many Kustomizations and
//! HelmReleases were added, changed, removed or not compared; what failed; what prune
//! deletes; the image bumps; the hazards; what the filters hid. Written at a level of detail
//! that fits the comment ([`Level`]); what a shorter level leaves out of a list is in the
//! details ([`overflow`]).

use std::fmt::Write as _;

use crate::analysis::{image_groups, Analysis, ClusterReview, Counts};
use crate::escape::{md_cell, md_code, md_message, md_text};
use crate::model::{split_image, ImageBump, Presence, UnitKind};

use super::pack::{render, Block};
use super::Flavor;

/// How much of the lists the summary holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Level {
    /// Items listed per list (failures, deletions, bumps, hazards); the rest counted.
    pub(crate) items: usize,
    /// Rows of the per-cluster table; the rest counted.
    pub(crate) rows: usize,
}

/// From the fullest to the shortest.
pub(crate) const LEVELS: &[Level] = &[
    Level {
        items: usize::MAX,
        rows: usize::MAX,
    },
    Level {
        items: 20,
        rows: usize::MAX,
    },
    Level {
        items: 5,
        rows: 200,
    },
    Level { items: 0, rows: 50 },
    Level { items: 0, rows: 10 },
    Level { items: 0, rows: 0 },
];

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `3 changed, 1 added`: the non-zero counts of a kind.
fn counts_text(c: &Counts) -> String {
    let parts: Vec<String> = [
        (c.changed, "changed"),
        (c.added, "added"),
        (c.removed, "removed"),
        (c.renamed, "renamed"),
        (c.not_compared, "not compared"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    if parts.is_empty() {
        "no change".to_string()
    } else {
        parts.join(", ")
    }
}

fn cell(n: usize) -> String {
    if n == 0 {
        "·".to_string()
    } else {
        n.to_string()
    }
}

fn cluster_name(c: &ClusterReview) -> String {
    let mut s = md_code(&c.name);
    match c.presence {
        Presence::Both => {}
        Presence::Added => s.push_str(" (added in head)"),
        Presence::Removed => s.push_str(" (removed in head)"),
    }
    s
}

/// The first line of a message, cut: a summary line stays a line.
fn first_line(s: &str) -> String {
    const MAX: usize = 200;
    let line = s.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(MAX).collect();
    if line.chars().count() > MAX || s.lines().nth(1).is_some() {
        out.push_str(" …");
    }
    out
}

/// Each list of the summary: its heading and its items as Markdown lines.
pub(crate) struct Lists {
    pub(crate) failures: Vec<String>,
    pub(crate) deletions: Vec<String>,
    pub(crate) images: Vec<String>,
    pub(crate) hazards: Vec<String>,
}

fn image_line(
    cluster: &str,
    group: &((Option<String>, Option<String>), Vec<&ImageBump>),
) -> String {
    let ((before, after), uses) = group;
    let change = match (before, after) {
        (Some(a), Some(b)) => {
            let ((ra, ta), (rb, tb)) = (split_image(a), split_image(b));
            if ra == rb && !ta.is_empty() && !tb.is_empty() {
                format!("{}: {} → {}", md_code(ra), md_code(ta), md_code(tb))
            } else {
                format!("{} → {}", md_code(a), md_code(b))
            }
        }
        (None, Some(b)) => format!("{} added", md_code(b)),
        (Some(a), None) => format!("{} removed", md_code(a)),
        (None, None) => String::from("(no image)"),
    };
    let first = uses[0];
    let mut line = format!(
        "- {change} in {} {} ({})",
        md_code(cluster),
        md_code(&first.object.to_string()),
        md_code(&first.unit)
    );
    if uses.len() > 1 {
        let _ = write!(
            line,
            " and {} more",
            plural(uses.len() - 1, "object", "objects")
        );
    }
    line.push('\n');
    line
}

/// Every list item of the summary, in full.
pub(crate) fn lists(a: &Analysis) -> Lists {
    let mut l = Lists {
        failures: Vec::new(),
        deletions: Vec::new(),
        images: Vec::new(),
        hazards: Vec::new(),
    };
    // What head broke first, then what failed already (each in cluster order).
    let mut failures: Vec<_> = a
        .clusters
        .iter()
        .flat_map(|c| c.failures.iter().map(move |f| (c, f)))
        .collect();
    failures.sort_by_key(|(_, f)| !f.is_new());
    for (c, f) in failures {
        let mut line = format!(
            "- {} failed in {} ({}): {}",
            md_code(&f.unit),
            md_text(&f.side),
            md_code(&c.name),
            md_message(&first_line(&f.error))
        );
        if f.below > 0 {
            let _ = write!(
                line,
                "; {} it applies {} not compared",
                plural(f.below, "Kustomization", "Kustomizations"),
                if f.below == 1 { "is" } else { "are" }
            );
        }
        line.push('\n');
        l.failures.push(line);
    }
    for c in &a.clusters {
        for d in &c.prune_deletions {
            l.deletions.push(format!(
                "- {} {} (pruned by {})\n",
                md_code(&c.name),
                md_code(&d.object.to_string()),
                md_code(&d.unit)
            ));
        }
        for g in image_groups(&c.image_bumps) {
            l.images.push(image_line(&c.name, &g));
        }
        for h in &c.hazards {
            l.hazards
                .push(format!("- {}: {}\n", md_code(&c.name), md_message(h)));
        }
    }
    l
}

/// Lists longer than this are folded in the summary (still whole: a click away).
const FOLD_AT: usize = 10;

fn push_list(out: &mut String, flavor: Flavor, title: &str, items: &[String], cap: usize) {
    if items.is_empty() {
        return;
    }
    let mut lines: Vec<String> = items.iter().take(cap).cloned().collect();
    if items.len() > cap {
        lines.push(format!(
            "- … and {} more, listed after the details\n",
            items.len() - lines.len()
        ));
    }
    lines.push("\n".to_string());
    if lines.len() > FOLD_AT + 1 {
        let fold = Block::Fold {
            summary: format!("<strong>{title}</strong> ({})", items.len()),
            open: false,
            children: vec![Block::Lines(lines)],
        };
        render(flavor, &fold, out);
    } else {
        let _ = write!(out, "**{title}** ({})\n\n", items.len());
        for l in &lines {
            out.push_str(l);
        }
    }
}

/// The report's title line: the verdict's mark, the revisions, the verdict.
pub(crate) fn title(a: &Analysis) -> String {
    let mark = match a.verdict.as_ref().and_then(|v| v.passed) {
        Some(true) => "✅ ",
        Some(false) => "❌ ",
        None => "",
    };
    let verdict = a
        .verdict
        .as_ref()
        .map(|v| format!(": {}", md_message(&first_line(&v.text))))
        .unwrap_or_default();
    format!(
        "## {mark}{}: {} → {}{verdict}\n\n",
        md_text(&a.title),
        md_code(&a.base),
        md_code(&a.head)
    )
}

/// The caller's sentences, one paragraph each.
fn notes(a: &Analysis, out: &mut String) {
    for n in &a.notes {
        let _ = write!(out, "{}\n\n", md_message(&n.replace('\n', " ")));
    }
}

/// The totals: one line per kind, and the counts of the lists.
fn totals(a: &Analysis, l: &Lists, out: &mut String) {
    let changed = a.clusters.iter().filter(|c| c.changed()).count();
    let (k, h) = (
        a.totals(UnitKind::Kustomization),
        a.totals(UnitKind::HelmRelease),
    );
    if a.changed() {
        let helm = if a.has(UnitKind::HelmRelease) {
            format!(" · **HelmReleases**: {}", counts_text(&h))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "**Kustomizations**: {}{helm} · in {} of {}\n\n",
            counts_text(&k),
            changed,
            plural(a.clusters.len(), "cluster", "clusters")
        );
    } else {
        let _ = write!(
            out,
            "**No change**: every Kustomization{} renders the same in {}.\n\n",
            if h.identical + h.filtered > 0 {
                " and HelmRelease"
            } else {
                ""
            },
            plural(a.clusters.len(), "cluster", "clusters")
        );
    }
    let mut facts = Vec::new();
    if !l.failures.is_empty() {
        facts.push(format!(
            "**{}**",
            plural(l.failures.len(), "failure", "failures")
        ));
    }
    let deletions: usize = a.clusters.iter().map(|c| c.prune_deletions.len()).sum();
    if deletions > 0 {
        facts.push(format!(
            "**{}** deleted by prune",
            plural(deletions, "object", "objects")
        ));
    }
    let bumps: usize = a.clusters.iter().map(|c| c.image_bumps.len()).sum();
    if bumps > 0 {
        facts.push(format!(
            "**{}**",
            plural(bumps, "image change", "image changes")
        ));
    }
    if !l.hazards.is_empty() {
        facts.push(format!(
            "**{}**",
            plural(l.hazards.len(), "hazard", "hazards")
        ));
    }
    if !facts.is_empty() {
        out.push_str(&facts.join(" · "));
        out.push_str("\n\n");
    }
}

fn table(a: &Analysis, rows: usize, out: &mut String) {
    let changed: Vec<&ClusterReview> = a.clusters.iter().filter(|c| c.changed()).collect();
    if changed.is_empty() || rows == 0 {
        if !changed.is_empty() {
            let _ = write!(
                out,
                "{} changed: listed after the details.\n\n",
                plural(changed.len(), "cluster", "clusters")
            );
        }
        return;
    }
    // A `renamed` column only where something was renamed: other tables stay as they were.
    let renamed_column =
        a.totals(UnitKind::Kustomization).renamed + a.totals(UnitKind::HelmRelease).renamed > 0;
    if renamed_column {
        out.push_str("| cluster | | added | changed | removed | renamed | not compared |\n");
        out.push_str("|---|---|--:|--:|--:|--:|--:|\n");
    } else {
        out.push_str("| cluster | | added | changed | removed | not compared |\n");
        out.push_str("|---|---|--:|--:|--:|--:|\n");
    }
    for c in changed.iter().take(rows) {
        for kind in [UnitKind::Kustomization, UnitKind::HelmRelease] {
            let n = c.counts(kind);
            if kind == UnitKind::HelmRelease && !n.any() {
                continue;
            }
            let renamed_cell = if renamed_column {
                format!(" {} |", cell(n.renamed))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |{renamed_cell} {} |",
                md_cell(&cluster_name(c)),
                kind.plural(),
                cell(n.added),
                cell(n.changed),
                cell(n.removed),
                cell(n.not_compared)
            );
        }
    }
    out.push('\n');
    if changed.len() > rows {
        let _ = write!(
            out,
            "… and {} more changed: listed after the details.\n\n",
            plural(changed.len() - rows, "cluster", "clusters")
        );
    }
    for (title, filtered) in [
        ("Unchanged", false),
        ("Changed only in what the filters hide", true),
    ] {
        let same: Vec<String> = a
            .clusters
            .iter()
            .filter(|c| !c.changed() && c.filtered_only() == filtered)
            .map(|c| md_code(&c.name))
            .collect();
        if !same.is_empty() {
            let listed = same.iter().take(rows.min(30)).cloned().collect::<Vec<_>>();
            let _ = write!(out, "{title}: {}", listed.join(", "));
            if same.len() > listed.len() {
                let _ = write!(out, " and {} more", same.len() - listed.len());
            }
            out.push_str(".\n\n");
        }
    }
}

fn hidden_note(a: &Analysis, out: &mut String) {
    let h = a.hidden();
    let filtered: usize = [UnitKind::Kustomization, UnitKind::HelmRelease]
        .iter()
        .map(|k| a.totals(*k).filtered)
        .sum();
    let mut parts = Vec::new();
    if h.default > 0 {
        parts.push(format!(
            "{} hidden by the default filters (`--no-default-strip` shows them)",
            plural(h.default, "change", "changes")
        ));
    }
    if h.user > 0 {
        parts.push(format!(
            "{} hidden by `--strip`",
            plural(h.user, "change", "changes")
        ));
    }
    if parts.is_empty() {
        return;
    }
    let _ = write!(out, "_{}", parts.join("; "));
    if filtered > 0 {
        let _ = write!(
            out,
            "; {} changed in nothing else",
            plural(
                filtered,
                "Kustomization or HelmRelease",
                "Kustomizations or HelmReleases"
            )
        );
    }
    out.push_str("._\n\n");
}

/// The summary at `level`.
pub(crate) fn summary(a: &Analysis, flavor: Flavor, level: Level, link: Option<&str>) -> String {
    let l = lists(a);
    let mut out = title(a);
    totals(a, &l, &mut out);
    push_list(
        &mut out,
        flavor,
        "❌ Failed to render",
        &l.failures,
        level.items,
    );
    table(a, level.rows, &mut out);
    push_list(
        &mut out,
        flavor,
        "Deleted by prune",
        &l.deletions,
        level.items,
    );
    push_list(&mut out, flavor, "Image changes", &l.images, level.items);
    push_list(&mut out, flavor, "⚠️ Hazards", &l.hazards, level.items);
    notes(a, &mut out);
    hidden_note(a, &mut out);
    if let Some(link) = link {
        out.push_str(link);
    }
    out
}

/// The caller's sections (`prove`'s canaries), folded, after the details.
pub(crate) fn sections(a: &Analysis) -> Vec<Block> {
    a.sections
        .iter()
        .map(|s| Block::Fold {
            summary: format!(
                "{} ({})",
                crate::escape::html(&s.title, true),
                s.items.len()
            ),
            open: false,
            children: vec![Block::Lines(
                s.items
                    .iter()
                    .map(|i| format!("- {}\n", md_message(&first_line(i))))
                    .chain(std::iter::once("\n".to_string()))
                    .collect(),
            )],
        })
        .collect()
}

/// What the summary at `level` left out of its lists and table: the same, in full, as a
/// section after the details.
pub(crate) fn overflow(a: &Analysis, level: Level) -> Option<Block> {
    let l = lists(a);
    let mut children = Vec::new();
    let mut add = |title: &str, items: Vec<String>, cap: usize| {
        if items.len() > cap {
            let mut lines = vec![format!("**{title}** ({})\n\n", items.len())];
            lines.extend(items);
            lines.push("\n".to_string());
            children.push(Block::Lines(lines));
        }
    };
    add("❌ Failed to render", l.failures, level.items);
    let changed: Vec<&ClusterReview> = a.clusters.iter().filter(|c| c.changed()).collect();
    {
        let lines: Vec<String> = changed
            .iter()
            .map(|c| {
                format!(
                    "- {}: Kustomizations {}; HelmReleases {}\n",
                    cluster_name(c),
                    counts_text(&c.kustomizations),
                    counts_text(&c.helm_releases)
                )
            })
            .collect();
        add("Changed clusters", lines, level.rows);
    }
    add("Deleted by prune", l.deletions, level.items);
    add("Image changes", l.images, level.items);
    add("⚠️ Hazards", l.hazards, level.items);
    (!children.is_empty()).then(|| Block::Section {
        heading: "### The summary's lists in full".to_string(),
        children,
    })
}
