//! `graph --helm`: the CRDs a chart at hand installs, read from its release output (its
//! `crds/` and templated CRDs), stand for what `[[helm_crds]]` in fluxsim.toml would declare,
//! so the graph check's Helm presumptions (FS214, FS215) become exact. The releases
//! themselves are not nodes of the graph: helm-controller installs them, not a Kustomization.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::HelmCrds;
use crate::model::RepoRender;

/// Takes the release entries out of `render` and gives, per chart (as the graph reads a
/// HelmRelease's chart: `spec.chart.spec.chart`), the CRD groups its releases install.
pub fn chart_crds(render: &mut RepoRender) -> Vec<HelmCrds> {
    let mut by_chart: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in &render.clusters {
        for r in c
            .kustomizations
            .iter()
            .filter(|k| crate::model::is_release(k))
        {
            let Some(hr) = crate::helm::release_of(c, r) else {
                continue;
            };
            // The chart's name as the graph reads it (`graph::nodes::helm_chart`): the chart
            // of a template, the last segment of an OCIRepository's URL, else the ref's name.
            let chart = match &hr.chart {
                crate::helm::release::ChartRef::Template { chart, .. } => chart.clone(),
                crate::helm::release::ChartRef::Ref(r) => c
                    .kustomizations
                    .iter()
                    .flat_map(|k| k.artifact.iter().flat_map(|a| &a.objects))
                    .find(|o| {
                        r.kind == "OCIRepository"
                            && o.id.kind == r.kind
                            && o.id.name == r.name
                            && o.id.namespace == r.namespace
                    })
                    .and_then(|o| crate::flux::str_at(&o.object, &["spec", "url"]))
                    .and_then(|u| u.trim_end_matches('/').rsplit('/').next())
                    .map_or_else(|| r.name.clone(), str::to_string),
            };
            for o in r.artifact.iter().flat_map(|a| &a.objects) {
                if o.id.is_crd() {
                    if let Some(g) = crate::flux::str_at(&o.object, &["spec", "group"]) {
                        by_chart
                            .entry(chart.clone())
                            .or_default()
                            .insert(g.to_string());
                    }
                }
            }
        }
    }
    for c in &mut render.clusters {
        c.kustomizations.retain(|k| !crate::model::is_release(k));
    }
    by_chart
        .into_iter()
        .map(|(chart, groups)| HelmCrds {
            chart,
            groups: groups.into_iter().collect(),
        })
        .collect()
}
