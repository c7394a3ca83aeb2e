//! An object's YAML before and after, as HTML tables: side by side and unified, changed
//! lines paired and their changed words marked. Only the hunks are shown (three lines of
//! context), as a reviewer reads a diff.

use std::fmt::Write as _;

use similar::{ChangeTag, DiffTag, TextDiff};

use crate::escape::html;

/// Lines longer than this are not compared word by word (the words of a long line cost
/// more than they show).
const MAX_WORDS_LINE: usize = 2000;

/// Two texts with their changed words in `<mark>`, escaped.
pub(super) fn words(before: &str, after: &str) -> (String, String) {
    if before.len() > MAX_WORDS_LINE || after.len() > MAX_WORDS_LINE {
        return (html(before, false), html(after, false));
    }
    let diff = TextDiff::from_words(before, after);
    // Barely alike: marking every word says less than marking none.
    let marks = diff.ratio() >= 0.3;
    let (mut a, mut b) = (String::new(), String::new());
    for change in diff.iter_all_changes() {
        let text = html(change.value(), false);
        match change.tag() {
            ChangeTag::Equal => {
                a.push_str(&text);
                b.push_str(&text);
            }
            ChangeTag::Delete if marks => {
                let _ = write!(a, "<mark>{text}</mark>");
            }
            ChangeTag::Insert if marks => {
                let _ = write!(b, "<mark>{text}</mark>");
            }
            ChangeTag::Delete => a.push_str(&text),
            ChangeTag::Insert => b.push_str(&text),
        }
    }
    (a, b)
}

/// One row of a diff: (base line number, base html, head line number, head html).
enum Row {
    Hunk(String),
    Same(usize, usize, String),
    Pair(Option<(usize, String)>, Option<(usize, String)>),
}

fn rows(before: &str, after: &str) -> Vec<Row> {
    let diff = TextDiff::from_lines(before, after);
    let old: Vec<&str> = diff
        .iter_old_slices()
        .map(|l| l.trim_end_matches('\n'))
        .collect();
    let new: Vec<&str> = diff
        .iter_new_slices()
        .map(|l| l.trim_end_matches('\n'))
        .collect();
    let mut out = Vec::new();
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (oe, ne) = (last.old_range().end, last.new_range().end);
        out.push(Row::Hunk(format!(
            "@@ -{},{} +{},{} @@",
            o + 1,
            oe - o,
            n + 1,
            ne - n
        )));
        for op in group {
            let (tag, or, nr) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => {
                    for (i, j) in or.zip(nr) {
                        out.push(Row::Same(i + 1, j + 1, html(old[i], false)));
                    }
                }
                DiffTag::Delete | DiffTag::Insert | DiffTag::Replace => {
                    let paired = or.len().min(nr.len());
                    for k in 0..or.len().max(nr.len()) {
                        let (i, j) = (or.start + k, nr.start + k);
                        if k < paired {
                            let (a, b) = words(old[i], new[j]);
                            out.push(Row::Pair(Some((i + 1, a)), Some((j + 1, b))));
                        } else if i < or.end {
                            out.push(Row::Pair(Some((i + 1, html(old[i], false))), None));
                        } else {
                            out.push(Row::Pair(None, Some((j + 1, html(new[j], false)))));
                        }
                    }
                }
            }
        }
    }
    out
}

/// The side-by-side and the unified views of `before` → `after` (the page shows one).
pub(super) fn views(before: &str, after: &str, out: &mut String) {
    let rows = rows(before, after);
    out.push_str("<div class=\"view-split\"><table class=\"diff code\"><colgroup><col class=\"n\"><col><col class=\"n\"><col></colgroup><tbody>\n");
    for r in &rows {
        match r {
            Row::Hunk(hdr) => {
                let _ = writeln!(
                    out,
                    "<tr class=\"hunk\"><td class=\"n\"></td><td colspan=\"3\">{hdr}</td></tr>"
                );
            }
            Row::Same(i, j, t) => {
                let _ = writeln!(out, "<tr><td class=\"n\">{i}</td><td>{t}</td><td class=\"n\">{j}</td><td>{t}</td></tr>");
            }
            Row::Pair(a, b) => {
                out.push_str("<tr>");
                match a {
                    Some((i, t)) => {
                        let _ = write!(out, "<td class=\"n\">{i}</td><td class=\"del\">{t}</td>");
                    }
                    None => out.push_str("<td class=\"n\"></td><td></td>"),
                }
                match b {
                    Some((j, t)) => {
                        let _ = write!(out, "<td class=\"n\">{j}</td><td class=\"add\">{t}</td>");
                    }
                    None => out.push_str("<td class=\"n\"></td><td></td>"),
                }
                out.push_str("</tr>\n");
            }
        }
    }
    out.push_str("</tbody></table></div>\n");
    out.push_str("<div class=\"view-unified\"><table class=\"diff code\"><tbody>\n");
    // Unified: each run of paired rows as its removed lines, then its added lines.
    let mut dels: Vec<String> = Vec::new();
    let mut adds: Vec<String> = Vec::new();
    let flush = |out: &mut String, dels: &mut Vec<String>, adds: &mut Vec<String>| {
        for d in dels.drain(..) {
            out.push_str(&d);
        }
        for a in adds.drain(..) {
            out.push_str(&a);
        }
    };
    for r in &rows {
        match r {
            Row::Pair(a, b) => {
                if let Some((i, t)) = a {
                    dels.push(format!("<tr><td class=\"n\">{i}</td><td class=\"n\"></td><td class=\"s\">-</td><td class=\"del\">{t}</td></tr>\n"));
                }
                if let Some((j, t)) = b {
                    adds.push(format!("<tr><td class=\"n\"></td><td class=\"n\">{j}</td><td class=\"s\">+</td><td class=\"add\">{t}</td></tr>\n"));
                }
            }
            Row::Hunk(hdr) => {
                flush(out, &mut dels, &mut adds);
                let _ = writeln!(out, "<tr class=\"hunk\"><td class=\"n\"></td><td class=\"n\"></td><td colspan=\"2\">{hdr}</td></tr>");
            }
            Row::Same(i, j, t) => {
                flush(out, &mut dels, &mut adds);
                let _ = writeln!(out, "<tr><td class=\"n\">{i}</td><td class=\"n\">{j}</td><td class=\"s\"></td><td>{t}</td></tr>");
            }
        }
    }
    flush(out, &mut dels, &mut adds);
    out.push_str("</tbody></table></div>\n");
}

/// An added or removed object's text, every line numbered.
pub(super) fn content(text: &str, added: bool, out: &mut String) {
    let class = if added { "add" } else { "del" };
    out.push_str("<table class=\"diff code\"><tbody>\n");
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><td class=\"{class}\">{}</td></tr>",
            i + 1,
            html(line, false)
        );
    }
    out.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_words_are_marked_and_escaped() {
        let (a, b) = words("image: podinfo:6.5.0 <x>", "image: podinfo:6.6.0 <x>");
        assert_eq!(a, "image: <mark>podinfo:6.5.0</mark> &lt;x&gt;");
        assert_eq!(b, "image: <mark>podinfo:6.6.0</mark> &lt;x&gt;");
    }

    #[test]
    fn views_show_hunks_with_context_and_paired_lines() {
        let before: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let mut out = String::new();
        views(&before, &after, &mut out);
        assert!(out.contains("@@ -8,7 +8,7 @@"));
        assert!(out.contains("<td class=\"del\">line <mark>10</mark></td>"));
        assert!(out.contains("<td class=\"add\">line <mark>ten</mark></td>"));
        assert!(!out.contains("line 2<"), "outside the context");
    }
}
