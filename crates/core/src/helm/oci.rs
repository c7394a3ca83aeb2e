//! Charts in OCI registries (`--fetch-charts`): a HelmRepository of `type: oci` (the chart is
//! `<url>/<chart>`, its version picked among the repository's tags as source-controller
//! picks it, Helm's `_` in a tag standing for `+`), or a `chartRef` to an OCIRepository (its
//! `spec.url`, at `ref.tag` or the highest tag in `ref.semver`). The manifest's Helm chart
//! layer is fetched, checked against its digest and kept in the cache folder under it. Every
//! request goes through the fetch box ([`crate::net::fetch`]); a registry that asks for a
//! token gets an anonymous one (the distribution token flow), or one bought with the
//! credential fluxsim.toml names for its host (from environment variables, never from the
//! repository's `secretRef`).

use serde_json::Value;

use super::chart::{Chart, Unavailable};
use super::release::SourceRef;
use super::Context;

pub use crate::net::oci::OciError;
use crate::net::oci::{pick_tag, Registry};

/// The media type of a Helm chart's content layer.
const CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const MAX_CHART: u64 = 20 << 20;

fn not(why: &str) -> Unavailable {
    Unavailable(format!("not fetched: {why}"))
}

/// The registry of `url` (and `name` appended: a HelmRepository's chart).
fn registry<'a>(
    url: &str,
    name: Option<&str>,
    insecure: bool,
    ctx: &'a Context<'_>,
) -> Result<Registry<'a>, OciError> {
    Registry::new(url, name, insecure, &ctx.network.fetch_box)
}

/// The chart at `tag` of `reg`: its Helm chart layer, checked against its digest (from the
/// cache folder when it is there).
fn chart_layer(
    reg: &Registry<'_>,
    tag: &str,
    ctx: &Context<'_>,
) -> Result<(Vec<u8>, String), OciError> {
    let manifest = reg.manifest(tag)?;
    let digest = manifest
        .get("layers")
        .and_then(Value::as_array)
        .and_then(|l| {
            l.iter()
                .find(|l| l.get("mediaType").and_then(Value::as_str) == Some(CHART_LAYER))
        })
        .and_then(|l| l.get("digest"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            format!(
                "{}:{tag} has no Helm chart layer ({CHART_LAYER})",
                reg.repo()
            )
        })?
        .to_string();
    let bytes = reg.blob(
        &digest,
        CHART_LAYER,
        MAX_CHART,
        &|hex| super::package::cached(ctx, hex),
        &|hex, bytes| super::package::keep(ctx, hex, bytes),
    )?;
    Ok((bytes, digest))
}

fn insecure(obj: &Value) -> bool {
    obj.get("spec")
        .and_then(|s| s.get("insecure"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn chart_of(src: &SourceRef, bytes: &[u8], label: String) -> Result<Chart, Unavailable> {
    let files = super::package::untar(bytes).map_err(|e| not(&format!("{src}: {e}")))?;
    Ok(Chart::new(files, label, None))
}

/// The chart `name` at `version` of the HelmRepository `src` of `type: oci`.
pub fn helm_repository_chart(
    src: &SourceRef,
    obj: &Value,
    name: &str,
    version: &str,
    ctx: &Context<'_>,
) -> Result<Chart, Unavailable> {
    let url = crate::flux::str_at(obj, &["spec", "url"]).unwrap_or_default();
    let reg =
        registry(url, Some(name), insecure(obj), ctx).map_err(|e| not(&format!("{src}: {e}")))?;
    let label = |tag: &str| format!("{src} {name}@{}", tag.replace('_', "+"));
    let resolution = pinned(version).then(|| Resolution::new(url, Some(name), version));
    if let Some(chart) = resolution.as_ref().and_then(|r| r.before(ctx, src, &label)) {
        return Ok(chart);
    }
    let tags = reg.tags().map_err(|e| not(&format!("{src}: {e}")))?;
    let tag = pick_tag(&tags, version).map_err(|e| not(&format!("{src}: chart `{name}`: {e}")))?;
    let (bytes, digest) = chart_layer(&reg, &tag, ctx).map_err(|e| not(&format!("{src}: {e}")))?;
    if let Some(r) = &resolution {
        r.keep(ctx, &digest, &tag);
    }
    chart_of(src, &bytes, label(&tag))
}

/// Whether `version` is one exact version (not a range): what it resolves to is kept.
fn pinned(version: &str) -> bool {
    semver::Version::parse(version.trim_start_matches('v')).is_ok()
}

/// The store's folder for exact versions resolved against a registry's tags: the chart
/// layer's digest (its bytes in [`super::package`]'s chart folder) and the tag.
const RESOLVED: &str = "helm-oci-resolved";

/// An exact chart version of a registry's repository, resolved once: read again from the
/// cache without a request, so that the CI cache makes the second run offline (as
/// `repo.rs` does for a chart repository's index). A range is resolved against the
/// tags each time: a newer chart may match it.
struct Resolution {
    key: String,
}

impl Resolution {
    fn new(url: &str, name: Option<&str>, version: &str) -> Resolution {
        let key = crate::digest::sha256_hex(
            serde_json::json!(["helm-oci", 1, url, name, version])
                .to_string()
                .as_bytes(),
        );
        Resolution { key }
    }

    /// The chart it resolved to before, when that and its layer are in the store.
    fn before(
        &self,
        ctx: &Context<'_>,
        src: &SourceRef,
        label: &dyn Fn(&str) -> String,
    ) -> Option<Chart> {
        let text = ctx.store.as_ref()?.get_in(RESOLVED, &self.key)?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let hex = v.get("digest")?.as_str()?.strip_prefix("sha256:")?;
        let tag = v.get("tag")?.as_str()?;
        let bytes = super::package::cached(ctx, hex)?;
        if crate::digest::sha256_hex(&bytes) != hex {
            return None;
        }
        chart_of(src, &bytes, label(tag)).ok()
    }

    fn keep(&self, ctx: &Context<'_>, digest: &str, tag: &str) {
        if let Some(s) = &ctx.store {
            s.put_in(
                RESOLVED,
                &self.key,
                &serde_json::json!({"digest": digest, "tag": tag}).to_string(),
            );
        }
    }
}

/// The chart an OCIRepository (`spec.url`, `spec.ref.tag` or `spec.ref.semver`) holds.
pub fn oci_repository_chart(
    src: &SourceRef,
    obj: &Value,
    ctx: &Context<'_>,
) -> Result<Chart, Unavailable> {
    let url = crate::flux::str_at(obj, &["spec", "url"]).unwrap_or_default();
    let reg = registry(url, None, insecure(obj), ctx).map_err(|e| not(&format!("{src}: {e}")))?;
    let label = |tag: &str| format!("{src} {url}:{tag}");
    let semver = crate::flux::str_at(obj, &["spec", "ref", "semver"]);
    let exact = semver
        .or_else(|| crate::flux::str_at(obj, &["spec", "ref", "tag"]))
        .filter(|v| pinned(v));
    let resolution = exact.map(|v| Resolution::new(url, None, v));
    if let Some(chart) = resolution.as_ref().and_then(|r| r.before(ctx, src, &label)) {
        return Ok(chart);
    }
    let tag = if let Some(range) = semver {
        let tags = reg.tags().map_err(|e| not(&format!("{src}: {e}")))?;
        pick_tag(&tags, range).map_err(|e| not(&format!("{src}: {e}")))?
    } else if let Some(t) = crate::flux::str_at(obj, &["spec", "ref", "tag"]) {
        t.to_string()
    } else if crate::flux::str_at(obj, &["spec", "ref", "digest"]).is_some() {
        return Err(not(&format!("{src}: ref.digest is not supported")));
    } else {
        "latest".to_string()
    };
    let (bytes, digest) = chart_layer(&reg, &tag, ctx).map_err(|e| not(&format!("{src}: {e}")))?;
    if let Some(r) = &resolution {
        r.keep(ctx, &digest, &tag);
    }
    chart_of(src, &bytes, label(&tag))
}
