//! How any command's output is presented: cut to `--limit-bytes` with a note of what was
//! cut, and coloured with `--color`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// What a command's stdout holds, which decides how it can be cut, coloured and escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes a program reads (a manifest, substituted input, a completion script): cut at a
    /// line, printed as they are.
    Manifest,
    /// Text for people that holds no diff (a table, waves, a picture): cut at a line, its
    /// control characters shown (`escape::terminal`).
    Plain,
    /// A report for people holding unified diffs: cut at a line, coloured on request, its
    /// control characters shown.
    DiffText,
    /// Markdown: cut at a line, with open code blocks and `<details>` closed, its control
    /// characters shown.
    Markdown,
    /// JSON: a cut makes it invalid, so the note goes to stderr; what serde leaves of the
    /// control characters is written as `\u` escapes (`escape::json_text`).
    Json,
}

/// `stdout` of `kind` as it may reach a terminal: repository text in a report cannot send
/// escape sequences (a `\x1b[2J`, a `\r` that overwrites a line), nor change how JSON reads.
#[must_use]
pub fn shown(stdout: Vec<u8>, kind: Kind) -> Vec<u8> {
    let escape = match kind {
        Kind::Manifest => return stdout,
        Kind::Json => super::escape::json_text,
        Kind::Plain | Kind::DiffText | Kind::Markdown => super::escape::terminal,
    };
    let changed = {
        let text = String::from_utf8_lossy(&stdout);
        match escape(&text) {
            Cow::Borrowed(_) if matches!(text, Cow::Borrowed(_)) => None,
            shown => Some(shown.into_owned()),
        }
    };
    changed.map_or(stdout, String::into_bytes)
}

/// Values of `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to colour, given whether stdout is a terminal.
    #[must_use]
    pub fn enabled(self, terminal: bool) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// Colours a diff report line by line: removed lines red, added green, hunk headers cyan,
/// changed fields yellow, the verdict bold.
#[must_use]
pub fn colorize(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let trimmed = body.trim_start();
        let colour = if trimmed.starts_with("@@ ") {
            Some(CYAN)
        } else if trimmed.starts_with('+') {
            Some(GREEN)
        } else if trimmed.starts_with('-') && !trimmed.starts_with("---") {
            Some(RED)
        } else if trimmed.starts_with("~ ") {
            Some(YELLOW)
        } else if body.starts_with("result: ") || body.starts_with("prove: ") {
            Some(BOLD)
        } else {
            None
        };
        match colour {
            Some(c) => {
                let _ = write!(out, "{c}{body}{RESET}");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out.into_bytes()
}

/// The longest prefix of `text` of at most `budget` bytes that ends a line (or, when no line
/// fits, ends at a character boundary).
fn line_prefix(text: &str, budget: usize) -> &str {
    if text.len() <= budget {
        return text;
    }
    let mut cut = budget;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    match text[..cut].rfind('\n') {
        Some(n) => &text[..=n],
        None => &text[..cut],
    }
}

/// The backtick run a line of Markdown opens or closes a fenced block with (CommonMark: up
/// to three spaces of indent, then three backticks or more), and what follows it.
fn fence_run(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = &line[indent..];
    let ticks = t.len() - t.trim_start_matches('`').len();
    (ticks >= 3).then(|| (ticks, &t[ticks..]))
}

/// What must follow a cut Markdown prefix so that it renders: the open code fence closed
/// (with its own length: fluxsim's fences are longer than any backtick run they hold), then
/// each open `<details>`. Inside a fence nothing is markup, so `<details>` there is not
/// counted; outside, the repository's text never holds a raw `<` (`report::markdown`).
fn markdown_closers(prefix: &str) -> String {
    let mut fence: Option<usize> = None;
    let mut details = 0usize;
    for line in prefix.lines() {
        match (fence, fence_run(line)) {
            // A closing fence: at least as long, nothing after it.
            (Some(open), Some((ticks, rest))) if ticks >= open && rest.trim().is_empty() => {
                fence = None;
            }
            (Some(_), _) => {}
            // An opening fence: its info string holds no backtick (else it is code).
            (None, Some((ticks, info))) if !info.contains('`') => fence = Some(ticks),
            (None, _) => {
                details += line.matches("<details>").count();
                details = details.saturating_sub(line.matches("</details>").count());
            }
        }
    }
    let mut out = String::new();
    if !prefix.is_empty() && !prefix.ends_with('\n') {
        out.push('\n');
    }
    if let Some(f) = fence {
        let _ = writeln!(out, "{}", "`".repeat(f));
    }
    for _ in 0..details {
        out.push_str("\n</details>\n");
    }
    out
}

/// Cuts `stdout` to at most `limit` bytes, as `kind` allows, with a note of what was cut:
/// inside the output for text and Markdown, on stderr (returned) for JSON. Output that fits is
/// given back as it is.
#[must_use]
pub fn cut(stdout: &[u8], limit: usize, kind: Kind) -> (Vec<u8>, Option<String>) {
    if stdout.len() <= limit {
        return (stdout.to_vec(), None);
    }
    let text = String::from_utf8_lossy(stdout);
    let total = text.len();
    let note = |shown: usize| {
        let rest = &text[shown..];
        format!(
            "... cut by --limit-bytes {limit}: {} more bytes ({} lines) not shown\n",
            rest.len(),
            rest.lines().count()
        )
    };
    if kind == Kind::Json {
        let prefix = line_prefix(&text, limit);
        let note = format!(
            "fluxsim: note: the JSON output is cut (not valid JSON): {}",
            note(prefix.len())
        );
        return (prefix.as_bytes().to_vec(), Some(note));
    }
    // The note and closers take room of their own: shrink the budget until all fits.
    let mut budget = limit;
    loop {
        let prefix = line_prefix(&text, budget);
        let closers = if kind == Kind::Markdown {
            markdown_closers(prefix)
        } else if prefix.ends_with('\n') || prefix.is_empty() {
            String::new()
        } else {
            "\n".to_string()
        };
        let n = note(prefix.len());
        let note_line = if kind == Kind::Markdown {
            format!("\n> ⚠️ {n}")
        } else {
            n
        };
        let size = prefix.len() + closers.len() + note_line.len();
        if size <= limit || prefix.is_empty() {
            if size > limit {
                // Not even the note fits: say it on stderr instead.
                return (Vec::new(), Some(format!("fluxsim: note: {}", note(0))));
            }
            let mut out = String::with_capacity(size);
            out.push_str(prefix);
            out.push_str(&closers);
            out.push_str(&note_line);
            debug_assert!(out.len() <= limit || total <= limit);
            return (out.into_bytes(), None);
        }
        budget = budget
            .saturating_sub(size - limit)
            .min(prefix.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (0..n).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "line {i}");
            s
        })
    }

    #[test]
    fn limit_bytes_leaves_output_that_fits_alone() {
        let text = lines(3);
        assert_eq!(
            cut(text.as_bytes(), 1000, Kind::DiffText),
            (text.into_bytes(), None)
        );
    }

    #[test]
    fn limit_bytes_cuts_at_a_line_with_a_note_of_what_was_cut() {
        let text = lines(1000);
        let (out, note) = cut(text.as_bytes(), 500, Kind::DiffText);
        let out = String::from_utf8(out).unwrap();
        assert!(note.is_none());
        assert!(out.len() <= 500, "{}", out.len());
        let last = out.lines().last().unwrap();
        assert!(last.starts_with("... cut by --limit-bytes 500: "), "{last}");
        assert!(last.ends_with("lines) not shown"), "{last}");
        // Every line shown is a whole line of the input.
        for l in out.lines().filter(|l| !l.starts_with("...")) {
            assert!(text.contains(&format!("{l}\n")), "{l}");
        }
    }

    #[test]
    fn limit_bytes_closes_an_open_markdown_code_block_and_details() {
        let mut md = String::from("## report\n\n<details><summary>x</summary>\n\n````diff\n");
        md.push_str(&lines(500));
        md.push_str("````\n\n</details>\n");
        let (out, _) = cut(md.as_bytes(), 800, Kind::Markdown);
        let out = String::from_utf8(out).unwrap();
        assert!(out.len() <= 800, "{}", out.len());
        assert_eq!(out.matches("````").count(), 2, "{out}");
        assert!(out.contains("</details>"), "{out}");
        assert!(out.trim_end().ends_with("lines) not shown"), "{out}");
    }

    #[test]
    fn limit_bytes_closes_a_long_fence_whose_body_holds_short_fences_and_details() {
        // What a diff of the repository can hold: a ``` line and HTML, inside fluxsim's
        // longer fence.
        let mut md = String::from("## report\n\n<details><summary>x</summary>\n\n`````diff\n");
        for i in 0..200 {
            let _ = writeln!(md, "+```\n+</details>\n+<details>\n+````` not a close {i}");
        }
        md.push_str("`````\n\n</details>\n");
        let (out, _) = cut(md.as_bytes(), 900, Kind::Markdown);
        let out = String::from_utf8(out).unwrap();
        assert!(out.len() <= 900, "{}", out.len());
        let tail: Vec<&str> = out.lines().rev().take(6).collect();
        assert!(tail.contains(&"`````"), "{out}");
        // One </details>, for the one fluxsim opened.
        let after_fence = &out[out.rfind("\n`````\n").unwrap()..];
        assert_eq!(after_fence.matches("</details>").count(), 1, "{out}");
    }

    #[test]
    fn shown_output_escapes_controls_as_its_kind_allows() {
        let text = b"a\x1b[2J\rb\tc\n".to_vec();
        assert_eq!(shown(text.clone(), Kind::Manifest), text);
        for kind in [Kind::Plain, Kind::DiffText, Kind::Markdown] {
            assert_eq!(shown(text.clone(), kind), b"a\\x1b[2J\\rb\tc\n".to_vec());
        }
        let json = "{\"a\":\"\u{9b}\"}".as_bytes().to_vec();
        assert_eq!(shown(json, Kind::Json), br#"{"a":"\u009b"}"#.to_vec());
    }

    #[test]
    fn fence_run_follows_commonmark() {
        assert_eq!(fence_run("```diff"), Some((3, "diff")));
        assert_eq!(fence_run("   ````"), Some((4, "")));
        assert_eq!(fence_run("    ```"), None, "four spaces: indented code");
        assert_eq!(fence_run("``"), None);
    }

    #[test]
    fn limit_bytes_on_json_notes_the_cut_on_stderr() {
        let json = format!("{{\"a\": \"{}\"}}\n", "x".repeat(100));
        let (out, note) = cut(json.as_bytes(), 50, Kind::Json);
        assert!(out.len() <= 50);
        assert!(note.unwrap().contains("not valid JSON"));
    }

    #[test]
    fn limit_bytes_too_small_for_the_note_prints_nothing_and_says_so_on_stderr() {
        for kind in [Kind::Manifest, Kind::Plain, Kind::DiffText, Kind::Markdown] {
            let (out, note) = cut(lines(50).as_bytes(), 0, kind);
            assert!(out.is_empty());
            assert!(note.unwrap().contains("cut by --limit-bytes 0"));
        }
    }

    #[test]
    fn limit_bytes_never_splits_a_character() {
        let text = "é".repeat(100);
        let (out, _) = cut(text.as_bytes(), 101, Kind::Plain);
        assert!(String::from_utf8(out).is_ok());
    }

    #[test]
    fn color_marks_added_removed_and_hunk_lines() {
        let out = colorize(
            b"dev: 1 changed\n      @@ -1 +1 @@ x\n      -a: 1\n      +a: 2\nresult: changed\n",
        );
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("\x1b[36m      @@ -1 +1 @@ x\x1b[0m\n"));
        assert!(out.contains("\x1b[31m      -a: 1\x1b[0m\n"));
        assert!(out.contains("\x1b[32m      +a: 2\x1b[0m\n"));
        assert!(out.starts_with("dev: 1 changed\n"));
        assert!(out.contains("\x1b[1mresult: changed\x1b[0m"));
    }

    #[test]
    fn color_never_and_always_ignore_the_terminal() {
        assert!(!Color::Never.enabled(true));
        assert!(Color::Always.enabled(false));
        assert!(!Color::Auto.enabled(false));
    }
}
