//! What the cluster's own admission may change of an object before the API server validates
//! it: the mutating webhooks a cluster's render registers (`MutatingWebhookConfiguration`)
//! and the mutate rules of Kyverno policies it applies (Kyverno registers its webhook at run
//! time, so its policies are the evidence). Mutating admission runs before validation in the
//! API server (kubernetes `staging/src/k8s.io/apiserver/pkg/admission`: mutating plugins,
//! then validating ones), so a required field such a webhook may set is not a defect fluxsim
//! can show: `validate` reports it as a note that names the webhook.
//!
//! What a webhook sets is its server's business and unknown offline: any field of an object
//! it matches may be set. A Kyverno rule's `patchStrategicMerge` and `patchesJson6902` say
//! which fields; only those are counted as set.

use serde_json::Value;

use crate::flux::str_at;
use crate::model::ClusterRender;

/// One mutator of a cluster.
#[derive(Debug, Clone)]
struct Mutator {
    /// How a message names it: `` MutatingWebhookConfiguration `defaults` (applied by
    /// flux-system/infra) ``.
    name: String,
    /// What it matches.
    matches: Vec<Match>,
    /// The fields it sets (`spec.interval`), when its rule says; `None`: any.
    fields: Option<Vec<String>>,
}

/// One rule of what a mutator matches.
#[derive(Debug, Clone)]
struct Match {
    /// API groups (`*` any).
    groups: Vec<String>,
    /// API versions (`*` any).
    versions: Vec<String>,
    /// A webhook's `resources` (plural names, `*` any) or a Kyverno rule's kinds.
    names: Vec<String>,
    /// Whether `names` are kinds (Kyverno), not resources.
    kinds: bool,
}

/// The mutators of one cluster.
#[derive(Debug, Clone, Default)]
pub struct Mutators {
    list: Vec<Mutator>,
    /// `(group, kind)` → plural, from the CRDs of the render.
    plurals: Vec<(String, String, String)>,
}

impl Mutators {
    /// The mutators cluster `c`'s render registers.
    #[must_use]
    pub fn of(c: &ClusterRender) -> Mutators {
        let mut out = Mutators::default();
        for k in &c.kustomizations {
            for o in k.artifact.iter().flat_map(|a| &a.objects) {
                let from = format!("applied by {}", k.kustomization.id);
                match (o.id.group.as_str(), o.id.kind.as_str()) {
                    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
                        out.list.push(webhook(&o.object, &o.id.name, &from));
                    }
                    ("kyverno.io", "ClusterPolicy" | "Policy") => {
                        out.list
                            .extend(kyverno(&o.object, &o.id.kind, &o.id.name, &from));
                    }
                    ("apiextensions.k8s.io", "CustomResourceDefinition") => {
                        if let (Some(g), Some(kind), Some(p)) = (
                            str_at(&o.object, &["spec", "group"]),
                            str_at(&o.object, &["spec", "names", "kind"]),
                            str_at(&o.object, &["spec", "names", "plural"]),
                        ) {
                            out.plurals.push((g.into(), kind.into(), p.into()));
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// Whether no mutator is registered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The mutator that may set field `path` (`spec.interval`) of an object of `api_version`
    /// and `kind` on create, named as a message says it; `None` when none matches.
    #[must_use]
    pub fn setting(&self, api_version: &str, kind: &str, path: &str) -> Option<&str> {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let plural = self.plural(group, kind);
        self.list
            .iter()
            .find(|m| {
                m.matches
                    .iter()
                    .any(|r| r.covers(group, version, kind, &plural))
                    && m.fields.as_ref().is_none_or(|fields| {
                        fields
                            .iter()
                            .any(|f| f == path || path.starts_with(&format!("{f}.")))
                    })
            })
            .map(|m| m.name.as_str())
    }

    /// The resource name of `kind`: its CRD's plural, else the API server's rule for
    /// built-ins (lower case, `s`; `y` → `ies`; `s`, `x`, `ch`, `sh` → `es`).
    fn plural(&self, group: &str, kind: &str) -> String {
        if let Some((_, _, p)) = self
            .plurals
            .iter()
            .find(|(g, k, _)| g == group && k == kind)
        {
            return p.clone();
        }
        kubeschema::policy::builtin_plural(kind)
    }
}

impl Match {
    fn covers(&self, group: &str, version: &str, kind: &str, plural: &str) -> bool {
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
        if self.kinds {
            // Kyverno: `Kind`, `group/Kind`, `group/version/Kind` (each part may be `*`).
            return self.names.iter().any(|n| {
                let parts: Vec<&str> = n.split('/').collect();
                let ok = |want: &str, have: &str| want == "*" || want == have;
                match parts.as_slice() {
                    [k] => ok(k, kind),
                    [g, k] => ok(g, group) && ok(k, kind),
                    [g, v, k] => ok(g, group) && ok(v, version) && ok(k, kind),
                    _ => false,
                }
            });
        }
        any(&self.groups, group)
            && any(&self.versions, version)
            && self
                .names
                .iter()
                .any(|r| r == "*" || r == "*/*" || r == plural)
    }
}

/// A `MutatingWebhookConfiguration`'s rules that apply on CREATE (or `*`).
fn webhook(obj: &Value, name: &str, from: &str) -> Mutator {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let mut matches = Vec::new();
    for w in obj
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for r in w
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ops = strings(r.get("operations"));
            if !ops.iter().any(|o| o == "CREATE" || o == "*") {
                continue;
            }
            matches.push(Match {
                groups: strings(r.get("apiGroups")),
                versions: strings(r.get("apiVersions")),
                names: strings(r.get("resources")),
                kinds: false,
            });
        }
    }
    Mutator {
        name: format!("MutatingWebhookConfiguration `{name}` ({from})"),
        matches,
        fields: None,
    }
}

/// A Kyverno policy's mutate rules: what each matches (`match.resources.kinds`,
/// `match.any[]`/`match.all[]`) and, from its patches, the fields it sets.
fn kyverno(obj: &Value, kind: &str, name: &str, from: &str) -> Vec<Mutator> {
    let mut out = Vec::new();
    for r in obj
        .pointer("/spec/rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(mutate) = r.get("mutate") else {
            continue;
        };
        let mut kinds: Vec<String> = Vec::new();
        let m = r.get("match");
        let blocks = m.into_iter().chain(
            ["any", "all"]
                .iter()
                .filter_map(|k| m.and_then(|m| m.get(*k)).and_then(Value::as_array))
                .flatten(),
        );
        for b in blocks {
            kinds.extend(
                b.pointer("/resources/kinds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
        }
        if kinds.is_empty() {
            continue;
        }
        let rule = str_at(r, &["name"]).unwrap_or("");
        out.push(Mutator {
            name: format!("Kyverno {kind} `{name}` rule `{rule}` ({from})"),
            matches: vec![Match {
                groups: Vec::new(),
                versions: Vec::new(),
                names: kinds,
                kinds: true,
            }],
            fields: patched_fields(mutate),
        });
    }
    out
}

/// The fields a Kyverno mutate rule sets: the leaves of its `patchStrategicMerge` (anchors
/// such as `+(interval)` read as the field), the paths of its `patchesJson6902`; `None` when
/// it says neither (a `foreach`, a `targets` mutation: any field).
fn patched_fields(mutate: &Value) -> Option<Vec<String>> {
    let mut out = Vec::new();
    if let Some(p) = mutate.get("patchStrategicMerge") {
        leaves(p, "", &mut out);
    }
    if let Some(text) = mutate.get("patchesJson6902").and_then(Value::as_str) {
        if let Ok(Value::Array(ops)) = crate::goyaml::yaml_json::yaml_to_value(text) {
            for op in ops {
                if let Some(path) = op.get("path").and_then(Value::as_str) {
                    out.push(
                        path.trim_start_matches('/')
                            .split('/')
                            .collect::<Vec<_>>()
                            .join("."),
                    );
                }
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

fn leaves(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                // Kyverno anchors: `+(key)` add if absent, `(key)` condition, `=(key)`.
                let key = k
                    .trim_start_matches(['+', '=', '^', 'X', '<'])
                    .trim_start_matches('(')
                    .trim_end_matches(')');
                let path = if at.is_empty() {
                    key.to_string()
                } else {
                    format!("{at}.{key}")
                };
                leaves(x, &path, out);
            }
        }
        _ => {
            if !at.is_empty() {
                out.push(at.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mutators(objs: Vec<(&str, &str, Value)>) -> Mutators {
        let mut m = Mutators::default();
        for (kind, name, obj) in objs {
            if kind == "MutatingWebhookConfiguration" {
                m.list.push(webhook(&obj, name, "x"));
            } else {
                m.list.extend(kyverno(&obj, kind, name, "x"));
            }
        }
        m
    }

    // admissionregistration.k8s.io/v1 RuleWithOperations: apiGroups, apiVersions,
    // resources (plural, `*`), operations.
    #[test]
    fn a_webhook_that_matches_the_kind_on_create_may_set_any_field() {
        let hook = json!({"webhooks": [{"rules": [{
            "apiGroups": ["kustomize.toolkit.fluxcd.io"], "apiVersions": ["*"],
            "resources": ["kustomizations"], "operations": ["CREATE", "UPDATE"]}]}]});
        let m = mutators(vec![("MutatingWebhookConfiguration", "ks-defaults", hook)]);
        assert!(m
            .setting(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                "spec.interval"
            )
            .is_some_and(|n| n.contains("ks-defaults")));
        assert!(m
            .setting(
                "source.toolkit.fluxcd.io/v1",
                "GitRepository",
                "spec.interval"
            )
            .is_none());
        let update_only = json!({"webhooks": [{"rules": [{"apiGroups": ["*"], "apiVersions": ["*"],
            "resources": ["*"], "operations": ["UPDATE"]}]}]});
        let m = mutators(vec![("MutatingWebhookConfiguration", "u", update_only)]);
        assert!(m
            .setting("apps/v1", "Deployment", "spec.replicas")
            .is_none());
    }

    // Kyverno ClusterPolicy (kyverno.io/v1): spec.rules[].match.any[].resources.kinds and
    // mutate.patchStrategicMerge with `+(field)` add-if-absent anchors.
    #[test]
    fn a_kyverno_mutate_rule_sets_the_fields_its_patch_names() {
        let policy = json!({"spec": {"rules": [{"name": "defaults",
            "match": {"any": [{"resources": {"kinds": ["kustomize.toolkit.fluxcd.io/v1/Kustomization"]}}]},
            "mutate": {"patchStrategicMerge": {"spec": {"+(interval)": "1h", "+(prune)": true}}}}]}});
        let m = mutators(vec![("ClusterPolicy", "flux-defaults", policy)]);
        let ks = "kustomize.toolkit.fluxcd.io/v1";
        assert!(m.setting(ks, "Kustomization", "spec.interval").is_some());
        assert!(m.setting(ks, "Kustomization", "spec.prune").is_some());
        assert!(m.setting(ks, "Kustomization", "spec.sourceRef").is_none());
        assert!(m
            .setting(
                "kustomize.toolkit.fluxcd.io/v1beta2",
                "Kustomization",
                "spec.interval"
            )
            .is_none());
    }

    #[test]
    fn plurals_follow_the_api_servers_rule_for_built_ins() {
        let m = Mutators::default();
        assert_eq!(m.plural("", "Policy"), "policies");
        assert_eq!(m.plural("", "Ingress"), "ingresses");
        assert_eq!(m.plural("", "Gateway"), "gateways");
        assert_eq!(m.plural("apps", "Deployment"), "deployments");
    }
}
