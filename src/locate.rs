//! Finding lines in the user's files: where an object's document starts, where a piece of
//! text occurs. Findings point at these (1-based lines, columns in characters).

/// The 1-based line of `metadata.name: name` (or, failing that, of the document start) of
/// the first document in a multi-document YAML `text` whose `kind` is `kind` and whose
/// `metadata.name` is `name`. Names are compared as kustomize read them from the file, so an
/// object renamed by `namePrefix` is found by its name in the file.
#[must_use]
pub fn object_line(text: &str, kind: &str, name: &str) -> Option<usize> {
    let mut line_no = 0;
    let mut start = 1;
    let mut doc: Vec<(usize, &str)> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        line_no += 1;
        let is_marker = crate::goyaml::stream::is_document_start(line);
        if !is_marker {
            doc.push((line_no, line));
        }
        if is_marker || lines.peek().is_none() {
            match match_document(&doc, kind, name) {
                Match::NameLine(n) => return Some(n),
                Match::Unknown => return Some(start),
                Match::Other => {}
            }
            doc.clear();
            start = line_no + 1;
        }
    }
    None
}

/// Whether a document is the object looked for.
enum Match {
    /// It is, and its `name:` is on this line.
    NameLine(usize),
    /// It is, but the name line could not be told.
    Unknown,
    /// It is another object (or not an object).
    Other,
}

fn match_document(doc: &[(usize, &str)], kind: &str, name: &str) -> Match {
    let text = doc.iter().fold(String::new(), |mut s, (_, l)| {
        s.push_str(l);
        s.push('\n');
        s
    });
    let Ok(v) = crate::manifest::parse_object(&text) else {
        return Match::Other;
    };
    if crate::flux::str_at(&v, &["kind"]) != Some(kind)
        || crate::flux::str_at(&v, &["metadata", "name"]) != Some(name)
    {
        return Match::Other;
    }
    // The `name:` line directly under `metadata:`: at the indentation of its first child.
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
                    return Match::NameLine(*n);
                }
            }
            Some((_, Some(ci))) if indent == ci && t.starts_with("name:") => {
                return Match::NameLine(*n);
            }
            _ => {}
        }
    }
    Match::Unknown
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
