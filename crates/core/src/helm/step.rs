//! One release: its chart and values prepared (with the cache key of its output), templated
//! and post-rendered (or taken from the cache folder), and made an entry of the cluster's
//! render.

use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::artifact::Artifact;
use crate::flux::{Kustomization, NamespacedName};
use crate::model::{KustomizationRender, Note, Status};

use super::{
    chart, oci, postrender, release, repo, template, values, Context, HelmRelease,
    RELEASE_API_VERSION,
};

/// A release ready to template: everything its output depends on, and its cache key.
pub(super) struct Prepared {
    pub(super) hr: HelmRelease,
    pub(super) chart: chart::Chart,
    pub(super) values: String,
    pub(super) key: String,
}

/// A release found in an artifact: its entry made, or prepared for templating.
pub(super) enum Found<'a> {
    Done(Box<KustomizationRender>),
    Ready {
        parent: &'a KustomizationRender,
        id: NamespacedName,
        path: String,
        notes: Vec<Note>,
        prepared: Box<Prepared>,
    },
}

/// A release's entry: its id under the Kustomization, and what became of it.
pub(super) fn release_entry(
    parent: &KustomizationRender,
    hr_id: &NamespacedName,
    path: &str,
    status: Status,
    artifact: Option<Artifact>,
    notes: Vec<Note>,
) -> KustomizationRender {
    let ks = &parent.kustomization.id;
    let kustomization = Kustomization::from_json(&serde_json::json!({
        "apiVersion": RELEASE_API_VERSION,
        "kind": "HelmRelease",
        "metadata": {
            "namespace": ks.namespace,
            "name": format!(
                "{}/helm/{}/{}",
                ks.name,
                crate::flux::entry_part(&hr_id.namespace),
                crate::flux::entry_part(&hr_id.name)
            ),
        },
        "spec": {"path": path, "prune": true},
    }))
    .expect("a fixed shape");
    KustomizationRender {
        artifact,
        notes,
        strict: parent.strict,
        ..KustomizationRender::new(kustomization, Some(ks.clone()), status)
    }
}

/// What a release is made from before substitution: its chart and the template of the
/// Kustomization that applies its HelmRelease (where its values are written). Two clusters
/// with the same one differ in the release only through their vars (`compare`).
pub(super) fn release_template(
    parent: &KustomizationRender,
    id: &NamespacedName,
    chart: &chart::Chart,
) -> Artifact {
    let text = format!(
        "helmrelease {id}\nchart {}\nkustomization template {}\n",
        chart.digest,
        parent.template.as_ref().map_or("-", |t| t.sha256.as_str())
    );
    Artifact {
        sha256: crate::digest::sha256_hex(text.as_bytes()),
        objects: Vec::new(),
        yaml: text,
    }
}

pub(super) fn prepare_release<'a>(
    parent: &'a KustomizationRender,
    obj: &Value,
    objects: &values::Objects<'_>,
    sources: &chart::Sources<'_>,
    ctx: &Context<'_>,
) -> Found<'a> {
    let id = NamespacedName {
        namespace: crate::flux::str_at(obj, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_string(),
        name: crate::flux::str_at(obj, &["metadata", "name"])
            .unwrap_or_default()
            .to_string(),
    };
    let hr = match HelmRelease::from_json(obj) {
        Ok(hr) => hr,
        Err(e) => {
            return Found::Done(Box::new(release_entry(
                parent,
                &id,
                "",
                Status::Failed(format!("HelmRelease {id}: {e}")),
                None,
                Vec::new(),
            )))
        }
    };
    let path = hr.chart.label();
    let done = |status| {
        Found::Done(Box::new(release_entry(
            parent,
            &id,
            &path,
            status,
            None,
            Vec::new(),
        )))
    };
    if hr.suspend {
        return done(Status::Suspended);
    }
    let fetch = |src: &release::SourceRef, spec: &Value, name: &str, version: &str| {
        repo::fetch_chart(src, spec, name, version, ctx)
    };
    let fetch_ref = |src: &release::SourceRef, obj: &Value| {
        let url = crate::flux::str_at(obj, &["spec", "url"]).unwrap_or_default();
        ctx.may_fetch(src, url, &|| format!("the chart of {src} ({url})"))?;
        oci::oci_repository_chart(src, obj, ctx)
    };
    let chart = match chart::resolve(&hr, sources, &fetch, &fetch_ref) {
        Ok(c) => c,
        // A chart that cannot be had offline is external; one that the repository gets
        // wrong (no Chart.yaml there, a values file missing) fails the release.
        Err(chart::Unavailable(why)) if why.starts_with("not fetched") => {
            return done(Status::External(why))
        }
        Err(chart::Unavailable(why)) => return done(Status::Failed(why)),
    };
    if let Some(status) = refused(&hr, &chart, ctx) {
        return done(status);
    }
    let values = match values::merged_values(&hr, objects) {
        Ok(v) => v,
        Err(e @ values::ValuesError::Encrypted { .. }) => {
            return done(Status::External(e.to_string()))
        }
        Err(e) => return done(Status::Failed(e.to_string())),
    };
    let values = match serde_json::to_string_pretty(&values) {
        Ok(v) => v,
        Err(e) => return done(Status::Failed(e.to_string())),
    };
    let mut notes = vec![Note::HelmRelease {
        release: hr.release_name().clone(),
        namespace: hr.release_namespace().clone(),
        chart: chart.label.clone(),
        digest: chart.digest.clone(),
        chart_name: chart.name().unwrap_or_default(),
        chart_version: chart.version().unwrap_or_default(),
    }];
    if !hr.common_labels.is_empty() || !hr.common_annotations.is_empty() {
        notes.push(Note::HelmCommonMetadataIgnored);
    }
    let key = cache_key(&hr, &chart, &values, ctx);
    Found::Ready {
        parent,
        path: path.clone(),
        id: id.clone(),
        notes,
        prepared: Box::new(Prepared {
            hr,
            chart,
            values,
            key,
        }),
    }
}

/// Why a release must not reach helm, checked before anything of it does: names that helm
/// refuses (or would read as a flag), and schema references that leave the chart.
fn refused(hr: &HelmRelease, chart: &chart::Chart, ctx: &Context<'_>) -> Option<Status> {
    if let Err(e) = hr.check_names() {
        return Some(Status::Failed(e.into()));
    }
    match super::schema::outside_reference(&chart.files)? {
        found @ super::schema::Outside::Network { .. } if !ctx.network.reaches() => {
            Some(Status::NeedsNetwork(found.to_string()))
        }
        found @ super::schema::Outside::File { .. } => Some(Status::Failed(found.to_string())),
        super::schema::Outside::Network { file, reference } => {
            match ctx.network.permits(&reference) {
                Ok(()) => None,
                Err(refusal) => Some(Status::NeedsNetwork(format!(
                    "{file}: `{reference}` would be fetched while Helm validates the values: \
                     {refusal}"
                ))),
            }
        }
    }
}

/// The cache key of a release's output: everything it depends on.
fn cache_key(hr: &HelmRelease, chart: &chart::Chart, values: &str, ctx: &Context<'_>) -> String {
    let parts = serde_json::json!({
        "v": 1,
        "chart": chart.digest,
        "values": crate::digest::sha256_hex(values.as_bytes()),
        "release": hr.release_name(),
        "namespace": hr.release_namespace(),
        "hr": [hr.id.namespace, hr.id.name],
        "crds": format!("{:?}", hr.crds),
        "hooks": hr.disable_hooks,
        "postRenderers": hr.post_renderers,
        "config": [ctx.config.kube_version, ctx.config.api_versions],
        "helm": ctx.helm.version(),
        "builder": ctx.builder.identity(),
        "fluxsim": env!("CARGO_PKG_VERSION"),
    });
    crate::digest::sha256_hex(parts.to_string().as_bytes())
}

/// The store's folder for templated releases.
const SECTION: &str = "helm-releases";

/// Templates and post-renders one release (or takes it from the cache).
pub(super) fn template_release(
    p: &Prepared,
    ctx: &Context<'_>,
) -> Result<String, super::HelmError> {
    let Prepared {
        hr,
        chart,
        values,
        key,
    } = p;
    if let Some(hit) = ctx.store.as_ref().and_then(|s| s.get_in(SECTION, key)) {
        ctx.stats.cached.fetch_add(1, Ordering::Relaxed);
        return Ok(hit);
    }
    let work = crate::scratch::tempdir(crate::scratch::Kind::Helm)
        .map_err(|e| format!("making a scratch folder: {e}"))?;
    let chart_dir = work.path().join("chart");
    chart
        .write_to(&chart_dir)
        .map_err(|e| format!("writing the chart: {e}"))?;
    let values_file = work.path().join("values.json");
    std::fs::write(&values_file, values).map_err(|e| format!("writing values: {e}"))?;
    let out = ctx.helm.template(&template::TemplateJob {
        chart_dir: &chart_dir,
        release: &hr.release_name(),
        namespace: &hr.release_namespace(),
        values_file: &values_file,
        include_crds: hr.crds != release::CrdPolicy::Skip,
        no_hooks: hr.disable_hooks,
        kube_version: ctx.config.kube_version.as_deref(),
        api_versions: &ctx.config.api_versions,
        home: &work.path().join("home"),
        network: ctx.network.reaches(),
    })?;
    ctx.stats.templated.fetch_add(1, Ordering::Relaxed);
    let chart_name = chart.name().unwrap_or_default();
    let (crds, templates) = template::split_crds(&out, &chart_name);
    let text = postrender::post_render(
        ctx.builder,
        &work.path().join("post"),
        hr,
        &crds,
        &templates,
    )?;
    if let Some(s) = &ctx.store {
        s.put_in(SECTION, key, &text);
    }
    Ok(text)
}
