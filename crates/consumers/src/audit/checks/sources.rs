//! The rules on vars and where they come from: invalid names (FS108), unused vars (FS109),
//! encrypted sources (FS111), sources nothing in the repository applies (FS112).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::audit::context::{finding_for, place_in, ClusterCtx};
use crate::audit::place::{Needle, Sources};
use crate::audit::rules::{ENCRYPTED_SOURCE, INVALID_VAR_NAME, UNKNOWN_SOURCE, UNUSED_VAR};
use crate::audit::{list_names, template_of};
use crate::flux::is_valid_var_name;
use crate::flux::ObjectId;

fn key_needle(key: &str) -> Needle<'_> {
    Needle {
        text: key,
        nth: 0,
        whole_word: true,
        code_only: false,
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
        for (id, sf) in k.kustomization.var_sources() {
            receivers.entry(id).or_default().push((i, sf.optional));
        }
        inline_vars(ctx, i, pb, files);
    }
    for (id, recv_opt) in &receivers {
        let Some(&(owner, obj)) = ctx.placed.get(id) else {
            unknown_source(ctx, id, recv_opt, files);
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
            ctx.findings.push(
                finding_for(
                    name,
                    owner_k,
                    &ENCRYPTED_SOURCE,
                    format!(
                        "{} is SOPS-encrypted: the values of its vars are unknown offline, so the \
                     checks that need them skip its vars (received by {recv_names})",
                        obj.id
                    ),
                    place.location,
                )
                .about("source", obj.id.to_string()),
            );
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
            ctx.findings.push(
                finding_for(name, owner_k, rule, message, place.location)
                    .about("var", key.clone())
                    .about("source", obj.id.to_string()),
            );
        }
    }
}

/// FS112: a source nothing in the repository applies (an ExternalSecret's Secret, say, or a
/// mistake, which `render` reports when the source is not optional), once per receiver.
fn unknown_source(
    ctx: &mut ClusterCtx<'_>,
    id: &ObjectId,
    receivers: &[(usize, bool)],
    files: &mut Sources<'_>,
) {
    let cluster = ctx.cluster;
    for &(i, optional) in receivers {
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
                code_only: false,
            }),
            files,
        );
        ctx.findings.push(
            finding_for(
                &cluster.name,
                k,
                &UNKNOWN_SOURCE,
                format!(
                    "{}/{}, a substituteFrom source of `{}`, is applied by nothing in this \
                 repository ({what}); its vars are unknown, so undefined vars are not \
                 reported for this Kustomization",
                    id.kind, id.name, k.kustomization.id
                ),
                location,
            )
            .about("source", id.to_string()),
        );
    }
}

/// FS108, FS109 on the inline vars (`postBuild.substitute`) of the `i`th Kustomization.
fn inline_vars(
    ctx: &mut ClusterCtx<'_>,
    i: usize,
    pb: &crate::flux::PostBuild,
    files: &mut Sources<'_>,
) {
    let cluster = ctx.cluster;
    let name = cluster.name.as_str();
    let k = &cluster.kustomizations[i];
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
        ctx.findings.push(
            finding_for(name, k, rule, message, location)
                .about("var", key.clone())
                .about("source", "postBuild.substitute"),
        );
    }
}
