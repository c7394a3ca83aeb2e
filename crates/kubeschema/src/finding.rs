//! What the crate reports: findings under rules with stable ids, and what it could not check.

use serde::Serialize;
use serde_json::Value;

/// How bad a finding is. Ordered: `Info < Warning < Error`. The one severity of fluxsim: the
/// schema checks here and the audit and graph rules of `fluxsim-consumers` (which re-exports
/// it) grade their findings with it, and `--fail-on` compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never fails a run unless `--fail-on info`.
    Info,
    /// Probably wrong, or destructive on purpose.
    Warning,
    /// Flux fails (the API server rejects the apply: the Flux Kustomization fails), or
    /// applies something wrong.
    Error,
}

impl Severity {
    /// The word used in text output and JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// SARIF's `level` for this severity.
    #[must_use]
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A check: a stable id (`FS101`, `FS301`), a short name, its default severity and a help
/// text. The one rule type: the schema rules here and consumers' audit and graph rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id, never reused for another check.
    pub id: &'static str,
    /// Kebab-case name (`indexed-expansion`).
    pub name: &'static str,
    /// The default severity of its findings.
    pub severity: Severity,
    /// One sentence: what the rule finds.
    pub summary: &'static str,
    /// What to do about it.
    pub help: &'static str,
}

/// Which object: `apiVersion`, `kind`, namespace and name as the render has them.
///
/// Not core's `flux::ObjectId`: this crate depends on nothing, and validation needs the
/// version (a schema is per version); see that type for why there are three.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectId {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The version of `apiVersion` (`v1`).
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`, `""` when absent.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectId {
    /// The id of a rendered object (missing fields are empty strings).
    pub fn of(object: &Value) -> ObjectId {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        let api_version = s(object.get("apiVersion"));
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version),
        };
        let meta = object.get("metadata");
        ObjectId {
            group,
            version,
            kind: s(object.get("kind")),
            namespace: s(meta.and_then(|m| m.get("namespace"))),
            name: s(meta.and_then(|m| m.get("name"))),
        }
    }

    /// `apiVersion` as written: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The same object whatever its version: group, kind, namespace, name.
    pub fn same_object(&self, other: &ObjectId) -> bool {
        self.group == other.group
            && self.kind == other.kind
            && self.namespace == other.namespace
            && self.name == other.name
    }
}

impl std::fmt::Display for ObjectId {
    /// `Kind/namespace/name` (Flux's `FmtUnstructured`), `Kind/name` when cluster-scoped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One problem with one field of one object (or with the whole object when `path` is empty).
///
/// Not consumers' `Finding`, a place in the repository (file, line, cluster, Kustomization)
/// with related values: this crate sees objects only, so its finding names the object and
/// the field path; consumers' `validate` turns it into one with the file it was rendered from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule (id, name, default severity, summary, help).
    pub rule: Rule,
    /// This finding's severity (the rule's, or lower when Flux would recreate on purpose).
    pub severity: Severity,
    /// The object.
    pub object: ObjectId,
    /// The field, as a Kubernetes field path:
    /// `spec.template.spec.containers[0].ports[0].containerPort`, map keys in brackets
    /// (`metadata.labels[app.kubernetes.io/name]`); empty for the whole object.
    pub path: String,
    /// Where the rule comes from in the schema: `io.k8s.api.core.v1.ContainerPort.properties.containerPort`
    /// for a built-in kind, `<crd name>/<version>#/properties/spec/...` for a custom resource;
    /// empty for the apply-time hazards.
    pub schema_path: String,
    /// The message, worded as the API server (or Flux) words it where there is a wording.
    pub message: String,
}

/// Something that was not checked, and why: never a claim that it is valid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unchecked {
    /// The object.
    pub object: ObjectId,
    /// The field (empty for the whole object).
    pub path: String,
    /// Why it was not checked.
    pub reason: String,
}

/// The outcome of validating objects: findings and what was left unchecked, both sorted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Problems found.
    pub findings: Vec<Finding>,
    /// Objects, fields or rules not checked, with the reason.
    pub unchecked: Vec<Unchecked>,
}

impl Report {
    /// Appends another report (then call [`Report::sort`] before printing).
    pub fn extend(&mut self, other: Report) {
        self.findings.extend(other.findings);
        self.unchecked.extend(other.unchecked);
    }

    /// Sorts findings and unchecked entries so the output does not depend on input order.
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            (&a.object, &a.path, a.rule.id, &a.message)
                .cmp(&(&b.object, &b.path, b.rule.id, &b.message))
        });
        self.unchecked.sort();
        self.unchecked.dedup();
    }

    /// True when nothing was found (unchecked entries aside).
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}
