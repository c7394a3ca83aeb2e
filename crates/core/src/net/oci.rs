//! OCI registries: the distribution API's manifests, tags and blobs, through the fetch box
//! ([`super::fetch`]). A registry that asks for a token gets an anonymous one (the
//! distribution token flow), or one bought with the credential fluxsim.toml names for its
//! host (from environment variables, never from the repository's `secretRef`). Charts
//! (`crate::helm::oci`) and the artifacts an OCIRepository holds (`flux push artifact`:
//! `crate::reconcile::oci_source`) are both read through it.

use serde_json::Value;

crate::message_error! {
    /// An exchange with an OCI registry that failed.
    pub struct OciError;
}

const MAX_JSON: u64 = 8 << 20;

/// The media type of an OCI image manifest (what `flux push` and `helm push` write).
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

/// How to reach a repository of a registry.
pub struct Registry<'a> {
    fetch_box: &'a super::fetch::FetchBox,
    base: String,
    repo: String,
}

impl<'a> Registry<'a> {
    /// `oci://host[:port]/path`, and `name` appended (a HelmRepository's chart). A source
    /// marked `insecure` is reached over plain http, which the fetch box refuses unless
    /// fluxsim.toml's `[network] insecure` names the host.
    pub fn new(
        url: &str,
        name: Option<&str>,
        insecure: bool,
        fetch_box: &'a super::fetch::FetchBox,
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
            fetch_box,
            base: format!("{}://{host}", if insecure { "http" } else { "https" }),
            repo,
        })
    }

    /// GET `path` of the registry (the distribution API), through the fetch box: the
    /// user's credential for the registry's host when there is one (HTTP basic), else an
    /// anonymous token, or one bought with the credential, when the registry asks for one.
    fn get(&self, path: &str, accept: &str, limit: u64) -> Result<Vec<u8>, OciError> {
        use super::fetch::Auth;
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
            .get(&url, None, &super::fetch::Auth::Host, MAX_JSON)
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

    /// A JSON document of the registry (at most 8 MiB).
    pub fn json(&self, path: &str, accept: &str) -> Result<Value, OciError> {
        let body = self.get(path, accept, MAX_JSON)?;
        serde_json::from_slice(&body).map_err(|e| OciError(format!("{path}: {e}")))
    }

    /// The tags of the repository.
    pub fn tags(&self) -> Result<Vec<String>, OciError> {
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
}

impl Registry<'_> {
    /// The repository's path in the registry (`charts/podinfo`).
    #[must_use]
    pub fn repo(&self) -> &str {
        &self.repo
    }

    /// The manifest at `reference` (a tag or a `sha256:` digest).
    ///
    /// # Errors
    /// The exchange failed, or the answer is no JSON.
    pub fn manifest(&self, reference: &str) -> Result<Value, OciError> {
        self.json(
            &format!("/v2/{}/manifests/{reference}", self.repo),
            MANIFEST,
        )
    }

    /// The blob `digest` (`sha256:HEX`), checked against it: from `cached` when it holds
    /// it (by the hex digest), else fetched (at most `limit` bytes) and given to `keep`.
    ///
    /// # Errors
    /// The digest is not sha256, the exchange failed, or the bytes are not the digest's.
    pub fn blob(
        &self,
        digest: &str,
        accept: &str,
        limit: u64,
        cached: &dyn Fn(&str) -> Option<Vec<u8>>,
        keep: &dyn Fn(&str, &[u8]),
    ) -> Result<Vec<u8>, OciError> {
        let hex = digest
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("layer digest `{digest}` is not sha256"))?
            .to_ascii_lowercase();
        if let Some(bytes) = cached(&hex).filter(|b| crate::digest::sha256_hex(b) == hex) {
            return Ok(bytes);
        }
        let bytes = self.get(&format!("/v2/{}/blobs/{digest}", self.repo), accept, limit)?;
        let got = crate::digest::sha256_hex(&bytes);
        if got != hex {
            return Err(
                format!("the layer has digest sha256:{got}, the manifest says {digest}").into(),
            );
        }
        keep(&hex, &bytes);
        Ok(bytes)
    }
}

/// The tag for `range` among `tags` (Helm writes `+` as `_` in tags).
///
/// # Errors
/// No tag is a version in the range.
pub fn pick_tag(tags: &[String], range: &str) -> Result<String, OciError> {
    let versions: Vec<(String, &String)> = tags.iter().map(|t| (t.replace('_', "+"), t)).collect();
    let list: Vec<(&str, &str)> = versions.iter().map(|(v, _)| (v.as_str(), "")).collect();
    let picked = crate::version_range::pick(&list, range).map_err(|e| OciError(e.0))?;
    Ok(versions
        .iter()
        .find(|(v, _)| v == picked)
        .map_or_else(|| picked.to_string(), |(_, t)| (*t).clone()))
}

/// What a registry said with a status that is no success, as `: the registry answered
/// CODE: message` (the distribution API's `errors`), or its first line of text; nothing
/// when it said nothing readable.
pub fn answered(body: &[u8]) -> String {
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
