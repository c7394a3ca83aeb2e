//! The input as go-yaml v2's reader hands it to the scanner (`readerc.go`).
//!
//! The text is valid UTF-8 already (a Rust string), so decoding reduces to what the reader
//! checks as it goes: that every character is one YAML allows. It checks a window of 512
//! bytes (its raw buffer) at a time, when the scanner asks for more characters than it has,
//! so a control character is an error only once the scanner has read close to it; a
//! control character after the end of the first document may never be seen.

use super::{Error, ErrorKind, Mark};

/// `input_raw_buffer_size`: the reader decodes this many bytes at a time.
const RAW_BUFFER_SIZE: usize = 512;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The reader's state: the input, the scanner's position in it, and how far it is decoded.
pub(super) struct Input<'a> {
    bytes: &'a [u8],
    /// `buffer_pos`, as an offset in `bytes`.
    pub(super) pos: usize,
    /// Where the reader's buffer starts in `bytes`: `update_buffer` moves what is unread to
    /// the start of the buffer (`is_bom` looks there, not at `pos`).
    buffer_start: usize,
    /// Bytes decoded (and checked) so far.
    decoded: usize,
    /// `unread`: characters decoded and not yet consumed, the end-of-input NULs included.
    pub(super) unread: isize,
    started: bool,
}

impl<'a> Input<'a> {
    pub(super) fn new(text: &'a str) -> Input<'a> {
        Input {
            bytes: text.as_bytes(),
            pos: 0,
            buffer_start: 0,
            decoded: 0,
            unread: 0,
            started: false,
        }
    }

    /// The byte `k` bytes after the current position; past the end, the reader's NUL padding.
    #[inline]
    pub(super) fn at(&self, k: usize) -> u8 {
        self.bytes.get(self.pos + k).copied().unwrap_or(0)
    }

    /// `bytes[from..to]`, for copying characters out.
    #[inline]
    pub(super) fn slice(&self, from: usize, to: usize) -> &'a [u8] {
        &self.bytes[from.min(self.bytes.len())..to.min(self.bytes.len())]
    }

    /// `is_bom(parser.buffer, parser.buffer_pos)`: go-yaml v2 tests the first three bytes of
    /// its buffer, wherever the position is (yamlprivateh.go).
    #[inline]
    pub(super) fn is_bom(&self) -> bool {
        let b = |k: usize| self.bytes.get(self.buffer_start + k).copied().unwrap_or(0);
        b(0) == BOM[0] && b(1) == BOM[1] && b(2) == BOM[2]
    }

    /// `cache()`: makes sure `length` characters are decoded past the position.
    #[inline]
    pub(super) fn cache(&mut self, length: isize) -> Result<(), Error> {
        if self.unread >= length {
            return Ok(());
        }
        self.update_buffer(length)
    }

    /// `yaml_parser_update_buffer`: decodes raw windows until `length` characters are unread;
    /// past the end of the input each call adds one NUL.
    fn update_buffer(&mut self, length: isize) -> Result<(), Error> {
        let mut window_end = self.decoded + RAW_BUFFER_SIZE;
        if !self.started {
            // yaml_parser_determine_encoding: a UTF-8 BOM at the very start is skipped.
            self.started = true;
            if self.bytes.starts_with(BOM) {
                self.pos = BOM.len();
                self.decoded = BOM.len();
            }
            window_end = RAW_BUFFER_SIZE;
        }
        // What is unread moves to the start of the buffer.
        self.buffer_start = self.pos;
        while self.unread < length {
            if self.decoded >= self.bytes.len() {
                // The end of the input: one NUL character.
                self.unread += 1;
                break;
            }
            let end = window_end.min(self.bytes.len());
            while self.decoded < end {
                let lead = self.bytes[self.decoded];
                let width = width(lead);
                if width == 0 || self.decoded + width > end {
                    // A character cut by the window is decoded with the next one.
                    break;
                }
                // The text is UTF-8 (a Rust string): the sequence is decoded by its bits.
                let ch = if width == 1 {
                    u32::from(lead)
                } else {
                    self.bytes[self.decoded + 1..self.decoded + width]
                        .iter()
                        .fold(u32::from(lead) & (0x7F >> width), |c, &b| {
                            (c << 6) | (u32::from(b) & 0x3F)
                        })
                };
                if !allowed(ch) {
                    return Err(Error {
                        kind: ErrorKind::Reader,
                        problem: "control characters are not allowed".to_owned(),
                        problem_mark: Mark::default(),
                        context: String::new(),
                        context_mark: Mark::default(),
                    });
                }
                self.decoded += width;
                self.unread += 1;
            }
            window_end = self.decoded + RAW_BUFFER_SIZE;
        }
        Ok(())
    }
}

/// The characters readerc.go lets through.
#[inline]
fn allowed(ch: u32) -> bool {
    matches!(ch, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x1_0000..=0x10_FFFF)
}

/// `width()`: the length of the UTF-8 sequence a leading byte starts (0 for a bad one).
#[inline]
pub(super) fn width(b: u8) -> usize {
    if b & 0x80 == 0x00 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        0
    }
}
