//! Step 1 of `YAMLToJSON`: the first document's events, from [`crate::v2`]'s
//! parser, into a flat node tree with each scalar's style and tag.

use std::collections::HashMap;

use super::YamlJsonError;
use crate::v2::parser::Parser;
use crate::v2::{self, EventKind, Mark, ScalarStyle};

/// Line (1-based) and column (1-based) of a node, for error messages.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pos {
    pub(super) line: usize,
    pub(super) column: usize,
}

impl Pos {
    pub(super) fn of(mark: Mark) -> Pos {
        Pos {
            line: mark.line + 1,
            column: mark.column + 1,
        }
    }
}

#[derive(Debug)]
pub(super) enum NodeKind {
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
pub(super) struct Node {
    pub(super) kind: NodeKind,
    pub(super) pos: Pos,
}

#[derive(Debug, Default)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) root: Option<usize>,
}

/// A syntax error as yaml.v2 reports it.
pub(super) fn syntax_error(input: &str, err: &v2::Error) -> YamlJsonError {
    if err.kind == v2::ErrorKind::Reader {
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
pub(super) fn offending_character(input: &str) -> (usize, usize, u32) {
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
pub(super) fn parse_first_document(input: &str) -> Result<Tree, YamlJsonError> {
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

pub(super) fn push_node(tree: &mut Tree, kind: NodeKind, pos: Pos) -> usize {
    tree.nodes.push(Node { kind, pos });
    tree.nodes.len() - 1
}
