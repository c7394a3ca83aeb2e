//! Reading `${...}` expressions out of text with Flux's own parser, going on past the errors
//! that stop Flux (so that every bad expression of an object is reported, not only the first),
//! and telling scripts and shell variables apart from Flux references.

use crate::envsubst::{Error, Template};

/// One `${...}` expression that Flux parses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ref {
    /// The var name.
    pub(crate) name: String,
    /// The operator as Flux spells it (`""`, `":-"`, `"^^"` ...).
    pub(crate) op: String,
    /// The expression as written, `${` to `}`.
    pub(crate) text: String,
    /// Supplies its own value when the var is unset (strict mode lets it through).
    pub(crate) has_default: bool,
}

/// Every expression of `text` Flux would parse, and every error that stops Flux's parser.
///
/// Flux parses an object's whole text and fails at the first error (`envsubst/parse`); to
/// report them all, parsing resumes just after the `${` that failed, which Flux would have
/// taken no further.
pub(crate) fn scan(text: &str) -> (Vec<Ref>, Vec<Error>) {
    let bytes = text.as_bytes();
    let mut refs = Vec::new();
    let mut errors = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        match Template::parse(&bytes[pos..]) {
            Ok(t) => {
                collect(&t, &bytes[pos..], &mut refs);
                break;
            }
            Err(e) => {
                let at = pos + e.offset;
                // The text before the failing `${` still holds good expressions (unless the
                // failure is nested inside one, which then cannot be read either).
                if let Ok(t) = Template::parse(&bytes[pos..at]) {
                    collect(&t, &bytes[pos..at], &mut refs);
                }
                // Re-locate the error in the whole text (line and column).
                let whole = Error {
                    offset: at,
                    line: bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
                    column: text
                        .get(..at)
                        .and_then(|s| s.rsplit('\n').next())
                        .map_or(1, |l| l.chars().count() + 1),
                    ..e
                };
                errors.push(whole);
                pos = at + 2;
            }
        }
    }
    (refs, errors)
}

fn collect(t: &Template, src: &[u8], out: &mut Vec<Ref>) {
    for e in t.exprs() {
        out.push(Ref {
            name: e.param.clone(),
            op: e.op.clone(),
            text: String::from_utf8_lossy(src.get(e.span.clone()).unwrap_or_default()).into_owned(),
            has_default: e.has_default(),
        });
    }
}

/// Raw `${...}` snippets in text that Flux does not substitute (up to the closing brace on
/// the same line), `$${...}` escapes included, for reporting what ships verbatim.
pub(crate) fn literal_snippets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("${") {
        let rest = &text[at..];
        let line = rest.split('\n').next().unwrap_or(rest);
        let end = line.find('}').map_or(line.len(), |i| i + 1);
        let start = if text[..at].ends_with('$') {
            at - 1
        } else {
            at
        };
        out.push(text[start..at + end].to_string());
    }
    out.dedup();
    out
}

/// Whether a string value reads as a script: a shebang, a cloud-config, or `set -e`-style
/// shell options on a line of their own.
pub(crate) fn looks_like_script(value: &str) -> bool {
    let head = value.trim_start();
    head.starts_with("#!")
        || head.starts_with("#cloud-config")
        || value.lines().any(|l| {
            let t = l.trim_start();
            t.starts_with("set -e")
                || t.starts_with("set -u")
                || t.starts_with("set -o")
                || t.starts_with("set -x")
        })
}

/// Variables every shell sets or scripts use by convention: a reference to one of these in a
/// script is meant for the shell, whatever default it carries.
const SHELL_VARS: &[&str] = &[
    "BASHPID",
    "BASH_REMATCH",
    "BASH_SOURCE",
    "EUID",
    "FUNCNAME",
    "HOME",
    "HOSTNAME",
    "IFS",
    "LANG",
    "LINENO",
    "OLDPWD",
    "OPTARG",
    "OPTIND",
    "PATH",
    "PIPESTATUS",
    "PPID",
    "PWD",
    "RANDOM",
    "REPLY",
    "SECONDS",
    "SHELL",
    "TERM",
    "TMPDIR",
    "UID",
    "USER",
];

/// A name that reads as a shell variable rather than a cluster var: a well-known shell
/// variable, a positional parameter (`${1}`), or a name with a lower-case letter (cluster
/// vars are upper case by convention; a defined lower-case var is never asked about).
pub(crate) fn shell_looking(name: &str) -> bool {
    SHELL_VARS.contains(&name)
        || name.bytes().all(|b| b.is_ascii_digit())
        || name.chars().any(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    // fluxsim's envsubst follows fluxcd/pkg envsubst/parse: `${A[0]}` is "missing closing
    // brace", `${@}` "unable to parse variable name".
    #[test]
    fn scan_reports_every_unparsable_expression_and_keeps_the_good_ones() {
        let (refs, errors) = scan("a: ${A}\nb: ${PIPESTATUS[0]}\nc: ${B:-x}\nd: ${@}\ne: ${C}\n");
        let names: Vec<&str> = refs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "C"]);
        assert_eq!(errors.len(), 2);
        assert_eq!((errors[0].line, errors[0].column), (2, 4));
        assert_eq!(errors[0].expr, "${PIPESTATUS[0]}");
        assert_eq!((errors[1].line, errors[1].column), (4, 4));
    }

    #[test]
    fn nested_references_are_found_with_their_defaults() {
        let (refs, errors) = scan("x: ${A:-${B}}");
        assert!(errors.is_empty());
        assert_eq!(refs.len(), 2);
        assert!(refs[0].has_default && refs[0].text == "${A:-${B}}");
        assert!(!refs[1].has_default && refs[1].name == "B");
    }

    #[test]
    fn escaped_dollar_is_not_a_reference() {
        let (refs, errors) = scan("x: $${A} $B");
        assert!(refs.is_empty() && errors.is_empty());
        assert_eq!(literal_snippets("x: $${A} and ${B"), ["$${A}", "${B"]);
    }

    #[test]
    fn scripts_are_recognised_by_shebang_cloud_config_or_set_options() {
        assert!(looks_like_script("#!/bin/sh\necho hi\n"));
        assert!(looks_like_script("#cloud-config\nruncmd: []\n"));
        assert!(looks_like_script("  set -euo pipefail\n"));
        assert!(!looks_like_script("server {\n  listen 80;\n}\n"));
    }

    #[test]
    fn shell_looking_names() {
        assert!(shell_looking("HOME"));
        assert!(shell_looking("1"));
        assert!(shell_looking("key"));
        assert!(!shell_looking("CLUSTER_NAME"));
    }
}
