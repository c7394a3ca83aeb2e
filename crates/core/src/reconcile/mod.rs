//! Simulating kustomize-controller on each cluster in its steady state: start at the root
//! Kustomization, build it, find the Flux Kustomizations it applies, and render each with the
//! vars that the cluster's objects give it, until nothing changes (a fixed point, see
//! [`render_cluster`]; where vars come from is `sources`).
//!
//! The Kustomizations of one step are built in parallel; the result is sorted, so it does
//! not depend on thread timing.

mod error;
mod generator;
pub mod sources;
pub mod trees;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use base64::Engine as _;
use rayon::prelude::*;
use serde_json::Value;

use crate::artifact::{Artifact, Origin};
use crate::cache::BuildCache;
use crate::discover::Cluster;
use crate::flux::{is_kustomization, Kustomization, NamespacedName, ObjectId};
use crate::model::{ClusterRender, KustomizationRender, Status, UnknownVar, VarSource};
use crate::postbuild;
use crate::source::SourceFs;
pub use error::Error;
use sources::{Lookup, Outside, Placed, Resolution, Resolved, World};
use trees::{Choice, PathMap, SourceTree};

/// What a changed-only render may take from an earlier render of the base revision.
#[derive(Debug, Clone, Default)]
pub struct Reuse {
    /// The base render's Kustomizations, by cluster name and id.
    pub base: BTreeMap<(String, NamespacedName), KustomizationRender>,
    /// The files (relative to the source root) that differ between base and head.
    pub changed: BTreeSet<String>,
    /// No file or folder was added or removed between base and head, only changed: every
    /// path a build looks for exists in both or in neither, so a Kustomization none of whose
    /// base inputs changed reads the same inputs in head, and can be reused unprepared.
    pub same_paths: bool,
}

/// How to render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Strict substitution (kustomize-controller's default since v1.9.0); `false` is
    /// `--no-strict`. When true, the cluster's `StrictPostBuildSubstitutions` gate decides.
    pub strict: bool,
    /// `--strict-sources`: a `substituteFrom` source found nowhere fails the Kustomization
    /// instead of rendering with placeholders.
    pub strict_sources: bool,
    /// Record each object's origin (see `RepoOptions::origins`).
    pub origins: bool,
    /// Reuse base renders whose inputs did not change (`diff --changed-only`).
    pub reuse: Option<std::sync::Arc<Reuse>>,
    /// Counts for a progress line, updated as the clusters render.
    pub progress: std::sync::Arc<Progress>,
    /// Builds may reach the network (`--allow-network`, or `[network] allow` in
    /// fluxsim.toml): a remote base or a URL in a file field is fetched by the kustomize
    /// binary. Otherwise such a Kustomization is `NeedsNetwork` and nothing is fetched.
    pub allow_network: bool,
}

/// How far a render is, for a progress line: the Kustomizations found so far on every
/// cluster (the total grows while the fixed point discovers what the clusters apply) and
/// how many of those are rendered.
#[derive(Debug, Default)]
pub struct Progress {
    found: std::sync::atomic::AtomicUsize,
    rendered: std::sync::atomic::AtomicUsize,
}

impl Progress {
    /// Counts the ids not in `seen` yet as found (and adds them to it).
    fn found_among<'i>(
        &self,
        seen: &mut std::collections::BTreeSet<NamespacedName>,
        ids: impl Iterator<Item = &'i NamespacedName>,
    ) {
        let new = ids.filter(|id| seen.insert((*id).clone())).count();
        self.found
            .fetch_add(new, std::sync::atomic::Ordering::Relaxed);
    }

    /// Kustomizations rendered, and found so far.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.rendered.load(Relaxed), self.found.load(Relaxed))
    }
}

/// How many steps the fixed point may take before what still changes is reported.
pub const MAX_ROUNDS: usize = 64;

/// The key of one Kustomization's render: it is rendered again only when this changes.
#[derive(PartialEq)]
struct Key {
    kustomization: Kustomization,
    parent: Option<NamespacedName>,
    vars: Result<Resolution, String>,
    strict: bool,
    /// The tree it is built from (the repository, a mapped folder, an ExternalArtifact).
    source: Choice,
}

/// Each Kustomization of the cluster with the one that applies it, as the current renders
/// say (a child's spec is its parent's rendered object), the root and what bootstrap
/// applies included; what no render applies any more is not among them.
fn applied_kustomizations(
    fs: &SourceFs,
    cluster: &Cluster,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    boot_children: &[Kustomization],
) -> BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)> {
    let mut known = BTreeMap::new();
    known.insert(cluster.root.id.clone(), (cluster.root.clone(), None));
    for (id, (key, r)) in renders {
        // The files of a render from another tree are not this tree's.
        let fs = matches!(key.source, Choice::Own).then_some(fs);
        for o in r.artifact.iter().flat_map(|a| &a.objects) {
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

/// `ks`, the object `o` of `r`'s artifact, with the reason it is invalid (if it is) led by
/// the file and line that declare it: the object's origin when the render tracked it, else
/// the first file `r`'s build read (from `fs`) that declares a Kustomization of its name.
fn invalid_where(
    mut ks: Kustomization,
    fs: Option<&SourceFs>,
    r: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
) -> Kustomization {
    let Some(why) = ks.invalid.take() else {
        return ks;
    };
    // The name in the file: as rendered, or without the applying Kustomization's affixes.
    let spec = &r.kustomization;
    let bare = o.id.name.as_str();
    let bare = spec
        .name_prefix
        .as_deref()
        .and_then(|p| bare.strip_prefix(p))
        .unwrap_or(bare);
    let bare = spec
        .name_suffix
        .as_deref()
        .and_then(|x| bare.strip_suffix(x))
        .unwrap_or(bare);
    let names = [o.id.name.as_str(), bare];
    let line_in = |fs: &SourceFs, file: &str| {
        let text = fs.read_to_string(&fs.root().join(file)).ok()?;
        names
            .iter()
            .find_map(|n| crate::locate::object_line(&text, "Kustomization", n))
    };
    let origin = o.origin.as_ref().and_then(|g| g.path.clone());
    let place = match (origin, fs) {
        (Some(file), Some(fs)) => Some(match line_in(fs, &file) {
            Some(line) => format!("{file}:{line}"),
            None => file,
        }),
        (Some(file), None) => Some(file),
        (None, Some(fs)) => r
            .inputs
            .iter()
            .flatten()
            .find_map(|file| line_in(fs, file).map(|line| format!("{file}:{line}"))),
        (None, None) => None,
    };
    ks.invalid = Some(match place {
        Some(place) => format!("{place}: {why}"),
        None => format!("as {} applies it: {why}", spec.id),
    });
    ks
}

/// Whether the cluster substitutes strictly, and what says so: `--no-strict`, else
/// fluxsim.toml, else the controller's `StrictPostBuildSubstitutions` feature gate as the
/// repository sets it, else on (kustomize-controller's default since v1.9.0).
fn strictness(opts: &RenderOptions, outside: &Outside, world: &World) -> (bool, Option<String>) {
    let gate = outside
        .config
        .strict_gate()
        .map(|on| (on, crate::config::CONFIG_FILE.to_string()))
        .or_else(|| world.strict_gate());
    let strict = opts.strict && gate.as_ref().is_none_or(|(on, _)| *on);
    (strict, gate.filter(|_| opts.strict).map(|(_, from)| from))
}

/// Renders `todo` in parallel into `renders`; the ids rendered, in order.
fn render_round(
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
fn fail_unsettled(
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
/// A fixed point (see the README's "steady state"): the objects that exist before Flux runs
/// (the root's own folder, `[[bootstrap.objects]]`) are on the cluster from the start; each
/// step renders every Kustomization whose vars can be resolved and whose spec, vars or
/// strictness changed since it was last rendered, then collects every object of every
/// render as the cluster's objects. `dependsOn` never holds a render back: order does not
/// change what is applied, only var sources do. When nothing moves while some
/// Kustomization still waits on a source, the fixed point settles: sources on no cluster
/// object are looked up in the repository's files, else are unknown (placeholders). What
/// still changes after [`MAX_ROUNDS`] steps fails, named.
pub fn render_cluster(
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
    let mut generators = generator::Cache::default();
    let inputs = generator::Inputs {
        own: own_source.clone(),
        own_tree: &own_tree,
        mapped: &outside.mapped,
    };
    let home = sources::home_of(fs, cluster);
    let (boot, boot_children, boot_notes) = bootstrap_state(&ctx, cluster, outside);
    let mut renders: BTreeMap<NamespacedName, (Key, KustomizationRender)> = BTreeMap::new();
    let mut waves = Vec::new();
    let mut settled = false;
    let mut converged = false;
    let mut last_round: Vec<NamespacedName> = Vec::new();
    let mut strict_from = None;
    let mut cluster_strict = opts.strict;
    let mut seen: std::collections::BTreeSet<NamespacedName> = std::collections::BTreeSet::new();
    for _ in 0..MAX_ROUNDS {
        let world = world_of(&boot, &renders);
        let known = applied_kustomizations(fs, cluster, &renders, &boot_children);
        opts.progress.found_among(&mut seen, known.keys());
        renders.retain(|id, _| known.contains_key(id));
        let (strict, from) = strictness(opts, outside, &world);
        strict_from = from;
        cluster_strict = strict;
        let lookup = Lookup {
            outside,
            settled,
            strict_sources: opts.strict_sources,
            home: &home,
            other_homes,
        };
        // The ExternalArtifacts the cluster's ArtifactGenerators make from what it holds now.
        let generated = generator::generate(&world, &inputs, &mut generators);
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
        if todo.is_empty() {
            if waiting && !settled {
                settled = true;
                continue;
            }
            converged = true;
            break;
        }
        last_round = render_round(&ctx, todo, &mut renders);
        waves.push(last_round.clone());
    }
    let mut done: BTreeMap<NamespacedName, KustomizationRender> =
        renders.into_iter().map(|(id, (_, r))| (id, r)).collect();
    if !converged {
        fail_unsettled(&mut done, &last_round);
    }
    if let Some(r) = done.get_mut(&cluster.root.id) {
        r.notes.extend(boot_notes);
    }
    note_dependencies(&mut done);
    ClusterRender {
        name: cluster.name.clone(),
        kustomizations: done.into_values().collect(),
        waves,
        strict: cluster_strict,
        strict_from,
    }
}

/// The cluster's objects: what exists before Flux runs, then every current render's
/// objects (a later id wins when two Kustomizations apply the same object).
fn world_of(boot: &World, renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>) -> World {
    let mut objects = boot.objects.clone();
    for (id, (_, r)) in renders {
        for o in r.artifact.iter().flat_map(|a| &a.objects) {
            objects.insert(
                o.id.clone(),
                Placed {
                    object: o.object.clone(),
                    from: format!("applied by {id}"),
                },
            );
        }
    }
    World {
        objects,
        declared: boot.declared.clone(),
    }
}

/// What exists before Flux runs: the folder that holds the root's file, applied by hand
/// (`kubectl apply -k`, as `flux bootstrap` does), when it is not the root's own path, and
/// `[[bootstrap.objects]]` of fluxsim.toml. Gives the objects, the Kustomizations among the
/// folder's objects (applied with the root), and notes for the root.
fn bootstrap_state(
    ctx: &Ctx<'_>,
    cluster: &Cluster,
    outside: &Outside,
) -> (World, Vec<Kustomization>, Vec<String>) {
    let mut world = World::default();
    let mut children = Vec::new();
    let mut notes = Vec::new();
    let folder = cluster.file.as_deref().and_then(|f| {
        let dir = Path::new(f).parent()?.to_string_lossy().replace('\\', "/");
        let own = crate::source::spec_dir(ctx.fs, &cluster.root.path).ok()?;
        let dir = if dir.is_empty() { ".".to_string() } else { dir };
        (dir != own).then_some(dir)
    });
    if let Some(folder) = folder {
        let mut synthetic = cluster.root.clone();
        // A name no Kustomization has, so that no base render is reused for it.
        synthetic.id.name = format!("{}.bootstrap", cluster.root.id.name);
        synthetic.path = format!("./{folder}");
        synthetic.post_build = None;
        synthetic.target_namespace = None;
        synthetic.name_prefix = None;
        synthetic.name_suffix = None;
        synthetic.patches.clear();
        synthetic.images.clear();
        synthetic.components.clear();
        synthetic.common_labels.clear();
        synthetic.common_annotations.clear();
        let key = Key {
            kustomization: synthetic.clone(),
            parent: None,
            vars: Ok(Resolution::default()),
            strict: false,
            source: Choice::Own,
        };
        let r = render_kustomization(ctx, &synthetic, None, &key);
        match (&r.status, &r.artifact) {
            (Status::Rendered, Some(a)) => {
                for o in &a.objects {
                    if is_kustomization(&o.object) {
                        if let Ok(k) = Kustomization::from_json(&o.object) {
                            if k.id != cluster.root.id {
                                children.push(invalid_where(k, Some(ctx.fs), &r, o));
                            }
                        }
                    }
                    world.objects.insert(
                        o.id.clone(),
                        Placed {
                            object: o.object.clone(),
                            from: format!(
                                "bootstrap: applied by hand with the root's folder {folder}"
                            ),
                        },
                    );
                }
            }
            (status, _) => notes.push(format!(
                "the root's folder `{folder}`, applied by hand at bootstrap, could not be built \
                 ({}): its objects are not counted as on the cluster",
                match status {
                    Status::Failed(e) => e.as_str(),
                    other => other.as_str(),
                }
            )),
        }
    }
    for d in &outside.declared {
        if !d.clusters.is_empty() && !d.clusters.contains(&cluster.name) {
            continue;
        }
        for o in &d.objects {
            let placed = Placed {
                object: std::sync::Arc::new(o.clone()),
                from: format!("declared in {}", d.from),
            };
            let mut id = ObjectId::of(o);
            if id.namespace.is_empty() {
                "flux-system".clone_into(&mut id.namespace);
            }
            world.declared.insert(id.clone(), placed.clone());
            world.objects.insert(id, placed);
        }
    }
    (world, children, notes)
}

/// Notes on each Kustomization whose `dependsOn` names one that failed, is suspended, is
/// missing from the cluster, or is on a cycle: it renders anyway (order does not change
/// what is applied); `graph` reports the cold-start consequence. An external dependency
/// counts as Ready.
fn note_dependencies(done: &mut BTreeMap<NamespacedName, KustomizationRender>) {
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
            let what = match states.get(d) {
                None => "is defined by no Kustomization of this cluster".to_string(),
                Some(Status::Failed(_)) => "failed".into(),
                Some(Status::Blocked(_)) => "did not render".into(),
                Some(Status::Suspended) => "is suspended".into(),
                Some(Status::Rendered | Status::External(_) | Status::NeedsNetwork(_)) => continue,
            };
            r.notes.push(format!(
                "dependency `{d}` {what}: rendered anyway (the steady state; `fluxsim graph` \
                 shows that it never becomes Ready on a cluster)"
            ));
        }
        if let Some(cycle) = on_cycle.get(id) {
            r.notes.push(format!(
                "on a dependency cycle: {} (rendered anyway; Flux never reconciles it, `fluxsim \
                 graph` reports FS201)",
                cycle.join(" -> ")
            ));
        }
    }
}

fn unrendered(ks: &Kustomization, parent: Option<NamespacedName>) -> KustomizationRender {
    KustomizationRender {
        kustomization: ks.clone(),
        parent,
        status: Status::Blocked(String::new()),
        artifact: None,
        template: None,
        substituted: false,
        vars: BTreeMap::new(),
        unknown_vars: Vec::new(),
        unknown_sources: Vec::new(),
        vars_used: BTreeSet::new(),
        build_path: None,
        generated: None,
        built_by: None,
        delegated: None,
        notes: Vec::new(),
        inputs: None,
        reused: false,
        strict: true,
    }
}

/// What every Kustomization of one cluster's render shares.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    /// The source (the tree the Kustomization is built from).
    fs: &'a SourceFs,
    /// How that tree's paths map to the repository's.
    map: &'a PathMap,
    /// The cluster's name.
    cluster: &'a str,
    cache: &'a BuildCache<'a>,
    opts: &'a RenderOptions,
}

/// A Flux `sourceRef` as a source id.
fn source_id(s: &crate::flux::SourceRef) -> crate::source::mapping::SourceId {
    crate::source::mapping::SourceId {
        kind: s.kind.clone(),
        namespace: s.namespace.clone(),
        name: s.name.clone(),
    }
}

/// The tree a Kustomization is built from: the cluster's own GitRepository, a source mapped
/// to a folder (a mapping wins over what an ArtifactGenerator makes), or an ExternalArtifact
/// the cluster's ArtifactGenerators make; `None` while such an artifact may still appear
/// (the fixed point has not settled). Anything else is external.
fn choose_source(
    ks: &Kustomization,
    own: Option<&crate::source::mapping::SourceId>,
    mapped: &trees::Mapped,
    generated: &BTreeMap<crate::source::mapping::SourceId, Choice>,
    settled: bool,
) -> Option<Choice> {
    let Some(src) = ks.source_ref.as_ref().map(source_id) else {
        return Some(Choice::Own);
    };
    if own.is_none_or(|o| *o == src) {
        return Some(Choice::Own);
    }
    if let Some(m) = mapped.entries.get(&src) {
        return Some(match m {
            Ok(tree) => Choice::Tree(tree.clone()),
            Err(e) => Choice::Failed(e.clone()),
        });
    }
    if let Some(c) = generated.get(&src) {
        return Some(match c {
            Choice::External(e) => Choice::External(format!("source {src}: {e}")),
            Choice::Failed(e) => Choice::Failed(format!("source {src}: {e}")),
            other => other.clone(),
        });
    }
    if src.kind == "ExternalArtifact" && !settled {
        return None;
    }
    Some(Choice::External(format!(
        "source {src} is not this repository{}: render it with --source {src}=PATH",
        if src.kind == "ExternalArtifact" {
            " and no ArtifactGenerator of this cluster makes it"
        } else {
            ""
        }
    )))
}

fn render_kustomization(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    parent: Option<NamespacedName>,
    key: &Key,
) -> KustomizationRender {
    let mut r = unrendered(ks, parent);
    r.strict = key.strict;
    if let Some(why) = &ks.invalid {
        // Never on the cluster: the API server refused it as it was applied.
        r.status = Status::Failed(why.clone());
        return r;
    }
    if ks.suspend {
        // kustomize-controller skips a suspended object (`obj.Spec.Suspend` in
        // kustomization_controller.go's Reconcile): the cluster keeps what it last applied,
        // which a render of the repository cannot know, so it is never compared.
        r.status = Status::Suspended;
        r.notes.push(
            "suspended (spec.suspend: true): Flux applies nothing from it; the cluster keeps \
             what it last applied, unknown offline, so it is not compared"
                .into(),
        );
        return r;
    }
    let ctx = match &key.source {
        Choice::Own => *ctx,
        Choice::Tree(tree) => {
            r.notes.push(format!("{BUILT_FROM_NOTE}{}", tree.label));
            Ctx {
                fs: &tree.fs,
                map: &tree.map,
                ..*ctx
            }
        }
        Choice::External(e) => {
            r.status = Status::External(e.clone());
            return r;
        }
        Choice::Failed(e) => {
            r.status = Status::Failed(e.clone());
            return r;
        }
    };
    let ctx = &ctx;
    match render_inner(ctx, ks, key, &mut r) {
        Ok(Rendered::Artifact(artifact)) => {
            r.artifact = Some(artifact);
            r.status = Status::Rendered;
        }
        Ok(Rendered::Reused(base)) => return *base,
        Err(e @ Error::NeedsNetwork { .. }) => r.status = Status::NeedsNetwork(e.to_string()),
        Err(e) => r.status = Status::Failed(e.to_string()),
    }
    r
}

/// What `render_inner` produced.
enum Rendered {
    /// A new artifact.
    Artifact(Artifact),
    /// The base render, reused as it is.
    Reused(Box<KustomizationRender>),
}

/// The base render of `ks` when a changed-only render may reuse it: the same Kustomization,
/// rendered, no file either build read has changed, the same strictness and unknown
/// sources, and the same values for the vars its objects reference (whether any var is
/// defined decides whether substitution runs at all).
fn reusable(
    reuse: &Reuse,
    cluster: &str,
    ks: &Kustomization,
    inputs: Option<&BTreeSet<String>>,
    key: &Key,
) -> Option<Box<KustomizationRender>> {
    let base = reuse.base.get(&(cluster.to_string(), ks.id.clone()))?;
    let untouched =
        |files: Option<&BTreeSet<String>>| files.is_some_and(|f| f.is_disjoint(&reuse.changed));
    let res = key.vars.as_ref().ok()?;
    if base.kustomization != *ks
        || base.status != Status::Rendered
        || base.strict != key.strict
        || base.unknown_sources != res.unknown_sources
        || !untouched(inputs)
        || !untouched(base.inputs.as_ref())
    {
        return None;
    }
    let vars = &res.vars;
    let value = |m: &BTreeMap<String, VarSource>, v: &String| m.get(v).map(|s| s.value.clone());
    let same_vars = vars.is_empty() == base.vars.is_empty()
        && base
            .vars_used
            .iter()
            .all(|v| value(vars, v) == value(&base.vars, v));
    same_vars.then(|| {
        let mut r = base.clone();
        r.vars.clone_from(vars);
        r.notes.clone_from(&res.notes);
        r.notes.extend(
            base.notes
                .iter()
                .filter(|n| n.starts_with(UNKNOWN_NOTE))
                .cloned(),
        );
        r.reused = true;
        Box::new(r)
    })
}

/// [`reusable`] before `ks` is prepared, when no path was added or removed: its inputs in
/// head are then its inputs in base.
fn reusable_unprepared(
    reuse: &Reuse,
    cluster: &str,
    ks: &Kustomization,
    key: &Key,
) -> Option<Box<KustomizationRender>> {
    if !reuse.same_paths {
        return None;
    }
    let base = reuse.base.get(&(cluster.to_string(), ks.id.clone()))?;
    reusable(reuse, cluster, ks, base.inputs.as_ref(), key)
}

/// How the note on a Kustomization built from another tree than the cluster's own
/// GitRepository (a mapped source, an ExternalArtifact) begins.
pub const BUILT_FROM_NOTE: &str = "built from ";

/// How the note on placeheld vars begins.
const UNKNOWN_NOTE: &str = "vars unknown offline";

/// One Kustomization's render, stage by stage as kustomize-controller runs them: Flux's
/// generator and the input closure, the build, then postBuild (vars, substitution, what the
/// apply changes).
fn render_inner(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    key: &Key,
    r: &mut KustomizationRender,
) -> Result<Rendered, Error> {
    let Ctx {
        fs,
        map,
        cluster,
        opts,
        ..
    } = *ctx;
    // Only Kustomizations built from the repository itself are reused: another tree may
    // change with no input file of theirs changing (an ArtifactGenerator's rules).
    let reuse = opts.reuse.as_ref().filter(|_| *map == PathMap::Same);
    if let Some(base) = reuse.and_then(|reuse| reusable_unprepared(reuse, cluster, ks, key)) {
        return Ok(Rendered::Reused(base));
    }
    let prepared = crate::generate::prepare(fs, ks, opts.origins)?;
    r.build_path = map.folder(&prepared.rel_path);
    r.generated.clone_from(&prepared.generated);
    let closure = input_closure(&prepared, ks, map, opts.allow_network)?;
    r.inputs = closure.as_ref().and_then(|c| {
        let files = c.source_files(&prepared.rel_path);
        match map {
            PathMap::Same => Some(files),
            PathMap::Outside => None,
            // Paths the build looked for that the tree does not hold map to nothing.
            _ => Some(files.iter().filter_map(|f| map.file(f)).collect()),
        }
    });
    if let Some(reuse) = reuse {
        if let Some(base) = reusable(reuse, cluster, ks, r.inputs.as_ref(), key) {
            return Ok(Rendered::Reused(base));
        }
    }
    let (output, maker, delegated) = build(ctx, ks, &prepared, closure.as_ref())?;
    r.built_by = Some(maker);
    r.delegated = delegated;
    let (output, origins) = take_origins(output, opts, &prepared, map);
    let mut template = Artifact::from_kustomize_output(output.clone())?;
    for (o, origin) in template.objects.iter_mut().zip(&origins) {
        o.origin.clone_from(origin);
    }
    // Kept before substitution runs, so that the audit can read the template of a
    // Kustomization whose substitution fails.
    r.template = Some(template.clone());
    let substitute_with = match &ks.post_build {
        Some(pb) => postbuild_vars(pb, key, &output, r)?,
        None => None,
    };
    post_build(
        ctx,
        ks,
        key,
        r,
        template,
        &origins,
        substitute_with.as_ref(),
    )
}

/// The build's input closure; a path leaving the source root fails here, before any
/// builder reads it, as Flux's secure file system fails it (the kustomize binary would read
/// it). `None` when the closure cannot be known (the builder then reports why).
fn input_closure(
    prepared: &crate::generate::Prepared,
    ks: &Kustomization,
    map: &PathMap,
    allow_network: bool,
) -> Result<Option<crate::cache::closure::Closure>, Error> {
    // The folder as the repository names it, when it is the repository's.
    let folder = || {
        let dir = map
            .folder(&prepared.rel_path)
            .unwrap_or_else(|| prepared.rel_path.clone());
        if dir == "." {
            String::new()
        } else {
            format!("{dir}/")
        }
    };
    match prepared.closure() {
        Ok(c) => Ok(Some(c)),
        Err(crate::cache::closure::Uncacheable::Network { kustomization, url })
            if !allow_network =>
        {
            Err(Error::NeedsNetwork {
                path: ks.path.clone(),
                file: folder(),
                kustomization,
                url,
            })
        }
        Err(e) => match e.security_error() {
            Some(message) => {
                let file = folder();
                Err(Error::OutsideRoot {
                    path: ks.path.clone(),
                    file,
                    message: message.clone(),
                })
            }
            None => Ok(None),
        },
    }
}

/// `kustomize build` of the prepared folder, through the build cache; an error names files
/// by their place in the source, not by fluxsim's temporary folders.
fn build(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    prepared: &crate::generate::Prepared,
    closure: Option<&crate::cache::closure::Closure>,
) -> Result<(String, crate::model::Maker, Option<String>), Error> {
    let on_disk = || {
        prepared
            .dir()
            .map_err(|e| crate::kustomize::BuildError::Failed(e.to_string()))
    };
    let job = crate::kustomize::Job {
        dir: prepared.source_dir.clone(),
        files: prepared.memory_files(),
        on_disk: crate::kustomize::OnDisk::Make(&on_disk),
        network: ctx.opts.allow_network,
    };
    let built = ctx.cache.get(&crate::cache::Request {
        key: &prepared.key,
        inputs: closure,
        job: &job,
    });
    // Files named as the repository names them: the same build may have run in another
    // cluster's overlay (shared through the cache), so any of fluxsim's folders is taken out.
    let relative = |text: &str| {
        crate::scratch::scrub(&text.replace(&format!("{}/", ctx.fs.root().display()), ""))
    };
    let delegated = built.delegated.as_deref().map(relative);
    let output = built.output.map_err(|e| {
        let mut message = relative(&e.to_string());
        // kustomize does not say which file it could not read as a kustomization.
        if message.contains("invalid Kustomization") {
            let dir = ctx.fs.root().join(&prepared.rel_path);
            if let Some(f) = crate::generate::KUSTOMIZATION_FILES
                .iter()
                .find(|f| ctx.fs.is_file(&dir.join(f)))
            {
                let file = if prepared.rel_path == "." {
                    (*f).to_string()
                } else {
                    format!("{}/{f}", prepared.rel_path)
                };
                let file = ctx.map.file(&file).unwrap_or(file);
                message = format!("{file}: {message}");
            }
        }
        Error::Build {
            path: ks.path.clone(),
            message,
        }
    })?;
    Ok((output, built.maker, delegated))
}

/// The output without the origin annotations fluxsim asked for (not the user), taken out
/// before anything else sees it so that digests do not depend on them, and the origin of
/// each object as the repository names its files.
fn take_origins(
    output: String,
    opts: &RenderOptions,
    prepared: &crate::generate::Prepared,
    map: &PathMap,
) -> (String, Vec<Option<Origin>>) {
    if !opts.origins || prepared.user_origins {
        return (output, Vec::new());
    }
    let (stripped, raw) = crate::artifact::strip_origins(&output);
    let origins = raw
        .into_iter()
        .map(|o| {
            o.map(|o| {
                let o = o.relative_to(&prepared.rel_path);
                Origin {
                    path: o.path.and_then(|p| map.file(&p)),
                    configured_in: o.configured_in.and_then(|p| map.file(&p)),
                }
            })
        })
        .collect();
    (stripped, origins)
}

/// The vars of `spec.postBuild`, with placeholders for those of unknown sources, noted on
/// `r`; `None` when Flux does not substitute (no var defined and the strategy is not
/// `Always`).
fn postbuild_vars(
    pb: &crate::flux::PostBuild,
    key: &Key,
    output: &str,
    r: &mut KustomizationRender,
) -> Result<Option<BTreeMap<String, String>>, Error> {
    let res = key.vars.clone().map_err(Error::Vars)?;
    r.notes.extend(res.notes);
    r.vars = res.vars;
    r.unknown_sources.clone_from(&res.unknown_sources);
    let mut vars: BTreeMap<String, String> = r
        .vars
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect();
    if !res.unknown_sources.is_empty() {
        // The keys of a source found nowhere are unknown too: every var the objects
        // reference without a default that no known source defines may come from it, and
        // is placeheld.
        for name in referenced_undefined(output, &vars)? {
            let placeholder = sources::placeholder(&res.unknown_sources, &name);
            vars.insert(name.clone(), placeholder.clone());
            r.unknown_vars.push(UnknownVar {
                name,
                sources: res.unknown_sources.clone(),
                placeholder,
            });
        }
        let names: Vec<String> = r
            .unknown_vars
            .iter()
            .map(|u| format!("`{}`", u.name))
            .collect();
        let whence: Vec<String> = res
            .unknown_sources
            .iter()
            .map(|s| match res.made_by.get(s) {
                Some(by) => format!("{s} is made at run time by {by}"),
                None => format!("{s} is found nowhere (made at run time?)"),
            })
            .collect();
        r.notes.push(format!(
            "{UNKNOWN_NOTE}: {}; {}",
            whence.join(", "),
            if names.is_empty() {
                "no var its objects reference is missing".to_string()
            } else {
                format!("placeholders stand for {}", names.join(", "))
            }
        ));
    }
    if postbuild::should_substitute(&vars, pb.always) || !res.unknown_sources.is_empty() {
        r.substituted = true;
        return Ok(Some(vars));
    }
    Ok(None)
}

/// postBuild and the apply: each object substituted on its own text as kustomize printed
/// it (`res.AsYAML()` in `kustomize_varsub.go`) and rebuilt from JSON, then what the apply
/// changes (commonMetadata, a Secret's stringData), printed again as kustomize prints JSON.
#[allow(
    clippy::too_many_arguments,
    reason = "the stage's inputs: the Kustomization, its key, the render so far, and the build"
)]
fn post_build(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    key: &Key,
    r: &mut KustomizationRender,
    template: Artifact,
    origins: &[Option<Origin>],
    substitute_with: Option<&BTreeMap<String, String>>,
) -> Result<Rendered, Error> {
    let mut changed = substitute_with.is_some();
    // Each object as kustomize printed it; `true` marks JSON that Flux rebuilt.
    let mut pieces: Vec<(bool, String)> = Vec::new();
    let mut piece_ids: Vec<ObjectId> = Vec::new();
    let mut substituted_bytes = 0usize;
    // The template's objects are the output's documents, in order, already read.
    for object in &template.objects {
        let doc = object.yaml.as_str();
        let mut obj = (*object.object).clone();
        let mut piece = (false, doc.to_string());
        if let Some(vars) = substitute_with {
            if !crate::flux::substitution_disabled(&obj) {
                r.vars_used.extend(postbuild::referenced_vars(doc));
                // res.UnmarshalJSON sets the JSON back into the resource (numbers as
                // float64, through yaml.v3): substitute_resource does the same.
                obj = postbuild::substitute_read_resource(doc, &object.object, vars, key.strict)
                    .map_err(|source| Error::Substitute {
                        object: ObjectId::of(&obj),
                        source: Box::new(source),
                    })?;
                let out = obj.to_string();
                substituted_bytes += out.len();
                postbuild::check_total_output(substituted_bytes).map_err(Error::TooLarge)?;
                piece = (true, out);
            }
        }
        // What happens at apply time: commonMetadata is added to every object, and the API
        // server folds a Secret's stringData into data.
        if apply_time_changes(&mut obj, ks) {
            piece = (true, obj.to_string());
            changed = true;
        }
        piece_ids.push(ObjectId::of(&obj));
        pieces.push(piece);
    }
    // Vars of encrypted sources that the objects use are placeheld too.
    for (name, v) in &r.vars {
        if v.encrypted && r.vars_used.contains(name) {
            r.unknown_vars.push(UnknownVar {
                name: name.clone(),
                sources: vec![v.source.clone()],
                placeholder: v.value.clone(),
            });
        }
    }
    r.unknown_vars.sort_by(|a, b| a.name.cmp(&b.name));
    if !changed {
        return Ok(Rendered::Artifact(template));
    }
    // kustomize prints the rebuilt objects as it prints resources read from JSON.
    let reprinted =
        crate::postbuild::reprint::reprint(ctx.cache, &pieces).map_err(Error::Reprint)?;
    let mut artifact = Artifact::from_kustomize_output_reading(reprinted, &template)?;
    if !origins.is_empty() {
        // Substitution may rename objects, so origins follow each piece's final id.
        let by_id: BTreeMap<&ObjectId, &Option<Origin>> = piece_ids.iter().zip(origins).collect();
        for o in &mut artifact.objects {
            o.origin = by_id.get(&o.id).and_then(|x| (*x).clone());
        }
    }
    Ok(Rendered::Artifact(artifact))
}

/// The var names that the substituted objects of a build output reference without a default
/// and that `vars` does not define, sorted. A var with a default keeps it: that is what its
/// author expects when no source defines it (`${q:='}` quotes, `${KIND:=Deployment}`).
fn referenced_undefined(
    output: &str,
    vars: &BTreeMap<String, String>,
) -> Result<BTreeSet<String>, Error> {
    let mut out = BTreeSet::new();
    for doc in crate::manifest::split_documents(output) {
        let obj = crate::manifest::parse_object(doc)?;
        if crate::flux::substitution_disabled(&obj) {
            continue;
        }
        if let Ok(t) = crate::envsubst::Template::parse(doc.as_bytes()) {
            out.extend(
                t.exprs()
                    .into_iter()
                    .filter(|e| !e.has_default() && !vars.contains_key(&e.param))
                    .map(|e| e.param.clone()),
            );
        }
    }
    Ok(out)
}

/// Adds `spec.commonMetadata` and folds Secret `stringData` into `data`; true when changed.
///
/// commonMetadata is set as fluxcd/pkg `ssa/utils/meta.go` SetCommonMetadata sets it: the
/// object's labels (then annotations) are read with `GetLabels`, which is apimachinery's
/// `NestedNullCoercingStringMap` (a null value reads as `""`, and a map holding any other
/// non-string value reads as no map at all), the common ones are added, and the result
/// replaces the field when it is not empty. So with commonMetadata a label emptied by
/// substitution (`app: ${UNSET}` → null) becomes `""`, and one that became a number drops
/// every other label of the object. Found by the Go oracle (scripts/oracle-fuzz).
fn apply_time_changes(obj: &mut Value, ks: &Kustomization) -> bool {
    let mut changed = false;
    let has_common_metadata = !ks.common_labels.is_empty() || !ks.common_annotations.is_empty();
    for (field, extra) in [
        ("labels", &ks.common_labels),
        ("annotations", &ks.common_annotations),
    ] {
        if !has_common_metadata {
            break;
        }
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        let mut merged = null_coercing_string_map(meta.get(field));
        for (k, v) in extra {
            merged.insert(k.clone(), v.clone());
        }
        if merged.is_empty() {
            continue;
        }
        let value = Value::Object(
            merged
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
        );
        if meta.get(field) != Some(&value) {
            meta.insert(field.to_string(), value);
            changed = true;
        }
    }
    let is_secret = ObjectId::of(obj).kind == "Secret" && ObjectId::of(obj).group.is_empty();
    let encrypted = obj.get("sops").is_some();
    if is_secret && !encrypted {
        if let Some(Value::Object(string_data)) =
            obj.as_object_mut().and_then(|o| o.remove("stringData"))
        {
            let data = obj.as_object_mut().map(|o| {
                o.entry("data")
                    .or_insert_with(|| Value::Object(serde_json::Map::new()))
            });
            if let Some(Value::Object(data)) = data {
                for (k, v) in string_data {
                    let text = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    data.insert(
                        k,
                        Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
                    );
                }
            }
            changed = true;
        }
    }
    changed
}

/// apimachinery's `NestedNullCoercingStringMap` as `Unstructured.GetLabels` uses it: a map
/// of strings, null values read as `""`; anything else (no map, a non-string value) is empty.
fn null_coercing_string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = v else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (k, v) in m {
        match v {
            Value::String(s) => {
                out.insert(k.clone(), s.clone());
            }
            Value::Null => {
                out.insert(k.clone(), String::new());
            }
            _ => return BTreeMap::new(),
        }
    }
    out
}

/// Renders every cluster in parallel; each looks its var sources up in its own objects and
/// folder only (two clusters may reuse every name).
///
/// `roots` holds, per cluster, the tree its source shows (the repository's, or a view of it
/// narrowed by that cluster's `spec.ignore`); `fs` is the repository's.
pub fn render_clusters(
    fs: &SourceFs,
    roots: &[&SourceFs],
    clusters: &[Cluster],
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
    outside: &Outside,
) -> Vec<ClusterRender> {
    let homes: Vec<String> = clusters.iter().map(|c| sources::home_of(fs, c)).collect();
    clusters
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            let others: Vec<String> = homes
                .iter()
                .enumerate()
                .filter(|(j, h)| *j != i && **h != homes[i])
                .map(|(_, h)| h.clone())
                .collect();
            render_cluster(
                roots.get(i).copied().unwrap_or(fs),
                c,
                cache,
                opts,
                outside,
                &others,
            )
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ks(spec: Value) -> Kustomization {
        Kustomization::from_json(&json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"}, "spec": spec
        }))
        .unwrap()
    }

    fn cm(name: &str, data: Value) -> (ObjectId, Placed) {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "flux-system"}, "data": data});
        placed(v)
    }

    fn placed(v: Value) -> (ObjectId, Placed) {
        (
            ObjectId::of(&v),
            Placed {
                object: v.into(),
                from: "applied by flux-system/vars".into(),
            },
        )
    }

    fn world(objects: impl IntoIterator<Item = (ObjectId, Placed)>) -> World {
        World {
            objects: objects.into_iter().collect(),
            declared: BTreeMap::new(),
        }
    }

    /// Resolves at the settled step of the fixed point, without `--strict-sources`.
    fn resolve_vars(
        k: &Kustomization,
        w: &World,
        notes: &mut Vec<String>,
    ) -> Result<BTreeMap<String, VarSource>, String> {
        resolve_with(k, w, false).map(|r| {
            notes.extend(r.notes);
            r.vars
        })
    }

    fn resolve_with(
        k: &Kustomization,
        w: &World,
        strict_sources: bool,
    ) -> Result<Resolution, String> {
        let outside = Outside::none(&SourceFs::empty("/nonexistent".into()));
        let lookup = Lookup {
            outside: &outside,
            settled: true,
            strict_sources,
            home: "",
            other_homes: &[],
        };
        match sources::resolve(k, w, &lookup) {
            Resolved::Ready(r) => r,
            Resolved::Wait => panic!("a settled lookup never waits"),
        }
    }

    // fluxcd/pkg ssa/utils/meta.go SetCommonMetadata reads labels with GetLabels
    // (apimachinery NestedNullCoercingStringMap): null reads as "", a non-string value as
    // no labels at all.
    #[test]
    fn common_metadata_coerces_null_labels_and_drops_labels_holding_a_non_string() {
        let k = ks(json!({"commonMetadata": {"labels": {"team": "a"}}}));
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": null}, "annotations": {"n": null}}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"], json!({"app": "", "team": "a"}));
        assert_eq!(obj["metadata"]["annotations"], json!({"n": ""}));
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": "x", "version": 1}}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"], json!({"team": "a"}));
        // Without commonMetadata nothing is touched.
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": null}}});
        assert!(!apply_time_changes(&mut obj, &ks(json!({}))));
        assert_eq!(obj["metadata"]["labels"], json!({"app": null}));
    }

    // kustomize_varsub.go loadVars: substituteFrom in order, later wins; inline wins over all.
    #[test]
    fn later_substitute_from_wins_and_inline_wins_over_all() {
        let k = ks(json!({"postBuild": {
            "substitute": {"C": "inline"},
            "substituteFrom": [{"kind": "ConfigMap", "name": "a"}, {"kind": "ConfigMap", "name": "b"}]}}));
        let objects = world([
            cm("a", json!({"A": "from-a", "B": "from-a", "C": "from-a"})),
            cm("b", json!({"B": "from-b\n"})),
        ]);
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["A"].value, "from-a");
        assert_eq!(vars["B"].value, "from-b"); // and the newline is removed
        assert_eq!(
            vars["C"],
            VarSource {
                source: "inline".into(),
                from: "postBuild.substitute".into(),
                encrypted: false,
                value: "inline".into(),
            }
        );
    }

    #[test]
    fn missing_substitute_from_is_unknown_fails_with_strict_sources_and_optional_is_skipped() {
        let k =
            ks(json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone"}]}}));
        let res = resolve_with(&k, &World::default(), false).unwrap();
        assert_eq!(res.unknown_sources, ["ConfigMap/flux-system/gone"]);
        let err = resolve_with(&k, &World::default(), true).unwrap_err();
        assert!(err.contains("substitute from 'ConfigMap/gone'"), "{err}");
        let k = ks(
            json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone", "optional": true}]}}),
        );
        let mut notes = Vec::new();
        assert!(resolve_vars(&k, &World::default(), &mut notes)
            .unwrap()
            .is_empty());
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn a_source_not_on_the_cluster_waits_until_the_fixed_point_settles() {
        let k =
            ks(json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "later"}]}}));
        let outside = Outside::none(&SourceFs::empty("/nonexistent".into()));
        let lookup = Lookup {
            outside: &outside,
            settled: false,
            strict_sources: false,
            home: "",
            other_homes: &[],
        };
        assert!(matches!(
            sources::resolve(&k, &World::default(), &lookup),
            Resolved::Wait
        ));
        let w = world([cm("later", json!({"A": "1"}))]);
        let Resolved::Ready(Ok(res)) = sources::resolve(&k, &w, &lookup) else {
            panic!("resolved once the source is on the cluster");
        };
        assert_eq!(res.vars["A"].from, "applied by flux-system/vars");
    }

    #[test]
    fn secret_data_is_base64_decoded_and_string_data_read() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"TOKEN": "czNjcjN0"}, "stringData": {"USER": "admin"}});
        let objects = world([placed(s)]);
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["TOKEN"].value, "s3cr3t");
        assert_eq!(vars["USER"].value, "admin");
    }

    #[test]
    fn sops_encrypted_source_gives_placeholders_and_a_note() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"K": "ENC[AES256_GCM,data:abc,type:str]"}, "sops": {"version": "3.8.1"}});
        let objects = world([placed(s)]);
        let mut notes = Vec::new();
        let vars = resolve_vars(&k, &objects, &mut notes).unwrap();
        assert!(vars["K"].encrypted);
        // Never the ciphertext, which changes each time the file is encrypted again.
        assert_eq!(vars["K"].value, "fluxsim-unknown:Secret/flux-system/s:K");
        assert!(notes[0].contains("SOPS-encrypted"), "{notes:?}");
    }

    #[test]
    fn common_metadata_and_string_data_are_applied_as_at_apply_time() {
        let k = ks(json!({"commonMetadata": {"labels": {"team": "a"}, "annotations": {"x": "y"}}}));
        let mut obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "stringData": {"U": "admin"}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"]["team"], "a");
        assert_eq!(obj["metadata"]["annotations"]["x"], "y");
        assert_eq!(obj["data"]["U"], "YWRtaW4=");
        assert!(obj.get("stringData").is_none());
        let mut plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(!apply_time_changes(&mut plain, &ks(json!({}))));
    }
}
