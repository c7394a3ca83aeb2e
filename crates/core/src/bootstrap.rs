//! What a cluster's bootstrap puts there before Flux runs, read from the repository: the
//! releases of a helmfile (`helmfile*.yaml`, a file in a `helmfile/` or `helmfile.d/`
//! folder, a file with `releases:` in a `bootstrap/` folder: their charts, their namespaces,
//! which helmfile creates by default, and the files their hooks `kubectl apply`), the
//! manifests of a `bootstrap/` folder (CRDs, Namespaces, ConfigMaps, Secrets), what the
//! commands of Taskfiles, justfiles, Makefiles and shell scripts apply (`kubectl apply -f`,
//! `-k`, `kustomize build ... | kubectl apply`, `sops -d ... | kubectl apply`, `kubectl create
//! namespace|secret|configmap`, `helm install`, `helmfile -f`), Talos machine configs'
//! `inlineManifests`, and charts (`Chart.yaml`) in a `bootstrap/` folder.
//!
//! Flux never applies these (a step before `flux bootstrap` does), so what they give is a
//! presumption, said as one: the graph check counts it as present from the start
//! (FS216, info) instead of calling the cold start a deadlock, and the steady-state render
//! takes a `substituteFrom` source a bootstrap command makes (`kubectl create secret`) as one
//! whose values are unknown (placeholders) rather than one nothing makes. `[bootstrap] crd_groups` in
//! fluxsim.toml stays the exact declaration. Each piece of evidence names its file and how
//! it was read.
//!
//! Read with the limits of the repository's other reads: only the tree's files, each at most
//! [`MAX_BYTES`], at most [`MAX_FILES`] of them, and at most [`MAX_APPLIED`] files that
//! commands apply.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::SourceFs;

/// The most bytes read of one candidate file.
const MAX_BYTES: usize = 256 * 1024;
/// The most candidate files read.
const MAX_FILES: usize = 400;
/// The most files that bootstrap commands and hooks apply, read.
const MAX_APPLIED: usize = 400;

/// Something a bootstrap installs, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BootstrapSource {
    /// The file that says it, relative to the repository root, `/`-separated.
    pub file: String,
    /// What it installs.
    pub what: Installs,
    /// How it is installed, when another file than `file` is applied
    /// (`` applied by `Taskfile.yaml` (kubectl apply) ``); empty when `file` itself says it.
    pub via: String,
}

/// What a bootstrap file installs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Installs {
    /// A helmfile release or a `helm install`: its name, chart (as written; may be a
    /// template) and namespace.
    Release {
        /// The release's name.
        name: String,
        /// Its chart, as written.
        chart: String,
        /// Its namespace, which helmfile creates (`createNamespace` defaults to true).
        namespace: Option<String>,
    },
    /// CustomResourceDefinitions of these groups.
    Crds {
        /// The API groups.
        groups: BTreeSet<String>,
    },
    /// A Helm chart (`Chart.yaml`): its name.
    Chart {
        /// The chart's name.
        name: String,
    },
    /// Namespaces.
    Namespaces {
        /// Their names.
        names: BTreeSet<String>,
    },
    /// ConfigMaps and Secrets: (kind, namespace, name); the namespace is empty when the
    /// file does not say it.
    Objects {
        /// Their ids.
        ids: BTreeSet<(String, String, String)>,
    },
}

/// Everything the repository shows of its bootstrap.
#[derive(Debug, Clone, Default)]
pub struct BootstrapEvidence {
    /// What was read, sorted.
    pub sources: Vec<BootstrapSource>,
}

/// Whether `path` (relative) is in a folder named `bootstrap`.
fn in_bootstrap(path: &Path) -> bool {
    path.parent()
        .is_some_and(|p| p.components().any(|c| c.as_os_str() == "bootstrap"))
}

/// Whether `path` may be a helmfile.
fn helmfile_like(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let yaml = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["yaml", "yml", "gotmpl"].contains(&e.to_ascii_lowercase().as_str()));
    let in_helmfile_dir = path.parent().is_some_and(|p| {
        p.components()
            .any(|c| c.as_os_str() == "helmfile" || c.as_os_str() == "helmfile.d")
    });
    yaml && (name.starts_with("helmfile") || in_helmfile_dir || in_bootstrap(path))
}

/// Whether `path` holds commands a person runs to bootstrap: a Taskfile (or a file of a
/// `.taskfiles/` folder), a justfile, a Makefile, a shell script.
fn command_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let lower = name.to_ascii_lowercase();
    let in_taskfiles = path
        .parent()
        .is_some_and(|p| p.components().any(|c| c.as_os_str() == ".taskfiles"));
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    lower.starts_with("taskfile")
        || (in_taskfiles && is_yaml(path))
        || lower == "justfile"
        || lower == ".justfile"
        || lower == "makefile"
        || matches!(ext.as_deref(), Some("just" | "mk" | "sh"))
}

fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

fn rel_string(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The bootstrap sources of a tree whose files are `files` (relative paths).
#[must_use]
pub fn sources(fs: &SourceFs, files: &[PathBuf]) -> Vec<BootstrapSource> {
    BootstrapEvidence::read(fs, files).sources
}

impl BootstrapEvidence {
    /// Reads the bootstrap evidence of the tree `fs` whose files are `files`.
    #[must_use]
    pub fn read(fs: &SourceFs, files: &[PathBuf]) -> BootstrapEvidence {
        let mut reader = Reader {
            fs,
            files,
            out: BTreeSet::new(),
            applied: 0,
        };
        let candidates = files
            .iter()
            .filter(|f| {
                helmfile_like(f)
                    || (in_bootstrap(f) && (is_yaml(f) || f.ends_with("Chart.yaml")))
                    || command_file(f)
                    || talos_like(f)
            })
            .take(MAX_FILES);
        for rel in candidates {
            let Some(text) = read_text(fs, rel) else {
                continue;
            };
            let file = rel_string(rel);
            if command_file(rel) {
                reader.commands(rel, &file, &text);
                continue;
            }
            if rel.file_name().is_some_and(|n| n == "Chart.yaml") {
                if let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(&text) {
                    if let Some(name) = v.get("name").and_then(Value::as_str) {
                        reader.put(&file, Installs::Chart { name: name.into() }, "");
                    }
                }
                continue;
            }
            let helmfile = helmfile_like(rel);
            let manifests = in_bootstrap(rel);
            for doc in crate::goyaml::stream::split_documents(&text) {
                // A helmfile or a Talos config may be a template: a document that is not
                // YAML is passed over.
                let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(doc) else {
                    continue;
                };
                if helmfile {
                    reader.helmfile(rel, &file, &v);
                }
                if manifests {
                    reader.objects_of(&file, &v, "");
                }
                reader.talos(&file, &v);
            }
        }
        BootstrapEvidence {
            sources: reader.out.into_iter().collect(),
        }
    }

    /// Whether the bootstrap presumably installs the CRDs of `group`: a manifest defines
    /// them, or a release or chart matches the group by name (the graph check's ranking) or
    /// is known to carry them ([`KNOWN_CHART_GROUPS`]); the phrase that says why.
    #[must_use]
    pub fn crd_group(&self, group: &str) -> Option<String> {
        hints_for(group, &self.sources).into_iter().next()
    }

    /// Whether the bootstrap creates Namespace `ns`: a manifest or a command does, or a
    /// helmfile release lives in it (helmfile creates a release's namespace unless told
    /// not to).
    #[must_use]
    pub fn namespace(&self, ns: &str) -> Option<String> {
        self.sources.iter().find_map(|s| {
            let found = match &s.what {
                Installs::Namespaces { names } => names.contains(ns),
                Installs::Release {
                    namespace: Some(n), ..
                } => n == ns,
                _ => false,
            };
            found.then(|| match &s.what {
                Installs::Release { name, .. } => {
                    format!(
                        "`{}` installs release `{name}` in it{}",
                        s.file,
                        s.via_tail()
                    )
                }
                _ => format!("`{}` creates it{}", s.file, s.via_tail()),
            })
        })
    }

    /// Whether the bootstrap applies the ConfigMap or Secret `kind` `namespace/name` (a file
    /// that does not say its namespace counts for any).
    #[must_use]
    pub fn object(&self, kind: &str, namespace: &str, name: &str) -> Option<String> {
        self.sources.iter().find_map(|s| match &s.what {
            Installs::Objects { ids } => ids
                .iter()
                .any(|(k, ns, n)| k == kind && n == name && (ns.is_empty() || ns == namespace))
                .then(|| format!("`{}` defines it{}", s.file, s.via_tail())),
            _ => None,
        })
    }

    /// Whether the repository shows any bootstrap release or chart (what a CRD with no
    /// other candidate may come from).
    #[must_use]
    pub fn has_releases(&self) -> bool {
        self.sources
            .iter()
            .any(|s| matches!(s.what, Installs::Release { .. } | Installs::Chart { .. }))
    }
}

impl BootstrapSource {
    fn via_tail(&self) -> String {
        if self.via.is_empty() {
            String::new()
        } else {
            format!(", {}", self.via)
        }
    }
}

fn read_text(fs: &SourceFs, rel: &Path) -> Option<String> {
    let bytes = fs.read(&fs.root().join(rel)).ok()?;
    (bytes.len() <= MAX_BYTES).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether `path` may be a Talos machine config (or a talhelper patch): a YAML or template
/// file under a `talos` folder, or `talconfig.yaml`.
fn talos_like(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_talos = path
        .parent()
        .is_some_and(|p| p.components().any(|c| c.as_os_str() == "talos"));
    name == "talconfig.yaml" || (in_talos && is_yaml(path))
}

struct Reader<'a> {
    fs: &'a SourceFs,
    files: &'a [PathBuf],
    out: BTreeSet<BootstrapSource>,
    applied: usize,
}

impl Reader<'_> {
    fn put(&mut self, file: &str, what: Installs, via: &str) {
        let empty = match &what {
            Installs::Crds { groups } => groups.is_empty(),
            Installs::Namespaces { names } => names.is_empty(),
            Installs::Objects { ids } => ids.is_empty(),
            _ => false,
        };
        if !empty {
            self.out.insert(BootstrapSource {
                file: file.to_string(),
                what,
                via: via.to_string(),
            });
        }
    }

    /// The CRDs, Namespaces, ConfigMaps and Secrets of one manifest document of `file`.
    fn objects_of(&mut self, file: &str, v: &Value, via: &str) {
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let name = v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ns = v
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match kind {
            "CustomResourceDefinition" if api.starts_with("apiextensions.k8s.io/") => {
                if let Some(g) = v.pointer("/spec/group").and_then(Value::as_str) {
                    let groups = [g.to_string()].into();
                    self.put(file, Installs::Crds { groups }, via);
                }
            }
            "Namespace" if api == "v1" && !name.is_empty() => {
                self.put(
                    file,
                    Installs::Namespaces {
                        names: [name].into(),
                    },
                    via,
                );
            }
            "ConfigMap" | "Secret" if api == "v1" && !name.is_empty() => {
                let ids = [(kind.to_string(), ns, name)].into();
                self.put(file, Installs::Objects { ids }, via);
            }
            "List" => {
                for item in v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.objects_of(file, item, via);
                }
            }
            _ => {}
        }
    }

    /// A helmfile's releases (their namespaces, which helmfile creates) and the files their
    /// hooks apply.
    fn helmfile(&mut self, rel: &Path, file: &str, v: &Value) {
        // helmfile's `helmDefaults.createNamespace` is true unless set false.
        let creates = v
            .pointer("/helmDefaults/createNamespace")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        for r in v
            .get("releases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = r.get("name").and_then(Value::as_str) else {
                continue;
            };
            // A release named `_default` is a template for the others (helmfile's
            // `defaultInherit`), not a release.
            if name.starts_with('_') {
                continue;
            }
            let namespace = r.get("namespace").and_then(Value::as_str);
            let creates = r
                .get("createNamespace")
                .and_then(Value::as_bool)
                .unwrap_or(creates);
            self.put(
                file,
                Installs::Release {
                    name: name.to_string(),
                    chart: r.get("chart").and_then(Value::as_str).unwrap_or("").into(),
                    namespace: namespace.filter(|_| creates).map(str::to_string),
                },
                "",
            );
            for hook in r
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let command = hook.get("command").and_then(Value::as_str).unwrap_or("");
                if !command.ends_with("kubectl") {
                    continue;
                }
                let args: Vec<String> = hook
                    .get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|a| {
                        a.replace("{{ .Release.Namespace }}", namespace.unwrap_or(""))
                            .replace("{{ .Release.Name }}", name)
                    })
                    .collect();
                let line = format!("kubectl {}", args.join(" "));
                let via = format!("applied by a hook of release `{name}` in `{file}`");
                self.command_line(rel, &line, &via);
            }
        }
    }

    /// A Talos machine config's `cluster.inlineManifests`: manifests Talos applies when the
    /// cluster boots.
    fn talos(&mut self, file: &str, v: &Value) {
        let lists = [
            v.pointer("/cluster/inlineManifests"),
            v.pointer("/inlineManifests"),
        ];
        for list in lists.into_iter().flatten() {
            for m in list.as_array().into_iter().flatten() {
                let Some(contents) = m.get("contents").and_then(Value::as_str) else {
                    continue;
                };
                let via = "a Talos inline manifest";
                for doc in crate::goyaml::stream::split_documents(contents) {
                    if let Ok(obj) = crate::goyaml::yaml_json::yaml_to_value(doc) {
                        self.objects_of(file, &obj, via);
                    }
                }
            }
        }
    }

    /// The bootstrap commands of a Taskfile, justfile, Makefile or shell script, line by line.
    fn commands(&mut self, rel: &Path, file: &str, text: &str) {
        for line in text.lines() {
            let via = format!("applied by `{file}`");
            self.command_line(rel, line, &via);
        }
    }

    /// What one command line installs (see the module's list).
    fn command_line(&mut self, rel: &Path, line: &str, via: &str) {
        let words = split_words(line);
        let namespace = flag_values(&words, &["-n", "--namespace"])
            .into_iter()
            .next();
        let verbs = kubectl_verbs(&words);
        if verbs
            .iter()
            .any(|&i| words[i] == "apply" || words[i] == "create")
        {
            self.kubectl_applies(rel, &words, via);
        }
        let file = rel_string(rel);
        for &i in verbs.iter().filter(|&&i| words[i] == "create") {
            self.kubectl_creates(&file, &words, i, namespace.as_deref());
        }
        self.helm_installs(&file, &words, namespace.as_deref());
        // `helmfile -f FILE ...`: the helmfile is read wherever it lies.
        if words.iter().any(|w| w.ends_with("helmfile")) {
            for p in flag_values(&words, &["-f", "--file"]) {
                for target in self.resolve(rel, &p) {
                    if let Some(text) = read_text(self.fs, &target) {
                        let file = rel_string(&target);
                        for doc in crate::goyaml::stream::split_documents(&text) {
                            if let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(doc) {
                                self.helmfile(&target, &file, &v);
                            }
                        }
                    }
                }
            }
        }
    }

    /// `kubectl apply -f|-k PATH`, `sops -d FILE | kubectl apply -f -`, `kustomize build DIR |
    /// kubectl apply -f -`: the objects of what is applied.
    fn kubectl_applies(&mut self, rel: &Path, words: &[String], via: &str) {
        for p in flag_values(words, &["-f", "--filename", "-k", "--kustomize"]) {
            if p != "-" {
                self.applied_path(rel, &p, via);
            }
        }
        for (i, w) in words.iter().enumerate() {
            let next = words.get(i + 1).map(String::as_str);
            if w.ends_with("sops") {
                let file = words[i + 1..]
                    .iter()
                    .find(|x| !x.starts_with('-') && x.as_str() != "|");
                if let Some(f) = file {
                    self.applied_path(rel, f, via);
                }
            } else if (w.ends_with("kustomize") && next == Some("build"))
                || (w.ends_with("kubectl") && next == Some("kustomize"))
            {
                if let Some(d) = words.get(i + 2).filter(|d| !d.starts_with('-')) {
                    self.applied_path(rel, d, via);
                }
            }
        }
    }

    /// `kubectl create namespace NAME`, `kubectl create secret TYPE NAME`, `kubectl create
    /// configmap NAME` (the verb at `i`).
    fn kubectl_creates(&mut self, file: &str, words: &[String], i: usize, ns: Option<&str>) {
        let what = words.get(i + 1).map(String::as_str);
        let names: Vec<&String> = words[(i + 2).min(words.len())..]
            .iter()
            .take_while(|x| !matches!(x.as_str(), "|" | "&&" | ";"))
            .filter(|x| !x.starts_with('-'))
            .collect();
        let ns = ns.unwrap_or_default().to_string();
        let (what, name) = match what {
            Some("namespace" | "ns") => ("Namespace", names.first()),
            Some("secret") => ("Secret", names.get(1)),
            Some("configmap" | "cm") => ("ConfigMap", names.first()),
            _ => return,
        };
        let Some(name) = name else { return };
        let installs = if what == "Namespace" {
            Installs::Namespaces {
                names: [(*name).clone()].into(),
            }
        } else {
            Installs::Objects {
                ids: [(what.to_string(), ns, (*name).clone())].into(),
            }
        };
        self.put(file, installs, "");
    }

    /// `helm install NAME CHART`, `helm upgrade --install NAME CHART`.
    fn helm_installs(&mut self, file: &str, words: &[String], ns: Option<&str>) {
        let has = |w: &str| words.iter().any(|x| x == w);
        for (i, w) in words.iter().enumerate() {
            let sub = words.get(i + 1).map(String::as_str);
            let installs = sub == Some("install")
                || (sub == Some("upgrade") && (has("--install") || has("-i")));
            if !w.ends_with("helm") || !installs {
                continue;
            }
            let mut positional = Vec::new();
            let mut skip = false;
            for x in words[i + 2..]
                .iter()
                .take_while(|x| !matches!(x.as_str(), "|" | "&&" | ";"))
            {
                if skip {
                    skip = false;
                } else if x.starts_with('-') {
                    // Flags that take a value in the next word.
                    skip = !x.contains('=')
                        && matches!(
                            x.as_str(),
                            "-n" | "--namespace"
                                | "--version"
                                | "-f"
                                | "--values"
                                | "--set"
                                | "--repo"
                        );
                } else {
                    positional.push(x.as_str());
                }
            }
            if let [name, chart, ..] = positional.as_slice() {
                let namespace = ns.filter(|_| has("--create-namespace")).map(str::to_string);
                self.put(
                    file,
                    Installs::Release {
                        name: (*name).to_string(),
                        chart: (*chart).to_string(),
                        namespace,
                    },
                    "",
                );
            }
        }
    }

    /// The objects of a file or folder a bootstrap command applies (written `p` in `rel`).
    fn applied_path(&mut self, rel: &Path, p: &str, via: &str) {
        for target in self.resolve(rel, p) {
            if self.applied >= MAX_APPLIED {
                return;
            }
            self.applied += 1;
            let Some(text) = read_text(self.fs, &target) else {
                continue;
            };
            let file = rel_string(&target);
            for doc in crate::goyaml::stream::split_documents(&text) {
                if let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(doc) {
                    self.objects_of(&file, &v, via);
                }
            }
        }
    }

    /// The files of the tree a path written in `rel` names: relative to `rel`'s folder, else
    /// to the root, else (a path led by a variable or template: `{{.ROOT_DIR}}/x`,
    /// `$KUBE_DIR/x`) the files whose path ends with what follows it, when that is one file
    /// or folder. A folder stands for its YAML files (below it, at most [`MAX_APPLIED`]).
    fn resolve(&self, rel: &Path, p: &str) -> Vec<PathBuf> {
        let p = p.trim_matches(['"', '\'']);
        // What follows the last template or variable.
        let tail = match (p.rfind("}}"), p.rfind('}'), p.rfind('$')) {
            (Some(i), _, _) => &p[i + 2..],
            (None, Some(i), _) => &p[i + 1..],
            (None, None, Some(i)) => p[i..].find('/').map_or("", |j| &p[i + j..]),
            _ => p,
        };
        let templated = tail.len() != p.len();
        let tail = tail.trim_start_matches('/');
        let clean = |s: &str| -> Option<PathBuf> {
            let mut out = PathBuf::new();
            for c in Path::new(s).components() {
                match c {
                    std::path::Component::Normal(x) => out.push(x),
                    std::path::Component::ParentDir => {
                        if !out.pop() {
                            return None;
                        }
                    }
                    std::path::Component::CurDir => {}
                    _ => return None,
                }
            }
            Some(out)
        };
        let here = rel.parent().unwrap_or(Path::new(""));
        let mut bases: Vec<PathBuf> = Vec::new();
        if !templated {
            if let Some(b) = clean(&here.join(tail).to_string_lossy()) {
                bases.push(b);
            }
        }
        if let Some(b) = clean(tail) {
            bases.push(b);
        }
        for base in &bases {
            let found = self.under(base);
            if !found.is_empty() {
                return found;
            }
        }
        if templated && !tail.is_empty() {
            // The one file or folder whose path ends with the tail.
            let suffix = format!("/{tail}");
            let mut roots: BTreeSet<PathBuf> = BTreeSet::new();
            for f in self.files {
                let s = format!("/{}", rel_string(f));
                if s.ends_with(&suffix) {
                    roots.insert(f.clone());
                } else if let Some(at) = s.find(&format!("{suffix}/")) {
                    roots.insert(PathBuf::from(&s[1..at + suffix.len()]));
                }
            }
            if roots.len() == 1 {
                return roots.into_iter().flat_map(|r| self.under(&r)).collect();
            }
        }
        Vec::new()
    }

    /// `base` when it is a file of the tree, else the YAML files below it.
    fn under(&self, base: &Path) -> Vec<PathBuf> {
        if self.files.iter().any(|f| f == base) {
            return vec![base.to_path_buf()];
        }
        self.files
            .iter()
            .filter(|f| f.starts_with(base) && f.as_path() != base && is_yaml(f))
            .take(MAX_APPLIED)
            .cloned()
            .collect()
    }
}

/// The values given to any of `flags` in `words` (`-f x`, `--filename=x`).
fn flag_values(words: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for f in flags {
            if w == f {
                if let Some(v) = words.get(i + 1) {
                    out.push(v.clone());
                }
            } else if let Some(v) = w.strip_prefix(&format!("{f}=")) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// The index of each `kubectl` command's verb in `words` (`kubectl -n ns create ...`: the
/// flags before the verb, and the values of those that take one, skipped).
fn kubectl_verbs(words: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for (k, w) in words.iter().enumerate() {
        if !w.ends_with("kubectl") {
            continue;
        }
        let mut i = k + 1;
        while let Some(x) = words.get(i) {
            if matches!(
                x.as_str(),
                "-n" | "--namespace" | "--context" | "--kubeconfig"
            ) {
                i += 2;
            } else if x.starts_with('-') {
                i += 1;
            } else {
                out.push(i);
                break;
            }
        }
    }
    out
}

/// A command line's words, as a shell splits them (quotes removed; `|`, `&&`, `;` words of
/// their own).
fn split_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let flush = |w: &mut String, out: &mut Vec<String>| {
        if !w.is_empty() {
            out.push(std::mem::take(w));
        }
    };
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => flush(&mut word, &mut out),
            (None, '|' | ';') => {
                flush(&mut word, &mut out);
                out.push(c.to_string());
            }
            (_, c) => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// How many name parts of `group` one of `names` shares: equal parts, one part the prefix of
/// the other (at least 4 characters: `dragonfly` and `dragonflydb.io`), or a part equal to a
/// whole name without its dashes (`external-dns` and `externaldns.k8s.io`).
#[must_use]
pub fn name_score(group: &str, names: &[&str]) -> usize {
    let parts = |s: &str| -> Vec<String> {
        s.split(['.', '-', '_'])
            .filter(|p| p.len() > 1 && !GENERIC_NAME_PARTS.contains(p))
            .map(str::to_string)
            .collect()
    };
    let mut mine: Vec<String> = names.iter().flat_map(|n| parts(n)).collect();
    mine.extend(names.iter().map(|n| n.replace(['-', '_'], "")));
    let close = |a: &str, b: &str| {
        a == b || (a.len().min(b.len()) >= 4 && (a.starts_with(b) || b.starts_with(a)))
    };
    let mut g = parts(group);
    g.dedup();
    g.iter()
        .filter(|gp| mine.iter().any(|m| close(gp, m)))
        .count()
}

/// Name parts too common to rank a chart by.
const GENERIC_NAME_PARTS: &[&str] = &["io", "com", "org", "net", "dev", "k8s", "sh", "x"];

/// Charts whose names do not say the API groups of the CRDs they carry, with those groups:
/// the Prometheus Operator's CRDs (`monitoring.coreos.com`) ship in prometheus-community's
/// `kube-prometheus-stack` and `prometheus-operator-crds` charts (their `crds/` folders),
/// the Gateway API's in the `gateway-api` CRD charts.
pub const KNOWN_CHART_GROUPS: &[(&str, &[&str])] = &[
    ("kube-prometheus-stack", &["monitoring.coreos.com"]),
    ("prometheus-operator-crds", &["monitoring.coreos.com"]),
    ("gateway-api-crds", &["gateway.networking.k8s.io"]),
];

/// The hints for `group`: the files that define its CRDs, then the releases and charts known
/// to carry them or whose names match it, best first; each a phrase (`` `bootstrap/helmfile/
/// apps.yaml` installs release `external-secrets` ``).
#[must_use]
pub fn hints_for(group: &str, sources: &[BootstrapSource]) -> Vec<String> {
    let mut defines = Vec::new();
    let mut named: Vec<(usize, String)> = Vec::new();
    let known = |names: &[&str]| {
        KNOWN_CHART_GROUPS
            .iter()
            .any(|(c, groups)| names.contains(c) && groups.contains(&group))
    };
    for s in sources {
        match &s.what {
            Installs::Crds { groups } if groups.contains(group) => defines.push(format!(
                "`{}` defines CRDs of `{group}`{}",
                s.file,
                if s.via.is_empty() {
                    " (no Kustomization applies it)".to_string()
                } else {
                    s.via_tail()
                }
            )),
            Installs::Release { name, chart, .. } => {
                let chart_name = chart.rsplit('/').next().unwrap_or(chart);
                let score = if known(&[name, chart_name]) {
                    usize::MAX
                } else {
                    name_score(group, &[name, chart_name])
                };
                if score > 0 {
                    named.push((score, format!("`{}` installs release `{name}`", s.file)));
                }
            }
            Installs::Chart { name } => {
                let score = if known(&[name]) {
                    usize::MAX
                } else {
                    name_score(group, &[name])
                };
                if score > 0 {
                    named.push((score, format!("`{}` is chart `{name}`", s.file)));
                }
            }
            _ => {}
        }
    }
    named.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    named.dedup_by(|a, b| a.1 == b.1);
    defines
        .into_iter()
        .chain(named.into_iter().map(|(_, h)| h))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SourceFs, Vec<PathBuf>) {
        let t = tempfile::tempdir().expect("a temporary folder");
        for (path, text) in files {
            let p = t.path().join(path);
            std::fs::create_dir_all(p.parent().expect("a relative path")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let tree = crate::source::in_place(
            t.path(),
            &crate::source::SourceOptions {
                include_untracked: true,
                spec_ignore: None,
            },
        )
        .expect("a tree");
        let fs = tree.fs().clone();
        let files = tree.files().to_vec();
        (t, fs, files)
    }

    #[test]
    fn helmfile_releases_their_namespaces_and_bootstrap_crds_are_read() {
        let helmfile = "helmDefaults:\n  wait: true\n---\nreleases:\n  - name: _default\n    chart: x\n  - name: external-secrets\n    namespace: security\n    chart: oci://ghcr.io/external-secrets/charts/external-secrets\n";
        let crds = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: cilium.io\n";
        let (_t, fs, files) = tree(&[
            ("bootstrap/helmfile/apps.yaml", helmfile),
            ("bootstrap/crds/cilium.yaml", crds),
            ("apps/x.yaml", helmfile),
        ]);
        let e = BootstrapEvidence::read(&fs, &files);
        assert_eq!(
            e.crd_group("external-secrets.io").as_deref(),
            Some("`bootstrap/helmfile/apps.yaml` installs release `external-secrets`")
        );
        assert_eq!(
            e.crd_group("cilium.io").as_deref(),
            Some("`bootstrap/crds/cilium.yaml` defines CRDs of `cilium.io` (no Kustomization applies it)")
        );
        // helmfile's createNamespace defaults to true.
        assert!(e.namespace("security").is_some());
        // Outside bootstrap/ and helmfile folders, a file with releases is not a helmfile.
        assert!(!e.sources.iter().any(|s| s.file == "apps/x.yaml"));
        assert!(e.crd_group("example.com").is_none());
    }

    #[test]
    fn a_helmfile_hook_applies_a_file_and_a_taskfile_applies_vars_and_namespaces() {
        let helmfile = "releases:\n  - name: onepassword\n    namespace: external-secrets\n    hooks:\n      - command: kubectl\n        args: [apply, --server-side, '--filename=../../kubernetes/apps/{{ .Release.Namespace }}/{{ .Release.Name }}/store.yaml']\n";
        let store = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: stores.example.io\n";
        let taskfile = "tasks:\n  bootstrap:\n    cmds:\n      - kubectl create namespace flux-extra\n      - sops --decrypt {{.ROOT_DIR}}/kubernetes/flux/vars/cluster-secrets.sops.yaml | kubectl apply -f -\n      - kubectl apply --server-side --filename {{.KUBERNETES_DIR}}/flux/vars/cluster-settings.yaml\n      - kubectl -n flux-system create secret generic sops-age --from-file=age.agekey=/dev/stdin\n";
        let settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  A: b\n";
        let secrets = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nsops:\n  version: 3\n";
        let (_t, fs, files) = tree(&[
            ("bootstrap/helmfile/apps.yaml", helmfile),
            (
                "kubernetes/apps/external-secrets/onepassword/store.yaml",
                store,
            ),
            ("Taskfile.yaml", taskfile),
            ("kubernetes/flux/vars/cluster-settings.yaml", settings),
            ("kubernetes/flux/vars/cluster-secrets.sops.yaml", secrets),
        ]);
        let e = BootstrapEvidence::read(&fs, &files);
        assert!(
            e.crd_group("stores.example.io")
                .is_some_and(|h| h.contains("hook of release `onepassword`")),
            "{:#?}",
            e.sources
        );
        assert!(e.namespace("flux-extra").is_some());
        let settings = e.object("ConfigMap", "flux-system", "cluster-settings");
        assert_eq!(
            settings.as_deref(),
            Some("`kubernetes/flux/vars/cluster-settings.yaml` defines it, applied by `Taskfile.yaml`")
        );
        assert!(e
            .object("Secret", "flux-system", "cluster-secrets")
            .is_some());
        assert!(e.object("Secret", "flux-system", "sops-age").is_some());
        assert!(e.object("ConfigMap", "flux-system", "other").is_none());
    }

    #[test]
    fn talos_inline_manifests_are_applied_at_boot() {
        let talos = "cluster:\n  inlineManifests:\n    - name: namespaces\n      contents: |\n        apiVersion: v1\n        kind: Namespace\n        metadata:\n          name: network\n";
        let (_t, fs, files) = tree(&[("talos/patches/controlplane.yaml", talos)]);
        let e = BootstrapEvidence::read(&fs, &files);
        assert!(
            e.namespace("network")
                .is_some_and(|h| h.contains("Talos inline manifest")),
            "{:#?}",
            e.sources
        );
    }

    #[test]
    fn hints_name_what_defines_the_group_then_what_matches_it_by_name() {
        let s = |file: &str, what: Installs| BootstrapSource {
            file: file.into(),
            what,
            via: String::new(),
        };
        let release = |name: &str| Installs::Release {
            name: name.into(),
            chart: String::new(),
            namespace: None,
        };
        let sources = [
            s("bootstrap/helmfile/apps.yaml", release("cilium")),
            s("bootstrap/helmfile/apps.yaml", release("external-secrets")),
            s(
                "bootstrap/helmfile/crds.yaml",
                release("kube-prometheus-stack"),
            ),
            s(
                "bootstrap/crds.yaml",
                Installs::Crds {
                    groups: ["external-secrets.io".to_string()].into(),
                },
            ),
        ];
        assert_eq!(
            hints_for("external-secrets.io", &sources),
            [
                "`bootstrap/crds.yaml` defines CRDs of `external-secrets.io` (no Kustomization applies it)",
                "`bootstrap/helmfile/apps.yaml` installs release `external-secrets`",
            ]
        );
        assert_eq!(
            hints_for("monitoring.coreos.com", &sources),
            ["`bootstrap/helmfile/crds.yaml` installs release `kube-prometheus-stack`"]
        );
        assert!(hints_for("example.com", &sources).is_empty());
    }

    #[test]
    fn command_lines_split_as_a_shell_splits_them() {
        assert_eq!(
            split_words("sops -d 'a b.yaml'|kubectl apply -f -"),
            ["sops", "-d", "a b.yaml", "|", "kubectl", "apply", "-f", "-"]
        );
    }
}
