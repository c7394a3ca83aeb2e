//! Printing `prove`: text for people, JSON for programs, Markdown for a pull-request summary.

use serde_json::Value;

use crate::report::diff::{
    diff_body, diff_body_json, diff_markdown_body, revisions_line, DiffCounts,
};
use crate::report::json as json_doc;
use crate::report::layout::Layout;
use crate::report::markdown::{md, plain_of, Code, Inline, Markdown, Message, Out, Plural, Text};
use crate::report::proof::{canary_lines, Blind, BlindClause, CanarySummary, Proof};

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
        let blind = (!p.blind.is_empty() && !p.allow_blind).then_some(BlindClause {
            blind: &p.blind,
            code: false,
            allowed: false,
        });
        // What head broke is the news: it leads; what did not render in base either is
        // counted apart, after it.
        let news = p.blind.iter().any(|b| b.broken_by_head);
        let mut sep = "";
        if let Some(b) = blind.as_ref().filter(|_| news) {
            md!(w, "{}", *b);
            sep = "; ";
        }
        if !p.expectation_met {
            md!(
                w,
                "{}expected {}, got {}",
                sep,
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
        if let Some(b) = blind.as_ref().filter(|_| !news) {
            md!(w, "{}{}", sep, *b);
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
        md!(
            doc,
            "{}\n\n",
            Message(crate::report::review::prove_verdict(p))
        );
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
