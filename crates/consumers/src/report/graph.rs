//! Printing the graph check: the cold-start waves as text and JSON, and the graph as
//! Graphviz DOT and Mermaid for pictures in a pull request.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use super::layout::Layout;
use crate::flux::NamespacedName;
use crate::graph::{ClusterGraph, EdgeKind, GraphReport};

use super::escape::{dot_string, mermaid_label, OneLine};
use super::findings::{counts, findings_json};
use super::markdown::{md, Code, Markdown, Message, Plural};

fn ids(wave: &[NamespacedName]) -> String {
    wave.iter()
        .map(|id| OneLine(id).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The verdict first (what never becomes Ready, the findings counted), then per cluster its
/// waves and what never becomes Ready (those kept out by the same reason together), the CRD
/// groups nothing defines (each once, with the fluxsim.toml entries that declare it and the
/// bootstrap's hints), the other findings (errors and warnings, alike ones once, info
/// counted: `report::quiet`; all with `--verbose`), and their count. Fits 80 columns unless
/// `--wide`.
#[must_use]
pub fn graph_text(r: &GraphReport, layout: Layout) -> String {
    let mut out = String::new();
    let [info, warning, error] = counts(&r.findings);
    let counted = format!(
        "{} ({}, {}, {info} info)",
        super::plural(r.findings.len(), "finding"),
        super::plural(error, "error"),
        super::plural(warning, "warning")
    );
    let total: usize = r.clusters.iter().map(|c| c.kustomizations.len()).sum();
    let ready: usize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| k.never_ready.is_none())
        .count();
    // The findings in short: only the severities there are.
    let found = if r.findings.is_empty() {
        "no findings".to_string()
    } else {
        let parts: Vec<String> = [
            (error, super::plural(error, "error")),
            (warning, super::plural(warning, "warning")),
            (info, format!("{info} info")),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, s)| s)
        .collect();
        format!(
            "{}: {}",
            super::plural(r.findings.len(), "finding"),
            parts.join(", ")
        )
    };
    let verdict = if r.clusters.iter().all(ClusterGraph::converges) {
        format!(
            "graph: all {} become Ready ({}); {found}",
            super::plural(total, "Kustomization"),
            super::plural(r.clusters.len(), "cluster"),
        )
    } else {
        format!("graph: {ready} of {total} Kustomizations become Ready; {found}")
    };
    out.push_str(&layout.wrap("", &verdict, "  "));
    for c in &r.clusters {
        cluster_text(c, layout, &mut out);
    }
    let listed = missing_groups_text(r, layout, &mut out);
    // The findings the CRD groups above did not list (all with --verbose), quietly.
    let rest = super::quiet::listing(
        r.findings.iter().filter(|f| layout.verbose || !listed(f)),
        "",
        layout,
    );
    out.push_str(&rest.text);
    out.extend(rest.hint());
    let _ = writeln!(out, "{counted}");
    out
}

/// A cluster's waves and what never becomes Ready.
fn cluster_text(c: &ClusterGraph, layout: Layout, out: &mut String) {
    let total = c.kustomizations.len();
    let never: Vec<_> = c
        .kustomizations
        .iter()
        .filter_map(|k| k.never_ready.as_ref().map(|w| (&k.id, w)))
        .collect();
    let head = if never.is_empty() && c.missing.is_empty() {
        format!(
            "cluster {}: all {} become Ready in {}",
            OneLine(&c.name),
            super::plural(total, "Kustomization"),
            super::plural(c.waves.len(), "wave")
        )
    } else {
        format!(
            "cluster {}: {} of {total} Kustomizations never become Ready",
            OneLine(&c.name),
            never.len()
        )
    };
    out.push_str(&layout.wrap("", &head, "  "));
    for (i, w) in c.waves.iter().enumerate() {
        out.push_str(&layout.wrap(&format!("  wave {i}: "), &ids(w), "    "));
    }
    // Kustomizations kept out for the same reason (a parent that never applies them), as
    // one entry.
    let mut by_reason: BTreeMap<&String, Vec<&NamespacedName>> = BTreeMap::new();
    for (id, why) in &never {
        by_reason.entry(why).or_default().push(id);
    }
    // The causes first, one a line; then what they keep out, by reason.
    for (id, why) in &never {
        if by_reason.get(why).is_some_and(|same| same.len() == 1) {
            out.push_str(&layout.wrap(
                "  never ready: ",
                &format!("{}: {why}", OneLine(id)),
                "    ",
            ));
        }
    }
    for (why, same) in by_reason.iter().filter(|(_, same)| same.len() > 1) {
        out.push_str(&layout.wrap(
            &format!("  never ready ({} Kustomizations): ", same.len()),
            &format!("{why}: {}", ids_of(same, layout)),
            "    ",
        ));
    }
}

/// How many names a list of Kustomizations shows before `and N more` (unless `--verbose`).
const IDS_SHOWN: usize = 10;

fn ids_of(list: &[&NamespacedName], layout: Layout) -> String {
    let shown = if layout.verbose {
        list.len()
    } else {
        IDS_SHOWN.min(list.len())
    };
    let mut out = list[..shown]
        .iter()
        .map(|id| OneLine(id).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if shown < list.len() {
        let _ = write!(
            out,
            " and {} more (--verbose lists them)",
            list.len() - shown
        );
    }
    out
}

/// The group of a finding about a CRD group that nothing defines (FS203, FS215), if it is.
fn missing_group_of(f: &crate::finding::Finding) -> Option<String> {
    use crate::graph::rules::{CRD_MISSING, CRD_PRESUMED_FROM_HELM_NOT_AWAITED};
    if f.rule != CRD_MISSING.id && f.rule != CRD_PRESUMED_FROM_HELM_NOT_AWAITED.id {
        return None;
    }
    let kind = f.related("kind");
    Some(kind.first()?.split_once('.')?.1.to_string())
}

/// How many places a CRD group lists before `and N more` (unless `--verbose`).
const PLACES_SHOWN: usize = 3;

/// The CRD groups nothing defines, each once: the custom resources that need it (a few,
/// unless `--verbose`), what the bootstrap shows, and the fluxsim.toml entry that declares
/// them. Gives back which findings it listed (the text leaves them out of the findings).
fn missing_groups_text<'r>(
    r: &'r GraphReport,
    layout: Layout,
    out: &mut String,
) -> impl Fn(&crate::finding::Finding) -> bool + 'r {
    let listed = move |f: &crate::finding::Finding| {
        missing_group_of(f).is_some_and(|g| r.missing_crd_groups.iter().any(|m| m.group == g))
    };
    if r.missing_crd_groups.is_empty() {
        return listed;
    }
    let _ = writeln!(
        out,
        "CRD groups that no manifest and no fluxsim.toml entry defines ({}):",
        r.missing_crd_groups.len()
    );
    let several = r.clusters.len() > 1;
    for g in &r.missing_crd_groups {
        let kinds: Vec<&str> = g.kinds.iter().map(String::as_str).collect();
        let mut head = format!(
            "{} ({}): {}",
            OneLine(&g.group),
            kinds.join(", "),
            super::plural(g.findings, "custom resource")
        );
        if several {
            let clusters: Vec<String> = g.clusters.iter().map(|c| OneLine(c).to_string()).collect();
            let _ = write!(head, " in {}", clusters.join(", "));
        }
        out.push_str(&layout.wrap("  ", &head, "    "));
        let places: Vec<String> = r
            .findings
            .iter()
            .filter(|f| missing_group_of(f).as_deref() == Some(g.group.as_str()))
            .map(|f| {
                let at = f
                    .location
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |l| OneLine(l).to_string());
                format!("{at} ({}[{}])", f.severity, f.rule)
            })
            .collect();
        let shown = if layout.verbose {
            places.len()
        } else {
            PLACES_SHOWN.min(places.len())
        };
        for p in &places[..shown] {
            out.push_str(&layout.wrap("    ", p, "      "));
        }
        if shown < places.len() {
            let _ = writeln!(
                out,
                "    and {} more (--verbose, or -o json)",
                places.len() - shown
            );
        }
        for h in &g.hints {
            out.push_str(&layout.wrap("    bootstrap: ", &OneLine(h).to_string(), "      "));
        }
    }
    // The declaration, ready to copy: the groups the bootstrap shows, else every group.
    let hinted: Vec<&str> = r
        .missing_crd_groups
        .iter()
        .filter(|g| !g.hints.is_empty())
        .map(|g| g.group.as_str())
        .collect();
    let groups: Vec<&str> = if hinted.is_empty() {
        r.missing_crd_groups
            .iter()
            .map(|g| g.group.as_str())
            .collect()
    } else {
        hinted
    };
    out.push_str(&layout.wrap(
        "",
        "If the cluster's bootstrap installs them before Flux, declare them in fluxsim.toml \
         (a chart that Flux installs is `[[helm_crds]]`: the findings name the candidates):",
        "  ",
    ));
    let _ = writeln!(out, "  [bootstrap]\n  crd_groups = [");
    for g in groups {
        let _ = writeln!(out, "    \"{}\",", OneLine(g));
    }
    let _ = writeln!(out, "  ]");
    listed
}

/// The report as stable JSON: clusters (waves, Kustomizations, edges, missing names) and
/// findings.
#[must_use]
pub fn graph_json(r: &GraphReport) -> String {
    let clusters: Vec<serde_json::Value> = r
        .clusters
        .iter()
        .map(|c| {
            let r = |id: &NamespacedName| super::json::kustomization(&id.to_string());
            json!({
                "name": c.name,
                "converges": c.converges(),
                "waves": c.waves.iter().map(|w| w.iter().map(r).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "kustomizations": c.kustomizations.iter().map(|k| json!({
                    "kustomization": r(&k.id),
                    "path": k.path,
                    "wait": k.wait,
                    "prune": k.prune,
                    "wave": k.wave,
                    "neverReady": k.never_ready,
                    "location": k.location,
                })).collect::<Vec<_>>(),
                "edges": c.edges.iter().map(|e| json!({
                    "from": r(&e.from),
                    "to": r(&e.to),
                    "kind": e.kind,
                })).collect::<Vec<_>>(),
                "missing": c.missing.iter().map(r).collect::<Vec<_>>(),
            })
        })
        .collect();
    let missing: Vec<serde_json::Value> = r
        .missing_crd_groups
        .iter()
        .map(|g| {
            json!({
                "group": g.group,
                "kinds": g.kinds,
                "findings": g.findings,
                "clusters": g.clusters,
                "bootstrapHints": g.hints,
            })
        })
        .collect();
    let v = super::json::document(
        "GraphReport",
        json!({
            "clusters": clusters,
            "findings": findings_json(&r.findings),
            "missingCrdGroups": missing,
        }),
    );
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// A node of a picture: its name, its state (`wave 0`, `never ready`, `missing`: fluxsim's
/// words) and whether it never becomes Ready or is missing. Each picture escapes the name
/// for its own syntax and puts the state on a line of its own.
struct PicNode<'a> {
    name: &'a str,
    state: String,
    bad: bool,
    missing: bool,
}

/// Every node of a cluster's picture, by id: the Kustomizations, then the missing names.
fn pic_nodes(c: &ClusterGraph) -> BTreeMap<&NamespacedName, PicNode<'_>> {
    let mut nodes = BTreeMap::new();
    for k in &c.kustomizations {
        let state = match k.wave {
            Some(w) => format!("wave {w}"),
            None => "never ready".to_string(),
        };
        nodes.insert(
            &k.id,
            PicNode {
                name: &k.id.name,
                state,
                bad: k.wave.is_none(),
                missing: false,
            },
        );
    }
    for m in &c.missing {
        nodes.insert(
            m,
            PicNode {
                name: &m.name,
                state: "missing".to_string(),
                bad: true,
                missing: true,
            },
        );
    }
    nodes
}

/// Graphviz DOT: one subgraph per cluster; `dependsOn` edges solid, "applies" edges dashed,
/// from what comes first to what comes after; what never becomes Ready in red.
#[must_use]
pub fn graph_dot(r: &GraphReport) -> String {
    let mut out = String::from(
        "digraph fluxsim {\n  rankdir=LR;\n  node [shape=box, fontname=\"sans-serif\"];\n",
    );
    for (ci, c) in r.clusters.iter().enumerate() {
        let key = |id: &NamespacedName| dot_string(&format!("{}/{id}", c.name));
        let _ = writeln!(out, "  subgraph cluster_{ci} {{");
        let _ = writeln!(out, "    label=\"{}\";", dot_string(&c.name));
        for (id, n) in pic_nodes(c) {
            let mut attrs = format!("label=\"{}\\n{}\"", dot_string(n.name), n.state);
            if n.bad {
                attrs.push_str(", color=red");
            }
            if n.missing {
                attrs.push_str(", style=dashed");
            }
            let _ = writeln!(out, "    \"{}\" [{attrs}];", key(id));
        }
        for e in &c.edges {
            let style = match e.kind {
                EdgeKind::DependsOn => "",
                EdgeKind::Applies => " [style=dashed, color=gray]",
            };
            let _ = writeln!(
                out,
                "    \"{}\" -> \"{}\"{style};",
                key(&e.from),
                key(&e.to)
            );
        }
        out.push_str("  }\n");
    }
    out.push_str(DOT_LEGEND);
    out.push_str("}\n");
    out
}

/// What the line styles and colours of the DOT picture mean, drawn beside it.
const DOT_LEGEND: &str = "  subgraph cluster_legend {
    label=\"legend\";
    style=dotted;
    \"legend/a\" [label=\"A\", shape=plaintext];
    \"legend/b\" [label=\"B\", shape=plaintext];
    \"legend/c\" [label=\"C\", shape=plaintext];
    \"legend/d\" [label=\"D\", shape=plaintext];
    \"legend/a\" -> \"legend/b\" [label=\"B dependsOn A\"];
    \"legend/c\" -> \"legend/d\" [label=\"C applies D\", style=dashed, color=gray];
    \"legend/never\" [label=\"never Ready\", color=red];
    \"legend/missing\" [label=\"missing\", color=red, style=dashed];
  }
";

/// The graph for a pull request: a summary per cluster, the Mermaid flowchart in a
/// ```` ```mermaid ```` block (which GitHub and GitLab draw), then the findings.
#[must_use]
pub fn graph_markdown(r: &GraphReport) -> String {
    let mut doc = Markdown::new();
    md!(doc, "## fluxsim graph\n\n");
    for c in &r.clusters {
        let never = c
            .kustomizations
            .iter()
            .filter(|k| k.never_ready.is_some())
            .count();
        md!(
            doc,
            "- {}: {} in {}",
            Code(&c.name),
            Plural(c.kustomizations.len(), "Kustomization"),
            Plural(c.waves.len(), "wave")
        );
        if never > 0 {
            md!(doc, ", **{} never become Ready**", never);
        }
        md!(doc, "\n");
    }
    md!(doc, "\n");
    doc.fenced("mermaid", &graph_mermaid(r));
    md!(
        doc,
        "\nSolid arrows: `dependsOn`; dashed: applies; red: never becomes Ready.\n"
    );
    if !r.findings.is_empty() {
        md!(doc, "\n| finding | where |\n|---|---|\n");
        for f in &r.findings {
            md!(
                doc,
                "| {}[{}]: {} | ",
                f.severity.as_str(),
                f.rule,
                Message(&f.message)
            );
            if let Some(l) = &f.location {
                md!(doc, "{} |\n", Code(l));
            } else {
                md!(doc, "{} |\n", Code("-"));
            }
        }
    }
    doc.finish()
}

/// Mermaid `flowchart LR`: one subgraph per cluster; `dependsOn` edges `-->`, "applies"
/// edges `-.->`; what never becomes Ready gets the `never` class (red).
#[must_use]
pub fn graph_mermaid(r: &GraphReport) -> String {
    let mut out = String::from("flowchart LR\n");
    let mut bad = Vec::new();
    for (ci, c) in r.clusters.iter().enumerate() {
        let nodes = pic_nodes(c);
        let index: BTreeMap<&NamespacedName, String> = nodes
            .keys()
            .enumerate()
            .map(|(i, id)| (*id, format!("c{ci}n{i}")))
            .collect();
        let _ = writeln!(out, "  subgraph c{ci}[\"{}\"]", mermaid_label(&c.name));
        for (id, n) in &nodes {
            let _ = writeln!(
                out,
                "    {}[\"{}<br/>{}\"]",
                index[id],
                mermaid_label(n.name),
                n.state
            );
            if n.bad {
                bad.push(index[id].clone());
            }
        }
        for e in &c.edges {
            let arrow = match e.kind {
                EdgeKind::DependsOn => "-->",
                EdgeKind::Applies => "-.->",
            };
            if let (Some(f), Some(t)) = (index.get(&e.from), index.get(&e.to)) {
                let _ = writeln!(out, "    {f} {arrow} {t}");
            }
        }
        out.push_str("  end\n");
    }
    if !bad.is_empty() {
        out.push_str("  classDef never stroke:#d00,stroke-width:2px,color:#d00\n");
        let _ = writeln!(out, "  class {} never", bad.join(","));
    }
    out
}
