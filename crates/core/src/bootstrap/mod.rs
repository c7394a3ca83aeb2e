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

mod hints;
mod reader;
mod words;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::SourceFs;
pub use hints::{hints_for, name_score, KNOWN_CHART_GROUPS};
use reader::Reader;

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
}
