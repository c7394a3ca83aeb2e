//! Flux Operator ResourceSets (`fluxcd.controlplane.io/v1`, kind `ResourceSet`) rendered as
//! the operator (v0.59.0) renders and applies them.
//!
//! A ResourceSet that some Kustomization (or ResourceSet) of a cluster applies becomes an
//! entry of the cluster's render named `<parent>/rset/<namespace>/<name>`, with apiVersion
//! `fluxcd.controlplane.io/v1`: its artifact is the objects the operator applies. The steady
//! state's fixed point (`reconcile`) makes them: the Flux Kustomizations among those objects
//! are rendered in turn (their parent is the ResourceSet's entry), HelmReleases with
//! `--helm`, and every object joins the cluster's objects (var sources, providers, copy
//! sources). `--out`, JSON, `diff`, `compare` and `prove` treat the entry as any artifact.
//!
//! One entry is made in three steps:
//!
//! 1. the inputs ([`inputs`]): `spec.inputs`, the `ResourceSetInputProvider`s of the
//!    cluster's render that `spec.inputsFrom` names (`Static` ones from the repository; other
//!    types from `fluxsim.toml`'s `[[resourceset.inputs]]`, else placeholders, noted), and the
//!    strategy;
//! 2. the templating, by the operator's own CLI, `flux-operator build rset` ([`operator`]), in
//!    the tool box: nothing of fluxsim guesses Go `text/template` or sprig;
//! 3. the operator's apply-time changes ([`apply`]: copyFrom, checksumFrom, the order of the
//!    ownership labels and commonMetadata, Secret normalization), then the objects printed
//!    by a kustomize build, as every artifact is (kustomize's style and legacy order).
//!
//! What the operator does with the cluster that a render cannot know is said, not guessed: a
//! copy source the render does not hold, placeholder inputs, `convertKubeConfigFrom`. A
//! ResourceSet's `dependsOn` follows the steady state: it never holds a render back; a
//! dependency on a Kustomization or a ResourceSet of the cluster is noted when that fails or
//! is missing, and is an edge of `graph`. `spec.steps` are built by the CLI and their objects
//! make one artifact (the steps only order the apply). A FluxInstance is not rendered: the
//! operator installs Flux's controllers from an OCI distribution (see docs).

pub mod apply;
pub mod inputs;
pub mod operator;
mod step;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::flux::{str_at, NamespacedName, ObjectId};

pub use operator::{OperatorBinary, OperatorError, REPRODUCED_OPERATOR};
pub use step::{plan, render_resourceset, Planned, Request};

/// The API group of the Flux Operator's kinds.
pub const RSET_GROUP: &str = crate::flux::OPERATOR_GROUP;
pub use crate::model::RSET_API_VERSION;
/// The ResourceSet kind.
pub const RSET_KIND: &str = "ResourceSet";

pub use crate::flux::is_resourceset;
pub use crate::model::{
    is_resourceset_entry as is_entry, resourceset_entry_id as entry_id,
    resourceset_of as rendered_by,
};

/// Whether `obj` is a ResourceSetInputProvider.
#[must_use]
pub fn is_input_provider(obj: &Value) -> bool {
    let id = ObjectId::of(obj);
    id.group == RSET_GROUP && id.kind == inputs::PROVIDER_KIND
}

/// One `spec.dependsOn` entry of a ResourceSet: an object that must exist (and be Ready with
/// `ready: true`) before the operator reconciles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `namespace` (empty for a cluster-scoped object).
    pub namespace: String,
    /// `name`.
    pub name: String,
}

/// A ResourceSet, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSet {
    /// Namespace (default `default`) and name.
    pub id: NamespacedName,
    /// `spec.inputs`.
    pub inputs: Vec<inputs::Input>,
    /// `spec.inputsFrom`, as written (`name` or `selector`).
    pub inputs_from: Vec<Value>,
    /// `spec.inputStrategy.name` (default `Flatten`).
    pub strategy: String,
    /// `spec.inputStrategy.includeEmptyProviders` (Permute only).
    pub include_empty_providers: bool,
    /// `spec.commonMetadata.labels`.
    pub common_labels: Map<String, Value>,
    /// `spec.dependsOn`.
    pub depends_on: Vec<Dependency>,
    /// `spec.wait`.
    pub wait: bool,
    /// The `fluxcd.controlplane.io/reconcile: disabled` annotation: the operator skips it.
    pub disabled: bool,
}

impl ResourceSet {
    /// Reads a ResourceSet object; an error says which field is wrong (the API server's
    /// schema would refuse it).
    pub fn from_json(obj: &Value) -> Result<ResourceSet, String> {
        let namespace = str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string();
        let name = str_at(obj, &["metadata", "name"])
            .ok_or("a ResourceSet without metadata.name")?
            .to_string();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let list = |k: &str| -> Result<Vec<Value>, String> {
            match spec.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => Ok(a.clone()),
                Some(_) => Err(format!("spec.{k} is not a list")),
            }
        };
        let inputs = list("inputs")?
            .into_iter()
            .map(|i| match i {
                Value::Object(m) => Ok(m),
                _ => Err("spec.inputs holds an entry that is not a map".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let strategy = spec.get("inputStrategy");
        let depends_on = list("dependsOn")?
            .iter()
            .map(|d| {
                Ok(Dependency {
                    api_version: str_at(d, &["apiVersion"]).unwrap_or_default().to_string(),
                    kind: str_at(d, &["kind"]).unwrap_or_default().to_string(),
                    namespace: str_at(d, &["namespace"]).unwrap_or_default().to_string(),
                    name: str_at(d, &["name"])
                        .ok_or("spec.dependsOn entry without a name")?
                        .to_string(),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let disabled = str_at(
            obj,
            &[
                "metadata",
                "annotations",
                "fluxcd.controlplane.io/reconcile",
            ],
        )
        .is_some_and(|v| v.eq_ignore_ascii_case("disabled"));
        Ok(ResourceSet {
            inputs,
            inputs_from: list("inputsFrom")?,
            strategy: strategy
                .and_then(|s| str_at(s, &["name"]))
                .filter(|s| !s.is_empty())
                .unwrap_or("Flatten")
                .to_string(),
            include_empty_providers: strategy
                .and_then(|s| s.get("includeEmptyProviders"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
                && strategy.and_then(|s| str_at(s, &["name"])) == Some("Permute"),
            common_labels: spec
                .get("commonMetadata")
                .and_then(|m| m.get("labels"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            depends_on,
            wait: spec.get("wait").and_then(Value::as_bool).unwrap_or(false),
            disabled,
            id: NamespacedName { namespace, name },
        })
    }
}

/// Runs `flux-operator build rset` for a whole render: the binary, found once when the first
/// ResourceSet needs it, each distinct build made once (every cluster and every step of the
/// fixed point ask again), and what the summary line says.
#[derive(Debug, Default)]
pub struct Runner {
    /// `--flux-operator PATH`; else `flux-operator` on PATH.
    pub binary: Option<PathBuf>,
    /// Timeout for one run (default 60s).
    pub timeout: Option<Duration>,
    tool: OnceLock<Result<OperatorBinary, OperatorError>>,
    outputs: Mutex<BTreeMap<String, Result<String, OperatorError>>>,
    placeholders: Mutex<BTreeMap<String, Vec<String>>>,
    built: Mutex<std::collections::BTreeSet<String>>,
}

impl Runner {
    /// A runner for `binary` (`None`: `flux-operator` on PATH).
    #[must_use]
    pub fn new(binary: Option<PathBuf>) -> Runner {
        Runner {
            binary,
            ..Runner::default()
        }
    }

    /// The binary, found the first time it is asked for.
    pub fn tool(&self) -> Result<&OperatorBinary, &OperatorError> {
        self.tool
            .get_or_init(|| {
                OperatorBinary::locate(
                    self.binary.as_deref(),
                    self.timeout.unwrap_or(Duration::from_secs(60)),
                )
            })
            .as_ref()
    }

    /// What the summary line says of the tool that rendered this render's ResourceSets,
    /// when there were any: the tool and its version (or why it could not run), and which
    /// ResourceSets took placeholder inputs.
    #[must_use]
    pub fn summary(&self) -> Option<String> {
        if self.built.lock().ok()?.is_empty() {
            return None;
        }
        let mut line = match self.tool.get() {
            Some(Ok(t)) => match t.warning() {
                Some(w) => format!("flux-operator {}: {w}", t.version()),
                None => format!("flux-operator {}", t.version()),
            },
            Some(Err(e)) => format!("flux-operator not run: {e}"),
            None => "flux-operator not run".to_string(),
        };
        let placeholders = self.placeholders.lock().ok()?;
        if !placeholders.is_empty() {
            let names: Vec<String> = placeholders
                .iter()
                .map(|(rset, providers)| format!("{rset} ({})", providers.join(", ")))
                .collect();
            let _ = write!(
                line,
                "; placeholder inputs (no [[resourceset.inputs]] in fluxsim.toml) for {}",
                names.join(", ")
            );
        }
        Some(line)
    }

    fn record(&self, rset: &str, placeholder_providers: Vec<String>) {
        if let Ok(mut b) = self.built.lock() {
            b.insert(rset.to_string());
        }
        if !placeholder_providers.is_empty() {
            if let Ok(mut p) = self.placeholders.lock() {
                p.insert(rset.to_string(), placeholder_providers);
            }
        }
    }
}
