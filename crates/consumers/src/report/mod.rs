//! Everything fluxsim prints: tables for people, JSON for programs, files for `--out`.

pub mod audit;
pub mod change;
pub mod compare;
pub mod diff;
pub mod escape;
pub mod findings;
pub mod graph;
pub mod images;
pub mod json;
pub mod layout;
pub mod limit;
pub mod markdown;
pub mod out;
pub mod proof;
pub mod prove;
pub mod quiet;
pub mod review;
pub mod upgrade;
pub mod validate;
pub mod versions;

use std::fmt::Write as _;

use serde_json::json;

use crate::model::RepoRender;
use crate::model::{KustomizationRender, Status};
use escape::OneLine;

pub use crate::text::plural;

/// The render for people: the verdict (what rendered, of how many, in how many clusters),
/// then per cluster one row per Kustomization (objects, status, digest), then why what did
/// not render did not, and the notes (a note several Kustomizations of a cluster share
/// once, with their names, unless `--verbose`). Fits 80 columns (long names shortened in the middle);
/// `--wide` is the whole table on one line a row (cluster, path, substitution);
/// `--verbose` adds how it was built (builds, the build cache, the builder, every
/// delegation).
#[must_use]
pub fn render_table(r: &RepoRender, layout: layout::Layout) -> String {
    let mut out = layout.wrap("", &verdict_line(r), "  ");
    if let Some(helm) = &r.helm_summary {
        out.push_str(&layout.wrap("", helm, "  "));
    }
    if let Some(tool) = &r.resourceset_summary {
        out.push_str(&layout.wrap("", &OneLine(resourceset_line(r, tool)).to_string(), "  "));
    }
    // What the render's substitution rests on, said where it is not the default of the
    // release fluxsim reproduces (a cluster on an older Flux, a gate set off), or always
    // with --verbose.
    let said: Vec<(String, String)> = r
        .clusters
        .iter()
        .filter(|c| layout.verbose || !c.flux_strict)
        .map(|c| (c.name.clone(), crate::audit::flux_said(c)))
        .collect();
    out.push_str(&versions::assumed_lines(&said, "", layout));
    out.push_str(&if layout.wide {
        wide_rows(r, layout)
    } else {
        cluster_rows(r, layout)
    });
    // A note several Kustomizations of a cluster share (the same encrypted source, the same
    // var source made at run time) is said once, where it first comes, with their names.
    let repeated = repeated_notes(r, layout);
    let mut said: std::collections::BTreeSet<(&str, String)> = std::collections::BTreeSet::new();
    for (c, k) in r
        .clusters
        .iter()
        .flat_map(|c| c.kustomizations.iter().map(move |k| (c, k)))
    {
        let at = format!("{}: {} ", OneLine(&c.name), OneLine(&k.kustomization.id));
        match &k.status {
            // A Helm release whose chart was not fetched says why (`--helm`).
            Status::External(e) if crate::model::is_release(k) => {
                out.push_str(&layout.wrap("", &format!("{at}{e}"), "    "));
            }
            Status::Failed(e) | Status::Blocked(e) | Status::NeedsNetwork(e) => {
                out.push_str(&layout.wrap("", &format!("{at}{}: {e}", k.status.as_str()), "    "));
            }
            _ => {}
        }
        for n in &k.notes {
            let text = n.to_string();
            let key = (c.name.as_str(), text);
            let Some(names) = repeated.get(&key) else {
                out.push_str(&layout.wrap("", &format!("{at}note: {n}"), "    "));
                continue;
            };
            if said.insert(key) {
                out.push_str(&layout.wrap(
                    "",
                    &format!(
                        "{}: note on {} ({}): {n}",
                        OneLine(&c.name),
                        plural(names.len(), "Kustomization"),
                        names_of(names)
                    ),
                    "    ",
                ));
            }
        }
        // Which feature cost the user the kustomize binary (every delegation reason).
        if let (true, Some(why)) = (layout.verbose, &k.delegated) {
            out.push_str(&layout.wrap(
                "",
                &format!("{at}built by kustomize, not natively: {why}"),
                "    ",
            ));
        }
    }
    let hint = external_hint(r);
    if !hint.is_empty() {
        out.push_str(&layout.wrap("", &hint, "  "));
    }
    if layout.verbose {
        out.push_str(&layout.wrap("", &summary_line(r), "  "));
    }
    out
}

/// How many names a note said once for several Kustomizations shows before `and N more`.
const NOTE_NAMES_SHOWN: usize = 5;

/// The notes that several Kustomizations of a cluster have, word for word: (cluster, note)
/// to their names. None with `--verbose`, which says each note where it is.
fn repeated_notes(
    r: &RepoRender,
    layout: layout::Layout,
) -> std::collections::BTreeMap<(&str, String), Vec<String>> {
    let mut all: std::collections::BTreeMap<(&str, String), Vec<String>> =
        std::collections::BTreeMap::new();
    if layout.verbose {
        return all;
    }
    for c in &r.clusters {
        for k in &c.kustomizations {
            for n in &k.notes {
                let names = all.entry((c.name.as_str(), n.to_string())).or_default();
                let id = OneLine(&k.kustomization.id).to_string();
                if !names.contains(&id) {
                    names.push(id);
                }
            }
        }
    }
    all.retain(|_, names| names.len() > 1);
    all
}

/// `a, b, c, d, e and 9 more (--verbose lists them)`.
fn names_of(names: &[String]) -> String {
    let mut out = names
        .iter()
        .take(NOTE_NAMES_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NOTE_NAMES_SHOWN {
        let _ = write!(
            out,
            " and {} more (--verbose lists them)",
            names.len() - NOTE_NAMES_SHOWN
        );
    }
    out
}

/// `render: 18/18 Kustomizations rendered in 2 clusters; 1 failed`: the verdict.
fn verdict_line(r: &RepoRender) -> String {
    let ks = || {
        r.clusters
            .iter()
            .flat_map(|c| &c.kustomizations)
            .filter(|k| is_kustomization_entry(k))
    };
    let total = ks().count();
    let ok = ks().filter(|k| k.status == Status::Rendered).count();
    let mut others = Vec::new();
    for what in ["failed", "external", "suspended"] {
        let n = ks().filter(|k| k.status.as_str() == what).count();
        if n > 0 {
            others.push(format!("{n} {what}"));
        }
    }
    others.extend(network_count(r));
    let mut line = format!(
        "render: {ok}/{total} Kustomization{} rendered in {}",
        if total == 1 { "" } else { "s" },
        plural(r.clusters.len(), "cluster")
    );
    if !others.is_empty() {
        let _ = write!(line, "; {}", others.join(", "));
    }
    line
}

/// `1 needs the network (--allow-network)`, and, when what they declare below them could not
/// all be found offline, how many Kustomizations that hides (`2 need the network
/// (--allow-network; they hide 97 Kustomizations below them)`), each hidden one counted once per
/// cluster. `None` when none needs it.
fn network_count(r: &RepoRender) -> Option<String> {
    let needs: Vec<(&str, &KustomizationRender)> = r
        .clusters
        .iter()
        .flat_map(|c| c.kustomizations.iter().map(move |k| (c.name.as_str(), k)))
        .filter(|(_, k)| matches!(k.status, Status::NeedsNetwork(_)) && is_kustomization_entry(k))
        .collect();
    if needs.is_empty() {
        return None;
    }
    let hidden: std::collections::BTreeSet<(&str, &str)> = needs
        .iter()
        .flat_map(|(c, k)| {
            k.offline
                .iter()
                .flat_map(move |o| o.hides.iter().map(move |h| (*c, h.as_str())))
        })
        .collect();
    let n = needs.len();
    let (verb, subject, object) = if n == 1 {
        ("needs", "it hides", "it")
    } else {
        ("need", "they hide", "them")
    };
    Some(if hidden.is_empty() {
        format!("{n} {verb} the network (--network any)")
    } else {
        format!(
            "{n} {verb} the network (--network any; {subject} {} below {object})",
            plural(hidden.len(), "Kustomization")
        )
    })
}

/// Per cluster, a header and a row per Kustomization: name, objects, status, digest.
fn cluster_rows(r: &RepoRender, layout: layout::Layout) -> String {
    let mut rows = vec![vec![
        "KUSTOMIZATION".to_string(),
        "OBJECTS".into(),
        "STATUS".into(),
        "SHA256".into(),
    ]];
    for c in &r.clusters {
        for k in &c.kustomizations {
            let a = k.artifact.as_ref();
            rows.push(vec![
                OneLine(&k.kustomization.id).to_string(),
                a.map_or("-".into(), |a| a.objects.len().to_string()),
                k.status.as_str().into(),
                a.map_or("-".into(), |a| a.sha256[..12].to_string()),
            ]);
        }
    }
    // One table for every cluster (the same columns), cut at each cluster's heading.
    let table = layout.table("  ", &rows, 0);
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let mut out = String::new();
    for c in &r.clusters {
        let _ = writeln!(
            out,
            "cluster {}: {}",
            OneLine(&c.name),
            entry_counts(
                c.kustomizations
                    .iter()
                    .map(|k| k.kustomization.id.name.as_str())
            )
        );
        let _ = writeln!(out, "{header}");
        for line in lines.by_ref().take(c.kustomizations.len()) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// `--wide`: one table, a row per Kustomization with its cluster, path and substitution.
fn wide_rows(r: &RepoRender, layout: layout::Layout) -> String {
    let mut rows = vec![vec![
        "CLUSTER".to_string(),
        "KUSTOMIZATION".into(),
        "PATH".into(),
        "OBJECTS".into(),
        "SUBST".into(),
        "STATUS".into(),
        "SHA256".into(),
    ]];
    for c in &r.clusters {
        for k in &c.kustomizations {
            let a = k.artifact.as_ref();
            // Names and paths on one line each (a name may hold a newline: the API server
            // would refuse it, the repository does not).
            rows.push(vec![
                OneLine(&c.name).to_string(),
                OneLine(&k.kustomization.id).to_string(),
                OneLine(&k.kustomization.path).to_string(),
                a.map_or("-".into(), |a| a.objects.len().to_string()),
                if k.substituted { "yes" } else { "no" }.into(),
                k.status.as_str().into(),
                a.map_or("-".into(), |a| a.sha256[..12].to_string()),
            ]);
        }
    }
    layout.table("", &rows, 1)
}

/// `2 clusters, 16/16 Kustomizations rendered, 23 builds (...)`: what rendered, and how.
fn summary_line(r: &RepoRender) -> String {
    // Helm releases (`--helm`) are counted on a line of their own.
    let total: usize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| is_kustomization_entry(k))
        .count();
    let ok: usize = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| k.status == Status::Rendered && is_kustomization_entry(k))
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
            .filter(|k| k.status.as_str() == what && is_kustomization_entry(k))
            .count()
    };
    let mut others = String::new();
    for what in ["failed", "external", "suspended"] {
        let n = count(what);
        if n > 0 {
            let _ = write!(others, ", {n} {what}");
        }
    }
    if let Some(network) = network_count(r) {
        let _ = write!(others, ", {network}");
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
    format!(
        "{}, {ok}/{total} Kustomization{} rendered{others}, {builds}{cached} ({}{stats})",
        plural(r.clusters.len(), "cluster"),
        if total == 1 { "" } else { "s" },
        r.builder
    )
}

/// Whether an entry of the render is a Flux Kustomization (not a Helm release's or a
/// ResourceSet's entry, counted on lines of their own).
/// `15 Kustomizations and 8 ResourceSets`: render entries by what they are, from their ids
/// (a `--helm` release `<ks>/helm/<ns>/<name>`, a ResourceSet's `<ks>/rset/<ns>/<name>`;
/// a declared name holding either is encoded, `flux::id_segment`). Every report that counts
/// a cluster's or a repository's entries says it with this, so `render`'s lines and
/// `audit`'s verdict agree. Kinds with none are left out; no entry at all is `0
/// Kustomizations`.
pub fn entry_counts<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let (mut kustomizations, mut releases, mut resourcesets) = (0, 0, 0);
    for id in ids {
        if id.contains(crate::compare::HELM_SEPARATOR) {
            releases += 1;
        } else if id.contains("/rset/") {
            resourcesets += 1;
        } else {
            kustomizations += 1;
        }
    }
    let mut parts: Vec<String> = [
        (kustomizations, "Kustomization"),
        (releases, "HelmRelease"),
        (resourcesets, "ResourceSet"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| plural(n, what))
    .collect();
    match parts.len() {
        0 => plural(0, "Kustomization"),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}

fn is_kustomization_entry(k: &KustomizationRender) -> bool {
    !crate::model::is_release(k) && !crate::model::is_resourceset_entry(k)
}

/// `3/3 ResourceSets rendered (flux-operator v0.59.0; ...)`.
fn resourceset_line(r: &RepoRender, tool: &str) -> String {
    let entries: Vec<&KustomizationRender> = r
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter(|k| crate::model::is_resourceset_entry(k))
        .collect();
    let ok = entries
        .iter()
        .filter(|k| k.status == Status::Rendered)
        .count();
    let mut others = String::new();
    for what in ["failed", "suspended"] {
        let n = entries.iter().filter(|k| k.status.as_str() == what).count();
        if n > 0 {
            let _ = write!(others, ", {n} {what}");
        }
    }
    format!(
        "{ok}/{} ResourceSet{} rendered{others} ({tool})",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" }
    )
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
         renders them: {}",
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
    let mut v = json!({
        "name": k.kustomization.id.name,
        "namespace": k.kustomization.id.namespace,
        "path": k.kustomization.path,
        "dependsOn": k.kustomization.depends_on.iter().map(|d| json::kustomization(&d.to_string())).collect::<Vec<_>>(),
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
        "objects": k
            .artifact
            .as_ref()
            .map(|a| a.objects.iter().map(object_json).collect::<Vec<_>>())
            .unwrap_or_default(),
    });
    if let (Some(m), Some(o)) = (v.as_object_mut(), &k.offline) {
        // Needs the network: the Kustomizations declared below it that the render does not
        // hold (what it hides; those its own files declare were found and rendered).
        m.insert("hides".into(), json!(o.hides));
    }
    // A release's or a ResourceSet's entry keeps its whole id as `name` and says what it is.
    if let Some(m) = v.as_object_mut() {
        m.extend(json::entry_of(&k.kustomization.id.to_string()));
    }
    v
}

/// An object of a render's JSON: its fields as the artifact holds them, the origin
/// (`--validate`) in camelCase.
fn object_json(o: &crate::artifact::ArtifactObject) -> serde_json::Value {
    let mut v = serde_json::to_value(o).unwrap_or_default();
    if let Some(origin) = v.get_mut("origin") {
        *origin = json::camel_keys(origin.take());
    }
    v
}

/// The render as stable JSON.
#[must_use]
pub fn render_json(r: &RepoRender) -> String {
    let v = json::document(
        "RenderReport",
        json!({
            "builder": r.builder,
            "clusters": r.clusters.iter().map(|c| json!({
                "name": c.name,
                "strict": c.strict,
                "strictFrom": c.strict_from,
                "versions": json::versions(&c.versions),
                "waves": c.waves.iter().map(|w| w.iter().map(|id| json::kustomization(&id.to_string())).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "kustomizations": c.kustomizations.iter().map(kustomization_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
    );
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::entry_counts;

    #[test]
    fn entry_counts_name_kustomizations_releases_and_resourcesets_apart() {
        assert_eq!(
            entry_counts([
                "apps",
                "apps/rset/teams/onboarding",
                "apps/helm/apps/podinfo"
            ]),
            "1 Kustomization, 1 HelmRelease and 1 ResourceSet"
        );
        assert_eq!(
            entry_counts(["a", "b", "a/rset/x/y"]),
            "2 Kustomizations and 1 ResourceSet"
        );
        assert_eq!(entry_counts(["a"]), "1 Kustomization");
        assert_eq!(entry_counts(std::iter::empty()), "0 Kustomizations");
    }
}
