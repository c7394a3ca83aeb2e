//! What a cluster's bootstrap may install before Flux runs, read from the repository as
//! hints for a CRD group that no manifest defines: the releases of a helmfile (`helmfile*.yaml`,
//! a file in a `helmfile/` or `helmfile.d/` folder, a file with `releases:` in a `bootstrap/`
//! folder), CRD manifests and charts in a `bootstrap/` folder. Flux never applies these (a
//! step before `flux bootstrap` does), so nothing here makes a CRD exist: only
//! `[bootstrap] crd_groups` in fluxsim.toml does. A hint names the file, and what in it
//! matches the group by name (the same ranking as for Helm charts) or defines it.
//!
//! Read with the limits of the repository's other reads: only the tree's files, each at most
//! [`MAX_BYTES`], at most [`MAX_FILES`] of them.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::source::SourceFs;

/// The most bytes read of one candidate file.
const MAX_BYTES: usize = 256 * 1024;
/// The most candidate files read.
const MAX_FILES: usize = 200;

/// Something a bootstrap installs, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BootstrapSource {
    /// The file, relative to the repository root, `/`-separated.
    pub file: String,
    /// What it installs.
    pub what: Installs,
}

/// What a bootstrap file installs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Installs {
    /// A helmfile release: its name and chart (as written; may be a template).
    Release { name: String, chart: String },
    /// CustomResourceDefinitions of these groups.
    Crds { groups: BTreeSet<String> },
    /// A Helm chart (`Chart.yaml`): its name.
    Chart { name: String },
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

/// The bootstrap sources of a tree whose files are `files` (relative paths).
#[must_use]
pub fn sources(fs: &SourceFs, files: &[std::path::PathBuf]) -> Vec<BootstrapSource> {
    let mut out = BTreeSet::new();
    let candidates = files
        .iter()
        .filter(|f| helmfile_like(f) || (in_bootstrap(f) && is_yaml(f)))
        .take(MAX_FILES);
    for rel in candidates {
        let Ok(bytes) = fs.read(&fs.root().join(rel)) else {
            continue;
        };
        if bytes.len() > MAX_BYTES {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let file = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        for what in installs(rel, &text) {
            out.insert(BootstrapSource {
                file: file.clone(),
                what,
            });
        }
    }
    out.into_iter().collect()
}

fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// What one file installs: helmfile releases, CRDs, a chart.
fn installs(rel: &Path, text: &str) -> Vec<Installs> {
    let mut out = Vec::new();
    if rel.file_name().is_some_and(|n| n == "Chart.yaml") {
        if let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(text) {
            if let Some(name) = v.get("name").and_then(Value::as_str) {
                out.push(Installs::Chart {
                    name: name.to_string(),
                });
            }
        }
        return out;
    }
    let mut groups = BTreeSet::new();
    for doc in crate::goyaml::stream::split_documents(text) {
        // A helmfile may be a Go template: a document that is not YAML is passed over.
        let Ok(v) = crate::goyaml::yaml_json::yaml_to_value(doc) else {
            continue;
        };
        if v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
            if let Some(g) = v.pointer("/spec/group").and_then(Value::as_str) {
                groups.insert(g.to_string());
            }
            continue;
        }
        if !helmfile_like(rel) {
            continue;
        }
        for r in v
            .get("releases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(name), chart) = (
                r.get("name").and_then(Value::as_str),
                r.get("chart").and_then(Value::as_str).unwrap_or(""),
            ) else {
                continue;
            };
            // A release named `_default` is a template for the others (helmfile's
            // `defaultInherit`), not a release.
            if name.starts_with('_') {
                continue;
            }
            out.push(Installs::Release {
                name: name.to_string(),
                chart: chart.to_string(),
            });
        }
    }
    if !groups.is_empty() {
        out.push(Installs::Crds { groups });
    }
    out
}

/// The hints for `group`: the files that define its CRDs, then the releases and charts whose
/// names match it, best first; each a phrase (`` `bootstrap/helmfile/apps.yaml` installs
/// release `external-secrets` ``).
#[must_use]
pub fn hints_for(group: &str, sources: &[BootstrapSource]) -> Vec<String> {
    let mut defines = Vec::new();
    let mut named: Vec<(usize, String)> = Vec::new();
    for s in sources {
        match &s.what {
            Installs::Crds { groups } if groups.contains(group) => defines.push(format!(
                "`{}` defines CRDs of `{group}` (no Kustomization applies it)",
                s.file
            )),
            Installs::Crds { .. } => {}
            Installs::Release { name, chart } => {
                let chart_name = chart.rsplit('/').next().unwrap_or(chart);
                let score = super::checks::name_score(group, &[name, chart_name]);
                if score > 0 {
                    named.push((score, format!("`{}` installs release `{name}`", s.file)));
                }
            }
            Installs::Chart { name } => {
                let score = super::checks::name_score(group, &[name]);
                if score > 0 {
                    named.push((score, format!("`{}` is chart `{name}`", s.file)));
                }
            }
        }
    }
    named.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    defines
        .into_iter()
        .chain(named.into_iter().map(|(_, h)| h))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helmfile_releases_and_bootstrap_crds_are_read() {
        let helmfile = "helmDefaults:\n  wait: true\n---\nreleases:\n  - name: _default\n    chart: x\n  - name: external-secrets\n    namespace: security\n    chart: oci://ghcr.io/external-secrets/charts/external-secrets\n";
        assert_eq!(
            installs(Path::new("bootstrap/helmfile/apps.yaml"), helmfile),
            [Installs::Release {
                name: "external-secrets".into(),
                chart: "oci://ghcr.io/external-secrets/charts/external-secrets".into()
            }]
        );
        let crds = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: cilium.io\n";
        assert_eq!(
            installs(Path::new("bootstrap/crds/cilium.yaml"), crds),
            [Installs::Crds {
                groups: ["cilium.io".to_string()].into()
            }]
        );
        // Outside bootstrap/ and helmfile folders, a file with releases is not a helmfile.
        assert!(installs(Path::new("apps/x.yaml"), helmfile).is_empty());
        assert!(!helmfile_like(Path::new("apps/x.yaml")));
        assert!(helmfile_like(Path::new("helmfile.yaml")));
        assert!(helmfile_like(Path::new("infra/helmfile.d/10-cni.yaml")));
    }

    #[test]
    fn hints_name_what_defines_the_group_then_what_matches_it_by_name() {
        let s = |file: &str, what: Installs| BootstrapSource {
            file: file.into(),
            what,
        };
        let sources = [
            s(
                "bootstrap/helmfile/apps.yaml",
                Installs::Release {
                    name: "cilium".into(),
                    chart: String::new(),
                },
            ),
            s(
                "bootstrap/helmfile/apps.yaml",
                Installs::Release {
                    name: "external-secrets".into(),
                    chart: String::new(),
                },
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
        assert!(hints_for("example.com", &sources).is_empty());
    }
}
