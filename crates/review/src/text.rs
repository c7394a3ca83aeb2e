//! The report for a terminal: the summary, then each changed object's paths and values, in
//! lines that fit 80 columns where the repository's names let them. Lines start with `+`,
//! `-` or `~` where fluxsim's `--color` colours them; names are on one line (controls shown
//! as escapes), values as the terminal shows them ([`crate::escape::terminal`]).

use std::fmt::Write as _;

use crate::analysis::{image_groups, Analysis, Counts, ObjectChange, Outcome, Shown, UnitReview};
use crate::escape::{one_line, terminal};
use crate::lines;
use crate::model::{split_image, Presence, UnitKind};

/// Added and removed objects of at most this many lines are printed whole; longer ones as
/// one line (the HTML and JSON reports hold them).
const WHOLE_LINES: usize = 40;

/// The width prose is wrapped to (values and paths are never wrapped: they are copied).
const WIDTH: usize = 80;

/// `text` (on one line) wrapped at spaces to [`WIDTH`] columns, the first line after
/// `first`, the others after `indent`.
fn wrap(first: &str, indent: &str, text: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let width = line.chars().count();
        if !empty && width + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn counts(c: &Counts) -> String {
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
        "no change".into()
    } else {
        parts.join(", ")
    }
}

fn summary(a: &Analysis, out: &mut String) {
    let _ = writeln!(
        out,
        "{}: {} -> {}",
        one_line(&a.title),
        one_line(&a.base),
        one_line(&a.head)
    );
    if let Some(v) = &a.verdict {
        let mark = match v.passed {
            Some(true) => "PASS: ",
            Some(false) => "FAIL: ",
            None => "",
        };
        out.push_str(&wrap(mark, "  ", &one_line(&v.text)));
    }
    // A verdict says it in one line; the per-cluster lines below have the counts.
    if a.verdict.is_none() {
        let changed = a.clusters.iter().filter(|c| c.changed()).count();
        let _ = writeln!(
            out,
            "Kustomizations: {}",
            counts(&a.totals(UnitKind::Kustomization))
        );
        if a.has(UnitKind::HelmRelease) {
            let _ = writeln!(
                out,
                "HelmReleases: {}",
                counts(&a.totals(UnitKind::HelmRelease))
            );
        }
        let _ = writeln!(
            out,
            "{changed} of {} changed",
            plural(a.clusters.len(), "cluster", "clusters")
        );
    }
    // What head broke first, then what failed already (each in cluster order).
    let failures = [true, false].into_iter().flat_map(|new| {
        a.clusters.iter().flat_map(move |c| {
            c.failures
                .iter()
                .filter(move |f| f.is_new() == new)
                .map(move |f| (c, f))
        })
    });
    for (c, f) in failures {
        let _ = writeln!(
            out,
            "FAILED: {} in {} ({})",
            one_line(&f.unit),
            one_line(&f.side),
            one_line(&c.name)
        );
        for l in f.error.lines() {
            out.push_str(&wrap("  ", "    ", &one_line(l)));
        }
    }
    out.push('\n');
    let width = a
        .clusters
        .iter()
        .map(|c| one_line(&c.name).chars().count())
        .max()
        .unwrap_or(0)
        .min(24);
    for c in a.clusters.iter().filter(|c| c.changed()) {
        let name = one_line(&c.name);
        let presence = match c.presence {
            Presence::Both => "",
            Presence::Added => " (added in head)",
            Presence::Removed => " (removed in head)",
        };
        let _ = writeln!(
            out,
            "{name:<width$}  Kustomizations: {}{presence}",
            counts(&c.kustomizations)
        );
        if c.helm_releases.any() {
            let _ = writeln!(
                out,
                "{:<width$}  HelmReleases: {}",
                "",
                counts(&c.helm_releases)
            );
        }
    }
    for (title, filtered) in [
        ("unchanged", false),
        ("changed only in filtered fields", true),
    ] {
        let names: Vec<String> = a
            .clusters
            .iter()
            .filter(|c| !c.changed() && c.filtered_only() == filtered)
            .map(|c| one_line(&c.name).into_owned())
            .collect();
        if !names.is_empty() {
            out.push_str(&wrap(&format!("{title}: "), "  ", &names.join(", ")));
        }
    }
    lists(a, out);
}

/// `repo: 1.0 -> 1.1`; before and after on their own lines when that is too long.
fn image_change(before: Option<&str>, after: Option<&str>) -> String {
    match (before, after) {
        (Some(old), Some(new)) => {
            let ((old_repo, old_tag), (new_repo, new_tag)) = (split_image(old), split_image(new));
            let (repo, from, to) =
                if old_repo == new_repo && !old_tag.is_empty() && !new_tag.is_empty() {
                    (Some(old_repo), old_tag, new_tag)
                } else {
                    (None, old, new)
                };
            let line = match repo {
                Some(r) => format!("{}: {} -> {}", one_line(r), one_line(from), one_line(to)),
                None => format!("{} -> {}", one_line(from), one_line(to)),
            };
            if line.chars().count() + 4 > WIDTH {
                format!(
                    "{}\n      - {}\n      + {}",
                    repo.map_or_else(|| "image".into(), one_line),
                    one_line(from),
                    one_line(to)
                )
            } else {
                line
            }
        }
        (None, Some(new)) => one_line(new).into_owned(),
        (Some(old), None) => one_line(old).into_owned(),
        (None, None) => String::new(),
    }
}

fn lists(a: &Analysis, out: &mut String) {
    let deletions: Vec<String> = a
        .clusters
        .iter()
        .flat_map(|c| {
            c.prune_deletions.iter().map(move |d| {
                format!(
                    "  - {}: {} (pruned by {})",
                    one_line(&c.name),
                    one_line(&d.object.to_string()),
                    one_line(&d.unit)
                )
            })
        })
        .collect();
    let images: Vec<String> = a
        .clusters
        .iter()
        .flat_map(|c| {
            image_groups(&c.image_bumps)
                .into_iter()
                .map(move |((before, after), uses)| {
                    let change = image_change(before.as_deref(), after.as_deref());
                    // The notation of `fluxsim images --diff`: `~` changed, `+` added, `-`
                    // removed.
                    let sign = match (before, after) {
                        (Some(_), Some(_)) => '~',
                        (None, _) => '+',
                        (Some(_), None) => '-',
                    };
                    let more = if uses.len() > 1 {
                        format!(" and {} more", uses.len() - 1)
                    } else {
                        String::new()
                    };
                    let place = format!(
                        "{}: {}{more}",
                        one_line(&c.name),
                        one_line(&uses[0].object.to_string())
                    );
                    format!(
                        "  {sign} {change}\n{}",
                        wrap("      in ", "        ", &place).trim_end()
                    )
                })
        })
        .collect();
    let hazards: Vec<String> = a
        .clusters
        .iter()
        .flat_map(|c| {
            c.hazards.iter().map(move |h| {
                let text = format!("{}: {}", one_line(&c.name), one_line(h));
                wrap("  ! ", "    ", &text).trim_end().to_string()
            })
        })
        .collect();
    for (title, items) in [
        ("deleted by prune", deletions),
        ("image changes", images),
        ("hazards", hazards),
    ] {
        if !items.is_empty() {
            let _ = writeln!(out, "\n{title} ({}):", items.len());
            for i in items {
                let _ = writeln!(out, "{i}");
            }
        }
    }
    if !a.notes.is_empty() {
        out.push('\n');
        for n in &a.notes {
            out.push_str(&wrap("", "  ", &one_line(n)));
        }
    }
    let h = a.hidden();
    if h.total() > 0 {
        out.push('\n');
        if h.default > 0 {
            let _ = writeln!(
                out,
                "{} hidden by the default filters (--no-default-strip shows them)",
                plural(h.default, "change", "changes")
            );
        }
        if h.user > 0 {
            let _ = writeln!(
                out,
                "{} hidden by --strip",
                plural(h.user, "change", "changes")
            );
        }
    }
}

fn unit(u: &UnitReview, out: &mut String) {
    let (added, changed, removed) = u.object_counts();
    let mut what = Vec::new();
    for (n, w) in [(changed, "changed"), (added, "added"), (removed, "removed")] {
        if n > 0 {
            what.push(format!("{} {w}", plural(n, "object", "objects")));
        }
    }
    if u.reordered.is_some() {
        what.push("order changed".into());
    }
    let (kind, name, from) = u.title();
    let from = from
        .map(|f| format!(" (from {})", one_line(f)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n-- {kind} {}{from}: {}",
        one_line(name),
        u.outcome.as_str()
    );
    if let Some(line) = u.rename_line() {
        out.push_str(&wrap("   ", "     ", &one_line(&line)));
    } else if let Some(line) = u.chart_line() {
        let _ = writeln!(out, "   {}", one_line(&line));
    } else if !what.is_empty() {
        let _ = writeln!(out, "   {}", what.join(", "));
    }
    if let Some(p) = &u.problem {
        out.push_str(&wrap("  ", "     ", &one_line(p)));
    }
    if let Some((before, after)) = &u.reordered {
        let _ = writeln!(out, "   objects in another order:");
        let _ = writeln!(out, "     before: {}", one_line(&before.join(", ")));
        let _ = writeln!(out, "     after:  {}", one_line(&after.join(", ")));
    }
    for o in &u.objects {
        let id = one_line(&o.object.to_string()).into_owned();
        match o.change {
            ObjectChange::Changed => {
                let _ = writeln!(out, "~ {id}");
                for l in lines::changes(&o.changes) {
                    let _ = writeln!(out, "{}", terminal(&l));
                }
            }
            ObjectChange::Added | ObjectChange::Removed => {
                let sign = if o.change == ObjectChange::Added {
                    '+'
                } else {
                    '-'
                };
                let content = o
                    .head
                    .as_ref()
                    .or(o.base.as_ref())
                    .map(lines::content)
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{sign} {id} ({}, {})",
                    o.change.as_str(),
                    plural(content.len(), "line", "lines")
                );
                if content.len() <= WHOLE_LINES {
                    for l in content {
                        let _ = writeln!(out, "{sign}   {}", terminal(&l));
                    }
                }
            }
        }
    }
}

/// What a unit shows, as one string: two units with the same are printed once.
fn signature(u: &UnitReview) -> String {
    let objects: Vec<_> = u
        .objects
        .iter()
        .map(|o| {
            // A changed object shows its changes; an added or removed one its content.
            let content = (o.change != ObjectChange::Changed).then_some((&o.base, &o.head));
            (&o.object, o.change, &o.changes, content)
        })
        .collect();
    serde_json::to_string(&(
        u.kind,
        &u.name,
        &u.parent,
        u.outcome,
        &u.problem,
        &u.reordered,
        &u.renamed_from,
        u.moved_unchanged,
        objects,
    ))
    .unwrap_or_default()
}

/// The whole report as text: the summary, then each cluster's changes (a change made the same
/// way in several clusters is printed in the first, and named in the others).
#[must_use]
pub fn report(a: &Analysis) -> String {
    let mut out = String::new();
    summary(a, &mut out);
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for c in &a.clusters {
        let shown = c.shown();
        if shown.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n== cluster {}", one_line(&c.name));
        for s in shown {
            let u = match s {
                Shown::One(u) => u,
                Shown::NotCompared {
                    kind,
                    problem,
                    names,
                } => {
                    out.push('\n');
                    out.push_str(&wrap(
                        "-- ",
                        "   ",
                        &format!(
                            "{} not compared: {}",
                            plural(names.len(), kind.as_str(), &format!("{}s", kind.as_str())),
                            one_line(problem)
                        ),
                    ));
                    let names: Vec<String> =
                        names.iter().map(|n| one_line(n).into_owned()).collect();
                    out.push_str(&wrap("   ", "   ", &names.join(", ")));
                    continue;
                }
            };
            // The same change in an earlier cluster (a shared base changed): said once.
            let key = signature(u);
            if let Some(first) = seen.get(&key) {
                out.push('\n');
                out.push_str(&wrap(
                    "-- ",
                    "   ",
                    &format!(
                        "{} {}: {} (the same as in {}, above)",
                        u.kind.as_str(),
                        one_line(&u.name),
                        u.outcome.as_str(),
                        one_line(first)
                    ),
                ));
                continue;
            }
            seen.insert(key, c.name.clone());
            unit(u, &mut out);
        }
        let filtered = c
            .units
            .iter()
            .filter(|u| u.outcome == Outcome::Filtered)
            .count();
        if filtered > 0 {
            let _ = writeln!(
                out,
                "\n({} changed only in what the filters hide)",
                plural(
                    filtered,
                    "Kustomization or HelmRelease",
                    "Kustomizations or HelmReleases"
                )
            );
        }
    }
    for s in &a.sections {
        let _ = writeln!(out, "\n{} ({}):", one_line(&s.title), s.items.len());
        for i in &s.items {
            out.push_str(&wrap("  - ", "    ", &one_line(i)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::model::{Cluster, Object, ObjectId, Review, Unit};
    use crate::strip::Filters;
    use serde_json::json;

    #[test]
    fn a_change_made_the_same_way_in_two_clusters_is_printed_once() {
        let cluster = |name: &str, replicas: (u64, u64), cluster_var: &str| {
            let object = |n: u64| {
                json!({"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "web", "namespace": "apps",
                                    "annotations": {"cluster": cluster_var}},
                       "spec": {"replicas": n}})
            };
            let (a, b) = (object(replicas.0), object(replicas.1));
            Cluster {
                name: name.into(),
                units: vec![Unit {
                    name: "flux-system/apps".into(),
                    objects: vec![Object {
                        id: ObjectId::of(&a),
                        base: Some(a),
                        head: Some(b),
                    }],
                    ..Unit::default()
                }],
                ..Cluster::default()
            }
        };
        let review = Review {
            base: "main".into(),
            head: "pr".into(),
            // dev and prod make the same change to objects that differ by a var; staging
            // another.
            clusters: vec![
                cluster("dev", (2, 3), "dev"),
                cluster("prod", (2, 3), "prod"),
                cluster("staging", (2, 4), "staging"),
            ],
            ..Review::default()
        };
        let text = report(&analyze(&review, &Filters::new()));
        assert_eq!(text.matches("  spec.replicas\n").count(), 2, "{text}");
        assert!(
            text.contains("== cluster prod\n\n-- Kustomization flux-system/apps: changed (the same as in dev, above)\n"),
            "{text}"
        );
        assert!(text.contains("+   4\n"), "{text}");
    }

    #[test]
    fn kustomizations_not_compared_for_one_reason_are_listed_once_with_the_reason() {
        use crate::model::Status;
        let blocked = |name: &str| Unit {
            name: name.into(),
            status: Status::NotCompared,
            problem: Some(
                "head: parent flux-system/apps failed in head (its error is above)".into(),
            ),
            ..Unit::default()
        };
        let mut units: Vec<Unit> = ["apps/a", "apps/b", "apps/c"].map(blocked).to_vec();
        // Another reason, alone: shown as itself.
        units.push(Unit {
            name: "apps/suspended".into(),
            status: Status::NotCompared,
            problem: Some("head: suspended".into()),
            ..Unit::default()
        });
        let review = Review {
            base: "main".into(),
            head: "pr".into(),
            clusters: vec![Cluster {
                name: "dev".into(),
                units,
                ..Cluster::default()
            }],
            ..Review::default()
        };
        let text = report(&analyze(&review, &Filters::new()));
        assert!(
            text.contains(
                "-- 3 Kustomizations not compared: head: parent flux-system/apps failed in head\n   (its error is above)\n   apps/a, apps/b, apps/c\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("its error is above").count(), 1, "{text}");
        assert!(
            text.contains("-- Kustomization apps/suspended: not compared\n"),
            "{text}"
        );
        let md = crate::markdown::document(
            &analyze(&review, &Filters::new()),
            crate::markdown::Flavor::GitHub,
        );
        assert!(
            md.contains("<summary>3 Kustomizations: not compared</summary>"),
            "{md}"
        );
        assert!(md.contains("`apps/a`, `apps/b`, `apps/c`\n"), "{md}");
        assert_eq!(md.matches("its error is above").count(), 1, "{md}");
    }
}
