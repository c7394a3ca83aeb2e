//! Behaviour tests for Flux's envsubst, one per quirk; sources are `fluxcd/pkg/envsubst`.

use super::*;

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

fn sub(input: &str, pairs: &[(&str, &str)]) -> String {
    String::from_utf8(eval(input.as_bytes(), &vars(pairs), false).expect("substitutes"))
        .expect("utf-8")
}

fn strict(input: &str, pairs: &[(&str, &str)]) -> Result<String, Error> {
    eval(input.as_bytes(), &vars(pairs), true).map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn err(input: &str) -> Error {
    eval(input.as_bytes(), &vars(&[("A", "alpha")]), false).expect_err("fails")
}

// parse.go: only `${` opens an expression.
#[test]
fn dollar_name_without_braces_is_left_alone() {
    assert_eq!(sub("$A $(cmd) $ A", &[("A", "x")]), "$A $(cmd) $ A");
}

#[test]
fn braced_variable_is_replaced() {
    assert_eq!(sub("a=${A};", &[("A", "x")]), "a=x;");
}

// scan.go: `$$` is an escape for `$` in text.
#[test]
fn double_dollar_escapes_an_expression() {
    assert_eq!(sub("echo $${HOME} $$A $$$$", &[]), "echo ${HOME} $A $$");
}

// parse.go: defaults are scanned without the escape mode.
#[test]
fn double_dollar_is_not_an_escape_inside_a_default() {
    assert_eq!(sub("${M:-$$A}", &[]), "$$A");
    assert_eq!(sub("${M:-$${A}}", &[("A", "alpha")]), "$alpha");
}

// parse.go: replacement patterns are scanned with `$$`, `\/` and `\\` escapes.
#[test]
fn escapes_apply_inside_replacement_patterns() {
    assert_eq!(sub("${P//\\//-}", &[("P", "a/b/c")]), "a-b-c");
    assert_eq!(sub("${P//\\\\/x}", &[("P", "a\\b")]), "axb");
}

#[test]
fn unset_variable_reads_empty_without_strict() {
    assert_eq!(sub("[${MISSING}]", &[]), "[]");
}

// template.go: strict mode fails on an unset variable referenced without a default.
#[test]
fn strict_mode_fails_on_unset_variable() {
    let e = strict("a: ${MISSING}", &[]).expect_err("strict");
    assert_eq!(
        e.kind,
        ErrorKind::NotSet {
            name: "MISSING".into()
        }
    );
    assert_eq!((e.line, e.column), (1, 4));
    assert_eq!(
        e.flux_message(),
        "variable not set (strict mode): \"MISSING\""
    );
}

#[test]
fn strict_mode_accepts_default_operators_on_unset_variable() {
    assert_eq!(
        strict("${M:-d}${M:=e}${M:+f}${M:?g}${M=h}", &[]).unwrap(),
        "defgh"
    );
}

#[test]
fn strict_mode_fails_on_transformations_of_unset_variable() {
    for input in ["${#M}", "${M^^}", "${M/a/b}", "${M:0:1}", "${M#x}"] {
        assert!(strict(input, &[]).is_err(), "{input}");
    }
}

// template.go evaluates arguments before the variable itself.
#[test]
fn strict_mode_reports_the_nested_unset_variable_first() {
    let e = strict("${OUTER:-${INNER}}", &[]).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::NotSet {
            name: "INNER".into()
        }
    );
    let e = strict("${A:-${INNER}}", &[("A", "set")]).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::NotSet {
            name: "INNER".into()
        }
    );
}

#[test]
fn empty_variable_counts_as_set_in_strict_mode() {
    assert_eq!(strict("[${E}]", &[("E", "")]).unwrap(), "[]");
}

// parse.go: `${A[0]}` stops at `[` and wants a `}`.
#[test]
fn indexed_expansion_is_a_hard_error() {
    let e = err("x\nif [ ${PIPESTATUS[0]} -ne 0 ]");
    assert_eq!(
        e.kind,
        ErrorKind::Parse(ParseErrorKind::MissingClosingBrace)
    );
    assert_eq!((e.line, e.column), (2, 6));
    assert_eq!(
        e.to_string(),
        "2:6: ${PIPESTATUS[0]}: missing closing brace (indexed expansions are not supported; \
         write $${PIPESTATUS[0]} to leave it to the shell)"
    );
}

#[test]
fn dash_without_colon_is_a_hard_error() {
    assert_eq!(
        err("${A-x}").kind,
        ErrorKind::Parse(ParseErrorKind::MissingClosingBrace)
    );
    assert_eq!(
        err("${A?x}").kind,
        ErrorKind::Parse(ParseErrorKind::MissingClosingBrace)
    );
    assert_eq!(
        err("${A+x}").kind,
        ErrorKind::Parse(ParseErrorKind::MissingClosingBrace)
    );
}

#[test]
fn unclosed_expression_is_an_error() {
    assert!(matches!(err("${A").kind, ErrorKind::Parse(_)));
    assert!(matches!(err("${A:-x").kind, ErrorKind::Parse(_)));
    assert_eq!(
        err("${}").kind,
        ErrorKind::Parse(ParseErrorKind::VariableName)
    );
}

#[test]
fn length_counts_bytes() {
    assert_eq!(sub("${#U}", &[("U", "éclair")]), "7");
    assert_eq!(sub("${#M}", &[]), "0");
}

#[test]
fn substring_counts_bytes_and_may_split_a_character() {
    let out = eval(b"${U:0:1}", &vars(&[("U", "\u{e9}x")]), false).unwrap();
    assert_eq!(out, vec![0xC3]);
}

#[test]
fn substring_offsets() {
    let v = [("A", "alphabet")];
    assert_eq!(sub("${A:2}", &v), "phabet");
    assert_eq!(sub("${A:2:3}", &v), "pha");
    assert_eq!(sub("${A:-3}", &v), "alphabet"); // `:-` is the default operator
    assert_eq!(sub("${A: -3}", &v), "alphabet"); // " -3" does not parse as an int
    assert_eq!(sub("${A:20}", &v), "");
    assert_eq!(sub("${A:2:100}", &v), "phabet");
    assert_eq!(sub("${A:x}", &v), "alphabet");
}

// envsubst v1.7.1 funcs.go toSubstr (funcs_test.go TestSubstr): a negative length counts
// back from the end of the value, and gives "" when that end comes before the offset.
#[test]
fn negative_substring_length_counts_back_from_the_end() {
    let v = [("A", "hello world")];
    assert_eq!(sub("${A:2:-1}", &v), "llo worl");
    assert_eq!(sub("${A:0:-3}", &v), "hello wo");
    assert_eq!(sub("${A:8:-8}", &v), "");
    // TestSubstr's toSubstr("hello world", "-4", "-1") has no template: `${A:-4:-1}` is the
    // default operator.
    assert_eq!(sub("${A:-4:-1}", &v), "hello world");
    assert_eq!(sub("${A:9:-1}", &[("A", "alpha")]), "");
}

// funcs.go slices s[pos:pos+length]; Go's int sum wraps, and a negative end panics.
#[test]
fn substring_end_wrapping_past_the_largest_int_is_an_error_not_a_panic() {
    let e = err("${A:1:9223372036854775807}");
    assert_eq!(
        e.kind,
        ErrorKind::SliceOutOfRange {
            start: 1,
            end: i64::MIN
        }
    );
}

#[test]
fn remove_shortest_and_longest_prefix_and_suffix() {
    let v = [("P", "/path/to/file.tar.gz")];
    assert_eq!(sub("${P#*/}", &v), "path/to/file.tar.gz");
    // Flux's `path` matcher (envsubst v1.7.1 path/match.go): `*` and `?` match `/`.
    assert_eq!(sub("${P##*.}", &v), "gz");
    assert_eq!(sub("${P##*/}", &v), "file.tar.gz");
    assert_eq!(sub("${P%%/*}", &v), "");
    assert_eq!(sub("${P#?}", &v), "path/to/file.tar.gz");
    assert_eq!(sub("${P%.*}", &v), "/path/to/file.tar");
    assert_eq!(sub("${P%%.*}", &v), "/path/to/file");
    let v = [("F", "bash.string.txt")];
    assert_eq!(sub("${F##*.}", &v), "txt");
    assert_eq!(sub("${F#*.}", &v), "string.txt");
}

#[test]
fn malformed_pattern_leaves_value_unchanged() {
    assert_eq!(sub("${A#[}", &[("A", "[abc")]), "[abc");
}

#[test]
fn replace_first_all_prefix_suffix() {
    let v = [("A", "abcabc")];
    assert_eq!(sub("${A/b/X}", &v), "aXcabc");
    assert_eq!(sub("${A//b/X}", &v), "aXcaXc");
    assert_eq!(sub("${A/#ab/X}", &v), "Xcabc");
    assert_eq!(sub("${A/%bc/X}", &v), "abcaX");
    assert_eq!(sub("${A//b/}", &v), "acac");
}

// parse.go: the pattern runs to the next `/`, braces included, so `${A/b}` never closes.
#[test]
fn replace_without_second_slash_is_a_bad_substitution() {
    assert_eq!(
        err("${A/b}").kind,
        ErrorKind::Parse(ParseErrorKind::BadSubstitution)
    );
    assert_eq!(sub("${A/b/}", &[("A", "abc")]), "ac");
}

// funcs.go: replacePrefix and replaceSuffix need both arguments, else return the value.
#[test]
fn prefix_replacement_without_replacement_is_a_no_op() {
    assert_eq!(sub("${A/#ab/}", &[("A", "abc")]), "abc");
}

// strings.Replace with an empty pattern inserts around every rune.
#[test]
fn empty_pattern_replace_all_inserts_between_runes() {
    assert_eq!(sub("${U//${E}/-}", &[("U", "Hé"), ("E", "")]), "-H-é-");
}

// The controller's parse.go has no empty-pattern case.
#[test]
fn empty_replace_pattern_does_not_parse() {
    assert_eq!(
        err("${A///x}").kind,
        ErrorKind::Parse(ParseErrorKind::FuncSubstitution)
    );
}

#[test]
fn case_functions_map_runes_as_go_does() {
    let v = [("S", "straße"), ("U", "éclair"), ("L", "HELLO")];
    assert_eq!(sub("${S^^}", &v), "STRAßE");
    assert_eq!(sub("${U^}", &v), "Éclair");
    assert_eq!(sub("${L,}", &v), "hELLO");
    assert_eq!(sub("${L,,}", &v), "hello");
}

// template.go: an operator lookupFunc does not know falls back to the default function.
#[test]
fn unknown_casing_operator_returns_the_value() {
    assert_eq!(sub("${L^,}", &[("L", "Hello")]), "Hello");
}

#[test]
fn default_operators_all_use_the_value_when_it_is_not_empty() {
    // Unlike bash, `:+` returns the value when it is set (funcs.go: toDefault).
    let v = [("A", "alpha"), ("E", "")];
    assert_eq!(
        sub("${A:-d}|${A:+d}|${A:=d}|${A=d}|${A:?d}", &v),
        "alpha|alpha|alpha|alpha|alpha"
    );
    assert_eq!(sub("${E:-d}|${E:+d}|${E=d}", &v), "d|d|d");
}

#[test]
fn default_may_contain_colons_slashes_and_nested_expressions() {
    let v = [("A", "alpha")];
    assert_eq!(sub("${M:-a:b/c}", &v), "a:b/c");
    assert_eq!(sub("${M:-x${A}y}", &v), "xalphay");
    assert_eq!(sub("${M:-${N:-deep}}", &v), "deep");
}

#[test]
fn unicode_letters_are_valid_in_names() {
    assert_eq!(sub("${é}", &[("é", "v")]), "v");
}

#[test]
fn text_after_a_nul_byte_is_dropped() {
    assert_eq!(sub("ab\0${A}cd", &[("A", "x")]), "ab");
}

#[test]
fn colon_followed_by_a_multibyte_rune_is_a_bad_substitution() {
    // parse.go unreads by the width of the peeked rune, landing inside the name.
    assert_eq!(
        err("${A:é}").kind,
        ErrorKind::Parse(ParseErrorKind::BadSubstitution)
    );
    assert_eq!(sub("${A:e}", &[("A", "alpha")]), "alpha");
}

#[test]
fn node_spans_tile_the_input() {
    let input = "a ${B:-${C}} $$ ${D//x/y} tail";
    let t = Template::parse(input.as_bytes()).unwrap();
    let mut at = 0;
    for n in t.nodes() {
        assert_eq!(n.span().start, at);
        at = n.span().end;
    }
    assert_eq!(at, input.len());
    let names: Vec<_> = t.exprs().iter().map(|e| e.param.as_str()).collect();
    assert_eq!(names, ["B", "C", "D"]);
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let input = "${A:-".repeat(10_000) + &"}".repeat(10_000);
    let e = eval(input.as_bytes(), &vars(&[]), false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse(ParseErrorKind::TooDeep));
}
