//! An object's YAML before and after, as HTML tables: side by side and unified, changed
//! lines paired and their changed words marked. Only the hunks are shown (three lines of
//! context), as a reviewer reads a diff.

use std::fmt::Write as _;

use similar::{ChangeTag, DiffTag, TextDiff};

use crate::escape::html;

/// Lines longer than this are not compared word by word (the words of a long line cost
/// more than they show).
const MAX_WORDS_LINE: usize = 2000;

/// The words of a line for highlighting: runs of letters and digits, runs of spaces, and
/// each other character alone, so that `podinfo:6.5.0` → `podinfo:6.6.0` marks the `5`.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind = None;
    for (i, c) in s.char_indices() {
        let k = if c.is_alphanumeric() {
            Some(0)
        } else if c == ' ' {
            Some(1)
        } else {
            None
        };
        if i > start && (k.is_none() || k != kind) {
            out.push(&s[start..i]);
            start = i;
        }
        kind = k;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Two texts with their changed words in `<mark>`, escaped.
pub(super) fn words(before: &str, after: &str) -> (String, String) {
    if before.len() > MAX_WORDS_LINE || after.len() > MAX_WORDS_LINE {
        return (html(before, false), html(after, false));
    }
    let (ta, tb) = (tokens(before), tokens(after));
    let diff = TextDiff::configure().diff_slices(&ta, &tb);
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
    // Adjacent marks read as one.
    (
        a.replace("</mark><mark>", ""),
        b.replace("</mark><mark>", ""),
    )
}

/// How alike two lines are (0 to 1).
fn likeness(a: &str, b: &str) -> f32 {
    let (ta, tb) = (tokens(a), tokens(b));
    TextDiff::configure().diff_slices(&ta, &tb).ratio()
}

/// The lines of a replaced run paired by likeness, in order: (old index, new index), each
/// side `None` where a line has no counterpart. Runs too long to compare pair by position.
fn pair(old: &[&str], new: &[&str]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut out = Vec::new();
    if old.len() * new.len() > 400 {
        for k in 0..old.len().max(new.len()) {
            out.push(((k < old.len()).then_some(k), (k < new.len()).then_some(k)));
        }
        return out;
    }
    let mut next = 0;
    for (i, line) in old.iter().enumerate() {
        let best = (next..new.len())
            .map(|j| (j, likeness(line, new[j])))
            .filter(|(_, r)| *r >= 0.5)
            .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)));
        match best {
            Some((j, _)) => {
                out.extend((next..j).map(|k| (None, Some(k))));
                out.push((Some(i), Some(j)));
                next = j + 1;
            }
            None => out.push((Some(i), None)),
        }
    }
    out.extend((next..new.len()).map(|k| (None, Some(k))));
    out
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
        let (old_at, new_at) = (first.old_range().start, first.new_range().start);
        let (old_end, new_end) = (last.old_range().end, last.new_range().end);
        out.push(Row::Hunk(format!(
            "@@ -{},{} +{},{} @@",
            old_at + 1,
            old_end - old_at,
            new_at + 1,
            new_end - new_at
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
                    let (os, ns) = (or.start, nr.start);
                    for (i, j) in pair(&old[or], &new[nr]) {
                        match (i.map(|i| os + i), j.map(|j| ns + j)) {
                            (Some(i), Some(j)) => {
                                let (a, b) = words(old[i], new[j]);
                                out.push(Row::Pair(Some((i + 1, a)), Some((j + 1, b))));
                            }
                            (Some(i), None) => {
                                out.push(Row::Pair(Some((i + 1, html(old[i], false))), None));
                            }
                            (None, Some(j)) => {
                                out.push(Row::Pair(None, Some((j + 1, html(new[j], false)))));
                            }
                            (None, None) => {}
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
        assert_eq!(a, "image: podinfo:6.<mark>5</mark>.0 &lt;x&gt;");
        assert_eq!(b, "image: podinfo:6.<mark>6</mark>.0 &lt;x&gt;");
    }

    #[test]
    fn views_show_hunks_with_context_and_paired_lines() {
        let before: String = (0..20).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "line {i}");
            s
        });
        let after = before.replace("line 10\n", "line ten\n");
        let mut out = String::new();
        views(&before, &after, &mut out);
        assert!(out.contains("@@ -8,7 +8,7 @@"));
        assert!(out.contains("<td class=\"del\">line <mark>10</mark></td>"));
        assert!(out.contains("<td class=\"add\">line <mark>ten</mark></td>"));
        assert!(!out.contains("line 2<"), "outside the context");
    }

    #[test]
    fn replaced_lines_pair_with_the_line_they_resemble() {
        let old = ["  image: podinfo:6.5.0"];
        let new = [
            "  - name: MESSAGE",
            "    value: hello",
            "  image: podinfo:6.6.0",
        ];
        assert_eq!(
            pair(&old, &new),
            [(None, Some(0)), (None, Some(1)), (Some(0), Some(2))]
        );
        assert_eq!(
            tokens("a-b  c:6.5"),
            ["a", "-", "b", "  ", "c", ":", "6", ".", "5"]
        );
    }
}
