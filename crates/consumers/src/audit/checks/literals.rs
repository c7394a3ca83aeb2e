//! FS110: a var's value in another cluster shipping as a literal in this one (a dev address
//! in prod).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::audit::context::{finding_for, place_in, ClusterCtx};
use crate::audit::expr;
use crate::audit::leaves::string_leaves;
use crate::audit::place::{is_word_char, Needle, Sources};
use crate::audit::rules::OTHER_CLUSTER_LITERAL;
use crate::audit::{list_names, template_of};
use crate::finding::Finding;
use crate::flux::ObjectId;
use crate::model::ClusterRender;

/// What the cross-cluster check needs from one cluster's audit.
pub(crate) struct LiteralInput {
    /// Each var's known (not encrypted) values in this cluster, over all its Kustomizations.
    values: BTreeMap<String, BTreeSet<String>>,
    /// Every known var value of this cluster, whatever its name.
    all_values: BTreeSet<String>,
    /// The substituteFrom sources: their values are vars, not literals.
    var_sources: BTreeSet<ObjectId>,
}

impl LiteralInput {
    pub(crate) fn of(ctx: &ClusterCtx<'_>) -> LiteralInput {
        let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut var_sources = BTreeSet::new();
        for k in &ctx.cluster.kustomizations {
            for (n, v) in &k.vars {
                if !v.encrypted {
                    values.entry(n.clone()).or_default().insert(v.value.clone());
                }
            }
            var_sources.extend(k.kustomization.var_sources().map(|(id, _)| id));
        }
        let all_values = values.values().flatten().cloned().collect();
        LiteralInput {
            values,
            all_values,
            var_sources,
        }
    }
}

/// Values worth searching for in another cluster's render. Short or generic values would
/// match by chance, and a dev `debug` beside a prod `info` proves nothing, so these are
/// skipped: values shorter than 4 characters; numbers; booleans and YAML 1.1 boolean words;
/// single words of letters only shorter than 8 characters (`debug`, `info`, `local`).
pub(crate) fn distinctive(v: &str) -> bool {
    let v = v.trim();
    let len = v.chars().count();
    if len < 4 || v.parse::<f64>().is_ok() {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "none"
    ) {
        return false;
    }
    !(v.chars().all(char::is_alphabetic) && len < 8)
}

/// Whether `needle` occurs in `hay` not glued to a longer word (so prod's
/// `fleet.example.net` is not found inside dev's `dev.fleet.example.net`).
pub(crate) fn contains_word(hay: &str, needle: &str) -> bool {
    hay.match_indices(needle).any(|(at, _)| {
        !hay[..at].chars().next_back().is_some_and(is_word_char)
            && !hay[at + needle.len()..]
                .chars()
                .next()
                .is_some_and(is_word_char)
    })
}

/// The literal text of an object: its strings with every `${...}` reference cut out.
fn literal_text(obj: &Value) -> String {
    let mut out = String::new();
    for leaf in string_leaves(obj) {
        if leaf.key {
            continue;
        }
        let mut s = leaf.value;
        if s.contains("${") {
            let (refs, _) = expr::scan(&s);
            for r in refs {
                s = s.replace(&r.text, "\n");
            }
        }
        out.push_str(&s);
        out.push('\n');
    }
    out
}

/// FS110: for each pair of clusters, a var defined in both with different values whose
/// value in the other cluster appears as a literal in this cluster's templates.
pub(crate) fn other_cluster_literals(
    clusters: &[ClusterRender],
    inputs: &[LiteralInput],
    files: &mut Sources<'_>,
) -> (Vec<Finding>, usize) {
    let mut findings = Vec::new();
    let mut checks = 0;
    for (ai, a) in clusters.iter().enumerate() {
        let mine = &inputs[ai];
        // Another cluster's value -> (var, that cluster, this cluster's values).
        let mut wanted: BTreeMap<&str, (&str, &str, String)> = BTreeMap::new();
        for (bi, b) in clusters.iter().enumerate() {
            if bi == ai {
                continue;
            }
            for (var, theirs) in &inputs[bi].values {
                let Some(ours) = mine.values.get(var) else {
                    continue;
                };
                for value in theirs {
                    if ours.contains(value)
                        || mine.all_values.contains(value)
                        || !distinctive(value)
                    {
                        continue;
                    }
                    wanted.entry(value.as_str()).or_insert((
                        var.as_str(),
                        b.name.as_str(),
                        list_names(ours.iter().map(String::as_str), 2),
                    ));
                }
            }
        }
        if wanted.is_empty() {
            continue;
        }
        for k in &a.kustomizations {
            let Some(t) = template_of(k) else {
                continue;
            };
            for o in &t.objects {
                if mine.var_sources.contains(&o.id) {
                    continue;
                }
                checks += 1;
                let text = literal_text(&o.object);
                for (value, (var, other, ours)) in &wanted {
                    if !contains_word(&text, value) {
                        continue;
                    }
                    let place = place_in(
                        files,
                        k,
                        o,
                        Some(Needle {
                            text: value,
                            nth: 0,
                            whole_word: true,
                        }),
                    );
                    findings.push(
                        finding_for(
                            &a.name,
                            k,
                            &OTHER_CLUSTER_LITERAL,
                            format!(
                            "`{value}` is {other}'s value of `{var}` ({}'s is {ours}) and ships \
                             to {} as a literal in {}",
                            a.name, a.name, o.id
                        ),
                            place.location,
                        )
                        .about("var", var.to_string())
                        .about("cluster", other.to_string())
                        .about("object", o.id.to_string()),
                    );
                }
            }
        }
    }
    (findings, checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numeric_boolean_and_plain_word_values_are_not_searched() {
        for v in ["abc", "3000", "1.5", "true", "off", "debug", "info"] {
            assert!(!distinctive(v), "{v}");
        }
        for v in [
            "10.10.0.50",
            "fleet-prod",
            "api.prod.example.net",
            "production",
        ] {
            assert!(distinctive(v), "{v}");
        }
    }

    #[test]
    fn a_value_inside_a_longer_name_is_not_a_literal_of_it() {
        assert!(!contains_word(
            "host: dev.fleet.example.net",
            "fleet.example.net"
        ));
        assert!(contains_word(
            "url: https://fleet.example.net/x",
            "fleet.example.net"
        ));
        assert!(contains_word("10.10.0.50", "10.10.0.50"));
        assert!(!contains_word("10.10.0.500", "10.10.0.50"));
    }

    #[test]
    fn literal_text_cuts_out_references() {
        let obj = serde_json::json!({"data": {"a": "x-${HOST}-y", "b": "plain"}});
        assert_eq!(literal_text(&obj), "x-\n-y\nplain\n");
    }
}
