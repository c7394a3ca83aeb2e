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
mod error;
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

pub use error::ResourceSetError;
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
    pub fn from_json(obj: &Value) -> Result<ResourceSet, ResourceSetError> {
        let namespace = str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string();
        let name = str_at(obj, &["metadata", "name"])
            .ok_or(ResourceSetError::NoName)?
            .to_string();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let list = |k: &'static str| -> Result<Vec<Value>, ResourceSetError> {
            match spec.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => Ok(a.clone()),
                Some(_) => Err(ResourceSetError::Field {
                    field: format!("spec.{k}"),
                    reason: "is not a list",
                }),
            }
        };
        let inputs = list("inputs")?
            .into_iter()
            .map(|i| match i {
                Value::Object(m) => Ok(m),
                _ => Err(ResourceSetError::Field {
                    field: "spec.inputs".to_string(),
                    reason: "holds an entry that is not a map",
                }),
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
                        .ok_or_else(|| ResourceSetError::Field {
                            field: "spec.dependsOn".to_string(),
                            reason: "entry without a name",
                        })?
                        .to_string(),
                })
            })
            .collect::<Result<Vec<_>, ResourceSetError>>()?;
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
    /// The bytes of combined inputs of each ResourceSet of the run (`cluster:namespace/name`),
    /// its last planning's.
    combined: Mutex<BTreeMap<String, u64>>,
    /// The bytes the CLI printed in the run, over every distinct build.
    printed: Mutex<u64>,
}

/// Most bytes the CLI may print over every ResourceSet build of a run (each build is also
/// within the tool box's `sandbox::OUTPUT_LIMIT`): fluxsim's own bound.
pub const MAX_RUN_OUTPUT_BYTES: u64 = 512 << 20;

/// Most bytes (as JSON) the combined inputs of every ResourceSet of a run may hold together
/// (each also within [`inputs::MAX_COMBINED_BYTES`]): fluxsim's own bound.
pub const MAX_RUN_COMBINED_BYTES: u64 = 256 << 20;

impl Runner {
    /// A runner for `binary` (`None`: `flux-operator` on PATH).
    #[must_use]
    pub fn new(binary: Option<PathBuf>) -> Runner {
        Runner {
            binary,
            ..Runner::default()
        }
    }

    /// Counts `bytes` of combined inputs for ResourceSet `rset` (`cluster:namespace/name`; a
    /// later planning of it replaces the earlier); `Err` when the run's ResourceSets would
    /// then hold more than [`MAX_RUN_COMBINED_BYTES`].
    pub fn count_combined(&self, rset: &str, bytes: u64) -> Result<(), ResourceSetError> {
        let Ok(mut all) = self.combined.lock() else {
            return Ok(());
        };
        let others: u64 = all
            .iter()
            .filter(|(k, _)| k.as_str() != rset)
            .map(|(_, b)| *b)
            .sum();
        let total = others.saturating_add(bytes);
        if total > MAX_RUN_COMBINED_BYTES {
            return Err(ResourceSetError::RunTooLarge {
                max: MAX_RUN_COMBINED_BYTES,
                total,
            });
        }
        all.insert(rset.to_string(), bytes);
        Ok(())
    }

    /// Counts `bytes` the CLI printed for one build; `Err` when the run's builds would then
    /// have printed more than [`MAX_RUN_OUTPUT_BYTES`].
    pub(crate) fn count_printed(&self, bytes: usize) -> Result<(), OperatorError> {
        let Ok(mut printed) = self.printed.lock() else {
            return Ok(());
        };
        let total = printed.saturating_add(bytes as u64);
        if total > MAX_RUN_OUTPUT_BYTES {
            return Err(format!(
                "flux-operator build rset printed {} MiB, with the run's other ResourceSets \
                 {} MiB, {} {} MiB a run",
                bytes >> 20,
                total >> 20,
                inputs::COMBINED_BOUND_WORDS,
                MAX_RUN_OUTPUT_BYTES >> 20
            )
            .into());
        }
        *printed = total;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    // fluxsim's own bounds over a run: a ResourceSet planned again replaces its count.
    #[test]
    fn a_run_s_combined_inputs_and_output_are_bounded() {
        let runner = Runner::default();
        let part = MAX_RUN_COMBINED_BYTES / 2;
        runner.count_combined("c:ns/a", part).unwrap();
        runner.count_combined("c:ns/a", part).unwrap();
        runner.count_combined("c:ns/b", part).unwrap();
        let err = runner.count_combined("c:ns/c", 1).unwrap_err().to_string();
        assert!(
            err.contains("more than fluxsim's bound of 256 MiB a run"),
            "{err}"
        );
        runner
            .count_printed(usize::try_from(MAX_RUN_OUTPUT_BYTES).unwrap())
            .unwrap();
        let err = runner.count_printed(1).unwrap_err().to_string();
        assert!(
            err.contains("more than fluxsim's bound of 512 MiB a run"),
            "{err}"
        );
    }
}
