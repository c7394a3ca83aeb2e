//! Changes as lines of a diff, for the terminal and for Markdown code blocks: each change a
//! path line, then its values prefixed `-` (base) and `+` (head), so that a `diff`
//! highlighter colours them and a reader without colour still sees which is which.
//!
//! ```text
//!   spec.template.spec.containers[name=app].image
//! -   ghcr.io/stefanprodan/podinfo:6.5.0
//! +   ghcr.io/stefanprodan/podinfo:6.6.0
//!   data."nginx.conf"
//!     @@ -1,3 +1,3 @@
//!      server {
//! -      listen 80;
//! +      listen 8080;
//!   spec.template.spec.containers: order changed
//!       before: app, sidecar
//!       after:  sidecar, app
//! ```
//!
//! Lines are the repository's text as it is: the printer escapes them for where they land
//! (a fence longer than any backtick run, controls shown).

use std::fmt::Write as _;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::semantic::{FieldChange, Op};
use crate::yaml;

/// The longest line written: a value longer than this (a base64 blob, a one-line JSON
/// document) is cut, with how much was left out; the HTML report shows it whole.
pub const MAX_LINE: usize = 400;

/// How many names an "order changed" line lists before it says how many more.
const MAX_NAMES: usize = 12;

/// `s` cut to [`MAX_LINE`] bytes at a character boundary, with a note of what was cut.
#[must_use]
pub fn cut(s: &str) -> String {
    if s.len() <= MAX_LINE {
        return s.to_string();
    }
    let mut end = MAX_LINE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &s[..end], s.len() - end)
}

/// The most of one error a comment shows: its start and its end (where kustomize and Flux
/// put the cause), with how much of the middle was left out.
pub const MAX_ERROR: usize = 4096;

/// An error as the lines of a code block: its long lines folded at spaces to 100 columns
/// instead of cut (the file that failed is at the end of kustomize's one-line errors); an
/// error longer than [`MAX_ERROR`] keeps its first quarter and its end.
#[must_use]
pub fn error_lines(error: &str) -> Vec<String> {
    let error = if error.len() > MAX_ERROR {
        let mut head = MAX_ERROR / 4;
        while !error.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = error.len() - (MAX_ERROR - head);
        while !error.is_char_boundary(tail) {
            tail += 1;
        }
        format!(
            "{} … ({} bytes left out) … {}",
            &error[..head],
            tail - head,
            &error[tail..]
        )
    } else {
        error.to_string()
    };
    let mut out = Vec::new();
    for line in error.lines() {
        if line.chars().count() <= 100 {
            out.push(line.to_string());
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let rest = " ".repeat(indent + 2);
        let opts = textwrap::Options::new(100)
            .subsequent_indent(&rest)
            .break_words(true);
        out.extend(
            textwrap::wrap(line, opts)
                .into_iter()
                .map(std::borrow::Cow::into_owned),
        );
    }
    out
}

fn values(sign: char, v: &Value, out: &mut Vec<String>) {
    for line in yaml::lines(v) {
        out.push(cut(&format!("{sign}   {line}")));
    }
}

fn names(list: &[String]) -> String {
    let mut s = list
        .iter()
        .take(MAX_NAMES)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > MAX_NAMES {
        let _ = write!(s, " and {} more", list.len() - MAX_NAMES);
    }
    s
}

/// The hunks of a line diff of two texts, each line prefixed by its sign and `indent`.
pub fn text_diff(before: &str, after: &str, indent: &str, out: &mut Vec<String>) {
    let diff = TextDiff::from_lines(before, after);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push(format!(" {indent}{}", hunk.header()));
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let text = change.value();
            let text = text.strip_suffix('\n').unwrap_or(text);
            out.push(cut(&format!("{sign}{indent}{text}")));
        }
    }
}

/// One change as lines.
pub fn change(c: &FieldChange, out: &mut Vec<String>) {
    let path = c.path.to_string();
    let path = if path.is_empty() {
        "(the object)".to_string()
    } else {
        path
    };
    if let Some((a, b)) = c.text() {
        out.push(cut(&format!("  {path}")));
        text_diff(a, b, "    ", out);
        return;
    }
    match &c.op {
        Op::Changed { before, after } => {
            out.push(cut(&format!("  {path}")));
            values('-', before, out);
            values('+', after, out);
        }
        Op::Added { after } => {
            out.push(cut(&format!("  {path}")));
            values('+', after, out);
        }
        Op::Removed { before } => {
            out.push(cut(&format!("  {path}")));
            values('-', before, out);
        }
        Op::Reordered { before, after } => {
            out.push(cut(&format!("  {path}: order changed")));
            out.push(cut(&format!("      before: {}", names(before))));
            out.push(cut(&format!("      after:  {}", names(after))));
        }
    }
}

/// Every change of an object as lines.
#[must_use]
pub fn changes(list: &[FieldChange]) -> Vec<String> {
    let mut out = Vec::new();
    for c in list {
        change(c, &mut out);
    }
    out
}

/// An object's content as YAML lines, each cut to [`MAX_LINE`].
#[must_use]
pub fn content(v: &Value) -> Vec<String> {
    yaml::lines(v).iter().map(|l| cut(l)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_folded_not_cut_and_keeps_its_end() {
        let long = format!(
            "{} in File: ./apps/ks.yaml",
            "accumulating resources: ".repeat(30)
        );
        let lines = error_lines(&long);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{lines:?}");
        assert!(lines.last().unwrap().ends_with("in File: ./apps/ks.yaml"));
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&lines.join(" ")), words(&long));

        let huge = format!("start {} cause at the end", "x".repeat(10_000));
        let lines = error_lines(&huge).join("\n");
        assert!(lines.starts_with("start\n"));
        assert!(lines.ends_with("cause at the end"));
        assert!(lines.contains("bytes left out"));
        assert!(lines.len() < MAX_ERROR + 200, "{}", lines.len());
    }
    use crate::semantic::diff;
    use serde_json::json;

    #[test]
    fn a_change_is_a_path_line_and_signed_values() {
        let a = json!({"spec": {"replicas": 1, "selector": {"app": "blue"}}});
        let b = json!({"spec": {"replicas": 3, "selector": {"app": "green", "tier": "web"}}});
        assert_eq!(
            changes(&diff(&a, &b)).join("\n"),
            "  spec.replicas\n-   1\n+   3\n  spec.selector.app\n-   blue\n+   green\n  spec.selector.tier\n+   web"
        );
    }

    #[test]
    fn a_multi_line_string_is_a_line_diff_inside_the_value() {
        let a = json!({"data": {"nginx.conf": "server {\n  listen 80;\n}\n"}});
        let b = json!({"data": {"nginx.conf": "server {\n  listen 8080;\n}\n"}});
        assert_eq!(
            changes(&diff(&a, &b)).join("\n"),
            "  data.\"nginx.conf\"\n     @@ -1,3 +1,3 @@\n     server {\n-      listen 80;\n+      listen 8080;\n     }"
        );
    }

    #[test]
    fn a_reorder_is_one_entry_with_both_orders() {
        let a = json!({"containers": [{"name": "app"}, {"name": "sidecar"}]});
        let b = json!({"containers": [{"name": "sidecar"}, {"name": "app"}]});
        assert_eq!(
            changes(&diff(&a, &b)),
            [
                "  containers: order changed",
                "      before: app, sidecar",
                "      after:  sidecar, app"
            ]
        );
    }

    #[test]
    fn long_values_are_cut_with_a_note() {
        let line = cut(&"x".repeat(1000));
        assert!(line.ends_with("… (600 more bytes)"));
    }
}
