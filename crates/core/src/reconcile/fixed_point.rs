//! The fixed point of one cluster: render the root, find the Flux Kustomizations and var
//! sources it applies, render those, and repeat until no render changes (a Kustomization
//! renders again only when its [`Key`] changes); then the notes on dependencies.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::artifact_generator;
use super::build::{render_kustomization, Ctx, Key};
use super::objects::World;
use super::places::{declared_in, invalid_where};
use super::sources::{self, Lookup, Outside, Resolved};
use super::trees::{Choice, PathMap, SourceTree};
use super::world::{bootstrap_state, choose_source, source_id, world_of};
use super::{RenderOptions, MAX_ROUNDS};
use crate::cache::BuildCache;
use crate::discover::Cluster;
use crate::flux::{is_kustomization, Kustomization, NamespacedName};
use crate::model::{ClusterRender, DependencyState, KustomizationRender, Note, Status};
use crate::source::SourceFs;

/// Each Kustomization of the cluster with the one that applies it, as the current renders
/// say (a child's spec is its parent's rendered object), the root and what bootstrap
/// applies included; what no render applies any more is not among them.
pub(super) fn applied_kustomizations(
    fs: &SourceFs,
    cluster: &Cluster,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    entries: &super::resourcesets::Entries,
    boot_children: &[Kustomization],
) -> BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)> {
    let mut known = BTreeMap::new();
    known.insert(cluster.root.id.clone(), (cluster.root.clone(), None));
    // The files of a render from another tree are not this tree's; a ResourceSet's objects
    // come from no file.
    let all = renders
        .iter()
        .map(|(id, (key, r))| (id, r, matches!(key.source, Choice::Own).then_some(fs)))
        .chain(entries.iter().map(|(id, m)| (id, &m.render, None)));
    for (id, r, fs) in all {
        // A Kustomization that needs the network applies what its own files declare.
        for o in r.applied_objects() {
            if is_kustomization(&o.object) {
                if let Ok(child) = Kustomization::from_json(&o.object) {
                    let child = invalid_where(child, fs, r, o);
                    known
                        .entry(child.id.clone())
                        .or_insert((child, Some(id.clone())));
                }
            }
        }
    }
    for child in boot_children {
        known
            .entry(child.id.clone())
            .or_insert((child.clone(), Some(cluster.root.id.clone())));
    }
    known
}

/// Where the Kustomization `ks` of the cluster is declared (`file:line`): the root in its
/// cluster's file, another in the build of the Kustomization that applies it (`parent`, as
/// the current renders say).
fn kustomization_place(
    fs: &SourceFs,
    cluster: &Cluster,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    ks: &Kustomization,
    parent: Option<&NamespacedName>,
) -> Option<String> {
    let Some(parent) = parent else {
        let file = cluster.file.as_deref()?;
        let line = fs
            .read_to_string(&fs.root().join(file))
            .ok()
            .and_then(|text| crate::locate::object_line(&text, "Kustomization", &ks.id.name));
        return Some(match line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        });
    };
    let (key, r) = renders.get(parent)?;
    let own = matches!(key.source, Choice::Own).then_some(fs);
    r.artifact
        .iter()
        .flat_map(|a| &a.objects)
        .filter(|o| is_kustomization(&o.object))
        .find(|o| {
            crate::flux::id_segment(&o.id.name) == ks.id.name
                && (crate::flux::id_segment(&o.id.namespace) == ks.id.namespace
                    || o.id.namespace.is_empty())
        })
        .and_then(|o| declared_in(own, r, o))
}

/// Whether the cluster's kustomize-controller substitutes strictly, and what says so when a
/// gate does: fluxsim.toml, else the controller's `StrictPostBuildSubstitutions` feature gate
/// as the repository sets it, else the default of the Flux version the cluster runs (on
/// since kustomize-controller v1.9.0, Flux v2.9). `--no-strict` is the caller's.
pub(super) fn flux_strictness(
    outside: &Outside,
    world: &World,
    versions: &crate::versions::ClusterVersions,
) -> (bool, Option<String>) {
    let gate = outside
        .config
        .strict_gate()
        .map(|on| (on, crate::config::CONFIG_FILE.to_string()))
        .or_else(|| world.strict_gate());
    match gate {
        Some((on, from)) => (on, Some(from)),
        None => (versions.flux.version.strict_by_default(), None),
    }
}

/// Renders `todo` in parallel into `renders`; the ids rendered, in order.
pub(super) fn render_round(
    ctx: &Ctx<'_>,
    todo: Vec<(Kustomization, Option<NamespacedName>, Key)>,
    renders: &mut BTreeMap<NamespacedName, (Key, KustomizationRender)>,
) -> Vec<NamespacedName> {
    let rendered: Vec<KustomizationRender> = todo
        .par_iter()
        .map(|(ks, parent, key)| render_kustomization(ctx, ks, parent.clone(), key))
        .collect();
    let ids = rendered
        .iter()
        .map(|r| r.kustomization.id.clone())
        .collect();
    for ((_, _, key), r) in todo.into_iter().zip(rendered) {
        if renders
            .insert(r.kustomization.id.clone(), (key, r))
            .is_none()
        {
            ctx.opts
                .progress
                .rendered
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    ids
}

/// What still changed in the last of [`MAX_ROUNDS`] rounds fails, named.
pub(super) fn fail_unsettled(
    done: &mut BTreeMap<NamespacedName, KustomizationRender>,
    last: &[NamespacedName],
) {
    for id in last {
        if let Some(r) = done.get_mut(id) {
            r.artifact = None;
            r.status = Status::Failed(format!(
                "its vars did not settle after {MAX_ROUNDS} renders of the cluster: a var \
                 source depends on vars that it changes itself"
            ));
        }
    }
}

/// Renders one cluster in its steady state: what it applies once it has converged.
///
/// A fixed point (see "The steady state" in `docs/commands/render.md`): the objects that exist before Flux runs
/// (the root's own folder, `[[bootstrap.objects]]`) are on the cluster from the start; each
/// step renders every Kustomization whose vars can be resolved and whose spec, vars or
/// strictness changed since it was last rendered, then collects every object of every
/// render as the cluster's objects. `dependsOn` never holds a render back: order does not
/// change what is applied, only var sources do. When nothing moves while some
/// Kustomization still waits on a source, the fixed point settles: sources on no cluster
/// object are looked up in the repository's files, else are unknown (placeholders). What
/// still changes after [`MAX_ROUNDS`] steps fails, named.
#[allow(clippy::too_many_lines)] // The fixed point's one loop, read top to bottom.
pub(super) fn render_cluster(
    fs: &SourceFs,
    cluster: &Cluster,
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
    outside: &Outside,
    other_homes: &[String],
) -> ClusterRender {
    let ctx = Ctx {
        fs,
        map: &PathMap::Same,
        cluster: &cluster.name,
        cache,
        opts,
    };
    let own_source = cluster.root.source_ref.as_ref().map(source_id);
    let own_tree = std::sync::Arc::new(SourceTree::own(fs));
    let mut generators = artifact_generator::Cache::default();
    let mut fetched = super::remote_sources::Fetched::default();
    let inputs = artifact_generator::Inputs {
        own: own_source.clone(),
        own_tree: &own_tree,
        mapped: &outside.mapped,
    };
    let home = sources::home_of(fs, cluster);
    let (boot, boot_children, boot_notes) = bootstrap_state(&ctx, cluster, outside);
    let mut renders: BTreeMap<NamespacedName, (Key, KustomizationRender)> = BTreeMap::new();
    let mut entries = super::resourcesets::Entries::new();
    let mut waves = Vec::new();
    let mut settled = false;
    let mut last_pass = false;
    let mut converged = false;
    let mut last_round: Vec<NamespacedName> = Vec::new();
    let mut strict_from = None;
    let mut cluster_strict = opts.strict;
    let mut flux_strict = true;
    let mut versions = crate::versions::ClusterVersions::default();
    let mut seen: std::collections::BTreeSet<NamespacedName> = std::collections::BTreeSet::new();
    for _ in 0..MAX_ROUNDS {
        let world = world_of(&boot, &renders, &entries);
        let known = applied_kustomizations(fs, cluster, &renders, &entries, &boot_children);
        renders.retain(|id, _| known.contains_key(id));
        let rsets = super::resourcesets::found(fs, &renders, &entries);
        entries.retain(|id, _| rsets.contains_key(id));
        opts.progress
            .found_among(&mut seen, known.keys().chain(rsets.keys()));
        versions = world.versions(outside, &cluster.name, &home);
        let (on, from) = flux_strictness(outside, &world, &versions);
        let strict = opts.strict && on;
        strict_from = from.filter(|_| opts.strict);
        cluster_strict = strict;
        flux_strict = on;
        let declared_at = |ks: &Kustomization| {
            let parent = known.get(&ks.id).and_then(|(_, p)| p.as_ref());
            kustomization_place(fs, cluster, &renders, ks, parent)
        };
        let lookup = Lookup {
            outside,
            settled,
            last_pass,
            strict_sources: opts.strict_sources,
            home: &home,
            other_homes,
            declared_at: &declared_at,
        };
        // The ExternalArtifacts the cluster's ArtifactGenerators make from what it holds now.
        let mut generated = artifact_generator::generate(&world, &inputs, &mut generators);
        // The OCIRepositories and GitRepositories the network lets fluxsim fetch (a mapping and the cluster's
        // own source win; an ArtifactGenerator's ExternalArtifact is another kind).
        let skip = |sid: &crate::source::mapping::SourceId| {
            own_source.as_ref() == Some(sid) || outside.mapped.entries.contains_key(sid)
        };
        generated.extend(super::remote_sources::fetch_sources(
            &world,
            &skip,
            &opts.network,
            cache.store(),
            &mut fetched,
        ));
        let mut todo: Vec<(Kustomization, Option<NamespacedName>, Key)> = Vec::new();
        let mut waiting = false;
        for (id, (ks, parent)) in &known {
            let Some(source) = choose_source(
                ks,
                own_source.as_ref(),
                &outside.mapped,
                &generated,
                settled,
            ) else {
                waiting = true;
                continue;
            };
            let vars = match sources::resolve(ks, &world, &lookup) {
                Resolved::Wait => {
                    waiting = true;
                    continue;
                }
                Resolved::Ready(v) => v,
            };
            let key = Key {
                kustomization: ks.clone(),
                parent: parent.clone(),
                vars,
                strict,
                source,
            };
            if renders.get(id).is_none_or(|(k, _)| *k != key) {
                todo.push((ks.clone(), parent.clone(), key));
            }
        }
        let made = super::resourcesets::render_round(
            &ctx,
            &rsets,
            &renders,
            &mut entries,
            &world,
            &outside.config.resourceset.inputs,
        );
        if todo.is_empty() && made.is_empty() {
            if waiting && !settled {
                settled = true;
                continue;
            }
            // Settled with what was found nowhere placeheld: one pass more fails what the
            // converged cluster still does not hold (a Kustomization's own render may have
            // made its source meanwhile).
            if settled && !last_pass {
                last_pass = true;
                continue;
            }
            converged = true;
            break;
        }
        last_round = render_round(&ctx, todo, &mut renders);
        last_round.extend(made);
        last_round.sort();
        waves.push(last_round.clone());
    }
    let done = settle(
        renders,
        entries,
        if converged { &[] } else { &last_round },
        (&cluster.root.id, boot_notes),
    );
    ClusterRender {
        name: cluster.name.clone(),
        kustomizations: done.into_values().collect(),
        waves,
        strict: cluster_strict,
        strict_from,
        flux_strict,
        versions,
        home,
    }
}

/// The cluster's renders once the fixed point is done: the Kustomizations' and the
/// ResourceSets' (their `dependsOn` resolved), what changed in the last round failed when it
/// never settled (`unsettled`), the root's bootstrap notes, the notes on dependencies.
fn settle(
    renders: BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    mut entries: super::resourcesets::Entries,
    unsettled: &[NamespacedName],
    (root, boot_notes): (&NamespacedName, Vec<Note>),
) -> BTreeMap<NamespacedName, KustomizationRender> {
    super::resourcesets::resolve_dependencies(&mut entries);
    let mut done: BTreeMap<NamespacedName, KustomizationRender> = BTreeMap::new();
    let all = renders
        .into_iter()
        .map(|(id, (_, r))| (id, r))
        .chain(entries.into_iter().map(|(id, m)| (id, m.render)));
    for (id, r) in all {
        // No Kustomization may vanish under an entry of the same id: a declared name's id
        // never holds a synthetic entry's separator (`flux::id_segment`), every synthetic
        // entry's does. Should two still meet, the one kept says so.
        if let Some(first) = done.insert(id.clone(), r) {
            if let Some(kept) = done.get_mut(&id) {
                kept.artifact = None;
                kept.status = Status::Failed(format!(
                    "another entry of the cluster has the id `{id}` ({}): neither is shown \
                     (a fluxsim bug: please report it)",
                    first.kustomization.api_version
                ));
            }
        }
    }
    fail_unsettled(&mut done, unsettled);
    if let Some(r) = done.get_mut(root) {
        r.notes.extend(boot_notes);
    }
    note_dependencies(&mut done);
    done
}

/// Notes on each Kustomization whose `dependsOn` names one that failed, is suspended, is
/// missing from the cluster, or is on a cycle: it renders anyway (order does not change
/// what is applied); `graph` reports the cold-start consequence. An external dependency
/// counts as Ready.
pub(super) fn note_dependencies(done: &mut BTreeMap<NamespacedName, KustomizationRender>) {
    let states: BTreeMap<NamespacedName, Status> = done
        .iter()
        .map(|(id, r)| (id.clone(), r.status.clone()))
        .collect();
    // Each member of a cycle, with the cycle's path turned to start at it.
    let mut on_cycle: BTreeMap<NamespacedName, Vec<String>> = BTreeMap::new();
    let cycles = crate::model::graph::dependency_cycles(
        done.iter().map(|(id, r)| (id, &r.kustomization.depends_on)),
    );
    for cycle in cycles {
        for (i, id) in cycle.iter().enumerate() {
            let path: Vec<String> = cycle[i..]
                .iter()
                .chain(&cycle[..=i])
                .map(|m| m.name.clone())
                .collect();
            on_cycle.insert(id.clone(), path);
        }
    }
    for (id, r) in done.iter_mut() {
        for d in &r.kustomization.depends_on {
            let state = match states.get(d) {
                None => DependencyState::Missing,
                Some(Status::Failed(_)) => DependencyState::Failed,
                Some(Status::Blocked(_)) => DependencyState::NotRendered,
                Some(Status::Suspended) => DependencyState::Suspended,
                Some(Status::Rendered | Status::External(_) | Status::NeedsNetwork(_)) => continue,
            };
            r.notes.push(Note::Dependency {
                dependency: d.to_string(),
                state,
            });
        }
        if let Some(cycle) = on_cycle.get(id) {
            r.notes.push(Note::DependencyCycle(cycle.clone()));
        }
    }
}
