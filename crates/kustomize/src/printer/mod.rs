//! Printing resources byte for byte as `kustomize build` does.
//!
//! kustomize prints each resource with `resource.AsYAML()`: the object is marshalled to JSON,
//! then `sigs.k8s.io/yaml.JSONToYAML` reads it back with go-yaml v2 into a
//! `map[interface{}]interface{}` and marshals that with go-yaml v2. So the output is
//! go-yaml v2's encoder (`encode.go`, `sorter.go`, `resolve.go`) driving libyaml's emitter
//! (`emitterc.go`): keys sorted by v2's "natural" order, sequences not indented inside
//! mappings, strings quoted when v2 would read them as something else, literal blocks for
//! multi-line strings, plain and quoted scalars folded at 80 columns.
//!
//! Written by hand to reproduce that emitter exactly; no YAML library prints the same bytes.

use super::node::Node;

const BEST_INDENT: i64 = 2;
const BEST_WIDTH: usize = 80;

/// Prints one resource as `kustomize build` prints it (ends with a newline).
pub(crate) fn print_resource(node: &Node) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
        flow_level: 0,
    };
    e.node(node, Ctx::default());
    // emitterc.go yaml_emitter_emit_document_end: an implicit end still writes an indent.
    e.write_indent();
    e.out
}

#[derive(Clone, Copy, Default)]
struct Ctx {
    mapping: bool,
    simple_key: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    flow_level: usize,
}

/// What `yaml_emitter_analyze_scalar` finds out about a scalar.
struct Analysis {
    multiline: bool,
    flow_plain_allowed: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

impl Emitter {
    fn node(&mut self, node: &Node, ctx: Ctx) {
        match node {
            Node::Map(m) if !m.is_empty() => {
                let mut entries: Vec<&(String, Node)> = m.0.iter().collect();
                entries.sort_by(|a, b| key_order(&a.0, &b.0));
                self.increase_indent(false, false);
                for (k, v) in entries {
                    self.write_indent();
                    let a = analyze(k);
                    let simple = !a.multiline && k.len() <= 128;
                    if simple {
                        self.scalar(
                            k,
                            string_style(k),
                            &a,
                            Ctx {
                                mapping: true,
                                simple_key: true,
                            },
                        );
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.scalar(
                            k,
                            string_style(k),
                            &a,
                            Ctx {
                                mapping: true,
                                simple_key: false,
                            },
                        );
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(
                        v,
                        Ctx {
                            mapping: true,
                            simple_key: false,
                        },
                    );
                }
                self.pop_indent();
            }
            Node::Map(_) => self.empty_flow("{", "}"),
            Node::Seq(items) if !items.is_empty() => {
                self.increase_indent(false, ctx.mapping && !self.indention);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(item, Ctx::default());
                }
                self.pop_indent();
            }
            Node::Seq(_) => self.empty_flow("[", "]"),
            Node::Str(s) => {
                let a = analyze(s);
                self.scalar(s, string_style(s), &a, ctx);
            }
            other => {
                let text = scalar_text(other);
                let a = analyze(&text);
                self.scalar(&text, Style::Plain, &a, ctx);
            }
        }
    }

    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, value: &str, requested: Style, a: &Analysis, ctx: Ctx) {
        let style = select_style(requested, a, value, self.flow_level, ctx.simple_key);
        self.increase_indent(true, false);
        let allow_breaks = !ctx.simple_key;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::Single => self.write_single(value, allow_breaks),
            Style::Double => self.write_double(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent.max(0)).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, s: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let b = value.as_bytes();
        let mut spaces = false;
        let mut breaks = false;
        for (i, c) in value.char_indices() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && b.get(i + 1).is_some_and(|&n| n != b' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let b = value.as_bytes();
        let mut spaces = false;
        let mut breaks = false;
        for (i, c) in value.char_indices() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < b.len()
                    && b[i + 1] != b' '
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let b = value.as_bytes();
        let mut spaces = false;
        for (i, c) in value.char_indices() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{07}' => self.put('a'),
                    '\u{08}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{0B}' => self.put('v'),
                    '\u{0C}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1B}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{A0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = u32::from(c);
                        let (letter, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(letter);
                        for k in (0..width).rev() {
                            let digit = (v >> (k * 4)) & 0xF;
                            self.put(
                                char::from_digit(digit, 16).map_or('0', |d| d.to_ascii_uppercase()),
                            );
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < b.len() {
                    self.write_indent();
                    if b[i + 1] == b' ' {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        // yaml_emitter_write_block_scalar_hints
        let chars: Vec<char> = value.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.write_indicator("2", false, false, false);
        }
        let chomp = match chars.len() {
            0 => Some("-"),
            n if !is_break(chars[n - 1]) => Some("-"),
            1 => Some("+"),
            n if is_break(chars[n - 2]) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in chars {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// `yaml_emitter_select_scalar_style` for an implicit, untagged scalar.
fn select_style(
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
fn string_style(s: &str) -> Style {
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
fn scalar_text(node: &Node) -> String {
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

/// Whether some mapping has keys that yaml.v2's `keyList.Less` does not order consistently
/// (it is not transitive: `a9t` < `a10` < `a92` < `a9t`). Go sorts such keys in an order
/// that depends on map iteration, which is random: kustomize's output is not predictable.
pub(crate) fn has_unstable_key_order(node: &Node) -> bool {
    match node {
        Node::Map(m) => {
            let keys: Vec<&str> = m.0.iter().map(|(k, _)| k.as_str()).collect();
            (may_be_intransitive(&keys) && has_inversion(&keys))
                || m.0.iter().any(|(_, v)| has_unstable_key_order(v))
        }
        Node::Seq(items) => items.iter().any(has_unstable_key_order),
        _ => false,
    }
}

/// Whether `keys`, sorted by [`key_order`], still have a pair out of order: the relation
/// is not transitive on them. Quadratic: only for keys [`may_be_intransitive`] lets through.
fn has_inversion(keys: &[&str]) -> bool {
    let mut keys = keys.to_vec();
    keys.sort_by(|a, b| key_order(a, b));
    for i in 0..keys.len() {
        for j in (i + 1)..keys.len() {
            if key_less(keys[j], keys[i]) {
                return true;
            }
        }
    }
    false
}

/// Whether [`key_less`] may fail to be transitive on `keys`; false only when it certainly
/// is one total order on them, so the quadratic [`has_inversion`] runs only then (a
/// mapping of 10,000 numbered keys would otherwise cost 50 million comparisons).
///
/// Read as a sequence of tokens (a single non-digit character, or a maximal run of digits),
/// `key_less` is the lexicographic order in which the end of a key comes first, then other
/// non-letters by character, then digit runs by value and then length, then letters by
/// character, on every pair but one kind: a key whose digit run (say `9` in `a9t`) is a
/// prefix of another's (`a92`) and is followed by a letter, where `keyList.Less` compares
/// the letter with a digit (`a92` < `a9t`) while the tokens say `9` < `92`. That is what
/// makes `a9t` < `a10` < `a92` < `a9t`. So when no key ends a digit run with a letter at a
/// place where another key's run goes on, the relation is that token order, which is
/// transitive. Non-ASCII digits and runs too long for an `i64` (whose values `key_less`
/// wraps) are not reasoned about: they answer true.
fn may_be_intransitive(keys: &[&str]) -> bool {
    const LONGEST_RUN: usize = 17;
    // Prefixes ending in a digit that a letter follows, and ones that a digit follows.
    let mut before_letter: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut before_digit: Vec<&str> = Vec::new();
    for key in keys {
        let mut run = 0;
        let mut chars = key.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if !is_digit(c) {
                run = 0;
                continue;
            }
            if !c.is_ascii_digit() {
                return true;
            }
            run += 1;
            if run > LONGEST_RUN {
                return true;
            }
            let end = i + c.len_utf8();
            match chars.peek() {
                Some((_, n)) if is_digit(*n) => before_digit.push(&key[..end]),
                Some((_, n)) if is_letter(*n) => {
                    before_letter.insert(&key[..end]);
                }
                _ => {}
            }
        }
    }
    !before_letter.is_empty() && before_digit.iter().any(|p| before_letter.contains(p))
}

/// yaml.v2 `sorter.go` `keyList.Less` for two string keys.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a == b {
        return Ordering::Equal;
    }
    if key_less(a, b) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(digit_value(ar[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(digit_value(br[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Go's `int64(r - '0')` for a digit rune (any Unicode Nd digit).
fn digit_value(c: char) -> i64 {
    i64::from(u32::from(c)) - i64::from(u32::from('0'))
}

/// Go's `unicode.IsLetter`: general category L (Lu, Ll, Lt, Lm, Lo).
fn is_letter(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    )
}

fn is_digit(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    c.is_ascii_digit() || (!c.is_ascii() && get_general_category(c) == G::DecimalNumber)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// yamlh.go `is_printable`, on code points.
fn is_printable(c: char) -> bool {
    let v = u32::from(c);
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

/// `yaml_emitter_analyze_scalar`.
#[allow(
    clippy::too_many_lines,
    reason = "mirrors libyaml's yaml_emitter_analyze_scalar state machine line for line"
)]
fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain_allowed: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = false;
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;
    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let mut preceded_by_whitespace = true;
    let chars: Vec<char> = value.chars().collect();
    let n = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = i + 1 >= n || matches!(chars[i + 1], ' ' | '\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == n {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == n {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain_allowed: true,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_indicators {
        a.flow_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read_documents;

    fn print(yaml: &str) -> String {
        let docs = read_documents(yaml).expect("reads");
        print_resource(&docs[0])
    }

    // yaml.v2 sorter.go keyList.Less is not transitive: `a9t` < `a10` < `a92` < `a9t`.
    #[test]
    fn intransitive_keys_are_found_and_numbered_keys_are_not() {
        assert!(has_unstable_key_order(
            &read_documents("a9t: 1\na10: 2\na92: 3\n").expect("reads")[0]
        ));
        let mut many = String::new();
        for i in 0..3000 {
            for key in [format!("key{i}"), format!("k{i}-x")] {
                many.push_str(&key);
                many.push_str(": v\n");
            }
        }
        assert!(!has_unstable_key_order(
            &read_documents(&many).expect("reads")[0]
        ));
    }

    // The linear pre-check never clears a key set the pairwise check finds out of order:
    // every set of up to six keys drawn from a small alphabet rich in digit/letter mixes.
    #[test]
    fn linear_key_order_check_agrees_with_the_pairwise_one() {
        const ALPHABET: [char; 8] = ['a', 't', '0', '1', '2', '9', '-', '.'];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let (mut risky, mut inverted) = (0, 0);
        for _ in 0..20_000 {
            let mut keys: Vec<String> = (0..2 + next(5))
                .map(|_| {
                    (0..=next(4))
                        .map(|_| ALPHABET[usize::try_from(next(8)).unwrap_or(0)])
                        .collect()
                })
                .collect();
            keys.sort();
            keys.dedup();
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let bad = has_inversion(&keys);
            if may_be_intransitive(&keys) {
                risky += 1;
            } else {
                assert!(!bad, "cleared an intransitive key set: {keys:?}");
            }
            inverted += usize::from(bad);
        }
        assert!(
            risky > 0 && inverted > 0,
            "{risky} risky, {inverted} inverted"
        );
    }

    #[test]
    fn keys_sort_naturally_and_sequences_are_not_indented_in_mappings() {
        assert_eq!(
            print("b: 1\na10: x\na9: y\nl:\n- a: 1\n  b: [1, {}]\n"),
            "a9: \"y\"\na10: x\nb: 1\nl:\n- a: 1\n  b:\n  - 1\n  - {}\n"
        );
    }

    #[test]
    fn strings_v2_would_misread_are_double_quoted() {
        assert_eq!(
            print("a: \"yes\"\nb: \"1\"\nc: \"12:30\"\nd: \"\"\ne: \"x: y\"\n"),
            "a: \"yes\"\nb: \"1\"\nc: \"12:30\"\nd: \"\"\ne: 'x: y'\n"
        );
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        assert_eq!(
            print("a: \"x\\ny\\n\"\nb: \" x\\ny\"\nc: \"trailing \\nspace\"\n"),
            "a: |\n  x\n  y\nb: |2-\n   x\n  y\nc: \"trailing \\nspace\"\n"
        );
    }

    #[test]
    fn long_plain_strings_fold_at_eighty_columns() {
        let long = "a very long string with many words that should be folded by the yaml v2 emitter at eighty columns wide ok";
        assert_eq!(
            print(&format!("z: \"{long}\"\n")),
            "z: a very long string with many words that should be folded by the yaml v2 emitter\n  at eighty columns wide ok\n"
        );
    }

    #[test]
    fn timestamps_are_judged_as_go_time_parse_does() {
        assert!(goyaml::gotime::parse_timestamp("2001-12-14"));
        assert!(goyaml::gotime::parse_timestamp("2001-12-14 21:59:43.10"));
        assert!(goyaml::gotime::parse_timestamp("2001-12-14   1:2:3"));
        assert!(goyaml::gotime::parse_timestamp("2001-1-2T3:04:05Z"));
        assert!(!goyaml::gotime::parse_timestamp("2024-02-30"));
        assert!(!goyaml::gotime::parse_timestamp("2001-12-14T21:59:43"));
        assert!(!goyaml::gotime::parse_timestamp("2001-12-14x"));
    }

    #[test]
    fn floats_print_as_go_formats_them_after_json() {
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(0.5), "0.5");
        assert_eq!(format_float(1_234_567.5), "1.2345675e+06");
        assert_eq!(format_float(1e-7), "1e-07");
        assert_eq!(format_float(1e20), "1e+20");
    }
}
