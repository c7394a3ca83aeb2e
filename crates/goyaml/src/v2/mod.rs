//! go-yaml v2's reader, scanner and parser, ported: the YAML 1.1 syntax Flux reads back.
//!
//! `sigs.k8s.io/yaml` v1.6.0 `YAMLToJSON` unmarshals with `go.yaml.in/yaml/v2` (v2.4.2 to
//! v2.4.4 share their code), the Go port of libyaml. Its syntax is YAML 1.1 and its corners
//! are its own: NEL, LS and PS are line breaks, `\/` is no escape, a `:` ends a plain scalar
//! in a flow collection only before white space, a tab may not start a block scalar's first
//! line, a simple key holds at most 1024 characters, control characters are refused as the
//! reader decodes each 512-byte window of input. A YAML 1.2 parser (saphyr) differed in
//! hundreds of the cases in `testdata/conformance/yaml-reread.jsonl`, so this module follows
//! the Go code function by function, with its names (`readerc.go` in [`reader`],
//! `scannerc.go` in [`scanner`], `parserc.go` in [`parser`]), its quirks included: a BOM is
//! looked for at the start of the reader's buffer rather than at the current position, and a
//! flow collection left empty can drop its simple key (`[]: b` reads as `[]`).
//!
//! Errors carry what yaml.v2 reports (`decode.go` `fail`): the problem, and the line Go prints
//! ([`Error::go_text`]).

pub mod parser;
mod reader;
mod scanner;

/// A position in the input (`yaml_mark_t`): characters, 0-based line and column.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    /// Characters read before this point (a CRLF counts two).
    pub index: usize,
    /// 0-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
}

/// How a scalar was written (`yaml_scalar_style_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// Which stage found the error (`yaml_error_type_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Reader,
    Scanner,
    Parser,
}

/// A syntax error as libyaml records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// What is wrong ("found character that cannot start any token").
    pub problem: String,
    /// Where (the default mark for reader errors, which have only an offset).
    pub problem_mark: Mark,
    /// What was being read ("while scanning a simple key"), possibly empty.
    pub context: String,
    pub context_mark: Mark,
}

impl Error {
    /// The message yaml.v2 gives, after its `yaml: ` prefix (`decode.go` `fail`): the line is
    /// the problem's 0-based line, plus one for scanner errors only, or else the context's
    /// 0-based line; a line 0 is not printed.
    pub fn go_text(&self) -> String {
        match self.go_line() {
            Some(line) => format!("line {line}: {}", self.problem),
            None => self.problem.clone(),
        }
    }

    /// The line number yaml.v2 prints, if any (see [`Error::go_text`]).
    pub fn go_line(&self) -> Option<usize> {
        let line = if self.problem_mark.line != 0 {
            self.problem_mark.line + usize::from(self.kind == ErrorKind::Scanner)
        } else {
            self.context_mark.line
        };
        (line != 0).then_some(line)
    }
}

/// A parsing event (`yaml_event_t`), with the marks of its first and last character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub start: Mark,
    pub end: Mark,
}

/// The kinds of event yaml.v2's decoder reads. Tags are resolved through the `%TAG`
/// directives (`!!int` is `tag:yaml.org,2002:int`, a bare `!` stays `!`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias {
        anchor: String,
    },
    Scalar {
        anchor: Option<String>,
        tag: Option<String>,
        value: String,
        style: ScalarStyle,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
        flow: bool,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
        flow: bool,
    },
    MappingEnd,
}

#[cfg(test)]
mod tests;
