//! Canaries: positive controls for a diff. A harness that reports "identical" must first
//! show that it would have seen a change.
//!
//! In a copy of the head tree, a canary (a small ConfigMap carrying a nonce) is appended as a
//! new YAML document to a manifest file: one in each cluster's own overlay, and one in the
//! shared file used by the most Kustomizations. The tree is rendered again and each canary
//! must show up in exactly the artifacts whose objects come from its file (kustomize's
//! origin annotations say which), with nothing else changed; then the files are put back,
//! the tree is rendered once more, and every digest must return to its value. With `--helm`
//! a values canary reaches the releases (`helm`); when the render has Flux Operator
//! ResourceSets, a template canary reaches the objects one generates (`resourceset`).

pub mod helm;
pub mod resourceset;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::artifact::{sha256_hex, Artifact};
use crate::model::{ClusterRender, KustomizationRender, RepoRender};
use crate::source::Tree;

/// Renders a tree as the head was rendered (the binary gives the pipeline with the head's
/// options and build cache, so that only the builds a canary reaches run again).
pub type Render<'a> = dyn Fn(Tree) -> Result<RepoRender, RenderFailed> + 'a;

/// A render of the planted (or restored) tree failed as a whole: the pipeline's error.
pub type RenderFailed = Box<dyn std::error::Error + Send + Sync>;

/// The data key a canary ConfigMap carries its nonce under.
pub const CANARY_KEY: &str = "fluxsim-canary";

/// A (cluster, Kustomization) pair: one artifact.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Target {
    /// The cluster.
    pub cluster: String,
    /// The Kustomization, `namespace/name`.
    pub kustomization: String,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.cluster, self.kustomization)
    }
}

/// Where a canary goes and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "scope", rename_all = "lowercase")]
pub enum Scope {
    /// In a cluster's own files.
    Overlay {
        /// The cluster.
        cluster: String,
    },
    /// In a path shared by several Kustomizations (or the one given with `--canary-path`).
    Shared,
    /// In a values file that HelmReleases read (`--helm`): a suffix on one value, which
    /// must show up in the releases' output (`helm::canary`).
    Values,
    /// In a Flux Operator ResourceSet's template: a suffix on one value, which must show up
    /// in the objects it generates (`resourceset`).
    Template,
}

/// A canary to plant.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The manifest file, relative to the repository root.
    pub file: String,
    /// Overlay or shared.
    #[serde(flatten)]
    pub scope: Scope,
    /// The nonce (also the ConfigMap's name suffix).
    pub nonce: String,
    /// The artifacts built from the file: the ones the canary must change.
    pub expected: BTreeSet<Target>,
    /// Why the file is not in what Flux sees, when it is not (the canary can then never be
    /// seen: the harness is blind there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    /// For a values canary, the line (0-based) whose value gets it; else the canary is a
    /// ConfigMap appended to the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// An artifact a canary was expected in but not seen in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unseen {
    /// The artifact.
    #[serde(flatten)]
    pub target: Target,
    /// Why, when fluxsim knows: the Kustomization did not render with the canary planted
    /// (`failed: ...`), or the file is not in what Flux sees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What one canary did.
#[derive(Debug, Clone, Serialize)]
pub struct CanaryOutcome {
    /// The plan.
    #[serde(flatten)]
    pub plan: Plan,
    /// The artifacts it showed up in.
    pub detected_in: BTreeSet<Target>,
    /// The expected artifacts it did not show up in, each with why when known.
    pub missing: Vec<Unseen>,
    /// The artifacts it showed up in that were not expected.
    pub unexpected: BTreeSet<Target>,
    /// It showed up in exactly the expected artifacts, and those were not empty.
    pub detected: bool,
    /// Every expected artifact returned to its digest once the canary was removed.
    pub restored: bool,
}

/// Whether a canary's scope is of one kind (a row of [`CanaryReport::planted`]).
type ScopeTest = fn(&Scope) -> bool;

/// The canary run.
#[derive(Debug, Clone, Serialize, Default)]
pub struct CanaryReport {
    /// One per canary.
    pub canaries: Vec<CanaryOutcome>,
    /// Artifacts that changed in other ways than by gaining canaries (the canaries disturbed
    /// something, or a render is not deterministic).
    pub stray_changes: Vec<Target>,
    /// Artifacts whose digest did not return after the canaries were removed.
    pub not_restored: Vec<Target>,
    /// No shared canary was planted: no file is read by two artifacts or more (besides
    /// those the overlay canaries took), so nothing shows a change to a shared file is seen
    /// everywhere it lands. Reports say so rather than leave it out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_shared_file: bool,
}

impl CanaryReport {
    /// Every canary detected and restored, nothing else moved.
    #[must_use]
    pub fn passed(&self) -> bool {
        !self.canaries.is_empty()
            && self.canaries.iter().all(|c| c.detected && c.restored)
            && self.stray_changes.is_empty()
            && self.not_restored.is_empty()
    }

    /// How many canaries were planted where, in the order reports name them, each scope
    /// present once with its count (singular and plural noun): the one count every report
    /// says, so the parts add up to [`Self::canaries`]' length.
    #[must_use]
    pub fn planted(&self) -> Vec<(usize, &'static str, &'static str)> {
        let kinds: [(ScopeTest, &str, &str); 4] = [
            (
                |s| matches!(s, Scope::Overlay { .. }),
                "cluster overlay",
                "cluster overlays",
            ),
            (
                |s| matches!(s, Scope::Shared),
                "shared file",
                "shared files",
            ),
            (
                |s| matches!(s, Scope::Values),
                "values file",
                "values files",
            ),
            (
                |s| matches!(s, Scope::Template),
                "ResourceSet template",
                "ResourceSet templates",
            ),
        ];
        kinds
            .into_iter()
            .map(|(is, one, many)| {
                let n = self.canaries.iter().filter(|c| is(&c.plan.scope)).count();
                (n, one, many)
            })
            .filter(|(n, _, _)| *n > 0)
            .collect()
    }

    /// The canaries that concern a cluster: those expected there, and blind ones (expected
    /// nowhere), which concern every cluster.
    #[must_use]
    pub fn for_cluster(&self, cluster: &str) -> Vec<&CanaryOutcome> {
        self.canaries
            .iter()
            .filter(|c| {
                c.plan.expected.is_empty()
                    || c.plan.expected.iter().any(|t| t.cluster == cluster)
                    || matches!(&c.plan.scope, Scope::Overlay { cluster: own } if own == cluster)
            })
            .collect()
    }
}

/// Why canaries could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum CanaryError {
    /// `--canary-path` names no file of the repository.
    #[error("--canary-path `{0}`: no such file in the repository")]
    NoSuchFile(String),
    /// No manifest file feeds any rendered artifact.
    #[error("no rendered object comes from a manifest file: there is nowhere to plant a canary")]
    NothingRendered,
    /// The copy could not be made or written.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// A render failed as a whole.
    #[error(transparent)]
    Render(RenderFailed),
}

fn targets(cluster: &ClusterRender) -> impl Iterator<Item = (Target, &KustomizationRender)> {
    cluster.kustomizations.iter().map(move |k| {
        (
            Target {
                cluster: cluster.name.clone(),
                kustomization: k.kustomization.id.to_string(),
            },
            k,
        )
    })
}

/// Which artifacts each manifest file feeds, from the objects' origins (the render must have
/// been made with `RepoOptions::origins`).
fn file_users(head: &RepoRender) -> BTreeMap<String, BTreeSet<Target>> {
    let mut users: BTreeMap<String, BTreeSet<Target>> = BTreeMap::new();
    for c in &head.clusters {
        for (t, k) in targets(c) {
            for o in k.template.iter().flat_map(|a| &a.objects) {
                if let Some(path) = o.origin.as_ref().and_then(|o| o.path.as_ref()) {
                    users.entry(path.clone()).or_default().insert(t.clone());
                }
            }
        }
    }
    users
}

fn under(file: &str, dir: &str) -> bool {
    dir == "." || file.starts_with(&format!("{dir}/"))
}

fn nonce(file: &str, scope: &Scope) -> String {
    let tag = match scope {
        Scope::Overlay { cluster } => format!("overlay:{cluster}"),
        Scope::Shared => "shared".into(),
        Scope::Values => "values".into(),
        Scope::Template => "template".into(),
    };
    sha256_hex(format!("{tag}\0{file}").as_bytes())[..10].to_string()
}

/// Chooses the canaries: one in each cluster's own overlay, and one in the shared file that
/// feeds the most artifacts (deepest path first on ties), or in `canary_path` when given. A
/// shared file is one at least two artifacts read (objects of it in two artifacts): where
/// there is none, no shared canary is planned ([`CanaryReport::no_shared_file`]).
pub fn plan(head: &RepoRender, canary_path: Option<&str>) -> Result<Vec<Plan>, CanaryError> {
    let users = file_users(head);
    if users.is_empty() {
        return Err(CanaryError::NothingRendered);
    }
    let roots: Vec<(String, String)> = head
        .clusters
        .iter()
        .filter_map(|c| {
            let root = c.kustomizations.iter().find(|k| k.parent.is_none())?;
            Some((c.name.clone(), root.build_path.clone()?))
        })
        .collect();
    let mut plans = Vec::new();
    for (cluster, dir) in &roots {
        // A file of the cluster's own folder, preferring one no other cluster uses.
        let pick = users
            .iter()
            .filter(|(f, _)| under(f, dir))
            .min_by_key(|(f, ts)| {
                let clusters: BTreeSet<&String> = ts.iter().map(|t| &t.cluster).collect();
                (clusters.len(), !clusters.contains(cluster), (*f).clone())
            });
        if let Some((file, expected)) = pick {
            let scope = Scope::Overlay {
                cluster: cluster.clone(),
            };
            plans.push(Plan {
                file: file.clone(),
                nonce: nonce(file, &scope),
                scope,
                expected: expected.clone(),
                excluded: None,
                line: None,
            });
        }
    }
    let shared = if let Some(path) = canary_path {
        let path = path.trim_start_matches("./").to_string();
        let in_tree = head
            .tree
            .files()
            .iter()
            .any(|f| f.to_string_lossy() == path);
        let excluded = head
            .tree
            .excluded()
            .iter()
            .find(|e| e.path.to_string_lossy() == path)
            .map(|e| e.reason.to_string());
        if !in_tree && excluded.is_none() {
            return Err(CanaryError::NoSuchFile(path));
        }
        Some(Plan {
            expected: users.get(&path).cloned().unwrap_or_default(),
            nonce: nonce(&path, &Scope::Shared),
            file: path,
            scope: Scope::Shared,
            excluded,
            line: None,
        })
    } else {
        let taken: BTreeSet<&String> = plans.iter().map(|p| &p.file).collect();
        let outside_roots = |f: &String| roots.iter().all(|(_, d)| !under(f, d));
        let pick = users
            .iter()
            .filter(|(f, ts)| !taken.contains(f) && ts.len() >= 2)
            .max_by_key(|(f, ts)| {
                (
                    outside_roots(f),
                    ts.len(),
                    f.matches('/').count(),
                    std::cmp::Reverse((*f).clone()),
                )
            });
        // No file two artifacts read: no shared canary, and the values and template
        // canaries are planned all the same.
        pick.map(|(file, expected)| Plan {
            file: file.clone(),
            nonce: nonce(file, &Scope::Shared),
            scope: Scope::Shared,
            expected: expected.clone(),
            excluded: None,
            line: None,
        })
    };
    plans.extend(shared);
    plans.extend(values_plan(head));
    plans.extend(template_plan(head));
    Ok(plans)
}

/// A canary in a ResourceSet's template, when the render has ResourceSets.
fn template_plan(head: &RepoRender) -> Option<Plan> {
    let t = resourceset::template_canary(head)?;
    Some(Plan {
        nonce: nonce(&t.file, &Scope::Template),
        expected: t
            .expected
            .into_iter()
            .map(|(cluster, kustomization)| Target {
                cluster,
                kustomization,
            })
            .collect(),
        file: t.file,
        scope: Scope::Template,
        excluded: None,
        line: Some(t.line),
    })
}

/// With `--helm`, a canary in a values file that HelmReleases read.
fn values_plan(head: &RepoRender) -> Option<Plan> {
    let v = helm::values_canary(head)?;
    Some(Plan {
        nonce: nonce(&v.file, &Scope::Values),
        expected: v
            .expected
            .into_iter()
            .map(|(cluster, kustomization)| Target {
                cluster,
                kustomization,
            })
            .collect(),
        file: v.file,
        scope: Scope::Values,
        excluded: None,
        line: Some(v.line),
    })
}

/// The YAML document a canary appends.
fn canary_document(nonce: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fluxsim-canary-{nonce}\ndata:\n  {CANARY_KEY}: \"{nonce}\"\n"
    )
}

/// The nonce of the canary an object is (an appended ConfigMap) or carries (a values
/// canary's suffix, `helm::canary`).
fn nonce_of(o: &crate::artifact::ArtifactObject) -> Option<&str> {
    let appended = (o.id.kind == "ConfigMap" && o.id.group.is_empty())
        .then(|| o.object.get("data")?.get(CANARY_KEY)?.as_str())
        .flatten();
    appended.or_else(|| helm::marked_nonce(&o.yaml))
}

/// An artifact's objects other than canaries and the objects `carriers` (ids of objects that
/// carry a canary on the other side), as (id, digest), for comparing.
fn without_canaries<'a>(a: &'a Artifact, carriers: &BTreeSet<String>) -> Vec<(String, &'a str)> {
    a.objects
        .iter()
        .filter(|o| nonce_of(o).is_none() && !carriers.contains(&o.id.to_string()))
        .map(|o| (o.id.to_string(), o.sha256.as_str()))
        .collect()
}

fn index(clusters: &[ClusterRender]) -> BTreeMap<Target, &KustomizationRender> {
    clusters.iter().flat_map(targets).collect()
}

/// Each file that gets a canary, with the canary documents appended, and its original
/// bytes.
type Files = BTreeMap<std::path::PathBuf, Vec<u8>>;

fn planted(head: &RepoRender, plans: &[Plan]) -> Result<(Files, Files), CanaryError> {
    let mut planted_files = Files::new();
    let mut originals = Files::new();
    for p in plans.iter().filter(|p| p.excluded.is_none()) {
        let path = head.tree.root().join(&p.file);
        let before =
            head.tree
                .fs()
                .read(&path)
                .map_err(|source| crate::source::SourceError::Read {
                    path: path.clone(),
                    source,
                })?;
        originals
            .entry(std::path::PathBuf::from(&p.file))
            .or_insert_with(|| before.clone());
        let after = planted_files
            .entry(std::path::PathBuf::from(&p.file))
            .or_insert(before);
        if let Some(line) = p.line {
            *after = helm::plant(after, line, &p.nonce);
            continue;
        }
        if !after.is_empty() && !after.ends_with(b"\n") {
            after.push(b'\n');
        }
        after.extend_from_slice(canary_document(&p.nonce).as_bytes());
    }
    Ok((planted_files, originals))
}

/// Plants the canaries in a copy of `head`'s tree, renders, restores, renders again, with
/// `render` (the head's: only the builds whose inputs hold a canary run again).
pub fn run(
    head: &RepoRender,
    plans: Vec<Plan>,
    render: &Render<'_>,
) -> Result<CanaryReport, CanaryError> {
    let (planted_files, originals) = planted(head, &plans)?;
    // The head's tree with the canaries planted: in memory when it is read in place, else a
    // copy with the files written.
    let copy = head.tree.changed(&planted_files)?;
    // The same options as the head render, so that every build the canaries do not touch is
    // the head's own, from the cache.
    let RepoRender {
        tree: copy,
        clusters: planted,
        ..
    } = render(copy).map_err(CanaryError::Render)?;
    let (h, p) = (index(&head.clusters), index(&planted));
    let mut detected_in: BTreeMap<&str, BTreeSet<Target>> = BTreeMap::new();
    let mut stray_changes = Vec::new();
    for (t, hk) in &h {
        let pk = p.get(t);
        let pa = pk.and_then(|k| k.artifact.as_ref());
        for o in pa.iter().flat_map(|a| &a.objects) {
            if let Some(n) = nonce_of(o) {
                detected_in.entry(n).or_default().insert(t.clone());
            }
        }
        // An object that gained a values canary changed because of it: it is left out of
        // both sides.
        let carriers: BTreeSet<String> = pa
            .iter()
            .flat_map(|a| &a.objects)
            .filter(|o| nonce_of(o).is_some())
            .map(|o| o.id.to_string())
            .collect();
        let same_rest = match (hk.artifact.as_ref(), pa) {
            (Some(a), Some(b)) => without_canaries(a, &carriers) == without_canaries(b, &carriers),
            (None, None) => pk.is_some_and(|pk| pk.status == hk.status),
            _ => false,
        };
        if !same_rest {
            stray_changes.push(t.clone());
        }
    }
    // Kustomizations that exist only because of the canaries are strays too.
    stray_changes.extend(p.keys().filter(|t| !h.contains_key(*t)).cloned());
    // Put the files back and render again: every digest must return.
    drop(copy);
    let copy = head.tree.changed(&originals)?;
    let restored_render = render(copy).map_err(CanaryError::Render)?;
    let r = index(&restored_render.clusters);
    let digest = |k: Option<&&KustomizationRender>| {
        k.map(|k| {
            (
                k.artifact.as_ref().map(|a| a.sha256.clone()),
                k.status.clone(),
            )
        })
    };
    let not_restored: Vec<Target> = h
        .keys()
        .chain(r.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|t| digest(h.get(*t)) != digest(r.get(*t)))
        .cloned()
        .collect();
    let canaries: Vec<CanaryOutcome> = plans
        .into_iter()
        .map(|plan| {
            let seen = detected_in.remove(plan.nonce.as_str()).unwrap_or_default();
            let missing = plan
                .expected
                .difference(&seen)
                .map(|t| Unseen {
                    target: t.clone(),
                    why: match (&plan.excluded, p.get(t)) {
                        (Some(why), _) => Some(format!("the file is not in what Flux sees: {why}")),
                        (None, Some(k)) => crate::compare::problem(k),
                        (None, None) => {
                            Some("not reached in the render with the canaries".to_string())
                        }
                    },
                })
                .collect();
            CanaryOutcome {
                missing,
                unexpected: seen.difference(&plan.expected).cloned().collect(),
                detected: !plan.expected.is_empty() && seen == plan.expected,
                restored: plan.excluded.is_none()
                    && !plan.expected.is_empty()
                    && plan.expected.iter().all(|t| !not_restored.contains(t)),
                detected_in: seen,
                plan,
            }
        })
        .collect();
    Ok(CanaryReport {
        no_shared_file: !canaries.iter().any(|c| c.plan.scope == Scope::Shared),
        canaries,
        stray_changes,
        not_restored,
    })
}
