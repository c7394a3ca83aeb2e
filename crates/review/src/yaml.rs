//! JSON values written as block YAML, for people to read (an added object's content, a
//! changed value that is a mapping): keys in the value's order, a string plain when YAML
//! reads it back as the same string, else double-quoted with JSON's escapes (which YAML's
//! double-quoted style reads the same), a multi-line string as a literal block.

use serde_json::Value;

/// Whether a string would be read back as itself when written plain.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.trim() != s
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.chars().any(|c| c.is_control() || c == '\u{feff}')
    {
        return false;
    }
    if ",[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    // `-x`, `?x`, `:x` are plain; `-`, `- x` start a list item or a key.
    if "-?:".contains(first) && s.chars().nth(1).is_none_or(char::is_whitespace) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "null" | "~" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return false;
    }
    // Anything a YAML 1.1 or 1.2 reader may take for a number, a date or a special float.
    let mut chars = s.chars();
    let starts_number = match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('+' | '-' | '.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    };
    let numberish = starts_number
        && s.chars().all(|c| {
            c.is_ascii_hexdigit()
                || matches!(c, '.' | '+' | '-' | '_' | ':' | 'x' | 'o' | 'X' | 'O')
        });
    !numberish && !matches!(lower.as_str(), ".inf" | "-.inf" | "+.inf" | ".nan")
}

/// A scalar as one YAML token (a string quoted when needed).
#[must_use]
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::Object(m) if m.is_empty() => "{}".to_string(),
        Value::Array(a) if a.is_empty() => "[]".to_string(),
        other => other.to_string(),
    }
}

/// Whether `v` is written on the line of its key.
fn inline(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => !block_string(s),
        _ => true,
    }
}

/// Whether a string is written as a literal block: several lines, nothing a block cannot
/// hold (controls, trailing spaces that a reader would lose sight of are fine).
fn block_string(s: &str) -> bool {
    s.contains('\n')
        && !s
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
}

/// The header of a literal block for `s` (`|`, `|-`, `|+`, with an indentation indicator
/// when the first line starts with a space).
fn block_header(s: &str) -> String {
    let mut h = String::from("|");
    if s.starts_with(' ') || s.starts_with('\n') {
        h.push('2');
    }
    if !s.ends_with('\n') {
        h.push('-');
    } else if s.ends_with("\n\n") {
        h.push('+');
    }
    h
}

fn block_lines(s: &str, indent: &str, out: &mut Vec<String>) {
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        if line.is_empty() {
            out.push(String::new());
        } else {
            out.push(format!("{indent}{line}"));
        }
    }
}

fn key(k: &str) -> String {
    scalar(&Value::String(k.to_string()))
}

fn write(v: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                entry(&format!("{pad}{}:", key(k)), child, indent, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                if item.as_object().is_some_and(|m| !m.is_empty()) {
                    // `- key: value` then the other keys under it.
                    let mut lines = Vec::new();
                    write(item, indent + 2, &mut lines);
                    if let Some(first) = lines.first_mut() {
                        *first = format!("{pad}- {}", &first[indent + 2..]);
                    }
                    out.extend(lines);
                } else {
                    entry(&format!("{pad}-"), item, indent, out);
                }
            }
        }
        Value::String(s) if block_string(s) => {
            out.push(format!("{pad}{}", block_header(s)));
            block_lines(s, &format!("{pad}  "), out);
        }
        other => out.push(format!("{pad}{}", scalar(other))),
    }
}

/// `head` (`key:` or `-`) followed by `v`: on the same line when it is a scalar, else below.
fn entry(head: &str, v: &Value, indent: usize, out: &mut Vec<String>) {
    if inline(v) {
        out.push(format!("{head} {}", scalar(v)));
    } else if let Value::String(s) = v {
        out.push(format!("{head} {}", block_header(s)));
        block_lines(s, &" ".repeat(indent + 2), out);
    } else {
        out.push(head.to_string());
        write(v, indent + 2, out);
    }
}

/// `v` as YAML lines (no trailing newline on each).
#[must_use]
pub fn lines(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    write(v, 0, &mut out);
    out
}

/// `v` as a YAML document.
#[must_use]
pub fn to_string(v: &Value) -> String {
    let mut s = lines(v).join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_print_as_block_yaml() {
        let v = json!({"metadata": {"name": "web", "labels": {}},
            "spec": {"replicas": 2, "containers": [{"name": "app", "image": "a:1", "args": ["--x", "true"]}],
                     "empty": []},
            "data": {"nginx.conf": "server {\n  listen 80;\n}\n", "v": "1.0", "t": "yes", "s": "a: b"}});
        assert_eq!(
            to_string(&v),
            "data:\n  nginx.conf: |\n    server {\n      listen 80;\n    }\n  s: \"a: b\"\n  t: \"yes\"\n  v: \"1.0\"\n\
             metadata:\n  labels: {}\n  name: web\n\
             spec:\n  containers:\n    - args:\n        - --x\n        - \"true\"\n      image: a:1\n      name: app\n  empty: []\n  replicas: 2\n"
        );
    }

    #[test]
    fn strings_that_would_read_differently_are_quoted() {
        for s in [
            "",
            " x",
            "true",
            "NULL",
            "123",
            "0x1F",
            "1e3",
            "-",
            "#x",
            "a #b",
            "x:",
            "\u{1b}[2J",
        ] {
            assert!(scalar(&json!(s)).starts_with('"'), "{s:?}");
        }
        for s in [
            "nginx",
            "ghcr.io/x/podinfo:6.5.0",
            "flux-system/apps",
            "a-b_c",
        ] {
            assert_eq!(scalar(&json!(s)), s);
        }
    }
}
