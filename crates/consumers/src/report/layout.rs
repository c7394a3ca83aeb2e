//! Text for a terminal: every report's default text fits [`WIDTH`] columns (long sentences
//! wrapped, long names in tables shortened in the middle), `--wide` keeps each row and
//! sentence on one line, and what fluxsim did to get there (builders, caches, what was taken
//! from base) is said only with `--verbose`.

use std::fmt::Write as _;

/// The columns a report fits by default.
pub const WIDTH: usize = 80;

/// How text reports are laid out (`--wide`, `--verbose`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// Rows and sentences on one line each, however long.
    pub wide: bool,
    /// Also say how the work was done (builders, caches, reuse).
    pub verbose: bool,
}

/// The number of columns `s` takes.
#[must_use]
pub fn columns(s: &str) -> usize {
    textwrap::core::display_width(s)
}

impl Layout {
    /// `text` after `first` (the first line's prefix), continued on lines that start with
    /// `rest`, each line at most [`WIDTH`] columns (`--wide`: one line); ends with a newline.
    #[must_use]
    pub fn wrap(self, first: &str, text: &str, rest: &str) -> String {
        if self.wide {
            return format!("{first}{text}\n");
        }
        let opts = textwrap::Options::new(WIDTH)
            .initial_indent(first)
            .subsequent_indent(rest)
            // Names and paths break only where a space is, or when longer than a line.
            .word_splitter(textwrap::WordSplitter::NoHyphenation)
            .break_words(true);
        let mut out = String::new();
        for line in textwrap::wrap(text, opts) {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if out.is_empty() {
            out.push_str(first.trim_end());
            out.push('\n');
        }
        out
    }

    /// `s`, shortened in the middle with `…` to `max` columns when it is longer (`--wide`:
    /// as it is).
    #[must_use]
    pub fn fit(self, s: &str, max: usize) -> String {
        if self.wide || columns(s) <= max || max < 5 {
            return s.to_string();
        }
        // An entry below a Kustomization (`apps/helm/web/podinfo`, `tenants/rset/ns/team`):
        // what it is and its name stay whole, the parent's name is shortened.
        if let Some(at) = ["/helm/", "/rset/"].iter().filter_map(|m| s.rfind(m)).max() {
            let entry = &s[at..];
            let room = max.saturating_sub(columns(entry));
            let parent: Vec<char> = s[..at].chars().collect();
            if room >= 6 && parent.len() >= room {
                return shortened(&parent, room) + entry;
            }
        }
        shortened(&s.chars().collect::<Vec<_>>(), max)
    }

    /// A table: each row's cells padded to the column's width, the columns separated by two
    /// spaces, every line after `indent`. Without `--wide`, the column `elastic` is shortened
    /// ([`Layout::fit`]) so that a line fits [`WIDTH`], down to 24 columns.
    #[must_use]
    pub fn table(self, indent: &str, rows: &[Vec<String>], elastic: usize) -> String {
        let n = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths: Vec<usize> = (0..n)
            .map(|i| {
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| columns(c))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        if !self.wide && elastic < n {
            let others: usize = widths
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != elastic)
                .map(|(_, w)| w + 2)
                .sum();
            let room = WIDTH.saturating_sub(columns(indent) + others);
            widths[elastic] = widths[elastic].min(room.max(24));
        }
        let mut out = String::new();
        for row in rows {
            let mut line = indent.to_string();
            for (i, cell) in row.iter().enumerate() {
                let cell = if i == elastic {
                    self.fit(cell, widths[i])
                } else {
                    cell.clone()
                };
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i].saturating_sub(columns(&cell));
                let _ = write!(line, "{cell}{}", " ".repeat(pad));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `chars` in `max` characters: its start and its end around a `…` (`max` is less than its
/// length).
fn shortened(chars: &[char], max: usize) -> String {
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - (keep - head)..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_text_fits_80_columns_and_wide_keeps_one_line() {
        let text = "word ".repeat(60);
        let narrow = Layout::default().wrap("  ", &text, "    ");
        assert!(narrow.lines().count() > 1);
        assert!(narrow.lines().all(|l| columns(l) <= WIDTH), "{narrow}");
        assert!(narrow.starts_with("  word"));
        assert!(narrow.lines().skip(1).all(|l| l.starts_with("    word")));
        let wide = Layout {
            wide: true,
            verbose: false,
        }
        .wrap("  ", &text, "    ");
        assert_eq!(wide.lines().count(), 1);
        // A word longer than a line is broken rather than left wider.
        let long = Layout::default().wrap("", &"x".repeat(200), "");
        assert!(long.lines().all(|l| columns(l) <= WIDTH));
    }

    #[test]
    fn a_long_name_is_shortened_in_the_middle_to_fit_the_table() {
        let l = Layout::default();
        assert_eq!(
            l.fit("actions-runner-system/controller", 20),
            "actions-ru…ontroller"
        );
        assert_eq!(columns(&l.fit("actions-runner-system/controller", 20)), 20);
        assert_eq!(l.fit("short", 20), "short");
        // A ResourceSet's or a release's entry keeps what it is and its name.
        let entry = "flux-system/flux-system/rset/flux-system/flux-operator";
        assert_eq!(
            l.fit(entry, 46),
            "flux-sy…-system/rset/flux-system/flux-operator"
        );
        assert_eq!(columns(&l.fit(entry, 46)), 46);
        assert_eq!(
            l.fit("flux-system/apps-helm/helm/apps/podinfo", 30),
            "flux-s…-helm/helm/apps/podinfo"
        );
        let rows = vec![
            vec!["NAME".to_string(), "SHA256".to_string()],
            vec!["n".repeat(100), "0123456789ab".to_string()],
        ];
        let t = l.table("  ", &rows, 0);
        assert!(t.lines().all(|line| columns(line) <= WIDTH), "{t}");
        assert!(t.contains('…'));
        let wide = Layout {
            wide: true,
            verbose: false,
        }
        .table("  ", &rows, 0);
        assert!(wide.contains(&"n".repeat(100)));
    }
}
