//! Prints what fluxsim's YAML 1.1 re-read (`goyaml::yaml_json::yaml_to_json`) makes of
//! each JSON-quoted YAML text on standard input, one per line, in the form of
//! `oracle/yamltojson` (Flux's `sigs.k8s.io/yaml.YAMLToJSON`): the JSON, or `error: ` and
//! the error (`yaml: ` and yaml.v2's own message for syntax errors). `scripts/yaml-fuzz`
//! compares the two. It also checks, on every text, that `yaml_to_value` (the reading
//! without the JSON text, which renders use) gives what `serde_json` reads from that JSON,
//! and fails loudly when it does not.

use std::io::{BufRead, Write};

use fluxsim::goyaml::yaml_json::{yaml_to_json, yaml_to_value, YamlJsonError};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().lines() {
        let line = line.expect("reading standard input");
        let text: String = serde_json::from_str(&line).expect("each line must be a JSON string");
        let via_text = yaml_to_json(&text).map(|j| {
            serde_json::from_str::<serde_json::Value>(&j).expect("yaml_to_json gives JSON")
        });
        assert_eq!(
            via_text,
            yaml_to_value(&text),
            "yaml_to_value differs from yaml_to_json on {line}"
        );
        let result = match yaml_to_json(&text) {
            Ok(json) => json,
            Err(YamlJsonError::Syntax { go, .. }) => format!("error: yaml: {go}"),
            Err(YamlJsonError::ControlCharacter { .. }) => {
                "error: yaml: control characters are not allowed".to_string()
            }
            Err(e) => format!("error: {e}"),
        };
        writeln!(out, "{result}").expect("writing standard output");
    }
}
