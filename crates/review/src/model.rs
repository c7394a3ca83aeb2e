//! The input: a change between two revisions as the caller computed it, cluster by cluster.
//! Values only (objects as JSON, names and messages as strings), so that nothing of the
//! caller's types leaks in: fluxsim's `compare::RevisionDiff`, its image diff, its prune
//! list and its audit findings map onto it field by field (see the crate documentation).

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything under review: two revisions, per cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// The base revision as the user named it (`main`).
    pub base: String,
    /// The head revision (`feature`, `work tree`).
    pub head: String,
    /// Every cluster of either revision.
    pub clusters: Vec<Cluster>,
    /// What the reports are called (`fluxsim diff`); empty: `fluxsim review`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// The verdict the caller reached (`prove`'s), first in every report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Sentences the summary adds after its counts (what the canaries prove, what was
    /// taken from base), in which `` `...` `` marks code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Sections after the details (`prove`'s canaries), folded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
}

/// A verdict: whether it passed, and in words.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Passed (✅), failed (❌), or neither (a diff reports, it does not judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// `2 Kustomizations change, the proof holds`, a sentence where `` `...` `` marks code.
    pub text: String,
}

/// A list after the details: its title (fluxsim's words) and its items (sentences where
/// `` `...` `` marks code).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// `Canaries`.
    pub title: String,
    /// One sentence each.
    pub items: Vec<String>,
}

/// Whether a cluster is in both revisions or one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// In base and head.
    #[default]
    Both,
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
}

/// One cluster's change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// Its name (`prod`).
    pub name: String,
    /// In both revisions or one.
    #[serde(default)]
    pub presence: Presence,
    /// Every Kustomization and HelmRelease of either revision (identical ones are counted
    /// and otherwise not shown; they may be left out).
    #[serde(default)]
    pub units: Vec<Unit>,
    /// What failed to render by itself (not below a failed parent).
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// Objects Flux's garbage collection deletes when head is applied.
    #[serde(default)]
    pub prune_deletions: Vec<Deletion>,
    /// Container images that change.
    #[serde(default)]
    pub image_bumps: Vec<ImageBump>,
    /// Hazards the change brings, as sentences in which `` `...` `` marks code (fluxsim's
    /// findings, moves with a prune outage ...).
    #[serde(default)]
    pub hazards: Vec<String>,
}

/// What renders a set of objects.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum UnitKind {
    /// A Flux Kustomization (`kustomize.toolkit.fluxcd.io`).
    #[default]
    Kustomization,
    /// A Flux HelmRelease (`helm.toolkit.fluxcd.io`), rendered as helm-controller installs
    /// it.
    HelmRelease,
}

impl UnitKind {
    /// `Kustomization`, `HelmRelease`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Kustomization => "Kustomization",
            UnitKind::HelmRelease => "HelmRelease",
        }
    }

    /// `Kustomizations`, `HelmReleases`.
    #[must_use]
    pub fn plural(self) -> &'static str {
        match self {
            UnitKind::Kustomization => "Kustomizations",
            UnitKind::HelmRelease => "HelmReleases",
        }
    }
}

/// What became of a Kustomization or HelmRelease between the revisions.
///
/// Not core's `model::Status` (what became of one render: rendered, failed, external, ...):
/// this is a unit between two revisions. Consumers' `compare::Change` adds
/// `ExternalUnchanged` to these five, which a review's input never holds.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The same artifact.
    Identical,
    /// Rendered in both, different.
    #[default]
    Changed,
    /// Only in head.
    Added,
    /// Only in base.
    Removed,
    /// Not rendered in a revision where it exists (failed, blocked, suspended, external):
    /// what it applies there is unknown.
    #[serde(rename = "not compared")]
    NotCompared,
}

impl Status {
    /// The word used in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Identical => "identical",
            Status::Changed => "changed",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::NotCompared => "not compared",
        }
    }
}

/// A Kustomization or a HelmRelease and its objects in both revisions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// Kustomization or HelmRelease.
    pub kind: UnitKind,
    /// `namespace/name`.
    pub name: String,
    /// The Kustomization that applies it (a HelmRelease's), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What became of it.
    pub status: Status,
    /// Why it was not compared (`failed: ...`), a sentence where `` `...` `` marks code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Its objects: on one side (added, removed) or both (changed, or identical: the
    /// caller may pass only those that differ). Objects with the same values on both sides
    /// are not shown.
    #[serde(default)]
    pub objects: Vec<Object>,
    /// The ids of its objects in apply order in each revision, when the caller has them: a
    /// different order of the same objects is shown as one "order changed" line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// A HelmRelease whose chart's name or version differs between base and head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartBump>,
    /// How people read it, when its kind and name are not that (a ResourceSet's entry:
    /// `ResourceSet flux-operator (from flux-system)`); the JSON keeps `kind` and `name`.
    #[serde(default, skip_serializing)]
    pub shown: Option<Shown>,
    /// Its objects, moving to another unit, are deleted first: a Kustomization with `prune:
    /// true` in base (the caller's move hazard), a HelmRelease that its parent prunes (its
    /// release is uninstalled); read for a removed unit that a rename pairs with an added
    /// one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moves_pruned: bool,
}

/// A unit as the text, Markdown and HTML reports name it: `{kind} {name} (from {from})`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shown {
    /// The kind people read (`ResourceSet`).
    pub kind: String,
    /// Its name (`flux-operator`, or `namespace/name` outside the parent's namespace).
    pub name: String,
    /// What applies it (`flux-system`).
    pub from: String,
}

/// A release's chart in base and head (`podinfo` `6.4.0` → `6.5.0`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChartBump {
    /// The chart's name.
    pub name: String,
    /// Its version in base (`name@version` when the name changed too).
    pub base: String,
    /// Its version in head.
    pub head: String,
}

/// The objects of a unit in each revision's order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// In base.
    pub base: Vec<ObjectId>,
    /// In head.
    pub head: Vec<ObjectId>,
}

/// The identity of a Kubernetes object (as fluxsim's `flux::ObjectId`, and Flux's
/// inventory): its API group, kind, namespace and name.
///
/// Its own type, not core's: this crate depends on nothing of fluxsim, and it sorts by kind
/// first (how a reviewer looks for an object), where core's sorts by group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ObjectId {
    /// API group, empty for the core group.
    #[serde(default)]
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    #[serde(default)]
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectId {
    /// The id of a Kubernetes object (`apiVersion`, `kind`, `metadata.namespace`,
    /// `metadata.name`).
    #[must_use]
    pub fn of(object: &Value) -> Self {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        let api_version = s(object.get("apiVersion"));
        let meta = object.get("metadata");
        ObjectId {
            group: api_version
                .rsplit_once('/')
                .map_or("", |(g, _)| g)
                .to_string(),
            kind: s(object.get("kind")),
            namespace: s(meta.and_then(|m| m.get("namespace"))),
            name: s(meta.and_then(|m| m.get("name"))),
        }
    }

    /// `namespace/name`, or `name` for a cluster-scoped object.
    #[must_use]
    pub fn namespaced_name(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }

    fn sort_key(&self) -> (&str, &str, &str, &str) {
        (&self.kind, &self.namespace, &self.name, &self.group)
    }
}

/// Objects sort by kind, namespace, name, then group: how a reviewer looks for them.
impl Ord for ObjectId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl PartialOrd for ObjectId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The API groups of Kubernetes itself: their kinds are named without the group (a
/// `Deployment` is `apps`'), a custom resource's with it (`Certificate.cert-manager.io`).
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// `Deployment apps/podinfo`, `ClusterRole view`, `Certificate.cert-manager.io apps/web`.
impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.kind)?;
        if !BUILT_IN_GROUPS.contains(&self.group.as_str()) {
            write!(f, ".{}", self.group)?;
        }
        write!(f, " {}", self.namespaced_name())
    }
}

/// One object in base and head (Secret data masked by the caller unless it is to be shown).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Object {
    /// Which object.
    pub id: ObjectId,
    /// Its value in base, `None` when it is only in head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Value>,
    /// Its value in head, `None` when it is only in base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Value>,
}

/// A Kustomization that failed to render by itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `namespace/name`.
    pub unit: String,
    /// `base`, `head` or `base and head`.
    pub side: String,
    /// Why it failed (may hold several lines).
    pub error: String,
    /// How many Kustomizations it applies are not compared because of it.
    #[serde(default)]
    pub below: usize,
}

impl Failure {
    /// It fails in head only: what the change broke, listed before what failed already.
    #[must_use]
    pub fn is_new(&self) -> bool {
        self.side == "head"
    }
}

/// An object Flux deletes when head is applied (garbage collection of a Kustomization with
/// `prune: true`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Deletion {
    /// The Kustomization whose inventory held it.
    pub unit: String,
    /// The object.
    pub object: ObjectId,
}

/// A container image that changes in an object (as fluxsim's `images::ImageChange`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImageBump {
    /// The Kustomization or HelmRelease that applies the object.
    pub unit: String,
    /// The object.
    pub object: ObjectId,
    /// Where in the object (`spec.template.spec.containers[name=app].image`).
    #[serde(default)]
    pub path: String,
    /// The image in base (`None`: added).
    #[serde(default)]
    pub base: Option<String>,
    /// The image in head (`None`: removed).
    #[serde(default)]
    pub head: Option<String>,
}

/// An image reference split into its repository and the rest: its tag, its digest, or both
/// (`ghcr.io/x/podinfo`, `6.5.0@sha256:...`).
#[must_use]
pub fn split_image(image: &str) -> (&str, &str) {
    let name = image.split_once('@').map_or(image, |(n, _)| n);
    match name.rfind(':') {
        Some(i) if !name[i..].contains('/') => (&image[..i], &image[i + 1..]),
        _ if name.len() < image.len() => (name, &image[name.len() + 1..]),
        _ => (image, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_ids_read_the_object_and_show_kind_group_and_name() {
        let id = ObjectId::of(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                                      "metadata": {"name": "web", "namespace": "apps"}}));
        assert_eq!(id.to_string(), "Deployment apps/web");
        let cr = ObjectId::of(
            &json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                                      "metadata": {"name": "web", "namespace": "apps"}}),
        );
        assert_eq!(cr.to_string(), "Certificate.cert-manager.io apps/web");
        let core = ObjectId::of(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
        );
        assert_eq!(core.to_string(), "Namespace apps");
    }

    #[test]
    fn images_split_at_their_tag_or_digest() {
        assert_eq!(
            split_image("ghcr.io/x/podinfo:6.5.0"),
            ("ghcr.io/x/podinfo", "6.5.0")
        );
        assert_eq!(split_image("localhost:5000/x"), ("localhost:5000/x", ""));
        assert_eq!(split_image("x@sha256:ab"), ("x", "sha256:ab"));
        assert_eq!(
            split_image("ghcr.io/x:1.0@sha256:ab"),
            ("ghcr.io/x", "1.0@sha256:ab")
        );
    }
}
