//! Splitting YAML streams into documents.

/// Splits a YAML stream at document markers (`---` at the start of a line, alone or followed
/// by a space or comment). Empty documents are dropped. Each document keeps its text exactly.
#[must_use]
pub fn split_documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let is_marker = body == "---"
            || (body.starts_with("--- ") || body.starts_with("---\t") || body.starts_with("---#"));
        if is_marker {
            push_doc(&mut docs, &text[start..offset]);
            start = offset + line.len();
        }
        offset += line.len();
    }
    push_doc(&mut docs, &text[start..]);
    docs
}

/// Why a YAML document could not be read as an object.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not YAML as Go's `sigs.k8s.io/yaml` reads it.
    #[error(transparent)]
    Yaml(#[from] crate::goyaml::yaml_json::YamlJsonError),
    /// The JSON it converts to does not parse (a bug of the converter, if ever).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Reads one YAML document as kustomize-controller would (YAML 1.1, via
/// `sigs.k8s.io/yaml.YAMLToJSON`) into a JSON value.
pub fn parse_object(doc: &str) -> Result<serde_json::Value, ParseError> {
    let json = crate::goyaml::yaml_json::yaml_to_json(doc)?;
    Ok(serde_json::from_str(&json)?)
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

    #[test]
    fn a_marker_inside_a_line_is_not_a_split() {
        let docs = split_documents("a: |\n  x\n  ---\nb: ---\n");
        assert_eq!(docs.len(), 1);
    }
}
