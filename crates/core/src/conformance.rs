//! Running envsubst conformance vectors (`testdata/conformance/README.md` gives the schema).
//!
//! The vectors were produced by running Flux's own Go code; a vector passes when fluxsim
//! succeeds or fails as Go did and, on success, produces the same bytes.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;

crate::message_error! {
    /// A conformance vector file that cannot be read.
    pub struct VectorError;
}

/// One conformance vector.
#[derive(Debug, Clone, Deserialize)]
pub struct Vector {
    /// Unique id.
    pub id: String,
    /// `raw` (envsubst alone) or `flux` (one resource's postBuild substitution).
    pub mode: String,
    /// Strict substitution.
    pub strict: bool,
    /// The text to substitute.
    pub input: String,
    /// The variables; absent names are unset.
    pub vars: BTreeMap<String, String>,
    /// Whether Go returned a result.
    pub ok: bool,
    /// The result, when `ok`.
    #[serde(default)]
    pub output: Option<String>,
    /// The exact result bytes, when they are not valid UTF-8.
    #[serde(default)]
    pub output_base64: Option<String>,
    /// Go's error text (informational, except for a panic: its runtime message is matched).
    #[serde(default)]
    pub error: Option<String>,
    /// Go panicked (`${A:0:-1}`): the controller reports the runtime error's text.
    #[serde(default)]
    pub panic: bool,
}

/// How one vector went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorOutcome {
    /// Same success and same bytes, or failure where Go failed.
    Pass,
    /// A difference, described for a person.
    Fail {
        /// What Go produced.
        expected: String,
        /// What fluxsim produced.
        actual: String,
    },
}

/// Parses a JSON-lines file of vectors; an error names the line.
pub fn parse_vectors(text: &str) -> Result<Vec<Vector>, VectorError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| VectorError(format!("line {}: {e}", i + 1)))
        })
        .collect()
}

/// Runs fluxsim on one vector as the schema says.
#[must_use]
pub fn run_vector(v: &Vector) -> VectorOutcome {
    let actual: Result<Vec<u8>, String> = match v.mode.as_str() {
        "raw" => {
            crate::envsubst::eval(v.input.as_bytes(), &v.vars, v.strict).map_err(|e| e.to_string())
        }
        "flux" => crate::postbuild::substitute_text(&v.input, &v.vars, v.strict)
            .map(String::into_bytes)
            .map_err(|e| e.to_string()),
        other => Err(format!("unknown mode {other:?}")),
    };
    let expected: Result<Vec<u8>, String> = if v.ok {
        match &v.output_base64 {
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| format!("bad output_base64: {e}")),
            None => Ok(v.output.clone().unwrap_or_default().into_bytes()),
        }
    } else {
        Err(v.error.clone().unwrap_or_default())
    };
    // A panic's runtime message (`slice bounds out of range [:-1]`) is what the controller
    // puts in its status: fluxsim says the same words.
    let same_panic = |e: &str, a: &str| !v.panic || a.contains(e.trim_start_matches("panic: "));
    match (&expected, &actual) {
        (Ok(e), Ok(a)) if e == a => VectorOutcome::Pass,
        (Err(e), Err(a)) if same_panic(e, a) => VectorOutcome::Pass,
        _ => VectorOutcome::Fail {
            expected: show(&expected),
            actual: show(&actual),
        },
    }
}

fn show(r: &Result<Vec<u8>, String>) -> String {
    match r {
        Ok(b) => format!("ok {:?}", String::from_utf8_lossy(b)),
        Err(e) => format!("error: {e}"),
    }
}

/// A vector of Flux's sourceignore tests (`testdata/flux-suites/sourceignore.jsonl`, made by
/// `oracle/suites` with `fluxcd/pkg/sourceignore`): a `pattern` vector gives
/// `ParsePattern(line, domain).Match(path, dir)` as `NoMatch`, `Exclude` or `Include`; a
/// `matcher` vector whether `NewMatcher(patterns)` (or `NewDefaultMatcher(patterns,
/// defaults)`) matches `path`; an `archive` vector is a tree (see `tests/it/flux_suites.rs`).
#[must_use]
pub fn ignore_pattern_result(
    line: &str,
    domain: &[String],
    path: &[String],
    dir: bool,
) -> &'static str {
    let parts: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::source::pattern_result(line, domain, &parts, dir)
}

/// See [`ignore_pattern_result`]: each pattern is (line, domain); `defaults` is the domain of
/// `NewDefaultMatcher`'s VCS and default patterns, `None` for `NewMatcher`.
#[must_use]
pub fn ignore_matcher_match(
    patterns: &[(String, Vec<String>)],
    defaults: Option<&[String]>,
    path: &[String],
    dir: bool,
) -> bool {
    let parts: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::source::matcher_match(patterns, defaults, &parts, dir)
}
