//! Printing the graph check: the cold-start waves as text and JSON, and the graph as
//! Graphviz DOT and Mermaid for pictures in a pull request.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use crate::flux::NamespacedName;
use crate::graph::{ClusterGraph, EdgeKind, GraphReport};

use super::escape::{dot_string, mermaid_label, OneLine};
use super::findings::{counts, findings_json, findings_text};
use super::markdown::{md, Code, Markdown, Message, Plural};

fn ids(wave: &[NamespacedName]) -> String {
    wave.iter()
        .map(|id| OneLine(id).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Per cluster: whether it converges and its waves, then what never becomes Ready; then the
/// findings and a summary line.
#[must_use]
pub fn graph_text(r: &GraphReport) -> String {
    let mut out = String::new();
    for c in &r.clusters {
        let total = c.kustomizations.len();
        let never: Vec<_> = c
            .kustomizations
            .iter()
            .filter_map(|k| k.never_ready.as_ref().map(|w| (&k.id, w)))
            .collect();
        if never.is_empty() && c.missing.is_empty() {
            let _ = writeln!(
                out,
                "cluster {}: all {} become Ready in {}",
                OneLine(&c.name),
                super::plural(total, "Kustomization"),
                super::plural(c.waves.len(), "wave")
            );
        } else {
            let _ = writeln!(
                out,
                "cluster {}: {} of {total} Kustomizations never become Ready",
                OneLine(&c.name),
                never.len()
            );
        }
        for (i, w) in c.waves.iter().enumerate() {
            let _ = writeln!(out, "  wave {i}: {}", ids(w));
        }
        for (id, why) in never {
            let _ = writeln!(out, "  never ready: {}: {why}", OneLine(id));
        }
    }
    out.push_str(&findings_text(&r.findings));
    let [info, warning, error] = counts(&r.findings);
    let _ = writeln!(
        out,
        "{} ({}, {}, {info} info)",
        super::plural(r.findings.len(), "finding"),
        super::plural(error, "error"),
        super::plural(warning, "warning")
    );
    out
}

/// The report as stable JSON: clusters (waves, Kustomizations, edges, missing names) and
/// findings.
#[must_use]
pub fn graph_json(r: &GraphReport) -> String {
    let clusters: Vec<serde_json::Value> = r
        .clusters
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "converges": c.converges(),
                "waves": c.waves.iter().map(|w| w.iter().map(ToString::to_string).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "kustomizations": c.kustomizations.iter().map(|k| json!({
                    "id": k.id.to_string(),
                    "path": k.path,
                    "wait": k.wait,
                    "prune": k.prune,
                    "wave": k.wave,
                    "neverReady": k.never_ready,
                    "location": k.location,
                })).collect::<Vec<_>>(),
                "edges": c.edges.iter().map(|e| json!({
                    "from": e.from.to_string(),
                    "to": e.to.to_string(),
                    "kind": e.kind,
                })).collect::<Vec<_>>(),
                "missing": c.missing.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = json!({ "clusters": clusters, "findings": findings_json(&r.findings) });
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
