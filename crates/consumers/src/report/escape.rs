//! Every string from the repository, escaped for the format it is printed in: a terminal, a
//! line of Markdown (heading, list item, table cell, `<summary>`), a fenced code block, HTML
//! text or attribute, a Mermaid or Graphviz label, JSON text on a terminal.
//!
//! The repository is written by whoever opens the pull request, and fluxsim's reports are
//! posted as pull-request comments and printed in CI logs: a name holding `<!--` must not
//! hide the rest of a comment, a backtick must not close a code span, a `|` must not end a
//! table cell, an escape sequence must not drive the terminal. Printers do not call these
//! functions one by one: terminal output is escaped once where it is written
//! (`cli::print_outcome`), Markdown is written through [`super::markdown`], whose types
//! escape each value for where it lands.
//!
//! Ordinary names need no escaping and get none: `flux-system/apps`, `./clusters/prod`,
//! `cluster_vars` come out as they went in.
//!
//! The escapes of a terminal, of Markdown and of HTML text are the review crate's
//! (`review::escape`, re-exported here), one implementation for every report and
//! comment: what is here is what only these reports print (JSON on a terminal, HTML
//! attributes, fenced blocks, `--out` paths, Mermaid and Graphviz labels).

use std::borrow::Cow;
use std::fmt::Write as _;

pub use review::escape::{
    fence, html_text, md_cell, md_code, md_text, one_line, push_md_text, terminal,
};
use review::escape::{is_hidden, push_visible};

/// A value (a name, a path, an id) shown on one line of a text report ([`one_line`]): a
/// `Display` for format strings, widths (`{:<12}`) included.
pub struct OneLine<T>(pub T);

impl<T: std::fmt::Display> std::fmt::Display for OneLine<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.to_string();
        f.pad(&one_line(&s))
    }
}

/// JSON text for a terminal: serde escapes the C0 controls, not DEL, the C1 controls or the
/// invisible characters; those become `\u` escapes, which JSON reads back as the same
/// characters. They can only stand inside strings (JSON's own syntax is ASCII), so the value
/// is unchanged.
#[must_use]
pub fn json_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_hidden(c) && (c as u32) >= 0x20) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hidden(c) && (c as u32) >= 0x20 {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An HTML attribute value, to be written between double quotes: [`html_text`] and the
/// quotes (`"` and `'`) as entities.
#[must_use]
pub fn html_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in html_text(s).chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole fenced code block: the fence of [`fence`], the info string (fluxsim's own word:
/// `diff`, `mermaid`), the body shown as [`terminal`] shows it (its lines and tabs kept,
/// controls visible: a `\r` would start a new Markdown line), ending with a newline.
#[must_use]
pub fn fenced(info: &str, body: &str) -> String {
    let body = terminal(body);
    let f = fence(&body);
    let newline = if body.is_empty() || body.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{f}{info}\n{body}{newline}{f}\n")
}

/// One segment of a path fluxsim writes (`render --out DIR/<cluster>/<namespace>/<name>.yaml`)
/// from a name of the repository: a `/` would leave the folder (`../../x`), a newline would
/// add a line to `SHA256SUMS`. `%`, `/`, `\` and controls are written `%XX`, and a segment that
/// is `.` or `..` has its dots written `%2E`; any other name (every valid Kubernetes name) is
/// kept as it is.
#[must_use]
pub fn path_segment(s: &str) -> Cow<'_, str> {
    let special = |c: char| matches!(c, '%' | '/' | '\\') || is_hidden(c);
    if s == "." || s == ".." {
        return Cow::Owned("%2E".repeat(s.len()));
    }
    if !s.chars().any(special) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if special(c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A Mermaid node label, written between double quotes: Mermaid's entity codes for what
/// would end the label or be read as markup (`"`, `<`, `>`, `&`, `#`, a backtick), controls
/// and newlines visible.
#[must_use]
pub fn mermaid_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '#' => out.push_str("#35;"),
            '`' => out.push_str("#96;"),
            c if is_hidden(c) => push_visible(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A Graphviz DOT string, written between double quotes: `\` and `"` escaped (a `\N` or
/// `\G` would be expanded), controls and newlines visible.
#[must_use]
pub fn dot_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if is_hidden(c) => {
                // `\n` in a DOT label is a line break: the escape is written with its
                // backslash escaped.
                out.push('\\');
                push_visible(&mut out, c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_display_pads_the_shown_value() {
        assert_eq!(format!("{:<6}|", OneLine("a\nb")), "a\\nb  |");
    }

    #[test]
    fn json_text_escapes_what_serde_leaves_as_the_same_characters() {
        let v = serde_json::json!({ "name": "a\u{1b}b\u{9b}c\u{7f}\u{202e}" });
        let text = serde_json::to_string(&v).unwrap();
        let shown = json_text(&text);
        assert_eq!(shown, r#"{"name":"a\u001bb\u009bc\u007f\u202e"}"#);
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn html_attr_escapes_quotes_too() {
        assert_eq!(html_attr("a\"b'c<"), "a&quot;b&#39;c&lt;");
    }

    #[test]
    fn fenced_block_cannot_be_closed_from_inside() {
        let body = "+a\n```\n+b\r```\n";
        let block = fenced("diff", body);
        assert_eq!(block, "````diff\n+a\n```\n+b\\r```\n````\n");
        assert_eq!(fenced("diff", "x"), "```diff\nx\n```\n");
    }

    #[test]
    fn path_segment_cannot_leave_its_folder_or_its_line() {
        assert_eq!(path_segment("flux-system"), "flux-system");
        assert_eq!(path_segment("../../x"), "..%2F..%2Fx");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("."), "%2E");
        assert_eq!(path_segment("a%2F\nb\\c"), "a%252F%0Ab%5Cc");
        assert_eq!(path_segment("a\u{202e}"), "a%E2%80%AE");
    }

    #[test]
    fn mermaid_label_cannot_end_the_label_or_the_block() {
        assert_eq!(
            mermaid_label("a\"]:::x <b>&#9;`\n"),
            "a#quot;]:::x #lt;b#gt;#amp;#35;9;#96;\\n"
        );
    }

    #[test]
    fn dot_string_cannot_end_the_string() {
        assert_eq!(dot_string("a\"b\\N\n"), "a\\\"b\\\\N\\\\n");
    }
}
