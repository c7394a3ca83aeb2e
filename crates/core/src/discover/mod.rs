//! Finding the clusters of a repository: each is a root Flux Kustomization.
//!
//! A root is a Flux Kustomization whose `spec.path` is the directory that holds its file, or
//! an ancestor of it (Flux's bootstrap layout keeps `clusters/dev/flux-system/gotk-sync.yaml`
//! with `path: ./clusters/dev`). Roots can also be given as `NAME=PATH`.
//!
//! Where the root Kustomization is not in the repository, the cluster's root folder is still
//! recognisable, and a `flux-system/flux-system` root is synthesised for it (as `flux
//! bootstrap` or the Flux Operator would create it on the cluster):
//! - a folder holding `flux-system/gotk-components.yaml` or `flux-system/gotk-sync.yaml`
//!   (`flux bootstrap`'s layout, whose generated `gotk-sync.yaml` is often left out of git);
//! - the `spec.sync.path` of a Flux Operator `FluxInstance`, or the `instance.sync.path`
//!   value of a HelmRelease (the `flux-instance` chart's values);
//! - an apply set: a folder whose kustomization reaches (through `resources`, `components`
//!   and `bases`, read without building) files that declare Flux Kustomizations, and that no
//!   Flux Kustomization of the repository reaches, nor another apply set. A bootstrap script
//!   or Ansible applies it (`kubectl apply -k clusters/dev`), so it is a cluster's root.
//!
//! Clusters are named by their root folder's last component, or, where several share it, by
//! the component that tells them apart (see [`cluster_names`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::flux::{is_kustomization, str_at, Kustomization, NamespacedName, ObjectId};
use crate::source::mapping::{MappedPath, SourceId, SourceMapping};
use crate::source::spec_dir;
use crate::source::SourceFs;

/// A cluster to render.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The cluster's name (the root directory's last component unless given).
    pub name: String,
    /// The root Kustomization (as found in the source, or synthesised for `NAME=PATH`).
    pub root: Kustomization,
    /// The file that declares the root, relative to the source root, when there is one.
    pub file: Option<String>,
    /// `spec.ignore` of the GitRepository the root reconciles from, when the source
    /// declares it (filled in by `render::clusters_of` from [`Discovery::source_ignores`]).
    pub source_ignore: Option<String>,
}

/// A GitRepository declared in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDecl {
    /// Its namespace (as written, possibly empty) and name.
    pub id: NamespacedName,
    /// The file that declares it, relative to the source root.
    pub file: String,
    /// Its `spec.ignore`, when set.
    pub ignore: Option<String>,
}

/// What one scan of a source tree finds.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The cluster roots, sorted by name.
    pub clusters: Vec<Cluster>,
    /// Every GitRepository declared, in file order.
    pub sources: Vec<SourceDecl>,
    /// The folders that hold files declaring Flux Kustomizations, sorted (where to look for
    /// a root when none is found).
    pub candidates: Vec<String>,
}

impl Discovery {
    /// `spec.ignore` of the GitRepository `source` as the cluster whose root folder is
    /// `root_dir` has it, when the source declares it. Clusters are separate worlds: two may
    /// declare a GitRepository of the same name with different rules. The declaration that
    /// counts is the one nearest the cluster's root folder (the most leading folders in
    /// common; the first in file order among equals), never one inside another cluster's root
    /// folder (`other_roots`) unless it is inside this one's too.
    #[must_use]
    pub fn source_ignore(
        &self,
        source: &NamespacedName,
        root_dir: &str,
        other_roots: &[&str],
    ) -> Option<String> {
        let parts = |p: &str| -> Vec<String> {
            if p == "." {
                Vec::new()
            } else {
                p.split('/').map(str::to_string).collect()
            }
        };
        let own = parts(root_dir);
        let inside = |file: &str, dir: &str| dir == "." || file.starts_with(&format!("{dir}/"));
        self.sources
            .iter()
            .filter(|d| d.id == *source)
            .filter(|d| {
                inside(&d.file, root_dir)
                    || !other_roots
                        .iter()
                        .any(|o| *o != root_dir && *o != "." && inside(&d.file, o))
            })
            .map(|d| {
                let dir = parts(d.file.rsplit_once('/').map_or(".", |(dir, _)| dir));
                let common = dir.iter().zip(&own).take_while(|(a, b)| a == b).count();
                (common, d)
            })
            // The first of the best: `max_by_key` keeps the last, so compare reversed.
            .fold(None::<(usize, &SourceDecl)>, |best, (n, d)| match best {
                Some((m, _)) if m >= n => best,
                _ => Some((n, d)),
            })
            .and_then(|(_, d)| d.ignore.clone())
    }
}

/// The Flux Kustomization `v` declares, unless the API server would refuse it: such a one is
/// never on a cluster, let alone its root.
fn applicable(v: &serde_json::Value) -> Option<Kustomization> {
    Kustomization::from_json(v)
        .ok()
        .filter(|k| k.invalid.is_none())
}

/// A root that could not be understood.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DiscoverError {
    /// A `NAME=PATH` argument (`--cluster-root`, or `--cluster` spelt so) without `=`.
    #[error("--cluster-root `{0}`: expected NAME=PATH (`prod=./clusters/prod`)")]
    BadArgument(String),
    /// The path given for a cluster does not exist.
    #[error("--cluster-root `{0}`: path `{1}` does not exist in the source")]
    MissingPath(String, String),
    /// No cluster was found; `candidates` are the folders that hold Flux Kustomizations.
    #[error("no cluster root found: no Flux Kustomization has a spec.path that holds its own file, no folder holds flux-system/gotk-components.yaml or gotk-sync.yaml, no Flux Operator sync path was found and no kustomization applies Flux Kustomizations that nothing else reaches; pass --cluster-root NAME=PATH{}", candidate_lines(.candidates))]
    NoClusters {
        /// Folders holding Flux Kustomizations, relative to the source root, sorted.
        candidates: Vec<String>,
    },
}

fn candidate_lines(candidates: &[String]) -> String {
    use std::fmt::Write as _;
    if candidates.is_empty() {
        return " (no folder holds a Flux Kustomization)".to_string();
    }
    let names = cluster_names(&candidates.iter().map(String::as_str).collect::<Vec<_>>());
    let mut out = String::from(". Folders that hold Flux Kustomizations:");
    for (dir, name) in candidates.iter().zip(names) {
        let _ = write!(out, "\n  --cluster-root {name}={dir}");
    }
    out
}

pub(crate) fn yaml_files(fs: &SourceFs, dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs.read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = dir.join(&e.name);
        if e.is_dir {
            yaml_files(fs, &p, out);
        } else if is_yaml_file(&p) {
            out.push(p);
        }
    }
}

/// What discovery takes from one YAML file: the documents that can make, imply or describe
/// a cluster root (Flux Kustomizations, GitRepositories, Flux Operator installs), in file
/// order. A function of the file's bytes alone, so it can be kept with a digest of them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileFacts(pub Vec<serde_json::Value>);

impl FileFacts {
    /// Reads the facts of a file's text (`None` when it is not UTF-8: no facts).
    #[must_use]
    pub fn of(text: Option<&str>) -> FileFacts {
        let Some(text) = text else {
            return FileFacts::default();
        };
        if !may_hold_facts(text) {
            return FileFacts::default();
        }
        FileFacts::read(text)
    }

    /// The facts of a text, reading every document.
    fn read(text: &str) -> FileFacts {
        let parsed: Vec<serde_json::Value> = crate::manifest::split_documents(text)
            .into_iter()
            .filter_map(|doc| crate::manifest::parse_document(doc).ok())
            .map(std::sync::Arc::unwrap_or_clone)
            .collect();
        // A kustomization file is one document.
        let kustomize = match parsed.as_slice() {
            [only] => kustomize_files(only),
            _ => None,
        };
        let docs = parsed
            .into_iter()
            .filter(|v| {
                let id = ObjectId::of(v);
                operator_sync_path(v, &id).is_some()
                    || is_git_repository(&id)
                    || is_artifact_generator(&id)
                    || is_kustomization(v)
            })
            .chain(kustomize)
            .collect();
        FileFacts(docs)
    }

    /// No document discovery looks at.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether reading `text` can give any fact, decided without reading it. A fact is a
/// document whose group holds `fluxcd` (a Flux Kustomization or GitRepository, a Flux
/// Operator install) or a kustomization listing `resources`, `components` or `bases`: the
/// YAML reading of a text only holds a string that the text does not when an escape
/// (`\`, in double quotes) or a tag (`!`, such as `!!binary`) makes it; line folding never
/// joins two words without a space. So a text with none of these words, no `\` and no `!`
/// gives no fact, whatever its documents are (most manifests of a repository).
fn may_hold_facts(text: &str) -> bool {
    const WORDS: [&str; 4] = ["fluxcd", "resources", "components", "bases"];
    text.contains(['\\', '!']) || WORDS.iter().any(|w| text.contains(w))
}

/// What of a kustomize kustomization (or component) an apply set is found by: its
/// `resources`, `components` and `bases`, as a `kustomize.config.k8s.io` document holding only
/// those (the whole document when it is one, as kustomize reads a kustomization file).
fn kustomize_files(v: &serde_json::Value) -> Option<serde_json::Value> {
    let api = v.get("apiVersion").and_then(serde_json::Value::as_str);
    let kind = v.get("kind").and_then(serde_json::Value::as_str);
    if !api.is_none_or(|a| a.starts_with("kustomize.config.k8s.io/"))
        || !kind.is_none_or(|k| k == "Kustomization" || k == "Component")
    {
        return None;
    }
    let mut out = serde_json::json!({
        "apiVersion": api.unwrap_or("kustomize.config.k8s.io/v1beta1"),
        "kind": kind.unwrap_or("Kustomization"),
    });
    let mut any = false;
    for field in ["resources", "components", "bases"] {
        if let Some(list) = v.get(field).filter(|l| l.is_array()) {
            out[field] = list.clone();
            any = true;
        }
    }
    any.then_some(out)
}

/// The local paths a kustomize document lists, when it is one ([`kustomize_files`]).
fn kustomize_entries(v: &serde_json::Value) -> Option<(bool, Vec<&str>)> {
    if !str_at(v, &["apiVersion"]).is_some_and(|a| a.starts_with("kustomize.config.k8s.io/")) {
        return None;
    }
    let component = str_at(v, &["kind"]) == Some("Component");
    let entries = ["resources", "components", "bases"]
        .iter()
        .filter_map(|f| v.get(*f).and_then(serde_json::Value::as_array))
        .flatten()
        .filter_map(serde_json::Value::as_str)
        // Remote bases are not in the repository.
        .filter(|e| !e.contains("://") && !e.starts_with("github.com/") && !e.starts_with("git@"))
        .collect();
    Some((component, entries))
}

fn is_git_repository(id: &ObjectId) -> bool {
    id.kind == "GitRepository" && id.group == "source.toolkit.fluxcd.io"
}

fn is_artifact_generator(id: &ObjectId) -> bool {
    id.kind == "ArtifactGenerator" && id.group == "source.extensions.fluxcd.io"
}

/// Whether discovery reads the file at this path (relative or not): YAML by its extension.
#[must_use]
pub fn is_yaml_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|x| x.to_str()),
        Some("yaml" | "yml")
    )
}

/// Finds the cluster roots, and the GitRepositories' ignore lists, in a source tree.
pub fn discover(fs: &SourceFs) -> Discovery {
    let root = fs.root();
    let mut files = Vec::new();
    yaml_files(fs, root, &mut files);
    let facts: Vec<(String, FileFacts)> = files
        .iter()
        .map(|file| {
            let rel_file = file
                .strip_prefix(root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            let text = fs.read_to_string(file).ok();
            (rel_file, FileFacts::of(text.as_deref()))
        })
        .collect();
    discover_files(fs, &facts)
}

/// [`discover`] from the facts of every YAML file of the tree `fs` (paths relative to its
/// root, in the order of a sorted walk: component by component).
#[must_use]
pub fn discover_files(fs: &SourceFs, files: &[(String, FileFacts)]) -> Discovery {
    discover_files_with(fs, files, &[])
}

/// [`discover_files`], with the sources mapped to folders (`--source`, `fluxsim.toml`): a
/// Kustomization on a mapped source builds `spec.path` inside the mapped folder, so that is
/// the folder it reaches.
#[must_use]
pub fn discover_files_with(
    fs: &SourceFs,
    files: &[(String, FileFacts)],
    mapped: &[SourceMapping],
) -> Discovery {
    let mut by_path: BTreeMap<String, Cluster> = BTreeMap::new();
    let mut sources = Vec::new();
    // Root folders whose root Kustomization lives on the cluster only: (path, declared in).
    let mut implied: BTreeMap<String, String> = BTreeMap::new();
    // The GitRepositories' URLs, by id: a lone cluster with a generic name is named after
    // the repository its root syncs from.
    let mut git_urls: BTreeMap<(String, String), String> = BTreeMap::new();
    // The repository a Flux Operator instance syncs, by the folder it syncs.
    let mut sync_urls: BTreeMap<String, String> = BTreeMap::new();
    for (rel_file, facts) in files {
        let rel_dir = Path::new(rel_file)
            .parent()
            .map_or(String::new(), |p| p.to_string_lossy().into_owned());
        if let Some(cluster_dir) = bootstrap_dir(rel_file) {
            implied
                .entry(cluster_dir)
                .or_insert_with(|| rel_file.clone());
        }
        for v in &facts.0 {
            let id = ObjectId::of(v);
            if let Some(sync_path) = operator_sync_path(v, &id) {
                if let Ok(p) = spec_dir(fs, sync_path) {
                    if let Some(url) = operator_sync_url(v, &id) {
                        sync_urls
                            .entry(p.clone())
                            .or_insert_with(|| url.to_string());
                    }
                    implied.entry(p).or_insert_with(|| rel_file.clone());
                }
                continue;
            }
            if is_git_repository(&id) {
                if let Some(url) = str_at(v, &["spec", "url"]) {
                    git_urls
                        .entry((id.namespace.clone(), id.name.clone()))
                        .or_insert_with(|| url.to_string());
                }
                sources.push(SourceDecl {
                    id: NamespacedName {
                        namespace: id.namespace,
                        name: id.name,
                    },
                    file: rel_file.clone(),
                    ignore: str_at(v, &["spec", "ignore"]).map(str::to_string),
                });
                continue;
            }
            if !is_kustomization(v) {
                continue;
            }
            let Some(ks) = applicable(v) else {
                continue;
            };
            let Ok(path) = spec_dir(fs, &ks.path) else {
                continue;
            };
            let holds = if path == "." {
                rel_dir.is_empty()
            } else {
                rel_dir == path || rel_dir.starts_with(&format!("{path}/"))
            };
            if !holds {
                continue;
            }
            by_path.entry(path).or_insert(Cluster {
                name: String::new(),
                root: ks,
                file: Some(rel_file.clone()),
                source_ignore: None,
            });
        }
    }
    for (path, file) in implied {
        if by_path.contains_key(&path) || !fs.is_dir(&fs.root().join(&path)) {
            continue;
        }
        if let Some(ks) = synthetic_root(&path) {
            by_path.insert(
                path,
                Cluster {
                    name: String::new(),
                    root: ks,
                    file: Some(file),
                    source_ignore: None,
                },
            );
        }
    }
    let holders: BTreeSet<String> = files
        .iter()
        .filter(|(_, f)| f.0.iter().any(is_kustomization))
        .map(|(file, _)| parent_dir(file))
        .collect();
    for (dir, file) in apply_sets(fs, files, &by_path, mapped) {
        if let Some(ks) = synthetic_root(&dir) {
            by_path.entry(dir).or_insert(Cluster {
                name: String::new(),
                root: ks,
                file: Some(file),
                source_ignore: None,
            });
        }
    }
    let mut names = cluster_names(&by_path.keys().map(String::as_str).collect::<Vec<_>>());
    if let ([name], [(dir, cluster)]) = (
        names.as_mut_slice(),
        by_path.iter().collect::<Vec<_>>().as_slice(),
    ) {
        let url = cluster
            .root
            .source_ref
            .as_ref()
            .filter(|src| src.kind == "GitRepository")
            .and_then(|src| git_urls.get(&(src.namespace.clone(), src.name.clone())))
            .or_else(|| sync_urls.get(dir.as_str()));
        if let Some(repo) = url.and_then(|url| lone_cluster_name(name, url)) {
            *name = repo;
        }
    }
    let mut clusters: Vec<Cluster> = by_path
        .into_values()
        .zip(names)
        .map(|(c, name)| Cluster { name, ..c })
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Discovery {
        clusters,
        sources,
        candidates: holders.into_iter().collect(),
    }
}

/// The name of a repository's only cluster when its folder says nothing (`cluster/`, the
/// source root, a generic folder: "== cluster cluster" in a report): the last segment of
/// `url`, the repository its root syncs from (its GitRepository's, or the Flux Operator
/// instance's `sync.url`: `ssh://git@github.com/org/home-ops` is `home-ops`), when that is a
/// name; else `None` (the folder's name stays).
fn lone_cluster_name(name: &str, url: &str) -> Option<String> {
    let says_nothing =
        matches!(name.to_ascii_lowercase().as_str(), "cluster" | "root") || is_generic(name);
    if !says_nothing {
        return None;
    }
    let last = url
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()?
        .trim_end_matches(".git");
    let ok = !last.is_empty()
        && last.len() <= 63
        && last
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !is_generic(last);
    ok.then(|| last.to_string())
}

/// The folder of a relative file path (`.` at the root).
fn parent_dir(file: &str) -> String {
    file.rsplit_once('/')
        .map_or_else(|| ".".to_string(), |(d, _)| d.to_string())
}

/// `dir/entry` cleaned lexically, `None` when it leaves the source root.
fn join_rel(dir: &str, entry: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir == "." {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for c in entry.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

/// What a build of a folder reaches, read on the text of the tree's kustomization files and
/// Flux objects (never on a build): the folders it reads and the files declaring Flux
/// Kustomizations it applies.
struct Reach<'a> {
    fs: &'a SourceFs,
    /// Each folder's kustomization (kustomize reads the first of its file names that
    /// exists): its file, whether it is a Component, its local entries.
    kustomizations: BTreeMap<String, (String, bool, Vec<&'a str>)>,
    /// The files that declare Flux Kustomizations.
    declares: BTreeSet<&'a str>,
    /// Every YAML file of the tree.
    yaml: Vec<&'a str>,
}

impl<'a> Reach<'a> {
    fn new(fs: &'a SourceFs, files: &'a [(String, FileFacts)]) -> Reach<'a> {
        let mut kustomizations: BTreeMap<String, (String, bool, Vec<&str>)> = BTreeMap::new();
        for (file, facts) in files {
            let name = file.rsplit('/').next().unwrap_or(file);
            if !fluxsim_kustomize::KUSTOMIZATION_FILES.contains(&name) {
                continue;
            }
            if let Some((component, entries)) = facts.0.iter().find_map(kustomize_entries) {
                kustomizations.entry(parent_dir(file)).or_insert((
                    file.clone(),
                    component,
                    entries,
                ));
            }
        }
        Reach {
            fs,
            kustomizations,
            declares: files
                .iter()
                .filter(|(_, f)| f.0.iter().any(is_kustomization))
                .map(|(file, _)| file.as_str())
                .collect(),
            yaml: files.iter().map(|(f, _)| f.as_str()).collect(),
        }
    }

    /// The folders a build of `dir` reads, and the files declaring Flux Kustomizations it
    /// applies.
    fn reach(&self, dir: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let (fs, kustomizations, declares) = (self.fs, &self.kustomizations, &self.declares);
        let mut seen = BTreeSet::new();
        let mut flux = BTreeSet::new();
        let mut queue = vec![dir.to_string()];
        while let Some(d) = queue.pop() {
            if !seen.insert(d.clone()) {
                continue;
            }
            if let Some((_, _, entries)) = kustomizations.get(&d) {
                for e in entries {
                    let Some(p) = join_rel(&d, e) else { continue };
                    if declares.contains(p.as_str()) {
                        flux.insert(p);
                    } else if fs.is_dir(&fs.root().join(&p)) {
                        queue.push(p);
                    }
                }
            } else {
                // Flux's generator lists every manifest below, stopping at folders with a
                // kustomization of their own (which it lists as resources).
                let prefix = if d == "." {
                    String::new()
                } else {
                    format!("{d}/")
                };
                for f in self.yaml.iter().filter(|f| f.starts_with(&prefix)) {
                    // The outermost folder between `d` and the file with a kustomization.
                    let mut nested = None;
                    let mut at = parent_dir(f);
                    while at != d && at != "." {
                        if kustomizations.contains_key(&at) {
                            nested = Some(at.clone());
                        }
                        at = parent_dir(&at);
                    }
                    match nested {
                        Some(k) => queue.push(k),
                        None if declares.contains(*f) => {
                            flux.insert((*f).to_string());
                        }
                        None => {}
                    }
                }
            }
        }
        (seen, flux)
    }
}

/// The Flux Kustomizations declared below the folder `dir` (relative to the root): in the
/// files a build of it applies, as discovery reads them ([`Reach`]), and in turn in those a
/// build of each one's `spec.path` applies. By file and name (`namespace/name` as written,
/// the namespace possibly empty), sorted; read on the text alone, as discovery reads it.
#[must_use]
pub fn kustomizations_below(
    fs: &SourceFs,
    files: &[(String, FileFacts)],
    mapped: &[SourceMapping],
    dir: &str,
) -> BTreeSet<(String, NamespacedName)> {
    let reach = Reach::new(fs, files);
    let facts: BTreeMap<&str, &FileFacts> = files.iter().map(|(f, x)| (f.as_str(), x)).collect();
    let folders = folders_of(&reach.yaml);
    let mut out = BTreeSet::new();
    let mut done = BTreeSet::new();
    let mut queue = vec![dir.to_string()];
    while let Some(d) = queue.pop() {
        if !done.insert(d.clone()) {
            continue;
        }
        let (_, flux) = reach.reach(&d);
        for file in flux {
            let docs = facts
                .get(file.as_str())
                .map(|f| f.0.as_slice())
                .unwrap_or_default();
            for ks in docs
                .iter()
                .filter(|v| is_kustomization(v))
                .filter_map(applicable)
            {
                queue.extend(spec_folders(fs, &ks, mapped, &folders));
                out.insert((file.clone(), ks.id));
            }
        }
    }
    out
}

/// The apply sets of the tree (see the module's doc): (folder, its kustomization file).
///
/// Reachability is read on the text of the kustomization files and of the Flux objects,
/// never on what a build gives: a build may fail offline (a remote base beside a local
/// folder) or not be tried, and what its kustomization lists is reached all the same.
fn apply_sets(
    fs: &SourceFs,
    files: &[(String, FileFacts)],
    roots: &BTreeMap<String, Cluster>,
    mapped: &[SourceMapping],
) -> Vec<(String, String)> {
    let texts = Reach::new(fs, files);
    let reach = |dir: &str| texts.reach(dir);
    let kustomizations = &texts.kustomizations;
    let declares = &texts.declares;
    let yaml = &texts.yaml;
    let folders = folders_of(yaml);
    // Every folder some Flux Kustomization (or cluster root) builds, or builds from, and the
    // Flux Kustomizations those builds apply.
    let mut reached: BTreeSet<String> = BTreeSet::new();
    let mut reached_flux: BTreeSet<String> = BTreeSet::new();
    let spec_dirs = files
        .iter()
        .flat_map(|(_, f)| &f.0)
        .filter(|v| is_kustomization(v))
        .filter_map(applicable)
        .flat_map(|ks| spec_folders(fs, &ks, mapped, &folders))
        .chain(roots.keys().cloned())
        .collect::<BTreeSet<String>>();
    for d in &spec_dirs {
        let (seen, flux) = reach(d);
        reached.extend(seen);
        reached_flux.extend(flux);
    }
    // What an ArtifactGenerator copies into an artifact is built from there: every folder
    // below its patterns' literal folders is reached.
    for prefix in generator_folders(files, mapped) {
        let inside = |p: &str| prefix == "." || p == prefix || p.starts_with(&format!("{prefix}/"));
        reached.extend(folders.iter().filter(|d| inside(d)).cloned());
        reached_flux.extend(
            declares
                .iter()
                .filter(|f| inside(f))
                .map(|f| (*f).to_string()),
        );
    }
    // A folder is an apply set when nothing reaches it and it applies Flux Kustomizations
    // that nothing else applies: one that only gathers clusters (`clusters/kustomization.yaml`
    // listing each cluster's folder, for CI) applies none of its own.
    let candidates: Vec<(String, BTreeSet<String>)> = kustomizations
        .iter()
        .filter(|(d, (_, component, _))| !*component && !reached.contains(*d))
        .filter_map(|(d, _)| {
            let (seen, flux) = reach(d);
            flux.iter()
                .any(|f| !reached_flux.contains(f))
                .then(|| (d.clone(), seen))
        })
        .collect();
    // Only the outermost: a base that an apply set includes is not one itself.
    candidates
        .iter()
        .filter(|(d, _)| {
            !candidates
                .iter()
                .any(|(other, seen)| other != d && seen.contains(d))
        })
        .map(|(d, _)| (d.clone(), kustomizations[d].0.clone()))
        .collect()
}

/// Every folder of the tree that holds a YAML file, or a folder that does, and the root.
fn folders_of(yaml: &[&str]) -> BTreeSet<String> {
    yaml.iter()
        .flat_map(|f| {
            let mut out = Vec::new();
            let mut at = parent_dir(f);
            while at != "." {
                out.push(at.clone());
                at = parent_dir(&at);
            }
            out
        })
        .chain(std::iter::once(".".to_string()))
        .collect()
}

/// The folders of the repository a Kustomization's `spec.path` may name: inside the folder
/// its source is mapped to (none when mapped to another checkout), else the repository's.
/// A path holding `${VAR}` (substituted by a parent's postBuild) names every folder it can
/// match, a variable standing for any text within one folder name.
fn spec_folders(
    fs: &SourceFs,
    ks: &Kustomization,
    mapped: &[SourceMapping],
    folders: &BTreeSet<String>,
) -> Vec<String> {
    let mapping = ks.source_ref.as_ref().and_then(|r| {
        let id = SourceId {
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        };
        mapped.iter().find(|m| m.source == id)
    });
    let base = match mapping.map(|m| &m.path) {
        Some(MappedPath::Checkout(_)) => return Vec::new(),
        Some(MappedPath::Folder(f)) => Some(f.as_str()),
        None => None,
    };
    if ks.path.contains("${") {
        let pattern = clamped(base.unwrap_or(""), &ks.path);
        return folders
            .iter()
            .filter(|d| template_matches(&pattern, d))
            .cloned()
            .collect();
    }
    match base {
        Some(base) => vec![clamped(base, &ks.path)],
        None => spec_dir(fs, &ks.path).into_iter().collect(),
    }
}

/// `path` inside `base` (`""`: the root), cleaned, `..` stopping at `base` as Flux's
/// SecureJoin stops at the artifact's root; `.` for the root itself.
fn clamped(base: &str, path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let inner = parts.join("/");
    match (base.is_empty(), inner.is_empty()) {
        (true, true) => ".".into(),
        (true, false) => inner,
        (false, true) => base.to_string(),
        (false, false) => format!("{base}/{inner}"),
    }
}

/// Whether the folder `dir` matches `pattern`, a path whose `${...}` stand for any text
/// within one folder name.
fn template_matches(pattern: &str, dir: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let dir: Vec<&str> = dir.split('/').collect();
    pattern.len() == dir.len() && pattern.iter().zip(&dir).all(|(p, d)| segment_matches(p, d))
}

fn segment_matches(pattern: &str, name: &str) -> bool {
    // The literal pieces between the variables, which must appear in order.
    let mut pieces = Vec::new();
    let mut rest = pattern;
    while let Some(start) = rest.find("${") {
        pieces.push(&rest[..start]);
        rest = rest[start..]
            .find('}')
            .map_or("", |end| &rest[start + end + 1..]);
    }
    pieces.push(rest);
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return first == name;
    }
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut at = &name[first.len()..name.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match at.find(piece) {
            Some(i) => at = &at[i + piece.len()..],
            None => return false,
        }
    }
    true
}

/// The folders of the repository that ArtifactGenerators copy from (each pattern's literal
/// folders, in the folder its source is mapped to).
fn generator_folders(files: &[(String, FileFacts)], mapped: &[SourceMapping]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for v in files.iter().flat_map(|(_, f)| &f.0) {
        let id = ObjectId::of(v);
        if !is_artifact_generator(&id) {
            continue;
        }
        let mut aliases: BTreeMap<&str, Option<&str>> = BTreeMap::new();
        for s in v
            .pointer("/spec/sources")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            let source = SourceId {
                kind: str_at(s, &["kind"]).unwrap_or_default().to_string(),
                namespace: str_at(s, &["namespace"])
                    .filter(|n| !n.is_empty())
                    .unwrap_or(&id.namespace)
                    .to_string(),
                name: str_at(s, &["name"]).unwrap_or_default().to_string(),
            };
            let base = match mapped.iter().find(|m| m.source == source).map(|m| &m.path) {
                Some(MappedPath::Checkout(_)) => None,
                Some(MappedPath::Folder(f)) => Some(f.as_str()),
                None => Some(""),
            };
            aliases.insert(str_at(s, &["alias"]).unwrap_or_default(), base);
        }
        let froms = v
            .pointer("/spec/artifacts")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.get("copy").and_then(serde_json::Value::as_array))
            .flatten()
            .filter_map(|c| str_at(c, &["from"]));
        for from in froms {
            let Some((alias, pattern)) = from.strip_prefix('@').and_then(|f| f.split_once('/'))
            else {
                continue;
            };
            let Some(Some(base)) = aliases.get(alias) else {
                continue;
            };
            let literal: Vec<&str> = pattern
                .split('/')
                .take_while(|p| !p.contains(['*', '?', '[', ']']))
                .collect();
            // A pattern without glob characters names a file or a folder: its folder is
            // enough.
            let literal = if literal.len() == pattern.split('/').count() {
                &literal[..literal.len().saturating_sub(1)]
            } else {
                &literal[..]
            };
            out.insert(clamped(base, &literal.join("/")));
        }
    }
    out
}

/// Folder names that say what a folder is for, not which cluster it is: a cluster is named
/// by one of these only when its path has nothing else (`kubernetes/flux/cluster` is
/// `cluster`, `clusters/cluster-1/flux` is `cluster-1`, `cluster/base` is `cluster`).
const GENERIC_FOLDERS: &[&str] = &[
    "apps",
    "base",
    "bases",
    "bootstrap",
    "clusters",
    "config",
    "configs",
    "deploy",
    "deployment",
    "deployments",
    "environments",
    "envs",
    "flux",
    "flux-system",
    "fluxcd",
    "gitops",
    "infra",
    "infrastructure",
    "k8s",
    "kube",
    "kubernetes",
    "manifests",
    "overlay",
    "overlays",
];

fn is_generic(component: &str) -> bool {
    GENERIC_FOLDERS.contains(&component.to_ascii_lowercase().as_str())
}

/// The names of the clusters whose root folders are `paths` (distinct, relative to the
/// source root), in the same order: each folder's last component that is not a generic
/// folder name ([`GENERIC_FOLDERS`]; the last component when all are; `root` for the source
/// root itself); where several share it, the component nearest the end of each path that no
/// other of them holds and is not generic (`kubernetes/main/flux` and
/// `kubernetes/storage/flux` are `main` and `storage`); the whole path with `-` for `/` where
/// no such component tells them apart.
#[must_use]
pub fn cluster_names(paths: &[&str]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            if *p == "." {
                Vec::new()
            } else {
                p.split('/').collect()
            }
        })
        .collect();
    // Components nearest the end first, generic ones after the others.
    let preference = |i: usize| -> Vec<&str> {
        let (named, generic): (Vec<&str>, Vec<&str>) =
            parts[i].iter().rev().partition(|c| !is_generic(c));
        named.into_iter().chain(generic).collect()
    };
    let first = |i: usize| preference(i).first().map_or("root", |c| *c).to_string();
    let mut names: Vec<String> = (0..paths.len()).map(first).collect();
    for i in 0..paths.len() {
        let group: Vec<usize> = (0..paths.len())
            .filter(|&j| j != i && first(j) == first(i))
            .collect();
        if group.is_empty() {
            continue;
        }
        // Never a generic name: the path says more.
        let distinct = preference(i)
            .into_iter()
            .filter(|c| !is_generic(c))
            .find(|c| group.iter().all(|&j| !parts[j].contains(c)));
        names[i] = match distinct {
            Some(c) => c.to_string(),
            None => paths[i].replace('/', "-"),
        };
    }
    // A distinguishing component may be another cluster's name: those take their paths.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for n in &names {
        *counts.entry(n.clone()).or_default() += 1;
    }
    for (i, n) in names.iter_mut().enumerate() {
        if counts[n.as_str()] > 1 {
            *n = paths[i].replace('/', "-");
        }
    }
    names
}

/// A cluster given as `NAME=PATH`: its root is a synthesised `flux-system/flux-system`
/// Kustomization with that path, unless the source declares one.
pub fn cluster_from_arg(
    fs: &SourceFs,
    arg: &str,
    found: &[Cluster],
) -> Result<Cluster, DiscoverError> {
    let (name, path) = arg
        .split_once('=')
        .ok_or_else(|| DiscoverError::BadArgument(arg.to_string()))?;
    let norm = spec_dir(fs, path).unwrap_or_else(|_| path.to_string());
    if !fs.is_dir(&fs.root().join(&norm)) {
        return Err(DiscoverError::MissingPath(
            arg.to_string(),
            path.to_string(),
        ));
    }
    if let Some(c) = found
        .iter()
        .find(|c| spec_dir(fs, &c.root.path).is_ok_and(|p| p == norm))
    {
        return Ok(Cluster {
            name: name.to_string(),
            ..c.clone()
        });
    }
    let ks = synthetic_root(&norm).ok_or_else(|| DiscoverError::BadArgument(arg.to_string()))?;
    Ok(Cluster {
        name: name.to_string(),
        root: ks,
        file: None,
        source_ignore: None,
    })
}

/// The root Kustomization `flux bootstrap` (or the Flux Operator) creates on the cluster for
/// the folder `path` (relative to the source root): `flux-system/flux-system`, pruning, from
/// the `flux-system` GitRepository.
fn synthetic_root(path: &str) -> Option<Kustomization> {
    let synthetic = serde_json::json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"path": format!("./{path}"), "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}
    });
    Kustomization::from_json(&synthetic).ok()
}

/// For `<dir>/flux-system/gotk-components.yaml` or `.../gotk-sync.yaml`, the cluster folder
/// `<dir>` (`.` at the source root).
fn bootstrap_dir(rel_file: &str) -> Option<String> {
    let dir = ["gotk-components.yaml", "gotk-sync.yaml"]
        .iter()
        .find_map(|f| rel_file.strip_suffix(&format!("flux-system/{f}")))?;
    if dir.is_empty() {
        return Some(".".into());
    }
    dir.strip_suffix('/').map(str::to_string)
}

/// The sync path a Flux Operator install points at: `FluxInstance.spec.sync.path`, or a
/// HelmRelease's `values.instance.sync.path` (the `flux-instance` chart).
/// The repository URL a Flux Operator instance syncs (beside [`operator_sync_path`]).
fn operator_sync_url<'a>(v: &'a serde_json::Value, id: &ObjectId) -> Option<&'a str> {
    match (id.group.as_str(), id.kind.as_str()) {
        ("fluxcd.controlplane.io", "FluxInstance") => str_at(v, &["spec", "sync", "url"]),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            str_at(v, &["spec", "values", "instance", "sync", "url"])
        }
        _ => None,
    }
}

fn operator_sync_path<'a>(v: &'a serde_json::Value, id: &ObjectId) -> Option<&'a str> {
    match (id.group.as_str(), id.kind.as_str()) {
        ("fluxcd.controlplane.io", "FluxInstance") => str_at(v, &["spec", "sync", "path"]),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            str_at(v, &["spec", "values", "instance", "sync", "path"])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tree;

    // `flux bootstrap` writes clusters/<name>/flux-system/{gotk-components,gotk-sync}.yaml
    // and a root Kustomization `flux-system` with `path: ./clusters/<name>` (flux2
    // `pkg/manifestgen/sync`); repositories often keep gotk-sync.yaml out of git.
    #[test]
    fn bootstrap_folder_without_its_sync_file_is_a_cluster_root() {
        let t = tree(&[
            (
                "clusters/staging/flux-system/gotk-components.yaml",
                "# generated\n",
            ),
            (
                "clusters/staging/apps.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
            ),
        ]);
        let d = discover(&crate::testutil::source_fs(t.path()));
        assert_eq!(d.clusters.len(), 1);
        let c = &d.clusters[0];
        assert_eq!(c.name, "staging");
        assert_eq!(c.root.path, "./clusters/staging");
        assert_eq!(c.root.id.to_string(), "flux-system/flux-system");
        assert_eq!(
            c.file.as_deref(),
            Some("clusters/staging/flux-system/gotk-components.yaml")
        );
    }

    // A lone cluster whose folder says nothing (`cluster/`) is named after the repository
    // its root syncs from (issue 43: "== cluster cluster"); a cluster whose folder names it,
    // or one of several, keeps the folder's name.
    #[test]
    fn a_lone_cluster_in_a_generic_folder_is_named_after_the_repository_it_syncs() {
        let sync = |dir: &str, url: &str| {
            format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
                 name: flux-system\n  namespace: flux-system\nspec:\n  path: ./{dir}\n  \
                 sourceRef:\n    kind: GitRepository\n    name: flux-system\n---\n\
                 apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  \
                 name: flux-system\n  namespace: flux-system\nspec:\n  url: {url}\n"
            )
        };
        let name = |dir: &str, url: &str| {
            let t = tree(&[(&format!("{dir}/flux-system.yaml"), &sync(dir, url))]);
            let d = discover(&crate::testutil::source_fs(t.path()));
            d.clusters
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            name("cluster", "ssh://git@github.com/org/home-ops.git"),
            ["home-ops"]
        );
        assert_eq!(
            name("kubernetes/flux", "https://github.com/org/lab/"),
            ["lab"]
        );
        // The folder names it: kept.
        assert_eq!(
            name("clusters/staging", "https://github.com/org/lab"),
            ["staging"]
        );
        // A URL whose end is no name (or is itself generic): the folder's name stays.
        assert_eq!(name("cluster", "https://github.com/org/flux"), ["cluster"]);
    }

    // `spec.path: 42` read as unset would be the source root, which holds every file: the
    // API server refuses such an object (the CRD's schema says string), so it roots nothing.
    #[test]
    fn a_kustomization_whose_spec_path_is_not_a_string_is_no_cluster_root() {
        let t = tree(&[(
            "sync.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
             name: flux-system\n  namespace: flux-system\nspec:\n  path: 42\n",
        )]);
        let d = discover(&crate::testutil::source_fs(t.path()));
        assert!(d.clusters.is_empty(), "{:?}", d.clusters);
    }

    // The Flux Operator reconciles `FluxInstance.spec.sync.path` as the cluster root
    // (controlplaneio-fluxcd/flux-operator, FluxInstance API `sync`); the flux-instance chart
    // takes it as `instance.sync.path`.
    #[test]
    fn flux_operator_sync_path_is_a_cluster_root() {
        let t = tree(&[
            ("kubernetes/flux/cluster/ks.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"),
            (
                "kubernetes/apps/flux/hr.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: flux-instance\nspec:\n  values:\n    instance:\n      sync:\n        kind: GitRepository\n        path: kubernetes/flux/cluster\n",
            ),
            (
                "other/fi.yaml",
                "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\nspec:\n  sync:\n    path: ./other/root\n",
            ),
            ("other/root/x.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"),
        ]);
        let d = discover(&crate::testutil::source_fs(t.path()));
        let roots: Vec<(&str, &str)> = d
            .clusters
            .iter()
            .map(|c| (c.name.as_str(), c.root.path.as_str()))
            .collect();
        assert_eq!(
            roots,
            vec![
                ("cluster", "./kubernetes/flux/cluster"),
                ("root", "./other/root")
            ]
        );
    }

    #[test]
    fn a_root_kustomization_in_the_repository_wins_over_an_implied_one() {
        let t = tree(&[
            ("clusters/dev/flux-system/gotk-components.yaml", "# generated\n"),
            (
                "clusters/dev/flux-system/gotk-sync.yaml",
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: root\n  namespace: flux-system\nspec:\n  path: ./clusters/dev\n",
            ),
        ]);
        let d = discover(&crate::testutil::source_fs(t.path()));
        assert_eq!(d.clusters.len(), 1);
        assert_eq!(d.clusters[0].root.id.name, "root");
    }

    #[test]
    fn clusters_sharing_a_last_folder_are_named_by_the_component_that_tells_them_apart() {
        assert_eq!(
            cluster_names(&["kubernetes/main/flux", "kubernetes/storage/flux"]),
            ["main", "storage"]
        );
        assert_eq!(
            cluster_names(&[
                "kubernetes/cluster-0/flux",
                "kubernetes/nas-1/flux",
                "clusters/dev"
            ]),
            ["cluster-0", "nas-1", "dev"]
        );
        // `flux` says nothing: `x/flux` is `x`, and `x/y/flux` is `y`.
        assert_eq!(cluster_names(&["x/flux", "x/y/flux"]), ["x", "y"]);
        // Two `dev`: the component that tells them apart.
        assert_eq!(
            cluster_names(&["a/dev/flux", "b/flux", "c/dev"]),
            ["a", "b", "c"]
        );
        // A distinguishing component that is another cluster's name gives way to the path.
        assert_eq!(cluster_names(&["a/dev", "b/dev", "a"]), ["a-dev", "b", "a"]);
        assert_eq!(cluster_names(&["."]), ["root"]);
    }

    // A person names a cluster `cluster-1`, not `clusters` or `base`: generic folder names
    // are taken only when the path has nothing else.
    #[test]
    fn a_cluster_is_never_named_by_a_generic_folder_when_its_path_has_a_better_name() {
        assert_eq!(cluster_names(&["cluster/base"]), ["cluster"]);
        assert_eq!(cluster_names(&["kubernetes/flux/cluster"]), ["cluster"]);
        assert_eq!(
            cluster_names(&["clusters/cluster-1/flux-system", "clusters/cluster-2/flux"]),
            ["cluster-1", "cluster-2"]
        );
        assert_eq!(
            cluster_names(&["clusters/cluster-1", "overlays/cluster-1/base"]),
            ["clusters-cluster-1", "overlays-cluster-1-base"]
        );
        assert_eq!(cluster_names(&["deploy/k8s"]), ["k8s"]);
        assert_eq!(cluster_names(&["overlays", "."]), ["overlays", "root"]);
    }

    #[test]
    fn each_cluster_takes_the_git_repository_declared_nearest_its_root_folder() {
        let decl = |file: &str, ignore: &str| SourceDecl {
            id: NamespacedName {
                namespace: "flux-system".into(),
                name: "flux-system".into(),
            },
            file: file.into(),
            ignore: Some(ignore.into()),
        };
        let d = Discovery {
            clusters: Vec::new(),
            candidates: Vec::new(),
            sources: vec![
                decl("kubernetes/main/flux/repo.yaml", "main"),
                decl("kubernetes/storage/bootstrap/repo.yaml", "storage"),
                decl("shared/repo.yaml", "shared"),
            ],
        };
        let roots = ["kubernetes/main/flux", "kubernetes/storage/flux", "other/x"];
        let id = d.sources[0].id.clone();
        let got = |dir: &str| d.source_ignore(&id, dir, &roots);
        assert_eq!(got("kubernetes/main/flux").as_deref(), Some("main"));
        // Not inside its own folder, but nearer than any other, and in no other cluster's.
        assert_eq!(got("kubernetes/storage/flux").as_deref(), Some("storage"));
        // Never one inside another cluster's root folder; among equals, the first declared.
        assert_eq!(got("other/x").as_deref(), Some("storage"));
    }

    // The prefilter of `FileFacts::of` only skips texts that give no fact when read: every
    // YAML file of testdata and the corpus-like shapes below, with the words spelled in
    // ways that read as something else.
    #[test]
    fn texts_the_prefilter_skips_give_no_fact_when_read() {
        let mut texts: Vec<String> = vec![
            "apiVersion: kustomize.toolkit.flux\n  cd.io/v1\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n".into(),
            "apiVersion: 'kustomize.toolkit.flux''cd.io/v1'\nkind: Kustomization\n".into(),
            "kind: Kustomization\nresource: [a.yaml]\nbase: [b]\n".into(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into(),
        ];
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata"
        ))];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if is_yaml_file(&p) {
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        texts.push(t);
                    }
                }
            }
        }
        assert!(texts.len() > 300, "{} texts", texts.len());
        let mut skipped = 0;
        for t in &texts {
            if !may_hold_facts(t) {
                skipped += 1;
                assert!(FileFacts::read(t).is_empty(), "{t}");
            }
            assert_eq!(FileFacts::of(Some(t)), FileFacts::read(t), "{t}");
        }
        assert!(skipped > 50, "{skipped} skipped");
        // An escape or a tag can make the words: such texts are read.
        for t in [
            "apiVersion: \"kustomize.toolkit.\\x66luxcd.io/v1\"\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n",
            "apiVersion: !!binary a3VzdG9taXplLnRvb2xraXQuZmx1eGNkLmlvL3Yx\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n",
        ] {
            assert!(may_hold_facts(t));
            assert!(!FileFacts::of(Some(t)).is_empty(), "{t}");
        }
    }
}
