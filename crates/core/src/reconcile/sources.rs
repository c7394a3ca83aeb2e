//! Where a Kustomization's vars come from in the steady state: the ConfigMaps and Secrets
//! that any Kustomization of the same cluster applies, what exists before Flux runs (the
//! root's own folder, applied by hand; `[[bootstrap.objects]]` of `fluxsim.toml`), a file of
//! the repository that nothing applies (a bootstrap script's), and a Secret an object of the
//! cluster makes at run time (`makers`: an ExternalSecret, a SealedSecret, ...), whose vars
//! cannot be known offline and become named placeholders. A source none of these gives,
//! and that is not `optional`, fails the Kustomization, as it does in Flux.
//!
//! Flux itself reads each `substituteFrom` object from the API server at reconcile time
//! (`LoadVariables` in fluxcd/pkg `kustomize/kustomize_varsub.go`, called by
//! `SubstituteVariables` for each object kustomize-controller substitutes): whatever is on
//! the cluster then is used, whoever put it there; a missing one that is not optional fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use serde_json::Value;

use super::objects::{Placed, World};
use crate::flux::{str_at, Kustomization, ObjectId, SubstituteFrom};
use crate::model::{Note, VarSource};
use crate::source::SourceFs;

// The prefix of every placeholder (no real value starts with it) is the model's: consumers read it.
pub use crate::model::PLACEHOLDER_PREFIX;

/// The placeholder for var `key` of the sources `sources` (`Secret/ns/name`, in
/// `substituteFrom` order): `fluxsim-unknown:Secret/ns/name:KEY`, several sources joined
/// with `+`. A plain YAML scalar (no `: `, `#`, quotes, brackets or commas) that stays the
/// same from revision to revision.
#[must_use]
pub fn placeholder(sources: &[String], key: &str) -> String {
    format!("{PLACEHOLDER_PREFIX}{}:{key}", sources.join("+"))
}

/// A ConfigMap or Secret defined in a file of the repository.
#[derive(Debug, Clone)]
pub struct FileObject {
    /// The file, relative to the source root.
    pub file: String,
    /// Its id (the namespace its own, else that of the kustomization file of its folder).
    pub id: ObjectId,
    /// The object.
    pub object: Arc<Value>,
}

/// The ConfigMaps and Secrets that the repository's files define, read the first time a
/// render asks for one.
#[derive(Debug)]
pub struct RepoObjects {
    fs: SourceFs,
    files: Vec<String>,
    index: OnceLock<Vec<FileObject>>,
}

impl RepoObjects {
    /// The YAML files of the source tree `fs` (paths relative to its root).
    #[must_use]
    pub fn new(fs: &SourceFs, files: Vec<String>) -> RepoObjects {
        RepoObjects {
            fs: fs.clone(),
            files,
            index: OnceLock::new(),
        }
    }

    /// Every ConfigMap and Secret defined in a file, in file order.
    fn index(&self) -> &[FileObject] {
        self.index.get_or_init(|| {
            let mut out = Vec::new();
            for rel in &self.files {
                let Ok(text) = self.fs.read_to_string(&self.fs.root().join(rel)) else {
                    continue;
                };
                if !(text.contains("ConfigMap") || text.contains("Secret")) {
                    continue;
                }
                let folder_ns = OnceLock::new();
                for doc in crate::manifest::split_documents(&text) {
                    let Ok(obj) = crate::manifest::parse_object(doc) else {
                        continue;
                    };
                    let mut id = ObjectId::of(&obj);
                    if !id.group.is_empty() || !matches!(id.kind.as_str(), "ConfigMap" | "Secret") {
                        continue;
                    }
                    if id.namespace.is_empty() {
                        // `kubectl apply -k` of the folder gives it the kustomization's
                        // namespace; without one, the file does not say where it goes.
                        let ns = folder_ns.get_or_init(|| self.folder_namespace(rel));
                        let Some(ns) = ns else { continue };
                        id.namespace.clone_from(ns);
                    }
                    out.push(FileObject {
                        file: rel.clone(),
                        id,
                        object: Arc::new(obj),
                    });
                }
            }
            out
        })
    }

    /// `namespace:` of the kustomization file beside `rel`, if any.
    fn folder_namespace(&self, rel: &str) -> Option<String> {
        let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
        fluxsim_kustomize::KUSTOMIZATION_FILES.iter().find_map(|f| {
            let text = self
                .fs
                .read_to_string(&self.fs.root().join(dir).join(f))
                .ok()?;
            let v = crate::manifest::parse_object(&text).ok()?;
            str_at(&v, &["namespace"])
                .filter(|n| !n.is_empty())
                .map(str::to_string)
        })
    }

    /// The files that define `id`.
    fn defining(&self, id: &ObjectId) -> Vec<&FileObject> {
        self.index().iter().filter(|o| o.id == *id).collect()
    }
}

/// What a render can read besides the Kustomizations' own builds.
#[derive(Debug)]
pub struct Outside {
    /// `fluxsim.toml`.
    pub config: crate::config::Config,
    /// Its `[[bootstrap.objects]]`, read.
    pub declared: Vec<crate::config::Declared>,
    /// The repository's ConfigMaps and Secrets.
    pub files: RepoObjects,
    /// Sources mapped to folders (`--source`, `[sources]`).
    pub mapped: super::trees::Mapped,
    /// What the repository's files say of Flux and Kubernetes versions.
    pub versions: crate::versions::FileEvidence,
    /// What the repository shows of the cluster's bootstrap.
    pub bootstrap: crate::bootstrap::BootstrapEvidence,
}

impl Outside {
    /// Nothing outside the Kustomizations (no config, no files of the source `fs`).
    #[must_use]
    pub fn none(fs: &SourceFs) -> Outside {
        Outside {
            config: crate::config::Config::default(),
            declared: Vec::new(),
            files: RepoObjects::new(fs, Vec::new()),
            mapped: super::trees::Mapped::default(),
            versions: crate::versions::FileEvidence::default(),
            bootstrap: crate::bootstrap::BootstrapEvidence::default(),
        }
    }
}

impl World {
    /// The versions the cluster runs, as fluxsim.toml, the objects on the cluster and the
    /// repository's files (`outside`) say, for cluster `cluster` whose folder is `home`.
    pub(crate) fn versions(
        &self,
        outside: &Outside,
        cluster: &str,
        home: &str,
    ) -> crate::versions::ClusterVersions {
        use crate::versions::{Assumed, Basis, Seen};
        let seen = || {
            self.objects.iter().map(|(id, p)| Seen {
                id,
                object: &p.object,
                from: &p.from,
            })
        };
        let flux = outside
            .config
            .versions
            .flux_for(cluster)
            .map(|(version, key)| Assumed {
                version,
                basis: Basis::Config { key },
            })
            .or_else(|| crate::versions::flux_from_objects(seen()))
            .or_else(|| outside.versions.flux_for(home))
            .or_else(|| {
                let used: std::collections::BTreeSet<(&str, &str, &str)> = self
                    .objects
                    .iter()
                    .filter(|(id, _)| id.group.ends_with(".fluxcd.io"))
                    .filter_map(|(id, p)| {
                        let api = p.object.get("apiVersion")?.as_str()?;
                        let (_, version) = api.rsplit_once('/')?;
                        Some((id.group.as_str(), version, id.kind.as_str()))
                    })
                    .collect();
                crate::versions::presumed_from_apis(used)
            })
            .unwrap_or_else(crate::versions::presumed_newest);
        let validate_key = outside
            .config
            .validate
            .kube_version
            .as_deref()
            .and_then(crate::versions::KubeVersion::parse)
            .map(|version| Assumed {
                version,
                basis: Basis::Config {
                    key: "[validate] kube_version".into(),
                },
            });
        let kubernetes = outside
            .config
            .versions
            .kube_for(cluster)
            .map(|(version, key)| Assumed {
                version,
                basis: Basis::Config { key },
            })
            .or(validate_key)
            .or_else(|| crate::versions::kube_from_objects(seen()))
            .or_else(|| outside.versions.kube_for(home, cluster));
        crate::versions::ClusterVersions { flux, kubernetes }
    }

    /// kustomize-controller's `StrictPostBuildSubstitutions` gate as the cluster sets it:
    /// the `--feature-gates` argument of a `kustomize-controller` Deployment on the cluster
    /// (a `gotk-components.yaml` patch shows there), or a Flux Operator `FluxInstance`'s
    /// `spec.kustomize.patches` on it; with where it was read.
    pub(crate) fn strict_gate(&self) -> Option<(bool, String)> {
        let mut found = None;
        for (id, p) in &self.objects {
            let gate = if id.kind == "Deployment" && id.name == "kustomize-controller" {
                deployment_gate(&p.object)
            } else if id.kind == "FluxInstance" {
                flux_instance_gate(&p.object)
            } else {
                None
            };
            if let Some(on) = gate {
                found = Some((on, format!("{id} ({})", p.from)));
            }
        }
        found
    }
}

fn deployment_gate(obj: &Value) -> Option<bool> {
    let containers = obj
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)?;
    let mut gate = None;
    for c in containers {
        for a in c
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(list) = a.as_str().and_then(|a| a.strip_prefix("--feature-gates=")) {
                gate = crate::config::strict_gate_in(list).or(gate);
            }
        }
    }
    gate
}

/// A `FluxInstance` patch of the kustomize-controller Deployment that sets the gate
/// (`spec.kustomize.patches`, applied by flux-operator to the Flux manifests).
fn flux_instance_gate(obj: &Value) -> Option<bool> {
    let patches = obj
        .pointer("/spec/kustomize/patches")
        .and_then(Value::as_array)?;
    let mut gate = None;
    for p in patches {
        let name = str_at(p, &["target", "name"]).unwrap_or("");
        if !(name.is_empty() || name.contains("kustomize-controller")) {
            continue;
        }
        let text = str_at(p, &["patch"]).unwrap_or("");
        for (at, _) in text.match_indices("--feature-gates=") {
            let rest = &text[at + "--feature-gates=".len()..];
            let list: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\''))
                .collect();
            gate = crate::config::strict_gate_in(&list).or(gate);
        }
    }
    gate
}

/// A Kustomization's vars, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resolution {
    /// The vars whose names are known, with their sources.
    pub(crate) vars: BTreeMap<String, VarSource>,
    /// The sources made at run time (by an ExternalSecret, a SealedSecret, ...), and before
    /// the last pass those found nowhere yet, as `Kind/namespace/name`, in `substituteFrom`
    /// order: the vars they may give are unknown.
    pub(crate) unknown_sources: Vec<String>,
    /// What the user should know.
    pub(crate) notes: Vec<Note>,
    /// What makes each unknown source (`ExternalSecret/ns/name (applied by ...)`).
    pub(crate) made_by: BTreeMap<String, String>,
}

/// Why a Kustomization's vars cannot be resolved: its failure, as the controller words it
/// (`substitute from 'Kind/name' error: ...`), with fluxsim's hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum VarsError {
    /// `--strict-sources`: a source made at run time, whose values are unknown offline.
    #[error(
        "substitute from '{kind}/{name}' error: {kind} `{namespace}/{name}` is made at run \
         time by {by}: its values are unknown offline (--strict-sources)"
    )]
    MadeAtRunTime {
        /// `ConfigMap` or `Secret`.
        kind: String,
        /// The source's name.
        name: String,
        /// The Kustomization's namespace, where Flux reads it.
        namespace: String,
        /// What makes it (`ExternalSecret/ns/name (applied by ...)`).
        by: String,
    },
    /// A source that is nowhere: not applied, not made at run time, in no file.
    #[error(
        "substitute from '{kind}/{name}' error: {resource} \"{name}\" not found ({whose} \
         {kind} `{namespace}/{name}`, which no Kustomization of this cluster applies, no \
         object of it makes at run time and no file of the repository defines; if something \
         outside the repository creates it, declare it in fluxsim.toml \
         ([[bootstrap.objects]] kind = \"{kind}\", namespace = \"{namespace}\", name = \
         \"{name}\", vars = {{ ... }}), else mark it `optional: true`)"
    )]
    NotFound {
        /// `ConfigMap` or `Secret`.
        kind: String,
        /// The source's name.
        name: String,
        /// The Kustomization's namespace.
        namespace: String,
        /// `configmaps` or `secrets`, as the API server's not-found says.
        resource: &'static str,
        /// Where the Kustomization reads it (`file:line: \`ns/name\` reads`).
        whose: String,
    },
}

/// The outcome of resolving a Kustomization's vars against a [`World`].
pub(crate) enum Resolved {
    /// A source is not on the cluster yet (and the fixed point has not settled).
    Wait,
    /// Resolved, or the reason the Kustomization fails.
    Ready(Result<Resolution, VarsError>),
}

/// How a lookup may fall back when a source is not on the cluster.
pub(crate) struct Lookup<'a> {
    pub(crate) outside: &'a Outside,
    /// Nothing else can move: sources not on the cluster are looked up in the repository's
    /// files, and else are unknown.
    pub(crate) settled: bool,
    /// The fixed point settled with every source found nowhere rendered with placeholders
    /// for the time being (a Kustomization's own objects may make its source: what it
    /// applies is on the cluster in the steady state); now such a source fails the
    /// Kustomization.
    pub(crate) last_pass: bool,
    /// `--strict-sources`: a source made at run time fails the Kustomization too (one found
    /// nowhere always does).
    pub(crate) strict_sources: bool,
    /// The cluster's folder (see [`home_of`]), and the other clusters' folders.
    pub(crate) home: &'a str,
    pub(crate) other_homes: &'a [String],
    /// Where a Kustomization is declared (`file:line`), when that can be told; asked only
    /// when a source it reads is found nowhere.
    pub(crate) declared_at: &'a dyn Fn(&Kustomization) -> Option<String>,
}

/// Why a Kustomization fails when a `substituteFrom` source that is not optional is found
/// nowhere: Flux's own words (`LoadVariables` in fluxcd/pkg `kustomize/kustomize_varsub.go`
/// wraps the API server's NotFound: `substitute from 'Secret/x' error: secrets "x" not
/// found`), then where the Kustomization is declared and how to tell fluxsim what the
/// repository cannot show.
fn not_found(ks: &Kustomization, kind: &str, name: &str, lookup: &Lookup<'_>) -> VarsError {
    let ns = &ks.id.namespace;
    let resource = if kind == "Secret" {
        "secrets"
    } else {
        "configmaps"
    };
    let whose = match (lookup.declared_at)(ks) {
        Some(at) => format!("{at}: `{}` reads", ks.id),
        None => format!("`{}` reads", ks.id),
    };
    VarsError::NotFound {
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: ns.clone(),
        resource,
        whose,
    }
}

/// Resolves the vars of a Kustomization (`loadVars` in `kustomization_varsub.go`):
/// substituteFrom in order, later wins; inline `substitute` wins over all.
pub(crate) fn resolve(ks: &Kustomization, world: &World, lookup: &Lookup<'_>) -> Resolved {
    let mut res = Resolution::default();
    let Some(pb) = &ks.post_build else {
        return Resolved::Ready(Ok(res));
    };
    for SubstituteFrom {
        kind,
        name,
        optional,
    } in &pb.substitute_from
    {
        // Flux reads the object in the Kustomization's own namespace.
        let id = ObjectId {
            group: String::new(),
            kind: kind.clone(),
            namespace: ks.id.namespace.clone(),
            name: name.clone(),
        };
        let label = format!("{kind}/{}/{name}", ks.id.namespace);
        let mut placed = world.objects.get(&id).cloned();
        if let (Some(p), Some(d)) = (&placed, world.declared.get(&id)) {
            if p.object.get("sops").is_some() {
                res.notes.push(Note::EncryptedSourceDeclared {
                    source: label.clone(),
                    on_cluster: p.from.clone(),
                    declared: d.from.clone(),
                });
                placed = Some(d.clone());
            }
        }
        if placed.is_none() && !lookup.settled {
            return Resolved::Wait;
        }
        // A Secret an ExternalSecret of the cluster makes is what Flux finds, whatever file
        // of the repository defines the same name.
        if placed.is_none() {
            if let Some(maker) = super::makers::made_at_run_time(&id, world) {
                if lookup.strict_sources {
                    return Resolved::Ready(Err(VarsError::MadeAtRunTime {
                        kind: kind.clone(),
                        name: name.clone(),
                        namespace: ks.id.namespace.clone(),
                        by: maker.by,
                    }));
                }
                for (k, value) in maker.known {
                    res.vars.insert(
                        k,
                        VarSource {
                            source: format!("{kind}/{name}"),
                            from: format!("made at run time by {}", maker.by),
                            encrypted: false,
                            value,
                        },
                    );
                }
                res.made_by.insert(label.clone(), maker.by);
                res.unknown_sources.push(label);
                continue;
            }
        }
        if placed.is_none() {
            placed = from_files(&id, &label, lookup, &mut res.notes);
        }
        let Some(placed) = placed else {
            if *optional {
                res.notes
                    .push(Note::OptionalSourceMissing { source: label });
                continue;
            }
            // A bootstrap command makes it (`kubectl create secret generic NAME` in a
            // Taskfile): it exists, its values unknown offline.
            if let Some(why) = lookup
                .outside
                .bootstrap
                .object(kind, &ks.id.namespace, name)
                .filter(|_| !lookup.strict_sources)
            {
                res.made_by.insert(
                    label.clone(),
                    format!("the cluster's bootstrap, before Flux runs ({why})"),
                );
                res.unknown_sources.push(label);
                continue;
            }
            // (`--strict-sources` fails at once what is made at run time, a Kustomization's
            // own ExternalSecret included: placeheld for now, it would make its source.)
            if !lookup.last_pass && !lookup.strict_sources {
                res.unknown_sources.push(label);
                continue;
            }
            return Resolved::Ready(Err(not_found(ks, kind, name, lookup)));
        };
        put_vars(&mut res, kind, &label, &placed);
    }
    for (k, v) in &pb.substitute {
        res.vars.insert(
            k.clone(),
            VarSource {
                source: "inline".into(),
                from: "postBuild.substitute".into(),
                encrypted: false,
                value: v.replace('\n', ""),
            },
        );
    }
    Resolved::Ready(Ok(res))
}

/// The vars of one source object: ConfigMap `data`; Secret `data` (base64) and `stringData`
/// (folded into `data` by the API server). An encrypted object's values are placeholders.
fn put_vars(res: &mut Resolution, kind: &str, label: &str, placed: &Placed) {
    let obj = &placed.object;
    let encrypted = obj.get("sops").is_some();
    if encrypted {
        res.notes.push(Note::EncryptedSource {
            source: label.to_string(),
        });
    }
    let as_string = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let source = format!(
        "{kind}/{}",
        label.rsplit_once('/').map_or(label, |(_, n)| n)
    );
    let mut put = |field: &str, decode: bool| {
        for (k, v) in obj
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let value = if encrypted {
                placeholder(&[label.to_string()], k)
            } else {
                let mut value = as_string(v);
                if decode {
                    if let Ok(bytes) =
                        base64::engine::general_purpose::STANDARD.decode(value.trim())
                    {
                        value = String::from_utf8_lossy(&bytes).into_owned();
                    }
                }
                value.replace('\n', "")
            };
            res.vars.insert(
                k.clone(),
                VarSource {
                    source: source.clone(),
                    from: placed.from.clone(),
                    encrypted,
                    value,
                },
            );
        }
    };
    if kind == "Secret" {
        put("data", true);
        put("stringData", false);
    } else {
        put("data", false);
    }
}

/// A file of the repository that defines `id` while nothing on the cluster holds it: a
/// bootstrap script applies it before Flux runs. Among several, the one under the cluster's
/// folder (the deepest folder in common with it) is taken, never one under another
/// cluster's folder alone.
fn from_files(
    id: &ObjectId,
    label: &str,
    lookup: &Lookup<'_>,
    notes: &mut Vec<Note>,
) -> Option<Placed> {
    let under =
        |file: &str, folder: &str| folder.is_empty() || file.starts_with(&format!("{folder}/"));
    let mut candidates: Vec<(usize, &FileObject)> = lookup
        .outside
        .files
        .defining(id)
        .into_iter()
        .filter(|o| {
            under(&o.file, lookup.home)
                || !lookup
                    .other_homes
                    .iter()
                    .any(|h| !h.is_empty() && under(&o.file, h))
        })
        .map(|o| (common_depth(&o.file, lookup.home), o))
        .collect();
    // Deepest in common first, then in path order.
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.file.cmp(&b.1.file)));
    let (_, taken) = candidates.first()?;
    if candidates.len() > 1 {
        let others: BTreeSet<&str> = candidates[1..]
            .iter()
            .map(|(_, o)| o.file.as_str())
            .collect();
        notes.push(Note::SourceInManyFiles {
            source: label.to_string(),
            files: candidates.len(),
            taken: taken.file.clone(),
            others: others.iter().map(ToString::to_string).collect(),
        });
    }
    Some(Placed {
        object: taken.object.clone(),
        from: format!(
            "file {} (no Kustomization applies it: presumed applied before Flux runs)",
            taken.file
        ),
    })
}

/// How many leading folders `file` shares with `folder`.
fn common_depth(file: &str, folder: &str) -> usize {
    file.split('/')
        .zip(folder.split('/'))
        .take_while(|(a, b)| a == b && !a.is_empty())
        .count()
}

/// A cluster's folder: the deepest folder holding both the root's `spec.path` and the file
/// that declares the root (`kubernetes/dev` for a root in `kubernetes/dev/flux/config` with
/// path `./kubernetes/dev/apps`); `""` for the repository root.
#[must_use]
pub fn home_of(fs: &SourceFs, cluster: &crate::discover::Cluster) -> String {
    let path = crate::source::spec_dir(fs, &cluster.root.path).unwrap_or_default();
    let path = if path == "." { String::new() } else { path };
    let Some(file) = &cluster.file else {
        return path;
    };
    let dir = Path::new(file)
        .parent()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let depth = common_depth(&format!("{dir}/"), &path);
    path.split('/').take(depth).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_name_the_source_and_the_var_and_stay_plain_yaml() {
        let p = placeholder(&["Secret/network/cluster-vars".into()], "DOMAIN");
        assert_eq!(p, "fluxsim-unknown:Secret/network/cluster-vars:DOMAIN");
        // A plain scalar in block and flow context, and as part of a longer value.
        for doc in [
            format!("a: {p}\n"),
            format!("a: [{p}, b]\n"),
            format!("a: https://{p}/x\n"),
        ] {
            let json = crate::goyaml::yaml_json::yaml_to_json(&doc).unwrap();
            assert!(json.contains(&p), "{doc} -> {json}");
        }
    }

    #[test]
    fn common_depth_counts_whole_folders() {
        assert_eq!(
            common_depth("kubernetes/dev/vars/a.yaml", "kubernetes/dev"),
            2
        );
        assert_eq!(
            common_depth("kubernetes/development/a.yaml", "kubernetes/dev"),
            1
        );
        assert_eq!(common_depth("a.yaml", ""), 0);
    }

    #[test]
    fn feature_gate_is_read_from_the_deployment_and_from_a_flux_instance_patch() {
        let d = serde_json::json!({"spec": {"template": {"spec": {"containers": [{"name": "manager",
            "args": ["--watch-all-namespaces", "--feature-gates=StrictPostBuildSubstitutions=false"]}]}}}});
        assert_eq!(deployment_gate(&d), Some(false));
        let fi = serde_json::json!({"spec": {"kustomize": {"patches": [{
            "target": {"kind": "Deployment", "name": "kustomize-controller"},
            "patch": "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --feature-gates=StrictPostBuildSubstitutions=true\n"}]}}});
        assert_eq!(flux_instance_gate(&fi), Some(true));
    }
}
