//! HelmReleases rendered as helm-controller would install them (`render --helm`).
//!
//! For each HelmRelease in a rendered artifact (after substitution), the chart is found
//! ([`chart`]), its values merged as helm-controller merges them ([`values`]), templated by
//! the `helm` binary with the release name and namespace the controller derives
//! ([`release`], [`template`]), and post-rendered as the controller does ([`postrender`]).
//! Each release becomes a child artifact of the Kustomization that applies its HelmRelease:
//! an entry of the cluster's render named `<kustomization>/helm/<namespace>/<name>`, with
//! `apiVersion` `helm.toolkit.fluxcd.io/v2`, so that `--out`, JSON, `diff`, `compare` and
//! `prove` treat it as they treat any artifact. A release whose chart cannot be had is
//! `external` with the reason (never compared, never identical); one whose values or
//! template fail is `failed`.

pub mod chart;
pub mod oci;
pub mod package;
pub mod postrender;
pub mod release;
pub mod repo;
pub mod schema;
mod step;
pub mod template;
pub mod values;
/// Helm's and source-controller's version ranges (Masterminds semver), now shared by the
/// registries' tags: [`crate::version_range`].
pub use crate::version_range as version;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rayon::prelude::*;

use crate::artifact::Artifact;
use crate::kustomize::Builder;
use crate::model::{ClusterRender, KustomizationRender, Status};
use crate::source::SourceFs;

pub use release::{is_helm_release, HelmRelease};
use step::{prepare_release, release_entry, release_template, template_release, Found, Prepared};

use crate::model::{is_release, RELEASE_API_VERSION};

crate::message_error! {
    /// A step of making a release's manifests that failed: running helm, fetching or
    /// unpacking a chart, reading its values files, a post-renderer.
    pub struct HelmError;
}

/// What `render --helm` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmOptions {
    /// The helm binary (default: `helm` on PATH).
    pub binary: Option<PathBuf>,
    /// Timeout for one `helm template`.
    pub timeout: Duration,
    /// Fetch charts from any host even with `--network none` (`--fetch-charts`); under
    /// another mode charts are fetched as the network permits.
    pub fetch_charts: bool,
    /// On by the command's default, not asked for (`diff`, `prove`): without a helm binary
    /// the render goes on without HelmReleases, with a warning, instead of failing.
    pub by_default: bool,
}

impl Default for HelmOptions {
    fn default() -> Self {
        HelmOptions {
            binary: None,
            timeout: Duration::from_secs(120),
            fetch_charts: false,
            by_default: false,
        }
    }
}

/// How the helm step went, for the summary line.
#[derive(Debug, Default)]
pub struct HelmStats {
    /// Releases found.
    pub releases: AtomicUsize,
    /// Distinct (chart, values, options) among them: what needs templating.
    pub distinct: AtomicUsize,
    /// Distinct releases templated by a helm run.
    pub templated: AtomicUsize,
    /// Distinct releases taken from the cache.
    pub cached: AtomicUsize,
}

/// One cluster's view of its sources, for finding charts.
pub struct ClusterSources<'a> {
    /// The cluster's name.
    pub cluster: String,
    /// Its own GitRepository and the tree that source shows.
    pub own: Option<(release::SourceRef, &'a SourceFs)>,
}

/// The templating context shared by every release of a render.
pub struct Context<'a> {
    /// helm.
    pub helm: &'a template::HelmBinary,
    /// The builder that post-renders (kustomize).
    pub builder: &'a dyn Builder,
    /// Options.
    pub opts: &'a HelmOptions,
    /// `[helm_controller]` of fluxsim.toml.
    pub config: &'a crate::config::HelmConfig,
    /// The persistent cache (charts fetched, releases templated).
    pub store: Option<crate::store::Store>,
    /// Sources mapped to folders.
    pub mapped: &'a crate::reconcile::trees::Mapped,
    /// Counters.
    pub stats: &'a HelmStats,
    /// What may be fetched: a chart (with `--fetch-charts` and `--network none`, a chart
    /// from any host), a schema's remote `$ref` (helm fetches it).
    pub network: crate::net::Network,
}

impl Context<'_> {
    /// What charts may be fetched: the network, or (`--fetch-charts` with `--network none`)
    /// charts from any host, still through the box.
    #[must_use]
    pub fn chart_network(&self) -> crate::net::Network {
        if self.opts.fetch_charts && !self.network.reaches() {
            self.network.with_mode(crate::net::NetworkMode::Any)
        } else {
            self.network.clone()
        }
    }

    /// Whether the chart `what` of `src` at `url` may be fetched; the release's reason when
    /// not (it is then not compared, never failed).
    pub(crate) fn may_fetch(
        &self,
        src: &release::SourceRef,
        url: &str,
        what: &dyn Fn() -> String,
    ) -> Result<(), chart::Unavailable> {
        match self.chart_network().permits(url) {
            Ok(()) => Ok(()),
            Err(crate::net::Refusal::Offline) => Err(chart::Unavailable(format!(
                "not fetched: {}; pass --fetch-charts to download it",
                what()
            ))),
            Err(crate::net::Refusal::NotTrusted { url }) => Err(chart::Unavailable(format!(
                "not fetched: {src}: head adds remote input {url}: review the source"
            ))),
            Err(crate::net::Refusal::Boxed(why)) => {
                Err(chart::Unavailable(format!("not fetched: {src}: {why}")))
            }
        }
    }
}

/// What the summary line says about the helm step.
#[must_use]
pub fn summary(ctx: &Context<'_>) -> String {
    let s = ctx.stats;
    format!(
        "helm {}: {}, {} distinct ({} templated, {} from the cache); `lookup` returns nothing \
         offline, so charts that use it render as on an empty cluster",
        ctx.helm.version(),
        crate::text::plural(s.releases.load(Ordering::Relaxed), "release"),
        s.distinct.load(Ordering::Relaxed),
        s.templated.load(Ordering::Relaxed),
        s.cached.load(Ordering::Relaxed),
    )
}

/// Adds a child artifact for every HelmRelease of every cluster's rendered artifacts. Each
/// distinct (chart, values, options) is templated once, however many clusters share it, so
/// the counts and the output are the same whatever the scheduling.
pub fn render_releases(
    clusters: &mut [ClusterRender],
    sources: &[ClusterSources<'_>],
    ctx: &Context<'_>,
) {
    let found: Vec<Vec<Found<'_>>> = clusters
        .iter()
        .map(|c| {
            let own = sources
                .iter()
                .find(|s| s.cluster == c.name)
                .and_then(|s| s.own.clone());
            releases_of(c, own, ctx)
        })
        .collect();
    let mut distinct: BTreeMap<&str, &Prepared> = BTreeMap::new();
    for f in found.iter().flatten() {
        if let Found::Ready { prepared, .. } = f {
            distinct.entry(prepared.key.as_str()).or_insert(prepared);
        }
    }
    ctx.stats.distinct.store(distinct.len(), Ordering::Relaxed);
    let outputs: BTreeMap<String, Result<String, HelmError>> = distinct
        .par_iter()
        .map(|(key, p)| ((*key).to_string(), template_release(p, ctx)))
        .collect();
    let made: Vec<Vec<KustomizationRender>> = found
        .into_iter()
        .map(|list| {
            list.into_iter()
                .map(|f| match f {
                    Found::Done(k) => *k,
                    Found::Ready {
                        parent,
                        id,
                        path,
                        notes,
                        prepared,
                    } => {
                        let out = outputs
                            .get(prepared.key.as_str())
                            .cloned()
                            .unwrap_or_else(|| Err("not templated".into()));
                        let (status, artifact) = match out.and_then(|t| {
                            Artifact::from_kustomize_output(t).map_err(|e| {
                                HelmError(format!("reading the release's manifests: {e}"))
                            })
                        }) {
                            Ok(a) => (Status::Rendered, Some(a)),
                            Err(e) => (Status::Failed(e.into()), None),
                        };
                        let mut k = release_entry(parent, &id, &path, status, artifact, notes);
                        k.chart_in_tree = prepared.chart.repo_dir.is_some();
                        if k.artifact.is_some() {
                            k.template = Some(release_template(parent, &id, &prepared.chart));
                            // The values come through the Kustomization's substitution.
                            k.substituted = parent.substituted;
                            k.vars.clone_from(&parent.vars);
                            k.vars_used.clone_from(&parent.vars_used);
                        }
                        k
                    }
                })
                .collect()
        })
        .collect();
    for (c, releases) in clusters.iter_mut().zip(made) {
        c.kustomizations.extend(releases);
        c.kustomizations
            .sort_by(|a, b| a.kustomization.id.cmp(&b.kustomization.id));
    }
}

/// The HelmRelease object a release entry was made from.
pub fn release_of(c: &ClusterRender, r: &KustomizationRender) -> Option<HelmRelease> {
    let parent = c
        .kustomizations
        .iter()
        .find(|k| Some(&k.kustomization.id) == r.parent.as_ref())?;
    let suffix = r
        .kustomization
        .id
        .name
        .strip_prefix(&format!("{}/helm/", parent.kustomization.id.name))?;
    parent
        .artifact
        .iter()
        .flat_map(|a| &a.objects)
        .filter(|o| is_helm_release(&o.object))
        .find(|o| {
            format!(
                "{}/{}",
                crate::flux::entry_part(&o.id.namespace),
                crate::flux::entry_part(&o.id.name)
            ) == suffix
        })
        .and_then(|o| HelmRelease::from_json(&o.object).ok())
}

/// The ConfigMaps and Secrets of a cluster's steady state (what any of its Kustomizations
/// applies), for valuesFrom.
pub fn cluster_objects(c: &ClusterRender) -> values::Objects<'_> {
    let mut objects: values::Objects<'_> = BTreeMap::new();
    for k in c.kustomizations.iter().filter(|k| !is_release(k)) {
        for o in k.artifact.iter().flat_map(|a| &a.objects) {
            let id = &o.id;
            if id.group.is_empty() && matches!(id.kind.as_str(), "ConfigMap" | "Secret") {
                objects.insert(
                    (id.kind.clone(), id.namespace.clone(), id.name.clone()),
                    o.object.as_ref(),
                );
            }
        }
    }
    objects
}

fn releases_of<'a>(
    c: &'a ClusterRender,
    own: Option<(release::SourceRef, &SourceFs)>,
    ctx: &Context<'_>,
) -> Vec<Found<'a>> {
    // The cluster's steady state: every object any Kustomization applies.
    let objects = cluster_objects(c);
    let mut source_objects = BTreeMap::new();
    let mut jobs = Vec::new();
    for k in c.kustomizations.iter().filter(|k| !is_release(k)) {
        for o in k.artifact.iter().flat_map(|a| &a.objects) {
            let id = &o.id;
            if id.group == "source.toolkit.fluxcd.io" {
                source_objects.insert(
                    release::SourceRef {
                        kind: id.kind.clone(),
                        namespace: if id.namespace.is_empty() {
                            "default".into()
                        } else {
                            id.namespace.clone()
                        },
                        name: id.name.clone(),
                    },
                    o.object.as_ref().clone(),
                );
            }
            if is_helm_release(&o.object) {
                jobs.push((k, o.object.clone()));
            }
        }
    }
    let mapped = ctx
        .mapped
        .entries
        .iter()
        .map(|(id, t)| {
            (
                release::SourceRef {
                    kind: id.kind.clone(),
                    namespace: id.namespace.clone(),
                    name: id.name.clone(),
                },
                t.as_ref().map(|t| &t.fs).map_err(Clone::clone),
                false,
            )
        })
        .collect();
    let sources = chart::Sources {
        own,
        mapped,
        objects: source_objects,
    };
    ctx.stats.releases.fetch_add(jobs.len(), Ordering::Relaxed);
    jobs.par_iter()
        .map(|(k, obj)| prepare_release(k, obj, &objects, &sources, ctx))
        .collect()
}
