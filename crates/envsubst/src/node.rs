//! The parsed form of a substitution template: text and `${...}` expressions, with byte spans.

use std::ops::Range;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Literal text, escapes already removed (`$$` is one `$` here).
    Text {
        /// The bytes written out.
        value: Vec<u8>,
        /// Where the text came from in the input.
        span: Range<usize>,
    },
    /// A `${...}` expression.
    Expr(Expr),
}

/// A `${param<op>args}` expression, as Flux's parser builds it (`parse.FuncNode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    /// The variable name.
    pub param: String,
    /// The operator as Flux spells it: `""` for `${v}`, `"#"`, `":-"`, `"//"`, `"^^"` ...
    pub op: String,
    /// The operator's arguments (patterns, defaults, offsets), each possibly nested.
    pub args: Vec<Vec<Node>>,
    /// From `$` of `${` to just after the closing `}`.
    pub span: Range<usize>,
}

impl Node {
    /// Where this node came from in the input.
    #[must_use]
    pub fn span(&self) -> Range<usize> {
        match self {
            Node::Text { span, .. } => span.clone(),
            Node::Expr(e) => e.span.clone(),
        }
    }
}

impl Expr {
    /// True for the operators that supply their own value when the variable is unset
    /// (`-`, `+`, `=`, `?` and their `:` forms): strict mode lets these through (template.go).
    #[must_use]
    pub fn has_default(&self) -> bool {
        matches!(
            self.op.as_str(),
            "-" | "+" | "=" | "?" | ":-" | ":+" | ":=" | ":?"
        )
    }
}
