//! go-yaml's `resolve.go`: the type a plain scalar resolves to, written once for the two
//! go-yamls fluxsim mirrors, which differ only in their words.
//!
//! - [`Flavour::V2`]: yaml.v2 (v2.4), what `sigs.k8s.io/yaml` v1.6.0 `YAMLToJSON` reads with
//!   (Flux's re-read of every substituted object) and what decides how kustomize v5.8.1
//!   prints a string (quoted when it would resolve to anything else). An integer beyond 64
//!   bits is a float when it has float syntax and a string otherwise, for the printer too:
//!   `testdata/native/scalar-resolution` pins kustomize's output (`0o777…` plain,
//!   `0777…` quoted); the big-integer patch of the `sigs.k8s.io/yaml/goyaml.v2` fork does
//!   not show in what kustomize prints.
//! - [`Flavour::V3`]: go-yaml v3, what kustomize's kyaml reads with: only `true`/`false` are
//!   booleans (`yes`, `on` are strings).

use super::gotime::parse_timestamp;
use super::strconv::{go_parse_float, go_parse_int, go_parse_uint};

pub const STR_TAG: &str = "tag:yaml.org,2002:str";
pub const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
pub const INT_TAG: &str = "tag:yaml.org,2002:int";
pub const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
pub const NULL_TAG: &str = "tag:yaml.org,2002:null";
pub const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
pub const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
pub const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

/// Which go-yaml resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// yaml.v2.
    V2,
    /// go-yaml v3.
    V3,
}

/// What a plain scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Timestamp,
    Str,
}

impl Resolved {
    /// The tag resolve.go gives it.
    #[must_use]
    pub fn tag(self) -> &'static str {
        match self {
            Resolved::Null => NULL_TAG,
            Resolved::Bool(_) => BOOL_TAG,
            Resolved::Int(_) | Resolved::Uint(_) => INT_TAG,
            Resolved::Float(_) => FLOAT_TAG,
            Resolved::Timestamp => TIMESTAMP_TAG,
            Resolved::Str => STR_TAG,
        }
    }
}

/// resolve.go `resolve(tag, in)` for a plain scalar (`tag` empty) or one tagged `!!str` or
/// `!!timestamp` (the only tags that change what is tried): what the text looks like, by its
/// first byte, then the words, timestamps, integers (`_` ignored, `0x`, `0o`, `0b`, legacy
/// `0` octal), floats.
#[must_use]
pub fn resolve(flavour: Flavour, tag: &str, input: &str) -> Resolved {
    let hint = match input.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return Resolved::Str,
    };
    if tag == STR_TAG {
        return Resolved::Str;
    }
    if let Some(word) = resolve_word(flavour, input) {
        return word;
    }
    match hint {
        b'.' => {
            if let Some(f) = go_parse_float(input) {
                return Resolved::Float(f);
            }
        }
        b'D' | b'S' => {
            if (tag.is_empty() || tag == TIMESTAMP_TAG) && parse_timestamp(input) {
                return Resolved::Timestamp;
            }
            let plain = input.replace('_', "");
            if let Some(i) = go_parse_int(&plain, 0) {
                return Resolved::Int(i);
            }
            if let Some(u) = go_parse_uint(&plain, 0) {
                return Resolved::Uint(u);
            }
            if is_yaml_style_float(&plain) {
                if let Some(f) = go_parse_float(&plain) {
                    return Resolved::Float(f);
                }
            }
            if let Some(bits) = plain.strip_prefix("0b") {
                if let Some(i) = go_parse_int(bits, 2) {
                    return Resolved::Int(i);
                }
                if let Some(u) = go_parse_uint(bits, 2) {
                    return Resolved::Uint(u);
                }
            } else if let Some(bits) = plain.strip_prefix("-0b") {
                if let Some(i) = go_parse_int(&format!("-{bits}"), 2) {
                    return Resolved::Int(i);
                }
            }
        }
        _ => {}
    }
    Resolved::Str
}

/// resolve.go `resolveMap`: the words (booleans, nulls, infinities, NaN). Its `<<` entry is
/// never reached: `<` has no hint in `resolveTable`, so `<<` resolves to a string (the
/// decoder tells a merge key by its text).
fn resolve_word(flavour: Flavour, input: &str) -> Option<Resolved> {
    let yaml_1_1 = flavour != Flavour::V3;
    Some(match input {
        "true" | "True" | "TRUE" => Resolved::Bool(true),
        "false" | "False" | "FALSE" => Resolved::Bool(false),
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" if yaml_1_1 => Resolved::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" if yaml_1_1 => Resolved::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// resolve.go `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_words_are_booleans_in_v2_and_strings_in_v3() {
        for word in ["yes", "On", "n", "OFF"] {
            assert!(
                matches!(resolve(Flavour::V2, "", word), Resolved::Bool(_)),
                "{word}"
            );
            assert_eq!(resolve(Flavour::V3, "", word), Resolved::Str, "{word}");
        }
        assert_eq!(resolve(Flavour::V3, "", "True"), Resolved::Bool(true));
    }

    // resolve.go: ParseInt and ParseUint fail on an integer beyond 64 bits; then text with
    // float syntax is a float, anything else a string (kustomize v5.8.1 prints `0o777…`
    // plain and quotes `0777…`).
    #[test]
    fn integers_beyond_64_bits_are_floats_with_float_syntax_and_strings_otherwise() {
        assert_eq!(
            resolve(Flavour::V2, "", "0xFFFFFFFFFFFFFFFFFF"),
            Resolved::Str
        );
        assert_eq!(
            resolve(Flavour::V2, "", "0o7777777777777777777777777"),
            Resolved::Str
        );
        assert!(matches!(
            resolve(Flavour::V2, "", "07777777777777777777777777"),
            Resolved::Float(_)
        ));
        assert_eq!(
            resolve(Flavour::V2, "", "99999999999999999999"),
            Resolved::Float(1e20)
        );
    }

    // strconv.ParseFloat fails with ErrRange on 1e999, so resolve.go keeps the string.
    #[test]
    fn a_float_out_of_range_is_a_string() {
        assert_eq!(resolve(Flavour::V2, "", "1e999"), Resolved::Str);
        assert_eq!(resolve(Flavour::V2, "", "-1e999"), Resolved::Str);
    }

    #[test]
    fn merge_key_timestamps_and_explicit_str() {
        assert_eq!(resolve(Flavour::V2, "", "<<"), Resolved::Str);
        assert_eq!(resolve(Flavour::V2, "", "2001-12-14"), Resolved::Timestamp);
        assert_eq!(resolve(Flavour::V2, STR_TAG, "10"), Resolved::Str);
        assert_eq!(resolve(Flavour::V2, "", "0o17"), Resolved::Int(15));
    }
}
