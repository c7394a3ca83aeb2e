//! Reading YAML streams the way kustomize's kyaml does (go-yaml v3, YAML 1.2-ish: `yes`
//! and `on` are strings, `010` is octal 8, `1_000` is 1000), into [`Node`]s.
//!
//! Only what this module is sure of is read; anything else (merge keys, tags other than
//! `!!str`, timestamps, infinities, line separators that the JSON round trip would change) is
//! reported as unsupported so the build is delegated to kustomize. Aliases are expanded into
//! copies: kustomize de-anchors what it reads (`kio.ByteReader`), so a transformer editing
//! an anchored map does not change its aliases.

mod folded;
mod json;
mod scalar;
#[cfg(test)]
mod tests;

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::node::{Map, Node};
use folded::Folded;
use goyaml::alias::AliasGuard;
use json::read_canonical_json;
pub(crate) use scalar::resolve_plain;
use scalar::scalar;

/// Why a stream could not be read natively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The YAML does not parse (kustomize would fail too, with its own message).
    Syntax(String),
    /// The YAML uses something this reader does not reproduce exactly.
    Unsupported(String),
    /// Alias expansion crossed a bound (`goyaml::alias`): the build fails, kustomize is not
    /// asked (it would take the memory the bound keeps).
    Bound(goyaml::alias::AliasBound),
}

/// Reads every document of a YAML stream; empty documents are dropped.
pub(crate) fn read_documents(text: &str) -> Result<Vec<Node>, ReadError> {
    Ok(read_documents_marked(text)?
        .into_iter()
        .map(|(doc, _)| doc)
        .collect())
}

/// One step of a path in a document: a mapping's key or a sequence's index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Seg {
    /// A mapping's key.
    Key(String),
    /// A sequence's index.
    Index(usize),
}

/// Where a document holds a null written as nothing (`a:`) as a mapping's value, which
/// kyaml's strategic merge drops where it keeps `a: null` and `a: ~` (go-yaml v3 gives the
/// first the tag `!!null` and no text, which kyaml's `FieldSetter` clears).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum EmptyNulls {
    /// None.
    #[default]
    None,
    /// At these paths (sorted).
    At(std::collections::BTreeSet<Vec<Seg>>),
    /// Somewhere this reader does not follow (inside an anchored node, copied by its aliases,
    /// or inside a merge key's value).
    Unknown,
}

impl EmptyNulls {
    /// Notes one at the place `stack` is reading (`anchored`: the null itself is).
    fn note(&mut self, stack: &[Frame], anchored: bool) {
        if matches!(self, EmptyNulls::Unknown) {
            return;
        }
        let unknown = anchored
            || stack.iter().any(|f| match f {
                Frame::Seq(_, anchor, _) => *anchor != 0,
                Frame::Map(m) => m.anchor != 0 || m.pending_merge,
            });
        if unknown {
            *self = EmptyNulls::Unknown;
            return;
        }
        // An item of a sequence is no field: kyaml keeps it.
        if !matches!(stack.last(), Some(Frame::Map(_))) {
            return;
        }
        let mut path = Vec::with_capacity(stack.len());
        for f in stack {
            match f {
                Frame::Seq(items, _, _) => path.push(Seg::Index(items.len())),
                Frame::Map(m) => {
                    let Some(k) = &m.pending else {
                        *self = EmptyNulls::Unknown;
                        return;
                    };
                    path.push(Seg::Key(k.clone()));
                }
            }
        }
        match self {
            EmptyNulls::At(set) => {
                set.insert(path);
            }
            _ => *self = EmptyNulls::At(std::iter::once(path).collect()),
        }
    }
}

/// Reads every document, each with where it holds a null written as nothing (`a:`),
/// which kyaml's strategic merge drops where it keeps `a: null` and `a: ~`.
pub(crate) fn read_documents_marked(text: &str) -> Result<Vec<(Node, EmptyNulls)>, ReadError> {
    match read_canonical_json(text) {
        Some(docs) => docs,
        None => read_yaml(text),
    }
}

/// [`read_documents_marked`] with the YAML parser.
#[allow(
    clippy::too_many_lines,
    reason = "one match over the parser's events, as go-yaml v3's parser.parse builds nodes"
)]
fn read_yaml(text: &str) -> Result<Vec<(Node, EmptyNulls)>, ReadError> {
    // go-yaml refuses `%YAML 1.2`; saphyr reads it. Directives are rare enough to delegate.
    if text.lines().any(|l| l.starts_with('%')) {
        return Err(unsupported("a YAML directive"));
    }
    // Where saphyr (YAML 1.2) accepts what go-yaml's libyaml scanner rejects: the `\/` escape
    // in a double-quoted scalar, and tabs in indentation.
    let check_escapes = text.contains("\\/");
    let check_tabs = text.contains('\t');
    // Where the stream's last line starts, when the text ends without a line break after its
    // last non-blank character (a block scalar reaching past it ends unbroken).
    let unbroken_end = {
        let trimmed = text.trim_end_matches([' ', '\t']);
        (!trimmed.is_empty() && !trimmed.ends_with(['\n', '\r']))
            .then(|| trimmed.rfind(['\n', '\r']).map_or(0, |i| i + 1))
    };
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    let mut empty_null = EmptyNulls::None;
    // Open collections: a sequence, or a mapping with a pending key.
    let mut stack: Vec<Frame> = Vec::new();
    let mut current: Option<Node> = None;
    // Each anchored node with its weight (nodes, scalar bytes), which an alias copies.
    let mut anchors: std::collections::HashMap<usize, (Node, Weight)> =
        std::collections::HashMap::new();
    // go-yaml v3 `decode.go`'s billion-laughs guard, one per document (`goyaml::alias`).
    let mut guard = AliasGuard::new();
    // Where each anchored node starts (its event's number).
    let mut anchor_starts: std::collections::HashMap<usize, usize> =
        std::collections::HashMap::new();
    let mut cursor = CharCursor::default();
    let mut folded = Folded::default();
    let mut events = 0usize;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| ReadError::Syntax(e.to_string()))?;
        events += 1;
        if let Event::Scalar(_, style, _, _) = &event {
            match style {
                ScalarStyle::DoubleQuoted if check_escapes => {
                    let start = cursor.byte_at(text, span.start.index());
                    let end = cursor.byte_at(text, span.end.index());
                    if text[start..end.max(start)].contains("\\/") {
                        return Err(unsupported("a `\\/` escape"));
                    }
                }
                _ => {}
            }
        }
        let completed = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentStart(_) => None,
            Event::StreamEnd => break,
            Event::DocumentEnd => {
                if let Some(doc) = current.take() {
                    if doc != Node::Null {
                        docs.push((doc, std::mem::take(&mut empty_null)));
                    }
                }
                empty_null = EmptyNulls::None;
                guard = AliasGuard::new();
                None
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some((n, weight)) => {
                    // The alias node itself, then every node it copies as alias-driven.
                    guard.count(false).map_err(ReadError::Bound)?;
                    guard
                        .expand(weight.nodes, weight.bytes)
                        .map_err(ReadError::Bound)?;
                    let at = anchor_starts.get(&id).copied().unwrap_or(0);
                    for frame in &mut stack {
                        if let Frame::Map(m) = frame {
                            if m.start < at {
                                m.inner_alias = true;
                            }
                        }
                    }
                    if let Some(Frame::Map(m)) = stack.last_mut() {
                        if m.pending_merge {
                            m.merge_alias = true;
                        }
                    }
                    Some(n.clone())
                }
                None => return Err(ReadError::Syntax("unknown anchor referenced".into())),
            },
            Event::Scalar(mut value, style, anchor, tag) => {
                if style == ScalarStyle::Folded {
                    // saphyr and libyaml may fold differently: go-yaml's own value.
                    if let Some(v) = folded.next(text, &value)? {
                        value = std::borrow::Cow::Owned(v);
                    }
                }
                // A block scalar whose last line ends the stream without a line break: libyaml
                // has no final break to keep (`|` and `>` keep one only when there is one),
                // where saphyr adds one. A patch written as `patch: |-` ending in a `|` value
                // gives such a text.
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && value.ends_with('\n')
                    && unbroken_end.is_some_and(|end| cursor.byte_at(text, span.end.index()) >= end)
                {
                    let mut v = value.into_owned();
                    v.pop();
                    value = std::borrow::Cow::Owned(v);
                }
                let is_key = matches!(stack.last(), Some(Frame::Map(m)) if m.pending.is_none() && !m.pending_merge);
                // saphyr reports an empty node as an empty plain scalar.
                if !is_key && tag.is_none() && style == ScalarStyle::Plain && value.is_empty() {
                    empty_null.note(&stack, anchor != 0);
                }
                // A plain `<<` key is a merge key (go-yaml v3 tags it `!!merge`), which kyaml's
                // de-anchoring resolves; a quoted or tagged one is a string that the same step
                // drops (`Clear("<<")` removes the first field of that name): not reproduced.
                let is_merge = value == "<<" && style == ScalarStyle::Plain && tag.is_none();
                let is_quoted_merge = value == "<<" && !is_merge;
                let node = match tag {
                    None => scalar(&value, style)?,
                    Some(t) if t.handle == "tag:yaml.org,2002:" && t.suffix == "str" => {
                        Node::Str(value.into_owned())
                    }
                    Some(t) if t.handle == "!!" && t.suffix == "str" => {
                        Node::Str(value.into_owned())
                    }
                    Some(t) => {
                        return Err(unsupported(&format!("YAML tag `{}{}`", t.handle, t.suffix)))
                    }
                };
                if is_key && !matches!(node, Node::Str(_)) {
                    return Err(unsupported("a mapping key that is not a string"));
                }
                if is_key && is_quoted_merge {
                    return Err(unsupported("a quoted or tagged `<<` key"));
                }
                if is_key && is_merge {
                    if anchor != 0 {
                        return Err(unsupported("an anchored merge key"));
                    }
                    if let Some(Frame::Map(m)) = stack.last_mut() {
                        if m.merge.is_some() || m.pending_merge {
                            // kyaml: `duplicate merge key`.
                            return Err(unsupported("two merge keys in one mapping"));
                        }
                        m.pending_merge = true;
                    }
                    None
                } else {
                    guard.count(false).map_err(ReadError::Bound)?;
                    if anchor != 0 {
                        anchors.insert(anchor, (node.clone(), Weight::of(&node)));
                        anchor_starts.insert(anchor, events);
                    }
                    Some(node)
                }
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                if tag.is_some() {
                    return Err(unsupported("tagged YAML collections"));
                }
                if matches!(stack.last(), Some(Frame::Map(m)) if m.pending.is_none() && !m.pending_merge)
                {
                    return Err(unsupported("a mapping key that is not a string"));
                }
                if matches!(event, Event::SequenceStart(..)) {
                    stack.push(Frame::Seq(Vec::new(), anchor, events));
                } else {
                    stack.push(Frame::Map(MapFrame::new(anchor, events)));
                }
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor, start) = match stack.pop() {
                    Some(Frame::Seq(items, anchor, start)) => (Node::Seq(items), anchor, start),
                    Some(Frame::Map(m)) if m.pending.is_none() && !m.pending_merge => {
                        let (anchor, start) = (m.anchor, m.start);
                        (Node::Map(m.finish()?), anchor, start)
                    }
                    _ => return Err(ReadError::Syntax("unbalanced collection".into())),
                };
                guard.count(false).map_err(ReadError::Bound)?;
                if anchor != 0 {
                    anchors.insert(anchor, (node.clone(), Weight::of(&node)));
                    anchor_starts.insert(anchor, start);
                }
                Some(node)
            }
        };
        if let Some(node) = completed {
            match stack.last_mut() {
                None => current = Some(node),
                Some(Frame::Seq(items, _, _)) => items.push(node),
                Some(Frame::Map(m)) if m.pending_merge => {
                    m.pending_merge = false;
                    m.merge = Some(node);
                }
                Some(Frame::Map(m)) => match m.pending.take() {
                    None => {
                        let Node::Str(key) = node else {
                            return Err(unsupported("a mapping key that is not a string"));
                        };
                        if !m.keys.insert(&m.map.0, &key) {
                            return Err(ReadError::Syntax(format!(
                                "mapping key {key:?} already defined"
                            )));
                        }
                        m.pending = Some(key);
                    }
                    Some(key) => m.map.0.push((key, node)),
                },
            }
        }
    }
    if let Some(doc) = current.take() {
        if doc != Node::Null {
            docs.push((doc, empty_null));
        }
    }
    // libyaml also refuses a tab among a block scalar's indentation spaces (where saphyr
    // reads it as content): any line whose indentation ends in a tab is delegated.
    if check_tabs
        && text
            .lines()
            .any(|line| line.trim_start_matches(' ').starts_with('\t'))
    {
        return Err(unsupported("a tab in indentation"));
    }
    Ok(docs)
}

/// An open collection: a sequence with its anchor id (0: none) and the number of its first
/// event, or a mapping.
enum Frame {
    Seq(Vec<Node>, usize, usize),
    Map(MapFrame),
}

/// An open mapping: its entries, its pending key and the keys it has, its anchor id (0: none)
/// and first event, and its merge key's value.
struct MapFrame {
    map: Map,
    pending: Option<String>,
    keys: Keys,
    anchor: usize,
    start: usize,
    /// The merge key was read; its value comes next.
    pending_merge: bool,
    /// The value of the merge key (`<<`), once read.
    merge: Option<Node>,
    /// That value is an alias.
    merge_alias: bool,
    /// An alias inside this mapping names an anchor defined inside it too.
    inner_alias: bool,
}

impl MapFrame {
    fn new(anchor: usize, start: usize) -> MapFrame {
        MapFrame {
            map: Map::default(),
            pending: None,
            keys: Keys::default(),
            anchor,
            start,
            pending_merge: false,
            merge: None,
            merge_alias: false,
            inner_alias: false,
        }
    }

    /// The mapping with its merge key resolved as kyaml's `DeAnchor` resolves it
    /// (`kyaml/yaml/alias.go`, `removeMergeTags` and `mergeAll`): the merge key's field is
    /// removed; its mappings (a mapping, an alias to one, or a sequence of those) are laid
    /// over a copy of the mapping from the last to the first (`findMergeValues` reverses the
    /// sequence), each field replacing the value of the same key in place or appended; then
    /// the mapping's own fields are laid over again, so they win, and the first mapping of
    /// the sequence wins over the later ones. kyaml resolves merges top-down, and this reader
    /// bottom-up: the same once every merged mapping is complete before the mapping that
    /// merges it starts, so a mapping merging an anchor defined inside itself is left to
    /// kustomize.
    fn finish(self) -> Result<Map, ReadError> {
        let Some(merge) = self.merge else {
            return Ok(self.map);
        };
        if self.inner_alias {
            return Err(unsupported(
                "a merge key in a mapping that also holds the anchor of an alias in it",
            ));
        }
        let sources: Vec<Map> = match merge {
            Node::Map(m) => vec![m],
            // `findMergeValues`: an alias to anything but a mapping fails kustomize.
            Node::Seq(items) if !self.merge_alias => items
                .into_iter()
                .map(|i| match i {
                    Node::Map(m) => Ok(m),
                    _ => Err(unsupported("a merge key over a list holding a non-mapping")),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(unsupported("a merge key whose value is not a mapping")),
        };
        let own = self.map;
        let mut out = own.clone();
        for source in sources.into_iter().rev() {
            for (k, v) in source.0 {
                if own.0.iter().any(|(o, _)| *o == k) {
                    continue;
                }
                match out.0.iter_mut().find(|(o, _)| *o == k) {
                    Some(entry) => entry.1 = v,
                    None => out.0.push((k, v)),
                }
            }
        }
        Ok(out)
    }
}

/// The keys of a mapping being read, to refuse a duplicate: a scan of the entries while the
/// mapping is small, a hash set once it is not (a scan per key is quadratic in the keys).
#[derive(Default)]
struct Keys(Option<std::collections::HashSet<String>>);

impl Keys {
    /// Mappings up to this size are scanned.
    const SCAN: usize = 16;

    /// Records `key` among `entries` (the mapping's entries so far); false when it is
    /// already there.
    fn insert(&mut self, entries: &[(String, Node)], key: &str) -> bool {
        if self.0.is_none() && entries.len() < Self::SCAN {
            return !entries.iter().any(|(k, _)| k == key);
        }
        let set = self
            .0
            .get_or_insert_with(|| entries.iter().map(|(k, _)| k.clone()).collect());
        set.insert(key.to_string())
    }
}

/// Turns saphyr's character indexes into byte offsets, walking forward from the last one
/// asked for (events come in order, so a stream is walked once, not once per scalar).
#[derive(Default)]
struct CharCursor {
    chars: usize,
    bytes: usize,
}

impl CharCursor {
    /// The byte offset of character `index` of `text` (its length past the end).
    fn byte_at(&mut self, text: &str, index: usize) -> usize {
        if index < self.chars {
            *self = CharCursor::default();
        }
        for c in text[self.bytes..].chars() {
            if self.chars == index {
                break;
            }
            self.chars += 1;
            self.bytes += c.len_utf8();
        }
        self.bytes
    }
}

/// What an alias of a node copies: its nodes (go-yaml counts each as a decode) and the
/// bytes of its scalars and keys.
#[derive(Debug, Clone, Copy)]
struct Weight {
    nodes: u64,
    bytes: u64,
}

impl Weight {
    fn of(node: &Node) -> Weight {
        let mut w = Weight { nodes: 0, bytes: 0 };
        let mut todo = vec![node];
        while let Some(n) = todo.pop() {
            w.nodes += 1;
            match n {
                Node::Str(s) => w.bytes += s.len() as u64,
                Node::Seq(items) => todo.extend(items.iter()),
                Node::Map(m) => {
                    for (k, v) in &m.0 {
                        // A key is a node of its own in go-yaml.
                        w.nodes += 1;
                        w.bytes += k.len() as u64;
                        todo.push(v);
                    }
                }
                _ => w.bytes += 8,
            }
        }
        w
    }
}

fn unsupported(what: &str) -> ReadError {
    ReadError::Unsupported(what.to_string())
}
