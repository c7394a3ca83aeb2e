//! `audit --helm`: the `${...}` of a HelmRelease's merged values that reach the release's
//! manifests verbatim (FS114): the Kustomization that applies the HelmRelease did not
//! substitute them (no postBuild), or they were escaped (`$${VAR}`) on purpose.

use std::collections::BTreeSet;

use crate::audit::rules::HELM_VALUE_VERBATIM;
use crate::finding::{Finding, Location, Severity};
use crate::model::RepoRender;

/// Takes the release entries out of `render` and gives what they show.
pub fn verbatim_values(render: &mut RepoRender) -> Vec<Finding> {
    let expr = regex::Regex::new(r"\$\{[^}\s]*\}").expect("static regex");
    let mut out = Vec::new();
    for c in &render.clusters {
        let objects = crate::helm::cluster_objects(c);
        for r in c
            .kustomizations
            .iter()
            .filter(|k| crate::model::is_release(k))
        {
            let (Some(a), Some(hr)) = (&r.artifact, crate::helm::release_of(c, r)) else {
                continue;
            };
            let Ok(values) = crate::helm::values::merged_values(&hr, &objects) else {
                continue;
            };
            let text = values.to_string();
            let found: BTreeSet<&str> = expr.find_iter(&text).map(|m| m.as_str()).collect();
            let Some(parent) = c
                .kustomizations
                .iter()
                .find(|k| Some(&k.kustomization.id) == r.parent.as_ref())
            else {
                continue;
            };
            let file = parent
                .template
                .iter()
                .flat_map(|t| &t.objects)
                .find(|o| crate::helm::is_helm_release(&o.object) && o.id.name == hr.id.name)
                .and_then(|o| o.origin.as_ref())
                .and_then(|o| o.path.clone());
            for e in found {
                let Some(obj) = a.objects.iter().find(|o| o.yaml.contains(e)) else {
                    continue;
                };
                let escaped = parent.substituted;
                let mut f = Finding::new(
                    &HELM_VALUE_VERBATIM,
                    format!(
                        "`{e}` in the values of HelmRelease `{}` reaches `{}` of its release \
                         verbatim: {}",
                        hr.id,
                        obj.id,
                        if escaped {
                            "`{}` substitutes, so it was written `$${...}` on purpose"
                                .replace("{}", &parent.kustomization.id.name)
                        } else {
                            format!(
                                "`{}` does not substitute (no postBuild, or no var defined)",
                                parent.kustomization.id.name
                            )
                        }
                    ),
                )
                .in_cluster(c.name.clone())
                .in_kustomization(parent.kustomization.id.to_string())
                .about("expression", e)
                .about("object", obj.id.to_string());
                if escaped {
                    f = f.with_severity(Severity::Info);
                }
                if let Some(file) = &file {
                    f = f.at(Location::file(file.clone()));
                }
                out.push(f);
            }
        }
    }
    for c in &mut render.clusters {
        c.kustomizations.retain(|k| !crate::model::is_release(k));
    }
    out
}
