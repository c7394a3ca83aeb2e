//! The envsubst scanner: a mode-driven reader of runes, faithful to Flux's `envsubst/parse/scan.go`.
//!
//! Flux's scanner is not a conventional lexer: the parser switches its mode and its accept
//! function before every token, and escapes (`$$`, `\/`, `\\`) are removed from the token as it
//! is read. This module reproduces that machine, including its quirks (a NUL byte reads as end
//! of input; `unread` steps back by the width of the last rune *read*, even after a peek), but
//! keeps every position in the coordinates of the original input so that errors and the audit
//! can point at a line and column.

/// The rune Go's scanner returns at end of input. A real NUL byte reads the same (scan.go: `eof = rune(0)`).
pub(crate) const EOF: u32 = 0;

/// What one call to [`Scanner::scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

/// Mode bits: which tokens the next `scan` may recognise.
pub(crate) const SCAN_IDENT: u8 = 1;
pub(crate) const SCAN_LBRACK: u8 = 1 << 1;
pub(crate) const SCAN_RBRACK: u8 = 1 << 2;
pub(crate) const SCAN_ESCAPE: u8 = 1 << 3;

/// Escape bits: which escapes are honoured when `SCAN_ESCAPE` is on.
pub(crate) const ESC_DOLLAR: u8 = 1;
pub(crate) const ESC_BACKSLASH: u8 = 1 << 1;
pub(crate) const ESC_ALL: u8 = ESC_DOLLAR | ESC_BACKSLASH;

/// Decides whether a rune belongs to the identifier being scanned; `i` is the number of bytes
/// of the token read so far, the rune included (Go passes `pos - start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accept {
    Rune,
    Ident,
    Colon,
    OneHash,
    NotClosing,
    HashFunc,
    PercentFunc,
    DefaultFunc,
    ReplaceFunc,
    OneEqual,
    OneColon,
    RejectColonClose,
    Slash,
    NotSlash,
    CasingFunc,
}

impl Accept {
    fn accepts(self, r: u32, i: usize) -> bool {
        match self {
            Accept::Rune => true,
            Accept::Ident => is_go_letter(r) || is_go_digit(r) || r == u32::from(b'_'),
            Accept::Colon => r == u32::from(b':'),
            Accept::OneHash => r == u32::from(b'#') && i == 1,
            Accept::NotClosing => r != u32::from(b'}'),
            Accept::HashFunc => r == u32::from(b'#') && i < 3,
            Accept::PercentFunc => r == u32::from(b'%') && i < 3,
            Accept::DefaultFunc => {
                (i == 1 && r == u32::from(b':'))
                    || (i == 2 && [b'=', b'-', b'?', b'+'].iter().any(|&c| r == u32::from(c)))
            }
            Accept::ReplaceFunc => {
                (i == 1 && r == u32::from(b'/'))
                    || (i == 2 && [b'/', b'#', b'%'].iter().any(|&c| r == u32::from(c)))
            }
            Accept::OneEqual => i == 1 && r == u32::from(b'='),
            Accept::OneColon => i == 1 && r == u32::from(b':'),
            Accept::RejectColonClose => r != u32::from(b':') && r != u32::from(b'}'),
            Accept::Slash => r == u32::from(b'/'),
            Accept::NotSlash => r != u32::from(b'/'),
            Accept::CasingFunc => (r == u32::from(b',') || r == u32::from(b'^')) && i < 3,
        }
    }
}

/// Go's `unicode.IsLetter`: general category L (Lu, Ll, Lt, Lm, Lo).
pub(crate) fn is_go_letter(r: u32) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    char::from_u32(r).is_some_and(|c| {
        matches!(
            get_general_category(c),
            G::UppercaseLetter
                | G::LowercaseLetter
                | G::TitlecaseLetter
                | G::ModifierLetter
                | G::OtherLetter
        )
    })
}

/// Go's `unicode.IsDigit`: general category Nd (so not `²` or Roman numerals).
pub(crate) fn is_go_digit(r: u32) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    char::from_u32(r).is_some_and(|c| get_general_category(c) == G::DecimalNumber)
}

/// Go's `utf8.DecodeRune`: the rune at the start of `b` and its width; an invalid or
/// truncated sequence decodes as U+FFFD with width 1.
pub(crate) fn decode_rune(b: &[u8]) -> (u32, usize) {
    let Some(&first) = b.first() else {
        return (0xFFFD, 0);
    };
    if first < 0x80 {
        return (u32::from(first), 1);
    }
    let want = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (0xFFFD, 1),
    };
    match b.get(..want).map(std::str::from_utf8) {
        Some(Ok(s)) => (s.chars().next().map_or(0xFFFD, u32::from), want),
        _ => (0xFFFD, 1),
    }
}

/// The scanner state. Positions are byte offsets into the original input.
#[derive(Debug)]
pub(crate) struct Scanner<'a> {
    buf: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) start: usize,
    width: usize,
    pub(crate) mode: u8,
    pub(crate) escapes: u8,
    pub(crate) accept: Accept,
    /// Offsets (in the original input) of escape characters removed from the current token.
    /// Go deletes them from its buffer (`skip`); we remember them instead.
    removed: Vec<usize>,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Scanner {
            buf,
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            escapes: 0,
            accept: Accept::Rune,
            removed: Vec::new(),
        }
    }

    pub(crate) fn read(&mut self) -> u32 {
        if self.pos >= self.buf.len() {
            self.width = 0;
            return EOF;
        }
        let (r, w) = decode_rune(&self.buf[self.pos..]);
        self.width = w;
        self.pos += w;
        r
    }

    /// Steps back by the width of the last rune read (which, after a `peek`, is the peeked
    /// rune's width, not the current one's: Go behaves the same).
    pub(crate) fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(self.width);
    }

    pub(crate) fn peek(&mut self) -> u32 {
        let r = self.read();
        self.unread();
        r
    }

    /// Drops the escape character just read and consumes the escaped one after it.
    fn skip(&mut self) {
        self.removed.push(self.pos - 1);
        self.pos += 1;
    }

    /// The text of the token just scanned, with escape characters removed.
    pub(crate) fn text(&self) -> Vec<u8> {
        let end = self.pos.min(self.buf.len());
        let start = self.start.min(end);
        if self.removed.is_empty() {
            return self.buf[start..end].to_vec();
        }
        let mut out = Vec::with_capacity(end - start);
        let mut removed = self.removed.iter().peekable();
        for (i, &b) in self.buf[start..end].iter().enumerate() {
            if removed.peek() == Some(&&(start + i)) {
                removed.next();
                continue;
            }
            out.push(b);
        }
        out
    }

    /// Bytes of the current token in Go's (escape-stripped) buffer.
    fn token_len(&self) -> usize {
        self.pos - self.start - self.removed.len()
    }

    pub(crate) fn scan(&mut self) -> Token {
        self.start = self.pos;
        self.removed.clear();
        let r = self.read();
        if r == EOF {
            Token::Eof
        } else if self.scan_lbrack(r) {
            Token::Lbrack
        } else if self.scan_rbrack(r) {
            Token::Rbrack
        } else if self.scan_ident(r) {
            Token::Ident
        } else {
            Token::Illegal
        }
    }

    fn scan_ident(&mut self, r: u32) -> bool {
        if self.mode & SCAN_IDENT == 0 {
            return false;
        }
        if self.scan_escaped(r) {
            self.skip();
        } else if !self.accept.accepts(r, self.token_len()) {
            return false;
        }
        loop {
            let r = self.read();
            if r == EOF {
                self.unread();
                break;
            }
            if self.scan_lbrack(r) {
                self.unread();
                self.unread();
                break;
            }
            if self.scan_escaped(r) {
                self.skip();
                continue;
            }
            if !self.accept.accepts(r, self.token_len()) {
                self.unread();
                break;
            }
        }
        true
    }

    fn scan_lbrack(&mut self, r: u32) -> bool {
        if self.mode & SCAN_LBRACK == 0 {
            return false;
        }
        if r == u32::from(b'$') {
            if self.read() == u32::from(b'{') {
                return true;
            }
            self.unread();
        }
        false
    }

    fn scan_rbrack(&self, r: u32) -> bool {
        self.mode & SCAN_RBRACK != 0 && r == u32::from(b'}')
    }

    fn scan_escaped(&mut self, r: u32) -> bool {
        if self.mode & SCAN_ESCAPE == 0 {
            return false;
        }
        if r == u32::from(b'$') && self.escapes & ESC_DOLLAR != 0 && self.peek() == u32::from(b'$')
        {
            return true;
        }
        if r == u32::from(b'\\') && self.escapes & ESC_BACKSLASH != 0 {
            let next = self.peek();
            return next == u32::from(b'/') || next == u32::from(b'\\');
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_tokens(input: &str) -> Vec<(Token, String)> {
        let mut s = Scanner::new(input.as_bytes());
        let mut out = Vec::new();
        loop {
            s.mode = SCAN_IDENT | SCAN_LBRACK | SCAN_ESCAPE;
            s.escapes = ESC_DOLLAR;
            s.accept = Accept::Rune;
            let t = s.scan();
            if t == Token::Eof {
                break;
            }
            out.push((t, String::from_utf8_lossy(&s.text()).into_owned()));
        }
        out
    }

    #[test]
    fn text_stops_before_an_opening_brace() {
        assert_eq!(
            text_tokens("a ${"),
            vec![(Token::Ident, "a ".into()), (Token::Lbrack, "${".into())]
        );
    }

    #[test]
    fn double_dollar_is_one_dollar_in_text() {
        assert_eq!(text_tokens("x$${A}"), vec![(Token::Ident, "x${A}".into())]);
    }

    #[test]
    fn nul_byte_reads_as_end_of_input() {
        // scan.go: eof is rune(0), so a NUL ends the text and the rest is never read.
        assert_eq!(text_tokens("ab\0cd"), vec![(Token::Ident, "ab".into())]);
    }

    #[test]
    fn invalid_utf8_decodes_as_replacement_of_width_one() {
        assert_eq!(decode_rune(&[0xff, b'a']), (0xFFFD, 1));
        assert_eq!(decode_rune("é".as_bytes()), (0xE9, 2));
        assert_eq!(decode_rune(&[0xE2, 0x82]), (0xFFFD, 1));
    }

    #[test]
    fn identifiers_are_go_letters_and_digits() {
        assert!(Accept::Ident.accepts(u32::from('é'), 1));
        assert!(Accept::Ident.accepts(u32::from('٣'), 1)); // Arabic-Indic digit: Nd
        assert!(!Accept::Ident.accepts(u32::from('²'), 1)); // No, not Nd
        assert!(!Accept::Ident.accepts(u32::from('-'), 1));
    }
}
