//! Everything fluxsim prints: tables for people, JSON for programs, files for `--out`.

pub mod audit;
pub mod diff;
pub mod escape;
pub mod findings;
pub mod graph;
pub mod images;
pub mod limit;
pub mod markdown;
pub mod out;

use std::fmt::Write as _;

use serde_json::json;

use crate::model::RepoRender;
use crate::model::{KustomizationRender, Status};
use escape::OneLine;

pub use crate::text::plural;

/// The default table: one line per Kustomization, then problems and a summary.
#[must_use]
pub fn render_table(r: &RepoRender) -> String {
    let mut rows = vec![[
        "CLUSTER".to_string(),
        "KUSTOMIZATION".into(),
        "PATH".into(),
        "OBJECTS".into(),
        "SUBST".into(),
        "STATUS".into(),
        "SHA256".into(),
    ]];
    let mut problems = String::new();
    for c in &r.clusters {
        for k in &c.kustomizations {
            let a = k.artifact.as_ref();
            // Names and paths on one line each (a name may hold a newline: the API server
            // would refuse it, the repository does not).
            rows.push([
                OneLine(&c.name).to_string(),
                OneLine(&k.kustomization.id).to_string(),
                OneLine(&k.kustomization.path).to_string(),
                a.map_or("-".into(), |a| a.objects.len().to_string()),
                if k.substituted { "yes" } else { "no" }.into(),
                k.status.as_str().into(),
                a.map_or("-".into(), |a| a.sha256[..12].to_string()),
            ]);
            match &k.status {
                // A Helm release whose chart was not fetched says why (`--helm`).
                Status::External(e) if crate::model::is_release(k) => {
                    let _ = writeln!(
                        problems,
                        "{}: {} {e}",
                        OneLine(&c.name),
                        OneLine(&k.kustomization.id)
                    );
                }
                Status::Failed(e) | Status::Blocked(e) | Status::NeedsNetwork(e) => {
                    let _ = writeln!(
                        problems,
                        "{}: {} {}: {e}",
                        OneLine(&c.name),
                        OneLine(&k.kustomization.id),
                        k.status.as_str()
                    );
                }
                _ => {}
            }
            for n in &k.notes {
                let _ = writeln!(
                    problems,
                    "{}: {} note: {n}",
                    OneLine(&c.name),
                    OneLine(&k.kustomization.id)
                );
            }
            // Which feature cost the user the kustomize binary (issue: every delegation
            // reason is printed).
            if let Some(why) = &k.delegated {
                let _ = writeln!(
                    problems,
                    "{}: {} built by kustomize, not natively: {why}",
                    OneLine(&c.name),
                    OneLine(&k.kustomization.id)
                );
            }
        }
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out.push_str(&problems);
    out.push_str(&summary_line(r));
    out.push_str(&external_hint(r));
    out
}

/// `2 clusters, 16/16 Kustomizations rendered, 23 builds (...)`: what rendered, and how.
fn summary_line(r: &RepoRender) -> String {
    // Helm releases (`--helm`) are counted on a line of their own.
    let total: usize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| !crate::model::is_release(k))
        .count();
    let ok: usize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| k.status == Status::Rendered && !crate::model::is_release(k))
        .count();
    let cached = if r.stored_hits > 0 {
        format!(", {} from the build cache", r.stored_hits)
    } else {
        String::new()
    };
    let stats = r
        .builder_stats
        .as_ref()
        .map_or_else(String::new, |s| format!("; {s}"));
    let count = |what: &str| {
        r.clusters
            .iter()
            .flat_map(|c| &c.kustomizations)
            .filter(|k| k.status.as_str() == what && !crate::model::is_release(k))
            .count()
    };
    let mut others = String::new();
    for (what, says) in [
        ("failed", "failed"),
        ("external", "external"),
        ("suspended", "suspended"),
        ("needs-network", "need the network (--allow-network)"),
    ] {
        let n = count(what);
        if n > 0 {
            let _ = write!(others, ", {n} {says}");
        }
    }
    // "kustomize builds" only when a kustomize process made some of them: the native
    // builder's are builds all the same.
    let by_kustomize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .any(|k| k.built_by == Some(crate::model::Maker::Kustomize));
    let builds = if by_kustomize && r.builds_run > 0 {
        format!(
            "{} kustomize build{}",
            r.builds_run,
            if r.builds_run == 1 { "" } else { "s" }
        )
    } else {
        plural(r.builds_run, "build")
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}, {ok}/{total} Kustomization{} rendered{others}, {builds}{cached} ({}{stats})",
        plural(r.clusters.len(), "cluster"),
        if total == 1 { "" } else { "s" },
        r.builder
    );
    if let Some(helm) = &r.helm_summary {
        let _ = writeln!(out, "{helm}");
    }
    out
}

/// For external Kustomizations, the `--source` flags that would render them (one per
/// source, with how many Kustomizations it holds).
fn external_hint(r: &RepoRender) -> String {
    let mut by_source: std::collections::BTreeMap<String, usize> =
        std::collections::BTreeMap::new();
    for k in r.clusters.iter().flat_map(|c| &c.kustomizations) {
        if let (Status::External(_), Some(src)) = (&k.status, &k.kustomization.source_ref) {
            *by_source
                .entry(OneLine(format!("{}/{}/{}", src.kind, src.namespace, src.name)).to_string())
                .or_default() += 1;
        }
    }
    if by_source.is_empty() {
        return String::new();
    }
    let n: usize = by_source.values().sum();
    let flags: Vec<String> = by_source
        .iter()
        .map(|(s, n)| format!("--source {s}=PATH ({n})"))
        .collect();
    format!(
        "{n} external: their source is not this repository; a folder holding its content \
         renders them: {}\n",
        flags.join(", ")
    )
}

fn kustomization_json(k: &KustomizationRender) -> serde_json::Value {
    let (status, error) = match &k.status {
        Status::Rendered | Status::Suspended => (k.status.as_str(), None),
        Status::Failed(e) | Status::Blocked(e) | Status::External(e) | Status::NeedsNetwork(e) => {
            (k.status.as_str(), Some(e.clone()))
        }
    };
    json!({
        "name": k.kustomization.id.name,
        "namespace": k.kustomization.id.namespace,
        "path": k.kustomization.path,
        "dependsOn": k.kustomization.depends_on.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "wait": k.kustomization.wait,
        "prune": k.kustomization.prune,
        "status": status,
        "error": error,
        "substituted": k.substituted,
        "vars": k.vars,
        "unknownVars": k.unknown_vars,
        "varsUsed": k.vars_used,
        "notes": k.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "builtBy": k.built_by.map(crate::model::Maker::as_str),
        "delegated": k.delegated,
        "sha256": k.artifact.as_ref().map(|a| a.sha256.clone()),
        "objects": k.artifact.as_ref().map(|a| a.objects.clone()).unwrap_or_default(),
    })
}

/// The render as stable JSON.
#[must_use]
pub fn render_json(r: &RepoRender) -> String {
    let v = json!({
        "builder": r.builder,
        "clusters": r.clusters.iter().map(|c| json!({
            "name": c.name,
            "strict": c.strict,
            "strictFrom": c.strict_from,
            "waves": c.waves.iter().map(|w| w.iter().map(ToString::to_string).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "kustomizations": c.kustomizations.iter().map(kustomization_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}
