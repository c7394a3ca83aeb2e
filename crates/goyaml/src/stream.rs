//! YAML streams as libyaml's scanner divides them: one rule for what starts a document,
//! used by every reader that splits a stream or finds a line in one (the manifests and
//! build output fluxsim reads, origin annotations, the lines findings point at).

/// Whether `line` (its line break or not) starts a document: `---` at the first column,
/// followed by a blank or the end of the line (scannerc.go `yaml_parser_fetch_more_tokens`
/// checks `---` then `is_blankz`). `---#` and `----` are plain text.
#[must_use]
pub fn is_document_start(line: &str) -> bool {
    let body = line.trim_end_matches(['\n', '\r']);
    body.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Splits a YAML stream at document markers ([`is_document_start`]); the marker lines are
/// left out and empty documents (blank, comments, `...`) are dropped. Each document keeps
/// its text exactly.
#[must_use]
pub fn split_documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if is_document_start(line) {
            push_doc(&mut docs, &text[start..offset]);
            start = offset + line.len();
        }
        offset += line.len();
    }
    push_doc(&mut docs, &text[start..]);
    docs
}

fn push_doc<'a>(docs: &mut Vec<&'a str>, doc: &'a str) {
    let meaningful = doc.lines().any(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#') && t != "..."
    });
    if meaningful {
        docs.push(doc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_split_at_markers_and_empty_ones_dropped() {
        let docs = split_documents("---\na: 1\n---\n# only a comment\n---\nb: 2\n");
        assert_eq!(docs, vec!["a: 1\n", "b: 2\n"]);
    }

    // scannerc.go: `---` starts a document only before a blank or a line break.
    #[test]
    fn a_marker_needs_a_blank_after_it() {
        assert!(is_document_start("---\n"));
        assert!(is_document_start("---\r\n"));
        assert!(is_document_start("--- # note"));
        assert!(is_document_start("---\tx"));
        assert!(!is_document_start("---#x"));
        assert!(!is_document_start("----"));
        assert!(!is_document_start(" ---"));
        assert_eq!(split_documents("a: 1\n---#x\nb: 2\n").len(), 1);
    }

    #[test]
    fn a_marker_inside_a_line_is_not_a_split() {
        let docs = split_documents("a: |\n  x\n  ---\nb: ---\n");
        assert_eq!(docs.len(), 1);
    }
}
