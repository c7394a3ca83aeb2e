//! The rules on vars and where they come from: invalid names (FS108), unused vars (FS109),
//! another cluster's value shipping as a literal (FS110), encrypted sources (FS111).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::expr;
use super::objects::{finding_for, place_in, string_leaves, ClusterCtx};
use super::place::{is_word_char, Needle, Sources};
use super::rules::{
    ENCRYPTED_SOURCE, INVALID_VAR_NAME, OTHER_CLUSTER_LITERAL, UNKNOWN_SOURCE, UNUSED_VAR,
};
use super::{list_names, template_of};
use crate::finding::Finding;
use crate::flux::ObjectId;
use crate::postbuild::is_valid_var_name;
use crate::reconcile::ClusterRender;

fn key_needle(key: &str) -> Needle<'_> {
    Needle {
        text: key,
        nth: 0,
        whole_word: true,
    }
}

/// The keys a ConfigMap or Secret gives as vars (`loadVars` in kustomize_varsub.go reads a
/// ConfigMap's `data`, a Secret's `data`; the API server folds `stringData` into `data`).
fn source_keys(obj: &Value, kind: &str) -> BTreeSet<String> {
    let fields: &[&str] = if kind == "Secret" {
        &["data", "stringData"]
    } else {
        &["data"]
    };
    fields
        .iter()
        .filter_map(|f| obj.get(*f).and_then(Value::as_object))
        .flat_map(|m| m.keys().cloned())
        .collect()
}

/// FS108, FS109 and FS111 for one cluster: inline vars, then each substituteFrom source.
pub(crate) fn audit_sources(ctx: &mut ClusterCtx<'_>, files: &mut Sources<'_>) {
    let cluster = ctx.cluster;
    let name = cluster.name.as_str();
    // Which Kustomizations (by index) receive each source.
    let mut receivers: BTreeMap<ObjectId, Vec<(usize, bool)>> = BTreeMap::new();
    for (i, k) in cluster.kustomizations.iter().enumerate() {
        let Some(pb) = &k.kustomization.post_build else {
            continue;
        };
        for sf in &pb.substitute_from {
            let id = ObjectId {
                group: String::new(),
                kind: sf.kind.clone(),
                namespace: k.kustomization.id.namespace.clone(),
                name: sf.name.clone(),
            };
            receivers.entry(id).or_default().push((i, sf.optional));
        }
        for key in pb.substitute.keys() {
            ctx.checks += 1;
            let used = ctx.used.get(&i).is_some_and(|u| u.contains(key));
            let (rule, message) = if !is_valid_var_name(key) {
                (
                    &INVALID_VAR_NAME,
                    format!(
                        "inline var name `{key}` in postBuild.substitute of `{}` is invalid: \
                         Flux fails the Kustomization (names must match \
                         `^[_[:alpha:]][_[:alpha:][:digit:]]*$`)",
                        k.kustomization.id
                    ),
                )
            } else if template_of(k).is_some() && ctx.substitutes_at(i) && !used {
                (
                    &UNUSED_VAR,
                    format!(
                        "inline var `{key}` of `{}` is referenced by none of its objects",
                        k.kustomization.id
                    ),
                )
            } else {
                continue;
            };
            let location = ctx.place_of_kustomization(k, Some(key_needle(key)), files);
            ctx.findings
                .push(finding_for(name, k, rule, message, location));
        }
    }
    for (id, recv_opt) in &receivers {
        let Some(&(owner, obj)) = ctx.placed.get(id) else {
            // Nothing in the repository applies it: an ExternalSecret's Secret, say, or a
            // mistake, which `render` reports when the source is not optional.
            for &(i, optional) in recv_opt {
                ctx.checks += 1;
                let k = &cluster.kustomizations[i];
                let what = if optional {
                    "optional: Flux skips it when it is missing"
                } else {
                    "not optional: Flux fails the Kustomization unless something else creates it"
                };
                let location = ctx.place_of_kustomization(
                    k,
                    Some(Needle {
                        text: &id.name,
                        nth: 0,
                        whole_word: true,
                    }),
                    files,
                );
                ctx.findings.push(finding_for(
                    name,
                    k,
                    &UNKNOWN_SOURCE,
                    format!(
                        "{}/{}, a substituteFrom source of `{}`, is applied by nothing in \
                         this repository ({what}); its vars are unknown, so undefined vars \
                         are not reported for this Kustomization",
                        id.kind, id.name, k.kustomization.id
                    ),
                    location,
                ));
            }
            continue;
        };
        let recv: Vec<usize> = recv_opt.iter().map(|&(i, _)| i).collect();
        let recv = &recv;
        ctx.checks += 1;
        let owner_k = &cluster.kustomizations[owner];
        let recv_names = list_names(
            recv.iter()
                .map(|&i| cluster.kustomizations[i].kustomization.id.name.as_str()),
            5,
        );
        if obj.object.get("sops").is_some() {
            let place = place_in(files, owner_k, obj, None);
            ctx.findings.push(finding_for(
                name,
                owner_k,
                &ENCRYPTED_SOURCE,
                format!(
                    "{} is SOPS-encrypted: the values of its vars are unknown offline, so the \
                     checks that need them skip its vars (received by {recv_names})",
                    obj.id
                ),
                place.location,
            ));
        }
        // Usage is unknown when a receiver could not be built.
        let usage_known = recv
            .iter()
            .all(|&i| template_of(&cluster.kustomizations[i]).is_some());
        for key in source_keys(&obj.object, &id.kind) {
            ctx.checks += 1;
            let (rule, message) = if !is_valid_var_name(&key) {
                // kustomize_varsub.go checks every var name against varsubRegex before
                // substituting, and fails the whole Kustomization on the first bad one.
                (
                    &INVALID_VAR_NAME,
                    format!(
                        "var name `{key}` in {} is invalid (names must match \
                         `^[_[:alpha:]][_[:alpha:][:digit:]]*$`): Flux fails every \
                         Kustomization that substitutes from it: {recv_names}",
                        obj.id
                    ),
                )
            } else if usage_known
                && !recv
                    .iter()
                    .any(|i| ctx.used.get(i).is_some_and(|u| u.contains(&key)))
            {
                (
                    &UNUSED_VAR,
                    format!(
                        "var `{key}` of {} is referenced by none of the Kustomizations that \
                         receive it: {recv_names}",
                        obj.id
                    ),
                )
            } else {
                continue;
            };
            let place = place_in(files, owner_k, obj, Some(key_needle(&key)));
            ctx.findings
                .push(finding_for(name, owner_k, rule, message, place.location));
        }
    }
}

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
            for sf in k
                .kustomization
                .post_build
                .iter()
                .flat_map(|pb| &pb.substitute_from)
            {
                var_sources.insert(ObjectId {
                    group: String::new(),
                    kind: sf.kind.clone(),
                    namespace: k.kustomization.id.namespace.clone(),
                    name: sf.name.clone(),
                });
            }
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
                    findings.push(finding_for(
                        &a.name,
                        k,
                        &OTHER_CLUSTER_LITERAL,
                        format!(
                            "`{value}` is {other}'s value of `{var}` ({}'s is {ours}) and ships \
                             to {} as a literal in {}",
                            a.name, a.name, o.id
                        ),
                        place.location,
                    ));
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
