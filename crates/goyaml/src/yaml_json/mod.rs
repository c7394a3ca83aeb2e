//! Re-reading substituted YAML the way Go's `sigs.k8s.io/yaml.YAMLToJSON` does.
//!
//! kustomize-controller runs `sigs.k8s.io/yaml` v1.6.0 `YAMLToJSON` on every resource after
//! envsubst. That function unmarshals with `go.yaml.in/yaml/v2` v2.4.x (the libyaml port of
//! `gopkg.in/yaml.v2`, YAML 1.1 typing), turns non-string map keys into strings, and prints the
//! result with Go's `encoding/json`. This module reproduces the three steps:
//!
//! 1. **Parse** the first document into a node tree with [`crate::v2`], a port of
//!    yaml.v2's reader, scanner and parser: YAML 1.1 syntax with libyaml's corners (a YAML
//!    1.2 parser differed on line breaks, tabs, escapes, flow indicators and keys), each
//!    scalar with its style and tag, which decide YAML 1.1 typing.
//! 2. **Decode** the tree as yaml.v2 `Unmarshal` into `interface{}` does (`resolve.go`,
//!    `decode.go`): plain-scalar resolution, explicit tags, merge keys, aliases with their
//!    recursion and expansion guards, last duplicate key wins.
//! 3. **Encode** as `sigs.k8s.io/yaml` (`yaml.go`, key conversion) and `encoding/json`
//!    (`encode.go`: sorted keys, HTML escaping, ES6-style float formatting) do.
//!
//! Nesting is limited to [`MAX_DEPTH`] levels so that no input can overflow the stack.
//!
//! Known differences from Go: nesting deeper than [`MAX_DEPTH`] fails where Go succeeds;
//! where Go picks a random winner between two keys that only differ in YAML type (`1` and
//! `"1"`), the last one in the document wins here. Integers beyond uint64 follow upstream
//! yaml.v2 v2.4.0 (a float, or a string for hex), not the big-integer patch of the
//! `sigs.k8s.io/yaml/goyaml.v2` fork.

mod decode;
mod encode;
mod parse;
#[cfg(test)]
mod tests;

use decode::Decoder;
use encode::{to_json_value, to_serde_value, write_json};
use parse::parse_first_document;

/// Deepest nesting (collections and alias hops) accepted before giving up with an error.
pub const MAX_DEPTH: usize = 256;

use crate::resolve::{
    BINARY_TAG, BOOL_TAG, FLOAT_TAG, INT_TAG, MERGE_TAG, NULL_TAG, STR_TAG, TIMESTAMP_TAG,
};

/// Why YAML text could not be converted to JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlJsonError {
    /// The text is not valid YAML (as libyaml reads it).
    #[error("invalid YAML at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
        /// The message yaml.v2 gives, without its `yaml: ` prefix (its line numbers are its
        /// own: 0-based for parser errors).
        go: String,
    },
    /// A character libyaml refuses to read (C0/C1 controls, DEL, U+FFFE, U+FFFF).
    #[error("invalid YAML at line {line}, column {column}: control character U+{code:04X} is not allowed")]
    ControlCharacter {
        line: usize,
        column: usize,
        code: u32,
    },
    /// An explicit tag that does not fit the scalar, such as `!!int abc`.
    #[error("cannot decode `{value}` as {tag} at line {line}, column {column}")]
    TagMismatch {
        line: usize,
        column: usize,
        value: String,
        tag: String,
    },
    /// A `!!binary` scalar that is not valid base64.
    #[error("the !!binary value at line {line}, column {column} is not valid base64")]
    InvalidBinary { line: usize, column: usize },
    /// An alias used inside the node its anchor names.
    #[error("the alias at line {line}, column {column} refers to a node that contains it")]
    RecursiveAlias { line: usize, column: usize },
    /// Alias expansion out of proportion to the document (yaml.v2's billion-laughs guard,
    /// [`crate::alias`]).
    #[error("the document contains excessive aliasing (go-yaml's bound: at most 99% of the decoded nodes may come from aliases, down to 10% in very large documents)")]
    ExcessiveAliasing,
    /// Aliases copying more text than fluxsim's bound ([`crate::alias::MAX_ALIASED_BYTES`]).
    #[error("the document's aliases copy more than fluxsim's bound of {} MiB of text (at least {bytes} bytes)", crate::alias::MAX_ALIASED_BYTES >> 20)]
    AliasedBytes { bytes: u64 },
    /// A mapping or sequence used as a mapping key.
    #[error(
        "invalid map key at line {line}, column {column}: a mapping or sequence cannot be a key"
    )]
    CollectionKey { line: usize, column: usize },
    /// A merge key `<<` whose value is not a mapping or a sequence of mappings.
    #[error("the merge key `<<` at line {line}, column {column} needs a mapping or a sequence of mappings")]
    InvalidMerge { line: usize, column: usize },
    /// A key JSON cannot represent (null, or an integer above the int64 range).
    #[error("unsupported map key at line {line}, column {column}: {key} cannot become a JSON object key")]
    UnsupportedKey {
        line: usize,
        column: usize,
        key: String,
    },
    /// A float value JSON cannot represent.
    #[error("cannot encode {value} at line {line}, column {column} as JSON, which has no infinity or NaN")]
    UnsupportedFloat {
        line: usize,
        column: usize,
        value: String,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("the YAML at line {line}, column {column} is nested deeper than {limit} levels")]
    TooDeep {
        line: usize,
        column: usize,
        limit: usize,
    },
}

/// Converts YAML text to JSON text exactly as Go's `sigs.k8s.io/yaml.YAMLToJSON` does
pub fn yaml_to_json(input: &str) -> Result<String, YamlJsonError> {
    let mut out = String::new();
    match decoded(input)? {
        Some(value) => write_json(&to_json_value(value)?, &mut out),
        // An empty stream unmarshals to nil: yaml.go marshals it as `null`.
        None => out.push_str("null"),
    }
    Ok(out)
}

/// [`yaml_to_json`] read by `serde_json`, without the JSON text in between: the same value
/// as `serde_json::from_str(&yaml_to_json(input)?)` (pinned by a test on every vector).
pub fn yaml_to_value(input: &str) -> Result<serde_json::Value, YamlJsonError> {
    decoded(input)?.map_or(Ok(serde_json::Value::Null), to_serde_value)
}

/// Steps 1 and 2; `None` for an empty stream.
fn decoded(input: &str) -> Result<Option<decode::Value>, YamlJsonError> {
    let tree = parse_first_document(input)?;
    let Some(root) = tree.root else {
        return Ok(None);
    };
    let mut decoder = Decoder::new(&tree);
    // decode.go: the document node itself counts as one decode.
    decoder.count(root)?;
    Ok(Some(decoder.unmarshal(root, 0)?))
}
