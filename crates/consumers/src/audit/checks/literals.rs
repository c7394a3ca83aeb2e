//! FS110: a var's value in another cluster shipping as a literal in this one (a dev address
//! in prod), graded by how specific the value is to that cluster.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::audit::context::{finding_for, place_in, ClusterCtx};
use crate::audit::expr;
use crate::audit::leaves::string_leaves;
use crate::audit::place::{comment_start, is_word_char, Needle, Sources};
use crate::audit::rules::OTHER_CLUSTER_LITERAL;
use crate::audit::{list_names, template_of};
use crate::finding::{Finding, Severity};
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

/// The literal text of an object: its strings with every `${...}` reference cut out, and
/// the `#` comments of the files its multi-line strings hold (a values file, a script):
/// a value a comment mentions ships nowhere.
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
        if s.contains('\n') {
            for line in s.lines() {
                out.push_str(&line[..comment_start(line).unwrap_or(line.len())]);
                out.push('\n');
            }
        } else {
            out.push_str(&s);
            out.push('\n');
        }
    }
    out
}

/// What makes a literal specific to the cluster whose value it is, by its form: an address
/// (`10.0.0.5`, `10.0.0.0/16`, `[fd00::1]:443`), a host name (`api.prod.example.net`), or a
/// URL's host. `None` for anything else (a name, a word).
pub(crate) fn specific_form(v: &str) -> Option<&'static str> {
    let v = v.trim();
    if let Some((_, rest)) = v.split_once("://") {
        let host = rest
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("")
            .rsplit('@')
            .next()
            .unwrap_or("");
        return host_form(host).map(|_| "a URL's host");
    }
    host_form(v)
}

/// An IP address or network, or a DNS name of two labels or more whose last is letters,
/// each with an optional `:port`.
fn host_form(v: &str) -> Option<&'static str> {
    use std::net::IpAddr;
    if v.parse::<IpAddr>().is_ok() || v.parse::<std::net::SocketAddr>().is_ok() {
        return Some("an IP address");
    }
    if let Some((ip, bits)) = v.split_once('/') {
        let max = match ip.parse::<IpAddr>() {
            Ok(IpAddr::V4(_)) => 32,
            Ok(IpAddr::V6(_)) => 128,
            Err(_) => return None,
        };
        return bits
            .parse::<u8>()
            .is_ok_and(|b| b <= max)
            .then_some("a network (CIDR)");
    }
    let host = match v.rsplit_once(':') {
        Some((h, port)) if port.parse::<u16>().is_ok() => h,
        _ => v,
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    let labels: Vec<&str> = host.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    (labels.len() >= 2
        && host.len() <= 253
        && labels.iter().all(label_ok)
        && labels
            .last()
            .is_some_and(|l| l.chars().all(|c| c.is_ascii_alphabetic())))
    .then_some("a host name")
}

/// How one cluster's objects read to the grading of FS110: its literal text (var sources
/// left out: their values are vars), made once when first asked.
struct Texts<'a> {
    clusters: &'a [ClusterRender],
    inputs: &'a [LiteralInput],
    made: Vec<Option<String>>,
}

impl<'a> Texts<'a> {
    fn new(clusters: &'a [ClusterRender], inputs: &'a [LiteralInput]) -> Texts<'a> {
        Texts {
            clusters,
            inputs,
            made: vec![None; clusters.len()],
        }
    }

    fn of(&mut self, ci: usize) -> &str {
        let (clusters, inputs) = (self.clusters, self.inputs);
        self.made[ci].get_or_insert_with(|| {
            let mut out = String::new();
            for k in &clusters[ci].kustomizations {
                let Some(t) = template_of(k) else { continue };
                for o in t
                    .objects
                    .iter()
                    .filter(|o| !inputs[ci].var_sources.contains(&o.id))
                {
                    out.push_str(&literal_text(&o.object));
                }
            }
            out
        })
    }

    /// Another cluster than `here` that uses `value`: as a word of its templates' literal
    /// text, or (other than `owner`, whose var it is) as a var's value.
    fn used_elsewhere(&mut self, value: &str, here: usize, owner: usize) -> Option<String> {
        for ci in (0..self.clusters.len()).filter(|&ci| ci != here) {
            let name = &self.clusters[ci].name;
            if ci != owner && self.inputs[ci].all_values.contains(value) {
                return Some(format!("a var of {name} has it too"));
            }
            if contains_word(self.of(ci), value) {
                return Some(if ci == owner {
                    format!("{name}'s own templates use it as a literal too")
                } else {
                    format!("{name}'s templates use it as a word too")
                });
            }
        }
        None
    }
}

/// FS110: for each pair of clusters, a var defined in both with different values whose
/// value in the other cluster appears as a literal in this cluster's templates (never in a
/// comment). An error when the literal is specific to that cluster (an address, a host
/// name, or a value no other cluster's vars or templates use as a word); else a warning,
/// which says who else uses it.
pub(crate) fn other_cluster_literals(
    clusters: &[ClusterRender],
    inputs: &[LiteralInput],
    files: &mut Sources<'_>,
) -> (Vec<Finding>, usize) {
    let mut findings = Vec::new();
    let mut checks = 0;
    let mut texts = Texts::new(clusters, inputs);
    // (value, this cluster, the other) -> why the value is or is not specific to the other.
    let mut graded: BTreeMap<(String, usize, usize), (Severity, String)> = BTreeMap::new();
    for (ai, a) in clusters.iter().enumerate() {
        let mine = &inputs[ai];
        // Another cluster's value -> (var, that cluster, its index, this cluster's values).
        let mut wanted: BTreeMap<&str, (&str, &str, usize, String)> = BTreeMap::new();
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
                        bi,
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
                for (value, (var, other, bi, ours)) in &wanted {
                    if !contains_word(&text, value) {
                        continue;
                    }
                    let (severity, why) = graded
                        .entry(((*value).to_string(), ai, *bi))
                        .or_insert_with(|| grade(value, other, &mut texts, ai, *bi))
                        .clone();
                    let place = place_in(
                        files,
                        k,
                        o,
                        Some(Needle {
                            text: value,
                            nth: 0,
                            whole_word: true,
                            code_only: true,
                        }),
                    );
                    findings.push(
                        finding_for(
                            &a.name,
                            k,
                            &OTHER_CLUSTER_LITERAL,
                            format!(
                                "`{value}` is {other}'s value of `{var}` ({}'s is {ours}) and \
                                 ships to {} as a literal in {}: {why}",
                                a.name, a.name, o.id
                            ),
                            place.location,
                        )
                        .with_severity(severity)
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

/// How sure FS110 is that `value` (cluster `bi`'s, named `other`) is a leak into cluster
/// `ai`: the severity and the words that say why.
fn grade(
    value: &str,
    other: &str,
    texts: &mut Texts<'_>,
    ai: usize,
    bi: usize,
) -> (Severity, String) {
    if let Some(form) = specific_form(value) {
        return (Severity::Error, format!("{form}, specific to {other}"));
    }
    match texts.used_elsewhere(value, ai, bi) {
        None => (
            Severity::Error,
            format!("no other cluster's vars or templates use it, so it is specific to {other}"),
        ),
        Some(who) => (
            Severity::Warning,
            format!(
                "presumed {other}'s, but {who}, so it may be a common name (check that it \
                 is meant)"
            ),
        ),
    }
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
    fn addresses_host_names_and_urls_are_specific_words_are_not() {
        for (v, form) in [
            ("10.10.0.50", "an IP address"),
            ("10.10.0.50:6443", "an IP address"),
            ("fd00::1", "an IP address"),
            ("10.42.0.0/16", "a network (CIDR)"),
            ("api.prod.example.net", "a host name"),
            ("db.internal.example.com:5432", "a host name"),
            ("https://grafana.prod.example.net/d/x", "a URL's host"),
            ("http://10.0.0.5:8080", "a URL's host"),
        ] {
            assert_eq!(specific_form(v), Some(form), "{v}");
        }
        for v in [
            "prometheus",
            "local-hostpath",
            "fleet-prod",
            "v1.2.3",
            "1.5",
            "10.42.0.0/99",
            "s3://",
            "-bad.example.net",
        ] {
            assert_eq!(specific_form(v), None, "{v}");
        }
    }

    #[test]
    fn literal_text_leaves_out_the_comments_of_embedded_files() {
        let obj = serde_json::json!({"data": {
            "values.yaml": "# storageClass: local-hostpath\nreplicas: 2 # not local-hostpath\n",
            "color": "#local-hostpath",
        }});
        let text = literal_text(&obj);
        assert!(!text.contains("storageClass"), "{text}");
        assert!(text.contains("replicas: 2"), "{text}");
        assert!(!text.contains("not local-hostpath"), "{text}");
        // A one-line string is a value, whatever it holds.
        assert!(text.contains("#local-hostpath"), "{text}");
    }

    #[test]
    fn literal_text_cuts_out_references() {
        let obj = serde_json::json!({"data": {"a": "x-${HOST}-y", "b": "plain"}});
        assert_eq!(literal_text(&obj), "x-\n-y\nplain\n");
    }
}
