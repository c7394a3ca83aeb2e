//! Secrets in output: Secret values and SOPS metadata masked in what fluxsim prints, as
//! `flux build kustomization` masks SOPS data (fluxcd/flux2 `internal/build/build.go`,
//! `maskSopsData`), and the objects `--skip-secrets` / `--skip-crds` leave out.
//!
//! Masking is presentation only: artifacts, their digests and every comparison are made on
//! what Flux applies; only the text shown is masked.

use std::borrow::Cow;

use base64::Engine as _;
use serde_json::Value;

use crate::artifact::{Artifact, ArtifactObject};

/// What `flux build` writes in place of a SOPS-encrypted value.
pub const SOPS_MASK: &str = "**SOPS**";
/// What fluxsim writes in place of a plain Secret value.
pub const SECRET_MASK: &str = "**SECRET**";

/// How objects are shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Presentation {
    /// `--show-secrets`: print Secret values and SOPS metadata as they are.
    pub show_secrets: bool,
    /// `--skip-secrets`: leave Secrets out.
    pub skip_secrets: bool,
    /// `--skip-crds`: leave CustomResourceDefinitions out.
    pub skip_crds: bool,
}

fn kind(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// A core `v1` Secret.
#[must_use]
pub fn is_secret(object: &Value) -> bool {
    kind(object) == "Secret" && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// A SOPS-encrypted document: its top-level `sops` metadata holds a `mac`, as `flux build`
/// tests (`sops:` and `mac: ENC[`).
#[must_use]
pub fn is_sops(object: &Value) -> bool {
    object
        .get("sops")
        .and_then(|s| s.get("mac"))
        .and_then(Value::as_str)
        .is_some_and(|m| m.starts_with("ENC["))
}

impl Presentation {
    /// Whether `object` is shown at all.
    #[must_use]
    pub fn shows(&self, object: &Value) -> bool {
        !(self.skip_secrets && is_secret(object) || self.skip_crds && kubeschema::is_crd(object))
    }

    /// The object's text as shown: Secret `data` and `stringData` values masked and a
    /// top-level `sops` block left out (unless `--show-secrets`).
    #[must_use]
    pub fn object_text<'a>(&self, o: &'a ArtifactObject) -> Cow<'a, str> {
        if self.show_secrets {
            Cow::Borrowed(&o.yaml)
        } else {
            mask_object(&o.yaml, &o.object)
        }
    }

    /// The artifact's YAML stream as shown; the artifact's own bytes when nothing is masked
    /// or left out.
    #[must_use]
    pub fn artifact_text<'a>(&self, a: &'a Artifact) -> Cow<'a, str> {
        let texts: Vec<Cow<'a, str>> = a
            .objects
            .iter()
            .filter(|o| self.shows(&o.object))
            .map(|o| self.object_text(o))
            .collect();
        if texts.len() == a.objects.len() && texts.iter().all(|t| matches!(t, Cow::Borrowed(_))) {
            return Cow::Borrowed(&a.yaml);
        }
        let mut out = String::with_capacity(a.yaml.len());
        for (i, t) in texts.iter().enumerate() {
            if i > 0 {
                out.push_str("---\n");
            }
            out.push_str(t);
            if !t.ends_with('\n') {
                out.push('\n');
            }
        }
        Cow::Owned(out)
    }
}

/// The top-level block [`mask_object`] is reading: what to do with its indented lines.
#[derive(PartialEq)]
enum Block {
    Keep,
    Drop,
    /// Mask `data` (0) or `stringData` (1) values.
    Mask(usize),
}

/// `text` with the values of a Secret's `data` and `stringData` masked and a SOPS `sops`
/// block left out; `text` itself when there is nothing to mask.
///
/// Works on the text as kustomize prints it (top-level keys at column 0, their entries
/// indented), so that everything else stays byte for byte what Flux applies. A `data` value
/// becomes the base64 of its mask (the Secret stays valid), a `stringData` value the mask
/// itself; which mask is `flux build`'s choice where it masks (fluxcd/flux2 v2.9.5
/// `internal/build/build.go` `maskSopsData`), `**SECRET**` for every other value:
/// - a SOPS-encrypted Secret: every value `**SOPS**`, or for a `kubernetes.io/dockerconfigjson`
///   Secret the JSON `{"mask":"**SOPS**"}` (`maskDockerconfigjsonSopsData`);
/// - any other Secret: a `data` value whose decoded bytes hold `sops` and `ENC[` (a file
///   encrypted with SOPS put in by a secretGenerator) is `**SOPS**`
///   (`maskBase64EncryptedSopsData`), and a `stringData` value holding them is the *base64*
///   of `**SOPS**`, as `maskSopsDataInStringDataSecret` is handed it.
#[must_use]
pub fn mask_object<'a>(text: &'a str, object: &Value) -> Cow<'a, str> {
    let secret = is_secret(object);
    let sops = is_sops(object);
    if !secret && !sops {
        return Cow::Borrowed(text);
    }
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let docker = object.get("type").and_then(Value::as_str) == Some(DOCKER_CONFIG_JSON);
    let whole = match (sops, docker) {
        (true, true) => Some(DOCKER_SOPS_MASK),
        (true, false) => Some(SOPS_MASK),
        (false, _) => None,
    };
    // The mask of one value, by block (0: data, 1: stringData) and key.
    let mask_of = |which: usize, key: &str| -> String {
        let encrypted = |bytes: &[u8]| {
            let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
            has(b"sops") && has(b"ENC[")
        };
        let field = if which == 0 { "data" } else { "stringData" };
        let value = object
            .get(field)
            .and_then(|m| m.get(key))
            .and_then(Value::as_str);
        match (whole, which) {
            (Some(m), 0) => b64(m),
            (Some(m), _) => quoted(m),
            (None, 0) => {
                // Go's base64 decoder skips line breaks (a generated Secret's long values
                // are wrapped at 70 columns).
                let decoded = value
                    .map(|v| v.replace(['\n', '\r'], ""))
                    .and_then(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
                    .unwrap_or_default();
                b64(if encrypted(&decoded) {
                    SOPS_MASK
                } else {
                    SECRET_MASK
                })
            }
            (None, _) if value.is_some_and(|v| encrypted(v.as_bytes())) => b64(SOPS_MASK),
            (None, _) => quoted(SECRET_MASK),
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut block = Block::Keep;
    let mut entry_indent: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        let top_level = indent == 0 && !body.is_empty() && !body.starts_with('#');
        if top_level {
            entry_indent = None;
            block = match body {
                "sops:" if sops => Block::Drop,
                "data:" if secret => Block::Mask(0),
                "stringData:" if secret => Block::Mask(1),
                _ => Block::Keep,
            };
            if block != Block::Drop {
                out.push_str(line);
            }
            continue;
        }
        match block {
            Block::Keep => out.push_str(line),
            Block::Drop => {}
            Block::Mask(which) => {
                let first = *entry_indent.get_or_insert(indent);
                if indent > first || body.trim().is_empty() {
                    // A block scalar's or a folded value's continuation: gone with its value.
                    continue;
                }
                if indent < first {
                    out.push_str(line);
                    continue;
                }
                match key_end(&body[indent..]) {
                    Some(end) => {
                        let key = unquote_key(&body[indent..indent + end]);
                        out.push_str(&body[..indent + end]);
                        out.push_str(": ");
                        out.push_str(&mask_of(which, &key));
                        out.push('\n');
                    }
                    None => out.push_str(line),
                }
            }
        }
    }
    Cow::Owned(out)
}

/// The Secret type whose SOPS data `flux build` masks with a JSON object.
const DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
/// `maskDockerconfigjsonSopsData`'s mask: `{"mask":"**SOPS**"}`.
const DOCKER_SOPS_MASK: &str = "{\"mask\":\"**SOPS**\"}";

/// A mask as a single-quoted YAML scalar (each one starts with `*` or `{`).
fn quoted(mask: &str) -> String {
    format!("'{}'", mask.replace('\'', "''"))
}

/// A printed key as the object has it: a double-quoted key read as JSON reads it (the
/// escapes kustomize's printer writes are JSON's), a single-quoted one with `''` as `'`.
fn unquote_key(key: &str) -> String {
    if key.starts_with('"') {
        serde_json::from_str::<String>(key).unwrap_or_else(|_| key.to_string())
    } else if let Some(inner) = key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        key.to_string()
    }
}

/// Where the key of a `key: value` line ends (the offset of its `:`), quoted keys included.
fn key_end(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let after_key = match bytes.first()? {
        b'"' => {
            let mut i = 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => break,
                    _ => i += 1,
                }
            }
            i + 1
        }
        b'\'' => {
            let mut i = 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i + 1
        }
        _ => {
            let colon = line
                .find(": ")
                .or_else(|| line.strip_suffix(':').map(str::len))?;
            return Some(colon);
        }
    };
    (line.get(after_key..after_key + 1) == Some(":")).then_some(after_key)
}

/// What a review shows of one object in base and head: the values of a Secret's `data` and
/// `stringData` (and of a SOPS-encrypted document's) replaced by `**SECRET**` (`**SOPS**`),
/// its top-level `sops` block left out, as [`mask_object`] shows its text; a value that
/// differs between the sides is `**SECRET** (changed)` in head, so that a review still says
/// which key changed, never how. Objects with nothing secret are returned as they are.
#[must_use]
pub fn mask_pair(base: Option<&Value>, head: Option<&Value>) -> (Option<Value>, Option<Value>) {
    let secret = |v: Option<&Value>| v.is_some_and(|v| is_secret(v) || is_sops(v));
    if !secret(base) && !secret(head) {
        return (base.cloned(), head.cloned());
    }
    let word = if base.is_some_and(is_sops) || head.is_some_and(is_sops) {
        SOPS_MASK
    } else {
        SECRET_MASK
    };
    let masked = |v: &Value, other: Option<&Value>| {
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            map.remove("sops");
            for field in ["data", "stringData"] {
                let Some(values) = map.get_mut(field).and_then(Value::as_object_mut) else {
                    continue;
                };
                for (k, val) in values.iter_mut() {
                    let before = other.and_then(|o| o.get(field)).and_then(|f| f.get(k));
                    let changed = before.is_some_and(|b| b != val);
                    *val = Value::String(if changed {
                        format!("{word} (changed)")
                    } else {
                        word.to_string()
                    });
                }
            }
        }
        v
    };
    (base.map(|b| masked(b, None)), head.map(|h| masked(h, base)))
}

/// The `data.KEY` and `stringData.KEY` of a Secret present in both and with another value:
/// masked text cannot show that they changed, so a diff names them.
#[must_use]
pub fn changed_secret_keys(base: &Value, head: &Value) -> Vec<String> {
    let secrets = is_secret(base) && is_secret(head);
    let sops = is_sops(base) && is_sops(head);
    if !secrets && !sops {
        return Vec::new();
    }
    let mut out = Vec::new();
    for field in ["data", "stringData"] {
        let (Some(b), Some(h)) = (
            base.get(field).and_then(Value::as_object),
            head.get(field).and_then(Value::as_object),
        ) else {
            continue;
        };
        for (k, v) in b {
            if h.get(k).is_some_and(|hv| hv != v) {
                out.push(format!("{field}.{k}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        crate::manifest::parse_object(text).unwrap()
    }

    const SECRET: &str = "apiVersion: v1\ndata:\n  password: aHVudGVyMg==\n  \"odd: key\": eA==\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  note: |\n    line one\n    line two\n  plain: hunter2\ntype: Opaque\n";

    #[test]
    fn secret_values_are_masked_by_default() {
        let masked = mask_object(SECRET, &parse(SECRET));
        assert_eq!(
            masked,
            "apiVersion: v1\ndata:\n  password: KipTRUNSRVQqKg==\n  \"odd: key\": KipTRUNSRVQqKg==\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  note: '**SECRET**'\n  plain: '**SECRET**'\ntype: Opaque\n"
        );
        assert!(!masked.contains("hunter2") && !masked.contains("aHVudGVyMg"));
        // Still a Secret of the same keys.
        let v = parse(&masked);
        assert_eq!(v["data"].as_object().unwrap().len(), 2);
        assert_eq!(v["stringData"]["plain"], "**SECRET**");
    }

    #[test]
    fn sops_encrypted_secret_is_masked_as_flux_build_does() {
        let text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nsops:\n  age:\n  - enc: |\n      -----BEGIN AGE ENCRYPTED FILE-----\n    recipient: age1x\n  mac: ENC[AES256_GCM,data:abc,type:str]\n  version: 3.9.1\nstringData:\n  PASSWORD: ENC[AES256_GCM,data:xyz,type:str]\ntype: Opaque\n";
        let masked = mask_object(text, &parse(text));
        assert_eq!(
            masked,
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  PASSWORD: '**SOPS**'\ntype: Opaque\n"
        );
    }

    // fluxcd/flux2 v2.9.5 internal/build/build.go maskDockerconfigjsonSopsData: a SOPS
    // dockerconfigjson Secret keeps JSON in its values.
    #[test]
    fn sops_dockerconfigjson_secret_is_masked_with_a_json_object_as_flux_build_does() {
        let text = "apiVersion: v1\ndata:\n  .dockerconfigjson: ENC[AES256_GCM,data:abc,type:str]\nkind: Secret\nmetadata:\n  name: docker\nsops:\n  mac: ENC[AES256_GCM,data:abc,type:str]\n  version: 3.9.1\ntype: kubernetes.io/dockerconfigjson\n";
        let masked = mask_object(text, &parse(text));
        let v = parse(&masked);
        assert_eq!(
            v["data"][".dockerconfigjson"],
            "eyJtYXNrIjoiKipTT1BTKioifQ=="
        );
        assert!(v.get("sops").is_none());
    }

    // fluxcd/flux2 v2.9.5 internal/build/build.go maskBase64EncryptedSopsData and
    // maskSopsDataInStringDataSecret: in a Secret that is not itself encrypted, a value that
    // holds SOPS ciphertext (a secretGenerator of an encrypted file) is masked as SOPS; the
    // stringData one with the base64 of the mask, as flux build writes it.
    #[test]
    fn sops_ciphertext_values_of_a_plain_secret_are_masked_as_flux_build_does() {
        let enc = "sops:\n  mac: ENC[AES256_GCM,data:x]\n";
        let b64 = base64::engine::general_purpose::STANDARD.encode(enc);
        let text = format!(
            "apiVersion: v1\ndata:\n  plain: aHVudGVyMg==\n  token: {b64}\nkind: Secret\nmetadata:\n  name: t\nstringData:\n  enc: 'sops ENC[x]'\n  plain: hunter2\ntype: Opaque\n"
        );
        let v = parse(&mask_object(&text, &parse(&text)));
        assert_eq!(v["data"]["token"], "KipTT1BTKio=");
        assert_eq!(v["data"]["plain"], "KipTRUNSRVQqKg==");
        assert_eq!(v["stringData"]["enc"], "KipTT1BTKio=");
        assert_eq!(v["stringData"]["plain"], "**SECRET**");
    }

    #[test]
    fn sops_metadata_is_stripped_from_other_kinds() {
        let text = "apiVersion: v1\ndata:\n  a: ENC[AES256_GCM,data:x,type:str]\nkind: ConfigMap\nmetadata:\n  name: c\nsops:\n  mac: ENC[AES256_GCM,data:abc,type:str]\n";
        assert_eq!(
            mask_object(text, &parse(text)),
            "apiVersion: v1\ndata:\n  a: ENC[AES256_GCM,data:x,type:str]\nkind: ConfigMap\nmetadata:\n  name: c\n"
        );
    }

    #[test]
    fn objects_without_secrets_are_not_touched() {
        let text = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: c\n";
        assert!(matches!(mask_object(text, &parse(text)), Cow::Borrowed(_)));
    }

    #[test]
    fn changed_secret_keys_name_values_masking_hides() {
        let other = SECRET.replace("aHVudGVyMg==", "c2VjcmV0");
        assert_eq!(
            changed_secret_keys(&parse(SECRET), &parse(&other)),
            vec!["data.password".to_string()]
        );
    }

    #[test]
    fn a_review_shows_which_secret_key_changed_never_its_value() {
        let other = SECRET.replace("aHVudGVyMg==", "c2VjcmV0");
        let (b, h) = mask_pair(Some(&parse(SECRET)), Some(&parse(&other)));
        let (b, h) = (b.unwrap(), h.unwrap());
        assert_eq!(b["data"]["password"], SECRET_MASK);
        assert_eq!(h["data"]["password"], "**SECRET** (changed)");
        assert_eq!(h["stringData"]["plain"], SECRET_MASK);
        let shown = format!("{b}{h}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("c2VjcmV0"),
            "{shown}"
        );
        let cm = parse("apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: c\n");
        assert_eq!(mask_pair(Some(&cm), None).0.unwrap(), cm);
    }

    #[test]
    fn skip_secrets_and_skip_crds_leave_objects_out() {
        let p = Presentation {
            skip_secrets: true,
            skip_crds: true,
            ..Presentation::default()
        };
        assert!(!p.shows(&parse(SECRET)));
        assert!(!p.shows(&parse(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n"
        )));
        assert!(p.shows(&parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        )));
    }
}
