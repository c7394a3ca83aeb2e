//! Simulating kustomize-controller on each cluster in its steady state: start at the root
//! Kustomization, build it, find the Flux Kustomizations it applies, and render each with the
//! vars that the cluster's objects give it, until nothing changes (a fixed point, see
//! [`render_cluster`]; where vars come from is `sources`).
//!
//! The Kustomizations of one step are built in parallel; the result is sorted, so it does
//! not depend on thread timing.

mod artifact_generator;
mod build;
mod error;
mod fixed_point;
mod git_source;
mod makers;
mod objects;
mod oci_source;
mod places;
mod pulled;
mod remote_sources;
mod resourcesets;
pub mod sources;
pub mod trees;
mod world;

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::cache::BuildCache;
use crate::discover::Cluster;
use crate::flux::NamespacedName;
use crate::model::{ClusterRender, KustomizationRender};
use crate::source::SourceFs;
pub use error::Error;
use fixed_point::render_cluster;
use sources::Outside;

/// What a changed-only render may take from an earlier render of the base revision.
#[derive(Debug, Clone, Default)]
pub struct Reuse {
    /// The base render's Kustomizations, by cluster name and id.
    pub base: BTreeMap<(String, NamespacedName), KustomizationRender>,
    /// The files (relative to the source root) that differ between base and head.
    pub changed: BTreeSet<String>,
    /// No file or folder was added or removed between base and head, only changed: every
    /// path a build looks for exists in both or in neither, so a Kustomization none of whose
    /// base inputs changed reads the same inputs in head, and can be reused unprepared.
    pub same_paths: bool,
}

/// How to render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Strict substitution (kustomize-controller's default since v1.9.0); `false` is
    /// `--no-strict`. When true, the cluster's `StrictPostBuildSubstitutions` gate decides.
    pub strict: bool,
    /// `--strict-sources`: a `substituteFrom` source made at run time (an ExternalSecret's
    /// Secret) fails the Kustomization too, instead of rendering with placeholders (one found
    /// nowhere always fails it).
    pub strict_sources: bool,
    /// Record each object's origin (see `RepoOptions::origins`).
    pub origins: bool,
    /// Reuse base renders whose inputs did not change (`diff --changed-only`).
    pub reuse: Option<std::sync::Arc<Reuse>>,
    /// Counts for a progress line, updated as the clusters render.
    pub progress: std::sync::Arc<Progress>,
    /// What builds may fetch (`--network`, or `[network] allow` in the trusted
    /// fluxsim.toml): a remote base or a URL in a file field the network permits is fetched
    /// by the kustomize binary. Otherwise such a Kustomization is `NeedsNetwork` (saying
    /// why) and nothing is fetched.
    pub network: crate::net::Network,
    /// `fluxsim build --ignore-paths` (see `RepoOptions::build_ignore`).
    pub build_ignore: Option<crate::kustomization_generator::IgnoreFor>,
    /// Runs `flux-operator build rset` for the render's ResourceSets.
    pub resourcesets: std::sync::Arc<crate::resourceset::Runner>,
    /// Keep the trees of Kustomizations built from another source (see
    /// `RepoOptions::keep_sources`).
    pub keep_sources: bool,
}

/// How far a render is, for a progress line: the Kustomizations found so far on every
/// cluster (the total grows while the fixed point discovers what the clusters apply) and
/// how many of those are rendered.
#[derive(Debug, Default)]
pub struct Progress {
    found: std::sync::atomic::AtomicUsize,
    rendered: std::sync::atomic::AtomicUsize,
}

impl Progress {
    /// Counts the ids not in `seen` yet as found (and adds them to it).
    fn found_among<'i>(
        &self,
        seen: &mut std::collections::BTreeSet<NamespacedName>,
        ids: impl Iterator<Item = &'i NamespacedName>,
    ) {
        let new = ids.filter(|id| seen.insert((*id).clone())).count();
        self.found
            .fetch_add(new, std::sync::atomic::Ordering::Relaxed);
    }

    /// Kustomizations rendered, and found so far.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.rendered.load(Relaxed), self.found.load(Relaxed))
    }
}

/// How many steps the fixed point may take before what still changes is reported.
pub const MAX_ROUNDS: usize = 64;

/// Renders every cluster in parallel; each looks its var sources up in its own objects and
/// folder only (two clusters may reuse every name).
///
/// `roots` holds, per cluster, the tree its source shows (the repository's, or a view of it
/// narrowed by that cluster's `spec.ignore`); `fs` is the repository's.
pub fn render_clusters(
    fs: &SourceFs,
    roots: &[&SourceFs],
    clusters: &[Cluster],
    cache: &BuildCache<'_>,
    opts: &RenderOptions,
    outside: &Outside,
) -> Vec<ClusterRender> {
    let homes: Vec<String> = clusters.iter().map(|c| sources::home_of(fs, c)).collect();
    clusters
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            let others: Vec<String> = homes
                .iter()
                .enumerate()
                .filter(|(j, h)| *j != i && **h != homes[i])
                .map(|(_, h)| h.clone())
                .collect();
            render_cluster(
                roots.get(i).copied().unwrap_or(fs),
                c,
                cache,
                opts,
                outside,
                &others,
            )
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)]
mod tests {
    use super::objects::{Placed, World};
    use super::sources::{Lookup, Resolution, Resolved};
    use super::*;
    use crate::flux::{Kustomization, ObjectId};
    use crate::model::VarSource;
    use crate::postbuild::kustomization::apply_time_changes;
    use serde_json::{json, Value};

    fn ks(spec: Value) -> Kustomization {
        Kustomization::from_json(&json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"}, "spec": spec
        }))
        .unwrap()
    }

    fn cm(name: &str, data: Value) -> (ObjectId, Placed) {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "flux-system"}, "data": data});
        placed(v)
    }

    fn placed(v: Value) -> (ObjectId, Placed) {
        (
            ObjectId::of(&v),
            Placed {
                object: v.into(),
                from: "applied by flux-system/vars".into(),
            },
        )
    }

    fn world(objects: impl IntoIterator<Item = (ObjectId, Placed)>) -> World {
        World {
            objects: objects.into_iter().collect(),
            declared: BTreeMap::new(),
        }
    }

    /// Resolves at the settled step of the fixed point, without `--strict-sources`.
    fn resolve_vars(
        k: &Kustomization,
        w: &World,
        notes: &mut Vec<crate::model::Note>,
    ) -> Result<BTreeMap<String, VarSource>, super::sources::VarsError> {
        resolve_with(k, w, false).map(|r| {
            notes.extend(r.notes);
            r.vars
        })
    }

    fn resolve_with(
        k: &Kustomization,
        w: &World,
        strict_sources: bool,
    ) -> Result<Resolution, super::sources::VarsError> {
        let outside = Outside::none(&SourceFs::empty("/nonexistent".into()));
        let lookup = Lookup {
            outside: &outside,
            settled: true,
            last_pass: true,
            strict_sources,
            home: "",
            other_homes: &[],
            declared_at: &|_| Some("clusters/test/apps.yaml:4".into()),
        };
        match sources::resolve(k, w, &lookup) {
            Resolved::Ready(r) => r,
            Resolved::Wait => panic!("a settled lookup never waits"),
        }
    }

    // fluxcd/pkg ssa/utils/meta.go SetCommonMetadata reads labels with GetLabels
    // (apimachinery NestedNullCoercingStringMap): null reads as "", a non-string value as
    // no labels at all.
    #[test]
    fn common_metadata_coerces_null_labels_and_drops_labels_holding_a_non_string() {
        let k = ks(json!({"commonMetadata": {"labels": {"team": "a"}}}));
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": null}, "annotations": {"n": null}}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"], json!({"app": "", "team": "a"}));
        assert_eq!(obj["metadata"]["annotations"], json!({"n": ""}));
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": "x", "version": 1}}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"], json!({"team": "a"}));
        // Without commonMetadata nothing is touched.
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": null}}});
        assert!(!apply_time_changes(&mut obj, &ks(json!({}))));
        assert_eq!(obj["metadata"]["labels"], json!({"app": null}));
    }

    // kustomize_varsub.go loadVars: substituteFrom in order, later wins; inline wins over all.
    #[test]
    fn later_substitute_from_wins_and_inline_wins_over_all() {
        let k = ks(json!({"postBuild": {
            "substitute": {"C": "inline"},
            "substituteFrom": [{"kind": "ConfigMap", "name": "a"}, {"kind": "ConfigMap", "name": "b"}]}}));
        let objects = world([
            cm("a", json!({"A": "from-a", "B": "from-a", "C": "from-a"})),
            cm("b", json!({"B": "from-b\n"})),
        ]);
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["A"].value, "from-a");
        assert_eq!(vars["B"].value, "from-b"); // and the newline is removed
        assert_eq!(
            vars["C"],
            VarSource {
                source: "inline".into(),
                from: "postBuild.substitute".into(),
                encrypted: false,
                value: "inline".into(),
            }
        );
    }

    // fluxcd/pkg kustomize/kustomize_varsub.go LoadVariables: a source that is not optional
    // and not on the cluster fails with the API server's NotFound; an optional one is
    // skipped.
    #[test]
    fn a_substitute_from_source_found_nowhere_fails_as_flux_does_and_optional_is_skipped() {
        let k =
            ks(json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone"}]}}));
        for strict_sources in [false, true] {
            let err = resolve_with(&k, &World::default(), strict_sources)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(
                    "substitute from 'ConfigMap/gone' error: configmaps \"gone\" not found \
                     (clusters/test/apps.yaml:4: `flux-system/apps` reads ConfigMap \
                     `flux-system/gone`, which no Kustomization"
                ),
                "{err}"
            );
            assert!(err.contains("[[bootstrap.objects]]") && err.contains("optional: true"));
        }
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let err = resolve_with(&k, &World::default(), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("substitute from 'Secret/s' error: secrets \"s\" not found ("),
            "{err}"
        );
        let k = ks(
            json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "gone", "optional": true}]}}),
        );
        let mut notes = Vec::new();
        assert!(resolve_vars(&k, &World::default(), &mut notes)
            .unwrap()
            .is_empty());
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn a_source_not_on_the_cluster_waits_until_the_fixed_point_settles() {
        let k =
            ks(json!({"postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "later"}]}}));
        let outside = Outside::none(&SourceFs::empty("/nonexistent".into()));
        let lookup = Lookup {
            outside: &outside,
            settled: false,
            last_pass: false,
            strict_sources: false,
            home: "",
            other_homes: &[],
            declared_at: &|_| Some("clusters/test/apps.yaml:4".into()),
        };
        assert!(matches!(
            sources::resolve(&k, &World::default(), &lookup),
            Resolved::Wait
        ));
        let w = world([cm("later", json!({"A": "1"}))]);
        let Resolved::Ready(Ok(res)) = sources::resolve(&k, &w, &lookup) else {
            panic!("resolved once the source is on the cluster");
        };
        assert_eq!(res.vars["A"].from, "applied by flux-system/vars");
    }

    #[test]
    fn secret_data_is_base64_decoded_and_string_data_read() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"TOKEN": "czNjcjN0"}, "stringData": {"USER": "admin"}});
        let objects = world([placed(s)]);
        let vars = resolve_vars(&k, &objects, &mut Vec::new()).unwrap();
        assert_eq!(vars["TOKEN"].value, "s3cr3t");
        assert_eq!(vars["USER"].value, "admin");
    }

    #[test]
    fn sops_encrypted_source_gives_placeholders_and_a_note() {
        let k = ks(json!({"postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}}));
        let s = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "flux-system"},
            "data": {"K": "ENC[AES256_GCM,data:abc,type:str]"}, "sops": {"version": "3.8.1"}});
        let objects = world([placed(s)]);
        let mut notes = Vec::new();
        let vars = resolve_vars(&k, &objects, &mut notes).unwrap();
        assert!(vars["K"].encrypted);
        // Never the ciphertext, which changes each time the file is encrypted again.
        assert_eq!(vars["K"].value, "fluxsim-unknown:Secret/flux-system/s:K");
        assert!(notes[0].to_string().contains("SOPS-encrypted"), "{notes:?}");
    }

    #[test]
    fn common_metadata_and_string_data_are_applied_as_at_apply_time() {
        let k = ks(json!({"commonMetadata": {"labels": {"team": "a"}, "annotations": {"x": "y"}}}));
        let mut obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "stringData": {"U": "admin"}});
        assert!(apply_time_changes(&mut obj, &k));
        assert_eq!(obj["metadata"]["labels"]["team"], "a");
        assert_eq!(obj["metadata"]["annotations"]["x"], "y");
        assert_eq!(obj["data"]["U"], "YWRtaW4=");
        assert!(obj.get("stringData").is_none());
        let mut plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(!apply_time_changes(&mut plain, &ks(json!({}))));
    }
}
