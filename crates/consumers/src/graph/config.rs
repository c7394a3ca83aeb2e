//! `fluxsim.toml`: what the repository tells the graph check that fluxsim cannot see in the
//! manifests — CRDs that a controller registers at run time, and CRDs that a Helm chart
//! installs.
//!
//! ```toml
//! # The operator registers the Widget CRD once a WidgetOperator object is reconciled.
//! [[runtime_crds]]
//! group = "widgets.example.io"
//! kinds = ["Widget", "WidgetPool"]
//! created_by = { group = "operator.example.io", kind = "WidgetOperator" }
//!
//! # The cert-manager chart installs every CRD of these groups.
//! [[helm_crds]]
//! chart = "cert-manager"
//! groups = ["cert-manager.io", "acme.cert-manager.io"]
//!
//! # The cluster's bootstrap installs these CRDs before Flux runs (outside any Kustomization).
//! [bootstrap]
//! crd_groups = ["external-secrets.io"]
//! ```
//!
//! Tables other than these are left to other fluxsim commands; unknown keys inside an entry
//! are errors, so a typo is not silently ignored.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The config file's name, at the repository root.
pub const CONFIG_FILE: &str = "fluxsim.toml";

/// What `fluxsim.toml` says about the graph.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GraphConfig {
    /// CRDs created at run time by a controller.
    #[serde(default)]
    pub runtime_crds: Vec<RuntimeCrd>,
    /// CRDs installed by a Helm chart when a `HelmRelease` of it is installed.
    #[serde(default)]
    pub helm_crds: Vec<HelmCrds>,
    /// What exists before Flux runs besides Kubernetes and Flux.
    #[serde(default)]
    pub bootstrap: Bootstrap,
}

/// What the cluster's bootstrap installs before Flux runs, outside the repository's
/// Kustomizations (a `helmfile` or `kubectl apply` step before `flux bootstrap`, say): the
/// cold start then begins with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bootstrap {
    /// API groups whose CRDs exist from the start.
    #[serde(default)]
    pub crd_groups: Vec<String>,
    /// Objects that exist before Flux runs: read by `render` (`crate::config`), not by the
    /// graph check.
    #[serde(default)]
    pub objects: Vec<crate::config::BootstrapObject>,
}

/// The CRDs of `groups` come from the chart `chart`: they exist once a `HelmRelease` of that
/// chart is installed (Ready).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HelmCrds {
    /// The chart's name (`spec.chart.spec.chart`, or the last path segment of the
    /// `OCIRepository` URL a `chartRef` points at).
    pub chart: String,
    /// The API groups whose CRDs the chart installs.
    pub groups: Vec<String>,
}

/// What makes a declared CRD exist: an object a controller reconciles, or a Helm chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger<'a> {
    /// `[[runtime_crds]]`: once an object of this kind is reconciled.
    Object(&'a KindRef),
    /// `[[helm_crds]]`: once a `HelmRelease` of this chart is installed.
    Chart(&'a str),
}

impl Trigger<'_> {
    /// The trigger as a noun: `` `KubeVirt.kubevirt.io` `` or
    /// `` HelmRelease of chart `cert-manager` ``.
    #[must_use]
    pub fn noun(&self) -> String {
        match self {
            Trigger::Object(t) if t.group.is_empty() => format!("`{}`", t.kind),
            Trigger::Object(t) => format!("`{}.{}`", t.kind, t.group),
            Trigger::Chart(c) => format!("HelmRelease of chart `{c}`"),
        }
    }

    /// How the CRD comes to exist, after "a CRD that".
    #[must_use]
    pub fn makes(&self) -> String {
        match self {
            Trigger::Object(_) => format!(
                "the controller registers once a {} is reconciled",
                self.noun()
            ),
            Trigger::Chart(_) => format!(
                "helm-controller installs with a {} (fluxsim.toml, or read from the chart with --helm)",
                self.noun()
            ),
        }
    }
}

/// CRDs that appear only once an object of `created_by` kind has been reconciled.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeCrd {
    /// The CRDs' API group.
    pub group: String,
    /// The kinds the CRDs define.
    pub kinds: Vec<String>,
    /// The object whose reconciliation makes the controller register them.
    pub created_by: KindRef,
}

/// An API group and kind.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindRef {
    /// API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not match the schema.
    #[error("{path}:{line}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line (1 when the parser gives none).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl GraphConfig {
    /// Reads `path`; a file that does not exist is an empty config.
    pub fn load(path: &Path) -> Result<GraphConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GraphConfig::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        GraphConfig::parse(&text).map_err(|(line, message)| ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        })
    }

    /// Parses the text of a config file; an error is a line and a message.
    pub fn parse(text: &str) -> Result<GraphConfig, (usize, String)> {
        let config: GraphConfig = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map_or(1, |s| crate::locate::line_col(text, s.start).0);
            (line, e.message().trim().to_string())
        })?;
        for (i, r) in config.runtime_crds.iter().enumerate() {
            if r.kinds.is_empty() || r.created_by.kind.is_empty() {
                let line = text
                    .match_indices("[[runtime_crds]]")
                    .nth(i)
                    .map_or(1, |(o, _)| crate::locate::line_col(text, o).0);
                return Err((
                    line,
                    "a [[runtime_crds]] entry needs at least one kind and a created_by kind"
                        .to_string(),
                ));
            }
        }
        for (i, h) in config.helm_crds.iter().enumerate() {
            if h.chart.is_empty() || h.groups.is_empty() {
                let line = text
                    .match_indices("[[helm_crds]]")
                    .nth(i)
                    .map_or(1, |(o, _)| crate::locate::line_col(text, o).0);
                return Err((
                    line,
                    "a [[helm_crds]] entry needs a chart and at least one group".to_string(),
                ));
            }
        }
        Ok(config)
    }

    /// The runtime entry that defines `group`/`kind`, if any.
    #[must_use]
    pub fn runtime_crd(&self, group: &str, kind: &str) -> Option<&RuntimeCrd> {
        self.runtime_crds
            .iter()
            .find(|r| r.group == group && r.kinds.iter().any(|k| k == kind))
    }

    /// What the config says makes `group`/`kind` exist: a `[[runtime_crds]]` entry first,
    /// then a `[[helm_crds]]` one.
    #[must_use]
    pub fn trigger(&self, group: &str, kind: &str) -> Option<Trigger<'_>> {
        self.runtime_crd(group, kind)
            .map(|r| Trigger::Object(&r.created_by))
            .or_else(|| {
                self.helm_crds
                    .iter()
                    .find(|h| h.groups.iter().any(|g| g == group))
                    .map(|h| Trigger::Chart(h.chart.as_str()))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_crds_parse_with_created_by() {
        let c = GraphConfig::parse(
            "[[runtime_crds]]\ngroup = \"w.example.io\"\nkinds = [\"Widget\"]\n\
             created_by = { group = \"op.example.io\", kind = \"Operator\" }\n",
        )
        .unwrap();
        let r = c.runtime_crd("w.example.io", "Widget").unwrap();
        assert_eq!(r.created_by.kind, "Operator");
        assert!(c.runtime_crd("w.example.io", "Other").is_none());
    }

    #[test]
    fn unknown_key_in_runtime_crds_is_an_error_with_its_line() {
        let e = GraphConfig::parse(
            "[[runtime_crds]]\ngroup = \"g\"\nkinds = [\"K\"]\ncreated_by = { kind = \"T\" }\ncreatedBy = 1\n",
        )
        .unwrap_err();
        assert_eq!(e.0, 5, "{e:?}");
        assert!(e.1.contains("createdBy"), "{e:?}");
    }

    #[test]
    fn helm_crds_parse_and_runtime_crds_win() {
        let c = GraphConfig::parse(
            "[[helm_crds]]\nchart = \"cert-manager\"\ngroups = [\"cert-manager.io\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.trigger("cert-manager.io", "ClusterIssuer"),
            Some(Trigger::Chart("cert-manager"))
        );
        assert_eq!(c.trigger("acme.cert-manager.io", "Order"), None);
        let e = GraphConfig::parse("[[helm_crds]]\nchart = \"x\"\ngroups = []\n").unwrap_err();
        assert_eq!(e.0, 1, "{e:?}");
    }

    #[test]
    fn bootstrap_crd_groups_parse_and_unknown_keys_are_errors() {
        let c = GraphConfig::parse("[bootstrap]\ncrd_groups = [\"cilium.io\"]\n").unwrap();
        assert_eq!(c.bootstrap.crd_groups, ["cilium.io"]);
        let e = GraphConfig::parse("[bootstrap]\ncrds = []\n").unwrap_err();
        assert_eq!(e.0, 2, "{e:?}");
    }

    #[test]
    fn other_tables_are_left_to_other_commands() {
        let c = GraphConfig::parse("[audit]\nignore = [\"FS101\"]\n").unwrap();
        assert!(c.runtime_crds.is_empty());
    }

    #[test]
    fn missing_file_is_an_empty_config() {
        let c = GraphConfig::load(Path::new("/nonexistent/fluxsim.toml")).unwrap();
        assert_eq!(c, GraphConfig::default());
    }
}
