//! One build step: one Kustomization rendered as kustomize-controller runs it — Flux's
//! kustomization generator and the input closure, the build, then postBuild (its vars here,
//! the substitution in [`crate::postbuild::kustomization`]) — or taken from the base render
//! when nothing it reads changed (`diff --changed-only`).

use std::collections::{BTreeMap, BTreeSet};

use super::sources;
use super::sources::Resolution;
use super::trees::{Choice, PathMap};
use super::{Error, RenderOptions, Reuse};
use crate::artifact::{Artifact, Origin};
use crate::cache::BuildCache;
use crate::flux::{Kustomization, NamespacedName};
use crate::model::{KustomizationRender, Note, Status, UnknownVar, VarSource};
use crate::postbuild;
use crate::source::SourceFs;

/// The key of one Kustomization's render: it is rendered again only when this changes.
#[derive(PartialEq)]
pub(super) struct Key {
    pub(super) kustomization: Kustomization,
    pub(super) parent: Option<NamespacedName>,
    pub(super) vars: Result<Resolution, super::sources::VarsError>,
    pub(super) strict: bool,
    /// The tree it is built from (the repository, a mapped folder, an ExternalArtifact).
    pub(super) source: Choice,
}

/// What every Kustomization of one cluster's render shares.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    /// The source (the tree the Kustomization is built from).
    pub(super) fs: &'a SourceFs,
    /// How that tree's paths map to the repository's.
    pub(super) map: &'a PathMap,
    /// The cluster's name.
    pub(super) cluster: &'a str,
    pub(super) cache: &'a BuildCache<'a>,
    pub(super) opts: &'a RenderOptions,
}

pub(super) fn render_kustomization(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    parent: Option<NamespacedName>,
    key: &Key,
) -> KustomizationRender {
    let mut r = KustomizationRender::new(ks.clone(), parent, Status::Blocked(String::new()));
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
        r.notes.push(Note::Suspended);
        return r;
    }
    let ctx = match &key.source {
        Choice::Own => *ctx,
        Choice::Tree(tree) => {
            r.notes.push(Note::BuiltFrom(tree.label.clone()));
            if ctx.opts.keep_sources {
                r.source_tree = Some(tree.snapshot());
            }
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
        Err(e @ (Error::NeedsNetwork { .. } | Error::NotFetched { .. })) => {
            r.status = Status::NeedsNetwork(e.to_string());
            r.offline = Some(declared_offline(ctx, ks, key, &r));
        }
        Err(e) => r.status = Status::Failed(e.to_string()),
    }
    r
}

/// What a Kustomization that needs the network (and may not reach it) declares in its own
/// files: the same build with every remote entry left out of its kustomization files
/// ([`crate::kustomization_generator::Prepared::without_remote`]), substituted as its own
/// build would be, of which only the objects the cluster's simulation reads are kept (Flux
/// objects, ConfigMaps, Secrets, ExternalSecrets: [`crate::model::read_offline`]). It
/// presumes that the remote entries add no such object and change none (a patch fetched from
/// a URL could); the Kustomization itself stays not rendered. Nothing reaches the network:
/// the build's closure holds no remote entry any more, or it is not built.
fn declared_offline(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    key: &Key,
    r: &KustomizationRender,
) -> crate::model::Offline {
    let mut offline = crate::model::Offline::default();
    offline.declared = build_offline(ctx, ks, key, r, &mut offline.left_out);
    offline
}

/// [`declared_offline`]'s build: the objects kept, or why it could not be made; the remote
/// entries left out go to `left_out` (`file: field `url``, the file as the repository names
/// it).
fn build_offline(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    key: &Key,
    r: &KustomizationRender,
    left_out: &mut Vec<String>,
) -> Result<Vec<crate::artifact::ArtifactObject>, String> {
    let ignore = ctx
        .opts
        .build_ignore
        .as_ref()
        .filter(|_| *ctx.map == PathMap::Same)
        .and_then(|b| b.for_kustomization(ctx.cluster, ks));
    let prepared =
        crate::kustomization_generator::prepare_ignoring(ctx.fs, ks, ctx.opts.origins, ignore)
            .map_err(|e| e.to_string())?;
    let (local, entries) = prepared
        .without_remote()
        .ok_or_else(|| "no remote entry was found to leave out".to_string())?;
    let folder = ctx
        .map
        .folder(&prepared.rel_path)
        .unwrap_or_else(|| prepared.rel_path.clone());
    left_out.extend(entries.iter().map(|e| {
        let named = format!("{folder}/{}", e.kustomization);
        let file = crate::source::clean_relative(&named).unwrap_or(named);
        format!("{file}: {} `{}`", e.field, e.url)
    }));
    let closure = local.closure().map_err(|e| match e {
        crate::cache::closure::Uncacheable::Network { kustomization, url } => {
            format!("{kustomization} still reads `{url}`")
        }
        other => other
            .security_error()
            .unwrap_or_else(|| "its inputs cannot be pinned down (helmCharts)".to_string()),
    })?;
    // Only the objects are taken: the vars, notes and template of this build are not the
    // Kustomization's.
    let mut scratch = r.clone();
    let artifact = render_prepared(ctx, ks, key, &mut scratch, &local, Some(&closure))
        .map_err(|e| e.to_string())?;
    Ok(artifact
        .objects
        .into_iter()
        .filter(|o| crate::model::read_offline(&o.id))
        .collect())
}

/// What `render_inner` produced.
pub(super) enum Rendered {
    /// A new artifact.
    Artifact(Artifact),
    /// The base render, reused as it is.
    Reused(Box<KustomizationRender>),
}

/// The base render of `ks` when a changed-only render may reuse it: the same Kustomization,
/// rendered, no file either build read has changed, the same strictness and unknown
/// sources, and the same values for the vars its objects reference (whether any var is
/// defined decides whether substitution runs at all).
pub(super) fn reusable(
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
                .filter(|n| matches!(n, Note::VarsUnknown { .. }))
                .cloned(),
        );
        r.reused = true;
        Box::new(r)
    })
}

/// [`reusable`] before `ks` is prepared, when no path was added or removed: its inputs in
/// head are then its inputs in base.
pub(super) fn reusable_unprepared(
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

/// One Kustomization's render, stage by stage as kustomize-controller runs them: Flux's
/// generator and the input closure, the build, then postBuild (vars, substitution, what the
/// apply changes).
pub(super) fn render_inner(
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
    // `--ignore-paths` rules are made for the repository's own tree.
    let ignore = opts
        .build_ignore
        .as_ref()
        .filter(|_| *map == PathMap::Same)
        .and_then(|b| b.for_kustomization(cluster, ks));
    let prepared = crate::kustomization_generator::prepare_ignoring(fs, ks, opts.origins, ignore)?;
    r.build_path = map.folder(&prepared.rel_path);
    r.generated.clone_from(&prepared.generated);
    let closure = input_closure(&prepared, ks, map, &opts.network, &mut r.remote_inputs)?;
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
    render_prepared(ctx, ks, key, r, &prepared, closure.as_ref()).map(Rendered::Artifact)
}

/// The stages after the generator: the build of `prepared` (whose input closure is
/// `closure`), then postBuild (vars, substitution, what the apply changes).
fn render_prepared(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    key: &Key,
    r: &mut KustomizationRender,
    prepared: &crate::kustomization_generator::Prepared,
    closure: Option<&crate::cache::closure::Closure>,
) -> Result<Artifact, Error> {
    let Ctx { map, opts, .. } = *ctx;
    let (output, maker, delegated) = build(ctx, ks, prepared, closure)?;
    r.built_by = Some(maker);
    r.delegated = delegated;
    let (output, origins) = take_origins(output, opts, prepared, map);
    let mut template = Artifact::from_kustomize_output(output.clone())?;
    for (o, origin) in template.objects.iter_mut().zip(&origins) {
        o.origin.clone_from(origin);
    }
    // Kept before substitution runs, so that the audit can read the template of a
    // Kustomization whose substitution fails.
    r.template = Some(template.clone());
    // The controller checks each object, then substitutes it, one object after the other:
    // the vars are first read for the first object not marked `substitute: disabled`, so
    // an object before it that does not conform fails the build first.
    let first_read = match &ks.post_build {
        Some(_) => template
            .objects
            .iter()
            .position(|o| !crate::flux::substitution_disabled(&o.object)),
        None => None,
    };
    if let Some(bad) = template
        .objects
        .iter()
        .position(|o| !postbuild::kustomization::conforms(&o.object))
    {
        if first_read.is_none_or(|read| bad <= read) {
            return Err(Error::NotConforming(
                postbuild::kustomization::go_json_text(&template.objects[bad].object),
            ));
        }
    }
    let first = first_read.map(|i| crate::flux::ObjectId::of(&template.objects[i].object));
    let substitute_with = match &ks.post_build {
        Some(pb) => postbuild_vars(pb, key, &output, first.as_ref(), r)?,
        None => None,
    };
    Ok(postbuild::kustomization::substitute_kustomization(
        ctx.cache,
        ks,
        key.strict,
        r,
        template,
        &origins,
        substitute_with.as_ref(),
    )
    .map_err(|e| place_substitution_failure(e, ctx, ks, r))?)
}

/// A substitution failure of envsubst placed at its `${...}` in the repository's file (see
/// `places`), when the Kustomization is built from the repository's own tree and a file
/// shows it.
fn place_substitution_failure(
    e: postbuild::kustomization::PostBuildError,
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    r: &KustomizationRender,
) -> postbuild::kustomization::PostBuildError {
    use postbuild::kustomization::PostBuildError;
    let PostBuildError::Substitute {
        object,
        source,
        at: None,
    } = e
    else {
        return e;
    };
    let at = match (&*source, ctx.map) {
        (postbuild::SubstituteError::Envsubst(err), PathMap::Same) => r
            .template
            .iter()
            .flat_map(|t| &t.objects)
            .find(|o| o.id == object)
            .and_then(|o| super::places::substitution_place(ctx.fs, ks, r, o, err))
            .map(String::into_boxed_str),
        _ => None,
    };
    PostBuildError::Substitute { object, source, at }
}

/// The build's input closure; a path leaving the source root fails here, before any
/// builder reads it, as Flux's secure file system fails it (the kustomize binary would read
/// it). `None` when the closure cannot be known (the builder then reports why).
pub(super) fn input_closure(
    prepared: &crate::kustomization_generator::Prepared,
    ks: &Kustomization,
    map: &PathMap,
    network: &crate::net::Network,
    remote_inputs: &mut Vec<String>,
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
        Err(crate::cache::closure::Uncacheable::Network { kustomization, url }) => {
            // `apps/x/../base/kustomization.yaml` as `apps/base/kustomization.yaml`.
            let named = |kustomization: &str| {
                let named = format!("{}{kustomization}", folder());
                crate::source::clean_relative(&named).unwrap_or(named)
            };
            let entries = prepared.remote_entries();
            remote_inputs.extend(entries.iter().map(|e| e.url.clone()));
            if !network.reaches() {
                return Err(Error::NeedsNetwork {
                    path: ks.path.clone(),
                    kustomization: named(&kustomization),
                    url,
                });
            }
            // Every entry the network permits (base-trusted: the base names it), or the
            // build is not run: the first refused one is named.
            for e in &entries {
                let checked = network.permits(&e.url).and_then(|()| {
                    network
                        .fetch_box
                        .precheck(&e.url)
                        .map_err(|b| crate::net::Refusal::Boxed(b.0))
                });
                if let Err(refusal) = checked {
                    return Err(Error::NotFetched {
                        path: ks.path.clone(),
                        kustomization: named(&e.kustomization),
                        refusal,
                    });
                }
            }
            Ok(None)
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
pub(super) fn build(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    prepared: &crate::kustomization_generator::Prepared,
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
        network: ctx.opts.network.reaches(),
        git_http: ctx.opts.network.reaches() && ctx.opts.network.fetch_box.has_insecure_hosts(),
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
            if let Some(f) = fluxsim_kustomize::KUSTOMIZATION_FILES
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
pub(super) fn take_origins(
    output: String,
    opts: &RenderOptions,
    prepared: &crate::kustomization_generator::Prepared,
    map: &PathMap,
) -> (String, Vec<Option<Origin>>) {
    if !opts.origins {
        return (output, Vec::new());
    }
    // Annotations the kustomization asks for itself (or Flux's generator asks for) are part
    // of what Flux applies: kept, and read all the same.
    let (stripped, raw) = crate::artifact::strip_origins(&output);
    let stripped = if prepared.user_origins {
        output
    } else {
        stripped
    };
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
/// `Always`). `first` is the first object substituted: the controller reads the vars for
/// it (`SubstituteVariables` in fluxcd/pkg `kustomize/kustomize_varsub.go`, once per object
/// not marked `substitute: disabled`), so a source it cannot read fails there, naming it as
/// `post build failed for '...'` does; with no such object the vars are never read.
pub(super) fn postbuild_vars(
    pb: &crate::flux::PostBuild,
    key: &Key,
    output: &str,
    first: Option<&crate::flux::ObjectId>,
    r: &mut KustomizationRender,
) -> Result<Option<BTreeMap<String, String>>, Error> {
    let res = match (key.vars.clone(), first) {
        (Ok(res), _) => res,
        (Err(e), Some(first)) => return Err(Error::Vars(format!("{first}: {e}"))),
        (Err(_), None) => return Ok(None),
    };
    r.notes.extend(res.notes);
    r.vars = res.vars;
    r.unknown_sources.clone_from(&res.unknown_sources);
    let mut vars: BTreeMap<String, String> = r
        .vars
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect();
    if !res.unknown_sources.is_empty() {
        // The keys of a source made at run time are unknown: every var the objects
        // reference without a default that no known source defines may come from it, and
        // is placeheld.
        for name in postbuild::kustomization::referenced_undefined(output, &vars)? {
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
                None => format!("{s} is found nowhere yet"),
            })
            .collect();
        r.notes.push(Note::VarsUnknown {
            whence,
            placeholders: names,
        });
    }
    if postbuild::should_substitute(&vars, pb.always) || !res.unknown_sources.is_empty() {
        r.substituted = true;
        return Ok(Some(vars));
    }
    Ok(None)
}
