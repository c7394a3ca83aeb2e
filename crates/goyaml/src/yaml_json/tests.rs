//! `YAMLToJSON` cases, each with the bytes Go's `sigs.k8s.io/yaml` gives.

use std::fmt::Write as _;

use super::{yaml_to_json, YamlJsonError, MAX_DEPTH};

fn json(yaml: &str) -> String {
    match yaml_to_json(yaml) {
        Ok(json) => json,
        Err(err) => panic!("{yaml:?} failed: {err}"),
    }
}

fn fails(yaml: &str) -> YamlJsonError {
    match yaml_to_json(yaml) {
        Ok(json) => panic!("{yaml:?} should fail, gave {json}"),
        Err(err) => err,
    }
}

// resolve.go resolveMap: YAML 1.1 booleans.
#[test]
fn yes_plain_scalar_is_boolean() {
    assert_eq!(
        json("a: yes\nb: No\nc: ON\nd: off\ne: TRUE"),
        r#"{"a":true,"b":false,"c":true,"d":false,"e":true}"#
    );
}

#[test]
fn y_and_n_are_booleans() {
    assert_eq!(json("[y, Y, n, N]"), "[true,true,false,false]");
}

#[test]
fn quoted_yes_is_string() {
    assert_eq!(json("a: 'yes'\nb: \"on\""), r#"{"a":"yes","b":"on"}"#);
}

// sigs.k8s.io/yaml on go-yaml v2: a folded scalar keeps one line break around a
// more-indented line (scannerc.go yaml_parser_scan_block_scalar); saphyr gives two.
#[test]
fn folded_scalar_with_more_indented_lines_reads_as_go_yaml_reads_it() {
    assert_eq!(
        json("expression: >-\n  exists(c,\n    c.image.startsWith(\"x\")\n  )\nname: x\n"),
        r#"{"expression":"exists(c,\n  c.image.startsWith(\"x\")\n)","name":"x"}"#
    );
    assert_eq!(json("- >\n  a\n  b\n- c\n"), r#"["a b\n","c"]"#);
    // Checked against sigs.k8s.io/yaml v1.6.0 YAMLToJSON.
    assert_eq!(json("a: >\n  a\n  b\n\n  c\n"), r#"{"a":"a b\nc\n"}"#);
    assert_eq!(json("a: >+\n  a\n\n\n"), r#"{"a":"a\n\n\n"}"#);
    assert_eq!(json("a: >\n  [\n    x\n  ]\n"), r#"{"a":"[\n  x\n]\n"}"#);
    assert_eq!(json("a: >\n  x\n   \n  y\n"), r#"{"a":"x\n \ny\n"}"#);
}

#[test]
fn block_scalar_yes_is_string() {
    assert_eq!(
        json("a: |\n  yes\nb: >-\n  on\n"),
        r#"{"a":"yes\n","b":"on"}"#
    );
}

// yaml.go convertToJSONableObject: bool keys become "true"/"false".
#[test]
fn boolean_words_as_keys_become_string_keys() {
    assert_eq!(
        json("yes: 1\noff: 2\n'on': 3"),
        r#"{"false":2,"on":3,"true":1}"#
    );
}

#[test]
fn null_words_are_null() {
    assert_eq!(json("[~, null, Null, NULL, ]"), "[null,null,null,null]");
    assert_eq!(json("a:\nb: ~"), r#"{"a":null,"b":null}"#);
}

#[test]
fn empty_input_is_null() {
    assert_eq!(json(""), "null");
    assert_eq!(json("# only a comment\n"), "null");
    assert_eq!(json("---\n"), "null");
}

#[test]
fn leading_zero_is_octal() {
    assert_eq!(json("a: 010\nb: -017\nc: 0"), r#"{"a":8,"b":-15,"c":0}"#);
}

// resolve.go: ParseInt fails on 08, the float regexp matches, so it is the float 8.
#[test]
fn leading_zero_with_non_octal_digit_is_float() {
    assert_eq!(json("[08, 09.5]"), "[8,9.5]");
}

// resolve.go uses Go's ParseInt with base 0, so Go's 0x, 0o and 0b prefixes all work.
#[test]
fn hex_binary_and_go_octal_prefixes_are_integers() {
    assert_eq!(
        json("[0x1F, 0X1f, 0b101, 0o17, -0x10, +0b11, -0b101]"),
        "[31,31,5,15,-16,3,-5]"
    );
}

#[test]
fn underscores_are_ignored_in_numbers() {
    assert_eq!(
        json("[1_000, 0x_0A_74_AE, 685_230.15, .5_5]"),
        "[1000,685230,685230.15,0.55]"
    );
}

#[test]
fn signs_and_exponents_are_numbers() {
    assert_eq!(
        json("[+685230, -1, 6.8523e+5, 123456e1, 1., .5, -.5]"),
        "[685230,-1,685230,1234560,1,0.5,-0.5]"
    );
}

#[test]
fn int64_overflow_becomes_uint64() {
    assert_eq!(
        json("a: 9223372036854775807\nb: 12345678901234567890"),
        r#"{"a":9223372036854775807,"b":12345678901234567890}"#
    );
}

// resolve.go: past uint64 only the float regexp is left (decimal) or nothing (hex).
#[test]
fn integer_beyond_uint64_becomes_float_or_string() {
    assert_eq!(json("[18446744073709551616, -9223372036854775809, +18446744073709551615, 0x10000000000000000]"), r#"[18446744073709552000,-9223372036854776000,18446744073709552000,"0x10000000000000000"]"#);
}

#[test]
fn out_of_range_float_is_string() {
    assert_eq!(json("[1e400, 1e-400, .5e999]"), r#"["1e400",0,".5e999"]"#);
}

#[test]
fn not_quite_numbers_are_strings() {
    assert_eq!(
        json("[1.2.3, 500m, 0x, 1e, '-', 1_, 1:30, 0b2, 1__0, +.5.]"),
        r#"["1.2.3","500m","0x","1e","-",1,"1:30","0b2",10,"+.5."]"#
    );
}

// encode.go floatEncoder: ES6 number formatting.
#[test]
fn floats_are_formatted_like_go() {
    assert_eq!(json("[1.0, 1e3, 1.5e300, 1e-7, 1e21, 1e20, 0.000001, 0.0000001234, -0.0, 1.50, 3.141592653589793, 1e-10]"),
        "[1,1000,1.5e+300,1e-7,1e+21,100000000000000000000,0.000001,1.234e-7,-0,1.5,3.141592653589793,1e-10]");
}

#[test]
fn infinity_is_an_error() {
    assert!(matches!(
        fails("a: .inf"),
        YamlJsonError::UnsupportedFloat { .. }
    ));
    assert!(matches!(
        fails("a: -.Inf"),
        YamlJsonError::UnsupportedFloat { .. }
    ));
}

#[test]
fn nan_is_an_error() {
    assert!(matches!(
        fails("- .NaN"),
        YamlJsonError::UnsupportedFloat { .. }
    ));
}

// yaml.go: float keys go through FormatFloat(f, 'g', -1, 32).
#[test]
fn float_keys_use_float32_formatting() {
    assert_eq!(json("1.5: a\n0.1: b\n3.14159265358979: c\n1e7: d\n100000.0: e\n0.00001: f\n.inf: g\n-.inf: h\n.nan: i"),
        r#"{"-.inf":"h",".inf":"g",".nan":"i","0.1":"b","1.5":"a","100000":"e","1e+07":"d","1e-05":"f","3.1415927":"c"}"#);
}

#[test]
fn int_keys_become_strings() {
    assert_eq!(json("1: a\n010: b\n-3: c"), r#"{"-3":"c","1":"a","8":"b"}"#);
}

#[test]
fn null_key_is_an_error() {
    assert!(matches!(
        fails("~: a"),
        YamlJsonError::UnsupportedKey { .. }
    ));
    // parserc.go: a block mapping cannot start with `:`.
    assert!(matches!(
        fails(": a"),
        YamlJsonError::Syntax { ref go, .. } if go == "did not find expected key"
    ));
    assert!(matches!(
        fails("? \n: a"),
        YamlJsonError::UnsupportedKey { .. }
    ));
}

#[test]
fn uint64_key_is_an_error() {
    assert!(matches!(
        fails("12345678901234567890: a"),
        YamlJsonError::UnsupportedKey { .. }
    ));
}

// decode.go mapping(): "invalid map key".
#[test]
fn collection_key_is_an_error() {
    assert!(matches!(
        fails("? [a]\n: 1"),
        YamlJsonError::CollectionKey { .. }
    ));
    assert!(matches!(
        fails("? {a: 1}\n: 1"),
        YamlJsonError::CollectionKey { .. }
    ));
}

// decode.go setMapIndex: non-strict Unmarshal lets the last duplicate win.
#[test]
fn duplicate_keys_last_wins() {
    assert_eq!(json("a: 1\nb: 2\na: 3"), r#"{"a":3,"b":2}"#);
    assert_eq!(
        json("yes: 1\ntrue: 2\n1: x\n0x1: z"),
        r#"{"1":"z","true":2}"#
    );
    // Go's == on float64 keys: -0 equals 0, 1.0 equals 1.00, and the map keeps the later
    // key (mapassign updates float keys).
    assert_eq!(
        json("0.0: a\n-0.0: b\n1.0: c\n1.00: d"),
        json("-0.0: b\n1.00: d")
    );
}

#[test]
fn only_first_document_is_used() {
    assert_eq!(json("a: 1\n---\nb: 2\n"), r#"{"a":1}"#);
    assert_eq!(json("---\n---\na: 1\n"), "null");
}

// yaml.go parser.parse() stops after the first document (decode_test.go "garbage").
#[test]
fn garbage_after_first_document_is_ignored() {
    assert_eq!(json("---\nhello\n...\n}not yaml"), r#""hello""#);
    assert_eq!(json("a: 1\n---\n}{"), r#"{"a":1}"#);
}

#[test]
fn html_characters_are_escaped() {
    assert_eq!(json("a: <b> & c"), r#"{"a":"\u003cb\u003e \u0026 c"}"#);
    assert_eq!(json("<: x"), r#"{"\u003c":"x"}"#);
}

#[test]
fn line_and_paragraph_separators_are_escaped() {
    assert_eq!(json("a: \"x\\Ly\\Pz\""), r#"{"a":"x\u2028y\u2029z"}"#);
}

#[test]
fn control_characters_use_go_escapes() {
    assert_eq!(
        json(r#"a: "\0\x01\b\t\n\f\r\e\x7f\"\\/""#),
        r#"{"a":"\u0000\u0001\b\t\n\f\r\u001b"}"#.replace("\\u001b\"", "\\u001b\u{7f}\\\"\\\\/\"")
    );
}

#[test]
fn non_ascii_text_is_kept_raw() {
    assert_eq!(
        json("a: éclair ✓ \u{1F600}"),
        "{\"a\":\"éclair ✓ \u{1F600}\"}"
    );
}

#[test]
fn map_keys_are_sorted_bytewise() {
    assert_eq!(
        json("b: 1\nB: 2\na: 3\n_: 4\né: 5\n10: 6\n9: 7"),
        r#"{"10":6,"9":7,"B":2,"_":4,"a":3,"b":1,"é":5}"#
    );
}

#[test]
fn nested_collections_are_compact() {
    assert_eq!(
        json("a:\n  - b: [1, {c: d}]\n  - []\n  - {}\n"),
        r#"{"a":[{"b":[1,{"c":"d"}]},[],{}]}"#
    );
}

// decode.go: a timestamp decoded into interface{} stays the original string.
#[test]
fn timestamps_stay_strings() {
    assert_eq!(
        json("[2015-01-01, 2001-12-14t21:59:43.10-05:00, 2015-2-3T3:4:5Z]"),
        r#"["2015-01-01","2001-12-14t21:59:43.10-05:00","2015-2-3T3:4:5Z"]"#
    );
}

#[test]
fn timestamp_tag_checks_the_date() {
    assert_eq!(
        json("a: !!timestamp 2015-01-01\nb: !!timestamp '2015-02-24 18:19:39'"),
        r#"{"a":"2015-01-01","b":"2015-02-24 18:19:39"}"#
    );
    assert!(matches!(
        fails("a: !!timestamp 2015-02-30"),
        YamlJsonError::TagMismatch { .. }
    ));
    assert!(matches!(
        fails("a: !!timestamp soon"),
        YamlJsonError::TagMismatch { .. }
    ));
}

#[test]
fn str_tag_keeps_text() {
    assert_eq!(
        json("[!!str 123, !!str yes, !!str ~, !!str ]"),
        r#"["123","yes","~",""]"#
    );
}

// scannerc.go scan_tag_uri: `]` and `,` are URI characters, so `!!str]` is one tag and
// the sequence is never closed (checked against sigs.k8s.io/yaml v1.6.0).
#[test]
fn tag_swallows_a_closing_bracket() {
    assert!(matches!(
        fails("[!!str]"),
        YamlJsonError::Syntax { ref go, .. } if go == "line 1: did not find expected ',' or ']'"
    ));
}

// decode.go scalar(): a tagged quoted scalar is resolved against its tag.
#[test]
fn int_tag_on_quoted_text_is_an_integer() {
    assert_eq!(
        json("[!!int '12', !!bool \"yes\", !!null '']"),
        "[12,true,null]"
    );
}

// resolve.go: !!float accepts an int and converts it.
#[test]
fn float_tag_converts_an_integer() {
    assert_eq!(
        json("[!!float 1, !!float '0x10', !!float 2.5]"),
        "[1,16,2.5]"
    );
    assert!(matches!(
        fails("a: !!float 18446744073709551615"),
        YamlJsonError::TagMismatch { .. }
    ));
}

#[test]
fn mismatched_tag_is_an_error() {
    assert!(matches!(
        fails("a: !!int abc"),
        YamlJsonError::TagMismatch { .. }
    ));
    assert!(matches!(
        fails("a: !!bool 1"),
        YamlJsonError::TagMismatch { .. }
    ));
    assert!(matches!(
        fails("a: !!int 1.5"),
        YamlJsonError::TagMismatch { .. }
    ));
}

#[test]
fn unknown_tags_keep_the_text() {
    assert_eq!(
        json("[!foo 12, ! yes, !<tag:example.com:x> on, !!map 1]"),
        r#"["12","yes","on","1"]"#
    );
}

#[test]
fn collection_tags_are_ignored() {
    assert_eq!(
        json("a: !!str {b: 1}\nc: !foo [1]"),
        r#"{"a":{"b":1},"c":[1]}"#
    );
}

#[test]
fn binary_tag_is_base64_decoded() {
    assert_eq!(
        json("a: !!binary aGVsbG8=\nb: !!binary |\n  aGVs\n  bG8=\n"),
        r#"{"a":"hello","b":"hello"}"#
    );
}

// encode.go: invalid UTF-8 becomes one \ufffd per bad byte.
#[test]
fn binary_invalid_utf8_becomes_replacement_characters() {
    assert_eq!(json("a: !!binary gIGC"), r#"{"a":"\ufffd\ufffd\ufffd"}"#);
}

#[test]
fn invalid_binary_is_an_error() {
    assert!(matches!(
        fails("a: !!binary not base64!"),
        YamlJsonError::InvalidBinary { .. }
    ));
    assert!(matches!(
        fails("a: !!binary aGVsbG8"),
        YamlJsonError::InvalidBinary { .. }
    ));
}

#[test]
fn merge_key_merges_a_mapping() {
    assert_eq!(
        json("base: &b {x: 1, w: 2}\nd:\n  <<: *b\n  z: 3\n"),
        r#"{"base":{"w":2,"x":1},"d":{"w":2,"x":1,"z":3}}"#
    );
}

// decode.go merge(): the sequence is merged last to first, so earlier mappings win.
#[test]
fn merge_sequence_earlier_mapping_wins() {
    assert_eq!(
        json("a: &a {k: 1}\nb: &b {k: 2, m: 2}\nc:\n  <<: [*a, *b]\n"),
        r#"{"a":{"k":1},"b":{"k":2,"m":2},"c":{"k":1,"m":2}}"#
    );
}

// yaml.v2 (unlike v3) merges into the map as it goes: a merge overrides earlier keys.
#[test]
fn merge_overrides_keys_set_before_it() {
    assert_eq!(
        json("a: &a {k: 1}\nb:\n  k: 0\n  <<: *a\nc:\n  <<: *a\n  k: 2\n"),
        r#"{"a":{"k":1},"b":{"k":1},"c":{"k":2}}"#
    );
}

#[test]
fn quoted_merge_key_is_a_plain_key() {
    assert_eq!(
        json("'<<': {a: 1}\nb: <<"),
        r#"{"\u003c\u003c":{"a":1},"b":"\u003c\u003c"}"#
    );
}

#[test]
fn merge_of_a_scalar_is_an_error() {
    assert!(matches!(
        fails("a:\n  <<: 1\n"),
        YamlJsonError::InvalidMerge { .. }
    ));
    assert!(matches!(
        fails("x: &x [1]\na:\n  <<: *x\n"),
        YamlJsonError::InvalidMerge { .. }
    ));
    assert!(matches!(
        fails("a:\n  <<: [1]\n"),
        YamlJsonError::InvalidMerge { .. }
    ));
}

#[test]
fn aliases_are_expanded() {
    assert_eq!(
        json("a: &x {b: [1, 2]}\nc: *x\nd: &y foo\ne: *y\nf: &y bar\ng: *y\n"),
        r#"{"a":{"b":[1,2]},"c":{"b":[1,2]},"d":"foo","e":"foo","f":"bar","g":"bar"}"#
    );
}

#[test]
fn aliased_key_is_resolved() {
    assert_eq!(json("a: &k 5\n*k : six"), r#"{"5":"six","a":5}"#);
}

#[test]
fn recursive_alias_is_an_error() {
    assert!(matches!(
        fails("a: &x [1, *x]"),
        YamlJsonError::RecursiveAlias { .. }
    ));
}

#[test]
fn unknown_alias_is_an_error() {
    assert!(matches!(fails("a: *nope"), YamlJsonError::Syntax { .. }));
}

// decode.go allowedAliasRatio(): the billion-laughs guard.
#[test]
fn excessive_aliasing_is_refused() {
    let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = i - 1;
        let _ = writeln!(doc, "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]");
    }
    assert_eq!(fails(&doc), YamlJsonError::ExcessiveAliasing);
}

// fluxsim's own bound (alias.rs): a few large nodes aliased many times pass go-yaml's
// ratio (301 decodes) but would copy 300 MB.
#[test]
fn a_large_string_aliased_many_times_crosses_the_aliased_bytes_bound() {
    let doc = |n: usize| {
        let mut doc = format!("s: &s {}\nl:\n", "x".repeat(1 << 20));
        for _ in 0..n {
            doc.push_str("- *s\n");
        }
        doc
    };
    let err = fails(&doc(300));
    assert!(
        matches!(err, YamlJsonError::AliasedBytes { bytes } if bytes > crate::alias::MAX_ALIASED_BYTES && bytes < crate::alias::MAX_ALIASED_BYTES + (2 << 20)),
        "{err:?}"
    );
    assert!(err.to_string().contains("32 MiB"), "{err}");
    // The same string aliased 20 times is within the bound.
    assert!(yaml_to_json(&doc(20)).is_ok());
}

// scannerc.go: tabs are eaten after the `:` of a simple key.
#[test]
fn tab_after_colon_is_allowed() {
    assert_eq!(
        json("a:\tb\nc: \t d\ne:\t-f\n"),
        r#"{"a":"b","c":"d","e":"-f"}"#
    );
}

// scannerc.go: tabs are not eaten after a block entry `-`.
#[test]
fn tab_after_dash_is_an_error() {
    assert!(matches!(fails("- \tb"), YamlJsonError::Syntax { .. }));
    assert!(matches!(fails("a:\n-\tb"), YamlJsonError::Syntax { .. }));
    assert_eq!(json("a: [b,\tc]"), r#"{"a":["b","c"]}"#);
}

#[test]
fn tab_at_line_start_is_an_error() {
    assert!(matches!(fails("\tfoo"), YamlJsonError::Syntax { .. }));
    assert!(matches!(fails("a:\n  \tb"), YamlJsonError::Syntax { .. }));
    assert_eq!(json("a: [b,\n\tc]"), r#"{"a":["b","c"]}"#);
    // scannerc.go scan_block_scalar_breaks: a tab before the indentation is known.
    assert!(matches!(
        fails("a: |\n  \tb\n"),
        YamlJsonError::Syntax { ref go, .. }
            if go == "line 2: found a tab character where an indentation space is expected"
    ));
    assert_eq!(json("a: |\n  x\n  \tb\n"), r#"{"a":"x\n\tb\n"}"#);
}

// scannerc.go reads `#` after a quoted scalar as a comment even without a space.
#[test]
fn comment_right_after_quoted_scalar_is_a_comment() {
    assert_eq!(json("a: \"b{\"#c\nd: 'e'#f"), r#"{"a":"b{","d":"e"}"#);
    assert_eq!(json("a: b#c"), r#"{"a":"b#c"}"#);
}

// scannerc.go does not check the indentation of quoted continuation lines.
#[test]
fn quoted_scalar_continuation_may_be_unindented() {
    assert_eq!(
        json("q: \"a\rb\"\ns: 'c\r\nd'\n"),
        r#"{"q":"a b","s":"c d"}"#
    );
    assert_eq!(
        json("x:\n  q: \"a\n\n b\\\nc\"\n"),
        r#"{"x":{"q":"a\nbc"}}"#
    );
    assert!(matches!(
        fails("q: \"a\n---\n\""),
        YamlJsonError::Syntax { .. }
    ));
}

#[test]
fn tab_indentation_is_an_error() {
    assert!(matches!(
        fails("a:\n\tb: 1\n"),
        YamlJsonError::Syntax { .. }
    ));
}

// readerc.go: control characters are not allowed.
#[test]
fn control_character_is_an_error() {
    assert!(matches!(
        fails("a: x\u{1}y"),
        YamlJsonError::ControlCharacter { code: 1, .. }
    ));
    assert!(matches!(
        fails("a: \"x\u{7f}\""),
        YamlJsonError::ControlCharacter { code: 0x7f, .. }
    ));
    assert!(matches!(
        fails("a: 1\n\u{1b}"),
        YamlJsonError::ControlCharacter { .. }
    ));
}

#[test]
fn byte_order_mark_is_skipped() {
    assert_eq!(json("\u{feff}a: 1"), r#"{"a":1}"#);
}

// parserc.go: "found incompatible YAML document".
#[test]
fn yaml_1_2_directive_is_an_error() {
    assert!(matches!(
        fails("%YAML 1.2\n---\na: 1"),
        YamlJsonError::Syntax { ref go, .. } if go == "found incompatible YAML document"
    ));
    assert_eq!(json("%YAML 1.1\n---\na: 1"), r#"{"a":1}"#);
}

#[test]
fn syntax_error_names_line_and_column() {
    let err = fails("a: 1\nb: [unclosed\n");
    assert!(
        matches!(err, YamlJsonError::Syntax { line: 3, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("invalid YAML at line 3, column "),
        "{err}"
    );
    let err = fails("a: b: c");
    assert!(
        matches!(
            err,
            YamlJsonError::Syntax {
                line: 1,
                column: 5,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn decode_error_names_line_and_column() {
    let err = fails("a:\n  b: !!int x\n");
    assert_eq!(
        err.to_string(),
        "cannot decode `x` as !!int at line 2, column 6"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // scannerc.go: max_flow_level and max_indents are 10000.
    let deep = "[".repeat(200_000);
    assert!(matches!(
        fails(&deep),
        YamlJsonError::Syntax { ref go, .. } if go == "exceeded max depth of 10000"
    ));
    assert!(matches!(
        fails(&"- ".repeat(100_000)),
        YamlJsonError::Syntax { ref go, .. } if go == "exceeded max depth of 10000"
    ));
    // Deeper than MAX_DEPTH but within Go's limits: fluxsim gives up (module doc).
    assert!(matches!(
        fails(&block_nesting(MAX_DEPTH + 5)),
        YamlJsonError::TooDeep { .. }
    ));
    assert!(matches!(
        fails(&"- ".repeat(MAX_DEPTH + 5)),
        YamlJsonError::TooDeep { .. }
    ));
}

/// `k:` mappings nested `levels` deep, ending in a scalar.
fn block_nesting(levels: usize) -> String {
    let mut block = String::new();
    for level in 0..levels {
        block.push_str(&" ".repeat(level));
        block.push_str("k:\n");
    }
    block.push_str(&" ".repeat(levels));
    block.push_str("v\n");
    block
}

#[test]
fn nesting_at_the_limit_is_accepted_on_a_small_stack() {
    let doc = block_nesting(MAX_DEPTH);
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || yaml_to_json(&doc))
        .expect("spawn");
    let out = handle.join().expect("no stack overflow").expect("converts");
    assert!(
        out.starts_with(r#"{"k":{"k":"#) && out.contains(r#""v""#),
        "{out}"
    );
}

#[test]
fn alias_chains_count_towards_depth() {
    let mut doc = String::from("a0: &a0 [x]\n");
    for i in 1..(MAX_DEPTH + 5) {
        let _ = writeln!(doc, "a{i}: &a{i} [*a{}]", i - 1);
    }
    assert!(matches!(fails(&doc), YamlJsonError::TooDeep { .. }));
}

#[test]
fn kubernetes_manifest_round_trips() {
    let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  labels:\n    app.kubernetes.io/name: app\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/org/app:1.2.3\n        args: [\"--flag=${X}\", --yes]\n        env:\n        - name: DEBUG\n          value: \"false\"\n        resources:\n          limits: {cpu: 500m, memory: 128Mi}\n";
    assert_eq!(
        json(doc),
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app.kubernetes.io/name":"app"},"name":"app"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"args":["--flag=${X}","--yes"],"env":[{"name":"DEBUG","value":"false"}],"image":"ghcr.io/org/app:1.2.3","name":"app","resources":{"limits":{"cpu":"500m","memory":"128Mi"}}}]}}}}"#
    );
}

/// Vectors whose input has no `$` and whose var names are valid: envsubst is the identity
/// there, so `YAMLToJSON` alone must give the recorded output (or fail when Go failed).
#[test]
fn conformance_vectors_without_substitution() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/conformance/envsubst-public.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let valid_name = |name: &str| {
        let mut bytes = name.bytes();
        matches!(bytes.next(), Some(b'_' | b'a'..=b'z' | b'A'..=b'Z'))
            && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
    };
    let (mut run, mut failures) = (0, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let vector: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let input = vector["input"].as_str().unwrap_or_default();
        let names_valid = vector["vars"]
            .as_object()
            .is_some_and(|vars| vars.keys().all(|k| valid_name(k)));
        if vector["mode"] != "flux" || input.contains('$') || !names_valid {
            continue;
        }
        run += 1;
        let got = yaml_to_json(input);
        let ok = vector["ok"].as_bool().unwrap_or(false);
        let matches = match (&got, ok) {
            (Ok(out), true) => Some(out.as_str()) == vector["output"].as_str(),
            (Err(_), false) => true,
            _ => false,
        };
        if !matches {
            failures.push(format!("{}: got {got:?}", vector["id"]));
        }
    }
    println!("{run} conformance vectors without substitution checked");
    assert!(run > 0);
    assert!(failures.is_empty(), "{failures:#?}");
}

// yaml_to_value is yaml_to_json read by serde_json, without the text: numbers keep the
// kind serde_json gives their Go text (a float with no fraction reads as an integer),
// and bytes that are not UTF-8 (from !!binary) read as encoding/json writes them.
#[test]
fn yaml_to_value_reads_what_serde_json_reads_from_yaml_to_json() {
    for yaml in [
        "a: 100.0\nb: -0.0\nc: 1e21\nd: 1.5\ne: -7\nf: 18446744073709551615\ng: 0x10",
        "a: !!binary /w==\nb: !!binary //79\n? !!binary /w==\n: k\n",
        "a: !!binary gIGC\nb: \"\u{fffd}\"\n",
        "a: '<&>'\nb: \"\\u2028\\x01\\t\"\nc: [1, 2.50, ~, yes]\n",
        "",
        "- 1e-7\n- 123456789012345678901234567890\n- .inf2\n",
        "a: &x {b: 1}\nc: *x\n<<: {d: 2}\n",
    ] {
        let via_text: serde_json::Value =
            serde_json::from_str(&yaml_to_json(yaml).unwrap()).unwrap();
        let direct = super::yaml_to_value(yaml).unwrap();
        assert_eq!(direct, via_text, "{yaml:?}");
        assert_eq!(direct.to_string(), via_text.to_string(), "{yaml:?}");
    }
}
