//! What a report says of the versions it assumed: one line per set of clusters that share
//! the same assumption (`dev, prod: Flux v2.4 (...)`), the cluster names escaped.

use super::escape::OneLine;
use super::layout::Layout;

/// `entries` (cluster, what was assumed of it) as lines, clusters that share an assumption
/// together in the order first seen, each wrapped at 80 columns under `indent`.
#[must_use]
pub fn assumed_lines(entries: &[(String, String)], indent: &str, layout: Layout) -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (cluster, what) in entries {
        match groups.iter_mut().find(|(_, w)| *w == what.as_str()) {
            Some((names, _)) => names.push(cluster),
            None => groups.push((vec![cluster], what)),
        }
    }
    let mut out = String::new();
    for (names, what) in groups {
        let names: Vec<String> = names.iter().map(|n| OneLine(n).to_string()).collect();
        let line = format!("{}: {}", names.join(", "), OneLine(what));
        out.push_str(&layout.wrap(indent, &line, &format!("{indent}  ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_that_share_an_assumption_are_one_line() {
        let e = [
            ("dev".to_string(), "Flux v2.9 (presumed)".to_string()),
            ("prod".to_string(), "Flux v2.9 (presumed)".to_string()),
            ("lab".to_string(), "Flux v2.4 (fluxsim.toml)".to_string()),
        ];
        let out = assumed_lines(&e, "  ", Layout::default());
        assert_eq!(
            out,
            "  dev, prod: Flux v2.9 (presumed)\n  lab: Flux v2.4 (fluxsim.toml)\n"
        );
    }
}
