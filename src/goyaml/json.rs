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

/// [`push_json_string`] of UTF-8 text.
pub(crate) fn push_json_str(out: &mut String, s: &str) {
    push_json_string(out, s.as_bytes());
}
