//! The HTML report: one self-contained file (CSS and script inline, nothing fetched, a
//! Content-Security-Policy that allows only its own style and script by hash) with a
//! navigation tree cluster → Kustomization or HelmRelease → object, change badges, a filter
//! box (also read from the address: `report.html#q=podinfo`), per object the list of
//! semantic changes and its YAML side by side or unified (`u`) with word-level highlights,
//! light and dark themes (the system's, or `t`), keys `j`/`k` to step through objects and
//! `/` to filter. A long name wraps in the tree (the whole id in its `title`), a field path
//! breaks only between its segments, and the marks are SVG, not emoji (which a system
//! without an emoji font draws as empty boxes).
//!
//! Every string of the repository is HTML-escaped ([`crate::escape::html`]); none is put in
//! the script, which only reads the page.

mod diff;
mod icon;

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::analysis::{
    image_groups, Analysis, ClusterReview, Counts, ObjectChange, ObjectReview, Outcome, UnitReview,
};
use crate::escape::{html, html_message};
use crate::model::{split_image, Presence, UnitKind};
use crate::semantic::{FieldChange, Op};
use crate::yaml;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// Text of the repository on one line, for an element or an attribute.
fn h(s: &str) -> String {
    html(s, true)
}

/// A fluxsim message as HTML: its code parts in `<code>`, its emoji as SVG marks.
fn message(m: &str) -> String {
    icon::symbols(&html_message(m))
}

/// A name of the repository (`default/podinfo`, `helm.toolkit.fluxcd.io`) that may wrap
/// after a `.` or a `/`, never inside a word, so that a narrow column shows it whole.
fn breakable(s: &str) -> String {
    let escaped = h(s);
    let mut out = String::with_capacity(escaped.len() + 16);
    for c in escaped.chars() {
        out.push(c);
        if matches!(c, '.' | '/') {
            out.push_str("<wbr>");
        }
    }
    out
}

/// A field path (`spec.template.spec.containers[name=app].image`) as segments that each
/// stay on one line (`spec.`, `containers`, `[name=app].`): a line breaks only after a `.`
/// or a `/`, or before a `[`; the CSS breaks a segment only if it is wider than the column.
fn path_html(path: &str) -> String {
    let escaped = h(path);
    let mut segments = Vec::new();
    let mut seg = String::new();
    for c in escaped.chars() {
        if c == '[' && !seg.is_empty() {
            segments.push(std::mem::take(&mut seg));
        }
        seg.push(c);
        if matches!(c, '.' | '/') {
            segments.push(std::mem::take(&mut seg));
        }
    }
    if !seg.is_empty() {
        segments.push(seg);
    }
    // Inside a segment wider than the column, a line breaks first after a `_` `=` `,`
    // (and a `-`, as text does).
    segments
        .iter()
        .map(|s| {
            let s = s
                .replace('_', "_<wbr>")
                .replace('=', "=<wbr>")
                .replace(',', ",<wbr>");
            format!("<span class=\"seg\">{s}</span>")
        })
        .collect::<Vec<_>>()
        .join("<wbr>")
}

fn hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn badge_class(c: ObjectChange) -> &'static str {
    match c {
        ObjectChange::Added => "added",
        ObjectChange::Changed => "changed",
        ObjectChange::Removed => "removed",
    }
}

fn badge_sign(c: ObjectChange) -> &'static str {
    match c {
        ObjectChange::Added => "+",
        ObjectChange::Changed => "~",
        ObjectChange::Removed => "−",
    }
}

fn outcome_badge(o: Outcome) -> (&'static str, &'static str) {
    match o {
        Outcome::Added => ("added", "added"),
        Outcome::Removed => ("removed", "removed"),
        Outcome::Renamed => ("changed", "renamed"),
        Outcome::NotCompared => ("nc", "not compared"),
        Outcome::Changed | Outcome::Identical | Outcome::Filtered => ("changed", "changed"),
    }
}

/// Ids of the page's elements: numbers, never the repository's text.
#[derive(Default)]
struct Ids(usize);

impl Ids {
    fn next(&mut self, prefix: &str) -> String {
        self.0 += 1;
        format!("{prefix}{}", self.0)
    }
}

/// What the filter matches: the names leading to a leaf, lower-cased.
fn search_text(parts: &[&str]) -> String {
    h(&parts.join(" ").to_lowercase())
}

fn counts_cells(c: &Counts, renamed_column: bool) -> String {
    let cell = |n: usize| {
        if n == 0 {
            "·".to_string()
        } else {
            n.to_string()
        }
    };
    let renamed_cell = if renamed_column {
        format!("<td>{}</td>", cell(c.renamed))
    } else {
        String::new()
    };
    format!(
        "<td>{}</td><td>{}</td><td>{}</td>{renamed_cell}<td>{}</td>",
        cell(c.added),
        cell(c.changed),
        cell(c.removed),
        cell(c.not_compared)
    )
}

/// `3 changed, 1 added`: the non-zero counts of a kind.
fn totals_text(c: &Counts) -> String {
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

fn summary(a: &Analysis, out: &mut String) {
    out.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    if let Some(v) = &a.verdict {
        let (class, mark) = match v.passed {
            Some(true) => ("verdict pass", format!("{} ", icon::pass())),
            Some(false) => ("verdict fail", format!("{} ", icon::fail())),
            None => ("verdict", String::new()),
        };
        let _ = writeln!(
            out,
            "<p class=\"{class}\" id=\"verdict\"><strong>{mark}{}</strong></p>",
            message(&v.text)
        );
    }
    if !a.changed() {
        out.push_str("<p><strong>No change</strong>: every Kustomization renders the same.</p>\n");
    }
    let changed: Vec<&ClusterReview> = a.clusters.iter().filter(|c| c.changed()).collect();
    if !changed.is_empty() {
        let helm = if a.has(UnitKind::HelmRelease) {
            format!(
                " · <strong>HelmReleases</strong>: {}",
                totals_text(&a.totals(UnitKind::HelmRelease))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<p><strong>Kustomizations</strong>: {}{helm} · in {} of {}</p>",
            totals_text(&a.totals(UnitKind::Kustomization)),
            changed.len(),
            plural(a.clusters.len(), "cluster", "clusters")
        );
        // A `renamed` column only where something was renamed.
        let renames =
            a.totals(UnitKind::Kustomization).renamed + a.totals(UnitKind::HelmRelease).renamed > 0;
        let _ = writeln!(
            out,
            "<table class=\"counts\"><thead><tr><th>cluster</th><th></th><th>added</th><th>changed</th><th>removed</th>{}<th>not compared</th></tr></thead><tbody>",
            if renames { "<th>renamed</th>" } else { "" }
        );
        for c in &changed {
            let presence = match c.presence {
                Presence::Both => "",
                Presence::Added => " (added in head)",
                Presence::Removed => " (removed in head)",
            };
            for kind in [UnitKind::Kustomization, UnitKind::HelmRelease] {
                let n = c.counts(kind);
                if kind == UnitKind::HelmRelease && !n.any() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "<tr><td><code>{}</code>{presence}</td><td>{}</td>{}</tr>",
                    h(&c.name),
                    kind.plural(),
                    counts_cells(n, renames)
                );
            }
        }
        out.push_str("</tbody></table>\n");
    }
    for (title, filtered) in [
        ("Unchanged", false),
        ("Changed only in what the filters hide", true),
    ] {
        let same: Vec<String> = a
            .clusters
            .iter()
            .filter(|c| !c.changed() && c.filtered_only() == filtered)
            .map(|c| format!("<code>{}</code>", h(&c.name)))
            .collect();
        if !same.is_empty() {
            let _ = writeln!(out, "<p class=\"note\">{title}: {}.</p>", same.join(", "));
        }
    }
    summary_lists(a, out);
    for n in &a.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", message(n));
    }
    out.push_str("</section>\n");
}

/// The caller's sections (`prove`'s canaries), after the details.
fn sections(a: &Analysis, out: &mut String) {
    for s in &a.sections {
        let items: Vec<String> = s
            .items
            .iter()
            .map(|i| format!("<li>{}</li>", message(i)))
            .collect();
        let _ = writeln!(
            out,
            "<section class=\"extra\"><h2>{} ({})</h2><ul class=\"list\">{}</ul></section>",
            h(&s.title),
            s.items.len(),
            items.join("\n")
        );
    }
}

/// The summary's lists: failures, prune deletions, image changes, hazards, what the filters
/// hid.
fn summary_lists(a: &Analysis, out: &mut String) {
    let mut failures = Vec::new();
    let mut deletions = Vec::new();
    let mut images = Vec::new();
    let mut hazards = Vec::new();
    for c in &a.clusters {
        for f in &c.failures {
            failures.push(format!(
                "<li><code>{}</code> failed in {} (<code>{}</code>){}<pre class=\"err\">{}</pre></li>",
                h(&f.unit),
                h(&f.side),
                h(&c.name),
                if f.below > 0 {
                    format!("; {} it applies not compared", plural(f.below, "Kustomization", "Kustomizations"))
                } else {
                    String::new()
                },
                html(&f.error, false)
            ));
        }
        for d in &c.prune_deletions {
            deletions.push(format!(
                "<li><code>{}</code> <code>{}</code> (pruned by <code>{}</code>)</li>",
                h(&c.name),
                h(&d.object.to_string()),
                h(&d.unit)
            ));
        }
        for ((before, after), uses) in image_groups(&c.image_bumps) {
            let change = match (&before, &after) {
                (Some(x), Some(y)) => {
                    let ((rx, tx), (ry, ty)) = (split_image(x), split_image(y));
                    if rx == ry && !tx.is_empty() && !ty.is_empty() {
                        format!(
                            "<code>{}</code>: <code>{}</code> → <code>{}</code>",
                            h(rx),
                            h(tx),
                            h(ty)
                        )
                    } else {
                        format!("<code>{}</code> → <code>{}</code>", h(x), h(y))
                    }
                }
                (None, Some(y)) => format!("<code>{}</code> added", h(y)),
                (Some(x), None) => format!("<code>{}</code> removed", h(x)),
                (None, None) => String::new(),
            };
            let more = if uses.len() > 1 {
                format!(" and {} more", plural(uses.len() - 1, "object", "objects"))
            } else {
                String::new()
            };
            images.push(format!(
                "<li>{change} in <code>{}</code> <code>{}</code>{more}</li>",
                h(&c.name),
                h(&uses[0].object.to_string())
            ));
        }
        for hz in &c.hazards {
            hazards.push(format!(
                "<li><code>{}</code>: {}</li>",
                h(&c.name),
                message(hz)
            ));
        }
    }
    for (title, items) in [
        ("Failed to render", failures),
        ("Deleted by prune", deletions),
        ("Image changes", images),
        ("Hazards", hazards),
    ] {
        if !items.is_empty() {
            let _ = writeln!(
                out,
                "<h3>{title} ({})</h3><ul class=\"list\">{}</ul>",
                items.len(),
                items.join("\n")
            );
        }
    }
    let hidden = a.hidden();
    if hidden.total() > 0 {
        let mut parts = Vec::new();
        if hidden.default > 0 {
            parts.push(format!(
                "{} hidden by the default filters (<code>--no-default-strip</code> shows them)",
                plural(hidden.default, "change", "changes")
            ));
        }
        if hidden.user > 0 {
            parts.push(format!(
                "{} hidden by <code>--strip</code>",
                plural(hidden.user, "change", "changes")
            ));
        }
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", parts.join("; "));
    }
}

/// A value in the list of changes: YAML, word-highlighted against the other side when both
/// are one line.
fn field_row(c: &FieldChange, out: &mut String) {
    let path = path_html(&c.path.to_string());
    let one = |v: &serde_json::Value| yaml::lines(v).join("\n");
    match &c.op {
        Op::Changed { before, after } => {
            if c.text().is_some() {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"path code\">{path}</td><td class=\"val note\">text changed: the line diff is below</td></tr>"
                );
                return;
            }
            let (a, b) = (one(before), one(after));
            let (da, db) = diff::words(&a, &b);
            let _ = writeln!(
                out,
                "<tr><td class=\"path code\">{path}</td><td class=\"val code\"><span class=\"del-v\">{da}</span> → <span class=\"add-v\">{db}</span></td></tr>"
            );
        }
        Op::Added { after } => {
            let _ = writeln!(
                out,
                "<tr><td class=\"path code\">{path}</td><td class=\"val code add-v\">{}</td></tr>",
                html(&one(after), false)
            );
        }
        Op::Removed { before } => {
            let _ = writeln!(
                out,
                "<tr><td class=\"path code\">{path}</td><td class=\"val code del-v\">{}</td></tr>",
                html(&one(before), false)
            );
        }
        Op::Reordered { before, after } => {
            let _ = writeln!(
                out,
                "<tr><td class=\"path code\">{path}</td><td class=\"val\"><span class=\"badge order\">order changed</span> <span class=\"code\">{}</span> → <span class=\"code\">{}</span></td></tr>",
                h(&before.join(", ")),
                h(&after.join(", "))
            );
        }
    }
}

fn object(o: &ObjectReview, id: &str, out: &mut String) {
    let _ = writeln!(
        out,
        "<article class=\"obj leaf\" id=\"{id}\" tabindex=\"-1\" data-change=\"{}\"><h4><span class=\"badge {}\">{}</span> {} <span class=\"note\">{}</span></h4>",
        badge_class(o.change),
        badge_class(o.change),
        badge_sign(o.change),
        h(&o.object.to_string()),
        o.change.as_str()
    );
    match o.change {
        ObjectChange::Changed => {
            if o.hidden.total() > 0 {
                let _ = writeln!(
                    out,
                    "<p class=\"note inset\">{} hidden by the filters.</p>",
                    plural(o.hidden.total(), "change", "changes")
                );
            }
            out.push_str("<table class=\"fields\"><tbody>\n");
            for c in &o.changes {
                field_row(c, out);
            }
            out.push_str("</tbody></table>\n");
            let before = o.base.as_ref().map(yaml::to_string).unwrap_or_default();
            let after = o.head.as_ref().map(yaml::to_string).unwrap_or_default();
            diff::views(&before, &after, out);
        }
        ObjectChange::Added | ObjectChange::Removed => {
            let v = o.head.as_ref().or(o.base.as_ref());
            let text = v.map(yaml::to_string).unwrap_or_default();
            let _ = writeln!(
                out,
                "<details class=\"content\"><summary>{} ({})</summary>",
                if o.change == ObjectChange::Added {
                    "Show the object added"
                } else {
                    "Show the object removed"
                },
                plural(text.lines().count(), "line", "lines")
            );
            diff::content(&text, o.change == ObjectChange::Added, out);
            out.push_str("</details>\n");
        }
    }
    out.push_str("</article>\n");
}

fn unit_heading(u: &UnitReview) -> String {
    let (class, word) = outcome_badge(u.outcome);
    let chart = u
        .chart_line()
        .map(|l| format!(" <span class=\"chart\">{}</span>", h(&l)))
        .unwrap_or_default();
    let (kind, name, from) = u.title();
    let from = from
        .map(|f| format!(" (from <code>{}</code>)", h(f)))
        .unwrap_or_default();
    format!(
        "{} <code>{}</code>{from} <span class=\"badge {class}\">{word}</span>{chart}",
        h(kind),
        h(name)
    )
}

/// What a unit's section says before its objects: its rename, what applies it, why it was
/// not compared, what the filters hid.
fn unit_notes(u: &UnitReview, main: &mut String) {
    if let Some(line) = u.rename_line() {
        let _ = writeln!(main, "<p class=\"renamed\">{}</p>", message(&line));
    }
    if let Some(p) = &u.problem {
        let _ = writeln!(main, "<p><strong>Not compared</strong>: {}</p>", message(p));
    }
    if u.hidden.total() > 0 {
        let _ = writeln!(
            main,
            "<p class=\"note\">{} hidden by the filters.</p>",
            plural(u.hidden.total(), "change", "changes")
        );
    }
}

/// The navigation tree and the main column, built together so that each leaf of the tree
/// names its element in the page.
fn body(a: &Analysis, nav: &mut String, main: &mut String) {
    let mut ids = Ids::default();
    nav.push_str("<ul>\n");
    for c in a
        .clusters
        .iter()
        .filter(|c| c.units.iter().any(|u| u.outcome.shown()))
    {
        let cid = ids.next("c");
        let n_changed = c.units.iter().filter(|u| u.outcome.shown()).count();
        let _ = writeln!(
            nav,
            "<li class=\"group\"><details open><summary title=\"{}\"><strong>{}</strong> <span class=\"badge changed\">{n_changed}</span></summary><ul>",
            h(&c.name),
            breakable(&c.name)
        );
        let _ = writeln!(
            main,
            "<section class=\"cluster group\" id=\"{cid}\"><h2>Cluster <code>{}</code></h2>",
            h(&c.name)
        );
        for u in c.units.iter().filter(|u| u.outcome.shown()) {
            let uid = ids.next("u");
            let path = [c.name.as_str(), u.kind.as_str(), u.name.as_str()];
            let (class, _) = outcome_badge(u.outcome);
            let leaf_unit = u.objects.is_empty();
            let _ = writeln!(
                main,
                "<section class=\"unit {}\" id=\"{uid}\" tabindex=\"-1\"><h3>{}</h3>",
                if leaf_unit { "leaf" } else { "group" },
                unit_heading(u)
            );
            if let Some(p) = &u.parent {
                let _ = writeln!(
                    main,
                    "<p class=\"note\">Applied by <code>{}</code>.</p>",
                    h(p)
                );
            }
            unit_notes(u, main);
            if let Some((before, after)) = &u.reordered {
                let _ = writeln!(
                    main,
                    "<p><span class=\"badge order\">order changed</span> The same objects in another order.</p><table class=\"fields\"><tbody><tr><td class=\"path\">before</td><td class=\"val code\">{}</td></tr><tr><td class=\"path\">after</td><td class=\"val code\">{}</td></tr></tbody></table>",
                    html(&before.join("\n"), false),
                    html(&after.join("\n"), false)
                );
            }
            if leaf_unit {
                let text = search_text(&[&path.join(" "), u.outcome.as_str()]);
                let _ = writeln!(
                    nav,
                    "<li class=\"leaf\" data-ref=\"{uid}\" data-text=\"{text}\"><a href=\"#{uid}\" title=\"{} {}\"><span class=\"name\">{} <code>{}</code></span> <span class=\"badge {class}\">{}</span></a></li>",
                    u.kind.as_str(),
                    h(&u.name),
                    u.kind.as_str(),
                    breakable(&u.name),
                    if u.reordered.is_some() { "order" } else { u.outcome.as_str() }
                );
            } else {
                let _ = writeln!(
                    nav,
                    "<li class=\"group\"><details open><summary title=\"{} {}\">{} <code>{}</code> <span class=\"badge {class}\">{}</span></summary><ul>",
                    u.kind.as_str(),
                    h(&u.name),
                    u.kind.as_str(),
                    breakable(&u.name),
                    u.objects.len()
                );
                for o in &u.objects {
                    let oid = ids.next("o");
                    let text =
                        search_text(&[&path.join(" "), &o.object.to_string(), o.change.as_str()]);
                    let _ = writeln!(
                        nav,
                        "<li class=\"leaf obj\" data-ref=\"{oid}\" data-text=\"{text}\" data-change=\"{}\"><a href=\"#{oid}\" title=\"{}\"><span class=\"badge {}\">{}</span> <span class=\"name\">{} {}</span></a></li>",
                        badge_class(o.change),
                        h(&o.object.to_string()),
                        badge_class(o.change),
                        badge_sign(o.change),
                        h(&o.object.kind),
                        breakable(&o.object.namespaced_name())
                    );
                    object(o, &oid, main);
                }
                nav.push_str("</ul></details></li>\n");
            }
            main.push_str("</section>\n");
        }
        nav.push_str("</ul></details></li>\n");
        main.push_str("</section>\n");
    }
    nav.push_str("</ul>\n");
}

/// The whole report as one HTML page.
#[must_use]
pub fn report(a: &Analysis) -> String {
    let (mut nav, mut main) = (String::new(), String::new());
    summary(a, &mut main);
    body(a, &mut nav, &mut main);
    sections(a, &mut main);
    let title = format!("{}: {} → {}", a.title, a.base, a.head);
    let mut out = String::with_capacity(nav.len() + main.len() + CSS.len() + JS.len() + 2048);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"generator\" content=\"fluxsim-review\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        hash(CSS),
        hash(JS),
        h(&title)
    );
    let _ = writeln!(
        out,
        "<header class=\"top\"><h1>{} <span class=\"rev\">{}</span> → <span class=\"rev\">{}</span></h1>\
         <div class=\"tools\"><input id=\"filter\" type=\"search\" placeholder=\"Filter objects (press /)\" aria-label=\"Filter objects\" autocomplete=\"off\">\
         <span id=\"count\" class=\"count\"></span>\
         <span role=\"group\" aria-label=\"View\"><button id=\"view-split\" type=\"button\" aria-pressed=\"true\">Side by side</button> \
         <button id=\"view-unified\" type=\"button\" aria-pressed=\"false\">Unified</button></span>\
         <button id=\"theme\" type=\"button\">Theme: auto</button>\
         <span class=\"keys\"><kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>/</kbd> filter · <kbd>u</kbd> view · <kbd>t</kbd> theme</span></div></header>",
        h(&a.title),
        h(&a.base),
        h(&a.head)
    );
    let _ = write!(
        out,
        "<div class=\"layout\">\n<nav id=\"nav\" aria-label=\"Changes\">\n{nav}</nav>\n<main id=\"main\">\n{main}</main>\n</div>\n<script>{JS}</script>\n</body>\n</html>\n"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_the_inline_style_and_script_by_hash() {
        let page = report(&crate::analysis::analyze(
            &crate::model::Review::default(),
            &crate::strip::Filters::new(),
        ));
        assert!(page.contains(&format!("style-src {}", hash(CSS))));
        assert!(page.contains(&format!("<style>{CSS}</style>")));
        assert!(page.contains(&format!("<script>{JS}</script>")));
        assert!(!JS.contains("</script") && !CSS.contains("</style"));
    }

    #[test]
    fn a_path_breaks_only_between_its_segments() {
        assert_eq!(
            path_html("spec.containers[name=app].image"),
            "<span class=\"seg\">spec.</span><wbr><span class=\"seg\">containers</span><wbr>\
             <span class=\"seg\">[name=<wbr>app].</span><wbr><span class=\"seg\">image</span>"
        );
        // Escaped first: the repository's text is never markup.
        assert_eq!(
            path_html("metadata.\"a/<b>\""),
            "<span class=\"seg\">metadata.</span><wbr><span class=\"seg\">&quot;a/</span><wbr>\
             <span class=\"seg\">&lt;b&gt;&quot;</span>"
        );
    }

    #[test]
    fn a_long_name_may_wrap_after_its_dots_and_slashes() {
        assert_eq!(breakable("default/a.b-c<"), "default/<wbr>a.<wbr>b-c&lt;");
    }

    #[test]
    fn a_verdict_is_drawn_in_svg_not_emoji() {
        for passed in [Some(true), Some(false)] {
            let review = crate::model::Review {
                verdict: Some(crate::model::Verdict {
                    passed,
                    text: "\u{1f424} the proof".to_string(),
                }),
                ..crate::model::Review::default()
            };
            let page = report(&crate::analysis::analyze(
                &review,
                &crate::strip::Filters::new(),
            ));
            assert!(page.contains("<svg class=\"icon "), "{page}");
            assert!(
                !page
                    .chars()
                    .any(|c| matches!(u32::from(c), 0x2600..=0x27BF | 0x1F300..=0x1FAFF)),
                "{page}"
            );
        }
    }
}
