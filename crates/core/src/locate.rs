//! Finding lines in the user's files: where an object's document starts, where a piece of
//! text occurs. Findings point at these (1-based lines, columns in characters).

use std::collections::HashMap;

/// The 1-based line of `metadata.name: name` (or, failing that, of the document start) of
/// the first document in a multi-document YAML `text` whose `kind` is `kind` and whose
/// `metadata.name` is `name`. Names are compared as kustomize read them from the file, so an
/// object renamed by `namePrefix` is found by its name in the file.
#[must_use]
pub fn object_line(text: &str, kind: &str, name: &str) -> Option<usize> {
    documents(text).find_map(|doc| {
        place(&doc)
            .filter(|p| p.kind == kind && p.name == name)
            .map(|p| p.line)
    })
}

/// [`object_line`] of every object of a text at once: each document is read once, and the
/// first document of a kind and name is the one kept, as [`object_line`] finds it. For a
/// file looked up once per object it holds (a file declaring thousands of Kustomizations),
/// where [`object_line`] would read the documents before each object again.
#[derive(Debug, Default)]
pub struct ObjectLines(HashMap<String, HashMap<String, usize>>);

impl ObjectLines {
    /// Reads every document of `text`.
    #[must_use]
    pub fn of(text: &str) -> ObjectLines {
        let mut by_kind: HashMap<String, HashMap<String, usize>> = HashMap::new();
        for doc in documents(text) {
            if let Some(p) = place(&doc) {
                by_kind
                    .entry(p.kind)
                    .or_default()
                    .entry(p.name)
                    .or_insert(p.line);
            }
        }
        ObjectLines(by_kind)
    }

    /// [`object_line`] of the text read, for `kind` and `name`.
    #[must_use]
    pub fn line(&self, kind: &str, name: &str) -> Option<usize> {
        self.0.get(kind)?.get(name).copied()
    }
}

/// One document of a multi-document text: its lines (marker lines left out), each with its
/// 1-based number, and the line it starts on.
struct Document<'t> {
    start: usize,
    lines: Vec<(usize, &'t str)>,
}

/// The documents of `text`, split at document markers; a text that ends with a marker has
/// no empty document after it.
fn documents(text: &str) -> impl Iterator<Item = Document<'_>> {
    let mut line_no = 0;
    let mut start = 1;
    let mut doc: Vec<(usize, &str)> = Vec::new();
    let mut lines = text.lines().peekable();
    std::iter::from_fn(move || {
        while let Some(line) = lines.next() {
            line_no += 1;
            let is_marker = crate::goyaml::stream::is_document_start(line);
            if !is_marker {
                doc.push((line_no, line));
            }
            if is_marker || lines.peek().is_none() {
                let d = Document {
                    start,
                    lines: std::mem::take(&mut doc),
                };
                start = line_no + 1;
                return Some(d);
            }
        }
        None
    })
}

/// An object's document as [`object_line`] reports it.
struct Placed {
    /// `kind`.
    kind: String,
    /// `metadata.name`.
    name: String,
    /// The line of its `name:` under `metadata:`, else the document's first line.
    line: usize,
}

thread_local! {
    /// Documents read by [`place`] on this thread (to pin how often a text is read).
    static PLACED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many documents [`place`] has read on this thread (for tests that pin how often a
/// consumer reads a file: `graph` reads each declaring document once).
#[doc(hidden)]
pub fn documents_read() -> usize {
    PLACED.with(std::cell::Cell::get)
}

/// The kind, name and line of a document's object; `None` when it is not an object with a
/// string `kind` and `metadata.name`.
fn place(doc: &Document<'_>) -> Option<Placed> {
    PLACED.with(|c| c.set(c.get() + 1));
    let text = doc.lines.iter().fold(String::new(), |mut s, (_, l)| {
        s.push_str(l);
        s.push('\n');
        s
    });
    let v = crate::manifest::parse_object(&text).ok()?;
    let kind = crate::flux::str_at(&v, &["kind"])?.to_string();
    let name = crate::flux::str_at(&v, &["metadata", "name"])?.to_string();
    Some(Placed {
        kind,
        name,
        line: name_line(&doc.lines).unwrap_or(doc.start),
    })
}

/// The line of the `name:` directly under `metadata:`: at the indentation of its first child.
fn name_line(doc: &[(usize, &str)]) -> Option<usize> {
    let mut in_meta: Option<(usize, Option<usize>)> = None;
    for (n, l) in doc {
        let indent = l.len() - l.trim_start().len();
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match in_meta {
            None if t == "metadata:" => in_meta = Some((indent, None)),
            Some((mi, _)) if indent <= mi => in_meta = None,
            Some((mi, None)) => {
                in_meta = Some((mi, Some(indent)));
                if t.starts_with("name:") {
                    return Some(*n);
                }
            }
            Some((_, Some(ci))) if indent == ci && t.starts_with("name:") => {
                return Some(*n);
            }
            _ => {}
        }
    }
    None
}

/// Every occurrence of `needle` in `text`, as 1-based (line, column) with the column counted
/// in characters.
#[must_use]
pub fn find_text(text: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices(needle) {
            out.push((i + 1, line[..at].chars().count() + 1));
        }
    }
    out
}

/// The 1-based (line, column) of byte `offset` in `text`, the column in characters.
#[must_use]
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// What to look for in an object's source file (`audit`'s findings, a substitution
/// failure's place).
#[derive(Debug, Clone, Copy)]
pub struct Needle<'a> {
    /// The text to find.
    pub text: &'a str,
    /// Which occurrence inside the object's document (0 for the first).
    pub nth: usize,
    /// Only occurrences not glued to a word (`[A-Za-z0-9._-]`) on either side.
    pub whole_word: bool,
    /// Only occurrences before a `#` comment of their line ([`comment_start`]).
    pub code_only: bool,
}

/// The 0-based line range `[start, end)` of the object's document in a multi-document file
/// (the document whose `kind:` and `metadata.name` match, else the first with that kind, else
/// the whole file), and the 1-based line of its name when it was found by name.
#[must_use]
pub fn document_range(text: &str, kind: &str, names: &[String]) -> (usize, usize, Option<usize>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut docs = Vec::new();
    let mut start = 0;
    for (i, l) in lines.iter().enumerate() {
        if crate::goyaml::stream::is_document_start(l) {
            docs.push((start, i));
            start = i + 1;
        }
    }
    docs.push((start, lines.len()));
    let kind_of = |(s, e): (usize, usize)| {
        lines[s..e].iter().any(|l| {
            l.strip_prefix("kind:")
                .is_some_and(|k| k.trim().trim_matches(['"', '\'']) == kind)
        })
    };
    let name_line = names.iter().find_map(|n| object_line(text, kind, n));
    let doc = name_line
        .and_then(|line| docs.iter().copied().find(|&(s, e)| s < line && line <= e))
        .or_else(|| docs.iter().copied().find(|&d| kind_of(d)));
    let (start, end) = match doc {
        Some((s, e)) => {
            // Start at the first line of content, not at comments before it.
            let first = (s..e)
                .find(|&i| {
                    let t = lines[i].trim();
                    !t.is_empty() && !t.starts_with('#')
                })
                .unwrap_or(s);
            (first, e)
        }
        None => (0, lines.len()),
    };
    (start, end, name_line)
}

/// The `nth` occurrence of the needle on lines `[start, end)` (0-based), as a 1-based line,
/// a 1-based column in characters, and whether a quote precedes it.
#[must_use]
pub fn nth_in_lines(
    text: &str,
    n: Needle<'_>,
    start: usize,
    end: usize,
) -> Option<(usize, usize, bool)> {
    if n.text.is_empty() {
        return None;
    }
    let mut seen = 0;
    for (i, line) in text
        .lines()
        .enumerate()
        .skip(start)
        .take(end.saturating_sub(start))
    {
        let code = if n.code_only {
            comment_start(line).unwrap_or(line.len())
        } else {
            line.len()
        };
        for (at, _) in line.match_indices(n.text) {
            if at + n.text.len() > code {
                break;
            }
            let before = line[..at].chars().next_back();
            let after = line[at + n.text.len()..].chars().next();
            if n.whole_word && (before.is_some_and(is_word_char) || after.is_some_and(is_word_char))
            {
                continue;
            }
            if seen == n.nth {
                let column = line[..at].chars().count() + 1;
                return Some((i + 1, column, matches!(before, Some('"' | '\''))));
            }
            seen += 1;
        }
    }
    None
}

/// Where a `#` comment starts on a line of YAML (or of a script or config file a block
/// scalar holds, which comment the same way): a `#` at the start of the line or after a
/// space or tab, outside a quoted scalar. `None` when the line has none.
#[must_use]
pub fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    for (at, c) in line.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else {
            let starts_token =
                prev.is_none_or(|p| p.is_whitespace() || matches!(p, ':' | '[' | '{' | ','));
            if c == '#' && prev.is_none_or(|p| p == ' ' || p == '\t') {
                return Some(at);
            }
            // A quote opens a quoted scalar only where a scalar starts (`it's` does not).
            if matches!(c, '"' | '\'') && starts_token {
                quote = Some(c);
            }
        }
        prev = Some(c);
    }
    None
}

/// Characters that continue a host name, an address or an identifier.
#[must_use]
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# note\napiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    name: not-this\n  name: a\n";

    #[test]
    fn object_line_finds_the_name_line_of_the_matching_document() {
        assert_eq!(object_line(FILE, "ConfigMap", "a"), Some(4));
        assert_eq!(object_line(FILE, "Service", "a"), Some(12));
        assert_eq!(object_line(FILE, "Secret", "a"), None);
    }

    #[test]
    fn object_lines_read_each_document_once_and_keep_the_first_of_a_kind_and_name() {
        let text = "kind: ConfigMap\nmetadata:\n  name: a\n---\nkind: ConfigMap\n\
                    metadata:\n  name: a\n---\n: [\n---\nkind: 1\nmetadata:\n  name: b\n\
                    ---\nkind: Secret\nmetadata: {name: c}\n---\n";
        let before = documents_read();
        let lines = ObjectLines::of(text);
        assert_eq!(documents_read() - before, 5);
        for (kind, name) in [
            ("ConfigMap", "a"),
            ("ConfigMap", "b"),
            ("1", "b"),
            ("Secret", "c"),
            ("Secret", "d"),
        ] {
            assert_eq!(
                lines.line(kind, name),
                object_line(text, kind, name),
                "{kind} {name}"
            );
        }
        assert_eq!(lines.line("ConfigMap", "a"), Some(3));
        assert_eq!(lines.line("Secret", "c"), Some(15));
    }

    /// `ObjectLines` is `object_line` read once: the same line for every object of every
    /// YAML file of the fixtures, and for a name no document has.
    #[test]
    fn object_lines_agree_with_object_line_on_every_fixture() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).expect("a folder").flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
            &mut files,
        );
        assert!(files.len() > 100, "{} fixtures", files.len());
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            let lines = ObjectLines::of(&text);
            let mut objects: Vec<(&String, &String)> = lines
                .0
                .iter()
                .flat_map(|(kind, names)| names.keys().map(move |name| (kind, name)))
                .collect();
            objects.sort();
            // `object_line` reads a file once per object: a sample of the largest files.
            let step = objects.len().div_ceil(32).max(1);
            for (kind, name) in objects.into_iter().step_by(step) {
                let want = object_line(&text, kind, name);
                assert_eq!(
                    lines.line(kind, name),
                    want,
                    "{} {kind} {name}",
                    f.display()
                );
                assert_eq!(lines.line(kind, "\0absent"), None);
            }
            assert_eq!(object_line(&text, "Absent", "x"), None);
        }
    }

    #[test]
    fn find_text_reports_every_occurrence_with_character_columns() {
        assert_eq!(
            find_text("a: ${X}\nb: é${X} ${X}\n", "${X}"),
            vec![(1, 4), (2, 5), (2, 10)]
        );
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}

#[cfg(test)]
mod needle_tests {
    use super::*;

    const FILE: &str = "# leading comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  X: ${V}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  X: \"${V}\"\n  Y: ${V}\n";

    #[test]
    fn document_is_found_by_kind_and_name() {
        assert_eq!(
            document_range(FILE, "ConfigMap", &["b".into()]),
            (8, 15, Some(12))
        );
        assert_eq!(
            document_range(FILE, "ConfigMap", &["a".into()]),
            (1, 7, Some(5))
        );
        // An unknown name falls back to the first document of the kind.
        assert_eq!(
            document_range(FILE, "ConfigMap", &["zz".into()]),
            (1, 7, None)
        );
    }

    #[test]
    fn nth_occurrence_in_a_document_has_line_column_and_quote() {
        let n = |nth| Needle {
            text: "${V}",
            nth,
            whole_word: false,
            code_only: false,
        };
        assert_eq!(nth_in_lines(FILE, n(0), 8, 15), Some((14, 7, true)));
        assert_eq!(nth_in_lines(FILE, n(1), 8, 15), Some((15, 6, false)));
        assert_eq!(nth_in_lines(FILE, n(2), 8, 15), None);
    }

    #[test]
    fn whole_word_skips_occurrences_inside_a_longer_name() {
        let text = "a: dev.example.net\nb: example.net\n";
        let n = Needle {
            text: "example.net",
            nth: 0,
            whole_word: true,
            code_only: false,
        };
        assert_eq!(nth_in_lines(text, n, 0, 2), Some((2, 4, false)));
    }

    #[test]
    fn a_comment_starts_at_a_hash_after_a_space_outside_quotes() {
        assert_eq!(comment_start("# all of it"), Some(0));
        assert_eq!(comment_start("  a: b # c"), Some(7));
        assert_eq!(comment_start("a: b#c"), None);
        assert_eq!(comment_start("a: \"b # c\""), None);
        assert_eq!(comment_start("a: 'b # c' # d"), Some(11));
        assert_eq!(comment_start("url: http://x/#/y"), None);
        assert_eq!(comment_start("it's # d"), Some(5));
    }

    #[test]
    fn code_only_needles_skip_what_a_comment_says() {
        let text = "# storage: local-hostpath\nkind: X\nclass: local-hostpath # local-hostpath\n";
        let n = Needle {
            text: "local-hostpath",
            nth: 0,
            whole_word: true,
            code_only: true,
        };
        assert_eq!(nth_in_lines(text, n, 0, 3), Some((3, 8, false)));
        assert_eq!(nth_in_lines(text, Needle { nth: 1, ..n }, 0, 3), None);
        let only_comment = "kind: X\n# class: local-hostpath\n";
        assert_eq!(nth_in_lines(only_comment, n, 0, 2), None);
    }
}
