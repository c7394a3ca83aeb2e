//! Where in an object a change is: `spec.template.spec.containers[name=app].image`.
//!
//! A path is a list of [`Segment`]s: a mapping key, a list item matched by its merge keys
//! (`[name=app]`, `[containerPort=80,protocol=TCP]`) or by its position (`[2]`). Keys are
//! written as they are unless they hold a character of the syntax (`.`, `"`, `[`, `]`, `\`,
//! a space), then in double quotes (`metadata.annotations."checksum/config"`): the syntax of
//! fluxsim's `--strip-field` (`src/compare/strip.rs`), which [`crate::strip`] reads, so a
//! path shown in a report can be given back to `--strip`.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// One step into a value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Segment {
    /// A key of a mapping.
    Key(String),
    /// The item of a list whose merge keys have these values (`[name=app]`); a value is the
    /// item's field as a string (a number as JSON writes it).
    Match(Vec<(String, String)>),
    /// The item of a list at this position (a list without merge keys).
    Index(usize),
}

/// A path into an object.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Path(pub Vec<Segment>);

impl Path {
    /// The root (the whole object).
    #[must_use]
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// This path and one more segment.
    #[must_use]
    pub fn child(&self, segment: Segment) -> Self {
        let mut v = self.0.clone();
        v.push(segment);
        Self(v)
    }

    /// This path and one more key.
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        self.child(Segment::Key(key.to_string()))
    }

    /// The last mapping key of the path (the field a list is under: `containers`).
    #[must_use]
    pub fn last_key(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Segment::Key(k) => Some(k.as_str()),
            _ => None,
        })
    }

    /// The keys of the path (list items skipped): `metadata`, `labels`.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|s| match s {
            Segment::Key(k) => Some(k.as_str()),
            _ => None,
        })
    }
}

/// Whether a key must be quoted to be read back as one segment.
fn needs_quotes(k: &str) -> bool {
    k.is_empty()
        || k == "*"
        || k.chars().any(|c| {
            matches!(c, '.' | '"' | '[' | ']' | '\\') || c.is_whitespace() || c.is_control()
        })
}

/// Writes `s` in double quotes, `"` and `\` escaped with a backslash, controls shown as
/// escapes (`\n`, `\u{202e}`) so that a path stays on its line.
fn quoted(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        if matches!(c, '"' | '\\') {
            f.write_str("\\")?;
            write!(f, "{c}")?;
        } else {
            f.write_str(&crate::escape::one_line(c.encode_utf8(&mut [0; 4])))?;
        }
    }
    f.write_str("\"")
}

/// Whether a merge key's value must be quoted inside `[...]`.
fn value_needs_quotes(v: &str) -> bool {
    v.is_empty()
        || v.chars().any(|c| {
            matches!(c, ']' | '[' | ',' | '=' | '"' | '\\') || c.is_whitespace() || c.is_control()
        })
        || matches!(crate::escape::one_line(v), std::borrow::Cow::Owned(_))
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(k) if needs_quotes(k) => quoted(f, k),
            Segment::Key(k) => f.write_str(k),
            Segment::Index(i) => write!(f, "[{i}]"),
            Segment::Match(pairs) => {
                f.write_str("[")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    f.write_str(k)?;
                    f.write_str("=")?;
                    if value_needs_quotes(v) {
                        quoted(f, v)?;
                    } else {
                        f.write_str(v)?;
                    }
                }
                f.write_str("]")
            }
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 && matches!(s, Segment::Key(_)) {
                f.write_str(".")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

impl Serialize for Path {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A merge key's value as a path shows it: a string as it is, anything else as JSON.
#[must_use]
pub fn key_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_writes_keys_items_and_quotes_keys_with_dots() {
        let p = Path::root()
            .key("spec")
            .key("containers")
            .child(Segment::Match(vec![("name".into(), "app".into())]))
            .key("image");
        assert_eq!(p.to_string(), "spec.containers[name=app].image");
        let q = Path::root()
            .key("metadata")
            .key("annotations")
            .key("checksum/config.sha");
        assert_eq!(
            q.to_string(),
            "metadata.annotations.\"checksum/config.sha\""
        );
        let r = Path::root().key("args").child(Segment::Index(2));
        assert_eq!(r.to_string(), "args[2]");
        let ports = Path::root().key("ports").child(Segment::Match(vec![
            ("containerPort".into(), "80".into()),
            ("protocol".into(), "TCP".into()),
        ]));
        assert_eq!(ports.to_string(), "ports[containerPort=80,protocol=TCP]");
    }

    #[test]
    fn path_quotes_what_the_syntax_would_misread() {
        let p = Path::root()
            .key("a\"b")
            .child(Segment::Match(vec![("name".into(), "x,y]".into())]));
        assert_eq!(p.to_string(), "\"a\\\"b\"[name=\"x,y]\"]");
        let q = Path::root().key("a\nb\u{202e}");
        assert_eq!(q.to_string(), "\"a\\nb\\u{202e}\"");
    }
}
