//! What Helm would fetch while it validates values against a chart's `values.schema.json`
//! (helm v4.2.4 `pkg/chart/common/util/jsonschema.go`): its compiler loads `file://`,
//! `http://` and `https://` references, resolved against `file:///values.schema.json`, so a
//! `$ref` that is not a fragment of the same document reads a file of the machine (a relative
//! `other.json` is `/other.json`) or the network, and an unknown `$schema` is fetched too.
//! fluxsim reads the schemas of the chart (its subcharts' too, packed or not) before Helm
//! runs: a reference to the network needs `--allow-network`, one to a file is never followed
//! (on the cluster it would read helm-controller's own file system, which nobody can know).

use serde_json::Value;

/// Meta-schemas the compiler knows without loading them, after `http://` or `https://`
/// (`santhosh-tekuri/jsonschema` v6.0.2 `draft.go` `draftFromURL`).
const KNOWN_DRAFTS: &[&str] = &[
    "json-schema.org/schema",
    "json-schema.org/draft/2020-12/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-04/schema",
];

/// Whether `url` names a meta-schema the compiler holds (any fragment after it).
fn known_draft(url: &str) -> bool {
    let base = url.split('#').next().unwrap_or_default();
    let rest = base
        .strip_prefix("http://")
        .or_else(|| base.strip_prefix("https://"));
    rest.is_some_and(|r| KNOWN_DRAFTS.contains(&r))
}

/// A reference of a chart's schema that Helm would load from outside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outside {
    /// An `http(s)` URL: needs the network.
    Network {
        /// The schema file in the chart.
        file: String,
        /// The reference.
        reference: String,
    },
    /// Anything else (a file of the machine): never followed.
    File {
        /// The schema file in the chart.
        file: String,
        /// The reference.
        reference: String,
    },
}

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outside::Network { file, reference } => write!(
                f,
                "{file}: `{reference}` would be fetched over the network while Helm validates \
                 the values; --network any lets it"
            ),
            Outside::File { file, reference } => write!(
                f,
                "{file}: `{reference}` names a file outside the chart, which Helm would read \
                 from the machine while it validates the values; fluxsim never follows it"
            ),
        }
    }
}

/// The first reference of the chart `files` (path, bytes) that leaves its schema documents,
/// in path order. Packed subcharts (`charts/*.tgz`) are opened, to a depth of 4.
#[must_use]
pub fn outside_reference(files: &[(String, Vec<u8>)]) -> Option<Outside> {
    outside_in(files, "", 0)
}

fn outside_in(files: &[(String, Vec<u8>)], prefix: &str, depth: usize) -> Option<Outside> {
    for (path, bytes) in files {
        let shown = format!("{prefix}{path}");
        if path == "values.schema.json" || path.ends_with("/values.schema.json") {
            if let Ok(doc) = serde_json::from_slice::<Value>(bytes) {
                if let Some(found) = first_outside(&doc, &shown) {
                    return Some(found);
                }
            }
        } else if depth < 4
            && path.starts_with("charts/")
            && std::path::Path::new(path)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tgz") || e.eq_ignore_ascii_case("gz"))
        {
            if let Ok(sub) = super::package::untar(bytes) {
                if let Some(found) = outside_in(&sub, &format!("{shown}!/"), depth + 1) {
                    return Some(found);
                }
            }
        }
    }
    None
}

fn first_outside(v: &Value, file: &str) -> Option<Outside> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let Value::String(s) = x else {
                    if let Some(found) = first_outside(x, file) {
                        return Some(found);
                    }
                    continue;
                };
                let leaves = match k.as_str() {
                    "$ref" | "$dynamicRef" | "$recursiveRef" | "$schema" => {
                        !s.starts_with('#') && !known_draft(s)
                    }
                    _ => false,
                };
                if leaves {
                    let lower = s.to_ascii_lowercase();
                    let reference = s.clone();
                    let file = file.to_string();
                    return Some(
                        if lower.starts_with("http://") || lower.starts_with("https://") {
                            Outside::Network { file, reference }
                        } else {
                            Outside::File { file, reference }
                        },
                    );
                }
            }
            None
        }
        Value::Array(a) => a.iter().find_map(|x| first_outside(x, file)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(schema: &str) -> Vec<(String, Vec<u8>)> {
        vec![
            ("Chart.yaml".into(), b"name: c\nversion: 1.0.0\n".to_vec()),
            ("values.schema.json".into(), schema.as_bytes().to_vec()),
        ]
    }

    // helm v4.2.4 pkg/chart/common/util/jsonschema.go: SchemeURLLoader{file, http, https}.
    #[test]
    fn a_schema_ref_to_a_url_needs_the_network_and_one_to_a_file_is_refused() {
        let net = chart(r#"{"properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}}"#);
        assert!(matches!(
            outside_reference(&net),
            Some(Outside::Network { .. })
        ));
        for r in ["file:///etc/passwd", "other.json", "../x.json#/a"] {
            let f = chart(&format!(r#"{{"items": [{{"$ref": "{r}"}}]}}"#));
            assert_eq!(
                outside_reference(&f),
                Some(Outside::File {
                    file: "values.schema.json".into(),
                    reference: r.into()
                }),
                "{r}"
            );
        }
    }

    #[test]
    fn fragments_and_known_drafts_stay_in_the_document() {
        let ok = chart(
            r##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/definitions/a"}}}"##,
        );
        assert_eq!(outside_reference(&ok), None);
        let latest = chart(r#"{"$schema": "http://json-schema.org/schema#"}"#);
        assert_eq!(outside_reference(&latest), None);
        let unknown = chart(r#"{"$schema": "https://schemas.example.net/meta"}"#);
        assert!(matches!(
            outside_reference(&unknown),
            Some(Outside::Network { .. })
        ));
    }

    #[test]
    fn a_subchart_schema_is_read_too() {
        let mut files = chart("{}");
        files.push((
            "charts/sub/values.schema.json".into(),
            br#"{"$ref": "https://evil.example/s.json"}"#.to_vec(),
        ));
        assert_eq!(
            outside_reference(&files),
            Some(Outside::Network {
                file: "charts/sub/values.schema.json".into(),
                reference: "https://evil.example/s.json".into()
            })
        );
    }
}
