//! Packaged charts (`.tgz`), whatever served them (a chart repository, a registry): kept in
//! the cache folder under their digest, and unpacked with nothing leaving the chart's folder.
//! The room both fetchers (`repo`, `oci`) use, so that neither imports the other for it.

use std::io::Read as _;

use super::Context;

/// The store's folder for fetched charts (base64 of the `.tgz`, keyed by its digest).
pub(crate) const SECTION: &str = "helm-charts";

/// The largest packaged chart read.
pub(crate) const MAX_CHART: u64 = 20 << 20;

/// Keeps a packaged chart in the cache folder under `key` (its digest).
pub(crate) fn keep(ctx: &Context<'_>, key: &str, bytes: &[u8]) {
    if let Some(s) = &ctx.store {
        s.put_bytes_in(SECTION, key, bytes);
    }
}

/// The chart from the cache folder, when it is there.
pub(crate) fn cached(ctx: &Context<'_>, key: &str) -> Option<Vec<u8>> {
    ctx.store.as_ref()?.get_bytes_in(SECTION, key)
}

/// The files of a packaged chart, relative to its top folder (`podinfo/Chart.yaml` is
/// `Chart.yaml`); anything that would leave that folder is an error.
pub fn untar(tgz: &[u8]) -> Result<Vec<(String, Vec<u8>)>, super::HelmError> {
    let gz = flate2::read::GzDecoder::new(tgz);
    let mut archive = tar::Archive::new(gz.take(MAX_CHART * 5));
    let mut files = Vec::new();
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let parts: Vec<String> = path
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => Ok(s.to_string_lossy().into_owned()),
                _ => Err(super::HelmError(format!(
                    "unsafe path `{}` in the chart archive",
                    path.display()
                ))),
            })
            .collect::<Result<_, _>>()?;
        let Some((_, rest)) = parts.split_first() else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        files.push((rest.join("/"), bytes));
    }
    if !files.iter().any(|(p, _)| p == "Chart.yaml") {
        return Err("no Chart.yaml in the chart archive".into());
    }
    Ok(files)
}
