//! Flux's variable substitution language (`github.com/fluxcd/pkg/envsubst`), reimplemented.
//!
//! `lexer` → `parser` → `eval`, as in Flux. Only `${...}` is expanded; `$VAR` and `$(cmd)` are
//! text; `$$` is an escape in text and in replacement patterns but not in defaults. See
//! `GRAMMAR.md` next to this file for the language as Flux accepts it.
//!
//! A crate of its own, with no dependency on the rest of fluxsim (which re-exports it as
//! `fluxsim::envsubst`): its bench is `cargo bench -p fluxsim-envsubst`, its fuzz target
//! `fuzz/fuzz_targets/envsubst.rs`, and the conformance vectors produced by Flux's own Go code
//! (`testdata/conformance/`) run through `fluxsim::conformance` in `tests/it/conformance.rs`.

mod case;
mod eval;
mod lexer;
mod node;
mod parser;
mod pattern;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use node::{Expr, Node};
pub use parser::ParseErrorKind;

/// Variables for a substitution: a name maps to a value, or is unset.
pub trait Vars {
    /// The value of `name`, or `None` when it is unset.
    fn get_var(&self, name: &str) -> Option<&[u8]>;
}

impl Vars for BTreeMap<String, String> {
    fn get_var(&self, name: &str) -> Option<&[u8]> {
        self.get(name).map(String::as_bytes)
    }
}

impl<S: std::hash::BuildHasher> Vars for HashMap<String, String, S> {
    fn get_var(&self, name: &str) -> Option<&[u8]> {
        self.get(name).map(String::as_bytes)
    }
}

/// What went wrong in a substitution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The template does not parse (Flux fails the whole Kustomization).
    Parse(ParseErrorKind),
    /// Strict mode: the variable is unset and the expression gives no default.
    NotSet {
        /// The variable's name.
        name: String,
    },
    /// `${v:off:len}` whose end wraps past the largest int: Flux's Go code panics on it.
    SliceOutOfRange {
        /// The computed start offset.
        start: i64,
        /// The computed end offset.
        end: i64,
    },
    /// The result would grow past fluxsim's bound ([`OUTPUT_GROWTH_LIMIT`] beyond the
    /// input's size): a bound of fluxsim's, where Flux would run out of memory.
    TooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
}

/// How many bytes an evaluation's output may exceed its input by. No object that large can
/// be applied (the API server refuses requests over 3 MiB), so a template that grows past it
/// is a mistake or an attack, and stopping it keeps a run's memory bounded.
pub const OUTPUT_GROWTH_LIMIT: usize = 16 << 20;

/// A substitution error, located at the expression that caused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset of the expression's `${` in the input.
    pub offset: usize,
    /// 1-based line of the expression.
    pub line: usize,
    /// 1-based column (in characters) of the expression.
    pub column: usize,
    /// The expression as written (up to its closing brace, on one line).
    pub expr: String,
}

impl Error {
    fn at(kind: ErrorKind, source: &[u8], offset: usize) -> Self {
        let offset = offset.min(source.len());
        let line_start = source[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = source[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = String::from_utf8_lossy(&source[line_start..offset])
            .chars()
            .count()
            + 1;
        let rest = &source[offset..];
        let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let rest = &rest[..line_end];
        let end = rest
            .iter()
            .position(|&b| b == b'}')
            .map_or(rest.len(), |i| i + 1);
        let mut expr = String::from_utf8_lossy(&rest[..end]).into_owned();
        if expr.chars().count() > 80 {
            expr = expr.chars().take(77).collect::<String>() + "...";
        }
        Error {
            kind,
            offset,
            line,
            column,
            expr,
        }
    }

    /// Flux's own words for this error (what the controller would put in its status).
    #[must_use]
    pub fn flux_message(&self) -> String {
        match &self.kind {
            ErrorKind::Parse(k) => k.flux_message().to_string(),
            ErrorKind::NotSet { name } => format!("variable not set (strict mode): {name:?}"),
            // Go's runtime (boundsError in runtime/error.go): a negative high bound is
            // reported alone, one below the low bound with both.
            ErrorKind::SliceOutOfRange { end, .. } if *end < 0 => {
                format!("runtime error: slice bounds out of range [:{end}]")
            }
            ErrorKind::SliceOutOfRange { start, end } => {
                format!("runtime error: slice bounds out of range [{start}:{end}]")
            }
            ErrorKind::TooLarge { limit } => {
                format!("the substituted text would exceed {limit} bytes")
            }
        }
    }

    /// What the user can do about it.
    #[must_use]
    pub fn hint(&self) -> String {
        match &self.kind {
            ErrorKind::Parse(ParseErrorKind::MissingClosingBrace) => {
                let after_name = self
                    .expr
                    .chars()
                    .skip(2)
                    .find(|c| !(c.is_alphanumeric() || *c == '_'));
                match after_name {
                    Some('[') => format!(
                        "indexed expansions are not supported; write ${} to leave it to the \
                         shell",
                        self.expr
                    ),
                    Some('-' | '?' | '+') => format!(
                        "Flux supports only the `:` forms of this operator (`:-`, `:?`, `:+`); \
                         write ${} to leave it to the shell",
                        self.expr
                    ),
                    _ => format!(
                        "write ${} if this is meant for a shell, not for Flux",
                        self.expr
                    ),
                }
            }
            ErrorKind::Parse(ParseErrorKind::TooDeep) => {
                "fluxsim follows at most 200 nested expressions".to_string()
            }
            ErrorKind::Parse(_) => format!(
                "Flux cannot parse this expression; write ${} if it is meant for a shell",
                self.expr
            ),
            ErrorKind::NotSet { name } => format!(
                "`{name}` is unset and has no default; define it in postBuild.substitute or \
                 substituteFrom, give it a default with ${{{name}:=value}}, or write $${{{name}}} \
                 for a literal"
            ),
            ErrorKind::SliceOutOfRange { .. } => {
                "the offset plus the length wraps past the largest integer; Flux's controller panics \
                 here"
                    .to_string()
            }
            ErrorKind::TooLarge { .. } => format!(
                "fluxsim stops an object's substitution {} MiB beyond its size; no object that \
                 large can be applied",
                OUTPUT_GROWTH_LIMIT >> 20
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {} ({})",
            self.line,
            self.column,
            self.expr,
            self.flux_message(),
            self.hint()
        )
    }
}

impl std::error::Error for Error {}

/// A parsed template: evaluate it as many times as needed.
#[derive(Debug, Clone)]
pub struct Template {
    source: Vec<u8>,
    nodes: Vec<Node>,
}

impl Template {
    /// Parses `input` as Flux's `envsubst.Parse` does.
    pub fn parse(input: &[u8]) -> Result<Self, Error> {
        match parser::Parser::new(input).parse() {
            Ok(nodes) => Ok(Template {
                source: input.to_vec(),
                nodes,
            }),
            Err(f) => Err(Error::at(ErrorKind::Parse(f.kind), input, f.open)),
        }
    }

    /// The top-level nodes, in input order; their spans tile the input.
    #[must_use]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Every `${...}` expression, nested ones included, in input order.
    #[must_use]
    pub fn exprs(&self) -> Vec<&Expr> {
        fn walk<'a>(nodes: &'a [Node], out: &mut Vec<&'a Expr>) {
            for n in nodes {
                if let Node::Expr(e) = n {
                    out.push(e);
                    for a in &e.args {
                        walk(a, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.nodes, &mut out);
        out.sort_by_key(|e| e.span.start);
        out
    }

    /// Evaluates the template. With `strict`, an unset variable without a default is an
    /// error; without it, unset variables read as empty (Flux's mapping says they exist).
    /// The output may grow at most [`OUTPUT_GROWTH_LIMIT`] bytes beyond the input.
    pub fn eval(&self, vars: &dyn Vars, strict: bool) -> Result<Vec<u8>, Error> {
        self.eval_within(
            vars,
            strict,
            self.source.len().saturating_add(OUTPUT_GROWTH_LIMIT),
        )
    }

    /// [`Self::eval`] with an output of at most `limit` bytes.
    pub fn eval_within(
        &self,
        vars: &dyn Vars,
        strict: bool,
        limit: usize,
    ) -> Result<Vec<u8>, Error> {
        let lookup = |name: &str| vars.get_var(name);
        let mut out = Vec::with_capacity(self.source.len().min(limit));
        eval::eval_nodes(&self.nodes, &lookup, strict, limit, &mut out).map_err(|f| match f {
            eval::EvalFailure::NotSet { name, span } => {
                Error::at(ErrorKind::NotSet { name }, &self.source, span.start)
            }
            eval::EvalFailure::SliceOutOfRange { span, start, end } => Error::at(
                ErrorKind::SliceOutOfRange { start, end },
                &self.source,
                span.start,
            ),
            eval::EvalFailure::TooLarge { span, limit } => {
                Error::at(ErrorKind::TooLarge { limit }, &self.source, span.start)
            }
        })?;
        Ok(out)
    }
}

/// Parses and evaluates in one step, like Flux's `envsubst.Eval`.
pub fn eval(input: &[u8], vars: &dyn Vars, strict: bool) -> Result<Vec<u8>, Error> {
    Template::parse(input)?.eval(vars, strict)
}

#[cfg(test)]
mod tests;
