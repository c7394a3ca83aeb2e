//! A `HelmRelease` (helm.toolkit.fluxcd.io/v2) as fluxsim reads it from a rendered
//! artifact: which chart, which values, and the release name and namespace helm-controller
//! derives from it.

use serde_json::Value;

use crate::flux::{str_at, NamespacedName};

crate::message_error! {
    /// A HelmRelease spec that cannot be rendered as helm-controller would (what it refuses, or
    /// what fluxsim does not do).
    pub struct ReleaseSpecError;
}

pub use crate::flux::HELM_GROUP;

/// Is this object a HelmRelease?
#[must_use]
pub fn is_helm_release(obj: &Value) -> bool {
    crate::flux::ObjectId::of(obj).is_helm_release()
}

/// A reference to a Flux source object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceRef {
    /// `GitRepository`, `HelmRepository`, `Bucket`, `OCIRepository`, `HelmChart`.
    pub kind: String,
    /// Its namespace (defaults to the HelmRelease's).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl std::fmt::Display for SourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// Where the chart comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartRef {
    /// `spec.chart.spec`: a chart in a source (a path in a GitRepository or Bucket, a name in
    /// a HelmRepository).
    Template {
        /// `chart`: a path (GitRepository, Bucket) or a chart name (HelmRepository).
        chart: String,
        /// `version`: a semver range (HelmRepository only; `*` when unset).
        version: String,
        /// `sourceRef`.
        source: SourceRef,
        /// `valuesFiles`: replace the chart's `values.yaml` by these files merged.
        values_files: Vec<String>,
        /// `ignoreMissingValuesFiles`.
        ignore_missing_values_files: bool,
    },
    /// `spec.chartRef`: an OCIRepository or a HelmChart.
    Ref(SourceRef),
}

/// `install.crds`: how CRDs of the chart's `crds/` folder are applied on install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrdPolicy {
    /// Not applied.
    Skip,
    /// Applied when absent (the default).
    Create,
    /// Applied, replacing what is there.
    CreateReplace,
}

/// One `spec.valuesFrom` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValuesReference {
    /// `ConfigMap` or `Secret` (anything else is an error when resolved).
    pub kind: String,
    /// Its name, in the HelmRelease's namespace.
    pub name: String,
    /// `valuesKey`, default `values.yaml`.
    pub values_key: String,
    /// `targetPath`: the value goes there, as `helm --set` would put it.
    pub target_path: Option<String>,
    /// A missing object or key is skipped.
    pub optional: bool,
}

/// A HelmRelease, as much of it as the render needs.
#[derive(Debug, Clone, PartialEq)]
pub struct HelmRelease {
    /// `metadata.namespace`/`metadata.name`.
    pub id: NamespacedName,
    /// `spec.releaseName`.
    pub release_name: Option<String>,
    /// `spec.targetNamespace`.
    pub target_namespace: Option<String>,
    /// The chart.
    pub chart: ChartRef,
    /// `spec.valuesFrom`, in order.
    pub values_from: Vec<ValuesReference>,
    /// `spec.values` (an object, or nothing).
    pub values: serde_json::Map<String, Value>,
    /// `spec.install.crds`.
    pub crds: CrdPolicy,
    /// `spec.install.disableHooks`.
    pub disable_hooks: bool,
    /// `spec.postRenderers[].kustomize`, in order: each `{patches, images}` as written.
    pub post_renderers: Vec<Value>,
    /// `spec.commonMetadata` labels and annotations (helm-controller v1.4+).
    pub common_labels: serde_json::Map<String, Value>,
    /// See `common_labels`.
    pub common_annotations: serde_json::Map<String, Value>,
    /// `spec.suspend`.
    pub suspend: bool,
}

impl ChartRef {
    /// How a release entry names its chart: `chart@version` (the version when it is not
    /// `*`), or the chart source's reference.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            ChartRef::Template { chart, version, .. } if version != "*" => {
                format!("{chart}@{version}")
            }
            ChartRef::Template { chart, .. } => chart.clone(),
            ChartRef::Ref(r) => r.to_string(),
        }
    }
}

impl HelmRelease {
    /// Reads a HelmRelease from its JSON form; an error says which field is wrong.
    pub fn from_json(obj: &Value) -> Result<HelmRelease, ReleaseSpecError> {
        let namespace = str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string();
        let name = str_at(obj, &["metadata", "name"])
            .ok_or("a HelmRelease without metadata.name")?
            .to_string();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let s = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let source_ref = |r: &Value, what: &str| -> Result<SourceRef, ReleaseSpecError> {
            Ok(SourceRef {
                kind: s(r, "kind").ok_or(format!("{what}.kind is not set"))?,
                name: s(r, "name").ok_or(format!("{what}.name is not set"))?,
                namespace: s(r, "namespace").unwrap_or_else(|| namespace.clone()),
            })
        };
        let chart = match (spec.get("chart"), spec.get("chartRef")) {
            (Some(c), None) => {
                let t = c.get("spec").ok_or("spec.chart without spec.chart.spec")?;
                ChartRef::Template {
                    chart: s(t, "chart").ok_or("spec.chart.spec.chart is not set")?,
                    version: s(t, "version").unwrap_or_else(|| "*".into()),
                    source: source_ref(
                        t.get("sourceRef").unwrap_or(&Value::Null),
                        "spec.chart.spec.sourceRef",
                    )?,
                    values_files: t
                        .get("valuesFiles")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                    ignore_missing_values_files: t
                        .get("ignoreMissingValuesFiles")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                }
            }
            (None, Some(r)) => ChartRef::Ref(source_ref(r, "spec.chartRef")?),
            (Some(_), Some(_)) => {
                return Err("spec.chart and spec.chartRef are both set (one is allowed)".into())
            }
            (None, None) => return Err("neither spec.chart nor spec.chartRef is set".into()),
        };
        let values_from = values_from(&spec)?;
        let crds = match spec.get("install").and_then(|i| s(i, "crds")).as_deref() {
            None | Some("Create") => CrdPolicy::Create,
            Some("Skip") => CrdPolicy::Skip,
            Some("CreateReplace") => CrdPolicy::CreateReplace,
            // helm-controller internal/action/crds.go crdPolicyOrDefault.
            Some(other) => {
                return Err(format!(
                    "invalid CRD upgrade policy '{other}', valid values are 'Skip', 'Create' or \
                     'CreateReplace'"
                )
                .into())
            }
        };
        let post_renderers = spec
            .get("postRenderers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|r| r.get("kustomize").cloned())
                    .collect()
            })
            .unwrap_or_default();
        let object = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
        let common = spec.get("commonMetadata");
        Ok(HelmRelease {
            release_name: s(&spec, "releaseName"),
            target_namespace: s(&spec, "targetNamespace"),
            chart,
            values_from,
            values: object(spec.get("values")),
            crds,
            disable_hooks: spec
                .get("install")
                .and_then(|i| i.get("disableHooks"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            post_renderers,
            common_labels: object(common.and_then(|c| c.get("labels"))),
            common_annotations: object(common.and_then(|c| c.get("annotations"))),
            suspend: spec
                .get("suspend")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            id: NamespacedName { namespace, name },
        })
    }

    /// The Helm release name: `spec.releaseName`, else `[targetNamespace-]name`, shortened
    /// as helm-controller shortens it (`GetReleaseName`, then `release.ShortenName`).
    #[must_use]
    pub fn release_name(&self) -> String {
        let name = match (&self.release_name, &self.target_namespace) {
            (Some(r), _) => r.clone(),
            (None, Some(t)) => format!("{t}-{}", self.id.name),
            (None, None) => self.id.name.clone(),
        };
        shorten_name(&name)
    }

    /// The namespace the release installs into: `spec.targetNamespace`, else the
    /// HelmRelease's (`GetReleaseNamespace`).
    #[must_use]
    pub fn release_namespace(&self) -> String {
        self.target_namespace
            .clone()
            .unwrap_or_else(|| self.id.namespace.clone())
    }

    /// The release name and namespace as Helm checks them before it installs: the name as
    /// helm's `ValidateReleaseName` (pkg/chart/v2/util/validate_name.go: at most 53
    /// characters of `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`),
    /// the namespace as a DNS-1123 label, as the API server takes it. Neither can then start
    /// with `-`, so neither can be read as a flag of `helm`.
    pub fn check_names(&self) -> Result<(), ReleaseSpecError> {
        let name = self.release_name();
        if name.is_empty() {
            return Err("helm: no name provided".into());
        }
        let label = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !s.starts_with('-')
                && !s.ends_with('-')
        };
        if name.len() > 53 || !name.split('.').all(label) {
            return Err(format!(
                "invalid release name `{}`: helm's rule is at most 53 characters matching \
                 ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                name.escape_debug()
            )
            .into());
        }
        let namespace = self.release_namespace();
        if namespace.len() > 63 || !label(&namespace) {
            return Err(format!(
                "invalid release namespace `{}`: a namespace is a DNS-1123 label (at most 63 \
                 lowercase letters, digits and `-`, starting and ending with a letter or digit)",
                namespace.escape_debug()
            )
            .into());
        }
        Ok(())
    }
}

/// `spec.valuesFrom`, in order.
fn values_from(spec: &Value) -> Result<Vec<ValuesReference>, ReleaseSpecError> {
    let s = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(spec
        .get("valuesFrom")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|r| {
                    Ok(ValuesReference {
                        kind: s(r, "kind").ok_or("spec.valuesFrom entry without a kind")?,
                        name: s(r, "name").ok_or("spec.valuesFrom entry without a name")?,
                        // helm-controller api/v2 ValuesReference.GetValuesKey.
                        values_key: s(r, "valuesKey").unwrap_or_else(|| "values.yaml".into()),
                        target_path: s(r, "targetPath"),
                        optional: r.get("optional").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .transpose()?
        .unwrap_or_default())
}

/// helm-controller `internal/release/name.go` `ShortenName`: a name longer than 53 bytes
/// becomes its first 40 bytes, `-`, and the first 12 hex digits of its SHA-256.
#[must_use]
pub fn shorten_name(name: &str) -> String {
    const MAX: usize = 53;
    const HASH: usize = 12;
    if name.len() <= MAX {
        return name.to_string();
    }
    let sum = crate::digest::sha256_hex(name.as_bytes());
    // Go slices bytes; a release name is ASCII in practice, and a cut inside a character
    // would be an invalid name anyway, so the cut backs off to a character boundary.
    let mut cut = MAX - (HASH + 1);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{}", &name[..cut], &sum[..HASH])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn release(spec: &Value) -> HelmRelease {
        HelmRelease::from_json(&json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "podinfo", "namespace": "apps"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn chart() -> Value {
        json!({"spec": {"chart": "./charts/podinfo", "sourceRef": {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}}})
    }

    // helm-controller api/v2/helmrelease_types.go GetReleaseName / GetReleaseNamespace.
    #[test]
    fn release_name_is_release_name_else_target_namespace_dash_name_else_name() {
        let r = release(&json!({"chart": chart()}));
        assert_eq!(r.release_name(), "podinfo");
        assert_eq!(r.release_namespace(), "apps");
        let r = release(&json!({"chart": chart(), "targetNamespace": "web"}));
        assert_eq!(r.release_name(), "web-podinfo");
        assert_eq!(r.release_namespace(), "web");
        let r =
            release(&json!({"chart": chart(), "targetNamespace": "web", "releaseName": "front"}));
        assert_eq!(r.release_name(), "front");
        assert_eq!(r.release_namespace(), "web");
    }

    // helm-controller internal/release/name.go ShortenName (and its name_test.go cases).
    // helm pkg/chart/v2/util/validate_name.go ValidateReleaseName; a release name that
    // reached `helm template` as `--set-file=...` was read as a flag.
    #[test]
    fn a_release_name_or_namespace_helm_would_refuse_is_refused_before_helm_runs() {
        for bad in [
            "--set-file=leak=.git/config",
            "--output-dir=/tmp/x",
            "-x",
            "Upper",
            "a_b",
            "a..b",
        ] {
            let r = release(&json!({"chart": chart(), "releaseName": bad}));
            let err = r.check_names().unwrap_err();
            assert!(
                err.contains("release name") || err.contains("no name"),
                "{bad}: {err}"
            );
        }
        let r = release(&json!({"chart": chart(), "releaseName": "ok",
            "targetNamespace": "--kubeconfig=/x"}));
        assert!(r
            .check_names()
            .unwrap_err()
            .contains("invalid release namespace"));
        for good in ["podinfo", "a.b-c", "x1"] {
            let r = release(&json!({"chart": chart(), "releaseName": good}));
            assert_eq!(r.check_names(), Ok(()), "{good}");
        }
    }

    #[test]
    fn release_name_longer_than_53_is_shortened_with_a_hash() {
        let long = "some-front-appended-namespace-release-with-a-very-long-name";
        let short = shorten_name(long);
        assert_eq!(short.len(), 53);
        let sum = crate::digest::sha256_hex(long.as_bytes());
        assert_eq!(short, format!("{}-{}", &long[..40], &sum[..12]));
        let exactly = "a".repeat(53);
        assert_eq!(shorten_name(&exactly), exactly);
        let r = release(
            &json!({"chart": chart(), "targetNamespace": "a-namespace-that-is-rather-long-too-long-really"}),
        );
        assert_eq!(r.release_name().len(), 53);
    }

    // helm-controller api/v2 ValuesReference.GetValuesKey: `values.yaml` by default.
    #[test]
    fn values_key_defaults_to_values_yaml() {
        let r = release(&json!({"chart": chart(), "valuesFrom": [
            {"kind": "ConfigMap", "name": "a"},
            {"kind": "Secret", "name": "b", "valuesKey": "x", "targetPath": "p.q", "optional": true}]}));
        assert_eq!(r.values_from[0].values_key, "values.yaml");
        assert!(!r.values_from[0].optional);
        assert_eq!(r.values_from[1].target_path.as_deref(), Some("p.q"));
        assert!(r.values_from[1].optional);
    }

    // helm-controller internal/action/crds.go crdPolicyOrDefault: Create by default.
    #[test]
    fn install_crds_defaults_to_create_and_rejects_unknown_policies() {
        assert_eq!(release(&json!({"chart": chart()})).crds, CrdPolicy::Create);
        let r = release(&json!({"chart": chart(), "install": {"crds": "Skip"}}));
        assert_eq!(r.crds, CrdPolicy::Skip);
        let e = HelmRelease::from_json(&json!({"metadata": {"name": "x"},
            "spec": {"chart": chart(), "install": {"crds": "Sometimes"}}}))
        .unwrap_err();
        assert!(e.contains("invalid CRD upgrade policy 'Sometimes'"), "{e}");
    }

    #[test]
    fn source_ref_namespace_defaults_to_the_helm_release_s() {
        let r = release(
            &json!({"chart": {"spec": {"chart": "podinfo", "version": ">=6.0.0",
            "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}}}),
        );
        let ChartRef::Template {
            source, version, ..
        } = &r.chart
        else {
            panic!("a chart template");
        };
        assert_eq!(source.to_string(), "HelmRepository/apps/podinfo");
        assert_eq!(version, ">=6.0.0");
        let r = release(&json!({"chartRef": {"kind": "OCIRepository", "name": "podinfo"}}));
        assert!(matches!(r.chart, ChartRef::Ref(_)));
    }
}
