//! Go's `encoding/json` string encoding, the one escaper for every JSON fluxsim writes as Go
//! would: the YAML re-read's output and the name-hash input of generated ConfigMaps and
//! Secrets (kustomize's `hasher.go` marshals them with `json.Marshal`).
//!
//! Go 1.22 and later write `\b` and `\f` as short escapes (earlier versions wrote
//! `\u0008` and `\u000c`); kustomize v5.8.1 and kustomize-controller are built with such a
//! Go, and a generated name's hash suffix depends on it.

use std::fmt::Write as _;

/// encoding/json `appendString` with HTML escaping: `<`, `>`, `&`, U+2028 and U+2029 as \u
/// escapes, invalid UTF-8 as \ufffd one byte at a time (utf8.`DecodeRuneInString`).
pub(crate) fn push_json_string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for ch in decoded(bytes) {
        // encoding/json writes a byte that is not UTF-8 as the escape, not the character.
        let Some(ch) = ch else {
            out.push_str("\\ufffd");
            continue;
        };
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

/// The characters Go's `encoding/json` reads from `bytes` (`utf8.DecodeRuneInString`):
/// `None` for each byte that does not start a valid UTF-8 sequence, on its own.
fn decoded(bytes: &[u8]) -> impl Iterator<Item = Option<char>> + '_ {
    // Valid text (nearly always) is read in one pass; the byte-by-byte decoder is for the
    // rest.
    let valid = std::str::from_utf8(bytes).ok();
    let mut i = 0;
    let slow = std::iter::from_fn(move || {
        if valid.is_some() || i >= bytes.len() {
            return None;
        }
        let window = &bytes[i..bytes.len().min(i + 4)];
        let decoded = match std::str::from_utf8(window) {
            Ok(s) => s.chars().next(),
            Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&window[..e.valid_up_to()])
                .ok()
                .and_then(|s| s.chars().next()),
            Err(_) => None,
        };
        i += decoded.map_or(1, char::len_utf8);
        Some(decoded)
    });
    valid.unwrap_or_default().chars().map(Some).chain(slow)
}

/// The string `encoding/json` writes for `bytes` and reads back: the text itself when it is
/// UTF-8, else each byte that is not as U+FFFD, on its own.
pub(crate) fn go_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| {
        decoded(e.as_bytes())
            .map(|c| c.unwrap_or('\u{fffd}'))
            .collect()
    })
}

/// [`push_json_string`] of UTF-8 text.
pub fn push_json_str(out: &mut String, s: &str) {
    push_json_string(out, s.as_bytes());
}
