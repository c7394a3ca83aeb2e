//! Tokens from the input, as go-yaml v2's `scannerc.go` makes them.
//!
//! Each function is the Go function of the same name (without the `yaml_parser_` prefix),
//! in the same order of checks; the comments say only where Rust differs in form.

use std::collections::{HashMap, VecDeque};

use super::reader::{width, Input};
use super::{Error, ErrorKind, Mark, ScalarStyle};

/// `max_flow_level` and `max_indents`.
const MAX_NESTING: usize = 10_000;

/// A token (`yaml_token_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) kind: TokenKind,
    pub(super) start: Mark,
    pub(super) end: Mark,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TokenKind {
    StreamStart,
    StreamEnd,
    VersionDirective { major: i8, minor: i8 },
    TagDirective { handle: Vec<u8>, prefix: Vec<u8> },
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
    Alias(Vec<u8>),
    Anchor(Vec<u8>),
    Tag { handle: Vec<u8>, suffix: Vec<u8> },
    Scalar { value: Vec<u8>, style: ScalarStyle },
}

/// `yaml_simple_key_t`.
#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

/// The scanner's part of `yaml_parser_t`.
pub(super) struct Scanner<'a> {
    input: Input<'a>,
    mark: Mark,
    /// The queue from `tokens_head` on.
    tokens: VecDeque<Token>,
    tokens_parsed: usize,
    token_available: bool,
    stream_start_produced: bool,
    stream_end_produced: bool,
    indent: isize,
    indents: Vec<isize>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    simple_keys_by_tok: HashMap<usize, usize>,
    flow_level: usize,
}

type Scan<T = ()> = Result<T, Error>;

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            input: Input::new(text),
            mark: Mark::default(),
            tokens: VecDeque::new(),
            tokens_parsed: 0,
            token_available: false,
            stream_start_produced: false,
            stream_end_produced: false,
            indent: 0,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            simple_keys_by_tok: HashMap::new(),
            flow_level: 0,
        }
    }

    pub(super) fn stream_end_produced(&self) -> bool {
        self.stream_end_produced
    }

    /// parserc.go `peek_token`.
    pub(super) fn peek_token(&mut self) -> Scan<&Token> {
        if !self.token_available {
            self.fetch_more_tokens()?;
        }
        self.tokens.front().ok_or_else(|| Error {
            kind: ErrorKind::Scanner,
            problem: "no token".to_owned(),
            problem_mark: self.mark,
            context: String::new(),
            context_mark: self.mark,
        })
    }

    /// parserc.go `skip_token`: the head token, taken off the queue.
    pub(super) fn skip_token(&mut self) -> Option<Token> {
        self.token_available = false;
        self.tokens_parsed += 1;
        let token = self.tokens.pop_front();
        self.stream_end_produced = matches!(
            token,
            Some(Token {
                kind: TokenKind::StreamEnd,
                ..
            })
        );
        token
    }

    // -- the buffer ---------------------------------------------------------------------

    #[inline]
    fn at(&self, k: usize) -> u8 {
        self.input.at(k)
    }

    #[inline]
    fn cache(&mut self, length: isize) -> Scan {
        self.input.cache(length)
    }

    #[inline]
    fn skip(&mut self) {
        self.mark.index += 1;
        self.mark.column += 1;
        self.input.unread -= 1;
        self.input.pos += width(self.at(0)).max(1);
    }

    #[inline]
    fn skip_line(&mut self) {
        if self.is_crlf(0) {
            self.mark.index += 2;
            self.mark.column = 0;
            self.mark.line += 1;
            self.input.unread -= 2;
            self.input.pos += 2;
        } else if self.is_break(0) {
            self.mark.index += 1;
            self.mark.column = 0;
            self.mark.line += 1;
            self.input.unread -= 1;
            self.input.pos += width(self.at(0)).max(1);
        }
    }

    #[inline]
    fn read(&mut self, s: &mut Vec<u8>) {
        let w = width(self.at(0)).max(1);
        let pos = self.input.pos;
        s.extend_from_slice(self.input.slice(pos, pos + w));
        self.input.pos += w;
        self.mark.index += 1;
        self.mark.column += 1;
        self.input.unread -= 1;
    }

    #[inline]
    fn read_line(&mut self, s: &mut Vec<u8>) {
        let (b0, b1, b2) = (self.at(0), self.at(1), self.at(2));
        if b0 == b'\r' && b1 == b'\n' {
            s.push(b'\n');
            self.input.pos += 2;
            self.mark.index += 1;
            self.input.unread -= 1;
        } else if b0 == b'\r' || b0 == b'\n' {
            s.push(b'\n');
            self.input.pos += 1;
        } else if b0 == 0xC2 && b1 == 0x85 {
            s.push(b'\n');
            self.input.pos += 2;
        } else if b0 == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9) {
            s.extend_from_slice(&[b0, b1, b2]);
            self.input.pos += 3;
        } else {
            return;
        }
        self.mark.index += 1;
        self.mark.column = 0;
        self.mark.line += 1;
        self.input.unread -= 1;
    }

    // -- character classes (yamlprivateh.go) --------------------------------------------

    #[inline]
    fn is_alpha(&self, k: usize) -> bool {
        let b = self.at(k);
        b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
    }

    #[inline]
    fn is_digit(&self, k: usize) -> bool {
        self.at(k).is_ascii_digit()
    }

    #[inline]
    fn is_hex(&self, k: usize) -> bool {
        self.at(k).is_ascii_hexdigit()
    }

    fn as_hex(&self, k: usize) -> u32 {
        char::from(self.at(k)).to_digit(16).unwrap_or(0)
    }

    fn is_space(&self, k: usize) -> bool {
        self.at(k) == b' '
    }

    fn is_tab(&self, k: usize) -> bool {
        self.at(k) == b'\t'
    }

    #[inline]
    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    #[inline]
    fn is_break(&self, k: usize) -> bool {
        let b = self.at(k);
        b == b'\r'
            || b == b'\n'
            || (b == 0xC2 && self.at(k + 1) == 0x85)
            || (b == 0xE2 && self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xA8 | 0xA9))
    }

    #[inline]
    fn is_crlf(&self, k: usize) -> bool {
        self.at(k) == b'\r' && self.at(k + 1) == b'\n'
    }

    #[inline]
    fn is_z(&self, k: usize) -> bool {
        self.at(k) == 0
    }

    #[inline]
    fn is_breakz(&self, k: usize) -> bool {
        self.is_break(k) || self.is_z(k)
    }

    #[inline]
    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }

    #[inline]
    fn column(&self) -> isize {
        isize::try_from(self.mark.column).unwrap_or(isize::MAX)
    }

    fn error(&self, context: &str, context_mark: Mark, problem: &str) -> Error {
        Error {
            kind: ErrorKind::Scanner,
            problem: problem.to_owned(),
            problem_mark: self.mark,
            context: context.to_owned(),
            context_mark,
        }
    }

    fn tag_error(&self, directive: bool, context_mark: Mark, problem: &str) -> Error {
        let context = if directive {
            "while parsing a %TAG directive"
        } else {
            "while parsing a tag"
        };
        self.error(context, context_mark, problem)
    }

    /// `yaml_insert_token`: at `pos` from the head, or at the end when `pos` is negative.
    fn insert_token(&mut self, pos: isize, token: Token) {
        match usize::try_from(pos) {
            Ok(p) if p <= self.tokens.len() => self.tokens.insert(p, token),
            _ => self.tokens.push_back(token),
        }
    }

    fn push_token(&mut self, kind: TokenKind, start: Mark, end: Mark) {
        self.tokens.push_back(Token { kind, start, end });
    }

    fn queued(&self) -> usize {
        self.tokens_parsed + self.tokens.len()
    }

    // -- fetching -----------------------------------------------------------------------

    fn fetch_more_tokens(&mut self) -> Scan {
        loop {
            if !self.tokens.is_empty() {
                let Some(&i) = self.simple_keys_by_tok.get(&self.tokens_parsed) else {
                    break;
                };
                if !self.simple_key_is_valid(i)? {
                    break;
                }
            }
            self.fetch_next_token()?;
        }
        self.token_available = true;
        Ok(())
    }

    fn fetch_next_token(&mut self) -> Scan {
        self.cache(1)?;
        if !self.stream_start_produced {
            self.fetch_stream_start();
            return Ok(());
        }
        self.scan_to_next_token()?;
        self.unroll_indent(self.column());
        self.cache(4)?;
        if self.is_z(0) {
            return self.fetch_stream_end();
        }
        let c = self.at(0);
        if self.mark.column == 0 && c == b'%' {
            return self.fetch_directive();
        }
        if self.mark.column == 0 && self.is_blankz(3) {
            if c == b'-' && self.at(1) == b'-' && self.at(2) == b'-' {
                return self.fetch_document_indicator(TokenKind::DocumentStart);
            }
            if c == b'.' && self.at(1) == b'.' && self.at(2) == b'.' {
                return self.fetch_document_indicator(TokenKind::DocumentEnd);
            }
        }
        match c {
            b'[' => return self.fetch_flow_collection_start(TokenKind::FlowSequenceStart),
            b'{' => return self.fetch_flow_collection_start(TokenKind::FlowMappingStart),
            b']' => return self.fetch_flow_collection_end(TokenKind::FlowSequenceEnd),
            b'}' => return self.fetch_flow_collection_end(TokenKind::FlowMappingEnd),
            b',' => return self.fetch_flow_entry(),
            _ => {}
        }
        if c == b'-' && self.is_blankz(1) {
            return self.fetch_block_entry();
        }
        if c == b'?' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_key();
        }
        if c == b':' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_value();
        }
        match c {
            b'*' => return self.fetch_anchor(true),
            b'&' => return self.fetch_anchor(false),
            b'!' => return self.fetch_tag(),
            b'|' if self.flow_level == 0 => return self.fetch_block_scalar(true),
            b'>' if self.flow_level == 0 => return self.fetch_block_scalar(false),
            b'\'' => return self.fetch_flow_scalar(true),
            b'"' => return self.fetch_flow_scalar(false),
            _ => {}
        }
        let indicator = self.is_blankz(0)
            || matches!(
                c,
                b'-' | b'?'
                    | b':'
                    | b','
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'#'
                    | b'&'
                    | b'*'
                    | b'!'
                    | b'|'
                    | b'>'
                    | b'\''
                    | b'"'
                    | b'%'
                    | b'@'
                    | b'`'
            );
        if !indicator
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && (c == b'?' || c == b':') && !self.is_blankz(1))
        {
            return self.fetch_plain_scalar();
        }
        Err(self.error(
            "while scanning for the next token",
            self.mark,
            "found character that cannot start any token",
        ))
    }

    fn simple_key_is_valid(&mut self, i: usize) -> Scan<bool> {
        let key = self.simple_keys[i];
        if !key.possible {
            return Ok(false);
        }
        // A simple key is a single line of at most 1024 characters.
        if key.mark.line < self.mark.line || key.mark.index + 1024 < self.mark.index {
            if key.required {
                return Err(self.error(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                ));
            }
            self.simple_keys[i].possible = false;
            return Ok(false);
        }
        Ok(true)
    }

    fn save_simple_key(&mut self) -> Scan {
        let required = self.flow_level == 0 && self.indent == self.column();
        if self.simple_key_allowed {
            let key = SimpleKey {
                possible: true,
                required,
                token_number: self.queued(),
                mark: self.mark,
            };
            self.remove_simple_key()?;
            let last = self.simple_keys.len() - 1;
            self.simple_keys[last] = key;
            self.simple_keys_by_tok.insert(key.token_number, last);
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> Scan {
        let i = self.simple_keys.len() - 1;
        let key = self.simple_keys[i];
        if key.possible {
            if key.required {
                return Err(self.error(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                ));
            }
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
        }
        Ok(())
    }

    fn increase_flow_level(&mut self) -> Scan {
        self.simple_keys.push(SimpleKey {
            possible: false,
            required: false,
            token_number: self.queued(),
            mark: self.mark,
        });
        self.flow_level += 1;
        if self.flow_level > MAX_NESTING {
            let mark = self.simple_keys[self.simple_keys.len() - 1].mark;
            return Err(self.error(
                "while increasing flow level",
                mark,
                &format!("exceeded max depth of {MAX_NESTING}"),
            ));
        }
        Ok(())
    }

    /// Drops the innermost level's simple key, and with it the token number it was saved
    /// under: when the collection stayed empty that is the number of the `[` or `{` token
    /// itself, whose own simple key is then forgotten by `fetch_more_tokens`.
    fn decrease_flow_level(&mut self) {
        if self.flow_level > 0 {
            self.flow_level -= 1;
            if let Some(key) = self.simple_keys.pop() {
                self.simple_keys_by_tok.remove(&key.token_number);
            }
        }
    }

    fn roll_indent(&mut self, column: isize, number: isize, kind: TokenKind, mark: Mark) -> Scan {
        if self.flow_level > 0 {
            return Ok(());
        }
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            if self.indents.len() > MAX_NESTING {
                let mark = self.simple_keys[self.simple_keys.len() - 1].mark;
                return Err(self.error(
                    "while increasing indent level",
                    mark,
                    &format!("exceeded max depth of {MAX_NESTING}"),
                ));
            }
            let mut number = number;
            if number > -1 {
                number -= isize::try_from(self.tokens_parsed).unwrap_or(isize::MAX);
            }
            self.insert_token(
                number,
                Token {
                    kind,
                    start: mark,
                    end: mark,
                },
            );
        }
        Ok(())
    }

    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            self.push_token(TokenKind::BlockEnd, self.mark, self.mark);
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn fetch_stream_start(&mut self) {
        self.indent = -1;
        self.simple_keys.push(SimpleKey::default());
        self.simple_keys_by_tok.clear();
        self.simple_key_allowed = true;
        self.stream_start_produced = true;
        self.push_token(TokenKind::StreamStart, self.mark, self.mark);
    }

    fn fetch_stream_end(&mut self) -> Scan {
        if self.mark.column != 0 {
            self.mark.column = 0;
            self.mark.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        self.push_token(TokenKind::StreamEnd, self.mark, self.mark);
        Ok(())
    }

    fn fetch_directive(&mut self) -> Scan {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, kind: TokenKind) -> Scan {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.skip();
        self.skip();
        self.push_token(kind, start, self.mark);
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: TokenKind) -> Scan {
        self.save_simple_key()?;
        self.increase_flow_level()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_token(kind, start, self.mark);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: TokenKind) -> Scan {
        self.remove_simple_key()?;
        self.decrease_flow_level();
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.push_token(kind, start, self.mark);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Scan {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_token(TokenKind::FlowEntry, start, self.mark);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Scan {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(
                    "",
                    self.mark,
                    "block sequence entries are not allowed in this context",
                ));
            }
            self.roll_indent(self.column(), -1, TokenKind::BlockSequenceStart, self.mark)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_token(TokenKind::BlockEntry, start, self.mark);
        Ok(())
    }

    fn fetch_key(&mut self) -> Scan {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(
                    "",
                    self.mark,
                    "mapping keys are not allowed in this context",
                ));
            }
            self.roll_indent(self.column(), -1, TokenKind::BlockMappingStart, self.mark)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.mark;
        self.skip();
        self.push_token(TokenKind::Key, start, self.mark);
        Ok(())
    }

    fn fetch_value(&mut self) -> Scan {
        let i = self.simple_keys.len() - 1;
        if self.simple_key_is_valid(i)? {
            let key = self.simple_keys[i];
            let parsed = isize::try_from(self.tokens_parsed).unwrap_or(isize::MAX);
            let number = isize::try_from(key.token_number).unwrap_or(isize::MAX);
            self.insert_token(
                number - parsed,
                Token {
                    kind: TokenKind::Key,
                    start: key.mark,
                    end: key.mark,
                },
            );
            self.roll_indent(
                isize::try_from(key.mark.column).unwrap_or(isize::MAX),
                number,
                TokenKind::BlockMappingStart,
                key.mark,
            )?;
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
            self.simple_key_allowed = false;
        } else {
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err(self.error(
                        "",
                        self.mark,
                        "mapping values are not allowed in this context",
                    ));
                }
                self.roll_indent(self.column(), -1, TokenKind::BlockMappingStart, self.mark)?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.mark;
        self.skip();
        self.push_token(TokenKind::Value, start, self.mark);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> Scan {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_anchor(alias)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_tag(&mut self) -> Scan {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_tag()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, literal: bool) -> Scan {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let token = self.scan_block_scalar(literal)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> Scan {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_flow_scalar(single)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> Scan {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_plain_scalar()?;
        self.tokens.push_back(token);
        Ok(())
    }

    // -- scanning -----------------------------------------------------------------------

    fn scan_to_next_token(&mut self) -> Scan {
        loop {
            self.cache(1)?;
            if self.mark.column == 0 && self.input.is_bom() {
                self.skip();
            }
            self.cache(1)?;
            // Tabs are white space only where no simple key may start (in flow context,
            // or after a key or value indicator in block context).
            while self.at(0) == b' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.at(0) == b'\t')
            {
                self.skip();
                self.cache(1)?;
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                    self.cache(1)?;
                }
            }
            if self.is_break(0) {
                self.cache(2)?;
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    fn scan_directive(&mut self) -> Scan<Token> {
        let start = self.mark;
        self.skip();
        let name = self.scan_directive_name(start)?;
        let token = if name == b"YAML" {
            let (major, minor) = self.scan_version_directive_value(start)?;
            Token {
                kind: TokenKind::VersionDirective { major, minor },
                start,
                end: self.mark,
            }
        } else if name == b"TAG" {
            let (handle, prefix) = self.scan_tag_directive_value(start)?;
            Token {
                kind: TokenKind::TagDirective { handle, prefix },
                start,
                end: self.mark,
            }
        } else {
            return Err(self.error(
                "while scanning a directive",
                start,
                "found unknown directive name",
            ));
        };
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
                self.cache(1)?;
            }
        }
        if !self.is_breakz(0) {
            return Err(self.error(
                "while scanning a directive",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.cache(2)?;
            self.skip_line();
        }
        Ok(token)
    }

    fn scan_directive_name(&mut self, start: Mark) -> Scan<Vec<u8>> {
        self.cache(1)?;
        let mut s = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut s);
            self.cache(1)?;
        }
        if s.is_empty() {
            return Err(self.error(
                "while scanning a directive",
                start,
                "could not find expected directive name",
            ));
        }
        if !self.is_blankz(0) {
            return Err(self.error(
                "while scanning a directive",
                start,
                "found unexpected non-alphabetical character",
            ));
        }
        Ok(s)
    }

    fn scan_version_directive_value(&mut self, start: Mark) -> Scan<(i8, i8)> {
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let major = self.scan_version_directive_number(start)?;
        if self.at(0) != b'.' {
            return Err(self.error(
                "while scanning a %YAML directive",
                start,
                "did not find expected digit or '.' character",
            ));
        }
        self.skip();
        let minor = self.scan_version_directive_number(start)?;
        Ok((major, minor))
    }

    fn scan_version_directive_number(&mut self, start: Mark) -> Scan<i8> {
        self.cache(1)?;
        let (mut value, mut length) = (0i8, 0);
        while self.is_digit(0) {
            length += 1;
            if length > 2 {
                return Err(self.error(
                    "while scanning a %YAML directive",
                    start,
                    "found extremely long version number",
                ));
            }
            #[allow(clippy::cast_possible_wrap)]
            let digit = (self.at(0) - b'0') as i8;
            value = value * 10 + digit;
            self.skip();
            self.cache(1)?;
        }
        if length == 0 {
            return Err(self.error(
                "while scanning a %YAML directive",
                start,
                "did not find expected version number",
            ));
        }
        Ok(value)
    }

    fn scan_tag_directive_value(&mut self, start: Mark) -> Scan<(Vec<u8>, Vec<u8>)> {
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let handle = self.scan_tag_handle(true, start)?;
        self.cache(1)?;
        if !self.is_blank(0) {
            return Err(self.error(
                "while scanning a %TAG directive",
                start,
                "did not find expected whitespace",
            ));
        }
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let prefix = self.scan_tag_uri(true, None, start)?;
        self.cache(1)?;
        if !self.is_blankz(0) {
            return Err(self.error(
                "while scanning a %TAG directive",
                start,
                "did not find expected whitespace or line break",
            ));
        }
        Ok((handle, prefix))
    }

    fn scan_anchor(&mut self, alias: bool) -> Scan<Token> {
        let start = self.mark;
        self.skip();
        self.cache(1)?;
        let mut s = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut s);
            self.cache(1)?;
        }
        let end = self.mark;
        let followed = self.is_blankz(0)
            || matches!(
                self.at(0),
                b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'
            );
        if s.is_empty() || !followed {
            let context = if alias {
                "while scanning an alias"
            } else {
                "while scanning an anchor"
            };
            return Err(self.error(
                context,
                start,
                "did not find expected alphabetic or numeric character",
            ));
        }
        let kind = if alias {
            TokenKind::Alias(s)
        } else {
            TokenKind::Anchor(s)
        };
        Ok(Token { kind, start, end })
    }

    fn scan_tag(&mut self) -> Scan<Token> {
        let start = self.mark;
        self.cache(2)?;
        let (handle, suffix);
        if self.at(1) == b'<' {
            // A verbatim tag: !<...>.
            self.skip();
            self.skip();
            suffix = self.scan_tag_uri(false, None, start)?;
            if self.at(0) != b'>' {
                return Err(self.error(
                    "while scanning a tag",
                    start,
                    "did not find the expected '>'",
                ));
            }
            self.skip();
            handle = Vec::new();
        } else {
            let h = self.scan_tag_handle(false, start)?;
            if h[0] == b'!' && h.len() > 1 && h[h.len() - 1] == b'!' {
                suffix = self.scan_tag_uri(false, None, start)?;
                handle = h;
            } else {
                let s = self.scan_tag_uri(false, Some(&h), start)?;
                if s.is_empty() {
                    // A bare `!`.
                    handle = Vec::new();
                    suffix = b"!".to_vec();
                } else {
                    handle = b"!".to_vec();
                    suffix = s;
                }
            }
        }
        self.cache(1)?;
        if !self.is_blankz(0) {
            return Err(self.error(
                "while scanning a tag",
                start,
                "did not find expected whitespace or line break",
            ));
        }
        Ok(Token {
            kind: TokenKind::Tag { handle, suffix },
            start,
            end: self.mark,
        })
    }

    fn scan_tag_handle(&mut self, directive: bool, start: Mark) -> Scan<Vec<u8>> {
        self.cache(1)?;
        if self.at(0) != b'!' {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        let mut s = Vec::new();
        self.read(&mut s);
        self.cache(1)?;
        while self.is_alpha(0) {
            self.read(&mut s);
            self.cache(1)?;
        }
        if self.at(0) == b'!' {
            self.read(&mut s);
        } else if directive && s != b"!" {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        Ok(s)
    }

    fn scan_tag_uri(&mut self, directive: bool, head: Option<&[u8]>, start: Mark) -> Scan<Vec<u8>> {
        let mut s = Vec::new();
        let mut has_tag = head.is_some_and(|h| !h.is_empty());
        if let Some(h) = head {
            if h.len() > 1 {
                s.extend_from_slice(&h[1..]);
            }
        }
        self.cache(1)?;
        while self.is_alpha(0)
            || matches!(
                self.at(0),
                b';' | b'/'
                    | b'?'
                    | b':'
                    | b'@'
                    | b'&'
                    | b'='
                    | b'+'
                    | b'$'
                    | b','
                    | b'.'
                    | b'!'
                    | b'~'
                    | b'*'
                    | b'\''
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b'%'
            )
        {
            if self.at(0) == b'%' {
                self.scan_uri_escapes(directive, start, &mut s)?;
            } else {
                self.read(&mut s);
            }
            self.cache(1)?;
            has_tag = true;
        }
        if !has_tag {
            return Err(self.tag_error(directive, start, "did not find expected tag URI"));
        }
        Ok(s)
    }

    fn scan_uri_escapes(&mut self, directive: bool, start: Mark, s: &mut Vec<u8>) -> Scan {
        let mut w = 1024;
        while w > 0 {
            self.cache(3)?;
            if !(self.at(0) == b'%' && self.is_hex(1) && self.is_hex(2)) {
                return Err(self.tag_error(directive, start, "did not find URI escaped octet"));
            }
            #[allow(clippy::cast_possible_truncation)]
            let octet = ((self.as_hex(1) << 4) + self.as_hex(2)) as u8;
            if w == 1024 {
                w = width(octet);
                if w == 0 {
                    return Err(self.tag_error(
                        directive,
                        start,
                        "found an incorrect leading UTF-8 octet",
                    ));
                }
            } else if octet & 0xC0 != 0x80 {
                return Err(self.tag_error(
                    directive,
                    start,
                    "found an incorrect trailing UTF-8 octet",
                ));
            }
            s.push(octet);
            self.skip();
            self.skip();
            self.skip();
            w -= 1;
        }
        Ok(())
    }

    #[allow(
        clippy::too_many_lines,
        reason = "mirrors yaml_parser_scan_block_scalar in scannerc.go line for line"
    )]
    fn scan_block_scalar(&mut self, literal: bool) -> Scan<Token> {
        let start = self.mark;
        self.skip();
        self.cache(1)?;
        let mut chomping = 0i8;
        let mut increment = 0isize;
        let indentation_zero = |this: &Self| {
            this.error(
                "while scanning a block scalar",
                start,
                "found an indentation indicator equal to 0",
            )
        };
        if matches!(self.at(0), b'+' | b'-') {
            chomping = if self.at(0) == b'+' { 1 } else { -1 };
            self.skip();
            self.cache(1)?;
            if self.is_digit(0) {
                if self.at(0) == b'0' {
                    return Err(indentation_zero(self));
                }
                increment = isize::from(self.at(0) - b'0');
                self.skip();
            }
        } else if self.is_digit(0) {
            if self.at(0) == b'0' {
                return Err(indentation_zero(self));
            }
            increment = isize::from(self.at(0) - b'0');
            self.skip();
            self.cache(1)?;
            if matches!(self.at(0), b'+' | b'-') {
                chomping = if self.at(0) == b'+' { 1 } else { -1 };
                self.skip();
            }
        }
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
                self.cache(1)?;
            }
        }
        if !self.is_breakz(0) {
            return Err(self.error(
                "while scanning a block scalar",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.cache(2)?;
            self.skip_line();
        }
        let mut end = self.mark;
        let mut indent = 0isize;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            };
        }
        let (mut s, mut leading_break, mut trailing_breaks) = (Vec::new(), Vec::new(), Vec::new());
        self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        self.cache(1)?;
        let mut leading_blank = false;
        while self.column() == indent && !self.is_z(0) {
            let trailing_blank = self.is_blank(0);
            if !literal
                && !leading_blank
                && !trailing_blank
                && leading_break.first() == Some(&b'\n')
            {
                if trailing_breaks.is_empty() {
                    s.push(b' ');
                }
            } else {
                s.extend_from_slice(&leading_break);
            }
            leading_break.clear();
            s.extend_from_slice(&trailing_breaks);
            trailing_breaks.clear();
            leading_blank = self.is_blank(0);
            while !self.is_breakz(0) {
                self.read(&mut s);
                self.cache(1)?;
            }
            self.cache(2)?;
            self.read_line(&mut leading_break);
            self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomping != -1 {
            s.extend_from_slice(&leading_break);
        }
        if chomping == 1 {
            s.extend_from_slice(&trailing_breaks);
        }
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        Ok(Token {
            kind: TokenKind::Scalar { value: s, style },
            start,
            end,
        })
    }

    fn scan_block_scalar_breaks(
        &mut self,
        indent: &mut isize,
        breaks: &mut Vec<u8>,
        start: Mark,
        end: &mut Mark,
    ) -> Scan {
        *end = self.mark;
        let mut max_indent = 0isize;
        loop {
            self.cache(1)?;
            while (*indent == 0 || self.column() < *indent) && self.is_space(0) {
                self.skip();
                self.cache(1)?;
            }
            max_indent = max_indent.max(self.column());
            if (*indent == 0 || self.column() < *indent) && self.is_tab(0) {
                return Err(self.error(
                    "while scanning a block scalar",
                    start,
                    "found a tab character where an indentation space is expected",
                ));
            }
            if !self.is_break(0) {
                break;
            }
            self.cache(2)?;
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn scan_flow_scalar(&mut self, single: bool) -> Scan<Token> {
        let start = self.mark;
        self.skip();
        let (mut s, mut leading_break, mut trailing_breaks, mut whitespaces) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        loop {
            self.cache(4)?;
            if self.mark.column == 0 && self.document_indicator() {
                return Err(self.error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected document indicator",
                ));
            }
            if self.is_z(0) {
                return Err(self.error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected end of stream",
                ));
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    s.push(b'\'');
                    self.skip();
                    self.skip();
                } else if single && c == b'\'' || !single && c == b'"' {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.cache(3)?;
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    let mut code_length = 0;
                    match self.at(1) {
                        b'0' => s.push(0),
                        b'a' => s.push(0x07),
                        b'b' => s.push(0x08),
                        b't' | b'\t' => s.push(0x09),
                        b'n' => s.push(0x0A),
                        b'v' => s.push(0x0B),
                        b'f' => s.push(0x0C),
                        b'r' => s.push(0x0D),
                        b'e' => s.push(0x1B),
                        b' ' => s.push(b' '),
                        b'"' => s.push(b'"'),
                        b'\'' => s.push(b'\''),
                        b'\\' => s.push(b'\\'),
                        b'N' => s.extend_from_slice(&[0xC2, 0x85]),
                        b'_' => s.extend_from_slice(&[0xC2, 0xA0]),
                        b'L' => s.extend_from_slice(&[0xE2, 0x80, 0xA8]),
                        b'P' => s.extend_from_slice(&[0xE2, 0x80, 0xA9]),
                        b'x' => code_length = 2,
                        b'u' => code_length = 4,
                        b'U' => code_length = 8,
                        _ => {
                            return Err(self.error(
                                "while parsing a quoted scalar",
                                start,
                                "found unknown escape character",
                            ))
                        }
                    }
                    self.skip();
                    self.skip();
                    if code_length > 0 {
                        self.cache(isize::try_from(code_length).unwrap_or(8))?;
                        let mut value = 0u32;
                        for k in 0..code_length {
                            if !self.is_hex(k) {
                                return Err(self.error(
                                    "while parsing a quoted scalar",
                                    start,
                                    "did not find expected hexdecimal number",
                                ));
                            }
                            value = (value << 4) + self.as_hex(k);
                        }
                        let Some(ch) = char::from_u32(value) else {
                            return Err(self.error(
                                "while parsing a quoted scalar",
                                start,
                                "found invalid Unicode character escape code",
                            ));
                        };
                        let mut utf8 = [0; 4];
                        s.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
                        for _ in 0..code_length {
                            self.skip();
                        }
                    }
                } else {
                    self.read(&mut s);
                }
                self.cache(2)?;
            }
            self.cache(1)?;
            if single && self.at(0) == b'\'' || !single && self.at(0) == b'"' {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else {
                    self.cache(2)?;
                    if leading_blanks {
                        self.read_line(&mut trailing_breaks);
                    } else {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    }
                }
                self.cache(1)?;
            }
            if leading_blanks {
                if leading_break.first() == Some(&b'\n') {
                    if trailing_breaks.is_empty() {
                        s.push(b' ');
                    } else {
                        s.extend_from_slice(&trailing_breaks);
                    }
                } else {
                    s.extend_from_slice(&leading_break);
                    s.extend_from_slice(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.extend_from_slice(&whitespaces);
                whitespaces.clear();
            }
        }
        self.skip();
        let style = if single {
            ScalarStyle::SingleQuoted
        } else {
            ScalarStyle::DoubleQuoted
        };
        Ok(Token {
            kind: TokenKind::Scalar { value: s, style },
            start,
            end: self.mark,
        })
    }

    /// `---` or `...` followed by a blank, a break or the end.
    fn document_indicator(&self) -> bool {
        let (a, b, c) = (self.at(0), self.at(1), self.at(2));
        ((a == b'-' && b == b'-' && c == b'-') || (a == b'.' && b == b'.' && c == b'.'))
            && self.is_blankz(3)
    }

    fn scan_plain_scalar(&mut self) -> Scan<Token> {
        let (mut s, mut leading_break, mut trailing_breaks, mut whitespaces) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut leading_blanks = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        loop {
            self.cache(4)?;
            if self.mark.column == 0 && self.document_indicator() {
                break;
            }
            if self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                // A `:` ends the scalar only before white space, even in a flow collection.
                if (c == b':' && self.is_blankz(1))
                    || (self.flow_level > 0 && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.first() == Some(&b'\n') {
                            if trailing_breaks.is_empty() {
                                s.push(b' ');
                            } else {
                                s.extend_from_slice(&trailing_breaks);
                            }
                        } else {
                            s.extend_from_slice(&leading_break);
                            s.extend_from_slice(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.extend_from_slice(&whitespaces);
                        whitespaces.clear();
                    }
                }
                self.read(&mut s);
                end = self.mark;
                self.cache(2)?;
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            self.cache(1)?;
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && self.column() < indent && self.is_tab(0) {
                        return Err(self.error(
                            "while scanning a plain scalar",
                            start,
                            "found a tab character that violates indentation",
                        ));
                    }
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else {
                    self.cache(2)?;
                    if leading_blanks {
                        self.read_line(&mut trailing_breaks);
                    } else {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    }
                }
                self.cache(1)?;
            }
            if self.flow_level == 0 && self.column() < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(Token {
            kind: TokenKind::Scalar {
                value: s,
                style: ScalarStyle::Plain,
            },
            start,
            end,
        })
    }
}
