//! What a build fetches over the network, read on the fields kustomize reads and nothing
//! else: a `namespace:`, a label, a comment or any other string never makes a build need the
//! network, whatever folder or URL it happens to name.
//!
//! kustomize v5.8.1 (`sigs.k8s.io/kustomize/api` v0.21.1) reads these fields of each
//! kustomization it builds (`api/types/kustomization.go`, `api/internal/target/kusttarget.go`),
//! each through its loader (`api/internal/loader/fileloader.go`):
//! - `resources` and `bases` (`FixKustomization` appends `bases` to `resources`), and the file
//!   entries of `generators`, `transformers` and `validators` (`configureExternalGenerators`,
//!   `configureExternalTransformers` hand them to `accumulateResources`): each is first
//!   loaded as a file (`accumulateFile`: `Load` fetches an `http(s)` URL, `IsRemoteFile`),
//!   then, when that fails, as a base (`ldr.New`: a git clone when `NewRepoSpecFromURL`
//!   takes it, `api/internal/git/repospec.go`; else a folder of the tree, built in turn);
//! - `components`: always a base (`accumulateComponents`: `ldr.New`);
//! - files `Load`ed: `crds` (`LoadConfigFromCRDs`), `configurations`
//!   (`MakeTransformerConfig`), `openapi.path` (`accumulateDirectory`, krusty's
//!   `kustomizer.go`), `patches[].path` (PatchTransformer), `patchesStrategicMerge`
//!   (PatchStrategicMergeTransformer: an entry that is no inline patch is a file),
//!   `patchesJson6902[].path`, `replacements[].path` (ReplacementTransformer), and the
//!   `files`, `envs` and `env` of `configMapGenerator` and `secretGenerator` (`kv.go`: a
//!   `key=path` entry's path after the first `=`);
//! - the file fields of the plugin configurations `generators`, `transformers` and
//!   `validators` list, inline or in files (`LoadGenerators`/`LoadTransformers` with the
//!   kustomization's loader): a builtin plugin's `path`, `paths`, `files`, `envs`, `env`,
//!   `valuesFile`, `additionalValuesFiles`.
//!
//! `helmCharts` (and `helmChartInflationGenerator`) is recorded apart: kustomize-controller
//! does not enable Helm, so such a build fails; it reaches nothing.
//!
//! The same walk gives the kustomization files with their remote entries left out
//! ([`Fetches::stripped`]): what a Kustomization that needs the network declares in its own
//! files is built from them (`reconcile::build`), a presumption that says so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::source::view::clean;
use crate::source::SourceFs;
use fluxsim_kustomize::KUSTOMIZATION_FILES;

/// One entry of a kustomization that kustomize would fetch over the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEntry {
    /// The kustomization file naming it, relative to the built folder.
    pub kustomization: String,
    /// The field that names it (`resources`, `patches[].path`, `configMapGenerator[].files`).
    pub field: &'static str,
    /// What it names, as written.
    pub url: String,
}

/// What the kustomize fields of one build's kustomization files fetch.
#[derive(Debug, Default)]
pub struct Fetches {
    /// Every remote entry, in the order the walk meets them (the first is the one named).
    pub remote: Vec<RemoteEntry>,
    /// The first kustomization file with `helmCharts`, relative to the built folder.
    pub helm: Option<String>,
    /// Each kustomization file holding a remote entry (its path in the source): its
    /// reading, and the entries to leave out.
    drops: BTreeMap<PathBuf, (Arc<Value>, BTreeSet<Omitted>)>,
}

/// An entry to leave out: the top-level field of the kustomization, and its index there.
type Omitted = (&'static str, usize);

impl Fetches {
    /// Each kustomization file that holds a remote entry (by its path in the source), with
    /// its remote entries left out: written as JSON, which kustomize reads as it reads the
    /// file (`Kustomization.Unmarshal` is `yaml.YAMLToJSON`, then JSON), as Flux's generator
    /// writes its own kustomization file. An entry is left out whole: a patch, a generator,
    /// a replacement or a plugin configuration with one remote file, `openapi.path`.
    #[must_use]
    pub fn stripped(&self) -> BTreeMap<PathBuf, String> {
        self.drops
            .iter()
            .map(|(path, (doc, drops))| {
                let mut doc = (**doc).clone();
                // Highest index first, so that each index still names its entry.
                for (field, i) in drops.iter().rev() {
                    if *field == "openapi" {
                        if let Some(o) = doc.get_mut("openapi").and_then(Value::as_object_mut) {
                            o.remove("path");
                        }
                    } else if let Some(list) = doc.get_mut(*field).and_then(Value::as_array_mut) {
                        if *i < list.len() {
                            list.remove(*i);
                        }
                    }
                }
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
                (path.clone(), text)
            })
            .collect()
    }
}

/// What building `dir` of `fs` fetches, its kustomization file being `file` (name, content)
/// when fluxsim writes one, and any kustomization file of `overrides` (by its path in the
/// source) read as its content there.
#[must_use]
pub fn fetches(
    fs: &SourceFs,
    dir: &Path,
    file: Option<(&str, &str)>,
    overrides: &BTreeMap<PathBuf, String>,
) -> Fetches {
    let mut walk = Walk {
        fs,
        overrides,
        seen: BTreeSet::new(),
        out: Fetches::default(),
    };
    walk.visit(&clean(dir), "", file);
    walk.out
}

/// What an entry kustomize loads as a resource (file first, then base) names.
enum Entry {
    /// Fetched over the network.
    Remote,
    /// A file of the tree.
    File(PathBuf),
    /// A folder of the tree, built as a kustomization.
    Dir(PathBuf),
    /// Nothing kustomize can read (the build fails on it).
    Nothing,
}

struct Walk<'a> {
    fs: &'a SourceFs,
    overrides: &'a BTreeMap<PathBuf, String>,
    /// Folders visited.
    seen: BTreeSet<PathBuf>,
    out: Fetches,
}

/// Relative `rel/name`, `name` alone at the top, cleaned (`./a` is `a`) unless it climbs
/// above the built folder.
fn join(rel: &str, name: &str) -> String {
    let joined = if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    };
    crate::source::clean_relative(&joined).unwrap_or(joined)
}

/// The strings of a list field (a kustomization's lists are `[]string`; anything else
/// fails kustomize's decoding, so it names nothing), with their index.
fn strings(v: Option<&Value>) -> impl Iterator<Item = (usize, &str)> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, e)| e.as_str().map(|s| (i, s)))
}

/// The entries of a list of objects, with their index.
fn entries(v: Option<&Value>) -> impl Iterator<Item = (usize, &Value)> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

impl Walk<'_> {
    fn read(&self, path: &Path) -> Option<String> {
        match self.overrides.get(&clean(path)) {
            Some(text) => Some(text.clone()),
            None => self.fs.read_to_string(path).ok(),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.overrides.contains_key(&clean(path)) || self.fs.is_file(path)
    }

    /// What the resource-like entry `e` of a kustomization in `dir` names
    /// (`accumulateResources`).
    fn resource(&self, dir: &Path, e: &str) -> Entry {
        if e.is_empty() {
            return Entry::Nothing;
        }
        if is_remote_file(e) {
            return Entry::Remote;
        }
        let p = clean(&dir.join(e));
        let inside = self.fs.contains(&p) && !Path::new(e).is_absolute();
        if inside && self.is_file(&p) {
            return Entry::File(p);
        }
        if is_remote_base(e) {
            return Entry::Remote;
        }
        if inside && self.fs.is_dir(&p) {
            return Entry::Dir(p);
        }
        Entry::Nothing
    }

    fn flag(&mut self, kpath: &Path, doc: &Arc<Value>, at: Omitted, entry: RemoteEntry) {
        self.out.remote.push(entry);
        self.out
            .drops
            .entry(kpath.to_path_buf())
            .or_insert_with(|| (Arc::clone(doc), BTreeSet::new()))
            .1
            .insert(at);
    }

    /// Visits the kustomization of `dir` (`rel` relative to the built folder).
    #[allow(clippy::too_many_lines)] // One pass over kustomize's fields, in its order.
    fn visit(&mut self, dir: &Path, rel: &str, file: Option<(&str, &str)>) {
        if !self.seen.insert(dir.to_path_buf()) {
            return;
        }
        let (name, text) = if let Some((name, content)) = file {
            (name.to_string(), content.to_string())
        } else {
            let Some(name) = KUSTOMIZATION_FILES
                .iter()
                .find(|f| self.is_file(&dir.join(f)))
            else {
                // A folder without a kustomization: kustomize cannot build it.
                return;
            };
            let Some(text) = self.read(&dir.join(name)) else {
                return;
            };
            ((*name).to_string(), text)
        };
        let kpath = dir.join(&name);
        let krel = join(rel, &name);
        let Ok(doc) = crate::manifest::parse_shared(&text) else {
            return;
        };
        if !doc.is_object() {
            return;
        }
        if doc.get("helmCharts").is_some() || doc.get("helmChartInflationGenerator").is_some() {
            self.out
                .helm
                .get_or_insert_with(|| format!("{krel}: helmCharts"));
        }
        let remote = |field: &'static str, url: &str| RemoteEntry {
            kustomization: krel.clone(),
            field,
            url: url.to_string(),
        };
        // Resources and bases: a file, a base (remote or a folder built in turn).
        for field in ["resources", "bases"] {
            for (i, e) in strings(doc.get(field)) {
                match self.resource(dir, e) {
                    Entry::Remote => self.flag(&kpath, &doc, (field, i), remote(field, e)),
                    Entry::Dir(p) => self.visit(&p, &join(rel, e), None),
                    Entry::File(_) | Entry::Nothing => {}
                }
            }
        }
        // Files loaded: a URL is fetched, anything else is read from the tree.
        for field in ["crds", "configurations", "patchesStrategicMerge"] {
            for (i, e) in strings(doc.get(field)) {
                if is_remote_file(e) {
                    self.flag(&kpath, &doc, (field, i), remote(field, e));
                }
            }
        }
        if let Some(path) = doc
            .get("openapi")
            .and_then(|o| o.get("path"))
            .and_then(Value::as_str)
            .filter(|p| is_remote_file(p))
        {
            self.flag(&kpath, &doc, ("openapi", 0), remote("openapi.path", path));
        }
        for (field, label) in [
            ("configMapGenerator", "configMapGenerator[].files/envs"),
            ("secretGenerator", "secretGenerator[].files/envs"),
        ] {
            for (i, g) in entries(doc.get(field)) {
                if let Some(url) = generator_remote(g) {
                    self.flag(&kpath, &doc, (field, i), remote(label, &url));
                }
            }
        }
        for (field, label) in [
            ("patches", "patches[].path"),
            ("patchesJson6902", "patchesJson6902[].path"),
            ("replacements", "replacements[].path"),
        ] {
            for (i, e) in entries(doc.get(field)) {
                if let Some(path) = e
                    .get("path")
                    .and_then(Value::as_str)
                    .filter(|p| is_remote_file(p))
                {
                    self.flag(&kpath, &doc, (field, i), remote(label, path));
                }
            }
        }
        // Components: always a base.
        for (i, e) in strings(doc.get("components")) {
            if is_remote_base(e) {
                self.flag(&kpath, &doc, ("components", i), remote("components", e));
            } else {
                let p = clean(&dir.join(e));
                if self.fs.contains(&p) && self.fs.is_dir(&p) {
                    self.visit(&p, &join(rel, e), None);
                }
            }
        }
        // Plugin configurations: inline, or resources (a file, a base) of configurations.
        for field in ["generators", "transformers", "validators"] {
            for (i, e) in strings(doc.get(field)) {
                let found = if is_inline_config(e) {
                    plugin_remote(e).map(|url| (field, url))
                } else {
                    match self.resource(dir, e) {
                        Entry::Remote => Some((field, e.to_string())),
                        Entry::File(p) => self
                            .read(&p)
                            .and_then(|t| plugin_remote(&t))
                            .map(|url| (field, url)),
                        Entry::Dir(p) => {
                            self.visit(&p, &join(rel, e), None);
                            self.config_files(&p)
                                .iter()
                                .find_map(|f| self.read(f).and_then(|t| plugin_remote(&t)))
                                .map(|url| (field, url))
                        }
                        Entry::Nothing => None,
                    }
                };
                if let Some((field, url)) = found {
                    self.flag(&kpath, &doc, (field, i), remote(field, &url));
                }
            }
        }
    }

    /// The local files the kustomization of `dir` lists as resources (its folders' in turn):
    /// the plugin configurations a folder listed in `transformers` holds.
    fn config_files(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        let mut queue = vec![dir.to_path_buf()];
        while let Some(d) = queue.pop() {
            if !seen.insert(d.clone()) {
                continue;
            }
            let Some(text) = KUSTOMIZATION_FILES
                .iter()
                .find(|f| self.is_file(&d.join(f)))
                .and_then(|f| self.read(&d.join(f)))
            else {
                continue;
            };
            let Ok(doc) = crate::manifest::parse_shared(&text) else {
                continue;
            };
            for field in ["resources", "bases"] {
                for (_, e) in strings(doc.get(field)) {
                    match self.resource(&d, e) {
                        Entry::File(p) => out.push(p),
                        Entry::Dir(p) => queue.push(p),
                        Entry::Remote | Entry::Nothing => {}
                    }
                }
            }
        }
        out
    }
}

/// The first remote source of a `configMapGenerator` or `secretGenerator` entry: `files`
/// (`key=path` or `path`: `generators.ParseFileSource` splits at the first `=`), `envs` and
/// `env` (`FixKustomization` moves `env` into `envs`).
fn generator_remote(g: &Value) -> Option<String> {
    let list = |key: &str| -> Vec<&str> {
        match g.get(key) {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(s)) => vec![s.as_str()],
            _ => Vec::new(),
        }
    };
    let files = list("files")
        .into_iter()
        .map(|s| s.split_once('=').map_or(s, |(_, p)| p));
    files
        .chain(list("envs"))
        .chain(list("env"))
        .find(|p| is_remote_file(p))
        .map(str::to_string)
}

/// Whether a `generators`/`transformers`/`validators` entry is an inline configuration
/// (`NewResMapFromBytes` reads it as resources) rather than a path: some document of it is
/// a mapping.
fn is_inline_config(e: &str) -> bool {
    crate::manifest::split_documents(e)
        .into_iter()
        .any(|d| crate::manifest::parse_object(d).is_ok_and(|v| v.is_object()))
}

/// The first URL a builtin plugin configuration (each document of `text`) names in a file
/// field.
fn plugin_remote(text: &str) -> Option<String> {
    let mut found = None;
    plugin_references(text, &mut |r| {
        let r = r.split_once('=').map_or(r, |(_, p)| p);
        if found.is_none() && is_remote_file(r) {
            found = Some(r.to_string());
        }
    });
    found
}

/// The file fields of kustomize's built-in plugins (`PatchTransformer.path`,
/// `PatchStrategicMergeTransformer.paths`, a generator's `files`, `envs`, `env`,
/// `ReplacementTransformer.replacements[].path`, `HelmChartInflationGenerator.valuesFile`),
/// in each document of a plugin configuration.
pub(super) fn plugin_references(text: &str, take: &mut impl FnMut(&str)) {
    const FILE_FIELDS: &[&str] = &[
        "path",
        "paths",
        "files",
        "envs",
        "env",
        "valuesFile",
        "additionalValuesFiles",
    ];
    fn walk(v: &Value, take: &mut impl FnMut(&str)) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    if FILE_FIELDS.contains(&k.as_str()) {
                        match v {
                            Value::String(s) => take(s),
                            Value::Array(a) => {
                                a.iter().filter_map(Value::as_str).for_each(&mut *take);
                            }
                            _ => walk(v, take),
                        }
                    } else {
                        walk(v, take);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, take)),
            _ => {}
        }
    }
    for doc in crate::manifest::split_documents(text) {
        if let Ok(v) = crate::manifest::parse_object(doc) {
            walk(&v, take);
        }
    }
}

/// kustomize's `IsRemoteFile` (`fileloader.go`): Go's `url.Parse` gives the scheme `http` or
/// `https` (case does not matter; a text with a control character is no URL). `Load` fetches
/// such a file over HTTP.
#[must_use]
pub fn is_remote_file(s: &str) -> bool {
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    // url.go getScheme: a letter, then letters, digits, `+`, `-`, `.`, up to the first `:`.
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    valid && (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
}

/// kustomize's `git.NewRepoSpecFromURL` (`api/internal/git/repospec.go`) succeeds on `s`:
/// the loader clones it (`fileloader.go` `New`) instead of reading a folder. A `git::`
/// prefix is stripped; a scheme `ssh://`, `https://`, `http://`, `file://` (any case), or
/// none for an SCP-style `user@host:path` or GitHub's `github.com/org/repo`; then a repository
/// path split at `_git/`, `//` or `.git`, else (no marker) two segments (all of them for
/// `file://`), and a path inside it that does not climb out.
#[must_use]
pub fn is_remote_base(s: &str) -> bool {
    // filepath.IsAbs: "uri looks like abs path".
    if s.starts_with('/') {
        return false;
    }
    let n = s.split_once('?').map_or(s, |(n, _)| n);
    let n = trim_prefix_ignore_case(n, "git::").unwrap_or(n);
    let (scheme, n) = ["ssh://", "https://", "http://", "file://"]
        .iter()
        .find_map(|p| trim_prefix_ignore_case(n, p).map(|rest| (*p, rest)))
        .unwrap_or(("", n));
    // `^([a-zA-Z][a-zA-Z0-9-]*)@`
    let user_len = n
        .find('@')
        .filter(|&at| {
            let u = &n[..at];
            u.starts_with(|c: char| c.is_ascii_alphabetic())
                && u.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        .map_or(0, |at| at + 1);
    let (username, n) = n.split_at(user_len);
    let lower = n.to_ascii_lowercase();
    let github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    let accept_scp = scheme.is_empty() && (!username.is_empty() || github);
    if scheme.is_empty() && !accept_scp {
        return false;
    }
    let rest = if scheme == "file://" {
        format!("{username}{n}")
    } else {
        let slash = n.find('/');
        let sep = match (accept_scp, n.find(':')) {
            (true, Some(colon)) if colon > 0 && slash.is_none_or(|s| colon < s) => Some(colon),
            _ => slash,
        };
        let (host, rest) = match sep {
            Some(i) => (&n[..=i], &n[i + 1..]),
            None => (n, ""),
        };
        if host.is_empty() {
            return false;
        }
        rest.to_string()
    };
    let all_segments = scheme == "file://";
    repo_path_parts(&rest, all_segments)
}

/// `parsePathParts`: the repository path and the path inside it can be told apart, the
/// repository path is not empty and the inside path does not climb out.
fn repo_path_parts(n: &str, all_segments: bool) -> bool {
    let split = if let Some(i) = n.find("_git/") {
        let after = &n[i + "_git/".len()..];
        let (first, rest) = after.split_once('/').unwrap_or((after, ""));
        Some((
            format!("{}{first}", &n[..i + "_git/".len()]),
            rest.to_string(),
        ))
    } else if let Some(i) = n.find("//") {
        Some((n[..i].to_string(), n[i + 2..].to_string()))
    } else if let Some(i) = n.find(".git") {
        Some((n[..i + 4].to_string(), n[i + 4..].to_string()))
    } else if all_segments {
        Some((n.to_string(), String::new()))
    } else {
        let segments: Vec<&str> = n.split('/').collect();
        (segments.len() >= 2).then(|| (segments[..2].join("/"), segments[2..].join("/")))
    };
    let Some((repo, inside)) = split else {
        return false;
    };
    !repo.is_empty() && !climbs_out(inside.strip_prefix('/').unwrap_or(&inside))
}

/// `kustRootPathExitsRepo`: Go's `filepath.Clean` of the path starts with `..`.
fn climbs_out(path: &str) -> bool {
    if path.starts_with('/') {
        return false;
    }
    let mut depth = 0usize;
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

fn trim_prefix_ignore_case<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    (s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix))
    .then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{source_fs, tree};

    /// The remote entries of building `dir` of the folder `t` (field, url).
    fn remote_of(files: &[(&str, &str)], dir: &str) -> Vec<(&'static str, String)> {
        let t = tree(files);
        let fs = source_fs(t.path());
        fetches(&fs, &fs.root().join(dir), None, &BTreeMap::new())
            .remote
            .into_iter()
            .map(|e| (e.field, e.url))
            .collect()
    }

    const URL: &str = "https://example.com/org/x.yaml";

    // api/internal/loader/fileloader.go IsRemoteFile: url.Parse gives http or https.
    #[test]
    fn a_remote_file_is_an_http_or_https_url() {
        for yes in [
            URL,
            "HTTP://example.com/a",
            "https://raw.githubusercontent.com/o/r/v1/a.json",
        ] {
            assert!(is_remote_file(yes), "{yes}");
        }
        for no in [
            "x.yaml",
            "../base",
            "github.com/org/repo",
            "git@github.com:org/repo",
            "ssh://git@example.com/r.git",
            "https://example.com/\nx",
            "apiVersion: v1\nkind: ConfigMap",
            "/etc/passwd",
        ] {
            assert!(!is_remote_file(no), "{no}");
        }
    }

    // api/internal/git/repospec.go NewRepoSpecFromURL, cases of its repospec_test.go.
    #[test]
    fn a_remote_base_is_what_kustomize_clones() {
        for yes in [
            "https://github.com/x/y//z?ref=v1",
            "github.com/org/repo",
            "github.com/org/repo/path/to/base?ref=v1",
            "git@github.com:org/repo",
            "git::https://gitlab.com/org/repo.git//base",
            "ssh://git@example.internal/fleet.git",
            "https://dev.azure.com/org/project/_git/repo/path",
            "git::file:///another/checkout//app",
            "file:///srv/repo",
            "deploy@example.com:org/repo.git",
        ] {
            assert!(is_remote_base(yes), "{yes}");
        }
        for no in [
            "../base",
            "base",
            "tekton-operator",
            "./apps/github.com",
            "/abs/path",
            // One segment and no marker: not a repository (it is a remote file).
            "https://example.com/x.yaml",
            "https://github.com/org/repo//../../up",
            "git@host",
        ] {
            assert!(!is_remote_base(no), "{no}");
        }
    }

    #[test]
    fn a_remote_resource_base_and_component_need_the_network() {
        let k = format!(
            "resources:\n- {URL}\n- github.com/org/repo/base?ref=v1\nbases:\n- git@github.com:org/repo\ncomponents:\n- https://github.com/org/repo//comp?ref=v1\n"
        );
        assert_eq!(
            remote_of(&[("k/kustomization.yaml", &k)], "k"),
            vec![
                ("resources", URL.to_string()),
                ("resources", "github.com/org/repo/base?ref=v1".to_string()),
                ("bases", "git@github.com:org/repo".to_string()),
                (
                    "components",
                    "https://github.com/org/repo//comp?ref=v1".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_url_in_each_file_field_needs_the_network() {
        let cases: Vec<(&str, String, &str)> = vec![
            ("crds", format!("crds:\n- {URL}\n"), "crds"),
            (
                "configurations",
                format!("configurations:\n- {URL}\n"),
                "configurations",
            ),
            ("openapi", format!("openapi:\n  path: {URL}\n"), "openapi.path"),
            ("patches", format!("patches:\n- path: {URL}\n"), "patches[].path"),
            (
                "psm",
                format!("patchesStrategicMerge:\n- {URL}\n"),
                "patchesStrategicMerge",
            ),
            (
                "json6902",
                format!("patchesJson6902:\n- target: {{kind: X, name: y}}\n  path: {URL}\n"),
                "patchesJson6902[].path",
            ),
            (
                "replacements",
                format!("replacements:\n- path: {URL}\n"),
                "replacements[].path",
            ),
            (
                "cm-files",
                format!("configMapGenerator:\n- name: c\n  files:\n  - dash.json={URL}\n"),
                "configMapGenerator[].files/envs",
            ),
            (
                "cm-envs",
                format!("configMapGenerator:\n- name: c\n  envs:\n  - {URL}\n"),
                "configMapGenerator[].files/envs",
            ),
            (
                "secret-env",
                format!("secretGenerator:\n- name: s\n  env: {URL}\n"),
                "secretGenerator[].files/envs",
            ),
            (
                "transformer-url",
                format!("transformers:\n- {URL}\n"),
                "transformers",
            ),
            (
                "transformer-inline",
                format!(
                    "transformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {{name: p}}\n  path: {URL}\n"
                ),
                "transformers",
            ),
            (
                "generator-file",
                "generators:\n- gen.yaml\n".to_string(),
                "generators",
            ),
            (
                "validator-folder",
                "validators:\n- checks\n".to_string(),
                "validators",
            ),
        ];
        let gen = format!(
            "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {{name: g}}\nfiles: [k={URL}]\n"
        );
        let check = format!(
            "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata: {{name: r}}\nreplacements:\n- path: {URL}\n"
        );
        for (name, k, field) in &cases {
            let kfile = format!("{name}/kustomization.yaml");
            let gen_file = format!("{name}/gen.yaml");
            let checks = format!("{name}/checks/kustomization.yaml");
            let check_file = format!("{name}/checks/r.yaml");
            let files = [
                (kfile.as_str(), k.as_str()),
                (gen_file.as_str(), gen.as_str()),
                (checks.as_str(), "resources: [r.yaml]\n"),
                (check_file.as_str(), check.as_str()),
            ];
            let got = remote_of(&files, name);
            assert_eq!(got.len(), 1, "{name}: {got:?}");
            assert_eq!(got[0], (*field, URL.to_string()), "{name}");
        }
    }

    // The shape: `namespace: tekton-operator` beside a folder of that name, whose
    // kustomization lists a URL. kustomize never reads the folder: nothing is fetched.
    #[test]
    fn a_url_looking_or_folder_naming_string_in_another_field_fetches_nothing() {
        let k = format!(
            "namespace: tekton-operator\nnamePrefix: {URL}\ncommonAnnotations:\n  docs: {URL}\n  repo: github.com/org/repo\nlabels:\n- pairs: {{app: tekton-operator}}\nimages:\n- name: app\n  newName: ghcr.io/org/app\nresources: [cm.yaml]\n# resources: [{URL}]\n"
        );
        let files = [
            ("apps/kustomization.yaml", k.as_str()),
            ("apps/cm.yaml", "kind: ConfigMap\n"),
            (
                "apps/tekton-operator/kustomization.yaml",
                "resources:\n- https://github.com/tektoncd/operator/releases/download/v0.70.0/release.yaml\n",
            ),
        ];
        assert_eq!(remote_of(&files, "apps"), vec![]);
    }

    #[test]
    fn a_remote_entry_of_a_base_the_build_reads_needs_the_network() {
        let files = [
            ("app/kustomization.yaml", "resources: [../base, cm.yaml]\n"),
            ("app/cm.yaml", "kind: ConfigMap\n"),
            (
                "base/kustomization.yaml",
                "resources:\n- https://github.com/org/repo//deploy?ref=v1\n",
            ),
        ];
        assert_eq!(
            remote_of(&files, "app"),
            vec![(
                "resources",
                "https://github.com/org/repo//deploy?ref=v1".into()
            )]
        );
    }

    // accumulateResources loads an entry as a file first: a file of the tree whose name a
    // repository spec would take is read, not cloned.
    #[test]
    fn a_resource_file_of_the_tree_is_read_before_it_is_taken_for_a_base() {
        let files = [
            (
                "k/kustomization.yaml",
                "resources: [github.com/org/repo.yaml]\n",
            ),
            ("k/github.com/org/repo.yaml", "kind: ConfigMap\n"),
        ];
        assert_eq!(remote_of(&files, "k"), vec![]);
    }

    #[test]
    fn stripped_kustomizations_leave_out_each_remote_entry_whole() {
        let k = format!(
            "namespace: a\nresources:\n- cm.yaml\n- {URL}\n- ../base\npatches:\n- path: {URL}\n- patch: |-\n    kind: ConfigMap\n    metadata: {{name: c}}\nconfigMapGenerator:\n- name: dash\n  files: [d.json={URL}]\n- name: local\n  literals: [a=b]\nopenapi:\n  path: {URL}\n"
        );
        let t = tree(&[
            ("app/kustomization.yaml", &k),
            ("app/cm.yaml", "kind: ConfigMap\n"),
            (
                "base/kustomization.yaml",
                "resources:\n- github.com/org/repo\n- x.yaml\n",
            ),
            ("base/x.yaml", "kind: ConfigMap\n"),
        ]);
        let fs = source_fs(t.path());
        let f = fetches(&fs, &fs.root().join("app"), None, &BTreeMap::new());
        assert_eq!(f.remote.len(), 5, "{:?}", f.remote);
        let stripped = f.stripped();
        let read =
            |p: &str| -> Value { serde_json::from_str(&stripped[&fs.root().join(p)]).unwrap() };
        let app = read("app/kustomization.yaml");
        assert_eq!(app["namespace"], "a");
        assert_eq!(app["resources"], serde_json::json!(["cm.yaml", "../base"]));
        assert_eq!(app["patches"].as_array().unwrap().len(), 1);
        assert!(app["patches"][0]["patch"].is_string());
        assert_eq!(app["configMapGenerator"][0]["name"], "local");
        assert_eq!(app["openapi"], serde_json::json!({}));
        assert_eq!(
            read("base/kustomization.yaml")["resources"],
            serde_json::json!(["x.yaml"])
        );
        // Read again with the stripped files over the tree, nothing is fetched.
        let again = fetches(&fs, &fs.root().join("app"), None, &stripped);
        assert!(again.remote.is_empty(), "{:?}", again.remote);
    }
}
