//! The cold start, wave by wave: what can reconcile first, then next, until nothing moves.
//!
//! The simulation is optimistic about time: a Kustomization that is not guaranteed to run
//! after what it needs (a race, see FS205/FS207) is placed in the first wave where what it
//! needs exists, as its retries would eventually find. What never becomes Ready is left out
//! of the waves, with the first reason found.

use std::collections::BTreeMap;

use super::bootstrap::BootstrapEvidence;
use super::kinds::{self, FluxApis};
use super::nodes::{is_trigger, Node, NodeState, Order};
use crate::config::Config;
use crate::flux::{NamespacedName, ObjectId};
use crate::graph::config::Triggers;

/// The waves and, for what never becomes Ready, why.
pub(crate) struct Simulation {
    /// Waves of ids, each sorted; wave 0 holds the root.
    pub(crate) waves: Vec<Vec<NamespacedName>>,
    /// The wave each Kustomization becomes Ready in.
    pub(crate) wave_of: BTreeMap<NamespacedName, usize>,
    /// Kustomizations that never become Ready, with a reason.
    pub(crate) never: BTreeMap<NamespacedName, String>,
}

/// What a Kustomization needs from others before its apply can succeed.
#[derive(Debug)]
enum Need {
    /// A CRD that some other Kustomization applies (any of `providers`); for a CRD declared
    /// in fluxsim.toml, a trigger object some other Kustomization applies; for a CRD in no
    /// render and no declaration, any other Kustomization that applies a `HelmRelease` (the
    /// presumption of FS214/FS215).
    Kind {
        group: String,
        kind: String,
        providers: Vec<NamespacedName>,
    },
    /// A Namespace some other Kustomization creates.
    Namespace {
        name: String,
        providers: Vec<NamespacedName>,
    },
    /// A `substituteFrom` object (not optional) some other Kustomization applies.
    Vars {
        source: String,
        providers: Vec<NamespacedName>,
    },
}

/// The custom-resource kinds `n` applies that must exist before its apply: not built in,
/// not Flux's, not installed by the cluster's bootstrap (fluxsim.toml), not defined by a CRD
/// in `n` itself (Flux applies those first).
pub(crate) fn needed_kinds<'a>(
    n: &'a Node,
    flux: &FluxApis,
    config: &Config,
) -> Vec<(&'a str, &'a str, &'a ObjectId)> {
    let own: Vec<&(String, String)> = n.crds().collect();
    let mut out: Vec<(&str, &str, &ObjectId)> = Vec::new();
    for o in &n.objects {
        let (g, k) = (o.id.group.as_str(), o.id.kind.as_str());
        if kinds::exists_on_fresh_cluster(g, k, flux)
            || config.bootstrap.crd_groups.iter().any(|b| b == g)
            || own.iter().any(|(og, ok)| og == g && ok == k)
            || out.iter().any(|(og, ok, _)| *og == g && *ok == k)
        {
            continue;
        }
        out.push((g, k, &o.id));
    }
    out
}

/// The namespaces `n`'s objects live in that must exist before its apply: not there from
/// the start, not created by `n` itself (Flux applies Namespaces first), each with the first
/// object that needs it. Objects of cluster-scoped CRDs are skipped (kustomize may give them
/// a namespace the API server ignores).
pub(crate) fn needed_namespaces<'a>(
    n: &'a Node,
    order: &Order<'_>,
) -> Vec<(&'a str, &'a ObjectId)> {
    let own: Vec<&str> = n
        .objects
        .iter()
        .filter(|o| o.id.group.is_empty() && o.id.kind == "Namespace")
        .map(|o| o.id.name.as_str())
        .collect();
    let mut out: Vec<(&str, &ObjectId)> = Vec::new();
    let mut seen: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for o in &n.objects {
        let ns = o.id.namespace.as_str();
        if ns.is_empty()
            || kinds::INITIAL_NAMESPACES.contains(&ns)
            || own.contains(&ns)
            || seen.contains(ns)
            || order
                .cluster_scoped
                .contains(&(o.id.group.as_str(), o.id.kind.as_str()))
        {
            continue;
        }
        seen.insert(ns);
        out.push((ns, &o.id));
    }
    out
}

/// The Kustomizations other than `n` that create Namespace `ns`, in node order.
pub(crate) fn namespace_providers<'a>(ns: &str, n: &Node, order: &Order<'a>) -> Vec<&'a Node> {
    order
        .namespace_holders(ns)
        .iter()
        .copied()
        .filter(|m| m.id != n.id)
        .collect()
}

/// The Kustomizations (`n` among them, when it does) that apply the core-group object
/// `kind` `namespace/name`, in node order.
pub(crate) fn core_providers<'a>(
    kind: &str,
    namespace: &str,
    name: &str,
    order: &Order<'a>,
) -> Vec<&'a Node> {
    order.core_holders(kind, namespace, name).to_vec()
}

/// The Kustomizations (`n` among them, when it does) that apply `n`'s substituteFrom source
/// `s`: a ConfigMap or Secret in `n`'s namespace, or what a controller makes the Secret from
/// at run time (an ExternalSecret ...).
pub(crate) fn var_source_providers<'a>(
    n: &Node,
    s: &crate::flux::SubstituteFrom,
    order: &Order<'a>,
) -> Vec<&'a Node> {
    let mut out = core_providers(&s.kind, &n.id.namespace, &s.name, order);
    if s.kind == "Secret" {
        for m in order.secret_makers(&n.id.namespace, &s.name) {
            if !out.iter().any(|o| std::ptr::eq(*o, *m)) {
                out.push(m);
            }
        }
    }
    out
}

/// Why `n`'s substituteFrom source `s` exists before Flux runs, when it does: the
/// steady-state render found it outside every Kustomization (a file nothing applies, the
/// root's folder applied at bootstrap, fluxsim.toml), or the bootstrap applies it.
pub(crate) fn var_source_outside(
    n: &Node,
    s: &crate::flux::SubstituteFrom,
    boot: &BootstrapEvidence,
) -> Option<String> {
    let label = format!("{}/{}", s.kind, s.name);
    if let Some(from) = n.outside_sources.get(&label) {
        return Some(from.clone());
    }
    boot.object(&s.kind, &n.id.namespace, &s.name)
}

/// Whether the only Kustomization that applies `n`'s source `s` is `n` itself and `n` is the
/// cluster's root: the root is made by the bootstrap, which is presumed to apply the source
/// first (the cluster could never have converged otherwise).
pub(crate) fn root_reads_its_own(
    n: &Node,
    s: &crate::flux::SubstituteFrom,
    order: &Order<'_>,
) -> bool {
    n.parent.is_none() && {
        let p = var_source_providers(n, s, order);
        !p.is_empty() && p.iter().all(|m| m.id == n.id)
    }
}

/// The namespaces `n` needs that the bootstrap presumably creates, with why.
pub(crate) fn namespace_from_bootstrap(ns: &str, boot: &BootstrapEvidence) -> Option<String> {
    boot.namespace(ns)
}

fn needs(
    n: &Node,
    nodes: &[Node],
    order: &Order<'_>,
    config: &Config,
    flux: &FluxApis,
    boot: &BootstrapEvidence,
) -> Vec<Need> {
    let others = || nodes.iter().filter(|m| m.id != n.id);
    let mut out = Vec::new();
    for (g, k, _) in needed_kinds(n, flux, config) {
        // The bootstrap presumably installs it before Flux runs (FS216).
        if boot.crd_group(g).is_some() {
            continue;
        }
        let mut providers: Vec<NamespacedName> = others()
            .filter(|m| m.crds().any(|(cg, ck)| cg == g && ck == k))
            .map(|m| m.id.clone())
            .collect();
        if let Some(t) = config.trigger(g, k) {
            providers.extend(
                others()
                    .filter(|m| m.objects.iter().any(|o| is_trigger(o, t)))
                    .map(|m| m.id.clone()),
            );
        } else if providers.is_empty() && !kinds::is_flux(g) {
            // Presumed from a chart: the CRD exists once a Kustomization that applies a
            // HelmRelease has run (a HelmRelease in `n` itself never helps: see FS203).
            providers.extend(
                others()
                    .filter(|m| m.helm_releases().next().is_some())
                    .map(|m| m.id.clone()),
            );
        }
        out.push(Need::Kind {
            group: g.to_string(),
            kind: k.to_string(),
            providers,
        });
    }
    for (ns, _) in needed_namespaces(n, order) {
        if namespace_from_bootstrap(ns, boot).is_some() {
            continue;
        }
        // A HelmRelease's `install.createNamespace` makes it once the release installs (one
        // in `n` itself never helps: `n`'s apply fails first).
        let releases = order
            .release_namespace_holders(ns)
            .iter()
            .filter(|m| m.id != n.id)
            .map(|m| m.id.clone());
        out.push(Need::Namespace {
            name: ns.to_string(),
            providers: namespace_providers(ns, n, order)
                .iter()
                .map(|m| m.id.clone())
                .chain(releases)
                .collect(),
        });
    }
    for s in n.substitute_from.iter().filter(|s| !s.optional) {
        if var_source_outside(n, s, boot).is_some() || root_reads_its_own(n, s, order) {
            continue;
        }
        let providers = var_source_providers(n, s, order)
            .iter()
            .filter(|m| m.id != n.id)
            .map(|m| m.id.clone())
            .collect();
        out.push(Need::Vars {
            source: format!("{}/{}", s.kind, s.name),
            providers,
        });
    }
    out
}

/// Runs the cold start of one cluster.
pub(crate) fn simulate(
    nodes: &[Node],
    order: &Order<'_>,
    config: &Config,
    boot: &BootstrapEvidence,
) -> Simulation {
    let flux = flux_apis(nodes);
    let all_needs: BTreeMap<&NamespacedName, Vec<Need>> = nodes
        .iter()
        .map(|n| (&n.id, needs(n, nodes, order, config, &flux, boot)))
        .collect();
    let (waves, wave_of) = waves_of(nodes, &all_needs);
    let mut never = BTreeMap::new();
    for n in nodes.iter().filter(|n| !wave_of.contains_key(&n.id)) {
        let reason = blocked_by_state(n)
            .or_else(|| {
                n.parent
                    .as_ref()
                    .filter(|p| !wave_of.contains_key(*p))
                    .map(|p| format!("its parent `{}` never applies it", p.name))
            })
            .or_else(|| {
                n.depends_on.iter().find_map(|d| {
                    if !order.nodes.contains_key(d) {
                        Some(format!("dependsOn `{d}`, which this cluster never defines"))
                    } else if !wave_of.contains_key(d) {
                        Some(format!("waits for `{}`, which never becomes Ready", d.name))
                    } else {
                        None
                    }
                })
            })
            .or_else(|| {
                all_needs[&n.id].iter().find_map(|need| match need {
                    Need::Kind {
                        group,
                        kind,
                        providers,
                    } if !providers.iter().any(|p| wave_of.contains_key(p)) => Some(format!(
                        "its `{kind}.{group}` objects need a CRD that no Kustomization \
                         creates before it"
                    )),
                    Need::Namespace { name, providers }
                        if !providers.iter().any(|p| wave_of.contains_key(p)) =>
                    {
                        Some(format!(
                            "namespace `{name}` is not created by any Kustomization before it"
                        ))
                    }
                    Need::Vars { source, providers }
                        if !providers.iter().any(|p| wave_of.contains_key(p)) =>
                    {
                        Some(format!(
                            "substituteFrom `{source}` is never applied before it"
                        ))
                    }
                    _ => None,
                })
            })
            .unwrap_or_else(|| "what it waits for never becomes Ready".to_string());
        never.insert(n.id.clone(), reason);
    }
    Simulation {
        waves,
        wave_of,
        never,
    }
}

/// The waves: wave `w` holds what is not yet placed and, once everything of the waves before
/// `w` is Ready, has its parent applied, every `dependsOn` target Ready and each need met by
/// some provider. Worked out from each Kustomization placed to the ones waiting on it (each
/// requirement is met once, by the first wave that meets it), so the cost is the size of
/// the graph, not the number of waves times the number of Kustomizations.
fn waves_of(
    nodes: &[Node],
    all_needs: &BTreeMap<&NamespacedName, Vec<Need>>,
) -> (Vec<Vec<NamespacedName>>, BTreeMap<NamespacedName, usize>) {
    // For each node, how many of its requirements are not met yet; for each id, the
    // (node, requirement) pairs it meets.
    let mut unmet: Vec<usize> = vec![0; nodes.len()];
    let mut met: Vec<Vec<bool>> = vec![Vec::new(); nodes.len()];
    let mut meets: BTreeMap<&NamespacedName, Vec<(usize, usize)>> = BTreeMap::new();
    let mut first = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if blocked_by_state(n).is_some() {
            continue;
        }
        // Each requirement: the ids any one of which meets it.
        let mut requirements: Vec<Vec<&NamespacedName>> = Vec::new();
        requirements.extend(n.parent.iter().map(|p| vec![p]));
        requirements.extend(n.depends_on.iter().map(|d| vec![d]));
        for need in &all_needs[&n.id] {
            let (Need::Kind { providers, .. }
            | Need::Namespace { providers, .. }
            | Need::Vars { providers, .. }) = need;
            requirements.push(providers.iter().collect());
        }
        let slot = requirements.len();
        for (r, ids) in requirements.into_iter().enumerate() {
            for id in ids {
                meets.entry(id).or_default().push((i, r));
            }
        }
        unmet[i] = slot;
        met[i] = vec![false; slot];
        if slot == 0 {
            first.push(i);
        }
    }
    let mut wave_of: BTreeMap<NamespacedName, usize> = BTreeMap::new();
    let mut waves: Vec<Vec<NamespacedName>> = Vec::new();
    let mut now = first;
    while !now.is_empty() {
        let w = waves.len();
        now.sort_unstable();
        let mut next = Vec::new();
        for &i in &now {
            wave_of.insert(nodes[i].id.clone(), w);
        }
        for &i in &now {
            for &(m, slot) in meets.get(&nodes[i].id).map_or(&[][..], Vec::as_slice) {
                if met[m][slot] || wave_of.contains_key(&nodes[m].id) {
                    continue;
                }
                met[m][slot] = true;
                unmet[m] -= 1;
                if unmet[m] == 0 {
                    next.push(m);
                }
            }
        }
        waves.push(now.iter().map(|&i| nodes[i].id.clone()).collect());
        now = next;
    }
    (waves, wave_of)
}

/// Which of Flux's kinds exist from the start (see [`FluxApis`]): the Flux CRDs the render
/// carries when it carries any (`gotk-components.yaml`); otherwise, when the root applies a
/// Flux Operator `FluxInstance`, the operator's kinds and every Flux kind; otherwise every
/// Flux kind: a cluster whose root reconciles runs Flux, whoever installed it (`flux
/// bootstrap`, the Flux Operator, a helmfile, a script).
pub(crate) fn flux_apis(nodes: &[Node]) -> FluxApis {
    let rendered: Vec<(String, String)> = nodes
        .iter()
        .flat_map(Node::crds)
        .filter(|(g, _)| kinds::is_flux(g))
        .cloned()
        .collect();
    if !rendered.is_empty() {
        return FluxApis::Rendered(rendered);
    }
    let operator = nodes.iter().filter(|n| n.parent.is_none()).any(|n| {
        n.objects
            .iter()
            .any(|o| o.id.group == kinds::OPERATOR_GROUP && o.id.kind == "FluxInstance")
    });
    if operator {
        return FluxApis::Operator;
    }
    FluxApis::Presumed
}

fn blocked_by_state(n: &Node) -> Option<String> {
    match &n.state {
        NodeState::Failed(e) => Some(format!("it fails to render: {e}")),
        NodeState::Suspended => Some("it is suspended".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::nodes::{nn, Obj};

    fn obj(group: &str, kind: &str, name: &str) -> Obj {
        Obj {
            id: ObjectId {
                group: group.into(),
                kind: kind.into(),
                namespace: String::new(),
                name: name.into(),
            },
            file: None,
            defines: None,
            cluster_scoped: false,
            helm: None,
            makes: None,
        }
    }

    fn crd(group: &str, kind: &str) -> Obj {
        Obj {
            defines: Some((group.into(), kind.into())),
            ..obj("apiextensions.k8s.io", "CustomResourceDefinition", kind)
        }
    }

    fn child(name: &str, deps: &[&str]) -> Node {
        let mut n = Node::bare(name);
        n.parent = Some(nn("root"));
        n.depends_on = deps.iter().map(|d| nn(d)).collect();
        n
    }

    // kustomize-controller checkDependencies: a Kustomization reconciles only once every
    // dependsOn target is Ready; a child exists once its parent applied it.
    #[test]
    fn waves_follow_parent_then_depends_on() {
        let nodes = vec![
            child("apps", &["infra"]),
            child("infra", &[]),
            Node::bare("root"),
        ];
        let o = Order::new(&nodes);
        let s = simulate(
            &nodes,
            &o,
            &Config::default(),
            &BootstrapEvidence::default(),
        );
        assert_eq!(
            s.waves,
            vec![vec![nn("root")], vec![nn("infra")], vec![nn("apps")]]
        );
        assert!(s.never.is_empty());
    }

    // fluxcd/pkg ssa ApplyAllStaged: CRDs in the same apply are applied (and established)
    // before the custom resources.
    #[test]
    fn crd_in_the_same_kustomization_does_not_delay_it() {
        let mut a = child("a", &[]);
        a.objects = vec![crd("x.io", "Widget"), obj("x.io", "Widget", "w")];
        let nodes = vec![a, Node::bare("root")];
        let o = Order::new(&nodes);
        let s = simulate(
            &nodes,
            &o,
            &Config::default(),
            &BootstrapEvidence::default(),
        );
        assert_eq!(s.wave_of[&nn("a")], 1);
    }

    #[test]
    fn crd_applied_by_a_dependent_never_converges() {
        let mut a = child("a", &[]);
        a.objects = vec![obj("x.io", "Widget", "w")];
        let mut b = child("b", &["a"]);
        b.objects = vec![crd("x.io", "Widget")];
        let nodes = vec![a, b, Node::bare("root")];
        let o = Order::new(&nodes);
        let s = simulate(
            &nodes,
            &o,
            &Config::default(),
            &BootstrapEvidence::default(),
        );
        assert!(s.never[&nn("a")].contains("Widget.x.io"), "{:?}", s.never);
        assert!(s.never[&nn("b")].contains("`a`"), "{:?}", s.never);
    }
}
