//! Which style go-yaml v2's encoder gives a scalar (`encode.go`, `resolve.go`): plain,
//! quoted or a literal block, and the text of numbers and floats.

use super::analyze::Analysis;
use super::Style;
use crate::node::Node;

/// `yaml_emitter_select_scalar_style` for an implicit, untagged scalar.
pub(super) fn select_style(
    requested: Style,
    a: &Analysis,
    value: &str,
    flow_level: usize,
    simple_key: bool,
) -> Style {
    let mut style = requested;
    if simple_key && a.multiline {
        style = Style::Double;
    }
    if style == Style::Plain {
        if (flow_level > 0 && !a.flow_plain_allowed) || (flow_level == 0 && !a.block_plain_allowed)
        {
            style = Style::Single;
        }
        if value.is_empty() && (flow_level > 0 || simple_key) {
            style = Style::Single;
        }
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block_allowed || flow_level > 0 || simple_key) {
        style = Style::Double;
    }
    style
}

/// encode.go `stringv`: literal for multi-line text, plain when v2 would read the text back
/// as a string, double-quoted otherwise.
pub(super) fn string_style(s: &str) -> Style {
    if s.contains('\n') {
        Style::Literal
    } else if resolves_to_string(s) && !is_base60_float(s) {
        Style::Plain
    } else {
        Style::Double
    }
}

/// Whether go-yaml v2's `resolve("", s)` gives `!!str` (resolve.go).
fn resolves_to_string(s: &str) -> bool {
    use goyaml::resolve::{resolve, Flavour, Resolved};
    resolve(Flavour::V2, "", s) == Resolved::Str
}

/// encode.go `isBase60Float`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&c) = b.first() else {
        return false;
    };
    if !(c == b'+' || c == b'-' || c.is_ascii_digit()) || !s.contains(':') {
        return false;
    }
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let mut i = usize::from(c == b'+' || c == b'-');
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while i < b.len() && i - start < 2 && b[i].is_ascii_digit() {
            i += 1;
        }
        let group = &b[start..i];
        let ok = match group.len() {
            1 => true,
            2 => group[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// A non-string scalar as v2 prints it after the JSON round trip.
pub(super) fn scalar_text(node: &Node) -> String {
    match node {
        Node::Null => "null".into(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Uint(u) => u.to_string(),
        Node::Float(f) => format_float(*f),
        Node::Str(s) => s.clone(),
        Node::Seq(_) | Node::Map(_) => String::new(),
    }
}

/// A float after `json.Marshal` and v2's re-read: integral values below 1e21 come back as
/// integers; others print with `strconv.FormatFloat(f, 'g', -1, 64)`.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn format_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f.abs() < 9.223_372_036_854_775e18 {
            #[allow(clippy::cast_possible_truncation)]
            return (f as i64).to_string();
        }
        if f > 0.0 && f < 1.844_674_407_370_955e19 {
            return (f as u64).to_string();
        }
    }
    // Shortest round-trip digits, as Go's 'g' with precision -1.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let point = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= point {
            out.push_str(&digits);
            for _ in digits.len()..point {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}
