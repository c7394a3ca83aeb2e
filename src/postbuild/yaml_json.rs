//! Re-reading substituted YAML the way Go's `sigs.k8s.io/yaml.YAMLToJSON` does.
//!
//! kustomize-controller runs `sigs.k8s.io/yaml` v1.6.0 `YAMLToJSON` on every resource after
//! envsubst. That function unmarshals with `go.yaml.in/yaml/v2` v2.4.x (the libyaml port of
//! `gopkg.in/yaml.v2`, YAML 1.1 typing), turns non-string map keys into strings, and prints the
//! result with Go's `encoding/json`. This module reproduces the three steps:
//!
//! 1. **Parse** the first document into a node tree with [`super::goyaml`], a port of
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use base64::Engine as _;

use super::goyaml::parser::Parser;
use super::goyaml::{self, EventKind, Mark, ScalarStyle};

/// Deepest nesting (collections and alias hops) accepted before giving up with an error.
pub const MAX_DEPTH: usize = 256;

const STR_TAG: &str = "tag:yaml.org,2002:str";
const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
const INT_TAG: &str = "tag:yaml.org,2002:int";
const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
const NULL_TAG: &str = "tag:yaml.org,2002:null";
const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

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
    /// Alias expansion out of proportion to the document (yaml.v2's billion-laughs guard).
    #[error("the document contains excessive aliasing")]
    ExcessiveAliasing,
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
    let tree = parse_first_document(input)?;
    let Some(root) = tree.root else {
        // An empty stream unmarshals to nil: yaml.go marshals it as `null`.
        return Ok("null".to_owned());
    };
    let mut decoder = Decoder::new(&tree);
    // decode.go: the document node itself counts as one decode.
    decoder.count()?;
    let value = decoder.unmarshal(root, 0)?;
    let json = to_json_value(value)?;
    let mut out = String::new();
    write_json(&json, &mut out);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Parsing: events to a flat node tree.
// ---------------------------------------------------------------------------------------------

/// Line (1-based) and column (1-based) of a node, for error messages.
#[derive(Debug, Clone, Copy)]
struct Pos {
    line: usize,
    column: usize,
}

impl Pos {
    fn of(mark: Mark) -> Pos {
        Pos {
            line: mark.line + 1,
            column: mark.column + 1,
        }
    }
}

#[derive(Debug)]
enum NodeKind {
    Scalar {
        value: String,
        style: ScalarStyle,
        tag: Option<String>,
    },
    Sequence(Vec<usize>),
    /// Keys and values alternate.
    Mapping(Vec<usize>),
    /// Index of the anchored node.
    Alias(usize),
}

#[derive(Debug)]
struct Node {
    kind: NodeKind,
    pos: Pos,
}

#[derive(Debug, Default)]
struct Tree {
    nodes: Vec<Node>,
    root: Option<usize>,
}

/// A syntax error as yaml.v2 reports it.
fn syntax_error(input: &str, err: &goyaml::Error) -> YamlJsonError {
    if err.kind == goyaml::ErrorKind::Reader {
        // readerc.go reports only the offset of the refused character.
        let (line, column, code) = offending_character(input);
        return YamlJsonError::ControlCharacter { line, column, code };
    }
    YamlJsonError::Syntax {
        line: err.problem_mark.line + 1,
        column: err.problem_mark.column + 1,
        message: err.problem.clone(),
        go: err.go_text(),
    }
}

/// Line, column and code of the first character libyaml's reader refuses.
fn offending_character(input: &str) -> (usize, usize, u32) {
    let (mut line, mut column) = (1, 1);
    for ch in input.chars() {
        let code = u32::from(ch);
        let allowed = matches!(code, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x1_0000..=0x10_FFFF);
        if !allowed {
            return (line, column, code);
        }
        if ch == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column, 0)
}

/// Builds the node tree of the first document as yaml.v2's decoder does (decode.go `parse`,
/// `document`): the stream start, then the end of the stream (no document: nil) or one
/// document, whose end event is read too, so an error right after its root node counts;
/// whatever follows is never read.
fn parse_first_document(input: &str) -> Result<Tree, YamlJsonError> {
    // decode.go newParser: an empty text is read as a single line break.
    let text = if input.is_empty() { "\n" } else { input };
    let mut parser = Parser::new(text);
    let mut next = || {
        parser
            .next_event()
            .map_err(|e| syntax_error(text, &e))
            .map(|e| e.map(|e| (e.kind, e.start)))
    };
    let mut tree = Tree::default();
    next()?; // STREAM-START
    match next()? {
        Some((EventKind::DocumentStart, _)) => {}
        _ => return Ok(tree),
    }
    let mut anchors: HashMap<String, usize> = HashMap::new();
    // Open collections: node index and its children so far.
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    loop {
        let Some((event, mark)) = next()? else {
            return Ok(tree);
        };
        let pos = Pos::of(mark);
        let sequence = matches!(event, EventKind::SequenceStart { .. });
        let completed = match event {
            EventKind::Scalar {
                anchor,
                tag,
                value,
                style,
            } => {
                let node = push_node(&mut tree, NodeKind::Scalar { value, style, tag }, pos);
                if let Some(anchor) = anchor {
                    anchors.insert(anchor, node);
                }
                Some(node)
            }
            EventKind::Alias { anchor } => {
                // decode.go alias(): an anchor not defined before is an error at once.
                let Some(&target) = anchors.get(&anchor) else {
                    return Err(YamlJsonError::Syntax {
                        line: pos.line,
                        column: pos.column,
                        message: format!("unknown anchor '{anchor}' referenced"),
                        go: format!("unknown anchor '{anchor}' referenced"),
                    });
                };
                Some(push_node(&mut tree, NodeKind::Alias(target), pos))
            }
            EventKind::SequenceStart { anchor, .. } | EventKind::MappingStart { anchor, .. } => {
                let kind = if sequence {
                    NodeKind::Sequence(Vec::new())
                } else {
                    NodeKind::Mapping(Vec::new())
                };
                let node = push_node(&mut tree, kind, pos);
                // decode.go: the anchor is known before the children are read.
                if let Some(anchor) = anchor {
                    anchors.insert(anchor, node);
                }
                open.push((node, Vec::new()));
                None
            }
            EventKind::SequenceEnd | EventKind::MappingEnd => {
                let Some((node, children)) = open.pop() else {
                    return Ok(tree);
                };
                match &mut tree.nodes[node].kind {
                    NodeKind::Sequence(items) | NodeKind::Mapping(items) => *items = children,
                    NodeKind::Scalar { .. } | NodeKind::Alias(_) => {}
                }
                Some(node)
            }
            EventKind::StreamStart
            | EventKind::StreamEnd
            | EventKind::DocumentStart
            | EventKind::DocumentEnd => return Ok(tree),
        };
        if let Some(node) = completed {
            if let Some((_, children)) = open.last_mut() {
                children.push(node);
            } else {
                tree.root = Some(node);
                // decode.go document(): p.expect(yaml_DOCUMENT_END_EVENT).
                next()?;
                return Ok(tree);
            }
        }
    }
}

fn push_node(tree: &mut Tree, kind: NodeKind, pos: Pos) -> usize {
    tree.nodes.push(Node { kind, pos });
    tree.nodes.len() - 1
}

// ---------------------------------------------------------------------------------------------
// Decoding: yaml.v2 Unmarshal into interface{}.
// ---------------------------------------------------------------------------------------------

/// A value as yaml.v2 decodes it into `interface{}`.
#[derive(Debug, Clone)]
enum Value {
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
enum Key {
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
struct MapBuilder {
    entries: Vec<(Key, Value)>,
    /// Where each key that can equal another sits in `entries`.
    index: HashMap<KeyHash, usize>,
}

/// What decides whether two keys are equal (Go `==` on `interface{}` values: same dynamic
/// type and equal value), hashable; a NaN has none, for it equals nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyHash {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// The bits, with -0 as 0 (Go's `==` finds them equal).
    Float(u64),
    Str(Vec<u8>),
}

impl Key {
    fn hash_key(&self) -> Option<KeyHash> {
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
    fn set(&mut self, key: Key, value: Value) {
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

struct Decoder<'t> {
    nodes: &'t [Node],
    decode_count: u64,
    alias_count: u64,
    alias_depth: usize,
    active_aliases: HashSet<usize>,
}

impl<'t> Decoder<'t> {
    fn new(tree: &'t Tree) -> Self {
        Decoder {
            nodes: &tree.nodes,
            decode_count: 0,
            alias_count: 0,
            alias_depth: 0,
            active_aliases: HashSet::new(),
        }
    }

    /// decode.go `unmarshal()`: counts decodes and refuses excessive alias expansion.
    fn count(&mut self) -> Result<(), YamlJsonError> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        #[allow(clippy::cast_precision_loss)]
        let ratio = self.alias_count as f64 / self.decode_count as f64;
        if self.alias_count > 100
            && self.decode_count > 1000
            && ratio > allowed_alias_ratio(self.decode_count)
        {
            return Err(YamlJsonError::ExcessiveAliasing);
        }
        Ok(())
    }

    fn check_depth(&self, node: usize, depth: usize) -> Result<(), YamlJsonError> {
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

    fn unmarshal(&mut self, node: usize, depth: usize) -> Result<Value, YamlJsonError> {
        self.count()?;
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
    fn enter_alias(&mut self, node: usize) -> Result<(), YamlJsonError> {
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

    fn leave_alias(&mut self, node: usize) {
        self.alias_depth -= 1;
        self.active_aliases.remove(&node);
    }

    /// Decodes a mapping (or an alias of one) into an existing map, as a merge does.
    fn unmarshal_into(
        &mut self,
        node: usize,
        map: &mut MapBuilder,
        depth: usize,
    ) -> Result<(), YamlJsonError> {
        self.count()?;
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

    fn mapping_into(
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
    fn merge(
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

    fn invalid_merge(&self, node: usize) -> YamlJsonError {
        let pos = self.nodes[node].pos;
        YamlJsonError::InvalidMerge {
            line: pos.line,
            column: pos.column,
        }
    }
}

/// decode.go `isMerge()`: a `<<` key that is plain and untagged, or tagged `!!merge`.
fn is_merge(kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Scalar { value, style, tag } => {
            value == "<<"
                && (is_implicit(*style, tag.as_deref()) || tag.as_deref() == Some(MERGE_TAG))
        }
        _ => false,
    }
}

/// libyaml's `plain_implicit` (parserc.go): plain and untagged, or tagged with the bare `!`.
fn is_implicit(style: ScalarStyle, tag: Option<&str>) -> bool {
    (tag.is_none() && style == ScalarStyle::Plain) || tag == Some("!")
}

/// decode.go `allowedAliasRatio()`: 99% aliases for small documents, scaling down to 10%.
fn allowed_alias_ratio(decode_count: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        #[allow(clippy::cast_precision_loss)]
        let scaled = (decode_count - LOW) as f64 / (HIGH - LOW) as f64;
        0.99 - 0.89 * scaled
    }
}

/// decode.go `scalar()` into `interface{}`.
fn resolve_scalar(
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
fn decode_binary(value: &str, pos: Pos) -> Result<Value, YamlJsonError> {
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
fn resolve<'a>(tag: &'a str, input: &str, pos: Pos) -> Result<(&'a str, Value), YamlJsonError> {
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

fn short_tag(tag: &str) -> String {
    tag.strip_prefix("tag:yaml.org,2002:")
        .map_or_else(|| tag.to_owned(), |rest| format!("!!{rest}"))
}

/// The body of resolve.go `resolve()`: what the text looks like, by its first byte.
fn resolve_untagged(tag: &str, input: &str, pos: Pos) -> (&'static str, Value) {
    let string = || (STR_TAG, Value::Str(input.as_bytes().to_vec()));
    let hint = match input.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return string(),
    };
    if tag == STR_TAG {
        return string();
    }
    if let Some(found) = resolve_map(input, pos) {
        return found;
    }
    match hint {
        b'.' => {
            if let Some(f) = go_parse_float(input) {
                return (FLOAT_TAG, Value::Float(f, pos));
            }
        }
        b'D' | b'S' => {
            if (tag.is_empty() || tag == TIMESTAMP_TAG) && parse_timestamp(input) {
                return (TIMESTAMP_TAG, Value::Str(input.as_bytes().to_vec()));
            }
            let plain = input.replace('_', "");
            if let Some(i) = go_parse_int(&plain, 0) {
                return (INT_TAG, Value::Int(i));
            }
            if let Some(u) = go_parse_uint(&plain, 0) {
                return (INT_TAG, Value::Uint(u));
            }
            if is_yaml_style_float(&plain) {
                if let Some(f) = go_parse_float(&plain) {
                    return (FLOAT_TAG, Value::Float(f, pos));
                }
            }
            if let Some(bits) = plain.strip_prefix("0b") {
                if let Some(i) = go_parse_int(bits, 2) {
                    return (INT_TAG, Value::Int(i));
                }
                if let Some(u) = go_parse_uint(bits, 2) {
                    return (INT_TAG, Value::Uint(u));
                }
            } else if let Some(bits) = plain.strip_prefix("-0b") {
                if let Some(i) = go_parse_int(&format!("-{bits}"), 2) {
                    return (INT_TAG, Value::Int(i));
                }
            }
        }
        _ => {}
    }
    string()
}

/// resolve.go `resolveMap`: the YAML 1.1 words (booleans, nulls, infinities, NaN).
fn resolve_map(input: &str, pos: Pos) -> Option<(&'static str, Value)> {
    Some(match input {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (BOOL_TAG, Value::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (BOOL_TAG, Value::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (NULL_TAG, Value::Null),
        ".nan" | ".NaN" | ".NAN" => (FLOAT_TAG, Value::Float(f64::NAN, pos)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            (FLOAT_TAG, Value::Float(f64::INFINITY, pos))
        }
        "-.inf" | "-.Inf" | "-.INF" => (FLOAT_TAG, Value::Float(f64::NEG_INFINITY, pos)),
        _ => return None,
    })
}

/// resolve.go `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(crate) fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go strconv.`ParseUint`(s, base, 64); base 0 reads the 0x, 0o, 0b and leading-0 prefixes.
/// Underscores are never passed in (resolve.go strips them first).
pub(crate) fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if base == 0 {
        let b = s.as_bytes();
        if b[0] == b'0' && s.len() >= 3 && matches!(b[1] | 0x20, b'b' | b'o' | b'x') {
            let radix = match b[1] | 0x20 {
                b'b' => 2,
                b'o' => 8,
                _ => 16,
            };
            (&s[2..], radix)
        } else if b[0] == b'0' {
            (&s[1..], 8)
        } else {
            (s, 10)
        }
    } else {
        (s, base)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(36)?;
        if d >= radix {
            return None;
        }
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go strconv.`ParseInt`(s, base, 64): an optional sign, then `ParseUint`'s syntax.
pub(crate) fn go_parse_int(s: &str, base: u32) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest, base)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go strconv.`ParseFloat`(s, 64) for decimal text: an out-of-range result is an error.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    // Only decimal digits, one dot, an exponent, and Go-style underscores (atof.go readFloat).
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut i = 0;
    let bb = body.as_bytes();
    while i < bb.len() {
        match bb[i] {
            b'0'..=b'9' => seen_digit = true,
            b'_' => {}
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    if i < bb.len() {
        if bb[i] | 0x20 != b'e' {
            return None;
        }
        i += 1;
        if matches!(bb.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !bb.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while i < bb.len() && (bb[i].is_ascii_digit() || bb[i] == b'_') {
            i += 1;
        }
        if i != bb.len() {
            return None;
        }
    }
    if s.contains('_') && !underscore_ok(b) {
        return None;
    }
    let f: f64 = s.replace('_', "").parse().ok()?;
    f.is_finite().then_some(f)
}

/// Go strconv `underscoreOK`: underscores only between digits.
fn underscore_ok(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    let mut saw = b'^';
    for &c in s {
        if c.is_ascii_digit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// resolve.go `parseTimestamp()`: `YYYY-` then one of four Go time layouts.
fn parse_timestamp(s: &str) -> bool {
    use Chunk::{Day, Frac, Hour, Lit, Minute, Month, Second, Year, Zone};
    let b = s.as_bytes();
    let year_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if year_digits != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    let layouts: [&[Chunk]; 4] = [
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit("T"),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
            Zone,
        ],
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit("t"),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
            Zone,
        ],
        &[
            Year,
            Lit("-"),
            Month,
            Lit("-"),
            Day,
            Lit(" "),
            Hour,
            Lit(":"),
            Minute,
            Lit(":"),
            Second,
            Frac,
        ],
        &[Year, Lit("-"), Month, Lit("-"), Day],
    ];
    layouts.iter().any(|layout| go_time_parse(layout, b))
}

#[derive(Clone, Copy)]
enum Chunk {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Frac,
    Zone,
    Lit(&'static str),
}

/// The subset of Go's time.Parse used by the four timestamp layouts (time/format.go).
fn go_time_parse(layout: &[Chunk], mut v: &[u8]) -> bool {
    // time/format.go getnum(): one or two digits.
    fn getnum(v: &[u8], fixed: bool) -> Option<(u32, &[u8])> {
        let d0 = v.first().filter(|c| c.is_ascii_digit())?;
        match v.get(1).filter(|c| c.is_ascii_digit()) {
            Some(d1) => Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), &v[2..])),
            None if fixed => None,
            None => Some((u32::from(d0 - b'0'), &v[1..])),
        }
    }
    let (mut year, mut month, mut day) = (0u32, 0u32, 0u32);
    for chunk in layout {
        match *chunk {
            Chunk::Lit(lit) => {
                // time/format.go skip(): a space in the layout matches a run of spaces.
                for &p in lit.as_bytes() {
                    if p == b' ' {
                        if v.first().is_some_and(|&c| c != b' ') {
                            return false;
                        }
                        while v.first() == Some(&b' ') {
                            v = &v[1..];
                        }
                    } else if v.first() == Some(&p) {
                        v = &v[1..];
                    } else {
                        return false;
                    }
                }
            }
            Chunk::Year => {
                if v.len() < 4 || !v[..4].iter().all(u8::is_ascii_digit) {
                    return false;
                }
                year = v[..4]
                    .iter()
                    .fold(0, |acc, c| acc * 10 + u32::from(c - b'0'));
                v = &v[4..];
            }
            Chunk::Month | Chunk::Day | Chunk::Hour | Chunk::Minute | Chunk::Second => {
                let Some((n, rest)) = getnum(v, false) else {
                    return false;
                };
                v = rest;
                let ok = match chunk {
                    Chunk::Month => (1..=12).contains(&n),
                    Chunk::Hour => n < 24,
                    Chunk::Minute | Chunk::Second => n < 60,
                    _ => n <= 31,
                };
                if !ok {
                    return false;
                }
                match chunk {
                    Chunk::Month => month = n,
                    Chunk::Day => day = n,
                    _ => {}
                }
            }
            Chunk::Frac => {
                if v.len() >= 2 && matches!(v[0], b'.' | b',') && v[1].is_ascii_digit() {
                    let digits = v[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                    v = &v[1 + digits..];
                }
            }
            Chunk::Zone => {
                if v.first() == Some(&b'Z') {
                    v = &v[1..];
                    continue;
                }
                if v.len() < 6 || v[3] != b':' || !matches!(v[0], b'+' | b'-') {
                    return false;
                }
                let (Some((hours, _)), Some((minutes, _))) =
                    (getnum(&v[1..3], true), getnum(&v[4..6], true))
                else {
                    return false;
                };
                if hours > 24 || minutes > 60 {
                    return false;
                }
                v = &v[6..];
            }
        }
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    v.is_empty() && day >= 1 && day <= days_in_month
}

// ---------------------------------------------------------------------------------------------
// Encoding: sigs.k8s.io/yaml key conversion, then encoding/json.
// ---------------------------------------------------------------------------------------------

/// A value ready for `encoding/json`: every map key is a string.
#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<Json>),
    Object(BTreeMap<Vec<u8>, Json>),
}

/// yaml.go `convertToJSONableObject()`: string keys for every map, and encoding/json's
/// refusal of infinities and NaN (encode.go `floatEncoder`).
fn to_json_value(value: Value) -> Result<Json, YamlJsonError> {
    Ok(match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(b),
        Value::Int(i) => Json::Int(i),
        Value::Uint(u) => Json::Uint(u),
        Value::Float(f, pos) => {
            if !f.is_finite() {
                return Err(YamlJsonError::UnsupportedFloat {
                    line: pos.line,
                    column: pos.column,
                    value: go_format_float32_g(f),
                });
            }
            Json::Float(f)
        }
        Value::Str(s) => Json::Str(s),
        Value::Seq(items) => Json::Array(
            items
                .into_iter()
                .map(to_json_value)
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(entries) => {
            let mut object = BTreeMap::new();
            for (key, value) in entries {
                // Keys that only differ in YAML type (`1` and `"1"`) collide here; Go's map
                // iteration makes the winner random, this keeps the last in document order.
                object.insert(json_key(key)?, to_json_value(value)?);
            }
            Json::Object(object)
        }
    })
}

/// yaml.go `convertToJSONableObject()`: how a non-string key becomes a JSON key.
fn json_key(key: Key) -> Result<Vec<u8>, YamlJsonError> {
    Ok(match key {
        Key::Str(s) => s,
        Key::Int(i) => i.to_string().into_bytes(),
        Key::Bool(b) => b.to_string().into_bytes(),
        // yaml.go formats float keys as float32 with 'g', and names infinities the YAML way.
        Key::Float(f) => go_format_float32_g(f).into_bytes(),
        Key::Null(pos) => {
            return Err(YamlJsonError::UnsupportedKey {
                line: pos.line,
                column: pos.column,
                key: "null".to_owned(),
            })
        }
        // yaml.go has no case for uint64 keys (values above the int64 range).
        Key::Uint(u, pos) => {
            return Err(YamlJsonError::UnsupportedKey {
                line: pos.line,
                column: pos.column,
                key: format!("the unsigned integer {u}"),
            })
        }
    })
}

/// Shortest decimal digits of a finite float and its exponent `e`, value = 0.d1d2.. × 10^(e+1).
fn shortest_digits(scientific: &str) -> (bool, String, i32) {
    let negative = scientific.starts_with('-');
    let body = scientific.trim_start_matches('-');
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (negative, digits, exp.parse().unwrap_or(0))
}

/// Go strconv.`FormatFloat`(f, 'g', -1, 32), with yaml.go's names for infinities and NaN.
fn go_format_float32_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let single = f as f32;
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    if single == 0.0 {
        return if single.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let (negative, digits, exp) = shortest_digits(&format!("{single:e}"));
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // ftoa.go: %e when the exponent is < -4 or >= the shortest precision (6).
    if (-4..6).contains(&exp) {
        push_f_format(&mut out, &digits, exp);
    } else {
        push_e_format(&mut out, &digits, exp);
    }
    out
}

/// `d.ddde±XX` with at least two exponent digits (strconv 'e' format).
fn push_e_format(out: &mut String, digits: &str, exp: i32) {
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(
        out,
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    );
}

/// Plain decimal notation of the shortest digits (strconv 'f' format, precision -1).
fn push_f_format(out: &mut String, digits: &str, exp: i32) {
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
        return;
    }
    let int_len = usize::try_from(exp).unwrap_or(0) + 1;
    if digits.len() <= int_len {
        out.push_str(digits);
        for _ in digits.len()..int_len {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..int_len]);
        out.push('.');
        out.push_str(&digits[int_len..]);
    }
}

/// A finite float64 as Go's `encoding/json` writes it (`1e+21`, `123456789012345680`).
pub(crate) fn go_json_float(f: f64) -> String {
    let mut out = String::new();
    push_json_float(&mut out, f);
    out
}

/// encoding/json `floatEncoder`: ES6 number formatting of a finite float64.
fn push_json_float(out: &mut String, f: f64) {
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let (negative, digits, exp) = shortest_digits(&format!("{f:e}"));
    if negative {
        out.push('-');
    }
    let abs = f.abs();
    if (1e-6..1e21).contains(&abs) {
        push_f_format(out, &digits, exp);
    } else {
        let start = out.len();
        push_e_format(out, &digits, exp);
        // encode.go: clean up e-09 to e-9.
        let n = out.len();
        if n - start >= 4 && out.as_bytes()[n - 4] == b'e' && &out[n - 3..n - 1] == "-0" {
            out.remove(n - 2);
        }
    }
}

fn write_json(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Json::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Json::Float(f) => push_json_float(out, *f),
        Json::Str(s) => push_json_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, key);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

/// encoding/json `appendString` with HTML escaping: `<`, `>`, `&`, U+2028 and U+2029 as \u
/// escapes, invalid UTF-8 as \ufffd one byte at a time (utf8.`DecodeRuneInString`).
fn push_json_string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    let mut i = 0;
    while i < bytes.len() {
        let window = &bytes[i..bytes.len().min(i + 4)];
        let decoded = match std::str::from_utf8(window) {
            Ok(s) => s.chars().next(),
            Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&window[..e.valid_up_to()])
                .ok()
                .and_then(|s| s.chars().next()),
            Err(_) => None,
        };
        let Some(ch) = decoded else {
            out.push_str("\\ufffd");
            i += 1;
            continue;
        };
        i += ch.len_utf8();
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\0'..='\u{1f}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(ch));
            }
            _ => out.push(ch),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::{yaml_to_json, YamlJsonError, MAX_DEPTH};

    fn json(yaml: &str) -> String {
        match yaml_to_json(yaml) {
            Ok(json) => json,
            Err(err) => panic!("{yaml:?} failed: {err}"),
        }
    }

    fn fails(yaml: &str) -> YamlJsonError {
        match yaml_to_json(yaml) {
            Ok(json) => panic!("{yaml:?} should fail, gave {json}"),
            Err(err) => err,
        }
    }

    // resolve.go resolveMap: YAML 1.1 booleans.
    #[test]
    fn yes_plain_scalar_is_boolean() {
        assert_eq!(
            json("a: yes\nb: No\nc: ON\nd: off\ne: TRUE"),
            r#"{"a":true,"b":false,"c":true,"d":false,"e":true}"#
        );
    }

    #[test]
    fn y_and_n_are_booleans() {
        assert_eq!(json("[y, Y, n, N]"), "[true,true,false,false]");
    }

    #[test]
    fn quoted_yes_is_string() {
        assert_eq!(json("a: 'yes'\nb: \"on\""), r#"{"a":"yes","b":"on"}"#);
    }

    // sigs.k8s.io/yaml on go-yaml v2: a folded scalar keeps one line break around a
    // more-indented line (scannerc.go yaml_parser_scan_block_scalar); saphyr gives two.
    #[test]
    fn folded_scalar_with_more_indented_lines_reads_as_go_yaml_reads_it() {
        assert_eq!(
            json("expression: >-\n  exists(c,\n    c.image.startsWith(\"x\")\n  )\nname: x\n"),
            r#"{"expression":"exists(c,\n  c.image.startsWith(\"x\")\n)","name":"x"}"#
        );
        assert_eq!(json("- >\n  a\n  b\n- c\n"), r#"["a b\n","c"]"#);
        // Checked against sigs.k8s.io/yaml v1.6.0 YAMLToJSON.
        assert_eq!(json("a: >\n  a\n  b\n\n  c\n"), r#"{"a":"a b\nc\n"}"#);
        assert_eq!(json("a: >+\n  a\n\n\n"), r#"{"a":"a\n\n\n"}"#);
        assert_eq!(json("a: >\n  [\n    x\n  ]\n"), r#"{"a":"[\n  x\n]\n"}"#);
        assert_eq!(json("a: >\n  x\n   \n  y\n"), r#"{"a":"x\n \ny\n"}"#);
    }

    #[test]
    fn block_scalar_yes_is_string() {
        assert_eq!(
            json("a: |\n  yes\nb: >-\n  on\n"),
            r#"{"a":"yes\n","b":"on"}"#
        );
    }

    // yaml.go convertToJSONableObject: bool keys become "true"/"false".
    #[test]
    fn boolean_words_as_keys_become_string_keys() {
        assert_eq!(
            json("yes: 1\noff: 2\n'on': 3"),
            r#"{"false":2,"on":3,"true":1}"#
        );
    }

    #[test]
    fn null_words_are_null() {
        assert_eq!(json("[~, null, Null, NULL, ]"), "[null,null,null,null]");
        assert_eq!(json("a:\nb: ~"), r#"{"a":null,"b":null}"#);
    }

    #[test]
    fn empty_input_is_null() {
        assert_eq!(json(""), "null");
        assert_eq!(json("# only a comment\n"), "null");
        assert_eq!(json("---\n"), "null");
    }

    #[test]
    fn leading_zero_is_octal() {
        assert_eq!(json("a: 010\nb: -017\nc: 0"), r#"{"a":8,"b":-15,"c":0}"#);
    }

    // resolve.go: ParseInt fails on 08, the float regexp matches, so it is the float 8.
    #[test]
    fn leading_zero_with_non_octal_digit_is_float() {
        assert_eq!(json("[08, 09.5]"), "[8,9.5]");
    }

    // resolve.go uses Go's ParseInt with base 0, so Go's 0x, 0o and 0b prefixes all work.
    #[test]
    fn hex_binary_and_go_octal_prefixes_are_integers() {
        assert_eq!(
            json("[0x1F, 0X1f, 0b101, 0o17, -0x10, +0b11, -0b101]"),
            "[31,31,5,15,-16,3,-5]"
        );
    }

    #[test]
    fn underscores_are_ignored_in_numbers() {
        assert_eq!(
            json("[1_000, 0x_0A_74_AE, 685_230.15, .5_5]"),
            "[1000,685230,685230.15,0.55]"
        );
    }

    #[test]
    fn signs_and_exponents_are_numbers() {
        assert_eq!(
            json("[+685230, -1, 6.8523e+5, 123456e1, 1., .5, -.5]"),
            "[685230,-1,685230,1234560,1,0.5,-0.5]"
        );
    }

    #[test]
    fn int64_overflow_becomes_uint64() {
        assert_eq!(
            json("a: 9223372036854775807\nb: 12345678901234567890"),
            r#"{"a":9223372036854775807,"b":12345678901234567890}"#
        );
    }

    // resolve.go: past uint64 only the float regexp is left (decimal) or nothing (hex).
    #[test]
    fn integer_beyond_uint64_becomes_float_or_string() {
        assert_eq!(json("[18446744073709551616, -9223372036854775809, +18446744073709551615, 0x10000000000000000]"), r#"[18446744073709552000,-9223372036854776000,18446744073709552000,"0x10000000000000000"]"#);
    }

    #[test]
    fn out_of_range_float_is_string() {
        assert_eq!(json("[1e400, 1e-400, .5e999]"), r#"["1e400",0,".5e999"]"#);
    }

    #[test]
    fn not_quite_numbers_are_strings() {
        assert_eq!(
            json("[1.2.3, 500m, 0x, 1e, '-', 1_, 1:30, 0b2, 1__0, +.5.]"),
            r#"["1.2.3","500m","0x","1e","-",1,"1:30","0b2",10,"+.5."]"#
        );
    }

    // encode.go floatEncoder: ES6 number formatting.
    #[test]
    fn floats_are_formatted_like_go() {
        assert_eq!(json("[1.0, 1e3, 1.5e300, 1e-7, 1e21, 1e20, 0.000001, 0.0000001234, -0.0, 1.50, 3.141592653589793, 1e-10]"),
            "[1,1000,1.5e+300,1e-7,1e+21,100000000000000000000,0.000001,1.234e-7,-0,1.5,3.141592653589793,1e-10]");
    }

    #[test]
    fn infinity_is_an_error() {
        assert!(matches!(
            fails("a: .inf"),
            YamlJsonError::UnsupportedFloat { .. }
        ));
        assert!(matches!(
            fails("a: -.Inf"),
            YamlJsonError::UnsupportedFloat { .. }
        ));
    }

    #[test]
    fn nan_is_an_error() {
        assert!(matches!(
            fails("- .NaN"),
            YamlJsonError::UnsupportedFloat { .. }
        ));
    }

    // yaml.go: float keys go through FormatFloat(f, 'g', -1, 32).
    #[test]
    fn float_keys_use_float32_formatting() {
        assert_eq!(json("1.5: a\n0.1: b\n3.14159265358979: c\n1e7: d\n100000.0: e\n0.00001: f\n.inf: g\n-.inf: h\n.nan: i"),
            r#"{"-.inf":"h",".inf":"g",".nan":"i","0.1":"b","1.5":"a","100000":"e","1e+07":"d","1e-05":"f","3.1415927":"c"}"#);
    }

    #[test]
    fn int_keys_become_strings() {
        assert_eq!(json("1: a\n010: b\n-3: c"), r#"{"-3":"c","1":"a","8":"b"}"#);
    }

    #[test]
    fn null_key_is_an_error() {
        assert!(matches!(
            fails("~: a"),
            YamlJsonError::UnsupportedKey { .. }
        ));
        // parserc.go: a block mapping cannot start with `:`.
        assert!(matches!(
            fails(": a"),
            YamlJsonError::Syntax { ref go, .. } if go == "did not find expected key"
        ));
        assert!(matches!(
            fails("? \n: a"),
            YamlJsonError::UnsupportedKey { .. }
        ));
    }

    #[test]
    fn uint64_key_is_an_error() {
        assert!(matches!(
            fails("12345678901234567890: a"),
            YamlJsonError::UnsupportedKey { .. }
        ));
    }

    // decode.go mapping(): "invalid map key".
    #[test]
    fn collection_key_is_an_error() {
        assert!(matches!(
            fails("? [a]\n: 1"),
            YamlJsonError::CollectionKey { .. }
        ));
        assert!(matches!(
            fails("? {a: 1}\n: 1"),
            YamlJsonError::CollectionKey { .. }
        ));
    }

    // decode.go setMapIndex: non-strict Unmarshal lets the last duplicate win.
    #[test]
    fn duplicate_keys_last_wins() {
        assert_eq!(json("a: 1\nb: 2\na: 3"), r#"{"a":3,"b":2}"#);
        assert_eq!(
            json("yes: 1\ntrue: 2\n1: x\n0x1: z"),
            r#"{"1":"z","true":2}"#
        );
        // Go's == on float64 keys: -0 equals 0, 1.0 equals 1.00, and the map keeps the later
        // key (mapassign updates float keys).
        assert_eq!(
            json("0.0: a\n-0.0: b\n1.0: c\n1.00: d"),
            json("-0.0: b\n1.00: d")
        );
    }

    #[test]
    fn only_first_document_is_used() {
        assert_eq!(json("a: 1\n---\nb: 2\n"), r#"{"a":1}"#);
        assert_eq!(json("---\n---\na: 1\n"), "null");
    }

    // yaml.go parser.parse() stops after the first document (decode_test.go "garbage").
    #[test]
    fn garbage_after_first_document_is_ignored() {
        assert_eq!(json("---\nhello\n...\n}not yaml"), r#""hello""#);
        assert_eq!(json("a: 1\n---\n}{"), r#"{"a":1}"#);
    }

    #[test]
    fn html_characters_are_escaped() {
        assert_eq!(json("a: <b> & c"), r#"{"a":"\u003cb\u003e \u0026 c"}"#);
        assert_eq!(json("<: x"), r#"{"\u003c":"x"}"#);
    }

    #[test]
    fn line_and_paragraph_separators_are_escaped() {
        assert_eq!(json("a: \"x\\Ly\\Pz\""), r#"{"a":"x\u2028y\u2029z"}"#);
    }

    #[test]
    fn control_characters_use_go_escapes() {
        assert_eq!(
            json(r#"a: "\0\x01\b\t\n\f\r\e\x7f\"\\/""#),
            r#"{"a":"\u0000\u0001\b\t\n\f\r\u001b"}"#
                .replace("\\u001b\"", "\\u001b\u{7f}\\\"\\\\/\"")
        );
    }

    #[test]
    fn non_ascii_text_is_kept_raw() {
        assert_eq!(
            json("a: éclair ✓ \u{1F600}"),
            "{\"a\":\"éclair ✓ \u{1F600}\"}"
        );
    }

    #[test]
    fn map_keys_are_sorted_bytewise() {
        assert_eq!(
            json("b: 1\nB: 2\na: 3\n_: 4\né: 5\n10: 6\n9: 7"),
            r#"{"10":6,"9":7,"B":2,"_":4,"a":3,"b":1,"é":5}"#
        );
    }

    #[test]
    fn nested_collections_are_compact() {
        assert_eq!(
            json("a:\n  - b: [1, {c: d}]\n  - []\n  - {}\n"),
            r#"{"a":[{"b":[1,{"c":"d"}]},[],{}]}"#
        );
    }

    // decode.go: a timestamp decoded into interface{} stays the original string.
    #[test]
    fn timestamps_stay_strings() {
        assert_eq!(
            json("[2015-01-01, 2001-12-14t21:59:43.10-05:00, 2015-2-3T3:4:5Z]"),
            r#"["2015-01-01","2001-12-14t21:59:43.10-05:00","2015-2-3T3:4:5Z"]"#
        );
    }

    #[test]
    fn timestamp_tag_checks_the_date() {
        assert_eq!(
            json("a: !!timestamp 2015-01-01\nb: !!timestamp '2015-02-24 18:19:39'"),
            r#"{"a":"2015-01-01","b":"2015-02-24 18:19:39"}"#
        );
        assert!(matches!(
            fails("a: !!timestamp 2015-02-30"),
            YamlJsonError::TagMismatch { .. }
        ));
        assert!(matches!(
            fails("a: !!timestamp soon"),
            YamlJsonError::TagMismatch { .. }
        ));
    }

    #[test]
    fn str_tag_keeps_text() {
        assert_eq!(
            json("[!!str 123, !!str yes, !!str ~, !!str ]"),
            r#"["123","yes","~",""]"#
        );
    }

    // scannerc.go scan_tag_uri: `]` and `,` are URI characters, so `!!str]` is one tag and
    // the sequence is never closed (checked against sigs.k8s.io/yaml v1.6.0).
    #[test]
    fn tag_swallows_a_closing_bracket() {
        assert!(matches!(
            fails("[!!str]"),
            YamlJsonError::Syntax { ref go, .. } if go == "line 1: did not find expected ',' or ']'"
        ));
    }

    // decode.go scalar(): a tagged quoted scalar is resolved against its tag.
    #[test]
    fn int_tag_on_quoted_text_is_an_integer() {
        assert_eq!(
            json("[!!int '12', !!bool \"yes\", !!null '']"),
            "[12,true,null]"
        );
    }

    // resolve.go: !!float accepts an int and converts it.
    #[test]
    fn float_tag_converts_an_integer() {
        assert_eq!(
            json("[!!float 1, !!float '0x10', !!float 2.5]"),
            "[1,16,2.5]"
        );
        assert!(matches!(
            fails("a: !!float 18446744073709551615"),
            YamlJsonError::TagMismatch { .. }
        ));
    }

    #[test]
    fn mismatched_tag_is_an_error() {
        assert!(matches!(
            fails("a: !!int abc"),
            YamlJsonError::TagMismatch { .. }
        ));
        assert!(matches!(
            fails("a: !!bool 1"),
            YamlJsonError::TagMismatch { .. }
        ));
        assert!(matches!(
            fails("a: !!int 1.5"),
            YamlJsonError::TagMismatch { .. }
        ));
    }

    #[test]
    fn unknown_tags_keep_the_text() {
        assert_eq!(
            json("[!foo 12, ! yes, !<tag:example.com:x> on, !!map 1]"),
            r#"["12","yes","on","1"]"#
        );
    }

    #[test]
    fn collection_tags_are_ignored() {
        assert_eq!(
            json("a: !!str {b: 1}\nc: !foo [1]"),
            r#"{"a":{"b":1},"c":[1]}"#
        );
    }

    #[test]
    fn binary_tag_is_base64_decoded() {
        assert_eq!(
            json("a: !!binary aGVsbG8=\nb: !!binary |\n  aGVs\n  bG8=\n"),
            r#"{"a":"hello","b":"hello"}"#
        );
    }

    // encode.go: invalid UTF-8 becomes one \ufffd per bad byte.
    #[test]
    fn binary_invalid_utf8_becomes_replacement_characters() {
        assert_eq!(json("a: !!binary gIGC"), r#"{"a":"\ufffd\ufffd\ufffd"}"#);
    }

    #[test]
    fn invalid_binary_is_an_error() {
        assert!(matches!(
            fails("a: !!binary not base64!"),
            YamlJsonError::InvalidBinary { .. }
        ));
        assert!(matches!(
            fails("a: !!binary aGVsbG8"),
            YamlJsonError::InvalidBinary { .. }
        ));
    }

    #[test]
    fn merge_key_merges_a_mapping() {
        assert_eq!(
            json("base: &b {x: 1, w: 2}\nd:\n  <<: *b\n  z: 3\n"),
            r#"{"base":{"w":2,"x":1},"d":{"w":2,"x":1,"z":3}}"#
        );
    }

    // decode.go merge(): the sequence is merged last to first, so earlier mappings win.
    #[test]
    fn merge_sequence_earlier_mapping_wins() {
        assert_eq!(
            json("a: &a {k: 1}\nb: &b {k: 2, m: 2}\nc:\n  <<: [*a, *b]\n"),
            r#"{"a":{"k":1},"b":{"k":2,"m":2},"c":{"k":1,"m":2}}"#
        );
    }

    // yaml.v2 (unlike v3) merges into the map as it goes: a merge overrides earlier keys.
    #[test]
    fn merge_overrides_keys_set_before_it() {
        assert_eq!(
            json("a: &a {k: 1}\nb:\n  k: 0\n  <<: *a\nc:\n  <<: *a\n  k: 2\n"),
            r#"{"a":{"k":1},"b":{"k":1},"c":{"k":2}}"#
        );
    }

    #[test]
    fn quoted_merge_key_is_a_plain_key() {
        assert_eq!(
            json("'<<': {a: 1}\nb: <<"),
            r#"{"\u003c\u003c":{"a":1},"b":"\u003c\u003c"}"#
        );
    }

    #[test]
    fn merge_of_a_scalar_is_an_error() {
        assert!(matches!(
            fails("a:\n  <<: 1\n"),
            YamlJsonError::InvalidMerge { .. }
        ));
        assert!(matches!(
            fails("x: &x [1]\na:\n  <<: *x\n"),
            YamlJsonError::InvalidMerge { .. }
        ));
        assert!(matches!(
            fails("a:\n  <<: [1]\n"),
            YamlJsonError::InvalidMerge { .. }
        ));
    }

    #[test]
    fn aliases_are_expanded() {
        assert_eq!(
            json("a: &x {b: [1, 2]}\nc: *x\nd: &y foo\ne: *y\nf: &y bar\ng: *y\n"),
            r#"{"a":{"b":[1,2]},"c":{"b":[1,2]},"d":"foo","e":"foo","f":"bar","g":"bar"}"#
        );
    }

    #[test]
    fn aliased_key_is_resolved() {
        assert_eq!(json("a: &k 5\n*k : six"), r#"{"5":"six","a":5}"#);
    }

    #[test]
    fn recursive_alias_is_an_error() {
        assert!(matches!(
            fails("a: &x [1, *x]"),
            YamlJsonError::RecursiveAlias { .. }
        ));
    }

    #[test]
    fn unknown_alias_is_an_error() {
        assert!(matches!(fails("a: *nope"), YamlJsonError::Syntax { .. }));
    }

    // decode.go allowedAliasRatio(): the billion-laughs guard.
    #[test]
    fn excessive_aliasing_is_refused() {
        let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            let _ = writeln!(doc, "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]");
        }
        assert_eq!(fails(&doc), YamlJsonError::ExcessiveAliasing);
    }

    // scannerc.go: tabs are eaten after the `:` of a simple key.
    #[test]
    fn tab_after_colon_is_allowed() {
        assert_eq!(
            json("a:\tb\nc: \t d\ne:\t-f\n"),
            r#"{"a":"b","c":"d","e":"-f"}"#
        );
    }

    // scannerc.go: tabs are not eaten after a block entry `-`.
    #[test]
    fn tab_after_dash_is_an_error() {
        assert!(matches!(fails("- \tb"), YamlJsonError::Syntax { .. }));
        assert!(matches!(fails("a:\n-\tb"), YamlJsonError::Syntax { .. }));
        assert_eq!(json("a: [b,\tc]"), r#"{"a":["b","c"]}"#);
    }

    #[test]
    fn tab_at_line_start_is_an_error() {
        assert!(matches!(fails("\tfoo"), YamlJsonError::Syntax { .. }));
        assert!(matches!(fails("a:\n  \tb"), YamlJsonError::Syntax { .. }));
        assert_eq!(json("a: [b,\n\tc]"), r#"{"a":["b","c"]}"#);
        // scannerc.go scan_block_scalar_breaks: a tab before the indentation is known.
        assert!(matches!(
            fails("a: |\n  \tb\n"),
            YamlJsonError::Syntax { ref go, .. }
                if go == "line 2: found a tab character where an indentation space is expected"
        ));
        assert_eq!(json("a: |\n  x\n  \tb\n"), r#"{"a":"x\n\tb\n"}"#);
    }

    // scannerc.go reads `#` after a quoted scalar as a comment even without a space.
    #[test]
    fn comment_right_after_quoted_scalar_is_a_comment() {
        assert_eq!(json("a: \"b{\"#c\nd: 'e'#f"), r#"{"a":"b{","d":"e"}"#);
        assert_eq!(json("a: b#c"), r#"{"a":"b#c"}"#);
    }

    // scannerc.go does not check the indentation of quoted continuation lines.
    #[test]
    fn quoted_scalar_continuation_may_be_unindented() {
        assert_eq!(
            json("q: \"a\rb\"\ns: 'c\r\nd'\n"),
            r#"{"q":"a b","s":"c d"}"#
        );
        assert_eq!(
            json("x:\n  q: \"a\n\n b\\\nc\"\n"),
            r#"{"x":{"q":"a\nbc"}}"#
        );
        assert!(matches!(
            fails("q: \"a\n---\n\""),
            YamlJsonError::Syntax { .. }
        ));
    }

    #[test]
    fn tab_indentation_is_an_error() {
        assert!(matches!(
            fails("a:\n\tb: 1\n"),
            YamlJsonError::Syntax { .. }
        ));
    }

    // readerc.go: control characters are not allowed.
    #[test]
    fn control_character_is_an_error() {
        assert!(matches!(
            fails("a: x\u{1}y"),
            YamlJsonError::ControlCharacter { code: 1, .. }
        ));
        assert!(matches!(
            fails("a: \"x\u{7f}\""),
            YamlJsonError::ControlCharacter { code: 0x7f, .. }
        ));
        assert!(matches!(
            fails("a: 1\n\u{1b}"),
            YamlJsonError::ControlCharacter { .. }
        ));
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        assert_eq!(json("\u{feff}a: 1"), r#"{"a":1}"#);
    }

    // parserc.go: "found incompatible YAML document".
    #[test]
    fn yaml_1_2_directive_is_an_error() {
        assert!(matches!(
            fails("%YAML 1.2\n---\na: 1"),
            YamlJsonError::Syntax { ref go, .. } if go == "found incompatible YAML document"
        ));
        assert_eq!(json("%YAML 1.1\n---\na: 1"), r#"{"a":1}"#);
    }

    #[test]
    fn syntax_error_names_line_and_column() {
        let err = fails("a: 1\nb: [unclosed\n");
        assert!(
            matches!(err, YamlJsonError::Syntax { line: 3, .. }),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .starts_with("invalid YAML at line 3, column "),
            "{err}"
        );
        let err = fails("a: b: c");
        assert!(
            matches!(
                err,
                YamlJsonError::Syntax {
                    line: 1,
                    column: 5,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn decode_error_names_line_and_column() {
        let err = fails("a:\n  b: !!int x\n");
        assert_eq!(
            err.to_string(),
            "cannot decode `x` as !!int at line 2, column 6"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        // scannerc.go: max_flow_level and max_indents are 10000.
        let deep = "[".repeat(200_000);
        assert!(matches!(
            fails(&deep),
            YamlJsonError::Syntax { ref go, .. } if go == "exceeded max depth of 10000"
        ));
        assert!(matches!(
            fails(&"- ".repeat(100_000)),
            YamlJsonError::Syntax { ref go, .. } if go == "exceeded max depth of 10000"
        ));
        // Deeper than MAX_DEPTH but within Go's limits: fluxsim gives up (module doc).
        assert!(matches!(
            fails(&block_nesting(MAX_DEPTH + 5)),
            YamlJsonError::TooDeep { .. }
        ));
        assert!(matches!(
            fails(&"- ".repeat(MAX_DEPTH + 5)),
            YamlJsonError::TooDeep { .. }
        ));
    }

    /// `k:` mappings nested `levels` deep, ending in a scalar.
    fn block_nesting(levels: usize) -> String {
        let mut block = String::new();
        for level in 0..levels {
            block.push_str(&" ".repeat(level));
            block.push_str("k:\n");
        }
        block.push_str(&" ".repeat(levels));
        block.push_str("v\n");
        block
    }

    #[test]
    fn nesting_at_the_limit_is_accepted_on_a_small_stack() {
        let doc = block_nesting(MAX_DEPTH);
        let handle = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(move || yaml_to_json(&doc))
            .expect("spawn");
        let out = handle.join().expect("no stack overflow").expect("converts");
        assert!(
            out.starts_with(r#"{"k":{"k":"#) && out.contains(r#""v""#),
            "{out}"
        );
    }

    #[test]
    fn alias_chains_count_towards_depth() {
        let mut doc = String::from("a0: &a0 [x]\n");
        for i in 1..(MAX_DEPTH + 5) {
            let _ = writeln!(doc, "a{i}: &a{i} [*a{}]", i - 1);
        }
        assert!(matches!(fails(&doc), YamlJsonError::TooDeep { .. }));
    }

    #[test]
    fn kubernetes_manifest_round_trips() {
        let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  labels:\n    app.kubernetes.io/name: app\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/org/app:1.2.3\n        args: [\"--flag=${X}\", --yes]\n        env:\n        - name: DEBUG\n          value: \"false\"\n        resources:\n          limits: {cpu: 500m, memory: 128Mi}\n";
        assert_eq!(
            json(doc),
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app.kubernetes.io/name":"app"},"name":"app"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"args":["--flag=${X}","--yes"],"env":[{"name":"DEBUG","value":"false"}],"image":"ghcr.io/org/app:1.2.3","name":"app","resources":{"limits":{"cpu":"500m","memory":"128Mi"}}}]}}}}"#
        );
    }

    /// Vectors whose input has no `$` and whose var names are valid: envsubst is the identity
    /// there, so `YAMLToJSON` alone must give the recorded output (or fail when Go failed).
    #[test]
    fn conformance_vectors_without_substitution() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/conformance/envsubst-public.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let valid_name = |name: &str| {
            let mut bytes = name.bytes();
            matches!(bytes.next(), Some(b'_' | b'a'..=b'z' | b'A'..=b'Z'))
                && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
        };
        let (mut run, mut failures) = (0, Vec::new());
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let vector: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let input = vector["input"].as_str().unwrap_or_default();
            let names_valid = vector["vars"]
                .as_object()
                .is_some_and(|vars| vars.keys().all(|k| valid_name(k)));
            if vector["mode"] != "flux" || input.contains('$') || !names_valid {
                continue;
            }
            run += 1;
            let got = yaml_to_json(input);
            let ok = vector["ok"].as_bool().unwrap_or(false);
            let matches = match (&got, ok) {
                (Ok(out), true) => Some(out.as_str()) == vector["output"].as_str(),
                (Err(_), false) => true,
                _ => false,
            };
            if !matches {
                failures.push(format!("{}: got {got:?}", vector["id"]));
            }
        }
        println!("{run} conformance vectors without substitution checked");
        assert!(run > 0);
        assert!(failures.is_empty(), "{failures:#?}");
    }
}
