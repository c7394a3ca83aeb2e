//! go-yaml v2's syntax, one behaviour per test; every expectation was checked against
//! `sigs.k8s.io/yaml` v1.6.0 `YAMLToJSON` (`oracle/yamltojson`).

use super::parser::Parser;
use super::{EventKind, ScalarStyle};
use crate::yaml_json::{yaml_to_json, YamlJsonError};

fn json(yaml: &str) -> String {
    yaml_to_json(yaml).unwrap_or_else(|e| panic!("{yaml:?} failed: {e}"))
}

/// The message yaml.v2 gives for a syntax error (after `yaml: `).
fn go_error(yaml: &str) -> String {
    match yaml_to_json(yaml) {
        Err(YamlJsonError::Syntax { go, .. }) => go,
        Err(YamlJsonError::ControlCharacter { .. }) => "control characters are not allowed".into(),
        other => panic!("{yaml:?} should be a syntax error, gave {other:?}"),
    }
}

// yamlprivateh.go is_break: NEL, LS and PS end a line in YAML 1.1.
#[test]
fn nel_ls_and_ps_are_line_breaks() {
    assert_eq!(json("a: x\u{85}b: 1"), r#"{"a":"x","b":1}"#);
    assert_eq!(json("a: x\u{2028}b: 1"), r#"{"a":"x","b":1}"#);
    // scannerc.go read_line keeps LS and PS in a quoted scalar rather than folding them.
    assert_eq!(json("a: \"x\u{2028}y\""), r#"{"a":"x\u2028y"}"#);
}

// scannerc.go scan_flow_scalar: `\/` is YAML 1.2; YAML 1.1 has no such escape.
#[test]
fn slash_escape_is_unknown() {
    assert_eq!(go_error("a: \"\\/\""), "found unknown escape character");
    assert_eq!(
        go_error("a: \"\\x4\""),
        "did not find expected hexdecimal number"
    );
    assert_eq!(
        go_error("a: \"\\ud800\""),
        "found invalid Unicode character escape code"
    );
    assert_eq!(json("a: \"\\U0001F600\""), r#"{"a":"😀"}"#);
}

// scannerc.go scan_plain_scalar: in a flow collection `:` ends a plain scalar only before
// white space; `?` starts a key even without one.
#[test]
fn colon_in_a_flow_plain_scalar_ends_it_only_before_white_space() {
    assert_eq!(json("a: [b:]"), r#"{"a":["b:"]}"#);
    assert_eq!(json("a: [b:c]"), r#"{"a":["b:c"]}"#);
    assert_eq!(json("a: [b: c]"), r#"{"a":[{"b":"c"}]}"#);
    assert_eq!(json("a: [?b]"), r#"{"a":[{"b":null}]}"#);
}

// scannerc.go fetch_next_token: `-` before `]` is a plain scalar; `|` and `>` start no token
// in a flow collection; a tag must be followed by white space.
#[test]
fn flow_indicators_as_yaml_1_1_reads_them() {
    assert_eq!(json("a: [-]"), r#"{"a":["-"]}"#);
    assert_eq!(
        go_error("a: [|]"),
        "found character that cannot start any token"
    );
    assert_eq!(
        go_error("a: [!!null]"),
        "line 1: did not find expected ',' or ']'"
    );
}

// scannerc.go: a flow collection has no indentation, and `\r` is a line break.
#[test]
fn flow_collection_lines_need_no_indentation() {
    assert_eq!(json("a: [b,\r  c]"), r#"{"a":["b","c"]}"#);
    assert_eq!(json("a: [b,\nc]"), r#"{"a":["b","c"]}"#);
}

// scannerc.go scan_to_next_token: tabs separate tokens only after `:`, never after `-`.
#[test]
fn tabs_separate_tokens_only_where_no_key_can_start() {
    assert_eq!(json("a:\tb"), r#"{"a":"b"}"#);
    assert_eq!(json("a: b\tc"), r#"{"a":"b\tc"}"#);
    assert_eq!(
        go_error("- \tb"),
        "found character that cannot start any token"
    );
}

// readerc.go: a BOM opens the stream; elsewhere it is text, except at the start of a line
// when the reader's buffer happens to start with one (is_bom looks at the buffer's start).
#[test]
fn byte_order_mark_is_text_inside_the_stream() {
    assert_eq!(json("\u{feff}a: 1"), r#"{"a":1}"#);
    assert_eq!(json("a: x\u{feff}y"), "{\"a\":\"x\u{feff}y\"}");
    assert_eq!(json("a: 1\n\u{feff}b: 2"), "{\"a\":1,\"\u{feff}b\":2}");
    // The buffer is refilled right at the BOM (byte 509 of a 512-byte window), so the first
    // character of the next line is skipped as if it were a BOM.
    let at_window_end = format!("k: {}\u{feff}\nzz: 1\n", "x".repeat(506));
    assert_eq!(
        go_error(&at_window_end),
        "line 1: did not find expected key"
    );
    let before = format!("k: {}\u{feff}\nzz: 1\n", "x".repeat(505));
    assert!(json(&before).ends_with(r#","zz":1}"#));
}

// readerc.go decodes 512 bytes at a time: a control character is an error once read, and
// one past what the first document needs may never be read.
#[test]
fn control_characters_are_refused_as_the_reader_reaches_them() {
    assert_eq!(
        go_error("a: 1\n\u{1}"),
        "control characters are not allowed"
    );
    assert_eq!(
        go_error("a: 1\n---\n\u{1}"),
        "control characters are not allowed"
    );
    let far = format!("a: 1\n---\n{}\u{1}", "b".repeat(1000));
    assert_eq!(json(&far), r#"{"a":1}"#);
}

// readerc.go checks each decoded character against the YAML 1.1 printable set, whatever its
// width: C1 controls, DEL and U+FFFE are refused; NEL, U+A0, the BMP and the astral planes
// are read.
#[test]
fn characters_of_every_width_are_checked_as_the_reader_decodes_them() {
    assert_eq!(
        json("a: \"\u{e9}\u{20ac}\u{1f600}\u{a0}x\"\n"),
        "{\"a\":\"\u{e9}\u{20ac}\u{1f600}\u{a0}x\"}"
    );
    for bad in [
        '\u{7f}', '\u{80}', '\u{9f}', '\u{fffe}', '\u{ffff}', '\u{1}',
    ] {
        assert_eq!(
            go_error(&format!("a: \"x{bad}\"\n")),
            "control characters are not allowed",
            "{bad:?}"
        );
    }
}

// scannerc.go simple_key_is_valid: a simple key is at most 1024 characters.
#[test]
fn simple_key_is_at_most_1024_characters() {
    let key = "k".repeat(1024);
    assert_eq!(json(&format!("{key}: v")), format!(r#"{{"{key}":"v"}}"#));
    assert_eq!(
        go_error(&format!("{key}k: v")),
        "mapping values are not allowed in this context"
    );
    let long = "k".repeat(1100);
    assert_eq!(
        json(&format!("? {long}\n: v")),
        format!(r#"{{"{long}":"v"}}"#)
    );
}

// scannerc.go decrease_flow_level: an empty flow collection drops the simple key saved for
// its own `[`, so `[]: b` reads as the document `[]` (the key and value are never reached).
#[test]
fn empty_flow_collection_as_a_key_ends_the_document() {
    assert_eq!(json("[]: b"), "[]");
    assert_eq!(json("{}: b"), "{}");
    assert!(matches!(
        yaml_to_json("[a]: b"),
        Err(YamlJsonError::CollectionKey { .. })
    ));
}

// decode.go document(): the document ends after its root node; a comment ends a plain
// scalar, so `a #b: x` at the top is the scalar `a`.
#[test]
fn comment_after_a_top_level_scalar_ends_the_document() {
    assert_eq!(json("a #b: x\nc: d"), r#""a""#);
}

// parserc.go: an anchor with no content is an empty (null) node, here a null key.
#[test]
fn anchor_without_content_is_null() {
    assert!(matches!(
        yaml_to_json("&a: x"),
        Err(YamlJsonError::UnsupportedKey { .. })
    ));
    assert_eq!(json("a: &x\nb: *x"), r#"{"a":null,"b":null}"#);
}

// parserc.go process_directives: only %YAML 1.1; %TAG handles resolve tags in the document.
#[test]
fn directives_as_yaml_1_1_reads_them() {
    assert_eq!(
        go_error("%YAML 1.2\n--- a"),
        "found incompatible YAML document"
    );
    assert_eq!(go_error("%FOO x\n--- a"), "found unknown directive name");
    assert_eq!(json("%TAG !e! tag:yaml.org,2002:\n--- !e!int \"7\""), "7");
    assert_eq!(go_error("!e!int 7"), "found undefined tag handle");
    assert_eq!(json("a: !<tag:yaml.org,2002:int> \"12\""), r#"{"a":12}"#);
}

// scannerc.go scan_block_scalar_breaks: no tab before a block scalar's indentation is known.
#[test]
fn tab_cannot_start_a_block_scalar() {
    assert_eq!(
        go_error("a: |\n  \tb"),
        "line 2: found a tab character where an indentation space is expected"
    );
}

// decode.go fail(): parser errors print the 0-based line, scanner errors the 1-based one.
#[test]
fn error_lines_are_numbered_as_yaml_v2_numbers_them() {
    // Scanner error on the third line: 1-based.
    assert_eq!(
        go_error("a: 1\nb: 2\nc: \"\\/\""),
        "line 3: found unknown escape character"
    );
    // Parser error found at the third line: printed as line 2.
    assert_eq!(
        go_error("a: 1\nb: 2\n- c"),
        "line 2: did not find expected key"
    );
}

#[test]
fn parser_gives_events_with_styles_and_resolved_tags() {
    let mut parser = Parser::new("- !!int '1'\n- &x b\n- *x\n");
    let mut kinds = Vec::new();
    while let Some(event) = parser.next_event().expect("parses") {
        kinds.push(event.kind);
    }
    assert_eq!(
        kinds[3],
        EventKind::Scalar {
            anchor: None,
            tag: Some("tag:yaml.org,2002:int".into()),
            value: "1".into(),
            style: ScalarStyle::SingleQuoted,
        }
    );
    assert_eq!(kinds[5], EventKind::Alias { anchor: "x".into() });
}
