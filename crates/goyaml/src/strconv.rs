//! Go's `strconv` as go-yaml uses it to read numbers (`ParseInt`, `ParseUint` and
//! `ParseFloat`, with Go's syntax and range rules), and as `encoding/json` formats floats.

use std::fmt::Write as _;

/// Go strconv.`ParseUint`(s, base, 64); base 0 reads the 0x, 0o, 0b and leading-0 prefixes.
/// Underscores are never passed in (resolve.go strips them first).
pub fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if base == 0 {
        let b = s.as_bytes();
        if b[0] == b'0' && s.len() >= 3 && matches!(b[1] | 0x20, b'b' | b'o' | b'x') {
            let radix = match b[1] | 0x20 {
                b'b' => 2,
                b'o' => 8,
                _ => 16,
            };
            (&s[2..], radix)
        } else if b[0] == b'0' {
            (&s[1..], 8)
        } else {
            (s, 10)
        }
    } else {
        (s, base)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(36)?;
        if d >= radix {
            return None;
        }
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go strconv.`ParseInt`(s, base, 64): an optional sign, then `ParseUint`'s syntax.
pub fn go_parse_int(s: &str, base: u32) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest, base)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go strconv.`ParseFloat`(s, 64) for decimal text: an out-of-range result is an error.
pub(crate) fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    // Only decimal digits, one dot, an exponent, and Go-style underscores (atof.go readFloat).
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut i = 0;
    let bb = body.as_bytes();
    while i < bb.len() {
        match bb[i] {
            b'0'..=b'9' => seen_digit = true,
            b'_' => {}
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    if i < bb.len() {
        if bb[i] | 0x20 != b'e' {
            return None;
        }
        i += 1;
        if matches!(bb.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !bb.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while i < bb.len() && (bb[i].is_ascii_digit() || bb[i] == b'_') {
            i += 1;
        }
        if i != bb.len() {
            return None;
        }
    }
    if s.contains('_') && !underscore_ok(b) {
        return None;
    }
    let f: f64 = s.replace('_', "").parse().ok()?;
    f.is_finite().then_some(f)
}

/// Go strconv `underscoreOK`: underscores only between digits.
fn underscore_ok(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    let mut saw = b'^';
    for &c in s {
        if c.is_ascii_digit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Shortest decimal digits of a finite float and its exponent `e`, value = 0.d1d2.. × 10^(e+1).
fn shortest_digits(scientific: &str) -> (bool, String, i32) {
    let negative = scientific.starts_with('-');
    let body = scientific.trim_start_matches('-');
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (negative, digits, exp.parse().unwrap_or(0))
}

/// Go strconv.`FormatFloat`(f, 'g', -1, 32), with yaml.go's names for infinities and NaN.
pub(crate) fn go_format_float32_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let single = f as f32;
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    if single == 0.0 {
        return if single.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let (negative, digits, exp) = shortest_digits(&format!("{single:e}"));
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // ftoa.go: %e when the exponent is < -4 or >= the shortest precision (6).
    if (-4..6).contains(&exp) {
        push_f_format(&mut out, &digits, exp);
    } else {
        push_e_format(&mut out, &digits, exp);
    }
    out
}

/// `d.ddde±XX` with at least two exponent digits (strconv 'e' format).
fn push_e_format(out: &mut String, digits: &str, exp: i32) {
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(
        out,
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    );
}

/// Plain decimal notation of the shortest digits (strconv 'f' format, precision -1).
fn push_f_format(out: &mut String, digits: &str, exp: i32) {
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
        return;
    }
    let int_len = usize::try_from(exp).unwrap_or(0) + 1;
    if digits.len() <= int_len {
        out.push_str(digits);
        for _ in digits.len()..int_len {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..int_len]);
        out.push('.');
        out.push_str(&digits[int_len..]);
    }
}

/// A finite float64 as Go's `encoding/json` writes it (`1e+21`, `123456789012345680`).
pub fn go_json_float(f: f64) -> String {
    let mut out = String::new();
    push_json_float(&mut out, f);
    out
}

/// encoding/json `floatEncoder`: ES6 number formatting of a finite float64.
pub(crate) fn push_json_float(out: &mut String, f: f64) {
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let (negative, digits, exp) = shortest_digits(&format!("{f:e}"));
    if negative {
        out.push('-');
    }
    let abs = f.abs();
    if (1e-6..1e21).contains(&abs) {
        push_f_format(out, &digits, exp);
    } else {
        let start = out.len();
        push_e_format(out, &digits, exp);
        // encode.go: clean up e-09 to e-9.
        let n = out.len();
        if n - start >= 4 && out.as_bytes()[n - 4] == b'e' && &out[n - 3..n - 1] == "-0" {
            out.remove(n - 2);
        }
    }
}

/// Whether `s` is valid `ParseUint(s, 0, 64)` syntax, whatever its size.
pub fn go_uint_syntax(s: &str) -> bool {
    split_radix(s).is_some_and(|(digits, radix)| {
        digits
            .chars()
            .all(|c| c.to_digit(36).is_some_and(|d| d < radix))
    })
}

fn split_radix(s: &str) -> Option<(&str, u32)> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let r = if b[0] == b'0' && b.len() >= 3 && matches!(b[1] | 0x20, b'b' | b'o' | b'x') {
        let radix = match b[1] | 0x20 {
            b'b' => 2,
            b'o' => 8,
            _ => 16,
        };
        (&s[2..], radix)
    } else if b[0] == b'0' && b.len() > 1 {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if r.0.is_empty() {
        return None;
    }
    Some(r)
}
