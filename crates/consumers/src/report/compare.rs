//! Printing `compare`: text for people, JSON for programs, Markdown for a pull-request summary.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::compare::ClusterComparison;
use crate::report::diff::short;
use crate::report::escape::OneLine;
use crate::report::json as json_doc;
use crate::report::layout::Layout;
use crate::report::markdown::{
    md, plain_of, Code, Inline, Markdown, Message, Out, Plural, Text, Texts,
};
use crate::review;

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
