//! Shell patterns for `${v#p}`, `${v%p}` and friends: the `path` package of
//! `github.com/fluxcd/pkg/envsubst` v1.7.1 (`path/match.go`, unchanged since v1.7.0), Go's old
//! `path.Match` changed so that no operator stops at `/`: `*` and `?` match it like any other
//! character (so `${F##*/}` of `path/to/file` is `file`), and a trailing `*` matches whatever
//! is left.
//! Classes (`[a-z]`, `[^/]`), escapes (`\*`, also inside classes) and the errors of a
//! malformed pattern (an empty or unclosed class, a trailing `\`) are Go's.

use super::lexer::decode_rune;

/// The pattern is malformed (`[` unclosed, a trailing `\`, an empty class ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadPattern;

/// Reports whether `name` matches all of `pattern`.
pub(crate) fn path_match(mut pattern: &[u8], mut name: &[u8]) -> Result<bool, BadPattern> {
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            // A trailing `*` matches the rest of the name, `/` included (Flux's change).
            return Ok(true);
        }
        let (t, ok) = match_chunk(chunk, name)?;
        // The last chunk must use up the name; otherwise the star may still make it.
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if star {
            // Try skipping i+1 bytes of the name, `/` as any other byte.
            for i in 0..name.len() {
                let (t, ok) = match_chunk(chunk, &name[i + 1..])?;
                if ok {
                    if pattern.is_empty() && !t.is_empty() {
                        continue;
                    }
                    name = t;
                    continue 'pattern;
                }
            }
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

/// Splits off the next run of non-star pattern, noting whether stars preceded it.
fn scan_chunk(mut pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut star = false;
    while let Some((&b'*', rest)) = pattern.split_first() {
        pattern = rest;
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' if i + 1 < pattern.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &pattern[..i], &pattern[i..])
}

/// Matches a star-free chunk against the start of `s`; returns the rest of `s` and whether
/// it matched. Like the old Go code, stops checking the pattern once `s` runs out.
fn match_chunk<'s>(mut chunk: &[u8], mut s: &'s [u8]) -> Result<(&'s [u8], bool), BadPattern> {
    while !chunk.is_empty() {
        if s.is_empty() {
            return Ok((s, false));
        }
        match chunk[0] {
            b'[' => {
                let (r, n) = decode_rune(s);
                s = &s[n..];
                chunk = &chunk[1..];
                if chunk.is_empty() {
                    return Err(BadPattern);
                }
                let negated = chunk[0] == b'^';
                if negated {
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut nrange = 0;
                loop {
                    if chunk.first() == Some(&b']') && nrange > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let (lo, rest) = get_esc(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if chunk.first() == Some(&b'-') {
                        let (h, rest) = get_esc(&chunk[1..])?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    nrange += 1;
                }
                if matched == negated {
                    return Ok((s, false));
                }
            }
            b'?' => {
                let (_, n) = decode_rune(s);
                s = &s[n..];
                chunk = &chunk[1..];
            }
            c => {
                let lit = if c == b'\\' {
                    chunk = &chunk[1..];
                    match chunk.first() {
                        Some(&b) => b,
                        None => return Err(BadPattern),
                    }
                } else {
                    c
                };
                if lit != s[0] {
                    return Ok((s, false));
                }
                s = &s[1..];
                chunk = &chunk[1..];
            }
        }
    }
    Ok((s, true))
}

/// A possibly escaped character of a class; the rest of the chunk must not be empty.
fn get_esc(mut chunk: &[u8]) -> Result<(u32, &[u8]), BadPattern> {
    match chunk.first() {
        None | Some(b'-' | b']') => return Err(BadPattern),
        Some(b'\\') => {
            chunk = &chunk[1..];
            if chunk.is_empty() {
                return Err(BadPattern);
            }
        }
        _ => {}
    }
    let (r, n) = decode_rune(chunk);
    if r == 0xFFFD && n == 1 {
        return Err(BadPattern);
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return Err(BadPattern);
    }
    Ok((r, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> Result<bool, BadPattern> {
        path_match(p.as_bytes(), n.as_bytes())
    }

    // fluxcd/pkg/envsubst v1.7.1 path/match.go: `*` and `?` match `/`.
    #[test]
    fn star_and_question_mark_match_a_slash() {
        assert_eq!(m("*", "a/b"), Ok(true));
        assert_eq!(m("a*", "abc"), Ok(true));
        assert_eq!(m("*c", "a/c"), Ok(true));
        assert_eq!(m("*/", "a/b/"), Ok(true));
        assert_eq!(m("a*c", "a/b/d"), Ok(false));
        assert_eq!(m("?", "é"), Ok(true));
        assert_eq!(m("?", "/"), Ok(true));
        assert_eq!(m("a?c", "a/c"), Ok(true));
        assert_eq!(m("[^a]", "/"), Ok(true));
        assert_eq!(m("[/]", "/"), Ok(true));
    }

    // path/match.go: a star skips bytes, and the last chunk must end the name.
    #[test]
    fn star_backtracks_until_the_last_chunk_ends_the_name() {
        assert_eq!(m("*.", "a.b.c."), Ok(true));
        assert_eq!(m("*.b", "a.b.c"), Ok(false));
        assert_eq!(m("*b*", "abc"), Ok(true));
        assert_eq!(m("**", ""), Ok(true));
        assert_eq!(m("*x", ""), Ok(false));
    }

    #[test]
    fn character_classes_and_negation() {
        assert_eq!(m("[a-c]x", "bx"), Ok(true));
        assert_eq!(m("[^a-c]x", "bx"), Ok(false));
        assert_eq!(m("[", "a"), Err(BadPattern));
        assert_eq!(m("\\*", "*"), Ok(true));
        assert_eq!(m("[\\]]", "]"), Ok(true));
        assert_eq!(m("[]", "a"), Err(BadPattern));
        assert_eq!(m("[a-]", "a"), Err(BadPattern));
        assert_eq!(m("a\\", "ab"), Err(BadPattern));
    }

    #[test]
    fn malformed_pattern_is_not_noticed_once_name_runs_out() {
        // The old Go matcher stops reading the pattern when the name is exhausted.
        assert_eq!(m("ab[", "a"), Ok(false));
    }
}
