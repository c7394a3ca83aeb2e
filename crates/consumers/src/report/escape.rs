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

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters shown as an escape in every format: C0 and C1 controls, DEL, and the invisible
/// characters that reorder or hide text (bidirectional marks, overrides and isolates,
/// zero-width characters, the line and paragraph separators). Tab and newline are decided by
/// the caller. The word joiner (U+2060) is left alone: it is what fluxsim itself writes after
/// an `@` ([`MENTION_BREAK`]), and it neither reorders nor splits text.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2061}'..='\u{206F}'
                | '\u{FEFF}'
        )
}

/// Writes `c` as a visible escape: `\n`, `\r`, `\t`, `\x1b` (ASCII), `\u{202e}` (others).
fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// Whether `s` holds nothing the terminal would act on (the common case: no copy).
fn keeps(s: &str, keep: impl Fn(char) -> bool) -> bool {
    s.chars().all(|c| keep(c) || !is_hidden(c))
}

/// Text for a terminal or a log: every control character (ESC, `\r`, the other C0 and C1
/// controls) and invisible reordering character shown as an escape (`\x1b`, `\u{202e}`);
/// newlines and tabs are kept, so that reports and diffs keep their lines.
#[must_use]
pub fn terminal(s: &str) -> Cow<'_, str> {
    let keep = |c: char| c == '\n' || c == '\t';
    if keeps(s, keep) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hidden(c) && !keep(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One line of text (a name, a path, a message in a sentence): [`terminal`], and newlines
/// and tabs shown as `\n` and `\t` too, so that the value stays on its line.
#[must_use]
pub fn one_line(s: &str) -> Cow<'_, str> {
    if keeps(s, |_| false) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

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
    if keeps(s, |c| (c as u32) < 0x20) {
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

/// `c` as a numeric character reference (`&#96;`): read as the character itself in Markdown
/// text, in a table cell and in HTML, and never as markup.
fn push_entity(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        c => {
            let _ = write!(out, "&#{};", c as u32);
        }
    }
}

/// Characters with a meaning anywhere in a line of GitHub or GitLab Markdown: code spans,
/// emphasis, links, raw HTML and entities, table cells, strikethrough, math, backslash
/// escapes. (`>` means something only after a `<`, or at the start of a line.)
fn is_inline_markup(c: char) -> bool {
    matches!(
        c,
        '`' | '*' | '[' | ']' | '<' | '&' | '\\' | '|' | '~' | '$'
    )
}

/// An `@` that starts a user name notifies that user on GitHub and GitLab, even escaped (the
/// mention is found in the rendered text): a word joiner (U+2060, invisible) after it keeps
/// the text as it reads and notifies nobody.
const MENTION_BREAK: char = '\u{2060}';

fn starts_name(next: Option<char>) -> bool {
    next.is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '-')
}

/// Text in a line of Markdown (a heading, a list item, a paragraph, a table cell): every
/// character with a meaning in Markdown or HTML as a character reference (`&#96;`, `&lt;`,
/// `&#124;`), so that it reads as written and never as markup; an `_` inside a word (which
/// is not emphasis) and `-`, `.`, `/` are left alone. A value that starts a list item may
/// start a block (`# `, `> `, `- `, `1. `): its first character is escaped too. Controls and
/// newlines are shown as escapes ([`one_line`]); an `@` is kept from mentioning anyone.
#[must_use]
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_md_text(&mut out, s, true);
    out
}

/// [`md_text`] for text that follows other text on its line (`at_start` false: a leading
/// `#` or `-` is not a block there).
pub(crate) fn push_md_text(out: &mut String, s: &str, at_start: bool) {
    let chars: Vec<char> = s.chars().collect();
    // `1. ` or `1) ` at the start is an ordered list item.
    let ordinal = at_start && {
        let digits = chars.iter().take_while(|c| c.is_ascii_digit()).count();
        digits > 0
            && matches!(chars.get(digits), Some('.' | ')'))
            && chars.get(digits + 1).is_none_or(|c| c.is_whitespace())
    };
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let first = at_start && i == 0;
        if is_hidden(c) {
            push_visible(out, c);
        } else if is_inline_markup(c)
            || (c == '_'
                && !(prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric)))
            || (first && matches!(c, '#' | '-' | '+' | '=' | '>' | ' '))
            || (ordinal && matches!(c, '.' | ')') && prev.is_some_and(|p| p.is_ascii_digit()))
        {
            push_entity(out, c);
        } else if c == '@' && starts_name(next) {
            out.push('@');
            out.push(MENTION_BREAK);
        } else {
            out.push(c);
        }
    }
}

/// Whether `s` can stand between single backticks as it is: no backtick, nothing a naive
/// reader of the Markdown would take for HTML (`<`, `>`, `&`), no `|` (a table cell would end
/// there), no control, and no space at either end (a code span trims one).
fn tame_code(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !s
            .chars()
            .any(|c| is_hidden(c) || matches!(c, '`' | '<' | '>' | '&' | '|'))
}

/// Code in a line of Markdown (a heading, a list item, a table cell): `` `name` `` when the
/// value is tame (all ordinary names are); else `<code>` with every character that means
/// something in Markdown or HTML as a character reference, which holds any text (a backtick
/// run, `|`, `</code>`, `<!--`) and keeps the raw Markdown free of the repository's `<`.
#[must_use]
pub fn md_code(s: &str) -> String {
    if tame_code(s) {
        return format!("`{s}`");
    }
    let mut out = String::from("<code>");
    for c in s.chars() {
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else if is_inline_markup(c) || matches!(c, '>' | '_' | '"') {
            push_entity(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out.push_str("</code>");
    out
}

/// A table cell of Markdown made of already escaped Markdown (`md_text`, `md_code`, literal
/// markup): those hold no `|` of the repository (it is `&#124;`), so the only `|` left are
/// fluxsim's, written as `\|` so that they stay in the cell.
#[must_use]
pub fn md_cell(markdown: &str) -> Cow<'_, str> {
    if markdown.contains('|') {
        Cow::Owned(markdown.replace('|', "\\|"))
    } else {
        Cow::Borrowed(markdown)
    }
}

/// Text inside an HTML element (`<summary>`, `<code>` in an HTML block, where Markdown is
/// not read): `&`, `<`, `>` as entities, controls and newlines shown as escapes (a blank line
/// would end the HTML block), an `@` kept from mentioning anyone.
#[must_use]
pub fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else if matches!(c, '&' | '<' | '>') {
            push_entity(&mut out, c);
        } else if c == '@' && starts_name(chars.get(i + 1).copied()) {
            out.push('@');
            out.push(MENTION_BREAK);
        } else {
            out.push(c);
        }
    }
    out
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

/// The fence of a fenced code block holding `body`: a backtick run longer than any in the
/// body (and at least three), so that no line of it can close the block (CommonMark: a
/// closing fence is at least as long as the opening one).
#[must_use]
pub fn fence(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
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

/// A relative path fluxsim writes from a name whose `/` make folders (a Helm release's entry,
/// `<kustomization>/helm/<namespace>/<name>`): each segment as [`path_segment`] makes it, so
/// that none is `..` and the path stays under its folder.
#[must_use]
pub fn path_segments(s: &str) -> Cow<'_, str> {
    if s.split('/')
        .all(|seg| matches!(path_segment(seg), Cow::Borrowed(_)))
    {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.split('/').map(path_segment).collect::<Vec<_>>().join("/"))
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
    fn terminal_shows_controls_and_keeps_lines_and_tabs() {
        assert_eq!(
            terminal("a\x1b[31mred\r\tb\n\u{9b}c\u{202e}d\x7f"),
            "a\\x1b[31mred\\r\tb\n\\u{9b}c\\u{202e}d\\x7f"
        );
        assert!(matches!(terminal("plain -./é\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_shows_newlines_and_tabs_too() {
        assert_eq!(one_line("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(one_line("flux-system/apps"), "flux-system/apps");
    }

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
    fn md_text_leaves_ordinary_names_alone() {
        for s in [
            "flux-system/apps",
            "./clusters/prod",
            "cluster_vars",
            "dev",
            "1.2.3",
        ] {
            assert_eq!(md_text(s), s);
        }
    }

    #[test]
    fn md_text_makes_markup_characters_references() {
        assert_eq!(
            md_text("<!-- x --> `a` *b* [c](d) a|b ~s~ $m$ \\"),
            "&lt;!-- x --> &#96;a&#96; &#42;b&#42; &#91;c&#93;(d) a&#124;b &#126;s&#126; &#36;m&#36; &#92;"
        );
        assert_eq!(md_text("_em_ snake_case"), "&#95;em&#95; snake_case");
        assert_eq!(
            md_text("</details></summary> a -> b"),
            "&lt;/details>&lt;/summary> a -> b"
        );
    }

    #[test]
    fn md_text_escapes_what_would_start_a_block() {
        assert_eq!(md_text("# title"), "&#35; title");
        assert_eq!(md_text("- item"), "&#45; item");
        assert_eq!(md_text("> quote"), "&gt; quote");
        assert_eq!(md_text("1. one"), "1&#46; one");
        assert_eq!(md_text("    code"), "&#32;   code");
        let mut mid = String::new();
        push_md_text(&mut mid, " - not a block", false);
        assert_eq!(mid, " - not a block");
    }

    #[test]
    fn md_text_keeps_a_value_on_its_line() {
        assert_eq!(md_text("a\n\n<!--\r"), "a\\n\\n&lt;!--\\r");
    }

    #[test]
    fn md_text_mentions_nobody() {
        assert_eq!(md_text("ping @octocat"), "ping @\u{2060}octocat");
        assert_eq!(md_text("a @ b"), "a @ b");
    }

    #[test]
    fn md_code_is_a_code_span_for_tame_values() {
        assert_eq!(md_code("flux-system/apps"), "`flux-system/apps`");
        assert_eq!(md_code("@octocat"), "`@octocat`");
    }

    #[test]
    fn md_code_holds_any_text_as_html_code() {
        assert_eq!(
            md_code("a`</code></summary><!--|"),
            "<code>a&#96;&lt;/code&gt;&lt;/summary&gt;&lt;!--&#124;</code>"
        );
        assert_eq!(md_code("``` x"), "<code>&#96;&#96;&#96; x</code>");
        assert_eq!(md_code(" pad"), "<code> pad</code>");
        assert_eq!(md_code("a\nb\x1b"), "<code>a\\nb\\x1b</code>");
        // Inside `<code>`, Markdown is still read: emphasis marks are references too.
        assert_eq!(
            md_code("*b* _i_ |"),
            "<code>&#42;b&#42; &#95;i&#95; &#124;</code>"
        );
        assert_eq!(md_code("*b* _i_"), "`*b* _i_`");
    }

    #[test]
    fn md_cell_escapes_the_pipes_left() {
        assert_eq!(md_cell("`a` | b"), "`a` \\| b");
        assert_eq!(md_cell(&md_text("a|b")), "a&#124;b");
    }

    #[test]
    fn html_text_escapes_tags_entities_and_lines() {
        assert_eq!(
            html_text("</summary><!-- & \n\n@me"),
            "&lt;/summary&gt;&lt;!-- &amp; \\n\\n@\u{2060}me"
        );
        assert_eq!(html_text("flux-system/apps"), "flux-system/apps");
    }

    #[test]
    fn html_attr_escapes_quotes_too() {
        assert_eq!(html_attr("a\"b'c<"), "a&quot;b&#39;c&lt;");
    }

    #[test]
    fn fence_is_longer_than_any_backtick_run() {
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ``` b"), "````");
        assert_eq!(fence("`````"), "``````");
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
    fn path_segments_keep_folders_and_none_is_dot_dot() {
        assert_eq!(
            path_segments("apps-helm/helm/apps/podinfo"),
            "apps-helm/helm/apps/podinfo"
        );
        assert_eq!(path_segments("../../x"), "%2E%2E/%2E%2E/x");
        assert_eq!(path_segments("a/./b\n"), "a/%2E/b%0A");
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
