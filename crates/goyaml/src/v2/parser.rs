//! Events from tokens, as go-yaml v2's `parserc.go` makes them.
//!
//! Each `parse_*` method is the Go function of the same name (`yaml_parser_parse_*`); the
//! grammar is YAML 1.1's, with libyaml's states.

use super::scanner::{Scanner, Token, TokenKind};
use super::{Error, ErrorKind, Event, EventKind, Mark, ScalarStyle};

/// `yaml_parser_state_t` (without the two states libyaml never enters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

/// The kind of the head token, without its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    StreamStart,
    StreamEnd,
    VersionDirective,
    TagDirective,
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias,
    Anchor,
    Tag,
    Scalar,
}

fn kind_of(kind: &TokenKind) -> Kind {
    match kind {
        TokenKind::StreamStart => Kind::StreamStart,
        TokenKind::StreamEnd => Kind::StreamEnd,
        TokenKind::VersionDirective { .. } => Kind::VersionDirective,
        TokenKind::TagDirective { .. } => Kind::TagDirective,
        TokenKind::DocumentStart => Kind::DocumentStart,
        TokenKind::DocumentEnd => Kind::DocumentEnd,
        TokenKind::BlockSequenceStart => Kind::BlockSequenceStart,
        TokenKind::BlockMappingStart => Kind::BlockMappingStart,
        TokenKind::BlockEnd => Kind::BlockEnd,
        TokenKind::FlowSequenceStart => Kind::FlowSequenceStart,
        TokenKind::FlowSequenceEnd => Kind::FlowSequenceEnd,
        TokenKind::FlowMappingStart => Kind::FlowMappingStart,
        TokenKind::FlowMappingEnd => Kind::FlowMappingEnd,
        TokenKind::BlockEntry => Kind::BlockEntry,
        TokenKind::FlowEntry => Kind::FlowEntry,
        TokenKind::Key => Kind::Key,
        TokenKind::Value => Kind::Value,
        TokenKind::Alias(_) => Kind::Alias,
        TokenKind::Anchor(_) => Kind::Anchor,
        TokenKind::Tag { .. } => Kind::Tag,
        TokenKind::Scalar { .. } => Kind::Scalar,
    }
}

/// go-yaml v2's parser (`yaml_parser_t`, its parser part), reading one text.
pub struct Parser<'a> {
    scanner: Scanner<'a>,
    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    tag_directives: Vec<(Vec<u8>, Vec<u8>)>,
}

type Parse<T = Event> = Result<T, Error>;

fn event(kind: EventKind, start: Mark, end: Mark) -> Event {
    Event { kind, start, end }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl<'a> Parser<'a> {
    /// A parser of `input`; yaml.v2 reads an empty text as a single line break
    /// (decode.go `newParser`), which makes no difference to the events.
    pub fn new(input: &'a str) -> Parser<'a> {
        Parser {
            scanner: Scanner::new(input),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_directives: Vec::new(),
        }
    }

    /// `yaml_parser_parse`: the next event, or `None` after the end of the stream.
    pub fn next_event(&mut self) -> Parse<Option<Event>> {
        if self.scanner.stream_end_produced() || self.state == State::End {
            return Ok(None);
        }
        self.state_machine().map(Some)
    }

    fn state_machine(&mut self) -> Parse {
        match self.state {
            State::StreamStart => self.parse_stream_start(),
            State::ImplicitDocumentStart => self.parse_document_start(true),
            State::DocumentStart => self.parse_document_start(false),
            State::DocumentContent => self.parse_document_content(),
            State::DocumentEnd => self.parse_document_end(),
            State::BlockNode => self.parse_node(true, false),
            State::BlockSequenceFirstEntry => self.parse_block_sequence_entry(true),
            State::BlockSequenceEntry => self.parse_block_sequence_entry(false),
            State::IndentlessSequenceEntry => self.parse_indentless_sequence_entry(),
            State::BlockMappingFirstKey => self.parse_block_mapping_key(true),
            State::BlockMappingKey => self.parse_block_mapping_key(false),
            State::BlockMappingValue => self.parse_block_mapping_value(),
            State::FlowSequenceFirstEntry => self.parse_flow_sequence_entry(true),
            State::FlowSequenceEntry => self.parse_flow_sequence_entry(false),
            State::FlowSequenceEntryMappingKey => self.parse_flow_sequence_entry_mapping_key(),
            State::FlowSequenceEntryMappingValue => self.parse_flow_sequence_entry_mapping_value(),
            State::FlowSequenceEntryMappingEnd => self.parse_flow_sequence_entry_mapping_end(),
            State::FlowMappingFirstKey => self.parse_flow_mapping_key(true),
            State::FlowMappingKey => self.parse_flow_mapping_key(false),
            State::FlowMappingValue => self.parse_flow_mapping_value(false),
            State::FlowMappingEmptyValue => self.parse_flow_mapping_value(true),
            // next_event never gets here.
            State::End => Ok(event(
                EventKind::StreamEnd,
                Mark::default(),
                Mark::default(),
            )),
        }
    }

    /// The head token's kind and marks.
    fn peek(&mut self) -> Parse<(Kind, Mark, Mark)> {
        let token = self.scanner.peek_token()?;
        Ok((kind_of(&token.kind), token.start, token.end))
    }

    fn skip(&mut self) -> Option<Token> {
        self.scanner.skip_token()
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    fn pop_mark(&mut self) -> Mark {
        self.marks.pop().unwrap_or_default()
    }

    fn error(problem: &str, problem_mark: Mark) -> Error {
        Error {
            kind: ErrorKind::Parser,
            problem: problem.to_owned(),
            problem_mark,
            context: String::new(),
            context_mark: Mark::default(),
        }
    }

    fn error_context(
        context: &str,
        context_mark: Mark,
        problem: &str,
        problem_mark: Mark,
    ) -> Error {
        Error {
            kind: ErrorKind::Parser,
            problem: problem.to_owned(),
            problem_mark,
            context: context.to_owned(),
            context_mark,
        }
    }

    fn parse_stream_start(&mut self) -> Parse {
        let (kind, start, end) = self.peek()?;
        if kind != Kind::StreamStart {
            return Err(Self::error("did not find expected <stream-start>", start));
        }
        self.state = State::ImplicitDocumentStart;
        self.skip();
        Ok(event(EventKind::StreamStart, start, end))
    }

    fn parse_document_start(&mut self, implicit: bool) -> Parse {
        let (mut kind, _, _) = self.peek()?;
        if !implicit {
            while kind == Kind::DocumentEnd {
                self.skip();
                kind = self.peek()?.0;
            }
        }
        let (_, start, end) = self.peek()?;
        if implicit
            && !matches!(
                kind,
                Kind::VersionDirective | Kind::TagDirective | Kind::DocumentStart | Kind::StreamEnd
            )
        {
            self.process_directives()?;
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            Ok(event(EventKind::DocumentStart, start, end))
        } else if kind != Kind::StreamEnd {
            self.process_directives()?;
            let (kind, token_start, token_end) = self.peek()?;
            if kind != Kind::DocumentStart {
                return Err(Self::error(
                    "did not find expected <document start>",
                    token_start,
                ));
            }
            self.states.push(State::DocumentEnd);
            self.state = State::DocumentContent;
            self.skip();
            Ok(event(EventKind::DocumentStart, start, token_end))
        } else {
            self.state = State::End;
            self.skip();
            Ok(event(EventKind::StreamEnd, start, end))
        }
    }

    fn parse_document_content(&mut self) -> Parse {
        let (kind, start, _) = self.peek()?;
        if matches!(
            kind,
            Kind::VersionDirective
                | Kind::TagDirective
                | Kind::DocumentStart
                | Kind::DocumentEnd
                | Kind::StreamEnd
        ) {
            self.pop_state();
            return Ok(empty_scalar(start));
        }
        self.parse_node(true, false)
    }

    fn parse_document_end(&mut self) -> Parse {
        let (kind, start, token_end) = self.peek()?;
        let mut end = start;
        if kind == Kind::DocumentEnd {
            end = token_end;
            self.skip();
        }
        self.tag_directives.clear();
        self.state = State::DocumentStart;
        Ok(event(EventKind::DocumentEnd, start, end))
    }

    #[allow(clippy::too_many_lines)]
    fn parse_node(&mut self, block: bool, indentless_sequence: bool) -> Parse {
        let (mut kind, mut start, mut end) = self.peek()?;
        if kind == Kind::Alias {
            self.pop_state();
            let anchor = match self.skip().map(|t| t.kind) {
                Some(TokenKind::Alias(a)) => text(a),
                _ => String::new(),
            };
            return Ok(event(EventKind::Alias { anchor }, start, end));
        }
        let node_start = start;
        let mut node_end = start;
        let mut anchor: Option<String> = None;
        let mut tag_parts: Option<(Vec<u8>, Vec<u8>)> = None;
        let mut tag_mark = Mark::default();
        if kind == Kind::Anchor {
            node_end = end;
            if let Some(TokenKind::Anchor(a)) = self.skip().map(|t| t.kind) {
                anchor = Some(text(a));
            }
            (kind, start, end) = self.peek()?;
            if kind == Kind::Tag {
                tag_mark = start;
                node_end = end;
                if let Some(TokenKind::Tag { handle, suffix }) = self.skip().map(|t| t.kind) {
                    tag_parts = Some((handle, suffix));
                }
                (kind, start, end) = self.peek()?;
            }
        } else if kind == Kind::Tag {
            tag_mark = start;
            node_end = end;
            if let Some(TokenKind::Tag { handle, suffix }) = self.skip().map(|t| t.kind) {
                tag_parts = Some((handle, suffix));
            }
            (kind, start, end) = self.peek()?;
            if kind == Kind::Anchor {
                node_end = end;
                if let Some(TokenKind::Anchor(a)) = self.skip().map(|t| t.kind) {
                    anchor = Some(text(a));
                }
                (kind, start, end) = self.peek()?;
            }
        }
        let mut tag: Vec<u8> = Vec::new();
        if let Some((handle, suffix)) = tag_parts {
            if handle.is_empty() {
                tag = suffix;
            } else {
                if let Some((_, prefix)) = self.tag_directives.iter().find(|(h, _)| *h == handle) {
                    tag.clone_from(prefix);
                    tag.extend_from_slice(&suffix);
                }
                if tag.is_empty() {
                    return Err(Self::error_context(
                        "while parsing a node",
                        node_start,
                        "found undefined tag handle",
                        tag_mark,
                    ));
                }
            }
        }
        let tag = (!tag.is_empty()).then(|| text(tag));
        if indentless_sequence && kind == Kind::BlockEntry {
            self.state = State::IndentlessSequenceEntry;
            return Ok(event(
                EventKind::SequenceStart {
                    anchor,
                    tag,
                    flow: false,
                },
                node_start,
                end,
            ));
        }
        match kind {
            Kind::Scalar => {
                self.pop_state();
                let (value, style) = match self.skip().map(|t| t.kind) {
                    Some(TokenKind::Scalar { value, style }) => (text(value), style),
                    _ => (String::new(), ScalarStyle::Plain),
                };
                Ok(event(
                    EventKind::Scalar {
                        anchor,
                        tag,
                        value,
                        style,
                    },
                    node_start,
                    end,
                ))
            }
            Kind::FlowSequenceStart => {
                self.state = State::FlowSequenceFirstEntry;
                Ok(event(
                    EventKind::SequenceStart {
                        anchor,
                        tag,
                        flow: true,
                    },
                    node_start,
                    end,
                ))
            }
            Kind::FlowMappingStart => {
                self.state = State::FlowMappingFirstKey;
                Ok(event(
                    EventKind::MappingStart {
                        anchor,
                        tag,
                        flow: true,
                    },
                    node_start,
                    end,
                ))
            }
            Kind::BlockSequenceStart if block => {
                self.state = State::BlockSequenceFirstEntry;
                Ok(event(
                    EventKind::SequenceStart {
                        anchor,
                        tag,
                        flow: false,
                    },
                    node_start,
                    end,
                ))
            }
            Kind::BlockMappingStart if block => {
                self.state = State::BlockMappingFirstKey;
                Ok(event(
                    EventKind::MappingStart {
                        anchor,
                        tag,
                        flow: false,
                    },
                    node_start,
                    end,
                ))
            }
            _ if anchor.is_some() || tag.is_some() => {
                // An anchor or a tag with no content: an empty plain scalar.
                self.pop_state();
                Ok(event(
                    EventKind::Scalar {
                        anchor,
                        tag,
                        value: String::new(),
                        style: ScalarStyle::Plain,
                    },
                    node_start,
                    node_end,
                ))
            }
            _ => {
                let context = if block {
                    "while parsing a block node"
                } else {
                    "while parsing a flow node"
                };
                Err(Self::error_context(
                    context,
                    node_start,
                    "did not find expected node content",
                    start,
                ))
            }
        }
    }

    fn parse_block_sequence_entry(&mut self, first: bool) -> Parse {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.skip();
        }
        let (kind, start, end) = self.peek()?;
        if kind == Kind::BlockEntry {
            let mark = end;
            self.skip();
            let (kind, _, _) = self.peek()?;
            if kind != Kind::BlockEntry && kind != Kind::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        if kind == Kind::BlockEnd {
            self.pop_state();
            self.pop_mark();
            self.skip();
            return Ok(event(EventKind::SequenceEnd, start, end));
        }
        let context_mark = self.pop_mark();
        Err(Self::error_context(
            "while parsing a block collection",
            context_mark,
            "did not find expected '-' indicator",
            start,
        ))
    }

    fn parse_indentless_sequence_entry(&mut self) -> Parse {
        let (kind, start, end) = self.peek()?;
        if kind == Kind::BlockEntry {
            let mark = end;
            self.skip();
            let (kind, _, _) = self.peek()?;
            if !matches!(
                kind,
                Kind::BlockEntry | Kind::Key | Kind::Value | Kind::BlockEnd
            ) {
                self.states.push(State::IndentlessSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        self.pop_state();
        Ok(event(EventKind::SequenceEnd, start, start))
    }

    fn parse_block_mapping_key(&mut self, first: bool) -> Parse {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.skip();
        }
        let (kind, start, end) = self.peek()?;
        if kind == Kind::Key {
            let mark = end;
            self.skip();
            let (kind, _, _) = self.peek()?;
            if !matches!(kind, Kind::Key | Kind::Value | Kind::BlockEnd) {
                self.states.push(State::BlockMappingValue);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(empty_scalar(mark));
        }
        if kind == Kind::BlockEnd {
            self.pop_state();
            self.pop_mark();
            self.skip();
            return Ok(event(EventKind::MappingEnd, start, end));
        }
        let context_mark = self.pop_mark();
        Err(Self::error_context(
            "while parsing a block mapping",
            context_mark,
            "did not find expected key",
            start,
        ))
    }

    fn parse_block_mapping_value(&mut self) -> Parse {
        let (kind, start, end) = self.peek()?;
        if kind == Kind::Value {
            let mark = end;
            self.skip();
            let (kind, _, _) = self.peek()?;
            if !matches!(kind, Kind::Key | Kind::Value | Kind::BlockEnd) {
                self.states.push(State::BlockMappingKey);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingKey;
            return Ok(empty_scalar(mark));
        }
        self.state = State::BlockMappingKey;
        Ok(empty_scalar(start))
    }

    fn parse_flow_sequence_entry(&mut self, first: bool) -> Parse {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.skip();
        }
        let (mut kind, mut start, mut end) = self.peek()?;
        if kind != Kind::FlowSequenceEnd {
            if !first {
                if kind == Kind::FlowEntry {
                    self.skip();
                    (kind, start, end) = self.peek()?;
                } else {
                    let context_mark = self.pop_mark();
                    return Err(Self::error_context(
                        "while parsing a flow sequence",
                        context_mark,
                        "did not find expected ',' or ']'",
                        start,
                    ));
                }
            }
            if kind == Kind::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                self.skip();
                return Ok(event(
                    EventKind::MappingStart {
                        anchor: None,
                        tag: None,
                        flow: true,
                    },
                    start,
                    end,
                ));
            } else if kind != Kind::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.pop_mark();
        self.skip();
        Ok(event(EventKind::SequenceEnd, start, end))
    }

    fn parse_flow_sequence_entry_mapping_key(&mut self) -> Parse {
        let (kind, _, end) = self.peek()?;
        if !matches!(kind, Kind::Value | Kind::FlowEntry | Kind::FlowSequenceEnd) {
            self.states.push(State::FlowSequenceEntryMappingValue);
            return self.parse_node(false, false);
        }
        let mark = end;
        self.skip();
        self.state = State::FlowSequenceEntryMappingValue;
        Ok(empty_scalar(mark))
    }

    fn parse_flow_sequence_entry_mapping_value(&mut self) -> Parse {
        let (kind, start, _) = self.peek()?;
        if kind == Kind::Value {
            self.skip();
            let (kind, _, _) = self.peek()?;
            if kind != Kind::FlowEntry && kind != Kind::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntryMappingEnd);
                return self.parse_node(false, false);
            }
        }
        // Go shadows `token` above, so an empty value sits at the `:`.
        self.state = State::FlowSequenceEntryMappingEnd;
        Ok(empty_scalar(start))
    }

    fn parse_flow_sequence_entry_mapping_end(&mut self) -> Parse {
        let (_, start, _) = self.peek()?;
        self.state = State::FlowSequenceEntry;
        Ok(event(EventKind::MappingEnd, start, start))
    }

    fn parse_flow_mapping_key(&mut self, first: bool) -> Parse {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.skip();
        }
        let (mut kind, mut start, mut end) = self.peek()?;
        if kind != Kind::FlowMappingEnd {
            if !first {
                if kind == Kind::FlowEntry {
                    self.skip();
                    (kind, start, end) = self.peek()?;
                } else {
                    let context_mark = self.pop_mark();
                    return Err(Self::error_context(
                        "while parsing a flow mapping",
                        context_mark,
                        "did not find expected ',' or '}'",
                        start,
                    ));
                }
            }
            if kind == Kind::Key {
                self.skip();
                let (kind, start, _) = self.peek()?;
                if !matches!(kind, Kind::Value | Kind::FlowEntry | Kind::FlowMappingEnd) {
                    self.states.push(State::FlowMappingValue);
                    return self.parse_node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(empty_scalar(start));
            } else if kind != Kind::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.pop_mark();
        self.skip();
        Ok(event(EventKind::MappingEnd, start, end))
    }

    fn parse_flow_mapping_value(&mut self, empty: bool) -> Parse {
        let (kind, start, _) = self.peek()?;
        if empty {
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(start));
        }
        let mut mark = start;
        if kind == Kind::Value {
            self.skip();
            let (kind, start, _) = self.peek()?;
            if kind != Kind::FlowEntry && kind != Kind::FlowMappingEnd {
                self.states.push(State::FlowMappingKey);
                return self.parse_node(false, false);
            }
            mark = start;
        }
        self.state = State::FlowMappingKey;
        Ok(empty_scalar(mark))
    }

    /// `yaml_parser_process_directives`: `%YAML` must be 1.1; `%TAG` handles are added to
    /// the defaults `!` and `!!`.
    fn process_directives(&mut self) -> Parse<()> {
        let mut version_seen = false;
        loop {
            let (kind, start, _) = self.peek()?;
            match kind {
                Kind::VersionDirective => {
                    if version_seen {
                        return Err(Self::error("found duplicate %YAML directive", start));
                    }
                    if let Some(TokenKind::VersionDirective { major, minor }) =
                        self.scanner.peek_token().ok().map(|t| t.kind.clone())
                    {
                        if major != 1 || minor != 1 {
                            return Err(Self::error("found incompatible YAML document", start));
                        }
                    }
                    version_seen = true;
                }
                Kind::TagDirective => {
                    if let Some(TokenKind::TagDirective { handle, prefix }) =
                        self.scanner.peek_token().ok().map(|t| t.kind.clone())
                    {
                        if self.tag_directives.iter().any(|(h, _)| *h == handle) {
                            return Err(Self::error("found duplicate %TAG directive", start));
                        }
                        self.tag_directives.push((handle, prefix));
                    }
                }
                _ => break,
            }
            self.skip();
        }
        for (handle, prefix) in [(&b"!"[..], &b"!"[..]), (b"!!", b"tag:yaml.org,2002:")] {
            if !self.tag_directives.iter().any(|(h, _)| h == handle) {
                self.tag_directives.push((handle.to_vec(), prefix.to_vec()));
            }
        }
        Ok(())
    }
}

/// `yaml_parser_process_empty_scalar`.
fn empty_scalar(mark: Mark) -> Event {
    event(
        EventKind::Scalar {
            anchor: None,
            tag: None,
            value: String::new(),
            style: ScalarStyle::Plain,
        },
        mark,
        mark,
    )
}
