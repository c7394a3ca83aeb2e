//! Step 2 of `YAMLToJSON`: the node tree decoded as yaml.v2 `Unmarshal` into `interface{}`
//! does (`decode.go`): YAML 1.1 resolution of plain scalars, explicit tags, merge keys,
//! aliases with their recursion and expansion guards, the last duplicate key winning.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;

use super::parse::{Node, NodeKind, Pos, Tree};
use super::{
    YamlJsonError, BINARY_TAG, BOOL_TAG, FLOAT_TAG, INT_TAG, MAX_DEPTH, MERGE_TAG, NULL_TAG,
    STR_TAG, TIMESTAMP_TAG,
};
use crate::alias::{AliasBound, AliasGuard};
use crate::v2::ScalarStyle;

/// A value as yaml.v2 decodes it into `interface{}`.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64, Pos),
    /// Bytes, because `!!binary` can decode to invalid UTF-8.
    Str(Vec<u8>),
    Seq(Vec<Value>),
    Map(Vec<(Key, Value)>),
}

/// A map key as yaml.v2 keeps it: Go interface equality decides duplicates.
#[derive(Debug, Clone)]
pub(super) enum Key {
    Null(Pos),
    Bool(bool),
    Int(i64),
    Uint(u64, Pos),
    Float(f64),
    Str(Vec<u8>),
}

/// A yaml.v2 map being decoded, with its keys indexed so that setting N keys is linear (a
/// scan per key made a mapping of 10,000 keys cost 50 million comparisons).
#[derive(Default)]
pub(super) struct MapBuilder {
    pub(super) entries: Vec<(Key, Value)>,
    /// Where each key that can equal another sits in `entries`.
    pub(super) index: HashMap<KeyHash, usize>,
}

/// What decides whether two keys are equal (Go `==` on `interface{}` values: same dynamic
/// type and equal value), hashable; a NaN has none, for it equals nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum KeyHash {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// The bits, with -0 as 0 (Go's `==` finds them equal).
    Float(u64),
    Str(Vec<u8>),
}

impl Key {
    pub(super) fn hash_key(&self) -> Option<KeyHash> {
        Some(match self {
            Key::Null(_) => KeyHash::Null,
            Key::Bool(b) => KeyHash::Bool(*b),
            Key::Int(i) => KeyHash::Int(*i),
            Key::Uint(u, _) => KeyHash::Uint(*u),
            Key::Float(f) if f.is_nan() => return None,
            Key::Float(f) => KeyHash::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
            Key::Str(s) => KeyHash::Str(s.clone()),
        })
    }
}

impl MapBuilder {
    /// Sets `key`: a later equal key replaces the earlier in its place (decode.go
    /// `setMapIndex`).
    pub(super) fn set(&mut self, key: Key, value: Value) {
        let Some(hash) = key.hash_key() else {
            self.entries.push((key, value));
            return;
        };
        if let Some(&i) = self.index.get(&hash) {
            self.entries[i] = (key, value);
        } else {
            self.index.insert(hash, self.entries.len());
            self.entries.push((key, value));
        }
    }
}

pub(super) struct Decoder<'t> {
    pub(super) nodes: &'t [Node],
    pub(super) guard: AliasGuard,
    pub(super) alias_depth: usize,
    pub(super) active_aliases: HashSet<usize>,
}

impl<'t> Decoder<'t> {
    pub(super) fn new(tree: &'t Tree) -> Self {
        Decoder {
            nodes: &tree.nodes,
            guard: AliasGuard::new(),
            alias_depth: 0,
            active_aliases: HashSet::new(),
        }
    }

    /// decode.go `unmarshal()`: counts decodes and refuses excessive alias expansion, and
    /// the bytes of a scalar an alias copies ([`crate::alias`]). Out of line: `unmarshal`'s
    /// frame stays small, as it recurses.
    #[inline(never)]
    pub(super) fn count(&mut self, node: usize) -> Result<(), YamlJsonError> {
        let in_alias = self.alias_depth > 0;
        self.guard.count(in_alias).map_err(alias_error)?;
        if let (true, NodeKind::Scalar { value, .. }) = (in_alias, &self.nodes[node].kind) {
            self.guard
                .copy_bytes(value.len() as u64)
                .map_err(alias_error)?;
        }
        Ok(())
    }

    pub(super) fn check_depth(&self, node: usize, depth: usize) -> Result<(), YamlJsonError> {
        if depth > MAX_DEPTH {
            let pos = self.nodes[node].pos;
            return Err(YamlJsonError::TooDeep {
                line: pos.line,
                column: pos.column,
                limit: MAX_DEPTH,
            });
        }
        Ok(())
    }

    pub(super) fn unmarshal(&mut self, node: usize, depth: usize) -> Result<Value, YamlJsonError> {
        self.count(node)?;
        self.check_depth(node, depth)?;
        let nodes = self.nodes;
        match &nodes[node].kind {
            NodeKind::Scalar { value, style, tag } => {
                resolve_scalar(value, *style, tag.as_deref(), nodes[node].pos)
            }
            NodeKind::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for &item in items {
                    out.push(self.unmarshal(item, depth + 1)?);
                }
                Ok(Value::Seq(out))
            }
            NodeKind::Mapping(_) => {
                let mut map = MapBuilder::default();
                self.mapping_into(node, &mut map, depth)?;
                Ok(Value::Map(map.entries))
            }
            &NodeKind::Alias(target) => {
                self.enter_alias(node)?;
                let result = self.unmarshal(target, depth + 1);
                self.leave_alias(node);
                result
            }
        }
    }

    /// decode.go `alias()`: an alias met again while it is being expanded is a cycle.
    pub(super) fn enter_alias(&mut self, node: usize) -> Result<(), YamlJsonError> {
        if !self.active_aliases.insert(node) {
            let pos = self.nodes[node].pos;
            return Err(YamlJsonError::RecursiveAlias {
                line: pos.line,
                column: pos.column,
            });
        }
        self.alias_depth += 1;
        Ok(())
    }

    pub(super) fn leave_alias(&mut self, node: usize) {
        self.alias_depth -= 1;
        self.active_aliases.remove(&node);
    }

    /// Decodes a mapping (or an alias of one) into an existing map, as a merge does.
    pub(super) fn unmarshal_into(
        &mut self,
        node: usize,
        map: &mut MapBuilder,
        depth: usize,
    ) -> Result<(), YamlJsonError> {
        self.count(node)?;
        self.check_depth(node, depth)?;
        match self.nodes[node].kind {
            NodeKind::Mapping(_) => self.mapping_into(node, map, depth),
            NodeKind::Alias(target) => {
                self.enter_alias(node)?;
                let result = self.unmarshal_into(target, map, depth + 1);
                self.leave_alias(node);
                result
            }
            NodeKind::Scalar { .. } | NodeKind::Sequence(_) => Err(self.invalid_merge(node)),
        }
    }

    pub(super) fn mapping_into(
        &mut self,
        node: usize,
        map: &mut MapBuilder,
        depth: usize,
    ) -> Result<(), YamlJsonError> {
        let nodes = self.nodes;
        let NodeKind::Mapping(children) = &nodes[node].kind else {
            return Err(self.invalid_merge(node));
        };
        for pair in children.chunks(2) {
            let &[key_node, value_node] = pair else {
                continue;
            };
            if is_merge(&nodes[key_node].kind) {
                self.merge(value_node, map, depth + 1)?;
                continue;
            }
            let key_pos = nodes[key_node].pos;
            let key = match self.unmarshal(key_node, depth + 1)? {
                Value::Null => Key::Null(key_pos),
                Value::Bool(b) => Key::Bool(b),
                Value::Int(i) => Key::Int(i),
                Value::Uint(u) => Key::Uint(u, key_pos),
                Value::Float(f, _) => Key::Float(f),
                Value::Str(s) => Key::Str(s),
                // decode.go mapping(): "invalid map key".
                Value::Seq(_) | Value::Map(_) => {
                    return Err(YamlJsonError::CollectionKey {
                        line: key_pos.line,
                        column: key_pos.column,
                    })
                }
            };
            let value = self.unmarshal(value_node, depth + 1)?;
            map.set(key, value);
        }
        Ok(())
    }

    /// decode.go `merge()`: a mapping, an alias of one, or a sequence of those (last first, so
    /// earlier ones win). Merged keys overwrite keys already set, whatever their position.
    pub(super) fn merge(
        &mut self,
        node: usize,
        map: &mut MapBuilder,
        depth: usize,
    ) -> Result<(), YamlJsonError> {
        let nodes = self.nodes;
        match &nodes[node].kind {
            NodeKind::Mapping(_) => self.unmarshal_into(node, map, depth),
            NodeKind::Alias(target) => {
                if !matches!(nodes[*target].kind, NodeKind::Mapping(_)) {
                    return Err(self.invalid_merge(node));
                }
                self.unmarshal_into(node, map, depth)
            }
            NodeKind::Sequence(items) => {
                for &item in items.iter().rev() {
                    let is_map = match &nodes[item].kind {
                        NodeKind::Alias(target) => {
                            matches!(nodes[*target].kind, NodeKind::Mapping(_))
                        }
                        kind => matches!(kind, NodeKind::Mapping(_)),
                    };
                    if !is_map {
                        return Err(self.invalid_merge(item));
                    }
                    self.unmarshal_into(item, map, depth + 1)?;
                }
                Ok(())
            }
            NodeKind::Scalar { .. } => Err(self.invalid_merge(node)),
        }
    }

    pub(super) fn invalid_merge(&self, node: usize) -> YamlJsonError {
        let pos = self.nodes[node].pos;
        YamlJsonError::InvalidMerge {
            line: pos.line,
            column: pos.column,
        }
    }
}

/// decode.go `isMerge()`: a `<<` key that is plain and untagged, or tagged `!!merge`.
pub(super) fn is_merge(kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Scalar { value, style, tag } => {
            value == "<<"
                && (is_implicit(*style, tag.as_deref()) || tag.as_deref() == Some(MERGE_TAG))
        }
        _ => false,
    }
}

/// libyaml's `plain_implicit` (parserc.go): plain and untagged, or tagged with the bare `!`.
pub(super) fn is_implicit(style: ScalarStyle, tag: Option<&str>) -> bool {
    (tag.is_none() && style == ScalarStyle::Plain) || tag == Some("!")
}

/// The error of a crossed alias bound.
fn alias_error(bound: AliasBound) -> YamlJsonError {
    match bound {
        AliasBound::Ratio { .. } => YamlJsonError::ExcessiveAliasing,
        AliasBound::Bytes { bytes } => YamlJsonError::AliasedBytes { bytes },
    }
}

/// decode.go `scalar()` into `interface{}`.
pub(super) fn resolve_scalar(
    value: &str,
    style: ScalarStyle,
    tag: Option<&str>,
    pos: Pos,
) -> Result<Value, YamlJsonError> {
    if tag.is_none() && !is_implicit(style, tag) {
        // Quoted and block scalars without a tag are strings (decode.go scalar()).
        return Ok(Value::Str(value.as_bytes().to_vec()));
    }
    let tag = tag.unwrap_or("");
    let (rtag, resolved) = resolve(tag, value, pos)?;
    match rtag {
        BINARY_TAG => decode_binary(value, pos),
        // decode.go: a timestamp decoded into interface{} stays the original string.
        TIMESTAMP_TAG => Ok(Value::Str(value.as_bytes().to_vec())),
        _ => Ok(resolved),
    }
}

/// Go's base64.`StdEncoding.DecodeString`: padding required, `\r` and `\n` ignored.
pub(super) fn decode_binary(value: &str, pos: Pos) -> Result<Value, YamlJsonError> {
    const ENGINE: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
    );
    let cleaned: String = value
        .chars()
        .filter(|c| !matches!(c, '\r' | '\n'))
        .collect();
    ENGINE
        .decode(cleaned)
        .map(Value::Str)
        .map_err(|_| YamlJsonError::InvalidBinary {
            line: pos.line,
            column: pos.column,
        })
}

/// resolve.go `resolve()`: YAML 1.1 typing of a scalar, checked against an explicit tag.
pub(super) fn resolve<'a>(
    tag: &'a str,
    input: &str,
    pos: Pos,
) -> Result<(&'a str, Value), YamlJsonError> {
    let resolvable = matches!(
        tag,
        "" | STR_TAG | BOOL_TAG | INT_TAG | FLOAT_TAG | NULL_TAG | TIMESTAMP_TAG
    );
    if !resolvable {
        // resolve.go: unknown tags (`!foo`, `!`, `!!binary`, `!!merge` ...) keep the text.
        return Ok((tag, Value::Str(input.as_bytes().to_vec())));
    }
    let (rtag, out) = resolve_untagged(tag, input, pos);
    if tag.is_empty() || tag == rtag || tag == STR_TAG {
        return Ok((rtag, out));
    }
    // resolve.go: `!!float` accepts an int and converts it (not a uint64).
    if tag == FLOAT_TAG {
        if let Value::Int(i) = out {
            #[allow(clippy::cast_precision_loss)]
            return Ok((FLOAT_TAG, Value::Float(i as f64, pos)));
        }
    }
    Err(YamlJsonError::TagMismatch {
        line: pos.line,
        column: pos.column,
        value: input.to_owned(),
        tag: short_tag(tag),
    })
}

pub(super) fn short_tag(tag: &str) -> String {
    tag.strip_prefix("tag:yaml.org,2002:")
        .map_or_else(|| tag.to_owned(), |rest| format!("!!{rest}"))
}

/// The body of resolve.go `resolve()`, as yaml.v2 resolves.
pub(super) fn resolve_untagged(tag: &str, input: &str, pos: Pos) -> (&'static str, Value) {
    use crate::resolve::{resolve, Flavour, Resolved};
    let resolved = resolve(Flavour::V2, tag, input);
    let value = match resolved {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::Int(i),
        Resolved::Uint(u) => Value::Uint(u),
        Resolved::Float(f) => Value::Float(f, pos),
        Resolved::Timestamp | Resolved::Str => Value::Str(input.as_bytes().to_vec()),
    };
    (resolved.tag(), value)
}
