//! The validator: the built-in kinds of one Kubernetes version, the CRDs the caller adds,
//! and the lookup of an object's schema (`no matches for kind` when a known group does not
//! serve it, unchecked when nothing knows the group).

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;

use crate::catalog::{Catalog, KubeVersion};
use crate::finding::{Finding, ObjectId, Report, Unchecked};
use crate::rules;
use crate::schema::{apply_defaults, Arena, NodeId, SchemaError, Source, Type};
use crate::validate::{object_meta, Flavor, Walker};

/// Validates rendered objects against the schemas of one Kubernetes version and the CRDs
/// added to it. Build once per cluster render, then call [`Validator::validate`] per object
/// (from any number of threads: it is `Sync`).
#[derive(Debug)]
pub struct Validator {
    catalog: &'static Catalog,
    arena: Arena,
    /// `(group, kind)` → the CRD that defines it.
    crds: HashMap<(String, String), CrdKind>,
    /// Strings containing it are unknown values: not checked (see
    /// [`Validator::set_unknown_marker`]).
    marker: Option<String>,
    /// When CEL evaluation stops, and the words for it (see [`Validator::set_deadline`]).
    deadline: Option<(Instant, String)>,
}

#[derive(Debug)]
struct CrdKind {
    /// `metadata.name` of the CRD (`helmreleases.helm.toolkit.fluxcd.io`).
    name: String,
    namespaced: bool,
    versions: Vec<CrdVersion>,
}

#[derive(Debug)]
struct CrdVersion {
    name: String,
    served: bool,
    /// `None`: no `openAPIV3Schema`.
    root: Option<NodeId>,
    /// `<crd name>/<version>#`, for schema paths.
    label: String,
}

/// A CRD that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// Not a `CustomResourceDefinition` of `apiextensions.k8s.io/v1`.
    #[error("not an apiextensions.k8s.io/v1 CustomResourceDefinition")]
    NotACrd,
    /// A field the API server requires is missing.
    #[error("CRD `{crd}` has no `{field}`")]
    Missing {
        /// The CRD's name.
        crd: String,
        /// The missing field.
        field: &'static str,
    },
    /// Its schema refers to a definition that does not exist.
    #[error("CRD `{crd}`: {source}")]
    Schema {
        /// The CRD's name.
        crd: String,
        /// What is wrong.
        #[source]
        source: SchemaError,
    },
}

/// Is `object` a CustomResourceDefinition (of any apiextensions version)?
pub fn is_crd(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}

impl Validator {
    /// A validator for the built-in kinds of `version`, with no CRD yet.
    pub fn new(version: KubeVersion) -> Validator {
        Validator {
            catalog: Catalog::get(version),
            arena: Arena::default(),
            crds: HashMap::new(),
            marker: None,
            deadline: None,
        }
    }

    /// CEL evaluation stops at `deadline`: the rule running then and the rules not yet run
    /// are reported unchecked (saying `what`, e.g. `--timeout 5s`), never a finding.
    /// Without it, only the API server's cost bounds stop a rule.
    pub fn set_deadline(&mut self, deadline: Instant, what: impl Into<String>) {
        self.deadline = Some((deadline, what.into()));
    }

    /// Strings that contain `marker` stand for values the caller does not know (fluxsim
    /// renders a var of a source it cannot read as `fluxsim-unknown:Secret/ns/name:KEY`):
    /// such a value, and the CEL rules over an object holding one, are reported unchecked
    /// instead of being validated.
    pub fn set_unknown_marker(&mut self, marker: impl Into<String>) {
        self.marker = Some(marker.into()).filter(|m| !m.is_empty());
    }

    /// The Kubernetes version of the built-in schemas.
    pub fn kube_version(&self) -> KubeVersion {
        self.catalog.version
    }

    /// The full release the built-in schemas come from (`1.36.3`).
    pub fn kube_release(&self) -> &str {
        &self.catalog.release
    }

    /// Adds a CustomResourceDefinition (`apiextensions.k8s.io/v1`): its kind's custom
    /// resources are then validated against it. A later CRD of the same group and kind
    /// replaces an earlier one.
    pub fn add_crd(&mut self, crd: &Value) -> Result<(), CrdError> {
        if crd.get("apiVersion").and_then(Value::as_str) != Some("apiextensions.k8s.io/v1")
            || crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition")
        {
            return Err(CrdError::NotACrd);
        }
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let missing = |field| CrdError::Missing {
            crd: name.clone(),
            field,
        };
        let spec = crd.get("spec").ok_or_else(|| missing("spec"))?;
        let group = spec
            .get("group")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("spec.group"))?;
        let kind = spec
            .pointer("/names/kind")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("spec.names.kind"))?;
        let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
        let source = Source {
            definitions: &self.catalog.definitions,
        };
        let mut versions = Vec::new();
        for v in spec
            .get("versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(vname) = v.get("name").and_then(Value::as_str) else {
                continue;
            };
            let root = match v.pointer("/schema/openAPIV3Schema") {
                Some(schema) => {
                    let id = self
                        .arena
                        .compile(&source, schema, false)
                        .map_err(|source| CrdError::Schema {
                            crd: name.clone(),
                            source,
                        })?;
                    // apiextensions builder `buildKubeNative`: the root gets apiVersion, kind
                    // and metadata (ObjectMeta).
                    let mut node = self.arena.node(id).clone();
                    if node.ty.is_none() {
                        node.ty = Some(Type::Object);
                    }
                    self.arena
                        .add_type_and_object_meta(&source, &mut node)
                        .map_err(|source| CrdError::Schema {
                            crd: name.clone(),
                            source,
                        })?;
                    *self.arena.node_mut(id) = node;
                    Some(id)
                }
                None => None,
            };
            versions.push(CrdVersion {
                name: vname.to_string(),
                served: v.get("served").and_then(Value::as_bool).unwrap_or(false),
                root,
                label: format!("{name}/{vname}#"),
            });
        }
        self.crds.insert(
            (group.to_string(), kind.to_string()),
            CrdKind {
                name,
                namespaced,
                versions,
            },
        );
        Ok(())
    }

    /// Adds every CustomResourceDefinition among `objects`; returns the errors of those that
    /// cannot be read (the others are added).
    pub fn add_crds<'v>(&mut self, objects: impl IntoIterator<Item = &'v Value>) -> Vec<CrdError> {
        objects
            .into_iter()
            .filter(|o| is_crd(o))
            .filter_map(|o| self.add_crd(o).err())
            .collect()
    }

    /// Is this group/kind namespaced, by the built-in schemas or an added CRD? `None` when
    /// neither knows it.
    pub fn is_namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.catalog.namespaced(group, kind).or_else(|| {
            self.crds
                .get(&(group.to_string(), kind.to_string()))
                .map(|c| c.namespaced)
        })
    }

    /// Validates one rendered object: the findings the API server's answer to Flux's
    /// server-side apply would carry, and what could not be checked.
    pub fn validate(&self, object: &Value) -> Report {
        let id = ObjectId::of(object);
        let mut report = Report::default();
        let unchecked = |report: &mut Report, reason: String| {
            report.unchecked.push(Unchecked {
                object: id.clone(),
                path: String::new(),
                reason,
            });
        };
        if !object.is_object() || id.kind.is_empty() || id.version.is_empty() {
            unchecked(&mut report, "no apiVersion or kind".to_string());
            return report;
        }
        if object.get("sops").is_some() {
            unchecked(
                &mut report,
                "SOPS-encrypted: Flux decrypts it before applying; the encrypted form is not \
                 validated"
                    .to_string(),
            );
            return report;
        }
        if let Some(info) = self.catalog.kind(&id.group, &id.version, &id.kind) {
            let mut w = Walker::new(
                &self.catalog.arena,
                Flavor::Builtin,
                &id,
                "",
                self.marker.as_deref(),
            );
            w.run(object, info.root);
            report.extend(w.report);
            if is_crd(object) {
                cel_cost(&id, object, &mut report);
            }
        } else if let Some(crd) = self.crds.get(&(id.group.clone(), id.kind.clone())) {
            self.validate_custom(crd, &id, object, &mut report);
        } else if self.catalog.has_group(&id.group) {
            let versions = self.catalog.versions_of(&id.group, &id.kind);
            let known: Vec<&str> = versions.iter().map(String::as_str).collect();
            let note = if known.is_empty() {
                format!(
                    "Kubernetes {} has no kind {} in group `{}`",
                    self.catalog.version,
                    id.kind,
                    group_name(&id.group)
                )
            } else {
                format!(
                    "Kubernetes {} serves it in {}",
                    self.catalog.version,
                    list(&known)
                )
            };
            not_served(&mut report, &id, &note);
        } else {
            unchecked(
                &mut report,
                format!(
                    "no schema for {}.{} {}: no CRD of it in the render or the schema files",
                    id.kind,
                    group_name(&id.group),
                    id.version
                ),
            );
        }
        object_meta(&id, object, self.marker.as_deref(), &mut report);
        report.sort();
        report
    }

    /// A custom resource of a known CRD: its version's schema, or `no matches for kind`.
    fn validate_custom(&self, crd: &CrdKind, id: &ObjectId, object: &Value, report: &mut Report) {
        match crd.versions.iter().find(|v| v.name == id.version) {
            Some(CrdVersion {
                served: true,
                root: Some(root),
                label,
                ..
            }) => {
                // Validation and CEL see the object defaulted, as the server's do.
                let mut defaulted = object.clone();
                apply_defaults(&self.arena, *root, &mut defaulted);
                let mut w = Walker::new(
                    &self.arena,
                    Flavor::Custom,
                    id,
                    label,
                    self.marker.as_deref(),
                );
                w.deadline = self.deadline.as_ref().map(|(d, what)| (*d, what.as_str()));
                w.run(&defaulted, *root);
                report.extend(w.report);
            }
            Some(CrdVersion {
                served: true,
                root: None,
                ..
            }) => report.unchecked.push(Unchecked {
                object: id.clone(),
                path: String::new(),
                reason: format!(
                    "CRD `{}` has no openAPIV3Schema for {}",
                    crd.name, id.version
                ),
            }),
            _ => {
                let served: Vec<&str> = crd
                    .versions
                    .iter()
                    .filter(|v| v.served)
                    .map(|v| v.name.as_str())
                    .collect();
                not_served(
                    report,
                    id,
                    &format!("CRD `{}` serves {}", crd.name, list(&served)),
                );
            }
        }
    }

    /// Validates many objects; the report is sorted.
    pub fn validate_all<'v>(&self, objects: impl IntoIterator<Item = &'v Value>) -> Report {
        let mut report = Report::default();
        for o in objects {
            report.extend(self.validate(o));
        }
        report.sort();
        report
    }
}

fn group_name(group: &str) -> &str {
    if group.is_empty() {
        "core"
    } else {
        group
    }
}

fn list(items: &[&str]) -> String {
    if items.is_empty() {
        "no version".to_string()
    } else {
        items.join(", ")
    }
}

/// The RESTMapper's error for a kind it cannot map (apimachinery `meta.NoKindMatchError`).
/// The CRD's rules over the API server's estimated cost limits (apiextensions-apiserver
/// `pkg/apis/apiextensions/validation/validation.go`): the CRD is rejected.
fn cel_cost(id: &ObjectId, crd: &Value, report: &mut Report) {
    for v in crate::cost::crd_violations(crd, &crate::cel::compile_ast) {
        report.findings.push(Finding {
            rule: rules::CEL_COST_EXCEEDED,
            severity: rules::CEL_COST_EXCEEDED.severity,
            object: id.clone(),
            message: format!("{}: {}", v.path, v.message),
            path: v.path,
            schema_path: String::new(),
        });
    }
}

fn not_served(report: &mut Report, id: &ObjectId, note: &str) {
    report.findings.push(Finding {
        rule: rules::KIND_NOT_SERVED,
        severity: rules::KIND_NOT_SERVED.severity,
        object: id.clone(),
        path: "apiVersion".to_string(),
        schema_path: String::new(),
        message: format!(
            "no matches for kind \"{}\" in version \"{}\" ({note})",
            id.kind,
            id.api_version()
        ),
    });
}
