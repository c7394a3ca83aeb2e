//! `fluxsim.toml`, read once for every command (through the source tree, so a revision's
//! own file is used, and only what git tracks): objects that exist on a cluster before Flux
//! runs or outside the repository (`[[bootstrap.objects]]`), kustomize-controller settings
//! that change what it applies (`[kustomize_controller]`), sources mapped to folders of the
//! repository (`[sources]`), what Helm is told (`[helm_controller]`), the network
//! (`[network]`), and what the graph check cannot see in the manifests: CRDs a controller
//! registers at run time (`[[runtime_crds]]`), CRDs a Helm chart installs (`[[helm_crds]]`),
//! CRDs the bootstrap installs (`[bootstrap] crd_groups`), what `diff` strips (`[diff]`), what
//! `validate` checks against (`[validate]`), and the sample inputs of Flux Operator input
//! providers that need a service (`[[resourceset.inputs]]`).
//!
//! ```toml
//! # A manifest file of the repository that a bootstrap script applies.
//! [[bootstrap.objects]]
//! file = "kubernetes/dev/bootstrap/cluster-settings.yaml"
//! clusters = ["dev"]            # default: every cluster
//!
//! # An inline manifest.
//! [[bootstrap.objects]]
//! manifest = """
//! apiVersion: v1
//! kind: ConfigMap
//! metadata: {name: extra-vars, namespace: flux-system}
//! data: {REGION: eu-west-1}
//! """
//!
//! # The vars of a Secret the repository cannot hold (made by hand, or SOPS-encrypted).
//! [[bootstrap.objects]]
//! kind = "Secret"
//! namespace = "flux-system"
//! name = "cluster-secrets"
//! vars = { SECRET_DOMAIN = "example.net" }
//!
//! # kustomize-controller's --feature-gates, when the repository does not show them.
//! [kustomize_controller]
//! feature_gates = ["StrictPostBuildSubstitutions=false"]
//!
//! # Flux sources whose content is a folder of this repository (an OCIRepository that CI
//! # pushes from ./kubernetes). Folders of the repository only: fluxsim.toml is repository
//! # content; another checkout is mapped with --source on the command line.
//! [sources]
//! "OCIRepository/flux-system/apps" = "./kubernetes"
//!
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
//!
//! # What diff and prove drop from every object (as --strip; the base revision's file).
//! [diff]
//! strip = ["metadata.annotations.\"example.com/build-id\""]
//!
//! # What `fluxsim validate` checks against: a Kubernetes version, and CRD manifests of
//! # custom resources whose CRD the render does not hold (folders of the repository).
//! [validate]
//! kube_version = "1.35"
//! schema_dirs = ["schemas/crds"]
//! # ValidatingAdmissionPolicies and bindings the cluster has (folders or files); setting it
//! # turns `--policies` on.
//! policies = ["policies/"]
//!
//! # Two sample pull requests for a ResourceSetInputProvider of type GitHubPullRequest.
//! [[resourceset.inputs]]
//! provider = "flux-system/preview-prs"   # or: type = "GitHubPullRequest"
//! inputs = [
//!   { id = "101", sha = "0a1b2c3", branch = "feat-a", title = "Add A", author = "ana" },
//!   { id = "102", sha = "4d5e6f7", branch = "feat-b", title = "Add B", author = "bo" },
//! ]
//! ```
//!
//! Tables other than these are left alone; unknown keys inside an entry are errors, so a
//! typo is not silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// What `fluxsim.toml` tells a render.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Config {
    /// What exists before Flux runs.
    #[serde(default)]
    pub bootstrap: Bootstrap,
    /// kustomize-controller's settings.
    #[serde(default)]
    pub kustomize_controller: Controller,
    /// `[sources]`: Flux sources mapped to folders of the repository
    /// (`"OCIRepository/flux-system/apps" = "./kubernetes"`).
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// `[helm_controller]`: what `render --helm` tells Helm about the cluster
    /// (`kube_version`, `api_versions`).
    #[serde(default)]
    pub helm_controller: HelmConfig,
    /// `[network]`: whether builds may reach the network (`allow = true`, as
    /// `--allow-network`). Repository content: a diff takes the base revision's, never the
    /// head's.
    #[serde(default)]
    pub network: Network,
    /// `[[runtime_crds]]`: CRDs created at run time by a controller (the graph check).
    #[serde(default)]
    pub runtime_crds: Vec<RuntimeCrd>,
    /// `[[helm_crds]]`: CRDs installed by a Helm chart when a `HelmRelease` of it is
    /// installed (the graph check).
    #[serde(default)]
    pub helm_crds: Vec<HelmCrds>,
    /// `[validate]`: what `fluxsim validate` and `--validate` check against.
    #[serde(default)]
    pub validate: Validate,
    /// `[diff]`: how `diff` and `prove` show a change (`strip`).
    #[serde(default)]
    pub diff: DiffConfig,
    /// `[resourceset]`: what the Flux Operator's ResourceSets are given that the repository
    /// cannot hold (`[[resourceset.inputs]]`).
    #[serde(default)]
    pub resourceset: ResourceSetConfig,
    /// `[versions]`: the Flux and Kubernetes versions the clusters run, over what the
    /// repository shows (`crate::versions`).
    #[serde(default)]
    pub versions: VersionsConfig,
}

/// The `[versions]` table: `flux = "2.4"`, `kubernetes = "1.31"`, and the same keys per
/// cluster under `[versions.clusters.NAME]` (a cluster's own wins).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionsConfig {
    /// The Flux release every cluster runs (`2.4`, `v2.4.1`).
    pub flux: Option<String>,
    /// The Kubernetes release every cluster runs (`1.31`).
    pub kubernetes: Option<String>,
    /// Per cluster, by name.
    #[serde(default)]
    pub clusters: BTreeMap<String, ClusterVersionsConfig>,
}

/// `[versions.clusters.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterVersionsConfig {
    /// The Flux release this cluster runs.
    pub flux: Option<String>,
    /// The Kubernetes release this cluster runs.
    pub kubernetes: Option<String>,
}

impl VersionsConfig {
    /// The Flux version `[versions]` sets for `cluster`, with the key that sets it.
    #[must_use]
    pub fn flux_for(&self, cluster: &str) -> Option<(crate::versions::FluxVersion, String)> {
        let own = self.clusters.get(cluster).and_then(|c| c.flux.as_deref());
        match own {
            Some(v) => crate::versions::FluxVersion::parse(v)
                .map(|f| (f, format!("[versions.clusters.{cluster}] flux"))),
            None => self
                .flux
                .as_deref()
                .and_then(crate::versions::FluxVersion::parse)
                .map(|f| (f, "[versions] flux".to_string())),
        }
    }

    /// The Kubernetes version `[versions]` sets for `cluster`, with the key that sets it.
    #[must_use]
    pub fn kube_for(&self, cluster: &str) -> Option<(crate::versions::KubeVersion, String)> {
        let own = self
            .clusters
            .get(cluster)
            .and_then(|c| c.kubernetes.as_deref());
        match own {
            Some(v) => crate::versions::KubeVersion::parse(v)
                .map(|k| (k, format!("[versions.clusters.{cluster}] kubernetes"))),
            None => self
                .kubernetes
                .as_deref()
                .and_then(crate::versions::KubeVersion::parse)
                .map(|k| (k, "[versions] kubernetes".to_string())),
        }
    }
}

/// The `[validate]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validate {
    /// The Kubernetes version of the built-in schemas (`"1.35"`), as `--kube-version`.
    #[serde(default)]
    pub kube_version: Option<String>,
    /// Folders of the repository holding CRD manifests for custom resources whose CRD the
    /// render does not hold (installed by a bootstrap, an operator, a chart without
    /// `--helm`); relative to the repository root, never outside it.
    #[serde(default)]
    pub schema_dirs: Vec<String>,
    /// Folders or files of the repository holding ValidatingAdmissionPolicies and their
    /// bindings that the cluster has but the render does not apply: objects are evaluated
    /// against them (and the render's own), as `validate --policies`; relative to the
    /// repository root, never outside it.
    #[serde(default)]
    pub policies: Vec<String>,
}

/// The `[diff]` table: what `diff` and `prove` drop from every object before comparing and
/// showing it (as `--strip PATH`). Read from the base revision, never the head's: a pull
/// request cannot hide its own change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffConfig {
    /// Field paths, as `--strip` takes them.
    #[serde(default)]
    pub strip: Vec<String>,
}

/// The `[resourceset]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSetConfig {
    /// `[[resourceset.inputs]]`: sample inputs of ResourceSetInputProviders that need a
    /// service (pull requests, branches, tags, artifacts, external services).
    #[serde(default)]
    pub inputs: Vec<SampleInputs>,
}

/// One `[[resourceset.inputs]]` entry: the inputs a provider exports, as the operator would
/// get them from its service, for one provider (`provider = "namespace/name"`) or every
/// provider of a type (`type = "GitHubPullRequest"`); one naming the provider wins. The
/// provider's `spec.defaultValues` fill in what an input lacks, as the operator fills them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleInputs {
    /// The provider, `namespace/name`.
    pub provider: Option<String>,
    /// The provider type (`spec.type`).
    #[serde(rename = "type")]
    pub provider_type: Option<String>,
    /// The clusters it applies to (by name); every cluster when empty.
    #[serde(default)]
    pub clusters: Vec<String>,
    /// The input sets (each a table of values).
    pub inputs: Vec<serde_json::Map<String, Value>>,
}

/// The `[network]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Builds may reach the network (remote bases, URLs in file fields, schema `$ref`s):
    /// `--network any` for a single-revision command.
    #[serde(default)]
    pub allow: bool,
    /// Hosts (`host` or `host:port`) fluxsim may fetch from over plain `http` (every other
    /// fetch is `https`).
    #[serde(default)]
    pub insecure: Vec<String>,
    /// Hosts (`host` or `host:port`) that may resolve to a loopback, private, link-local or
    /// other non-public address (a registry on the CI runner, say). Any other host resolving
    /// to one is refused, after resolution and on every redirect.
    #[serde(default)]
    pub private: Vec<String>,
    /// Credentials by host (`host` or `host:port`), each read from environment variables
    /// this table names: never from the repository's Secrets.
    #[serde(default)]
    pub credentials: BTreeMap<String, Credential>,
    /// The most bytes one fetch may read (default 64 MiB).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// `[network.credentials."host"]`: the environment variables holding a user name and
/// password (HTTP basic, and a registry's token exchange), or a bearer token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credential {
    /// The variable holding the user name.
    #[serde(default)]
    pub username_env: Option<String>,
    /// The variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// The variable holding a bearer token.
    #[serde(default)]
    pub token_env: Option<String>,
}

/// The `[bootstrap]` table: what the cluster's bootstrap puts there before Flux runs,
/// outside the repository's Kustomizations (a `helmfile` or `kubectl apply` step before
/// `flux bootstrap`, say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bootstrap {
    /// Objects on the cluster before Flux runs, or made outside the repository.
    #[serde(default)]
    pub objects: Vec<BootstrapObject>,
    /// API groups whose CRDs exist from the start (the graph check's cold start begins
    /// with them).
    #[serde(default)]
    pub crd_groups: Vec<String>,
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

/// One `[[bootstrap.objects]]` entry: a file, an inline manifest, or the vars of a
/// ConfigMap or Secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BootstrapObject {
    /// A manifest file, relative to the repository root (every document in it).
    pub file: Option<String>,
    /// An inline manifest (one or more YAML documents).
    pub manifest: Option<String>,
    /// `ConfigMap` or `Secret`, with `name` and `vars`.
    pub kind: Option<String>,
    /// The object's namespace (default `flux-system`).
    pub namespace: Option<String>,
    /// The object's name.
    pub name: Option<String>,
    /// The vars the object holds, in plain text.
    pub vars: Option<BTreeMap<String, String>>,
    /// The clusters it exists on (by name); every cluster when empty.
    #[serde(default)]
    pub clusters: Vec<String>,
}

/// The `[kustomize_controller]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Controller {
    /// `--feature-gates` values (`StrictPostBuildSubstitutions=false`); they win over what
    /// the repository's manifests set.
    #[serde(default)]
    pub feature_gates: Vec<String>,
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    /// The file, as the user knows it.
    pub file: String,
    /// 1-based line (1 when unknown).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A declared object, read: the manifest objects it stands for.
#[derive(Debug, Clone)]
pub struct Declared {
    /// The objects.
    pub objects: Vec<Value>,
    /// The clusters they exist on (every cluster when empty).
    pub clusters: Vec<String>,
    /// Where they were declared, for provenance (`fluxsim.toml`, or the file).
    pub from: String,
}

impl Config {
    /// Parses the text of `fluxsim.toml` (`file` names it in errors).
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let err = |line: usize, message: String| ConfigError {
            file: file.to_string(),
            line,
            message,
        };
        let config: Config = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map_or(1, |s| crate::locate::line_col(text, s.start).0);
            err(line, e.message().trim().to_string())
        })?;
        for (i, o) in config.bootstrap.objects.iter().enumerate() {
            let line = text
                .match_indices("[[bootstrap.objects]]")
                .nth(i)
                .map_or(1, |(at, _)| crate::locate::line_col(text, at).0);
            let forms = [o.file.is_some(), o.manifest.is_some(), o.kind.is_some()];
            if forms.iter().filter(|f| **f).count() != 1 {
                return Err(err(
                    line,
                    "a [[bootstrap.objects]] entry needs exactly one of `file`, `manifest`, or \
                     `kind` with `name` and `vars`"
                        .into(),
                ));
            }
            if let Some(kind) = &o.kind {
                if !matches!(kind.as_str(), "ConfigMap" | "Secret")
                    || o.name.is_none()
                    || o.vars.is_none()
                {
                    return Err(err(
                        line,
                        "a [[bootstrap.objects]] entry with `kind` needs kind `ConfigMap` or \
                         `Secret`, a `name` and `vars`"
                            .into(),
                    ));
                }
            }
        }
        for (key, value) in &config.sources {
            if let Err(message) =
                crate::source::mapping::parse_config_entry(key, value, CONFIG_FILE)
            {
                let line = text
                    .find(&format!("\"{key}\""))
                    .or_else(|| text.find(key.as_str()))
                    .map_or(1, |at| crate::locate::line_col(text, at).0);
                return Err(err(line, message.into()));
            }
        }
        for (i, r) in config.runtime_crds.iter().enumerate() {
            if r.kinds.is_empty() || r.created_by.kind.is_empty() {
                let line = text
                    .match_indices("[[runtime_crds]]")
                    .nth(i)
                    .map_or(1, |(o, _)| crate::locate::line_col(text, o).0);
                return Err(err(
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
                return Err(err(
                    line,
                    "a [[helm_crds]] entry needs a chart and at least one group".to_string(),
                ));
            }
        }
        check_resourceset_inputs(&config, text, &err)?;
        check_versions(&config.versions, text, &err)?;
        for g in &config.kustomize_controller.feature_gates {
            if parse_gate(g).is_none() {
                return Err(err(
                    text.find("feature_gates")
                        .map_or(1, |at| crate::locate::line_col(text, at).0),
                    format!("feature gate `{g}`: expected NAME=true or NAME=false"),
                ));
            }
        }
        Ok(config)
    }

    /// Reads `fluxsim.toml` at the root of a source tree (read through the tree's value, so
    /// a git revision's own file is used); no file is an empty config.
    pub fn load(fs: &crate::source::SourceFs) -> Result<Config, ConfigError> {
        let path = fs.root().join(CONFIG_FILE);
        if !fs.is_file(&path) {
            return Ok(Config::default());
        }
        let text = fs.read_to_string(&path).map_err(|e| ConfigError {
            file: CONFIG_FILE.into(),
            line: 1,
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(&text, CONFIG_FILE)
    }

    /// Reads a settings file named on the command line (`graph --config FILE`), which may
    /// lie outside the repository: it is the user's, not the repository's. Errors name it
    /// as given.
    pub fn load_file(path: &std::path::Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = crate::source::read_bounded(path)
            .and_then(|b| {
                String::from_utf8(b)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })
            .map_err(|e| ConfigError {
                file: file.clone(),
                line: 1,
                message: format!("cannot read: {e}"),
            })?;
        Config::parse(&text, &file)
    }

    /// The declared objects, read (a `file` from the source tree `fs`).
    pub fn declared(&self, fs: &crate::source::SourceFs) -> Result<Vec<Declared>, ConfigError> {
        let mut out = Vec::new();
        for o in &self.bootstrap.objects {
            let bad = |message: String| ConfigError {
                file: CONFIG_FILE.into(),
                line: 1,
                message,
            };
            let (objects, from) = if let Some(file) = &o.file {
                let path = fs
                    .secure_join(file)
                    .map_err(|e| bad(format!("bootstrap object file `{file}`: {e}")))?;
                let text = fs
                    .read_to_string(&path)
                    .map_err(|e| bad(format!("bootstrap object file `{file}`: {e}")))?;
                (manifest_objects(&text, file)?, file.clone())
            } else if let Some(text) = &o.manifest {
                (
                    manifest_objects(text, CONFIG_FILE)?,
                    CONFIG_FILE.to_string(),
                )
            } else {
                let kind = o.kind.clone().unwrap_or_default();
                let vars = o.vars.clone().unwrap_or_default();
                let field = if kind == "Secret" {
                    "stringData"
                } else {
                    "data"
                };
                let obj = serde_json::json!({
                    "apiVersion": "v1", "kind": kind,
                    "metadata": {
                        "name": o.name.clone().unwrap_or_default(),
                        "namespace": o.namespace.clone().unwrap_or_else(|| "flux-system".into()),
                    },
                    field: vars,
                });
                (vec![obj], CONFIG_FILE.to_string())
            };
            out.push(Declared {
                objects,
                clusters: o.clusters.clone(),
                from,
            });
        }
        Ok(out)
    }

    /// The `[sources]` mappings (checked by [`Config::parse`]).
    #[must_use]
    pub fn source_mappings(&self) -> Vec<crate::source::mapping::SourceMapping> {
        self.sources
            .iter()
            .filter_map(|(k, v)| crate::source::mapping::parse_config_entry(k, v, CONFIG_FILE).ok())
            .collect()
    }

    /// The `StrictPostBuildSubstitutions` gate, when the config sets it.
    #[must_use]
    pub fn strict_gate(&self) -> Option<bool> {
        self.kustomize_controller
            .feature_gates
            .iter()
            .filter_map(|g| parse_gate(g))
            .filter(|(name, _)| *name == STRICT_GATE)
            .map(|(_, on)| on)
            .next_back()
    }
}

/// Every `[versions]` value reads as a Flux 2.x (a minor fluxsim knows) or Kubernetes 1.x
/// release.
fn check_versions(
    v: &VersionsConfig,
    text: &str,
    err: &dyn Fn(usize, String) -> ConfigError,
) -> Result<(), ConfigError> {
    let line_of = |value: &str| {
        text.find(&format!("\"{value}\""))
            .or_else(|| text.find("[versions"))
            .map_or(1, |at| crate::locate::line_col(text, at).0)
    };
    let fluxes = v
        .flux
        .iter()
        .chain(v.clusters.values().filter_map(|c| c.flux.as_ref()));
    for f in fluxes {
        match crate::versions::FluxVersion::parse(f) {
            Some(version) if version.is_known() => {}
            Some(version) => {
                return Err(err(
                    line_of(f),
                    format!(
                        "[versions] flux `{f}`: fluxsim knows Flux v2.{}–v2.{} (not {version})",
                        crate::versions::OLDEST_FLUX_MINOR,
                        crate::versions::NEWEST_FLUX_MINOR
                    ),
                ))
            }
            None => {
                return Err(err(
                    line_of(f),
                    format!("[versions] flux `{f}`: expected a Flux 2.x release, e.g. \"2.4\""),
                ))
            }
        }
    }
    let kubes = v
        .kubernetes
        .iter()
        .chain(v.clusters.values().filter_map(|c| c.kubernetes.as_ref()));
    for k in kubes {
        if crate::versions::KubeVersion::parse(k).is_none() {
            return Err(err(
                line_of(k),
                format!(
                    "[versions] kubernetes `{k}`: expected a Kubernetes 1.x release, e.g. \"1.31\""
                ),
            ));
        }
    }
    Ok(())
}

/// Each `[[resourceset.inputs]]` entry names exactly one of a provider (`namespace/name`)
/// or a type.
fn check_resourceset_inputs(
    config: &Config,
    text: &str,
    err: &dyn Fn(usize, String) -> ConfigError,
) -> Result<(), ConfigError> {
    for (i, r) in config.resourceset.inputs.iter().enumerate() {
        let line = text
            .match_indices("[[resourceset.inputs]]")
            .nth(i)
            .map_or(1, |(o, _)| crate::locate::line_col(text, o).0);
        let named = r.provider.as_deref().map(|p| {
            p.split_once('/')
                .is_some_and(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
        });
        match (named, &r.provider_type) {
            (Some(true), None) => {}
            (None, Some(t)) if !t.is_empty() => {}
            (Some(false), _) => {
                return Err(err(
                    line,
                    "a [[resourceset.inputs]] entry's `provider` is `namespace/name`".into(),
                ))
            }
            _ => {
                return Err(err(
                    line,
                    "a [[resourceset.inputs]] entry needs exactly one of `provider` \
                     (`namespace/name`) or `type`"
                        .into(),
                ))
            }
        }
    }
    Ok(())
}

/// The config file's name, at the repository root.
pub const CONFIG_FILE: &str = "fluxsim.toml";

/// The warning for a `fluxsim.toml` that the folder holds but the tree `tree` leaves out
/// (fluxsim reads the tree as git tracks it, so its settings are not used), with how to
/// have it read; `None` when the tree holds it or the folder does not.
#[must_use]
pub fn left_out_warning(tree: &crate::source::Tree) -> Option<String> {
    use crate::source::LeftOut;
    let why = match tree.left_out(CONFIG_FILE)? {
        LeftOut::NotTracked => format!(
            "is not tracked by git: track it with `git add {CONFIG_FILE}` (or render with \
             --include-untracked)"
        ),
        LeftOut::IgnoredByGit => {
            format!("is ignored by git: track it with `git add -f {CONFIG_FILE}`")
        }
        LeftOut::Excluded(reason) => format!("is left out of what Flux sees: {reason}"),
    };
    Some(format!(
        "fluxsim: warning: {CONFIG_FILE} {why}; until then fluxsim reads the repository as \
         git tracks it (what Flux sees) and does not use its settings"
    ))
}

/// kustomize-controller's feature gate for strict substitution (on by default since v1.9.0:
/// `internal/features/features.go`).
pub const STRICT_GATE: &str = "StrictPostBuildSubstitutions";

/// `NAME=true` or `NAME=false`.
fn parse_gate(g: &str) -> Option<(&str, bool)> {
    let (name, value) = g.trim().split_once('=')?;
    let on = match value.trim() {
        "true" => true,
        "false" => false,
        _ => return None,
    };
    (!name.is_empty()).then_some((name.trim(), on))
}

/// The `StrictPostBuildSubstitutions` value of a `--feature-gates=A=true,B=false` list
/// (the last one given wins, as in `component-base`'s feature gate parsing).
#[must_use]
pub fn strict_gate_in(list: &str) -> Option<bool> {
    list.split(',')
        .filter_map(parse_gate)
        .filter(|(name, _)| *name == STRICT_GATE)
        .map(|(_, on)| on)
        .next_back()
}

fn manifest_objects(text: &str, file: &str) -> Result<Vec<Value>, ConfigError> {
    crate::manifest::split_documents(text)
        .into_iter()
        .map(|doc| {
            crate::manifest::parse_object(doc).map_err(|e| ConfigError {
                file: file.to_string(),
                line: 1,
                message: format!("bootstrap object: {e}"),
            })
        })
        .collect()
}

/// `fluxsim.toml`'s `[helm_controller]`: the cluster Helm is told it templates for.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HelmConfig {
    /// `--kube-version` (Capabilities.KubeVersion).
    pub kube_version: Option<String>,
    /// `--api-versions` (Capabilities.APIVersions), added to Helm's defaults.
    #[serde(default)]
    pub api_versions: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example of docs/configuration.md is a fluxsim.toml fluxsim reads: every key it
    // shows exists (unknown keys are refused), `[network]`'s included.
    #[test]
    fn the_documented_example_configuration_parses() {
        let doc = include_str!("../../../docs/configuration.md");
        let start = doc.find("```toml\n").expect("a toml example") + "```toml\n".len();
        let end = start + doc[start..].find("```").expect("its end");
        let c = Config::parse(&doc[start..end], "docs/configuration.md").unwrap();
        assert!(c.network.allow);
        assert_eq!(c.network.insecure, ["charts.lab.internal"]);
        assert_eq!(c.network.max_bytes, Some(64 << 20));
        assert_eq!(
            c.network.credentials["ghcr.io"].password_env.as_deref(),
            Some("GHCR_TOKEN")
        );
    }

    #[test]
    fn bootstrap_objects_take_exactly_one_form() {
        let c = Config::parse(
            "[[bootstrap.objects]]\nkind = \"Secret\"\nname = \"s\"\nvars = { A = \"1\" }\n\
             clusters = [\"dev\"]\n",
            "fluxsim.toml",
        )
        .unwrap();
        assert_eq!(c.bootstrap.objects[0].clusters, ["dev"]);
        let d = c
            .declared(&crate::source::SourceFs::empty("/nonexistent".into()))
            .unwrap();
        assert_eq!(d[0].objects[0]["stringData"]["A"], "1");
        assert_eq!(d[0].objects[0]["metadata"]["namespace"], "flux-system");
        let e = Config::parse(
            "[kustomize_controller]\n\n[[bootstrap.objects]]\nfile = \"a.yaml\"\nmanifest = \"x\"\n",
            "fluxsim.toml",
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = Config::parse(
            "[[bootstrap.objects]]\nkind = \"Deployment\"\nname = \"d\"\nvars = {}\n",
            "fluxsim.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("ConfigMap"), "{e}");
    }

    #[test]
    fn resourceset_inputs_name_a_provider_or_a_type() {
        let c = Config::parse(
            "[[resourceset.inputs]]\nprovider = \"flux-system/prs\"\n\
             inputs = [{ id = \"1\", branch = \"a\" }, { id = \"2\", n = 3 }]\n",
            "fluxsim.toml",
        )
        .unwrap();
        let s = &c.resourceset.inputs[0];
        assert_eq!(s.inputs.len(), 2);
        assert_eq!(s.inputs[1]["n"], 3);
        for bad in [
            "[[resourceset.inputs]]\ninputs = []\n",
            "[[resourceset.inputs]]\nprovider = \"prs\"\ninputs = []\n",
            "[[resourceset.inputs]]\nprovider = \"a/b\"\ntype = \"Static\"\ninputs = []\n",
        ] {
            let e = Config::parse(&format!("[network]\n{bad}"), "fluxsim.toml").unwrap_err();
            assert_eq!(e.line, 2, "{e}");
        }
        assert!(Config::parse(
            "[[resourceset.inputs]]\ntype = \"GitHubPullRequest\"\ninputs = []\nextra = 1\n",
            "fluxsim.toml"
        )
        .is_err());
    }

    #[test]
    fn graph_tables_are_left_to_the_graph_check() {
        let c = Config::parse(
            "[[runtime_crds]]\ngroup = \"g\"\nkinds = [\"K\"]\ncreated_by = { kind = \"T\" }\n\
             [bootstrap]\ncrd_groups = [\"cilium.io\"]\n",
            "fluxsim.toml",
        );
        assert!(c.is_ok(), "{c:?}");
    }

    // component-base/featuregate: `--feature-gates=A=true,B=false`, the last value wins.
    #[test]
    fn strict_gate_is_read_from_a_feature_gate_list() {
        assert_eq!(
            strict_gate_in("OOMWatch=true,StrictPostBuildSubstitutions=false"),
            Some(false)
        );
        assert_eq!(strict_gate_in("OOMWatch=true"), None);
        let c = Config::parse(
            "[kustomize_controller]\nfeature_gates = [\"StrictPostBuildSubstitutions=false\"]\n",
            "fluxsim.toml",
        )
        .unwrap();
        assert_eq!(c.strict_gate(), Some(false));
        assert!(Config::parse(
            "[kustomize_controller]\nfeature_gates = [\"Strict\"]\n",
            "fluxsim.toml"
        )
        .is_err());
    }

    #[test]
    fn versions_table_sets_flux_and_kubernetes_per_cluster_and_rejects_what_it_cannot_read() {
        let c = Config::parse(
            "[versions]\nflux = \"2.4\"\nkubernetes = \"1.31\"\n\n\
             [versions.clusters.prod]\nflux = \"v2.3.2\"\n",
            "fluxsim.toml",
        )
        .unwrap();
        let (dev, key) = c.versions.flux_for("dev").unwrap();
        assert_eq!((dev.minor, key.as_str()), (4, "[versions] flux"));
        let (prod, key) = c.versions.flux_for("prod").unwrap();
        assert_eq!((prod.minor, prod.patch), (3, Some(2)));
        assert_eq!(key, "[versions.clusters.prod] flux");
        assert_eq!(c.versions.kube_for("prod").unwrap().0.minor, 31);
        let e = Config::parse("\n[versions]\nflux = \"1.4\"\n", "fluxsim.toml").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("Flux 2.x"), "{e}");
        let e = Config::parse("[versions]\nflux = \"2.42\"\n", "fluxsim.toml").unwrap_err();
        assert!(e.message.contains("knows Flux v2.0"), "{e}");
        assert!(Config::parse("[versions]\nkubernetes = \"latest\"\n", "f").is_err());
        assert!(Config::parse("[versions]\nflx = \"2.4\"\n", "f").is_err());
    }
}
