//! Will it apply? Rendered Kubernetes objects checked as the API server checks Flux's
//! server-side apply, and the apply-time hazards of a change between two renders.
//!
//! This crate knows nothing of fluxsim: `serde_json` values in, [`Finding`]s out.
//!
//! # Validation: [`Validator`]
//!
//! ```
//! use kubeschema::{KubeVersion, Validator};
//! use serde_json::json;
//!
//! let mut validator = Validator::new(KubeVersion::DEFAULT);
//! // The CRDs of the same cluster's render (errors name the CRDs that cannot be read).
//! let crds: Vec<serde_json::Value> = Vec::new();
//! let _errors = validator.add_crds(&crds);
//! let deployment = json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "web", "namespace": "apps"},
//!     "spec": {"replicas": "2", "selector": {"matchLabels": {"app": "web"}},
//!              "template": {"metadata": {"labels": {"app": "web"}},
//!                           "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
//! });
//! let report = validator.validate(&deployment);
//! assert_eq!(report.findings[0].rule.id, "FS301");
//! assert_eq!(report.findings[0].path, "spec.replicas");
//! assert!(report.findings[0].message.ends_with(".spec.replicas: expected numeric (int or float), got string"));
//! ```
//!
//! What the wiring calls:
//!
//! - [`Validator::new`]`(`[`KubeVersion`]`)`: built-in kinds of one Kubernetes version
//!   ([`KubeVersion::parse`] reads `--kube-version`; [`KubeVersion::DEFAULT`] is 1.36, the
//!   newest Flux v2.9 supports; 1.24 to 1.35 are embedded too; [`KubeVersion::nearest`] maps a
//!   detected version outside them to the oldest or newest, saying it is not exact).
//! - [`Validator::add_crds`] / [`Validator::add_crd`]: the CRDs of the cluster's render and of
//!   `--schema-dir` files ([`is_crd`] tells which objects are CRDs), and the embedded CRDs of a
//!   Flux release: [`flux_crds_for`]`(`[`FluxMinor`]`)` (v2.0 to v2.9; [`FluxMinor::parse`]
//!   reads `2.4`, `v2.4.1`, `2.4.x`; [`flux_crds_of`] for some controllers; [`flux_crds`],
//!   the default, is kustomize-, source- and helm-controller's of [`FluxMinor::NEWEST`]),
//!   with [`FluxMinor::release`] saying which release and controllers they come from.
//! - [`flux_api`] / [`kube_api`]`(group, version, kind)`: which embedded Flux minors or
//!   Kubernetes versions serve an API, deprecate it (Flux), store which version (Flux), and
//!   which first stops serving it.
//! - [`Validator::set_unknown_marker`]`("fluxsim-unknown:")`: values holding fluxsim's
//!   placeholder of a var it cannot read are reported unchecked, never validated.
//! - [`Validator::set_deadline`]`(instant, "--timeout 5s")`: CEL evaluation stops there.
//! - [`Validator::validate`]`(&object) -> `[`Report`]: findings (`FS301`–`FS308`) and
//!   [`Unchecked`] entries (report them under [`rules::NOT_VALIDATED`], `FS300`). The
//!   validator is `Sync`: validate objects in parallel, then [`Report::sort`].
//! - [`compare_renders`]`(&base, &head)` over [`Applied`] objects (each with its
//!   Kustomization's `force`, `prune` and a name for it), or the pairwise [`change_hazards`]
//!   and [`deletion_hazards`]: the apply-time hazards `FS310`–`FS332`.
//! - [`policy::Policies::of`]`(objects)` and [`policy::Policies::evaluate`]`(&object, &`[`policy::Admission`]`)`:
//!   the cluster's ValidatingAdmissionPolicies and bindings on a create (matching, params,
//!   `variables`, `validations`, `auditAnnotations`, `failurePolicy`, `validationActions`),
//!   each result a violation per action, an audit annotation, or not checkable (`authorizer`
//!   is stubbed): `FS340`–`FS342`.
//! - [`rules::RULES`]: every rule, for SARIF's rule list and the README's table.
//!
//! A [`Finding`] carries the object ([`ObjectId`]), the field as a Kubernetes field path
//! (`spec.template.spec.containers[0].ports[0].containerPort`; map keys in brackets), the
//! schema path (`io.k8s.api.core.v1.ContainerPort#/properties/containerPort`, or
//! `<crd>/<version>#/properties/spec/...`), the message as the API server words it, and the
//! severity. The caller maps the object and path to a file and line.
//!
//! # What is checked, in the API server's order
//!
//! 1. **Server-side apply's typed conversion** (every kind with a schema): unknown fields
//!    (`field not declared in schema`: kustomize-controller applies with server-side apply,
//!    which rejects unknown fields of built-in kinds and of custom resources alike, whatever
//!    the field-validation level: see the note in kubernetes
//!    `test/integration/apiserver/field_validation_test.go`), scalar types (`expected numeric
//!    (int or float), got string`), maps and lists, and the keys of lists merged by key
//!    (`duplicate entries for key [name="app"]`). `x-kubernetes-preserve-unknown-fields`,
//!    objects without properties, `additionalProperties`, `x-kubernetes-int-or-string`,
//!    `x-kubernetes-embedded-resource` (apiVersion, kind, metadata added) are read as
//!    kube-openapi's `schemaconv` reads them.
//! 2. **Built-in kinds**: what decoding into the Go types rejects (a non-integral or too large
//!    integer, a bad `resource.Quantity`, bad base64 in `data`), the enums (an empty string is
//!    left to defaulting) and the required fields of the schema.
//!    **Custom resources**: the CRD's defaults filled in first (as the server's defaulting
//!    does), then the structural schema as apiextensions validates it: type
//!    (integers integral), nullable (a null of a non-nullable field is pruned, then counts as
//!    absent), required, enum, pattern, string formats (`date-time`, `date`, `byte`, `uuid*`,
//!    `ipv4`, `ipv6`, `cidr`, `mac`, `hostname`, `k8s-short-name`, `k8s-long-name`, Go
//!    durations and absolute URIs; formats the server ignores are ignored), minimum/maximum
//!    (exclusive too), multipleOf, min/max length, items and properties, allOf/anyOf/oneOf/not,
//!    and the `x-kubernetes-validations` CEL rules (with `messageExpression`, `reason`,
//!    `fieldPath`), each evaluation metered as the API server meters it: `PerCallLimit`
//!    (1,000,000) per rule, `RuntimeCELCostBudget` (10,000,000) per object, and the deadline of
//!    [`Validator::set_deadline`]; past one, the object is not validated (`FS300`), not a hang.
//!    A CRD is checked as the API server checks it when it is written: a rule whose estimated
//!    cost (lists as long as `maxItems`, or as fit in 3 MiB) is over 10,000,000, or rules whose
//!    total is over 100,000,000, make it rejected (`FS308`). See `cost.rs` for how the costs
//!    are counted (a lower bound of cel-go's).
//! 3. **Object metadata**: label keys and values, annotation keys and total size, the namespace
//!    name.
//!
//! # What is reported unchecked (never guessed)
//!
//! - a kind of a group neither Kubernetes nor an added CRD knows (`no schema for ...`), a CRD
//!   version without `openAPIV3Schema`, an object without apiVersion or kind, a SOPS-encrypted
//!   object (Flux decrypts it before applying);
//! - a CEL rule the `cel` crate cannot evaluate for this object (a Kubernetes library
//!   function it lacks: `isURL`, `quantity`, `ip`, `cidr`, `isSorted`, `sum`, list `min`/`max`
//!   and `indexOf`, `sets.*`, `format.*`, `semver`, `cel.bind`, two-variable comprehensions;
//!   or an evaluation error), and transition rules (`oldSelf`), which the server evaluates
//!   only on update;
//! - a `pattern` the `regex` crate cannot compile; the formats `email`, `isbn*`,
//!   `creditcard`, `ssn`, `rgbcolor`, and `duration`/`uri` values that are not plain Go
//!   durations or absolute URIs.
//!
//! Not checked at all: the per-kind Go validation beyond enums and required fields (name
//! formats per kind, cross-field rules such as a selector matching the template's labels),
//! admission webhooks and policies other than ValidatingAdmissionPolicies ([`policy`]),
//! whether a namespace exists.
//!
//! # Apply-time hazards
//!
//! See [`hazards`]: immutable fields (apps selectors, StatefulSet fields other than the
//! updatable ones, Job selector and template, Service clusterIP, PVC class, access modes,
//! volume mode, data source and a smaller storage request, roleRef, immutable Secret and
//! ConfigMap data), recreated when `force` is on (the Kustomization's, or the object's
//! `kustomize.toolkit.fluxcd.io/force: enabled`); prune of PVCs, Namespaces and CRDs (with
//! the custom resources that go), unless `kustomize.toolkit.fluxcd.io/prune: disabled`; moves
//! of those between Kustomizations; namespace changes; replicas to 0; `suspend: true` on a
//! Flux object; a HelmRelease chart's major version bump (exact versions only).

mod catalog;
mod cel;
mod cost;
mod escape;
mod finding;
mod flux;
mod formats;
pub mod hazards;
mod lifecycle;
mod path;
pub mod policy;
pub mod rules;
mod schema;
mod validate;
mod validator;

#[cfg(test)]
mod tests;

pub use catalog::{kube_api, KubeApiLifecycle, KubeVersion, Nearest, UnsupportedVersion};
pub use finding::{Finding, ObjectId, Report, Rule, Severity, Unchecked};
pub use flux::{
    flux_api, flux_crds, flux_crds_for, flux_crds_of, ApiLifecycle, CrdOrigin, FluxController,
    FluxMinor, FluxNearest, FluxRelease, UnsupportedFluxVersion, FLUX_CRDS_SOURCE,
};
pub use hazards::{change_hazards, compare_renders, deletion_hazards, Applied};
pub use lifecycle::{kube_lifecycle, KubeLifecycle, KubeRelease};
pub use schema::SchemaError;
pub use validator::{is_crd, CrdError, Validator};
