//! The Flux Operator's ResourceSets in the fixed point: each ResourceSet that a current render
//! applies is made an entry of the cluster's render ([`crate::resourceset`]) from what the
//! cluster holds at that step (its input providers, the sources of its copyFrom and
//! checksumFrom annotations); it is made again only when its key changes. Its objects are
//! the cluster's like any render's, and the Flux Kustomizations among them are applied by
//! it (`fixed_point`).

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde_json::Value;

use super::build::{Ctx, Key};
use super::objects::World;
use crate::flux::NamespacedName;
use crate::model::{DependencyState, KustomizationRender, Note};
use crate::resourceset::{self, apply::ClusterData, inputs::InputProvider, Request};
use crate::source::SourceFs;

/// A ResourceSet's entry and what it was made from.
pub(super) struct Made {
    /// [`resourceset::Planned::key`] of the entry.
    key: String,
    /// The entry.
    pub(super) render: KustomizationRender,
    /// The ResourceSet's `spec.dependsOn` (resolved to entries at the end).
    depends_on: Vec<resourceset::Dependency>,
}

/// The entries of the cluster, by entry id.
pub(super) type Entries = BTreeMap<NamespacedName, Made>;

/// A ResourceSet some render applies.
pub(super) struct Found {
    /// The ResourceSet as applied.
    object: std::sync::Arc<Value>,
    /// The render that applies it (index into the parents given to [`found`]).
    parent: NamespacedName,
    /// Where it is declared, when known.
    file: Option<String>,
}

/// Every ResourceSet the current renders apply (Kustomizations and ResourceSet entries), by
/// entry id; the first render (in id order) that applies one names it.
pub(super) fn found(
    fs: &SourceFs,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    entries: &Entries,
) -> BTreeMap<NamespacedName, Found> {
    let mut out = BTreeMap::new();
    let all = renders
        .iter()
        .map(|(id, (key, r))| (id, r, matches!(key.source, super::trees::Choice::Own)))
        .chain(entries.iter().map(|(id, m)| (id, &m.render, false)));
    for (id, r, own) in all {
        for o in r.artifact.iter().flat_map(|a| &a.objects) {
            if !resourceset::is_resourceset(&o.object) {
                continue;
            }
            let rset = NamespacedName {
                namespace: if o.id.namespace.is_empty() {
                    "default".into()
                } else {
                    o.id.namespace.clone()
                },
                name: o.id.name.clone(),
            };
            let file = declared_in(own.then_some(fs), r, o);
            out.entry(resourceset::entry_id(id, &rset))
                .or_insert_with(|| Found {
                    object: o.object.clone(),
                    parent: id.clone(),
                    file,
                });
        }
    }
    out
}

/// Where the ResourceSet `o` of `r`'s artifact is declared: its origin when tracked, else
/// the first file `r`'s build read that declares a ResourceSet of its name (with its line).
fn declared_in(
    fs: Option<&SourceFs>,
    r: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
) -> Option<String> {
    let line_in = |fs: &SourceFs, file: &str| {
        let text = fs.read_to_string(&fs.root().join(file)).ok()?;
        crate::locate::object_line(&text, resourceset::RSET_KIND, &o.id.name)
    };
    if let Some(file) = o.origin.as_ref().and_then(|g| g.path.clone()) {
        return Some(match fs.and_then(|fs| line_in(fs, &file)) {
            Some(line) => format!("{file}:{line}"),
            None => file,
        });
    }
    let fs = fs?;
    r.inputs
        .iter()
        .flatten()
        .find_map(|file| line_in(fs, file).map(|line| format!("{file}:{line}")))
}

/// The cluster's ResourceSetInputProviders.
fn providers(world: &World) -> Vec<InputProvider> {
    world
        .objects
        .values()
        .filter(|p| resourceset::is_input_provider(&p.object))
        .filter_map(|p| InputProvider::from_json(&p.object))
        .collect()
}

/// The cluster's ConfigMaps and Secrets, for copyFrom and checksumFrom.
fn cluster_data(world: &World) -> ClusterData<'_> {
    world
        .objects
        .iter()
        .filter(|(id, _)| id.group.is_empty() && matches!(id.kind.as_str(), "ConfigMap" | "Secret"))
        .map(|(id, p)| {
            (
                (id.kind.clone(), id.namespace.clone(), id.name.clone()),
                p.object.as_ref(),
            )
        })
        .collect()
}

/// Makes the entries of `found` whose key changed (new ones included) with what `world`
/// holds; gives the ids made.
pub(super) fn render_round(
    ctx: &Ctx<'_>,
    found: &BTreeMap<NamespacedName, Found>,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    entries: &mut Entries,
    world: &World,
    samples: &[crate::config::SampleInputs],
) -> Vec<NamespacedName> {
    let providers = providers(world);
    let data = cluster_data(world);
    let parent_of = |id: &NamespacedName| {
        renders
            .get(id)
            .map(|(_, r)| r)
            .or_else(|| entries.get(id).map(|m| &m.render))
    };
    let made: Vec<(NamespacedName, Made)> = found
        .par_iter()
        .filter_map(|(eid, f)| {
            let parent = parent_of(&f.parent)?;
            let req = Request {
                cluster: ctx.cluster,
                parent,
                object: &f.object,
                file: f.file.clone(),
                providers: &providers,
                samples,
            };
            let planned = resourceset::plan(&req, &ctx.opts.resourcesets);
            let key = planned.key(&data);
            if entries.get(eid).is_some_and(|m| m.key == key) {
                return None;
            }
            let depends_on = resourceset::ResourceSet::from_json(&f.object)
                .map(|r| r.depends_on)
                .unwrap_or_default();
            let render = planned.finish(&req, &data, ctx.cache.builder());
            Some((
                eid.clone(),
                Made {
                    key,
                    render,
                    depends_on,
                },
            ))
        })
        .collect();
    let ids: Vec<NamespacedName> = made.iter().map(|(id, _)| id.clone()).collect();
    for (id, m) in made {
        if entries.insert(id, m).is_none() {
            ctx.opts
                .progress
                .rendered
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    ids
}

/// A ResourceSet's `dependsOn` on ResourceSets, resolved to their entries (a dependency on a
/// Kustomization is already on the entry; on other objects, the operator waits for them to
/// exist, which the steady state does not: nothing to note).
pub(super) fn resolve_dependencies(entries: &mut Entries) {
    let by_rset: BTreeMap<NamespacedName, Vec<NamespacedName>> =
        entries.iter().fold(BTreeMap::new(), |mut m, (id, made)| {
            if let Some(r) = resourceset::rendered_by(&made.render) {
                m.entry(r).or_default().push(id.clone());
            }
            m
        });
    for made in entries.values_mut() {
        let Some(own) = resourceset::rendered_by(&made.render) else {
            continue;
        };
        for d in &made.depends_on {
            if d.kind != resourceset::RSET_KIND
                || !d
                    .api_version
                    .starts_with(&format!("{}/", resourceset::RSET_GROUP))
            {
                continue;
            }
            let target = NamespacedName {
                namespace: if d.namespace.is_empty() {
                    own.namespace.clone()
                } else {
                    d.namespace.clone()
                },
                name: d.name.clone(),
            };
            match by_rset.get(&target) {
                Some(ids) => made
                    .render
                    .kustomization
                    .depends_on
                    .extend(ids.iter().cloned()),
                None => made.render.notes.push(Note::Dependency {
                    dependency: format!("ResourceSet {target}"),
                    state: DependencyState::Missing,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn made(parent: &str, rset: &str, depends_on: Vec<resourceset::Dependency>) -> Made {
        let id = resourceset::entry_id(
            &NamespacedName {
                namespace: "flux-system".into(),
                name: parent.into(),
            },
            &NamespacedName {
                namespace: "flux-system".into(),
                name: rset.into(),
            },
        );
        let render = KustomizationRender::new(
            crate::flux::Kustomization::from_json(&json!({
                "apiVersion": resourceset::RSET_API_VERSION, "kind": "ResourceSet",
                "metadata": {"namespace": id.namespace, "name": id.name}, "spec": {"path": ""}
            }))
            .unwrap(),
            None,
            crate::model::Status::Rendered,
        );
        Made {
            key: String::new(),
            render,
            depends_on,
        }
    }

    fn dep(kind: &str, name: &str) -> resourceset::Dependency {
        resourceset::Dependency {
            api_version: "fluxcd.controlplane.io/v1".into(),
            kind: kind.into(),
            namespace: String::new(),
            name: name.into(),
        }
    }

    // flux-operator resourceset_controller.go checkDependencies: a dependency on a
    // ResourceSet names it by namespace (default: the ResourceSet's own) and name; in the
    // render it is that ResourceSet's entry, or a note when no render applies it.
    #[test]
    fn a_depends_on_a_resourceset_is_its_entry_or_a_note() {
        let mut entries = Entries::new();
        for m in [
            made("tenants", "policies", Vec::new()),
            made(
                "tenants",
                "apps",
                vec![dep("ResourceSet", "policies"), dep("ResourceSet", "gone")],
            ),
        ] {
            entries.insert(m.render.kustomization.id.clone(), m);
        }
        resolve_dependencies(&mut entries);
        let apps = &entries
            .values()
            .find(|m| m.render.kustomization.id.name.ends_with("/apps"))
            .unwrap()
            .render;
        assert_eq!(
            apps.kustomization.depends_on,
            [NamespacedName {
                namespace: "flux-system".into(),
                name: "tenants/rset/flux-system/policies".into()
            }]
        );
        assert_eq!(
            apps.notes,
            [Note::Dependency {
                dependency: "ResourceSet flux-system/gone".into(),
                state: DependencyState::Missing
            }]
        );
    }
}
