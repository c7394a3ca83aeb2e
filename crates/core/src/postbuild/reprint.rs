//! Printing substituted objects again, as kustomize-controller's apply would send them: Flux
//! rebuilds each substituted object from JSON, and the artifact shows them as `kustomize
//! build` prints resources read from JSON, in its legacy order. The objects are written
//! (in memory for the native builder) as a kustomization of their own and built through the
//! build cache like any other build.

use std::fmt::Write as _;

use crate::cache::BuildCache;

/// The JSON text a rebuilt object is handed to [`reprint`] in: `serde_json`'s, with every
/// character a YAML reader folds as a line break or refuses as content (DEL, the C1
/// controls and NEL, LS, PS, the byte-order mark, U+FFFE, U+FFFF) written as a `\u` escape.
/// kustomize reads a JSON file as YAML, where a raw LS inside a string is a line break (so
/// `"a \u{2028} b"` would read back as `a\u{2028}b`); Flux sets the object from a Go map
/// (`res.UnmarshalJSON`), where the string holds the character as it is.
#[must_use]
pub fn object_text(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let special = |c: char| {
        matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
    };
    if !text.contains(special) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if special(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

crate::message_error! {
    /// Printing substituted objects again, as kustomize prints JSON, failed.
    pub struct ReprintError;
}

/// The annotations kustomize writes for `buildMetadata` (`originAnnotations`,
/// `transformerAnnotations`) and takes off every object of a build that does not ask for
/// them (kustomize api `resmap` `RemoveOriginAnnotations`, `RemoveTransformerAnnotations`).
/// Flux substitutes without building again, so an object keeps those its build gave it; the
/// reprint build would take them off: they go through it under another key
/// ([`protected_key`]).
const BUILD_ANNOTATIONS: [&str; 2] = [
    "config.kubernetes.io/origin",
    "alpha.config.kubernetes.io/transformations",
];

/// The key a build annotation goes through the reprint under: the same key with a `!`,
/// which kustomize keeps and which sorts where the key sorts (go-yaml v2's key order puts a
/// key before its extensions, and `!` before any character an annotation key may continue
/// with).
fn protected_key(key: &str) -> String {
    format!("{key}!")
}

/// `text` with each build annotation key (`key:` in YAML, `"key":` in JSON) renamed
/// ([`protected_key`]).
fn protect(text: &str) -> String {
    let mut out = text.to_string();
    for k in BUILD_ANNOTATIONS {
        let p = protected_key(k);
        out = out
            .replace(&format!("{k}:"), &format!("{p}:"))
            .replace(&format!("\"{k}\":"), &format!("\"{p}\":"));
    }
    out
}

/// The reprint's output with the build annotations under their own keys again.
fn unprotect(text: &str) -> String {
    let mut out = text.to_string();
    for k in BUILD_ANNOTATIONS {
        out = out.replace(&format!("{}:", protected_key(k)), &format!("{k}:"));
    }
    out
}

/// Prints objects the way kustomize prints resources read back from JSON, in legacy order,
/// build annotations kept.
pub fn reprint(cache: &BuildCache<'_>, pieces: &[(bool, String)]) -> Result<String, ReprintError> {
    // A text that holds a protected key already cannot be told apart after the build: those
    // pieces go through as they are (the annotations then go, as kustomize takes them off).
    let clash = pieces.iter().any(|(_, t)| {
        BUILD_ANNOTATIONS
            .iter()
            .any(|k| t.contains(&protected_key(k)))
    });
    if clash {
        return reprint_as_is(cache, pieces);
    }
    let protected: Vec<(bool, String)> = pieces.iter().map(|(j, t)| (*j, protect(t))).collect();
    Ok(unprotect(&reprint_as_is(cache, &protected)?))
}

/// [`reprint`] without keeping the build annotations.
fn reprint_as_is(
    cache: &BuildCache<'_>,
    pieces: &[(bool, String)],
) -> Result<String, ReprintError> {
    let key = crate::digest::sha256_hex(
        pieces
            .iter()
            .fold(String::new(), |mut s, (j, t)| {
                let _ = write!(s, "{j}\0{t}\0");
                s
            })
            .as_bytes(),
    );
    let names: Vec<String> = (0..pieces.len())
        .map(|i| format!("r{i:05}.{}", if pieces[i].0 { "json" } else { "yaml" }))
        .collect();
    let k = serde_json::json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": names});
    // The folder exists in memory for the native builder; it is written out only for the
    // kustomize binary. Its name is unique to the content, never one that exists.
    let virtual_dir = std::env::temp_dir().join(format!("fluxsim-postbuild-{key}.virtual"));
    let mut files = crate::kustomize::native::vfs::Vfs::memory();
    // The build's inputs are exactly these files, so its closure is known without reading.
    let mut inputs = crate::cache::closure::Closure {
        files: std::collections::BTreeMap::new(),
        schemas: std::collections::BTreeSet::new(),
    };
    for (name, text) in std::iter::once(("kustomization.yaml", k.to_string())).chain(
        names
            .iter()
            .zip(pieces)
            .map(|(n, (_, t))| (n.as_str(), t.clone())),
    ) {
        inputs
            .files
            .insert(name.to_string(), crate::digest::sha256_hex(text.as_bytes()));
        files.insert(&virtual_dir.join(name), text);
    }
    // String: an io::Error (not Clone) made once and read by every caller of `on_disk`: kept
    // as the text each caller's error shows.
    let written: std::sync::OnceLock<Result<tempfile::TempDir, String>> =
        std::sync::OnceLock::new();
    let on_disk = || {
        written
            .get_or_init(|| {
                let dir = crate::scratch::tempdir(crate::scratch::Kind::Postbuild)
                    .map_err(|e| e.to_string())?;
                for (name, (_, text)) in names.iter().zip(pieces) {
                    std::fs::write(dir.path().join(name), text).map_err(|e| e.to_string())?;
                }
                std::fs::write(dir.path().join("kustomization.yaml"), k.to_string())
                    .map_err(|e| e.to_string())?;
                Ok(dir)
            })
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .map_err(|e| crate::kustomize::BuildError::Failed(e.clone()))
    };
    let job = crate::kustomize::Job {
        dir: virtual_dir,
        files,
        on_disk: crate::kustomize::OnDisk::Make(&on_disk),
        network: false,
        git_http: false,
    };
    cache
        .get(&crate::cache::Request {
            key: &format!("reprint#{key}"),
            inputs: Some(&inputs),
            job: &job,
        })
        .output
        .map_err(|e| ReprintError(format!("printing the substituted objects: {e}")))
}
