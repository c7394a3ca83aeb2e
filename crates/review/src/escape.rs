//! Every string of the repository, escaped for where it is printed: a terminal line, a line
//! of Markdown (heading, list item, table cell), a `<summary>`, a fenced code block, HTML text
//! or attribute.
//!
//! The one implementation of these escapes: fluxsim-consumers' reports (`render`, `compare`,
//! `prove`, `audit`, `graph`, `images` in every format) call these functions too, and add only
//! what they alone print (JSON on a terminal, `--out` paths, Mermaid and Graphviz labels).
//! Beyond Markdown's own markup, the references a forge links or notifies on (`#12`, `!12`,
//! GitLab's `%milestone` and `{+inline diff+}`) are written as character references in every
//! flavour; [`html`] is the escaper of the HTML report (which keeps spaces and lines).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters shown as an escape in every format: C0 and C1 controls, DEL, and the invisible
/// characters that reorder or hide text (bidirectional marks, overrides and isolates,
/// zero-width characters, the line and paragraph separators). Tab and newline are decided by
/// the caller. The word joiner (U+2060) is left alone: it is what is written after an `@`
/// ([`MENTION_BREAK`]), and it neither reorders nor splits text.
#[must_use]
pub fn is_hidden(c: char) -> bool {
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
pub fn push_visible(out: &mut String, c: char) {
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

fn keeps(s: &str, keep: impl Fn(char) -> bool) -> bool {
    s.chars().all(|c| keep(c) || !is_hidden(c))
}

/// Text for a terminal or a log: every control and invisible reordering character shown as
/// an escape (`\x1b`, `\u{202e}`); newlines and tabs kept.
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

/// One line of text (a name, a path): [`terminal`], and newlines and tabs shown as `\n` and
/// `\t` too, so that the value stays on its line.
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

/// `c` as a character reference (`&#96;`): read as the character itself in Markdown text, in
/// a table cell and in HTML, and never as markup.
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

/// Characters with a meaning anywhere in a line of GitHub, GitLab or Gitea Markdown: code
/// spans, emphasis, links, raw HTML and entities, table cells, strikethrough, math, backslash
/// escapes, and GitLab's inline diff (`{+ +}`, `{- -}`).
fn is_inline_markup(c: char) -> bool {
    matches!(
        c,
        '`' | '*' | '[' | ']' | '<' | '&' | '\\' | '|' | '~' | '$' | '{' | '}'
    )
}

/// An `@` that starts a user name notifies that user, even escaped (the mention is found in
/// the rendered text): a word joiner (U+2060, invisible) after it keeps the text as it reads
/// and notifies nobody.
const MENTION_BREAK: char = '\u{2060}';

fn starts_name(next: Option<char>) -> bool {
    next.is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '-')
}

/// `#12` (an issue or pull request on every forge), `!12` (a merge request on GitLab, a pull
/// request on Gitea) and `%12` / `%name` (a GitLab milestone) link, and a reference to an
/// issue adds an event to its timeline: the sign is written as a reference, which reads the
/// same and links nothing.
fn starts_reference(c: char, next: Option<char>) -> bool {
    match c {
        '#' | '!' => next.is_some_and(|n| n.is_ascii_digit()),
        '%' => next.is_some_and(|n| n.is_alphanumeric() || n == '"'),
        _ => false,
    }
}

/// Text in a line of Markdown (a heading, a list item, a paragraph, a table cell): every
/// character with a meaning in Markdown or HTML as a character reference (`&#96;`, `&lt;`,
/// `&#124;`); an `_` inside a word and `-`, `.`, `/` left alone; a first character that
/// would start a block (`# `, `> `, `- `, `1. `) escaped; controls shown as escapes; an `@`
/// kept from mentioning anyone, a `#12` from linking.
#[must_use]
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_md_text(&mut out, s, true);
    out
}

/// [`md_text`] for text that follows other text on its line (`at_start` false).
pub fn push_md_text(out: &mut String, s: &str, at_start: bool) {
    let chars: Vec<char> = s.chars().collect();
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
            || starts_reference(c, next)
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

/// Whether `s` can stand between single backticks as it is.
fn tame_code(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !s
            .chars()
            .any(|c| is_hidden(c) || matches!(c, '`' | '<' | '>' | '&' | '|'))
}

/// Code in a line of Markdown: `` `name` `` when the value is tame (all ordinary names
/// are), else `<code>` with every character that means something in Markdown or HTML as a
/// character reference.
#[must_use]
pub fn md_code(s: &str) -> String {
    if tame_code(s) {
        return format!("`{s}`");
    }
    let mut out = String::from("<code>");
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else if is_inline_markup(c)
            || matches!(c, '>' | '_' | '"')
            || starts_reference(c, chars.get(i + 1).copied())
        {
            push_entity(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out.push_str("</code>");
    out
}

/// A table cell made of already escaped Markdown: the only `|` left are this crate's, written
/// `\|` so that they stay in the cell.
#[must_use]
pub fn md_cell(markdown: &str) -> Cow<'_, str> {
    if markdown.contains('|') {
        Cow::Owned(markdown.replace('|', "\\|"))
    } else {
        Cow::Borrowed(markdown)
    }
}

/// Text inside an HTML element of a Markdown comment (`<summary>`): `&`, `<`, `>` as
/// entities, controls and newlines shown as escapes (a blank line would end the HTML block),
/// an `@` kept from mentioning anyone, a `#12` from linking.
#[must_use]
pub fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else if matches!(c, '&' | '<' | '>') || starts_reference(c, next) {
            push_entity(&mut out, c);
        } else if c == '@' && starts_name(next) {
            out.push('@');
            out.push(MENTION_BREAK);
        } else {
            out.push(c);
        }
    }
    out
}

/// `<code>` text inside an HTML element of a Markdown comment: as [`html_text`], no mention
/// break (a code element mentions nobody).
#[must_use]
pub fn html_code(s: &str) -> String {
    let mut out = String::from("<code>");
    for c in one_line(s).chars() {
        match c {
            '&' | '<' | '>' => push_entity(&mut out, c),
            c => out.push(c),
        }
    }
    out.push_str("</code>");
    out
}

/// Text of the HTML report, in an element or a double- or single-quoted attribute: `&`, `<`,
/// `>`, `"`, `'` as entities, controls shown as escapes; spaces and (unless `one_line`)
/// newlines kept.
#[must_use]
pub fn html(s: &str, single_line: bool) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' | '<' | '>' | '"' => push_entity(&mut out, c),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' if !single_line => out.push(c),
            c if is_hidden(c) => push_visible(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// The fence of a fenced code block holding `body`: a backtick run longer than any in the
/// body (and at least three), so that no line of it can close the block.
#[must_use]
pub fn fence(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

/// The parts of a pipeline message (an error, a hazard) in which `` `...` `` marks code:
/// (is code, text). Code spans close at the next run of backticks of the same length, as
/// CommonMark finds them.
#[must_use]
pub fn message_parts(message: &str) -> Vec<(bool, &str)> {
    let run_at = |at: usize| message[at..].len() - message[at..].trim_start_matches('`').len();
    let mut parts = Vec::new();
    let (mut text_start, mut pos) = (0, 0);
    while let Some(off) = message[pos..].find('`') {
        let open = pos + off;
        let len = run_at(open);
        let mut from = open + len;
        let close = loop {
            let Some(found) = message[from..].find('`') else {
                break None;
            };
            let at = from + found;
            let run = run_at(at);
            if run == len {
                break Some(at);
            }
            from = at + run;
        };
        if let Some(close) = close {
            if open > text_start {
                parts.push((false, &message[text_start..open]));
            }
            parts.push((true, &message[open + len..close]));
            pos = close + len;
            text_start = pos;
        } else {
            pos = open + len;
        }
    }
    if text_start < message.len() {
        parts.push((false, &message[text_start..]));
    }
    parts
}

/// A pipeline message as one line of Markdown: code parts as [`md_code`], the rest as text.
#[must_use]
pub fn md_message(message: &str) -> String {
    let mut out = String::new();
    for (i, (code, part)) in message_parts(message).into_iter().enumerate() {
        if code {
            out.push_str(&md_code(part));
        } else {
            push_md_text(&mut out, part, i == 0);
        }
    }
    out
}

/// A pipeline message as HTML text (a `<summary>`, the HTML report): code parts in `<code>`.
#[must_use]
pub fn html_message(message: &str) -> String {
    let mut out = String::new();
    for (code, part) in message_parts(message) {
        if code {
            out.push_str("<code>");
            out.push_str(&html(part, true));
            out.push_str("</code>");
        } else {
            out.push_str(&html(part, true));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_text_leaves_ordinary_names_alone() {
        for s in [
            "flux-system/apps",
            "./clusters/prod",
            "cluster_vars",
            "1.2.3",
        ] {
            assert_eq!(md_text(s), s);
        }
    }

    #[test]
    fn md_text_makes_markup_and_forge_references_inert() {
        assert_eq!(
            md_text("<!-- `a` *b* [c](d) a|b ~s~ $m$ {+x+}"),
            "&lt;!-- &#96;a&#96; &#42;b&#42; &#91;c&#93;(d) a&#124;b &#126;s&#126; &#36;m&#36; &#123;+x+&#125;"
        );
        assert_eq!(
            md_text("see #12 and !3, %v1"),
            "see &#35;12 and &#33;3, &#37;v1"
        );
        assert_eq!(md_text("ping @octocat"), "ping @\u{2060}octocat");
        assert_eq!(md_text("# title"), "&#35; title");
        assert_eq!(md_text("1. one"), "1&#46; one");
    }

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
    fn md_text_escapes_what_would_start_a_block_and_keeps_its_line() {
        assert_eq!(md_text("- item"), "&#45; item");
        assert_eq!(md_text("> quote"), "&gt; quote");
        assert_eq!(md_text("    code"), "&#32;   code");
        assert_eq!(md_text("_em_ snake_case"), "&#95;em&#95; snake_case");
        assert_eq!(md_text("a @ b"), "a @ b");
        assert_eq!(md_text("a\n\n<!--\r"), "a\\n\\n&lt;!--\\r");
        let mut mid = String::new();
        push_md_text(&mut mid, " - not a block", false);
        assert_eq!(mid, " - not a block");
    }

    #[test]
    fn md_cell_escapes_the_pipes_left() {
        assert_eq!(md_cell("`a` | b"), "`a` \\| b");
        assert_eq!(md_cell(&md_text("a|b")), "a&#124;b");
    }

    #[test]
    fn md_code_holds_any_text() {
        assert_eq!(md_code("@octocat"), "`@octocat`");
        assert_eq!(md_code("``` x"), "<code>&#96;&#96;&#96; x</code>");
        assert_eq!(md_code(" pad"), "<code> pad</code>");
        assert_eq!(md_code("a\nb\x1b"), "<code>a\\nb\\x1b</code>");
        // Inside `<code>`, Markdown is still read: emphasis marks are references too.
        assert_eq!(
            md_code("*b* _i_ |"),
            "<code>&#42;b&#42; &#95;i&#95; &#124;</code>"
        );
        assert_eq!(md_code("*b* _i_"), "`*b* _i_`");
        assert_eq!(md_code("flux-system/apps"), "`flux-system/apps`");
        assert_eq!(
            md_code("a`</code><!--|#1"),
            "<code>a&#96;&lt;/code&gt;&lt;!--&#124;&#35;1</code>"
        );
    }

    #[test]
    fn html_text_escapes_tags_lines_and_mentions() {
        assert_eq!(
            html_text("</summary><!-- & \n@me #4"),
            "&lt;/summary&gt;&lt;!-- &amp; \\n@\u{2060}me &#35;4"
        );
        assert_eq!(html_code("a<b>\n"), "<code>a&lt;b&gt;\\n</code>");
    }

    #[test]
    fn html_report_text_keeps_lines_and_escapes_quotes() {
        assert_eq!(html("a\"b'c<\n\x1b", false), "a&quot;b&#39;c&lt;\n\\x1b");
        assert_eq!(html("a\nb", true), "a\\nb");
    }

    #[test]
    fn fence_is_longer_than_any_backtick_run() {
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }

    #[test]
    fn messages_show_code_spans_as_code() {
        assert_eq!(
            md_message("path `./a` in *b*: `<!--`"),
            "path `./a` in &#42;b&#42;: <code>&lt;!--</code>"
        );
        assert_eq!(html_message("x `<b>` y"), "x <code>&lt;b&gt;</code> y");
    }
}
