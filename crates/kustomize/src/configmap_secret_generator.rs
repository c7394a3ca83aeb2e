//! `configMapGenerator` and `secretGenerator` (`api/internal/generators/configmap.go`,
//! `secret.go`, `utils.go`, and the key-value loader `api/kv/kv.go`).
//!
//! The name hash suffix is added at the end of the root build (`nameref`).

use std::path::Path;

use base64::Engine as _;

use super::kustfile::{Behavior, GeneratorArgs};
use super::node::{Map, Node};
use super::resource::Resource;
use super::vfs::Vfs;
use super::NativeError;

/// Makes the ConfigMap (or Secret) one generator entry asks for.
pub(crate) fn generate(
    vfs: &Vfs,
    args: &GeneratorArgs,
    secret: bool,
    dir: &Path,
    file: &str,
) -> Result<Resource, NativeError> {
    let unsupported = |w: &str| NativeError::unsupported(w, file);
    let mut pairs: Vec<(String, String)> = Vec::new();
    // kv.go Load: env files, then literals, then files.
    for env in &args.envs {
        let text = read_source(vfs, dir, env, file)?;
        pairs.extend(
            env_pairs(&text)
                .map_err(|w| NativeError::unsupported(&format!("{w} (env file {env})"), file))?,
        );
    }
    for lit in &args.literals {
        let Some((k, v)) = lit.split_once('=') else {
            return Err(NativeError::Failed(format!(
                "invalid literal source {lit}, expected key=value"
            )));
        };
        pairs.push((k.to_string(), remove_quotes(v).to_string()));
    }
    for source in &args.files {
        let (key, path) = if let Some((k, p)) = source.split_once('=') {
            if k.is_empty() || p.is_empty() || p.contains('=') {
                return Err(unsupported("an unusual file source"));
            }
            (k.to_string(), p.to_string())
        } else {
            let base = Path::new(source)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (base, source.clone())
        };
        let text = read_source(vfs, dir, &path, file)?;
        if text.contains(['\u{85}', '\u{2028}', '\u{2029}', '\u{FEFF}']) {
            return Err(unsupported("a NEL, LS or PS character in a file source"));
        }
        pairs.push((key, text));
    }
    // A merge may only add labels or annotations; a new object without data is left to
    // kustomize.
    if pairs.is_empty() && args.behavior == Behavior::Create {
        return Err(unsupported("a generator without data"));
    }
    let mut data = Map::default();
    let no_data = pairs.is_empty();
    for (k, v) in pairs {
        let valid = !k.is_empty()
            && k.len() <= 253
            && k.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && k != "."
            && k != ".."
            && !k.starts_with("..");
        if !valid {
            return Err(unsupported("an unusual data key"));
        }
        if data.get(&k).is_some() {
            return Err(NativeError::Failed(format!(
                "configmap {}: cannot add key {k}, another key by that name already exists",
                args.name
            )));
        }
        let value = if secret {
            encode_base64(v.as_bytes())
        } else {
            v
        };
        data.0.push((k, Node::Str(value)));
    }
    let mut meta = Map::default();
    meta.insert("name", Node::Str(args.name.clone()));
    if let Some(ns) = &args.namespace {
        meta.insert("namespace", Node::Str(ns.clone()));
    }
    if !args.options.labels.is_empty() {
        meta.insert("labels", string_map(&args.options.labels));
    }
    if !args.options.annotations.is_empty() {
        meta.insert("annotations", string_map(&args.options.annotations));
    }
    let mut obj = Map::default();
    obj.insert("apiVersion", Node::Str("v1".into()));
    obj.insert(
        "kind",
        Node::Str(if secret { "Secret" } else { "ConfigMap" }.into()),
    );
    obj.insert("metadata", Node::Map(meta));
    // `LoadMapIntoConfigMapData` of no pairs makes no `data` (a Secret's is made empty).
    if !no_data || secret {
        obj.insert("data", Node::Map(data));
    }
    if secret {
        obj.insert(
            "type",
            Node::Str(args.secret_type.clone().unwrap_or_else(|| "Opaque".into())),
        );
    }
    if args.options.immutable {
        obj.insert("immutable", Node::Bool(true));
    }
    let mut r = Resource::from_document(Node::Map(obj), file)?;
    r.needs_hash = !args.options.disable_name_suffix_hash;
    Ok(r)
}

/// kyaml's `encodeBase64` (`kyaml/yaml/datamap.go`): standard base64, cut into lines of 70
/// characters each ending in `\n` once the text is 70 characters or longer (a value of 52
/// bytes or more); shorter text has no line break at all.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    if encoded.len() < LINE {
        return encoded;
    }
    let mut out = String::with_capacity(encoded.len() + encoded.len() / LINE + 1);
    for chunk in encoded.as_bytes().chunks(LINE) {
        // Base64 is ASCII: every chunk is a whole string.
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Reads a file a generator names, relative to the kustomization's folder.
fn read_source(vfs: &Vfs, dir: &Path, path: &str, file: &str) -> Result<String, NativeError> {
    if path.contains("://") {
        return Err(NativeError::unsupported("a remote file source", file));
    }
    let full = dir.join(path);
    if vfs.is_dir(&full) {
        return Err(NativeError::unsupported("a directory file source", file));
    }
    let bytes = vfs
        .read(&full)
        .map_err(|e| NativeError::Failed(format!("{file}: {}: {e}", full.display())))?;
    String::from_utf8(bytes).map_err(|_| NativeError::unsupported("a binary file source", file))
}

/// The pairs of an env file (`kv.go` `keyValuesFromLines`): Go's `bufio.Scanner` lines (a
/// `\r` before the `\n` dropped), a BOM dropped from the first, leading white space
/// trimmed, blank and `#` lines skipped, `KEY=value` split at the first `=` with the value
/// kept as written (no quotes removed, trailing blanks kept), a line without `=` an empty
/// value. kustomize's validator checks no key (`validate.FieldValidator.IsEnvVarName`).
fn env_pairs(text: &str) -> Result<Vec<(String, String)>, crate::Unsupported> {
    let mut pairs = Vec::new();
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Ok(pairs);
    }
    for raw in body.split('\n') {
        // bufio.MaxScanTokenSize: a longer line fails the scan.
        if raw.len() >= 64 * 1024 {
            return Err("a line longer than 64 KiB".into());
        }
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        // Go's unicode.IsSpace is the White_Space property, as Rust's char::is_whitespace.
        let line = line.trim_start_matches(char::is_whitespace);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        if key.is_empty() {
            continue;
        }
        if value.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}', '\u{FEFF}']) {
            return Err("a carriage return or NEL, LS, PS or BOM character in a value".into());
        }
        pairs.push((key.to_string(), value.to_string()));
    }
    Ok(pairs)
}

fn string_map(pairs: &[(String, String)]) -> Node {
    Node::Map(Map(pairs
        .iter()
        .map(|(k, v)| (k.clone(), Node::Str(v.clone())))
        .collect()))
}

/// kv.go `removeQuotes`: one pair of matching surrounding quotes.
fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b[b.len() - 1] && (b[0] == b'"' || b[0] == b'\'') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}
