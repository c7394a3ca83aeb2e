//! One pass over the bootstrap's files: each helmfile, manifest folder, command file and
//! Talos config read for what it puts on the cluster.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::words::{flag_values, kubectl_verbs, split_words};
use super::{is_yaml, read_text, rel_string, BootstrapSource, Installs, MAX_APPLIED};
use crate::source::SourceFs;

pub(super) struct Reader<'a> {
    pub(super) fs: &'a SourceFs,
    pub(super) files: &'a [PathBuf],
    pub(super) out: BTreeSet<BootstrapSource>,
    pub(super) applied: usize,
}

impl Reader<'_> {
    pub(super) fn put(&mut self, file: &str, what: Installs, via: &str) {
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
    pub(super) fn objects_of(&mut self, file: &str, v: &Value, via: &str) {
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
    pub(super) fn helmfile(&mut self, rel: &Path, file: &str, v: &Value) {
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
    pub(super) fn talos(&mut self, file: &str, v: &Value) {
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
    pub(super) fn commands(&mut self, rel: &Path, file: &str, text: &str) {
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
