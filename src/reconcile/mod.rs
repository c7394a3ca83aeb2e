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

use crate::artifact::Artifact;
use crate::build::BuildCache;
use crate::discover::Cluster;
use crate::flux::{is_kustomization, Kustomization, NamespacedName, ObjectId, SubstituteFrom};
use crate::postbuild;

/// How to render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Strict substitution (kustomize-controller's default since v1.9.0).
    pub strict: bool,
}

/// Where one var's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarSource {
    /// `inline` for `postBuild.substitute`, else `ConfigMap/name` or `Secret/name`.
    pub source: String,
    /// The value is SOPS-encrypted ciphertext: the real value is unknown offline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub encrypted: bool,
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
    /// Things the user should know (encrypted vars, unknown values).
    pub notes: Vec<String>,
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
    let mut objects: BTreeMap<ObjectId, Value> = BTreeMap::new();
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
            for id in &left {
                let (ks, parent) = &known[id];
                let missing = ks.depends_on.iter().find(|d| !known.contains_key(*d));
                let reason = match missing {
                    Some(d) => {
                        format!("dependsOn `{d}`, which no Kustomization in this cluster defines")
                    }
                    None => format!("dependency cycle: {}", cycle_from(id, &known).join(" -> ")),
                };
                done.insert(id.clone(), blocked(ks, parent.clone(), reason));
            }
            break;
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
                render_kustomization(
                    root,
                    ks,
                    parent.clone(),
                    own_source.as_ref(),
                    &objects,
                    cache,
                    opts,
                )
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
                    if let Ok(json) = crate::postbuild::yaml_json::yaml_to_json(&o.yaml) {
                        if let Ok(v) = serde_json::from_str::<Value>(&json) {
                            if is_kustomization(&v) {
                                if let Ok(child) = Kustomization::from_json(&v) {
                                    known
                                        .entry(child.id.clone())
                                        .or_insert((child, Some(r.kustomization.id.clone())));
                                }
                            }
                            objects.insert(o.id.clone(), v);
                        }
                    }
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

fn cycle_from(
    start: &NamespacedName,
    known: &BTreeMap<NamespacedName, (Kustomization, Option<NamespacedName>)>,
) -> Vec<String> {
    let mut path = vec![start.clone()];
    let mut at = start.clone();
    for _ in 0..=known.len() {
        let Some(next) = known
            .get(&at)
            .and_then(|(k, _)| k.depends_on.first().cloned())
        else {
            break;
        };
        if let Some(i) = path.iter().position(|p| *p == next) {
            let mut cycle: Vec<String> = path[i..].iter().map(|p| p.name.clone()).collect();
            cycle.push(next.name.clone());
            return cycle;
        }
        path.push(next.clone());
        at = next;
    }
    path.iter().map(|p| p.name.clone()).collect()
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
        substituted: false,
        vars: BTreeMap::new(),
        vars_used: BTreeSet::new(),
        build_path: None,
        generated: None,
        notes: Vec::new(),
    }
}

/// Resolves the vars of a Kustomization from the objects on the cluster
/// (`loadVars` in `kustomize_varsub.go`): substituteFrom in order, later wins; inline wins.
fn resolve_vars(
    ks: &Kustomization,
    objects: &BTreeMap<ObjectId, Value>,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, (String, VarSource)>, String> {
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
                    vars.insert(k.clone(), (value.replace('\n', ""), source.clone()));
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
        };
        vars.insert(k.clone(), (v.replace('\n', ""), src));
    }
    Ok(vars)
}

fn render_kustomization(
    root: &Path,
    ks: &Kustomization,
    parent: Option<NamespacedName>,
    own_source: Option<&crate::flux::SourceRef>,
    objects: &BTreeMap<ObjectId, Value>,
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
) -> KustomizationRender {
    let mut r = blocked(ks, parent, String::new());
    if ks.suspend {
        r.status = Status::Suspended;
        return r;
    }
    if let (Some(src), Some(own)) = (&ks.source_ref, own_source) {
        if src != own {
            r.status = Status::External(format!(
                "source {}/{}/{}",
                src.kind, src.namespace, src.name
            ));
            return r;
        }
    }
    match render_inner(root, ks, objects, cache, opts, &mut r) {
        Ok(artifact) => {
            r.artifact = Some(artifact);
            r.status = Status::Rendered;
        }
        Err(e) => r.status = Status::Failed(e),
    }
    r
}

fn render_inner(
    root: &Path,
    ks: &Kustomization,
    objects: &BTreeMap<ObjectId, Value>,
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
    r: &mut KustomizationRender,
) -> Result<Artifact, String> {
    let prepared = crate::generate::prepare(root, ks).map_err(|e| e.to_string())?;
    r.build_path = Some(prepared.rel_path.clone());
    r.generated.clone_from(&prepared.generated);
    let output = cache
        .build(&prepared.key, &prepared.dir)
        .map_err(|e| e.to_string())?;
    let Some(pb) = &ks.post_build else {
        return Artifact::from_kustomize_output(output);
    };
    let resolved = resolve_vars(ks, objects, &mut r.notes)?;
    r.vars = resolved
        .iter()
        .map(|(k, (_, s))| (k.clone(), s.clone()))
        .collect();
    let vars: BTreeMap<String, String> = resolved.into_iter().map(|(k, (v, _))| (k, v)).collect();
    if !postbuild::should_substitute(&vars, pb.always) {
        return Artifact::from_kustomize_output(output);
    }
    r.substituted = true;
    // Each object is substituted on its own text, as kustomize printed it (res.AsYAML()).
    let mut pieces: Vec<(bool, String)> = Vec::new();
    for doc in crate::manifest::split_documents(&output) {
        let json = crate::postbuild::yaml_json::yaml_to_json(doc).map_err(|e| e.to_string())?;
        let obj: Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        if postbuild::substitution_disabled(&obj) {
            pieces.push((false, doc.to_string()));
            continue;
        }
        r.vars_used.extend(postbuild::referenced_vars(doc));
        let out = postbuild::substitute_text(doc, &vars, opts.strict)
            .map_err(|e| format!("{}: {e}", ObjectId::of(&obj)))?;
        pieces.push((true, out));
    }
    // Flux rebuilds each substituted object from JSON; kustomize prints it from there.
    let reprinted = reprint(cache, &pieces)?;
    Artifact::from_kustomize_output(reprinted)
}

/// Prints objects the way kustomize prints resources read back from JSON, in legacy order.
fn reprint(cache: &BuildCache<'_>, pieces: &[(bool, String)]) -> Result<String, String> {
    let dir = tempfile::Builder::new()
        .prefix("fluxsim-postbuild-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    for (i, (is_json, text)) in pieces.iter().enumerate() {
        let name = format!("r{i:05}.{}", if *is_json { "json" } else { "yaml" });
        std::fs::write(dir.path().join(&name), text).map_err(|e| e.to_string())?;
        names.push(name);
    }
    let k = serde_json::json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": names});
    std::fs::write(dir.path().join("kustomization.yaml"), k.to_string())
        .map_err(|e| e.to_string())?;
    let key = format!(
        "reprint#{}",
        crate::artifact::sha256_hex(
            pieces
                .iter()
                .fold(String::new(), |mut s, (j, t)| {
                    let _ = write!(s, "{j}\0{t}\0");
                    s
                })
                .as_bytes()
        )
    );
    cache
        .build(&key, dir.path())
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
