//! Value syntaxes the API server checks: the string formats of CRD schemas
//! (kube-openapi `pkg/validation/strfmt`, the set apiextensions `formats.go` keeps), Go
//! regular expressions, `resource.Quantity`, labels and qualified names (apimachinery
//! `pkg/util/validation/validation.go`).

use std::sync::OnceLock;

use regex::Regex;

/// A CRD `pattern`, compiled. Go's RE2 and the `regex` crate share their syntax; a pattern
/// the crate cannot compile is `None` (reported unchecked, never guessed).
pub(crate) fn go_regex(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern compiles"))
}

/// What a format check says of a string.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FormatCheck {
    Valid,
    Invalid,
    /// A format the API server checks and this crate does not reproduce.
    NotChecked,
    /// A format the API server ignores (apiextensions strips it before validating).
    Ignored,
}

/// Checks a string against a CRD string format, as kube-openapi's `strfmt` registry does for
/// the formats apiextensions `supportedVersionedFormats` keeps (`formats.go`; others are
/// stripped and so never checked). `k8s-short-name` and `k8s-long-name` exist from 1.34 on.
pub(crate) fn check_format(format: &str, s: &str) -> FormatCheck {
    // go-openapi normalizes format names by dropping dashes (`date-time` = `datetime`).
    let normalized = format.replace('-', "");
    let ok = match normalized.as_str() {
        "byte" => base64_std(s).is_ok(),
        "password" => true,
        "date" => is_date(s),
        "datetime" => is_date_time(s),
        "uuid" => uuid(s, None),
        "uuid3" => uuid(s, Some('3')),
        "uuid4" => uuid(s, Some('4')),
        "uuid5" => uuid(s, Some('5')),
        "ipv4" => is_ipv4(s),
        "ipv6" => s.contains(':') && s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "hostname" => is_hostname(s),
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "hexcolor" => {
            static R: OnceLock<Regex> = OnceLock::new();
            re(&R, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(s)
        }
        "k8sshortname" => is_dns1123_label(s),
        "k8slongname" => is_dns1123_subdomain(s),
        // Valid when Go's `time.ParseDuration` reads it; strfmt also takes Scala's `22 ns`
        // forms, which are left unchecked rather than guessed.
        "duration" if go_duration(s) => true,
        "uri" if is_request_uri(s) => true,
        "uri" | "email" | "duration" | "isbn" | "isbn10" | "isbn13" | "creditcard" | "ssn"
        | "rgbcolor" => return FormatCheck::NotChecked,
        _ => return FormatCheck::Ignored,
    };
    if ok {
        FormatCheck::Valid
    } else {
        FormatCheck::Invalid
    }
}

/// Go's `base64.StdEncoding.DecodeString` as `encoding/json` uses it for `[]byte` fields
/// (padding required; `\r` and `\n` skipped). Err carries the offset Go reports.
pub(crate) fn base64_std(s: &str) -> Result<(), usize> {
    let bytes: Vec<u8> = s.bytes().filter(|b| *b != b'\r' && *b != b'\n').collect();
    let is_alpha = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let data_len = bytes.iter().position(|b| *b == b'=').unwrap_or(bytes.len());
    if let Some(i) = bytes[..data_len].iter().position(|b| !is_alpha(*b)) {
        return Err(i);
    }
    let pad = bytes.len() - data_len;
    if bytes[data_len..].iter().any(|b| *b != b'=') {
        return Err(data_len
            + bytes[data_len..]
                .iter()
                .position(|b| *b != b'=')
                .unwrap_or(0));
    }
    if bytes.len() % 4 != 0 || pad > 2 || (pad > 0 && data_len % 4 < 2) {
        return Err(bytes.len() - pad.min(bytes.len()) / 4 * 4);
    }
    Ok(())
}

/// Go's `time.ParseDuration`: `300ms`, `-1.5h`, `2h45m`, `0`.
pub(crate) fn go_duration(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    s == "0"
        || s == "+0"
        || s == "-0"
        || re(&R, r"^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$").is_match(s)
            && s.bytes().any(|b| b.is_ascii_digit())
}

/// An absolute URI or an absolute path: what Go's `url.ParseRequestURI` surely accepts.
fn is_request_uri(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    !s.contains(char::is_whitespace)
        && (s.starts_with('/') || re(&R, r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$").is_match(s))
}

fn is_date(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\d{4}-\d{2}-\d{2}$").is_match(s) && valid_ymd(&s[..10])
}

fn valid_ymd(s: &str) -> bool {
    let y: u32 = s[0..4].parse().unwrap_or(0);
    let m: u32 = s[5..7].parse().unwrap_or(0);
    let d: u32 = s[8..10].parse().unwrap_or(0);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt `IsDateTime`: RFC 3339 with `T` or a space, seconds and an optional fraction.
fn is_date_time(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(
        &R,
        r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
    );
    let Some(c) = r.captures(s) else { return false };
    let num = |i: usize| {
        c.get(i)
            .and_then(|m| m.as_str().parse::<u32>().ok())
            .unwrap_or(99)
    };
    valid_ymd(&c[1]) && num(2) < 24 && num(3) < 60 && num(4) < 60
}

fn uuid(s: &str, version: Option<char>) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(
        &R,
        r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?([0-9a-f])[0-9a-f]{3}-?([0-9a-f])[0-9a-f]{3}-?[0-9a-f]{12}$",
    );
    let Some(c) = r.captures(s) else { return false };
    match version {
        None => true,
        Some(v) => {
            c[1].eq_ignore_ascii_case(&v.to_string())
                && (v == '3' || matches!(c[2].to_ascii_lowercase().as_str(), "8" | "9" | "a" | "b"))
        }
    }
}

/// strfmt `isIPv4`: Go's `net.ParseIP` gives an IPv4 address (and the text has no `:`).
fn is_ipv4(s: &str) -> bool {
    !s.contains(':') && s.parse::<std::net::Ipv4Addr>().is_ok()
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if bits.to_string().len() != s.len() - ip.len() - 1 && !s.ends_with("/0") {
        return false;
    }
    if ip.contains(':') {
        ip.parse::<std::net::Ipv6Addr>().is_ok() && bits <= 128
    } else {
        ip.parse::<std::net::Ipv4Addr>().is_ok() && bits <= 32
    }
}

fn is_mac(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"^([0-9A-Fa-f]{2}([:-])){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}([:-])){7}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}([:-])){19}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$|^([0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}$|^([0-9A-Fa-f]{4}\.){9}[0-9A-Fa-f]{4}$",
    )
    .is_match(s)
}

/// strfmt `IsHostname`: its `HostnamePattern`, at most 255 bytes.
fn is_hostname(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    s.len() <= 255
        && re(
            &R,
            r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
        )
        .is_match(s)
}

/// apimachinery `IsDNS1123Label`.
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    s.len() <= 63 && re(&R, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").is_match(s)
}

/// apimachinery `IsDNS1123Subdomain`.
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    s.len() <= 253
        && re(
            &R,
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        )
        .is_match(s)
}

/// apimachinery `IsQualifiedName`: the errors for a label or annotation key, empty if valid.
pub(crate) fn qualified_name_errors(key: &str) -> Vec<String> {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let name_re = re(&NAME, r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
    let mut errs = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else if !is_dns1123_subdomain(prefix) {
                errs.push(
                    "prefix part a lowercase RFC 1123 subdomain must consist of lower case \
                     alphanumeric characters, '-' or '.', and must start and end with an \
                     alphanumeric character (e.g. 'example.com', regex used for validation is \
                     '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                        .to_string(),
                );
            }
            name
        }
        _ => {
            return vec![
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and \
                 must start and end with an alphanumeric character (e.g. 'MyName',  or \
                 'my.name',  or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain \
                 prefix and '/' (e.g. 'example.com/MyName')"
                    .to_string(),
            ]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !name.is_empty() && !name_re.is_match(name) {
        errs.push(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                .to_string(),
        );
    }
    errs
}

/// apimachinery `IsValidLabelValue`: the errors for a label value, empty if valid.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    static R: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty()
        && !re(&R, r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$").is_match(value)
    {
        errs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', \
             '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  \
             or 'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                .to_string(),
        );
    }
    errs
}

/// A `resource.Quantity`, read as apimachinery `ParseQuantity` reads it, as a float (enough to
/// compare sizes). `None` when the API server rejects the text.
pub(crate) fn parse_quantity(s: &str) -> Option<f64> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$");
    let c = r.captures(s)?;
    let number = &c[1];
    if number.matches('.').count() > 1 || number.trim_start_matches(['+', '-']) == "." {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let multiplier = match &c[2] {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        suffix => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            10f64.powi(exp.parse::<i32>().ok()?)
        }
    };
    Some(value * multiplier)
}

/// The message `ParseQuantity`'s failure gives on decode.
pub(crate) const QUANTITY_MESSAGE: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

#[cfg(test)]
mod tests {
    use super::*;

    // apimachinery pkg/api/resource/quantity.go: ParseQuantity's suffixes.
    #[test]
    fn quantity_reads_binary_decimal_and_exponent_suffixes() {
        assert_eq!(parse_quantity("10Gi"), Some(10.0 * 1024f64.powi(3)));
        assert_eq!(parse_quantity("500m"), Some(0.5));
        assert_eq!(parse_quantity("1e3"), Some(1000.0));
        assert_eq!(parse_quantity("1.5G"), Some(1.5e9));
        assert_eq!(parse_quantity("10 Gi"), None);
        assert_eq!(parse_quantity("10GB"), None);
        assert_eq!(parse_quantity(""), None);
    }

    // apimachinery pkg/util/validation/validation.go: IsValidLabelValue, IsQualifiedName.
    #[test]
    fn label_value_and_key_rules_are_apimachinery_s() {
        assert!(label_value_errors("my-app_1.0").is_empty());
        assert!(label_value_errors("").is_empty());
        assert_eq!(label_value_errors("-bad").len(), 1);
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
        assert!(qualified_name_errors("app.kubernetes.io/name").is_empty());
        assert!(!qualified_name_errors("Example.com/name").is_empty());
        assert!(!qualified_name_errors("a/b/c").is_empty());
    }

    // kube-openapi pkg/validation/strfmt: the formats apiextensions keeps.
    #[test]
    fn formats_follow_strfmt() {
        assert_eq!(
            check_format("date-time", "2024-01-02T03:04:05Z"),
            FormatCheck::Valid
        );
        assert_eq!(
            check_format("date-time", "2024-13-02T03:04:05Z"),
            FormatCheck::Invalid
        );
        assert_eq!(
            check_format("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            FormatCheck::Valid
        );
        assert_eq!(check_format("ipv4", "10.0.0.300"), FormatCheck::Invalid);
        assert_eq!(check_format("cidr", "10.0.0.0/8"), FormatCheck::Valid);
        assert_eq!(check_format("byte", "aGVsbG8="), FormatCheck::Valid);
        assert_eq!(check_format("byte", "aGVsbG8"), FormatCheck::Invalid);
        assert_eq!(check_format("int32", "x"), FormatCheck::Ignored);
        assert_eq!(check_format("uri", "x"), FormatCheck::NotChecked);
    }
}
