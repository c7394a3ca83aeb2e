//! The envsubst parser, faithful to Flux's `envsubst/parse/parse.go`.
//!
//! Each parse function sets the scanner's mode and accept function, scans one token and
//! decides; the grammar is whatever that machine accepts, so it is reproduced step by step
//! rather than written as a cleaner grammar that would accept a different language.

use super::lexer::{
    Accept, Scanner, Token, ESC_ALL, ESC_DOLLAR, SCAN_ESCAPE, SCAN_IDENT, SCAN_LBRACK, SCAN_RBRACK,
};
use super::node::{Expr, Node};

/// Why the parser stopped, in Flux's words (parse.go's error values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// `bad substitution`
    BadSubstitution,
    /// `missing closing brace`
    MissingClosingBrace,
    /// `unable to parse variable name`
    VariableName,
    /// `unable to parse substitution within function`
    FuncSubstitution,
    /// `unable to parse default function`
    DefaultFunction,
    /// Nesting deeper than fluxsim follows (Go would recurse on; we refuse rather than overflow).
    TooDeep,
}

impl ParseErrorKind {
    /// The message Flux prints for this error.
    #[must_use]
    pub fn flux_message(self) -> &'static str {
        match self {
            ParseErrorKind::BadSubstitution => "bad substitution",
            ParseErrorKind::MissingClosingBrace => "missing closing brace",
            ParseErrorKind::VariableName => "unable to parse variable name",
            ParseErrorKind::FuncSubstitution => "unable to parse substitution within function",
            ParseErrorKind::DefaultFunction => "unable to parse default function",
            ParseErrorKind::TooDeep => "expressions nested too deeply",
        }
    }
}

/// A parse failure and the offset of the innermost `${` being parsed when it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseFailure {
    pub(crate) kind: ParseErrorKind,
    pub(crate) open: usize,
    /// Where the scanner stood when it gave up.
    pub(crate) at: usize,
}

/// How deep `${...}` may nest inside arguments before we refuse.
const MAX_DEPTH: usize = 200;

pub(crate) struct Parser<'a> {
    sc: Scanner<'a>,
    open: Vec<usize>,
}

type PResult<T> = Result<T, ParseErrorKind>;

impl<'a> Parser<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Parser {
            sc: Scanner::new(input),
            open: Vec::new(),
        }
    }

    /// Parses the whole input into a flat list of nodes.
    pub(crate) fn parse(mut self) -> Result<Vec<Node>, ParseFailure> {
        let mut nodes = Vec::new();
        // parse.go's parseAny recurses once per token; a loop is the same language.
        loop {
            self.sc.accept = Accept::Rune;
            self.sc.mode = SCAN_IDENT | SCAN_LBRACK | SCAN_ESCAPE;
            self.sc.escapes = ESC_DOLLAR;
            let start = self.sc.pos;
            let tok = self.sc.scan();
            let result = match tok {
                Token::Ident => {
                    nodes.push(Node::Text {
                        value: self.sc.text(),
                        span: start..self.sc.pos,
                    });
                    continue;
                }
                Token::Eof => return Ok(nodes),
                Token::Lbrack => self.parse_func(self.sc.start),
                _ => Err(ParseErrorKind::BadSubstitution),
            };
            match result {
                Ok(node) => nodes.push(node),
                Err(kind) => {
                    let open = self.open.last().copied().unwrap_or(start);
                    return Err(ParseFailure {
                        kind,
                        open,
                        at: self.sc.pos,
                    });
                }
            }
        }
    }

    fn expr(&self, open: usize, param: String, op: String, args: Vec<Vec<Node>>) -> Node {
        Node::Expr(Expr {
            param,
            op,
            args,
            span: open..self.sc.pos,
        })
    }

    fn parse_func(&mut self, open: usize) -> PResult<Node> {
        if self.open.len() >= MAX_DEPTH {
            return Err(ParseErrorKind::TooDeep);
        }
        self.open.push(open);
        let node = self.parse_func_body(open)?;
        self.open.pop();
        Ok(node)
    }

    fn parse_func_body(&mut self, open: usize) -> PResult<Node> {
        self.sc.escapes = ESC_ALL;
        if self.sc.peek() == u32::from(b'#') {
            return self.parse_len(open);
        }
        self.sc.accept = Accept::Ident;
        self.sc.mode = SCAN_IDENT;
        let name = match self.sc.scan() {
            Token::Ident => String::from_utf8_lossy(&self.sc.text()).into_owned(),
            _ => return Err(ParseErrorKind::VariableName),
        };
        match char::from_u32(self.sc.peek()) {
            Some(':') => return self.parse_default_or_substr(open, name),
            Some('=') => return self.parse_default(open, name),
            Some(',' | '^') => return self.parse_casing(open, name),
            Some('/') => return self.parse_replace(open, name),
            Some('#') => return self.parse_remove(open, name, Accept::HashFunc),
            Some('%') => return self.parse_remove(open, name, Accept::PercentFunc),
            _ => {}
        }
        self.sc.accept = Accept::Ident;
        self.sc.mode = SCAN_RBRACK;
        match self.sc.scan() {
            Token::Rbrack => Ok(self.expr(open, name, String::new(), Vec::new())),
            _ => Err(ParseErrorKind::MissingClosingBrace),
        }
    }

    /// One argument piece: a nested `${...}` or a run of accepted text.
    fn parse_param(&mut self, accept: Accept, mode: u8) -> PResult<Node> {
        self.sc.accept = accept;
        self.sc.mode = mode | SCAN_LBRACK;
        let start = self.sc.pos;
        match self.sc.scan() {
            Token::Lbrack => self.parse_func(self.sc.start),
            Token::Ident | Token::Rbrack => Ok(Node::Text {
                value: self.sc.text(),
                span: start..self.sc.pos,
            }),
            _ => Err(ParseErrorKind::FuncSubstitution),
        }
    }

    fn scan_op(&mut self, accept: Accept, err: ParseErrorKind) -> PResult<String> {
        self.sc.accept = accept;
        self.sc.mode = SCAN_IDENT;
        match self.sc.scan() {
            Token::Ident => Ok(String::from_utf8_lossy(&self.sc.text()).into_owned()),
            _ => Err(err),
        }
    }

    fn parse_default_or_substr(&mut self, open: usize, name: String) -> PResult<Node> {
        // parse.go reads the ':', peeks, then unreads once: by the *peeked* rune's width.
        self.sc.read();
        let r = self.sc.peek();
        self.sc.unread();
        if [b'=', b'-', b'?', b'+'].iter().any(|&c| r == u32::from(c)) {
            self.parse_default(open, name)
        } else {
            self.parse_substr(open, name)
        }
    }

    fn parse_substr(&mut self, open: usize, name: String) -> PResult<Node> {
        let op = self.scan_op(Accept::OneColon, ParseErrorKind::BadSubstitution)?;
        let mut args = vec![vec![self.parse_param(Accept::RejectColonClose, SCAN_IDENT)?]];
        self.sc.accept = Accept::Colon;
        self.sc.mode = SCAN_IDENT | SCAN_RBRACK;
        match self.sc.scan() {
            Token::Rbrack => return Ok(self.expr(open, name, op, args)),
            Token::Ident => {}
            _ => return Err(ParseErrorKind::BadSubstitution),
        }
        args.push(vec![self.parse_param(Accept::NotClosing, SCAN_IDENT)?]);
        self.consume_rbrack()?;
        Ok(self.expr(open, name, op, args))
    }

    fn parse_remove(&mut self, open: usize, name: String, accept: Accept) -> PResult<Node> {
        let op = self.scan_op(accept, ParseErrorKind::BadSubstitution)?;
        let args = vec![vec![self.parse_param(Accept::NotClosing, SCAN_IDENT)?]];
        self.consume_rbrack()?;
        Ok(self.expr(open, name, op, args))
    }

    fn parse_replace(&mut self, open: usize, name: String) -> PResult<Node> {
        let op = self.scan_op(Accept::ReplaceFunc, ParseErrorKind::BadSubstitution)?;
        // The controller's envsubst has no empty-pattern case: `${v/#/x}` fails to parse.
        let mut args = vec![vec![
            self.parse_param(Accept::NotSlash, SCAN_IDENT | SCAN_ESCAPE)?
        ]];
        self.scan_op(Accept::Slash, ParseErrorKind::BadSubstitution)?;
        if self.sc.peek() == u32::from(b'}') {
            self.consume_rbrack()?;
            return Ok(self.expr(open, name, op, args));
        }
        args.push(vec![
            self.parse_param(Accept::NotClosing, SCAN_IDENT | SCAN_ESCAPE)?
        ]);
        self.consume_rbrack()?;
        Ok(self.expr(open, name, op, args))
    }

    fn parse_default(&mut self, open: usize, name: String) -> PResult<Node> {
        let accept = if self.sc.peek() == u32::from(b'=') {
            Accept::OneEqual
        } else {
            Accept::DefaultFunc
        };
        let op = self.scan_op(accept, ParseErrorKind::DefaultFunction)?;
        // The default is a sequence of pieces, joined with no separator when used.
        let mut pieces = Vec::new();
        loop {
            if self.sc.peek() == u32::from(b'}') {
                self.consume_rbrack()?;
                let args = pieces.into_iter().map(|p| vec![p]).collect();
                return Ok(self.expr(open, name, op, args));
            }
            pieces.push(self.parse_param(Accept::NotClosing, SCAN_IDENT)?);
        }
    }

    fn parse_casing(&mut self, open: usize, name: String) -> PResult<Node> {
        let op = self.scan_op(Accept::CasingFunc, ParseErrorKind::BadSubstitution)?;
        self.consume_rbrack()?;
        Ok(self.expr(open, name, op, Vec::new()))
    }

    fn parse_len(&mut self, open: usize) -> PResult<Node> {
        let op = self.scan_op(Accept::OneHash, ParseErrorKind::BadSubstitution)?;
        let param = self.scan_op(Accept::Ident, ParseErrorKind::BadSubstitution)?;
        self.consume_rbrack()?;
        Ok(self.expr(open, param, op, Vec::new()))
    }

    fn consume_rbrack(&mut self) -> PResult<()> {
        self.sc.mode = SCAN_RBRACK;
        if self.sc.scan() == Token::Rbrack {
            Ok(())
        } else {
            Err(ParseErrorKind::BadSubstitution)
        }
    }
}
