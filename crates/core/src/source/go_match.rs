//! Go's `filepath.Match` (Go 1.16+, `/` as separator), which go-git's gitignore patterns use
//! for every path component: `*`, `?`, `[...]` with `^` (not `!`) for negation, `\` escapes.

/// Reports whether `name` matches all of `pattern`; `None` when the pattern is malformed
/// (Go's `ErrBadPattern`, which the gitignore matcher treats as "no match").
pub(crate) fn go_match(pattern: &str, name: &str) -> Option<bool> {
    // The shapes nearly every ignore pattern has, answered without scanning: a literal, and
    // `*` before a literal (`*.png`). Neither can be malformed.
    let literal = |p: &str| !p.contains(['*', '?', '[', '\\']);
    if literal(pattern) {
        return Some(pattern == name);
    }
    if let Some(suffix) = pattern.strip_prefix('*').filter(|s| literal(s)) {
        return Some(
            name.strip_suffix(suffix)
                .is_some_and(|skipped| !skipped.contains('/')),
        );
    }
    match_general(pattern, name)
}

/// [`go_match`] the long way, for any pattern.
fn match_general(pattern: &str, name: &str) -> Option<bool> {
    let mut pattern = pattern;
    let mut name = name;
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            // A trailing `*` matches the rest unless it holds a separator.
            return Some(!name.contains('/'));
        }
        let (t, ok, bad) = match_chunk(chunk, name);
        // The last chunk must exhaust the name, or the star may still match further on.
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if bad {
            return None;
        }
        if star {
            // Try skipping i+1 bytes of name; a star never skips a separator.
            for (i, b) in name.bytes().enumerate() {
                if b == b'/' {
                    break;
                }
                let Some(after) = name.get(i + 1..) else {
                    // Not a char boundary: Go would be mid-rune here and cannot match a
                    // chunk that starts with a literal, so keep scanning.
                    continue;
                };
                let (t, ok, bad) = match_chunk(chunk, after);
                if ok {
                    if pattern.is_empty() && !t.is_empty() {
                        continue;
                    }
                    name = t;
                    continue 'pattern;
                }
                if bad {
                    return None;
                }
            }
        }
        // Before answering "no", Go checks that the rest of the pattern is well formed.
        while !pattern.is_empty() {
            let (_, chunk, rest) = scan_chunk(pattern);
            pattern = rest;
            if match_chunk(chunk, "").2 {
                return None;
            }
        }
        return Some(false);
    }
    Some(name.is_empty())
}

/// Splits off leading stars and the chunk up to the next star outside a class.
fn scan_chunk(pattern: &str) -> (bool, &str, &str) {
    let trimmed = pattern.trim_start_matches('*');
    let star = trimmed.len() != pattern.len();
    let bytes = trimmed.as_bytes();
    let mut in_range = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    // `i` only ever stops on an ASCII byte or the end, so both halves are valid str.
    let (chunk, rest) = trimmed.split_at(i);
    (star, chunk, rest)
}

/// Matches `chunk` against the start of `s`: (rest of `s`, matched, pattern malformed).
fn match_chunk<'s>(chunk: &str, s: &'s str) -> (&'s str, bool, bool) {
    let mut chunk = chunk;
    let mut s = s;
    // After a failure Go keeps scanning the chunk only to validate it.
    let mut failed = false;
    while let Some(c) = chunk.chars().next() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match c {
            '[' => {
                let mut r = '\0';
                if !failed {
                    if let Some(first) = s.chars().next() {
                        r = first;
                        s = &s[first.len_utf8()..];
                    }
                }
                chunk = &chunk[1..];
                let negated = chunk.starts_with('^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut ranges = 0;
                loop {
                    if ranges > 0 && chunk.starts_with(']') {
                        chunk = &chunk[1..];
                        break;
                    }
                    let Some((lo, rest)) = get_esc(chunk) else {
                        return ("", false, true);
                    };
                    chunk = rest;
                    let mut hi = lo;
                    if let Some(after_dash) = chunk.strip_prefix('-') {
                        let Some((h, rest)) = get_esc(after_dash) else {
                            return ("", false, true);
                        };
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    ranges += 1;
                }
                if matched == negated {
                    failed = true;
                }
            }
            '?' => {
                if !failed {
                    match s.chars().next() {
                        Some('/') | None => failed = true,
                        Some(first) => s = &s[first.len_utf8()..],
                    }
                }
                chunk = &chunk[1..];
            }
            _ => {
                let mut literal = c;
                if c == '\\' {
                    chunk = &chunk[1..];
                    match chunk.chars().next() {
                        Some(escaped) => literal = escaped,
                        None => return ("", false, true),
                    }
                }
                if !failed {
                    // Go compares bytes; comparing the whole char is the same on valid UTF-8.
                    if s.starts_with(literal) {
                        s = &s[literal.len_utf8()..];
                    } else {
                        failed = true;
                    }
                }
                chunk = &chunk[literal.len_utf8()..];
            }
        }
    }
    if failed {
        ("", false, false)
    } else {
        (s, true, false)
    }
}

/// Reads one (possibly escaped) character of a class; `None` when malformed.
fn get_esc(chunk: &str) -> Option<(char, &str)> {
    let mut chunk = chunk;
    match chunk.chars().next() {
        None | Some('-' | ']') => return None,
        Some('\\') => chunk = &chunk[1..],
        Some(_) => {}
    }
    let c = chunk.chars().next()?;
    let rest = &chunk[c.len_utf8()..];
    // Go reports a class that runs to the end of the pattern as malformed.
    if rest.is_empty() {
        return None;
    }
    Some((c, rest))
}

#[cfg(test)]
mod tests {
    use super::{go_match, match_general};

    #[test]
    fn literal_and_star_suffix_shortcuts_agree_with_the_general_matcher() {
        let patterns = [
            "a.yaml", "*.png", "*.tar.gz", "*", "**", ".git", "*x", "", "*/",
        ];
        let names = [
            "a.yaml",
            "x.png",
            ".png",
            "png",
            "a.tar.gz",
            "tar.gz",
            "",
            ".git",
            "xx",
            "a/x",
            "a/b.png",
            "é.png",
            "*",
            "a.yaml.bak",
        ];
        for p in patterns {
            for n in names {
                assert_eq!(go_match(p, n), match_general(p, n), "{p:?} {n:?}");
            }
        }
    }

    #[test]
    fn star_and_question_mark_match_within_a_component() {
        assert_eq!(go_match("*.png", "x.png"), Some(true));
        assert_eq!(go_match("*.png", "x.png.bak"), Some(false));
        assert_eq!(go_match("a?c", "abc"), Some(true));
        assert_eq!(go_match("*", ""), Some(true));
        assert_eq!(go_match("*.tar.gz", "a.tar.gz"), Some(true));
    }

    #[test]
    fn classes_negate_with_caret_not_bang() {
        // Go's filepath.Match: `[^a]` negates, `[!a]` is the set {'!', 'a'}.
        assert_eq!(go_match("[^a]", "b"), Some(true));
        assert_eq!(go_match("[!a]", "b"), Some(false));
        assert_eq!(go_match("[!a]", "!"), Some(true));
        assert_eq!(go_match("[a-c]x", "bx"), Some(true));
    }

    #[test]
    fn backslash_escapes_a_metacharacter() {
        assert_eq!(go_match("\\*", "*"), Some(true));
        assert_eq!(go_match("\\*", "a"), Some(false));
        assert_eq!(go_match("\\#x", "#x"), Some(true));
    }

    #[test]
    fn malformed_patterns_are_errors() {
        assert_eq!(go_match("[", "a"), None);
        assert_eq!(go_match("a\\", "a"), None);
        assert_eq!(go_match("[]", "a"), None);
        // Go 1.16+ validates the rest of the pattern even after a mismatch.
        assert_eq!(go_match("x[", "a"), None);
    }
}
