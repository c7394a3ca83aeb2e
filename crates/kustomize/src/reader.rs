//! Reading YAML streams the way kustomize's kyaml does (go-yaml v3, YAML 1.2-ish: `yes`
//! and `on` are strings, `010` is octal 8, `1_000` is 1000), into [`Node`]s.
//!
//! Only what this module is sure of is read; anything else (merge keys, tags other than
//! `!!str`, timestamps, infinities, line separators that the JSON round trip would change) is
//! reported as unsupported so the build is delegated to kustomize. Aliases are expanded into
//! copies: kustomize de-anchors what it reads (`kio.ByteReader`), so a transformer editing
//! an anchored map does not change its aliases.

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::node::{Map, Node};
use goyaml::alias::AliasGuard;
use goyaml::resolve::{resolve, Flavour, Resolved};

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

/// A text that is one JSON value exactly as `serde_json` writes it (the objects postBuild
/// rebuilt, which the reprint reads back) is read with `serde_json` instead of the YAML
/// parser, to the same nodes: in such a text every string is double-quoted with only the
/// escapes YAML's double-quoted style shares (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
/// `\u00XX`), every other scalar is a plain `null`, `true`, `false` or number, keys are
/// unique and in text order, and there are no comments, anchors, tags, tabs or empty
/// values; so each scalar goes through [`scalar`] with the style and text the parser would
/// give it. Texts with characters the YAML reader may refuse or fold (DEL, C1 controls,
/// NEL, LS, PS, byte-order marks, U+FFFE/U+FFFF), or with `\/`, take the parser. `None`: not such a text.
fn read_canonical_json(text: &str) -> Option<Result<Vec<(Node, EmptyNulls)>, ReadError>> {
    if !text.starts_with(['{', '[']) {
        return None;
    }
    if text.chars().any(|c| {
        matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
    }) {
        return None;
    }
    // The parser's reading delegates any double-quoted scalar whose text holds `\/` (an
    // escaped backslash before a slash included): such texts take the parser.
    if text.contains("\\/") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let canonical = value.to_string();
    if canonical != text {
        return None;
    }
    Some(json_node(&value).map(|doc| {
        if doc == Node::Null {
            Vec::new()
        } else {
            vec![(doc, EmptyNulls::None)]
        }
    }))
}

/// A node of [`read_canonical_json`]: each scalar read by [`scalar`] as the parser gives it.
fn json_node(v: &serde_json::Value) -> Result<Node, ReadError> {
    use serde_json::Value as V;
    Ok(match v {
        V::Null => scalar("null", ScalarStyle::Plain)?,
        V::Bool(b) => scalar(if *b { "true" } else { "false" }, ScalarStyle::Plain)?,
        V::Number(n) => scalar(&n.to_string(), ScalarStyle::Plain)?,
        V::String(s) => scalar(s, ScalarStyle::DoubleQuoted)?,
        V::Array(items) => Node::Seq(items.iter().map(json_node).collect::<Result<_, _>>()?),
        V::Object(entries) => {
            let mut map = Map::default();
            for (k, v) in entries {
                let Node::Str(key) = scalar(k, ScalarStyle::DoubleQuoted)? else {
                    return Err(unsupported("a mapping key that is not a string"));
                };
                // As the parser's reading: a `<<` key, quoted or not.
                if key == "<<" {
                    return Err(unsupported("a quoted or tagged `<<` key"));
                }
                map.0.push((key, json_node(v)?));
            }
            Node::Map(map)
        }
    })
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

/// Folded block scalars as go-yaml folds them. saphyr (YAML 1.2) and libyaml disagree on
/// folded scalars with line breaks left in them (more-indented lines, kept trailing blank
/// lines); go-yaml's scanner is libyaml's, ported in `goyaml::v2` (go-yaml v3, which
/// kustomize reads with, scans block scalars with the same `yaml_parser_scan_block_scalar`).
/// Such a scalar takes the value the port gives to the folded scalar at the same place in
/// the stream: the n-th folded scalar of both parsers, which must hold the same characters
/// but for whitespace (folding changes nothing else), or the build is delegated.
#[derive(Default)]
struct Folded {
    /// Folded scalars seen so far.
    seen: usize,
    /// go-yaml's folded scalars of the whole stream, in order, read on first need (none
    /// when it does not parse).
    values: Option<Vec<String>>,
}

impl Folded {
    /// go-yaml's value for the next folded scalar, which saphyr read as `value`, when it
    /// differs from saphyr's reading of it may (a kept line break); `None` when saphyr's is
    /// go-yaml's too.
    fn next(&mut self, text: &str, value: &str) -> Result<Option<String>, ReadError> {
        let index = self.seen;
        self.seen += 1;
        let kept_breaks = value.strip_suffix('\n').unwrap_or(value).contains('\n')
            || value.starts_with([' ', '\t']);
        if !kept_breaks {
            return Ok(None);
        }
        let values = self.values.get_or_insert_with(|| go_folded_scalars(text));
        let theirs = values.get(index);
        let bare = |s: &str| s.split_whitespace().collect::<String>();
        match theirs {
            Some(v) if bare(v) == bare(value) && !v.contains('\t') => Ok(Some(kyaml_round_trip(v))),
            _ => Err(unsupported("a folded block scalar with kept line breaks")),
        }
    }
}

/// What a folded scalar's value becomes in kustomize's output: kyaml writes the node out
/// once in its folded style and reads it back (the style is gone after that, so it happens
/// once). go-yaml v3's `yaml_emitter_write_folded_scalar` adds a line break before the first
/// break after a line that does not start with a blank when the character it checks is not
/// blank — but it checks from the start of the value (`is_blankz(value, k)` with `k`
/// counted from 0), not from that break. Read back, that extra break survives only before a
/// more-indented line (and at the end of a kept trailing run), and without it a single break
/// between two plain lines folds into a space. Lines are not wrapped (kyaml's encoder has no
/// width limit), and tabs are left to kustomize (the caller delegates them).
fn kyaml_round_trip(value: &str) -> String {
    let blank = |line: &str| line.starts_with([' ', '\t']);
    // The emitter's check: the first character after the value's leading breaks.
    let extra = value
        .trim_start_matches('\n')
        .chars()
        .next()
        .is_some_and(|c| c != ' ' && c != '\t');
    let lines: Vec<&str> = value.split('\n').collect();
    let mut out = String::with_capacity(value.len() + 8);
    // Leading breaks stay as they are.
    let first = lines.iter().position(|l| !l.is_empty());
    let Some(first) = first else {
        return value.to_string();
    };
    out.push_str(&"\n".repeat(first));
    let mut at = first;
    loop {
        let line = lines[at];
        out.push_str(line);
        // The next non-empty line, and how many breaks come before it.
        let next = (at + 1..lines.len()).find(|&k| !lines[k].is_empty());
        let Some(next_line) = next else {
            // The trailing breaks: none (strip), one (clip) or more (keep).
            let trailing = lines.len() - 1 - at;
            let extra_break = usize::from(trailing >= 2 && extra && !blank(line));
            out.push_str(&"\n".repeat(trailing + extra_break));
            break;
        };
        let breaks = next_line - at;
        let extra_break = usize::from(extra && !blank(line));
        if !blank(line) && !blank(lines[next_line]) {
            // Folded again on the way back in.
            let kept = breaks + extra_break - 1;
            if kept == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(kept));
            }
        } else {
            out.push_str(&"\n".repeat(breaks + extra_break));
        }
        at = next_line;
    }
    out
}

/// The values of the folded block scalars of `text` as go-yaml's scanner reads them, in
/// order; none when it does not parse.
fn go_folded_scalars(text: &str) -> Vec<String> {
    go_folded_scalars_or_error(text).unwrap_or_default()
}

fn go_folded_scalars_or_error(text: &str) -> Option<Vec<String>> {
    use goyaml::v2::{parser::Parser as GoParser, EventKind, ScalarStyle as GoStyle};
    let mut parser = GoParser::new(text);
    let mut out = Vec::new();
    while let Some(event) = parser.next_event().ok()? {
        if let EventKind::Scalar {
            value,
            style: GoStyle::Folded,
            ..
        } = event.kind
        {
            out.push(value);
        }
    }
    Some(out)
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

/// An untagged plain scalar's text as go-yaml v3 resolves it (a field that kyaml creates
/// without a tag, then reads back when it prints).
pub(crate) fn resolve_plain(value: &str) -> Result<Node, crate::Unsupported> {
    scalar(value, ScalarStyle::Plain).map_err(|e| match e {
        ReadError::Syntax(m) | ReadError::Unsupported(m) => m.into(),
        ReadError::Bound(b) => b.to_string().into(),
    })
}

/// A scalar as go-yaml v3 resolves it (`resolve.go`), then as the JSON round trip leaves it.
fn scalar(value: &str, style: ScalarStyle) -> Result<Node, ReadError> {
    check_string(value)?;
    if style != ScalarStyle::Plain {
        return Ok(Node::Str(value.to_string()));
    }
    // The words as go-yaml v3 reads them; numbers as `number` checks them, delegating what it
    // is not sure of.
    Ok(match resolve(Flavour::V3, "", value) {
        Resolved::Null => Node::Null,
        Resolved::Bool(b) => Node::Bool(b),
        Resolved::Float(f) if !f.is_finite() => {
            return Err(unsupported("an infinite or NaN number"))
        }
        _ => match value.as_bytes().first() {
            Some(b'0'..=b'9' | b'+' | b'-' | b'.') => number(value)?,
            _ => Node::Str(value.to_string()),
        },
    })
}

/// Strings the JSON round trip would not give back unchanged: yaml.v2 reads a raw NEL, LS
/// or PS inside a JSON string as a line break and folds it.
fn check_string(value: &str) -> Result<(), ReadError> {
    if value.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return Err(unsupported("a NEL, LS or PS character in a string"));
    }
    // After a byte-order mark, go-yaml v2's emitter escapes every following character of a
    // double-quoted scalar; not reproduced.
    if value.contains('\u{FEFF}') {
        return Err(unsupported("a byte-order mark in a string"));
    }
    Ok(())
}

/// resolve.go's number branch: timestamps first (kyaml turns them into RFC 3339 text: not
/// reproduced), then `ParseInt(plain, 0, 64)`, `ParseUint`, and the YAML float syntax.
fn number(value: &str) -> Result<Node, ReadError> {
    let b = value.as_bytes();
    if b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
        return Err(unsupported("an unquoted timestamp"));
    }
    // resolve.go tries ParseFloat on the raw text for a leading dot (not the text without
    // underscores, as below); Go's underscore rules there are not reproduced: be safe.
    // ParseFloat takes a text whole or not at all, and one holding anything but digits, `.`,
    // `_`, `e`, `+` and `-` is no float whatever its underscores (`./clusters/${CLUSTER_NAME}`,
    // a path a postBuild fills in, is a string).
    if value.starts_with('.')
        && value.contains('_')
        && value
            .bytes()
            .all(|c| c.is_ascii_digit() || b"._eE+-".contains(&c))
    {
        return Err(unsupported("an unusual number"));
    }
    let plain = value.replace('_', "");
    if let Some(i) = go_parse_int(&plain) {
        return Ok(Node::Int(i));
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Ok(Node::Uint(u));
    }
    if is_yaml_float(&plain) {
        if let Ok(f) = plain.parse::<f64>() {
            if f.is_finite() {
                return Ok(Node::Float(f));
            }
        }
        return Err(unsupported("an out-of-range float"));
    }
    if plain.bytes().all(|c| c.is_ascii_digit()) && !plain.is_empty() {
        // Digits that overflow every integer type.
        return Err(unsupported("an out-of-range integer"));
    }
    Ok(Node::Str(value.to_string()))
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (resolve.go `yamlStyleFloat`):
/// the same rule the postBuild reader uses.
pub(crate) use goyaml::resolve::is_yaml_style_float as is_yaml_float;

/// Go `strconv.ParseUint(s, 0, 64)`: `0x`, `0o`, `0b` and leading-`0` octal prefixes.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    goyaml::strconv::go_parse_uint(s, 0)
}

/// Go `strconv.ParseInt(s, 0, 64)`.
pub(crate) fn go_parse_int(s: &str) -> Option<i64> {
    goyaml::strconv::go_parse_int(s, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let mut docs = read_documents(text).expect("reads");
        assert_eq!(docs.len(), 1);
        docs.remove(0)
    }

    // The values kustomize v5.8.1 printed for testdata/native/folded-scalars.
    #[test]
    fn a_folded_value_takes_the_breaks_kyaml_s_round_trip_gives_it() {
        for (scanned, printed) in [
            ("text\n  more\n", "text\n\n  more\n"),
            ("a\n  b\nc\n\n\n", "a\n\n  b\nc\n\n\n\n"),
            ("kept\n\n  indented\n\n\n", "kept\n\n\n  indented\n\n\n"),
            ("  first\nx\ny\n", "  first\nx y\n"),
            (
                "\n\nafter blank lines folded here\n",
                "\n\nafter blank lines folded here\n",
            ),
            ("first para\nsecond\n", "first para\nsecond\n"),
            ("\n", "\n"),
        ] {
            assert_eq!(kyaml_round_trip(scanned), printed, "{scanned:?}");
        }
    }

    #[test]
    fn a_folded_scalar_with_a_more_indented_line_reads_as_kustomize_prints_it() {
        let n = one("a: >-\n  f(c,\n    d\n  )\n");
        let m = n.as_map().expect("map");
        assert_eq!(m.get("a"), Some(&Node::Str("f(c,\n\n  d\n)".into())));
    }

    #[test]
    fn yaml_1_2_words_are_strings_and_legacy_octal_is_a_number() {
        let n = one("a: yes\nb: on\nc: 010\nd: 0o10\ne: 1_000\nf: True\ng: ~\nh: 0x1F\n");
        let m = n.as_map().expect("map");
        assert_eq!(m.get("a"), Some(&Node::Str("yes".into())));
        assert_eq!(m.get("b"), Some(&Node::Str("on".into())));
        assert_eq!(m.get("c"), Some(&Node::Int(8)));
        assert_eq!(m.get("d"), Some(&Node::Int(8)));
        assert_eq!(m.get("e"), Some(&Node::Int(1000)));
        assert_eq!(m.get("f"), Some(&Node::Bool(true)));
        assert_eq!(m.get("g"), Some(&Node::Null));
        assert_eq!(m.get("h"), Some(&Node::Int(31)));
    }

    // go-yaml v3 decode.go `allowedAliasRatio`: nine levels of ten aliases (10^9 nodes)
    // stop at the ratio, long before the copies are made.
    #[test]
    fn a_billion_laughs_stops_at_go_yaml_s_alias_ratio() {
        use std::fmt::Write as _;
        let mut doc = String::from("a0: &a0 lol\n");
        for i in 1..10 {
            let prev = i - 1;
            let items = vec![format!("*a{prev}"); 10].join(", ");
            let _ = writeln!(doc, "a{i}: &a{i} [{items}]");
        }
        let err = read_documents(&doc).unwrap_err();
        let ReadError::Bound(b) = &err else {
            panic!("{err:?}")
        };
        assert!(
            matches!(b, goyaml::alias::AliasBound::Ratio { .. }),
            "{b:?}"
        );
        assert!(b.to_string().contains("excessive aliasing"), "{b}");
    }

    // fluxsim's own bound (goyaml::alias::MAX_ALIASED_BYTES): a 1 MB string aliased 300
    // times passes go-yaml's ratio (too few nodes) but not the bytes.
    #[test]
    fn a_large_string_aliased_many_times_stops_at_the_aliased_bytes_bound() {
        let doc = |n: usize| {
            let mut doc = format!("s: &s {}\nl:\n", "x".repeat(1 << 20));
            for _ in 0..n {
                doc.push_str("- *s\n");
            }
            doc
        };
        assert!(matches!(
            read_documents(&doc(300)),
            Err(ReadError::Bound(goyaml::alias::AliasBound::Bytes { .. }))
        ));
        assert!(read_documents(&doc(20)).is_ok());
    }

    #[test]
    fn aliases_are_expanded_into_copies() {
        let n = one("a: &x 1\nb: *x\nc: &m {d: [1]}\ne: *m\n");
        let m = n.as_map().expect("map");
        assert_eq!(m.get("b"), Some(&Node::Int(1)));
        assert_eq!(m.get("e"), m.get("c"));
        // A merge key is resolved (see `merge_keys_resolve_as_kyaml_de_anchors_them`).
        assert!(read_documents("a: &x {c: 1}\nb:\n  <<: *x\n").is_ok());
    }

    // kyaml's DeAnchor (kyaml/yaml/alias.go): own fields win, then the first mapping of a
    // merge list; new keys are appended; the merge key's field is gone.
    #[test]
    fn merge_keys_resolve_as_kyaml_de_anchors_them() {
        let n = one(
            "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2, w: 2}\nc:\n  w: 0\n  <<: [*a, *b]\nd:\n  <<: {k: v}\n",
        );
        let m = n.as_map().expect("map");
        let c = m.get("c").and_then(Node::as_map).expect("c");
        let keys: Vec<&str> = c.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["w", "y", "z", "x"]);
        assert_eq!(c.get("w"), Some(&Node::Int(0)));
        assert_eq!(c.get("y"), Some(&Node::Int(1)));
        assert_eq!(c.get("z"), Some(&Node::Int(2)));
        assert_eq!(c.get("x"), Some(&Node::Int(1)));
        let d = m.get("d").and_then(Node::as_map).expect("d");
        assert_eq!(d.0, vec![("k".to_string(), Node::Str("v".into()))]);
        // What kustomize fails on, or resolves by a rule not reproduced, is delegated.
        for text in [
            "a: {<<: 1}\n",
            "a: &s [{x: 1}]\nb: {<<: *s}\n",
            "a: {<<: [1]}\n",
            "a: {<<: {x: 1}, <<: {y: 1}}\n",
            "a: {\"<<\": 1}\n",
            "a: {<<: {x: 1}, '<<': 2}\n",
            "a: {b: &x {<<: {k: 1}}, <<: *x}\n",
        ] {
            assert!(
                matches!(read_documents(text), Err(ReadError::Unsupported(_))),
                "{text}"
            );
        }
    }

    // resolve.go's `.` branch: strconv.ParseFloat of the whole text, which a path is not.
    #[test]
    fn a_path_starting_with_a_dot_and_holding_an_underscore_is_a_string() {
        let n = one("path: ./clusters/${CLUSTER_NAME}\n");
        let m = n.as_map().expect("map");
        assert_eq!(
            m.get("path"),
            Some(&Node::Str("./clusters/${CLUSTER_NAME}".into()))
        );
        for text in ["a: .1_5\n", "a: ._5\n"] {
            assert!(
                matches!(read_documents(text), Err(ReadError::Unsupported(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn unquoted_timestamps_are_unsupported() {
        assert!(matches!(
            read_documents("a: 2001-12-14\n"),
            Err(ReadError::Unsupported(_))
        ));
    }

    #[test]
    fn empty_documents_are_dropped() {
        let docs = read_documents("---\n# nothing\n---\na: 1\n---\n").expect("reads");
        assert_eq!(docs.len(), 1);
    }

    /// Random JSON values with the strings and numbers that test a reader.
    fn random_value(next: &mut impl FnMut() -> u64, depth: usize) -> serde_json::Value {
        use serde_json::{json, Value};
        const PIECES: &[&str] = &[
            "a",
            "yes",
            "on",
            "~",
            "null",
            "010",
            "0x1F",
            "1_000",
            "1e3",
            ".5",
            "-",
            ": ",
            " #",
            "#",
            "'",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{8}",
            "\u{c}",
            "\u{1}",
            "\u{7f}",
            "\u{85}",
            "\u{9f}",
            "\u{a0}",
            "\u{2028}",
            "\u{feff}",
            "é",
            "😀",
            " ",
            "[",
            "{",
            "*x",
            "&x",
            "!!str",
            "%",
            "2001-12-14",
            "<<",
            "\\/",
        ];
        let pick = |n: u64, len: usize| usize::try_from(n).unwrap_or(0) % len;
        match next() % if depth > 3 { 6 } else { 8 } {
            0 => Value::Null,
            1 => json!(next() % 2 == 0),
            2 => {
                const N: &[&str] = &[
                    "0",
                    "-0",
                    "7",
                    "-12",
                    "9223372036854775807",
                    "18446744073709551615",
                    "-9223372036854775808",
                    "0.5",
                    "-0.0",
                    "1e21",
                    "1.5e-7",
                    "123456789.125",
                ];
                serde_json::from_str(N[pick(next(), N.len())]).unwrap_or(Value::Null)
            }
            3..=5 => {
                let len = pick(next(), 5);
                Value::String(
                    (0..len)
                        .map(|_| PIECES[pick(next(), PIECES.len())])
                        .collect(),
                )
            }
            6 => Value::Array(
                (0..pick(next(), 4))
                    .map(|_| random_value(next, depth + 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..pick(next(), 4))
                    .map(|_| {
                        let key: String = (0..=pick(next(), 3))
                            .map(|_| PIECES[pick(next(), PIECES.len())])
                            .collect();
                        (key, random_value(next, depth + 1))
                    })
                    .collect(),
            ),
        }
    }

    // The serde_json reading of canonical JSON gives what the YAML parser gives, on random
    // values and on every JSON output of the YAML re-read vectors; the texts it declines
    // (characters the YAML reader may refuse, non-canonical text) take the parser.
    #[test]
    fn canonical_json_reads_as_the_yaml_parser_reads_it() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut texts: Vec<String> = (0..4000)
            .map(|_| {
                let v = random_value(&mut next, 0);
                serde_json::Value::Object(
                    [
                        ("kind".to_string(), serde_json::json!("X")),
                        ("v".to_string(), v),
                    ]
                    .into_iter()
                    .collect(),
                )
                .to_string()
            })
            .collect();
        let vectors = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/conformance/yaml-reread.jsonl"
        ))
        .expect("the vectors");
        for line in vectors.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a vector");
            if let Some(Ok(out)) = v["output"]
                .as_str()
                .map(serde_json::from_str::<serde_json::Value>)
            {
                texts.push(out.to_string());
            }
        }
        texts.push("{\"a\":1, \"b\":2}".into());
        texts.push("{\"a\":1,\"a\":2}".into());
        let mut fast = 0;
        for text in &texts {
            if let Some(got) = read_canonical_json(text) {
                fast += 1;
                assert_eq!(got, read_yaml(text), "{text}");
            }
        }
        assert!(fast > 6000, "{fast} of {} texts read as JSON", texts.len());
        // Not canonical: a space, a repeated key.
        assert!(read_canonical_json("{\"a\":1, \"b\":2}").is_none());
        assert!(read_canonical_json("{\"a\":1,\"a\":2}").is_none());
        assert!(read_canonical_json("{\"a\":\"\u{85}\"}").is_none());
    }
}
