//! Folded block scalars (`>`) as go-yaml folds them.
//!
//! saphyr keeps a line break *and* adds one where a folded scalar meets a more-indented
//! line (`a,\n  b` reads as `a,\n\n  b`); go-yaml (`yaml_parser_scan_block_scalar` in
//! scannerc.go, the same in yaml.v2 and v3) keeps only the line break, and so does every
//! Flux component that reads the YAML. Found by the Go oracle on a real repository (a CEL
//! `expression: >-` spread over indented lines). The scalar is folded again here from its
//! source text, following go-yaml's loop; cases it does not cover (an explicit indentation
//! indicator, tabs in the indentation, no content line) keep saphyr's value.

/// The value go-yaml gives the folded block scalar whose header (`>`, `>-`, `>+` ...) starts
/// `text`, or `None` when this module does not cover it.
pub(crate) fn fold(text: &str) -> Option<String> {
    let (header, body) = text.split_once('\n').unwrap_or((text, ""));
    let mut chomp = 0i8; // -1 strip, 0 clip, 1 keep
    let indicators = header.strip_prefix('>')?;
    for c in indicators.chars() {
        match c {
            '-' => chomp = -1,
            '+' => chomp = 1,
            ' ' | '\t' | '#' | '\r' => break,
            // An indentation indicator (or anything else) is left to saphyr.
            _ => return None,
        }
    }
    let lines: Vec<&str> = body.split('\n').collect();
    let last_terminated = body.ends_with('\n');
    // Auto-detected indentation: the first content line's, or more when a leading empty
    // line is longer (scan_block_scalar_breaks' max_indent).
    let mut max_leading = 0;
    let mut indent = None;
    for l in &lines {
        let l = l.strip_suffix('\r').unwrap_or(l);
        if l.starts_with('\t') {
            return None;
        }
        let n = l.len() - l.trim_start_matches(' ').len();
        if n == l.len() {
            max_leading = max_leading.max(n);
            continue;
        }
        indent = Some(n.max(max_leading).max(1));
        break;
    }
    let indent = indent?;
    let mut s = String::new();
    let mut leading_break = String::new();
    let mut trailing_breaks = String::new();
    let mut leading_blank = false;
    let count = lines.len();
    for (i, l) in lines.iter().enumerate() {
        // The text after the last line break is no line of its own.
        if i + 1 == count && last_terminated {
            break;
        }
        let l = l.strip_suffix('\r').unwrap_or(l);
        let n = l.len() - l.trim_start_matches(' ').len();
        let eaten = n.min(indent);
        let rest = &l[eaten..];
        if rest.is_empty() {
            trailing_breaks.push('\n');
            continue;
        }
        if n < indent {
            break;
        }
        if rest.starts_with('\t') && n == indent && s.is_empty() && trailing_breaks.is_empty() {
            // A tab right after the indentation of the first line: left to saphyr.
            return None;
        }
        let trailing_blank = rest.starts_with([' ', '\t']);
        if leading_break == "\n" && !leading_blank && !trailing_blank {
            if trailing_breaks.is_empty() {
                s.push(' ');
            }
            leading_break.clear();
        } else {
            s.push_str(&leading_break);
            leading_break.clear();
        }
        s.push_str(&trailing_breaks);
        trailing_breaks.clear();
        leading_blank = trailing_blank;
        s.push_str(rest);
        if i + 1 < count {
            leading_break.push('\n');
        }
    }
    if chomp != -1 {
        s.push_str(&leading_break);
    }
    if chomp == 1 {
        s.push_str(&trailing_breaks);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::fold;

    // go-yaml scannerc.go yaml_parser_scan_block_scalar: a line break before or after a
    // more-indented line is kept, never doubled; other breaks fold to a space.
    #[test]
    fn folded_scalar_keeps_one_line_break_around_more_indented_lines_as_go_yaml_does() {
        assert_eq!(
            fold(">-\n  exists(c,\n    c.image\n  )\nnext: 1\n").as_deref(),
            Some("exists(c,\n  c.image\n)")
        );
        assert_eq!(fold(">\n  a\n  b\n\n  c\n").as_deref(), Some("a b\nc\n"));
        assert_eq!(fold(">+\n  a\n\n\n").as_deref(), Some("a\n\n\n"));
        assert_eq!(fold(">-\n  a\n  b").as_deref(), Some("a b"));
        assert_eq!(fold(">\n  [\n    x\n  ]\n").as_deref(), Some("[\n  x\n]\n"));
        // Left to saphyr.
        assert_eq!(fold(">2\n   a\n"), None);
        assert_eq!(fold(">\n"), None);
    }
}
