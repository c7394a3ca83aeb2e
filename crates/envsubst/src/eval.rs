//! Evaluating a parsed template, faithful to Flux's `envsubst/template.go` and `funcs.go`.
//!
//! Values are bytes, as Go strings are: `${v:0:1}` can cut a multi-byte character in half,
//! and lengths and offsets count bytes.

use super::case::{go_runes, lower_rune, map_first, map_runes, upper_rune};
use super::node::{Expr, Node};
use super::pattern::path_match;

/// Why evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EvalFailure {
    /// Strict mode and the variable is unset with no default operator.
    NotSet {
        name: String,
        span: std::ops::Range<usize>,
    },
    /// `${v:off:len}` whose end wraps past the largest int: Go's slice panics.
    SliceOutOfRange {
        span: std::ops::Range<usize>,
        start: i64,
        end: i64,
    },
    /// The output would grow past the budget (fluxsim's bound, not Flux's: a 10 MB var
    /// referenced 10,000 times must not exhaust the machine).
    TooLarge {
        span: std::ops::Range<usize>,
        limit: usize,
    },
}

/// Why one operator could not give a value.
enum OpFailure {
    /// Go's slice expression panics (`toSubstr`).
    Slice(i64, i64),
    /// The result would exceed the budget.
    TooLarge,
}

/// Looks up a variable; `None` is unset.
pub(crate) type Lookup<'a> = dyn Fn(&str) -> Option<&'a [u8]> + 'a;

/// Evaluates `nodes` into `out`, which may hold at most `budget` bytes.
pub(crate) fn eval_nodes(
    nodes: &[Node],
    lookup: &Lookup<'_>,
    strict: bool,
    budget: usize,
    out: &mut Vec<u8>,
) -> Result<(), EvalFailure> {
    for node in nodes {
        match node {
            Node::Text { value, span } => {
                if out.len() + value.len() > budget {
                    return Err(EvalFailure::TooLarge {
                        span: span.clone(),
                        limit: budget,
                    });
                }
                out.extend_from_slice(value);
            }
            Node::Expr(e) => eval_expr(e, lookup, strict, budget, out)?,
        }
    }
    Ok(())
}

fn eval_expr(
    e: &Expr,
    lookup: &Lookup<'_>,
    strict: bool,
    budget: usize,
    out: &mut Vec<u8>,
) -> Result<(), EvalFailure> {
    let too_large = || EvalFailure::TooLarge {
        span: e.span.clone(),
        limit: budget,
    };
    // template.go evaluates the arguments first, then looks up the variable.
    let mut args = Vec::with_capacity(e.args.len());
    for arg in &e.args {
        let mut buf = Vec::new();
        eval_nodes(arg, lookup, strict, budget, &mut buf)?;
        args.push(buf);
    }
    // Without strict mode, Flux's mapping reports every name as set (to "" when absent).
    let value = match lookup(&e.param) {
        Some(v) => v,
        None if !strict => &[],
        None if e.has_default() => &[],
        None => {
            return Err(EvalFailure::NotSet {
                name: e.param.clone(),
                span: e.span.clone(),
            })
        }
    };
    let result = apply(&e.op, value, &args, budget).map_err(|f| match f {
        OpFailure::Slice(start, end) => EvalFailure::SliceOutOfRange {
            span: e.span.clone(),
            start,
            end,
        },
        OpFailure::TooLarge => too_large(),
    })?;
    if out.len() + result.len() > budget {
        return Err(too_large());
    }
    out.extend_from_slice(&result);
    Ok(())
}

/// template.go's `lookupFunc`: an unknown operator (`${v^,}`) falls back to the default function.
fn apply(op: &str, s: &[u8], args: &[Vec<u8>], budget: usize) -> Result<Vec<u8>, OpFailure> {
    // Only a replacement can make a value much longer than its inputs (each match of the
    // pattern becomes the replacement): its size is known before it is built.
    if matches!(op, "/" | "//" | "/#") {
        if let [old, new, ..] = args {
            let n = if op == "//" { replacements(s, old) } else { 1 };
            if s.len().saturating_add(n.saturating_mul(new.len())) > budget {
                return Err(OpFailure::TooLarge);
            }
        }
    }
    Ok(match op {
        "," => map_first(s, lower_rune),
        ",," => map_runes(s, lower_rune),
        "^" => map_first(s, upper_rune),
        "^^" => map_runes(s, upper_rune),
        "#" if args.is_empty() => s.len().to_string().into_bytes(),
        "#" => trim_prefix_with(s, args, false),
        "##" => trim_prefix_with(s, args, true),
        "%" => trim_suffix_with(s, args, false),
        "%%" => trim_suffix_with(s, args, true),
        ":" => return substr(s, args).map_err(|(start, end)| OpFailure::Slice(start, end)),
        "/#" => replace_prefix(s, args),
        "/%" => replace_suffix(s, args),
        "/" => replace_n(s, args, Some(1)),
        "//" => replace_n(s, args, None),
        _ => to_default(s, args),
    })
}

fn to_default(s: &[u8], args: &[Vec<u8>]) -> Vec<u8> {
    if s.is_empty() && !args.is_empty() {
        args.concat()
    } else {
        s.to_vec()
    }
}

/// Go's `strconv.Atoi` on a 64-bit platform.
fn atoi(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse::<i64>().ok()
}

/// `toSubstr` of envsubst v1.7.1 (what kustomize-controller v1.9.5 builds with): a negative
/// length counts back from the end of the value (`${v:1:-1}` drops the first and the last
/// byte) and gives "" when that end comes before the offset (v1.7.0 panicked there). Go's
/// slice still panics when `pos + length` wraps past the largest int
/// (`${v:1:9223372036854775807}`): that panic is returned as `Err((start, end))`.
fn substr(s: &[u8], args: &[Vec<u8>]) -> Result<Vec<u8>, (i64, i64)> {
    let Some(first) = args.first() else {
        return Ok(s.to_vec());
    };
    let Some(mut pos) = atoi(first) else {
        return Ok(s.to_vec()); // bash returns the string when the offset does not parse
    };
    let len = s.len() as i64;
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let rest = |pos: i64| {
        if pos < len {
            s[pos as usize..].to_vec()
        } else {
            Vec::new()
        }
    };
    let Some(second) = args.get(1) else {
        return Ok(rest(pos));
    };
    let Some(length) = atoi(second) else {
        return Ok(s.to_vec());
    };
    if length < 0 {
        // len + length cannot overflow: len is non-negative and length negative.
        let end = len + length;
        if end < pos {
            return Ok(Vec::new());
        }
        return Ok(s[pos as usize..end as usize].to_vec());
    }
    // Go's int addition wraps.
    let end = pos.wrapping_add(length);
    if end >= len {
        return Ok(rest(pos));
    }
    if end < pos {
        return Err((pos, end));
    }
    Ok(s[pos as usize..end as usize].to_vec())
}

fn trim_prefix_with(s: &[u8], args: &[Vec<u8>], longest: bool) -> Vec<u8> {
    match args.first() {
        Some(p) if longest => trim_longest(s, p),
        Some(p) => trim_shortest(s, p),
        None => s.to_vec(),
    }
}

/// funcs.go trims a suffix by reversing the runes of both value and pattern.
fn trim_suffix_with(s: &[u8], args: &[Vec<u8>], longest: bool) -> Vec<u8> {
    let Some(p) = args.first() else {
        return s.to_vec();
    };
    let (rs, rp) = (reverse(s), reverse(p));
    let trimmed = if longest {
        trim_longest(&rs, &rp)
    } else {
        trim_shortest(&rs, &rp)
    };
    reverse(&trimmed)
}

fn reverse(s: &[u8]) -> Vec<u8> {
    let mut runes: Vec<char> = go_runes(s).collect();
    runes.reverse();
    runes.into_iter().collect::<String>().into_bytes()
}

/// Removes the shortest matching prefix (never the empty one: funcs.go stops at length 1).
fn trim_shortest(s: &[u8], pattern: &[u8]) -> Vec<u8> {
    let mut shortest: Option<usize> = None;
    for i in 0..s.len() {
        let end = s.len() - i;
        match path_match(pattern, &s[..end]) {
            Err(_) => return s.to_vec(),
            Ok(true) => shortest = Some(end),
            Ok(false) => {}
        }
    }
    match shortest {
        Some(end) => s[end..].to_vec(),
        None => s.to_vec(),
    }
}

fn trim_longest(s: &[u8], pattern: &[u8]) -> Vec<u8> {
    for i in 0..s.len() {
        let end = s.len() - i;
        match path_match(pattern, &s[..end]) {
            Err(_) => return s.to_vec(),
            Ok(true) => return s[end..].to_vec(),
            Ok(false) => {}
        }
    }
    s.to_vec()
}

fn replace_prefix(s: &[u8], args: &[Vec<u8>]) -> Vec<u8> {
    if let [old, new] = args {
        if s.starts_with(old) {
            return go_replace(s, old, new, Some(1));
        }
    }
    s.to_vec()
}

fn replace_suffix(s: &[u8], args: &[Vec<u8>]) -> Vec<u8> {
    if let [old, new] = args {
        if s.ends_with(old) {
            let mut out = s[..s.len() - old.len()].to_vec();
            out.extend_from_slice(new);
            return out;
        }
    }
    s.to_vec()
}

fn replace_n(s: &[u8], args: &[Vec<u8>], n: Option<usize>) -> Vec<u8> {
    match args {
        [] => s.to_vec(),
        [old] => go_replace(s, old, b"", n),
        [old, new, ..] => go_replace(s, old, new, n),
    }
}

/// How many times Go's `strings.Replace` with no limit replaces `old` in `s`.
fn replacements(s: &[u8], old: &[u8]) -> usize {
    if old.is_empty() {
        go_runes(s).count() + 1
    } else {
        count_non_overlapping(s, old)
    }
}

/// Go's `strings.Replace`: an empty `old` matches at the start and after every rune.
fn go_replace(s: &[u8], old: &[u8], new: &[u8], n: Option<usize>) -> Vec<u8> {
    if old == new || n == Some(0) {
        return s.to_vec();
    }
    let count = replacements(s, old);
    if count == 0 {
        return s.to_vec();
    }
    let n = n.map_or(count, |n| n.min(count));
    let mut out = Vec::with_capacity(s.len() + n * new.len());
    let mut start = 0;
    for i in 0..n {
        let mut j = start;
        if old.is_empty() {
            if i > 0 {
                let (_, w) = super::lexer::decode_rune(&s[start..]);
                j += w;
            }
        } else {
            j += find(&s[start..], old).unwrap_or(0);
        }
        out.extend_from_slice(&s[start..j]);
        out.extend_from_slice(new);
        start = j + old.len();
    }
    out.extend_from_slice(&s[start..]);
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn count_non_overlapping(hay: &[u8], needle: &[u8]) -> usize {
    let mut count = 0;
    let mut rest = hay;
    while let Some(i) = find(rest, needle) {
        count += 1;
        rest = &rest[i + needle.len()..];
    }
    count
}
