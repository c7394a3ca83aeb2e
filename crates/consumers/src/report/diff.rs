//! Printing `diff`: text for people, JSON for programs, Markdown for a pull-request summary.
//! The diff's body is also the body of `prove` (`report/prove.rs`).

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::compare::{Change, ClusterDiff, KustomizationDiff, Presence, RevisionDiff};
use crate::report::escape::OneLine;
use crate::report::json as json_doc;
use crate::report::layout::Layout;
use crate::report::markdown::{md, plain_of, Code, Inline, Markdown, Out, Plural, Text, Texts};

pub(crate) fn short(sha: Option<&String>) -> String {
    sha.map_or_else(|| "-".to_string(), |s| s[..12.min(s.len())].to_string())
}

/// `7/9 artifacts identical, 2 changed`: what happened in a cluster, in numbers.
pub(crate) struct Counts<'a>(pub(crate) &'a ClusterDiff);

impl Inline for Counts<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let c = self.0;
        let (same, total) = c.identical_count();
        md!(
            w,
            "{}/{} artifact{} identical",
            same,
            total,
            if total == 1 { "" } else { "s" }
        );
        for change in [
            Change::Changed,
            Change::Added,
            Change::Removed,
            Change::NotCompared,
            Change::ExternalUnchanged,
        ] {
            let n = c
                .kustomizations
                .iter()
                .filter(|k| k.change == change)
                .count();
            if n > 0 {
                md!(w, ", {} {}", n, change.as_str());
            }
        }
        if !c.moves.is_empty() {
            md!(w, ", {} moved", Plural(c.moves.len(), "object"));
        }
        match c.presence {
            Presence::Both => {}
            Presence::Added => md!(w, " (cluster added in head)"),
            Presence::Removed => md!(w, " (cluster removed in head)"),
        }
    }
}

/// One word for the whole diff: `identical` only when nothing changed and everything was
/// compared.
struct DiffOutcome<'a>(&'a RevisionDiff);

impl Inline for DiffOutcome<'_> {
    fn put(&self, w: &mut Out<'_>) {
        match (self.0.changed(), self.0.not_compared()) {
            (false, 0) => md!(w, "identical"),
            (true, 0) => md!(w, "changed"),
            (true, n) => md!(w, "changed; {} not compared", n),
            (false, n) => md!(w, "{} not compared, nothing else changed", n),
        }
    }
}

/// The summary line of what could not be compared (`n` Kustomizations, more than 0).
struct NotComparedLine(String);

impl Inline for NotComparedLine {
    fn put(&self, w: &mut Out<'_>) {
        md!(
            w,
            "{} could not be compared: not rendered in base or head (failed, blocked, \
             external or suspended; see above)",
            Text(&self.0)
        );
    }
}

struct ExternalLine(usize, usize);

impl Inline for ExternalLine {
    fn put(&self, w: &mut Out<'_>) {
        let ExternalLine(kustomizations, releases) = *self;
        if kustomizations > 0 {
            md!(
                w,
                "{} external and unchanged: not rendered, but their Kustomization, source and \
                 var source objects are identical in base and head (see above)",
                Plural(kustomizations, "Kustomization")
            );
        }
        if kustomizations > 0 && releases > 0 {
            md!(w, "; ");
        }
        if releases > 0 {
            md!(
                w,
                "{} whose chart could not be had, unchanged: not rendered, but their \
                 HelmRelease, chart source and values source objects are identical in base \
                 and head (see above)",
                Plural(releases, "HelmRelease")
            );
        }
    }
}

/// How many Kustomizations head took from base unchanged (changed-only, the default), of
/// how many.
struct SkippedLine(usize, usize);

impl Inline for SkippedLine {
    fn put(&self, w: &mut Out<'_>) {
        md!(
            w,
            "{} of {} Kustomizations taken from base: nothing they read changed (--full \
             renders them again)",
            self.0,
            self.1
        );
    }
}

fn external_line(d: &RevisionDiff) -> Option<ExternalLine> {
    let releases = d
        .clusters
        .iter()
        .flat_map(crate::compare::ClusterDiff::external_unchanged)
        .filter(|k| crate::compare::is_release_entry(&k.kustomization))
        .count();
    let n = d.external_unchanged();
    (n > 0).then_some(ExternalLine(n - releases, releases))
}

fn skipped_line(d: &RevisionDiff) -> Option<SkippedLine> {
    let n: usize = d.skipped_count();
    let total = d.kustomization_count();
    (n > 0).then_some(SkippedLine(n, total))
}

/// An object that moved from one Kustomization to another, and the outage it may cause.
struct MoveLine<'a>(&'a crate::compare::Move);

impl Inline for MoveLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let m = self.0;
        md!(
            w,
            "{} moved from {} to {}",
            Text(&m.object),
            Text(&m.from),
            Text(&m.to)
        );
        if m.prune_outage {
            md!(
                w,
                "; warning: {} has prune: true, so Flux deletes the object when {} reconciles \
                 and {} recreates it: a transient outage",
                Text(&m.from),
                Text(&m.from),
                Text(&m.to)
            );
        }
    }
}

/// The failures of a diff, each once with the clusters it is the same in.
struct FailureGroup {
    kustomization: String,
    side: &'static str,
    error: String,
    clusters: Vec<String>,
    below: usize,
}

fn failure_groups(d: &RevisionDiff) -> Vec<FailureGroup> {
    let mut out: Vec<FailureGroup> = Vec::new();
    for f in d.failures() {
        match out
            .iter_mut()
            .find(|g| g.kustomization == f.kustomization && g.side == f.side && g.error == f.error)
        {
            Some(g) => {
                g.clusters.push(f.cluster);
                g.below += f.below;
            }
            None => out.push(FailureGroup {
                kustomization: f.kustomization,
                side: f.side,
                error: f.error,
                clusters: vec![f.cluster],
                below: f.below,
            }),
        }
    }
    // What head broke first (a stable sort: each kind in the diff's order).
    out.sort_by_key(|g| g.side != "head");
    out
}

/// `flux-system/apps failed in head (dev, prod); the 12 Kustomizations it applies are not
/// compared`: what a failure costs the diff, before its error.
struct FailureLine<'a>(&'a FailureGroup);

impl Inline for FailureLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let g = self.0;
        md!(
            w,
            "{} failed in {} ({})",
            Code(&g.kustomization),
            g.side,
            Texts(&g.clusters)
        );
        if g.below > 0 {
            md!(
                w,
                "; {} it applies {} not compared: Flux applies nothing from a failed build and \
                 prunes nothing, so they keep running as they are",
                Plural(g.below, "Kustomization"),
                if g.below == 1 { "is" } else { "are" }
            );
        }
    }
}

/// The failures first, as text: each with its error.
fn failures_text(d: &RevisionDiff, layout: Layout, out: &mut String) {
    for g in failure_groups(d) {
        out.push_str(&layout.wrap("FAILED: ", &plain_of(&FailureLine(&g)), "  "));
        for line in g.error.lines() {
            out.push_str(&layout.wrap("  ", &OneLine(line).to_string(), "    "));
        }
    }
}

/// The failures first, as Markdown: each with its error in a block.
fn failures_markdown(d: &RevisionDiff, doc: &mut Markdown) {
    let groups = failure_groups(d);
    if groups.is_empty() {
        return;
    }
    md!(doc, "### ❌ What failed to render\n\n");
    for g in &groups {
        md!(doc, "{}:\n\n", FailureLine(g));
        doc.fenced("text", &g.error);
        md!(doc, "\n");
    }
}

pub(crate) fn problems(k: &KustomizationDiff) -> Vec<String> {
    // Below a failed parent: its error is printed first, with the parent.
    if k.blocked_by.is_some() {
        let short = |p: &String| {
            let cut = p.find(": ").map_or(p.as_str(), |i| &p[..i]);
            format!("{cut} (its error is above)")
        };
        let mut out = Vec::new();
        if let Some(p) = &k.base_problem {
            out.push(format!("base: {}", short(p)));
        }
        if let Some(p) = &k.head_problem {
            out.push(format!("head: {}", short(p)));
        }
        return out;
    }
    let mut out = Vec::new();
    match (&k.base_problem, &k.head_problem) {
        (Some(b), Some(h)) if b == h => out.push(format!("base and head: {b}")),
        (b, h) => {
            if let Some(p) = b {
                out.push(format!("base: {p}"));
            }
            if let Some(p) = h {
                out.push(format!("head: {p}"));
            }
        }
    }
    if let Some(e) = &k.external {
        out.push(e.clone());
    }
    out
}

/// A Kustomization's change and every cluster where it is the same (same objects, same
/// diffs, same problems), in cluster order.
struct Group<'a> {
    k: &'a KustomizationDiff,
    clusters: Vec<&'a str>,
}

fn same_change(a: &KustomizationDiff, b: &KustomizationDiff) -> bool {
    a.kustomization == b.kustomization
        && a.change == b.change
        && problems(a) == problems(b)
        && a.objects.len() == b.objects.len()
        && a.objects
            .iter()
            .zip(&b.objects)
            .all(|(x, y)| x.object == y.object && x.change == y.change && x.diff == y.diff)
}

/// The changes of every cluster, each printed once with the clusters it is made in.
fn groups(d: &RevisionDiff) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for c in &d.clusters {
        for k in c
            .kustomizations
            .iter()
            .filter(|k| k.change != Change::Identical)
        {
            match out.iter_mut().find(|g| same_change(g.k, k)) {
                Some(g) => g.clusters.push(&c.cluster),
                None => out.push(Group {
                    k,
                    clusters: vec![&c.cluster],
                }),
            }
        }
    }
    out
}

/// The group `k` of `cluster` belongs to.
fn group_of<'g, 'a>(
    groups: &'g [Group<'a>],
    cluster: &str,
    k: &KustomizationDiff,
) -> Option<&'g Group<'a>> {
    groups
        .iter()
        .find(|g| g.clusters.contains(&cluster) && same_change(g.k, k))
}

/// `1 of 18 artifacts changed, 17 identical`: the whole diff in numbers (changed counts
/// added and removed ones; identical, external Kustomizations found unchanged).
pub(crate) struct DiffCounts<'a>(pub(crate) &'a RevisionDiff);

impl Inline for DiffCounts<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let ks = || self.0.clusters.iter().flat_map(|c| &c.kustomizations);
        let total = ks().count();
        let changed = ks()
            .filter(|k| matches!(k.change, Change::Changed | Change::Added | Change::Removed))
            .count();
        let same = ks()
            .filter(|k| matches!(k.change, Change::Identical | Change::ExternalUnchanged))
            .count();
        let not_compared = self.0.not_compared();
        md!(
            w,
            "{} of {} artifact{} changed, {} identical",
            changed,
            total,
            if total == 1 { "" } else { "s" },
            same
        );
        if not_compared > 0 {
            md!(w, ", {} not compared", not_compared);
        }
        let moved: usize = self.0.clusters.iter().map(|c| c.moves.len()).sum();
        if moved > 0 {
            md!(w, ", {} moved", Plural(moved, "object"));
        }
    }
}

/// The diff for people: the verdict with its counts and the revisions first, then what
/// failed, then a summary line per cluster and each change with its diff, then the verdict
/// again. A change made the same way in several clusters is printed once, in the first, with
/// the list of clusters. Headers and rows fit 80 columns unless `--wide` (an object's diff
/// is shown as it is); `--verbose` adds what head took from base.
#[must_use]
pub fn diff_text(d: &RevisionDiff, layout: Layout) -> String {
    let mut out = layout.wrap(
        "",
        &if d.identical() {
            let n: usize = d.clusters.iter().map(|c| c.kustomizations.len()).sum();
            format!(
                "diff: identical: {} of {}",
                super::plural(n, "artifact"),
                super::plural(d.clusters.len(), "cluster")
            )
        } else {
            format!("diff: {}", plain_of(&DiffCounts(d)))
        },
        "  ",
    );
    out.push_str(&revisions_line(d, layout));
    diff_body(d, layout, &mut out);
    out.push_str(&layout.wrap(
        "",
        &format!(
            "result: {} ({})",
            plain_of(&DiffOutcome(d)),
            plain_of(&DiffCounts(d))
        ),
        "  ",
    ));
    out
}

/// `base main (24845e8bdfc3) -> head work tree`.
pub(crate) fn revisions_line(d: &RevisionDiff, layout: Layout) -> String {
    layout.wrap(
        "",
        &format!("base {} -> head {}", OneLine(&d.base), OneLine(&d.head)),
        "  ",
    )
}

/// What the text of `diff` and `prove` share: what failed, each cluster's changes, and the
/// lines on what was not compared, found unchanged, or taken from base.
pub(crate) fn diff_body(d: &RevisionDiff, layout: Layout, out: &mut String) {
    failures_text(d, layout, out);
    let groups = groups(d);
    for c in &d.clusters {
        out.push_str(&layout.wrap(
            "",
            &format!("{}: {}", OneLine(&c.cluster), plain_of(&Counts(c))),
            "  ",
        ));
        for k in c
            .kustomizations
            .iter()
            .filter(|k| k.change != Change::Identical)
        {
            let g = group_of(&groups, &c.cluster, k);
            let shared = g.filter(|g| g.clusters.len() > 1);
            let row = format!("{:<12} {}  ", k.change.as_str(), OneLine(&k.kustomization));
            if let Some(g) = shared.filter(|g| g.clusters[0] != c.cluster) {
                out.push_str(&layout.wrap(
                    "  ",
                    &format!("{row}(the same as in {}, above)", OneLine(g.clusters[0])),
                    "      ",
                ));
                continue;
            }
            let tail = match shared {
                Some(g) => format!("(the same in {})", plain_of(&Texts(&g.clusters))),
                None => format!(
                    "{} -> {}",
                    short(k.base_sha256.as_ref()),
                    short(k.head_sha256.as_ref())
                ),
            };
            out.push_str(&layout.wrap("  ", &format!("{row}{tail}"), "      "));
            for p in problems(k) {
                out.push_str(&layout.wrap("    ", &p, "      "));
            }
            for o in &k.objects {
                let _ = writeln!(out, "    {} {}", o.change.as_str(), OneLine(&o.object));
                for line in o.diff.lines() {
                    let _ = writeln!(out, "      {line}");
                }
            }
        }
        for m in &c.moves {
            out.push_str(&layout.wrap(
                "  ",
                &format!("{:<12} {}", "move", plain_of(&MoveLine(m))),
                "      ",
            ));
        }
    }
    if d.not_compared() > 0 {
        out.push_str(&layout.wrap(
            "",
            &plain_of(&NotComparedLine(d.not_compared_units())),
            "  ",
        ));
    }
    if let Some(line) = external_line(d) {
        out.push_str(&layout.wrap("", &plain_of(&line), "  "));
    }
    if layout.verbose {
        if let Some(line) = skipped_line(d) {
            out.push_str(&layout.wrap("", &plain_of(&line), "  "));
        }
    }
}

/// The diff as stable JSON (`docs/schemas/diff.schema.json`).
#[must_use]
pub fn diff_json(d: &RevisionDiff) -> Value {
    json_doc::document("DiffReport", diff_body_json(d))
}

/// The diff's fields, without the document's own (`prove` nests them).
pub(crate) fn diff_body_json(d: &RevisionDiff) -> Value {
    let mut v = json_doc::camel_keys(serde_json::to_value(d).unwrap_or(Value::Null));
    v["base"] = json_doc::revision(&d.base_revision);
    v["head"] = json_doc::revision(&d.head_revision);
    let mut failures = json_doc::camel_keys(json!(d.failures()));
    if let Some(items) = failures.as_array_mut() {
        for f in items {
            json_doc::kustomization_refs(f, "kustomization");
        }
    }
    v["failures"] = failures;
    v["changed"] = json!(d.changed());
    v["notCompared"] = json!(d.not_compared());
    v["externalUnchanged"] = json!(d.external_unchanged());
    if let Some(clusters) = v["clusters"].as_array_mut() {
        for (cv, c) in clusters.iter_mut().zip(&d.clusters) {
            json_doc::rename(cv, "cluster", "name");
            cv["changed"] = json!(c.changed());
            cv["notCompared"] = json!(c.not_compared().count());
            cv["externalUnchanged"] = json!(c.external_unchanged().count());
            if cv.get("skipped").is_none() {
                cv["skipped"] = json!([]);
            }
            json_doc::kustomization_refs(cv, "skipped");
            json_doc::each(cv, "kustomizations", |k| {
                json_doc::kustomization_refs(k, "kustomization");
                json_doc::kustomization_refs(k, "blockedBy");
            });
            json_doc::each(cv, "moves", |m| {
                json_doc::kustomization_refs(m, "from");
                json_doc::kustomization_refs(m, "to");
            });
        }
    }
    v
}

/// The most bytes of diff shown for one Kustomization in Markdown.
const MARKDOWN_DIFF_LIMIT: usize = 64 * 1024;

pub(crate) fn diff_markdown_body(d: &RevisionDiff, doc: &mut Markdown) {
    failures_markdown(d, doc);
    md!(doc, "| cluster | artifacts |\n|---|---|\n");
    for c in &d.clusters {
        md!(doc, "| {} | {} |\n", Code(&c.cluster), Counts(c));
    }
    if d.not_compared() > 0 {
        md!(doc, "\n⚠️ {}\n", NotComparedLine(d.not_compared_units()));
    }
    if let Some(line) = external_line(d) {
        md!(doc, "\n{}\n", line);
    }
    for c in &d.clusters {
        let changed: Vec<&KustomizationDiff> = c
            .kustomizations
            .iter()
            .filter(|k| k.change != Change::Identical)
            .collect();
        if changed.is_empty() && c.moves.is_empty() {
            continue;
        }
        md!(
            doc,
            "\n### {}\n\n| Kustomization | change | base | head |\n|---|---|---|---|\n",
            Code(&c.cluster)
        );
        for k in &changed {
            md!(
                doc,
                "| {} | {} | {} | {} |\n",
                Code(&k.kustomization),
                k.change.as_str(),
                Code(short(k.base_sha256.as_ref())),
                Code(short(k.head_sha256.as_ref()))
            );
        }
        for m in &c.moves {
            let mark = if m.prune_outage { "⚠️ " } else { "" };
            md!(doc, "\n{}{}\n", mark, MoveLine(m));
        }
    }
    // Each change's diff once, with the clusters it is made in.
    let groups = groups(d);
    let mut heading = false;
    for g in &groups {
        let k = g.k;
        // The body goes in a fenced block, which shows any text as it is.
        let mut body = String::new();
        for p in problems(k) {
            let _ = writeln!(body, "# {p}");
        }
        for o in &k.objects {
            let _ = writeln!(body, "# {} {}", o.change.as_str(), o.object);
            body.push_str(&o.diff);
        }
        if body.is_empty() {
            continue;
        }
        if !heading {
            md!(doc, "\n### Changes\n");
            heading = true;
        }
        // GitHub caps a job summary at 1 MiB: keep each diff well under it.
        if body.len() > MARKDOWN_DIFF_LIMIT {
            let mut cut = MARKDOWN_DIFF_LIMIT;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            let cut = body[..cut].rfind('\n').map_or(cut, |n| n + 1);
            let rest = body[cut..].lines().count();
            body.truncate(cut);
            let _ = writeln!(
                body,
                "# ... {rest} more lines: run `fluxsim diff` for all of it"
            );
        }
        md!(doc, "\n");
        doc.details(
            |s| {
                md!(
                    s,
                    "{} in {}: {}",
                    Code(&k.kustomization),
                    Texts(&g.clusters),
                    Plural(k.objects.len(), "object")
                );
            },
            |body_doc| body_doc.fenced("diff", &body),
        );
    }
}

/// The diff as a pull-request summary.
#[must_use]
pub fn diff_markdown(d: &RevisionDiff) -> String {
    let mut doc = Markdown::new();
    md!(
        doc,
        "## fluxsim diff: {} → {}: {}\n\n",
        Code(&d.base),
        Code(&d.head),
        DiffOutcome(d)
    );
    diff_markdown_body(d, &mut doc);
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{ObjectDiff, RevisionDiff};
    use crate::flux::ObjectId;

    fn one_change(diff: String) -> RevisionDiff {
        RevisionDiff {
            base: "main".into(),
            head: "work tree".into(),
            base_revision: crate::compare::Revision::default(),
            head_revision: crate::compare::Revision::default(),
            clusters: vec![ClusterDiff {
                cluster: "dev".into(),
                presence: Presence::Both,
                kustomizations: vec![KustomizationDiff {
                    kustomization: "flux-system/apps".into(),
                    change: Change::Changed,
                    base_sha256: Some("a".repeat(64)),
                    head_sha256: Some("b".repeat(64)),
                    base_problem: None,
                    head_problem: None,
                    blocked_by: None,
                    fails_in_head: false,
                    external: None,
                    objects: vec![ObjectDiff {
                        object: ObjectId {
                            group: String::new(),
                            kind: "ConfigMap".into(),
                            namespace: "apps".into(),
                            name: "big".into(),
                        },
                        change: Change::Changed,
                        diff,
                        base: None,
                        head: None,
                    }],
                    left_out: 0,
                    order: None,
                    chart: None,
                }],
                moves: Vec::new(),
                skipped: Vec::new(),
                prune_deletions: Vec::new(),
            }],
        }
    }

    #[test]
    fn markdown_diffs_are_cut_to_fit_a_job_summary() {
        let big = (0..20_000).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "+line {i}");
            s
        });
        let md = diff_markdown(&one_change(big));
        assert!(md.len() < MARKDOWN_DIFF_LIMIT + 4096, "{}", md.len());
        assert!(md.contains("more lines: run `fluxsim diff` for all of it"));
        assert!(md.trim_end().ends_with("</details>"));
    }

    #[test]
    fn markdown_fence_is_longer_than_any_backtick_run_in_the_diff() {
        let md = diff_markdown(&one_change("+a: \"```\"\n".into()));
        assert!(md.contains("````diff\n"), "{md}");
    }
}
