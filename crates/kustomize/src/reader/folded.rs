//! Folded block scalars as go-yaml scans them, and as kyaml's write and read back leaves
//! them.

use super::{unsupported, ReadError};

/// Folded block scalars as go-yaml folds them. saphyr (YAML 1.2) and libyaml disagree on
/// folded scalars with line breaks left in them (more-indented lines, kept trailing blank
/// lines); go-yaml's scanner is libyaml's, ported in `goyaml::v2` (go-yaml v3, which
/// kustomize reads with, scans block scalars with the same `yaml_parser_scan_block_scalar`).
/// Such a scalar takes the value the port gives to the folded scalar at the same place in
/// the stream: the n-th folded scalar of both parsers, which must hold the same characters
/// but for whitespace (folding changes nothing else), or the build is delegated.
#[derive(Default)]
pub(super) struct Folded {
    /// Folded scalars seen so far.
    seen: usize,
    /// go-yaml's folded scalars of the whole stream, in order, read on first need (none
    /// when it does not parse).
    values: Option<Vec<String>>,
}

impl Folded {
    /// go-yaml's value for the next folded scalar, which saphyr read as `value`, when it
    /// differs from saphyr's reading of it may (a kept line break); `None` when saphyr's is
    /// go-yaml's too.
    pub(super) fn next(&mut self, text: &str, value: &str) -> Result<Option<String>, ReadError> {
        let index = self.seen;
        self.seen += 1;
        let kept_breaks = value.strip_suffix('\n').unwrap_or(value).contains('\n')
            || value.starts_with([' ', '\t']);
        if !kept_breaks {
            return Ok(None);
        }
        let values = self.values.get_or_insert_with(|| go_folded_scalars(text));
        let theirs = values.get(index);
        let bare = |s: &str| s.split_whitespace().collect::<String>();
        match theirs {
            Some(v) if bare(v) == bare(value) && !v.contains('\t') => Ok(Some(kyaml_round_trip(v))),
            _ => Err(unsupported("a folded block scalar with kept line breaks")),
        }
    }
}

/// What a folded scalar's value becomes in kustomize's output: kyaml writes the node out
/// once in its folded style and reads it back (the style is gone after that, so it happens
/// once). go-yaml v3's `yaml_emitter_write_folded_scalar` adds a line break before the first
/// break after a line that does not start with a blank when the character it checks is not
/// blank — but it checks from the start of the value (`is_blankz(value, k)` with `k`
/// counted from 0), not from that break. Read back, that extra break survives only before a
/// more-indented line (and at the end of a kept trailing run), and without it a single break
/// between two plain lines folds into a space. Lines are not wrapped (kyaml's encoder has no
/// width limit), and tabs are left to kustomize (the caller delegates them).
fn kyaml_round_trip(value: &str) -> String {
    let blank = |line: &str| line.starts_with([' ', '\t']);
    // The emitter's check: the first character after the value's leading breaks.
    let extra = value
        .trim_start_matches('\n')
        .chars()
        .next()
        .is_some_and(|c| c != ' ' && c != '\t');
    let lines: Vec<&str> = value.split('\n').collect();
    let mut out = String::with_capacity(value.len() + 8);
    // Leading breaks stay as they are.
    let first = lines.iter().position(|l| !l.is_empty());
    let Some(first) = first else {
        return value.to_string();
    };
    out.push_str(&"\n".repeat(first));
    let mut at = first;
    loop {
        let line = lines[at];
        out.push_str(line);
        // The next non-empty line, and how many breaks come before it.
        let next = (at + 1..lines.len()).find(|&k| !lines[k].is_empty());
        let Some(next_line) = next else {
            // The trailing breaks: none (strip), one (clip) or more (keep).
            let trailing = lines.len() - 1 - at;
            let extra_break = usize::from(trailing >= 2 && extra && !blank(line));
            out.push_str(&"\n".repeat(trailing + extra_break));
            break;
        };
        let breaks = next_line - at;
        let extra_break = usize::from(extra && !blank(line));
        if !blank(line) && !blank(lines[next_line]) {
            // Folded again on the way back in.
            let kept = breaks + extra_break - 1;
            if kept == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(kept));
            }
        } else {
            out.push_str(&"\n".repeat(breaks + extra_break));
        }
        at = next_line;
    }
    out
}

/// The values of the folded block scalars of `text` as go-yaml's scanner reads them, in
/// order; none when it does not parse.
fn go_folded_scalars(text: &str) -> Vec<String> {
    go_folded_scalars_or_error(text).unwrap_or_default()
}

fn go_folded_scalars_or_error(text: &str) -> Option<Vec<String>> {
    use goyaml::v2::{parser::Parser as GoParser, EventKind, ScalarStyle as GoStyle};
    let mut parser = GoParser::new(text);
    let mut out = Vec::new();
    while let Some(event) = parser.next_event().ok()? {
        if let EventKind::Scalar {
            value,
            style: GoStyle::Folded,
            ..
        } = event.kind
        {
            out.push(value);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The values kustomize v5.8.1 printed for testdata/native/folded-scalars.
    #[test]
    fn a_folded_value_takes_the_breaks_kyaml_s_round_trip_gives_it() {
        for (scanned, printed) in [
            ("text\n  more\n", "text\n\n  more\n"),
            ("a\n  b\nc\n\n\n", "a\n\n  b\nc\n\n\n\n"),
            ("kept\n\n  indented\n\n\n", "kept\n\n\n  indented\n\n\n"),
            ("  first\nx\ny\n", "  first\nx y\n"),
            (
                "\n\nafter blank lines folded here\n",
                "\n\nafter blank lines folded here\n",
            ),
            ("first para\nsecond\n", "first para\nsecond\n"),
            ("\n", "\n"),
        ] {
            assert_eq!(kyaml_round_trip(scanned), printed, "{scanned:?}");
        }
    }
}
