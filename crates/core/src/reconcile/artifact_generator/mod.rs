//! source-watcher's `ArtifactGenerator` (`source.extensions.fluxcd.io/v1beta1`), simulated:
//! each of its `spec.artifacts` is an `ExternalArtifact` assembled by copy rules from its
//! `spec.sources`. When those sources are trees fluxsim can read (the cluster's own
//! GitRepository, a mapped source, another generator's ExternalArtifact), the artifact is a
//! view of their files (`SourceTree`), nothing copied.
//!
//! The copy semantics follow fluxcd/source-watcher `internal/builder/builder.go`
//! (`applyCopyOperation` and what it calls) and the fetch/naming rules of
//! `internal/controller/artifactgenerator_controller.go`:
//! - `from: "@alias/pattern"`, `to: "@artifact/path"` (`@artifact/` is the root); a `to`
//!   that is absolute or holds `..` is refused;
//! - a pattern without `*?[]` names one file or folder: a folder is copied as a subfolder of
//!   the destination (`cp -r dir dest/` makes `dest/dir`); a file goes to `dest/<name>` when
//!   `to` ends with `/` or `dest` is already a folder, else to `dest` itself;
//! - a glob is matched with Go's `fs.Glob` (so `**` is `*`: one path element); each match is
//!   copied to `dest/<match>`, or, for a pattern ending in `/**`, to `dest/<match without
//!   the prefix>`; a matched folder is copied whole;
//! - `exclude` patterns are doublestar globs matched against the path in the source and the
//!   path below the pattern's literal prefix, and, for patterns without `/`, the file name;
//! - later copies overwrite earlier ones; no match (unless `optional`) and everything
//!   excluded are errors;
//! - the artifact is archived with source-controller's default ignore rules
//!   (`SourceIgnoreFilter(nil, nil)`: VCS, image/archive and CI patterns).
//!
//! Not simulated: `strategy: Merge` when a file is merged onto another (a YAML merge), and
//! `strategy: Extract` (tarballs): the artifact is then unknown, and Kustomizations on it
//! are external with that reason.

mod builder;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::objects::World;
use super::trees::{Choice, Mapped, SourceTree};
use crate::flux::{str_at, ObjectId};
use crate::source::mapping::SourceId;

use builder::build;

crate::message_error! {
    /// A copy rule of an ArtifactGenerator that cannot be applied (source-watcher refuses it too).
    pub struct CopyError;
}

/// The API group of source-watcher's kinds.
pub(crate) const GROUP: &str = "source.extensions.fluxcd.io";

/// Why an artifact is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unknown {
    /// fluxsim cannot compute it (a source it cannot read, a strategy it does not simulate).
    External(String),
    /// source-watcher would fail too.
    Failed(String),
}

/// The sources a generator may read, besides other generators' artifacts.
pub(crate) struct Inputs<'a> {
    /// The cluster's own GitRepository.
    pub(crate) own: Option<SourceId>,
    pub(crate) own_tree: &'a Arc<SourceTree>,
    pub(crate) mapped: &'a Mapped,
}

/// What the generators of one step computed, kept for the next steps: the same generator
/// over the same inputs gives the same artifacts (and the same identities, so nothing
/// renders again).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: BTreeMap<String, Vec<(SourceId, Choice)>>,
}

/// One `spec.artifacts[].copy[]` entry.
#[derive(Debug, Clone)]
struct CopyOp {
    from: String,
    to: String,
    exclude: Vec<String>,
    strategy: String,
    optional: bool,
}

/// One `spec.artifacts[]` entry.
#[derive(Debug, Clone)]
struct Output {
    name: String,
    copy: Vec<CopyOp>,
}

/// An ArtifactGenerator, read.
#[derive(Debug, Clone)]
struct Generator {
    id: ObjectId,
    /// alias -> source.
    sources: BTreeMap<String, SourceId>,
    outputs: Vec<Output>,
    /// `source.extensions.fluxcd.io/reconcile: disabled`.
    disabled: bool,
    /// Why it cannot be read.
    invalid: Option<String>,
    /// The object as JSON, for the cache key.
    text: String,
}

fn generator_of(id: &ObjectId, obj: &Value) -> Generator {
    let ns = id.namespace.clone();
    let mut invalid = None;
    let mut sources = BTreeMap::new();
    for s in obj
        .pointer("/spec/sources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let alias = str_at(s, &["alias"]).unwrap_or_default().to_string();
        let source = SourceId {
            kind: str_at(s, &["kind"]).unwrap_or_default().to_string(),
            namespace: str_at(s, &["namespace"])
                .filter(|n| !n.is_empty())
                .unwrap_or(&ns)
                .to_string(),
            name: str_at(s, &["name"]).unwrap_or_default().to_string(),
        };
        if sources.insert(alias.clone(), source).is_some() {
            invalid = Some(format!("duplicate source alias '{alias}'"));
        }
    }
    let outputs = obj
        .pointer("/spec/artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| Output {
            name: str_at(a, &["name"]).unwrap_or_default().to_string(),
            copy: a
                .get("copy")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| CopyOp {
                    from: str_at(c, &["from"]).unwrap_or_default().to_string(),
                    to: str_at(c, &["to"]).unwrap_or_default().to_string(),
                    exclude: c
                        .get("exclude")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    strategy: str_at(c, &["strategy"]).unwrap_or_default().to_string(),
                    optional: c.get("optional").and_then(Value::as_bool).unwrap_or(false),
                })
                .collect(),
        })
        .collect();
    // IsDisabled in api/v1beta1/artifactgenerator_types.go.
    let disabled = str_at(
        obj,
        &[
            "metadata",
            "annotations",
            "source.extensions.fluxcd.io/reconcile",
        ],
    )
    .is_some_and(|v| v.eq_ignore_ascii_case("disabled"));
    Generator {
        id: id.clone(),
        sources,
        outputs,
        disabled,
        invalid,
        text: obj.to_string(),
    }
}

/// The ExternalArtifacts the cluster's ArtifactGenerators make, by id
/// (`ExternalArtifact/<generator namespace>/<artifact name>`).
pub(crate) fn generate(
    world: &World,
    inputs: &Inputs<'_>,
    cache: &mut Cache,
) -> BTreeMap<SourceId, Choice> {
    let generators: Vec<Generator> = world
        .objects
        .iter()
        .filter(|(id, _)| id.group == GROUP && id.kind == "ArtifactGenerator")
        .map(|(id, p)| generator_of(id, &p.object))
        .collect();
    // Which generator makes which ExternalArtifact; one made by two is a conflict.
    let mut makers: BTreeMap<SourceId, Vec<usize>> = BTreeMap::new();
    for (i, g) in generators.iter().enumerate() {
        for o in &g.outputs {
            makers.entry(artifact_id(g, &o.name)).or_default().push(i);
        }
    }
    let mut done: BTreeMap<SourceId, Choice> = BTreeMap::new();
    let mut pending: Vec<usize> = (0..generators.len()).collect();
    // Generators reading other generators' artifacts go after them; what never can is a
    // cycle.
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|&i| {
            let g = &generators[i];
            let waits = g.sources.values().any(|s| {
                s.kind == "ExternalArtifact"
                    && !done.contains_key(s)
                    && makers.get(s).is_some_and(|m| !m.contains(&i))
            });
            if waits {
                return true;
            }
            for (id, choice) in run_generator(g, inputs, &done, &makers, cache) {
                done.insert(id, choice);
            }
            false
        });
        if pending.len() == before {
            for &i in &pending {
                let g = &generators[i];
                for o in &g.outputs {
                    done.insert(
                        artifact_id(g, &o.name),
                        Choice::Failed(format!(
                            "ArtifactGenerator {}/{}: its sources wait on each other's \
                             ExternalArtifacts (a cycle)",
                            g.id.namespace, g.id.name
                        )),
                    );
                }
            }
            break;
        }
    }
    for (id, m) in &makers {
        if m.len() > 1 {
            let names: Vec<String> = m
                .iter()
                .map(|&i| format!("{}/{}", generators[i].id.namespace, generators[i].id.name))
                .collect();
            done.insert(
                id.clone(),
                Choice::Failed(format!(
                    "{id} is made by {} ArtifactGenerators ({}): each overwrites the other's",
                    m.len(),
                    names.join(", ")
                )),
            );
        }
    }
    done
}

fn artifact_id(g: &Generator, name: &str) -> SourceId {
    SourceId {
        kind: "ExternalArtifact".into(),
        namespace: g.id.namespace.clone(),
        name: name.to_string(),
    }
}

/// A source of a generator: a tree, or why there is none.
fn input_of(
    source: &SourceId,
    inputs: &Inputs<'_>,
    done: &BTreeMap<SourceId, Choice>,
    makers: &BTreeMap<SourceId, Vec<usize>>,
) -> Result<Arc<SourceTree>, Unknown> {
    if inputs.own.as_ref() == Some(source) {
        return Ok(inputs.own_tree.clone());
    }
    if let Some(m) = inputs.mapped.entries.get(source) {
        return m.clone().map_err(Unknown::Failed);
    }
    match done.get(source) {
        Some(Choice::Tree(t)) => Ok(t.clone()),
        Some(Choice::External(e)) => Err(Unknown::External(format!("{source}: {e}"))),
        Some(Choice::Failed(e)) => Err(Unknown::Failed(format!("{source}: {e}"))),
        Some(Choice::Own) => Ok(inputs.own_tree.clone()),
        None if makers.contains_key(source) => {
            Err(Unknown::Failed(format!("{source} is not ready (a cycle)")))
        }
        None => Err(Unknown::External(format!(
            "its source {source} is not this repository: map it with --source {source}=PATH"
        ))),
    }
}

fn run_generator(
    g: &Generator,
    inputs: &Inputs<'_>,
    done: &BTreeMap<SourceId, Choice>,
    makers: &BTreeMap<SourceId, Vec<usize>>,
    cache: &mut Cache,
) -> Vec<(SourceId, Choice)> {
    let resolved: BTreeMap<String, Result<Arc<SourceTree>, Unknown>> = g
        .sources
        .iter()
        .map(|(alias, s)| (alias.clone(), input_of(s, inputs, done, makers)))
        .collect();
    let key = format!(
        "{}\0{}",
        g.text,
        resolved
            .iter()
            .map(|(a, r)| match r {
                Ok(t) => format!("{a}={}", t.identity),
                Err(e) => format!("{a}!{e:?}"),
            })
            .collect::<Vec<_>>()
            .join("\0")
    );
    if let Some(hit) = cache.entries.get(&key) {
        return hit.clone();
    }
    let name = format!("ArtifactGenerator {}/{}", g.id.namespace, g.id.name);
    let out: Vec<(SourceId, Choice)> = g
        .outputs
        .iter()
        .map(|o| {
            let id = artifact_id(g, &o.name);
            let choice = if g.disabled {
                Choice::External(format!(
                    "{name} is disabled (source.extensions.fluxcd.io/reconcile: disabled): \
                     what it last built is unknown"
                ))
            } else if let Some(why) = &g.invalid {
                Choice::Failed(format!("{name}: {why}"))
            } else {
                match build(g, o, &resolved) {
                    Ok(tree) => Choice::Tree(Arc::new(tree)),
                    Err(Unknown::External(e)) => {
                        Choice::External(format!("{name}, artifact {}: {e}", o.name))
                    }
                    Err(Unknown::Failed(e)) => {
                        Choice::Failed(format!("{name}: {} build failed: {e}", o.name))
                    }
                }
            };
            (id, choice)
        })
        .collect();
    cache.entries.insert(key, out.clone());
    out
}
