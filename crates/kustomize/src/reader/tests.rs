//! The native reader against go-yaml and kyaml, case by case.

use super::*;

fn one(text: &str) -> Node {
    let mut docs = read_documents(text).expect("reads");
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

#[test]
fn a_folded_scalar_with_a_more_indented_line_reads_as_kustomize_prints_it() {
    let n = one("a: >-\n  f(c,\n    d\n  )\n");
    let m = n.as_map().expect("map");
    assert_eq!(m.get("a"), Some(&Node::Str("f(c,\n\n  d\n)".into())));
}

#[test]
fn yaml_1_2_words_are_strings_and_legacy_octal_is_a_number() {
    let n = one("a: yes\nb: on\nc: 010\nd: 0o10\ne: 1_000\nf: True\ng: ~\nh: 0x1F\n");
    let m = n.as_map().expect("map");
    assert_eq!(m.get("a"), Some(&Node::Str("yes".into())));
    assert_eq!(m.get("b"), Some(&Node::Str("on".into())));
    assert_eq!(m.get("c"), Some(&Node::Int(8)));
    assert_eq!(m.get("d"), Some(&Node::Int(8)));
    assert_eq!(m.get("e"), Some(&Node::Int(1000)));
    assert_eq!(m.get("f"), Some(&Node::Bool(true)));
    assert_eq!(m.get("g"), Some(&Node::Null));
    assert_eq!(m.get("h"), Some(&Node::Int(31)));
}

// go-yaml v3 decode.go `allowedAliasRatio`: nine levels of ten aliases (10^9 nodes)
// stop at the ratio, long before the copies are made.
#[test]
fn a_billion_laughs_stops_at_go_yaml_s_alias_ratio() {
    use std::fmt::Write as _;
    let mut doc = String::from("a0: &a0 lol\n");
    for i in 1..10 {
        let prev = i - 1;
        let items = vec![format!("*a{prev}"); 10].join(", ");
        let _ = writeln!(doc, "a{i}: &a{i} [{items}]");
    }
    let err = read_documents(&doc).unwrap_err();
    let ReadError::Bound(b) = &err else {
        panic!("{err:?}")
    };
    assert!(
        matches!(b, goyaml::alias::AliasBound::Ratio { .. }),
        "{b:?}"
    );
    assert!(b.to_string().contains("excessive aliasing"), "{b}");
}

// fluxsim's own bound (goyaml::alias::MAX_ALIASED_BYTES): a 1 MB string aliased 300
// times passes go-yaml's ratio (too few nodes) but not the bytes.
#[test]
fn a_large_string_aliased_many_times_stops_at_the_aliased_bytes_bound() {
    let doc = |n: usize| {
        let mut doc = format!("s: &s {}\nl:\n", "x".repeat(1 << 20));
        for _ in 0..n {
            doc.push_str("- *s\n");
        }
        doc
    };
    assert!(matches!(
        read_documents(&doc(300)),
        Err(ReadError::Bound(goyaml::alias::AliasBound::Bytes { .. }))
    ));
    assert!(read_documents(&doc(20)).is_ok());
}

#[test]
fn aliases_are_expanded_into_copies() {
    let n = one("a: &x 1\nb: *x\nc: &m {d: [1]}\ne: *m\n");
    let m = n.as_map().expect("map");
    assert_eq!(m.get("b"), Some(&Node::Int(1)));
    assert_eq!(m.get("e"), m.get("c"));
    // A merge key is resolved (see `merge_keys_resolve_as_kyaml_de_anchors_them`).
    assert!(read_documents("a: &x {c: 1}\nb:\n  <<: *x\n").is_ok());
}

// kyaml's DeAnchor (kyaml/yaml/alias.go): own fields win, then the first mapping of a
// merge list; new keys are appended; the merge key's field is gone.
#[test]
fn merge_keys_resolve_as_kyaml_de_anchors_them() {
    let n = one(
        "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2, w: 2}\nc:\n  w: 0\n  <<: [*a, *b]\nd:\n  <<: {k: v}\n",
    );
    let m = n.as_map().expect("map");
    let c = m.get("c").and_then(Node::as_map).expect("c");
    let keys: Vec<&str> = c.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["w", "y", "z", "x"]);
    assert_eq!(c.get("w"), Some(&Node::Int(0)));
    assert_eq!(c.get("y"), Some(&Node::Int(1)));
    assert_eq!(c.get("z"), Some(&Node::Int(2)));
    assert_eq!(c.get("x"), Some(&Node::Int(1)));
    let d = m.get("d").and_then(Node::as_map).expect("d");
    assert_eq!(d.0, vec![("k".to_string(), Node::Str("v".into()))]);
    // What kustomize fails on, or resolves by a rule not reproduced, is delegated.
    for text in [
        "a: {<<: 1}\n",
        "a: &s [{x: 1}]\nb: {<<: *s}\n",
        "a: {<<: [1]}\n",
        "a: {<<: {x: 1}, <<: {y: 1}}\n",
        "a: {\"<<\": 1}\n",
        "a: {<<: {x: 1}, '<<': 2}\n",
        "a: {b: &x {<<: {k: 1}}, <<: *x}\n",
    ] {
        assert!(
            matches!(read_documents(text), Err(ReadError::Unsupported(_))),
            "{text}"
        );
    }
}

// resolve.go's `.` branch: strconv.ParseFloat of the whole text, which a path is not.
#[test]
fn a_path_starting_with_a_dot_and_holding_an_underscore_is_a_string() {
    let n = one("path: ./clusters/${CLUSTER_NAME}\n");
    let m = n.as_map().expect("map");
    assert_eq!(
        m.get("path"),
        Some(&Node::Str("./clusters/${CLUSTER_NAME}".into()))
    );
    for text in ["a: .1_5\n", "a: ._5\n"] {
        assert!(
            matches!(read_documents(text), Err(ReadError::Unsupported(_))),
            "{text}"
        );
    }
}

#[test]
fn unquoted_timestamps_are_unsupported() {
    assert!(matches!(
        read_documents("a: 2001-12-14\n"),
        Err(ReadError::Unsupported(_))
    ));
}

#[test]
fn empty_documents_are_dropped() {
    let docs = read_documents("---\n# nothing\n---\na: 1\n---\n").expect("reads");
    assert_eq!(docs.len(), 1);
}

/// Random JSON values with the strings and numbers that test a reader.
fn random_value(next: &mut impl FnMut() -> u64, depth: usize) -> serde_json::Value {
    use serde_json::{json, Value};
    const PIECES: &[&str] = &[
        "a",
        "yes",
        "on",
        "~",
        "null",
        "010",
        "0x1F",
        "1_000",
        "1e3",
        ".5",
        "-",
        ": ",
        " #",
        "#",
        "'",
        "\"",
        "\\",
        "\n",
        "\r",
        "\t",
        "\u{8}",
        "\u{c}",
        "\u{1}",
        "\u{7f}",
        "\u{85}",
        "\u{9f}",
        "\u{a0}",
        "\u{2028}",
        "\u{feff}",
        "é",
        "😀",
        " ",
        "[",
        "{",
        "*x",
        "&x",
        "!!str",
        "%",
        "2001-12-14",
        "<<",
        "\\/",
    ];
    let pick = |n: u64, len: usize| usize::try_from(n).unwrap_or(0) % len;
    match next() % if depth > 3 { 6 } else { 8 } {
        0 => Value::Null,
        1 => json!(next() % 2 == 0),
        2 => {
            const N: &[&str] = &[
                "0",
                "-0",
                "7",
                "-12",
                "9223372036854775807",
                "18446744073709551615",
                "-9223372036854775808",
                "0.5",
                "-0.0",
                "1e21",
                "1.5e-7",
                "123456789.125",
            ];
            serde_json::from_str(N[pick(next(), N.len())]).unwrap_or(Value::Null)
        }
        3..=5 => {
            let len = pick(next(), 5);
            Value::String(
                (0..len)
                    .map(|_| PIECES[pick(next(), PIECES.len())])
                    .collect(),
            )
        }
        6 => Value::Array(
            (0..pick(next(), 4))
                .map(|_| random_value(next, depth + 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..pick(next(), 4))
                .map(|_| {
                    let key: String = (0..=pick(next(), 3))
                        .map(|_| PIECES[pick(next(), PIECES.len())])
                        .collect();
                    (key, random_value(next, depth + 1))
                })
                .collect(),
        ),
    }
}

// The serde_json reading of canonical JSON gives what the YAML parser gives, on random
// values and on every JSON output of the YAML re-read vectors; the texts it declines
// (characters the YAML reader may refuse, non-canonical text) take the parser.
#[test]
fn canonical_json_reads_as_the_yaml_parser_reads_it() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut texts: Vec<String> = (0..4000)
        .map(|_| {
            let v = random_value(&mut next, 0);
            serde_json::Value::Object(
                [
                    ("kind".to_string(), serde_json::json!("X")),
                    ("v".to_string(), v),
                ]
                .into_iter()
                .collect(),
            )
            .to_string()
        })
        .collect();
    let vectors = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/conformance/yaml-reread.jsonl"
    ))
    .expect("the vectors");
    for line in vectors.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a vector");
        if let Some(Ok(out)) = v["output"]
            .as_str()
            .map(serde_json::from_str::<serde_json::Value>)
        {
            texts.push(out.to_string());
        }
    }
    texts.push("{\"a\":1, \"b\":2}".into());
    texts.push("{\"a\":1,\"a\":2}".into());
    let mut fast = 0;
    for text in &texts {
        if let Some(got) = read_canonical_json(text) {
            fast += 1;
            assert_eq!(got, read_yaml(text), "{text}");
        }
    }
    assert!(fast > 6000, "{fast} of {} texts read as JSON", texts.len());
    // Not canonical: a space, a repeated key.
    assert!(read_canonical_json("{\"a\":1, \"b\":2}").is_none());
    assert!(read_canonical_json("{\"a\":1,\"a\":2}").is_none());
    assert!(read_canonical_json("{\"a\":\"\u{85}\"}").is_none());
}
