//! Charts of HelmRepositories: the HTTP(S) `index.yaml`, a version range resolved against it
//! as source-controller resolves it ([`super::version::pick`]), and the packaged chart
//! (`.tgz`) fetched, checked against the index's digest and kept in the cache folder under
//! that digest. Only with `--fetch-charts`; without it, and for OCI repositories, the
//! release says why its chart was not fetched.

use serde_json::Value;

use super::chart::{Chart, Unavailable};
use super::release::SourceRef;
use super::Context;

/// Helm's `MaxIndexSize`: what a server may make fluxsim read of an index.
const MAX_INDEX: u64 = 32 << 20;
use super::package::{cached, keep, untar, MAX_CHART};

/// The chart `name` at `version` (a semver range) of the HelmRepository `src`.
pub fn fetch_chart(
    src: &SourceRef,
    obj: &Value,
    name: &str,
    version: &str,
    ctx: &Context<'_>,
) -> Result<Chart, Unavailable> {
    let url = crate::flux::str_at(obj, &["spec", "url"]).unwrap_or_default();
    let not = |why: String| Unavailable(format!("not fetched: {why}"));
    ctx.may_fetch(src, url, &|| {
        format!("chart `{name}` version `{version}` from {src} ({url})")
    })?;
    if crate::flux::str_at(obj, &["spec", "type"]) == Some("oci") || url.starts_with("oci://") {
        return super::oci::helm_repository_chart(src, obj, name, version, ctx);
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(not(format!("{src}: `{url}` is not an http(s) URL")));
    }
    let fetch_box = &ctx.network.fetch_box;
    // An exact version resolved before, and its chart kept: nothing is fetched (the CI
    // cache makes the second run offline). A range is resolved against the index each time:
    // a newer chart may match it.
    let pinned = semver::Version::parse(version.trim_start_matches('v')).is_ok();
    let resolution_key = crate::digest::sha256_hex(
        serde_json::json!(["helm-index", 1, url, name, version])
            .to_string()
            .as_bytes(),
    );
    if pinned {
        if let Some(chart) = resolved_before(ctx, &resolution_key, src, name) {
            return Ok(chart);
        }
    }
    let index_url = format!("{}/index.yaml", url.trim_end_matches('/'));
    let index = get(fetch_box, &index_url, MAX_INDEX).map_err(|e| not(format!("{src}: {e}")))?;
    let index = crate::manifest::parse_object(&String::from_utf8_lossy(&index))
        .map_err(|e| not(format!("{src}: reading {index_url}: {e}")))?;
    let entries = index
        .get("entries")
        .and_then(|e| e.get(name))
        .and_then(Value::as_array)
        .ok_or_else(|| not(format!("{src}: no chart `{name}` in {index_url}")))?;
    let versions: Vec<(&str, &str)> = entries
        .iter()
        .filter_map(|e| {
            Some((
                e.get("version")?.as_str()?,
                e.get("created").and_then(Value::as_str).unwrap_or(""),
            ))
        })
        .collect();
    let picked = super::version::pick(&versions, version)
        .map_err(|e| not(format!("{src}: chart `{name}`: {e}")))?;
    let entry = entries
        .iter()
        .find(|e| e.get("version").and_then(Value::as_str) == Some(picked))
        .ok_or_else(|| not(format!("{src}: chart `{name}` {picked} vanished")))?;
    let chart_url = entry
        .get("urls")
        .and_then(Value::as_array)
        .and_then(|u| u.first())
        .and_then(Value::as_str)
        .ok_or_else(|| not(format!("{src}: chart '{name}' has no downloadable URLs")))?;
    let chart_url = resolve_reference_url(url, chart_url);
    let digest = entry
        .get("digest")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let key = digest
        .clone()
        .unwrap_or_else(|| crate::digest::sha256_hex(format!("url\0{chart_url}").as_bytes()));
    let tgz = cached(ctx, &key).map_or_else(
        || -> Result<Vec<u8>, Unavailable> {
            let bytes =
                get(fetch_box, &chart_url, MAX_CHART).map_err(|e| not(format!("{src}: {e}")))?;
            let got = crate::digest::sha256_hex(&bytes);
            if let Some(want) = &digest {
                if &got != want {
                    return Err(not(format!(
                        "{src}: {chart_url} has digest {got}, the index says {want}"
                    )));
                }
            }
            keep(ctx, &key, &bytes);
            Ok(bytes)
        },
        Ok,
    )?;
    let files = untar(&tgz).map_err(|e| not(format!("{src}: {chart_url}: {e}")))?;
    if pinned {
        if let Some(s) = &ctx.store {
            s.put_in(
                RESOLVED,
                &resolution_key,
                &serde_json::json!({"chart": key, "version": picked}).to_string(),
            );
        }
    }
    Ok(Chart::new(files, format!("{src} {name}@{picked}"), None))
}

/// The store's folder for exact chart versions resolved against an index: the key of the
/// chart they resolved to (in [`super::package::SECTION`]).
const RESOLVED: &str = "helm-resolved";

/// The chart an exact version resolved to before, when it and its package are in the store.
fn resolved_before(
    ctx: &Context<'_>,
    resolution_key: &str,
    src: &SourceRef,
    name: &str,
) -> Option<Chart> {
    let text = ctx.store.as_ref()?.get_in(RESOLVED, resolution_key)?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let key = v.get("chart")?.as_str()?;
    let picked = v.get("version")?.as_str()?;
    let tgz = cached(ctx, key)?;
    let files = untar(&tgz).ok()?;
    Some(Chart::new(files, format!("{src} {name}@{picked}"), None))
}

/// GET through the fetch box (the user's credential for the host, if any); a status that
/// is no success is an error.
fn get(
    fetch_box: &crate::net::fetch::FetchBox,
    url: &str,
    limit: u64,
) -> Result<Vec<u8>, super::HelmError> {
    let res = fetch_box
        .get(url, None, &crate::net::fetch::Auth::Host, limit)
        .map_err(|e| super::HelmError(e.0))?;
    if !res.ok() {
        return Err(format!("GET {url}: status {}", res.status).into());
    }
    Ok(res.body)
}

/// Helm's `repo.ResolveReferenceURL`: a chart URL of the index is absolute, or relative to
/// the repository URL (as a folder).
#[must_use]
pub fn resolve_reference_url(base: &str, reference: &str) -> String {
    if reference.contains("://") {
        return reference.to_string();
    }
    let (base, query) = base.split_once('?').map_or((base, ""), |(b, q)| (b, q));
    let joined = if let Some(rest) = reference.strip_prefix('/') {
        // Relative to the host.
        let after_scheme = base.find("://").map_or(0, |i| i + 3);
        let host_end = base[after_scheme..]
            .find('/')
            .map_or(base.len(), |i| after_scheme + i);
        format!("{}/{rest}", &base[..host_end])
    } else {
        format!("{}/{reference}", base.trim_end_matches('/'))
    };
    if query.is_empty() {
        joined
    } else {
        format!("{joined}?{query}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // helm pkg/repo/chartrepo.go ResolveReferenceURL.
    #[test]
    fn chart_urls_resolve_against_the_repository_url() {
        assert_eq!(
            resolve_reference_url("https://charts.example.net/stable", "podinfo-6.5.0.tgz"),
            "https://charts.example.net/stable/podinfo-6.5.0.tgz"
        );
        assert_eq!(
            resolve_reference_url(
                "https://charts.example.net/stable/",
                "https://cdn.example.net/p.tgz"
            ),
            "https://cdn.example.net/p.tgz"
        );
        assert_eq!(
            resolve_reference_url("https://charts.example.net/stable?t=1", "/dl/p.tgz"),
            "https://charts.example.net/dl/p.tgz?t=1"
        );
    }

    fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        for (path, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            // Written raw, so that an unsafe path can be made.
            let name = h.as_old_mut().name.as_mut();
            name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn a_packaged_chart_is_read_below_its_top_folder_and_nothing_escapes() {
        let files = untar(&tgz(&[
            ("podinfo/Chart.yaml", b"name: podinfo\n"),
            ("podinfo/templates/a.yaml", b"kind: A\n"),
        ]))
        .unwrap();
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["Chart.yaml", "templates/a.yaml"]);
        let e = untar(&tgz(&[
            ("podinfo/Chart.yaml", b"name: podinfo\n"),
            ("podinfo/../../etc/x", b"x"),
        ]))
        .unwrap_err();
        assert!(e.contains("unsafe path"), "{e}");
        let e = untar(b"not gzip").unwrap_err();
        assert!(!e.is_empty());
    }
}
