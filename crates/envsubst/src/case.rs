//! Go's case mapping for `${v^}`, `${v^^}`, `${v,}`, `${v,,}`.
//!
//! Go maps one rune to one rune (Unicode's *simple* case mapping, `unicode.ToUpper`), so `ß`
//! stays `ß`; Rust's `char::to_uppercase` is the *full* mapping (`ß` → `SS`). Where the full
//! mapping has more than one rune we fall back to the simple one, which differs from "unchanged"
//! only for a few Greek letters with ypogegrammeni and for `İ`.

use super::lexer::decode_rune;

/// `unicode.ToUpper`.
pub(crate) fn upper_rune(c: char) -> char {
    match u32::from(c) {
        // Greek letters with ypogegrammeni: simple uppercase is the prosgegrammeni titlecase form.
        0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => {
            char::from_u32(u32::from(c) + 8).unwrap_or(c)
        }
        0x1FB3 => '\u{1FBC}',
        0x1FC3 => '\u{1FCC}',
        0x1FF3 => '\u{1FFC}',
        _ => single(c.to_uppercase()).unwrap_or(c),
    }
}

/// `unicode.ToLower`.
pub(crate) fn lower_rune(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    single(c.to_lowercase()).unwrap_or(c)
}

fn single(mut it: impl ExactSizeIterator<Item = char>) -> Option<char> {
    if it.len() == 1 {
        it.next()
    } else {
        None
    }
}

/// Runes of a Go string: invalid bytes become U+FFFD, one per byte (as `range` and `[]rune` do).
pub(crate) fn go_runes(s: &[u8]) -> impl Iterator<Item = char> + '_ {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (r, n) = decode_rune(rest);
        rest = &rest[n.max(1)..];
        Some(char::from_u32(r).unwrap_or('\u{FFFD}'))
    })
}

/// `strings.ToUpper` / `strings.ToLower`: per-rune mapping, invalid bytes become U+FFFD.
pub(crate) fn map_runes(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    if s.is_ascii() {
        return s.iter().map(|&b| f(char::from(b)) as u8).collect();
    }
    let mut out = String::with_capacity(s.len());
    out.extend(go_runes(s).map(f));
    out.into_bytes()
}

/// `toUpperFirst` / `toLowerFirst`: map the first rune only.
pub(crate) fn map_first(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    let (r, n) = decode_rune(s);
    let mut out = String::new();
    out.push(f(char::from_u32(r).unwrap_or('\u{FFFD}')));
    let mut out = out.into_bytes();
    out.extend_from_slice(&s[n..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharp_s_is_not_expanded_when_uppercased() {
        assert_eq!(
            map_runes("straße".as_bytes(), upper_rune),
            "STRAßE".as_bytes()
        );
    }

    #[test]
    fn dotted_capital_i_lowercases_to_plain_i() {
        assert_eq!(map_runes("İ".as_bytes(), lower_rune), b"i");
    }

    #[test]
    fn first_rune_only_is_mapped() {
        assert_eq!(
            map_first("éclair".as_bytes(), upper_rune),
            "Éclair".as_bytes()
        );
        assert_eq!(map_first(b"ABC", lower_rune), b"aBC");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        assert_eq!(
            map_runes(&[b'a', 0xff, 0xc3], upper_rune),
            "A\u{FFFD}\u{FFFD}".as_bytes()
        );
    }
}
