//! The details after the summary: per cluster, each Kustomization and HelmRelease with
//! something to show, folded, with its objects' changes (a `diff` block of paths and values)
//! and its added and removed objects (one line each, their content folded).

use std::fmt::Write as _;

use crate::analysis::{
    Analysis, ClusterReview, ObjectChange, ObjectReview, Outcome, Shown, UnitReview,
};
use crate::escape::{html_code, html_text, md_code, md_message, md_text};
use crate::lines;
use crate::model::UnitKind;

use super::pack::Block;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `2 objects changed, 1 added`: what a unit's fold says of its objects.
fn objects_text(u: &UnitReview) -> String {
    let (added, changed, removed) = u.object_counts();
    let mut parts = Vec::new();
    if changed > 0 {
        parts.push(format!("{} changed", plural(changed, "object", "objects")));
    }
    if added > 0 {
        parts.push(format!("{} added", plural(added, "object", "objects")));
    }
    if removed > 0 {
        parts.push(format!("{} removed", plural(removed, "object", "objects")));
    }
    if u.reordered.is_some() {
        parts.push("order changed".to_string());
    }
    parts.join(", ")
}

fn sign(c: ObjectChange) -> &'static str {
    match c {
        ObjectChange::Added => "➕",
        ObjectChange::Changed => "✏️",
        ObjectChange::Removed => "➖",
    }
}

fn object(o: &ObjectReview) -> Vec<Block> {
    match o.change {
        ObjectChange::Changed => {
            let mut head = format!(
                "{} {} changed",
                sign(o.change),
                md_code(&o.object.to_string())
            );
            if o.hidden.total() > 0 {
                let _ = write!(
                    head,
                    " ({} hidden by the filters)",
                    plural(o.hidden.total(), "change", "changes")
                );
            }
            head.push_str(":\n\n");
            vec![
                Block::Lines(vec![head]),
                Block::Code {
                    info: "diff",
                    lines: lines::changes(&o.changes),
                },
            ]
        }
        ObjectChange::Added | ObjectChange::Removed => {
            let v = o.head.as_ref().or(o.base.as_ref());
            let content = v.map(lines::content).unwrap_or_default();
            vec![Block::Fold {
                summary: format!(
                    "{} {} {} ({})",
                    sign(o.change),
                    html_code(&o.object.to_string()),
                    o.change.as_str(),
                    plural(content.len(), "line", "lines")
                ),
                open: false,
                children: vec![Block::Code {
                    info: "yaml",
                    lines: content,
                }],
            }]
        }
    }
}

fn unit(u: &UnitReview, open: bool) -> Block {
    let (kind, name, from) = u.title();
    let from = from
        .map(|f| format!(" (from {})", html_code(f)))
        .unwrap_or_default();
    let mut summary = format!("{kind} {}{from}: {}", html_code(name), u.outcome.as_str());
    let objects = if u.renamed_from.is_some() {
        // The rename's line, whole, comes first in the fold.
        objects_text(u)
    } else {
        u.chart_line()
            .map_or_else(|| objects_text(u), |l| html_text(&l))
    };
    if !objects.is_empty() {
        summary.push_str(" — ");
        summary.push_str(&objects);
    }
    let mut children = Vec::new();
    let mut notes = Vec::new();
    if let Some(line) = u.rename_line() {
        notes.push(format!("{}\n\n", md_message(&line)));
    }
    if let Some(parent) = &u.parent {
        notes.push(format!("Applied by {}.\n\n", md_code(parent)));
    }
    if let Some(p) = &u.problem {
        notes.push(format!("**Not compared**: {}\n\n", md_message(p)));
    }
    if u.hidden.total() > 0 {
        notes.push(format!(
            "_{} hidden by the filters._\n\n",
            plural(u.hidden.total(), "change", "changes")
        ));
    }
    if !notes.is_empty() {
        children.push(Block::Lines(notes));
    }
    if let Some((before, after)) = &u.reordered {
        children.push(Block::Lines(vec![
            "The same objects in another order (order changed):\n\n".to_string(),
        ]));
        let mut l = vec!["before:".to_string()];
        l.extend(before.iter().map(|s| format!("  {s}")));
        l.push("after:".to_string());
        l.extend(after.iter().map(|s| format!("  {s}")));
        children.push(Block::Code {
            info: "text",
            lines: l.into_iter().map(|s| lines::cut(&s)).collect(),
        });
    }
    for o in &u.objects {
        children.extend(object(o));
    }
    if u.outcome == Outcome::NotCompared && u.problem.is_none() {
        children.push(Block::Lines(vec![
            "**Not compared**: not rendered in base or head.\n\n".to_string(),
        ]));
    }
    Block::Fold {
        summary,
        open,
        children,
    }
}

/// Units not compared for the same reason, in one fold: the reason once, then their names.
fn not_compared(kind: UnitKind, problem: &str, names: &[&str]) -> Block {
    let many = format!("{}s", kind.as_str());
    // A piece per name, so that a long list can be cut between names to fit a comment.
    let mut lines = vec![format!("**Not compared**: {}\n\n", md_message(problem))];
    for (i, n) in names.iter().enumerate() {
        let end = if i + 1 == names.len() { "\n\n" } else { ", " };
        lines.push(format!("{}{end}", md_code(n)));
    }
    Block::Fold {
        summary: format!(
            "{}: not compared",
            plural(names.len(), kind.as_str(), &many)
        ),
        open: false,
        children: vec![Block::Lines(lines)],
    }
}

fn failures(c: &ClusterReview) -> Option<Block> {
    if c.failures.is_empty() {
        return None;
    }
    let mut children = Vec::new();
    for f in &c.failures {
        children.push(Block::Lines(vec![format!(
            "❌ {} failed in {}:\n\n",
            md_code(&f.unit),
            md_text(&f.side)
        )]));
        children.push(Block::Code {
            info: "text",
            lines: lines::error_lines(&f.error),
        });
    }
    Some(Block::Fold {
        summary: format!("❌ {}", plural(c.failures.len(), "failure", "failures")),
        open: false,
        children,
    })
}

/// The details of every cluster with something to show. Folds are open when the whole
/// report shows few units (a small change reads without a click).
pub(crate) fn details(a: &Analysis) -> Vec<Block> {
    let shown = a.shown_units().count();
    let open = shown <= 3;
    let mut out = Vec::new();
    for c in &a.clusters {
        let mut children: Vec<Block> = failures(c).into_iter().collect();
        for s in c.shown() {
            children.push(match s {
                Shown::One(u) => unit(u, open),
                Shown::NotCompared {
                    kind,
                    problem,
                    names,
                } => not_compared(kind, problem, &names),
            });
        }
        let filtered: Vec<String> = c
            .units
            .iter()
            .filter(|u| u.outcome == Outcome::Filtered)
            .map(|u| format!("{} {}", u.kind.as_str(), md_code(&u.name)))
            .collect();
        if !filtered.is_empty() {
            children.push(Block::Lines(vec![format!(
                "Changed only in what the filters hide: {}.\n\n",
                filtered.join(", ")
            )]));
        }
        if children.is_empty() {
            continue;
        }
        out.push(Block::Section {
            heading: format!("### Cluster {}", md_code(&c.name)),
            children,
        });
    }
    out
}
