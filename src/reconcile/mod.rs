//! Simulating kustomize-controller on each cluster: start at the root Kustomization, build it,
//! find the Flux Kustomizations it applies, and reconcile them in `dependsOn` order, each with
//! the vars that earlier reconciles put on the cluster.
//!
//! Kustomizations that are ready at the same time (a wave) are built in parallel; the result
//! is sorted, so it does not depend on thread timing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::artifact::{Artifact, Origin};
use crate::build::BuildCache;
use crate::discover::Cluster;
use crate::flux::{is_kustomization, Kustomization, NamespacedName, ObjectId, SubstituteFrom};
use crate::postbuild;

/// The objects on a cluster, by id (shared with the artifacts that applied them).
type Objects = BTreeMap<ObjectId, std::sync::Arc<Value>>;

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
    /// Strict substitution (kustomize-controller's default since v1.9.0).
    pub strict: bool,
    /// Record each object's origin (see `RepoOptions::origins`).
    pub origins: bool,
    /// Reuse base renders whose inputs did not change (`diff --changed-only`).
    pub reuse: Option<std::sync::Arc<Reuse>>,
}

/// Where one var's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarSource {
    /// `inline` for `postBuild.substitute`, else `ConfigMap/name` or `Secret/name`.
    pub source: String,
    /// The value is SOPS-encrypted ciphertext: the real value is unknown offline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub encrypted: bool,
    /// The value (never printed by `render`: it may come from a Secret).
    #[serde(skip)]
    pub value: String,
}

/// What became of one Kustomization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Status {
    /// Built, substituted, ready to apply.
    Rendered,
    /// The build or the substitution failed.
    Failed(String),
    /// Never reconciled: a dependency failed, is missing, or is part of a cycle.
    Blocked(String),
    /// Its source is not this repository; not rendered.
    External(String),
    /// `spec.suspend: true`.
    Suspended,
}

impl Status {
    /// The word for the outcome, as reports print it.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Rendered => "rendered",
            Status::Failed(_) => "failed",
            Status::Blocked(_) => "blocked",
            Status::External(_) => "external",
            Status::Suspended => "suspended",
        }
    }
}

/// One Kustomization's render.
#[derive(Debug, Clone, Serialize)]
pub struct KustomizationRender {
    /// The Kustomization as applied on the cluster (after its parent's substitution).
    pub kustomization: Kustomization,
    /// The Kustomization that applies this one (`None` for the root).
    pub parent: Option<NamespacedName>,
    /// The outcome.
    pub status: Status,
    /// The artifact, when rendered.
    pub artifact: Option<Artifact>,
    /// The build output before postBuild substitution and apply-time changes (the template
    /// the artifact was made from); equal to the artifact when nothing changed it.
    #[serde(skip)]
    pub template: Option<Artifact>,
    /// Whether postBuild substitution ran.
    pub substituted: bool,
    /// The vars available to substitution and where each came from.
    pub vars: BTreeMap<String, VarSource>,
    /// The var names referenced by the substituted objects.
    pub vars_used: BTreeSet<String>,
    /// The directory built, relative to the source root.
    pub build_path: Option<String>,
    /// The kustomization file fluxsim generated or merged, when it wrote one.
    pub generated: Option<String>,
    /// Which builder made the build output (`None` when there is none: not rendered, or the
    /// build failed).
    pub built_by: Option<crate::build::Maker>,
    /// Things the user should know (encrypted vars, unknown values).
    pub notes: Vec<String>,
    /// The files the build read, relative to the source root (`None` when they cannot be
    /// pinned down: remote bases, Helm charts).
    #[serde(skip)]
    pub inputs: Option<BTreeSet<String>>,
    /// Taken from the base render unchanged (`diff --changed-only`): same spec, same vars,
    /// and no input file changed.
    #[serde(skip)]
    pub reused: bool,
}

/// One cluster's render.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRender {
    /// The cluster's name.
    pub name: String,
    /// Every Kustomization reached, sorted by namespace and name.
    pub kustomizations: Vec<KustomizationRender>,
    /// The order in which they reconciled: waves of ids.
    pub waves: Vec<Vec<NamespacedName>>,
}

impl ClusterRender {
    /// Looks up a Kustomization by `namespace/name` or by name alone.
    #[must_use]
    pub fn find(&self, which: &str) -> Option<&KustomizationRender> {
        self.kustomizations.iter().find(|k| {
            let id = &k.kustomization.id;
            which == id.to_string() || which == id.name
        })
    }
}

/// Renders one cluster.
pub fn render_cluster(
    root: &Path,
    cluster: &Cluster,
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
) -> ClusterRender {
    let mut known: BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)> =
        BTreeMap::new();
    known.insert(cluster.root.id.clone(), (cluster.root.clone(), None));
    let mut done: BTreeMap<NamespacedName, KustomizationRender> = BTreeMap::new();
    let mut objects: Objects = BTreeMap::new();
    let mut waves = Vec::new();
    let own_source = cluster.root.source_ref.clone();
    loop {
        let pending: Vec<&NamespacedName> =
            known.keys().filter(|k| !done.contains_key(*k)).collect();
        if pending.is_empty() {
            break;
        }
        let mut ready = Vec::new();
        let mut settled = Vec::new();
        for id in pending {
            let (ks, parent) = &known[id];
            let blame = ks
                .depends_on
                .iter()
                .find_map(|d| match done.get(d).map(|r| &r.status) {
                    Some(Status::Rendered | Status::External(_)) => None,
                    Some(_) => Some(format!("dependency `{d}` is not ready")),
                    None => Some(String::new()),
                });
            match blame {
                None => ready.push((ks.clone(), parent.clone())),
                Some(reason) if !reason.is_empty() => {
                    settled.push(blocked(ks, parent.clone(), reason));
                }
                Some(_) => {}
            }
        }
        if ready.is_empty() && settled.is_empty() {
            // Nothing can move: what is left waits on a missing Kustomization or a cycle.
            let left: Vec<NamespacedName> = known
                .keys()
                .filter(|k| !done.contains_key(*k))
                .cloned()
                .collect();
            // Block only what names a missing Kustomization or sits on a cycle; what merely
            // waits on those is blocked on the next pass as "dependency not ready".
            let mut settled_now = false;
            for id in &left {
                let (ks, parent) = &known[id];
                let missing = ks.depends_on.iter().find(|d| !known.contains_key(*d));
                let reason = match missing {
                    Some(d) => Some(format!(
                        "dependsOn `{d}`, which no Kustomization in this cluster defines"
                    )),
                    None => cycle_through(id, &known)
                        .map(|c| format!("dependency cycle: {}", c.join(" -> "))),
                };
                if let Some(reason) = reason {
                    done.insert(id.clone(), blocked(ks, parent.clone(), reason));
                    settled_now = true;
                }
            }
            if !settled_now {
                break;
            }
            continue;
        }
        for r in settled {
            done.insert(r.kustomization.id.clone(), r);
        }
        if ready.is_empty() {
            continue;
        }
        let rendered: Vec<KustomizationRender> = ready
            .par_iter()
            .map(|(ks, parent)| {
                let ctx = Ctx {
                    root,
                    cluster: &cluster.name,
                    own_source: own_source.as_ref(),
                    cache,
                    opts,
                };
                render_kustomization(&ctx, ks, parent.clone(), &objects)
            })
            .collect();
        waves.push(
            rendered
                .iter()
                .map(|r| r.kustomization.id.clone())
                .collect(),
        );
        for r in rendered {
            if let Some(a) = &r.artifact {
                for o in &a.objects {
                    if is_kustomization(&o.object) {
                        if let Ok(child) = Kustomization::from_json(&o.object) {
                            known
                                .entry(child.id.clone())
                                .or_insert((child, Some(r.kustomization.id.clone())));
                        }
                    }
                    objects.insert(o.id.clone(), o.object.clone());
                }
            }
            done.insert(r.kustomization.id.clone(), r);
        }
    }
    ClusterRender {
        name: cluster.name.clone(),
        kustomizations: done.into_values().collect(),
        waves,
    }
}

/// The dependency cycle `start` is on, as names from `start` back to it, if it is on one.
fn cycle_through(
    start: &NamespacedName,
    known: &BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)>,
) -> Option<Vec<String>> {
    // Depth-first search over dependsOn edges for a path that returns to `start`.
    fn dfs(
        at: &NamespacedName,
        start: &NamespacedName,
        known: &BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)>,
        path: &mut Vec<NamespacedName>,
        seen: &mut BTreeSet<NamespacedName>,
    ) -> bool {
        let Some((ks, _)) = known.get(at) else {
            return false;
        };
        for d in &ks.depends_on {
            if d == start {
                return true;
            }
            if seen.insert(d.clone()) {
                path.push(d.clone());
                if dfs(d, start, known, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.clone()];
    let mut seen = BTreeSet::new();
    if dfs(start, start, known, &mut path, &mut seen) {
        path.push(start.clone());
        Some(path.iter().map(|p| p.name.clone()).collect())
    } else {
        None
    }
}

fn blocked(
    ks: &Kustomization,
    parent: Option<NamespacedName>,
    reason: String,
) -> KustomizationRender {
    KustomizationRender {
        kustomization: ks.clone(),
        parent,
        status: Status::Blocked(reason),
        artifact: None,
        template: None,
        substituted: false,
        vars: BTreeMap::new(),
        vars_used: BTreeSet::new(),
        build_path: None,
        generated: None,
        built_by: None,
        notes: Vec::new(),
        inputs: None,
        reused: false,
    }
}

/// Resolves the vars of a Kustomization from the objects on the cluster
/// (`loadVars` in `kustomize_varsub.go`): substituteFrom in order, later wins; inline wins.
fn resolve_vars(
    ks: &Kustomization,
    objects: &Objects,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, VarSource>, String> {
    let mut vars = BTreeMap::new();
    let Some(pb) = &ks.post_build else {
        return Ok(vars);
    };
    for SubstituteFrom {
        kind,
        name,
        optional,
    } in &pb.substitute_from
    {
        let id = ObjectId {
            group: String::new(),
            kind: kind.clone(),
            namespace: ks.id.namespace.clone(),
            name: name.clone(),
        };
        let Some(obj) = objects.get(&id) else {
            if *optional {
                notes.push(format!(
                    "optional {kind}/{name} is not on the cluster yet: skipped"
                ));
                continue;
            }
            return Err(format!(
                "substitute from '{kind}/{name}' error: {kind} `{}/{name}` not found (no \
                 Kustomization reconciled before this one applies it)",
                ks.id.namespace
            ));
        };
        let encrypted = obj.get("sops").is_some();
        if encrypted {
            notes.push(format!(
                "vars from SOPS-encrypted {kind}/{name} are unknown offline: ciphertext used"
            ));
        }
        let source = VarSource {
            source: format!("{kind}/{name}"),
            encrypted,
            value: String::new(),
        };
        let as_string = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut put = |field: &str, decode: bool| {
            if let Some(map) = obj.get(field).and_then(Value::as_object) {
                for (k, v) in map {
                    let mut value = as_string(v);
                    if decode && !encrypted {
                        if let Ok(bytes) =
                            base64::engine::general_purpose::STANDARD.decode(value.trim())
                        {
                            value = String::from_utf8_lossy(&bytes).into_owned();
                        }
                    }
                    let mut var = source.clone();
                    var.value = value.replace('\n', "");
                    vars.insert(k.clone(), var);
                }
            }
        };
        if kind == "Secret" {
            put("data", true);
            // The API server folds stringData into data when the Secret is applied.
            put("stringData", false);
        } else {
            put("data", false);
        }
    }
    for (k, v) in &pb.substitute {
        let src = VarSource {
            source: "inline".into(),
            encrypted: false,
            value: v.replace('\n', ""),
        };
        vars.insert(k.clone(), src);
    }
    Ok(vars)
}

/// What every Kustomization of one cluster's render shares.
struct Ctx<'a> {
    /// The source root.
    root: &'a Path,
    /// The cluster's name.
    cluster: &'a str,
    /// The source the cluster root reconciles from.
    own_source: Option<&'a crate::flux::SourceRef>,
    cache: &'a BuildCache<'a>,
    opts: &'a RenderOptions,
}

fn render_kustomization(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    parent: Option<NamespacedName>,
    objects: &Objects,
) -> KustomizationRender {
    let mut r = blocked(ks, parent, String::new());
    if ks.suspend {
        r.status = Status::Suspended;
        return r;
    }
    if let (Some(src), Some(own)) = (&ks.source_ref, ctx.own_source) {
        if src != own {
            r.status = Status::External(format!(
                "source {}/{}/{}",
                src.kind, src.namespace, src.name
            ));
            return r;
        }
    }
    match render_inner(ctx, ks, objects, &mut r) {
        Ok(Rendered::Artifact(artifact)) => {
            r.artifact = Some(artifact);
            r.status = Status::Rendered;
        }
        Ok(Rendered::Reused(base)) => return *base,
        Err(e) => r.status = Status::Failed(e),
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
/// rendered, no file either build read has changed, and the same values for the vars its
/// objects reference (whether any var is defined decides whether substitution runs at all).
fn reusable(
    reuse: &Reuse,
    cluster: &str,
    ks: &Kustomization,
    inputs: Option<&BTreeSet<String>>,
    objects: &Objects,
) -> Option<Box<KustomizationRender>> {
    let base = reuse.base.get(&(cluster.to_string(), ks.id.clone()))?;
    let untouched =
        |files: Option<&BTreeSet<String>>| files.is_some_and(|f| f.is_disjoint(&reuse.changed));
    if base.kustomization != *ks
        || base.status != Status::Rendered
        || !untouched(inputs)
        || !untouched(base.inputs.as_ref())
    {
        return None;
    }
    let mut notes = Vec::new();
    let vars = resolve_vars(ks, objects, &mut notes).ok()?;
    let value = |m: &BTreeMap<String, VarSource>, v: &String| m.get(v).map(|s| s.value.clone());
    let same_vars = vars.is_empty() == base.vars.is_empty()
        && base
            .vars_used
            .iter()
            .all(|v| value(&vars, v) == value(&base.vars, v));
    same_vars.then(|| {
        let mut r = base.clone();
        r.vars = vars;
        r.notes = notes;
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
    objects: &Objects,
) -> Option<Box<KustomizationRender>> {
    if !reuse.same_paths {
        return None;
    }
    let base = reuse.base.get(&(cluster.to_string(), ks.id.clone()))?;
    reusable(reuse, cluster, ks, base.inputs.as_ref(), objects)
}

fn render_inner(
    ctx: &Ctx<'_>,
    ks: &Kustomization,
    objects: &Objects,
    r: &mut KustomizationRender,
) -> Result<Rendered, String> {
    let Ctx {
        root,
        cluster,
        cache,
        opts,
        ..
    } = *ctx;
    if let Some(base) = opts
        .reuse
        .as_ref()
        .and_then(|reuse| reusable_unprepared(reuse, cluster, ks, objects))
    {
        return Ok(Rendered::Reused(base));
    }
    let prepared = crate::generate::prepare(root, ks, opts.origins).map_err(|e| e.to_string())?;
    r.build_path = Some(prepared.rel_path.clone());
    r.generated.clone_from(&prepared.generated);
    // A path leaving the source root fails the build before any builder reads it, as
    // Flux's secure file system fails it (the kustomize binary would read it).
    let closure = match prepared.closure() {
        Ok(c) => Some(c),
        Err(e) => match e.security_error() {
            Some(msg) => {
                let file = if prepared.rel_path == "." {
                    String::new()
                } else {
                    format!("{}/", prepared.rel_path)
                };
                return Err(format!("spec.path `{}`: {file}{msg}", ks.path));
            }
            None => None,
        },
    };
    r.inputs = closure.as_ref().map(|c| c.source_files(&prepared.rel_path));
    if let Some(reuse) = &opts.reuse {
        if let Some(base) = reusable(reuse, cluster, ks, r.inputs.as_ref(), objects) {
            return Ok(Rendered::Reused(base));
        }
    }
    let on_disk = || {
        prepared
            .dir()
            .map_err(|e| crate::build::BuildError::Failed(e.to_string()))
    };
    let job = crate::build::Job {
        dir: prepared.source_dir.clone(),
        files: prepared.memory_files(),
        on_disk: &on_disk,
    };
    let (output, maker) = cache
        .build_made(&prepared.key, closure.as_ref(), &job)
        .map_err(|e| {
            // Name files by their place in the source, not by fluxsim's temporary directories.
            // The same build may have failed in another cluster's overlay (the error is
            // shared through the cache), so any of fluxsim's folders is taken out.
            let mut msg = e.to_string().replace(&format!("{}/", root.display()), "");
            msg = temp_folder_re().replace_all(&msg, "").into_owned();
            // kustomize does not say which file it could not read as a kustomization.
            if msg.contains("invalid Kustomization") {
                let dir = root.join(&prepared.rel_path);
                if let Some(f) = crate::generate::KUSTOMIZATION_FILES
                    .iter()
                    .find(|f| crate::source::view::is_file(&dir.join(f)))
                {
                    let file = if prepared.rel_path == "." {
                        (*f).to_string()
                    } else {
                        format!("{}/{f}", prepared.rel_path)
                    };
                    msg = format!("{file}: {msg}");
                }
            }
            format!("spec.path `{}`: {msg}", ks.path)
        })?;
    r.built_by = Some(maker);
    // Origins asked for by fluxsim (not by the user) are taken out before anything else
    // sees the output, so digests do not depend on them.
    let (output, origins) = if opts.origins && !prepared.user_origins {
        let (stripped, raw) = crate::artifact::strip_origins(&output);
        let origins: Vec<Option<Origin>> = raw
            .into_iter()
            .map(|o| o.map(|o| o.relative_to(&prepared.rel_path)))
            .collect();
        (stripped, origins)
    } else {
        (output, Vec::new())
    };
    let mut template = Artifact::from_kustomize_output(output.clone())?;
    for (o, origin) in template.objects.iter_mut().zip(&origins) {
        o.origin.clone_from(origin);
    }
    // Kept before substitution runs, so that the audit can read the template of a
    // Kustomization whose substitution fails.
    r.template = Some(template.clone());
    let mut substitute_with = None;
    if let Some(pb) = &ks.post_build {
        r.vars = resolve_vars(ks, objects, &mut r.notes)?;
        let vars: BTreeMap<String, String> = r
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        if postbuild::should_substitute(&vars, pb.always) {
            r.substituted = true;
            substitute_with = Some(vars);
        }
    }
    let mut changed = substitute_with.is_some();
    // Each object as kustomize printed it; `true` marks JSON that Flux rebuilt.
    let mut pieces: Vec<(bool, String)> = Vec::new();
    let mut piece_ids: Vec<ObjectId> = Vec::new();
    for doc in crate::manifest::split_documents(&output) {
        let mut obj = crate::manifest::parse_object(doc)?;
        let mut piece = (false, doc.to_string());
        if let Some(vars) = &substitute_with {
            // Each object is substituted on its own text, as kustomize printed it
            // (res.AsYAML() in kustomize_varsub.go), then rebuilt from JSON.
            if !postbuild::substitution_disabled(&obj) {
                r.vars_used.extend(postbuild::referenced_vars(doc));
                let out = postbuild::substitute_text(doc, vars, opts.strict)
                    .map_err(|e| format!("{}: {e}", ObjectId::of(&obj)))?;
                obj = serde_json::from_str(&out).map_err(|e| e.to_string())?;
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
    if !changed {
        return Ok(Rendered::Artifact(template));
    }
    // kustomize prints the rebuilt objects as it prints resources read from JSON.
    let reprinted = reprint(cache, &pieces)?;
    let mut artifact = Artifact::from_kustomize_output(reprinted)?;
    if !origins.is_empty() {
        // Substitution may rename objects, so origins follow each piece's final id.
        let by_id: BTreeMap<&ObjectId, &Option<Origin>> = piece_ids.iter().zip(&origins).collect();
        for o in &mut artifact.objects {
            o.origin = by_id.get(&o.id).and_then(|x| (*x).clone());
        }
    }
    Ok(Rendered::Artifact(artifact))
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

/// Prints objects the way kustomize prints resources read back from JSON, in legacy order.
/// A path into one of fluxsim's temporary folders (overlays, copies of a viewed tree), up to
/// and including the folder itself.
fn temp_folder_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"[^\s'\x22]*fluxsim-(?:overlay|source)-[A-Za-z0-9]+/")
            .expect("static regex")
    })
}

fn reprint(cache: &BuildCache<'_>, pieces: &[(bool, String)]) -> Result<String, String> {
    let key = crate::artifact::sha256_hex(
        pieces
            .iter()
            .fold(String::new(), |mut s, (j, t)| {
                let _ = write!(s, "{j}\0{t}\0");
                s
            })
            .as_bytes(),
    );
    let names: Vec<String> = (0..pieces.len())
        .map(|i| format!("r{i:05}.{}", if pieces[i].0 { "json" } else { "yaml" }))
        .collect();
    let k = serde_json::json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": names});
    // The folder exists in memory for the native builder; it is written out only for the
    // kustomize binary. Its name is unique to the content, never one that exists.
    let virtual_dir = std::env::temp_dir().join(format!("fluxsim-postbuild-{key}.virtual"));
    let mut files = crate::build::native::vfs::Vfs::disk();
    // The build's inputs are exactly these files, so its closure is known without reading.
    let mut inputs = crate::build::closure::Closure {
        files: std::collections::BTreeMap::new(),
    };
    for (name, text) in std::iter::once(("kustomization.yaml", k.to_string())).chain(
        names
            .iter()
            .zip(pieces)
            .map(|(n, (_, t))| (n.as_str(), t.clone())),
    ) {
        inputs.files.insert(
            name.to_string(),
            crate::artifact::sha256_hex(text.as_bytes()),
        );
        files.insert(&virtual_dir.join(name), text);
    }
    let written: std::sync::OnceLock<Result<tempfile::TempDir, String>> =
        std::sync::OnceLock::new();
    let on_disk = || {
        written
            .get_or_init(|| {
                let dir = tempfile::Builder::new()
                    .prefix("fluxsim-postbuild-")
                    .tempdir()
                    .map_err(|e| e.to_string())?;
                for (name, (_, text)) in names.iter().zip(pieces) {
                    std::fs::write(dir.path().join(name), text).map_err(|e| e.to_string())?;
                }
                std::fs::write(dir.path().join("kustomization.yaml"), k.to_string())
                    .map_err(|e| e.to_string())?;
                Ok(dir)
            })
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .map_err(|e| crate::build::BuildError::Failed(e.clone()))
    };
    let job = crate::build::Job {
        dir: virtual_dir,
        files,
        on_disk: &on_disk,
    };
    cache
        .build_lazy(&format!("reprint#{key}"), Some(&inputs), &job)
        .map_err(|e| format!("printing the substituted objects: {e}"))
}

/// Renders every cluster in parallel.
pub fn render_clusters(
    root: &Path,
    clusters: &[Cluster],
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
) -> Vec<ClusterRender> {
    clusters
        .par_iter()
        .map(|c| render_cluster(root, c, cache, opts))
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

    fn cm(name: &str, data: Value) -> (ObjectId, std::sync::Arc<Value>) {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "flux-system"}, "data": data});
        (ObjectId::of(&v), v.into())
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
        let objects: BTreeMap<_, _> = [
            cm("a", json!({"A": "from-a", "B": "from-a", "C": "from-a"})),
            cm("b", json!({"B": "from-b\n"})),
        ]
        .into_iter()
        .collect();
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["A"].value, "from-a");
        assert_eq!(vars["B"].value, "from-b"); // and the newline is removed
        assert_eq!(
            vars["C"],
            VarSource {
                source: "inline".into(),
                encrypted: false,
                value: "inline".into(),
            }
        );
    }

    #[test]
    fn missing_substitute_from_fails_unless_optional() {
        let k =
            ks(json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone"}]}}));
        let err = resolve_vars(&k, &BTreeMap::new(), &mut Vec::new()).unwrap_err();
        assert!(err.contains("substitute from 'ConfigMap/gone'"), "{err}");
        let k = ks(
            json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone", "optional": true}]}}),
        );
        let mut notes = Vec::new();
        assert!(resolve_vars(&k, &BTreeMap::new(), &mut notes)
            .unwrap()
            .is_empty());
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn secret_data_is_base64_decoded_and_string_data_read() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"TOKEN": "czNjcjN0"}, "stringData": {"USER": "admin"}});
        let objects: Objects = [(ObjectId::of(&s), s.into())].into_iter().collect();
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["TOKEN"].value, "s3cr3t");
        assert_eq!(vars["USER"].value, "admin");
    }

    #[test]
    fn sops_encrypted_source_is_noted_as_unknown() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"K": "ENC[AES256_GCM,data:abc,type:str]"}, "sops": {"version": "3.8.1"}});
        let objects: Objects = [(ObjectId::of(&s), s.into())].into_iter().collect();
        let mut notes = Vec::new();
        let vars = resolve_vars(&k, &objects, &mut notes).unwrap();
        assert!(vars["K"].encrypted);
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
