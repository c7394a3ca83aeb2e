//! One ResourceSet made an entry of the cluster's render: its inputs, a
//! `flux-operator build rset` (or the cached output of the same one), the operator's
//! apply-time changes with the cluster's objects, the objects printed by a kustomize build.
//!
//! In two halves, so that the fixed point asks cheaply whether an entry must be made again:
//! [`plan`] (inputs and templating: a function of the ResourceSet and its providers) says
//! which objects of the cluster the apply-time changes read ([`Planned::sources`]); only when
//! those or the plan changed does [`Planned::finish`] run.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::apply::{self, ClusterData};
use super::inputs::{self, InputProvider, Provided, Supplied};
use super::operator::BuildJob;
use super::{ResourceSet, ResourceSetError, Runner, RSET_API_VERSION, RSET_KIND};
use crate::artifact::Artifact;
use crate::flux::{str_at, Kustomization, NamespacedName};
use crate::kustomize::Builder;
use crate::model::{KustomizationRender, Note, Status};

/// What one ResourceSet's entry is made from.
pub struct Request<'a> {
    /// The cluster's name.
    pub cluster: &'a str,
    /// The render that applies the ResourceSet.
    pub parent: &'a KustomizationRender,
    /// The ResourceSet as applied.
    pub object: &'a Value,
    /// Where the ResourceSet is declared (`file` or `file:line`), when known.
    pub file: Option<String>,
    /// The cluster's ResourceSetInputProviders.
    pub providers: &'a [InputProvider],
    /// `[[resourceset.inputs]]` of fluxsim.toml.
    pub samples: &'a [crate::config::SampleInputs],
}

/// A ResourceSet's inputs and templated objects, before the apply-time changes.
pub struct Planned {
    rset: Option<ResourceSet>,
    outcome: Result<Vec<Value>, Status>,
    notes: Vec<Note>,
    digest: String,
    /// The digest of the inputs fluxsim.toml (or placeholders) gave: part of the entry's
    /// template, as the repository's own files are of a Kustomization's.
    samples: String,
}

/// `ResourceSet ns/name (file:line)`, for messages.
fn label(rset: &NamespacedName, file: Option<&str>) -> String {
    match file {
        Some(f) => format!("ResourceSet {rset} ({f})"),
        None => format!("ResourceSet {rset}"),
    }
}

/// Inputs and templating (the CLI's output is kept by `runner`: the same ResourceSet with the
/// same inputs is built once per run).
#[must_use]
pub fn plan(req: &Request<'_>, runner: &Runner) -> Planned {
    let digest_of = |extra: &Value| {
        crate::digest::sha256_hex(
            json!({"object": req.object, "parent": req.parent.kustomization.id.to_string(),
                "file": req.file, "extra": extra})
            .to_string()
            .as_bytes(),
        )
    };
    let rset = match ResourceSet::from_json(req.object) {
        Ok(r) => r,
        Err(e) => return unreadable(req, &e.to_string(), digest_of(&Value::Null)),
    };
    let what = label(&rset.id, req.file.as_deref());
    let fail = |rset: ResourceSet, msg: String, extra: &Value| Planned {
        rset: Some(rset),
        outcome: Err(Status::Failed(format!("{what}: {msg}"))),
        notes: Vec::new(),
        digest: digest_of(extra),
        samples: String::new(),
    };
    if rset.disabled {
        return Planned {
            rset: Some(rset),
            outcome: Err(Status::Suspended),
            notes: vec![Note::Suspended],
            digest: digest_of(&Value::Null),
            samples: String::new(),
        };
    }
    let referenced = match inputs::referenced(&rset, req.providers) {
        Ok(r) => r,
        Err(e) => return fail(rset, e.to_string(), &Value::Null),
    };
    let (provided, mut notes, placeholder_providers) = provide(req, &referenced);
    let (extra, samples) = provided_digests(&provided);
    runner.record(
        &format!("{}:{}", req.cluster, rset.id),
        placeholder_providers,
    );
    let combined = match combine_bounded(req, &rset, &provided, runner) {
        Ok(c) => c,
        Err(e) => return fail(rset, e.to_string(), &extra),
    };
    // resourceset_controller.go reconcile: providers that return no inputs reconcile an
    // empty set (the CLI would instead template once without inputs).
    if !rset.inputs_from.is_empty() && combined.is_empty() {
        return Planned {
            rset: Some(rset),
            outcome: Ok(Vec::new()),
            notes,
            digest: digest_of(&extra),
            samples,
        };
    }
    let only_static = provided.iter().all(|p| p.supplied.is_none());
    if !only_static {
        if let Some(n) = provider_metadata_read(req.object, &rset, &provided) {
            notes.push(n);
        }
    }
    let tool = match runner.tool() {
        Ok(t) => t,
        Err(e) => return fail(rset, e.to_string(), &extra),
    };
    let job = if only_static {
        CliJob::combined(req, &rset)
    } else {
        CliJob::given(req, &rset, combined)
    };
    let key = crate::digest::sha256_hex(
        json!({"v": 1, "job": job.as_json(), "tool": tool.version()})
            .to_string()
            .as_bytes(),
    );
    let output = build_once(runner, tool, &job, &key);
    let digest = digest_of(&json!({"extra": extra, "build": key}));
    let text = match output {
        Ok(t) => t,
        // build_resourceset.go: the CLI refuses an empty result; the operator applies it
        // (every object annotated `reconcile: disabled`, say).
        Err(e) if e.0 == "no objects were generated" => String::new(),
        Err(e) => return fail(rset, format!("flux-operator build rset: {e}"), &extra),
    };
    let objects = match read_objects(&text) {
        Ok(o) => o,
        Err(e) => return fail(rset, e.to_string(), &extra),
    };
    Planned {
        rset: Some(rset),
        outcome: Ok(objects),
        notes,
        digest,
        samples,
    }
}

/// `inputs::combine` within fluxsim's bounds (a ResourceSet's, the run's: counted in
/// `runner`); a stop at one names fluxsim.toml when its sample inputs were combined.
fn combine_bounded(
    req: &Request<'_>,
    rset: &ResourceSet,
    provided: &[Provided],
    runner: &Runner,
) -> Result<Vec<inputs::Input>, ResourceSetError> {
    let from_config = |e: ResourceSetError| {
        if e.is_bound()
            && provided
                .iter()
                .any(|p| matches!(p.supplied, Some(Supplied::Samples(_))))
        {
            ResourceSetError::WithSamples(Box::new(e))
        } else {
            e
        }
    };
    let combined = inputs::combine(rset, provided).map_err(from_config)?;
    runner
        .count_combined(
            &format!("{}:{}", req.cluster, rset.id),
            inputs::combined_bytes(&combined),
        )
        .map_err(from_config)?;
    Ok(combined)
}

/// Each provider's inputs: a Static one's from the repository, any other's from
/// fluxsim.toml or placeholders (noted); with the notes, and the providers that took
/// placeholders (`namespace/name`).
fn provide(
    req: &Request<'_>,
    referenced: &[&InputProvider],
) -> (Vec<Provided>, Vec<Note>, Vec<String>) {
    let mut notes = Vec::new();
    let mut placeholder_providers = Vec::new();
    let provided = referenced
        .iter()
        .map(|p| {
            if p.is_static() {
                return Provided {
                    provider: (*p).clone(),
                    inputs: inputs::static_inputs(p),
                    supplied: None,
                };
            }
            let (ins, supplied) = match sample_inputs(req, p) {
                Some((from, ins)) => (ins, Supplied::Samples(from)),
                None => (vec![inputs::placeholders(&p.kind)], Supplied::Placeholders),
            };
            let ins = ins
                .into_iter()
                .map(|i| inputs::with_defaults(&p.defaults, i))
                .collect();
            let provider = format!("{}/{}", p.namespace, p.name);
            match &supplied {
                Supplied::Samples(from) => notes.push(Note::ResourceSetSampleInputs {
                    provider,
                    provider_type: p.kind.clone(),
                    from: from.clone(),
                }),
                Supplied::Placeholders => {
                    placeholder_providers.push(provider.clone());
                    notes.push(Note::ResourceSetPlaceholderInputs {
                        provider,
                        provider_type: p.kind.clone(),
                    });
                }
            }
            Provided {
                provider: (*p).clone(),
                inputs: ins,
                supplied: Some(supplied),
            }
        })
        .collect();
    (provided, notes, placeholder_providers)
}

/// The plan of a ResourceSet the API server would refuse (`why`).
fn unreadable(req: &Request<'_>, why: &str, digest: String) -> Planned {
    let name = str_at(req.object, &["metadata", "name"]).unwrap_or_default();
    let file = req
        .file
        .as_deref()
        .map_or(String::new(), |f| format!(" ({f})"));
    Planned {
        rset: None,
        outcome: Err(Status::Failed(format!("ResourceSet {name}{file}: {why}"))),
        notes: Vec::new(),
        digest,
        samples: String::new(),
    }
}

/// What the providers gave, for the plan's key; and the digest of what fluxsim.toml (or
/// placeholders) gave, for the entry's template.
fn provided_digests(provided: &[Provided]) -> (Value, String) {
    let extra = Value::Array(
        provided
            .iter()
            .map(|p| json!({"object": p.provider.object, "inputs": p.inputs}))
            .collect(),
    );
    let samples = crate::digest::sha256_hex(
        Value::Array(
            provided
                .iter()
                .filter(|p| p.supplied.is_some())
                .map(|p| json!([p.provider.namespace, p.provider.name, p.inputs]))
                .collect(),
        )
        .to_string()
        .as_bytes(),
    );
    (extra, samples)
}

/// Runs `job` unless `runner` holds the output of its `key` already.
fn build_once(
    runner: &Runner,
    tool: &super::OperatorBinary,
    job: &CliJob,
    key: &str,
) -> Result<String, super::OperatorError> {
    let cached = runner.outputs.lock().ok().and_then(|o| o.get(key).cloned());
    if let Some(o) = cached {
        return o;
    }
    let o = run(tool, job).and_then(|t| runner.count_printed(t.len()).map(|()| t));
    if let Ok(mut outputs) = runner.outputs.lock() {
        outputs.insert(key.to_string(), o.clone());
    }
    o
}

/// The objects the CLI printed (its `# step:` comments and empty documents left out).
fn read_objects(text: &str) -> Result<Vec<Value>, ResourceSetError> {
    let mut objects = Vec::new();
    for doc in crate::manifest::split_documents(text) {
        match crate::manifest::parse_object(doc) {
            Ok(Value::Null) => {}
            Ok(v) => objects.push(v),
            Err(e) => return Err(ResourceSetError::Printed(e)),
        }
    }
    Ok(objects)
}

/// What the CLI is run with.
enum CliJob {
    /// The ResourceSet, and the Static providers when it has `inputsFrom`.
    Combined {
        rset: Value,
        providers: Option<Vec<Value>>,
    },
    /// The ResourceSet without its inputs, and the combined inputs.
    Given { rset: Value, inputs: Vec<Value> },
}

impl CliJob {
    /// The CLI combines itself: the ResourceSet as applied, and the Static providers of its
    /// namespace (the CLI picks the ones `inputsFrom` names).
    fn combined(req: &Request<'_>, rset: &ResourceSet) -> CliJob {
        let statics: Vec<Value> = req
            .providers
            .iter()
            .filter(|p| p.is_static() && p.namespace == rset.id.namespace)
            .map(|p| p.object.clone())
            .collect();
        CliJob::Combined {
            rset: with_namespace(req.object.clone(), &rset.id.namespace),
            providers: (!rset.inputs_from.is_empty()).then_some(statics),
        }
    }

    /// Providers the CLI does not take: the inputs fluxsim combined, as `--inputs-from`, the
    /// ResourceSet stripped of what would combine them again.
    fn given(req: &Request<'_>, rset: &ResourceSet, combined: Vec<inputs::Input>) -> CliJob {
        let mut obj = with_namespace(req.object.clone(), &rset.id.namespace);
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("inputsFrom");
            spec.remove("inputStrategy");
            spec.remove("inputs");
        }
        CliJob::Given {
            rset: obj,
            inputs: combined.into_iter().map(Value::Object).collect(),
        }
    }

    fn as_json(&self) -> Value {
        match self {
            CliJob::Combined { rset, providers } => json!({"rset": rset, "providers": providers}),
            CliJob::Given { rset, inputs } => json!({"rset": rset, "inputs": inputs}),
        }
    }
}

fn with_namespace(mut obj: Value, namespace: &str) -> Value {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
    obj
}

/// Writes the job's files into a scratch folder and runs the CLI on them.
fn run(tool: &super::OperatorBinary, job: &CliJob) -> Result<String, super::OperatorError> {
    let work = crate::scratch::tempdir(crate::scratch::Kind::ResourceSet)
        .map_err(|e| format!("making a scratch folder: {e}"))?;
    let dir = work.path();
    let write = |name: &str, v: &Value| -> Result<std::path::PathBuf, super::OperatorError> {
        let path = dir.join(name);
        // JSON is YAML: the CLI reads it with sigs.k8s.io/yaml.
        std::fs::write(&path, v.to_string()).map_err(|e| format!("writing {name}: {e}"))?;
        Ok(path)
    };
    match job {
        CliJob::Combined { rset, providers } => {
            let rset = write("resourceset.yaml", rset)?;
            let providers = match providers {
                Some(list) => {
                    let path = dir.join("providers.yaml");
                    let text = list.iter().fold(String::new(), |mut t, p| {
                        let _ = writeln!(t, "---\n{p}");
                        t
                    });
                    std::fs::write(&path, text)
                        .map_err(|e| format!("writing providers.yaml: {e}"))?;
                    Some(path)
                }
                None => None,
            };
            tool.build(&BuildJob {
                dir,
                rset: &rset,
                providers: providers.as_deref(),
                inputs: None,
            })
        }
        CliJob::Given { rset, inputs } => {
            let rset = write("resourceset.yaml", rset)?;
            let inputs = write("inputs.yaml", &Value::Array(inputs.clone()))?;
            tool.build(&BuildJob {
                dir,
                rset: &rset,
                providers: None,
                inputs: Some(&inputs),
            })
        }
    }
}

/// The `[[resourceset.inputs]]` entry for provider `p` on this cluster: one naming it
/// (`namespace/name`) wins over one naming its type.
fn sample_inputs(req: &Request<'_>, p: &InputProvider) -> Option<(String, Vec<inputs::Input>)> {
    let on_cluster = |s: &&crate::config::SampleInputs| {
        s.clusters.is_empty() || s.clusters.iter().any(|c| c == req.cluster)
    };
    let name = format!("{}/{}", p.namespace, p.name);
    let by_name = req
        .samples
        .iter()
        .filter(on_cluster)
        .find(|s| s.provider.as_deref() == Some(name.as_str()));
    let by_type = || {
        req.samples
            .iter()
            .filter(on_cluster)
            .find(|s| s.provider_type.as_deref() == Some(p.kind.as_str()))
    };
    let s = by_name.or_else(by_type)?;
    let from = match (&s.provider, &s.provider_type) {
        (Some(n), _) => format!("[[resourceset.inputs]] provider = \"{n}\""),
        (None, Some(t)) => format!("[[resourceset.inputs]] type = \"{t}\""),
        (None, None) => "[[resourceset.inputs]]".to_string(),
    };
    Some((from, s.inputs.clone()))
}

/// When the inputs were combined by fluxsim (a provider the CLI does not take), the CLI gives
/// every input the ResourceSet's own `provider` metadata (`getFromProvider`): a template that
/// may read `inputs.provider` beyond what is the same for both (its `apiVersion` and
/// `namespace`: providers are always in the ResourceSet's namespace) renders otherwise than
/// the operator. Read on the template's text, erring on the side of saying so: any use of
/// `inputs` that is not a field access other than `provider`, or `provider` followed by
/// anything but `.namespace` or `.apiVersion` (with `Permute`, the operator's inputs have no
/// `provider` at all).
fn provider_metadata_read(
    object: &Value,
    rset: &ResourceSet,
    provided: &[Provided],
) -> Option<Note> {
    let spec = object.get("spec")?;
    let mut text = String::new();
    for k in ["resources", "resourcesTemplate", "steps"] {
        if let Some(v) = spec.get(k) {
            text.push_str(&v.to_string());
        }
    }
    let permute = rset.strategy == "Permute";
    let inputs_use =
        regex::Regex::new(r"\binputs\b(\.[A-Za-z_][A-Za-z0-9_]*)?(\.[A-Za-z_][A-Za-z0-9_]*)?")
            .expect("static regex");
    let reads = inputs_use.captures_iter(&text).any(|c| {
        match (c.get(1).map(|m| m.as_str()), c.get(2).map(|m| m.as_str())) {
            (None, _) => true,
            (Some(".provider"), next) => {
                permute || !matches!(next, Some(".namespace" | ".apiVersion"))
            }
            _ => false,
        }
    });
    reads.then(|| Note::ResourceSetProviderMetadata {
        providers: provided
            .iter()
            .filter(|p| p.supplied.is_some())
            .map(|p| format!("{}/{}", p.provider.namespace, p.provider.name))
            .collect(),
    })
}

impl Planned {
    /// The cluster objects the apply-time changes read (copyFrom and checksumFrom sources,
    /// `(kind, namespace, name)`).
    #[must_use]
    pub fn sources(&self) -> BTreeSet<(String, String, String)> {
        let mut out = BTreeSet::new();
        let Ok(objects) = &self.outcome else {
            return out;
        };
        for o in objects {
            if let Some(src) = o
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get(apply::COPY_FROM))
                .and_then(Value::as_str)
            {
                if let Some((ns, name)) = src.split_once('/') {
                    let kind = str_at(o, &["kind"]).unwrap_or_default().to_string();
                    out.insert((kind, ns.to_string(), name.to_string()));
                }
            }
            collect_checksum_refs(o, &mut out);
        }
        out
    }

    /// What decides the entry: the plan and the current value of each source it reads.
    #[must_use]
    pub fn key(&self, data: &ClusterData<'_>) -> String {
        let sources: Vec<Value> = self
            .sources()
            .into_iter()
            .map(|k| json!([k.0, k.1, k.2, data.get(&k).copied()]))
            .collect();
        crate::digest::sha256_hex(
            json!({"plan": self.digest, "sources": sources})
                .to_string()
                .as_bytes(),
        )
    }

    /// The entry: the apply-time changes made with the cluster's `data`, the objects printed
    /// by `builder`.
    #[must_use]
    pub fn finish(
        self,
        req: &Request<'_>,
        data: &ClusterData<'_>,
        builder: &dyn Builder,
    ) -> KustomizationRender {
        let rset_id = self.rset.as_ref().map_or_else(
            || NamespacedName {
                namespace: str_at(req.object, &["metadata", "namespace"])
                    .unwrap_or("default")
                    .to_string(),
                name: str_at(req.object, &["metadata", "name"])
                    .unwrap_or_default()
                    .to_string(),
            },
            |r| r.id.clone(),
        );
        let mut notes = self.notes;
        let (status, artifact) = match self.outcome {
            Err(status) => (status, None),
            Ok(mut objects) => {
                let common = self
                    .rset
                    .as_ref()
                    .map(|r| r.common_labels.clone())
                    .unwrap_or_default();
                let what = label(&rset_id, req.file.as_deref());
                match apply::prepare(&mut objects, &common, data, &mut notes)
                    .map_err(|e| format!("{what}: {e}"))
                    .and_then(|()| print(&objects, builder).map_err(|e| format!("{what}: {e}")))
                {
                    Ok(a) => (Status::Rendered, Some(a)),
                    Err(e) => (Status::Failed(e), None),
                }
            }
        };
        let mut k = entry(
            req.parent,
            &rset_id,
            self.rset.as_ref(),
            status,
            artifact,
            notes,
        );
        if k.artifact.is_some() {
            k.template = Some(template(req.parent, &rset_id, &self.samples));
            // The ResourceSet's inputs come through its parent's substitution.
            k.substituted = req.parent.substituted;
            k.vars.clone_from(&req.parent.vars);
            k.vars_used.clone_from(&req.parent.vars_used);
        }
        k
    }
}

fn collect_checksum_refs(v: &Value, out: &mut BTreeSet<(String, String, String)>) {
    match v {
        Value::Object(m) => {
            if let Some(refs) = m
                .get("metadata")
                .and_then(|x| x.get("annotations"))
                .and_then(|a| a.get(apply::CHECKSUM_FROM))
                .and_then(Value::as_str)
            {
                for r in refs.split(',').map(str::trim) {
                    let parts: Vec<&str> = r.split('/').collect();
                    if let [kind, ns, name] = parts[..] {
                        out.insert((kind.into(), ns.into(), name.into()));
                    }
                }
            }
            for x in m.values() {
                collect_checksum_refs(x, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                collect_checksum_refs(x, out);
            }
        }
        _ => {}
    }
}

/// Prints `objects` as a kustomize build of them prints them (kustomize's style and legacy
/// order, as every artifact is).
fn print(objects: &[Value], builder: &dyn Builder) -> Result<Artifact, ResourceSetError> {
    if objects.is_empty() {
        return Ok(Artifact::from_kustomize_output(String::new())?);
    }
    let work = crate::scratch::tempdir(crate::scratch::Kind::ResourceSet)
        .map_err(ResourceSetError::Scratch)?;
    let dir = work.path();
    let mut names = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let name = format!("object-{i:05}.yaml");
        std::fs::write(dir.join(&name), o.to_string()).map_err(|source| {
            ResourceSetError::Write {
                name: name.clone(),
                source,
            }
        })?;
        names.push(Value::String(name));
    }
    let k = json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": names});
    std::fs::write(dir.join("kustomization.yaml"), k.to_string()).map_err(|source| {
        ResourceSetError::Write {
            name: "kustomization.yaml".to_string(),
            source,
        }
    })?;
    let text = builder
        .build(&crate::kustomize::Job::folder(dir))
        .output
        .map_err(|e| ResourceSetError::Print(crate::scratch::scrub(&e.to_string())))?;
    Ok(Artifact::from_kustomize_output(text)?)
}

/// The entry of ResourceSet `id` under `parent`.
fn entry(
    parent: &KustomizationRender,
    id: &NamespacedName,
    rset: Option<&ResourceSet>,
    status: Status,
    artifact: Option<Artifact>,
    notes: Vec<Note>,
) -> KustomizationRender {
    let eid = super::entry_id(&parent.kustomization.id, id);
    // dependsOn on Kustomizations is kept here; on ResourceSets, resolved to their entries
    // once the cluster's render is known (`reconcile`).
    let depends_on: Vec<Value> = rset
        .map(|r| {
            r.depends_on
                .iter()
                .filter(|d| {
                    d.kind == "Kustomization"
                        && d.api_version
                            .starts_with(&format!("{}/", crate::flux::KUSTOMIZE_GROUP))
                })
                .map(|d| {
                    json!({"name": d.name, "namespace": if d.namespace.is_empty() {
                        id.namespace.clone() } else { d.namespace.clone() }})
                })
                .collect()
        })
        .unwrap_or_default();
    let kustomization = Kustomization::from_json(&json!({
        "apiVersion": RSET_API_VERSION,
        "kind": RSET_KIND,
        "metadata": {"namespace": eid.namespace, "name": eid.name},
        "spec": {"path": "", "prune": true, "wait": rset.is_some_and(|r| r.wait),
            "dependsOn": depends_on},
    }))
    .expect("a fixed shape");
    KustomizationRender {
        artifact,
        notes,
        // A ResourceSet's objects come from the operator, not from a source tree (the
        // default `source_tree: None`).
        strict: parent.strict,
        ..KustomizationRender::new(kustomization, Some(parent.kustomization.id.clone()), status)
    }
}

/// What an entry is made from before substitution: the ResourceSet object as the template
/// of the Kustomization that applies it holds it, and the inputs fluxsim.toml gave; two
/// clusters with the same differ in the entry only through their vars (`compare`, which
/// shows how the objects differ where they do). A ResourceSet that another ResourceSet
/// makes (no template object to find) stands for its parent's template whole.
fn template(parent: &KustomizationRender, id: &NamespacedName, samples: &str) -> Artifact {
    let declared = parent.template.iter().flat_map(|a| &a.objects).find(|o| {
        crate::flux::is_resourceset(&o.object)
            && o.id.name == id.name
            && (o.id.namespace == id.namespace
                || (o.id.namespace.is_empty() && id.namespace == "default"))
    });
    if let Some(o) = declared {
        let yaml = format!("{}# inputs from fluxsim.toml {samples}\n", o.yaml);
        // Without its origin: the entry's artifact is not built from that file the way a
        // Kustomization's objects are (prove's canaries plan from origins; the ResourceSet's
        // own template canary reads the parent's template).
        let mut o = o.clone();
        o.origin = None;
        return Artifact {
            sha256: crate::digest::sha256_hex(yaml.as_bytes()),
            objects: vec![o],
            yaml,
        };
    }
    let text = format!(
        "resourceset {id}\nkustomization template {}\ninputs from fluxsim.toml {samples}\n",
        parent.template.as_ref().map_or("-", |t| t.sha256.as_str()),
    );
    Artifact {
        sha256: crate::digest::sha256_hex(text.as_bytes()),
        objects: Vec::new(),
        yaml: text,
    }
}

/// Makes the entry of `req` whole (for tests and callers without a fixed point).
#[must_use]
pub fn render_resourceset(
    req: &Request<'_>,
    runner: &Runner,
    data: &ClusterData<'_>,
    builder: &dyn Builder,
) -> KustomizationRender {
    plan(req, runner).finish(req, data, builder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provided() -> Vec<Provided> {
        vec![Provided {
            provider: InputProvider::from_json(&json!({
                "apiVersion": RSET_API_VERSION, "kind": "ResourceSetInputProvider",
                "metadata": {"name": "prs", "namespace": "apps"},
                "spec": {"type": "GitHubPullRequest"}
            }))
            .unwrap(),
            inputs: Vec::new(),
            supplied: Some(Supplied::Placeholders),
        }]
    }

    fn reads(strategy: &str, template: &str) -> bool {
        let object = json!({
            "apiVersion": RSET_API_VERSION, "kind": "ResourceSet",
            "metadata": {"name": "r", "namespace": "apps"},
            "spec": {"inputStrategy": {"name": strategy}, "resourcesTemplate": template}
        });
        let rset = ResourceSet::from_json(&object).unwrap();
        provider_metadata_read(&object, &rset, &provided()).is_some()
    }

    // flux-operator internal/inputs/provider.go getFromProvider: the CLI gives inputs it
    // is handed the ResourceSet's metadata; what is the same for a provider (its namespace
    // and apiVersion) reads the same, anything else of `provider` may not.
    #[test]
    fn a_template_that_may_read_inputs_provider_is_noted() {
        assert!(!reads("Flatten", "name: << inputs.id >>"));
        assert!(!reads("Flatten", "ns: << inputs.provider.namespace >>"));
        assert!(reads("Flatten", "n: << inputs.provider.name >>"));
        assert!(reads("Flatten", "all: << toYaml inputs >>"));
        assert!(reads(
            "Flatten",
            "<< range $k, $v := inputs >><< $k >><< end >>"
        ));
        // With Permute the operator's inputs have no top-level provider at all.
        assert!(reads("Permute", "ns: << inputs.provider.namespace >>"));
        assert!(!reads("Permute", "ns: << inputs.prs.provider.name >>"));
    }
}
