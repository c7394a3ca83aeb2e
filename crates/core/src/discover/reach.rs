//! What a build of a folder reaches, read on the text of the tree's kustomization files and
//! Flux objects (never on a build): the apply sets, and the Flux Kustomizations below a folder.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::{applicable, is_artifact_generator, kustomize_entries, FileFacts};
use super::Cluster;
use crate::flux::{is_kustomization, str_at, Kustomization, NamespacedName, ObjectId};
use crate::source::mapping::{MappedPath, SourceId, SourceMapping};
use crate::source::{spec_dir, SourceFs};

/// The folder of a relative file path (`.` at the root).
pub(super) fn parent_dir(file: &str) -> String {
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
pub(super) fn apply_sets(
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
