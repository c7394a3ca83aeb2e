//! Printing `diff`, `compare` and `prove`: text for people, JSON for programs, Markdown for a
//! pull-request summary.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::canary::{CanaryReport, Scope};
use crate::compare::{
    Change, ClusterComparison, ClusterDiff, KustomizationDiff, Presence, RevisionDiff,
};

fn short(sha: Option<&String>) -> String {
    sha.map_or_else(|| "-".to_string(), |s| s[..12.min(s.len())].to_string())
}

fn counts(c: &ClusterDiff) -> String {
    let (same, total) = c.identical_count();
    let mut parts = vec![format!(
        "{same}/{total} artifact{} identical",
        if total == 1 { "" } else { "s" }
    )];
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
            parts.push(format!("{n} {}", change.as_str()));
        }
    }
    if !c.moves.is_empty() {
        parts.push(format!(
            "{} moved",
            crate::report::plural(c.moves.len(), "object")
        ));
    }
    let mut s = parts.join(", ");
    match c.presence {
        Presence::Both => {}
        Presence::Added => s.push_str(" (cluster added in head)"),
        Presence::Removed => s.push_str(" (cluster removed in head)"),
    }
    s
}

/// One word for the whole diff: `identical` only when nothing changed and everything was
/// compared.
fn outcome(d: &RevisionDiff) -> String {
    let n = d.not_compared();
    match (d.changed(), n) {
        (false, 0) => "identical".to_string(),
        (true, 0) => "changed".to_string(),
        (true, n) => format!("changed; {n} not compared"),
        (false, n) => format!("{n} not compared, nothing else changed"),
    }
}

/// The summary line of what could not be compared, when anything could not.
fn not_compared_line(d: &RevisionDiff) -> Option<String> {
    let n = d.not_compared();
    (n > 0).then(|| {
        format!(
            "{n} Kustomization{} could not be compared: not rendered in base or head (failed, \
             blocked, external or suspended; see above)",
            if n == 1 { "" } else { "s" }
        )
    })
}

/// The summary line of the external Kustomizations found unchanged, when there are any.
fn external_line(d: &RevisionDiff) -> Option<String> {
    let n = d.external_unchanged();
    (n > 0).then(|| {
        format!(
            "{} external and unchanged: not rendered, but their Kustomization, source and var \
             source objects are identical in base and head (see above)",
            crate::report::plural(n, "Kustomization")
        )
    })
}

/// How many Kustomizations head took from base unchanged (changed-only, the default), when
/// any.
fn skipped_line(d: &RevisionDiff) -> Option<String> {
    let n: usize = d.clusters.iter().map(|c| c.skipped.len()).sum();
    let total: usize = d.clusters.iter().map(|c| c.kustomizations.len()).sum();
    (n > 0).then(|| {
        format!(
            "{n} of {total} Kustomizations taken from base: nothing they read changed (--full \
             renders them again)"
        )
    })
}

fn move_line(m: &crate::compare::Move) -> String {
    let mut s = format!("{} moved from {} to {}", m.object, m.from, m.to);
    if m.prune_outage {
        let _ = write!(
            s,
            "; warning: {} has prune: true, so Flux deletes the object when {} reconciles and {} \
             recreates it: a transient outage",
            m.from, m.from, m.to
        );
    }
    s
}

fn problems(k: &KustomizationDiff) -> Vec<String> {
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

/// The diff for people: a summary line per cluster, then each change with its diff. A
/// change made the same way in several clusters is printed once, in the first, with the
/// list of clusters.
#[must_use]
pub fn diff_text(d: &RevisionDiff) -> String {
    let mut out = format!("fluxsim diff: base {} -> head {}\n", d.base, d.head);
    let groups = groups(d);
    for c in &d.clusters {
        let _ = writeln!(out, "{}: {}", c.cluster, counts(c));
        for k in c
            .kustomizations
            .iter()
            .filter(|k| k.change != Change::Identical)
        {
            let g = group_of(&groups, &c.cluster, k);
            let shared = g.filter(|g| g.clusters.len() > 1);
            if let Some(g) = shared.filter(|g| g.clusters[0] != c.cluster) {
                let _ = writeln!(
                    out,
                    "  {:<12} {}  (the same as in {}, above)",
                    k.change.as_str(),
                    k.kustomization,
                    g.clusters[0]
                );
                continue;
            }
            match shared {
                Some(g) => {
                    let _ = writeln!(
                        out,
                        "  {:<12} {}  (the same in {})",
                        k.change.as_str(),
                        k.kustomization,
                        g.clusters.join(", ")
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  {:<12} {}  {} -> {}",
                        k.change.as_str(),
                        k.kustomization,
                        short(k.base_sha256.as_ref()),
                        short(k.head_sha256.as_ref())
                    );
                }
            }
            for p in problems(k) {
                let _ = writeln!(out, "    {p}");
            }
            for o in &k.objects {
                let _ = writeln!(out, "    {} {}", o.change.as_str(), o.object);
                for line in o.diff.lines() {
                    let _ = writeln!(out, "      {line}");
                }
            }
        }
        for m in &c.moves {
            let _ = writeln!(out, "  {:<12} {}", "move", move_line(m));
        }
    }
    if let Some(line) = not_compared_line(d) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = external_line(d) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = skipped_line(d) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "result: {}", outcome(d));
    out
}

/// The diff as stable JSON.
#[must_use]
pub fn diff_json(d: &RevisionDiff) -> Value {
    let mut v = serde_json::to_value(d).unwrap_or(Value::Null);
    v["changed"] = json!(d.changed());
    v["not_compared"] = json!(d.not_compared());
    v["external_unchanged"] = json!(d.external_unchanged());
    if let Some(clusters) = v["clusters"].as_array_mut() {
        for (cv, c) in clusters.iter_mut().zip(&d.clusters) {
            cv["changed"] = json!(c.changed());
            cv["not_compared"] = json!(c.not_compared().count());
            cv["external_unchanged"] = json!(c.external_unchanged().count());
        }
    }
    v
}

fn fence(text: &str) -> String {
    // A fence longer than any backtick run inside, so a diff cannot close it.
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

/// The most bytes of diff shown for one Kustomization in Markdown.
const MARKDOWN_DIFF_LIMIT: usize = 64 * 1024;

fn diff_markdown_body(d: &RevisionDiff, out: &mut String) {
    out.push_str("| cluster | artifacts |\n|---|---|\n");
    for c in &d.clusters {
        let _ = writeln!(out, "| `{}` | {} |", c.cluster, counts(c));
    }
    if let Some(line) = not_compared_line(d) {
        let _ = writeln!(out, "\n⚠️ {line}");
    }
    if let Some(line) = external_line(d) {
        let _ = writeln!(out, "\n{line}");
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
        let _ = writeln!(
            out,
            "\n### `{}`\n\n| Kustomization | change | base | head |\n|---|---|---|---|",
            c.cluster
        );
        for k in &changed {
            let _ = writeln!(
                out,
                "| `{}` | {} | `{}` | `{}` |",
                k.kustomization,
                k.change.as_str(),
                short(k.base_sha256.as_ref()),
                short(k.head_sha256.as_ref())
            );
        }
        for m in &c.moves {
            let mark = if m.prune_outage { "⚠️ " } else { "" };
            let _ = writeln!(out, "\n{mark}{}", move_line(m));
        }
    }
    // Each change's diff once, with the clusters it is made in.
    let groups = groups(d);
    let mut heading = false;
    for g in &groups {
        let k = g.k;
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
            out.push_str("\n### Changes\n");
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
        let f = fence(&body);
        let _ = write!(
            out,
            "\n<details><summary><code>{}</code> in {}: {}</summary>\n\n{f}diff\n{body}{f}\n\n</details>\n",
            k.kustomization,
            g.clusters.join(", "),
            crate::report::plural(k.objects.len(), "object")
        );
    }
}

/// The diff as a pull-request summary.
#[must_use]
pub fn diff_markdown(d: &RevisionDiff) -> String {
    let mut out = format!(
        "## fluxsim diff: `{}` → `{}`: {}\n\n",
        d.base,
        d.head,
        outcome(d)
    );
    diff_markdown_body(d, &mut out);
    out
}

fn opt(v: Option<&String>) -> String {
    v.map_or_else(|| "(undefined)".into(), Clone::clone)
}

/// The cluster comparison for people.
#[must_use]
pub fn compare_text(c: &ClusterComparison) -> String {
    let names = c.clusters.join(" vs ");
    let mut out = format!("fluxsim compare: {names}\n\ngraph:\n");
    for g in &c.graph {
        let verdict = if g.differences.is_empty() {
            "identical".to_string()
        } else {
            format!("differs: {}", g.differences.join(", "))
        };
        let _ = writeln!(out, "  {:<40} {verdict}", g.kustomization);
        if !g.differences.is_empty() {
            for (name, n) in c.clusters.iter().zip(&g.nodes) {
                let line = n.as_ref().map_or_else(
                    || "(not defined)".to_string(),
                    |n| {
                        format!(
                            "path={} dependsOn=[{}] wait={} prune={}",
                            n.path,
                            n.depends_on.join(","),
                            n.wait,
                            n.prune
                        )
                    },
                );
                let _ = writeln!(out, "    {name}: {line}");
            }
        }
    }
    out.push_str("\ntemplates:\n");
    for k in &c.kustomizations {
        let verdict = if k.not_compared {
            let why: Vec<String> = c
                .clusters
                .iter()
                .zip(&k.problems)
                .filter_map(|(n, p)| p.as_ref().map(|p| format!("{n}: {p}")))
                .collect();
            format!("not compared ({})", why.join("; "))
        } else if k.root {
            "cluster root (its own files: differs by design)".to_string()
        } else if k.templates.iter().any(Option::is_none) {
            "not in every cluster".to_string()
        } else if !k.same_template {
            "templates DIFFER".to_string()
        } else if k.same_artifact {
            "same template, same render".to_string()
        } else {
            format!(
                "same template; renders differ by vars: {}",
                k.differing_vars.join(", ")
            )
        };
        let _ = writeln!(out, "  {:<40} {verdict}", k.kustomization);
    }
    let _ = writeln!(out, "\nvars that differ ({}):", c.vars.len());
    for v in &c.vars {
        let values: Vec<String> = c
            .clusters
            .iter()
            .zip(&v.values)
            .map(|(n, val)| format!("{n}={}", opt(val.as_ref())))
            .collect();
        let used = if v.used_by.is_empty() {
            "unused".to_string()
        } else {
            format!("used by {}", v.used_by.join(", "))
        };
        let _ = writeln!(out, "  {:<24} {}  ({used})", v.name, values.join("  "));
    }
    if c.not_compared > 0 {
        let _ = writeln!(
            out,
            "\n{} Kustomization{} could not be compared: not rendered in every cluster (see above)",
            c.not_compared,
            if c.not_compared == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(out, "\nresult: {}", compare_outcome(c, &names));
    out
}

/// The verdict of a cluster comparison, in words.
fn compare_outcome(c: &ClusterComparison, names: &str) -> String {
    match (c.agnostic, c.not_compared) {
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
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// The cluster comparison as a pull-request summary.
#[must_use]
pub fn compare_markdown(c: &ClusterComparison) -> String {
    let names = c.clusters.join(" vs ");
    let mut out = format!(
        "## fluxsim compare: {names}: {}\n\n",
        match (c.agnostic, c.not_compared) {
            (true, 0) => format!("same graph and templates, {} values differ", c.vars.len()),
            (true, n) => format!("{n} not compared, the rest has the same graph and templates"),
            (false, _) => "differ in more than values".to_string(),
        }
    );
    let head: Vec<String> = c.clusters.iter().map(|n| format!("`{n}`")).collect();
    let _ = writeln!(
        out,
        "| Kustomization | graph | template | {} |\n|---|---|---|{}",
        head.join(" | "),
        "---|".repeat(c.clusters.len())
    );
    for (g, k) in c.graph.iter().zip(&c.kustomizations) {
        let graph = if g.differences.is_empty() {
            "same".to_string()
        } else {
            g.differences.join(", ")
        };
        let template = if k.not_compared {
            "**not compared**"
        } else if k.root {
            "root"
        } else if k.same_template {
            "same"
        } else {
            "**differs**"
        };
        let shas: Vec<String> = k
            .artifacts
            .iter()
            .map(|s| format!("`{}`", short(s.as_ref())))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {graph} | {template} | {} |",
            g.kustomization,
            shas.join(" | ")
        );
    }
    for k in c.kustomizations.iter().filter(|k| k.not_compared) {
        let why: Vec<String> = c
            .clusters
            .iter()
            .zip(&k.problems)
            .filter_map(|(n, p)| p.as_ref().map(|p| format!("`{n}`: {p}")))
            .collect();
        let _ = writeln!(
            out,
            "\n⚠️ `{}` not compared: {}",
            k.kustomization,
            why.join("; ")
        );
    }
    let _ = writeln!(
        out,
        "\n| var | {} | used by |\n|---|{}---|",
        head.join(" | "),
        "---|".repeat(c.clusters.len())
    );
    for v in &c.vars {
        let vals: Vec<String> = v
            .values
            .iter()
            .map(|x| format!("`{}`", opt(x.as_ref())))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            v.name,
            vals.join(" | "),
            v.used_by.join(", ")
        );
    }
    out
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
    pub expect: &'a str,
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

fn canary_summary(p: &Proof<'_>, cluster: &ClusterDiff) -> String {
    let mine = p.canaries.for_cluster(&cluster.cluster);
    let detected = mine.iter().filter(|c| c.detected).count();
    let restored = mine.iter().filter(|c| c.restored).count();
    format!(
        "{}: {}; canaries {detected}/{n} detected, {restored}/{n} restored",
        cluster.cluster,
        counts(cluster),
        n = mine.len()
    )
}

fn canary_lines(p: &Proof<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for c in &p.canaries.canaries {
        let scope = match &c.plan.scope {
            Scope::Overlay { cluster } => format!("overlay of {cluster}"),
            Scope::Shared => "shared".to_string(),
            Scope::Values => "values of a HelmRelease".to_string(),
        };
        let verdict = if c.detected && c.restored {
            "detected, restored".to_string()
        } else if let Some(why) = &c.plan.excluded {
            format!("NOT DETECTED: the file is not in what Flux sees ({why}): the harness is blind there")
        } else if c.plan.expected.is_empty() {
            "NOT DETECTED: no rendered object comes from this file: the harness is blind there"
                .to_string()
        } else if !c.detected {
            // Only the difference: where it was expected and not seen, and where it was
            // seen though not expected.
            let mut parts = Vec::new();
            if !c.missing.is_empty() {
                let unseen: Vec<String> = c
                    .missing
                    .iter()
                    .map(|u| match &u.why {
                        Some(why) => format!("{} ({why})", u.target),
                        None => format!("{} (why unknown)", u.target),
                    })
                    .collect();
                parts.push(format!(
                    "not seen in {} of {} expected: {}",
                    c.missing.len(),
                    c.plan.expected.len(),
                    unseen.join(", ")
                ));
            }
            if !c.unexpected.is_empty() {
                let extra: Vec<String> = c.unexpected.iter().map(ToString::to_string).collect();
                parts.push(format!("seen where not expected: {}", extra.join(", ")));
            }
            format!("NOT DETECTED as expected: {}", parts.join("; "))
        } else {
            "detected, NOT RESTORED".to_string()
        };
        out.push(format!(
            "canary {} ({scope}) in {}: {verdict}; expected in {} artifacts",
            c.plan.nonce,
            c.plan.file,
            c.plan.expected.len()
        ));
    }
    for t in &p.canaries.stray_changes {
        out.push(format!("stray change: {t} changed beyond the canaries"));
    }
    for t in &p.canaries.not_restored {
        out.push(format!(
            "not restored: {t} did not return to its digest after the canaries were removed"
        ));
    }
    out
}

/// What the proof could not see, one line each.
fn blind_lines(p: &Proof<'_>) -> Vec<String> {
    p.blind
        .iter()
        .map(|b| {
            format!(
                "could not see {}:{}: {}",
                b.cluster,
                b.kustomization,
                b.why.join("; ")
            )
        })
        .collect()
}

fn verdict(p: &Proof<'_>) -> String {
    let mut why = Vec::new();
    if !p.expectation_met {
        why.push(format!(
            "expected {}, got {}",
            p.expect,
            if p.diff.changed() {
                "changes"
            } else {
                "no change"
            }
        ));
    }
    if !p.canaries.passed() {
        why.push("the canaries did not all pass: the harness cannot be trusted".to_string());
    }
    if !p.blind.is_empty() && !p.allow_blind {
        why.push(format!(
            "blind to {} Kustomization{} that did not render (--allow-blind to accept)",
            p.blind.len(),
            if p.blind.len() == 1 { "" } else { "s" }
        ));
    }
    if p.passed && !p.blind.is_empty() {
        format!(
            "PASS, blind to {} (allowed)",
            crate::report::plural(p.blind.len(), "Kustomization")
        )
    } else if p.passed {
        "PASS".to_string()
    } else {
        format!("FAIL: {}", why.join("; "))
    }
}

/// The proof for people: the diff, the canaries, one summary line per cluster, the verdict.
#[must_use]
pub fn prove_text(p: &Proof<'_>) -> String {
    let mut out = diff_text(p.diff);
    out.push('\n');
    for l in canary_lines(p) {
        let _ = writeln!(out, "{l}");
    }
    out.push('\n');
    for l in blind_lines(p) {
        let _ = writeln!(out, "{l}");
    }
    for c in &p.diff.clusters {
        let _ = writeln!(out, "{}", canary_summary(p, c));
    }
    let _ = writeln!(out, "prove: {}", verdict(p));
    out
}

/// The proof as stable JSON.
#[must_use]
pub fn prove_json(p: &Proof<'_>) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    v["diff"] = diff_json(p.diff);
    v
}

/// The proof as a pull-request summary.
#[must_use]
pub fn prove_markdown(p: &Proof<'_>) -> String {
    let mark = if p.passed { "✅" } else { "❌" };
    let mut out = format!(
        "## {mark} fluxsim prove: `{}` → `{}`: {}\n\n",
        p.diff.base,
        p.diff.head,
        verdict(p)
    );
    for c in &p.diff.clusters {
        let _ = writeln!(out, "- {}", canary_summary(p, c));
    }
    if !p.blind.is_empty() {
        out.push('\n');
        for l in blind_lines(p) {
            let _ = writeln!(out, "- ⚠️ {l}");
        }
    }
    out.push('\n');
    diff_markdown_body(p.diff, &mut out);
    out.push_str("\n<details><summary>canaries</summary>\n\n");
    for l in canary_lines(p) {
        let _ = writeln!(out, "- {l}");
    }
    out.push_str("\n</details>\n");
    out
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
                    }],
                }],
                moves: Vec::new(),
                skipped: Vec::new(),
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
