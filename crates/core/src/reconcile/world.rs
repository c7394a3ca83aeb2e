//! The world of one cluster, what a render reads besides its own source: the objects on
//! the cluster (what bootstrap applied, then every current render's), and which tree each
//! Kustomization's `sourceRef` names (the repository, a mapped folder, an ExternalArtifact).
//! Var sources are looked up in it by [`super::sources`].

use std::collections::BTreeMap;
use std::path::Path;

use super::build::{render_kustomization, Ctx, Key};
use super::objects::{Placed, World};
use super::places::invalid_where;
use super::sources::{Outside, Resolution};
use super::trees::{self, Choice};
use crate::discover::Cluster;
use crate::flux::{is_kustomization, Kustomization, NamespacedName, ObjectId};
use crate::model::{KustomizationRender, Note, Status};

/// The cluster's objects: what exists before Flux runs, then every current render's
/// objects, the Kustomizations' then the ResourceSets' (a later id wins when two apply the
/// same object).
pub(super) fn world_of(
    boot: &World,
    renders: &BTreeMap<NamespacedName, (Key, KustomizationRender)>,
    entries: &super::resourcesets::Entries,
) -> World {
    let mut objects = boot.objects.clone();
    let all = renders
        .iter()
        .map(|(id, (_, r))| (id, r))
        .chain(entries.iter().map(|(id, m)| (id, &m.render)));
    for (id, r) in all {
        for o in r.artifact.iter().flat_map(|a| &a.objects) {
            objects.insert(
                o.id.clone(),
                Placed {
                    object: o.object.clone(),
                    from: format!("applied by {id}"),
                },
            );
        }
        // A Kustomization that needs the network: what its own files declare.
        let offline = r.offline.iter().filter_map(|o| o.declared.as_ref().ok());
        for o in offline.flatten() {
            objects.insert(
                o.id.clone(),
                Placed {
                    object: o.object.clone(),
                    from: format!("declared in the files of {id} (it needs the network)"),
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
pub(super) fn bootstrap_state(
    ctx: &Ctx<'_>,
    cluster: &Cluster,
    outside: &Outside,
) -> (World, Vec<Kustomization>, Vec<Note>) {
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
            (status, _) => notes.push(Note::BootstrapNotBuilt {
                folder: folder.clone(),
                why: match status {
                    Status::Failed(e) => e.clone(),
                    other => other.as_str().to_string(),
                },
            }),
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

/// A Flux `sourceRef` as a source id.
pub(super) fn source_id(s: &crate::flux::SourceRef) -> crate::source::mapping::SourceId {
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
pub(super) fn choose_source(
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
