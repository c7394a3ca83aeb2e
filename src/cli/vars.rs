//! Loading substitution vars from files given on the command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::flux::is_valid_var_name;

/// Vars by name, as postBuild substitutes them.
pub type Vars = BTreeMap<String, String>;

/// A vars file or assignment that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VarsError {
    /// The file cannot be read.
    #[error("{path}: cannot read vars file: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line or key is malformed.
    #[error("{path}:{line}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A `--var` assignment is malformed.
    #[error("--var {0:?}: {1}")]
    Assignment(String, String),
}

fn name_error(name: &str) -> String {
    format!(
        "var name `{name}` is invalid: Flux requires ^[_[:alpha:]][_[:alpha:][:digit:]]*$ \
         (letters, digits and `_`, not starting with a digit)"
    )
}

/// Parses `KEY=VALUE`.
pub fn parse_var_assignment(s: &str) -> Result<(String, String), VarsError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| VarsError::Assignment(s.to_string(), "expected KEY=VALUE".into()))?;
    if !is_valid_var_name(k) {
        return Err(VarsError::Assignment(s.to_string(), name_error(k)));
    }
    // Flux strips newlines from every value (LoadVariables in kustomize_varsub.go).
    Ok((k.to_string(), v.replace('\n', "")))
}

/// Loads vars from `KEY=VALUE` lines or from a ConfigMap/Secret manifest.
pub fn load_vars_file(path: &Path) -> Result<Vars, VarsError> {
    let bytes = std::fs::read(path).map_err(|source| VarsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let invalid = |line: usize, message: String| VarsError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(
            0,
            format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })?;
    let looks_like_manifest = text.lines().any(|l| l.starts_with("kind:"));
    if looks_like_manifest {
        return load_manifest_vars(&text, path);
    }
    let mut vars = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| invalid(i + 1, "expected KEY=VALUE".to_string()))?;
        let k = k.trim();
        if !is_valid_var_name(k) {
            return Err(invalid(i + 1, name_error(k)));
        }
        vars.insert(k.to_string(), v.trim_end_matches('\r').replace('\n', ""));
    }
    Ok(vars)
}

/// The vars a ConfigMap's `data` or a Secret's `data` (base64) and `stringData` give,
/// as kustomize-controller's `LoadVariables` reads them (`binaryData` is ignored).
fn load_manifest_vars(text: &str, path: &Path) -> Result<Vars, VarsError> {
    let invalid = |message: String| VarsError::Invalid {
        path: path.to_path_buf(),
        line: 0,
        message,
    };
    let doc = crate::manifest::parse_object(text).map_err(|e| invalid(e.to_string()))?;
    let kind = doc.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
    let mut vars = BTreeMap::new();
    let mut take = |field: &str, decode: bool| -> Result<(), VarsError> {
        let Some(map) = doc.get(field) else {
            return Ok(());
        };
        let map = map
            .as_object()
            .ok_or_else(|| invalid(format!("`{field}` is not a mapping")))?;
        for (k, v) in map {
            let v = v
                .as_str()
                .ok_or_else(|| invalid(format!("`{field}.{k}` is not a string")))?;
            let v = if decode {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(v.trim())
                    .map_err(|e| invalid(format!("`{field}.{k}` is not valid base64: {e}")))?;
                String::from_utf8_lossy(&raw).into_owned()
            } else {
                v.to_string()
            };
            if !is_valid_var_name(k) {
                return Err(invalid(name_error(k)));
            }
            vars.insert(k.clone(), v.replace('\n', ""));
        }
        Ok(())
    };
    match kind {
        "ConfigMap" => take("data", false)?,
        "Secret" => {
            take("data", true)?;
            take("stringData", false)?;
        }
        other => {
            return Err(invalid(format!(
                "expected a ConfigMap or Secret, found kind `{other}`"
            )))
        }
    }
    Ok(vars)
}
