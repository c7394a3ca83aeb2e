//! Printing `diff`, `compare` and `prove`: text for people, JSON for programs, Markdown for a
//! pull-request summary.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::canary::{CanaryReport, Scope};
use crate::compare::{
    Change, ClusterComparison, ClusterDiff, KustomizationDiff, Presence, RevisionDiff,
};
use crate::report::escape::OneLine;
use crate::report::json as json_doc;
use crate::report::layout::Layout;
use crate::report::markdown::{
    md, plain_of, Code, Inline, Markdown, Message, Out, Plural, Text, Texts,
};
use crate::review;

fn short(sha: Option<&String>) -> String {
    sha.map_or_else(|| "-".to_string(), |s| s[..12.min(s.len())].to_string())
}

/// `7/9 artifacts identical, 2 changed`: what happened in a cluster, in numbers.
struct Counts<'a>(&'a ClusterDiff);

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
struct NotComparedLine(usize);

impl Inline for NotComparedLine {
    fn put(&self, w: &mut Out<'_>) {
        let n = self.0;
        md!(
            w,
            "{} Kustomization{} could not be compared: not rendered in base or head (failed, \
             blocked, external or suspended; see above)",
            n,
            if n == 1 { "" } else { "s" }
        );
    }
}

/// The summary line of the external Kustomizations found unchanged (`n`, more than 0).
struct ExternalLine(usize);

impl Inline for ExternalLine {
    fn put(&self, w: &mut Out<'_>) {
        md!(
            w,
            "{} external and unchanged: not rendered, but their Kustomization, source and var \
             source objects are identical in base and head (see above)",
            Plural(self.0, "Kustomization")
        );
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
    let n = d.external_unchanged();
    (n > 0).then_some(ExternalLine(n))
}

fn skipped_line(d: &RevisionDiff) -> Option<SkippedLine> {
    let n: usize = d.clusters.iter().map(|c| c.skipped.len()).sum();
    let total: usize = d.clusters.iter().map(|c| c.kustomizations.len()).sum();
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
struct DiffCounts<'a>(&'a RevisionDiff);

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
fn revisions_line(d: &RevisionDiff, layout: Layout) -> String {
    layout.wrap(
        "",
        &format!("base {} -> head {}", OneLine(&d.base), OneLine(&d.head)),
        "  ",
    )
}

/// What the text of `diff` and `prove` share: what failed, each cluster's changes, and the
/// lines on what was not compared, found unchanged, or taken from base.
fn diff_body(d: &RevisionDiff, layout: Layout, out: &mut String) {
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
        out.push_str(&layout.wrap("", &plain_of(&NotComparedLine(d.not_compared())), "  "));
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
fn diff_body_json(d: &RevisionDiff) -> Value {
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

fn diff_markdown_body(d: &RevisionDiff, doc: &mut Markdown) {
    failures_markdown(d, doc);
    md!(doc, "| cluster | artifacts |\n|---|---|\n");
    for c in &d.clusters {
        md!(doc, "| {} | {} |\n", Code(&c.cluster), Counts(c));
    }
    if d.not_compared() > 0 {
        md!(doc, "\n⚠️ {}\n", NotComparedLine(d.not_compared()));
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

fn opt(v: Option<&String>) -> String {
    v.map_or_else(|| "(undefined)".into(), Clone::clone)
}

/// A var's value in the `i`th cluster of a comparison: `(not known)` where no known
/// Kustomization receives it and some are unknown.
fn var_value(c: &ClusterComparison, i: usize, v: Option<&String>) -> String {
    match v {
        None if c.incomplete.get(i).copied().unwrap_or(false) => "(not known)".into(),
        v => opt(v),
    }
}

/// A row of `compare`'s text: the Kustomization in a column of `width`, then `verdict`,
/// wrapped under it (80 columns unless `--wide`).
fn compare_row(name: &str, width: usize, verdict: &str, layout: Layout) -> String {
    let name = layout.fit(name, width);
    let pad = width.saturating_sub(super::layout::columns(&name));
    layout.wrap(
        &format!("  {name}{} ", " ".repeat(pad)),
        verdict,
        &" ".repeat(width + 3),
    )
}

/// Whether a row of `compare` is not compared only because, where it is not, an ancestor
/// did not render (the reports say that once for all such rows: [`BelowGroup`]).
fn only_below(k: &crate::compare::TemplateRow) -> bool {
    k.not_compared
        && k.problems
            .iter()
            .zip(&k.below)
            .all(|(p, b)| p.is_none() || b.is_some())
}

/// The rows not compared only because an ancestor did not render in some clusters: one
/// group per ancestor and the clusters it did not render in.
struct BelowGroup {
    ancestor: String,
    clusters: Vec<String>,
    /// What the ancestor is there, as the rows' problems say it (`which failed`).
    state: String,
    kustomizations: Vec<String>,
}

fn below_groups(c: &ClusterComparison) -> Vec<BelowGroup> {
    let mut out: Vec<BelowGroup> = Vec::new();
    for k in c.kustomizations.iter().filter(|k| only_below(k)) {
        let mut ancestor = None;
        let mut clusters = Vec::new();
        let mut state = String::new();
        for ((n, b), p) in c.clusters.iter().zip(&k.below).zip(&k.problems) {
            if let (Some(b), Some(p)) = (b, p) {
                ancestor.get_or_insert_with(|| b.clone());
                clusters.push(n.clone());
                state = p.rsplit_once(", which ").map_or("", |(_, s)| s).to_string();
            }
        }
        let Some(ancestor) = ancestor else { continue };
        match out
            .iter_mut()
            .find(|g| g.ancestor == ancestor && g.clusters == clusters)
        {
            Some(g) => g.kustomizations.push(k.kustomization.clone()),
            None => out.push(BelowGroup {
                ancestor,
                clusters,
                state,
                kustomizations: vec![k.kustomization.clone()],
            }),
        }
    }
    out
}

/// `2 not compared in storage: below flux-system/flux-system, which failed there:`, then
/// the Kustomizations (the clusters where it did render define them).
struct BelowLine<'a>(&'a BelowGroup);

impl Inline for BelowLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let g = self.0;
        md!(
            w,
            "{} not compared in {}: below {}, which {} there: {}",
            g.kustomizations.len(),
            Texts(&g.clusters),
            Code(&g.ancestor),
            Text(&g.state),
            Texts(&g.kustomizations)
        );
    }
}

/// The Kustomizations that failed to render in some cluster, each once with the clusters
/// where it failed with the same error.
struct CompareFailure {
    kustomization: String,
    error: String,
    clusters: Vec<String>,
    below: usize,
}

fn compare_failures(c: &ClusterComparison) -> Vec<CompareFailure> {
    let mut out: Vec<CompareFailure> = Vec::new();
    for f in c.failures() {
        match out
            .iter_mut()
            .find(|g| g.kustomization == f.kustomization && g.error == f.error)
        {
            Some(g) => {
                g.clusters.push(f.cluster);
                g.below += f.below;
            }
            None => out.push(CompareFailure {
                kustomization: f.kustomization,
                error: f.error,
                clusters: vec![f.cluster],
                below: f.below,
            }),
        }
    }
    out
}

/// `flux-system/flux-system failed in storage; the 2 Kustomizations the other clusters
/// apply below it are not compared there`.
struct CompareFailureLine<'a>(&'a CompareFailure);

impl Inline for CompareFailureLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let g = self.0;
        md!(
            w,
            "{} failed in {}",
            Code(&g.kustomization),
            Texts(&g.clusters)
        );
        if g.below > 0 {
            md!(
                w,
                "; {} the other clusters apply below it {} not compared there",
                Plural(g.below, "Kustomization"),
                if g.below == 1 { "is" } else { "are" }
            );
        }
    }
}

/// What `compare` says of a Kustomization's templates across the clusters.
fn template_verdict(c: &ClusterComparison, k: &crate::compare::TemplateRow) -> String {
    if k.not_compared {
        // Each reason once, with the clusters it holds in (an external source is most often
        // external in every cluster); a failure's error is printed first, once.
        let mut why: Vec<(Vec<String>, &str)> = Vec::new();
        for (n, p) in c.clusters.iter().zip(&k.problems) {
            let Some(p) = p else { continue };
            let p = if p.starts_with("failed: ") {
                "failed, its error is above"
            } else {
                p.as_str()
            };
            match why.iter_mut().find(|(_, q)| *q == p) {
                Some((names, _)) => names.push(OneLine(n).to_string()),
                None => why.push((vec![OneLine(n).to_string()], p)),
            }
        }
        let why: Vec<String> = why
            .into_iter()
            .map(|(names, p)| format!("{}: {}", names.join(", "), OneLine(p)))
            .collect();
        format!("not compared ({})", why.join("; "))
    } else if k.root {
        "cluster root (its own files: differs by design)".to_string()
    } else if k.templates.iter().any(Option::is_none) {
        "not in every cluster".to_string()
    } else if !k.same_template {
        format!(
            "templates DIFFER in {}",
            super::plural(k.objects.len(), "object")
        )
    } else if k.same_artifact {
        "same template, same render".to_string()
    } else {
        format!(
            "same template; renders differ by vars: {}",
            plain_of(&Texts(&k.differing_vars))
        )
    }
}

/// The graph section of `compare`'s text: one line when every cluster's is the same, else
/// the Kustomizations whose graph differs, with each cluster's node.
fn graph_text(c: &ClusterComparison, width: usize, layout: Layout, out: &mut String) {
    let differing: Vec<&crate::compare::GraphRow> = c
        .graph
        .iter()
        .filter(|g| !g.differences.is_empty())
        .collect();
    if differing.is_empty() {
        out.push('\n');
        out.push_str(
            &layout.wrap(
                "",
                &match c
                    .kustomizations
                    .iter()
                    .filter(|k| k.below.iter().any(Option::is_some))
                    .count()
                {
                    0 => format!(
                        "graph: the same in every cluster ({})",
                        super::plural(c.graph.len(), "Kustomization")
                    ),
                    unknown => format!(
                        "graph: the same where it is known ({}; {unknown} not known in some \
                     cluster, below one that did not render there)",
                        super::plural(c.graph.len(), "Kustomization")
                    ),
                },
                "  ",
            ),
        );
        return;
    }
    let _ = writeln!(out, "\ngraph ({} differ):", differing.len());
    for g in differing {
        out.push_str(&compare_row(
            &OneLine(&g.kustomization).to_string(),
            width,
            &format!("differs: {}", g.differences.join(", ")),
            layout,
        ));
        let below = c
            .kustomizations
            .iter()
            .find(|k| k.kustomization == g.kustomization)
            .map(|k| k.below.as_slice())
            .unwrap_or_default();
        for (i, (name, n)) in c.clusters.iter().zip(&g.nodes).enumerate() {
            let line = n.as_ref().map_or_else(
                || match below.get(i).and_then(Option::as_ref) {
                    Some(a) => format!("(not known: below {}, which did not render)", OneLine(a)),
                    None => "(not defined)".to_string(),
                },
                |n| {
                    format!(
                        "path={} dependsOn=[{}] wait={} prune={}",
                        OneLine(&n.path),
                        OneLine(n.depends_on.join(",")),
                        n.wait,
                        n.prune
                    )
                },
            );
            out.push_str(&layout.wrap("    ", &format!("{}: {line}", OneLine(name)), "      "));
        }
    }
}

/// The vars section of `compare`'s text: each var's values, then what uses it.
fn vars_text(c: &ClusterComparison, layout: Layout, out: &mut String) {
    if c.vars.is_empty() {
        out.push_str("\nno var differs between the clusters\n");
        return;
    }
    let _ = writeln!(out, "\nvars that differ ({}):", c.vars.len());
    for v in &c.vars {
        let values: Vec<String> = c
            .clusters
            .iter()
            .zip(&v.values)
            .enumerate()
            .map(|(i, (n, val))| {
                format!("{}={}", OneLine(n), OneLine(var_value(c, i, val.as_ref())))
            })
            .collect();
        out.push_str(&layout.wrap(
            "  ",
            &format!("{:<24} {}", OneLine(&v.name), values.join("  ")),
            "      ",
        ));
        let used = if v.used_by.is_empty() {
            "unused".to_string()
        } else {
            format!("used by {}", OneLine(&plain_of(&Texts(&v.used_by))))
        };
        out.push_str(&layout.wrap("    ", &used, "      "));
    }
}

/// The cluster comparison for people: the verdict first, then the graphs, the templates
/// (and where they differ, each object's changes) and the vars that differ, then the
/// verdict again (80 columns unless `--wide`).
#[must_use]
pub fn compare_text(c: &ClusterComparison, layout: Layout) -> String {
    let names = plain_of(&ClusterNames(&c.clusters));
    let headline = match (c.agnostic, c.not_compared) {
        (_, n) if n > 0 && n == c.kustomizations.len() => {
            format!("nothing compared ({n} not compared)")
        }
        (true, 0) => format!(
            "same graph and templates, {} differ",
            super::plural(c.vars.len(), "var value")
        ),
        (true, n) => format!("{n} not compared, the rest has the same graph and templates"),
        (false, _) => "they differ in more than var values".to_string(),
    };
    let mut out = layout.wrap("", &format!("compare: {names}: {headline}"), "  ");
    for g in compare_failures(c) {
        out.push_str(&layout.wrap("FAILED: ", &plain_of(&CompareFailureLine(&g)), "  "));
        for line in g.error.lines() {
            out.push_str(&layout.wrap("  ", &OneLine(line).to_string(), "    "));
        }
    }
    // The name column: as wide as the longest name, at most 40 columns unless --wide.
    let longest = c
        .graph
        .iter()
        .map(|g| super::layout::columns(&OneLine(&g.kustomization).to_string()))
        .max()
        .unwrap_or(0);
    let width = if layout.wide {
        longest
    } else {
        longest.min(40)
    };
    graph_text(c, width, layout, &mut out);
    out.push_str("\ntemplates:\n");
    for k in c.kustomizations.iter().filter(|k| !only_below(k)) {
        out.push_str(&compare_row(
            &OneLine(&k.kustomization).to_string(),
            width,
            &template_verdict(c, k),
            layout,
        ));
        template_objects_text(c, k, layout, &mut out);
    }
    for g in below_groups(c) {
        out.push_str(&layout.wrap("  ", &plain_of(&BelowLine(&g)), "    "));
    }
    vars_text(c, layout, &mut out);
    if c.not_compared > 0 {
        out.push('\n');
        out.push_str(&layout.wrap(
            "",
            &format!(
                "{} could not be compared: not rendered in every cluster (see above)",
                super::plural(c.not_compared, "Kustomization")
            ),
            "  ",
        ));
    }
    out.push('\n');
    out.push_str(&layout.wrap("", &format!("result: {}", compare_outcome(c, &names)), "  "));
    out
}

/// Where a Kustomization's templates differ: each object, `first -> other`, with its
/// semantic changes (as `diff` shows them).
fn template_objects_text(
    c: &ClusterComparison,
    k: &crate::compare::TemplateRow,
    layout: Layout,
    out: &mut String,
) {
    let first = c.clusters.first().map_or("", String::as_str);
    for o in &k.objects {
        out.push_str(&layout.wrap(
            "    ",
            &format!(
                "{} -> {}: {} {}",
                OneLine(first),
                OneLine(&o.cluster),
                OneLine(&object_name(&o.object)),
                o.change
            ),
            "      ",
        ));
        for line in review::lines::changes(&o.changes) {
            let _ = writeln!(out, "    {}", OneLine(&line));
        }
    }
}

/// An object as a review names it: `Deployment apps/web`.
fn object_name(o: &crate::flux::ObjectId) -> String {
    review::model::ObjectId {
        group: o.group.clone(),
        kind: o.kind.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    }
    .to_string()
}

/// The verdict of a cluster comparison, in words.
fn compare_outcome(c: &ClusterComparison, names: &str) -> String {
    match (c.agnostic, c.not_compared) {
        (_, n) if n > 0 && n == c.kustomizations.len() => format!(
            "not proven: none of the {} could be compared",
            super::plural(n, "Kustomization")
        ),
        (true, 0) => format!(
            "{names} run the same graph and templates; they differ only in these {} values",
            c.vars.len()
        ),
        (true, n) => format!(
            "not proven: {n} Kustomization{} could not be compared; the others run the same \
             graph and templates",
            if n == 1 { "" } else { "s" }
        ),
        (false, _) => format!("{names} differ in more than var values (see above)"),
    }
}

/// The cluster comparison as stable JSON.
#[must_use]
pub fn compare_json(c: &ClusterComparison) -> Value {
    let mut v = json_doc::camel_keys(serde_json::to_value(c).unwrap_or(Value::Null));
    v["clusters"] = json!(c
        .clusters
        .iter()
        .map(|n| json!({ "name": n }))
        .collect::<Vec<_>>());
    json_doc::each(&mut v, "graph", |g| {
        json_doc::kustomization_refs(g, "kustomization");
        json_doc::each(g, "nodes", |n| {
            json_doc::kustomization_refs(n, "parent");
            json_doc::kustomization_refs(n, "dependsOn");
        });
    });
    // The objects' changes as they are: their values are the repository's (a map's keys
    // are never camel-cased).
    for (kv, k) in v
        .get_mut("kustomizations")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .zip(&c.kustomizations)
    {
        json_doc::kustomization_refs(kv, "kustomization");
        json_doc::kustomization_refs(kv, "below");
        for (ov, o) in kv
            .get_mut("objects")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .zip(&k.objects)
        {
            ov["changes"] = serde_json::to_value(&o.changes).unwrap_or(Value::Null);
        }
    }
    json_doc::each(&mut v, "vars", |var| {
        json_doc::kustomization_refs(var, "usedBy");
    });
    let mut failures = json_doc::camel_keys(json!(c.failures()));
    if let Some(items) = failures.as_array_mut() {
        for f in items {
            json_doc::kustomization_refs(f, "kustomization");
        }
    }
    v["failures"] = failures;
    json_doc::document("CompareReport", v)
}

/// `compare` on a repository of fewer than two clusters, as JSON: nothing compared.
#[must_use]
pub fn compare_nothing_json(names: &[&str], note: &str) -> Value {
    json_doc::document(
        "CompareReport",
        json!({
            "clusters": names.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>(),
            "note": note,
            "agnostic": true,
            "graph": [],
            "kustomizations": [],
            "vars": [],
            "notCompared": 0,
            "failures": [],
        }),
    )
}

/// The cluster comparison as a pull-request summary.
#[must_use]
pub fn compare_markdown(c: &ClusterComparison) -> String {
    let mut doc = Markdown::new();
    md!(doc, "## fluxsim compare: {}: ", ClusterNames(&c.clusters));
    match (c.agnostic, c.not_compared) {
        (_, n) if n > 0 && n == c.kustomizations.len() => {
            md!(doc, "nothing compared ({} not compared)", n);
        }
        (true, 0) => md!(
            doc,
            "same graph and templates, {} values differ",
            c.vars.len()
        ),
        (true, n) => md!(
            doc,
            "{} not compared, the rest has the same graph and templates",
            n
        ),
        (false, _) => md!(doc, "differ in more than values"),
    }
    compare_failures_markdown(c, &mut doc);
    md!(
        doc,
        "\n\n| Kustomization | graph | template | {} |\n|---|---|---|",
        ColumnCodes(&c.clusters)
    );
    for _ in &c.clusters {
        md!(doc, "---|");
    }
    md!(doc, "\n");
    for (g, k) in c.graph.iter().zip(&c.kustomizations) {
        let template = if k.not_compared {
            "**not compared**"
        } else if k.root {
            "root"
        } else if k.same_template {
            "same"
        } else {
            "**differs**"
        };
        md!(doc, "| {} | ", Code(&g.kustomization));
        if g.differences.is_empty() {
            md!(doc, "same");
        } else {
            md!(doc, "{}", Texts(&g.differences));
        }
        md!(doc, " | {} |", template);
        for s in &k.artifacts {
            md!(doc, " {} |", Code(short(s.as_ref())));
        }
        md!(doc, "\n");
    }
    not_compared_markdown(c, &mut doc);
    template_objects_markdown(c, &mut doc);
    if c.vars.is_empty() {
        md!(doc, "\nNo var differs between the clusters.\n");
        return doc.finish();
    }
    md!(
        doc,
        "\n| var | {} | used by |\n|---|",
        ColumnCodes(&c.clusters)
    );
    for _ in &c.clusters {
        md!(doc, "---|");
    }
    md!(doc, "---|\n");
    for v in &c.vars {
        md!(doc, "| {} |", Code(&v.name));
        for (i, x) in v.values.iter().enumerate() {
            md!(doc, " {} |", Code(var_value(c, i, x.as_ref())));
        }
        md!(doc, " {} |\n", Texts(&v.used_by));
    }
    doc.finish()
}

/// What failed to render, first, as Markdown: each failure once, with its error.
fn compare_failures_markdown(c: &ClusterComparison, doc: &mut Markdown) {
    let failures = compare_failures(c);
    if failures.is_empty() {
        return;
    }
    md!(doc, "\n\n### ❌ What failed to render\n");
    for g in &failures {
        md!(doc, "\n{}:\n\n", CompareFailureLine(g));
        doc.fenced("text", &g.error);
    }
}

/// Why each Kustomization was not compared, as Markdown; those below one that did not
/// render, one line per such ancestor.
fn not_compared_markdown(c: &ClusterComparison, doc: &mut Markdown) {
    for k in c
        .kustomizations
        .iter()
        .filter(|k| k.not_compared && !only_below(k))
    {
        md!(doc, "\n⚠️ {} not compared: ", Code(&k.kustomization));
        let why = c
            .clusters
            .iter()
            .zip(&k.problems)
            .filter_map(|(n, p)| p.as_ref().map(|p| (n, p)));
        for (i, (n, p)) in why.enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            if p.starts_with("failed: ") {
                md!(doc, "{}{}: failed, its error is above", sep, Code(n));
            } else {
                md!(doc, "{}{}: {}", sep, Code(n), Message(p));
            }
        }
        md!(doc, "\n");
    }
    for g in below_groups(c) {
        md!(doc, "\n⚠️ {}\n", BelowLine(&g));
    }
}

/// Where templates differ, per Kustomization: its objects' changes in a folded block.
fn template_objects_markdown(c: &ClusterComparison, doc: &mut Markdown) {
    let first = c.clusters.first().map_or("", String::as_str);
    for k in c.kustomizations.iter().filter(|k| !k.objects.is_empty()) {
        let mut body = String::new();
        for o in &k.objects {
            let _ = writeln!(
                body,
                "# {first} -> {}: {} {}",
                o.cluster,
                object_name(&o.object),
                o.change
            );
            for line in review::lines::changes(&o.changes) {
                let _ = writeln!(body, "{line}");
            }
        }
        md!(doc, "\n");
        doc.details(
            |s| {
                md!(
                    s,
                    "{}: the templates differ in {}",
                    Code(&k.kustomization),
                    Plural(k.objects.len(), "object")
                );
            },
            |b| b.fenced("diff", &body),
        );
    }
}

/// `compare` on a repository of fewer than two clusters, as a pull-request summary.
#[must_use]
pub fn compare_nothing_markdown(names: &[&str]) -> String {
    let mut doc = Markdown::new();
    md!(
        doc,
        "## fluxsim compare\n\ncompare: nothing to compare: the repository has {} ({})\n",
        Plural(names.len(), "cluster"),
        Texts(names)
    );
    doc.finish()
}

/// `dev vs prod`: the clusters compared.
struct ClusterNames<'a>(&'a [String]);

impl Inline for ClusterNames<'_> {
    fn put(&self, w: &mut Out<'_>) {
        for (i, n) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { " vs " };
            md!(w, "{}{}", sep, Text(n));
        }
    }
}

/// `` `dev` | `prod` ``: one table column per cluster.
struct ColumnCodes<'a>(&'a [String]);

impl Inline for ColumnCodes<'_> {
    fn put(&self, w: &mut Out<'_>) {
        for (i, n) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { " | " };
            md!(w, "{}{}", sep, Code(n));
        }
    }
}

/// A Kustomization the proof could not see: not rendered in base or head.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Blind {
    /// The cluster.
    pub cluster: String,
    /// `namespace/name`.
    pub kustomization: String,
    /// Its status in base and head where it did not render (`head: failed: ...`).
    pub why: Vec<String>,
}

/// The Kustomizations a diff could not compare, in cluster and name order.
#[must_use]
pub fn blind_spots(d: &RevisionDiff) -> Vec<Blind> {
    d.clusters
        .iter()
        .flat_map(|c| {
            c.not_compared().map(|k| Blind {
                cluster: c.cluster.clone(),
                kustomization: k.kustomization.clone(),
                why: problems(k),
            })
        })
        .collect()
}

/// The outcome of `prove`.
#[derive(Debug, serde::Serialize)]
pub struct Proof<'a> {
    /// The revision diff.
    pub diff: &'a RevisionDiff,
    /// `identical`, `changed` or `any`.
    pub expect: &'static str,
    /// The diff meets the expectation.
    pub expectation_met: bool,
    /// The canaries.
    pub canaries: &'a CanaryReport,
    /// What the proof could not see (Kustomizations not compared).
    pub blind: Vec<Blind>,
    /// `--allow-blind`: blind spots are listed but do not fail the proof.
    pub allow_blind: bool,
    /// Expectation met, every canary detected and restored, and nothing blind (unless
    /// allowed).
    pub passed: bool,
}

/// `dev: 9/9 artifacts identical; canaries 2/2 detected, 2/2 restored`.
pub(crate) struct CanarySummary<'a>(pub(crate) &'a Proof<'a>, pub(crate) &'a ClusterDiff);

impl Inline for CanarySummary<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let (p, cluster) = (self.0, self.1);
        let mine = p.canaries.for_cluster(&cluster.cluster);
        let detected = mine.iter().filter(|c| c.detected).count();
        let restored = mine.iter().filter(|c| c.restored).count();
        md!(
            w,
            "{}: {}; canaries {}/{} detected, {}/{} restored",
            Text(&cluster.cluster),
            Counts(cluster),
            detected,
            mine.len(),
            restored,
            mine.len()
        );
    }
}

/// One line of what the canaries found.
pub(crate) enum CanaryLine<'a> {
    /// A canary: where it was planted and whether it was seen where expected, and undone.
    Canary(&'a crate::canary::Outcome),
    /// An artifact that changed though no canary should have changed it.
    Stray(&'a crate::canary::Target),
    /// An artifact that did not return to its digest.
    NotRestored(&'a crate::canary::Target),
    /// No canary could be planted (nothing of head rendered).
    NonePlanted,
}

pub(crate) fn canary_lines<'a>(p: &'a Proof<'_>) -> Vec<CanaryLine<'a>> {
    let c = p.canaries;
    let none = c.canaries.is_empty().then_some(CanaryLine::NonePlanted);
    none.into_iter()
        .chain(c.canaries.iter().map(CanaryLine::Canary))
        .chain(c.stray_changes.iter().map(CanaryLine::Stray))
        .chain(c.not_restored.iter().map(CanaryLine::NotRestored))
        .collect()
}

impl Inline for CanaryLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        match self {
            CanaryLine::Canary(c) => canary_line(w, c),
            CanaryLine::NonePlanted => md!(
                w,
                "no canary planted: nothing of head rendered from a file of the repository \
                 (see what failed, above)"
            ),
            CanaryLine::Stray(t) => md!(w, "stray change: {} changed beyond the canaries", Text(t)),
            CanaryLine::NotRestored(t) => md!(
                w,
                "not restored: {} did not return to its digest after the canaries were removed",
                Text(t)
            ),
        }
    }
}

fn canary_line(w: &mut Out<'_>, c: &crate::canary::Outcome) {
    md!(w, "canary {} (", Text(&c.plan.nonce));
    match &c.plan.scope {
        Scope::Overlay { cluster } => md!(w, "overlay of {}", Text(cluster)),
        Scope::Shared => md!(w, "shared"),
        Scope::Values => md!(w, "values of a HelmRelease"),
        Scope::Template => md!(w, "template of a ResourceSet"),
    }
    md!(w, ") in {}: ", Text(&c.plan.file));
    if c.detected && c.restored {
        md!(w, "detected, restored");
    } else if let Some(why) = &c.plan.excluded {
        md!(
            w,
            "NOT DETECTED: the file is not in what Flux sees ({}): the harness is blind there",
            Message(why)
        );
    } else if c.plan.expected.is_empty() {
        md!(
            w,
            "NOT DETECTED: no rendered object comes from this file: the harness is blind there"
        );
    } else if !c.detected {
        // Only the difference: where it was expected and not seen, and where it was seen
        // though not expected.
        md!(w, "NOT DETECTED as expected: ");
        if !c.missing.is_empty() {
            md!(
                w,
                "not seen in {} of {} expected: ",
                c.missing.len(),
                c.plan.expected.len()
            );
            for (i, u) in c.missing.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                if let Some(why) = &u.why {
                    md!(w, "{}{} ({})", sep, Text(&u.target), Message(why));
                } else {
                    md!(w, "{}{} (why unknown)", sep, Text(&u.target));
                }
            }
        }
        if !c.unexpected.is_empty() {
            let sep = if c.missing.is_empty() { "" } else { "; " };
            md!(w, "{}seen where not expected: ", sep);
            for (i, t) in c.unexpected.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                md!(w, "{}{}", sep, Text(t));
            }
        }
    } else {
        md!(w, "detected, NOT RESTORED");
    }
    md!(w, "; expected in {} artifacts", c.plan.expected.len());
}

/// What the proof could not see: `could not see dev:flux-system/apps: head: failed: ...`.
struct BlindLine<'a>(&'a Blind);

impl Inline for BlindLine<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let b = self.0;
        md!(
            w,
            "could not see {}:{}: ",
            Text(&b.cluster),
            Text(&b.kustomization)
        );
        for (i, why) in b.why.iter().enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            md!(w, "{}{}", sep, Message(why));
        }
    }
}

/// `PASS`, or `FAIL:` and why.
pub(crate) struct Verdict<'a>(&'a Proof<'a>);

impl Inline for Verdict<'_> {
    fn put(&self, w: &mut Out<'_>) {
        let p = self.0;
        if p.passed && !p.blind.is_empty() {
            md!(
                w,
                "PASS, blind to {} (allowed)",
                Plural(p.blind.len(), "Kustomization")
            );
            return;
        }
        if p.passed {
            md!(w, "PASS");
            return;
        }
        md!(w, "FAIL: ");
        let mut sep = "";
        if !p.expectation_met {
            md!(
                w,
                "expected {}, got {}",
                p.expect,
                if p.diff.changed() {
                    "changes"
                } else {
                    "no change"
                }
            );
            sep = "; ";
        }
        if !p.canaries.passed() {
            md!(
                w,
                "{}the canaries did not all pass: the harness cannot be trusted",
                sep
            );
            sep = "; ";
        }
        if !p.blind.is_empty() && !p.allow_blind {
            md!(
                w,
                "{}blind to {} Kustomization{} that did not render (--allow-blind to accept)",
                sep,
                p.blind.len(),
                if p.blind.len() == 1 { "" } else { "s" }
            );
        }
    }
}

/// The proof for people: the verdict with the diff's counts and the canaries' first, the
/// revisions, the diff, the canaries, one summary line per cluster, the verdict again.
/// Fits 80 columns unless `--wide` (an object's diff is shown as it is).
#[must_use]
pub fn prove_text(p: &Proof<'_>, layout: Layout) -> String {
    let all = &p.canaries.canaries;
    let detected = all.iter().filter(|c| c.detected).count();
    let restored = all.iter().filter(|c| c.restored).count();
    let canaries = if detected == all.len() && restored == all.len() {
        format!("canaries {detected}/{} passed", all.len())
    } else {
        format!(
            "canaries {detected}/{} detected, {restored}/{} restored",
            all.len(),
            all.len()
        )
    };
    let mut out = layout.wrap(
        "",
        &format!(
            "prove: {}: {}; {canaries}",
            plain_of(&Verdict(p)),
            plain_of(&DiffCounts(p.diff)),
        ),
        "  ",
    );
    out.push_str(&revisions_line(p.diff, layout));
    diff_body(p.diff, layout, &mut out);
    out.push('\n');
    for l in canary_lines(p) {
        out.push_str(&layout.wrap("", &plain_of(&l), "  "));
    }
    out.push('\n');
    for b in &p.blind {
        out.push_str(&layout.wrap("", &plain_of(&BlindLine(b)), "  "));
    }
    for c in &p.diff.clusters {
        out.push_str(&layout.wrap("", &plain_of(&CanarySummary(p, c)), "  "));
    }
    out.push_str(&layout.wrap("prove: ", &plain_of(&Verdict(p)), "  "));
    out
}

/// The proof as stable JSON.
#[must_use]
pub fn prove_json(p: &Proof<'_>) -> Value {
    let mut v = json_doc::camel_keys(serde_json::to_value(p).unwrap_or(Value::Null));
    v["diff"] = diff_body_json(p.diff);
    json_doc::each(&mut v, "blind", |b| {
        json_doc::kustomization_refs(b, "kustomization");
    });
    // Every artifact a canary names: `{cluster, kustomization: {namespace, name}}`.
    let targets = |t: &mut Value| json_doc::kustomization_refs(t, "kustomization");
    if let Some(c) = v.get_mut("canaries") {
        json_doc::each(c, "canaries", |o| {
            for key in ["expected", "detectedIn", "unexpected", "missing"] {
                json_doc::each(o, key, targets);
            }
        });
        json_doc::each(c, "strayChanges", targets);
        json_doc::each(c, "notRestored", targets);
    }
    json_doc::document("ProveReport", v)
}

/// The proof as a pull-request summary.
#[must_use]
pub fn prove_markdown(p: &Proof<'_>) -> String {
    let mut doc = Markdown::new();
    let mark = if p.passed { "✅" } else { "❌" };
    md!(
        doc,
        "## {} fluxsim prove: {} → {}: ",
        mark,
        Code(&p.diff.base),
        Code(&p.diff.head)
    );
    // A proof that holds says what changes (a bare "PASS" over a change reads as "nothing
    // changes"); one that fails says why, as the text does.
    if p.passed {
        md!(doc, "{}\n\n", Message(super::review::prove_verdict(p)));
    } else {
        md!(doc, "{}\n\n", Verdict(p));
    }
    for c in &p.diff.clusters {
        md!(doc, "- {}\n", CanarySummary(p, c));
    }
    if !p.blind.is_empty() {
        md!(doc, "\n");
        for b in &p.blind {
            md!(doc, "- ⚠️ {}\n", BlindLine(b));
        }
    }
    md!(doc, "\n");
    diff_markdown_body(p.diff, &mut doc);
    md!(doc, "\n");
    doc.details(
        |s| md!(s, "canaries"),
        |body| {
            for l in canary_lines(p) {
                md!(body, "- {}\n", l);
            }
        },
    );
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
