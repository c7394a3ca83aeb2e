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

crate::message_error! {
    /// An exchange with an OCI registry that failed (`--fetch-charts`).
    pub struct OciError;
}

/// The media type of a Helm chart's content layer.
const CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const MAX_JSON: u64 = 8 << 20;
const MAX_CHART: u64 = 20 << 20;

/// How to reach a repository of a registry.
struct Registry<'a> {
    fetch_box: &'a crate::net::fetch::FetchBox,
    base: String,
    repo: String,
}

fn not(why: &str) -> Unavailable {
    Unavailable(format!("not fetched: {why}"))
}

impl<'a> Registry<'a> {
    /// `oci://host[:port]/path`, and `name` appended (a HelmRepository's chart). A source
    /// marked `insecure` is reached over plain http, which the fetch box refuses unless
    /// fluxsim.toml's `[network] insecure` names the host.
    fn new(
        url: &str,
        name: Option<&str>,
        insecure: bool,
        ctx: &'a Context<'_>,
    ) -> Result<Registry<'a>, OciError> {
        let rest = url
            .strip_prefix("oci://")
            .ok_or_else(|| format!("`{url}` is not an oci:// URL"))?;
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let mut repo = path.trim_matches('/').to_string();
        if let Some(n) = name {
            repo = if repo.is_empty() {
                n.to_string()
            } else {
                format!("{repo}/{n}")
            };
        }
        if host.is_empty() || repo.is_empty() {
            return Err(format!("`{url}` names no repository").into());
        }
        Ok(Registry {
            fetch_box: &ctx.network.fetch_box,
            base: format!("{}://{host}", if insecure { "http" } else { "https" }),
            repo,
        })
    }

    /// GET `path` of the registry (the distribution API), through the fetch box: the
    /// user's credential for the registry's host when there is one (HTTP basic), else an
    /// anonymous token, or one bought with the credential, when the registry asks for one.
    fn get(&self, path: &str, accept: &str, limit: u64) -> Result<Vec<u8>, OciError> {
        use crate::net::fetch::Auth;
        let url = format!("{}{path}", self.base);
        let fetch = |auth: &Auth| {
            self.fetch_box
                .get(&url, Some(accept), auth, limit)
                .map_err(|e| OciError(e.0))
        };
        let mut res = fetch(&Auth::Host)?;
        if res.status == 401 {
            let challenge = res.www_authenticate.clone().unwrap_or_default();
            if !challenge.starts_with("Bearer ") {
                let given = self.fetch_box.credential(&url).is_some();
                return Err(format!(
                    "GET {url}: 401: the registry asks for credentials{}{}",
                    if given {
                        " and refused the ones given"
                    } else {
                        " (give them in fluxsim.toml's [network.credentials], from \
                         environment variables)"
                    },
                    answered(&res.body)
                )
                .into());
            }
            let token = self.token(&challenge)?;
            res = fetch(&Auth::Header(format!("Bearer {token}")))?;
        }
        if !res.ok() {
            return Err(format!("GET {url}: status {}{}", res.status, answered(&res.body)).into());
        }
        Ok(res.body)
    }

    /// A token for `Bearer realm="...",service="...",scope="..."`: anonymous, or with the
    /// user's credential for the realm's host.
    fn token(&self, challenge: &str) -> Result<String, OciError> {
        let params: std::collections::BTreeMap<String, String> = challenge
            .strip_prefix("Bearer ")
            .ok_or_else(|| format!("the registry asks for credentials ({challenge})"))?
            .split(',')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.trim().to_string(), v.trim().trim_matches('"').to_string()))
            })
            .collect();
        let realm = params
            .get("realm")
            .ok_or("no realm in the token challenge")?;
        let mut url = realm.clone();
        let query: Vec<String> = ["service", "scope"]
            .iter()
            .filter_map(|k| params.get(*k).map(|v| format!("{k}={v}")))
            .collect();
        if !query.is_empty() {
            url = format!("{url}?{}", query.join("&"));
        }
        let res = self
            .fetch_box
            .get(&url, None, &crate::net::fetch::Auth::Host, MAX_JSON)
            .map_err(|e| OciError(e.0))?;
        if !res.ok() {
            return Err(format!(
                "GET {url}: status {} (no token{})",
                res.status,
                if self.fetch_box.credential(&url).is_some() {
                    " for the credentials given"
                } else {
                    " without credentials"
                }
            )
            .into());
        }
        let v: Value = serde_json::from_slice(&res.body).map_err(|e| e.to_string())?;
        v.get("token")
            .or_else(|| v.get("access_token"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "no token in the registry's answer".into())
    }

    fn json(&self, path: &str, accept: &str) -> Result<Value, OciError> {
        let body = self.get(path, accept, MAX_JSON)?;
        serde_json::from_slice(&body).map_err(|e| OciError(format!("{path}: {e}")))
    }

    /// The tags of the repository.
    fn tags(&self) -> Result<Vec<String>, OciError> {
        let v = self.json(&format!("/v2/{}/tags/list", self.repo), "application/json")?;
        Ok(v.get("tags")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The chart at `tag`: its layer, checked against its digest (from the cache folder when
    /// it is there).
    fn chart(&self, tag: &str, ctx: &Context<'_>) -> Result<(Vec<u8>, String), OciError> {
        let manifest = self.json(
            &format!("/v2/{}/manifests/{tag}", self.repo),
            "application/vnd.oci.image.manifest.v1+json",
        )?;
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
                    self.repo
                )
            })?
            .to_string();
        let hex = digest
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("layer digest `{digest}` is not sha256"))?
            .to_ascii_lowercase();
        if let Some(bytes) = super::package::cached(ctx, &hex) {
            return Ok((bytes, digest));
        }
        let bytes = self.get(
            &format!("/v2/{}/blobs/{digest}", self.repo),
            CHART_LAYER,
            MAX_CHART,
        )?;
        let got = crate::digest::sha256_hex(&bytes);
        if got != hex {
            return Err(format!(
                "the chart layer has digest sha256:{got}, the manifest says {digest}"
            )
            .into());
        }
        super::package::keep(ctx, &hex, &bytes);
        Ok((bytes, digest))
    }
}

/// What a registry said with a status that is no success, as `: the registry answered
/// CODE: message` (the distribution API's `errors`), or its first line of text; nothing
/// when it said nothing readable.
fn answered(body: &[u8]) -> String {
    const MAX: usize = 200;
    let said = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            let errors: Vec<String> = v
                .get("errors")?
                .as_array()?
                .iter()
                .filter_map(|e| {
                    let code = e.get("code").and_then(Value::as_str);
                    let message = e.get("message").and_then(Value::as_str);
                    match (code, message) {
                        (Some(c), Some(m)) => Some(format!("{c}: {m}")),
                        (c, m) => c.or(m).map(str::to_string),
                    }
                })
                .collect();
            (!errors.is_empty()).then(|| errors.join("; "))
        })
        .or_else(|| {
            let text = std::str::from_utf8(body).ok()?;
            let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
            Some(line.chars().filter(|c| !c.is_control()).collect())
        });
    match said {
        Some(s) if s.chars().count() > MAX => {
            format!(
                ": the registry answered {}…",
                s.chars().take(MAX).collect::<String>()
            )
        }
        Some(s) => format!(": the registry answered {s}"),
        None => String::new(),
    }
}

/// The tag for `range` among `tags` (Helm writes `+` as `_` in tags).
fn pick_tag(tags: &[String], range: &str) -> Result<String, OciError> {
    let versions: Vec<(String, &String)> = tags.iter().map(|t| (t.replace('_', "+"), t)).collect();
    let list: Vec<(&str, &str)> = versions.iter().map(|(v, _)| (v.as_str(), "")).collect();
    let picked = super::version::pick(&list, range).map_err(|e| OciError(e.0))?;
    Ok(versions
        .iter()
        .find(|(v, _)| v == picked)
        .map_or_else(|| picked.to_string(), |(_, t)| (*t).clone()))
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
    let reg = Registry::new(url, Some(name), insecure(obj), ctx)
        .map_err(|e| not(&format!("{src}: {e}")))?;
    let label = |tag: &str| format!("{src} {name}@{}", tag.replace('_', "+"));
    let resolution = pinned(version).then(|| Resolution::new(url, Some(name), version));
    if let Some(chart) = resolution.as_ref().and_then(|r| r.before(ctx, src, &label)) {
        return Ok(chart);
    }
    let tags = reg.tags().map_err(|e| not(&format!("{src}: {e}")))?;
    let tag = pick_tag(&tags, version).map_err(|e| not(&format!("{src}: chart `{name}`: {e}")))?;
    let (bytes, digest) = reg
        .chart(&tag, ctx)
        .map_err(|e| not(&format!("{src}: {e}")))?;
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
    let reg =
        Registry::new(url, None, insecure(obj), ctx).map_err(|e| not(&format!("{src}: {e}")))?;
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
    let (bytes, digest) = reg
        .chart(&tag, ctx)
        .map_err(|e| not(&format!("{src}: {e}")))?;
    if let Some(r) = &resolution {
        r.keep(ctx, &digest, &tag);
    }
    chart_of(src, &bytes, label(&tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    // distribution's registry/api/errcode: `{"errors": [{"code", "message", "detail"}]}`.
    #[test]
    fn a_registry_error_answer_names_its_code_and_message() {
        let body = br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}"#;
        assert_eq!(
            answered(body),
            ": the registry answered UNAUTHORIZED: authentication required"
        );
        assert_eq!(
            answered(b"\n  no such thing\nmore"),
            ": the registry answered no such thing"
        );
        assert_eq!(answered(b""), "");
        assert_eq!(answered(&[0xff, 0xfe]), "");
    }

    // Helm pushes version `1.0.0+build` as tag `1.0.0_build`.
    #[test]
    fn oci_tags_stand_for_versions_with_underscore_for_plus() {
        let tags = [
            "6.4.0".to_string(),
            "6.5.0_b1".to_string(),
            "latest".to_string(),
        ];
        assert_eq!(pick_tag(&tags, "6.5.x").unwrap(), "6.5.0_b1");
        assert_eq!(pick_tag(&tags, "*").unwrap(), "6.5.0_b1");
        assert!(pick_tag(&tags, ">=7").is_err());
    }
}
