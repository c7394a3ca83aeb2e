//! OCIRepository sources fetched from their registry, when the network permits it
//! (`--network base-trusted` and the base revision names the registry, or `--network any`):
//! the artifact `flux push artifact` makes (a manifest whose content layer is the
//! gzip-compressed tarball of the manifests) pulled and extracted as source-controller does,
//! then read as a tree the Kustomizations on it are built from. Offline, or when the
//! network does not permit it, the source stays external (not compared, saying why).
//!
//! What source-controller does (`internal/controller/ocirepository_controller.go`,
//! `reconcileSource` and `getArtifactRef`; fluxcd/pkg `tar/tar.go` `Untar`), and so fluxsim:
//! - the reference: `spec.ref.digest`, else the highest tag in `spec.ref.semver`, else
//!   `spec.ref.tag`, else `latest`;
//! - the layer: the first whose media type is `spec.layerSelector.mediaType`, else the
//!   first layer; `operation: copy` keeps the blob as the artifact, which kustomize-controller
//!   then extracts, so both operations give the same tree of a tarball layer;
//! - extraction: gzip-compressed tar only, at most 100 MiB of content, names that are
//!   relative and never climb (`..`), regular files and folders only (any other entry fails
//!   the source);
//! - `spec.ignore` (the `.sourceignore` syntax) over the extracted tree.

use std::io::Read as _;
use std::path::Path;

use serde_json::Value;

use super::pulled::{Missing, Pulled};
use crate::flux::str_at;
use crate::net::oci::Registry;
use crate::net::Network;

/// fluxcd/pkg `tar.DefaultMaxUntarSize`: what an artifact's files may add up to.
const MAX_CONTENT: u64 = 100 << 20;
/// The largest layer fetched (compressed): no more than its content may be.
const MAX_LAYER: u64 = MAX_CONTENT;
/// The store's folder for the layers fetched, by digest.
const SECTION: &str = "oci-artifacts";

/// The artifact of `obj`: its tree, the reference it resolved and the layer's digest.
pub(super) fn pull(
    obj: &Value,
    url: &str,
    network: &Network,
    store: Option<&crate::store::Store>,
) -> Result<Pulled, Missing> {
    let unreached = |e: crate::net::oci::OciError| Missing::Unreached(e.0);
    let insecure = obj
        .pointer("/spec/insecure")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let resolution = fixed(obj).then(|| resolution_key(obj, url));
    let before = resolution
        .as_deref()
        .and_then(|key| resolved_before(store, key));
    let (reference, digest, bytes) = if let Some(found) = before {
        found
    } else {
        let reg = Registry::new(url, None, insecure, &network.fetch_box).map_err(unreached)?;
        let (reference, digest, media) = pick_layer(&reg, obj)?;
        let bytes = reg
            .blob(
                &digest,
                &media,
                MAX_LAYER,
                &|hex| cached(store, hex),
                &|hex, bytes| keep(store, hex, bytes),
            )
            .map_err(unreached)?;
        if let (Some(key), Some(s)) = (&resolution, store) {
            s.put_in(
                RESOLVED,
                key,
                &serde_json::json!({"reference": reference, "digest": digest}).to_string(),
            );
        }
        (reference, digest, bytes)
    };
    let dir = crate::scratch::tempdir(crate::scratch::Kind::Source)
        .map_err(|e| Missing::Unreached(format!("a folder for the artifact: {e}")))?
        .keep();
    extract(&bytes, &dir).map_err(Missing::Invalid)?;
    let opts = crate::source::SourceOptions {
        include_untracked: false,
        spec_ignore: str_at(obj, &["spec", "ignore"]).map(str::to_string),
    };
    let tree = crate::source::in_place(&dir, &opts)
        .map_err(|e| Missing::Invalid(format!("the artifact's files: {e}")))?;
    Ok(Pulled {
        tree,
        reference,
        content: digest,
    })
}

/// The reference `obj` resolves to in `reg` (as source-controller's `getArtifactRef`), and
/// the digest and media type of the layer it selects.
fn pick_layer(reg: &Registry<'_>, obj: &Value) -> Result<(String, String, String), Missing> {
    let unreached = |e: crate::net::oci::OciError| Missing::Unreached(e.0);
    let reference = if let Some(d) = str_at(obj, &["spec", "ref", "digest"]) {
        d.to_string()
    } else if let Some(range) = str_at(obj, &["spec", "ref", "semver"]) {
        let tags = reg.tags().map_err(unreached)?;
        crate::net::oci::pick_tag(&tags, range).map_err(|e| Missing::Unreached(e.0))?
    } else {
        str_at(obj, &["spec", "ref", "tag"])
            .unwrap_or("latest")
            .to_string()
    };
    let manifest = reg.manifest(&reference).map_err(unreached)?;
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let wanted = str_at(obj, &["spec", "layerSelector", "mediaType"]);
    let layer = match wanted {
        Some(m) => layers
            .iter()
            .find(|l| l.get("mediaType").and_then(Value::as_str) == Some(m))
            .ok_or_else(|| {
                Missing::Invalid(format!(
                    "{}:{reference} has no layer of media type `{m}` (spec.layerSelector)",
                    reg.repo()
                ))
            })?,
        None => layers
            .first()
            .ok_or_else(|| Missing::Invalid(format!("{}:{reference} has no layer", reg.repo())))?,
    };
    let digest = layer
        .get("digest")
        .and_then(Value::as_str)
        .ok_or_else(|| Missing::Invalid("the layer has no digest".into()))?
        .to_string();
    let media = layer
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    Ok((reference, digest, media.to_string()))
}

/// Whether what `obj` names cannot change: a `ref.digest`, or a `ref.tag` that is one
/// exact version (as a chart version pinned in a HelmRelease, taken not to move): what it
/// resolved to is kept, so the CI cache makes the next run offline. A range or any other
/// tag is resolved against the registry each time.
fn fixed(obj: &Value) -> bool {
    if str_at(obj, &["spec", "ref", "digest"]).is_some() {
        return true;
    }
    str_at(obj, &["spec", "ref", "semver"]).is_none()
        && str_at(obj, &["spec", "ref", "tag"])
            .is_some_and(|t| semver::Version::parse(t.trim_start_matches('v')).is_ok())
}

/// The store's folder for what a fixed reference resolved to: the layer's digest (its
/// bytes in [`SECTION`]) and the reference.
const RESOLVED: &str = "oci-artifacts-resolved";

fn resolution_key(obj: &Value, url: &str) -> String {
    crate::digest::sha256_hex(
        serde_json::json!([
            "oci-source",
            1,
            url,
            obj.pointer("/spec/ref"),
            obj.pointer("/spec/layerSelector/mediaType"),
        ])
        .to_string()
        .as_bytes(),
    )
}

/// What a fixed reference resolved to before, when its layer is in the store too (checked
/// against its digest).
fn resolved_before(
    store: Option<&crate::store::Store>,
    key: &str,
) -> Option<(String, String, Vec<u8>)> {
    let text = store?.get_in(RESOLVED, key)?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let digest = v.get("digest")?.as_str()?.to_string();
    let reference = v.get("reference")?.as_str()?.to_string();
    let hex = digest.strip_prefix("sha256:")?;
    let bytes = cached(store, hex)?;
    (crate::digest::sha256_hex(&bytes) == hex).then_some((reference, digest, bytes))
}

fn cached(store: Option<&crate::store::Store>, hex: &str) -> Option<Vec<u8>> {
    store?.get_bytes_in(SECTION, hex)
}

fn keep(store: Option<&crate::store::Store>, hex: &str, bytes: &[u8]) {
    if let Some(s) = store {
        s.put_bytes_in(SECTION, hex, bytes);
    }
}

/// fluxcd/pkg `tar.Untar` into `dir`: a gzip-compressed tar, names relative and not
/// climbing, regular files and folders only, at most [`MAX_CONTENT`] bytes of content.
// String: the words of `Missing::Invalid`, which the entry's note shows (its sources are
// gzip, tar and io errors, each said with the name of the tar entry).
fn extract(tgz: &[u8], dir: &Path) -> Result<(), String> {
    let gz = flate2::read::GzDecoder::new(tgz);
    let mut archive = tar::Archive::new(gz);
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|e| format!("the layer is no gzip-compressed tarball: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("tar error: {e}"))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        total = total.saturating_add(entry.header().size().unwrap_or(u64::MAX));
        if total > MAX_CONTENT {
            return Err(format!(
                "tar `{name}` is bigger than the largest artifact, {MAX_CONTENT} bytes"
            ));
        }
        if name.is_empty() || name.contains('\\') || name.starts_with('/') || name.contains("../") {
            return Err(format!("tar contained invalid name `{name}`"));
        }
        let rel: std::path::PathBuf = Path::new(&name)
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(Ok(s)),
                std::path::Component::CurDir => None,
                _ => Some(Err(())),
            })
            .collect::<Result<_, _>>()
            .map_err(|()| format!("tar contained invalid name `{name}`"))?;
        let kind = entry.header().entry_type();
        let path = dir.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| format!("{name}: {e}"))?;
        } else if kind.is_file() {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{name}: {e}"))?;
            }
            let mut bytes = Vec::new();
            (&mut entry)
                .take(MAX_CONTENT + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{name}: {e}"))?;
            std::fs::write(&path, bytes).map_err(|e| format!("{name}: {e}"))?;
        } else {
            return Err(format!(
                "tar file entry `{name}` contained unsupported file type {kind:?}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tgz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut b = tar::Builder::new(gz);
        for (name, kind, body) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            if *kind == tar::EntryType::Symlink {
                h.set_link_name("/etc/passwd").unwrap();
            }
            // Written raw: `set_path` refuses the names these tests need.
            let raw = &mut h.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            b.append(&h, *body).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    // fluxcd/pkg tar/tar.go Untar: files and folders are written below the folder.
    #[test]
    fn an_artifact_tarball_is_extracted_with_its_folders() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = tgz(&[
            ("./apps/", tar::EntryType::Directory, b""),
            (
                "./apps/cm.yaml",
                tar::EntryType::Regular,
                b"kind: ConfigMap\n",
            ),
        ]);
        extract(&bytes, dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("apps/cm.yaml")).unwrap(),
            "kind: ConfigMap\n"
        );
    }

    // Untar's validRelPath and its "unsupported file type": a name that climbs or is
    // absolute, and a symlink, fail the source; nothing is written outside the folder.
    #[test]
    fn an_artifact_entry_that_climbs_or_links_fails_the_source() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("artifact");
        std::fs::create_dir(&dir).unwrap();
        for (name, kind) in [
            ("../escape.yaml", tar::EntryType::Regular),
            ("/abs.yaml", tar::EntryType::Regular),
            ("a\\b.yaml", tar::EntryType::Regular),
            ("link.yaml", tar::EntryType::Symlink),
        ] {
            let e = extract(&tgz(&[(name, kind, b"x")]), &dir).unwrap_err();
            assert!(
                e.contains("invalid name") || e.contains("unsupported file type"),
                "{name}: {e}"
            );
        }
        assert!(!parent.path().join("escape.yaml").exists());
        assert!(!dir.join("link.yaml").exists());
    }

    // A digest, or a tag that is one exact version, cannot move: what it resolved to is kept.
    #[test]
    fn only_a_digest_or_an_exact_version_tag_is_kept_resolved() {
        let at = |r: Value| serde_json::json!({"spec": {"url": "oci://r/x", "ref": r}});
        assert!(fixed(&at(serde_json::json!({"digest": "sha256:ab"}))));
        assert!(fixed(&at(serde_json::json!({"tag": "v1.2.3"}))));
        assert!(!fixed(&at(serde_json::json!({"tag": "latest"}))));
        assert!(!fixed(&at(serde_json::json!({"tag": "main-abc123"}))));
        assert!(!fixed(&at(serde_json::json!({"semver": ">=1.0.0"}))));
        assert!(!fixed(&serde_json::json!({"spec": {"url": "oci://r/x"}})));
    }

    #[test]
    fn a_layer_that_is_no_tarball_fails_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let e = extract(b"plain text", dir.path()).unwrap_err();
        assert!(e.contains("tar"), "{e}");
    }
}
