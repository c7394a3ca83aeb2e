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

mod analyze;
mod order;
mod style;

use super::node::Node;
use analyze::{analyze, is_break, is_printable, Analysis};
pub(crate) use order::has_unstable_key_order;
use order::key_order;
use style::{scalar_text, select_style, string_style};

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

#[cfg(test)]
mod tests {
    use super::order::{has_inversion, may_be_intransitive};
    use super::style::format_float;
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
